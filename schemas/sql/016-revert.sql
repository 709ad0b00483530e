-- SPDX-License-Identifier: GPL-2.0-only
-- 016 (issue 28, third round): the revert check after a bisection.
-- A bisection that found its culprit queues one more job of the rc, like
-- its steps (bisection_id set), that builds the rc's commit with the
-- culprit reverted (revert_commit) and runs the failing tests. It is not
-- a step: the bisection's log and step count leave it out.
ALTER TABLE job ADD COLUMN revert_commit TEXT;

-- Its answer: pending (the follow-up waits for it), pass (the tests pass
-- with the culprit reverted), fail (they still fail, or the kernel does
-- not build), conflict (the revert does not apply), infra (the farm could
-- not build or boot it: never a fail); NULL when no revert was tried.
-- revert_message says it in words (what still fails, why not checked).
ALTER TABLE bisection ADD COLUMN revert_state TEXT CHECK (revert_state IN
	('pending', 'pass', 'fail', 'conflict', 'infra'));
ALTER TABLE bisection ADD COLUMN revert_message TEXT;
ALTER TABLE bisection ADD COLUMN revert_job INTEGER REFERENCES job(id);
CREATE INDEX bisection_revert_pending ON bisection(revert_state)
	WHERE revert_state = 'pending';
