/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests of buildjob_fetch for kind git, on a real cached clone whose
 * tree's URL has nothing listening (port 9, and loopback is not in
 * [fetch] allow_networks): whatever needs the network fails, so a
 * success shows that nothing was fetched.
 *   - every target and attempt of an rc builds the commit the rc was
 *     first built from (job->release_commit), though its branch moved;
 *   - a pinned commit whose Makefile is not the rc's is not built: the
 *     branch is fetched instead;
 *   - a bisection step builds its commit, whatever its Makefile says;
 *   - an rc's own job whose commit's Makefile says another version is an
 *     infra error saying so.
 */
#include <limits.h>
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
#include "build/build.h"
#include "store/store.h"
#include "testutil.h"

#define URL "git://127.0.0.1:9/linux-stable-rc.git"
#define BRANCH "linux-6.1.y"

static char root[64], cache[128], rc1[41], rc2[41];
static struct config cfg;

static void commit_makefile(const char *work, const char *extra)
{
	char file[600], msg[64];
	FILE *f;

	snprintf(file, sizeof(file), "%s/Makefile", work);
	f = fopen(file, "w");
	assert_non_null(f);
	fprintf(f, "VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 193\n"
		"EXTRAVERSION = %s\n", extra);
	fclose(f);
	snprintf(msg, sizeof(msg), "Linux 6.1.193%s", extra);
	{
		const char *add[] = { "git", "-C", work, "add", "Makefile", NULL };
		const char *ci[] = { "git", "-C", work, "-c", "user.name=t", "-c",
				     "user.email=t@t", "commit", "-qm", msg, NULL };

		test_run(add);
		test_run(ci);
	}
}

static int setup(void **state)
{
	char work[600], clone[PATH_MAX], dir[PATH_MAX], err[256];

	(void)state;
	snprintf(root, sizeof(root), "/var/tmp/rcgate-buildjob.XXXXXX");
	if (mkdtemp(root) == NULL)
		return -1;
	snprintf(cache, sizeof(cache), "%s/cache", root);
	snprintf(work, sizeof(work), "%s/src", root);
	{
		const char *init[] = { "git", "init", "-q", "-b", BRANCH, work,
				       NULL };

		test_run(init);
	}
	commit_makefile(work, "-rc1");
	/* The branch moved on after the rc's first target fetched it. */
	commit_makefile(work, "-rc2");
	snprintf(dir, sizeof(dir), "%s/build/git", cache);
	if (mkdir_p(dir, 0755, err, sizeof(err)) < 0)
		return -1;
	snprintf(dir, sizeof(dir), "%s/build", cache);
	if (gitsrc_clone_dir(dir, URL, clone, sizeof(clone)) < 0)
		return -1;
	{
		const char *cp[] = { "git", "clone", "-q", "--bare", work, clone,
				     NULL };

		test_run(cp);
	}
	test_git_rev(clone, BRANCH "~1", rc1);
	test_git_rev(clone, BRANCH, rc2);
	config_defaults(&cfg);
	if (config_parse(&cfg, "[build]\ntree_origins = git://127.0.0.1:9/\n",
			 "test", err, sizeof(err)) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	config_free(&cfg);
	rm_rf(root);
	return 0;
}

/* An rc's job of x86_64: version, the branch, no commit of its own. */
static void rc_job(struct job *j, const char *version)
{
	memset(j, 0, sizeof(*j));
	j->id = 1;
	j->release_id = 1;
	snprintf(j->target, sizeof(j->target), "x86_64");
	snprintf(j->version, sizeof(j->version), "%s", version);
	snprintf(j->url, sizeof(j->url), URL);
	snprintf(j->kind, sizeof(j->kind), "git");
	snprintf(j->git_ref, sizeof(j->git_ref), BRANCH);
}

/* buildjob_fetch of j: its return, the job log in log (freed by the
 * caller). */
static int fetch(const struct job *j, struct buildjob_src *s, char **log,
		 char *err, size_t errlen)
{
	char jobdir[PATH_MAX], path[PATH_MAX + 8];
	FILE *joblog;
	int rc;

	snprintf(jobdir, sizeof(jobdir), "%s/job", root);
	rm_rf(jobdir);
	assert_int_equal(mkdir(jobdir, 0755), 0);
	snprintf(path, sizeof(path), "%s/log", jobdir);
	joblog = fopen(path, "w");
	assert_non_null(joblog);
	err[0] = '\0';
	rc = buildjob_fetch(j, &cfg, cache, jobdir, joblog, NULL, s, err,
			    errlen);
	fclose(joblog);
	*log = file_read(path, 1 << 20, NULL, NULL, 0);
	assert_non_null(*log);
	return rc;
}

static void test_pinned(void **state)
{
	struct buildjob_src s;
	struct job j;
	char err[1024], *log;

	(void)state;
	rc_job(&j, "6.1.193-rc1");
	snprintf(j.release_commit, sizeof(j.release_commit), "%s", rc1);
	assert_int_equal(fetch(&j, &s, &log, err, sizeof(err)), 0);
	assert_string_equal(s.commit, rc1);
	if (strstr(log, "the commit of " BRANCH " this rc was first built"
			" from") == NULL)
		fail_msg("job log: %s", log);
	free(log);
}

/* A pin whose Makefile is another rc's (a store of an older rcgated,
 * which recorded the head before checking it) is not built: the branch
 * is fetched, and here that needs the network. */
static void test_pin_refused(void **state)
{
	struct buildjob_src s;
	struct job j;
	char err[1024], *log;

	(void)state;
	rc_job(&j, "6.1.193-rc1");
	snprintf(j.release_commit, sizeof(j.release_commit), "%s", rc2);
	assert_int_equal(fetch(&j, &s, &log, err, sizeof(err)), -1);
	if (strstr(log, "cannot be built") == NULL ||
	    strstr(log, "is 6.1.193-rc2, not 6.1.193-rc1") == NULL ||
	    strstr(log, "git: fetching " URL " for " BRANCH) == NULL)
		fail_msg("job log: %s", log);
	assert_non_null(strstr(err, "127.0.0.1"));
	free(log);
}

static void test_step_and_version(void **state)
{
	struct buildjob_src s;
	struct job j;
	char err[1024], *log;

	(void)state;
	/* A bisection step: its commit, whatever version it is. */
	rc_job(&j, "6.1.193-rc1");
	j.bisection_id = 7;
	snprintf(j.git_commit, sizeof(j.git_commit), "%s", rc2);
	assert_int_equal(fetch(&j, &s, &log, err, sizeof(err)), 0);
	assert_string_equal(s.commit, rc2);
	assert_non_null(strstr(log, "is in the cached clone already: nothing"
				    " fetched"));
	free(log);
	/* The rc's own job (a revert check) at a commit of another rc. */
	j.bisection_id = 0;
	assert_int_equal(fetch(&j, &s, &log, err, sizeof(err)), -1);
	if (strstr(err, BRANCH " at ") == NULL ||
	    strstr(err, " is 6.1.193-rc2, not 6.1.193-rc1 (its Makefile)") == NULL)
		fail_msg("err: %s", err);
	free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pinned),
		cmocka_unit_test(test_pin_refused),
		cmocka_unit_test(test_step_and_version),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
