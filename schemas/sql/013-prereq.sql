-- SPDX-License-Identifier: GPL-2.0-only
-- 013: prerequisite candidates of a bisected culprit (issue 15, prereq.c).
-- With [bisect] upstream_git set, a bisection that found a backport of an
-- upstream commit waits in prereq_state 'pending' until the upstream tree
-- has been searched: upstream commits between the branch's base release
-- and the culprit's upstream commit that touch what the culprit touches,
-- the branch lacks, ranked. prerequisites is their JSON array ([{commit,
-- subject, score, reasons[]}], best first); prereq_message says why there
-- are none or why the search failed. The follow-up mail waits for it, so
-- the thread gets the culprit and the hint in one message. NULL state: no
-- search (no upstream tree configured, or no upstream id).
ALTER TABLE bisection ADD COLUMN prereq_state TEXT CHECK (prereq_state IN
	('pending','done','failed'));
ALTER TABLE bisection ADD COLUMN prerequisites TEXT;
ALTER TABLE bisection ADD COLUMN prereq_message TEXT;
CREATE INDEX bisection_prereq_pending ON bisection(prereq_state)
	WHERE prereq_state = 'pending';
