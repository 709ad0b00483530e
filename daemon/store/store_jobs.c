/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * store_jobs.c - releases and their jobs: creation, the claim, every
 * state change as a compare-and-set with its job_event row, results in
 * the transaction that moves a job to done, requeues and retries.
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


int store_rerun_count(struct store *st, int64_t id, const char *target,
		      char *err, size_t errlen)
{
	json_t *r = store_rows(st, Q_RERUN_COUNT, err, errlen, "is", id, target);
	int n = r != NULL ? (int)store_col_long(json_array_get(r, 0), "n") : -1;

	json_decref(r);
	return n;
}

int64_t store_release_id_of(struct store *st, const char *version)
{
	sqlite3_stmt *stmt = store_prepare(st, "SELECT id FROM release WHERE version = ?",
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
	sqlite3_stmt *stmt = store_prepare(st, sql, NULL, 0);
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
	if (store_begin(st, err, errlen) < 0)
		return -1;
	existing = store_release_id_of(st, version);
	if (existing < 0) {
		store_fail(st, "find release", err, errlen);
		goto fail;
	}
	if (existing > 0) {
		/* An announced rc gets its kernels later, once; anything else
		 * with this version is a duplicate. */
		if (count_of(st, "SELECT count(*) FROM artifact WHERE release_id = ?",
			     existing) != 0) {
			store_rollback(st);
			errf(err, errlen, "release %s exists", version);
			return -2;
		}
		*release_id = existing;
		if (baseline != NULL &&
		    store_run(st, "UPDATE release SET baseline = ? WHERE id = ?", err,
			errlen, "si", baseline, existing) < 0)
			goto fail;
	} else {
		if (store_run(st, "INSERT INTO release (version, branch, rc, patch,"
			    " baseline, created) VALUES (?, ?, ?, ?, ?, ?)", err,
			errlen, "ssllss", version, kv->branch, kv->rc, kv->patch,
			baseline, now) < 0)
			goto fail;
		*release_id = sqlite3_last_insert_rowid(st->db);
	}
	for (size_t i = 0; i < n; i++) {
		int64_t artifact_id, job_id;

		if (store_run(st, "INSERT INTO artifact (release_id, target, url,"
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
		if (store_run(st, "INSERT INTO job (release_id, artifact_id, target,"
			    " created) VALUES (?, ?, ?, ?)", err, errlen, "iiss",
			*release_id, artifact_id, arts[i].target, now) < 0)
			goto fail;
		job_id = sqlite3_last_insert_rowid(st->db);
		if (store_run(st, "INSERT INTO job_event (job_id, at, state, attempt,"
			    " message) VALUES (?, ?, 'queued', 1, 'submitted')",
			err, errlen, "is", job_id, now) < 0)
			goto fail;
	}
	if (store_commit(st, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	store_rollback(st);
	return -1;
}

void store_copy_col(char *dst, size_t len, sqlite3_stmt *stmt, int col)
{
	const char *s = (const char *)sqlite3_column_text(stmt, col);

	snprintf(dst, len, "%s", s != NULL ? s : "");
}

static int add_event(struct store *st, int64_t id, const char *state,
		     const char *message, char *err, size_t errlen)
{
	char now[32];

	now_iso8601(now);
	return store_run(st, "INSERT INTO job_event (job_id, at, state, attempt,"
		       " message) SELECT id, ?, ?, attempt, ? FROM job"
		       " WHERE id = ?", err, errlen, "sssi", now, state,
		   message, id);
}

int store_job_claim(struct store *st, const char *worker, struct job *out,
		    char *err, size_t errlen)
{
	return store_job_claim_kind(st, worker, CLAIM_ANY, out, err, errlen);
}

/* Whether a queued job of artifact kind is one a claimer of want takes.
 * A rerun that boots the image its job built (reboot) builds nothing:
 * any worker takes it, so a guest worker idle in a week of git builds
 * runs it at once instead of it waiting for one of the build workers
 * (the twelfth week round: a rerun queued at 3.0 minutes started at 5.4,
 * the three build workers all building). Should the image have left the
 * cache, the guest worker builds it again (prepare.c): rare, and correct. */
static int claim_wants(enum claim_kind want, const char *kind, int reboot,
		       int bisect)
{
	const struct artifact_kind *k = kind != NULL ? artifact_kind_find(kind)
						     : NULL;

	/* A step or revert check never waits for a review build's worker
	 * (sched.c BISECT_WORKERS), and those workers take nothing else. */
	if (want == CLAIM_BISECT)
		return bisect;
	if (want == CLAIM_ANY || reboot)
		return 1;
	return (k != NULL && k->built) == (want == CLAIM_BUILT);
}

/* The commit release job jb (of artifact art, both SQL names) was first
 * built from: the first built_commit a job of the same release, tree and
 * branch recorded, not a bisection step's nor a job's of a commit of its
 * own (buildjob.c builds it for every target and attempt); also: more
 * conditions on that job s. NULL when none has. */
#define RELEASE_COMMIT(jb, art, also) \
	"(SELECT s.built_commit FROM job s" \
	" JOIN artifact sa ON sa.id = s.artifact_id" \
	" WHERE s.release_id = " jb ".release_id AND sa.kind = 'git'" \
	" AND sa.url = " art ".url AND sa.git_ref IS " art ".git_ref" \
	" AND s.bisection_id IS NULL AND s.git_commit IS NULL" \
	" AND s.built_commit IS NOT NULL" also " ORDER BY s.id LIMIT 1)"

int store_job_claim_kind(struct store *st, const char *worker,
			 enum claim_kind want, struct job *out, char *err,
			 size_t errlen)
{
	sqlite3_stmt *stmt;
	char now[32];
	int rc;

	if (store_begin(st, err, errlen) < 0)
		return -1;
	stmt = store_prepare(st,
		"SELECT j.id, j.release_id, j.attempt, j.target, j.suite,"
		" r.version," JOB_SRC_COLS ", j.bisection_id, j.git_commit,"
		" j.only_tests, j.revert_commit, r.deadline, j.rerun_of,"
		" o.built_sha256, o.built_commit,"
		/* Every target of an rc, and every attempt, builds the
		 * commit it was first built from (buildjob.c), though its
		 * branch moves on. */
		" " RELEASE_COMMIT("j", "a", "")
		" FROM job j JOIN release r ON r.id = j.release_id"
		" JOIN artifact a ON a.id = j.artifact_id" JOB_SRC_JOIN
		/* A rerun boots the kernel the job it reruns built. */
		" LEFT JOIN job o ON o.id = j.rerun_of AND o.state = 'done'"
		"  AND o.built_sha256 IS NOT NULL AND o.built_commit IS NOT NULL"
		" WHERE j.state = 'queued'"
		/* The rc whose "Responses should be made by" is nearest goes
		 * first, its review jobs before its bisection steps (the
		 * first report before the bisection), and a step of an rc
		 * before the jobs of every rc due later: the culprit belongs
		 * in its rc's reply. Before all of them, the reruns of every
		 * rc with a deadline: a rerun boots a kernel already built,
		 * and it is what an rc's report and bisection wait for (the
		 * eleventh week round: three reruns queued behind another
		 * rc's first runs held the report back 4 to 8 minutes).
		 * Releases without a deadline (baselines, CI) after those
		 * with one, then in the same order, oldest first. The
		 * deadline is UTC ISO 8601, so text order is time order. */
		" ORDER BY r.deadline IS NULL, j.rerun_of IS NULL, r.deadline,"
		" j.bisection_id IS NOT NULL, j.id",
		err, errlen);
	if (stmt == NULL) {
		store_rollback(st);
		return -1;
	}
	/* The first in that order whose kind this claimer takes. */
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW &&
	       !claim_wants(want, (const char *)sqlite3_column_text(stmt, 8),
			    sqlite3_column_type(stmt, 21) != SQLITE_NULL,
			    sqlite3_column_type(stmt, 15) != SQLITE_NULL))
		;
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(stmt);
		store_rollback(st);
		if (rc == SQLITE_DONE)
			return 0;
		return store_fail(st, "claim", err, errlen);
	}
	memset(out, 0, sizeof(*out));
	out->id = sqlite3_column_int64(stmt, 0);
	out->release_id = sqlite3_column_int64(stmt, 1);
	out->attempt = sqlite3_column_int(stmt, 2);
	store_copy_col(out->target, sizeof(out->target), stmt, 3);
	store_copy_col(out->suite, sizeof(out->suite), stmt, 4);
	store_copy_col(out->version, sizeof(out->version), stmt, 5);
	store_copy_col(out->url, sizeof(out->url), stmt, 6);
	store_copy_col(out->sha256, sizeof(out->sha256), stmt, 7);
	store_copy_col(out->kind, sizeof(out->kind), stmt, 8);
	store_copy_col(out->modules_url, sizeof(out->modules_url), stmt, 9);
	out->custom = sqlite3_column_int(stmt, 11);
	store_copy_col(out->modules_sha256, sizeof(out->modules_sha256), stmt, 10);
	store_copy_col(out->patch_url, sizeof(out->patch_url), stmt, 12);
	store_copy_col(out->patch_sha256, sizeof(out->patch_sha256), stmt, 13);
	store_copy_col(out->git_ref, sizeof(out->git_ref), stmt, 14);
	out->bisection_id = sqlite3_column_int64(stmt, 15);
	store_copy_col(out->git_commit, sizeof(out->git_commit), stmt, 16);
	store_copy_col(out->only_tests, sizeof(out->only_tests), stmt, 17);
	store_copy_col(out->revert_commit, sizeof(out->revert_commit), stmt, 18);
	store_copy_col(out->deadline, sizeof(out->deadline), stmt, 19);
	out->rerun_of = sqlite3_column_int64(stmt, 20);
	store_copy_col(out->rerun_image, sizeof(out->rerun_image), stmt, 21);
	store_copy_col(out->rerun_commit, sizeof(out->rerun_commit), stmt, 22);
	store_copy_col(out->release_commit, sizeof(out->release_commit), stmt,
		       23);
	sqlite3_finalize(stmt);
	now_iso8601(now);
	if (store_run(st, "UPDATE job SET state = 'fetching', worker = ?,"
		    " started = ?, finished = NULL, error = NULL,"
		    " error_kind = NULL WHERE id = ?", err, errlen, "ssi",
		worker, now, out->id) < 0 ||
	    add_event(st, out->id, "fetching", worker, err, errlen) < 0 ||
	    store_commit(st, err, errlen) < 0) {
		store_rollback(st);
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
	if (store_begin(st, err, errlen) < 0)
		return -1;
	changed = from != NULL
		? store_run(st, sql, err, errlen, "ssis", to, final ? now : NULL, id, from)
		: store_run(st, sql, err, errlen, "ssi", to, final ? now : NULL, id);
	if (changed < 0)
		goto fail;
	if (changed > 0 && add_event(st, id, to, message, err, errlen) < 0)
		goto fail;
	if (store_commit(st, err, errlen) < 0)
		goto fail;
	return changed > 0;
fail:
	store_rollback(st);
	return -1;
}

int store_job_built(struct store *st, int64_t id, const char *sha256,
		    double seconds, char *err, size_t errlen)
{
	return store_run(st, "UPDATE job SET built_sha256 = ?, build_seconds = ?"
		   " WHERE id = ?", err, errlen, "sdi", sha256, seconds, id) < 0
		? -1 : 0;
}

int store_job_build_facts(struct store *st, int64_t id, const char *compiler,
			  const char *describe, char *err, size_t errlen)
{
	return store_run(st, "UPDATE job SET compiler = nullif(?, ''),"
		   " git_describe = nullif(?, '') WHERE id = ?", err, errlen,
		   "ssi", compiler, describe, id) < 0 ? -1 : 0;
}

int store_job_build_progress(struct store *st, int64_t id, const char *step,
			     long done, long total, const char *commit,
			     char *err, size_t errlen)
{
	return store_run(st, "UPDATE job SET build_step = ?, build_done = nullif(?, -1),"
		       " build_total = nullif(?, -1),"
		       " built_commit = coalesce(?, built_commit) WHERE id = ?",
		   err, errlen, "sllsi", step, done >= 0 ? done : -1,
		   total >= 0 ? total : -1, commit, id) < 0 ? -1 : 0;
}

int store_job_record_commit(struct store *st, int64_t id, const char *commit,
			    char out[41], char *err, size_t errlen)
{
	sqlite3_stmt *stmt;
	int rc = -1;

	out[0] = '\0';
	if (store_begin(st, err, errlen) < 0)
		return -1;
	/* The claim's release_commit, asked again now under the store's
	 * write lock: another job's, not this one's own earlier attempt (a
	 * pin of its that fetch_pinned refused). */
	if (store_run(st, "UPDATE job SET build_step = 'waiting', built_commit ="
		    " coalesce((SELECT " RELEASE_COMMIT("job", "ma",
						       " AND s.id != job.id")
		    "  FROM artifact ma WHERE ma.id = job.artifact_id"
		    "  AND job.bisection_id IS NULL AND job.git_commit IS NULL),"
		    " ?) WHERE id = ?", err, errlen, "si", commit, id) < 0)
		goto out;
	stmt = store_prepare(st, "SELECT built_commit FROM job WHERE id = ?",
			     err, errlen);
	if (stmt == NULL)
		goto out;
	sqlite3_bind_int64(stmt, 1, id);
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		store_copy_col(out, 41, stmt, 0);
		rc = 0;
	}
	sqlite3_finalize(stmt);
	if (rc == 0 && store_commit(st, err, errlen) < 0)
		return -1;
out:
	if (rc < 0)
		store_rollback(st);
	return rc;
}

int store_job_note(struct store *st, int64_t id, const char *accel,
		   const char *kernel_version, char *err, size_t errlen)
{
	return store_run(st, "UPDATE job SET accel = coalesce(?, accel),"
		       " kernel_version = coalesce(?, kernel_version)"
		       " WHERE id = ?", err, errlen, "ssi", accel,
		   kernel_version, id) < 0 ? -1 : 0;
}

int store_job_host(struct store *st, int64_t id, const char *host, char *err,
		   size_t errlen)
{
	return store_run(st, "UPDATE job SET host = ? WHERE id = ?", err, errlen,
		   "si", host, id) < 0 ? -1 : 0;
}

int store_job_mismatch(struct store *st, int64_t id, const char *message,
		       char *err, size_t errlen)
{
	return store_run(st, "UPDATE job SET kernel_mismatch = ? WHERE id = ?", err,
		   errlen, "si", message, id) < 0 ? -1 : 0;
}

int store_job_done(struct store *st, int64_t id, const struct result_row *rows,
		   size_t n, double boot_seconds, char *err, size_t errlen)
{
	sqlite3_stmt *ins;
	char now[32];
	int changed;

	if (store_begin(st, err, errlen) < 0)
		return -1;
	/* Results of an earlier attempt that died half-way never mix with
	 * these: one attempt's results are written whole or not at all. */
	if (store_run(st, "DELETE FROM result WHERE job_id = ?", err, errlen, "i",
		id) < 0)
		goto fail;
	ins = store_prepare(st, "INSERT INTO result (job_id, test, status, diagnostic,"
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
	changed = store_run(st, "UPDATE job SET state = 'done', finished = ?,"
			  " boot_seconds = round(?, 3) WHERE id = ?"
			  " AND state IN " JOB_ACTIVE_SQL, err, errlen, "sdi",
		      now, boot_seconds, id);
	if (changed < 0)
		goto fail;
	if (changed == 0) {
		/* Cancelled while the guest ran: keep it cancelled, drop results. */
		store_rollback(st);
		return 0;
	}
	if (add_event(st, id, "done", NULL, err, errlen) < 0 ||
	    store_commit(st, err, errlen) < 0)
		goto fail;
	return 1;
fail:
	store_rollback(st);
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
	if (store_begin(st, err, errlen) < 0)
		return -1;
	changed = store_run(st, "UPDATE job SET state = 'infra_error', finished = ?,"
			  " error_kind = ?, error = ? WHERE id = ? AND state IN"
			  " " JOB_ACTIVE_SQL, err, errlen,
		      "sssi", now, kind, message, id);
	if (changed < 0)
		goto fail;
	if (changed == 0) {
		store_rollback(st);
		return 0;
	}
	if (add_event(st, id, "infra_error", msg, err, errlen) < 0)
		goto fail;
	changed = store_run(st, "UPDATE job SET state = 'queued', attempt = attempt + 1,"
			  " finished = NULL WHERE id = ? AND attempt < ?", err,
		      errlen, "il", id, max_attempts);
	if (changed < 0)
		goto fail;
	if (changed > 0) {
		*requeued = 1;
		if (add_event(st, id, "queued", "automatic retry", err, errlen) < 0)
			goto fail;
	}
	if (store_commit(st, err, errlen) < 0)
		goto fail;
	return 1;
fail:
	store_rollback(st);
	return -1;
}

int store_requeue_unfinished(struct store *st, long max_attempts, int *count,
			     int *failed, char *err, size_t errlen)
{
	char now[32];
	int n, ended = 0;

	*count = *failed = 0;
	now_iso8601(now);
	if (store_begin(st, err, errlen) < 0)
		return -1;
	if (max_attempts > 0) {
		if (store_run(st, "INSERT INTO job_event (job_id, at, state, attempt,"
			    " message) SELECT id, ?, 'infra_error', attempt,"
			    " 'crash: the daemon stopped during this attempt, the"
			    " last one' FROM job WHERE state IN"
			    " " JOB_ACTIVE_SQL " AND attempt >= ?",
			err, errlen, "sl", now, max_attempts) < 0)
			goto fail;
		ended = store_run(st, "UPDATE job SET state = 'infra_error', finished = ?,"
			    " error_kind = 'crash', error = 'the daemon stopped"
			    " unexpectedly during every attempt (' || attempt ||"
			    "'); not retried' WHERE state IN"
			    " " JOB_ACTIVE_SQL " AND attempt >= ?",
			    err, errlen, "sl", now, max_attempts);
		if (ended < 0)
			goto fail;
	}
	if (store_run(st, "INSERT INTO job_event (job_id, at, state, attempt, message)"
		    " SELECT id, ?, 'queued', attempt + ?, ? FROM job WHERE state"
		    " IN " JOB_ACTIVE_SQL, err, errlen, "sls",
		now, max_attempts > 0 ? 1L : 0L, max_attempts > 0
		? "requeued after the daemon stopped unexpectedly"
		: "requeued after a clean stop") < 0)
		goto fail;
	n = store_run(st, "UPDATE job SET state = 'queued', worker = NULL,"
		    " attempt = attempt + ? WHERE state IN"
		    " " JOB_ACTIVE_SQL, err, errlen, "l",
		max_attempts > 0 ? 1L : 0L);
	if (n < 0 || store_commit(st, err, errlen) < 0)
		goto fail;
	*count = n;
	*failed = ended;
	return 0;
fail:
	store_rollback(st);
	return -1;
}

/* Cancels the unfinished jobs that match (a condition on job with one
 * "?": version when it is not NULL, else id) selects, message in each
 * one's events; how many, or -1. */
static int cancel_jobs(struct store *st, const char *match,
		       const char *version, int64_t id, const char *message,
		       char *err, size_t errlen)
{
	char now[32], ev[512], up[512];
	int n;

	now_iso8601(now);
	snprintf(ev, sizeof(ev), "INSERT INTO job_event (job_id, at, state,"
		 " attempt, message) SELECT id, ?, 'cancelled', attempt, ? FROM"
		 " job WHERE %s AND state IN " JOB_UNFINISHED_SQL, match);
	snprintf(up, sizeof(up), "UPDATE job SET state = 'cancelled', finished"
		 " = ? WHERE %s AND state IN " JOB_UNFINISHED_SQL, match);
	if (store_begin(st, err, errlen) < 0)
		return -1;
	if ((version != NULL
	     ? store_run(st, ev, err, errlen, "sss", now, message, version)
	     : store_run(st, ev, err, errlen, "ssi", now, message, id)) < 0)
		goto fail;
	n = version != NULL ? store_run(st, up, err, errlen, "ss", now, version)
			    : store_run(st, up, err, errlen, "si", now, id);
	if (n < 0 || store_commit(st, err, errlen) < 0)
		goto fail;
	return n;
fail:
	store_rollback(st);
	return -1;
}

int store_release_cancel(struct store *st, const char *version, int *count,
			 char *err, size_t errlen)
{
	int n = cancel_jobs(st, "release_id = (SELECT id FROM release WHERE"
			    " version = ?)", version, 0, "cancelled by request",
			    err, errlen);

	if (n < 0)
		return -1;
	*count = n;
	return 0;
}

int store_job_cancel(struct store *st, int64_t id, const char *message,
		     char *err, size_t errlen)
{
	int n = cancel_jobs(st, "id = ?", NULL, id, message, err, errlen);

	return n < 0 ? -1 : n > 0;
}

int store_job_state_get(struct store *st, int64_t id, char *state, size_t len)
{
	sqlite3_stmt *stmt = store_prepare(st, "SELECT state FROM job WHERE id = ?",
				     NULL, 0);
	int rc = -1;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, id);
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		store_copy_col(state, len, stmt, 0);
		rc = 0;
	}
	sqlite3_finalize(stmt);
	return rc;
}

int store_job_rerun(struct store *st, int64_t release_id, const char *target,
		    const char *only_tests, char *err, size_t errlen)
{
	char now[32];
	int64_t job_id;

	now_iso8601(now);
	if (store_begin(st, err, errlen) < 0)
		return -1;
	if (store_run(st, "INSERT INTO job (release_id, artifact_id, target, suite,"
		    " created, rerun_of, only_tests) SELECT release_id,"
		    " artifact_id, target, suite, ?, id, ? FROM release_job"
		    " WHERE release_id = ? AND target = ? AND rerun_of IS NULL"
		    " ORDER BY id LIMIT 1",
		err, errlen,
		"ssis", now, only_tests, release_id, target) <= 0)
		goto fail;
	job_id = sqlite3_last_insert_rowid(st->db);
	if (store_run(st, "INSERT INTO job_event (job_id, at, state, attempt, message)"
		    " VALUES (?, ?, 'queued', 1, 'rerun of a failure')", err,
		errlen, "is", job_id, now) < 0 ||
	    store_commit(st, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	store_rollback(st);
	return -1;
}

int store_job_retry(struct store *st, int64_t id, char *err, size_t errlen)
{
	int n;

	if (store_begin(st, err, errlen) < 0)
		return -1;
	n = store_run(st, "UPDATE job SET state = 'queued', attempt = attempt + 1,"
		    " finished = NULL, error = NULL, error_kind = NULL, worker = NULL"
		    " WHERE id = ? AND state IN " JOB_FINAL_SQL,
		err, errlen, "i", id);
	if (n < 0)
		goto fail;
	/* The previous attempt's results go: a retried job's results are its
	 * new attempt's, or none while it runs or if it is cancelled. */
	if (n > 0 && (store_run(st, "DELETE FROM result WHERE job_id = ?", err, errlen,
			  "i", id) < 0 ||
		      add_event(st, id, "queued", "retry requested", err, errlen) < 0 ||
		      store_run(st, "UPDATE release SET analysed = NULL WHERE id ="
			      " (SELECT release_id FROM job WHERE id = ?)", err,
			  errlen, "i", id) < 0))
		goto fail;
	if (store_commit(st, err, errlen) < 0)
		goto fail;
	return n > 0;
fail:
	store_rollback(st);
	return -1;
}
