-- SPDX-License-Identifier: GPL-2.0-only
-- 007: every read the API serves is an index lookup, so its cost grows
-- with the size of its answer, not with years of history (issue 13).
-- A release's occurrences (its regressions, its gate's blocking count).
CREATE INDEX occurrence_by_release ON occurrence(release_id);
-- A release's newest report.
CREATE INDEX report_by_release ON report(release_id, id);
-- The automatic baseline: the newest tested release of a branch below.
CREATE INDEX release_by_branch ON release(branch, rc, patch);
-- A release's jobs counted by state (list pages, gates).
CREATE INDEX job_by_release_state ON job(release_id, state);
DROP INDEX job_by_release;
-- A regression's events (its page, the feed).
CREATE INDEX regression_event_by_regression ON regression_event(regression_id);
-- The engine's queue, read every few seconds: only releases not analysed.
CREATE INDEX release_unanalysed ON release(id) WHERE analysed IS NULL;
