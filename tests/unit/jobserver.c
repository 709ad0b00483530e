/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for the build budget (jobserver.c): at most [build] jobs
 * builds hold a token at once, a waiting build can be cancelled, a make
 * killed with tokens does not shrink the budget for good, and real GNU
 * makes run through build_run (in the bubblewrap sandbox, as builds run)
 * share the tokens: one build alone runs `jobs` recipes at once, two
 * builds together never more than `jobs` in all.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
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

static int polls;

static int cancel_after_polls(void *cls)
{
	(void)cls;
	return ++polls > 3;
}

static void test_budget(void **state)
{
	struct jobserver_token a, b, c;
	char err[256];

	(void)state;
	assert_int_equal(jobserver_enter(2, NULL, NULL, &a, err, sizeof(err)), 0);
	assert_int_equal(jobserver_enter(2, NULL, NULL, &b, err, sizeof(err)), 0);
	assert_true(a.held && b.held);
	assert_int_not_equal(a.slot, b.slot);
	assert_int_equal(jobserver_free(), 0);
	/* A third build waits, and its cancel ends the wait. */
	polls = 0;
	assert_int_equal(jobserver_enter(2, cancel_after_polls, NULL, &c, err,
					 sizeof(err)), 1);
	assert_false(c.held);
	assert_non_null(strstr(err, "cancelled"));
	jobserver_leave(&c);		/* not held: nothing */
	jobserver_leave(&a);
	assert_int_equal(jobserver_free(), 1);
	/* The freed slot is the next build's. */
	assert_int_equal(jobserver_enter(2, NULL, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(c.slot, a.slot);
	jobserver_leave(&b);
	jobserver_leave(&c);
	assert_int_equal(jobserver_free(), 2);
}

static void test_lost_tokens_come_back(void **state)
{
	struct jobserver_token a;
	char err[256], t;

	(void)state;
	assert_int_equal(jobserver_enter(2, NULL, NULL, &a, err, sizeof(err)), 0);
	/* A make that took the other token and was killed. */
	assert_int_equal(read(a.fds[0], &t, 1), 1);
	assert_int_equal(jobserver_free(), 0);
	jobserver_leave(&a);
	assert_int_equal(jobserver_free(), 2);
}

static void test_makeflags(void **state)
{
	struct jobserver_token a;
	char err[256], mf[96];

	(void)state;
	assert_int_equal(jobserver_makeflags(&(struct jobserver_token){ 0 }, mf,
					     sizeof(mf)), -1);
	assert_int_equal(jobserver_enter(2, NULL, NULL, &a, err, sizeof(err)), 0);
	assert_int_equal(jobserver_makeflags(&a, mf, sizeof(mf)), 0);
	assert_string_equal(mf, "MAKEFLAGS=-j2 --jobserver-auth=4,5");
	assert_int_equal(jobserver_makeflags(&a, mf, 10), -1);
	jobserver_leave(&a);
}

/* ---- real makes ---- */

static char dir[256];

/* Six recipes of 0.4 s, each writing "+ <ns>" when it starts and
 * "- <ns>" when it ends into <dir>/trace (appends of one short line). */
static void write_makefile(void)
{
	char path[PATH_MAX + 16];
	FILE *f;

	snprintf(path, sizeof(path), "%s/Makefile", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "all: r1 r2 r3 r4 r5 r6\n"
		"r1 r2 r3 r4 r5 r6:\n"
		"\t@echo \"+ $$(date +%%s%%N)\" >> %s/trace; sleep 0.4; "
		"echo \"- $$(date +%%s%%N)\" >> %s/trace\n"
		".PHONY: all r1 r2 r3 r4 r5 r6\n", dir, dir);
	fclose(f);
}

struct run {
	int status;
	char err[256];
};

static void *one_build(void *arg)
{
	struct run *r = arg;
	struct jobserver_token tok;
	struct sandbox sb = { { NULL }, { dir }, 0, 0, NULL };
	struct build_options o = { .root = dir, .timeout = 60, .sandbox = &sb };
	char mf[96], path[PATH_MAX + 8];
	char *env[] = { path, mf, NULL };
	const char *argv[] = { "make", "-s", "-C", dir, NULL };
	int fd;

	snprintf(path, sizeof(path), "PATH=%s", getenv("PATH"));
	if (jobserver_enter(2, NULL, NULL, &tok, r->err, sizeof(r->err)) != 0) {
		r->status = -1;
		return NULL;
	}
	o.jobserver = &tok;
	jobserver_makeflags(&tok, mf, sizeof(mf));
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	r->status = build_run(argv, NULL, env, fd, &o, now_monotonic() + 60,
			      r->err, sizeof(r->err));
	close(fd);
	jobserver_leave(&tok);
	return NULL;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* The most recipes that ran at once, from the trace; *n the recipes. */
static int max_at_once(int *n)
{
	char path[PATH_MAX + 8], line[64];
	long long ev[64];
	size_t ne = 0;
	int cur = 0, max = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	*n = 0;
	while (fgets(line, sizeof(line), f) != NULL && ne < 64) {
		long long t = atoll(line + 2) * 2;

		/* An end sorts before a start at the same instant. */
		ev[ne++] = line[0] == '+' ? t + 1 : t;
		*n += line[0] == '+';
	}
	fclose(f);
	unlink(path);
	qsort(ev, ne, sizeof(ev[0]), cmp_ll);
	for (size_t i = 0; i < ne; i++) {
		cur += (ev[i] & 1) ? 1 : -1;
		if (cur > max)
			max = cur;
	}
	return max;
}

static int setup_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/rcgate-jobserver.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	chmod(dir, 0755);
	write_makefile();
	return 0;
}

static int teardown_dir(void **state)
{
	(void)state;
	rm_rf(dir);
	return 0;
}

static void test_one_make_uses_the_tokens(void **state)
{
	struct run r = { 0 };
	int n;

	(void)state;
	one_build(&r);
	assert_int_equal(r.status, 0);
	assert_int_equal(max_at_once(&n), 2);
	assert_int_equal(n, 6);
	assert_int_equal(jobserver_free(), 2);
}

static void test_two_makes_share_them(void **state)
{
	struct run r[2] = { 0 };
	pthread_t th[2];
	int n;

	(void)state;
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, one_build, &r[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(r[0].status, 0);
	assert_int_equal(r[1].status, 0);
	assert_int_equal(max_at_once(&n), 2);
	assert_int_equal(n, 12);
	assert_int_equal(jobserver_free(), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_lost_tokens_come_back),
		cmocka_unit_test(test_makeflags),
		cmocka_unit_test_setup_teardown(test_one_make_uses_the_tokens,
						setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_two_makes_share_them,
						setup_dir, teardown_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
