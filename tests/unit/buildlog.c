/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/buildlog.c over the build logs in tests/data/build:
 * the first error of compiler, assembler, linker and modpost, with the
 * file relative to the source tree; the same breakage in 6.1 (absolute
 * paths) and 5.15 (out-of-tree ../ paths, other line) gives one signature,
 * as does a linker error on x86_64 and arm64; a build the machine broke
 * (out of memory, full disk, no cross compiler) is infra even when the
 * starved compiler printed an error first; a clean log has no error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "build/build.h"
#include "testutil.h"

static const char *const src = "/var/cache/rcgate/build/src-6.1.64-rc1";

static int diag_of(const char *name, struct build_diag *d)
{
	size_t len;
	char *log = test_data_read("build", name, &len);
	int rc = buildlog_first_error(log, len, src, d);

	free(log);
	return rc;
}

static void test_table(void **state)
{
	static const struct {
		const char *log;
		enum build_failure kind;
		const char *file, *message;
	} cases[] = {
		{ "gcc-6.1.log", BUILD_FAIL_SOURCE, "fs/ext4/file.c",
		  "error: implicit declaration of function 'ext4_foo'"
		  " [-Werror=implicit-function-declaration]" },
		{ "gcc-5.15.log", BUILD_FAIL_SOURCE, "fs/ext4/file.c",
		  "error: implicit declaration of function 'ext4_foo'"
		  " [-Werror=implicit-function-declaration]" },
		{ "ld-x86.log", BUILD_FAIL_SOURCE, "fs/ext4/file.o",
		  "undefined reference to `iomap_dio_foo'" },
		{ "ld-arm64.log", BUILD_FAIL_SOURCE, "fs/ext4/file.o",
		  "undefined reference to `iomap_dio_foo'" },
		{ "modpost.log", BUILD_FAIL_SOURCE, "fs/ext4/ext4.ko",
		  "modpost: \"iomap_dio_foo\" [fs/ext4/ext4.ko] undefined!" },
		{ "asm.log", BUILD_FAIL_SOURCE, "arch/arm64/kernel/entry.S",
		  "Error: unknown mnemonic `frob' -- `frob x0'" },
		{ "header.log", BUILD_FAIL_SOURCE, "fs/ext4/file.c",
		  "fatal error: linux/iomap2.h: No such file or directory" },
		{ "oom.log", BUILD_FAIL_INFRA, "",
		  "Killed signal terminated program" },
		{ "disk.log", BUILD_FAIL_INFRA, "", "No space left on device" },
		{ "notoolchain.log", BUILD_FAIL_INFRA, "", "gcc: not found" },
	};
	struct build_diag d;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(diag_of(cases[i].log, &d), 1);
		if (d.kind != cases[i].kind || strcmp(d.file, cases[i].file) != 0 ||
		    strcmp(d.message, cases[i].message) != 0)
			fail_msg("%s: got kind %d file '%s' message '%s'",
				 cases[i].log, d.kind, d.file, d.message);
		assert_true(strlen(d.line) > 0);
	}
	assert_int_equal(diag_of("clean.log", &d), 0);
	assert_string_equal(d.message, "");
}

/* One breakage, one signature: whatever the tree, path style or line. */
static void test_same_signature(void **state)
{
	struct build_diag a, b;

	(void)state;
	diag_of("gcc-6.1.log", &a);
	diag_of("gcc-5.15.log", &b);
	assert_string_equal(a.signature_text, b.signature_text);
	assert_null(strstr(a.signature_text, "310"));
	assert_non_null(strstr(a.line, ":310:9:"));
	diag_of("ld-x86.log", &a);
	diag_of("ld-arm64.log", &b);
	assert_string_equal(a.signature_text, b.signature_text);
	assert_null(strstr(a.signature_text, "0x"));
}

/* Truncated and hostile logs: no line end, NULs, a line longer than any
 * buffer. */
/* The compiler a .config names, as kbuild writes it; nothing invented. */
static void test_config_compiler(void **state)
{
	char out[64];

	(void)state;
	build_config_compiler("#\n# Automatically generated file; DO NOT EDIT.\n"
			      "CONFIG_CC_VERSION_TEXT=\"gcc (Debian 12.2.0-14)"
			      " 12.2.0\"\nCONFIG_CC_IS_GCC=y\n", out, sizeof(out));
	assert_string_equal(out, "gcc (Debian 12.2.0-14) 12.2.0");
	build_config_compiler("CONFIG_CC_IS_GCC=y\n", out, sizeof(out));
	assert_string_equal(out, "");
	/* controls and backslashes go; a cut value stays a string */
	build_config_compiler("CONFIG_CC_VERSION_TEXT=\"a\x01" "b\\c\n", out,
			      sizeof(out));
	assert_string_equal(out, "abc");
	build_config_compiler("CONFIG_CC_VERSION_TEXT=\"0123456789\"", out, 5);
	assert_string_equal(out, "0123");
	build_config_compiler("", out, sizeof(out));
	assert_string_equal(out, "");
}

static void test_odd_input(void **state)
{
	struct build_diag d;
	char big[5000];
	const char nul[] = "x.c:1:2: error: a\0b\n";

	(void)state;
	assert_int_equal(buildlog_first_error("", 0, NULL, &d), 0);
	assert_int_equal(buildlog_first_error("../a.c:3:4: error: cut", 23, NULL,
					      &d), 1);
	assert_string_equal(d.file, "a.c");
	assert_string_equal(d.message, "error: cut");
	memset(big, 'a', sizeof(big));
	memcpy(big + 4000, ": error: late", 13);
	assert_true(buildlog_first_error(big, sizeof(big), NULL, &d) >= 0);
	assert_int_equal(buildlog_first_error(nul, sizeof(nul) - 1, NULL, &d), 1);
	assert_string_equal(d.message, "error: a");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_same_signature),
		cmocka_unit_test(test_odd_input),
		cmocka_unit_test(test_config_compiler),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
