/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for agent/suite.c: the wording of the check helpers'
 * diagnostics (the daemon stores and reports them), the KTAP lines, the
 * table, the child isolation, and a whole run on a host directory, including
 * one against a simulated 6.1.64 kernel whose O_DIRECT writes do not advance
 * the file position.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../agent/suite.h"

/* ---- check helpers ---- */

static void test_fill_reports_preadv03_message(void **state)
{
	unsigned char buf[512];
	struct diag d;

	(void)state;
	diag_reset(&d);
	memset(buf, 'b', sizeof(buf));
	assert_int_equal(check_fill(buf, sizeof(buf), 0, 'a', &d), 512);
	assert_int_equal(d.count, 1);
	assert_string_equal(d.line[0], "buffer wrong at 0 have 62 expected 61");
}

static void test_fill_uses_file_offset(void **state)
{
	unsigned char buf[512];
	struct diag d;

	(void)state;
	diag_reset(&d);
	memset(buf, 'c', sizeof(buf));
	buf[100] = 0;
	assert_int_equal(check_fill(buf, sizeof(buf), 1024, 'c', &d), 1);
	assert_string_equal(d.line[0], "buffer wrong at 1124 have 00 expected 63");
	diag_reset(&d);
	buf[100] = 'c';
	assert_int_equal(check_fill(buf, sizeof(buf), 1024, 'c', &d), 0);
	assert_int_equal(d.count, 0);
}

static void test_bytes_first_mismatch_only(void **state)
{
	unsigned char have[8] = "abcdefgh", want[8] = "abXdeYgh";
	struct diag d;

	(void)state;
	diag_reset(&d);
	assert_int_equal(check_bytes(have, want, 8, 4096, &d), 2);
	assert_int_equal(d.count, 1);
	assert_string_equal(d.line[0], "buffer wrong at 4098 have 63 expected 58");
}

static void test_position_message(void **state)
{
	struct diag d;

	(void)state;
	diag_reset(&d);
	assert_int_equal(check_position(1024, 1024, "write", 2, 8, 512, &d), 0);
	assert_int_equal(d.count, 0);
	assert_int_equal(check_position(512, 1024, "write", 2, 8, 512, &d), 1);
	assert_string_equal(d.line[0],
			    "write 2 of 8 (512 bytes): position 512, expected 1024");
	assert_int_equal(check_position(0, 4096, "writev", 0, 0, 4096, &d), 1);
	assert_string_equal(d.line[1],
			    "writev (4096 bytes): position 0, expected 4096");
	/* NULL diag: counted by the caller, not printed. */
	assert_int_equal(check_position(1, 2, "write", 1, 1, 1, NULL), 1);
}

static void test_size_and_io_messages(void **state)
{
	struct diag d;

	(void)state;
	diag_reset(&d);
	assert_int_equal(check_size(512, 1024, "write", 2, 8, &d), 1);
	assert_int_equal(check_size(4096, 4096, "reopen", 0, 0, &d), 0);
	assert_int_equal(check_size(512, 4096, "reopen", 0, 0, &d), 1);
	assert_int_equal(check_io_len(0, 512, "pread", 512, &d), 1);
	assert_int_equal(check_io_len(512, 512, "pread", 512, &d), 0);
	assert_int_equal(check_io_len(-1, 512, "preadv", 0, &d), 1);
	assert_int_equal(d.count, 4);
	assert_string_equal(d.line[0], "write 2 of 8: st_size 512, expected 1024");
	assert_string_equal(d.line[1], "reopen: st_size 512, expected 4096");
	assert_string_equal(d.line[2], "pread at 512 read 0 bytes, expected 512");
	assert_string_equal(d.line[3], "preadv at 0 read -1 bytes, expected 512");
}

static void test_diag_cap_and_newlines(void **state)
{
	struct diag d;
	int i;

	(void)state;
	diag_reset(&d);
	for (i = 0; i < DIAG_MAX + 4; i++)
		diag_add(&d, "problem %d\nsecond line", i);
	assert_int_equal(d.count, DIAG_MAX);
	assert_int_equal(d.dropped, 4);
	assert_string_equal(d.line[0], "problem 0 second line");
	diag_add(NULL, "ignored");
}

static void test_diag_truncates_long_lines(void **state)
{
	char big[DIAG_LEN * 2];
	struct diag d;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	diag_reset(&d);
	diag_add(&d, "%s", big);
	assert_int_equal(strlen(d.line[0]), DIAG_LEN - 1);
}

/* ---- KTAP lines ---- */

static char *print_to_string(int number, const char *name, enum test_status st,
			     const struct diag *d)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	suite_print_result(f, 4, (unsigned int)number, name, st, d);
	fclose(f);
	return text;
}

static void test_print_result_lines(void **state)
{
	struct diag d;
	char *s;
	int i;

	(void)state;
	diag_reset(&d);
	s = print_to_string(2, "pwritev_seq_4096", TEST_PASS, &d);
	assert_string_equal(s, "    ok 2 pwritev_seq_4096\n");
	free(s);

	diag_add(&d, "buffer wrong at 0 have 62 expected 61");
	s = print_to_string(1, "write_seq_512", TEST_FAIL, &d);
	assert_string_equal(s, "    # write_seq_512: buffer wrong at 0 have 62 expected 61\n"
			       "    not ok 1 write_seq_512\n");
	free(s);

	diag_reset(&d);
	snprintf(d.skip_reason, sizeof(d.skip_reason), "O_DIRECT not supported");
	s = print_to_string(3, "write_seq_512", TEST_SKIP, &d);
	assert_string_equal(s, "    ok 3 write_seq_512 # SKIP O_DIRECT not supported\n");
	free(s);

	diag_reset(&d);
	for (i = 0; i < DIAG_MAX + 3; i++)
		diag_add(&d, "p%d", i);
	s = print_to_string(4, "t", TEST_FAIL, &d);
	assert_non_null(strstr(s, "    # t: (3 more diagnostics not shown)\n    not ok 4 t\n"));
	free(s);
}

/* ---- the table ---- */

static int valid_test_name(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' ||
		      *s == '-'))
			return 0;
	return 1;
}

static const struct suite_test *find_test(const char *name)
{
	size_t n, i;
	const struct suite_test *t = suite_tests(&n);

	for (i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

static void test_table_is_sane(void **state)
{
	static const char *const required[] = {
		"write_seq_512", "write_seq_4096", "writev_seq_512",
		"writev_seq_4096", "pwritev_seq_512", "pwritev_seq_4096",
		"write_osync_512", "write_odsync_4096", "write_fdatasync_512",
		"write_append_4096", "write_overwrite_512", "write_reopen_4096",
		"unaligned_buffer", "unaligned_offset", "unaligned_length",
	};
	size_t n, i, j;
	const struct suite_test *t = suite_tests(&n);

	(void)state;
	assert_true(n >= 20);
	for (i = 0; i < n; i++) {
		assert_true(valid_test_name(t[i].name));
		assert_non_null(t[i].run);
		assert_true(t[i].blocks_per_call > 0);
		assert_int_equal(t[i].nblocks % t[i].blocks_per_call, 0);
		assert_true(t[i].block_size >= 512);
		for (j = i + 1; j < n; j++)
			assert_string_not_equal(t[i].name, t[j].name);
	}
	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		assert_non_null(find_test(required[i]));
}

/* ---- running tests on a host directory ---- */

struct host_dir {
	char path[256];
	struct suite_env env;
};

static int host_dir_setup(void **state)
{
	struct host_dir *h = calloc(1, sizeof(*h));
	const char *base = getenv("RCGATE_TEST_DIR");
	char err[256];

	if (h == NULL)
		return -1;
	/* /var/tmp, not /tmp: /tmp is often tmpfs, which may lack O_DIRECT. */
	snprintf(h->path, sizeof(h->path), "%s/rcgate-agent-XXXXXX",
		 base != NULL ? base : "/var/tmp");
	if (mkdtemp(h->path) == NULL) {
		free(h);
		return -1;
	}
	if (suite_probe(h->path, &h->env, err, sizeof(err)) != 0) {
		print_error("suite_probe: %s\n", err);
		rmdir(h->path);
		free(h);
		return -1;
	}
	*state = h;
	return 0;
}

static int host_dir_teardown(void **state)
{
	struct host_dir *h = *state;

	suite_set_io(NULL);
	rmdir(h->path);
	free(h);
	return 0;
}

static int line_count(const char *text, const char *prefix)
{
	int n = 0;
	size_t plen = strlen(prefix);
	const char *p = text;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, prefix, plen) == 0)
			n++;
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return n;
}

static void test_whole_suite_on_host(void **state)
{
	struct host_dir *h = *state;
	struct suite_options opt = { .timeout_s = 60 };
	struct suite_counts c;
	char err[256], plan[32];
	char *text = NULL;
	size_t len = 0, n;
	FILE *f = open_memstream(&text, &len);

	suite_tests(&n);
	assert_non_null(f);
	assert_int_equal(suite_run(h->path, "ext4", f, &opt, &c, err, sizeof(err)), 0);
	fclose(f);
	if (c.fail != 0)
		print_error("%s", text);
	assert_int_equal(c.pass + c.fail + c.skip, n);
	assert_int_equal(strncmp(text, "    KTAP version 1\n    # Subtest: ext4\n", 39), 0);
	snprintf(plan, sizeof(plan), "    1..%zu\n", n);
	assert_non_null(strstr(text, plan));
	assert_int_equal(line_count(text, "    ok ") + line_count(text, "    not ok "),
			 (int)n);
	if (!h->env.odirect) {
		assert_int_equal(c.skip, n);
		assert_int_equal(line_count(text, "    ok "), (int)n);
	} else {
		/* This host runs a correct kernel: nothing may fail. */
		assert_int_equal(c.fail, 0);
	}
	free(text);
}

static void test_unusable_dir_prints_nothing(void **state)
{
	struct suite_counts c;
	char err[256] = "";
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	assert_int_equal(suite_run("/nonexistent/rcgate", "ext4", f, NULL, &c,
				   err, sizeof(err)), -1);
	fclose(f);
	assert_int_equal(len, 0);
	assert_non_null(strstr(err, "/nonexistent/rcgate"));
	free(text);
}

/*
 * 6.1.64: the write lands at the current position and returns the full
 * count, but the position does not move.
 */
static ssize_t write_6164(int fd, const void *buf, size_t len)
{
	ssize_t r = write(fd, buf, len);

	if (r > 0)
		lseek(fd, -r, SEEK_CUR);
	return r;
}

static ssize_t writev_6164(int fd, const struct iovec *iov, int cnt)
{
	ssize_t r = writev(fd, iov, cnt);

	if (r > 0)
		lseek(fd, -r, SEEK_CUR);
	return r;
}

static const struct suite_io io_6164 = { .write = write_6164,
					 .writev = writev_6164 };

static enum test_status run_named(const struct host_dir *h, const char *name,
				  struct diag *d)
{
	const struct suite_test *t = find_test(name);

	assert_non_null(t);
	return suite_test_exec(t, h->path, &h->env, d);
}

static void test_simulated_6164_is_caught(void **state)
{
	struct host_dir *h = *state;
	struct diag d;

	if (!h->env.odirect) {
		skip();
		return;
	}
	suite_set_io(&io_6164);
	assert_int_equal(run_named(h, "write_seq_512", &d), TEST_FAIL);
	assert_int_equal(d.count, 5);
	assert_string_equal(d.line[0], "write 1 of 8 (512 bytes): position 0, expected 512");
	assert_string_equal(d.line[1], "write 2 of 8: st_size 512, expected 1024");
	/* Every write landed at 0, the last one ('h') won. */
	assert_string_equal(d.line[2], "buffer wrong at 0 have 68 expected 61");
	assert_string_equal(d.line[3], "pread at 512 read 0 bytes, expected 512");
	assert_string_equal(d.line[4], "totals: wrong position 8 wrong st_size 7 "
				       "short reads 7 wrong bytes 512");

	assert_int_equal(run_named(h, "writev_seq_4096", &d), TEST_FAIL);
	assert_string_equal(d.line[0], "writev 1 of 4 (8192 bytes): position 0, expected 8192");
	assert_int_equal(run_named(h, "write_osync_4096", &d), TEST_FAIL);
	assert_int_equal(run_named(h, "write_append_512", &d), TEST_FAIL);
	assert_int_equal(run_named(h, "write_overwrite_4096", &d), TEST_FAIL);
	assert_int_equal(run_named(h, "write_reopen_512", &d), TEST_FAIL);
	assert_int_equal(run_named(h, "subblock_write_512", &d), TEST_FAIL);
	/* Positional writes were not affected by the bug. */
	assert_int_equal(run_named(h, "pwrite_seq_512", &d), TEST_PASS);
	assert_int_equal(run_named(h, "pwritev_seq_4096", &d), TEST_PASS);
	assert_int_equal(run_named(h, "subblock_pwrite_512", &d), TEST_PASS);
}

/* A write that hands back a short count must be flagged, not trusted. */
static ssize_t write_short(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len > 512 ? len - 512 : len);
}

static void test_short_write_is_caught(void **state)
{
	struct host_dir *h = *state;
	const struct suite_io io = { .write = write_short, .writev = writev };
	struct diag d;

	if (!h->env.odirect) {
		skip();
		return;
	}
	suite_set_io(&io);
	assert_int_equal(run_named(h, "write_seq_4096", &d), TEST_FAIL);
	assert_string_equal(d.line[0], "write 1 of 8 returned 3584, expected 4096");
}

static ssize_t write_hang(int fd, const void *buf, size_t len)
{
	(void)fd;
	(void)buf;
	(void)len;
	for (;;)
		pause();
	return -1;
}

static ssize_t write_crash(int fd, const void *buf, size_t len)
{
	(void)fd;
	(void)buf;
	(void)len;
	raise(SIGSEGV);
	return -1;
}

static void test_isolation_timeout_and_crash(void **state)
{
	struct host_dir *h = *state;
	const struct suite_io hang = { .write = write_hang, .writev = writev };
	const struct suite_io crash = { .write = write_crash, .writev = writev };
	const struct suite_test *t = find_test("write_seq_4096");
	struct diag d;

	if (!h->env.odirect) {
		skip();
		return;
	}
	assert_non_null(t);
	suite_set_io(&hang);
	assert_int_equal(suite_test_isolated(t, h->path, &h->env, 1, &d), TEST_FAIL);
	assert_string_equal(d.line[d.count - 1], "timed out after 1 s");
	suite_set_io(&crash);
	assert_int_equal(suite_test_isolated(t, h->path, &h->env, 10, &d), TEST_FAIL);
	assert_non_null(strstr(d.line[d.count - 1], "killed by signal 11"));
	suite_set_io(NULL);
	assert_int_equal(suite_test_isolated(t, h->path, &h->env, 10, &d), TEST_PASS);
}

static void test_no_odirect_skips_everything(void **state)
{
	struct host_dir *h = *state;
	struct suite_env env = h->env;
	struct diag d;
	size_t n, i;
	const struct suite_test *t = suite_tests(&n);

	env.odirect = 0;
	for (i = 0; i < n; i++) {
		assert_int_equal(suite_test_exec(&t[i], h->path, &env, &d), TEST_SKIP);
		assert_string_equal(d.skip_reason, "O_DIRECT not supported");
	}
}

static void test_large_alignment_skips_small_blocks(void **state)
{
	struct host_dir *h = *state;
	struct suite_env env = h->env;
	struct diag d;

	env.odirect = 1;
	env.dio_offset_align = 4096;
	assert_int_equal(run_named(h, "write_seq_512", &d), h->env.odirect ? TEST_PASS : TEST_SKIP);
	assert_int_equal(suite_test_exec(find_test("write_seq_512"), h->path, &env, &d),
			 TEST_SKIP);
	assert_string_equal(d.skip_reason, "block size 512 below the O_DIRECT alignment 4096");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fill_reports_preadv03_message),
		cmocka_unit_test(test_fill_uses_file_offset),
		cmocka_unit_test(test_bytes_first_mismatch_only),
		cmocka_unit_test(test_position_message),
		cmocka_unit_test(test_size_and_io_messages),
		cmocka_unit_test(test_diag_cap_and_newlines),
		cmocka_unit_test(test_diag_truncates_long_lines),
		cmocka_unit_test(test_print_result_lines),
		cmocka_unit_test(test_table_is_sane),
		cmocka_unit_test(test_unusable_dir_prints_nothing),
		cmocka_unit_test_setup_teardown(test_whole_suite_on_host,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_simulated_6164_is_caught,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_short_write_is_caught,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_isolation_timeout_and_crash,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_no_odirect_skips_everything,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_large_alignment_skips_small_blocks,
						host_dir_setup, host_dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
