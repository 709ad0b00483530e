/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * store_read.c - the read side: a table of named, prepared queries whose
 * rows go to the API as JSON (store_rows), and typed rows for the domain
 * (a column table per row type), so no rule looks a field up by name.
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
#include "store_internal.h"



/* The two bisection queries (Q_BISECT_CANDIDATES, Q_BISECT_UNBISECTABLE)
 * read the same rows: confirmed, never flaky regressions of an rc with no
 * bisection yet, one per rc, target and kind (build or tests). Only the
 * job they name and what "tree" and "bad" say differ. A target that took
 * another's culprit and whose revert check failed (the culprit does not
 * explain its failure) counts as not bisected yet: it bisects on its own
 * (store_review.c, BISECT_REFOLLOW). */
#define BISECT_REGRESSION_COLS \
	"min(g.id) AS regression_id, r.id AS release_id, r.version," \
	" r.branch, g.target, g.test, j.id AS job_id, j.artifact_id"
#define BISECT_TESTS \
	"',' || group_concat(substr(g.test, instr(g.test, '.') + 1), ',')" \
	"  || ',' AS tests"
#define BISECT_REGRESSIONS \
	"occurrence o JOIN regression g ON g.id = o.regression_id" \
	" JOIN release r ON r.id = o.release_id"
#define BISECT_NOT_YET \
	"g.state = 'confirmed' AND o.flaky = 0 AND NOT EXISTS" \
	" (SELECT 1 FROM bisection b WHERE b.release_id = r.id" \
	"  AND b.target = g.target" \
	"  AND (b.test = 'build.kernel') = (g.test = 'build.kernel')" \
	"  AND NOT " BISECT_UNEXPLAINED("b") ")"
/* What job k (an SQL name) of a target took to build and boot: the
 * order in which an rc's targets lead its bisection, quickest first. */
#define JOB_COST(k) \
	"coalesce(" k ".build_seconds, 0) + coalesce(" k ".boot_seconds, 0)"
/* Within an rc, the target whose own jobs built and booted quickest
 * first: when several are confirmed at once, the first of them to start
 * leads (bisect.c), and the others follow its answer. */
#define BISECT_GROUP \
	"r.id, g.target, g.test = 'build.kernel' ORDER BY r.id," \
	" (SELECT min(" JOB_COST("k") ")" \
	"  FROM release_job k WHERE k.release_id = r.id AND k.target = g.target" \
	"  AND k.rerun_of IS NULL AND k.state = 'done'), g.target"

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
		" source_error, CASE WHEN message_id IS NULL THEN NULL"
		" ELSE mail_verified END AS announcement_verified,"
		" CASE WHEN message_id IS NULL THEN NULL"
		" ELSE coalesce(mail_dkim, 'not checked') END AS announcement_dkim"
		" FROM release WHERE version = ?",
	[Q_RELEASE_JOBS] =
		"SELECT j.id, j.target, j.suite, j.state, j.attempt, j.accel,"
		" j.error_kind, j.error, j.created, j.started, j.finished,"
		" j.boot_seconds, j.kernel_version, j.kernel_mismatch, j.rerun_of,"
		" a.kind, a.url, a.sha256, a.modules_url, a.modules_sha256,"
		" a.custom = 1 AS custom, a.patch_url, a.patch_sha256, a.git_ref,"
		" j.built_sha256, j.build_seconds, j.built_commit, j.build_step,"
		" j.build_done, j.build_total, j.host, j.compiler, j.git_describe"
		" FROM release_job j JOIN artifact a ON a.id = j.artifact_id"
		" WHERE j.release_id = ? ORDER BY j.id",
	[Q_JOB] =
		"SELECT j.id, r.version, j.target, j.suite, j.state, j.attempt,"
		" j.worker, j.accel, j.error_kind, j.error, j.created, j.started,"
		" j.finished, j.boot_seconds, j.kernel_version, j.kernel_mismatch,"
		" j.rerun_of," JOB_SRC_COLS ", j.built_sha256, j.build_seconds,"
		" j.built_commit, j.build_step, j.build_done, j.build_total,"
		" j.host, j.bisection_id, j.git_commit, j.only_tests, j.compiler,"
		" j.git_describe, j.revert_commit"
		" FROM job j JOIN release r ON r.id = j.release_id"
		" JOIN artifact a ON a.id = j.artifact_id" JOB_SRC_JOIN
		" WHERE j.id = ?",
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
		" mail_cc, analysed, announce_head, mail_verified, mail_dkim"
		" FROM release WHERE id = ?",
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
		" cb.culprit, cb.culprit_subject, cb.culprit_upstream,"
		" (SELECT r3.version FROM release r3 WHERE r3.id = cb.release_id)"
		"  AS culprit_in"
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
	/* Reported ones too while a job that ended with failures has
	 * neither a rerun nor a regression linked by it: its failures are
	 * rerun, and what a rerun confirms is bisected, before the last job
	 * ends. A rerun that confirmed links its failures with its own id
	 * (the newest failing job, Q_RELEASE_RUNS); a failure that is not
	 * rerun (the baseline's too) keeps the release here until it
	 * settles, as before its report. */
	[Q_RELEASES_PARTIAL] =
		"SELECT id, reported FROM (SELECT r.id, EXISTS (SELECT 1 FROM mail m"
		"  WHERE m.kind = 'report' AND m.release_id = r.id) AS reported"
		" FROM release r WHERE r.analysed IS NULL AND EXISTS"
		" (SELECT 1 FROM release_job j WHERE j.release_id = r.id AND"
		"  j.state = 'done') AND EXISTS"
		" (SELECT 1 FROM release_job j WHERE j.release_id = r.id AND j.state IN"
		"  " JOB_UNFINISHED_SQL ")) p"
		" WHERE NOT p.reported"
		" OR EXISTS (SELECT 1 FROM release_job j WHERE j.release_id = p.id"
		"  AND j.state = 'done' AND EXISTS (SELECT 1 FROM result x"
		"   WHERE x.job_id = j.id AND x.status = 'fail')"
		"  AND NOT EXISTS (SELECT 1 FROM job k WHERE k.release_id = p.id"
		"   AND k.rerun_of = j.id)"
		"  AND NOT EXISTS (SELECT 1 FROM occurrence o"
		"   WHERE o.release_id = p.id AND o.job_id = j.id))",
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
		"SELECT " BISECT_REGRESSION_COLS ", a.url AS tree,"
		" j.built_commit AS bad, " BISECT_TESTS
		" FROM " BISECT_REGRESSIONS
		" JOIN release_job j ON j.id = (SELECT max(k.id) FROM release_job k"
		"  JOIN artifact b ON b.id = k.artifact_id AND b.kind = 'git'"
		"  WHERE k.release_id = r.id AND k.target = g.target"
		"  AND k.built_commit IS NOT NULL)"
		" JOIN artifact a ON a.id = j.artifact_id"
		" WHERE " BISECT_NOT_YET
		" GROUP BY " BISECT_GROUP,
	/* Confirmed regressions of releases that cannot be bisected: no
	 * job of theirs on the target was built from git (CI posted the
	 * kernels, or rcgate built the tarball and patch). tree is the
	 * announcement's, and kind says what was tested instead. */
	[Q_BISECT_UNBISECTABLE] =
		"SELECT " BISECT_REGRESSION_COLS ","
		" coalesce(r.git_tree || ' ' || coalesce(r.git_branch, ''), '') AS tree,"
		" a.kind AS bad, " BISECT_TESTS
		" FROM " BISECT_REGRESSIONS
		" JOIN release_job j ON j.id = (SELECT max(k.id) FROM release_job k"
		"  WHERE k.release_id = r.id AND k.target = g.target)"
		" JOIN artifact a ON a.id = j.artifact_id"
		" WHERE NOT EXISTS"
		" (SELECT 1 FROM release_job k JOIN artifact b ON b.id = k.artifact_id"
		"  WHERE k.release_id = r.id AND k.target = g.target"
		"  AND b.kind = 'git') AND " BISECT_NOT_YET
		" GROUP BY " BISECT_GROUP,
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
		" WHERE j.bisection_id = ? AND j.revert_commit IS NULL"
		" ORDER BY j.id",
	[Q_BISECTION] =
		"SELECT b.id, b.regression_id, b.release_id, r.version, r.branch,"
		" b.target, b.test, b.tree, b.good, b.bad, b.state, b.culprit,"
		" b.culprit_subject, b.culprit_upstream, b.range_first,"
		" b.range_last, b.message, b.prereq_state, b.prerequisites,"
		" b.prereq_message, b.culprit_author, b.culprit_date, b.culprit_people,"
		" b.revert_state, b.revert_message, b.revert_job,"
		" length(b.commits) / 41 + (length(b.commits) % 41 > 0) AS commits,"
		/* the culprit's place in the range, 1 = the oldest */
		" CASE WHEN b.culprit IS NOT NULL AND instr(b.commits, b.culprit) > 0"
		"  THEN (instr(b.commits, b.culprit) - 1) / 41 + 1 END AS culprit_index,"
		" (SELECT count(*) FROM job j WHERE j.bisection_id = b.id"
		"  AND j.revert_commit IS NULL) AS steps,"
		/* the other rcs whose bisection named the same upstream
		 * commit, each once (an rc's targets each have a row) */
		" (SELECT group_concat(v, ', ') FROM (SELECT r2.version || ' ('"
		"  || r2.branch || ')' AS v"
		"  FROM bisection c JOIN release r2 ON r2.id = c.release_id"
		"  WHERE c.culprit_upstream = b.culprit_upstream"
		"  AND c.release_id != b.release_id AND c.state = 'found'"
		"  GROUP BY r2.id ORDER BY r2.id)) AS same_cause_in"
		" FROM bisection b JOIN release r ON r.id = b.release_id"
		" WHERE b.id = ?",
	/* Every bisection of the rc of bisection ?, oldest first: the
	 * follow-up waits for all of them and names a culprit once, with
	 * each target that bisected to it. */
	[Q_BISECTION_SIBLINGS] =
		"SELECT b.id, b.target, b.state, b.culprit, b.revert_state,"
		" b.revert_message, b.prereq_state, b.lead FROM bisection b"
		" WHERE b.release_id = (SELECT release_id FROM bisection"
		"  WHERE id = ?) ORDER BY b.id",
	/* The bisections of the rcs it occurs in, on its target, of its
	 * kind (build or tests), with the other regressions whose
	 * bisection named the same upstream commit. */
	[Q_REGRESSION_BISECTIONS] =
		"SELECT b.id, r.version, b.state, b.culprit, b.culprit_subject,"
		" b.culprit_upstream, b.range_first, b.range_last, b.message,"
		" b.prereq_state, b.prerequisites, b.prereq_message,"
		" b.revert_state, b.revert_message, b.revert_job, b.lead,"
		" (SELECT count(*) FROM job j WHERE j.bisection_id = b.id"
		"  AND j.revert_commit IS NULL) AS steps,"
		" (SELECT group_concat(j.id) FROM job j WHERE j.bisection_id = b.id"
		"  AND j.revert_commit IS NULL) AS jobs,"
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
	[Q_REVERT_PENDING] =
		"SELECT b.id, j.id AS job_id, r.version, b.test, b.culprit, j.state,"
		" j.error,"
		" (SELECT x.status FROM result x WHERE x.job_id = j.id"
		"  AND x.test = 'build.kernel') AS build,"
		" (SELECT x.diagnostic FROM result x WHERE x.job_id = j.id"
		"  AND x.test = 'build.kernel') AS build_sign,"
		/* as a step's: fail when any of the bisected tests fails */
		" (SELECT CASE WHEN sum(x.status = 'fail') > 0 THEN 'fail'"
		"  WHEN sum(x.status = 'pass') > 0 THEN 'pass' END"
		"  FROM result x WHERE x.job_id = j.id AND (x.test = b.test OR"
		"  instr(b.tests, ',' || substr(x.test, instr(x.test, '.') + 1)"
		"   || ',') > 0)) AS status,"
		" (SELECT group_concat(x.test, ', ') FROM result x"
		"  WHERE x.job_id = j.id AND x.status = 'fail') AS failing"
		" FROM bisection b JOIN release r ON r.id = b.release_id"
		" JOIN job j ON j.id = b.revert_job"
		" WHERE b.revert_state = 'pending' ORDER BY b.id",
	[Q_PREREQ_PENDING] =
		"SELECT b.id, r.version, b.tree, b.culprit, b.culprit_upstream, b.bad"
		" FROM bisection b JOIN release r ON r.id = b.release_id"
		" WHERE b.prereq_state = 'pending' ORDER BY b.id",
	/* A rerun of a failure of an rc built from git (bisect_seed.c), one
	 * that boots the kernel its job built (store_job_claim: no checkout,
	 * so it never waits for the worktree a copy reads): its tree is the
	 * rc job's (it reruns its artifact). */
	[Q_SEED_CANDIDATES] =
		"SELECT DISTINCT r.id AS release_id, r.version, k.target,"
		" a.url AS tree"
		" FROM release_job k JOIN release r ON r.id = k.release_id"
		" JOIN artifact a ON a.id = k.artifact_id AND a.kind = 'git'"
		" JOIN job o ON o.id = k.rerun_of AND o.state = 'done'"
		"  AND o.built_sha256 IS NOT NULL AND o.built_commit IS NOT NULL"
		" WHERE k.state IN " JOB_UNFINISHED_SQL " AND NOT EXISTS"
		" (SELECT 1 FROM bisection b JOIN release q ON q.id = b.release_id"
		"  WHERE b.state = 'running' AND b.target = k.target"
		"  AND q.branch = r.branch)"
		/* nor once another target of the rc leads its bisection:
		 * this one will only check the culprit (017-bisect-lead) */
		" AND NOT EXISTS (SELECT 1 FROM bisection b WHERE"
		"  b.release_id = r.id AND b.lead IS NULL"
		"  AND b.state IN ('running', 'found'))"
		/* the target that would lead first (BISECT_GROUP's order) */
		" ORDER BY r.id, " JOB_COST("o") ", k.target",
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
		" WHERE (m.regression_id = ?1 OR (m.kind = 'report' AND m.release_id"
		"  IN (SELECT o.release_id FROM occurrence o"
		"  WHERE o.regression_id = ?1 AND o.flaky = 0)))"
		" AND m.refused IS NULL ORDER BY m.id",
	[Q_RELEASE_LOST_COVERAGE] =
		"SELECT j.target, x.test, max(x.diagnostic) AS reason"
		" FROM result x JOIN release_job j ON j.id = x.job_id"
		" WHERE j.release_id = ?1 AND j.state = 'done'"
		" GROUP BY j.target, x.test"
		" HAVING sum(x.status = 'skip') > 0"
		"  AND sum(x.status IN ('pass','fail')) = 0"
		"  AND (SELECT sum(y.status = 'pass') > 0 AND sum(y.status = 'fail') = 0"
		"   FROM result y JOIN release_job k ON k.id = y.job_id"
		"   WHERE k.release_id = ?2 AND k.state = 'done'"
		"   AND k.target = j.target AND y.test = x.test)"
		" ORDER BY j.target, x.test",
};

/* ---- typed rows ---- */

void rowset_free(struct rowset *rs)
{
	if (rs == NULL)
		return;
	free(rs->v);
	json_decref(rs->backing);
	memset(rs, 0, sizeof(*rs));
}

long store_col_long(json_t *row, const char *key)
{
	return (long)json_integer_value(json_object_get(row, key));
}


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
	COL(row, analysed, 's'), COL(row, announce_head, 's'),
	COL(row, mail_verified, 'l'), COL(row, mail_dkim, 's'), { NULL, 0, 0 },
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
	COL(row, boot_seconds, 'd'), COL(row, rerun_of, 'i'), { NULL, 0, 0 },
};
#undef row
#define row regression_row
static const struct column regression_cols[] = {
	COL(row, id, 'i'), COL(row, test, 's'), COL(row, target, 's'),
	COL(row, state, 's'), COL(row, diagnostic, 's'), COL(row, also_in, 's'),
	COL(row, flaky, 'n'), COL(row, culprit, 's'),
	COL(row, culprit_subject, 's'), COL(row, culprit_in, 's'),
	{ NULL, 0, 0 },
};
#undef row
#define row gate_row
static const struct column gate_cols[] = {
	COL(row, jobs, 'n'), COL(row, unfinished, 'n'), COL(row, infra, 'n'),
	COL(row, blocking, 'n'), COL(row, deadline_passed, 'n'),
	COL(row, analysed, 's'), COL(row, released_as, 's'), { NULL, 0, 0 },
};
#undef row
#define row lost_coverage_row
static const struct column lost_coverage_cols[] = {
	COL(row, target, 's'), COL(row, test, 's'), COL(row, reason, 's'),
	{ NULL, 0, 0 },
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
#define row partial_row
static const struct column partial_cols[] = {
	COL(row, id, 'i'), COL(row, reported, 'n'), { NULL, 0, 0 },
};
#undef row
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
#define row seed_candidate
static const struct column seed_cols[] = {
	COL(row, release_id, 'i'), COL(row, version, 's'),
	COL(row, target, 's'), COL(row, tree, 's'), { NULL, 0, 0 },
};
#undef row
#define row bisect_step_row
static const struct column step_cols[] = {
	COL(row, id, 'i'), COL(row, git_commit, 's'), COL(row, state, 's'),
	COL(row, build, 's'), COL(row, status, 's'), { NULL, 0, 0 },
};
#undef row
#define row revert_todo
static const struct column revert_cols[] = {
	COL(row, id, 'i'), COL(row, job_id, 'i'), COL(row, version, 's'),
	COL(row, test, 's'), COL(row, culprit, 's'), COL(row, state, 's'),
	COL(row, error, 's'), COL(row, build, 's'), COL(row, build_sign, 's'),
	COL(row, status, 's'), COL(row, failing, 's'), { NULL, 0, 0 },
};
#undef row
#define row prereq_todo
static const struct column prereq_cols[] = {
	COL(row, id, 'i'), COL(row, version, 's'), COL(row, tree, 's'),
	COL(row, culprit, 's'), COL(row, culprit_upstream, 's'),
	COL(row, bad, 's'), { NULL, 0, 0 },
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

int store_release_lost_coverage(struct store *st, int64_t release_id,
				int64_t baseline_id, struct rowset *out,
				char *err, size_t errlen)
{
	return typed(st, out, sizeof(struct lost_coverage_row),
		     lost_coverage_cols, NULL, Q_RELEASE_LOST_COVERAGE, err,
		     errlen, "ii", release_id, baseline_id);
}

int store_releases_unanalysed(struct store *st, struct rowset *out, char *err,
			      size_t errlen)
{
	return typed(st, out, sizeof(int64_t), id_cols, NULL,
		     Q_RELEASES_UNANALYSED, err, errlen, "");
}

int store_releases_partial(struct store *st, struct rowset *out, char *err,
			   size_t errlen)
{
	return typed(st, out, sizeof(struct partial_row), partial_cols, NULL,
		     Q_RELEASES_PARTIAL, err, errlen, "");
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

int store_bisect_unbisectable(struct store *st, struct rowset *out,
			      char *err, size_t errlen)
{
	return typed(st, out, sizeof(struct bisect_candidate), bisect_candidate_cols,
		     NULL, Q_BISECT_UNBISECTABLE, err, errlen, "");
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

int store_revert_pending(struct store *st, struct rowset *out, char *err,
			 size_t errlen)
{
	return typed(st, out, sizeof(struct revert_todo), revert_cols, NULL,
		     Q_REVERT_PENDING, err, errlen, "");
}

int store_prereq_pending(struct store *st, struct rowset *out, char *err,
			 size_t errlen)
{
	return typed(st, out, sizeof(struct prereq_todo), prereq_cols, NULL,
		     Q_PREREQ_PENDING, err, errlen, "");
}

int store_seed_candidates(struct store *st, struct rowset *out, char *err,
			  size_t errlen)
{
	return typed(st, out, sizeof(struct seed_candidate), seed_cols, NULL,
		     Q_SEED_CANDIDATES, err, errlen, "");
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
	if (store_bind_args(stmt, types, ap) < 0) {
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

/* Steps stmt (bound) for one text column: 1 with buf set, 0 no row, -1. */
static int one_text(struct store *st, sqlite3_stmt *stmt, char *buf, size_t len,
		    const char *what, char *err, size_t errlen)
{
	int rc = sqlite3_step(stmt);

	if (rc == SQLITE_ROW) {
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(stmt, 0));
		rc = 1;
	} else if (rc == SQLITE_DONE) {
		rc = 0;
	} else {
		rc = store_fail(st, what, err, errlen);
	}
	sqlite3_finalize(stmt);
	return rc;
}

int store_series_patch_id(struct store *st, int64_t release_id, long number,
			  char *buf, size_t len, char *err, size_t errlen)
{
	sqlite3_stmt *stmt = store_prepare(st, "SELECT message_id FROM"
					   " series_patch WHERE release_id = ?"
					   " AND number = ?", err, errlen);

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, release_id);
	sqlite3_bind_int64(stmt, 2, number);
	return one_text(st, stmt, buf, len, "series patch", err, errlen);
}

int store_mail_id(struct store *st, const char *kind, int64_t release_id,
		  int64_t regression_id, int64_t about, char *buf, size_t len,
		  char *err, size_t errlen)
{
	/* about < 0: the first mail of the kind, whatever it is about. */
	sqlite3_stmt *stmt = store_prepare(st, "SELECT message_id FROM mail"
				     " WHERE kind = ?1 AND release_id = ?2"
				     " AND regression_id = ?3 AND (?4 < 0 OR"
				     " about = ?4) AND refused IS NULL"
				     " ORDER BY id LIMIT 1",
				     err, errlen);

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, release_id);
	sqlite3_bind_int64(stmt, 3, regression_id);
	sqlite3_bind_int64(stmt, 4, about);
	return one_text(st, stmt, buf, len, "mail", err, errlen);
}
