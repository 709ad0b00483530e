/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/buildcache.c: the build root's LRU under a disk
 * budget, on real directories: the least recently used tree goes first,
 * one in use (its lock held) never, a clone only with its worktrees.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "build/build.h"

/* dir with a 1 MiB file, and its lock file last used `age` seconds ago. */
static void make_tree(const char *dir, time_t age)
{
	char path[PATH_MAX], lock[PATH_MAX];
	struct timespec ts[2];
	FILE *f;

	assert_int_equal(mkdir_p(dir, 0755, NULL, 0), 0);
	snprintf(path, sizeof(path), "%s/data", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 1024; i++) {
		char kib[1024];

		memset(kib, 'x', sizeof(kib));
		fwrite(kib, 1, sizeof(kib), f);
	}
	fclose(f);
	snprintf(lock, sizeof(lock), "%s.lock", dir);
	close(open(lock, O_WRONLY | O_CREAT, 0644));
	ts[0].tv_sec = ts[1].tv_sec = time(NULL) - age;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	assert_int_equal(utimensat(AT_FDCWD, lock, ts, 0), 0);
}

static int exists(const char *root, const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	return access(p, F_OK) == 0;
}

static void test_lru(void **state)
{
	char root[] = "/tmp/rcgate-buildcache.XXXXXX", p[PATH_MAX], lock[PATH_MAX];
	int held;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/src/old", root);
	make_tree(p, 400);
	snprintf(p, sizeof(p), "%s/src/busy", root);
	make_tree(p, 500);		/* the oldest, but in use */
	snprintf(p, sizeof(p), "%s/src/new", root);
	make_tree(p, 10);
	snprintf(p, sizeof(p), "%s/git/c.git", root);
	make_tree(p, 300);
	snprintf(p, sizeof(p), "%s/git/c.git.wt/x86_64.0", root);
	make_tree(p, 5);		/* recent, but goes with its clone */
	snprintf(lock, sizeof(lock), "%s/src/busy.lock", root);
	held = open(lock, O_RDWR);
	assert_true(held >= 0);
	assert_int_equal(flock(held, LOCK_EX), 0);

	/* 5 trees of ~1 MiB, a budget of 3.5 MiB: old and the clone go
	 * (busy is locked; the clone takes its worktree with it). */
	assert_true(build_cache_evict(root, 3584LL << 10, NULL) >= 2LL << 20);
	assert_true(exists(root, "src/busy"));
	assert_false(exists(root, "src/old"));
	assert_true(exists(root, "src/new"));
	assert_false(exists(root, "git/c.git"));
	assert_false(exists(root, "git/c.git.wt"));
	/* Under budget: nothing more goes. */
	assert_int_equal(build_cache_evict(root, 64LL << 20, NULL), 0);
	assert_true(exists(root, "src/new"));
	/* No budget: nothing at all. */
	assert_int_equal(build_cache_evict(root, 0, NULL), 0);
	close(held);
	rm_rf(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lru),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
