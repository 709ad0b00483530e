/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/bisect.c: for every branch length up to 64 and
 * every position of the first bad commit, the bisection names it within
 * ceil(log2(n)) steps; skipped commits are stepped around and, when they
 * hide the answer, the answer is the range (never a wrong commit); and
 * the upstream id is read from the forms stable backports use.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "build/build.h"
#include "store/store.h"
#include "review/review.h"

static int ceil_log2(size_t n)
{
	int k = 0;

	while (((size_t)1 << k) < n)
		k++;
	return k;
}

/* Runs a whole bisection of n commits whose first bad one is culprit;
 * commits for which skip[i] are judged "skip". Returns the steps taken,
 * the outcome in *rc and the range in *lo, *hi. */
static int run(size_t n, size_t culprit, const int *skip, int *rc, size_t *lo,
	       size_t *hi)
{
	enum bisect_verdict v[64] = { 0 };
	size_t next;
	int steps = 0;

	v[n - 1] = BISECT_BAD;
	while ((*rc = bisect_next(v, n, &next, lo, hi)) == BISECT_STEP) {
		assert_true(next < n - 1);
		assert_int_equal(v[next], BISECT_UNTESTED);	/* never twice */
		v[next] = skip != NULL && skip[next] ? BISECT_SKIP
			: next >= culprit ? BISECT_BAD : BISECT_GOOD;
		steps++;
		assert_true(steps <= 64);
	}
	return steps;
}

static void test_every_culprit(void **state)
{
	(void)state;
	for (size_t n = 1; n <= 64; n++) {
		for (size_t c = 0; c < n; c++) {
			size_t lo, hi;
			int rc, steps = run(n, c, NULL, &rc, &lo, &hi);

			assert_int_equal(rc, BISECT_FOUND);
			assert_int_equal(hi, c);
			assert_int_equal(lo, c);
			if (steps > ceil_log2(n))
				fail_msg("n=%zu culprit=%zu: %d steps > %d", n, c,
					 steps, ceil_log2(n));
		}
	}
}

static void test_skips(void **state)
{
	int skip[64] = { 0 };
	size_t lo, hi;
	int rc;

	(void)state;
	/* A skipped commit that is not the answer costs a step, no more. */
	for (size_t c = 0; c < 16; c++) {
		memset(skip, 0, sizeof(skip));
		skip[7] = c != 7;	/* the middle of 16 does not build */
		run(16, c, skip, &rc, &lo, &hi);
		if (c == 7 || c == 8) {
			/* 7 is skipped: whether 7 or 8 is first bad is open */
			if (c == 7) {
				assert_int_equal(rc, BISECT_FOUND);
				assert_int_equal(hi, 7);
			} else {
				assert_int_equal(rc, BISECT_AMBIGUOUS);
				assert_int_equal(lo, 7);
				assert_int_equal(hi, 8);
			}
		} else {
			assert_int_equal(rc, BISECT_FOUND);
			assert_int_equal(hi, c);
		}
	}
	/* Everything between the ends skipped: the answer is the range. */
	for (size_t i = 0; i < 9; i++)
		skip[i] = 1;
	run(10, 4, skip, &rc, &lo, &hi);
	assert_int_equal(rc, BISECT_AMBIGUOUS);
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 9);
	/* n = 0 is refused; n = 1 is its own answer without a step. */
	assert_int_equal(bisect_next(NULL, 0, &lo, &lo, &hi), BISECT_EMPTY);
	assert_int_equal(run(1, 0, NULL, &rc, &lo, &hi), 0);
	assert_int_equal(rc, BISECT_FOUND);
}

static void test_upstream_id(void **state)
{
	char id[41];

	(void)state;
	assert_int_equal(gitsrc_upstream_id(
		"ext4: properly sync file size update after O_DIRECT write\n\n"
		"commit 91562895f8030cb9a0470b1db49de79346a69f91 upstream.\n\n"
		"Gao Xiang has reported...\n", id), 0);
	assert_string_equal(id, "91562895f8030cb9a0470b1db49de79346a69f91");
	assert_int_equal(gitsrc_upstream_id(
		"subject\n\n[ Upstream commit 936e114a245b6e38e0dbf706a67e7611fc993da1 ]\n", id), 0);
	assert_string_equal(id, "936e114a245b6e38e0dbf706a67e7611fc993da1");
	assert_int_equal(gitsrc_upstream_id(
		"subject\n\n(cherry picked from commit 936e114a245b6e38e0dbf706a67e7611fc993da1)\n", id), 0);
	/* A "commit X" line without "upstream", a short or upper-case id,
	 * or a revert's "This reverts commit X." name no upstream. */
	assert_int_equal(gitsrc_upstream_id("Fixes: commit 936e114a245b6e38e0dbf706a67e7611fc993da1\n"
		"commit 936e114a245b6e38e0dbf706a67e7611fc993da1 is bad\n", id), -1);
	assert_int_equal(gitsrc_upstream_id("commit 936e114a245b upstream.\n", id), -1);
	assert_int_equal(gitsrc_upstream_id("commit 936E114A245B6E38E0DBF706A67E7611FC993DA1 upstream.\n", id), -1);
	assert_int_equal(gitsrc_upstream_id("This reverts commit 936e114a245b6e38e0dbf706a67e7611fc993da1.\n", id), -1);
	assert_int_equal(gitsrc_upstream_id("", id), -1);
}

/* The revert check's words: PASS and FAIL only from tests that ran; a
 * revert that does not apply, and the farm's own failure, are neither. */
static void test_revert_verdict(void **state)
{
	const char *c = "c97d13d25d29b3b73348e209d928bb7b98c50fff";
	struct revert_todo t = { 1, 9, "6.1.64-rc1", "ext4.write_seq_512", c,
				 "running", NULL, NULL, NULL, NULL, NULL };
	char msg[512];

	(void)state;
	assert_null(bisect_revert_verdict(&t, msg, sizeof(msg)));
	t.state = "done";
	t.build = "pass";
	t.status = "pass";
	assert_string_equal(bisect_revert_verdict(&t, msg, sizeof(msg)), "pass");
	assert_string_equal(msg, "reverting c97d13d25d29 on top of 6.1.64-rc1"
			    " makes ext4.write_seq_512 pass");
	t.status = "fail";
	t.failing = "ext4.write_seq_512, ext4.append_512";
	assert_string_equal(bisect_revert_verdict(&t, msg, sizeof(msg)), "fail");
	assert_string_equal(msg, "with c97d13d25d29 reverted on top of 6.1.64-rc1,"
			    " still failing: ext4.write_seq_512, ext4.append_512");
	t.build = "fail";
	t.status = NULL;
	t.build_sign = BUILD_REVERT_CONFLICT;
	assert_string_equal(bisect_revert_verdict(&t, msg, sizeof(msg)), "conflict");
	assert_string_equal(msg, "c97d13d25d29 does not revert cleanly on top of"
			    " 6.1.64-rc1");
	t.build_sign = "fs/ext4/file.c: error: 'x' undeclared";
	assert_string_equal(bisect_revert_verdict(&t, msg, sizeof(msg)), "fail");
	assert_non_null(strstr(msg, "the kernel does not build: fs/ext4/file.c"));
	/* A build regression: its revert check is the build alone. */
	t.test = BUILD_TEST;
	t.status = "pass";
	t.build = "pass";
	t.build_sign = NULL;
	assert_string_equal(bisect_revert_verdict(&t, msg, sizeof(msg)), "pass");
	assert_non_null(strstr(msg, "makes the kernel build"));
	/* The farm's failures: infra, never fail. */
	t.test = "ext4.write_seq_512";
	t.state = "infra_error";
	t.error = "boot: guest did not start";
	assert_string_equal(bisect_revert_verdict(&t, msg, sizeof(msg)), "infra");
	assert_non_null(strstr(msg, "guest did not start"));
	t.state = "cancelled";
	assert_string_equal(bisect_revert_verdict(&t, msg, sizeof(msg)), "infra");
	t.state = "done";
	t.build = "pass";
	t.status = NULL;
	assert_string_equal(bisect_revert_verdict(&t, msg, sizeof(msg)), "infra");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_culprit),
		cmocka_unit_test(test_skips),
		cmocka_unit_test(test_upstream_id),
		cmocka_unit_test(test_revert_verdict),
	};
	return cmocka_run_group_tests_name("bisect", tests, NULL, NULL);
}
