/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/kcidb.c: the tree URL mapping, the origin, and a
 * submission's shape (the live export is checked against the v5.3 rules
 * with python3-jsonschema in tests/integration/cycle2023.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "store/store.h"
#include "report/report.h"

static void test_repository_url(void **state)
{
	static const struct {
		const char *tree, *url;	/* url NULL: omitted */
	} cases[] = {
		{ "git://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git",
		  "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git" },
		{ "http://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git",
		  "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git" },
		{ "https://example.org/linux.git", "https://example.org/linux.git" },
		{ "git://example.org/linux.git", NULL },
		{ "http://example.org/linux.git", NULL },
		{ "", NULL },
		{ NULL, NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[256] = "";
		int rc = kcidb_repository_url(cases[i].tree, out, sizeof(out));

		if (cases[i].url == NULL) {
			assert_int_equal(rc, -1);
		} else {
			assert_int_equal(rc, 0);
			assert_string_equal(out, cases[i].url);
		}
	}
}

static void test_origin(void **state)
{
	char out[64];

	(void)state;
	kcidb_origin("rcgate", out, sizeof(out));
	assert_string_equal(out, "rcgate");
	kcidb_origin("Linaro LKFT-2", out, sizeof(out));
	assert_string_equal(out, "linaro_lkft_2");
	kcidb_origin("", out, sizeof(out));
	assert_string_equal(out, "rcgate");
}

/* A release (not an rc), no public URL: tree_name "stable", no log_url, a
 * test path that starts with the suite, the job's start and the test's own
 * duration, and an incident only for the regression's failing test. */
static void test_submission(void **state)
{
	const struct kcidb_result results[] = {
		{ "ext4.write_seq_512", "fail", 1500 },
		{ "ext4.pwrite_seq_512", "pass", -1 },
	};
	const struct kcidb_job job = { 7, "x86_64", "odirect", "done", "tcg",
				       "2023-11-25T10:00:00Z", results, 2 };
	const struct kcidb_regression reg = { 3, "ext4.write_seq_512", "x86_64", 0, NULL, NULL, NULL };
	const struct kcidb_release rel = { "6.1.64", 0,
		"git://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git",
		"linux-6.1.y", NULL, "" };
	json_t *s = kcidb_submission("rcgate", &rel, &job, 1, &reg, 1), *t;

	(void)state;
	assert_non_null(s);
	assert_string_equal(json_string_value(json_object_get(json_array_get(
		json_object_get(s, "checkouts"), 0), "tree_name")), "stable");
	assert_null(json_object_get(json_array_get(json_object_get(s, "checkouts"), 0),
				    "message_id"));
	t = json_array_get(json_object_get(s, "tests"), 0);
	assert_string_equal(json_string_value(json_object_get(t, "path")),
			    "odirect.ext4.write_seq_512");
	assert_string_equal(json_string_value(json_object_get(t, "start_time")),
			    "2023-11-25T10:00:00Z");
	assert_true(json_real_value(json_object_get(t, "duration")) == 1.5);
	assert_null(json_object_get(t, "log_url"));
	assert_null(json_object_get(json_array_get(json_object_get(s, "tests"), 1),
				    "duration"));
	assert_int_equal(json_array_size(json_object_get(s, "incidents")), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(
		json_object_get(s, "incidents"), 0), "test_id")),
		"rcgate:job7-ext4.write_seq_512");
	json_decref(s);
}

/* A kernel that does not build: the build's status is FAIL, build.kernel
 * is not a test, and the regression's incident names the build. */
static void test_build_failure(void **state)
{
	const struct kcidb_result results[] = { { "build.kernel", "fail", 90000 } };
	const struct kcidb_result ok[] = { { "build.kernel", "pass", 80000 },
					   { "ext4.write_seq_512", "pass", 10 } };
	const struct kcidb_job jobs[] = {
		{ 8, "arm64", "odirect", "done", NULL, "2023-11-25T10:00:00Z",
		  results, 1 },
		{ 9, "x86_64", "odirect", "done", "tcg", "2023-11-25T10:00:00Z",
		  ok, 2 },
	};
	const struct kcidb_regression reg = { 4, "build.kernel", "arm64", 0, NULL, NULL, NULL };
	const struct kcidb_release rel = { "6.1.193-rc2", 2, NULL, NULL, NULL, "" };
	json_t *s = kcidb_submission("rcgate", &rel, jobs, 2, &reg, 1);
	json_t *builds = json_object_get(s, "builds"), *tests, *inc;

	(void)state;
	assert_string_equal(json_string_value(json_object_get(json_array_get(
		builds, 0), "status")), "FAIL");
	assert_string_equal(json_string_value(json_object_get(json_array_get(
		builds, 1), "status")), "PASS");
	tests = json_object_get(s, "tests");
	assert_int_equal(json_array_size(tests), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(
		tests, 0), "path")), "odirect.ext4.write_seq_512");
	inc = json_array_get(json_object_get(s, "incidents"), 0);
	assert_non_null(inc);
	assert_string_equal(json_string_value(json_object_get(inc, "build_id")),
			    json_string_value(json_object_get(json_array_get(
				    builds, 0), "id")));
	assert_null(json_object_get(inc, "test_id"));
	assert_int_equal(json_array_size(json_object_get(s, "incidents")), 1);
	json_decref(s);
}

/* A bisected regression: its issue says the code is the culprit, names
 * the first bad commit and its upstream, and is version 2, as are its
 * incidents (KCIDB triages on an issue's highest version); with a public
 * URL the report is the regression's page. */
static void test_culprit(void **state)
{
	const struct kcidb_result results[] = { { "ext4.write_seq_512", "fail", 1500 } };
	const struct kcidb_job job = { 7, "x86_64", "odirect", "done", "tcg",
				       "2023-11-25T10:00:00Z", results, 1 };
	const struct kcidb_regression regs[] = {
		{ 3, "ext4.write_seq_512", "x86_64", 0,
		  "1b1c0e3b1d2c7d7b2a1f0e9d8c7b6a5f4e3d2c1b",
		  "ext4: properly sync file size update after O_DIRECT write",
		  "91562895f8030cb9a0470b1db49de79346a69f91" },
		{ 5, "ext4.append_512", "x86_64", 0, NULL, NULL, NULL },
	};
	const struct kcidb_release rel = { "6.1.64-rc1", 1, NULL, NULL, NULL,
					   "https://rcgate.example.org" };
	json_t *s = kcidb_submission("rcgate", &rel, &job, 1, regs, 2), *i, *n;

	(void)state;
	i = json_array_get(json_object_get(s, "issues"), 0);
	assert_int_equal(json_integer_value(json_object_get(i, "version")), 2);
	assert_true(json_is_true(json_object_get(json_object_get(i, "culprit"), "code")));
	assert_true(json_is_false(json_object_get(json_object_get(i, "culprit"), "harness")));
	assert_non_null(strstr(json_string_value(json_object_get(i, "comment")),
			       "first bad commit 1b1c0e3b1d2c"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(i, "misc"),
			    "culprit_upstream")), "91562895f8030cb9a0470b1db49de79346a69f91");
	assert_string_equal(json_string_value(json_object_get(i, "report_url")),
			    "https://rcgate.example.org/api/v1/regressions/3");
	n = json_array_get(json_object_get(s, "incidents"), 0);
	assert_int_equal(json_integer_value(json_object_get(n, "issue_version")), 2);
	/* Not bisected: version 1, no culprit. */
	i = json_array_get(json_object_get(s, "issues"), 1);
	assert_int_equal(json_integer_value(json_object_get(i, "version")), 1);
	assert_null(json_object_get(i, "culprit"));
	json_decref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repository_url),
		cmocka_unit_test(test_origin),
		cmocka_unit_test(test_submission),
		cmocka_unit_test(test_build_failure),
		cmocka_unit_test(test_culprit),
	};
	return cmocka_run_group_tests_name("kcidb", tests, NULL, NULL);
}
