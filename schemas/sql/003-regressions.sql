-- SPDX-License-Identifier: GPL-2.0-only
-- 003: announcements on releases, reruns, regressions linked to every
-- affected rc, per-branch fix state, reports and the delivery outbox.
ALTER TABLE release ADD COLUMN subject TEXT;
ALTER TABLE release ADD COLUMN mail_from TEXT;
ALTER TABLE release ADD COLUMN mail_to TEXT;
ALTER TABLE release ADD COLUMN mail_cc TEXT;
ALTER TABLE release ADD COLUMN patch_url TEXT;
ALTER TABLE release ADD COLUMN git_tree TEXT;
ALTER TABLE release ADD COLUMN git_branch TEXT;
ALTER TABLE release ADD COLUMN patch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE release ADD COLUMN analysed TEXT;	-- regressions decided at

ALTER TABLE job ADD COLUMN rerun_of INTEGER REFERENCES job(id);

CREATE TABLE regression (
	id		INTEGER PRIMARY KEY,
	signature	TEXT NOT NULL,
	test		TEXT NOT NULL,
	target		TEXT NOT NULL,
	fs		TEXT NOT NULL,
	diagnostic	TEXT,
	state		TEXT NOT NULL DEFAULT 'open' CHECK (state IN
			('open','confirmed','fixed','invalid')),
	reason		TEXT,		-- triage note for invalid
	first_seen	TEXT NOT NULL,
	updated		TEXT NOT NULL
);
CREATE INDEX regression_by_signature ON regression(signature);

-- The link that makes one regression's report attach to every affected rc.
CREATE TABLE occurrence (
	id		INTEGER PRIMARY KEY,
	regression_id	INTEGER NOT NULL REFERENCES regression(id) ON DELETE CASCADE,
	release_id	INTEGER NOT NULL REFERENCES release(id) ON DELETE CASCADE,
	job_id		INTEGER REFERENCES job(id),
	flaky		INTEGER NOT NULL DEFAULT 0,
	runs		INTEGER NOT NULL DEFAULT 1,
	fails		INTEGER NOT NULL DEFAULT 1,
	seen		TEXT NOT NULL,
	UNIQUE (regression_id, release_id)
);

-- Fixed on one branch is not fixed on the others.
CREATE TABLE regression_branch (
	regression_id	INTEGER NOT NULL REFERENCES regression(id) ON DELETE CASCADE,
	branch		TEXT NOT NULL,
	state		TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open','fixed')),
	fixed_in	TEXT,
	updated		TEXT NOT NULL,
	PRIMARY KEY (regression_id, branch)
);

CREATE TABLE regression_event (
	id		INTEGER PRIMARY KEY,
	regression_id	INTEGER NOT NULL REFERENCES regression(id) ON DELETE CASCADE,
	at		TEXT NOT NULL,
	state		TEXT NOT NULL,
	message		TEXT
);

CREATE TABLE report (
	id		INTEGER PRIMARY KEY,
	release_id	INTEGER NOT NULL REFERENCES release(id) ON DELETE CASCADE,
	created		TEXT NOT NULL,
	gate		TEXT NOT NULL,
	text		TEXT NOT NULL,
	email		TEXT			-- RFC 822, NULL without an announcement
);

-- At-least-once delivery: a row is written in the transaction that decides
-- to send, and stays until the peer accepted it.
CREATE TABLE outbox (
	id		INTEGER PRIMARY KEY,
	kind		TEXT NOT NULL CHECK (kind IN ('smtp','webhook')),
	destination	TEXT NOT NULL,
	payload		TEXT NOT NULL,
	state		TEXT NOT NULL DEFAULT 'pending' CHECK (state IN
			('pending','sent','failed')),
	attempts	INTEGER NOT NULL DEFAULT 0,
	next_attempt	TEXT NOT NULL,
	last_error	TEXT,
	created		TEXT NOT NULL,
	sent		TEXT
);
CREATE INDEX outbox_due ON outbox(state, next_attempt);
