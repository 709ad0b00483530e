/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for the build budget (jobserver.c): at most [build] jobs
 * builds hold a token at once, a waiting build can be cancelled, a make
 * killed with tokens does not shrink the budget for good, and real GNU
 * makes run through build_run (in the bubblewrap sandbox, as builds run)
 * share the tokens: one build alone runs `jobs` recipes at once, two
 * builds together never more than `jobs` in all. Builds waiting for a
 * token enter in the order jobs are claimed (buildjob_rank), not as they
 * came. Each build has a pipe of its own: a recipe that writes 100
 * tokens into it changes neither another build's parallelism nor the
 * budget's count, and one that takes tokens and sits on them keeps no
 * other build from entering and running its share.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
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
#include "store/store.h"
#include "build/build.h"

static int polls;

static int cancel_after_polls(void *cls)
{
	(void)cls;
	return ++polls > 3;
}

/* A build of no rank entering a budget of 2 tokens. */
static int enter(struct jobserver_token *t, char err[256])
{
	return jobserver_enter(2, NULL, NULL, NULL, t, err, 256);
}

static void test_budget(void **state)
{
	struct jobserver_token a, b, c;
	char err[256];

	(void)state;
	assert_int_equal(enter(&a, err), 0);
	assert_int_equal(enter(&b, err), 0);
	assert_true(a.held && b.held);
	assert_int_not_equal(a.slot, b.slot);
	assert_int_equal(jobserver_free(), 0);
	/* A third build waits, and its cancel ends the wait. */
	polls = 0;
	assert_int_equal(jobserver_enter(2, NULL, cancel_after_polls, NULL, &c,
					 err, sizeof(err)), 1);
	assert_false(c.held);
	assert_non_null(strstr(err, "cancelled"));
	jobserver_leave(&c);		/* not held: nothing */
	jobserver_leave(&a);
	assert_int_equal(jobserver_free(), 1);
	/* The freed slot is the next build's. */
	assert_int_equal(enter(&c, err), 0);
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
	assert_int_equal(enter(&a, err), 0);
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
	assert_int_equal(enter(&a, err), 0);
	assert_int_equal(jobserver_makeflags(&a, mf, sizeof(mf)), 0);
	assert_string_equal(mf, "MAKEFLAGS=-j2 --jobserver-auth=4,5");
	assert_int_equal(jobserver_makeflags(&a, mf, 10), -1);
	jobserver_leave(&a);
}

/* ---- who enters first ---- */

struct entrant {
	int idx;
	char rank[64];
	struct jobserver_token tok;
	int status;
	char err[256];
};

static atomic_int entered;	/* 1 + the index of the last one in, -1 an
				 * error, 0 none since the last reset */

static void *enter_one(void *arg)
{
	struct entrant *e = arg;

	e->status = jobserver_enter(1, e->rank, NULL, NULL, &e->tok, e->err,
				    sizeof(e->err));
	atomic_store(&entered, e->status == 0 ? 1 + e->idx : -1);
	return NULL;
}

/* Waits (up to 10 s) until cond(arg) holds. */
static int until(int (*cond)(int), int arg)
{
	for (int i = 0; i < 1000; i++) {
		if (cond(arg))
			return 1;
		usleep(10000);
	}
	return 0;
}

static int waiting_is(int n)
{
	return jobserver_waiting() == n;
}

static int someone_entered(int unused)
{
	(void)unused;
	return atomic_load(&entered) != 0;
}

/* Four builds wait for the one token, come in the worst order: a
 * baseline's (no deadline), a review build of the rc due later, then a
 * bisection step and a review build of the rc due first. They enter as
 * jobs are claimed: the first rc's review build, its step, the later
 * rc's build, the baseline's; equal ranks as they came. */
static void test_waiting_builds_enter_by_rank(void **state)
{
	static const struct {
		const char *deadline;
		int64_t bisection_id, id;
	} jobs[] = {
		{ "", 0, 1 },				/* a baseline */
		{ "2023-12-07T03:15:00Z", 0, 5 },	/* due later */
		{ "2023-12-06T11:00:00Z", 3, 9 },	/* a step, due first */
		{ "2023-12-06T11:00:00Z", 0, 12 },	/* its rc's review */
	};
	static const int want[] = { 3, 2, 1, 0 };
	int order[4] = { -1, -1, -1, -1 }, waiting[4] = { -1, -1, -1, -1 };
	struct entrant e[4];
	struct jobserver_token held;
	pthread_t th[4];
	char err[256];

	(void)state;
	memset(e, 0, sizeof(e));
	assert_int_equal(jobserver_enter(1, NULL, NULL, NULL, &held, err,
					 sizeof(err)), 0);
	for (int i = 0; i < 4; i++) {
		struct job j = { 0 };

		j.id = jobs[i].id;
		j.bisection_id = jobs[i].bisection_id;
		snprintf(j.deadline, sizeof(j.deadline), "%s",
			 jobs[i].deadline);
		e[i].idx = i;
		buildjob_rank(&j, e[i].rank, sizeof(e[i].rank));
		assert_int_equal(pthread_create(&th[i], NULL, enter_one, &e[i]),
				 0);
		assert_true(until(waiting_is, i + 1));
	}
	jobserver_leave(&held);
	/* Each one in gives the token back at once, right or wrong, so a
	 * wrong order fails after every thread is in and joined. */
	for (int k = 0; k < 4; k++) {
		if (!until(someone_entered, 0))
			break;
		order[k] = atomic_load(&entered) - 1;
		if (order[k] < 0)
			break;
		waiting[k] = jobserver_waiting();
		atomic_store(&entered, 0);
		jobserver_leave(&e[order[k]].tok);
	}
	for (int i = 0; i < 4; i++)	/* one still waiting: not joined */
		if (order[3] >= 0)
			pthread_join(th[i], NULL);
	for (int k = 0; k < 4; k++) {
		if (order[k] != want[k])
			print_error("entered %d-th: job %lld\n", k, order[k] < 0
				    ? -1LL : (long long)jobs[order[k]].id);
		assert_int_equal(order[k], want[k]);
		assert_int_equal(waiting[k], 3 - k);
	}
	assert_int_equal(jobserver_free(), 1);
}

/* ---- real makes ---- */

static char dir[256];	/* an honest tree: traced recipes */
static char evil[256];	/* a hostile one: its Makefile per test */

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

/* The hostile tree's Makefile: one recipe, marked + so make hands it
 * the jobserver's descriptors. */
static void write_hostile(const char *recipe)
{
	char path[PATH_MAX + 16];
	FILE *f;

	snprintf(path, sizeof(path), "%s/Makefile", evil);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "all:\n\t+@%s\n", recipe);
	fclose(f);
}

struct run {
	const char *dir;
	long tokens;
	int status;
	double seconds;	/* from entering to leaving */
	char err[256];
};

static void *one_build(void *arg)
{
	struct run *r = arg;
	struct jobserver_token tok;
	struct sandbox sb = { { NULL }, { r->dir }, 0, 0, NULL };
	struct build_options o = { .root = r->dir, .timeout = 60, .sandbox = &sb };
	char mf[96], path[PATH_MAX + 8];
	char *env[] = { path, mf, NULL };
	const char *argv[] = { "make", "-s", "-C", r->dir, NULL };
	double t0 = now_monotonic();
	int fd;

	snprintf(path, sizeof(path), "PATH=%s", getenv("PATH"));
	if (jobserver_enter(r->tokens, NULL, NULL, NULL, &tok, r->err,
			    sizeof(r->err)) != 0) {
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
	r->seconds = now_monotonic() - t0;
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
	snprintf(evil, sizeof(evil), "/tmp/rcgate-jobserver-evil.XXXXXX");
	if (mkdtemp(dir) == NULL || mkdtemp(evil) == NULL)
		return -1;
	chmod(dir, 0755);
	chmod(evil, 0755);
	write_makefile();
	return 0;
}

static int teardown_dir(void **state)
{
	(void)state;
	rm_rf(dir);
	rm_rf(evil);
	return 0;
}

static void test_one_make_uses_the_tokens(void **state)
{
	struct run r = { dir, 2, 0, 0, "" };
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
	struct run r[2] = { { dir, 2, 0, 0, "" }, { dir, 2, 0, 0, "" } };
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

static int marked(int unused)
{
	char path[PATH_MAX + 8];

	(void)unused;
	snprintf(path, sizeof(path), "%s/marker", evil);
	return access(path, F_OK) == 0;
}

/* Issue 49: a build's recipe writes 100 tokens into its jobserver. With
 * 3 tokens, one held all along by another build: an honest build beside
 * it still runs at most the 2 the others leave, and once both are done
 * the budget counts exactly the 2 it had. */
static void test_forged_tokens_stay_in_their_build(void **state)
{
	struct run h = { evil, 3, 0, 0, "" }, w = { dir, 3, 0, 0, "" };
	struct jobserver_token keep;
	pthread_t th[2];
	char err[256];
	int n, most;

	(void)state;
	write_hostile("head -c 100 /dev/zero | tr '\\0' + >&5; touch marker;"
		      " sleep 1.5");
	assert_int_equal(jobserver_enter(3, NULL, NULL, NULL, &keep, err,
					 sizeof(err)), 0);
	assert_int_equal(pthread_create(&th[0], NULL, one_build, &h), 0);
	assert_true(until(marked, 0));
	assert_int_equal(pthread_create(&th[1], NULL, one_build, &w), 0);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	assert_int_equal(h.status, 0);
	assert_int_equal(w.status, 0);
	most = max_at_once(&n);
	if (most > 2)
		print_error("the honest build ran %d recipes at once\n", most);
	assert_true(most <= 2);
	assert_int_equal(n, 6);
	assert_int_equal(jobserver_free(), 2);
	jobserver_leave(&keep);
	assert_int_equal(jobserver_free(), 3);
}

/* Issue 49: a build's recipe takes every token it can and sits on them.
 * With 4 tokens, an honest build that comes after it still enters and
 * runs its share (2 at once), and is done long before the holder. */
static void test_holding_tokens_starves_no_one(void **state)
{
	struct run h = { evil, 4, 0, 0, "" }, w = { dir, 4, 0, 0, "" };
	pthread_t th[2];
	int n, most;

	(void)state;
	write_hostile("head -c 3 <&4 >/dev/null; touch marker; sleep 6");
	assert_int_equal(pthread_create(&th[0], NULL, one_build, &h), 0);
	assert_true(until(marked, 0));
	assert_int_equal(pthread_create(&th[1], NULL, one_build, &w), 0);
	pthread_join(th[1], NULL);
	pthread_join(th[0], NULL);
	assert_int_equal(h.status, 0);
	assert_int_equal(w.status, 0);
	if (w.seconds > 4.5)
		print_error("the honest build took %.1f s\n", w.seconds);
	assert_true(w.seconds < 4.5);
	most = max_at_once(&n);
	assert_int_equal(n, 6);
	assert_int_equal(most, 2);
	assert_int_equal(jobserver_free(), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_lost_tokens_come_back),
		cmocka_unit_test(test_makeflags),
		cmocka_unit_test(test_waiting_builds_enter_by_rank),
		cmocka_unit_test_setup_teardown(test_one_make_uses_the_tokens,
						setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_two_makes_share_them,
						setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_forged_tokens_stay_in_their_build,
						setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_holding_tokens_starves_no_one,
						setup_dir, teardown_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
