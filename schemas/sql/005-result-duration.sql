-- SPDX-License-Identifier: GPL-2.0-only
-- 005: how long each test ran in the guest, from the agent's
-- "# rcgate-time-ms:" line before its result; NULL when not reported.
ALTER TABLE result ADD COLUMN duration_ms INTEGER;
