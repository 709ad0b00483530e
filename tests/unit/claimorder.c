/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit test of the claim order (store_job_claim, issue 29) on a real
 * SQLite store: the rc whose "Responses should be made by" comes first is
 * claimed first whatever its age; an rc's review jobs before its
 * bisection steps; a confirmed regression's steps before the review jobs
 * of the rcs due later; releases without a deadline last, oldest first;
 * every target of an rc from git builds the commit it was first built
 * from; a rerun goes before every rc's first runs; the bisection worker
 * takes steps only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "store/store.h"
#include "testutil.h"

static const char *const sha =
	"4fdd0172a8c3f41a97e92465b2ac1867e1c10d82d7aeed3d26ee7a5d14df1754";
static const char *const bad = "c97d13d25d29b3b73348e209d928bb7b98c50fff";

/* Announces version with deadline (UTC ISO 8601, as intake stores it). */
static void announce(struct store *st, const char *version,
		     const char *branch, long patch, const char *deadline)
{
	char mid[96], subject[96];
	struct announce_in a = { 0 };
	int64_t id;
	char err[256];

	snprintf(mid, sizeof(mid), "<%s@linuxfoundation.org>", version);
	snprintf(subject, sizeof(subject), "[PATCH %s 000/100] %s review",
		 branch, version);
	a.version = version;
	a.branch = branch;
	a.subject = subject;
	a.message_id = mid;
	a.from = "Greg Kroah-Hartman <gregkh@linuxfoundation.org>";
	a.to = "stable@vger.kernel.org";
	a.cc = "";
	a.date = "2023-12-05T03:15:00Z";
	a.deadline = deadline;
	a.rc = 1;
	a.patch = patch;
	assert_int_equal(store_release_announce(st, &a, &id, err, sizeof(err)), 0);
}

/* Posts version's kernels: x86_64 from git (so it can be bisected) and,
 * with two, an arm64 deb. */
static void post(struct store *st, const char *version, size_t n)
{
	struct artifact_in in[2] = {
		{ "x86_64", "git://127.0.0.1/linux.git", "", "git", NULL, NULL,
		  0, NULL, NULL, "linux-6.1.y" },
		{ "arm64", "file:///k/arm64.deb", sha, "deb", NULL, NULL, 0,
		  NULL, NULL, NULL },
	};
	struct kversion kv;
	int64_t id;
	char err[256];

	assert_int_equal(kversion_parse(version, &kv, err, sizeof(err)), 0);
	assert_int_equal(store_release_create(st, version, &kv, NULL, in, n,
					      &id, err, sizeof(err)), 0);
}

/* The job claim() claimed last. */
static struct job claimed;

/* Claims the next job: it must be version's, a step or not. */
static int64_t claim(struct store *st, const char *version, int step)
{
	char err[256];

	assert_int_equal(store_job_claim(st, "w0", &claimed, err, sizeof(err)), 1);
	if (strcmp(claimed.version, version) != 0 ||
	    (claimed.bisection_id != 0) != step)
		fail_msg("claimed %s%s, expected %s%s", claimed.version,
			 claimed.bisection_id ? " (step)" : "", version,
			 step ? " (step)" : "");
	return claimed.id;
}

/* The job claim_as() claimed last, as a claimer of one kind. */
static struct job kind_claimed;

/* A claimer of kind want claims (1) or finds nothing it takes (0). */
static void claim_as(struct store *st, enum claim_kind want, int expect)
{
	char err[256];

	assert_int_equal(store_job_claim_kind(st, "w1", want, &kind_claimed,
					      err, sizeof(err)), expect);
}

/* Job job_id of release version built bad and regressed: a confirmed
 * regression, its bisection, and one queued step. */
static void bisect(struct test_store *f, int64_t job_id, const char *version)
{
	const struct bisect_candidate *c;
	const struct bisection_row *b;
	struct rowset rows;
	char err[256];
	int64_t bid;

	assert_int_equal(store_job_build_progress(f->st, job_id, "done", 10, 10,
						  bad, err, sizeof(err)), 0);
	assert_int_equal(test_store_add_regression(f, 5, job_id), 0);
	assert_int_equal(store_bisect_candidates(f->st, &rows, err, sizeof(err)), 0);
	assert_int_equal(rows.n, 1);
	c = rows.v;
	assert_string_equal(c->version, version);
	assert_int_equal(store_bisection_create(f->st, c,
		"677341a7c35e42f60cb22f7eba28f3c42a76cc50", 1, bad, "running",
		NULL, &bid, err, sizeof(err)), 0);
	rowset_free(&rows);
	assert_int_equal(store_bisections_running(f->st, &rows, err, sizeof(err)), 0);
	assert_int_equal(rows.n, 1);
	b = rows.v;
	assert_int_equal(store_bisect_step_add(f->st, b->id, b->job_id, bad,
					       "write_seq_4096", NULL, err, sizeof(err)), 0);
	rowset_free(&rows);
}

static void test_deadline_order(void **state)
{
	struct test_store *f = *state;
	struct job job;
	char err[256];
	int64_t id;

	/* Oldest first: a release without a deadline (CI's, a baseline),
	 * then three rcs whose deadlines are not in their creation order. */
	post(f->st, "6.1.65", 1);
	announce(f->st, "6.1.66-rc1", "6.1", 66, "2023-12-07T03:15:00Z");
	post(f->st, "6.1.66-rc1", 2);
	announce(f->st, "6.7.2-rc1", "6.7", 2, "2023-12-08T10:00:00Z");
	post(f->st, "6.7.2-rc1", 1);
	announce(f->st, "6.6.5-rc1", "6.6", 5, "2023-12-06T09:00:00Z");
	post(f->st, "6.6.5-rc1", 1);

	claim(f->st, "6.6.5-rc1", 0);		/* due first, posted last */
	/* The job carries its rc's deadline: its boots take guest slots in
	 * the same order (job/slots.c). */
	assert_string_equal(claimed.deadline, "2023-12-06T09:00:00Z");
	id = claim(f->st, "6.1.66-rc1", 0);	/* its x86_64 */
	/* It regressed: its bisection's step waits behind its own arm64
	 * job, not behind 6.7.2-rc1's, which is due a day later. */
	bisect(f, id, "6.1.66-rc1");
	claim(f->st, "6.1.66-rc1", 0);		/* arm64 */
	claim(f->st, "6.1.66-rc1", 1);
	claim(f->st, "6.7.2-rc1", 0);
	claim(f->st, "6.1.65", 0);		/* no deadline: last */
	assert_string_equal(claimed.deadline, "");
	assert_int_equal(store_job_claim(f->st, "w0", &job, err, sizeof(err)), 0);
}

/* A release whose announcement gave no parseable deadline goes with the
 * releases without one: after every rc with a deadline, oldest first. */
static void test_no_deadline_after(void **state)
{
	struct test_store *f = *state;

	announce(f->st, "6.1.66-rc1", "6.1", 66, NULL);
	post(f->st, "6.1.66-rc1", 1);
	post(f->st, "6.1.65", 1);
	announce(f->st, "6.6.5-rc1", "6.6", 5, "2023-12-06T09:00:00Z");
	post(f->st, "6.6.5-rc1", 1);
	claim(f->st, "6.6.5-rc1", 0);
	claim(f->st, "6.1.66-rc1", 0);
	claim(f->st, "6.1.65", 0);
}

/* A rerun that confirms a regression goes before every rc's first runs,
 * even those of an rc due earlier: it boots a kernel already built, and
 * the rc's report and bisection wait for it. Among the rest, deadline
 * order holds. */
static void test_rerun_first(void **state)
{
	struct test_store *f = *state;
	char err[256];
	int64_t first;

	announce(f->st, "6.1.66-rc1", "6.1", 66, "2023-12-07T03:15:00Z");
	post(f->st, "6.1.66-rc1", 1);
	first = claim(f->st, "6.1.66-rc1", 0);
	announce(f->st, "6.6.5-rc1", "6.6", 5, "2023-12-06T09:00:00Z");
	post(f->st, "6.6.5-rc1", 2);
	assert_int_equal(store_job_rerun(f->st, claimed.release_id, "x86_64",
					 NULL, err, sizeof(err)), 0);
	claim(f->st, "6.1.66-rc1", 0);
	assert_int_equal(claimed.rerun_of, first);
	/* It keeps its rc's deadline: boot.c orders its slots first. */
	assert_string_equal(claimed.deadline, "2023-12-07T03:15:00Z");
	claim(f->st, "6.6.5-rc1", 0);
	assert_int_equal(claimed.rerun_of, 0);
	claim(f->st, "6.6.5-rc1", 0);
}

/* A rerun that boots the image its job built is taken by a guest worker
 * too (CLAIM_POSTED), not only by the build workers; a git job that must
 * build is not. */
static void test_rerun_any_worker(void **state)
{
	struct test_store *f = *state;
	char err[256];
	int64_t first;

	announce(f->st, "6.1.66-rc1", "6.1", 66, "2023-12-07T03:15:00Z");
	post(f->st, "6.1.66-rc1", 1);
	claim_as(f->st, CLAIM_POSTED, 0);
	first = claim(f->st, "6.1.66-rc1", 0);
	assert_int_equal(store_job_build_progress(f->st, first, "done", 1, 1,
						  bad, err, sizeof(err)), 0);
	assert_int_equal(store_job_built(f->st, first, sha, 60, err,
					 sizeof(err)), 0);
	assert_int_equal(store_job_transition(f->st, first, "fetching",
					      "booting", NULL, err, sizeof(err)), 1);
	assert_int_equal(store_job_transition(f->st, first, "booting",
					      "running", NULL, err, sizeof(err)), 1);
	assert_int_equal(store_job_done(f->st, first, NULL, 0, 1.0, err,
					sizeof(err)), 1);
	assert_int_equal(store_job_rerun(f->st, claimed.release_id, "x86_64",
					 NULL, err, sizeof(err)), 0);
	claim_as(f->st, CLAIM_POSTED, 1);
	assert_int_equal(kind_claimed.rerun_of, first);
	assert_string_equal(kind_claimed.rerun_image, sha);
}

/* The bisection worker (CLAIM_BISECT) takes a queued step even when
 * review builds of an rc due earlier come first in the claim order, and
 * nothing else: not a review build, not a posted kernel. A build worker
 * still takes steps too. */
static void test_bisect_worker(void **state)
{
	struct test_store *f = *state;
	int64_t id;

	announce(f->st, "6.1.66-rc1", "6.1", 66, "2023-12-07T03:15:00Z");
	post(f->st, "6.1.66-rc1", 1);
	id = claim(f->st, "6.1.66-rc1", 0);
	announce(f->st, "6.6.5-rc1", "6.6", 5, "2023-12-06T09:00:00Z");
	post(f->st, "6.6.5-rc1", 2);	/* a git build and a deb, due first */
	claim_as(f->st, CLAIM_BISECT, 0);
	bisect(f, id, "6.1.66-rc1");
	claim_as(f->st, CLAIM_BISECT, 1);
	assert_string_equal(kind_claimed.version, "6.1.66-rc1");
	assert_int_not_equal(kind_claimed.bisection_id, 0);
	claim_as(f->st, CLAIM_BISECT, 0);
	claim_as(f->st, CLAIM_BUILT, 1);
	assert_string_equal(kind_claimed.version, "6.6.5-rc1");
	assert_int_equal(kind_claimed.bisection_id, 0);
}

/* 6.1.66-rc1 from git: x86_64 and i386 of linux-6.1.y, and arm64 of
 * another branch of the same tree. */
static const struct artifact_in three_git[3] = {
	{ "x86_64", "git://127.0.0.1/linux.git", "", "git", NULL, NULL, 0, NULL,
	  NULL, "linux-6.1.y" },
	{ "i386", "git://127.0.0.1/linux.git", "", "git", NULL, NULL, 0, NULL,
	  NULL, "linux-6.1.y" },
	{ "arm64", "git://127.0.0.1/linux.git", "", "git", NULL, NULL, 0, NULL,
	  NULL, "linux-6.6.y" },
};

/* Every target of an rc from git, and every attempt, builds the commit
 * the rc was first built from: the claim carries it once one of its jobs
 * recorded it, and never a bisection step's or another branch's. */
static void test_release_commit(void **state)
{
	struct test_store *f = *state;
	struct kversion kv;
	int64_t id, first;
	char err[256];

	assert_int_equal(kversion_parse("6.1.66-rc1", &kv, err, sizeof(err)), 0);
	assert_int_equal(store_release_create(f->st, "6.1.66-rc1", &kv, NULL,
					      three_git, 3, &id, err, sizeof(err)), 0);
	post(f->st, "6.1.65", 1);
	first = claim(f->st, "6.1.66-rc1", 0);
	assert_string_equal(claimed.release_commit, "");
	assert_int_equal(store_job_build_progress(f->st, first, "waiting", -1,
						  -1, bad, err, sizeof(err)), 0);
	claim(f->st, "6.1.66-rc1", 0);
	assert_string_equal(claimed.target, "i386");
	assert_string_equal(claimed.release_commit, bad);
	/* Another branch of the same tree: not this commit. */
	claim(f->st, "6.1.66-rc1", 0);
	assert_string_equal(claimed.target, "arm64");
	assert_string_equal(claimed.release_commit, "");
	/* Another release of the same branch: not this commit either. */
	claim(f->st, "6.1.65", 0);
	assert_string_equal(claimed.release_commit, "");
}

/* Two targets claimed at the same moment both fetch the branch, and it
 * moved between their fetches: the second records (and builds) the
 * commit the first recorded; another branch, and a bisection step,
 * record their own. */
static void test_record_commit(void **state)
{
	struct test_store *f = *state;
	static const char *const moved = "d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0";
	struct kversion kv;
	int64_t id, a, b, c;
	char err[256], rec[41];

	assert_int_equal(kversion_parse("6.1.66-rc1", &kv, err, sizeof(err)), 0);
	assert_int_equal(store_release_create(f->st, "6.1.66-rc1", &kv, NULL,
					      three_git, 3, &id, err, sizeof(err)), 0);
	a = claim(f->st, "6.1.66-rc1", 0);
	b = claim(f->st, "6.1.66-rc1", 0);
	assert_string_equal(claimed.release_commit, "");	/* none yet */
	c = claim(f->st, "6.1.66-rc1", 0);
	assert_int_equal(store_job_record_commit(f->st, a, bad, rec, err,
						 sizeof(err)), 0);
	assert_string_equal(rec, bad);
	assert_int_equal(store_job_record_commit(f->st, b, moved, rec, err,
						 sizeof(err)), 0);
	assert_string_equal(rec, bad);
	assert_int_equal(store_job_record_commit(f->st, c, moved, rec, err,
						 sizeof(err)), 0);
	assert_string_equal(rec, moved);	/* linux-6.6.y */
	/* A step of the rc records the commit it builds. */
	bisect(f, a, "6.1.66-rc1");
	claim(f->st, "6.1.66-rc1", 1);
	assert_int_equal(store_job_record_commit(f->st, claimed.id, moved, rec,
						 err, sizeof(err)), 0);
	assert_string_equal(rec, moved);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_deadline_order, test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_no_deadline_after, test_store_setup,
						test_store_teardown),
		cmocka_unit_test_setup_teardown(test_rerun_first, test_store_setup,
						test_store_teardown),
		cmocka_unit_test_setup_teardown(test_rerun_any_worker,
						test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_bisect_worker,
						test_store_setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_release_commit, test_store_setup,
						test_store_teardown),
		cmocka_unit_test_setup_teardown(test_record_commit, test_store_setup,
						test_store_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
