/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/base/util.c: the file helpers every module trusts
 * with caps and atomicity, strbuf's cut-never-overflow promise, number
 * parsing as the configuration and the API use it, word lists, and the
 * daemon's date formats.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/rcgate-util.XXXXXX");
	return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rm_rf(dir);
}

static void test_file_read_caps(void **state)
{
	char path[128], err[256];
	size_t len = 0;
	char *t;

	(void)state;
	snprintf(path, sizeof(path), "%s/f", dir);
	assert_int_equal(file_write_atomic(path, "hello\n", 6, err,
					   sizeof(err)), 0);
	t = file_read(path, 6, &len, err, sizeof(err));
	assert_non_null(t);
	assert_int_equal(len, 6);
	assert_string_equal(t, "hello\n");	/* NUL-terminated */
	free(t);
	/* One byte over the cap is an error, never a cut. */
	assert_null(file_read(path, 5, &len, err, sizeof(err)));
	assert_true(err[0] != '\0');
	/* A directory, a FIFO and a missing file are errors too. */
	assert_null(file_read(dir, 1 << 20, NULL, err, sizeof(err)));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_null(file_read(path, 1 << 20, NULL, err, sizeof(err)));
	snprintf(path, sizeof(path), "%s/none", dir);
	assert_null(file_read(path, 1 << 20, NULL, err, sizeof(err)));
}

static void test_file_write_atomic_replaces(void **state)
{
	char path[128], err[256], tmpcount[256];
	struct stat a, b;
	char *t;
	FILE *ls;
	int n = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/atomic", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/atomic/w", dir);
	assert_int_equal(file_write_atomic(path, "one", 3, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &a), 0);
	assert_int_equal(file_write_atomic(path, "two!", 4, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &b), 0);
	/* A new file renamed over the old one: a reader sees one or the
	 * other, never half. */
	assert_true(a.st_ino != b.st_ino);
	t = file_read(path, 64, NULL, err, sizeof(err));
	assert_string_equal(t, "two!");
	free(t);
	/* No temporary file is left behind. */
	snprintf(tmpcount, sizeof(tmpcount), "ls -A %s/atomic | wc -l", dir);
	ls = popen(tmpcount, "r");
	assert_non_null(ls);
	assert_int_equal(fscanf(ls, "%d", &n), 1);
	pclose(ls);
	assert_int_equal(n, 1);
	/* Into a directory that does not exist: an error with a message. */
	snprintf(path, sizeof(path), "%s/no/such", dir);
	err[0] = '\0';
	assert_int_equal(file_write_atomic(path, "x", 1, err, sizeof(err)), -1);
	assert_true(err[0] != '\0');
}

static void test_strbuf_cuts_and_stays_cut(void **state)
{
	char buf[8];
	struct strbuf sb;

	(void)state;
	memset(buf, 'Z', sizeof(buf));
	strbuf_init(&sb, buf, sizeof(buf));
	strbuf_printf(&sb, "%s", "abc");
	assert_false(sb.overflow);
	assert_string_equal(buf, "abc");
	strbuf_printf(&sb, "%d", 12345);	/* 8 bytes needed, 8 there */
	assert_true(sb.overflow);
	assert_int_equal(strlen(buf), 7);	/* what fitted, NUL-terminated */
	strbuf_printf(&sb, "x");		/* later appends do nothing */
	assert_true(sb.overflow);
	assert_string_equal(buf, "abc1234");
}

static void test_parse_long(void **state)
{
	long v = -7;

	(void)state;
	assert_int_equal(parse_long("42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(parse_long("0", 0, 100, &v), 0);
	assert_int_equal(v, 0);
	v = -7;
	assert_int_equal(parse_long("101", 0, 100, &v), -1);
	assert_int_equal(parse_long("-1", 0, 100, &v), -1);
	assert_int_equal(parse_long("", 0, 100, &v), -1);
	assert_int_equal(parse_long(" 2", 0, 100, &v), -1);
	assert_int_equal(parse_long("2 ", 0, 100, &v), -1);
	assert_int_equal(parse_long("+2", 0, 100, &v), -1);
	assert_int_equal(parse_long("0x10", 0, 100, &v), -1);
	assert_int_equal(parse_long("99999999999999999999", 0, 100, &v), -1);
	assert_int_equal(v, -7);	/* untouched by a refusal */
}

static void test_word_list_has(void **state)
{
	(void)state;
	assert_true(word_list_has("x86_64 arm64", "arm64"));
	assert_true(word_list_has("x86_64,arm64", "x86_64"));
	assert_true(word_list_has(" , arm64 ,", "arm64"));
	assert_false(word_list_has("x86_64 arm64", "arm"));
	assert_false(word_list_has("armv7", "arm"));
	assert_false(word_list_has("", "arm"));
}

static void test_dates(void **state)
{
	char iso[32], ms[32], mail[40];
	struct timespec ts = { 1701129600, 123456789 };	/* 2023-11-28 */

	(void)state;
	time_iso8601(ts.tv_sec, iso);
	assert_string_equal(iso, "2023-11-28T00:00:00Z");
	time_iso8601_ms(&ts, ms);
	assert_string_equal(ms, "2023-11-28T00:00:00.123Z");
	time_rfc2822(ts.tv_sec, mail);
	assert_string_equal(mail, "Tue, 28 Nov 2023 00:00:00 +0000");
}

/* Job-log lines: each stamped to the millisecond and whole, with two
 * threads writing at once. */
#define JL_LINES 2000
static void *jl_writer(void *arg)
{
	FILE *f = arg;

	for (int i = 0; i < JL_LINES; i++)
		joblog_write(f, "writer %p line %d %s", (void *)pthread_self(), i,
			     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	return NULL;
}

static void test_joblog_lines(void **state)
{
	char path[128], line[512];
	pthread_t a, b;
	FILE *f;
	int n = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/job.log", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	joblog_write(NULL, "nothing %d", 1);	/* no log: no crash */
	pthread_create(&a, NULL, jl_writer, f);
	pthread_create(&b, NULL, jl_writer, f);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	fclose(f);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		int y, mo, d, h, mi, sec, ms, i, used = 0;

		/* 2026-12-05T02:41:07.123Z writer 0x... line N xxx...\n */
		assert_int_equal(sscanf(line, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ writer"
					" %*s line %d %n", &y, &mo, &d, &h, &mi,
					&sec, &ms, &i, &used), 8);
		assert_true(used > 0);
		assert_string_equal(line + used,
			"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n");
		n++;
	}
	fclose(f);
	assert_int_equal(n, 2 * JL_LINES);
	unlink(path);
}

/* A file hashed once is not read again while it is unchanged; any write
 * (even one that keeps the size and sets the mtime back) is seen. */
static void test_sha256_memo(void **state)
{
	char path[128], err[256], a[65], b[65], c[65];
	struct stat st;
	struct timespec times[2];
	int memo = -1;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/kernel", dir);
	assert_int_equal(file_write_atomic(path, "kernel image v1\n", 16,
					   err, sizeof(err)), 0);
	/* Changed in this clock tick: not remembered. */
	assert_int_equal(sha256_file_memo(path, a, &memo, err, sizeof(err)), 0);
	assert_int_equal(memo, 0);
	assert_int_equal(sha256_file_memo(path, a, &memo, err, sizeof(err)), 0);
	assert_int_equal(memo, 0);
	assert_int_equal(sha256_file(path, b, err, sizeof(err)), 0);
	assert_string_equal(a, b);
	sleep(2);
	assert_int_equal(sha256_file_memo(path, c, &memo, err, sizeof(err)), 0);
	assert_int_equal(memo, 0);
	assert_int_equal(sha256_file_memo(path, c, &memo, err, sizeof(err)), 0);
	assert_int_equal(memo, 1);
	assert_string_equal(c, a);

	/* The same size, the old mtime put back: the ctime still moved. */
	assert_int_equal(stat(path, &st), 0);
	f = fopen(path, "r+");
	assert_non_null(f);
	assert_int_equal(fputs("KERNEL", f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
	assert_int_equal(sha256_file_memo(path, c, &memo, err, sizeof(err)), 0);
	assert_int_equal(memo, 0);
	assert_string_not_equal(c, a);
	assert_int_equal(sha256_file(path, b, err, sizeof(err)), 0);
	assert_string_equal(c, b);

	/* Replaced by another file of the same bytes: hashed again. */
	assert_int_equal(file_write_atomic(path, "kernel image v1\n", 16,
					   err, sizeof(err)), 0);
	assert_int_equal(sha256_file_memo(path, c, &memo, err, sizeof(err)), 0);
	assert_int_equal(memo, 0);
	assert_string_equal(c, a);
	assert_int_equal(sha256_file_memo("/nonexistent/x", c, &memo, err,
					  sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/x"));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_read_caps),
		cmocka_unit_test(test_file_write_atomic_replaces),
		cmocka_unit_test(test_strbuf_cuts_and_stays_cut),
		cmocka_unit_test(test_parse_long),
		cmocka_unit_test(test_word_list_has),
		cmocka_unit_test(test_dates),
		cmocka_unit_test(test_joblog_lines),
		cmocka_unit_test(test_sha256_memo),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
