/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jobserver.c - the build budget: the cores a process's kernel builds
 * share ([build] jobs tokens), each build with a GNU make jobserver of
 * its own that the budget lends tokens to.
 *
 * A build enters by taking one token for itself (so at most `jobs`
 * builds run at once): its make's implicit job. Its make gets a pipe of
 * the build's own at JOBSERVER_FD_R/W (MAKEFLAGS names them) and every
 * further job takes a token from that pipe. The tokens in it are lent
 * by a balancer thread here, which owns the count: what a build writes
 * into its pipe or holds from it changes no other build's parallelism,
 * and its leaving gives back exactly what it was counted for, whatever
 * is left in its pipe.
 *
 * The balancer runs every JS_TICK_MS while builds run (and at once when
 * a build enters, leaves, or a watched pipe fills). Each round it
 *  - discards what a pipe holds beyond the tokens lent into it (written
 *    by the build: make never gives back more than it took);
 *  - takes back tokens sitting unused in a pipe when another build has
 *    none left, a build waits to enter, or the budget is in debt;
 *  - lends free tokens to the builds whose pipe is empty: first those
 *    whose make took what was lent last round, then the build holding
 *    fewest, then by rank, up to `jobs` each.
 * So one build alone runs `jobs` jobs; two together share them, and the
 * serial part of one (kbuild's walk, the link) leaves its unused tokens
 * to the compiles of the other within a round.
 *
 * A build's share is jobs / builds (at least 1). A build under its share
 * is lent tokens even when others hold them all (the budget goes into
 * debt, repaid first from what comes back), and a build waiting to enter
 * does not wait for a build holding more than its share would be with
 * one more: holding tokens starves no other build. While in debt, the
 * pipes of builds over their share are watched, so what their makes give
 * back is taken at once.
 *
 * Builds waiting to enter take a freed token in the order jobs are
 * claimed (their rank: the rc due first, its review builds before its
 * bisection steps, then the older job), not whichever came first: only
 * the best-ranked waiter may enter, the others sleep until it is in or
 * gone, and no token is lent while a waiter may enter.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/base.h"
#include "build/build.h"

#define JS_TICK_MS 25

/* A build waiting to enter, on its own stack while it waits. */
struct waiter {
	const char *rank;
	unsigned long seq;	/* arrival: equal ranks first come first */
	struct waiter *next;
};

/* A build in, at its slot. */
struct js_build {
	int in;
	int fds[2];	/* its pipe, as make is given it */
	int rnb;	/* our own non-blocking reader of it */
	long lent;	/* tokens written into it and not taken back */
	long idle;	/* in the pipe after the last round */
	long forged;	/* bytes it wrote beyond them, discarded */
	char rank[64];	/* "" none: after every rank */
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t turn;	/* the best waiter may enter, or changed */
	long tokens;		/* the full count */
	long avail;		/* not held by a build nor lent: < 0 debt */
	int running;
	struct js_build b[JOBSERVER_MAX_TOKENS];
	struct waiter *waiting;
	unsigned long seq;
	int wake[2];		/* a byte wakes the balancer */
	int started;
} js = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0,
	 { { 0 } }, NULL, 0, { -1, -1 }, 0 };

static long held(const struct js_build *b)
{
	return 1 + b->lent;
}

/* A build's share with n builds in: jobs / n, at least 1. */
static long share(long n)
{
	return n < 1 || js.tokens / n < 1 ? 1 : js.tokens / n;
}

/* Whether a waiter may enter with the builds now in (under js.mu): a
 * free token, or one held beyond the share it would leave. */
static int admissible(void)
{
	if (js.running >= js.tokens)
		return 0;
	if (js.avail >= 1)
		return 1;
	for (int i = 0; i < JOBSERVER_MAX_TOKENS; i++)
		if (js.b[i].in && held(&js.b[i]) > share(js.running + 1))
			return 1;
	return 0;
}

static void kick(void)
{
	if (js.wake[1] >= 0 && write(js.wake[1], "", 1) < 0 && errno != EAGAIN)
		log_warn("jobserver: wake: %s", strerror(errno));
}

/* Bytes in b's pipe now. */
static long in_pipe(const struct js_build *b)
{
	int n = 0;

	return ioctl(b->rnb, FIONREAD, &n) < 0 ? 0 : n;
}

/* Reads up to n bytes out of b's pipe: how many it got. */
static long take(struct js_build *b, long n)
{
	char buf[256];
	long got = 0;

	while (got < n) {
		size_t want = (size_t)(n - got) < sizeof(buf)
			      ? (size_t)(n - got) : sizeof(buf);
		ssize_t r = read(b->rnb, buf, want);

		if (r <= 0)
			break;
		got += r;
	}
	return got;
}

/* The build lending prefers among those allowed one more (under js.mu):
 * the hungry (took the last round's), then the fewest held, then rank.
 * -1: none. */
static int next_borrower(const int *want, const int *hungry, long sh,
			 int admit)
{
	int best = -1;

	for (int i = 0; i < JOBSERVER_MAX_TOKENS; i++) {
		const struct js_build *b = &js.b[i], *o;
		int c;

		if (!b->in || !want[i] || held(b) >= js.tokens ||
		    !((js.avail > 0 && !admit) || held(b) < sh) ||
		    js.avail <= -js.tokens)
			continue;
		if (best < 0) {
			best = i;
			continue;
		}
		o = &js.b[best];
		c = hungry[best] - hungry[i];
		if (c == 0)
			c = (held(b) > held(o)) - (held(b) < held(o));
		if (c == 0)
			c = b->rank[0] == '\0' ? 1 : o->rank[0] == '\0' ? -1
			    : strcmp(b->rank, o->rank);
		if (c < 0)
			best = i;
	}
	return best;
}

/* One round of the balancer (under js.mu): see the file's comment. */
static void balance(void)
{
	int want[JOBSERVER_MAX_TOKENS] = { 0 }, hungry[JOBSERVER_MAX_TOKENS] = { 0 };
	int admit = js.waiting != NULL && js.running < js.tokens, someone = 0;
	long sh = share(js.running + admit);
	int i;

	for (i = 0; i < JOBSERVER_MAX_TOKENS; i++) {
		struct js_build *b = &js.b[i];
		long idle;

		if (!b->in)
			continue;
		idle = in_pipe(b);
		if (idle > b->lent) {
			long n = take(b, idle - b->lent);

			if (b->forged == 0)
				log_warn("jobserver: the build in slot %d wrote"
					 " tokens it was not given; discarded", i);
			b->forged += n;
			idle -= n;
		}
		want[i] = idle == 0;
		hungry[i] = idle < b->idle;
		b->idle = idle;
		someone |= want[i] && held(b) < js.tokens;
	}
	for (i = 0; i < JOBSERVER_MAX_TOKENS; i++) {
		struct js_build *b = &js.b[i];
		long n;

		if (!b->in || b->idle == 0 || !(someone || admit || js.avail < 0))
			continue;
		n = take(b, b->idle);
		b->lent -= n;
		b->idle -= n;
		js.avail += n;
	}
	if (admit && admissible())
		pthread_cond_broadcast(&js.turn);
	while ((i = next_borrower(want, hungry, sh, admit)) >= 0) {
		if (write(js.b[i].fds[1], "+", 1) != 1)
			break;
		js.b[i].lent++;
		js.b[i].idle++;
		js.avail--;
	}
}

/* The descriptors the balancer polls (under js.mu): its wake pipe, and
 * the pipes of builds over their share while the budget is in debt or a
 * build waits to enter. */
static nfds_t watched(struct pollfd *p)
{
	int admit = js.waiting != NULL && js.running < js.tokens;
	long sh = share(js.running + admit);
	nfds_t n = 0;

	p[n++] = (struct pollfd){ js.wake[0], POLLIN, 0 };
	for (int i = 0; i < JOBSERVER_MAX_TOKENS; i++)
		if (js.b[i].in && js.b[i].lent > 0 && held(&js.b[i]) > sh &&
		    (js.avail < 0 || admit))
			p[n++] = (struct pollfd){ js.b[i].rnb, POLLIN, 0 };
	return n;
}

static void *balancer(void *arg)
{
	struct pollfd p[JOBSERVER_MAX_TOKENS + 1];
	char buf[64];

	(void)arg;
	for (;;) {
		nfds_t n;
		int ms;

		pthread_mutex_lock(&js.mu);
		n = watched(p);
		ms = js.running > 0 || js.waiting != NULL ? JS_TICK_MS : -1;
		pthread_mutex_unlock(&js.mu);
		if (poll(p, n, ms) > 0 && (p[0].revents & POLLIN))
			while (read(js.wake[0], buf, sizeof(buf)) > 0)
				;
		pthread_mutex_lock(&js.mu);
		balance();
		pthread_mutex_unlock(&js.mu);
	}
	return NULL;
}

/* The count and, once, the balancer (under js.mu). A different count
 * ([build] jobs changed by a test's second daemon config) takes effect
 * when no build runs. */
static int setup(long tokens, char *err, size_t errlen)
{
	pthread_t th;

	if (tokens < 1)
		tokens = 1;
	if (tokens > JOBSERVER_MAX_TOKENS)
		tokens = JOBSERVER_MAX_TOKENS;
	if (js.running == 0 && js.tokens != tokens) {
		js.tokens = tokens;
		js.avail = tokens;
	}
	if (js.started)
		return 0;
	if (pipe2(js.wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		errf(err, errlen, "jobserver: %s", strerror(errno));
		js.wake[0] = js.wake[1] = -1;
		return -1;
	}
	if (pthread_create(&th, NULL, balancer, NULL) != 0) {
		errf(err, errlen, "jobserver: cannot start its thread");
		close(js.wake[0]);
		close(js.wake[1]);
		js.wake[0] = js.wake[1] = -1;
		return -1;
	}
	pthread_detach(th);
	js.started = 1;
	return 0;
}

/* Build slot i's pipe, above the numbers build_run moves it to (a dup2
 * onto the same number would keep close-on-exec), with our own
 * non-blocking file description of it (O_NONBLOCK on make's would change
 * its reads). 0, or -1 with err. */
static int open_pipe(struct js_build *b, char *err, size_t errlen)
{
	char self[64];
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0) {
		errf(err, errlen, "jobserver pipe: %s", strerror(errno));
		return -1;
	}
	b->fds[0] = fcntl(p[0], F_DUPFD_CLOEXEC, 16);
	b->fds[1] = fcntl(p[1], F_DUPFD_CLOEXEC, 16);
	close(p[0]);
	close(p[1]);
	snprintf(self, sizeof(self), "/proc/self/fd/%d", b->fds[0]);
	b->rnb = b->fds[0] < 0 ? -1 : open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (b->fds[0] < 0 || b->fds[1] < 0 || b->rnb < 0) {
		errf(err, errlen, "jobserver pipe: %s", strerror(errno));
		close(b->fds[0]);
		close(b->fds[1]);
		close(b->rnb);
		return -1;
	}
	return 0;
}

/* Whether w is the waiter that may enter: the lowest rank, then the
 * earliest; a NULL rank after every other. Under js.mu. */
static int first(const struct waiter *w)
{
	for (const struct waiter *o = js.waiting; o != NULL; o = o->next) {
		int c = o->rank == NULL ? (w->rank == NULL ? 0 : 1)
			: w->rank == NULL ? -1 : strcmp(o->rank, w->rank);

		if (c < 0 || (c == 0 && o->seq < w->seq))
			return 0;
	}
	return 1;
}

/* Takes w off the waiting list and wakes the others. Under js.mu. */
static void unwait(struct waiter *w)
{
	for (struct waiter **p = &js.waiting; *p != NULL; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	pthread_cond_broadcast(&js.turn);
	kick();
}

/* w enters at the lowest free slot (under js.mu): 0, or -1 with err. */
static int take_slot(struct waiter *w, struct jobserver_token *t, char *err,
		     size_t errlen)
{
	struct js_build *b;
	int i = 0;

	while (i < JOBSERVER_MAX_TOKENS && js.b[i].in)
		i++;
	if (i == JOBSERVER_MAX_TOKENS) {	/* running < tokens <= MAX */
		errf(err, errlen, "jobserver: no free slot");
		return -1;
	}
	b = &js.b[i];
	if (open_pipe(b, err, errlen) < 0)
		return -1;
	b->in = 1;
	b->lent = b->idle = b->forged = 0;
	snprintf(b->rank, sizeof(b->rank), "%s", w->rank != NULL ? w->rank : "");
	js.running++;
	js.avail--;
	t->slot = i;
	t->held = 1;
	t->fds[0] = b->fds[0];
	t->fds[1] = b->fds[1];
	t->tokens = js.tokens;
	return 0;
}

int jobserver_enter(long tokens, const char *rank,
		    int (*cancelled)(void *cls), void *cls,
		    struct jobserver_token *t, char *err, size_t errlen)
{
	struct waiter w = { rank, 0, NULL };
	int rc;

	memset(t, 0, sizeof(*t));
	t->slot = -1;
	pthread_mutex_lock(&js.mu);
	if (setup(tokens, err, errlen) < 0) {
		pthread_mutex_unlock(&js.mu);
		return -1;
	}
	w.seq = js.seq++;
	w.next = js.waiting;
	js.waiting = &w;
	kick();
	for (;;) {
		if (cancelled != NULL && cancelled(cls)) {
			unwait(&w);
			pthread_mutex_unlock(&js.mu);
			errf(err, errlen, "cancelled while waiting to build");
			return 1;
		}
		if (first(&w) && admissible())
			break;
		/* Until the balancer frees a token or the best waiter
		 * changes, or the cancel's period. */
		cond_wait_ms(&js.turn, &js.mu, 250);
	}
	unwait(&w);
	rc = take_slot(&w, t, err, errlen);
	pthread_mutex_unlock(&js.mu);
	return rc;
}

/* Tokens no make holds (under js.mu): the budget's, and those lent and
 * unused. */
static long free_now(void)
{
	long n = js.avail;

	for (int i = 0; i < JOBSERVER_MAX_TOKENS; i++)
		if (js.b[i].in) {
			long idle = in_pipe(&js.b[i]);

			n += idle < js.b[i].lent ? idle : js.b[i].lent;
		}
	return n;
}

void jobserver_leave(struct jobserver_token *t)
{
	struct js_build *b;

	if (!t->held || t->slot < 0 || t->slot >= JOBSERVER_MAX_TOKENS)
		return;
	pthread_mutex_lock(&js.mu);
	b = &js.b[t->slot];
	/* Whatever its makes took, held or wrote: it was counted for one
	 * and what was lent to it. */
	js.avail += held(b);
	js.running--;
	if (b->forged > 0)
		log_warn("jobserver: slot=%d forged=%ld (tokens its build"
			 " wrote beyond those lent, discarded)", t->slot,
			 b->forged);
	close(b->fds[0]);
	close(b->fds[1]);
	close(b->rnb);
	memset(b, 0, sizeof(*b));
	log_debug("jobserver: slot=%d out, builds=%d free=%ld of %ld",
		  t->slot, js.running, free_now(), js.tokens);
	pthread_cond_broadcast(&js.turn);
	kick();
	pthread_mutex_unlock(&js.mu);
	t->held = 0;
}

int jobserver_makeflags(const struct jobserver_token *t, char *out, size_t len)
{
	if (!t->held)
		return -1;
	return snprintf(out, len, "MAKEFLAGS=-j%ld --jobserver-auth=%d,%d",
			t->tokens, JOBSERVER_FD_R, JOBSERVER_FD_W) < (int)len ? 0 : -1;
}

int jobserver_free(void)
{
	long n;

	pthread_mutex_lock(&js.mu);
	n = free_now();
	pthread_mutex_unlock(&js.mu);
	return (int)n;
}

int jobserver_waiting(void)
{
	int n = 0;

	pthread_mutex_lock(&js.mu);
	for (const struct waiter *w = js.waiting; w != NULL; w = w->next)
		n++;
	pthread_mutex_unlock(&js.mu);
	return n;
}

long jobserver_forged(int slot)
{
	long n;

	if (slot < 0 || slot >= JOBSERVER_MAX_TOKENS)
		return 0;
	pthread_mutex_lock(&js.mu);
	n = js.b[slot].forged;
	pthread_mutex_unlock(&js.mu);
	return n;
}
