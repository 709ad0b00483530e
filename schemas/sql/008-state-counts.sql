-- SPDX-License-Identifier: GPL-2.0-only
-- 008: how many jobs, regressions and deliveries are in each state, kept
-- by triggers in the transaction that changes them, so /metrics reads a
-- handful of rows however many years of jobs the store holds (issue 13).
CREATE TABLE state_count (
	tbl		TEXT NOT NULL,		-- 'job', 'regression', 'outbox'
	state		TEXT NOT NULL,
	n		INTEGER NOT NULL,
	PRIMARY KEY (tbl, state)
) WITHOUT ROWID;
INSERT INTO state_count SELECT 'job', state, count(*) FROM job GROUP BY state;
INSERT INTO state_count SELECT 'regression', state, count(*) FROM regression
	GROUP BY state;
INSERT INTO state_count SELECT 'outbox', state, count(*) FROM outbox
	GROUP BY state;

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

CREATE TRIGGER regression_count_insert AFTER INSERT ON regression BEGIN
	INSERT INTO state_count VALUES ('regression', NEW.state, 1)
		ON CONFLICT (tbl, state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER regression_count_update AFTER UPDATE OF state ON regression
WHEN OLD.state != NEW.state BEGIN
	UPDATE state_count SET n = n - 1
		WHERE tbl = 'regression' AND state = OLD.state;
	INSERT INTO state_count VALUES ('regression', NEW.state, 1)
		ON CONFLICT (tbl, state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER regression_count_delete AFTER DELETE ON regression BEGIN
	UPDATE state_count SET n = n - 1
		WHERE tbl = 'regression' AND state = OLD.state;
END;

CREATE TRIGGER outbox_count_insert AFTER INSERT ON outbox BEGIN
	INSERT INTO state_count VALUES ('outbox', NEW.state, 1)
		ON CONFLICT (tbl, state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER outbox_count_update AFTER UPDATE OF state ON outbox
WHEN OLD.state != NEW.state BEGIN
	UPDATE state_count SET n = n - 1 WHERE tbl = 'outbox' AND state = OLD.state;
	INSERT INTO state_count VALUES ('outbox', NEW.state, 1)
		ON CONFLICT (tbl, state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER outbox_count_delete AFTER DELETE ON outbox BEGIN
	UPDATE state_count SET n = n - 1 WHERE tbl = 'outbox' AND state = OLD.state;
END;
