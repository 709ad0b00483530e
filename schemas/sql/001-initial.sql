-- SPDX-License-Identifier: GPL-2.0-only
-- 001: releases, their kernel artifacts, jobs and per-test results.
CREATE TABLE release (
	id		INTEGER PRIMARY KEY,
	version		TEXT NOT NULL UNIQUE,
	branch		TEXT NOT NULL,
	rc		INTEGER NOT NULL DEFAULT 0,
	created		TEXT NOT NULL,
	announced	TEXT,
	deadline	TEXT,
	message_id	TEXT,
	baseline	TEXT
);

CREATE TABLE artifact (
	id		INTEGER PRIMARY KEY,
	release_id	INTEGER NOT NULL REFERENCES release(id) ON DELETE CASCADE,
	target		TEXT NOT NULL,
	url		TEXT NOT NULL,
	sha256		TEXT NOT NULL,
	kind		TEXT NOT NULL DEFAULT 'deb',
	UNIQUE (release_id, target)
);

CREATE TABLE job (
	id		INTEGER PRIMARY KEY,
	release_id	INTEGER NOT NULL REFERENCES release(id) ON DELETE CASCADE,
	artifact_id	INTEGER NOT NULL REFERENCES artifact(id),
	target		TEXT NOT NULL,
	suite		TEXT NOT NULL DEFAULT 'odirect',
	state		TEXT NOT NULL DEFAULT 'queued' CHECK (state IN
			('queued','fetching','booting','running','done',
			 'infra_error','cancelled')),
	attempt		INTEGER NOT NULL DEFAULT 1,
	worker		TEXT,
	accel		TEXT,
	error_kind	TEXT,
	error		TEXT,
	created		TEXT NOT NULL,
	started		TEXT,
	finished	TEXT,
	boot_seconds	REAL,
	kernel_version	TEXT
);
CREATE INDEX job_by_state ON job(state, id);
CREATE INDEX job_by_release ON job(release_id);

-- Every state change, so a job's history survives retries and restarts.
CREATE TABLE job_event (
	id		INTEGER PRIMARY KEY,
	job_id		INTEGER NOT NULL REFERENCES job(id) ON DELETE CASCADE,
	at		TEXT NOT NULL,
	state		TEXT NOT NULL,
	attempt		INTEGER NOT NULL,
	message		TEXT
);
CREATE INDEX job_event_by_job ON job_event(job_id);

CREATE TABLE result (
	id		INTEGER PRIMARY KEY,
	job_id		INTEGER NOT NULL REFERENCES job(id) ON DELETE CASCADE,
	test		TEXT NOT NULL,
	status		TEXT NOT NULL CHECK (status IN ('pass','fail','skip','xfail')),
	diagnostic	TEXT,
	UNIQUE (job_id, test)
);

-- Bearer tokens, stored as SHA-256 of the secret.
CREATE TABLE token (
	id		INTEGER PRIMARY KEY,
	name		TEXT NOT NULL,
	hash		TEXT NOT NULL UNIQUE,
	scope		TEXT NOT NULL DEFAULT 'write',
	created		TEXT NOT NULL
);
