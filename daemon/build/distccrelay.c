/* SPDX-License-Identifier: GPL-2.0-only
 *
 * distccrelay.c - owns a build's relay to its build hosts: a unix socket
 * per host that the sandbox reaches (distcc's "ssh" connector joins
 * distcc to it), and a thread per connection that reads the request,
 * lets through only what distccwire.c accepts, re-encoded as it was
 * checked, to that host's distccd and to nothing else, then passes the
 * answer back. A command line refused is answered as a compile that
 * failed, with the reason on its stderr; a request that is malformed or
 * of another protocol version, by closing the connection. Either way
 * distcc compiles the file in the sandbox (its fallback), and the
 * refusal is counted and, the first few, written to the build log with
 * its reason.
 *
 * Every size is capped (distccwire.c's request caps, RELAY_REPLY_MAX for
 * an answer), every wait has a deadline, and the connections at once are
 * at most RELAY_CONN_MAX. distcc_relay_stop ends them all.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/base.h"
#include "build/build.h"

#define RELAY_CONN_MAX 32		/* connections at once, all hosts */
#define RELAY_IO_MS (300 * 1000)	/* silence before a connection ends */
#define RELAY_CONNECT_MS 5000		/* to reach a host's distccd */
#define RELAY_REPLY_MAX (1LL << 30)	/* an answer: the object, messages */
#define RELAY_LOG_MAX 16		/* refusals written to the build log */

struct listener {
	int fd;
	char name[HOST_NAME_MAX_LEN + 1];
	char distcc[128];		/* HOST:PORT */
};

struct distcc_relay {
	struct listener l[HOSTS_MAX];
	size_t n;
	char names[2][64];		/* the target's gcc (compilers) */
	const char *compilers[3];
	FILE *log;
	int stop[2];			/* a pipe, written once by stop */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	int nconn;
	int fds[RELAY_CONN_MAX][2];	/* per connection: client, host */
	int used[RELAY_CONN_MAX];
	long refused, logged;
};

struct conn {
	struct distcc_relay *r;
	const struct listener *l;
	int slot;
};

/* Waits until fd has events (or the relay stops, or ms pass): 1 ready,
 * 0 timed out, -1 stopping. */
static int wait_fd(const struct distcc_relay *r, int fd, short events, int ms)
{
	struct pollfd p[2] = { { fd, events, 0 }, { r->stop[0], POLLIN, 0 } };

	for (;;) {
		int n = poll(p, 2, ms);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || p[1].revents != 0)
			return -1;
		return n > 0;
	}
}

static int send_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Copies from one socket to the other (to < 0: reads and drops): exactly
 * want bytes (want >= 0), or until from's end of file, at most
 * RELAY_REPLY_MAX (want < 0).
 * 0, or -1 on an error, a stall, a short stream or the cap. */
static int pump(const struct distcc_relay *r, int from, int to,
		long long want)
{
	char buf[64 * 1024];
	long long moved = 0;

	while (want < 0 || moved < want) {
		size_t ask = sizeof(buf);
		ssize_t n;

		if (want >= 0 && (long long)ask > want - moved)
			ask = (size_t)(want - moved);
		if (wait_fd(r, from, POLLIN, RELAY_IO_MS) != 1)
			return -1;
		n = recv(from, buf, ask, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return want < 0 ? 0 : -1;
		moved += n;
		if (want < 0 && moved > RELAY_REPLY_MAX)
			return -1;
		if (to >= 0 && send_all(to, buf, (size_t)n) < 0)
			return -1;
	}
	return 0;
}

/* A connection to HOST:PORT (checked by config.c) within
 * RELAY_CONNECT_MS: its socket, or -1. */
static int host_connect(const struct distcc_relay *r, const char *hostport)
{
	char host[128], *colon;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	struct timeval tv = { RELAY_IO_MS / 1000, 0 };
	int fd = -1;

	snprintf(host, sizeof(host), "%s", hostport);
	colon = strrchr(host, ':');
	if (colon == NULL)
		return -1;
	*colon = '\0';
	if (getaddrinfo(host, colon + 1, &hints, &res) != 0)
		return -1;
	for (ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
		int soerr = 0;
		socklen_t sl = sizeof(soerr);

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
			    SOCK_NONBLOCK, ai->ai_protocol);
		if (fd < 0)
			continue;
		if ((connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 &&
		     (errno != EINPROGRESS ||
		      wait_fd(r, fd, POLLOUT, RELAY_CONNECT_MS) != 1 ||
		      getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 ||
		      soerr != 0)) ||
		    fcntl(fd, F_SETFL, 0) < 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd;
}

static void refuse(struct conn *c, const char *why)
{
	struct distcc_relay *r = c->r;
	int show;

	pthread_mutex_lock(&r->lock);
	r->refused++;
	show = r->logged < RELAY_LOG_MAX;
	r->logged += show;
	pthread_mutex_unlock(&r->lock);
	if (!show)
		return;
	fprintf(r->log, "build: distcc: host %s: relay refused a compile: %s\n",
		c->l->name, why);
	fflush(r->log);
	log_warn("distcc relay host=%s refused: %s", c->l->name, why);
}

/* Reads the request's header from the client into buf (DCC_HEADER_MAX
 * bytes): 1 with r, *len (what was read) and *used (the header's
 * bytes), 0 if the client went away, -1 with why. */
static int read_request(struct conn *c, int fd, char *buf, size_t *len,
			struct dcc_request *req, size_t *used, char *why,
			size_t whylen)
{
	*len = 0;
	for (;;) {
		ssize_t n;
		int rc;

		if (wait_fd(c->r, fd, POLLIN, RELAY_IO_MS) != 1)
			return 0;
		n = recv(fd, buf + *len, DCC_HEADER_MAX - *len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		*len += (size_t)n;
		rc = dcc_request_parse(buf, *len, req, used, why, whylen);
		if (rc != 0)
			return rc;
		if (*len == DCC_HEADER_MAX) {
			errf(why, whylen, "request header over %d bytes",
			     DCC_HEADER_MAX);
			return -1;
		}
	}
}

/* Relays one compile: the checked header, the source, the answer. */
static void conn_serve(struct conn *c, int cfd, char *buf, char *out)
{
	struct distcc_relay *r = c->r;
	struct dcc_request req;
	char why[256];
	size_t len, used, have, hl;
	int sfd, rc;

	rc = read_request(c, cfd, buf, &len, &req, &used, why, sizeof(why));
	if (rc < 0)
		refuse(c, why);
	if (rc <= 0)
		return;
	have = len - used < req.doti_len ? len - used : req.doti_len;
	if (dcc_argv_check(req.argv, req.arglen, req.argc, r->compilers, why,
			   sizeof(why)) < 0) {
		/* Answered as a compile that failed, once the client sent
		 * all of it: distcc then compiles it in the sandbox (or
		 * fails it without fallback), and keeps using the host. */
		refuse(c, why);
		hl = dcc_refusal_reply(why, out, DCC_HEADER_MAX);
		if (pump(r, cfd, -1, (long long)(req.doti_len - have)) == 0)
			send_all(cfd, out, hl);
		dcc_request_free(&req);
		return;
	}
	hl = dcc_request_header(&req, out, DCC_HEADER_MAX);
	sfd = hl > 0 ? host_connect(r, c->l->distcc) : -1;
	if (sfd >= 0) {
		pthread_mutex_lock(&r->lock);
		r->fds[c->slot][1] = sfd;
		pthread_mutex_unlock(&r->lock);
		/* Failures here are the host's or the client's: distcc
		 * falls back as for any host that fails. */
		if (send_all(sfd, out, hl) == 0 &&
		    send_all(sfd, buf + used, have) == 0 &&
		    pump(r, cfd, sfd, (long long)(req.doti_len - have)) == 0)
			pump(r, sfd, cfd, -1);
	}
	dcc_request_free(&req);
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	struct distcc_relay *r = c->r;
	char *buf = malloc(DCC_HEADER_MAX), *out = malloc(DCC_HEADER_MAX);
	struct timeval tv = { RELAY_IO_MS / 1000, 0 };
	int cfd = r->fds[c->slot][0];

	if (buf != NULL && out != NULL &&
	    setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == 0)
		conn_serve(c, cfd, buf, out);
	free(buf);
	free(out);
	pthread_mutex_lock(&r->lock);
	for (int i = 0; i < 2; i++) {
		if (r->fds[c->slot][i] >= 0)
			close(r->fds[c->slot][i]);
		r->fds[c->slot][i] = -1;
	}
	r->used[c->slot] = 0;
	r->nconn--;
	pthread_cond_broadcast(&r->idle);
	pthread_mutex_unlock(&r->lock);
	free(c);
	return NULL;
}

/* A connection accepted on l: its thread, or closed if the relay is at
 * RELAY_CONN_MAX. */
static void conn_start(struct distcc_relay *r, const struct listener *l,
		       int fd)
{
	struct conn *c = malloc(sizeof(*c));
	pthread_attr_t attr;
	pthread_t t;
	int slot = -1;

	pthread_mutex_lock(&r->lock);
	for (int i = 0; i < RELAY_CONN_MAX && slot < 0 && c != NULL; i++) {
		if (!r->used[i])
			slot = i;
	}
	if (slot >= 0) {
		r->used[slot] = 1;
		r->fds[slot][0] = fd;
		r->fds[slot][1] = -1;
		r->nconn++;
	}
	pthread_mutex_unlock(&r->lock);
	if (slot < 0) {
		close(fd);
		free(c);
		return;
	}
	*c = (struct conn){ r, l, slot };
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, conn_main, c) != 0) {
		pthread_mutex_lock(&r->lock);
		close(fd);
		r->fds[slot][0] = -1;
		r->used[slot] = 0;
		r->nconn--;
		pthread_mutex_unlock(&r->lock);
		free(c);
	}
	pthread_attr_destroy(&attr);
}

static void *relay_main(void *arg)
{
	struct distcc_relay *r = arg;
	struct pollfd p[HOSTS_MAX + 1];

	for (size_t i = 0; i < r->n; i++)
		p[i] = (struct pollfd){ r->l[i].fd, POLLIN, 0 };
	p[r->n] = (struct pollfd){ r->stop[0], POLLIN, 0 };
	for (;;) {
		if (poll(p, r->n + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[r->n].revents != 0)
			break;
		for (size_t i = 0; i < r->n; i++) {
			int fd;

			if (p[i].revents == 0)
				continue;
			fd = accept4(r->l[i].fd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0)
				conn_start(r, &r->l[i], fd);
		}
	}
	return NULL;
}

static int listen_at(const char *dir, const char *name, char *err,
		     size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s.sock",
			     dir, name);

	if (n < 0 || (size_t)n >= sizeof(sa.sun_path)) {
		errf(err, errlen, "socket path too long");
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(sa.sun_path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 64) < 0) {
		errf(err, errlen, "cannot listen on %s: %s", sa.sun_path,
		     strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

struct distcc_relay *distcc_relay_start(const char *dir,
					const struct host_conf *const hosts[],
					size_t n, const char *const compilers[],
					FILE *log, char *err, size_t errlen)
{
	struct distcc_relay *r = calloc(1, sizeof(*r));
	size_t k = 0;

	if (r == NULL || n == 0 || n > HOSTS_MAX) {
		errf(err, errlen, "no relay (%zu hosts)", n);
		free(r);
		return NULL;
	}
	for (; compilers[k] != NULL && k < 2; k++) {
		snprintf(r->names[k], sizeof(r->names[k]), "%s", compilers[k]);
		r->compilers[k] = r->names[k];
	}
	r->compilers[k] = NULL;
	r->log = log;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->idle, NULL);
	for (int i = 0; i < RELAY_CONN_MAX; i++)
		r->fds[i][0] = r->fds[i][1] = -1;
	r->stop[0] = r->stop[1] = -1;
	for (size_t i = 0; i < n; i++) {
		struct listener *l = &r->l[r->n];

		snprintf(l->name, sizeof(l->name), "%s", hosts[i]->name);
		snprintf(l->distcc, sizeof(l->distcc), "%s", hosts[i]->distcc);
		l->fd = listen_at(dir, l->name, err, errlen);
		if (l->fd < 0)
			break;
		r->n++;
	}
	if (r->n < n || pipe2(r->stop, O_CLOEXEC) < 0 ||
	    pthread_create(&r->thread, NULL, relay_main, r) != 0) {
		if (r->n == n)
			errf(err, errlen, "cannot start the relay: %s",
			     strerror(errno));
		for (size_t i = 0; i < r->n; i++)
			close(r->l[i].fd);
		for (int i = 0; i < 2; i++) {
			if (r->stop[i] >= 0)
				close(r->stop[i]);
		}
		pthread_mutex_destroy(&r->lock);
		pthread_cond_destroy(&r->idle);
		free(r);
		return NULL;
	}
	return r;
}

long distcc_relay_refused(struct distcc_relay *r)
{
	long n;

	pthread_mutex_lock(&r->lock);
	n = r->refused;
	pthread_mutex_unlock(&r->lock);
	return n;
}

void distcc_relay_stop(struct distcc_relay *r)
{
	if (r == NULL)
		return;
	while (write(r->stop[1], "x", 1) < 0 && errno == EINTR)
		;
	pthread_join(r->thread, NULL);
	pthread_mutex_lock(&r->lock);
	/* Wakes whatever a connection's thread is blocked in. */
	for (int i = 0; i < RELAY_CONN_MAX; i++) {
		for (int j = 0; j < 2; j++) {
			if (r->fds[i][j] >= 0)
				shutdown(r->fds[i][j], SHUT_RDWR);
		}
	}
	while (r->nconn > 0)
		pthread_cond_wait(&r->idle, &r->lock);
	pthread_mutex_unlock(&r->lock);
	for (size_t i = 0; i < r->n; i++)
		close(r->l[i].fd);
	close(r->stop[0]);
	close(r->stop[1]);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->idle);
	free(r);
}
