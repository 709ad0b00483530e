/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for store.c on a real SQLite file: migrations, release
 * creation, the job state machine (claim, compare-and-set transitions,
 * retries on infra errors, requeue after a crash, cancellation), results
 * and tokens.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "base/base.h"
#include "store/store.h"
#include "testutil.h"
#include "store/store_migrations.h"

static const char *const sha =
	"4fdd0172a8c3f41a97e92465b2ac1867e1c10d82d7aeed3d26ee7a5d14df1754";

static void add_release(struct store *st, const char *version, size_t n)
{
	static const struct artifact_in arts[] = {
		{ "x86_64", "file:///k/amd64.deb", NULL, "deb", NULL, NULL, 0, NULL, NULL, NULL },
		{ "arm64", "http://127.0.0.1:1/arm64.deb", NULL, "deb", NULL, NULL, 0, NULL, NULL, NULL },
	};
	struct artifact_in in[2];
	struct kversion kv;
	int64_t id;
	char err[256];

	for (size_t i = 0; i < n; i++) {
		in[i] = arts[i];
		in[i].sha256 = sha;
	}
	assert_int_equal(kversion_parse(version, &kv, err, sizeof(err)), 0);
	assert_int_equal(store_release_create(st, version, &kv, NULL, in, n, &id, err,
					      sizeof(err)), 0);
}

/* SQL run on the store's file beside the store, as an operator's
 * sqlite3 would (rows the tests set up directly). */
static void raw_exec(const char *db, const char *sql)
{
	sqlite3 *raw;

	assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
	assert_int_equal(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
}

static void test_migrations(void **state)
{
	struct test_store *f = *state;
	char err[256];
	struct store *again;

	assert_true(store_schema_version(f->st) >= 1);
	/* Re-opening applies nothing and keeps the version. */
	again = store_open(f->db, err, sizeof(err));
	assert_non_null(again);
	assert_int_equal(store_schema_version(again), store_schema_version(f->st));
	store_close(again);
}

/* 010 makes the job table again (a new state in its CHECK): a store of
 * schema 9 with jobs, events, results and a regression pointing at them
 * keeps every row and link, its state counts, and takes 'building'. */
static void test_migration_rebuilds_job_table(void **state)
{
	struct test_store *f = *state;
	char db[300], err[256];
	struct store *st;
	sqlite3 *raw;
	json_t *rows;

	(void)f;
	snprintf(db, sizeof(db), "%s/old.db", f->dir);
	assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
	for (unsigned i = 0; i < migration_count && migrations[i].version <= 9; i++)
		assert_int_equal(sqlite3_exec(raw, migrations[i].sql, NULL, NULL,
					      NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(raw,
		"INSERT INTO release (id, version, branch, rc, created)"
		" VALUES (1, '6.1.64-rc1', '6.1', 1, 'x');"
		"INSERT INTO artifact (id, release_id, target, url, sha256)"
		" VALUES (1, 1, 'x86_64', 'file:///k', 'aa');"
		"INSERT INTO job (id, release_id, artifact_id, target, state, created,"
		" kernel_version, build_seconds) VALUES (7, 1, 1, 'x86_64', 'done', 'x',"
		" '6.1.64-rc1', 12.5);"
		"INSERT INTO job (id, release_id, artifact_id, target, state, created,"
		" rerun_of) VALUES (8, 1, 1, 'x86_64', 'queued', 'x', 7);"
		"INSERT INTO job_event (job_id, at, state, attempt) VALUES (7, 'x', 'done', 1);"
		"INSERT INTO result (job_id, test, status) VALUES (7, 'ext4.seq', 'fail');"
		"PRAGMA user_version = 9;", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);

	st = store_open(db, err, sizeof(err));
	assert_non_null(st);
	assert_true(store_schema_version(st) >= 10);
	rows = store_rows(st, Q_JOB, err, sizeof(err), "i", (int64_t)7);
	assert_int_equal(json_array_size(rows), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0),
		"kernel_version")), "6.1.64-rc1");
	assert_true(json_real_value(json_object_get(json_array_get(rows, 0),
		"build_seconds")) == 12.5);
	json_decref(rows);
	rows = store_rows(st, Q_JOB_RESULTS, err, sizeof(err), "i", (int64_t)7);
	assert_int_equal(json_array_size(rows), 1);
	json_decref(rows);
	rows = store_rows(st, Q_JOB, err, sizeof(err), "i", (int64_t)8);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(rows, 0),
		"rerun_of")), 7);
	json_decref(rows);
	/* The new state, and the triggers that count states, work. */
	assert_int_equal(store_job_transition(st, 8, "queued", JS_BUILDING, NULL,
					      err, sizeof(err)), 1);
	assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
	{
		sqlite3_stmt *q;

		assert_int_equal(sqlite3_prepare_v2(raw, "SELECT n FROM state_count"
			" WHERE tbl = 'job' AND state = 'building'", -1, &q, NULL),
			SQLITE_OK);
		assert_int_equal(sqlite3_step(q), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int(q, 0), 1);
		sqlite3_finalize(q);
	}
	sqlite3_close(raw);
	store_close(st);
}

/* A bisection's life in the store: a confirmed regression of a git rc is
 * a candidate once; steps are jobs that are not the rc's own; the answer
 * ends it. */
/* A confirmed regression of an rc whose kernels CI posted is no
 * bisection candidate, but it is listed as one that cannot be bisected
 * (bisect.c says why in the log and the API), once. */
static void test_unbisectable(void **state)
{
	struct test_store *f = *state;
	struct artifact_in a = { "x86_64", "https://ci.example/bzImage",
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"image", NULL, NULL, 0, NULL, NULL, NULL };
	const struct bisect_candidate *c;
	struct rowset rows;
	struct kversion kv;
	char err[256];
	int64_t rel, bid;

	assert_int_equal(kversion_parse("6.1.64-rc1", &kv, err, sizeof(err)), 0);
	assert_int_equal(store_release_create(f->st, "6.1.64-rc1", &kv, NULL, &a, 1,
					      &rel, err, sizeof(err)), 0);
	assert_int_equal(test_store_add_regression(f, 5, 1), 0);
	assert_int_equal(store_bisect_candidates(f->st, &rows, err, sizeof(err)), 0);
	assert_int_equal(rows.n, 0);
	rowset_free(&rows);
	assert_int_equal(store_bisect_unbisectable(f->st, &rows, err, sizeof(err)), 0);
	assert_int_equal(rows.n, 1);
	c = rows.v;
	assert_int_equal(c->regression_id, 5);
	assert_string_equal(c->tree, "");	/* no announcement names one */
	assert_string_equal(c->bad, "image");
	assert_int_equal(store_bisection_create(f->st, c, NULL, 0, NULL, "failed",
						"not bisected: why", &bid, err,
						sizeof(err)), 0);
	rowset_free(&rows);
	assert_int_equal(store_bisect_unbisectable(f->st, &rows, err, sizeof(err)), 0);
	assert_int_equal(rows.n, 0);
	rowset_free(&rows);
}

static void test_bisection_round_trip(void **state)
{
	struct test_store *f = *state;
	struct artifact_in a = { "x86_64", "git://127.0.0.1/linux.git", "", "git",
				 NULL, NULL, 0, NULL, NULL, "linux-6.1.y" };
	const char *bad = "c97d13d25d29b3b73348e209d928bb7b98c50fff";
	const struct bisect_candidate *c;
	const struct bisection_row *b;
	const struct bisect_step_row *s;
	struct rowset rows;
	struct kversion kv;
	char err[256], sql[512];
	int64_t rel, bid, b_job;
	json_t *jobs;

	assert_int_equal(kversion_parse("6.1.193-rc1", &kv, err, sizeof(err)), 0);
	assert_int_equal(store_release_create(f->st, "6.1.193-rc1", &kv, NULL, &a, 1,
					      &rel, err, sizeof(err)), 0);
	assert_int_equal(store_job_build_progress(f->st, 1, "done", 10, 10, bad,
						  err, sizeof(err)), 0);
	snprintf(sql, sizeof(sql),
		 "INSERT INTO regression (id, signature, test, target, fs, state,"
		 " first_seen, updated) VALUES (5, 's', 'ext4.write_seq_4096',"
		 " 'x86_64', 'ext4', 'confirmed', 'x', 'x'), (6, 't',"
		 " 'ext4.append_512', 'x86_64', 'ext4', 'confirmed', 'x', 'x');"
		 "INSERT INTO occurrence (regression_id, release_id, job_id, runs,"
		 " fails, seen) VALUES (5, %lld, 1, 2, 2, 'x'), (6, %lld, 1, 2, 2, 'x');",
		 (long long)rel, (long long)rel);
	raw_exec(f->db, sql);

	/* Built from git: not one that cannot be bisected. */
	assert_int_equal(store_bisect_unbisectable(f->st, &rows, err, sizeof(err)), 0);
	assert_int_equal(rows.n, 0);
	rowset_free(&rows);
	/* Both regressions: one candidate, judged by both tests. */
	assert_int_equal(store_bisect_candidates(f->st, &rows, err, sizeof(err)), 0);
	assert_int_equal(rows.n, 1);
	c = rows.v;
	assert_int_equal(c->regression_id, 5);
	assert_string_equal(c->bad, bad);
	assert_non_null(strstr(c->tests, ",write_seq_4096,"));
	assert_non_null(strstr(c->tests, ",append_512,"));
	assert_int_equal(store_bisection_create(f->st, c, "677341a7c35e42f60cb22f7eba28f3c42a76cc50",
						1, bad, "running", NULL, &bid, err,
						sizeof(err)), 0);
	rowset_free(&rows);
	assert_int_equal(store_bisect_candidates(f->st, &rows, err, sizeof(err)), 0);
	assert_int_equal(rows.n, 0);
	rowset_free(&rows);

	assert_int_equal(store_bisections_running(f->st, &rows, err, sizeof(err)), 0);
	assert_int_equal(rows.n, 1);
	b = rows.v;
	assert_int_equal(b->good_tested, 1);
	assert_string_equal(b->commits, bad);
	b_job = b->job_id;
	assert_int_equal(store_bisect_step_add(f->st, b->id, b->job_id, bad,
					       "write_seq_4096", NULL, err,
					       sizeof(err)), 0);
	rowset_free(&rows);
	assert_int_equal(store_bisect_steps(f->st, bid, &rows, err, sizeof(err)), 0);
	assert_int_equal(rows.n, 1);
	s = rows.v;
	assert_string_equal(s->state, "queued");
	assert_string_equal(s->git_commit, bad);
	assert_null(s->status);
	rowset_free(&rows);
	/* Not one of the rc's jobs. */
	jobs = store_rows(f->st, Q_RELEASE_JOBS, err, sizeof(err), "i", rel);
	assert_int_equal(json_array_size(jobs), 1);
	json_decref(jobs);
	assert_int_equal(store_bisection_finish(f->st, bid, "found", bad, "subject",
						"91562895f8030cb9a0470b1db49de79346a69f91",
						NULL, NULL, NULL, "pending", err,
						sizeof(err)), 0);
	assert_int_equal(store_bisections_running(f->st, &rows, err, sizeof(err)), 0);
	assert_int_equal(rows.n, 0);
	rowset_free(&rows);
	jobs = store_rows(f->st, Q_REGRESSION_BISECTIONS, err, sizeof(err), "i",
			  (int64_t)6);
	assert_int_equal(json_array_size(jobs), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(jobs, 0),
		"culprit")), bad);
	assert_string_equal(json_string_value(json_object_get(json_array_get(jobs, 0),
		"prereq_state")), "pending");
	assert_true(json_is_null(json_object_get(json_array_get(jobs, 0),
		"revert_state")));
	json_decref(jobs);
	/* The revert check: one more job, not a step; pending until its
	 * answer, which is kept once. */
	assert_int_equal(store_bisect_step_add(f->st, bid, b_job, bad,
					       "write_seq_4096", bad, err,
					       sizeof(err)), 0);
	assert_int_equal(store_bisect_steps(f->st, bid, &rows, err, sizeof(err)), 0);
	assert_int_equal(rows.n, 1);
	rowset_free(&rows);
	assert_int_equal(store_revert_pending(f->st, &rows, err, sizeof(err)), 0);
	assert_int_equal(rows.n, 1);
	{
		const struct revert_todo *t = rows.v;

		assert_int_equal(t->id, bid);
		assert_string_equal(t->state, "queued");
		assert_string_equal(t->culprit, bad);
		assert_null(t->status);
	}
	rowset_free(&rows);
	assert_int_equal(store_revert_finish(f->st, bid, "pass", "it passes", err,
					     sizeof(err)), 0);
	assert_int_equal(store_revert_finish(f->st, bid, "fail", "again", err,
					     sizeof(err)), 0);
	assert_int_equal(store_revert_pending(f->st, &rows, err, sizeof(err)), 0);
	assert_int_equal(rows.n, 0);
	rowset_free(&rows);
	jobs = store_rows(f->st, Q_REGRESSION_BISECTIONS, err, sizeof(err), "i",
			  (int64_t)6);
	assert_string_equal(json_string_value(json_object_get(json_array_get(jobs, 0),
		"revert_state")), "pass");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(jobs, 0),
		"steps")), 1);
	json_decref(jobs);
	/* The rc's regressions name their culprit (KCIDB's issue). */
	jobs = store_rows(f->st, Q_RELEASE_REGRESSIONS, err, sizeof(err), "i", rel);
	assert_int_equal(json_array_size(jobs), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(jobs, 1),
		"culprit")), bad);
	json_decref(jobs);
	/* The prerequisite search: pending once, its answer kept. */
	jobs = store_rows(f->st, Q_PREREQ_PENDING, err, sizeof(err), "");
	assert_int_equal(json_array_size(jobs), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(jobs, 0),
		"culprit_upstream")), "91562895f8030cb9a0470b1db49de79346a69f91");
	assert_string_equal(json_string_value(json_object_get(json_array_get(jobs, 0),
		"version")), "6.1.193-rc1");
	json_decref(jobs);
	assert_int_equal(store_prereq_finish(f->st, bid, "done", "[{\"commit\":\"x\"}]",
					     "1 listed", err, sizeof(err)), 0);
	/* only a pending search is answered */
	assert_int_equal(store_prereq_finish(f->st, bid, "failed", NULL, "late", err,
					     sizeof(err)), 0);
	jobs = store_rows(f->st, Q_PREREQ_PENDING, err, sizeof(err), "");
	assert_int_equal(json_array_size(jobs), 0);
	json_decref(jobs);
	jobs = store_rows(f->st, Q_BISECTION, err, sizeof(err), "i", bid);
	assert_string_equal(json_string_value(json_object_get(json_array_get(jobs, 0),
		"prereq_state")), "done");
	assert_string_equal(json_string_value(json_object_get(json_array_get(jobs, 0),
		"prereq_message")), "1 listed");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(jobs, 0),
		"commits")), 1);
	json_decref(jobs);
}

/* A follow-up names each other rc whose bisection found the same upstream
 * commit once, however many of its targets bisected or took it (the
 * seventeenth week round's mail said "6.1.193-rc1 (6.1), 6.1.193-rc1
 * (6.1)": its x86_64 and i386 rows); one without a culprit, or in the
 * same rc, is not named. */
static void test_same_cause_named_once(void **state)
{
	struct test_store *f = *state;
	const char *up = "3db397056783ec773fce4afb24afd4203be3ffb7";
	char sql[2048], err[256];
	json_t *rows;

	snprintf(sql, sizeof(sql),
		 "INSERT INTO release (id, version, branch, created) VALUES"
		 " (1, '6.1.193-rc1', '6.1', 'x'), (2, '6.6.64-rc2', '6.6', 'x'),"
		 " (3, '6.12.4-rc1', '6.12', 'x');"
		 "INSERT INTO bisection (id, regression_id, release_id, job_id,"
		 " target, test, tests, tree, good, bad, good_tested, commits,"
		 " state, culprit_upstream, created) VALUES"
		 " (1, 1, 1, 1, 'x86_64', 't', '-', 'g', 'a', 'b', 1, '', 'found',"
		 "  '%s', 'x'),"
		 " (2, 1, 1, 2, 'i386', 't', '-', 'g', 'a', 'b', 1, '', 'found',"
		 "  '%s', 'x'),"
		 " (3, 1, 3, 3, 'x86_64', 't', '-', 'g', 'a', 'b', 1, '', 'failed',"
		 "  '%s', 'x'),"
		 " (4, 2, 2, 4, 'x86_64', 't', '-', 'g', 'a', 'b', 1, '', 'found',"
		 "  '%s', 'x'),"
		 " (5, 2, 2, 5, 'i386', 't', '-', 'g', 'a', 'b', 1, '', 'found',"
		 "  '%s', 'x');", up, up, up, up, up);
	raw_exec(f->db, sql);
	rows = store_rows(f->st, Q_BISECTION, err, sizeof(err), "i", (int64_t)4);
	assert_non_null(rows);
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(rows, 0), "same_cause_in")), "6.1.193-rc1 (6.1)");
	json_decref(rows);
	/* Two rcs: each once, the older first. */
	raw_exec(f->db, "UPDATE bisection SET state = 'found' WHERE id = 3");
	rows = store_rows(f->st, Q_BISECTION, err, sizeof(err), "i", (int64_t)5);
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(rows, 0), "same_cause_in")),
		"6.1.193-rc1 (6.1), 6.12.4-rc1 (6.12)");
	json_decref(rows);
}

static void test_release_round_trip(void **state)
{
	struct test_store *f = *state;
	char err[256];
	json_t *rows, *jobs;
	struct kversion kv;
	int64_t id;
	struct artifact_in a = { "x86_64", "file:///x", sha, "deb", NULL, NULL, 0, NULL, NULL, NULL };

	add_release(f->st, "6.1.64-rc1", 2);
	rows = store_rows(f->st, Q_RELEASE, err, sizeof(err), "s", "6.1.64-rc1");
	assert_int_equal(json_array_size(rows), 1);
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(rows, 0), "branch")), "6.1");
	assert_int_equal(json_integer_value(json_object_get(
		json_array_get(rows, 0), "rc")), 1);
	jobs = store_rows(f->st, Q_RELEASE_JOBS, err, sizeof(err), "i",
			  json_integer_value(json_object_get(json_array_get(rows, 0),
							     "id")));
	assert_int_equal(json_array_size(jobs), 2);
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(jobs, 0), "state")), "queued");
	json_decref(rows);
	json_decref(jobs);
	/* The same version twice is refused and adds nothing. */
	kversion_parse("6.1.64-rc1", &kv, err, sizeof(err));
	assert_int_equal(store_release_create(f->st, "6.1.64-rc1", &kv, NULL, &a, 1,
					      &id, err, sizeof(err)), -2);
	rows = store_rows(f->st, Q_RELEASES, err, sizeof(err), "ssll", NULL, NULL,
			  10L, 0L);
	assert_int_equal(json_array_size(rows), 1);
	json_decref(rows);
}

/* A build worker takes only the jobs rcgated builds, a guest worker only
 * the others, each in the claim order; any claimer takes either. */
static void test_claim_kind(void **state)
{
	struct test_store *f = *state;
	struct artifact_in in[2] = {
		{ "x86_64", "https://cdn.kernel.org/pub/linux/kernel/v6.x/linux-6.1.tar.xz",
		  sha, "source", NULL, NULL, 0, NULL, NULL, NULL },
		{ "arm64", "file:///k/arm64.deb", sha, "deb", NULL, NULL, 0, NULL,
		  NULL, NULL },
	};
	struct kversion kv;
	struct job job;
	int64_t id;
	char err[256];

	assert_int_equal(kversion_parse("6.1.66", &kv, err, sizeof(err)), 0);
	assert_int_equal(store_release_create(f->st, "6.1.66", &kv, NULL, in, 2,
					      &id, err, sizeof(err)), 0);
	assert_int_equal(store_job_claim_kind(f->st, "g0", CLAIM_POSTED, &job,
					      err, sizeof(err)), 1);
	assert_string_equal(job.kind, "deb");
	assert_int_equal(store_job_claim_kind(f->st, "g1", CLAIM_POSTED, &job,
					      err, sizeof(err)), 0);
	assert_int_equal(store_job_claim_kind(f->st, "b0", CLAIM_BUILT, &job,
					      err, sizeof(err)), 1);
	assert_string_equal(job.kind, "source");
	assert_int_equal(store_job_claim_kind(f->st, "b1", CLAIM_BUILT, &job,
					      err, sizeof(err)), 0);
	add_release(f->st, "6.1.67", 1);
	assert_int_equal(store_job_claim_kind(f->st, "b1", CLAIM_BUILT, &job,
					      err, sizeof(err)), 0);
	assert_int_equal(store_job_claim(f->st, "w0", &job, err, sizeof(err)), 1);
	assert_string_equal(job.version, "6.1.67");
}

static void test_job_lifecycle(void **state)
{
	struct test_store *f = *state;
	char err[256], st[32];
	struct job job;
	struct result_row rows[] = {
		{ "ext4.write_seq_512", "fail", "buffer wrong at 0 have 62 expected 61", 41, 1 },
		{ "ext4.pwritev_seq_512", "pass", NULL, 0, 0 },
	};
	json_t *res;

	add_release(f->st, "6.1.64-rc1", 1);
	assert_int_equal(store_job_claim(f->st, "w0", &job, err, sizeof(err)), 1);
	assert_string_equal(job.target, "x86_64");
	assert_string_equal(job.version, "6.1.64-rc1");
	assert_string_equal(job.sha256, sha);
	assert_int_equal(job.attempt, 1);
	/* Nothing else is queued. */
	{
		struct job other;

		assert_int_equal(store_job_claim(f->st, "w1", &other, err,
						 sizeof(err)), 0);
	}
	/* A transition from the wrong state does nothing. */
	assert_int_equal(store_job_transition(f->st, job.id, "booting", "running",
					      NULL, err, sizeof(err)), 0);
	assert_int_equal(store_job_transition(f->st, job.id, "fetching", "booting",
					      NULL, err, sizeof(err)), 1);
	assert_int_equal(store_job_transition(f->st, job.id, "booting", "running",
					      NULL, err, sizeof(err)), 1);
	assert_int_equal(store_job_done(f->st, job.id, rows, 2, 3.25, err,
					sizeof(err)), 1);
	assert_int_equal(store_job_state_get(f->st, job.id, st, sizeof(st)), 0);
	assert_string_equal(st, "done");
	res = store_rows(f->st, Q_JOB_RESULTS, err, sizeof(err), "i", job.id);
	assert_int_equal(json_array_size(res), 2);
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(res, 0), "diagnostic")),
		"buffer wrong at 0 have 62 expected 61");
	assert_true(json_is_null(json_object_get(json_array_get(res, 1),
						 "diagnostic")));
	/* A timed result keeps its duration; an untimed one has none. */
	assert_int_equal(json_integer_value(json_object_get(
		json_array_get(res, 0), "duration_ms")), 41);
	assert_true(json_is_null(json_object_get(json_array_get(res, 1),
						 "duration_ms")));
	json_decref(res);
	res = store_rows(f->st, Q_JOB_EVENTS, err, sizeof(err), "i", job.id);
	/* queued, fetching, booting, running, done */
	assert_int_equal(json_array_size(res), 5);
	json_decref(res);
}

static void test_infra_retry(void **state)
{
	struct test_store *f = *state;
	char err[256], st[32];
	struct job job;
	int requeued;

	add_release(f->st, "6.1.65-rc1", 1);
	assert_int_equal(store_job_claim(f->st, "w0", &job, err, sizeof(err)), 1);
	assert_int_equal(store_job_infra(f->st, job.id, "boot_timeout", "no output",
					 2, &requeued, err, sizeof(err)), 1);
	assert_int_equal(requeued, 1);
	assert_int_equal(store_job_claim(f->st, "w0", &job, err, sizeof(err)), 1);
	assert_int_equal(job.attempt, 2);
	assert_int_equal(store_job_infra(f->st, job.id, "boot_timeout", "no output",
					 2, &requeued, err, sizeof(err)), 1);
	assert_int_equal(requeued, 0);
	assert_int_equal(store_job_state_get(f->st, job.id, st, sizeof(st)), 0);
	assert_string_equal(st, "infra_error");
	/* An infra error never leaves results behind. */
	{
		json_t *res = store_rows(f->st, Q_JOB_RESULTS, err, sizeof(err),
					 "i", job.id);

		assert_int_equal(json_array_size(res), 0);
		json_decref(res);
	}
}

static void test_requeue_and_cancel(void **state)
{
	struct test_store *f = *state;
	char err[256], st[32];
	struct job a, b;
	int n, failed;
	struct result_row row = { "ext4.x", "pass", NULL, 0, 0 };

	add_release(f->st, "5.15.140-rc1", 2);
	assert_int_equal(store_job_claim(f->st, "w0", &a, err, sizeof(err)), 1);
	assert_int_equal(store_job_claim(f->st, "w1", &b, err, sizeof(err)), 1);
	store_job_transition(f->st, a.id, "fetching", "booting", NULL, err,
			     sizeof(err));
	/* The daemon dies here: both come back queued, as their next attempt. */
	assert_int_equal(store_requeue_unfinished(f->st, 3, &n, &failed, err,
						  sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(failed, 0);
	assert_int_equal(store_job_state_get(f->st, a.id, st, sizeof(st)), 0);
	assert_string_equal(st, "queued");
	/* Cancel while one runs: the worker's results are dropped. */
	assert_int_equal(store_job_claim(f->st, "w0", &a, err, sizeof(err)), 1);
	store_job_transition(f->st, a.id, "fetching", "booting", NULL, err, sizeof(err));
	store_job_transition(f->st, a.id, "booting", "running", NULL, err, sizeof(err));
	assert_int_equal(store_release_cancel(f->st, "5.15.140-rc1", &n, err,
					      sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(store_job_done(f->st, a.id, &row, 1, 1.0, err,
					sizeof(err)), 0);
	assert_int_equal(store_job_state_get(f->st, a.id, st, sizeof(st)), 0);
	assert_string_equal(st, "cancelled");
	assert_int_equal(store_job_claim(f->st, "w0", &b, err, sizeof(err)), 0);
}

/* Attempts across stops: a clean stop requeues the same attempt, a crash
 * the next one, and a job that crashed the daemon on every attempt ends. */
static void test_requeue_attempts(void **state)
{
	struct test_store *f = *state;
	char err[256], st[32];
	struct job a;
	int n, failed;

	add_release(f->st, "6.1.64-rc1", 1);
	assert_int_equal(store_job_claim(f->st, "w0", &a, err, sizeof(err)), 1);
	assert_int_equal(a.attempt, 1);
	assert_int_equal(store_requeue_unfinished(f->st, 0, &n, &failed, err,
						  sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_job_claim(f->st, "w0", &a, err, sizeof(err)), 1);
	assert_int_equal(a.attempt, 1);
	assert_int_equal(store_requeue_unfinished(f->st, 2, &n, &failed, err,
						  sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(failed, 0);
	assert_int_equal(store_job_claim(f->st, "w0", &a, err, sizeof(err)), 1);
	assert_int_equal(a.attempt, 2);
	assert_int_equal(store_requeue_unfinished(f->st, 2, &n, &failed, err,
						  sizeof(err)), 0);
	assert_int_equal(n, 0);
	assert_int_equal(failed, 1);
	assert_int_equal(store_job_state_get(f->st, a.id, st, sizeof(st)), 0);
	assert_string_equal(st, "infra_error");
	assert_int_equal(store_job_claim(f->st, "w0", &a, err, sizeof(err)), 0);
}

static void test_tokens(void **state)
{
	struct test_store *f = *state;
	char err[256];

	assert_int_equal(store_token_add(f->st, "ci", "aa", "write", err,
					 sizeof(err)), 0);
	assert_int_equal(store_token_add(f->st, "ro", "bb", "read", err,
					 sizeof(err)), 0);
	assert_int_equal(store_token_check(f->st, "aa", "write"), AUTH_OK);
	/* A known token with too small a scope is told apart (403, not 401). */
	assert_int_equal(store_token_check(f->st, "bb", "write"), AUTH_SCOPE);
	assert_int_equal(store_token_check(f->st, "aa", "admin"), AUTH_SCOPE);
	assert_int_equal(store_token_check(f->st, "cc", "write"), AUTH_INVALID);
	/* Hashes are unique. */
	assert_int_equal(store_token_add(f->st, "dup", "aa", "write", err,
					 sizeof(err)), -1);
}

/* SQL on the database file behind the store's back. */
static void sql_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

static void test_newer_schema_refused(void **state)
{
	struct test_store *f = *state;
	char err[256];
	struct store *st;
	json_t *rows;

	(void)rows;
	store_close(f->st);
	/* Simulate a database written by a future rcgated. */
	sql_exec(f->db, "PRAGMA user_version = 999;");
	st = store_open(f->db, err, sizeof(err));
	assert_null(st);
	assert_non_null(strstr(err, "newer than this rcgated"));
	f->st = NULL;
}

/* An empty or damaged database is refused at start, never replaced. */
static void test_check_refuses_damage(void **state)
{
	struct test_store *f = *state;
	char err[256], path[160];
	FILE *fp;
	long size;

	assert_int_equal(store_check(f->db, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/missing.db", f->dir);
	assert_int_equal(store_check(path, err, sizeof(err)), 0);
	/* Zero bytes: SQLite would take it for a new database. */
	snprintf(path, sizeof(path), "%s/empty.db", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fclose(fp);
	assert_int_equal(store_check(path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "empty (0 bytes)"));
	/* Pages overwritten in the middle of the file. */
	for (int i = 1; i <= 60; i++) {
		char v[32];

		snprintf(v, sizeof(v), "6.1.%d-rc1", i);
		add_release(f->st, v, 2);
	}
	store_close(f->st);
	f->st = NULL;
	sql_exec(f->db, "PRAGMA wal_checkpoint(TRUNCATE);");
	fp = fopen(f->db, "r+");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	size = ftell(fp);
	assert_true(size >= 4 * 4096);
	fseek(fp, 4096, SEEK_SET);
	for (int i = 0; i < 2 * 4096; i++)
		fputc(0x5a, fp);
	fclose(fp);
	assert_int_equal(store_check(f->db, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "restore a backup"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_migrations, test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_migration_rebuilds_job_table,
						test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_unbisectable, test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_bisection_round_trip,
						test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_same_cause_named_once,
						test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_release_round_trip, test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_claim_kind, test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_job_lifecycle, test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_infra_retry, test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_requeue_attempts, test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_requeue_and_cancel, test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_tokens, test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema_refused, test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_check_refuses_damage, test_store_setup, test_store_teardown),
	};
	return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
