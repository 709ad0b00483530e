/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * store.c - owns the SQLite database: the only file that includes
 * sqlite3.h. WAL mode, foreign keys, migrations compiled in from
 * schemas/sql/ and tracked with PRAGMA user_version, every statement
 * prepared with bound parameters, every state change one transaction.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "base/base.h"
#include "store/store.h"
#include "store_migrations.h"

struct store {
	sqlite3 *db;
	/* The read queries, prepared once per connection (a prepare costs
	 * more than most of these queries run). */
	sqlite3_stmt *cached[Q_COUNT];
};

/* Bumped after every commit of any store in this process (the WAL hook
 * runs once the commit is durable and visible): what the HTTP layer's
 * response cache keys on. */
static _Atomic uint64_t generation = 1;

uint64_t store_generation(void)
{
	return atomic_load(&generation);
}

/* The WAL hook replaces SQLite's automatic checkpoint (setting one clears
 * the other), so it checkpoints as the default does, at 1000 pages. */
static int on_commit(void *arg, sqlite3 *db, const char *name, int pages)
{
	(void)arg;
	atomic_fetch_add(&generation, 1);
	if (pages >= 1000)
		sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE,
					  NULL, NULL);
	return SQLITE_OK;
}

static const char *const query_sql[] = {
	/* One query for a whole page: what the release's state and its
	 * gate's unfinished and infra counts are derived from (job_states,
	 * "state:n ...") and its blocking regressions, each an index lookup
	 * of its own release (007-read-indexes.sql). */
	[Q_RELEASES] =
		"SELECT r.id, r.version, r.branch, r.rc, r.created, r.baseline,"
		" r.announced, r.deadline, r.subject,"
		" (SELECT count(*) FROM release_job j WHERE j.release_id = r.id) AS jobs,"
		" (SELECT count(*) FROM release_job j WHERE j.release_id = r.id"
		"  AND j.state IN " JOB_FINAL_SQL ") AS jobs_finished,"
		" (SELECT group_concat(state || ':' || n, ' ') FROM"
		"  (SELECT state, count(*) AS n FROM release_job j"
		"   WHERE j.release_id = r.id GROUP BY state)) AS job_states,"
		" (SELECT count(*) FROM occurrence o JOIN regression g"
		"  ON g.id = o.regression_id WHERE o.release_id = r.id"
		"  AND o.flaky = 0 AND g.state != 'invalid') AS blocking,"
		" r.analysed"
		" FROM release r WHERE (?1 IS NULL OR r.branch = ?1)"
		" AND (?2 IS NULL OR r.created >= ?2)"
		" ORDER BY r.id DESC LIMIT ?3 OFFSET ?4",
	[Q_RELEASE] =
		"SELECT id, version, branch, rc, patch, created, announced, deadline,"
		" message_id, baseline, subject, git_tree, git_branch, patch_url,"
		" source_error"
		" FROM release WHERE version = ?",
	[Q_RELEASE_JOBS] =
		"SELECT j.id, j.target, j.suite, j.state, j.attempt, j.accel,"
		" j.error_kind, j.error, j.created, j.started, j.finished,"
		" j.boot_seconds, j.kernel_version, j.kernel_mismatch, j.rerun_of,"
		" a.kind, a.url, a.sha256, a.modules_url, a.modules_sha256,"
		" a.custom = 1 AS custom, a.patch_url, a.patch_sha256, a.git_ref,"
		" j.built_sha256, j.build_seconds, j.built_commit, j.build_step,"
		" j.build_done, j.build_total, j.host"
		" FROM release_job j JOIN artifact a ON a.id = j.artifact_id"
		" WHERE j.release_id = ? ORDER BY j.id",
	[Q_JOB] =
		"SELECT j.id, r.version, j.target, j.suite, j.state, j.attempt,"
		" j.worker, j.accel, j.error_kind, j.error, j.created, j.started,"
		" j.finished, j.boot_seconds, j.kernel_version, j.kernel_mismatch,"
		" j.rerun_of, a.kind, a.url, a.sha256, a.modules_url,"
		" a.modules_sha256, a.custom = 1 AS custom, a.patch_url,"
		" a.patch_sha256, a.git_ref, j.built_sha256, j.build_seconds,"
		" j.built_commit, j.build_step, j.build_done, j.build_total,"
		" j.host, j.bisection_id, j.git_commit, j.only_tests"
		" FROM job j JOIN release r ON r.id = j.release_id"
		" JOIN artifact a ON a.id = j.artifact_id WHERE j.id = ?",
	[Q_JOB_RESULTS] =
		"SELECT test, status, diagnostic, duration_ms FROM result"
		" WHERE job_id = ? ORDER BY id",
	[Q_JOB_EVENTS] =
		"SELECT at, state, attempt, message FROM job_event"
		" WHERE job_id = ? ORDER BY id",
	[Q_RELEASE_JOB_COUNTS] =
		"SELECT state, count(*) AS n FROM release_job WHERE release_id = ?"
		" GROUP BY state",
	[Q_RELEASE_BY_ID] =
		"SELECT id, version, branch, rc, patch, created, announced,"
		" deadline, message_id, baseline, subject, mail_from, mail_to,"
		" mail_cc, analysed FROM release WHERE id = ?",
	[Q_RELEASE_RUNS] =
		"SELECT j.target, x.test, count(*) AS runs,"
		" sum(x.status = 'fail') AS fails,"
		" max(CASE WHEN x.status = 'fail' THEN x.diagnostic END) AS diagnostic,"
		" max(CASE WHEN x.status = 'fail' THEN j.id END) AS job_id"
		" FROM result x JOIN release_job j ON j.id = x.job_id"
		" WHERE j.release_id = ? AND j.state = 'done'"
		" AND x.status IN ('pass','fail') GROUP BY j.target, x.test"
		" ORDER BY j.target, x.test",
	[Q_BASELINE_AUTO] =
		"SELECT r.id, r.version FROM release r WHERE r.branch = ?"
		" AND r.rc = 0 AND r.patch < ? AND r.id != ? AND EXISTS"
		" (SELECT 1 FROM release_job j WHERE j.release_id = r.id"
		"  AND j.state = 'done') ORDER BY r.patch DESC LIMIT 1",
	[Q_RELEASE_GATE] =
		"SELECT (SELECT count(*) FROM release_job WHERE release_id = r.id) AS jobs,"
		" (SELECT count(*) FROM release_job WHERE release_id = r.id AND state IN"
		"  " JOB_UNFINISHED_SQL ") AS unfinished,"
		" (SELECT count(*) FROM release_job WHERE release_id = r.id"
		"  AND state IN ('infra_error','cancelled')) AS infra,"
		" (SELECT count(*) FROM occurrence o JOIN regression g"
		"  ON g.id = o.regression_id WHERE o.release_id = r.id"
		"  AND o.flaky = 0 AND g.state != 'invalid') AS blocking,"
		" r.analysed,"
		" r.deadline IS NOT NULL AND r.deadline <"
		"  strftime('%Y-%m-%dT%H:%M:%SZ', 'now') AS deadline_passed,"
		" (SELECT f.version FROM release f WHERE r.rc > 0"
		"  AND f.branch = r.branch AND f.patch = r.patch AND f.rc = 0)"
		"  AS released_as"
		" FROM release r WHERE r.id = ?",
	[Q_RELEASE_REGRESSIONS] =
		"SELECT g.id, g.test, g.target, g.fs, g.state, g.diagnostic,"
		" o.flaky, o.runs, o.fails, b.state AS branch_state, b.fixed_in,"
		" (SELECT group_concat(r2.version, ' ') FROM occurrence o2"
		"  JOIN release r2 ON r2.id = o2.release_id"
		"  WHERE o2.regression_id = g.id AND r2.id != o.release_id) AS also_in,"
		" cb.culprit, cb.culprit_subject, cb.culprit_upstream"
		" FROM occurrence o JOIN regression g ON g.id = o.regression_id"
		" JOIN release r ON r.id = o.release_id"
		" LEFT JOIN regression_branch b ON b.regression_id = g.id"
		"  AND b.branch = r.branch"
		/* its culprit: this rc's bisection, else another rc's */
		" LEFT JOIN bisection cb ON cb.id = coalesce("
		"  (SELECT b2.id FROM bisection b2 WHERE b2.release_id = o.release_id"
		"   AND b2.target = g.target AND b2.state = 'found'"
		"   AND (b2.test = 'build.kernel') = (g.test = 'build.kernel')),"
		"  (SELECT b2.id FROM occurrence o3"
		"   JOIN bisection b2 ON b2.release_id = o3.release_id"
		"   AND b2.target = g.target"
		"   AND (b2.test = 'build.kernel') = (g.test = 'build.kernel')"
		"   WHERE o3.regression_id = g.id AND b2.state = 'found'"
		"   ORDER BY b2.id LIMIT 1))"
		" WHERE o.release_id = ? ORDER BY o.flaky, g.id",
	[Q_REGRESSIONS] =
		"SELECT g.id, g.test, g.target, g.fs, g.state, g.first_seen,"
		" g.updated, (SELECT count(*) FROM occurrence o"
		"  WHERE o.regression_id = g.id) AS occurrences,"
		" (SELECT group_concat(r.version, ' ') FROM occurrence o"
		"  JOIN release r ON r.id = o.release_id"
		"  WHERE o.regression_id = g.id) AS releases"
		" FROM regression g WHERE (?1 IS NULL OR g.state = ?1)"
		" AND (?2 IS NULL OR EXISTS (SELECT 1 FROM regression_branch b"
		"  WHERE b.regression_id = g.id AND b.branch = ?2))"
		" AND (?5 IS NULL OR g.test = ?5)"
		" ORDER BY g.id DESC LIMIT ?3 OFFSET ?4",
	[Q_REGRESSION] =
		"SELECT id, signature, test, target, fs, diagnostic, state, reason,"
		" first_seen, updated FROM regression WHERE id = ?",
	[Q_REGRESSION_OCCURRENCES] =
		"SELECT r.version, r.branch, r.rc, r.message_id, r.deadline,"
		" o.job_id, o.flaky, o.runs, o.fails, o.seen"
		" FROM occurrence o JOIN release r ON r.id = o.release_id"
		" WHERE o.regression_id = ? ORDER BY r.branch, r.patch, r.rc",
	[Q_REGRESSION_BRANCHES] =
		"SELECT branch, state, fixed_in, updated FROM regression_branch"
		" WHERE regression_id = ? ORDER BY branch",
	[Q_REGRESSION_EVENTS] =
		"SELECT at, state, message FROM regression_event"
		" WHERE regression_id = ? ORDER BY id",
	[Q_RERUN_COUNT] =
		"SELECT count(*) AS n FROM release_job WHERE release_id = ? AND target = ?"
		" AND rerun_of IS NOT NULL",
	[Q_RELEASES_UNANALYSED] =
		"SELECT r.id FROM release r WHERE r.analysed IS NULL AND EXISTS"
		" (SELECT 1 FROM release_job j WHERE j.release_id = r.id) AND NOT EXISTS"
		" (SELECT 1 FROM release_job j WHERE j.release_id = r.id AND j.state IN"
		"  " JOB_UNFINISHED_SQL ")",
	/* Kept by 008-state-counts.sql's triggers: a few rows, not a scan. */
	[Q_METRICS_JOBS] =
		"SELECT state, n FROM state_count WHERE tbl = 'job'",
	[Q_METRICS_REGRESSIONS] =
		"SELECT state, n FROM state_count WHERE tbl = 'regression'",
	[Q_METRICS_OUTBOX] =
		"SELECT state, n FROM state_count WHERE tbl = 'outbox'",
	/* The newest of each kind first (by id, the order they were
	 * written), so the feed reads ?1 rows of each, not all history. */
	[Q_FEED] =
		"SELECT * FROM (SELECT * FROM (SELECT 'regression-' || e.id AS id,"
		" e.at AS at, 'Regression ' || g.id || ' ' || e.state || ': ' ||"
		" g.test || ' on ' || g.target AS title,"
		" coalesce(e.message, '') AS summary,"
		" '/api/v1/regressions/' || g.id AS link FROM regression_event e"
		" JOIN regression g ON g.id = e.regression_id"
		" ORDER BY e.id DESC LIMIT ?1)"
		" UNION ALL SELECT * FROM (SELECT 'report-' || p.id, p.created,"
		" r.version || ': gate ' || p.gate, substr(p.text, 1, 2000),"
		" '/api/v1/releases/' || r.version FROM report p"
		" JOIN release r ON r.id = p.release_id ORDER BY p.id DESC LIMIT ?1))"
		" ORDER BY at DESC, id DESC LIMIT ?1",
	/* Candidates only: which occurrence is earlier is regress_fixes()'s
	 * rule, not this query's. */
	[Q_FIX_CANDIDATES] =
		"SELECT DISTINCT g.id, r.branch, e.version AS seen_on"
		" FROM regression_branch b JOIN regression g ON g.id = b.regression_id"
		" JOIN release r ON r.id = ?1"
		" JOIN occurrence o ON o.regression_id = g.id AND o.flaky = 0"
		" JOIN release e ON e.id = o.release_id AND e.branch = r.branch"
		"  AND e.id != r.id"
		" WHERE b.branch = r.branch AND b.state = 'open'"
		" AND g.state IN ('open','confirmed')"
		" AND EXISTS (SELECT 1 FROM result x JOIN release_job j ON j.id = x.job_id"
		"  WHERE j.release_id = r.id AND j.state = 'done'"
		"  AND j.target = g.target AND x.test = g.test"
		"  AND x.status = 'pass')"
		" AND NOT EXISTS (SELECT 1 FROM result x JOIN release_job j"
		"  ON j.id = x.job_id WHERE j.release_id = r.id"
		"  AND j.target = g.target AND x.test = g.test"
		"  AND x.status = 'fail')"
		" ORDER BY g.id",
	/* Announced rcs with a patch and no kernels, not tried yet: the
	 * source consumer's queue (source.c). */
	[Q_SOURCES_UNRESOLVED] =
		"SELECT r.id, r.version, r.patch_url, r.git_tree, r.git_branch"
		" FROM release r WHERE r.rc > 0"
		" AND (r.patch_url IS NOT NULL OR (r.git_tree IS NOT NULL"
		"      AND r.git_branch IS NOT NULL))"
		" AND r.source_tried IS NULL"
		" AND NOT EXISTS (SELECT 1 FROM artifact a WHERE a.release_id = r.id)"
		" ORDER BY r.id",
	[Q_RELEASE_REPORT] =
		"SELECT id, created, gate, text, email FROM report"
		" WHERE release_id = ? ORDER BY id DESC LIMIT 1",
	/* Confirmed (never flaky) regressions in an rc whose failing job was
	 * built from git, not bisected there yet (bisect.c). */
	[Q_BISECT_CANDIDATES] =
		"SELECT min(g.id) AS regression_id, r.id AS release_id, r.version,"
		" r.branch, g.target, g.test, j.id AS job_id, j.artifact_id,"
		" a.url AS tree, j.built_commit AS bad,"
		" ',' || group_concat(substr(g.test, instr(g.test, '.') + 1), ',')"
		"  || ',' AS tests"
		" FROM occurrence o JOIN regression g ON g.id = o.regression_id"
		" JOIN release r ON r.id = o.release_id"
		" JOIN release_job j ON j.id = (SELECT max(k.id) FROM release_job k"
		"  JOIN artifact b ON b.id = k.artifact_id AND b.kind = 'git'"
		"  WHERE k.release_id = r.id AND k.target = g.target"
		"  AND k.built_commit IS NOT NULL)"
		" JOIN artifact a ON a.id = j.artifact_id"
		" WHERE g.state = 'confirmed' AND o.flaky = 0 AND NOT EXISTS"
		" (SELECT 1 FROM bisection b WHERE b.release_id = r.id"
		"  AND b.target = g.target"
		"  AND (b.test = 'build.kernel') = (g.test = 'build.kernel'))"
		" GROUP BY r.id, g.target, g.test = 'build.kernel'"
		" ORDER BY r.id, g.target",
	[Q_BISECT_GOOD] =
		"SELECT j.built_commit AS good FROM release r"
		" JOIN release b ON b.branch = r.branch AND b.id != r.id"
		"  AND (b.rc = 0 OR b.patch < r.patch)"
		" JOIN release_job j ON j.release_id = b.id AND j.target = ?2"
		"  AND j.state = 'done' AND j.built_commit IS NOT NULL"
		" JOIN result x ON x.job_id = j.id AND x.test = ?3"
		"  AND x.status = 'pass'"
		" WHERE r.id = ?1 ORDER BY b.patch DESC, b.rc = 0 DESC, b.id DESC"
		" LIMIT 1",
	[Q_BISECTIONS_RUNNING] =
		"SELECT b.id, b.regression_id, b.release_id, b.job_id, r.version,"
		" b.target, b.test, b.tests, b.tree, b.good, b.bad, b.good_tested,"
		" b.commits"
		" FROM bisection b JOIN release r ON r.id = b.release_id"
		" WHERE b.state = 'running' ORDER BY b.id",
	[Q_BISECT_STEPS] =
		"SELECT j.id, j.git_commit, j.state,"
		" (SELECT x.status FROM result x WHERE x.job_id = j.id"
		"  AND x.test = 'build.kernel') AS build,"
		/* bad when any of the bisected tests fails */
		" (SELECT CASE WHEN sum(x.status = 'fail') > 0 THEN 'fail'"
		"  WHEN sum(x.status = 'pass') > 0 THEN 'pass' END"
		"  FROM result x WHERE x.job_id = j.id AND (x.test = b.test OR"
		"  instr(b.tests, ',' || substr(x.test, instr(x.test, '.') + 1)"
		"   || ',') > 0)) AS status"
		" FROM job j JOIN bisection b ON b.id = j.bisection_id"
		" WHERE j.bisection_id = ? ORDER BY j.id",
	[Q_BISECTION] =
		"SELECT b.id, b.regression_id, b.release_id, r.version, r.branch,"
		" b.target, b.test, b.tree, b.good, b.bad, b.state, b.culprit,"
		" b.culprit_subject, b.culprit_upstream, b.range_first,"
		" b.range_last, b.message, b.prereq_state, b.prerequisites,"
		" b.prereq_message, b.culprit_author, b.culprit_date, b.culprit_people,"
		" length(b.commits) / 41 + (length(b.commits) % 41 > 0) AS commits,"
		/* the culprit's place in the range, 1 = the oldest */
		" CASE WHEN b.culprit IS NOT NULL AND instr(b.commits, b.culprit) > 0"
		"  THEN (instr(b.commits, b.culprit) - 1) / 41 + 1 END AS culprit_index,"
		" (SELECT count(*) FROM job j WHERE j.bisection_id = b.id) AS steps,"
		/* the other rcs whose bisection named the same upstream commit */
		" (SELECT group_concat(r2.version || ' (' || r2.branch || ')', ', ')"
		"  FROM bisection c JOIN release r2 ON r2.id = c.release_id"
		"  WHERE c.culprit_upstream = b.culprit_upstream AND c.id != b.id"
		"  AND c.release_id != b.release_id"
		"  AND c.state = 'found') AS same_cause_in"
		" FROM bisection b JOIN release r ON r.id = b.release_id"
		" WHERE b.id = ?",
	/* The bisections of the rcs it occurs in, on its target, of its
	 * kind (build or tests), with the other regressions whose
	 * bisection named the same upstream commit. */
	[Q_REGRESSION_BISECTIONS] =
		"SELECT b.id, r.version, b.state, b.culprit, b.culprit_subject,"
		" b.culprit_upstream, b.range_first, b.range_last, b.message,"
		" b.prereq_state, b.prerequisites, b.prereq_message,"
		" (SELECT count(*) FROM job j WHERE j.bisection_id = b.id) AS steps,"
		" (SELECT group_concat(j.id) FROM job j"
		"  WHERE j.bisection_id = b.id) AS jobs,"
		" (SELECT group_concat(DISTINCT o2.regression_id) FROM bisection c"
		"  JOIN occurrence o2 ON o2.release_id = c.release_id"
		"  JOIN regression g2 ON g2.id = o2.regression_id"
		"  AND g2.target = c.target"
		"  AND (g2.test = 'build.kernel') = (c.test = 'build.kernel')"
		"  WHERE c.culprit_upstream = b.culprit_upstream"
		"  AND o2.regression_id != g.id) AS same_cause"
		" FROM regression g JOIN occurrence o ON o.regression_id = g.id"
		" JOIN bisection b ON b.release_id = o.release_id"
		"  AND b.target = g.target"
		"  AND (b.test = 'build.kernel') = (g.test = 'build.kernel')"
		" JOIN release r ON r.id = b.release_id"
		" WHERE g.id = ? ORDER BY b.id",
	[Q_PREREQ_PENDING] =
		"SELECT b.id, r.version, b.tree, b.culprit, b.culprit_upstream, b.bad"
		" FROM bisection b JOIN release r ON r.id = b.release_id"
		" WHERE b.prereq_state = 'pending' ORDER BY b.id",
	/* The regressions of earlier rcs of the branch this release fixes
	 * (mark_fixes() ran), with the rcs they failed in. */
	[Q_RELEASE_FIXES] =
		"SELECT g.id, g.test, g.target,"
		" (SELECT group_concat(e.version, ', ') FROM occurrence o"
		"  JOIN release e ON e.id = o.release_id WHERE o.regression_id = g.id"
		"  AND e.branch = r.branch AND o.flaky = 0) AS seen_in"
		" FROM regression_branch b JOIN regression g ON g.id = b.regression_id"
		" JOIN release r ON r.id = ?1"
		" WHERE b.branch = r.branch AND b.state = 'fixed'"
		" AND b.fixed_in = r.version ORDER BY g.id",
	/* The last rc of a stable release that shipped, past its review
	 * deadline, with a regression still open on its branch (the gate's
	 * released_with_known_regressions), not yet told to regzbot: one
	 * row per regression, its first such rc. */
	[Q_SHIPPED_REGRESSIONS] =
		"SELECT g.id AS regression_id, g.test, g.target, g.diagnostic,"
		" r.id AS release_id, r.version, r.branch, r.patch,"
		" f.version AS released_as, min(r.patch) AS first_patch"
		" FROM release r"
		" JOIN release f ON f.branch = r.branch AND f.patch = r.patch"
		"  AND f.rc = 0"
		" JOIN occurrence o ON o.release_id = r.id AND o.flaky = 0"
		" JOIN regression g ON g.id = o.regression_id"
		"  AND g.state IN ('open','confirmed')"
		" JOIN regression_branch b ON b.regression_id = g.id"
		"  AND b.branch = r.branch AND b.state = 'open'"
		" WHERE r.rc > 0 AND r.analysed IS NOT NULL"
		" AND r.deadline IS NOT NULL"
		" AND r.deadline < strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"
		" AND NOT EXISTS (SELECT 1 FROM release r2 WHERE r2.branch = r.branch"
		"  AND r2.patch = r.patch AND r2.rc > r.rc)"
		" AND NOT EXISTS (SELECT 1 FROM mail m WHERE m.kind = 'regzbot'"
		"  AND m.regression_id = g.id)"
		" GROUP BY g.id ORDER BY r.id, g.id",
	[Q_REGZBOT_GROUP] =
		"SELECT g.id, g.test, g.target, g.state, b.state AS branch_state,"
		" r.id AS release_id, r.version"
		" FROM mail m JOIN regression g ON g.id = m.regression_id"
		" JOIN release r ON r.id = m.release_id"
		" LEFT JOIN regression_branch b ON b.regression_id = g.id"
		"  AND b.branch = r.branch"
		" WHERE m.kind = 'regzbot' AND m.message_id = ?1 ORDER BY g.id",
	[Q_REGRESSION_MAILS] =
		"SELECT m.kind, m.release_id, r.version, m.message_id"
		" FROM mail m LEFT JOIN release r ON r.id = m.release_id"
		" WHERE m.regression_id = ?1 OR (m.kind = 'report' AND m.release_id"
		"  IN (SELECT o.release_id FROM occurrence o"
		"  WHERE o.regression_id = ?1 AND o.flaky = 0))"
		" ORDER BY m.id",
};

static int store_fail(struct store *st, const char *what, char *err,
		      size_t errlen)
{
	errf(err, errlen, "sqlite: %s: %s", what, sqlite3_errmsg(st->db));
	return -1;
}

static int exec_sql(struct store *st, const char *sql, char *err,
		    size_t errlen)
{
	char *msg = NULL;

	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		errf(err, errlen, "sqlite: %s", msg != NULL ? msg : "exec failed");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int run(struct store *st, const char *sql, char *err, size_t errlen,
	       const char *types, ...);

static int begin(struct store *st, char *err, size_t errlen)
{
	/* IMMEDIATE takes the write lock up front, so two workers claiming
	 * jobs serialise instead of failing on lock upgrade. */
	return exec_sql(st, "BEGIN IMMEDIATE", err, errlen);
}

static int commit(struct store *st, char *err, size_t errlen)
{
	return exec_sql(st, "COMMIT", err, errlen);
}

static void rollback(struct store *st)
{
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

static sqlite3_stmt *prepare(struct store *st, const char *sql, char *err,
			     size_t errlen)
{
	sqlite3_stmt *stmt = NULL;

	if (sqlite3_prepare_v2(st->db, sql, -1, &stmt, NULL) != SQLITE_OK) {
		store_fail(st, "prepare", err, errlen);
		return NULL;
	}
	return stmt;
}

static int user_version(struct store *st)
{
	sqlite3_stmt *stmt;
	int v = -1;

	stmt = prepare(st, "PRAGMA user_version", NULL, 0);
	if (stmt == NULL)
		return -1;
	if (sqlite3_step(stmt) == SQLITE_ROW)
		v = sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);
	return v;
}

/* ---- typed rows ---- */

void rowset_free(struct rowset *rs)
{
	if (rs == NULL)
		return;
	free(rs->v);
	json_decref(rs->backing);
	memset(rs, 0, sizeof(*rs));
}

static long col_long(json_t *row, const char *key)
{
	return (long)json_integer_value(json_object_get(row, key));
}

/* Where a column of a query goes in a typed row: 's' const char *, 'i'
 * int64_t, 'l' long, 'n' int, 'd' double. */
struct column {
	const char *name;
	size_t offset;
	char type;
};
#define COL(row, field, type) { #field, offsetof(struct row, field), type }

static void fill_columns(const struct column *cols, json_t *j, void *out)
{
	for (const struct column *c = cols; c->name != NULL; c++) {
		json_t *v = json_object_get(j, c->name);
		char *p = (char *)out + c->offset;

		switch (c->type) {
		case 's': *(const char **)p = json_string_value(v); break;
		case 'i': *(int64_t *)p = json_integer_value(v); break;
		case 'l': *(long *)p = (long)json_integer_value(v); break;
		case 'n': *(int *)p = (int)json_integer_value(v); break;
		case 'd': *(double *)p = json_number_value(v); break;
		}
	}
}

/* Runs q and converts each JSON row by cols (then after, if not NULL)
 * into an array of elem-sized rows; the JSON stays as the strings'
 * storage. */
static int typed(struct store *st, struct rowset *out, size_t elem,
		 const struct column *cols,
		 void (*after)(struct store *, void *row), enum store_query q,
		 char *err, size_t errlen, const char *types, ...)
{
	va_list ap;
	size_t i;
	json_t *row;

	memset(out, 0, sizeof(*out));
	va_start(ap, types);
	out->backing = store_vrows(st, q, err, errlen, types, ap);
	va_end(ap);
	if (out->backing == NULL)
		return -1;
	out->n = json_array_size(out->backing);
	out->v = calloc(out->n + 1, elem);
	if (out->v == NULL) {
		rowset_free(out);
		errf(err, errlen, "out of memory");
		return -1;
	}
	json_array_foreach(out->backing, i, row) {
		fill_columns(cols, row, (char *)out->v + i * elem);
		if (after != NULL)
			after(st, (char *)out->v + i * elem);
	}
	return 0;
}

#define row release_row
static const struct column release_cols[] = {
	COL(row, id, 'i'), COL(row, rc, 'l'), COL(row, patch, 'l'),
	COL(row, version, 's'), COL(row, branch, 's'), COL(row, baseline, 's'),
	COL(row, subject, 's'), COL(row, message_id, 's'),
	COL(row, mail_from, 's'), COL(row, mail_to, 's'), COL(row, mail_cc, 's'),
	COL(row, analysed, 's'), { NULL, 0, 0 },
};
#undef row
#define row run_row
static const struct column run_cols[] = {
	COL(row, target, 's'), COL(row, test, 's'), COL(row, diagnostic, 's'),
	COL(row, runs, 'n'), COL(row, fails, 'n'), COL(row, job_id, 'i'),
	{ NULL, 0, 0 },
};
#undef row
#define row job_row
static const struct column job_cols[] = {
	COL(row, id, 'i'), COL(row, target, 's'), COL(row, state, 's'),
	COL(row, kernel_version, 's'), COL(row, error, 's'),
	COL(row, boot_seconds, 'd'), { NULL, 0, 0 },
};
#undef row
#define row regression_row
static const struct column regression_cols[] = {
	COL(row, id, 'i'), COL(row, test, 's'), COL(row, target, 's'),
	COL(row, state, 's'), COL(row, diagnostic, 's'), COL(row, also_in, 's'),
	COL(row, flaky, 'n'), { NULL, 0, 0 },
};
#undef row
#define row gate_row
static const struct column gate_cols[] = {
	COL(row, jobs, 'n'), COL(row, unfinished, 'n'), COL(row, infra, 'n'),
	COL(row, blocking, 'n'), COL(row, deadline_passed, 'n'),
	COL(row, analysed, 's'), COL(row, released_as, 's'), { NULL, 0, 0 },
};
#undef row
#define row fix_candidate
static const struct column candidate_cols[] = {
	COL(row, id, 'i'), COL(row, branch, 's'), COL(row, seen_on, 's'),
	{ NULL, 0, 0 },
};
#undef row
#define row source_todo
static const struct column source_cols[] = {
	COL(row, id, 'i'), COL(row, version, 's'), COL(row, patch_url, 's'),
	COL(row, git_tree, 's'), COL(row, git_branch, 's'), { NULL, 0, 0 },
};
#undef row
static const struct column id_cols[] = { { "id", 0, 'i' }, { NULL, 0, 0 } };
#define row bisect_candidate
static const struct column bisect_candidate_cols[] = {
	COL(row, regression_id, 'i'), COL(row, release_id, 'i'),
	COL(row, job_id, 'i'), COL(row, artifact_id, 'i'),
	COL(row, version, 's'), COL(row, branch, 's'), COL(row, target, 's'),
	COL(row, test, 's'), COL(row, tree, 's'), COL(row, bad, 's'),
	COL(row, tests, 's'), { NULL, 0, 0 },
};
#undef row
#define row bisection_row
static const struct column bisection_cols[] = {
	COL(row, id, 'i'), COL(row, regression_id, 'i'),
	COL(row, release_id, 'i'), COL(row, job_id, 'i'),
	COL(row, good_tested, 'l'), COL(row, version, 's'),
	COL(row, target, 's'), COL(row, test, 's'), COL(row, tests, 's'),
	COL(row, tree, 's'), COL(row, good, 's'), COL(row, bad, 's'),
	COL(row, commits, 's'), { NULL, 0, 0 },
};
#undef row
#define row bisect_step_row
static const struct column step_cols[] = {
	COL(row, id, 'i'), COL(row, git_commit, 's'), COL(row, state, 's'),
	COL(row, build, 's'), COL(row, status, 's'), { NULL, 0, 0 },
};
#undef row

#undef COL

int store_release_get(struct store *st, int64_t id, struct rowset *out,
		      char *err, size_t errlen)
{
	return typed(st, out, sizeof(struct release_row), release_cols, NULL,
		     Q_RELEASE_BY_ID, err, errlen, "i", id);
}

int store_release_baseline(struct store *st, const struct release_row *rel,
			   struct rowset *out, char *err, size_t errlen)
{
	if (rel->baseline != NULL)
		return typed(st, out, sizeof(struct release_row), release_cols,
			     NULL, Q_RELEASE, err, errlen, "s", rel->baseline);
	return typed(st, out, sizeof(struct release_row), release_cols, NULL,
		     Q_BASELINE_AUTO, err, errlen, "sli", rel->branch, rel->patch,
		     rel->id);
}

int store_release_runs(struct store *st, int64_t id, struct rowset *out,
		       char *err, size_t errlen)
{
	return typed(st, out, sizeof(struct run_row), run_cols, NULL,
		     Q_RELEASE_RUNS, err, errlen, "i", id);
}

/* A job row's result counts, from its results. */
static void count_results(struct store *st, void *row)
{
	struct job_row *r = row;
	json_t *results = store_rows(st, Q_JOB_RESULTS, NULL, 0, "i", r->id), *res;
	size_t i;

	json_array_foreach(results, i, res)
		result_counts_add(&r->counts, json_string_value(
			json_object_get(res, "status")));
	json_decref(results);
}

int store_release_jobs(struct store *st, int64_t id, int counted,
		       struct rowset *out, char *err, size_t errlen)
{
	return typed(st, out, sizeof(struct job_row), job_cols,
		     counted ? count_results : NULL, Q_RELEASE_JOBS, err, errlen,
		     "i", id);
}

int store_release_regressions(struct store *st, int64_t id, struct rowset *out,
			      char *err, size_t errlen)
{
	return typed(st, out, sizeof(struct regression_row), regression_cols,
		     NULL, Q_RELEASE_REGRESSIONS, err, errlen, "i", id);
}

int store_release_gate(struct store *st, int64_t id, struct rowset *out,
		       char *err, size_t errlen)
{
	return typed(st, out, sizeof(struct gate_row), gate_cols, NULL,
		     Q_RELEASE_GATE, err, errlen, "i", id);
}

int store_fix_candidates(struct store *st, int64_t release_id,
			 struct rowset *out, char *err, size_t errlen)
{
	return typed(st, out, sizeof(struct fix_candidate), candidate_cols, NULL,
		     Q_FIX_CANDIDATES, err, errlen, "i", release_id);
}

int store_releases_unanalysed(struct store *st, struct rowset *out, char *err,
			      size_t errlen)
{
	return typed(st, out, sizeof(int64_t), id_cols, NULL,
		     Q_RELEASES_UNANALYSED, err, errlen, "");
}

int store_sources_unresolved(struct store *st, struct rowset *out, char *err,
			     size_t errlen)
{
	return typed(st, out, sizeof(struct source_todo), source_cols, NULL,
		     Q_SOURCES_UNRESOLVED, err, errlen, "");
}

int store_bisect_candidates(struct store *st, struct rowset *out, char *err,
			    size_t errlen)
{
	return typed(st, out, sizeof(struct bisect_candidate), bisect_candidate_cols,
		     NULL, Q_BISECT_CANDIDATES, err, errlen, "");
}

int store_bisections_running(struct store *st, struct rowset *out, char *err,
			     size_t errlen)
{
	return typed(st, out, sizeof(struct bisection_row), bisection_cols,
		     NULL, Q_BISECTIONS_RUNNING, err, errlen, "");
}

int store_bisect_steps(struct store *st, int64_t bisection_id,
		       struct rowset *out, char *err, size_t errlen)
{
	return typed(st, out, sizeof(struct bisect_step_row), step_cols, NULL,
		     Q_BISECT_STEPS, err, errlen, "i", bisection_id);
}

int store_bisect_good(struct store *st, int64_t release_id, const char *target,
		      const char *test, char good[41], char *err, size_t errlen)
{
	json_t *r = store_rows(st, Q_BISECT_GOOD, err, errlen, "iss", release_id,
			       target, test);
	const char *g;

	if (r == NULL)
		return -1;
	g = json_string_value(json_object_get(json_array_get(r, 0), "good"));
	if (g != NULL)
		snprintf(good, 41, "%s", g);
	json_decref(r);
	return g != NULL;
}

int store_bisection_create(struct store *st, const struct bisect_candidate *c,
			   const char *good, int good_tested,
			   const char *commits, const char *state,
			   const char *message, int64_t *id, char *err,
			   size_t errlen)
{
	char now[32];

	now_iso8601(now);
	int build = strcmp(c->test, "build.kernel") == 0;

	if (run(st, "INSERT INTO bisection (regression_id, release_id, job_id,"
		    " target, test, tests, tree, good, bad, good_tested, commits,"
		    " state, message, created, finished) VALUES (?, ?, ?, ?, ?, ?,"
		    " ?, ?, ?, ?, ?, ?, ?, ?,"
		    " CASE WHEN ? = 'running' THEN NULL ELSE ? END)"
		    " ON CONFLICT (release_id, target, test) DO NOTHING",
		err, errlen, "iiissssssl" "ssssss", c->regression_id,
		c->release_id, c->job_id, c->target, c->test,
		build ? "-" : c->tests, c->tree,
		good != NULL ? good : "", c->bad, (long)good_tested,
		commits != NULL ? commits : "", state, message, now, state,
		now) < 0)
		return -1;
	*id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int store_bisect_step_add(struct store *st, int64_t bisection_id,
			  int64_t rc_job_id, const char *git_commit,
			  const char *only_tests, char *err, size_t errlen)
{
	char now[32];
	int64_t job_id;

	now_iso8601(now);
	if (begin(st, err, errlen) < 0)
		return -1;
	if (run(st, "INSERT INTO job (release_id, artifact_id, target, suite,"
		    " created, bisection_id, git_commit, only_tests)"
		    " SELECT release_id, artifact_id, target, suite, ?, ?, ?, ?"
		    " FROM job WHERE id = ?", err, errlen, "siss" "i", now,
		bisection_id, git_commit, only_tests != NULL ? only_tests : "-",
		rc_job_id) <= 0)
		goto fail;
	job_id = sqlite3_last_insert_rowid(st->db);
	if (run(st, "INSERT INTO job_event (job_id, at, state, attempt, message)"
		    " VALUES (?, ?, 'queued', 1, ?)", err, errlen, "iss", job_id,
		now, "bisection step") < 0 ||
	    commit(st, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	rollback(st);
	return -1;
}

int store_bisection_finish(struct store *st, int64_t id, const char *state,
			   const char *culprit, const char *subject,
			   const char *upstream, const char *range_first,
			   const char *range_last, const char *message,
			   const char *prereq_state, char *err, size_t errlen)
{
	char now[32];

	now_iso8601(now);
	return run(st, "UPDATE bisection SET state = ?, culprit = ?,"
		       " culprit_subject = ?, culprit_upstream = ?, range_first = ?,"
		       " range_last = ?, message = ?, finished = ?, prereq_state = ?"
		       " WHERE id = ? AND state = 'running'", err, errlen,
		   "sssssssssi", state, culprit, subject, upstream, range_first,
		   range_last, message, now, prereq_state, id) < 0 ? -1 : 0;
}

int store_prereq_finish(struct store *st, int64_t id, const char *state,
			const char *list, const char *message, char *err,
			size_t errlen)
{
	return run(st, "UPDATE bisection SET prereq_state = ?, prerequisites = ?,"
		       " prereq_message = ? WHERE id = ? AND prereq_state = 'pending'",
		   err, errlen, "sssi", state, list, message, id) < 0 ? -1 : 0;
}

int store_outbox_add(struct store *st, const struct outbox_in *o, char *err,
		     size_t errlen)
{
	char now[32];

	now_iso8601(now);
	return run(st, "INSERT INTO outbox (kind, destination, payload,"
		       " next_attempt, created) VALUES (?, ?, ?, ?, ?)", err,
		   errlen, "sssss", o->kind, o->destination, o->payload, now,
		   now) < 0 ? -1 : 0;
}

int store_source_tried(struct store *st, int64_t id, const char *error,
		       char *err, size_t errlen)
{
	char now[32];

	now_iso8601(now);
	return run(st, "UPDATE release SET source_tried = ?, source_error = ?"
		   " WHERE id = ?", err, errlen, "ssi", now, error, id) < 0
		? -1 : 0;
}

int store_rerun_count(struct store *st, int64_t id, const char *target,
		      char *err, size_t errlen)
{
	json_t *r = store_rows(st, Q_RERUN_COUNT, err, errlen, "is", id, target);
	int n = r != NULL ? (int)col_long(json_array_get(r, 0), "n") : -1;

	json_decref(r);
	return n;
}

int store_schema_version(struct store *st)
{
	return user_version(st);
}

/* After a migration, before its commit: no row may point at a row that
 * is not there (migrations run with foreign keys off, so that one can
 * make a table again; SQLite's procedure for changing a constraint). */
static int foreign_keys_ok(struct store *st, char *err, size_t errlen)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, "PRAGMA foreign_key_check", -1, &s,
			       NULL) != SQLITE_OK)
		return store_fail(st, "foreign_key_check", err, errlen);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		errf(err, errlen, "foreign key broken: a row of %s points at"
		     " a missing row of %s", sqlite3_column_text(s, 0),
		     sqlite3_column_text(s, 2));
	else if (rc != SQLITE_DONE)
		store_fail(st, "foreign_key_check", err, errlen);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int migrate(struct store *st, char *err, size_t errlen)
{
	int current = user_version(st);

	if (current < 0)
		return store_fail(st, "read user_version", err, errlen);
	if (current > migrations[migration_count - 1].version) {
		errf(err, errlen,
		     "database schema %d is newer than this rcgated (%d)",
		     current, migrations[migration_count - 1].version);
		return -1;
	}
	for (unsigned i = 0; i < migration_count; i++) {
		char pragma[64];

		if (migrations[i].version <= current)
			continue;
		if (begin(st, err, errlen) < 0)
			return -1;
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d",
			 migrations[i].version);
		if (exec_sql(st, migrations[i].sql, err, errlen) < 0 ||
		    exec_sql(st, pragma, err, errlen) < 0 ||
		    foreign_keys_ok(st, err, errlen) < 0) {
			size_t len = strlen(err);

			rollback(st);
			snprintf(err + len, errlen - len, " (migration %s)",
				 migrations[i].name);
			return -1;
		}
		if (commit(st, err, errlen) < 0) {
			rollback(st);
			return -1;
		}
		log_info("store: applied migration %s", migrations[i].name);
	}
	return 0;
}

int store_check(const char *path, char *err, size_t errlen)
{
	struct stat sb;
	sqlite3 *db = NULL;
	sqlite3_stmt *stmt = NULL;
	const char *verdict;
	int rc = -1;

	if (stat(path, &sb) < 0)
		return errno == ENOENT ? 0 : (errf(err, errlen, "%s: %s", path,
						   strerror(errno)), -1);
	if (!S_ISREG(sb.st_mode)) {
		errf(err, errlen, "database %s is not a regular file", path);
		return -1;
	}
	/* SQLite takes an empty file for a new database: the tokens, the
	 * releases and the regressions would silently be gone. */
	if (sb.st_size == 0) {
		errf(err, errlen, "database %s is empty (0 bytes), not a new one:"
		     " refusing to create a database over it (move it away to"
		     " start afresh, or restore a backup)", path);
		return -1;
	}
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &stmt, NULL) !=
		    SQLITE_OK ||
	    sqlite3_step(stmt) != SQLITE_ROW) {
		errf(err, errlen, "database %s cannot be read: %s (restore a"
		     " backup)", path, db != NULL ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	verdict = (const char *)sqlite3_column_text(stmt, 0);
	if (verdict == NULL || strcmp(verdict, "ok") != 0) {
		errf(err, errlen, "database %s is corrupt (%.200s): restore a"
		     " backup", path, verdict != NULL ? verdict : "?");
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	return rc;
}

int store_instance_id(struct store *st, char *out, size_t len, char *err,
		      size_t errlen)
{
	unsigned char raw[4];
	char fresh[9];
	sqlite3_stmt *stmt;
	int rc = -1;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		errf(err, errlen, "getrandom: %s", strerror(errno));
		return -1;
	}
	snprintf(fresh, sizeof(fresh), "%02x%02x%02x%02x", raw[0], raw[1],
		 raw[2], raw[3]);
	if (run(st, "INSERT OR IGNORE INTO meta (key, value) VALUES"
		    " ('instance', ?)", err, errlen, "s", fresh) < 0)
		return -1;
	stmt = prepare(st, "SELECT value FROM meta WHERE key = 'instance'", err,
		       errlen);
	if (stmt == NULL)
		return -1;
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		snprintf(out, len, "%s", (const char *)sqlite3_column_text(stmt, 0));
		rc = 0;
	} else {
		store_fail(st, "read instance id", err, errlen);
	}
	sqlite3_finalize(stmt);
	return rc;
}

struct store *store_open(const char *path, char *err, size_t errlen)
{
	struct store *st = calloc(1, sizeof(*st));

	if (st == NULL) {
		errf(err, errlen, "out of memory");
		return NULL;
	}
	if (sqlite3_open_v2(path, &st->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				    SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		errf(err, errlen, "sqlite: open %s: %s", path,
		     st->db != NULL ? sqlite3_errmsg(st->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(st->db, 10000);
	sqlite3_extended_result_codes(st->db, 1);
	/* synchronous = FULL: a commit (and so a 201) has reached the disk
	 * before it is answered, and survives a power cut (rcgated(8)). */
	if (exec_sql(st, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = OFF;"
			 " PRAGMA synchronous = FULL; PRAGMA cache_size = -256;",
			 err, errlen) < 0)
		goto fail;
	if (migrate(st, err, errlen) < 0 ||
	    exec_sql(st, "PRAGMA foreign_keys = ON;", err, errlen) < 0)
		goto fail;
	sqlite3_wal_hook(st->db, on_commit, NULL);
	return st;
fail:
	sqlite3_close(st->db);
	free(st);
	return NULL;
}

void store_close(struct store *st)
{
	if (st == NULL)
		return;
	for (int q = 0; q < Q_COUNT; q++)
		sqlite3_finalize(st->cached[q]);
	sqlite3_close(st->db);
	free(st);
}

static int bind_args(sqlite3_stmt *stmt, const char *types, va_list ap)
{
	for (int i = 0; types[i] != '\0'; i++) {
		int rc;

		switch (types[i]) {
		case 'i':
			rc = sqlite3_bind_int64(stmt, i + 1, va_arg(ap, int64_t));
			break;
		case 'l':
			rc = sqlite3_bind_int64(stmt, i + 1, va_arg(ap, long));
			break;
		case 'd':
			rc = sqlite3_bind_double(stmt, i + 1, va_arg(ap, double));
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);

			rc = s != NULL ? sqlite3_bind_text(stmt, i + 1, s, -1,
							   SQLITE_TRANSIENT)
				       : sqlite3_bind_null(stmt, i + 1);
			break;
		}
		default:
			return -1;
		}
		if (rc != SQLITE_OK)
			return -1;
	}
	return 0;
}

/* Runs one statement with bound arguments to completion. */
static int run(struct store *st, const char *sql, char *err, size_t errlen,
	       const char *types, ...)
{
	sqlite3_stmt *stmt = prepare(st, sql, err, errlen);
	va_list ap;
	int rc;

	if (stmt == NULL)
		return -1;
	va_start(ap, types);
	rc = bind_args(stmt, types, ap);
	va_end(ap);
	if (rc < 0) {
		sqlite3_finalize(stmt);
		return store_fail(st, "bind", err, errlen);
	}
	rc = sqlite3_step(stmt);
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return store_fail(st, "step", err, errlen);
	return sqlite3_changes(st->db);
}

static json_t *column_json(sqlite3_stmt *stmt, int col)
{
	switch (sqlite3_column_type(stmt, col)) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(stmt, col));
	case SQLITE_FLOAT:
		return json_real(sqlite3_column_double(stmt, col));
	case SQLITE_NULL:
		return json_null();
	default: {
		const char *text = (const char *)sqlite3_column_text(stmt, col);
		size_t len = (size_t)sqlite3_column_bytes(stmt, col);
		json_t *v = json_stringn(text != NULL ? text : "", len);
		char *clean;

		if (v != NULL || text == NULL)
			return v;
		/* Console-derived text may hold invalid UTF-8: keep the ASCII,
		 * mark the rest, never fail the whole response for it. */
		clean = malloc(len + 1);
		if (clean == NULL)
			return json_null();
		for (size_t i = 0; i < len; i++)
			clean[i] = (unsigned char)text[i] < 0x80 && text[i] != 0
					   ? text[i] : '?';
		v = json_stringn(clean, len);
		free(clean);
		return v;
	}
	}
}

json_t *store_vrows(struct store *st, enum store_query q, char *err,
		    size_t errlen, const char *types, va_list ap)
{
	sqlite3_stmt *stmt = st->cached[q];
	json_t *rows;
	int rc;

	if (stmt == NULL) {
		if (sqlite3_prepare_v3(st->db, query_sql[q], -1,
				       SQLITE_PREPARE_PERSISTENT, &stmt,
				       NULL) != SQLITE_OK) {
			store_fail(st, "prepare", err, errlen);
			return NULL;
		}
		st->cached[q] = stmt;
	}
	/* A caller passing the wrong arguments is a bug, not an empty result. */
	if (sqlite3_bind_parameter_count(stmt) != (int)strlen(types)) {
		errf(err, errlen, "query %d takes %d arguments, %zu given", (int)q,
		     sqlite3_bind_parameter_count(stmt), strlen(types));
		return NULL;
	}
	if (bind_args(stmt, types, ap) < 0) {
		sqlite3_clear_bindings(stmt);
		store_fail(st, "bind", err, errlen);
		return NULL;
	}
	rows = json_array();
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		json_t *row = json_object();

		for (int c = 0; c < sqlite3_column_count(stmt); c++)
			json_object_set_new(row, sqlite3_column_name(stmt, c),
					    column_json(stmt, c));
		json_array_append_new(rows, row);
	}
	if (rc != SQLITE_DONE)
		store_fail(st, "query", err, errlen);
	/* Reset at once: a statement left mid-step would hold its read
	 * snapshot (and the WAL) open until its next use. */
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	if (rc != SQLITE_DONE) {
		json_decref(rows);
		return NULL;
	}
	return rows;
}

json_t *store_rows(struct store *st, enum store_query q, char *err,
		   size_t errlen, const char *types, ...)
{
	va_list ap;
	json_t *rows;

	va_start(ap, types);
	rows = store_vrows(st, q, err, errlen, types, ap);
	va_end(ap);
	return rows;
}

static int64_t release_id_of(struct store *st, const char *version)
{
	sqlite3_stmt *stmt = prepare(st, "SELECT id FROM release WHERE version = ?",
				     NULL, 0);
	int64_t id = 0;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, version, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		id = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return id;
}

static int64_t count_of(struct store *st, const char *sql, int64_t id)
{
	sqlite3_stmt *stmt = prepare(st, sql, NULL, 0);
	int64_t n = -1;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, id);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		n = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return n;
}

int store_release_create(struct store *st, const char *version,
			 const struct kversion *kv, const char *baseline,
			 const struct artifact_in *arts, size_t n,
			 int64_t *release_id, char *err, size_t errlen)
{
	char now[32];
	int64_t existing;

	now_iso8601(now);
	if (begin(st, err, errlen) < 0)
		return -1;
	existing = release_id_of(st, version);
	if (existing < 0) {
		store_fail(st, "find release", err, errlen);
		goto fail;
	}
	if (existing > 0) {
		/* An announced rc gets its kernels later, once; anything else
		 * with this version is a duplicate. */
		if (count_of(st, "SELECT count(*) FROM artifact WHERE release_id = ?",
			     existing) != 0) {
			rollback(st);
			errf(err, errlen, "release %s exists", version);
			return -2;
		}
		*release_id = existing;
		if (baseline != NULL &&
		    run(st, "UPDATE release SET baseline = ? WHERE id = ?", err,
			errlen, "si", baseline, existing) < 0)
			goto fail;
	} else {
		if (run(st, "INSERT INTO release (version, branch, rc, patch,"
			    " baseline, created) VALUES (?, ?, ?, ?, ?, ?)", err,
			errlen, "ssllss", version, kv->branch, kv->rc, kv->patch,
			baseline, now) < 0)
			goto fail;
		*release_id = sqlite3_last_insert_rowid(st->db);
	}
	for (size_t i = 0; i < n; i++) {
		int64_t artifact_id, job_id;

		if (run(st, "INSERT INTO artifact (release_id, target, url,"
			    " sha256, kind, modules_url, modules_sha256, custom,"
			    " patch_url, patch_sha256, git_ref)"
			    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", err, errlen,
			"issssssl" "sss", *release_id, arts[i].target, arts[i].url,
			arts[i].sha256, arts[i].kind, arts[i].modules_url,
			arts[i].modules_sha256, (long)arts[i].custom,
			arts[i].patch_url, arts[i].patch_sha256,
			arts[i].git_ref) < 0)
			goto fail;
		artifact_id = sqlite3_last_insert_rowid(st->db);
		if (run(st, "INSERT INTO job (release_id, artifact_id, target,"
			    " created) VALUES (?, ?, ?, ?)", err, errlen, "iiss",
			*release_id, artifact_id, arts[i].target, now) < 0)
			goto fail;
		job_id = sqlite3_last_insert_rowid(st->db);
		if (run(st, "INSERT INTO job_event (job_id, at, state, attempt,"
			    " message) VALUES (?, ?, 'queued', 1, 'submitted')",
			err, errlen, "is", job_id, now) < 0)
			goto fail;
	}
	if (commit(st, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	rollback(st);
	return -1;
}

static void copy_col(char *dst, size_t len, sqlite3_stmt *stmt, int col)
{
	const char *s = (const char *)sqlite3_column_text(stmt, col);

	snprintf(dst, len, "%s", s != NULL ? s : "");
}

static int add_event(struct store *st, int64_t id, const char *state,
		     const char *message, char *err, size_t errlen)
{
	char now[32];

	now_iso8601(now);
	return run(st, "INSERT INTO job_event (job_id, at, state, attempt,"
		       " message) SELECT id, ?, ?, attempt, ? FROM job"
		       " WHERE id = ?", err, errlen, "sssi", now, state,
		   message, id);
}

int store_job_claim(struct store *st, const char *worker, struct job *out,
		    char *err, size_t errlen)
{
	sqlite3_stmt *stmt;
	char now[32];
	int rc;

	if (begin(st, err, errlen) < 0)
		return -1;
	stmt = prepare(st,
		"SELECT j.id, j.release_id, j.attempt, j.target, j.suite,"
		" r.version, a.url, a.sha256, a.kind, a.modules_url,"
		" a.modules_sha256, a.custom, a.patch_url, a.patch_sha256,"
		" a.git_ref, j.bisection_id, j.git_commit, j.only_tests"
		" FROM job j JOIN release r ON r.id = j.release_id"
		" JOIN artifact a ON a.id = j.artifact_id"
		" WHERE j.state = 'queued'"
		/* The rc whose review deadline is nearest goes first; releases
		 * without a deadline (baselines, CI) after, oldest first;
		 * bisection steps only when no review is waiting. */
		" ORDER BY j.bisection_id IS NOT NULL, r.deadline IS NULL,"
		" r.deadline, j.id LIMIT 1",
		err, errlen);
	if (stmt == NULL) {
		rollback(st);
		return -1;
	}
	rc = sqlite3_step(stmt);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(stmt);
		rollback(st);
		if (rc == SQLITE_DONE)
			return 0;
		return store_fail(st, "claim", err, errlen);
	}
	memset(out, 0, sizeof(*out));
	out->id = sqlite3_column_int64(stmt, 0);
	out->release_id = sqlite3_column_int64(stmt, 1);
	out->attempt = sqlite3_column_int(stmt, 2);
	copy_col(out->target, sizeof(out->target), stmt, 3);
	copy_col(out->suite, sizeof(out->suite), stmt, 4);
	copy_col(out->version, sizeof(out->version), stmt, 5);
	copy_col(out->url, sizeof(out->url), stmt, 6);
	copy_col(out->sha256, sizeof(out->sha256), stmt, 7);
	copy_col(out->kind, sizeof(out->kind), stmt, 8);
	copy_col(out->modules_url, sizeof(out->modules_url), stmt, 9);
	out->custom = sqlite3_column_int(stmt, 11);
	copy_col(out->modules_sha256, sizeof(out->modules_sha256), stmt, 10);
	copy_col(out->patch_url, sizeof(out->patch_url), stmt, 12);
	copy_col(out->patch_sha256, sizeof(out->patch_sha256), stmt, 13);
	copy_col(out->git_ref, sizeof(out->git_ref), stmt, 14);
	out->bisection_id = sqlite3_column_int64(stmt, 15);
	copy_col(out->git_commit, sizeof(out->git_commit), stmt, 16);
	copy_col(out->only_tests, sizeof(out->only_tests), stmt, 17);
	sqlite3_finalize(stmt);
	now_iso8601(now);
	if (run(st, "UPDATE job SET state = 'fetching', worker = ?,"
		    " started = ?, finished = NULL, error = NULL,"
		    " error_kind = NULL WHERE id = ?", err, errlen, "ssi",
		worker, now, out->id) < 0 ||
	    add_event(st, out->id, "fetching", worker, err, errlen) < 0 ||
	    commit(st, err, errlen) < 0) {
		rollback(st);
		return -1;
	}
	return 1;
}

static const char *const active_states = JOB_ACTIVE_SQL;

int store_job_transition(struct store *st, int64_t id, const char *from,
			 const char *to, const char *message, char *err,
			 size_t errlen)
{
	char sql[256], now[32];
	int changed;
	int final = job_state_final(to);

	now_iso8601(now);
	if (from != NULL)
		snprintf(sql, sizeof(sql),
			 "UPDATE job SET state = ?, finished = ? WHERE id = ?"
			 " AND state = ?");
	else
		snprintf(sql, sizeof(sql),
			 "UPDATE job SET state = ?, finished = ? WHERE id = ?"
			 " AND state IN %s", active_states);
	if (begin(st, err, errlen) < 0)
		return -1;
	changed = from != NULL
		? run(st, sql, err, errlen, "ssis", to, final ? now : NULL, id, from)
		: run(st, sql, err, errlen, "ssi", to, final ? now : NULL, id);
	if (changed < 0)
		goto fail;
	if (changed > 0 && add_event(st, id, to, message, err, errlen) < 0)
		goto fail;
	if (commit(st, err, errlen) < 0)
		goto fail;
	return changed > 0;
fail:
	rollback(st);
	return -1;
}

int store_job_built(struct store *st, int64_t id, const char *sha256,
		    double seconds, char *err, size_t errlen)
{
	return run(st, "UPDATE job SET built_sha256 = ?, build_seconds = ?"
		   " WHERE id = ?", err, errlen, "sdi", sha256, seconds, id) < 0
		? -1 : 0;
}

int store_job_build_progress(struct store *st, int64_t id, const char *step,
			     long done, long total, const char *commit,
			     char *err, size_t errlen)
{
	return run(st, "UPDATE job SET build_step = ?, build_done = nullif(?, -1),"
		       " build_total = nullif(?, -1),"
		       " built_commit = coalesce(?, built_commit) WHERE id = ?",
		   err, errlen, "sllsi", step, done >= 0 ? done : -1,
		   total >= 0 ? total : -1, commit, id) < 0 ? -1 : 0;
}

int store_job_note(struct store *st, int64_t id, const char *accel,
		   const char *kernel_version, char *err, size_t errlen)
{
	return run(st, "UPDATE job SET accel = coalesce(?, accel),"
		       " kernel_version = coalesce(?, kernel_version)"
		       " WHERE id = ?", err, errlen, "ssi", accel,
		   kernel_version, id) < 0 ? -1 : 0;
}

int store_job_host(struct store *st, int64_t id, const char *host, char *err,
		   size_t errlen)
{
	return run(st, "UPDATE job SET host = ? WHERE id = ?", err, errlen,
		   "si", host, id) < 0 ? -1 : 0;
}

int store_job_mismatch(struct store *st, int64_t id, const char *message,
		       char *err, size_t errlen)
{
	return run(st, "UPDATE job SET kernel_mismatch = ? WHERE id = ?", err,
		   errlen, "si", message, id) < 0 ? -1 : 0;
}

int store_job_done(struct store *st, int64_t id, const struct result_row *rows,
		   size_t n, double boot_seconds, char *err, size_t errlen)
{
	sqlite3_stmt *ins;
	char now[32];
	int changed;

	if (begin(st, err, errlen) < 0)
		return -1;
	/* Results of an earlier attempt that died half-way never mix with
	 * these: one attempt's results are written whole or not at all. */
	if (run(st, "DELETE FROM result WHERE job_id = ?", err, errlen, "i",
		id) < 0)
		goto fail;
	ins = prepare(st, "INSERT INTO result (job_id, test, status, diagnostic,"
			  " duration_ms) VALUES (?, ?, ?, ?, ?)", err, errlen);
	if (ins == NULL)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		sqlite3_bind_int64(ins, 1, id);
		sqlite3_bind_text(ins, 2, rows[i].test, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 3, rows[i].status, -1, SQLITE_STATIC);
		if (rows[i].diagnostic != NULL)
			sqlite3_bind_text(ins, 4, rows[i].diagnostic, -1,
					  SQLITE_STATIC);
		else
			sqlite3_bind_null(ins, 4);
		if (rows[i].timed)
			sqlite3_bind_int64(ins, 5, rows[i].duration_ms);
		else
			sqlite3_bind_null(ins, 5);
		if (sqlite3_step(ins) != SQLITE_DONE) {
			store_fail(st, "insert result", err, errlen);
			sqlite3_finalize(ins);
			goto fail;
		}
		sqlite3_reset(ins);
		sqlite3_clear_bindings(ins);
	}
	sqlite3_finalize(ins);
	now_iso8601(now);
	/* From whichever state the worker had it in: a build that failed
	 * ends the job from 'building'. */
	changed = run(st, "UPDATE job SET state = 'done', finished = ?,"
			  " boot_seconds = round(?, 3) WHERE id = ?"
			  " AND state IN " JOB_ACTIVE_SQL, err, errlen, "sdi",
		      now, boot_seconds, id);
	if (changed < 0)
		goto fail;
	if (changed == 0) {
		/* Cancelled while the guest ran: keep it cancelled, drop results. */
		rollback(st);
		return 0;
	}
	if (add_event(st, id, "done", NULL, err, errlen) < 0 ||
	    commit(st, err, errlen) < 0)
		goto fail;
	return 1;
fail:
	rollback(st);
	return -1;
}

int store_job_infra(struct store *st, int64_t id, const char *kind,
		    const char *message, long max_attempts, int *requeued,
		    char *err, size_t errlen)
{
	char now[32], msg[1100];
	int changed;

	*requeued = 0;
	now_iso8601(now);
	snprintf(msg, sizeof(msg), "%s: %s", kind, message);
	if (begin(st, err, errlen) < 0)
		return -1;
	changed = run(st, "UPDATE job SET state = 'infra_error', finished = ?,"
			  " error_kind = ?, error = ? WHERE id = ? AND state IN"
			  " " JOB_ACTIVE_SQL, err, errlen,
		      "sssi", now, kind, message, id);
	if (changed < 0)
		goto fail;
	if (changed == 0) {
		rollback(st);
		return 0;
	}
	if (add_event(st, id, "infra_error", msg, err, errlen) < 0)
		goto fail;
	changed = run(st, "UPDATE job SET state = 'queued', attempt = attempt + 1,"
			  " finished = NULL WHERE id = ? AND attempt < ?", err,
		      errlen, "il", id, max_attempts);
	if (changed < 0)
		goto fail;
	if (changed > 0) {
		*requeued = 1;
		if (add_event(st, id, "queued", "automatic retry", err, errlen) < 0)
			goto fail;
	}
	if (commit(st, err, errlen) < 0)
		goto fail;
	return 1;
fail:
	rollback(st);
	return -1;
}

int store_requeue_unfinished(struct store *st, long max_attempts, int *count,
			     int *failed, char *err, size_t errlen)
{
	char now[32];
	int n, ended = 0;

	*count = *failed = 0;
	now_iso8601(now);
	if (begin(st, err, errlen) < 0)
		return -1;
	if (max_attempts > 0) {
		if (run(st, "INSERT INTO job_event (job_id, at, state, attempt,"
			    " message) SELECT id, ?, 'infra_error', attempt,"
			    " 'crash: the daemon stopped during this attempt, the"
			    " last one' FROM job WHERE state IN"
			    " " JOB_ACTIVE_SQL " AND attempt >= ?",
			err, errlen, "sl", now, max_attempts) < 0)
			goto fail;
		ended = run(st, "UPDATE job SET state = 'infra_error', finished = ?,"
			    " error_kind = 'crash', error = 'the daemon stopped"
			    " unexpectedly during every attempt (' || attempt ||"
			    "'); not retried' WHERE state IN"
			    " " JOB_ACTIVE_SQL " AND attempt >= ?",
			    err, errlen, "sl", now, max_attempts);
		if (ended < 0)
			goto fail;
	}
	if (run(st, "INSERT INTO job_event (job_id, at, state, attempt, message)"
		    " SELECT id, ?, 'queued', attempt + ?, ? FROM job WHERE state"
		    " IN " JOB_ACTIVE_SQL, err, errlen, "sls",
		now, max_attempts > 0 ? 1L : 0L, max_attempts > 0
		? "requeued after the daemon stopped unexpectedly"
		: "requeued after a clean stop") < 0)
		goto fail;
	n = run(st, "UPDATE job SET state = 'queued', worker = NULL,"
		    " attempt = attempt + ? WHERE state IN"
		    " " JOB_ACTIVE_SQL, err, errlen, "l",
		max_attempts > 0 ? 1L : 0L);
	if (n < 0 || commit(st, err, errlen) < 0)
		goto fail;
	*count = n;
	*failed = ended;
	return 0;
fail:
	rollback(st);
	return -1;
}

int store_release_cancel(struct store *st, const char *version, int *count,
			 char *err, size_t errlen)
{
	char now[32];
	int n;

	now_iso8601(now);
	if (begin(st, err, errlen) < 0)
		return -1;
	if (run(st, "INSERT INTO job_event (job_id, at, state, attempt, message)"
		    " SELECT j.id, ?, 'cancelled', j.attempt, 'cancelled by request'"
		    " FROM job j JOIN release r ON r.id = j.release_id"
		    " WHERE r.version = ? AND j.state IN"
		    " " JOB_UNFINISHED_SQL, err, errlen,
		"ss", now, version) < 0)
		goto fail;
	n = run(st, "UPDATE job SET state = 'cancelled', finished = ?"
		    " WHERE release_id = (SELECT id FROM release WHERE version = ?)"
		    " AND state IN " JOB_UNFINISHED_SQL,
		err, errlen, "ss", now, version);
	if (n < 0 || commit(st, err, errlen) < 0)
		goto fail;
	*count = n;
	return 0;
fail:
	rollback(st);
	return -1;
}

int store_job_state_get(struct store *st, int64_t id, char *state, size_t len)
{
	sqlite3_stmt *stmt = prepare(st, "SELECT state FROM job WHERE id = ?",
				     NULL, 0);
	int rc = -1;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, id);
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		copy_col(state, len, stmt, 0);
		rc = 0;
	}
	sqlite3_finalize(stmt);
	return rc;
}

int store_token_add(struct store *st, const char *name, const char *hash,
		    const char *scope, char *err, size_t errlen)
{
	char now[32];

	now_iso8601(now);
	return run(st, "INSERT INTO token (name, hash, scope, created)"
		       " VALUES (?, ?, ?, ?)", err, errlen, "ssss", name, hash,
		   scope, now) < 0 ? -1 : 0;
}

int store_token_check(struct store *st, const char *hash, const char *scope)
{
	sqlite3_stmt *stmt = prepare(st, "SELECT scope FROM token WHERE hash = ?",
				     NULL, 0);
	int rc = AUTH_INVALID, step;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, hash, -1, SQLITE_STATIC);
	step = sqlite3_step(stmt);
	if (step == SQLITE_ROW) {
		const char *have = (const char *)sqlite3_column_text(stmt, 0);

		/* 'admin' implies every scope. */
		rc = have != NULL && (strcmp(have, scope) == 0 ||
				      strcmp(have, "admin") == 0)
			? AUTH_OK : AUTH_SCOPE;
	} else if (step != SQLITE_DONE) {
		rc = -1;
	}
	sqlite3_finalize(stmt);
	return rc;
}

static int regression_event(struct store *st, int64_t id, const char *state,
			    const char *message, char *err, size_t errlen)
{
	char now[32];

	now_iso8601(now);
	return run(st, "INSERT INTO regression_event (regression_id, at, state,"
		       " message) VALUES (?, ?, ?, ?)", err, errlen, "isss", id,
		   now, state, message);
}

int store_regression_link(struct store *st, const struct occurrence_in *o,
			  int64_t *regression_id, int *created, char *err,
			  size_t errlen)
{
	char now[32], since[32], msg[160];
	sqlite3_stmt *stmt;
	time_t t = time(NULL) - (time_t)o->window_days * 86400;
	int64_t id = 0;

	*created = 0;
	now_iso8601(now);
	time_iso8601(t, since);
	if (begin(st, err, errlen) < 0)
		return -1;
	/* The same failure seen recently on any rc of any branch is the same
	 * regression: that is what links 5.10, 5.15 and 6.1 in one cycle. */
	stmt = prepare(st, "SELECT g.id FROM regression g WHERE g.signature = ?"
			   " AND (SELECT max(seen) FROM occurrence"
			   "  WHERE regression_id = g.id) >= ?"
			   " ORDER BY g.id DESC LIMIT 1", err, errlen);
	if (stmt == NULL)
		goto fail;
	sqlite3_bind_text(stmt, 1, o->signature, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, since, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		id = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	if (id == 0) {
		if (run(st, "INSERT INTO regression (signature, test, target, fs,"
			    " diagnostic, first_seen, updated)"
			    " VALUES (?, ?, ?, ?, ?, ?, ?)", err, errlen, "sssssss",
			o->signature, o->test, o->target, o->fs, o->diagnostic,
			now, now) < 0)
			goto fail;
		id = sqlite3_last_insert_rowid(st->db);
		*created = 1;
		if (regression_event(st, id, "open", "first seen", err, errlen) < 0)
			goto fail;
	}
	if (run(st, "INSERT INTO occurrence (regression_id, release_id, job_id,"
		    " flaky, runs, fails, seen) VALUES (?, ?, ?, ?, ?, ?, ?)"
		    " ON CONFLICT (regression_id, release_id) DO UPDATE SET"
		    " flaky = excluded.flaky, runs = excluded.runs,"
		    " fails = excluded.fails, seen = excluded.seen", err, errlen,
		"iiiiiis", id, o->release_id, o->job_id, (int64_t)o->flaky,
		(int64_t)o->runs, (int64_t)o->fails, now) < 0)
		goto fail;
	if (!o->flaky) {
		/* A failure on this branch (again) opens the branch, even one
		 * that a later rc had fixed. */
		int changed = run(st, "INSERT INTO regression_branch (regression_id,"
				      " branch, state, updated) VALUES (?, ?, 'open', ?)"
				      " ON CONFLICT (regression_id, branch) DO UPDATE"
				      " SET state = 'open', fixed_in = NULL,"
				      " updated = excluded.updated"
				      " WHERE regression_branch.state != 'open'",
				  err, errlen, "iss", id, o->branch, now);

		if (changed < 0)
			goto fail;
		int ch = run(st, "UPDATE regression SET state = 'open', updated = ?"
				 " WHERE id = ? AND state = 'fixed'", err, errlen,
			     "si", now, id);

		if (ch < 0 || (ch > 0 && regression_event(st, id, "open",
				"fails again after a fix", err, errlen) < 0))
			goto fail;
		ch = o->confirmed
			? run(st, "UPDATE regression SET state = 'confirmed',"
			      " updated = ? WHERE id = ? AND state = 'open'", err,
			      errlen, "si", now, id) : 0;
		if (ch < 0 || (ch > 0 && regression_event(st, id, "confirmed",
				"reproduced by a rerun", err, errlen) < 0))
			goto fail;
	}
	snprintf(msg, sizeof(msg), "seen on %s (%d of %d runs failed%s)",
		 o->version, o->fails, o->runs, o->flaky ? ", flaky" : "");
	if (regression_event(st, id, "occurrence", msg, err, errlen) < 0 ||
	    commit(st, err, errlen) < 0)
		goto fail;
	*regression_id = id;
	return 0;
fail:
	rollback(st);
	return -1;
}

int store_regression_fix(struct store *st, int64_t id, const char *branch,
			 const char *version, char *err, size_t errlen)
{
	char now[32], msg[128];
	int changed;

	now_iso8601(now);
	if (begin(st, err, errlen) < 0)
		return -1;
	changed = run(st, "UPDATE regression_branch SET state = 'fixed',"
		      " fixed_in = ?, updated = ? WHERE regression_id = ?"
		      " AND branch = ? AND state = 'open'", err, errlen, "ssis",
		      version, now, id, branch);
	if (changed < 0)
		goto fail;
	if (changed > 0) {
		snprintf(msg, sizeof(msg), "fixed on %s: passes on %s", branch,
			 version);
		if (regression_event(st, id, "fixed", msg, err, errlen) < 0)
			goto fail;
		/* Fixed everywhere it was seen: the regression is fixed. */
		if (run(st, "UPDATE regression SET state = 'fixed', updated = ?"
			    " WHERE id = ? AND state IN ('open','confirmed')"
			    " AND NOT EXISTS (SELECT 1 FROM regression_branch b"
			    " WHERE b.regression_id = regression.id AND"
			    " b.state = 'open')", err, errlen, "si", now, id) < 0)
			goto fail;
	}
	if (commit(st, err, errlen) < 0)
		goto fail;
	return changed > 0;
fail:
	rollback(st);
	return -1;
}

int store_release_claim_analysis(struct store *st, int64_t release_id,
				 char *err, size_t errlen)
{
	char now[32];

	now_iso8601(now);
	return run(st, "UPDATE release SET analysed = ? WHERE id = ?"
		       " AND analysed IS NULL", err, errlen, "si", now,
		   release_id);
}

int store_job_rerun(struct store *st, int64_t release_id, const char *target,
		    char *err, size_t errlen)
{
	char now[32];
	int64_t job_id;

	now_iso8601(now);
	if (begin(st, err, errlen) < 0)
		return -1;
	if (run(st, "INSERT INTO job (release_id, artifact_id, target, suite,"
		    " created, rerun_of) SELECT release_id, artifact_id, target,"
		    " suite, ?, id FROM release_job WHERE release_id = ?"
		    " AND target = ? AND rerun_of IS NULL ORDER BY id LIMIT 1",
		err, errlen,
		"sis", now, release_id, target) <= 0)
		goto fail;
	job_id = sqlite3_last_insert_rowid(st->db);
	if (run(st, "INSERT INTO job_event (job_id, at, state, attempt, message)"
		    " VALUES (?, ?, 'queued', 1, 'rerun of a failure')", err,
		errlen, "is", job_id, now) < 0 ||
	    commit(st, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	rollback(st);
	return -1;
}

int store_regression_triage(struct store *st, int64_t id, const char *state,
			    const char *reason, char *err, size_t errlen)
{
	char now[32];
	int n;

	now_iso8601(now);
	if (begin(st, err, errlen) < 0)
		return -1;
	n = run(st, "UPDATE regression SET state = ?, reason = ?, updated = ?"
		    " WHERE id = ?", err, errlen, "sssi", state, reason, now, id);
	if (n < 0 || (n > 0 && regression_event(st, id, state, reason, err,
						errlen) < 0) ||
	    commit(st, err, errlen) < 0) {
		rollback(st);
		return -1;
	}
	return n;
}

int store_report_add(struct store *st, int64_t release_id, const char *gate,
		     const char *text, const char *email,
		     const struct outbox_in *out, size_t n, char *err,
		     size_t errlen)
{
	char now[32];

	now_iso8601(now);
	if (begin(st, err, errlen) < 0)
		return -1;
	if (run(st, "INSERT INTO report (release_id, created, gate, text, email)"
		    " VALUES (?, ?, ?, ?, ?)", err, errlen, "issss", release_id,
		now, gate, text, email) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		if (run(st, "INSERT INTO outbox (kind, destination, payload,"
			    " next_attempt, created) VALUES (?, ?, ?, ?, ?)", err,
			errlen, "sssss", out[i].kind, out[i].destination,
			out[i].payload, now, now) < 0)
			goto fail;
	}
	if (commit(st, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	rollback(st);
	return -1;
}

int store_mail_add(struct store *st, const struct mail_in *m,
		   const struct outbox_in *out, size_t n, char *err,
		   size_t errlen)
{
	char now[32];
	int added;

	now_iso8601(now);
	if (begin(st, err, errlen) < 0)
		return -1;
	added = run(st, "INSERT OR IGNORE INTO mail (kind, release_id,"
		    " regression_id, about, message_id, created)"
		    " VALUES (?, ?, ?, ?, ?, ?)", err, errlen, "siiiss", m->kind,
		    m->release_id, m->regression_id, m->about, m->message_id,
		    now);
	if (added < 0)
		goto fail;
	for (size_t i = 0; added > 0 && i < m->nalso; i++)
		if (run(st, "INSERT OR IGNORE INTO mail (kind, release_id,"
			    " regression_id, about, message_id, created)"
			    " VALUES (?, ?, ?, ?, ?, ?)", err, errlen, "siiiss",
			m->kind, m->release_id, m->also_regressions[i], m->about,
			m->message_id, now) < 0)
			goto fail;
	if (m->report_text != NULL &&
	    run(st, "INSERT INTO report (release_id, created, gate, text, email)"
		    " VALUES (?, ?, ?, ?, ?)", err, errlen, "issss",
		m->release_id, now, m->gate, m->report_text, m->email) < 0)
		goto fail;
	for (size_t i = 0; added > 0 && i < n; i++) {
		if (run(st, "INSERT INTO outbox (kind, destination, payload,"
			    " next_attempt, created) VALUES (?, ?, ?, ?, ?)", err,
			errlen, "sssss", out[i].kind, out[i].destination,
			out[i].payload, now, now) < 0)
			goto fail;
	}
	if (commit(st, err, errlen) < 0)
		goto fail;
	return added > 0;
fail:
	rollback(st);
	return -1;
}

int store_bisection_culprit(struct store *st, int64_t id, const char *author,
			    const char *date, const char *people, char *err,
			    size_t errlen)
{
	return run(st, "UPDATE bisection SET culprit_author = ?, culprit_date = ?,"
		   " culprit_people = ? WHERE id = ?", err, errlen, "sssi", author,
		   date, people, id) < 0 ? -1 : 0;
}

int store_mail_id(struct store *st, const char *kind, int64_t release_id,
		  int64_t regression_id, int64_t about, char *buf, size_t len,
		  char *err, size_t errlen)
{
	/* about < 0: the first mail of the kind, whatever it is about. */
	sqlite3_stmt *stmt = prepare(st, "SELECT message_id FROM mail"
				     " WHERE kind = ?1 AND release_id = ?2"
				     " AND regression_id = ?3 AND (?4 < 0 OR"
				     " about = ?4) ORDER BY id LIMIT 1",
				     err, errlen);
	int rc;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, release_id);
	sqlite3_bind_int64(stmt, 3, regression_id);
	sqlite3_bind_int64(stmt, 4, about);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(stmt, 0));
		rc = 1;
	} else if (rc == SQLITE_DONE) {
		rc = 0;
	} else {
		rc = store_fail(st, "mail", err, errlen);
	}
	sqlite3_finalize(stmt);
	return rc;
}

int store_outbox_next(struct store *st, struct outbox_item *it, char *err,
		      size_t errlen)
{
	char now[32];
	sqlite3_stmt *stmt;
	int rc;

	now_iso8601(now);
	stmt = prepare(st, "SELECT id, kind, destination, payload, attempts"
			   " FROM outbox WHERE state = 'pending' AND next_attempt <= ?"
			   " ORDER BY next_attempt, id LIMIT 1", err, errlen);
	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, now, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		const char *p = (const char *)sqlite3_column_text(stmt, 3);

		it->id = sqlite3_column_int64(stmt, 0);
		copy_col(it->kind, sizeof(it->kind), stmt, 1);
		copy_col(it->destination, sizeof(it->destination), stmt, 2);
		it->payload = strdup(p != NULL ? p : "");
		it->attempts = sqlite3_column_int(stmt, 4);
		sqlite3_finalize(stmt);
		if (it->payload == NULL) {
			errf(err, errlen, "out of memory");
			return -1;
		}
		return 1;
	}
	sqlite3_finalize(stmt);
	if (rc == SQLITE_DONE)
		return 0;
	return store_fail(st, "outbox", err, errlen);
}

int store_outbox_done(struct store *st, int64_t id, int ok, const char *error,
		      long delay_s, long max_attempts, char *err, size_t errlen)
{
	char now[32], next[32];
	time_t t = time(NULL) + delay_s;

	now_iso8601(now);
	time_iso8601(t, next);
	if (ok)
		return run(st, "UPDATE outbox SET state = 'sent', sent = ?,"
			       " attempts = attempts + 1, last_error = NULL"
			       " WHERE id = ?", err, errlen, "si", now, id) < 0
			? -1 : 0;
	return run(st, "UPDATE outbox SET attempts = attempts + 1,"
		       " last_error = ?, next_attempt = ?, state = CASE WHEN"
		       " attempts + 1 >= ? THEN 'failed' ELSE 'pending' END"
		       " WHERE id = ?", err, errlen, "ssli", error, next,
		   max_attempts, id) < 0 ? -1 : 0;
}

/* 1 if the release has an announcement, 0 if not, -1 on error. */
static int release_announced(struct store *st, int64_t id)
{
	sqlite3_stmt *stmt = prepare(st, "SELECT message_id IS NOT NULL FROM"
				     " release WHERE id = ?", NULL, 0);
	int rc = -1;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, id);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		rc = sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);
	return rc;
}

int store_release_announce(struct store *st, const struct announce_in *a,
			   int64_t *release_id, char *err, size_t errlen)
{
	char now[32];
	int64_t existing;
	int rc, changed, had_announcement = 0;

	now_iso8601(now);
	if (begin(st, err, errlen) < 0)
		return -1;
	existing = release_id_of(st, a->version);
	if (existing < 0) {
		store_fail(st, "find release", err, errlen);
		goto fail;
	}
	if (existing == 0) {
		if (run(st, "INSERT INTO release (version, branch, rc, patch,"
			    " created) VALUES (?, ?, ?, ?, ?)", err, errlen, "sslls",
			a->version, a->branch, a->rc, a->patch, now) < 0)
			goto fail;
		existing = sqlite3_last_insert_rowid(st->db);
		rc = 0;
	} else {
		rc = 1;
		had_announcement = release_announced(st, existing);
		if (had_announcement < 0) {
			store_fail(st, "find release", err, errlen);
			goto fail;
		}
	}
	*release_id = existing;
	/* A release without an announcement takes this one; one announced
	 * under another Message-ID is corrected by it (the sender was
	 * accepted, and the later mail is the one the maintainer meant);
	 * the same Message-ID again changes nothing. */
	changed = run(st, "UPDATE release SET announced = ?, deadline = ?,"
		      " message_id = ?, subject = ?, mail_from = ?, mail_to = ?,"
		      " mail_cc = ?, patch_url = ?, git_tree = ?, git_branch = ?"
		      " WHERE id = ? AND (message_id IS NULL OR message_id <> ?)",
		      err, errlen, "ssssssssssis",
		      a->date != NULL && a->date[0] ? a->date : now,
		      a->deadline != NULL && a->deadline[0] ? a->deadline : NULL,
		      a->message_id, a->subject, a->from, a->to, a->cc,
		      a->patch_url, a->git_tree, a->git_branch, existing,
		      a->message_id);
	if (changed < 0)
		goto fail;
	if (changed == 0)
		rc = 2;
	else if (rc == 1 && had_announcement)
		rc = 3;
	if (commit(st, err, errlen) < 0)
		goto fail;
	return rc;
fail:
	rollback(st);
	return -1;
}

int store_job_retry(struct store *st, int64_t id, char *err, size_t errlen)
{
	int n;

	if (begin(st, err, errlen) < 0)
		return -1;
	n = run(st, "UPDATE job SET state = 'queued', attempt = attempt + 1,"
		    " finished = NULL, error = NULL, error_kind = NULL, worker = NULL"
		    " WHERE id = ? AND state IN " JOB_FINAL_SQL,
		err, errlen, "i", id);
	if (n < 0)
		goto fail;
	/* The previous attempt's results go: a retried job's results are its
	 * new attempt's, or none while it runs or if it is cancelled. */
	if (n > 0 && (run(st, "DELETE FROM result WHERE job_id = ?", err, errlen,
			  "i", id) < 0 ||
		      add_event(st, id, "queued", "retry requested", err, errlen) < 0 ||
		      run(st, "UPDATE release SET analysed = NULL WHERE id ="
			      " (SELECT release_id FROM job WHERE id = ?)", err,
			  errlen, "i", id) < 0))
		goto fail;
	if (commit(st, err, errlen) < 0)
		goto fail;
	return n > 0;
fail:
	rollback(st);
	return -1;
}
