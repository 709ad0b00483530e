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

#include <cmocka.h>

#include "rcgate.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_sums),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
