-- SPDX-License-Identifier: GPL-2.0-only
-- 018 (issue 49, item 5): whether the announcement a release was made from
-- carried a valid DKIM signature of its sender's domain ([announce] dkim).
-- mail_verified 1: verified, and replies go to its recipients (capped at
-- [announce] max_recipients); 0: not verified (unsigned, failing, or not
-- checked), and replies go to [announce] lists alone. Releases announced
-- before this column count as not verified.
-- mail_dkim: the verdict as shown in the API, on the status page and in
-- reports ("d=linuxfoundation.org s=korg", or why it was not verified).
ALTER TABLE release ADD COLUMN mail_verified INTEGER NOT NULL DEFAULT 0;
ALTER TABLE release ADD COLUMN mail_dkim TEXT;
