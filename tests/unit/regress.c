/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for regress.c: classification, signatures, the gate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "review/review.h"

static const struct {
	struct test_runs in;
	int reruns;
	enum test_class want;
	const char *why;
} classify_cases[] = {
	{ { 1, 0, BASE_PASS }, 1, CLASS_PASS, "passes" },
	{ { 2, 0, BASE_NONE }, 1, CLASS_PASS, "passes twice, no baseline" },
	{ { 1, 1, BASE_PASS }, 1, CLASS_RERUN, "first failure is rerun" },
	{ { 1, 1, BASE_PASS }, 0, CLASS_REGRESSION, "no reruns configured" },
	{ { 2, 2, BASE_PASS }, 1, CLASS_REGRESSION, "reproduced" },
	{ { 2, 1, BASE_PASS }, 1, CLASS_FLAKY, "flips between runs" },
	{ { 3, 2, BASE_PASS }, 2, CLASS_FLAKY, "flips once in three" },
	{ { 1, 1, BASE_FAIL }, 1, CLASS_KNOWN_FAILURE, "fails on baseline too" },
	{ { 2, 1, BASE_FAIL }, 1, CLASS_KNOWN_FAILURE, "flaky but fails on baseline" },
	{ { 2, 2, BASE_NONE }, 1, CLASS_REGRESSION, "no baseline result: report" },
	{ { 1, 1, BASE_NONE }, 2, CLASS_RERUN, "two reruns wanted" },
	{ { 0, 0, BASE_PASS }, 1, CLASS_PASS, "skipped only" },
};

static void test_classify(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(classify_cases) / sizeof(classify_cases[0]); i++) {
		enum test_class got = regress_classify(&classify_cases[i].in,
						       classify_cases[i].reruns);

		if (got != classify_cases[i].want)
			fail_msg("%s: got %s, want %s", classify_cases[i].why,
				 regress_class_name(got),
				 regress_class_name(classify_cases[i].want));
	}
}

static void test_normalize(void **state)
{
	static const char *const cases[][2] = {
		{ "write 2 of 8 (512 bytes): position 512, expected 1024",
		  "write 2 of 8 (512 bytes): position 512, expected 1024" },
		{ "buffer wrong at 0 have 62 expected 61", "buffer wrong at 0 have 62 expected 61" },
		{ "[   12.345678] oops at 0xffffffff81234567", "oops at N" },
		{ "took 123456 us\n  then   stopped", "took N us then stopped" },
		{ "", "" },
	};
	char out[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		regress_normalize_diag(cases[i][0], out, sizeof(out));
		assert_string_equal(out, cases[i][1]);
	}
	regress_normalize_diag(NULL, out, sizeof(out));
	assert_string_equal(out, "");
	/* Never writes past len. */
	regress_normalize_diag("abcdefgh", out, 4);
	assert_string_equal(out, "abc");
}

static void test_signature(void **state)
{
	char a[65], b[65], c[65], d[65];

	(void)state;
	/* The same failure on two rcs (different timestamps) links. */
	regress_signature("ext4.write_seq_512", "x86_64",
			  "[ 1.0] position 512, expected 1024", a);
	regress_signature("ext4.write_seq_512", "x86_64",
			  "[ 99.5] position  512, expected 1024", b);
	assert_string_equal(a, b);
	/* Another target or another failure does not. */
	regress_signature("ext4.write_seq_512", "i386",
			  "position 512, expected 1024", c);
	regress_signature("ext4.write_seq_512", "x86_64",
			  "position 0, expected 1024", d);
	assert_string_not_equal(a, c);
	assert_string_not_equal(a, d);
	assert_int_equal(strlen(a), 64);
}

static void test_fs(void **state)
{
	char fs[16];

	(void)state;
	regress_test_fs("ext4.write_seq_512", fs, sizeof(fs));
	assert_string_equal(fs, "ext4");
	regress_test_fs("nodot", fs, sizeof(fs));
	assert_string_equal(fs, "");
	regress_test_fs("averyveryverylongfsname.x", fs, 5);
	assert_string_equal(fs, "aver");	/* cut to fit, NUL kept */
}

static void test_gate(void **state)
{
	static const struct {
		struct gate_input in;
		enum gate_verdict want;
	} cases[] = {
		{ { 4, 0, 0, 0 }, GATE_PASS },
		{ { 4, 0, 0, 1 }, GATE_BLOCK },
		{ { 4, 2, 0, 1 }, GATE_BLOCK },	/* a regression blocks at once */
		{ { 4, 1, 0, 0 }, GATE_PENDING },
		{ { 0, 0, 0, 0 }, GATE_PENDING },	/* nothing tested yet */
		{ { 4, 0, 1, 0 }, GATE_INCOMPLETE },	/* infra never passes silently */
		{ { 4, 0, 1, 2 }, GATE_BLOCK },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(regress_gate_name(regress_gate(&cases[i].in)),
				    regress_gate_name(cases[i].want));
}

/* The two rules that used to live in SQL: when a failure is confirmed,
 * and which release fixes a regression seen on another. */
static void test_confirmed_and_fixes(void **state)
{
	static const struct {
		const char *seen_on, *version;
		int fixes;
	} fixes[] = {
		{ "6.1.64-rc1", "6.1.64-rc2", 1 },
		{ "6.1.64-rc1", "6.1.64", 1 },
		{ "6.1.64-rc1", "6.1.65-rc1", 1 },
		{ "6.1.64", "6.1.64-rc3", 0 },	/* the release came after */
		{ "6.1.64-rc2", "6.1.64-rc1", 0 },
		{ "6.1.64-rc1", "6.1.64-rc1", 0 },
		{ "6.1.63", "6.1.64-rc1", 1 },
		{ "6.1.64-rc1", "6.1.9", 0 },	/* numbers, not strings */
		{ "6.1.9", "6.1.64-rc1", 1 },
		{ "5.15.140-rc1", "6.1.66-rc1", 0 },	/* another branch */
		{ "not a version", "6.1.64", 0 },
	};
	struct test_runs one = { 1, 1, BASE_PASS }, two = { 2, 2, BASE_PASS },
		flaky = { 2, 1, BASE_PASS };

	(void)state;
	assert_false(regress_confirmed(&one));
	assert_true(regress_confirmed(&two));
	assert_false(regress_confirmed(&flaky));
	for (size_t i = 0; i < sizeof(fixes) / sizeof(fixes[0]); i++) {
		if (regress_fixes(fixes[i].seen_on, fixes[i].version) != fixes[i].fixes)
			fail_msg("%s then %s: want %d", fixes[i].seen_on,
				 fixes[i].version, fixes[i].fixes);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_signature),
		cmocka_unit_test(test_fs),
		cmocka_unit_test(test_gate),
		cmocka_unit_test(test_confirmed_and_fixes),
	};
	return cmocka_run_group_tests_name("regress", tests, NULL, NULL);
}
