/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for agent/suite.c: the wording of the check helpers'
 * diagnostics (the daemon stores and reports them), the KTAP lines, the
 * table, the child isolation, and a whole run on a host directory, including
 * one against a simulated 6.1.64 kernel whose O_DIRECT writes do not advance
 * the file position; the rcgate.disks parser and the "fs not supported"
 * decision; both crash-consistency phases (the verify side against files
 * shaped like what a bad kernel leaves after a power cut).
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
#include <fcntl.h>
#include <sys/ioctl.h>
#include <linux/loop.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../agent/suite.h"
#include "../../agent/table.h"
#include "../../agent/tests.h"

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
	suite_print_result(f, 4, (unsigned int)number, -1, name, st, d);
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

/* eof_pollute leaves unchecked only where a correct kernel is known to
 * keep the garbage: ext4 before 6.13 (all four operations, so the test is
 * a SKIP on 6.1), and ext4's extending direct write everywhere. */
static void test_eof_zeroing_gaps(void **state)
{
	const unsigned long ext4 = 0xEF53, xfs = 0x58465342, btrfs = 0x9123683E;
	enum eof_grow op;

	(void)state;
	for (op = EOF_GROW_BUFFERED; op <= EOF_GROW_FALLOCATE; op++) {
		assert_non_null(eof_zeroing_gap(ext4, "6.1.192-rcgate-good", op));
		assert_non_null(eof_zeroing_gap(ext4, "6.12.9", op));
		assert_non_null(eof_zeroing_gap(ext4, "", op)); /* unknown */
		assert_null(eof_zeroing_gap(xfs, "6.1.192", op));
		assert_null(eof_zeroing_gap(btrfs, "6.1.0-57-cloud-amd64", op));
		assert_null(eof_zeroing_gap(btrfs, NULL, op));
	}
	assert_string_equal(eof_zeroing_gap(ext4, "6.1.192", EOF_GROW_TRUNCATE),
			    "ext4 before 6.13 lacks c7fc0366c656");
	assert_null(eof_zeroing_gap(ext4, "6.13.0", EOF_GROW_BUFFERED));
	assert_null(eof_zeroing_gap(ext4, "7.0.1", EOF_GROW_TRUNCATE));
	assert_null(eof_zeroing_gap(ext4, "6.18.44-fc", EOF_GROW_FALLOCATE));
	assert_non_null(eof_zeroing_gap(ext4, "6.18.44-fc", EOF_GROW_DIRECT));
	assert_null(eof_zeroing_gap(ext4, "6.18.44-fc", EOF_GROW_DIRECT_SECTOR));
	assert_non_null(eof_zeroing_gap(ext4, "7.0.1", EOF_GROW_DIRECT));
}

/* catalogue.h: every test has exactly the entry of its name or family,
 * every entry a test (the crash test runs in its own phase), and every
 * text is there. */
static void test_catalogue_covers_the_table(void **state)
{
	size_t n, nf, nb, nc, i, j;
	const struct suite_test *tf = suite_tests(&nf);
	const struct suite_test *tb = bdev_tests(&nb);
	const struct catalogue_entry *c = suite_catalogue(&nc);
	struct suite_test t[128];

	(void)state;
	/* Both tables: files on a filesystem and the raw block device. */
	assert_true(nf + nb <= sizeof(t) / sizeof(t[0]));
	memcpy(t, tf, nf * sizeof(*t));
	memcpy(t + nf, tb, nb * sizeof(*t));
	n = nf + nb;
	for (i = 0; i < n; i++) {
		const struct catalogue_entry *e = suite_catalogue_find(t[i].name);

		if (e == NULL)
			print_error("no catalogue entry for %s\n", t[i].name);
		assert_non_null(e);
	}
	for (j = 0; j < nc; j++) {
		int used = 0;

		for (i = 0; i < CRASH_PROMISES && !used; i++)
			used = strcmp(c[j].name, crash_test_name(i)) == 0;
		/* The daemon tells crash tests by their prefix (engine.c). */
		assert_int_equal(used, strncmp(c[j].name, RCGATE_CRASH_PREFIX,
			strlen(RCGATE_CRASH_PREFIX)) == 0);
		for (i = 0; i < n && !used; i++)
			used = suite_catalogue_find(t[i].name) == &c[j];
		if (!used)
			print_error("catalogue entry %s has no test\n", c[j].name);
		assert_true(used);
		assert_true(strlen(c[j].filesystems) > 0);
		assert_true(strlen(c[j].checks) > 10);
		assert_true(strlen(c[j].failure) > 10);
		for (i = j + 1; i < nc; i++)
			assert_string_not_equal(c[i].name, c[j].name);
	}
	assert_string_equal(suite_catalogue_find("write_seq_4096")->name, "write_seq");
	assert_string_equal(suite_catalogue_find("many_iovecs_512")->name, "many_iovecs");
	assert_string_equal(suite_catalogue_find("nowait")->name, "nowait");
	assert_null(suite_catalogue_find("write_seq_"));
	assert_null(suite_catalogue_find("nosuch_4096"));
	/* The smoke group: its names exist, and no test is called "smoke". */
	assert_null(find_test(RCGATE_ONLY_SMOKE));
	for (i = 0, j = 0; i < n; i++)
		j += (size_t)suite_selected(RCGATE_ONLY_SMOKE, t[i].name);
	assert_int_equal(j, 10);
	assert_true(suite_selected("x," RCGATE_ONLY_SMOKE, "write_seq_4096"));
	assert_false(suite_selected(RCGATE_ONLY_SMOKE, "large_io"));
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

/* The block-device table: names of their own (a bisection step names
 * tests without their suite), every window inside the smallest device the
 * probe takes and no two overlapping. */
static void test_bdev_table(void **state)
{
	size_t nf, nb, i, j;
	const struct suite_test *tf = suite_tests(&nf);
	const struct suite_test *tb = bdev_tests(&nb);
	const long long min = 48LL << 20, win = 6LL << 20;

	(void)state;
	assert_true(nb >= 8);
	for (i = 0; i < nb; i++) {
		long long a = tb[i].window >= 0 ? (long long)tb[i].window * (1LL << 20) :
			      min + (long long)tb[i].window * (1LL << 20);

		assert_true(valid_test_name(tb[i].name));
		assert_non_null(tb[i].run);
		assert_true(a >= 0 && a + win <= min);
		for (j = 0; j < nf; j++)
			assert_string_not_equal(tb[i].name, tf[j].name);
		for (j = i + 1; j < nb; j++) {
			long long b = tb[j].window >= 0 ? (long long)tb[j].window * (1LL << 20) :
				      min + (long long)tb[j].window * (1LL << 20);

			assert_string_not_equal(tb[i].name, tb[j].name);
			/* The exerciser takes the device's last 2 MiB as it
			 * finds them (its model starts from what is there). */
			if (tb[i].exer_seeds == 0 && tb[j].exer_seeds == 0)
				assert_true(a + win <= b || b + win <= a);
		}
	}
}

/* A loop device over a sparse file of mb MiB with sector bytes per
 * sector; its path in dev. Returns its fd (hold it; loop_put detaches),
 * or -1 where this host cannot make one (not root, no loop driver). */
static int loop_get(const char *file, long mb, unsigned int sector, char *dev,
		    size_t devlen)
{
	int ctl, lfd, bfd, n;

	bfd = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (bfd < 0 || ftruncate(bfd, (off_t)mb << 20) != 0) {
		if (bfd >= 0)
			close(bfd);
		return -1;
	}
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	/* Another process (a parallel test) may take the free device
	 * between the two calls: EBUSY, ask again. */
	for (int tries = 0; tries < 10; tries++) {
		n = ctl >= 0 ? ioctl(ctl, LOOP_CTL_GET_FREE) : -1;
		snprintf(dev, devlen, "/dev/loop%d", n);
		lfd = n >= 0 ? open(dev, O_RDWR | O_CLOEXEC) : -1;
		if (lfd < 0 || ioctl(lfd, LOOP_SET_FD, bfd) == 0)
			break;
		close(lfd);
		lfd = -1;
		if (errno != EBUSY)
			break;
	}
	if (ctl >= 0)
		close(ctl);
	close(bfd);
	if (lfd >= 0 && sector != 512 &&
	    ioctl(lfd, LOOP_SET_BLOCK_SIZE, (unsigned long)sector) != 0) {
		ioctl(lfd, LOOP_CLR_FD, 0);
		close(lfd);
		lfd = -1;
	}
	return lfd;
}

static void loop_put(int lfd, const char *file)
{
	ioctl(lfd, LOOP_CLR_FD, 0);
	close(lfd);
	unlink(file);
}

/* suite_run on a loop device of mb MiB and sector-byte sectors over
 * file: its return value, the counts in c and the KTAP in *text (free it).
 * 1 (and nothing run) where this host cannot make a loop device. */
static int bdev_on_loop(const char *file, long mb, unsigned int sector,
			struct suite_counts *c, char **text, char *err,
			size_t errlen)
{
	struct suite_options opt = { .timeout_s = 60 };
	size_t len = 0;
	char dev[64];
	FILE *f;
	int lfd = loop_get(file, mb, sector, dev, sizeof(dev)), rc;

	*text = NULL;
	if (lfd < 0) {
		unlink(file);
		return 1;
	}
	f = open_memstream(text, &len);
	assert_non_null(f);
	rc = suite_run(dev, "bdev", f, &opt, c, err, errlen);
	fclose(f);
	loop_put(lfd, file);
	return rc;
}

/* The block-device suite on a loop device of this host's (correct)
 * kernel: every test passes; on 4 KiB sectors every test is a SKIP with
 * the reason; a device too small for the windows is refused, and nothing
 * is printed then. */
static void test_bdev_suite_on_loop(void **state)
{
	struct host_dir *h = *state;
	struct suite_counts c;
	char file[4200], err[256];
	char *text = NULL;
	size_t n;
	int rc;

	bdev_tests(&n);
	snprintf(file, sizeof(file), "%s/bdev.img", h->path);
	rc = bdev_on_loop(file, 64, 512, &c, &text, err, sizeof(err));
	if (rc == 1)
		skip();
	assert_int_equal(rc, 0);
	if (c.fail != 0 || c.pass != n)
		print_error("%s", text);
	assert_int_equal(c.pass, n);
	assert_non_null(strstr(text, "    # Subtest: bdev\n"));
	assert_non_null(strstr(text, "ok 8 bdev_eod\n"));
	free(text);

	assert_int_equal(bdev_on_loop(file, 64, 4096, &c, &text, err, sizeof(err)), 0);
	assert_int_equal(c.skip, n);
	assert_non_null(strstr(text, "# SKIP block size 512 below the O_DIRECT alignment 4096"));
	free(text);

	assert_int_equal(bdev_on_loop(file, 16, 512, &c, &text, err, sizeof(err)), -1);
	assert_true(text == NULL || text[0] == '\0');
	assert_non_null(strstr(err, "16777216 bytes of 512-byte sectors, need >= 50331648"));
	free(text);
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

/* rcgate.only: the named tests alone, planned and numbered as a suite. */
static void test_only_subset(void **state)
{
	struct host_dir *h = *state;
	struct suite_options opt = { .timeout_s = 60, .only = "write_seq_4096,unaligned_length,nosuch" };
	struct suite_counts c;
	char err[256];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_true(suite_selected(NULL, "write_seq"));
	assert_true(suite_selected("a,write_seq", "write_seq"));
	assert_false(suite_selected("write_seq2,x", "write_seq"));
	assert_false(suite_selected("write", "write_seq"));
	assert_non_null(f);
	assert_int_equal(suite_run(h->path, "ext4", f, &opt, &c, err, sizeof(err)), 0);
	fclose(f);
	assert_int_equal(c.pass + c.fail + c.skip, 2);
	assert_non_null(strstr(text, "    1..2\n"));
	assert_int_equal(line_count(text, "    ok ") + line_count(text, "    not ok "), 2);
	assert_non_null(strstr(text, " 1 write_seq_4096"));
	assert_non_null(strstr(text, " 2 unaligned_length"));
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
	if (suite_progress != NULL)
		snprintf(suite_progress, SUITE_PROGRESS_LEN, "the first write");
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
	/* The watchdog says where the test was and what /proc says of its
	 * task (asleep in pause(): S), not just that time ran out. */
	assert_string_equal(d.line[0], "timed out after 1 s: the agent's watchdog killed it");
	assert_string_equal(d.line[1], "it was at the first write");
	assert_non_null(strstr(d.line[2], " state S wchan "));
	assert_int_equal(strncmp(d.line[2], "task ", 5), 0);
	suite_set_io(&crash);
	assert_int_equal(suite_test_isolated(t, h->path, &h->env, 10, &d), TEST_FAIL);
	assert_non_null(strstr(d.line[d.count - 1], "killed by signal 11"));
	suite_set_io(NULL);
	assert_int_equal(suite_test_isolated(t, h->path, &h->env, 10, &d), TEST_PASS);
}

/*
 * The parent waits for the test with SIGCHLD blocked and sigtimedwait (no
 * sleep between looks). Another child ending meanwhile must not end the
 * wait, and the caller's signal mask is back as it was afterwards.
 */
static void test_isolation_wait_and_mask(void **state)
{
	struct host_dir *h = *state;
	const struct suite_test *t = find_test("write_seq_4096");
	sigset_t before, after;
	struct diag d;
	pid_t other;
	int status;

	if (!h->env.odirect) {
		skip();
		return;
	}
	assert_non_null(t);
	other = fork();
	assert_true(other >= 0);
	if (other == 0)
		_exit(7);	/* its SIGCHLD comes while the test runs */
	assert_int_equal(sigprocmask(SIG_SETMASK, NULL, &before), 0);
	assert_int_equal(sigismember(&before, SIGCHLD), 0);
	assert_int_equal(suite_test_isolated(t, h->path, &h->env, 10, &d), TEST_PASS);
	assert_int_equal(sigprocmask(SIG_SETMASK, NULL, &after), 0);
	assert_int_equal(sigismember(&after, SIGCHLD), 0);
	/* The other child was left for its own parent to reap. */
	assert_int_equal(waitpid(other, &status, 0), other);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 7);
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

/* ---- rcgate.disks and unsupported filesystems ---- */

static void test_disks_parse_good(void **state)
{
	struct disk_spec d[SUITE_MAX_DISKS];
	unsigned int n = 99;
	char err[128] = "";

	(void)state;
	assert_int_equal(disks_parse("/dev/vda:ext4,/dev/vdb:xfs,/dev/vdc:btrfs",
				     d, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_string_equal(d[0].dev, "/dev/vda");
	assert_string_equal(d[0].fs, "ext4");
	assert_string_equal(d[1].dev, "/dev/vdb");
	assert_string_equal(d[1].fs, "xfs");
	assert_string_equal(d[2].dev, "/dev/vdc");
	assert_string_equal(d[2].fs, "btrfs");
	assert_int_equal(disks_parse("/dev/vda:ext4", d, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(disks_parse("/dev/vda:ext4,/dev/vdb:xfs,/dev/vdc:btrfs,"
				     "/dev/vdd:f2fs", d, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 4);
	/* The crash phases: one disk per promise, several of one fs. */
	assert_int_equal(disks_parse("/dev/vda:ext4,/dev/vdb:ext4,/dev/vdc:xfs",
				     d, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_string_equal(d[1].fs, "ext4");
}

static void test_disks_parse_bad(void **state)
{
	static const struct {
		const char *value, *msg;
	} cases[] = {
		{ "", "is not device:fstype" },
		{ "/dev/vda", "is not device:fstype" },
		{ "/dev/vda:ext4,", "is not device:fstype" },
		{ "/dev/vda:", "bad filesystem type ''" },
		{ "/dev/vda:ext 4", "bad filesystem type" },
		{ "/dev/vda:ext4/x", "bad filesystem type" },
		{ "vda:ext4", "device 'vda' is not /dev/<name>" },
		{ "/dev/../etc:ext4", "is not /dev/<name>" },
		{ "/dev/a/b:ext4", "is not /dev/<name>" },
		{ "/dev/vda:ext4,/dev/vda:xfs", "device /dev/vda listed twice" },
		{ "/dev/vda:a,/dev/vdb:b,/dev/vdc:c,/dev/vdd:d,/dev/vde:e,"
		  "/dev/vdf:a,/dev/vdg:b,/dev/vdh:c,/dev/vdi:d,/dev/vdj:e,"
		  "/dev/vdk:a,/dev/vdl:b,/dev/vdm:c,/dev/vdn:d,/dev/vdo:e,"
		  "/dev/vdp:a,/dev/vdq:b,/dev/vdr:c,/dev/vds:d,/dev/vdt:e,"
		  "/dev/vdu:a", "more than 20 disks" },
		{ "/dev/vda:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "too long" },
	};
	struct disk_spec d[SUITE_MAX_DISKS];
	unsigned int n;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[128] = "";

		n = 99;
		if (disks_parse(cases[i].value, d, &n, err, sizeof(err)) != -1)
			fail_msg("'%s' accepted", cases[i].value);
		assert_int_equal(n, 0);
		if (strstr(err, cases[i].msg) == NULL)
			fail_msg("'%s': error '%s' lacks '%s'", cases[i].value,
				 err, cases[i].msg);
	}
}

static void test_fs_listed(void **state)
{
	/* As the Debian cloud kernel prints it once xfs is loaded. */
	static const char text[] =
		"nodev\tsysfs\nnodev\ttmpfs\nnodev\tproc\n\text3\n"
		"\text2\n\text4\nnodev\tdevtmpfs\n\txfs";

	(void)state;
	assert_int_equal(fs_listed(text, "ext4"), 1);
	assert_int_equal(fs_listed(text, "xfs"), 1);
	assert_int_equal(fs_listed(text, "proc"), 1);
	assert_int_equal(fs_listed(text, "btrfs"), 0);
	/* Whole names only. */
	assert_int_equal(fs_listed(text, "ext"), 0);
	assert_int_equal(fs_listed(text, "fs"), 0);
	assert_int_equal(fs_listed(text, "nodev"), 0);
	assert_int_equal(fs_listed("", "ext4"), 0);
}

static void test_mount_error_unsupported(void **state)
{
	(void)state;
	/* The kernel lacks the type: a SKIP. */
	assert_int_equal(mount_error_unsupported(ENODEV, 0), 1);
	assert_int_equal(mount_error_unsupported(ENODEV, 1), 1);
	assert_int_equal(mount_error_unsupported(EINVAL, 0), 1);
	/* It has it, and still the mount failed: infra. */
	assert_int_equal(mount_error_unsupported(EINVAL, 1), 0);
	assert_int_equal(mount_error_unsupported(EIO, 1), 0);
	assert_int_equal(mount_error_unsupported(EUCLEAN, 1), 0);
}

/* ---- crash consistency ---- */

static void test_crash_pattern(void **state)
{
	(void)state;
	assert_int_equal(crash_pattern(0), 'A');
	assert_int_equal(crash_pattern(4095), 'A');
	assert_int_equal(crash_pattern(4096), 'B');
	assert_int_equal(crash_pattern(15 * 4096 + 7), 'P');
	assert_int_equal(crash_pattern(26 * 4096), 'A');
}

/* Write <dir>/crash.dat as a kernel would have left it: len bytes of the
 * pattern, then the size cut to size (zeros beyond len). */
static void crash_file(const char *dir, long long len, long long size)
{
	char path[512];
	long long off;
	int fd;

	snprintf(path, sizeof(path), "%s/" CRASH_FILE, dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	for (off = 0; off < len; off++) {
		unsigned char c = crash_pattern(off);

		assert_int_equal(pwrite(fd, &c, 1, (off_t)off), 1);
	}
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

static void crash_file_remove(const char *dir)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/" CRASH_FILE, dir);
	unlink(path);
}

static void test_crash_verify_missing(void **state)
{
	struct host_dir *h = *state;
	struct diag d;

	assert_int_equal(crash_verify(h->path, 0, 65536, &d), TEST_FAIL);
	assert_int_equal(d.count, 1);
	assert_string_equal(d.line[0], "crash.dat missing after power cut");
}

static void test_crash_verify_good(void **state)
{
	struct host_dir *h = *state;
	struct diag d;

	crash_file(h->path, 65536, 65536);
	assert_int_equal(crash_verify(h->path, 0, 65536, &d), TEST_PASS);
	assert_int_equal(d.count, 0);
	/* More than promised is fine ("at least"), and so is a short promise. */
	assert_int_equal(crash_verify(h->path, 0, 8192, &d), TEST_PASS);
	crash_file(h->path, 65536, 65536 + 4096);
	assert_int_equal(crash_verify(h->path, 0, 65536, &d), TEST_PASS);
	crash_file_remove(h->path);
}

/* 91562895f803's bug: the last size update never reached the journal. */
static void test_crash_verify_short_size(void **state)
{
	struct host_dir *h = *state;
	struct diag d;

	crash_file(h->path, 61440, 61440);
	assert_int_equal(crash_verify(h->path, 0, 65536, &d), TEST_FAIL);
	assert_int_equal(d.count, 1);
	assert_string_equal(d.line[0], "st_size 61440 after power cut, expected "
				       ">= 65536 (O_SYNC|O_DIRECT extension not durable)");
	crash_file(h->path, 0, 0);
	assert_int_equal(crash_verify(h->path, 0, 65536, &d), TEST_FAIL);
	assert_string_equal(d.line[0], "st_size 0 after power cut, expected "
				       ">= 65536 (O_SYNC|O_DIRECT extension not durable)");
	assert_int_equal(d.count, 1);
	crash_file_remove(h->path);
}

/* Size durable but a block's data not (or never written): zeros show. */
static void test_crash_verify_wrong_data(void **state)
{
	struct host_dir *h = *state;
	struct diag d;

	crash_file(h->path, 4096, 65536);
	assert_int_equal(crash_verify(h->path, 0, 65536, &d), TEST_FAIL);
	assert_int_equal(d.count, 2);
	assert_string_equal(d.line[0], "buffer wrong at 4096 have 00 expected 42");
	assert_string_equal(d.line[1], "totals: wrong bytes 61440 of 65536 "
				       "(O_SYNC|O_DIRECT extension not durable)");
	crash_file_remove(h->path);
}

static void test_crash_verify_ktap(void **state)
{
	struct host_dir *h = *state;
	struct suite_counts c;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	struct crash_disk one = { h->path, 0, 0 };

	crash_file(h->path, 8192, 8192);
	crash_verify_run(&one, 1, "ext4", 65536, f, &c);
	fclose(f);
	{
		/* The duration line comes right before the result; its
		 * value is the run's own, so it is checked and cut out. */
		char *t = strstr(text, "    # rcgate-time-ms: "), *end;

		assert_non_null(t);
		end = strchr(t, '\n');
		assert_non_null(end);
		for (const char *q = t + 22; q < end; q++)
			assert_true(*q >= '0' && *q <= '9');
		assert_int_equal(strncmp(end + 1, "    not ok 1", 12), 0);
		memmove(t, end + 1, strlen(end + 1) + 1);
	}
	assert_string_equal(text,
		"    KTAP version 1\n"
		"    # Subtest: ext4\n"
		"    1..1\n"
		"    # crash_osync_extend: st_size 8192 after power cut, expected "
		">= 65536 (O_SYNC|O_DIRECT extension not durable)\n"
		"    not ok 1 crash_osync_extend\n");
	assert_int_equal(c.fail, 1);
	assert_int_equal(c.pass + c.skip, 0);
	free(text);
	crash_file_remove(h->path);
}

static void test_crash_write_then_verify(void **state)
{
	struct host_dir *h = *state;
	struct diag d;
	char err[256];
	int fd = -2;

	if (!h->env.odirect) {
		skip();
		return;
	}
	assert_int_equal(crash_write(h->path, 0, &fd, &d, err, sizeof(err)),
			 CRASH_BLOCKS * CRASH_BLOCK);
	assert_true(fd >= 0);
	assert_int_equal(d.count, 0);
	/* No power cut on the host: what was written must all be there. */
	assert_int_equal(crash_verify(h->path, 0, CRASH_BLOCKS * CRASH_BLOCK, &d),
			 TEST_PASS);
	close(fd);
	crash_file_remove(h->path);
	assert_int_equal(crash_write("/nonexistent/rcgate", 0, NULL, &d, err,
				     sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/rcgate/crash.dat"));
}

/* With 6.1.64 as well, the writes report success but pile up at 0. */
static void test_crash_write_6164(void **state)
{
	struct host_dir *h = *state;
	struct diag d;
	char err[256];

	if (!h->env.odirect) {
		skip();
		return;
	}
	suite_set_io(&io_6164);
	assert_int_equal(crash_write(h->path, 0, NULL, &d, err, sizeof(err)), 65536);
	assert_int_equal(d.count, 2);
	assert_string_equal(d.line[0], "write 1 of 16 (4096 bytes): position 0, expected 4096");
	assert_string_equal(d.line[1], "totals: wrong position 16");
	suite_set_io(NULL);
	assert_int_equal(crash_verify(h->path, 0, 65536, &d), TEST_FAIL);
	assert_string_equal(d.line[0], "st_size 4096 after power cut, expected "
				       ">= 65536 (O_SYNC|O_DIRECT extension not durable)");
	/* The last block ('P') won at offset 0. */
	assert_string_equal(d.line[1], "buffer wrong at 0 have 50 expected 41");
	crash_file_remove(h->path);
}

/* Every promise on the host (no power cut): all it wrote is there, each
 * has its own file and catalogue row; blocks only fallocated (a lost
 * sync's picture after the cut) fail with the promise named. */
static void test_crash_promises(void **state)
{
	struct host_dir *h = *state;
	char err[256], why[128], path[4200];
	struct diag d;

	for (unsigned int p = 0; p < CRASH_PROMISES; p++) {
		int fd = -2;

		assert_non_null(crash_test_name(p));
		assert_non_null(suite_catalogue_find(crash_test_name(p)));
		for (unsigned int q = 0; q < p; q++) {
			assert_string_not_equal(crash_test_name(p),
						crash_test_name(q));
			assert_string_not_equal(crash_file_name(p),
						crash_file_name(q));
		}
		if (!h->env.odirect || crash_unsupported(p, why, sizeof(why)))
			continue;
		assert_int_equal(crash_write(h->path, p, &fd, &d, err,
					     sizeof(err)), 65536);
		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(crash_verify(h->path, p, 65536, &d), TEST_PASS);
	}
	assert_null(crash_test_name(CRASH_PROMISES));
	assert_int_equal(crash_verify(h->path, CRASH_PROMISES, 65536, &d),
			 TEST_FAIL);
	snprintf(path, sizeof(path), "%s/%s", h->path, crash_file_name(3));
	{
		int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);

		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, 65536), 0);
		close(fd);
	}
	if (crash_unsupported(3, why, sizeof(why)) == NULL) {
		assert_int_equal(crash_verify(h->path, 3, 65536, &d), TEST_FAIL);
		assert_string_equal(d.line[0], "buffer wrong at 0 have 00 expected 41");
		assert_string_equal(d.line[1], "totals: wrong bytes 65536 of 65536 "
			"(AIO RWF_DSYNC write into preallocated blocks not durable)");
	}
	for (unsigned int p = 0; p < CRASH_PROMISES; p++) {
		snprintf(path, sizeof(path), "%s/%s", h->path, crash_file_name(p));
		unlink(path);
	}
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
		cmocka_unit_test(test_catalogue_covers_the_table),
		cmocka_unit_test(test_bdev_table),
		cmocka_unit_test_setup_teardown(test_bdev_suite_on_loop,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test(test_eof_zeroing_gaps),
		cmocka_unit_test(test_unusable_dir_prints_nothing),
		cmocka_unit_test_setup_teardown(test_only_subset,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_whole_suite_on_host,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_simulated_6164_is_caught,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_short_write_is_caught,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_isolation_timeout_and_crash,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_isolation_wait_and_mask,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_no_odirect_skips_everything,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_large_alignment_skips_small_blocks,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test(test_disks_parse_good),
		cmocka_unit_test(test_disks_parse_bad),
		cmocka_unit_test(test_fs_listed),
		cmocka_unit_test(test_mount_error_unsupported),
		cmocka_unit_test(test_crash_pattern),
		cmocka_unit_test_setup_teardown(test_crash_verify_missing,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_crash_verify_good,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_crash_verify_short_size,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_crash_verify_wrong_data,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_crash_verify_ktap,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_crash_write_then_verify,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_crash_write_6164,
						host_dir_setup, host_dir_teardown),
		cmocka_unit_test_setup_teardown(test_crash_promises,
						host_dir_setup, host_dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
