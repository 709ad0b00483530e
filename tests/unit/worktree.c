/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for gitsrc_checkout's choice of worktree, on a real git
 * repository with two branches (git runs in the build sandbox, as for
 * rcgated): a branch goes back to the worktree that last built it (its
 * kbuild objects make the next build incremental), a new branch takes a
 * new worktree rather than another branch's, a worktree in use is never
 * taken, and with every slot used the one used longest ago is.
 */
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "build/build.h"

static char root[64], gitdir[512], head_a[41], head_b[41];

/* The test's own git, outside the sandbox: fixed arguments, no shell. */
static void run(const char *const argv[])
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void rev(const char *ref, char out[41])
{
	char cmd[PATH_MAX + 64];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "git --git-dir=%s rev-parse %s", gitdir, ref);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(out, 41, p));
	pclose(p);
}

static int setup(void **state)
{
	char work[600], file[700];
	FILE *f;

	(void)state;
	snprintf(root, sizeof(root), "/var/tmp/rcgate-worktree.XXXXXX");
	if (mkdtemp(root) == NULL)
		return -1;
	snprintf(work, sizeof(work), "%s/src", root);
	snprintf(gitdir, sizeof(gitdir), "%s/clone.git", root);
	{
		const char *init[] = { "git", "init", "-q", "-b", "a", work, NULL };

		run(init);
	}
	snprintf(file, sizeof(file), "%s/Makefile", work);
	f = fopen(file, "w");
	assert_non_null(f);
	fputs("VERSION = 6\n", f);
	fclose(f);
	{
		const char *add[] = { "git", "-C", work, "add", "Makefile", NULL };
		const char *ci[] = { "git", "-C", work, "-c", "user.name=t", "-c",
				     "user.email=t@t", "commit", "-qm", "a", NULL };
		const char *br[] = { "git", "-C", work, "checkout", "-qb", "b", NULL };
		const char *ci2[] = { "git", "-C", work, "-c", "user.name=t", "-c",
				      "user.email=t@t", "commit", "-q",
				      "--allow-empty", "-m", "b", NULL };
		const char *clone[] = { "git", "clone", "-q", "--bare", work,
					gitdir, NULL };

		run(add);
		run(ci);
		run(br);
		run(ci2);
		run(clone);
	}
	rev("a", head_a);
	rev("b", head_b);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rm_rf(root);
	return 0;
}

/* Checks branch's head out: the worktree's index (its ".N" suffix), its
 * lock fd in *fd (the caller closes it). */
static int checkout(const char *branch, const char *commit, int *fd)
{
	struct build_options o = { .root = root, .timeout = 60 };
	char tree[PATH_MAX], err[512] = "";
	int rc;

	rc = gitsrc_checkout(gitdir, commit, "x86_64", branch, 2, &o, tree,
			     sizeof(tree), fd, err, sizeof(err));
	if (rc != 0)
		print_error("gitsrc_checkout: %s\n", err);
	assert_int_equal(rc, 0);
	return atoi(strrchr(tree, '.') + 1);
}

static void age(int i, time_t seconds_ago)
{
	char lock[PATH_MAX];
	struct timespec ts[2] = { { time(NULL) - seconds_ago, 0 },
				  { time(NULL) - seconds_ago, 0 } };

	snprintf(lock, sizeof(lock), "%s.wt/x86_64.%d.lock", gitdir, i);
	assert_int_equal(utimensat(AT_FDCWD, lock, ts, 0), 0);
}

static void test_branch_affinity(void **state)
{
	int fa, fb, fc, fd;

	(void)state;
	assert_int_equal(gitsrc_worktrees_warm(gitdir, "x86_64", "a"), 0);
	assert_int_equal(checkout("a", head_a, &fa), 0);
	/* In use: not free for a step of a's (bisect_width). */
	assert_int_equal(gitsrc_worktrees_warm(gitdir, "x86_64", "a"), 0);
	close(fa);
	assert_int_equal(gitsrc_worktrees_warm(gitdir, "x86_64", "a"), 1);
	/* Another branch does not take a's objects: a worktree of its own. */
	assert_int_equal(checkout("b", head_b, &fb), 1);
	close(fb);
	/* Each goes back to its own, whichever is first. */
	assert_int_equal(checkout("b", head_b, &fb), 1);
	assert_int_equal(checkout("a", head_a, &fa), 0);
	/* Both in use: a second build of a takes a new one. */
	assert_int_equal(checkout("a", head_a, &fc), 2);
	close(fa);
	close(fb);
	close(fc);
	/* Two of a's now, one of b's; another target has none. */
	assert_int_equal(gitsrc_worktrees_warm(gitdir, "x86_64", "a"), 2);
	assert_int_equal(gitsrc_worktrees_warm(gitdir, "x86_64", "b"), 1);
	assert_int_equal(gitsrc_worktrees_warm(gitdir, "arm64", "a"), 0);
	/* A bisection step of a (a commit of a's branch) is a's. */
	assert_int_equal(checkout("a", head_a, &fa), 0);
	close(fa);
	/* No branch said: the first new worktree. */
	assert_int_equal(checkout(NULL, head_a, &fd), 3);
	close(fd);
}

static void test_full_takes_least_recent(void **state)
{
	int fds[GITSRC_WORKTREES], fd;
	char name[16];

	(void)state;
	/* Fill every slot with a branch of its own (all the same commit). */
	for (int i = 0; i < GITSRC_WORKTREES; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		fds[i] = -1;
		checkout(name, head_a, &fds[i]);
	}
	for (int i = 0; i < GITSRC_WORKTREES; i++) {
		close(fds[i]);
		age(i, 100 + (i == 5 ? 1000 : i));
	}
	/* A ninth branch: the worktree used longest ago. */
	assert_int_equal(checkout("d", head_a, &fd), 5);
	close(fd);
	/* All in use: no worktree, and an error that says so. */
	{
		struct build_options o = { .root = root, .timeout = 60 };
		char tree[PATH_MAX], err[512] = "";
		int lfd;

		for (int i = 0; i < GITSRC_WORKTREES; i++)
			checkout("e", head_a, &fds[i]);
		assert_int_equal(gitsrc_checkout(gitdir, head_a, "x86_64", "e", 2,
						 &o, tree, sizeof(tree), &lfd,
						 err, sizeof(err)), -1);
		assert_non_null(strstr(err, "no free worktree"));
		for (int i = 0; i < GITSRC_WORKTREES; i++)
			close(fds[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_branch_affinity),
		cmocka_unit_test(test_full_takes_least_recent),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
