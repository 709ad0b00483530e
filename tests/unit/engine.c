/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/engine.c against a real SQLite store, no guests:
 * jobs are finished with the store's own write functions, exactly as
 * workers finish them, and engine_run_once() decides. Covered: a failure
 * on an rc whose baseline passed is rerun first, then becomes one
 * regression linked to every affected rc on every branch; a failure that
 * does not reproduce is flaky and does not block; a failure the baseline
 * shares is not a regression; a later release that passes fixes it on its
 * branch only; a release whose jobs all ended before a "crash" is still
 * analysed (the same loop); the gate follows. A test the rc only skipped
 * that the baseline passed is lost coverage: a reason of the gate, a
 * section of the report, never a regression and never hidden.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "base/base.h"
#include "store/store.h"
#include "review/review.h"
#include "testutil.h"
#include "testutil_store.h"

#define fixture test_engine

static int setup(void **state)
{
	*state = test_engine_new("http://rcgate.test");
	return *state == NULL ? -1 : 0;
}

/* 008-state-counts.sql's triggers agree with counting the rows: what
 * /metrics reads is what a scan would say, after every scenario here
 * (inserts, transitions, reruns, regressions confirmed and fixed). */
static void assert_state_counts(const char *db)
{
	static const char *const sql =
		"SELECT (SELECT count(*) FROM (SELECT 'job' AS t, state, count(*) AS n"
		" FROM job GROUP BY state UNION ALL SELECT 'regression', state,"
		" count(*) FROM regression GROUP BY state UNION ALL SELECT"
		" 'outbox', state, count(*) FROM outbox GROUP BY state EXCEPT"
		" SELECT tbl, state, n FROM state_count WHERE n > 0))"
		" + (SELECT count(*) FROM (SELECT tbl, state, n FROM state_count"
		" WHERE n != 0 EXCEPT SELECT 'job', state, count(*) FROM job"
		" GROUP BY state EXCEPT SELECT 'regression', state, count(*)"
		" FROM regression GROUP BY state EXCEPT SELECT 'outbox', state,"
		" count(*) FROM outbox GROUP BY state))";
	sqlite3 *h;
	sqlite3_stmt *stmt;

	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &stmt, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(stmt, 0), 0);
	sqlite3_finalize(stmt);
	sqlite3_close(h);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	assert_state_counts(f->db);
	test_engine_free(f);
	return 0;
}

/* Finishes the next job (of want_version) with one result for the test
 * ext4.write_seq_512, pass or fail, and ext4.pwrite_seq_512 passing. */
static void finish_next(struct fixture *f, const char *status,
			const char *want_version)
{
	struct result_row rows[] = {
		{ "ext4.write_seq_512", status,
		  strcmp(status, "fail") == 0
			  ? "write 2 of 8 (512 bytes): position 512, expected 1024"
			  : NULL, 0, 0 },
		{ "ext4.pwrite_seq_512", "pass", NULL, 0, 0 },
	};

	test_engine_finish_next(f, want_version, rows, 2);
}

#define add_release test_engine_add_release
#define run_once test_engine_run
#define finish_rows test_engine_finish_next

static const char *gate_of(struct fixture *f, const char *version)
{
	static char verdict[16];
	char err[256];
	json_t *rel = store_rows(f->st, Q_RELEASE, err, sizeof(err), "s", version);
	struct gate_result g;

	assert_int_equal(engine_gate_eval(f->st, json_integer_value(json_object_get(
		json_array_get(rel, 0), "id")), &g, err, sizeof(err)), 1);
	snprintf(verdict, sizeof(verdict), "%s", regress_gate_name(g.verdict));
	/* A blocked release says why, one reason per regression. */
	if (g.verdict == GATE_BLOCK)
		assert_true(g.nreasons >= 1 && strstr(g.reasons[0], "fails on x86_64"));
	gate_result_free(&g);
	json_decref(rel);
	return verdict;
}

/* The regressions as "id test state occurrences" lines. */
static json_t *regressions(struct fixture *f)
{
	char err[256];
	json_t *r = store_rows(f->st, Q_REGRESSIONS, err, sizeof(err), "sslls",
			       NULL, NULL, 50L, 0L, NULL);

	assert_non_null(r);
	return r;
}

static void test_rerun_then_one_regression_across_branches(void **state)
{
	struct fixture *f = *state;
	json_t *regs, *occ;
	char err[256];
	int64_t rid;

	/* Baselines pass on both branches. */
	add_release(f, "6.1.63");
	finish_next(f, "pass", "6.1.63");
	add_release(f, "5.15.139");
	finish_next(f, "pass", "5.15.139");
	assert_int_equal(run_once(f), 2);
	assert_string_equal(gate_of(f, "6.1.63"), "pass");

	/* 6.1.64-rc1 fails: not decided yet, a rerun is queued first. */
	add_release(f, "6.1.64-rc1");
	finish_next(f, "fail", "6.1.64-rc1");
	assert_int_equal(run_once(f), 1);
	assert_int_equal(f->kicks, 1);
	regs = regressions(f);
	assert_int_equal(json_array_size(regs), 0);
	json_decref(regs);
	assert_string_equal(gate_of(f, "6.1.64-rc1"), "pending");
	/* The rerun fails too: a regression, the gate blocks. */
	finish_next(f, "fail", "6.1.64-rc1");
	assert_int_equal(run_once(f), 1);
	assert_string_equal(gate_of(f, "6.1.64-rc1"), "block");
	regs = regressions(f);
	assert_int_equal(json_array_size(regs), 1);
	rid = json_integer_value(json_object_get(json_array_get(regs, 0), "id"));
	json_decref(regs);

	/* The same failure on 5.15.140-rc1 is the same regression. */
	add_release(f, "5.15.140-rc1");
	finish_next(f, "fail", "5.15.140-rc1");
	run_once(f);
	finish_next(f, "fail", "5.15.140-rc1");
	run_once(f);
	regs = regressions(f);
	assert_int_equal(json_array_size(regs), 1);
	json_decref(regs);
	occ = store_rows(f->st, Q_REGRESSION_OCCURRENCES, err, sizeof(err), "i", rid);
	assert_int_equal(json_array_size(occ), 2);
	json_decref(occ);
	assert_string_equal(gate_of(f, "5.15.140-rc1"), "block");

	/* 6.1.66-rc1 passes: fixed on 6.1, still open on 5.15. */
	add_release(f, "6.1.66-rc1");
	finish_next(f, "pass", "6.1.66-rc1");
	assert_int_equal(run_once(f), 1);
	assert_string_equal(gate_of(f, "6.1.66-rc1"), "pass");
	occ = store_rows(f->st, Q_REGRESSION_BRANCHES, err, sizeof(err), "i", rid);
	assert_non_null(occ);
	{
		size_t i;
		json_t *b;
		int fixed_61 = 0, open_515 = 0;

		json_array_foreach(occ, i, b) {
			const char *br = json_string_value(json_object_get(b, "branch"));
			const char *s = json_string_value(json_object_get(b, "state"));

			fixed_61 |= strcmp(br, "6.1") == 0 && strcmp(s, "fixed") == 0;
			open_515 |= strcmp(br, "5.15") == 0 && strcmp(s, "open") == 0;
		}
		assert_true(fixed_61 && open_515);
	}
	json_decref(occ);
	/* Nothing is left to analyse: another pass does nothing. */
	assert_int_equal(run_once(f), 0);
}

static void test_flaky_and_known_failures_do_not_block(void **state)
{
	struct fixture *f = *state;
	json_t *regs;

	/* Fails, then passes on the rerun: flaky, shown, not blocking. */
	add_release(f, "6.1.63");
	finish_next(f, "pass", "6.1.63");
	run_once(f);
	add_release(f, "6.1.64-rc1");
	finish_next(f, "fail", "6.1.64-rc1");
	run_once(f);
	finish_next(f, "pass", "6.1.64-rc1");
	run_once(f);
	assert_string_equal(gate_of(f, "6.1.64-rc1"), "pass");
	{
		/* It is shown on the release, marked flaky. */
		char err[256];
		json_t *rel = store_rows(f->st, Q_RELEASE, err, sizeof(err), "s",
					 "6.1.64-rc1");

		regs = store_rows(f->st, Q_RELEASE_REGRESSIONS, err, sizeof(err), "i",
				  (int64_t)json_integer_value(json_object_get(
					  json_array_get(rel, 0), "id")));
		assert_int_equal(json_array_size(regs), 1);
		assert_int_equal(json_integer_value(json_object_get(
			json_array_get(regs, 0), "flaky")), 1);
		json_decref(regs);
		json_decref(rel);
	}

	/* The baseline fails the same way: a known failure, no regression. */
	add_release(f, "5.10.201");
	finish_next(f, "fail", "5.10.201");
	run_once(f);
	finish_next(f, "fail", "5.10.201");
	run_once(f);
	add_release(f, "5.10.202-rc1");
	finish_next(f, "fail", "5.10.202-rc1");
	assert_int_equal(run_once(f), 1);
	{
		/* Decided at once: no rerun is queued, nothing blocks. */
		struct job none;
		char err[256];

		assert_int_equal(store_job_claim(f->st, "w0", &none, err,
						 sizeof(err)), 0);
	}
	assert_string_equal(gate_of(f, "5.10.202-rc1"), "pass");
}

/* version's job ends with rows[n], the engine queues its rerun, and the
 * rerun ends with rerun[nrerun]: what the rerun was told to run. */
static const char *rerun_only(struct fixture *f, const char *version,
			      const struct result_row *rows, size_t n,
			      const struct result_row *rerun, size_t nrerun)
{
	static char only[sizeof(((struct job *)0)->only_tests)];
	struct job job;

	add_release(f, version);
	finish_rows(f, version, rows, n);
	assert_int_equal(run_once(f), 1);
	test_engine_finish_job(f, version, rerun, nrerun, &job);
	assert_int_not_equal(job.rerun_of, 0);
	snprintf(only, sizeof(only), "%s", job.only_tests);
	run_once(f);
	return only;
}

/* The rerun that confirms failures runs only the tests that failed, by
 * the agent's names (a name runs on every filesystem), not the whole
 * suite again; the rules count its runs as before: the failures it
 * repeats are regressions, a name's passing run on another filesystem is
 * a pass. A failed build or crash test reruns the whole suite, crash
 * boots included, as the job ran it. */
static void test_rerun_runs_only_the_failures(void **state)
{
	struct fixture *f = *state;
	static const struct result_row base[] = {
		{ "ext4.write_seq_512", "pass", NULL, 0, 0 },
		{ "xfs.write_seq_512", "pass", NULL, 0, 0 },
		{ "ext4.pread_seq", "pass", NULL, 0, 0 },
		{ "xfs.pread_seq", "pass", NULL, 0, 0 },
		{ "ext4.crash_odsync_extend", "pass", NULL, 0, 0 },
		{ "ext4.aio_rw", "pass", NULL, 0, 0 },
	};
	struct result_row rc[6];
	json_t *regs;

	add_release(f, "6.1.63");
	finish_rows(f, "6.1.63", base, 6);
	run_once(f);
	memcpy(rc, base, sizeof(rc));
	rc[0].status = rc[1].status = rc[2].status = "fail";
	rc[0].diagnostic = rc[1].diagnostic = "position 512, expected 1024";
	rc[2].diagnostic = "short read";
	/* It repeats them (xfs.pread_seq, which passed, runs again too). */
	assert_string_equal(rerun_only(f, "6.1.64-rc1", rc, 6, rc, 4),
			    "pread_seq,write_seq_512");
	assert_string_equal(gate_of(f, "6.1.64-rc1"), "block");
	regs = regressions(f);
	assert_int_equal(json_array_size(regs), 3);
	json_decref(regs);

	/* A crash test failed: the rerun is the whole suite. */
	memcpy(rc, base, sizeof(rc));
	rc[4].status = rc[0].status = "fail";
	assert_string_equal(rerun_only(f, "6.1.65-rc1", rc, 6, base, 6), "");
	/* So is a failed build's. */
	rc[0] = (struct result_row){ "build.kernel", "fail", "error: x", 0, 0 };
	assert_string_equal(rerun_only(f, "6.1.66-rc1", rc, 1, rc, 1), "");
}

/* Jobs that all ended while no engine ran (a crash right after the last
 * one, or a cancel of queued jobs) are analysed by the same loop. */
static void test_settled_before_a_crash_is_analysed(void **state)
{
	struct fixture *f = *state;
	char err[256];
	int n;

	add_release(f, "6.1.63");
	add_release(f, "6.1.64-rc1");
	finish_next(f, "pass", "6.1.63");
	assert_int_equal(store_release_cancel(f->st, "6.1.64-rc1", &n, err,
					      sizeof(err)), 0);
	assert_int_equal(run_once(f), 2);
	assert_string_equal(gate_of(f, "6.1.63"), "pass");
	assert_int_equal(run_once(f), 0);
}

/* The rc's built kernel lacks CONFIG_AIO: its AIO test skips where the
 * baseline passed it. That is lost coverage, said in the gate's reasons
 * and the report with the skip reason; the verdict stays pass (nothing
 * in the kernel's code failed). A test skipped on both, or skipped where
 * the baseline failed it, or new in the rc, is not lost coverage. */
static void test_skip_that_passed_on_the_baseline_is_lost_coverage(void **state)
{
	struct fixture *f = *state;
	static const char aio_off[] = "io_setup: ENOSYS (CONFIG_AIO off?)";
	const struct result_row base[] = {
		{ "ext4.write_seq_512", "pass", NULL, 0, 0 },
		{ "xfs.aio_rw", "pass", NULL, 0, 0 },
		{ "btrfs.reflink", "skip", "no btrfs", 0, 0 },
		{ "ext4.nowait", "fail", "EAGAIN after a partial write", 0, 0 },
	};
	const struct result_row rc[] = {
		{ "ext4.write_seq_512", "pass", NULL, 0, 0 },
		{ "xfs.aio_rw", "skip", aio_off, 0, 0 },
		{ "btrfs.reflink", "skip", "no btrfs", 0, 0 },
		{ "ext4.nowait", "skip", "RWF_NOWAIT unsupported", 0, 0 },
		{ "ext4.uring_rw", "skip", "io_uring_setup: ENOSYS", 0, 0 },
	};
	char err[256];
	json_t *rel, *rep;
	struct gate_result g;
	const struct lost_coverage_row *l;
	const char *text;
	size_t i, lost_reasons = 0;

	add_release(f, "6.1.63");
	finish_rows(f, "6.1.63", base, 4);
	run_once(f);
	finish_rows(f, "6.1.63", base, 4);	/* the rerun of its failure */
	run_once(f);
	add_release(f, "6.1.64-rc1");
	finish_rows(f, "6.1.64-rc1", rc, 5);
	assert_int_equal(run_once(f), 1);

	rel = store_rows(f->st, Q_RELEASE, err, sizeof(err), "s", "6.1.64-rc1");
	assert_int_equal(engine_gate_eval(f->st, json_integer_value(json_object_get(
		json_array_get(rel, 0), "id")), &g, err, sizeof(err)), 1);
	assert_int_equal(g.verdict, GATE_PASS);
	assert_int_equal(g.lost.n, 1);
	l = g.lost.v;
	assert_string_equal(l[0].target, "x86_64");
	assert_string_equal(l[0].test, "xfs.aio_rw");
	assert_string_equal(l[0].reason, aio_off);
	for (i = 0; i < g.nreasons; i++)
		if (strstr(g.reasons[i], "lost coverage") != NULL) {
			lost_reasons++;
			assert_non_null(strstr(g.reasons[i], "xfs.aio_rw skipped on"
					       " x86_64 (io_setup: ENOSYS"));
			assert_non_null(strstr(g.reasons[i], "passed on 6.1.63"));
		}
	assert_int_equal(lost_reasons, 1);
	gate_result_free(&g);

	/* No regression of the rc was made of it. */
	rep = store_rows(f->st, Q_RELEASE_REGRESSIONS, err, sizeof(err), "i",
			 (int64_t)json_integer_value(json_object_get(
				 json_array_get(rel, 0), "id")));
	assert_int_equal(json_array_size(rep), 0);
	json_decref(rep);

	/* The report says it, with the reason, after the regressions. */
	rep = store_rows(f->st, Q_RELEASE_REPORT, err, sizeof(err), "i",
			 (int64_t)json_integer_value(json_object_get(
				 json_array_get(rel, 0), "id")));
	assert_int_equal(json_array_size(rep), 1);
	text = json_string_value(json_object_get(json_array_get(rep, 0), "text"));
	assert_non_null(text);
	assert_non_null(strstr(text, "## Lost Coverage (skipped here, passed on"
			       " 6.1.63)\n* x86_64: xfs.aio_rw: io_setup: ENOSYS"));
	assert_null(strstr(text, "btrfs.reflink"));
	assert_null(strstr(text, "ext4.uring_rw"));
	assert_null(strstr(text, "ext4.nowait"));
	json_decref(rep);

	/* The baseline itself lost nothing (it has no baseline). */
	json_decref(rel);
	rel = store_rows(f->st, Q_RELEASE, err, sizeof(err), "s", "6.1.63");
	assert_int_equal(engine_gate_eval(f->st, json_integer_value(json_object_get(
		json_array_get(rel, 0), "id")), &g, err, sizeof(err)), 1);
	assert_int_equal(g.lost.n, 0);
	gate_result_free(&g);
	json_decref(rel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rerun_then_one_regression_across_branches,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_flaky_and_known_failures_do_not_block,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_rerun_runs_only_the_failures,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_settled_before_a_crash_is_analysed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_skip_that_passed_on_the_baseline_is_lost_coverage,
						setup, teardown),
	};

	log_init("/dev/null", LOG_ERR, NULL, 0);
	return cmocka_run_group_tests_name("engine", tests, NULL, NULL);
}
