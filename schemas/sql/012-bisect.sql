-- SPDX-License-Identifier: GPL-2.0-only
-- 012: bisecting the confirmed regressions of an rc built from git to
-- their first bad commit (issue 15). One bisection per rc and target for
-- its test regressions (a step is bad when any of their tests fails: one
-- backport breaks many tests, as 6.1.64's broke 23), and one for a build
-- regression. regression_id is the first regression it bisects; the
-- others are found through their occurrences in the same rc. Its steps
-- are jobs of that rc (bisection_id set) that build git_commit instead of
-- the artifact's ref and run only only_tests. They are not the rc's jobs:
-- release_job is what every query about a release's jobs reads (state,
-- gate, analysis, reruns).
CREATE TABLE bisection (
	id		INTEGER PRIMARY KEY,
	regression_id	INTEGER NOT NULL REFERENCES regression(id) ON DELETE CASCADE,
	release_id	INTEGER NOT NULL REFERENCES release(id) ON DELETE CASCADE,
	job_id		INTEGER NOT NULL REFERENCES job(id),	-- the rc's failing job
	target		TEXT NOT NULL,
	test		TEXT NOT NULL,		-- ext4.write_seq_4096, build.kernel
	tests		TEXT NOT NULL,		-- ",write_seq_4096,append_512," or "-"
	tree		TEXT NOT NULL,
	good		TEXT NOT NULL,		-- commit ids
	bad		TEXT NOT NULL,
	good_tested	INTEGER NOT NULL,	-- 1: the baseline passed at good
	commits		TEXT NOT NULL,		-- after good, oldest first, bad last
	state		TEXT NOT NULL DEFAULT 'running' CHECK (state IN
			('running','found','ambiguous','failed')),
	culprit		TEXT,			-- the first bad commit
	culprit_subject	TEXT,
	culprit_upstream TEXT,			-- "commit X upstream."
	range_first	TEXT,			-- ambiguous: first bad is in
	range_last	TEXT,			--   [range_first, range_last]
	message		TEXT,
	created		TEXT NOT NULL,
	finished	TEXT,
	UNIQUE (release_id, target, test)
);
CREATE INDEX bisection_by_state ON bisection(state);
CREATE INDEX bisection_by_culprit ON bisection(culprit_upstream)
	WHERE culprit_upstream IS NOT NULL;
ALTER TABLE job ADD COLUMN bisection_id INTEGER REFERENCES bisection(id);
ALTER TABLE job ADD COLUMN git_commit TEXT;
ALTER TABLE job ADD COLUMN only_tests TEXT;
CREATE INDEX job_by_bisection ON job(bisection_id) WHERE bisection_id IS NOT NULL;
CREATE VIEW release_job AS SELECT * FROM job WHERE bisection_id IS NULL;
