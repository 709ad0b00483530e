/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/bisect.c: for every branch length up to 64 and
 * every position of the first bad commit, the bisection names it within
 * ceil(log2(n)) steps; skipped commits are stepped around and, when they
 * hide the answer, the answer is the range (never a wrong commit); and
 * the upstream id is read from the forms stable backports use. Rounds of
 * k steps at once (bisect_round): k = 1 is the old rule step for step
 * (kept below as the reference), k = 2 names every culprit of 372
 * commits within 6 rounds, never tests a commit twice or outside what is
 * left, and skips next to the culprit give the range, never a guess.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
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
	size_t next, count;
	int steps = 0;

	v[n - 1] = BISECT_BAD;
	while ((*rc = bisect_round(v, n, 1, &next, &count, lo, hi)) ==
	       BISECT_STEP) {
		assert_int_equal(count, 1);
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
	size_t lo, hi, cnt;
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
	assert_int_equal(bisect_round(NULL, 0, 1, &lo, &cnt, &lo, &hi),
			 BISECT_EMPTY);
	assert_int_equal(run(1, 0, NULL, &rc, &lo, &hi), 0);
	assert_int_equal(rc, BISECT_FOUND);
}

/* The rule before rounds existed (bisect.c until cdcad16), the reference
 * k = 1 must follow step for step: the untested commit nearest the middle
 * of what is left, ties to the older one. */
static int reference_next(const enum bisect_verdict *v, size_t n,
			  size_t *next)
{
	size_t hi = n - 1, best = SIZE_MAX, bestd = SIZE_MAX;
	long lo = -1;

	for (size_t i = 0; i < n; i++)
		if (v[i] == BISECT_BAD) {
			hi = i;
			break;
		}
	for (size_t i = 0; i < hi; i++)
		if (v[i] == BISECT_GOOD)
			lo = (long)i;
	if ((long)hi - lo == 1)
		return BISECT_FOUND;
	for (size_t i = (size_t)(lo + 1); i < hi; i++) {
		size_t mid2 = (size_t)(lo + 1) + hi - 1;
		size_t d = 2 * i > mid2 ? 2 * i - mid2 : mid2 - 2 * i;

		if (v[i] == BISECT_UNTESTED && d < bestd) {
			best = i;
			bestd = d;
		}
	}
	if (best == SIZE_MAX)
		return BISECT_AMBIGUOUS;
	*next = best;
	return BISECT_STEP;
}

#define MAXN 512

/* A whole bisection of n commits (first bad one: culprit) in rounds of k
 * steps, each round judged at once (skip[i]: commit i is a skip); checks
 * every round: 1..k commits, oldest first, untested, inside what is left.
 * Returns the rounds, the outcome in *rc, the range in *lo, *hi and the
 * steps taken in *steps. */
static int run_rounds(size_t n, size_t culprit, size_t k, const int *skip,
		      int *rc, size_t *lo, size_t *hi, int *steps)
{
	enum bisect_verdict *v = calloc(n, sizeof(*v));
	size_t next[8], count;
	int rounds = 0;

	assert_non_null(v);
	assert_true(k <= 8);
	v[n - 1] = BISECT_BAD;
	*steps = 0;
	while ((*rc = bisect_round(v, n, k, next, &count, lo, hi)) == BISECT_STEP) {
		assert_true(count >= 1 && count <= k);
		for (size_t j = 0; j < count; j++) {
			assert_true(next[j] >= *lo && next[j] < *hi);
			assert_int_equal(v[next[j]], BISECT_UNTESTED);
			if (j > 0)
				assert_true(next[j - 1] < next[j]);
		}
		for (size_t j = 0; j < count; j++)
			v[next[j]] = skip != NULL && skip[next[j]] ? BISECT_SKIP
				: next[j] >= culprit ? BISECT_BAD : BISECT_GOOD;
		*steps += (int)count;
		rounds++;
		assert_true(rounds <= (int)n);
	}
	free(v);
	return rounds;
}

/* The least r with (k + 1)^r >= n: rounds of k that split in k + 1. */
static int ceil_log(size_t n, size_t k)
{
	size_t p = 1;
	int r = 0;

	while (p < n) {
		p *= k + 1;
		r++;
	}
	return r;
}

/* k = 1 is the old rule: the same commit at every step, with and without
 * skips. */
static void test_k1_is_the_old_rule(void **state)
{
	static const int every[] = { 0, 2, 3, 5 };	/* skip every ... */

	(void)state;
	for (size_t n = 1; n <= 80; n++)
		for (size_t c = 0; c < n; c++)
			for (size_t e = 0; e < sizeof(every) / sizeof(every[0]); e++) {
				enum bisect_verdict a[80] = { 0 }, b[80] = { 0 };
				size_t na = 0, nb = 0, cnt, lo, hi;
				int ra, rb;

				a[n - 1] = b[n - 1] = BISECT_BAD;
				for (;;) {
					ra = reference_next(a, n, &na);
					rb = bisect_round(b, n, 1, &nb, &cnt, &lo, &hi);
					assert_int_equal(ra, rb);
					if (ra != BISECT_STEP)
						break;
					assert_int_equal(cnt, 1);
					if (na != nb)
						fail_msg("n=%zu culprit=%zu skip every %d: old"
							 " %zu, round %zu", n, c, every[e], na,
							 nb);
					a[na] = b[na] = every[e] && na % (size_t)every[e] == 1
						? BISECT_SKIP : na >= c ? BISECT_BAD
						: BISECT_GOOD;
				}
			}
}

/* k = 2 on every shape: every culprit of n = 1..64 (1, 2, 3, 4, 5
 * among them) and of 372, found within ceil(log3(n)) rounds; 372 within
 * 6; k = 3 within ceil(log4(n)). */
static void test_rounds_every_culprit(void **state)
{
	static const size_t sizes[] = { 1, 2, 3, 4, 5, 372 };
	size_t lo, hi;
	int rc, steps, rounds;

	(void)state;
	for (size_t k = 2; k <= 3; k++)
		for (size_t n = 1; n <= 64; n++)
			for (size_t c = 0; c < n; c++) {
				rounds = run_rounds(n, c, k, NULL, &rc, &lo, &hi,
						    &steps);
				assert_int_equal(rc, BISECT_FOUND);
				assert_int_equal(lo, c);
				assert_int_equal(hi, c);
				if (rounds > ceil_log(n, k))
					fail_msg("k=%zu n=%zu culprit=%zu: %d rounds"
						 " > %d", k, n, c, rounds,
						 ceil_log(n, k));
			}
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		int most = 0;

		for (size_t c = 0; c < n; c++) {
			rounds = run_rounds(n, c, 2, NULL, &rc, &lo, &hi, &steps);
			assert_int_equal(rc, BISECT_FOUND);
			assert_int_equal(hi, c);
			assert_true(steps <= 2 * rounds);
			most = rounds > most ? rounds : most;
		}
		assert_true(most <= ceil_log(n, 2));
	}
	/* 372: first, middle and last culprit, 6 rounds at most (k = 1
	 * takes 9); n = 1 answers without a step, n = 2 in one step. */
	assert_true(run_rounds(372, 0, 2, NULL, &rc, &lo, &hi, &steps) <= 6);
	assert_int_equal(hi, 0);
	assert_true(run_rounds(372, 185, 2, NULL, &rc, &lo, &hi, &steps) <= 6);
	assert_int_equal(hi, 185);
	assert_true(run_rounds(372, 371, 2, NULL, &rc, &lo, &hi, &steps) <= 6);
	assert_int_equal(hi, 371);
	assert_int_equal(run_rounds(372, 185, 1, NULL, &rc, &lo, &hi, &steps), 9);
	assert_int_equal(run_rounds(1, 0, 2, NULL, &rc, &lo, &hi, &steps), 0);
	assert_int_equal(rc, BISECT_FOUND);
	assert_int_equal(run_rounds(2, 1, 2, NULL, &rc, &lo, &hi, &steps), 1);
	assert_int_equal(steps, 1);
	assert_int_equal(bisect_round(NULL, 0, 2, NULL, &lo, &lo, &hi), BISECT_EMPTY);
}

/* A round's split: near-equal parts of what is left. Each case: the
 * verdicts ('.' untested, 'g', 'b', 's'), k, and the round. */
static void test_round_split(void **state)
{
	static const struct {
		const char *v;
		size_t k, count, next[2], lo, hi;
	} cases[] = {
		/* 5 (the integration test's branch): 1 and 2 leave 2, 1, 2 */
		{ "....b", 2, 2, { 1, 2 }, 0, 4 },
		/* 3: both commits that can be tested, in one round */
		{ "..b", 2, 2, { 0, 1 }, 0, 2 },
		/* one untested left between a good and a bad: one step */
		{ "g.sb.", 2, 1, { 1, 0 }, 1, 3 },
		/* k = 1: the middle, ties to the older commit */
		{ "....b", 1, 1, { 1, 0 }, 0, 4 },
		/* a skip at a point: the untested one nearest it */
		{ "g..s....b", 2, 2, { 2, 5 }, 1, 8 },
	};
	enum bisect_verdict v[MAXN] = { 0 };
	size_t next[2], count, lo, hi;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].v);

		for (size_t j = 0; j < n; j++)
			v[j] = cases[i].v[j] == 'g' ? BISECT_GOOD
			     : cases[i].v[j] == 'b' ? BISECT_BAD
			     : cases[i].v[j] == 's' ? BISECT_SKIP : BISECT_UNTESTED;
		assert_int_equal(bisect_round(v, n, cases[i].k, next, &count,
					      &lo, &hi), BISECT_STEP);
		assert_int_equal(count, cases[i].count);
		for (size_t j = 0; j < count; j++)
			assert_int_equal(next[j], cases[i].next[j]);
		assert_int_equal(lo, cases[i].lo);
		assert_int_equal(hi, cases[i].hi);
	}
	/* 372 candidates: 123 and 247 leave 124, 124 and 124. */
	memset(v, 0, sizeof(v));
	v[371] = BISECT_BAD;
	assert_int_equal(bisect_round(v, 372, 2, next, &count, &lo, &hi), BISECT_STEP);
	assert_int_equal(count, 2);
	assert_int_equal(next[0], 123);
	assert_int_equal(next[1], 247);
}

/* Skips next to the culprit (before it, after it, both), for k = 2 and
 * every culprit of 64 and 372: FOUND is the culprit; AMBIGUOUS is a range
 * that holds it, every commit before its end skipped. */
static void test_rounds_skips(void **state)
{
	static const size_t sizes[] = { 5, 16, 64, 372 };
	static int skip[MAXN];
	size_t lo, hi;
	int rc, steps;

	(void)state;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];

		for (size_t c = 0; c < n; c++)
			for (int shape = 0; shape < 3; shape++) {
				memset(skip, 0, sizeof(skip));
				if (shape != 1 && c > 0)
					skip[c - 1] = 1;
				if (shape != 0 && c + 1 < n - 1)
					skip[c + 1] = 1;
				run_rounds(n, c, 2, skip, &rc, &lo, &hi, &steps);
				if (rc == BISECT_FOUND) {
					assert_int_equal(hi, c);
					continue;
				}
				assert_int_equal(rc, BISECT_AMBIGUOUS);
				assert_true(lo <= c && c <= hi && hi < n);
				for (size_t i = lo; i < hi; i++)
					assert_true(skip[i] || i == c);
			}
	}
	/* The culprit's older neighbour skipped: [c - 1, c], never c - 1
	 * or c alone; its newer one only costs steps. */
	memset(skip, 0, sizeof(skip));
	skip[99] = 1;
	run_rounds(372, 100, 2, skip, &rc, &lo, &hi, &steps);
	assert_int_equal(rc, BISECT_AMBIGUOUS);
	assert_int_equal(lo, 99);
	assert_int_equal(hi, 100);
	memset(skip, 0, sizeof(skip));
	skip[101] = 1;
	run_rounds(372, 100, 2, skip, &rc, &lo, &hi, &steps);
	assert_int_equal(rc, BISECT_FOUND);
	assert_int_equal(hi, 100);
	/* Everything between the ends skipped: one range, 9 steps in
	 * rounds of two. */
	memset(skip, 0, sizeof(skip));
	for (size_t i = 0; i < 9; i++)
		skip[i] = 1;
	assert_int_equal(run_rounds(10, 4, 2, skip, &rc, &lo, &hi, &steps), 5);
	assert_int_equal(steps, 9);
	assert_int_equal(rc, BISECT_AMBIGUOUS);
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 9);
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

/* k ([bisect] parallel), the warm worktrees, the commits left, and
 * what f (bisect_width, bisect_seeds) must answer. */
struct round_case {
	size_t k, warm, m, want;
};

static void check_rounds(size_t (*f)(size_t, size_t, size_t),
			 const struct round_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t got = f(c[i].k, c[i].warm, c[i].m);

		if (got != c[i].want)
			print_error("k %zu, warm %zu, m %zu: %zu, want %zu\n",
				    c[i].k, c[i].warm, c[i].m, got, c[i].want);
		assert_int_equal(got, c[i].want);
	}
}

/* A round's width: k where it pays, else the warm worktrees' count.
 * Rounds to one commit of m: alone ceil(log2 m), k at once
 * ceil(log_{k+1} m). */
static void test_width(void **state)
{
	static const struct round_case cases[] = {
		{ 1, 0, 372, 1 }, { 1, 5, 372, 1 },	/* 1 stays 1 */
		{ 2, 2, 5, 2 }, { 2, 3, 5, 2 },		/* enough warm */
		{ 2, 0, 5, 2 },				/* none warm */
		{ 2, 1, 5, 1 }, { 2, 1, 3, 1 },		/* 3 vs 2, 2 vs 1 */
		{ 2, 1, 8, 1 },				/* 3 vs 2 */
		{ 2, 1, 9, 2 }, { 2, 1, 372, 2 },	/* 4 vs 2, 9 vs 6 */
		{ 4, 2, 5, 4 },				/* 3 vs 1 */
		{ 3, 2, 4, 2 },				/* 2 vs 1: the 2 */
		{ 2, 1, 2, 1 },				/* one step left */
	};

	(void)state;
	check_rounds(bisect_width, cases, sizeof(cases) / sizeof(cases[0]));
}

/* Warm worktrees to copy before a round: where one is warm and k at
 * once take fewer rounds than the warm ones alone. */
static void test_seeds(void **state)
{
	static const struct round_case cases[] = {
		{ 1, 1, 372, 0 },			/* one at a time */
		{ 2, 0, 372, 0 },			/* nothing to copy */
		{ 2, 2, 372, 0 }, { 3, 4, 9, 0 },	/* enough warm */
		{ 2, 1, 2, 0 },				/* 1 round either way */
		{ 2, 1, 3, 1 }, { 2, 1, 5, 1 },		/* 2 vs 1, 3 vs 2 */
		{ 2, 1, 372, 1 },			/* 9 vs 6 */
		{ 4, 1, 5, 3 },				/* 3 vs 1 */
		{ 3, 2, 4, 1 }, { 3, 2, 3, 0 },		/* 2 vs 1; 1 vs 1 */
	};

	(void)state;
	check_rounds(bisect_seeds, cases, sizeof(cases) / sizeof(cases[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_width),
		cmocka_unit_test(test_seeds),
		cmocka_unit_test(test_every_culprit),
		cmocka_unit_test(test_skips),
		cmocka_unit_test(test_k1_is_the_old_rule),
		cmocka_unit_test(test_rounds_every_culprit),
		cmocka_unit_test(test_round_split),
		cmocka_unit_test(test_rounds_skips),
		cmocka_unit_test(test_upstream_id),
		cmocka_unit_test(test_revert_verdict),
	};
	return cmocka_run_group_tests_name("bisect", tests, NULL, NULL);
}
