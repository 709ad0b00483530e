/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/base/inherit.c: descriptors closed from a number
 * up, by close_range and by the /proc/self/fd walk its fallback is (with
 * more descriptors than one batch of the walk); a state dir open to others
 * made private, its cache subtree left as the operator made it, and a
 * private one left alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/rcgate-inherit.XXXXXX");
	return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rm_rf(dir);
}

static int is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1 || errno != EBADF;
}

/* n descriptors from /dev/null placed at low, low + 1, ... */
static void open_at(int low, int n)
{
	for (int i = 0; i < n; i++) {
		int fd = open("/dev/null", O_RDONLY);

		assert_true(fd >= 0);
		if (fd != low + i) {
			assert_int_equal(dup2(fd, low + i), low + i);
			close(fd);
		}
	}
}

static void check_closed_from(int (*close_from)(int))
{
	/* Below the line: kept; at and above it, 600 of them (more than
	 * one batch of the /proc walk): closed, O_CLOEXEC or not. */
	open_at(100, 10);
	open_at(110, 600);
	assert_int_equal(fcntl(115, F_SETFD, FD_CLOEXEC), 0);
	assert_int_equal(close_from(110), 0);
	for (int fd = 100; fd < 110; fd++)
		assert_true(is_open(fd));
	for (int fd = 110; fd < 710; fd++)
		if (is_open(fd))
			fail_msg("fd %d still open", fd);
	for (int fd = 100; fd < 110; fd++)
		close(fd);
}

static void test_close_range(void **state)
{
	(void)state;
	check_closed_from(fds_close_from);
}

static void test_close_listed(void **state)
{
	(void)state;
	check_closed_from(fds_close_listed);
}

static mode_t mode_of(const char *path)
{
	struct stat sb;

	assert_int_equal(lstat(path, &sb), 0);
	return sb.st_mode & 07777;
}

static void test_state_dir_private(void **state)
{
	char state_dir[128], path[256], cache[192], err[256];
	static const char *const files[] = { "rcgate.db", "rcgate.db-wal",
		"rcgated.log", "jobs/1/1/job.log", NULL };

	(void)state;
	snprintf(state_dir, sizeof(state_dir), "%s/state", dir);
	snprintf(cache, sizeof(cache), "%s/cache", state_dir);
	snprintf(path, sizeof(path), "%s/jobs/1/1", state_dir);
	assert_int_equal(mkdir_p(path, 0755, err, sizeof(err)), 0);
	assert_int_equal(mkdir_p(cache, 0755, err, sizeof(err)), 0);
	for (size_t i = 0; files[i] != NULL; i++) {
		snprintf(path, sizeof(path), "%s/%s", state_dir, files[i]);
		assert_int_equal(file_write_atomic(path, "x", 1, err,
						   sizeof(err)), 0);
		assert_int_equal(chmod(path, 0644), 0);
	}
	snprintf(path, sizeof(path), "%s/public", cache);
	assert_int_equal(file_write_atomic(path, "x", 1, err, sizeof(err)), 0);
	assert_int_equal(chmod(path, 0644), 0);
	snprintf(path, sizeof(path), "%s/link", state_dir);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	for (const char *const *d = (const char *const[]){ "", "/jobs",
	     "/jobs/1", "/jobs/1/1", NULL }; *d != NULL; d++) {
		snprintf(path, sizeof(path), "%s%s", state_dir, *d);
		assert_int_equal(chmod(path, 0755), 0);
	}

	assert_int_equal(state_dir_private(state_dir, cache, err,
					   sizeof(err)), 0);
	assert_int_equal(mode_of(state_dir), 0700);
	snprintf(path, sizeof(path), "%s/jobs/1/1", state_dir);
	assert_int_equal(mode_of(path), 0700);
	for (size_t i = 0; files[i] != NULL; i++) {
		snprintf(path, sizeof(path), "%s/%s", state_dir, files[i]);
		assert_int_equal(mode_of(path), 0600);
	}
	/* The cache is the operator's; a symlink's target is not ours. */
	assert_int_equal(mode_of(cache), 0755);
	snprintf(path, sizeof(path), "%s/public", cache);
	assert_int_equal(mode_of(path), 0644);
	assert_int_equal(mode_of("/etc/passwd") & 044, 044);

	/* Private already: nothing under it is touched (nor walked). */
	snprintf(path, sizeof(path), "%s/rcgate.db", state_dir);
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(state_dir_private(state_dir, cache, err,
					   sizeof(err)), 0);
	assert_int_equal(mode_of(path), 0640);

	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(state_dir_private(path, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "missing"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_close_range),
		cmocka_unit_test(test_close_listed),
		cmocka_unit_test_setup_teardown(test_state_dir_private, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
