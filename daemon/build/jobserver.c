/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jobserver.c - the build budget: the cores a process's kernel builds
 * share, as one GNU make jobserver ([build] jobs tokens in a pipe).
 *
 * A build enters by taking one token for itself (so at most `jobs` builds
 * run at once) and runs make with the pipe at JOBSERVER_FD_R/W and
 * MAKEFLAGS naming them: each make's implicit job slot is the token its
 * build holds, and every further job it starts takes a token from the
 * same pipe. So one build alone runs `jobs` compiles; two builds together
 * still run `jobs` in all, and the serial parts of an incremental build
 * (kbuild's walk, the link, kallsyms) of one rc leave the core to the
 * compiles of another instead of idling it (bench/README.md, the week).
 *
 * A make killed while it holds tokens (a cancel, a timeout) loses them:
 * when the last build leaves, the pipe is emptied and refilled to the
 * full count, so a loss lasts until the builds next pause.
 *
 * Builds waiting to enter take a freed token in the order jobs are
 * claimed (their rank: the rc due first, its review builds before its
 * bisection steps, then the older job), not whichever polled first: only
 * the best-ranked waiter reads the pipe, the others sleep until it is
 * in or gone. A step of the rc due first then enters before the review
 * builds of rcs due later that were waiting when it came (the makes of
 * builds already in still take their compiles' tokens as they come).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "build/build.h"

/* A build waiting to enter, on its own stack while it waits. */
struct waiter {
	const char *rank;
	unsigned long seq;	/* arrival: equal ranks first come first */
	struct waiter *next;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t turn;	/* the best waiter changed */
	int fds[2];		/* the pipe, as make is given it */
	int rnb;		/* our own non-blocking reader of it */
	long tokens;		/* the full count */
	int running;		/* builds holding a token */
	unsigned slots;		/* bit i: slot i is taken */
	struct waiter *waiting;
	unsigned long seq;
} js = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, { -1, -1 },
	 -1, 0, 0, 0, NULL, 0 };

/* Fills the pipe to exactly js.tokens, with no build running. */
static void refill(void)
{
	char buf[256];

	while (read(js.rnb, buf, sizeof(buf)) > 0)
		;
	for (long i = 0; i < js.tokens; i++)
		if (write(js.fds[1], "+", 1) != 1)
			break;
}

/* The pipe, made once; a different count ([build] jobs changed by a
 * test's second daemon config) takes effect when no build runs. */
static int setup(long tokens, char *err, size_t errlen)
{
	char self[64];
	int p[2];

	if (tokens < 1)
		tokens = 1;
	if (tokens > JOBSERVER_MAX_TOKENS)
		tokens = JOBSERVER_MAX_TOKENS;
	if (js.fds[0] < 0) {
		if (pipe2(p, O_CLOEXEC) < 0) {
			errf(err, errlen, "jobserver pipe: %s", strerror(errno));
			return -1;
		}
		/* Above the numbers build_run moves them to: a dup2 onto the
		 * same number would keep close-on-exec. */
		js.fds[0] = fcntl(p[0], F_DUPFD_CLOEXEC, 16);
		js.fds[1] = fcntl(p[1], F_DUPFD_CLOEXEC, 16);
		close(p[0]);
		close(p[1]);
		/* A file description of our own: O_NONBLOCK on it does not
		 * change the blocking reads make does on the pipe. */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", js.fds[0]);
		js.rnb = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (js.fds[0] < 0 || js.fds[1] < 0 || js.rnb < 0) {
			errf(err, errlen, "jobserver pipe: %s", strerror(errno));
			close(js.fds[0]);
			close(js.fds[1]);
			close(js.rnb);
			js.fds[0] = js.fds[1] = js.rnb = -1;
			return -1;
		}
	}
	if (js.running == 0 && js.tokens != tokens) {
		js.tokens = tokens;
		refill();
	}
	return 0;
}

/* Whether w is the waiter that reads the pipe: the lowest rank, then
 * the earliest; a NULL rank after every other. Under js.mu. */
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
}

int jobserver_enter(long tokens, const char *rank,
		    int (*cancelled)(void *cls), void *cls,
		    struct jobserver_token *t, char *err, size_t errlen)
{
	struct waiter w = { rank, 0, NULL };
	char c;

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
	pthread_mutex_unlock(&js.mu);
	for (;;) {
		struct pollfd pfd = { js.rnb, POLLIN, 0 };
		ssize_t n;

		if (cancelled != NULL && cancelled(cls)) {
			pthread_mutex_lock(&js.mu);
			unwait(&w);
			pthread_mutex_unlock(&js.mu);
			errf(err, errlen, "cancelled while waiting to build");
			return 1;
		}
		pthread_mutex_lock(&js.mu);
		if (!first(&w)) {
			/* Until it changes, or the cancel's period. */
			cond_wait_ms(&js.turn, &js.mu, 250);
			pthread_mutex_unlock(&js.mu);
			continue;
		}
		pthread_mutex_unlock(&js.mu);
		/* A make that takes the token first wins it: EAGAIN. */
		if (poll(&pfd, 1, 250) <= 0)
			continue;
		pthread_mutex_lock(&js.mu);
		/* A better waiter may have come while this one polled. */
		n = first(&w) ? read(js.rnb, &c, 1) : 0;
		if (n == 1) {
			unwait(&w);
			for (int i = 0; i < JOBSERVER_MAX_TOKENS; i++)
				if (!(js.slots & (1u << i))) {
					js.slots |= 1u << i;
					t->slot = i;
					break;
				}
			js.running++;
			t->token = c;
			t->held = 1;
			t->fds[0] = js.fds[0];
			t->fds[1] = js.fds[1];
			t->tokens = js.tokens;
			pthread_mutex_unlock(&js.mu);
			return 0;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			unwait(&w);
			pthread_mutex_unlock(&js.mu);
			errf(err, errlen, "jobserver: %s", strerror(errno));
			return -1;
		}
		pthread_mutex_unlock(&js.mu);
	}
}

void jobserver_leave(struct jobserver_token *t)
{
	if (!t->held)
		return;
	pthread_mutex_lock(&js.mu);
	if (write(js.fds[1], &t->token, 1) != 1)
		log_warn("jobserver: a token not given back: %s", strerror(errno));
	if (t->slot >= 0)
		js.slots &= ~(1u << t->slot);
	if (--js.running == 0)
		refill();	/* what a killed make held comes back */
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
	char buf[256];
	int n = 0;
	ssize_t r;

	pthread_mutex_lock(&js.mu);
	if (js.rnb >= 0) {
		/* Counted by taking them out and putting them back. */
		while ((r = read(js.rnb, buf, sizeof(buf))) > 0) {
			if (write(js.fds[1], buf, (size_t)r) != r)
				break;
			n += (int)r;
			if ((size_t)r < sizeof(buf))
				break;
		}
	}
	pthread_mutex_unlock(&js.mu);
	return n;
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
