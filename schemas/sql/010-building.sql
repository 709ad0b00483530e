-- SPDX-License-Identifier: GPL-2.0-only
-- 010: a kernel build is a job phase of its own (issue 14): state
-- 'building' between 'fetching' (tarball, patch or git fetch) and
-- 'booting', with its step and progress. SQLite cannot change a CHECK
-- constraint in place, so the table is made again (SQLite's documented
-- procedure: store.c runs migrations with foreign keys off and checks them
-- before each commit). Columns keep their order, so rows copy as they are.
CREATE TABLE job_new (
	id		INTEGER PRIMARY KEY,
	release_id	INTEGER NOT NULL REFERENCES release(id) ON DELETE CASCADE,
	artifact_id	INTEGER NOT NULL REFERENCES artifact(id),
	target		TEXT NOT NULL,
	suite		TEXT NOT NULL DEFAULT 'odirect',
	state		TEXT NOT NULL DEFAULT 'queued' CHECK (state IN
			('queued','fetching','building','booting','running',
			 'done','infra_error','cancelled')),
	attempt		INTEGER NOT NULL DEFAULT 1,
	worker		TEXT,
	accel		TEXT,
	error_kind	TEXT,
	error		TEXT,
	created		TEXT NOT NULL,
	started		TEXT,
	finished	TEXT,
	boot_seconds	REAL,
	kernel_version	TEXT,
	rerun_of	INTEGER REFERENCES job(id),
	kernel_mismatch	TEXT,
	built_sha256	TEXT,
	build_seconds	REAL,
	-- While building: the step ('waiting', 'unpacking', 'checkout',
	-- 'patching', 'configuring', 'compiling') and kbuild's steps done of
	-- those the target's previous build took (NULL: not known yet).
	build_step	TEXT,
	build_done	INTEGER,
	build_total	INTEGER,
	-- A build from git: the commit built (the rc's identity).
	built_commit	TEXT
);
INSERT INTO job_new (id, release_id, artifact_id, target, suite, state,
	attempt, worker, accel, error_kind, error, created, started, finished,
	boot_seconds, kernel_version, rerun_of, kernel_mismatch, built_sha256,
	build_seconds)
SELECT id, release_id, artifact_id, target, suite, state, attempt, worker,
	accel, error_kind, error, created, started, finished, boot_seconds,
	kernel_version, rerun_of, kernel_mismatch, built_sha256, build_seconds
FROM job;
DROP TABLE job;
ALTER TABLE job_new RENAME TO job;
CREATE INDEX job_by_state ON job(state, id);
CREATE INDEX job_by_release_state ON job(release_id, state);

CREATE TRIGGER job_count_insert AFTER INSERT ON job BEGIN
	INSERT INTO state_count VALUES ('job', NEW.state, 1)
		ON CONFLICT (tbl, state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER job_count_update AFTER UPDATE OF state ON job
WHEN OLD.state != NEW.state BEGIN
	UPDATE state_count SET n = n - 1 WHERE tbl = 'job' AND state = OLD.state;
	INSERT INTO state_count VALUES ('job', NEW.state, 1)
		ON CONFLICT (tbl, state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER job_count_delete AFTER DELETE ON job BEGIN
	UPDATE state_count SET n = n - 1 WHERE tbl = 'job' AND state = OLD.state;
END;

-- A release built from a git tree (kind 'git'): url is the repository, and
-- git_ref the commit (40 hex digits) or the branch whose head is the rc
-- (resolved when the job fetches; the job records it in built_commit).
ALTER TABLE artifact ADD COLUMN git_ref TEXT;
