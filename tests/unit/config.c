/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for config.c: defaults, parsing, errors that name the line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "testutil.h"

static void test_defaults(void **state)
{
	struct config c;
	char *uri;

	(void)state;
	config_defaults(&c);
	assert_string_equal(c.state_dir, "/var/lib/rcgate");
	assert_int_equal(c.port, 8080);
	assert_int_equal(c.workers, 2);
	assert_string_equal(c.accel, "auto");
	assert_int_equal(c.attempts, 2);
	assert_string_equal(c.kernel_args, "cryptomgr.notests");
	assert_string_equal(c.suite, "all");
	assert_int_equal(c.guest_vcpus, 1);
	uri = config_libvirt_uri(&c);
	assert_string_equal(uri, "qemu:///embed?root=/var/lib/rcgate/libvirt");
	free(uri);
	config_free(&c);
}

static void test_golden_file(void **state)
{
	struct config c;
	char err[256], path[4096];
	char *uri;

	(void)state;
	test_data_path(path, sizeof(path), "config", "full.conf");
	config_defaults(&c);
	assert_int_equal(config_load(&c, path, err, sizeof(err)), 0);
	assert_string_equal(c.state_dir, "/tmp/rcgate state");
	assert_string_equal(c.listen, "127.0.0.1");
	assert_int_equal(c.port, 0);
	assert_string_equal(c.log_level, "debug");
	assert_int_equal(c.workers, 3);
	assert_string_equal(c.accel, "tcg");
	assert_int_equal(c.job_timeout, 120);
	uri = config_libvirt_uri(&c);
	assert_string_equal(uri, "qemu:///system");
	free(uri);
	config_free(&c);
}

#define RPT16 "xxxxxxxxxxxxxxxx"
#define RPT256 RPT16 RPT16 RPT16 RPT16 RPT16 RPT16 RPT16 RPT16 \
	RPT16 RPT16 RPT16 RPT16 RPT16 RPT16 RPT16 RPT16

struct bad_case {
	const char *text;
	const char *error;	/* substring the message must contain */
};

static const struct bad_case bad_cases[] = {
	{ "[daemon]\nnosuch = 1\n", "t:2: unknown directive 'nosuch' in [daemon]" },
	{ "port = 80\n", "t:1: unknown directive 'port' in []" },
	{ "[daemon]\nport = eighty\n", "t:2: port: 'eighty' is not a number in 0..65535" },
	{ "[daemon]\nport = 70000\n", "t:2: port" },
	{ "[jobs]\nworkers = 0\n", "workers: '0' is not a number in 1..64" },
	{ "[jobs]\naccel = hvf\n", "t:2: accel: 'hvf' is not one of the allowed values" },
	{ "[jobs]\nvcpus = 9\n", "t:2: vcpus: '9' is not a number in 1..8" },
	{ "[jobs]\nsuite = quick\n", "t:2: suite: 'quick' is not one of the allowed values" },
	{ "[daemon\n", "t:1: bad section header" },
	{ "[daemon]\njust words\n", "t:2: expected 'key = value'" },
	{ "[jobs]\ntimeout = 5\n", "timeout: '5' is not a number in 10..86400" },
	/* strtol alone would take these as 2, 2 and 10. */
	{ "[jobs]\nworkers = \" 2\"\n", "workers: ' 2' is not a number" },
	{ "[jobs]\nworkers = +2\n", "workers: '+2' is not a number" },
	{ "[notify]\nwebhook_secret = \"abc\n", "t:2: unterminated quoted value" },
	{ "[notify]\nwebhook_secret = \"abc\" x\n", "t:2: unterminated quoted value" },
	/* Words for the guest kernel, not for the agent or init. */
	{ "[jobs]\nkernel_args = quiet rcgate.disks=/dev/vda:ext4\n",
	  "t:2: kernel_args: 'rcgate.disks=/dev/vda:ext4' is not allowed" },
	{ "[jobs]\nkernel_args = quiet -- sh\n", "kernel_args: '--' is not allowed" },
	{ "[jobs]\nkernel_args = \"a\tb\"\n", "kernel_args: byte 0x09 is not allowed" },
	{ "[jobs]\nkernel_args = nomodeset caf\xc3\xa9\n", "kernel_args: byte 0xc3" },
	{ "[jobs]\nkernel_args = \"a\\\"b\"\n", "kernel_args: byte 0x22" },
	{ "[jobs]\nkernel_args = x" RPT256 "\n", "kernel_args: longer than 256 bytes" },
};

/* A '#' is a comment only on a line of its own or after a blank; quoted
 * values keep everything, and a dump reads back as the same value. */
static void test_hash_in_values(void **state)
{
	static const struct {
		const char *line, *secret;
	} cases[] = {
		{ "webhook_secret = s3cr#t", "s3cr#t" },
		{ "webhook_secret = s3cr#t   # the CI's key", "s3cr#t" },
		{ "webhook_secret = \"a #b \\\"c\\\\\"  # comment", "a #b \"c\\" },
		{ "webhook_secret = \"  padded  \"", "  padded  " },
		{ "webhook_secret = #x", "" },
		{ "webhook_secret = x#", "x#" },
		{ "  # webhook_secret = x", "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config a, b;
		char text[256], err[256] = "", *buf = NULL;
		size_t len = 0;
		FILE *fp;

		snprintf(text, sizeof(text), "[notify]\n%s\n", cases[i].line);
		config_defaults(&a);
		if (config_parse(&a, text, "t", err, sizeof(err)) != 0)
			fail_msg("case %zu: %s", i, err);
		if (strcmp(a.webhook_secret, cases[i].secret) != 0)
			fail_msg("case %zu: got '%s', want '%s'", i, a.webhook_secret,
				 cases[i].secret);
		fp = open_memstream(&buf, &len);
		config_dump(&a, fp);
		fclose(fp);
		config_defaults(&b);
		assert_int_equal(config_parse(&b, buf, "dump", err, sizeof(err)), 0);
		assert_string_equal(b.webhook_secret, cases[i].secret);
		free(buf);
		config_free(&a);
		config_free(&b);
	}
}

static void test_bad_input(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct config c;
		char err[256] = "";

		config_defaults(&c);
		assert_int_equal(config_parse(&c, bad_cases[i].text, "t", err,
					      sizeof(err)), -1);
		if (strstr(err, bad_cases[i].error) == NULL)
			fail_msg("case %zu: error '%s' lacks '%s'", i, err,
				 bad_cases[i].error);
		config_free(&c);
	}
}

static void test_long_line(void **state)
{
	struct config c;
	char err[256];
	char *text = malloc(5000);

	(void)state;
	memset(text, 'a', 4999);
	text[4999] = '\0';
	config_defaults(&c);
	assert_int_equal(config_parse(&c, text, "t", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line too long"));
	config_free(&c);
	free(text);
}

/* A file over the cap is refused, never parsed cut short (file_read used
 * to truncate silently: the tail of a config, or of a mail, was lost). */
static void test_oversize_file(void **state)
{
	char path[] = "/tmp/rcgate-config-XXXXXX", err[256] = "";
	struct config c;
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	for (int i = 0; i < (1 << 20) / 16 + 1; i++)
		fputs("# padding line.\n", f);	/* 16 bytes */
	fputs("[jobs]\nworkers = 7\n", f);
	fclose(f);
	config_defaults(&c);
	assert_int_equal(config_load(&c, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "larger than"));
	assert_int_not_equal(c.workers, 7);
	config_free(&c);
	unlink(path);
}

static void test_dump_round_trip(void **state)
{
	struct config a, b;
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	(void)state;
	config_defaults(&a);
	free(a.state_dir);
	a.state_dir = strdup("/srv/rcgate");
	a.workers = 7;
	config_dump(&a, fp);
	fclose(fp);
	config_defaults(&b);
	assert_int_equal(config_parse(&b, buf, "dump", err, sizeof(err)), 0);
	assert_string_equal(b.state_dir, "/srv/rcgate");
	assert_int_equal(b.workers, 7);
	/* Each section once, however the table's rows are ordered (the
	 * example config once said [jobs] three times). */
	for (const char *const *sec = (const char *const[]){ "[daemon]",
	     "[jobs]", "[build]", "[fetch]", "[report]", NULL }; *sec; sec++) {
		const char *at = strstr(buf, *sec);

		assert_non_null(at);
		assert_null(strstr(at + 1, *sec));
	}
	free(buf);
	config_free(&a);
	config_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_golden_file),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_oversize_file),
		cmocka_unit_test(test_dump_round_trip),
		cmocka_unit_test(test_hash_in_values),
	};
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
