/* SPDX-License-Identifier: GPL-2.0-only
 *
 * Unit tests for daemon/review/bisect.c's engine pass over a running
 * bisection, on a real store (testutil_store): a round queues its two
 * steps together and the next round waits while a step whose verdict
 * still counts runs, and cancels one the other's verdict made moot; a
 * cancelled step stops the bisection only where its verdict still
 * counts; an unchecked good end is tested beside the middle commit, and
 * one that fails stops it; one failure of an rc on several targets is
 * bisected once, the other targets taking its culprit and reverting it.
 * The steps' jobs are finished by hand (SQL), as a worker would leave
 * them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "testutil_store.h"

#define N 9	/* commits after the good end, the rc's last */
#define TEST "ext4.write_seq_4096"

static const char *good = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/* The i-th commit after the good end: 40 hex digits. */
static void commit_id(size_t i, char out[41])
{
	snprintf(out, 41, "%040zx", i + 1);
}

/* An rc whose job 1 failed TEST, and a running bisection of it over N
 * commits (good_tested: whether the good end is known to pass). */
static int64_t bisection(struct test_engine *f, int good_tested)
{
	static const struct result_row fail = { TEST, "fail", "data mismatch",
						10, 1 };
	char commits[N * 41], bad[41], err[512];
	struct bisect_candidate c = { 5, 1, 1, 1, "6.1.64-rc1", "6.1", "x86_64",
				      TEST, "git://127.0.0.1:9/none.git", bad,
				      ",write_seq_4096," };
	int64_t id;

	test_engine_add_release(f, "6.1.64-rc1");
	test_engine_finish_next(f, "6.1.64-rc1", &fail, 1);
	test_engine_sql(f, "INSERT INTO regression (id, signature, test, target,"
			" fs, state, first_seen, updated) VALUES (5, 's5', '"
			TEST "', 'x86_64', 'ext4', 'confirmed', 'x', 'x')");
	commits[0] = '\0';
	for (size_t i = 0; i < N; i++) {
		commit_id(i, bad);
		strcat(commits, i ? " " : "");
		strcat(commits, bad);
	}
	assert_int_equal(store_bisection_create(f->st, &c, good, good_tested,
		commits, "running", NULL, &id, err, sizeof(err)), 0);
	return id;
}

/* The commits of bisection id's steps, in queue order, as "i,j,g" (g:
 * the good end), and how many there are. */
static size_t steps(struct test_engine *f, int64_t id, char *out, size_t len)
{
	struct rowset r = { 0 };
	char err[512], c[41];
	size_t n;

	assert_int_equal(store_bisect_steps(f->st, id, &r, err, sizeof(err)), 0);
	out[0] = '\0';
	for (size_t i = 0; i < r.n; i++) {
		const struct bisect_step_row *s = &((const struct bisect_step_row *)r.v)[i];
		size_t k = 0;

		while (k < N && (commit_id(k, c), strcmp(c, s->git_commit) != 0))
			k++;
		snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? "," : "",
			 strcmp(s->git_commit, good) == 0 ? "g" : "");
		if (k < N)
			snprintf(out + strlen(out), len - strlen(out), "%zu", k);
	}
	n = r.n;
	rowset_free(&r);
	return n;
}

/* The step job of commit i (N: the good end) ends: "pass", "fail" or
 * "cancelled". */
static void step_ends(struct test_engine *f, int64_t id, size_t i,
		      const char *how)
{
	char c[41], text[1024];
	int cancelled = strcmp(how, "cancelled") == 0;

	if (i < N)
		commit_id(i, c);
	else
		snprintf(c, sizeof(c), "%s", good);
	snprintf(text, sizeof(text), "UPDATE job SET state = '%s' WHERE"
		 " bisection_id = %lld AND git_commit = '%s';", cancelled ?
		 "cancelled" : "done", (long long)id, c);
	if (!cancelled)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "INSERT INTO result (job_id, test, status) SELECT id,"
			 " 'build.kernel', 'pass' FROM job WHERE bisection_id ="
			 " %lld AND git_commit = '%s';"
			 "INSERT INTO result (job_id, test, status) SELECT id,"
			 " '" TEST "', '%s' FROM job WHERE bisection_id = %lld"
			 " AND git_commit = '%s';", (long long)id, c, how,
			 (long long)id, c);
	test_engine_sql(f, text);
}

/* The two text columns of sql's one row, with id bound first and commit
 * (when not NULL) second. */
static void row2(struct test_engine *f, const char *sql, int64_t id,
		 const char *commit, char *a, size_t alen, char *b, size_t blen)
{
	sqlite3 *raw;
	sqlite3_stmt *q;

	assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(raw, sql, -1, &q, NULL), SQLITE_OK);
	sqlite3_bind_int64(q, 1, id);
	if (commit != NULL)
		sqlite3_bind_text(q, 2, commit, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	snprintf(a, alen, "%s", (const char *)sqlite3_column_text(q, 0));
	snprintf(b, blen, "%s", (const char *)sqlite3_column_text(q, 1));
	sqlite3_finalize(q);
	sqlite3_close(raw);
}

static void state_of(struct test_engine *f, int64_t id, char *state,
		     size_t slen, char *culprit, size_t clen)
{
	row2(f, "SELECT state, coalesce(culprit, message, '') FROM bisection"
	     " WHERE id = ?", id, NULL, state, slen, culprit, clen);
}

/* The bisection found commit i. */
static void assert_found(struct test_engine *f, int64_t id, size_t i)
{
	char st[32], culprit[600], want[41];

	state_of(f, id, st, sizeof(st), culprit, sizeof(culprit));
	commit_id(i, want);
	assert_string_equal(st, "found");
	assert_string_equal(culprit, want);
}

static int pass(struct test_engine *f)
{
	char err[512];
	int rc = bisect_run_once(f->st, &f->ectx, err, sizeof(err));

	if (rc < 0)
		fail_msg("bisect_run_once: %s", err);
	return rc;
}

static struct test_engine *fixture(void)
{
	struct test_engine *f = test_engine_new("https://rcgate.example");

	assert_non_null(f);
	f->ectx.cache_dir = f->dir;	/* no clone there: no subjects */
	return f;
}

/* Rounds of two: 2 and 5 of 9 (three parts of 3), the second round
 * after both ended, then the answer; the step that round made moot was
 * cancelled and does not stop it. */
static void test_rounds(void **state)
{
	struct test_engine *f = fixture();
	int64_t id = bisection(f, 1);
	char list[256];

	(void)state;
	assert_int_equal(pass(f), 1);
	assert_int_equal(steps(f, id, list, sizeof(list)), 2);
	assert_string_equal(list, "2,5");
	/* One step ended: the round waits for the other. */
	step_ends(f, id, 2, "pass");
	assert_int_equal(pass(f), 0);
	assert_int_equal(steps(f, id, list, sizeof(list)), 2);
	step_ends(f, id, 5, "fail");
	assert_int_equal(pass(f), 1);
	assert_int_equal(steps(f, id, list, sizeof(list)), 4);
	assert_string_equal(list, "2,5,3,4");
	/* 3 bad makes 4 moot: its cancellation is not a stop. */
	step_ends(f, id, 3, "fail");
	step_ends(f, id, 4, "cancelled");
	pass(f);
	assert_found(f, id, 3);
	test_engine_free(f);
}

/* The state of commit i's step job, and the message of its last event. */
static void step_state(struct test_engine *f, int64_t id, size_t i,
		       char *state, size_t slen, char *msg, size_t mlen)
{
	char c[41];

	commit_id(i, c);
	row2(f, "SELECT j.state, coalesce((SELECT message FROM job_event e"
	     " WHERE e.job_id = j.id ORDER BY e.id DESC LIMIT 1), '') FROM job j"
	     " WHERE j.bisection_id = ? AND j.git_commit = ?", id, c, state,
	     slen, msg, mlen);
}

/* The first round (2 and 5): commit ends ends as how, which makes moot
 * moot: the pass cancels moot's job and queues the next round at once
 * (the steps then: want). */
static void moot_round(struct test_engine *f, int64_t id, size_t ends,
		       const char *how, size_t moot, const char *want)
{
	char list[256], st[32], msg[600];

	pass(f);
	step_ends(f, id, ends, how);
	assert_int_equal(pass(f), 1);
	assert_int_equal(steps(f, id, list, sizeof(list)), 4);
	assert_string_equal(list, want);
	step_state(f, id, moot, st, sizeof(st), msg, sizeof(msg));
	assert_string_equal(st, "cancelled");
	assert_non_null(strstr(msg, "moot"));
}

/* A round is decided by its first verdict when that makes the other step
 * moot: the moot step is cancelled (its cores and worktree go to the next
 * round) and the next round is queued without waiting for it. */
static void test_decided_early(void **state)
{
	struct test_engine *f = fixture();
	int64_t id = bisection(f, 1);
	char st[32], msg[600];

	(void)state;
	/* 2 fails while 5 runs: the culprit is in 0..2, 5 is moot. */
	moot_round(f, id, 2, "fail", 5, "2,5,0,1");
	/* 1 passes while 0 runs: the answer is 2; 0 is moot. */
	step_ends(f, id, 1, "pass");
	pass(f);
	assert_found(f, id, 2);
	step_state(f, id, 0, st, sizeof(st), msg, sizeof(msg));
	assert_string_equal(st, "cancelled");
	test_engine_free(f);

	/* 5 passes while 2 runs: the culprit is in 6..8, 2 is moot. */
	f = fixture();
	id = bisection(f, 1);
	moot_round(f, id, 5, "pass", 2, "2,5,6,7");
	/* 6 passes while 7 runs: 7 still counts (it decides between 7 and
	 * 8, the rc's own failure), so the round waits for it. */
	step_ends(f, id, 6, "pass");
	assert_int_equal(pass(f), 0);
	state_of(f, id, st, sizeof(st), msg, sizeof(msg));
	assert_string_equal(st, "running");
	step_state(f, id, 7, st, sizeof(st), msg, sizeof(msg));
	assert_string_equal(st, "queued");
	test_engine_free(f);
}

/* A cancelled step whose verdict still counts stops the bisection, once
 * no running step could make it moot. */
static void test_cancelled_stops(void **state)
{
	struct test_engine *f = fixture();
	int64_t id = bisection(f, 1);
	char list[256], st[32], msg[600];

	(void)state;
	pass(f);
	step_ends(f, id, 2, "cancelled");
	step_ends(f, id, 5, "fail");
	assert_int_equal(pass(f), 0);
	assert_int_equal(steps(f, id, list, sizeof(list)), 2);
	state_of(f, id, st, sizeof(st), msg, sizeof(msg));
	assert_string_equal(st, "failed");
	assert_non_null(strstr(msg, "was cancelled"));
	test_engine_free(f);

	/* 5 cancelled while 2 runs: 2 may still make it moot, so nothing
	 * stops; 2 fails, and the bisection goes on without 5. */
	f = fixture();
	id = bisection(f, 1);
	pass(f);
	step_ends(f, id, 5, "cancelled");
	assert_int_equal(pass(f), 0);
	state_of(f, id, st, sizeof(st), msg, sizeof(msg));
	assert_string_equal(st, "running");
	step_ends(f, id, 2, "fail");
	assert_int_equal(pass(f), 1);
	assert_int_equal(steps(f, id, list, sizeof(list)), 4);
	assert_string_equal(list, "2,5,0,1");
	test_engine_free(f);
}

/* An unchecked good end goes in the first round beside the middle
 * commit; when it does not pass, that commit's verdict is not used. */
static void test_good_end(void **state)
{
	struct test_engine *f = fixture();
	int64_t id = bisection(f, 0);
	char list[256], st[32], msg[600];

	(void)state;
	assert_int_equal(pass(f), 1);
	assert_int_equal(steps(f, id, list, sizeof(list)), 2);
	assert_string_equal(list, "g,3");
	step_ends(f, id, N, "fail");
	step_ends(f, id, 3, "pass");
	pass(f);
	state_of(f, id, st, sizeof(st), msg, sizeof(msg));
	assert_string_equal(st, "failed");
	assert_non_null(strstr(msg, "does not reproduce"));
	/* It passes: the next round follows from the middle commit. */
	test_engine_free(f);
	f = fixture();
	id = bisection(f, 0);
	pass(f);
	step_ends(f, id, N, "pass");
	step_ends(f, id, 3, "pass");
	assert_int_equal(pass(f), 1);
	assert_int_equal(steps(f, id, list, sizeof(list)), 4);
	assert_string_equal(list, "g,3,5,6");
	test_engine_free(f);
}

/* ---- one bisection per cause (017-bisect-lead.sql) ---- */

/* An rc built from git on x86_64, arm64 and i386 (jobs 1, 2, 3), each
 * built at the last of the N commits and failing TEST; x86_64's and
 * arm64's regressions (5, 6) confirmed, i386's (7) not yet. x86_64 built
 * and booted quicker than arm64. Its candidates into rows. */
static void three_targets(struct test_engine *f, struct rowset *rows)
{
	static const char *const targets[] = { "x86_64", "arm64", "i386" };
	struct artifact_in in[3];
	struct kversion kv;
	char sql[2048], bad[41], err[256];
	int64_t rid;

	for (size_t i = 0; i < 3; i++)
		in[i] = (struct artifact_in){ targets[i],
			"git://127.0.0.1:9/none.git", "", "git", NULL, NULL, 0,
			NULL, NULL, "linux-6.1.y" };
	assert_int_equal(kversion_parse("6.1.64-rc1", &kv, err, sizeof(err)), 0);
	assert_int_equal(store_release_create(f->st, "6.1.64-rc1", &kv, NULL, in,
					      3, &rid, err, sizeof(err)), 0);
	commit_id(N - 1, bad);
	snprintf(sql, sizeof(sql),
		 "UPDATE job SET state = 'done', built_commit = '%s',"
		 " build_seconds = CASE target WHEN 'x86_64' THEN 40"
		 "  WHEN 'arm64' THEN 90 ELSE 60 END, boot_seconds = 30;"
		 "INSERT INTO result (job_id, test, status) SELECT id, '" TEST "',"
		 " 'fail' FROM job;"
		 "INSERT INTO regression (id, signature, test, target, fs, state,"
		 " first_seen, updated) VALUES"
		 " (5, 's5', '" TEST "', 'x86_64', 'ext4', 'confirmed', 'x', 'x'),"
		 " (6, 's6', '" TEST "', 'arm64', 'ext4', 'confirmed', 'x', 'x'),"
		 " (7, 's7', '" TEST "', 'i386', 'ext4', 'open', 'x', 'x');"
		 "INSERT INTO occurrence (regression_id, release_id, job_id, runs,"
		 " fails, seen) SELECT g.id, j.release_id, j.id, 2, 2, 'x' FROM"
		 " regression g JOIN job j ON j.target = g.target;", bad);
	test_engine_sql(f, sql);
	assert_int_equal(store_bisect_candidates(f->st, rows, err, sizeof(err)), 0);
}

/* The bisection rows of target: how many, and the first one's state,
 * lead (0 none) and culprit or message. */
static int target_row(struct test_engine *f, const char *target,
		      char *state, size_t slen, int64_t *lead, char *what,
		      size_t wlen)
{
	sqlite3 *raw;
	sqlite3_stmt *q;
	int n = 0;

	assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(raw, "SELECT state, coalesce(lead, 0),"
		" coalesce(culprit, message, '') FROM bisection WHERE target = ?"
		" ORDER BY id", -1, &q, NULL), SQLITE_OK);
	sqlite3_bind_text(q, 1, target, -1, SQLITE_STATIC);
	while (sqlite3_step(q) == SQLITE_ROW)
		if (n++ == 0) {
			snprintf(state, slen, "%s", (const char *)sqlite3_column_text(q, 0));
			*lead = sqlite3_column_int64(q, 1);
			snprintf(what, wlen, "%s", (const char *)sqlite3_column_text(q, 2));
		}
	sqlite3_finalize(q);
	sqlite3_close(raw);
	return n;
}

/* The running lead over the N commits, bisecting candidate c. */
static int64_t lead_of(struct test_engine *f, const struct bisect_candidate *c)
{
	char commits[N * 41], id[41], err[512];
	int64_t bid;

	commits[0] = '\0';
	for (size_t i = 0; i < N; i++) {
		commit_id(i, id);
		strcat(commits, i ? " " : "");
		strcat(commits, id);
	}
	assert_int_equal(store_bisection_create(f->st, c, good, 1, commits,
		"running", NULL, &bid, err, sizeof(err)), 0);
	return bid;
}

/* three_targets with x86_64's bisection running, after one pass. */
static struct test_engine *led(int64_t *lead)
{
	struct test_engine *f = fixture();
	struct rowset rows = { 0 };

	three_targets(f, &rows);
	*lead = lead_of(f, rows.v);
	rowset_free(&rows);
	pass(f);
	return f;
}

/* The same failure in one rc on three targets is bisected once: the
 * quickest target first; the others wait while it runs, take its culprit
 * when it is found and check it by a revert check of their own (their
 * failing tests, their target, no steps); a target confirmed later takes
 * it at once. */
static void test_one_per_cause(void **state)
{
	struct test_engine *f = fixture();
	const struct bisect_candidate *c;
	struct rowset rows = { 0 };
	char st[32], what[600], culprit[41], bad[41], a[128], b[64];
	int64_t lead, from;

	(void)state;
	three_targets(f, &rows);
	assert_int_equal(rows.n, 2);
	c = rows.v;
	assert_string_equal(c[0].target, "x86_64");	/* 70 s, not 120 */
	assert_string_equal(c[1].target, "arm64");
	lead = lead_of(f, &c[0]);
	rowset_free(&rows);
	/* While it runs, arm64 waits: no bisection, no steps of its own. */
	assert_int_equal(pass(f), 1);
	assert_int_equal(target_row(f, "arm64", st, sizeof(st), &from, what,
				    sizeof(what)), 0);
	step_ends(f, lead, 2, "pass");
	step_ends(f, lead, 5, "fail");
	assert_int_equal(pass(f), 1);
	assert_int_equal(target_row(f, "arm64", st, sizeof(st), &from, what,
				    sizeof(what)), 0);
	step_ends(f, lead, 3, "fail");
	step_ends(f, lead, 4, "cancelled");
	/* Found: the lead's revert check and arm64's, in the same pass. */
	assert_int_equal(pass(f), 1);
	assert_found(f, lead, 3);
	commit_id(3, culprit);
	commit_id(N - 1, bad);
	assert_int_equal(target_row(f, "arm64", st, sizeof(st), &from, what,
				    sizeof(what)), 1);
	assert_string_equal(st, "found");
	assert_int_equal(from, lead);
	assert_string_equal(what, culprit);
	row2(f, "SELECT j.git_commit || ' ' || j.revert_commit, j.only_tests ||"
	     " ' ' || j.target || ' ' || (SELECT count(*) FROM job s WHERE"
	     " s.bisection_id = b.id AND s.revert_commit IS NULL) FROM bisection b"
	     " JOIN job j ON j.id = b.revert_job WHERE b.lead = ?1 AND"
	     " b.target = coalesce(?2, b.target)", lead, "arm64", a, sizeof(a),
	     b, sizeof(b));
	assert_int_equal(strncmp(a, bad, 40), 0);
	assert_string_equal(a + 41, culprit);
	assert_string_equal(b, "write_seq_4096 arm64 0");
	row2(f, "SELECT revert_state, coalesce(revert_job, 0) FROM bisection"
	     " WHERE id = ?1", lead, NULL, a, sizeof(a), b,
	     sizeof(b));
	assert_string_equal(a, "pending");
	/* i386 confirmed later: it takes the answer at once. */
	test_engine_sql(f, "UPDATE regression SET state = 'confirmed' WHERE id = 7");
	pass(f);
	assert_int_equal(target_row(f, "i386", st, sizeof(st), &from, what,
				    sizeof(what)), 1);
	assert_string_equal(st, "found");
	assert_int_equal(from, lead);
	test_engine_free(f);
}

/* A lead that ends without a culprit (here: it failed) lets the others
 * bisect on their own: arm64 then starts its own bisection (with no
 * clone here, it fails for want of a good end: but it is its own). */
static void test_lead_failed(void **state)
{
	int64_t lead, from = -1;
	struct test_engine *f = led(&lead);
	char st[32], what[600];

	(void)state;
	assert_int_equal(target_row(f, "arm64", st, sizeof(st), &from, what,
				    sizeof(what)), 0);
	{
		char sql[128];

		snprintf(sql, sizeof(sql), "UPDATE bisection SET state = 'failed'"
			 " WHERE id = %lld", (long long)lead);
		test_engine_sql(f, sql);
	}
	pass(f);
	assert_int_equal(target_row(f, "arm64", st, sizeof(st), &from, what,
				    sizeof(what)), 1);
	assert_int_equal(from, 0);
	assert_string_equal(st, "failed");
	assert_non_null(strstr(what, "no good end"));
	test_engine_free(f);
}

/* A target that fails other tests than the lead bisects is not held
 * back: its failure may have another cause, so it bisects on its own
 * while the lead runs (here it fails for want of a good end, with no
 * clone: but it is its own), and arm64, failing the lead's test, waits. */
static void test_other_cause(void **state)
{
	struct test_engine *f = fixture();
	struct rowset rows = { 0 };
	char st[32], what[600];
	int64_t from = -1;

	(void)state;
	three_targets(f, &rows);
	lead_of(f, rows.v);
	rowset_free(&rows);
	test_engine_sql(f, "UPDATE regression SET state = 'confirmed',"
			" test = 'ext4.append_512', signature = 's7b' WHERE id = 7");
	pass(f);
	assert_int_equal(target_row(f, "i386", st, sizeof(st), &from, what,
				    sizeof(what)), 1);
	assert_int_equal(from, 0);
	assert_non_null(strstr(what, "no good end"));
	assert_non_null(strstr(what, "ext4.append_512"));
	assert_int_equal(target_row(f, "arm64", st, sizeof(st), &from, what,
				    sizeof(what)), 0);
	test_engine_free(f);
}

/* A follower whose revert check fails (the lead's culprit reverted on
 * arm64, the test still fails there) has a cause of its own: its row
 * becomes its own bisection (lead gone; with no clone here it fails for
 * want of a good end, but it is its own), saying why; it does not take
 * the same lead again, and a later pass leaves it be. */
static void test_unexplained(void **state)
{
	int64_t lead, from = -1;
	struct test_engine *f = led(&lead);
	char st[32], what[1400];

	(void)state;
	step_ends(f, lead, 2, "pass");
	step_ends(f, lead, 5, "fail");
	pass(f);
	step_ends(f, lead, 3, "fail");
	step_ends(f, lead, 4, "cancelled");
	pass(f);
	assert_int_equal(target_row(f, "arm64", st, sizeof(st), &from, what,
				    sizeof(what)), 1);
	assert_int_equal(from, lead);
	/* arm64's revert check ends: its kernel builds, the test fails. */
	test_engine_sql(f, "UPDATE job SET state = 'done' WHERE id ="
			" (SELECT revert_job FROM bisection WHERE target = 'arm64');"
			"INSERT INTO result (job_id, test, status) SELECT revert_job,"
			" t, s FROM bisection, (SELECT 'build.kernel' AS t, 'pass' AS s"
			" UNION SELECT '" TEST "', 'fail') WHERE target = 'arm64'");
	pass(f);
	for (int again = 0; again < 2; again++) {
		assert_int_equal(target_row(f, "arm64", st, sizeof(st), &from,
					    what, sizeof(what)), 1);
		assert_int_equal(from, 0);
		assert_string_equal(st, "failed");
		assert_non_null(strstr(what, " of bisection 1 on x86_64 does not"
				       " explain the failure on arm64: with "));
		assert_non_null(strstr(what, "still failing: " TEST ". So arm64"
				       " was bisected on its own.\nno good end"));
		pass(f);
	}
	/* The lead and its own revert check are untouched. */
	assert_found(f, lead, 3);
	test_engine_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rounds),
		cmocka_unit_test(test_cancelled_stops),
		cmocka_unit_test(test_decided_early),
		cmocka_unit_test(test_good_end),
		cmocka_unit_test(test_one_per_cause),
		cmocka_unit_test(test_lead_failed),
		cmocka_unit_test(test_other_cause),
		cmocka_unit_test(test_unexplained),
	};
	return cmocka_run_group_tests_name("bisect_drive", tests, NULL, NULL);
}
