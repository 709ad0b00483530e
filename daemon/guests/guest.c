/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * guest.c - running one transient test domain to completion (created
 * paused, then started, then destroyed on a thread of its own if the
 * caller wants it off its path), and cleaning up domains a crashed daemon
 * left behind; for hosts without our files, the guest's console and
 * results read as streams. Connections are guest_conn.c's; with
 * guest_pool.c (storage volumes) these are the only files that call
 * libvirt; guest_xml.c writes its XML.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "base/base.h"
#include "guests/guests.h"
#include "guest_internal.h"

/* A domain being destroyed in the background (guest_spec.destroy_later). */
struct teardown {
	struct guest_host *host;
	virDomainPtr dom;
	char *name;
	struct teardown *next;
};

/* How often the run loop looks at the domain, the clock and the cancel
 * flag; the results file wakes it at once (inotify). */
#define CHECK_INTERVAL_MS 100
/* Without an inotify watch (no file yet, no inotify) the file is polled. */
#define FALLBACK_POLL_MS 10

const char *guest_outcome_name(enum guest_outcome o)
{
	switch (o) {
	case GUEST_COMPLETED: return "completed";
	case GUEST_TIMEOUT: return "timeout";
	case GUEST_STOPPED: return "stopped";
	case GUEST_CANCELLED: return "cancelled";
	}
	return "unknown";
}

static int last_error_code(void)
{
	virErrorPtr e = virGetLastError();

	return e ? e->code : VIR_ERR_OK;
}

/* Incremental scan of a growing file for a line beginning with marker. */
struct marker_scan {
	int fd;
	char head[128];		/* first bytes of the current line */
	size_t headlen;
	int found;
};

static int line_has_marker(const struct marker_scan *s, const char *marker,
			   size_t mlen)
{
	char next;

	if (s->headlen < mlen || memcmp(s->head, marker, mlen) != 0)
		return 0;
	next = s->headlen > mlen ? s->head[mlen] : '\0';
	return next == '\0' || next == ' ' || next == '\t' || next == '\r';
}

/*
 * Read what was appended since the last call. final: the writer has gone,
 * so an unterminated last line counts too. Returns -1 on read errors.
 */
static int marker_poll(struct marker_scan *s, const char *path,
		       const char *marker, int final, char *err,
		       size_t errlen)
{
	size_t mlen = strlen(marker);
	char buf[8192];
	ssize_t n, i;

	if (s->fd < 0) {
		s->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (s->fd < 0) {
			if (errno == ENOENT)
				return 0;	/* qemu has not opened it yet */
			snprintf(err, errlen, "open %s: %s", path,
				 strerror(errno));
			return -1;
		}
	}
	while (!s->found && (n = read(s->fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "read %s: %s", path,
				 strerror(errno));
			return -1;
		}
		for (i = 0; i < n && !s->found; i++) {
			if (buf[i] == '\n') {
				s->found = line_has_marker(s, marker, mlen);
				s->headlen = 0;
			} else if (s->headlen < sizeof(s->head)) {
				s->head[s->headlen++] = buf[i];
			}
		}
	}
	if (final && !s->found)
		s->found = line_has_marker(s, marker, mlen);
	return 0;
}

/* 1: still running, 0: stopped or gone. */
static int domain_running(struct guest_host *h, virDomainPtr dom)
{
	int state, reason, rc;

	guest_rpc_enter(h);
	guest_errors_expected(1);
	rc = virDomainGetState(dom, &state, &reason, 0);
	guest_errors_expected(0);
	guest_rpc_leave(h);
	if (rc < 0)
		return 0;	/* a transient domain vanishes when it stops */
	return state == VIR_DOMAIN_RUNNING || state == VIR_DOMAIN_BLOCKED ||
		state == VIR_DOMAIN_PAUSED || state == VIR_DOMAIN_NOSTATE;
}

/* Destroy; "already gone" is success. */
static int domain_destroy(struct guest_host *h, virDomainPtr dom,
			  const char *name, char *err, size_t errlen)
{
	int code, rc;

	guest_rpc_enter(h);
	guest_errors_expected(1);
	rc = virDomainDestroy(dom);
	guest_errors_expected(0);
	guest_rpc_leave(h);
	if (rc == 0)
		return 0;
	code = last_error_code();
	if (code == VIR_ERR_NO_DOMAIN || code == VIR_ERR_OPERATION_INVALID)
		return 0;
	snprintf(err, errlen, "virDomainDestroy(%s): %s", name, guest_last_error());
	guest_glog(GUEST_LOG_ERR, "%s", err);
	return -1;
}

static int unlink_stale(const char *path, char *err, size_t errlen)
{
	if (path != NULL && unlink(path) < 0 && errno != ENOENT) {
		snprintf(err, errlen, "unlink %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static double now_unix(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The guest's qemu process's CPU time so far (all its threads), in
 * seconds; -1 when the driver does not say. */
static double domain_cpu_seconds(struct guest_host *h, virDomainPtr dom)
{
	virDomainInfo info;
	int rc;

	guest_rpc_enter(h);
	guest_errors_expected(1);
	rc = virDomainGetInfo(dom, &info);
	guest_errors_expected(0);
	guest_rpc_leave(h);
	return rc < 0 ? -1 : (double)info.cpuTime / 1e9;
}

static void teardown_unlink(struct teardown *t)
{
	struct guest_host *h = t->host;

	pthread_mutex_lock(&h->lock);
	for (struct teardown **p = &h->teardowns; *p != NULL; p = &(*p)->next) {
		if (*p == t) {
			*p = t->next;
			break;
		}
	}
	pthread_cond_broadcast(&h->gone);
	pthread_mutex_unlock(&h->lock);
	free(t->name);
	free(t);
}

static void *teardown_main(void *arg)
{
	struct teardown *t = arg;
	double start = now_monotonic();
	char err[512];

	/* domain_destroy logs its own failure; the orphan sweep at the
	 * next start is the safety net for a domain that stays. */
	if (domain_destroy(t->host, t->dom, t->name, err, sizeof(err)) == 0)
		guest_glog(GUEST_LOG_DEBUG, "guest destroyed name=%s destroy=%.2fs"
		     " (in the background)", t->name, now_monotonic() - start);
	virDomainFree(t->dom);
	teardown_unlink(t);
	return NULL;
}

/*
 * Destroys dom on a thread of its own, so that the caller's next step
 * does not wait for it: tearing a domain down means waiting until its
 * qemu has been reaped, which an init that reaps slowly makes seconds.
 * 0, or -1 when no thread could be started (the caller destroys it).
 */
static int destroy_later(struct guest_host *h, virDomainPtr dom,
			 const char *name)
{
	struct teardown *t = calloc(1, sizeof(*t));
	pthread_attr_t attr;
	pthread_t thread;
	int rc;

	if (t == NULL || (t->name = strdup(name)) == NULL) {
		free(t);
		return -1;
	}
	t->host = h;
	t->dom = dom;
	pthread_mutex_lock(&h->lock);
	t->next = h->teardowns;
	h->teardowns = t;
	pthread_mutex_unlock(&h->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&thread, &attr, teardown_main, t);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		t->dom = NULL;
		teardown_unlink(t);
		return -1;
	}
	return 0;
}

double guest_wait_destroyed(struct guest_host *h, const char *name)
{
	double start = now_monotonic();
	int pending;

	if (h == NULL || name == NULL)
		return 0;
	pthread_mutex_lock(&h->lock);
	do {
		pending = 0;
		for (const struct teardown *t = h->teardowns; t != NULL;
		     t = t->next) {
			if (strcmp(t->name, name) == 0)
				pending = 1;
		}
		if (pending)
			pthread_cond_wait(&h->gone, &h->lock);
	} while (pending);
	pthread_mutex_unlock(&h->lock);
	return now_monotonic() - start;
}

/*
 * Wakes the run loop as soon as the results file grows, instead of a
 * poll interval later. Without a watch (inotify unavailable, or the file
 * not there yet: only libvirt's test driver leaves it to the writer) the
 * loop polls every FALLBACK_POLL_MS.
 */
struct file_watch {
	int fd;			/* inotify instance, or -1 */
	int wd;			/* watch on the file, or -1 */
};

static void watch_add(struct file_watch *w, const char *path)
{
	if (w->fd >= 0 && w->wd < 0)
		w->wd = inotify_add_watch(w->fd, path, IN_MODIFY);
}

/* Up to ms milliseconds, less when the file changes. */
static void watch_wait(struct file_watch *w, int ms)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd p = { .fd = w->fd, .events = POLLIN };

	if (w->wd < 0) {
		struct timespec ts = { 0, (ms < FALLBACK_POLL_MS ? ms :
					   FALLBACK_POLL_MS) * 1000000L };

		nanosleep(&ts, NULL);
		return;
	}
	if (poll(&p, 1, ms) > 0) {
		while (read(w->fd, buf, sizeof(buf)) > 0)
			;
	}
}

/*
 * A guest's console or results channel read over the connection: a
 * non-blocking stream whose bytes go to a local file (at most
 * STREAM_FILE_CAP of them; the rest is dropped, as a runaway console
 * would otherwise fill the disk).
 */
#define STREAM_FILE_CAP (64u << 20)
struct guest_stream {
	virStreamPtr st;
	int fd;
	int eof;
	size_t written;
};

static void stream_close(struct guest_host *h, struct guest_stream *s)
{
	if (s->st != NULL) {
		guest_rpc_enter(h);
		guest_errors_expected(1);
		if (!s->eof)
			virStreamAbort(s->st);
		virStreamFree(s->st);
		guest_errors_expected(0);
		guest_rpc_leave(h);
		s->st = NULL;
	}
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* Opens the local file and the stream (console when channel is NULL). */
static int stream_open(struct guest_host *h, virDomainPtr dom,
		       struct guest_stream *s, const char *channel,
		       const char *path, char *err, size_t errlen)
{
	s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (s->fd < 0) {
		snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		return -1;
	}
	guest_rpc_enter(h);
	s->st = virStreamNew(h->conn, VIR_STREAM_NONBLOCK);
	if (s->st == NULL) {
		snprintf(err, errlen, "virStreamNew: %s", guest_last_error());
		guest_rpc_leave(h);
		return -1;
	}
	/* FORCE: a stream left from a crashed daemon does not hold it. */
	if (channel != NULL ?
	    virDomainOpenChannel(dom, channel, s->st,
				 VIR_DOMAIN_CHANNEL_FORCE) < 0 :
	    virDomainOpenConsole(dom, NULL, s->st,
				 VIR_DOMAIN_CONSOLE_FORCE) < 0) {
		snprintf(err, errlen, "%s(%s): %s", channel != NULL
			 ? "virDomainOpenChannel" : "virDomainOpenConsole",
			 channel != NULL ? channel : "console", guest_last_error());
		virStreamFree(s->st);
		s->st = NULL;
		guest_rpc_leave(h);
		return -1;
	}
	guest_rpc_leave(h);
	return 0;
}

/*
 * Copies what has arrived into the file. A stream that fails is closed
 * and -1 returned with err set: the caller decides whether that matters
 * (a connection gone does; a console that ended with its domain does not).
 */
static int stream_pump(struct guest_host *h, struct guest_stream *s, char *err,
		       size_t errlen)
{
	char buf[16384];

	for (int i = 0; s->st != NULL && !s->eof && i < 64; i++) {
		/* Not serialised: a non-blocking receive takes what the
		 * client has queued and never waits on the socket. */
		int n = virStreamRecv(s->st, buf, sizeof(buf));

		if (n == -2)
			return 0;
		if (n == 0) {
			s->eof = 1;
			guest_rpc_enter(h);
			virStreamFinish(s->st);
			guest_rpc_leave(h);
			return 0;
		}
		if (n < 0) {
			snprintf(err, errlen, "stream: %s", guest_last_error());
			s->eof = 1;
			return -1;
		}
		if (s->written < STREAM_FILE_CAP) {
			size_t keep = (size_t)n;
			const char *p = buf;

			if (keep > STREAM_FILE_CAP - s->written)
				keep = STREAM_FILE_CAP - s->written;
			s->written += keep;
			while (keep > 0) {
				ssize_t w = write(s->fd, p, keep);

				if (w < 0 && errno == EINTR)
					continue;
				if (w < 0) {
					snprintf(err, errlen, "write: %s",
						 strerror(errno));
					return -1;
				}
				p += w;
				keep -= (size_t)w;
			}
		}
	}
	return 0;
}

/* A domain created with its CPUs paused (guest_create), until it has run
 * (guest_start_wait) or is discarded. */
struct guest {
	struct guest_host *host;
	virDomainPtr dom;
	char *name, *channel_log;
	int destroy_later;
	struct file_watch watch;
	struct guest_times times;
	/* spec.streams: the channel and the console as streams, copied into
	 * the local files as they arrive (stream_pump). */
	int streams;
	struct guest_stream chan, cons;
};

static void guest_free(struct guest *g)
{
	stream_close(g->host, &g->chan);
	stream_close(g->host, &g->cons);
	if (g->watch.fd >= 0)
		close(g->watch.fd);
	free(g->name);
	free(g->channel_log);
	free(g);
}

static int guest_end(struct guest *g, int later, char *err, size_t errlen);

int guest_create(struct guest_host *h, const struct guest_spec *spec,
		 struct guest **out, struct guest_times *times, char *err,
		 size_t errlen)
{
	double start = now_monotonic(), waited;
	struct guest *g;
	char *xml;

	*out = NULL;
	if (h == NULL || spec == NULL) {
		snprintf(err, errlen, "guest_create: missing argument");
		return -1;
	}
	g = calloc(1, sizeof(*g));
	if (g == NULL || (g->name = strdup(spec->name != NULL ? spec->name
					    : "")) == NULL ||
	    (g->channel_log = strdup(spec->channel_log != NULL
				     ? spec->channel_log : "")) == NULL) {
		if (g != NULL) {
			free(g->name);
			free(g);
		}
		snprintf(err, errlen, "guest_create: out of memory");
		return -1;
	}
	g->host = h;
	g->destroy_later = spec->destroy_later;
	g->streams = spec->streams;
	g->chan.fd = g->cons.fd = -1;
	g->watch.fd = g->watch.wd = -1;
	g->times.cpu_s = -1;
	g->times.started_at = now_unix();
	if (times != NULL)
		*times = g->times;
	xml = guest_xml(spec, err, errlen);
	/* A stale log from an earlier attempt must not look like a result. */
	if (xml == NULL || unlink_stale(spec->channel_log, err, errlen) < 0 ||
	    unlink_stale(spec->console_log, err, errlen) < 0) {
		free(xml);
		guest_free(g);
		return -1;
	}
	/* A domain of this name still being torn down on its thread (a KVM
	 * probe that timed out, then the TCG boot of the same attempt) would
	 * make libvirt answer "domain already exists": a name is used again
	 * only once its teardown has finished. */
	waited = guest_wait_destroyed(h, spec->name);
	if (waited >= 0.01)
		guest_glog(GUEST_LOG_DEBUG, "guest %s: waited %.2fs for the"
			   " teardown of its previous domain", spec->name,
			   waited);
	start += waited;	/* define_s is libvirt's part alone */
	/* Paused, so that libvirt's part (the domain set up, qemu started and
	 * queried) is done and timed apart from running the guest. */
	guest_rpc_enter(h);
	g->dom = virDomainCreateXML(h->conn, xml, h->create_flags |
				    (h->start_paused ? VIR_DOMAIN_START_PAUSED
						     : 0));
	if (g->dom == NULL)
		snprintf(err, errlen, "virDomainCreateXML(%s): %s", spec->name,
			 guest_last_error());
	guest_rpc_leave(h);
	free(xml);
	g->times.define_s = now_monotonic() - start;
	if (times != NULL)
		*times = g->times;
	if (g->dom == NULL) {
		guest_free(g);
		return -1;
	}
	if (g->streams) {
		/* Opened while the CPUs are paused: the guest's first bytes
		 * cannot come before a reader is there (the agent's writes
		 * block until the port has one). */
		if (stream_open(h, g->dom, &g->chan, spec->channel_name,
				spec->channel_log, err, errlen) < 0 ||
		    (spec->console_log != NULL &&
		     stream_open(h, g->dom, &g->cons, NULL, spec->console_log,
				 err, errlen) < 0)) {
			char derr[256];

			guest_end(g, 0, derr, sizeof(derr));
			return -1;
		}
	} else {
		/* libvirt has opened the results file for qemu by now. */
		g->watch.fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		watch_add(&g->watch, g->channel_log);
	}
	guest_glog(GUEST_LOG_DEBUG, "guest created name=%s after=%.2fs", g->name,
	     g->times.define_s);
	*out = g;
	return 0;
}

/* The end of a created guest: destroyed now or by a thread of its own;
 * 0, or -1 with err set when destroying it failed. */
static int guest_end(struct guest *g, int later, char *err, size_t errlen)
{
	int rc = 0;

	/* The streams end before their domain does. */
	stream_close(g->host, &g->chan);
	stream_close(g->host, &g->cons);
	if (later && destroy_later(g->host, g->dom, g->name) == 0) {
		g->dom = NULL;
	} else {
		rc = domain_destroy(g->host, g->dom, g->name, err, errlen);
		virDomainFree(g->dom);
	}
	guest_free(g);
	return rc;
}

void guest_discard(struct guest *g)
{
	if (g != NULL)
		guest_end(g, 1, NULL, 0);
}

/* A domain created paused starts running (qemu hosts). */
static int resume(struct guest *g, char *err, size_t errlen)
{
	int resumed;

	if (!g->host->start_paused)
		return 0;
	guest_rpc_enter(g->host);
	resumed = virDomainResume(g->dom);
	if (resumed < 0)
		snprintf(err, errlen, "virDomainResume(%s): %s", g->name,
			 guest_last_error());
	guest_rpc_leave(g->host);
	return resumed < 0 ? -1 : 0;
}

/* For hosts without our files: what the guest wrote since the last look.
 * An ended stream is not an outcome by itself (the domain's state and the
 * connection decide); a lost connection is the host's failure (-1). */
static int pump_streams(struct guest *g, char *err, size_t errlen)
{
	char serr[256];

	if (stream_pump(g->host, &g->chan, serr, sizeof(serr)) < 0 ||
	    stream_pump(g->host, &g->cons, serr, sizeof(serr)) < 0)
		guest_glog(GUEST_LOG_DEBUG, "guest %s: %s", g->name, serr);
	if (!guest_host_alive(g->host, serr, sizeof(serr))) {
		snprintf(err, errlen, "guest %s: the host's connection was"
			 " lost: %s", g->name, serr);
		return -1;
	}
	return 0;
}

/* Until the marker, the domain's end, cancel or the timeout decides the
 * outcome (0), or the host fails (-1 with err). */
static int wait_outcome(struct guest *g, struct marker_scan *scan,
			const char *marker, double start, int timeout_s,
			const atomic_int *cancel, enum guest_outcome *outcome,
			char *err, size_t errlen)
{
	double now, next_check = 0;
	int stopped = 0;

	for (;;) {
		if (g->streams && pump_streams(g, err, errlen) < 0)
			return -1;
		if (marker_poll(scan, g->channel_log, marker, stopped, err,
				errlen) < 0)
			return -1;
		if (scan->found) {
			*outcome = GUEST_COMPLETED;
			return 0;
		}
		if (stopped) {
			*outcome = GUEST_STOPPED;
			return 0;
		}
		if (cancel != NULL && *cancel) {
			*outcome = GUEST_CANCELLED;
			return 0;
		}
		now = now_monotonic();
		if (now - start >= (double)timeout_s) {
			*outcome = GUEST_TIMEOUT;
			return 0;
		}
		if (now >= next_check) {
			next_check = now + CHECK_INTERVAL_MS / 1000.0;
			if (!domain_running(g->host, g->dom)) {
				char why[160];

				/* A state query fails on a lost connection
				 * too: that is the host's failure. */
				if (!guest_host_alive(g->host, why,
						      sizeof(why))) {
					snprintf(err, errlen, "guest %s: the "
						 "host's connection was lost:"
						 " %s", g->name, why);
					return -1;
				}
				/* One more read: qemu may have written the
				 * last bytes just before it went away. */
				stopped = 1;
				continue;
			}
		}
		if (!g->streams)
			watch_add(&g->watch, g->channel_log);
		watch_wait(&g->watch, 1 + (int)((next_check - now) * 1000));
	}
}

int guest_start_wait(struct guest *g, const char *marker, int timeout_s,
		     const atomic_int *cancel, enum guest_outcome *outcome,
		     struct guest_times *times, char *err, size_t errlen)
{
	struct marker_scan scan = { .fd = -1 };
	struct guest_times t;
	double start = now_monotonic(), decided, created;
	int rc = -1, later;

	if (g == NULL || marker == NULL || marker[0] == '\0' ||
	    outcome == NULL || strlen(marker) >= sizeof(scan.head)) {
		snprintf(err, errlen, "guest_start_wait: missing argument or"
			 " marker longer than %zu bytes", sizeof(scan.head) - 1);
		guest_discard(g);
		return -1;
	}
	t = g->times;
	if (resume(g, err, errlen) == 0) {
		created = now_monotonic();
		t.running_at = now_unix();
		guest_glog(GUEST_LOG_DEBUG, "guest started name=%s after=%.2fs",
			   g->name, t.define_s + created - start);
		rc = wait_outcome(g, &scan, marker, start, timeout_s, cancel,
				  outcome, err, errlen);
	} else {
		created = now_monotonic();
	}
	decided = now_monotonic();
	t.decided_at = now_unix();
	t.cpu_s = domain_cpu_seconds(g->host, g->dom);
	if (scan.fd >= 0)
		close(scan.fd);
	t.start_s = created - start;
	t.create_s = t.define_s + t.start_s;
	t.run_s = decided - created;
	t.decided_s = t.create_s + t.run_s;
	/* -no-shutdown keeps a powered-off guest around; do not wait. The
	 * destroy is cleanup, not boot-to-result: counted apart, and off the
	 * caller's path when it asked for that. */
	later = rc == 0 && g->destroy_later;
	if (guest_end(g, later, rc < 0 ? NULL : err, rc < 0 ? 0 : errlen) < 0)
		rc = -1;
	t.destroy_s = now_monotonic() - decided;
	if (times != NULL)
		*times = t;
	if (rc == 0)
		guest_glog(GUEST_LOG_DEBUG, "guest finished outcome=%s decided=%.2fs"
		     " destroy=%.2fs%s", guest_outcome_name(*outcome),
		     t.decided_s, t.destroy_s,
		     later ? " (then in the background)" : "");
	return rc;
}

int guest_run(struct guest_host *h, const struct guest_spec *spec,
	      const char *marker, int timeout_s, const atomic_int *cancel,
	      enum guest_outcome *outcome, struct guest_times *times,
	      char *err, size_t errlen)
{
	struct guest *g;

	if (marker == NULL || marker[0] == '\0' || outcome == NULL) {
		snprintf(err, errlen, "guest_run: missing argument");
		return -1;
	}
	if (guest_create(h, spec, &g, times, err, errlen) < 0)
		return -1;
	return guest_start_wait(g, marker, timeout_s, cancel, outcome, times,
				err, errlen);
}

static int destroy_orphans(struct guest_host *h, const char *name_prefix,
			   int *ndestroyed, char *err, size_t errlen)
{
	virDomainPtr *doms = NULL;
	size_t plen = name_prefix ? strlen(name_prefix) : 0;
	int n, i, count = 0, rc = 0;

	if (ndestroyed != NULL)
		*ndestroyed = 0;
	if (h == NULL || plen == 0) {
		snprintf(err, errlen, "guest_destroy_orphans: missing argument");
		return -1;
	}
	n = virConnectListAllDomains(h->conn, &doms,
				     VIR_CONNECT_LIST_DOMAINS_ACTIVE);
	if (n < 0) {
		snprintf(err, errlen, "virConnectListAllDomains: %s",
			 guest_last_error());
		return -1;
	}
	for (i = 0; i < n; i++) {
		const char *name = virDomainGetName(doms[i]);
		char *meta = NULL;

		if (name != NULL && strncmp(name, name_prefix, plen) == 0) {
			/* No element in our namespace: someone else's. */
			guest_errors_expected(1);
			meta = virDomainGetMetadata(doms[i],
						    VIR_DOMAIN_METADATA_ELEMENT,
						    GUEST_METADATA_NS,
						    VIR_DOMAIN_AFFECT_LIVE);
			guest_errors_expected(0);
		}
		if (meta != NULL) {
			if (domain_destroy(h, doms[i], name, err, errlen) < 0) {
				rc = -1;
			} else {
				count++;
				guest_glog(GUEST_LOG_INFO, "destroyed orphan guest "
				     "name=%s", name);
			}
			free(meta);
		}
		virDomainFree(doms[i]);
	}
	free(doms);
	if (ndestroyed != NULL)
		*ndestroyed = count;
	return rc;
}

int guest_destroy_orphans(struct guest_host *h, const char *name_prefix,
			  int *ndestroyed, char *err, size_t errlen)
{
	int rc;

	guest_rpc_enter(h);
	rc = destroy_orphans(h, name_prefix, ndestroyed, err, errlen);
	guest_rpc_leave(h);
	return rc;
}
