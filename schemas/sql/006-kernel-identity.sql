-- SPDX-License-Identifier: GPL-2.0-only
-- 006: which kernel really ran. An artifact marked custom is a build the
-- submitter knows is not the release's version; otherwise a kernel that
-- says it is another version ends its job as an infra error.
ALTER TABLE artifact ADD COLUMN custom INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job ADD COLUMN kernel_mismatch TEXT;
