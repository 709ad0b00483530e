-- SPDX-License-Identifier: GPL-2.0-only
-- 014: every mail rcgate composed (issue 28, daemon/reply.c), by kind and
-- by what it is about, with its own Message-ID. It makes each mail of the
-- conversation go out once (one follow-up per culprit, one regzbot report
-- per shipped regression), lets a follow-up thread under rcgate's own
-- report, and gives the 0-day robot's "| Closes: <lore link>" its id.
-- kind: report (the rc's first reply), bisection, invalid (follow-up in
-- the rc thread), also (a one-line follow-up in an earlier rc's thread:
-- the same regression in a later rc), regzbot (report to
-- regressions@lists.linux.dev),
-- regzbot-fix, regzbot-invalid. release_id/regression_id: 0 when the kind
-- is not about one, so the unique index sees one mail per subject.
CREATE TABLE mail (
	id		INTEGER PRIMARY KEY,
	kind		TEXT NOT NULL CHECK (kind IN ('report','bisection',
			'invalid','also','regzbot','regzbot-fix','regzbot-invalid')),
	release_id	INTEGER NOT NULL DEFAULT 0,
	regression_id	INTEGER NOT NULL DEFAULT 0,
	about		INTEGER NOT NULL DEFAULT 0,	-- bisection id, ...
	message_id	TEXT NOT NULL,
	created		TEXT NOT NULL
);
CREATE UNIQUE INDEX mail_once ON mail(kind, release_id, regression_id, about);
CREATE INDEX mail_by_regression ON mail(regression_id);

-- The culprit as git show heads it, and whom its follow-up goes to: its
-- author and the people of its Signed-off-by/Reviewed-by/Acked-by lines
-- (", "-separated addresses, at most 20).
ALTER TABLE bisection ADD COLUMN culprit_author TEXT;
ALTER TABLE bisection ADD COLUMN culprit_date TEXT;
ALTER TABLE bisection ADD COLUMN culprit_people TEXT;
