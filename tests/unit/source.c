/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/source.c's pure parts: where an announced rc's
 * release tarball and sha256sums.asc are on kernel.org's layout, from its
 * stable-review patch URL (6.1.64-rc1 applies to 6.1.63, 6.1.1-rc1 to
 * 6.1), what is refused, and reading a tarball's hash from a signed
 * sha256sums.asc.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/base.h"
#include "build/build.h"

static void test_urls(void **state)
{
	char t[512], s[512], n[64], err[256];

	(void)state;
	assert_int_equal(source_urls("6.1.64-rc1",
		"https://www.kernel.org/pub/linux/kernel/v6.x/stable-review/patch-6.1.64-rc1.gz",
		t, sizeof(t), s, sizeof(s), n, sizeof(n), err, sizeof(err)), 0);
	assert_string_equal(t, "https://www.kernel.org/pub/linux/kernel/v6.x/linux-6.1.63.tar.xz");
	assert_string_equal(s, "https://www.kernel.org/pub/linux/kernel/v6.x/sha256sums.asc");
	assert_string_equal(n, "linux-6.1.63.tar.xz");
	assert_int_equal(source_urls("6.1.1-rc2",
		"http://127.0.0.1:8000/pub/linux/kernel/v6.x/stable-review/patch-6.1.1-rc2.gz",
		t, sizeof(t), s, sizeof(s), n, sizeof(n), err, sizeof(err)), 0);
	assert_string_equal(n, "linux-6.1.tar.xz");
	/* Another version's patch, a release, another layout: refused. */
	assert_int_equal(source_urls("6.1.64-rc1",
		"https://www.kernel.org/pub/linux/kernel/v6.x/stable-review/patch-6.1.65-rc1.gz",
		t, sizeof(t), s, sizeof(s), n, sizeof(n), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "patch-6.1.64-rc1.gz"));
	assert_int_equal(source_urls("6.1.64",
		"https://www.kernel.org/pub/linux/kernel/v6.x/stable-review/patch-6.1.64.gz",
		t, sizeof(t), s, sizeof(s), n, sizeof(n), err, sizeof(err)), -1);
	assert_int_equal(source_urls("6.1.64-rc1",
		"https://example.org/patch-6.1.64-rc1.gz",
		t, sizeof(t), s, sizeof(s), n, sizeof(n), err, sizeof(err)), -1);
	assert_int_equal(source_urls("6.1.64-rc1",
		"https://www.kernel.org/pub/linux/kernel/v6.x/stable-review/patch-6.1.64-rc1.gz",
		t, 20, s, sizeof(s), n, sizeof(n), err, sizeof(err)), -1);
}

static void test_sums(void **state)
{
	static const char asc[] =
		"-----BEGIN PGP SIGNED MESSAGE-----\n"
		"Hash: SHA256\n\n"
		"0000000000000000000000000000000000000000000000000000000000000000  linux-6.1.63.tar.gz\n"
		"4fdd0172a8c3f41a97e92465b2ac1867e1c10d82d7aeed3d26ee7a5d14df1754  linux-6.1.63.tar.xz\r\n"
		"1111111111111111111111111111111111111111111111111111111111111111  linux-6.1.63.tar.xz.old\n"
		"-----BEGIN PGP SIGNATURE-----\n";
	char sha[65];

	(void)state;
	assert_int_equal(source_sums_find(asc, sizeof(asc) - 1,
					  "linux-6.1.63.tar.xz", sha), 0);
	assert_string_equal(sha, "4fdd0172a8c3f41a97e92465b2ac1867e1c10d82d7aeed3d26ee7a5d14df1754");
	assert_int_equal(source_sums_find(asc, sizeof(asc) - 1,
					  "linux-6.1.62.tar.xz", sha), -1);
	assert_int_equal(source_sums_find(asc, 40, "linux-6.1.63.tar.xz", sha), -1);
}

/* What a git source may name: git, http and https trees with a host; plain
 * branch names. Everything else is refused before git ever runs. */
static void test_git_names(void **state)
{
	static const char *const good_urls[] = {
		"git://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git",
		"https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git",
		"http://127.0.0.1:9418/linux-stable-rc.git",
	};
	static const char *const bad_urls[] = {
		"file:///srv/linux.git", "ssh://host/linux.git", "ext::sh -c touch% /tmp/x",
		"/srv/linux.git", "git://", "git:///path", "https://user@host/x.git",
		"git://host/a b", "git://-oProxyCommand=x/y", "https://host/'x'", "git://host/",
	};
	static const char *const good_branches[] = { "linux-6.1.y", "master", "queue/6.1", "v6.1.64" };
	static const char *const bad_branches[] = { "", "-x", "../x", "a..b", "a b", "x.lock",
		"x/", "a//b", "a@{1}", "a;rm", "$(x)" };
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(good_urls) / sizeof(good_urls[0]); i++)
		assert_int_equal(gitsrc_url_check(good_urls[i], err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(bad_urls) / sizeof(bad_urls[0]); i++)
		if (gitsrc_url_check(bad_urls[i], err, sizeof(err)) == 0)
			fail_msg("accepted git URL %s", bad_urls[i]);
	for (size_t i = 0; i < sizeof(good_branches) / sizeof(good_branches[0]); i++)
		assert_int_equal(gitsrc_branch_check(good_branches[i], err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(bad_branches) / sizeof(bad_branches[0]); i++)
		if (gitsrc_branch_check(bad_branches[i], err, sizeof(err)) == 0)
			fail_msg("accepted branch '%s'", bad_branches[i]);
	assert_true(gitsrc_is_commit("936e114a245b6e38e0dbf706a67e7611fc993da1"));
	assert_false(gitsrc_is_commit("936E114A245B6E38E0DBF706A67E7611FC993DA1"));
	assert_false(gitsrc_is_commit("936e114a245b"));
}

/* The version a Makefile says: the rc's, a release's, X.Y's. */
static void test_makefile_version(void **state)
{
	char v[64];
	static const struct { const char *text, *want; } cases[] = {
		{ "# SPDX\nVERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 64\nEXTRAVERSION = -rc1\nNAME = Curry Ramen\n", "6.1.64-rc1" },
		{ "VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 192\nEXTRAVERSION =\n", "6.1.192" },
		{ "VERSION = 6\nPATCHLEVEL = 7\nSUBLEVEL = 0\nEXTRAVERSION = -rc3\n", "6.7-rc3" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(gitsrc_makefile_version_text(cases[i].text, v,
							      sizeof(v)), 0);
		assert_string_equal(v, cases[i].want);
	}
	assert_int_equal(gitsrc_makefile_version_text("all:\n", v, sizeof(v)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_sums),
		cmocka_unit_test(test_git_names),
		cmocka_unit_test(test_makefile_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
