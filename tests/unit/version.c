/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for version.c: the version strings stable releases use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"

static const struct {
	const char *in;
	const char *branch;
	long patch, rc;
} good[] = {
	{ "6.1.64-rc1", "6.1", 64, 1 },
	{ "6.1.64", "6.1", 64, 0 },
	{ "5.15.140-rc2", "5.15", 140, 2 },
	{ "5.10.202-rc1", "5.10", 202, 1 },
	{ "6.7-rc3", "6.7", 0, 3 },
	{ "6.1.192", "6.1", 192, 0 },
};

static const char *const bad[] = {
	"", "6", "6.", "6.1.", "v6.1.64", "6.1.64-rc", "6.1.64-rc0",
	"6.1.64-rc1 ", "6.1.64;rm -rf /", "6.01.1", "6.1.64-rc1-extra",
	"6.1.64.1", "-1.2.3", "6.1.99999999999999999999",
	"6.1.64-rc1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
};

static void test_good(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct kversion kv;
		char err[128];

		assert_int_equal(kversion_parse(good[i].in, &kv, err, sizeof(err)), 0);
		assert_string_equal(kv.branch, good[i].branch);
		assert_int_equal(kv.patch, good[i].patch);
		assert_int_equal(kv.rc, good[i].rc);
	}
}

static void test_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kversion kv;
		char err[128] = "";

		if (kversion_parse(bad[i], &kv, err, sizeof(err)) != -1)
			fail_msg("'%s' was accepted", bad[i]);
		assert_non_null(strstr(err, "is not like 6.1.64"));
	}
}

/* Which version a running kernel says it is, and whether that is the
 * release's: Debian names it in uname -v only. */
static void test_running(void **state)
{
	static const struct {
		const char *release, *uts, *running, *version;
		int matches;
	} cases[] = {
		{ "6.1.0-57-cloud-amd64",
		  "#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-10-01)",
		  "6.1.192", "6.1.192", 1 },
		{ "6.1.0-57-cloud-amd64",
		  "#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-10-01)",
		  "6.1.192", "6.1.64-rc1", 0 },
		{ "6.1.0-57-armmp", "#1 SMP Debian 6.1.192+deb12 (2026-10-01)",
		  "6.1.192", "6.1.192-rc2", 1 },
		{ "6.1.64-rc1", "#1 SMP Sat Nov 25 10:00:00 UTC 2023", "6.1.64",
		  "6.1.64-rc1", 1 },
		{ "6.1.192-rcgate-bad", "#1 SMP", "6.1.192", "6.1.64-rc1", 0 },
		{ "6.7", NULL, "6.7.0", "6.7-rc3", 1 },
		{ "unknown", "unknown", NULL, "6.1.64", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char running[32] = "", err[128];
		struct kversion kv;
		int rc = kversion_running(cases[i].release, cases[i].uts, running,
					  sizeof(running));

		if (cases[i].running == NULL) {
			assert_int_equal(rc, -1);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_string_equal(running, cases[i].running);
		assert_int_equal(kversion_parse(cases[i].version, &kv, err,
						sizeof(err)), 0);
		if (kversion_matches(&kv, running) != cases[i].matches)
			fail_msg("case %zu: %s as %s", i, running, cases[i].version);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_running),
	};
	return cmocka_run_group_tests_name("version", tests, NULL, NULL);
}
