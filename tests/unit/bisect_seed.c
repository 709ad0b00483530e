/* SPDX-License-Identifier: GPL-2.0-only
 *
 * Unit tests for daemon/review/bisect_seed.c, on a real store
 * (testutil_store) and a real git clone whose worktree built the rc's
 * branch: while the rerun of a failure of an rc built from git is queued
 * or running, the pass copies the branch's one warm worktree, so that the
 * bisection that follows starts with two; and never when the copy would
 * be wasted or in the way: [bisect] parallel 1, the rerun finished, a
 * bisection of the branch already running on the target (drive() copies
 * then), the warm worktree in use, two warm already, or a rerun that
 * builds (its rc job built nothing to boot).
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "build/build.h"
#include "testutil.h"
#include "testutil_store.h"

#define RC_VERSION "6.1.193-rc1"
#define TREE "https://git.example/stable-rc.git"
#define BRANCH "linux-6.1"	/* gitsrc_branch_key(RC_VERSION) */

struct seed_fixture {
	struct test_engine *f;
	char root[PATH_MAX], gitdir[PATH_MAX], head[41];
	int lockfd;		/* the warm worktree's, while in use */
};

/* The clone where rcgated keeps TREE, with one commit, and its head. */
static void make_clone(struct seed_fixture *s)
{
	char work[PATH_MAX], file[PATH_MAX + 16], err[256];
	FILE *p;

	snprintf(work, sizeof(work), "%s/src", s->f->dir);
	snprintf(file, sizeof(file), "%s/Makefile", work);
	assert_int_equal(mkdir_p(work, 0755, err, sizeof(err)), 0);
	p = fopen(file, "w");
	assert_non_null(p);
	fputs("VERSION = 6\n", p);
	fclose(p);
	{
		const char *init[] = { "git", "init", "-q", work, NULL };
		const char *add[] = { "git", "-C", work, "add", "Makefile", NULL };
		const char *ci[] = { "git", "-C", work, "-c", "user.name=t", "-c",
				     "user.email=t@t", "commit", "-qm", "a", NULL };
		const char *clone[] = { "git", "clone", "-q", "--bare", work,
					s->gitdir, NULL };

		test_run(init);
		test_run(add);
		test_run(ci);
		test_run(clone);
	}
	test_git_rev(s->gitdir, "HEAD", s->head);
}

/* The rc RC_VERSION built from TREE at head on x86_64, its job done with a
 * failure, and the rerun of that failure queued; the clone with one warm
 * worktree of the branch for x86_64, free (its lock in s->lockfd when
 * keep_locked). */
static void setup_rc(struct seed_fixture *s, int keep_locked)
{
	static const struct result_row rows[] = {
		{ "build.kernel", "pass", NULL, 60, 1 },
		{ "ext4.write_seq_4096", "fail", "data mismatch", 10, 1 },
	};
	struct build_options o = { .timeout = 60 };
	char sql[1024], tree[PATH_MAX], err[512];

	s->f = test_engine_new(NULL);
	assert_non_null(s->f);
	s->f->cfg.bisect_parallel = 2;
	s->f->ectx.cache_dir = s->f->dir;
	snprintf(s->root, sizeof(s->root), "%s/build", s->f->dir);
	assert_int_equal(gitsrc_clone_dir(s->root, TREE, s->gitdir,
					  sizeof(s->gitdir)), 0);
	make_clone(s);
	test_engine_add_release(s->f, RC_VERSION);
	test_engine_finish_next(s->f, RC_VERSION, rows, 2);
	snprintf(sql, sizeof(sql), "UPDATE artifact SET kind = 'git', url = '"
		 TREE "'; UPDATE job SET built_commit = '%s', built_sha256 ="
		 " '%064d'", s->head, 1);
	test_engine_sql(s->f, sql);
	assert_int_equal(store_job_rerun(s->f->st, 1, "x86_64", NULL, err,
					 sizeof(err)), 0);
	o.root = s->root;
	assert_int_equal(gitsrc_checkout(s->gitdir, s->head, "x86_64", BRANCH, 2,
					 &o, tree, sizeof(tree), &s->lockfd, err,
					 sizeof(err)), 0);
	if (!keep_locked) {
		close(s->lockfd);
		s->lockfd = -1;
	}
}

static void teardown_rc(struct seed_fixture *s)
{
	if (s->lockfd >= 0)
		close(s->lockfd);
	test_engine_free(s->f);
}

static int seed(struct seed_fixture *s)
{
	char err[512] = "";
	int n = bisect_seed_once(s->f->st, &s->f->ectx, err, sizeof(err));

	if (n < 0)
		fail_msg("bisect_seed_once: %s", err);
	return n;
}

static int warm(const struct seed_fixture *s)
{
	return gitsrc_worktrees_warm(s->gitdir, "x86_64", BRANCH);
}

/* The rerun queued, then running: the one warm worktree copied once, a
 * worktree of the clone at the rc's commit that is free and warm. */
static void test_copies_while_rerun_runs(void **state)
{
	struct seed_fixture s = { 0 };

	(void)state;
	setup_rc(&s, 0);
	assert_int_equal(warm(&s), 1);
	test_engine_sql(s.f, "UPDATE job SET state = 'booting' WHERE"
			" rerun_of IS NOT NULL");
	assert_int_equal(seed(&s), 1);
	assert_int_equal(warm(&s), 2);
	/* Two warm: a round of two builds incrementally; nothing more. */
	assert_int_equal(seed(&s), 0);
	assert_int_equal(warm(&s), 2);
	teardown_rc(&s);
}

/* Each case where a copy is not wanted, on its own fixture. */
static void test_not_when(void **state)
{
	static const char *const why[] = {
		NULL,			/* [bisect] parallel 1 */
		"UPDATE job SET state = 'done' WHERE rerun_of IS NOT NULL",
		"INSERT INTO bisection (regression_id, release_id, job_id, target,"
		" test, tests, tree, good, bad, good_tested, commits, state,"
		" created) VALUES (1, 1, 1, 'x86_64', 'ext4.write_seq_4096',"
		" ',write_seq_4096,', '" TREE "', 'g', 'b', 1, 'b', 'running',"
		" 'x')",
		"UPDATE job SET built_sha256 = NULL WHERE rerun_of IS NULL",
		NULL,			/* the warm worktree in use */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++) {
		struct seed_fixture s = { 0 };

		setup_rc(&s, i == 4);
		if (i == 0)
			s.f->cfg.bisect_parallel = 1;
		if (why[i] != NULL) {
			if (i == 2)
				test_engine_sql(s.f, "INSERT INTO regression (id,"
						" signature, test, target, fs, state,"
						" first_seen, updated) VALUES (1, 's',"
						" 'ext4.write_seq_4096', 'x86_64',"
						" 'ext4', 'confirmed', 'x', 'x')");
			test_engine_sql(s.f, why[i]);
		}
		if (seed(&s) != 0)
			fail_msg("case %zu: copied", i);
		if (i == 4) {
			close(s.lockfd);
			s.lockfd = -1;
		}
		assert_int_equal(warm(&s), 1);
		teardown_rc(&s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copies_while_rerun_runs),
		cmocka_unit_test(test_not_when),
	};

	return cmocka_run_group_tests_name("bisect_seed", tests, NULL, NULL);
}
