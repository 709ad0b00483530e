/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for gitsrc_checkout's choice of worktree, on a real git
 * repository with two branches (git runs in the build sandbox, as for
 * rcgated): a branch goes back to the worktree that last built it (its
 * kbuild objects make the next build incremental), a new branch takes a
 * new worktree rather than another branch's, a worktree in use is never
 * taken, and with every slot used the one used longest ago is; a warm
 * worktree copied (gitsrc_worktree_seed) is a second warm one; a commit
 * the cached clone has is not fetched again (gitsrc_fetch).
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "build/build.h"
#include "testutil.h"

static char root[64], gitdir[512], head_a[41], head_b[41];

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

		test_run(init);
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
		const char *touch[] = { "sh", "-c", "echo 'int b;' > \"$0\"/b.c &&"
					" git -C \"$0\" add b.c", work, NULL };
		const char *ci2[] = { "git", "-C", work, "-c", "user.name=t", "-c",
				      "user.email=t@t", "commit", "-q", "-m", "b",
				      NULL };
		const char *clone[] = { "git", "clone", "-q", "--bare", work,
					gitdir, NULL };

		test_run(add);
		test_run(ci);
		test_run(br);
		test_run(touch);
		test_run(ci2);
		test_run(clone);
	}
	test_git_rev(gitdir, "a", head_a);
	test_git_rev(gitdir, "b", head_b);
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

/* A file's modification time, to the nanosecond. */
static struct timespec mtime_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_mtim;
}

static int git_quiet(const char *tree, const char *what)
{
	char cmd[PATH_MAX + 128], line[256] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "git -C %s %s 2>&1", tree, what);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (fgets(line, sizeof(line), p) != NULL)
		print_error("git %s: %s", what, line);
	pclose(p);
	return line[0] == '\0';
}

/* A second warm worktree copied from the first: its kbuild objects and
 * their times kept, a worktree of its own in the clone (HEAD and a
 * refreshed index), its symbolic links copied as links and never
 * followed; the next checkout there rewrites only what changed. */
static void test_seed(void **state)
{
	struct build_options o = { .root = root, .timeout = 60 };
	char src[PATH_MAX], cp[PATH_MAX + 16], p[PATH_MAX + 64], q[PATH_MAX + 64],
	     err[512] = "", link[64];
	struct timespec old = { 1600000000, 123456789 }, ts[2] = { old, old };
	int fa, fs, n;
	ssize_t len;
	FILE *f;

	(void)state;
	/* Nothing warm: nothing to copy. */
	assert_int_equal(gitsrc_worktree_seed(gitdir, "armv7", "s", &o, err,
					      sizeof(err)), 0);
	{
		char tree[PATH_MAX];

		assert_int_equal(gitsrc_checkout(gitdir, head_a, "armv7", "s", 2,
						 &o, tree, sizeof(tree), &fa,
						 err, sizeof(err)), 0);
		snprintf(src, sizeof(src), "%s", tree);
	}
	/* Its build: an object older than now, a link out of the tree. */
	snprintf(p, sizeof(p), "%s/build/sub", src);
	assert_int_equal(mkdir_p(p, 0755, err, sizeof(err)), 0);
	snprintf(p, sizeof(p), "%s/build/sub/obj.o", src);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs("object", f);
	fclose(f);
	assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
	snprintf(p, sizeof(p), "%s/build/source", src);
	assert_int_equal(symlink("..", p), 0);
	snprintf(p, sizeof(p), "%s/build/out", src);
	assert_int_equal(symlink("/etc", p), 0);
	/* In use: not copied. */
	assert_int_equal(gitsrc_worktree_seed(gitdir, "armv7", "s", &o, err,
					      sizeof(err)), 0);
	close(fa);
	n = gitsrc_worktree_seed(gitdir, "armv7", "s", &o, err, sizeof(err));
	if (n != 1)
		print_error("seed: %s\n", err);
	assert_int_equal(n, 1);
	assert_int_equal(gitsrc_worktrees_warm(gitdir, "armv7", "s"), 2);
	snprintf(cp, sizeof(cp), "%s.wt/armv7.1", gitdir);
	snprintf(p, sizeof(p), "%s/build/sub/obj.o", cp);
	{
		struct timespec t = mtime_of(p);

		assert_int_equal(t.tv_sec, old.tv_sec);
		assert_int_equal(t.tv_nsec, old.tv_nsec);
	}
	snprintf(p, sizeof(p), "%s/build/out", cp);
	len = readlink(p, link, sizeof(link) - 1);
	assert_int_equal(len, 4);
	link[len] = '\0';
	assert_string_equal(link, "/etc");
	snprintf(q, sizeof(q), "%s/build/source", cp);
	assert_true(access(q, F_OK) == 0);
	/* Its own worktree: the same commit, nothing modified. */
	assert_true(git_quiet(cp, "status --porcelain --untracked-files=no"));
	{
		char head[41];
		char cmd[PATH_MAX + 64];
		FILE *h;

		snprintf(cmd, sizeof(cmd), "git -C %s rev-parse HEAD", cp);
		h = popen(cmd, "r");
		assert_non_null(h);
		assert_non_null(fgets(head, sizeof(head), h));
		pclose(h);
		assert_string_equal(head, head_a);
	}
	/* The source busy, b's commit goes to the copy: the Makefile both
	 * commits share keeps its time, b.c comes, the objects stay. */
	assert_int_equal(gitsrc_checkout(gitdir, head_a, "armv7", "s", 2, &o, p,
					 sizeof(p), &fa, err, sizeof(err)), 0);
	assert_string_equal(p, src);
	snprintf(q, sizeof(q), "%s/Makefile", cp);
	old = mtime_of(q);
	{
		char tree[PATH_MAX];

		assert_int_equal(gitsrc_checkout(gitdir, head_b, "armv7", "s", 2,
						 &o, tree, sizeof(tree), &fs,
						 err, sizeof(err)), 0);
		assert_string_equal(tree, cp);
	}
	assert_int_equal(mtime_of(q).tv_nsec, old.tv_nsec);
	assert_int_equal(mtime_of(q).tv_sec, old.tv_sec);
	snprintf(q, sizeof(q), "%s/b.c", cp);
	assert_true(access(q, F_OK) == 0);
	snprintf(q, sizeof(q), "%s/build/sub/obj.o", cp);
	assert_true(access(q, F_OK) == 0);
	close(fs);
	close(fa);
}

/* Every worktree's kbuild sees its tree at SANDBOX_TREE (sandbox.c's
 * tree_at): the command runs there, writes its build/ there, and the
 * tree itself stays read-only. */
static void test_tree_at(void **state)
{
	char tree[PATH_MAX], bdir[PATH_MAX + 8], out[PATH_MAX + 16],
	     f[PATH_MAX + 16], err[512] = "", line[256] = "";
	const char *sh[] = { "sh", "-c", "pwd; echo made > build/obj;"
			     " touch Makefile 2>/dev/null || echo read-only", NULL };
	struct sandbox sb;
	struct build_options o = { .root = root, .timeout = 60 };
	FILE *r;
	int fd;

	(void)state;
	snprintf(tree, sizeof(tree), "%s/tree-at", root);
	snprintf(bdir, sizeof(bdir), "%s/build", tree);
	assert_int_equal(mkdir_p(bdir, 0755, err, sizeof(err)), 0);
	snprintf(f, sizeof(f), "%s/Makefile", tree);
	fclose(fopen(f, "w"));
	snprintf(out, sizeof(out), "%s/out.txt", root);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	sb = (struct sandbox){ { tree }, { bdir }, 0, 1, SANDBOX_TREE };
	o.sandbox = &sb;
	assert_int_equal(build_run(sh, tree, NULL, fd, &o, now_monotonic() + 60,
				   err, sizeof(err)), 0);
	close(fd);
	r = fopen(out, "r");
	assert_non_null(r);
	assert_non_null(fgets(line, sizeof(line), r));
	assert_string_equal(line, SANDBOX_TREE "\n");
	assert_non_null(fgets(line, sizeof(line), r));
	assert_string_equal(line, "read-only\n");
	fclose(r);
	snprintf(f, sizeof(f), "%s/obj", bdir);
	assert_true(access(f, F_OK) == 0);
}

struct bg_checkout {
	char tree[PATH_MAX];
	int rc, fd, done;
};

static void *bg_checkout(void *arg)
{
	struct bg_checkout *b = arg;
	struct build_options o = { .root = root, .timeout = 60 };
	char err[512] = "";

	b->rc = gitsrc_checkout(gitdir, head_a, "i386", "w", 2, &o, b->tree,
				sizeof(b->tree), &b->fd, err, sizeof(err));
	__atomic_store_n(&b->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* A new worktree waits for a fetch of its clone (the clone's lock):
 * a fetch beside `git worktree add` saw its half-made HEAD and failed. */
static void test_add_waits_for_fetch(void **state)
{
	struct bg_checkout b = { .rc = -2, .fd = -1 };
	char lock[PATH_MAX + 8], dotgit[PATH_MAX + 16];
	pthread_t th;
	int fd;

	(void)state;
	snprintf(lock, sizeof(lock), "%s.lock", gitdir);
	fd = open(lock, O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);	/* a fetch runs */
	assert_int_equal(pthread_create(&th, NULL, bg_checkout, &b), 0);
	sleep(2);
	snprintf(dotgit, sizeof(dotgit), "%s.wt/i386.0/.git", gitdir);
	assert_int_equal(__atomic_load_n(&b.done, __ATOMIC_SEQ_CST), 0);
	assert_true(access(dotgit, F_OK) != 0);
	close(fd);					/* it ended */
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(b.rc, 0);
	assert_true(access(dotgit, F_OK) == 0);
	close(b.fd);
}

/* A commit the cached clone has is not fetched again: the tree's URL
 * here has nothing listening (port 9), so any fetch fails. A commit it
 * lacks, or a branch (its head may have moved), is fetched. */
static void test_fetch_known_commit(void **state)
{
	const char *url = "git://127.0.0.1:9/linux-stable-rc.git";
	struct build_options o = { .root = root, .timeout = 60 };
	char clone[PATH_MAX], logpath[PATH_MAX], gd[PATH_MAX], commit[41],
		err[512] = "", *text;
	int fd;

	(void)state;
	assert_int_equal(gitsrc_clone_dir(root, url, clone, sizeof(clone)), 0);
	{
		char dir[PATH_MAX];
		const char *cp[] = { "git", "clone", "-q", "--bare", gitdir,
				     clone, NULL };

		snprintf(dir, sizeof(dir), "%s/git", root);
		assert_int_equal(mkdir(dir, 0755), 0);
		test_run(cp);
	}
	snprintf(logpath, sizeof(logpath), "%s/fetch.log", root);
	fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
	assert_true(fd >= 0);
	assert_int_equal(gitsrc_fetch(url, head_b, fd, &o, gd, sizeof(gd),
				      commit, err, sizeof(err)), 1);
	assert_string_equal(commit, head_b);
	assert_string_equal(gd, clone);
	text = file_read(logpath, 1 << 20, NULL, NULL, 0);
	assert_non_null(text);
	assert_non_null(strstr(text, "is in the cached clone already: nothing"
				     " fetched"));
	assert_null(strstr(text, "git: fetching"));
	free(text);
	/* Not in the clone: a fetch is tried, and refused (loopback is not
	 * in [fetch] allow_networks) or failed: either way, no answer. */
	assert_int_equal(gitsrc_fetch(url, "0123456789abcdef0123456789abcdef01234567",
				      fd, &o, gd, sizeof(gd), commit, err,
				      sizeof(err)), -1);
	assert_non_null(strstr(err, "127.0.0.1"));
	err[0] = '\0';
	assert_int_equal(gitsrc_fetch(url, "b", fd, &o, gd, sizeof(gd), commit,
				      err, sizeof(err)), -1);
	assert_non_null(strstr(err, "127.0.0.1"));
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_branch_affinity),
		cmocka_unit_test(test_full_takes_least_recent),
		cmocka_unit_test(test_seed),
		cmocka_unit_test(test_tree_at),
		cmocka_unit_test(test_add_waits_for_fetch),
		cmocka_unit_test(test_fetch_known_commit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
