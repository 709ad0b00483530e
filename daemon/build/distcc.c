/* SPDX-License-Identifier: GPL-2.0-only
 *
 * distcc.c - owns a build's spreading of its compiles over the [host]
 * sections with build_slots, with Debian's distcc: ccache stays in front
 * (CCACHE_PREFIX=distcc), the local host keeps its own jobs and is where
 * every compile a host fails goes (distcc's fallback), so a host that is
 * down or broken slows a build and never fails it.
 *
 * The build runs in a sandbox without network (sandbox.c); distcc reaches
 * the hosts without it. Each host has a unix socket of the build's relay
 * outside the sandbox (distccrelay.c), to that host's distccd and to
 * nothing else, and distcc inside talks to the sockets in its "ssh"
 * mode: DISTCC_SSH is a connector that joins its stdin and stdout to the
 * host's socket. The relay reads each request and lets through only a
 * compile with the target's gcc in the shapes kbuild makes
 * (distccwire.c), so the untrusted build can make a host run that
 * compiler on the source it sends and nothing else; what it refuses is
 * compiled in the sandbox instead.
 *
 * Where the compiles went is read back from distcc's log (DISTCC_LOG) and
 * written to the build log: per host the compiles it completed, and how
 * many fell back to local compiles.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "build/build.h"

#define DISTCC_LOG_MAX (64u << 20)

/* Does host h compile target t? Its compilers list names it. */
static int host_compiles(const struct host_conf *h, const char *target)
{
	return h->build_slots > 0 && word_list_has(h->compilers, target);
}

/* The connector distcc runs as its ssh: "[-l USER] HOST distccd ...";
 * HOST is one of our [host] names (the DISTCC_HOSTS we wrote), checked
 * again because the build's own code could run the script too. */
static int write_connector(const char *dir, char *path, size_t len)
{
	char text[512];
	int n = snprintf(text, sizeof(text),
		"#!/bin/sh\n"
		"# rcgate: distcc's DISTCC_SSH, to the relay of host $1\n"
		"[ \"$1\" = -l ] && shift 2\n"
		"case $1 in ''|*[!A-Za-z0-9._-]*) exit 2 ;; esac\n"
		"exec socat - \"UNIX-CONNECT:%s/$1.sock\"\n", dir);

	if (n < 0 || (size_t)n >= sizeof(text) ||
	    pathf(path, len, "%s/connect", dir) < 0 ||
	    file_write_atomic(path, text, (size_t)n, NULL, 0) < 0 ||
	    chmod(path, 0755) < 0)
		return -1;
	return 0;
}

void distcc_stop_relays(struct distcc *d)
{
	distcc_relay_stop(d->relay);
	d->relay = NULL;
	d->nrelay = 0;
	if (d->dir[0] != '\0')
		rm_rf(d->dir);
	d->dir[0] = '\0';
}

/* The relay of the hosts that compile target, for its gcc only, and
 * their part of DISTCC_HOSTS: 0, or -1 (logged) if it cannot start. */
static int relay_hosts(const struct build_options *o, const char *target,
		       struct distcc *d, FILE *log)
{
	const struct host_conf *hosts[HOSTS_MAX];
	const struct target *t = target_find(target);
	const char *compilers[3];
	char names[1][64], err[256];
	size_t n = 0, hl = 0;

	for (size_t i = 0; i < o->nbuild_hosts && n < HOSTS_MAX; i++) {
		if (host_compiles(&o->build_hosts[i], target))
			hosts[n++] = &o->build_hosts[i];
	}
	if (t == NULL ||
	    dcc_target_compilers(t->cross_compile, names, compilers, 3) == 0) {
		fprintf(log, "build: distcc: no compiler known for %s\n", target);
		return -1;
	}
	d->relay = distcc_relay_start(d->dir, hosts, n, compilers, log, err,
				      sizeof(err));
	if (d->relay == NULL) {
		fprintf(log, "build: distcc: no relay: %s\n", err);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct host_conf *h = hosts[i];
		int w = snprintf(d->hosts + hl, sizeof(d->hosts) - hl,
				 "@%s/%ld ", h->name, h->build_slots);

		if (w > 0 && (size_t)w < sizeof(d->hosts) - hl)
			hl += (size_t)w;
		d->slots += h->build_slots;
		d->nrelay++;
		fprintf(log, "build: distcc: host %s (%s), %ld slots, through"
			" %s/%s.sock, compiles with %s only\n", h->name,
			h->distcc, h->build_slots, d->dir, h->name,
			compilers[0]);
	}
	return 0;
}

int distcc_start(const struct build_options *o, const char *target,
		 const char *statedir, struct distcc *d, FILE *log)
{
	char err[256], connector[PATH_MAX];
	long local = o->jobs > 0 ? o->jobs : 1;

	memset(d, 0, sizeof(*d));
	for (size_t i = 0; i < o->nbuild_hosts; i++)
		d->nrelay += host_compiles(&o->build_hosts[i], target);
	if (d->nrelay == 0)
		return 0;
	d->nrelay = 0;
	/* Short (a unix socket's path has 108 bytes) and outside the tree:
	 * the sandbox sees it read-only, which is enough to connect. */
	snprintf(d->dir, sizeof(d->dir), "/tmp/rcgate-distcc.XXXXXX");
	if (mkdtemp(d->dir) == NULL) {
		fprintf(log, "build: distcc: no relay directory (%s): compiling"
			" locally\n", strerror(errno));
		d->dir[0] = '\0';
		return 0;
	}
	if (write_connector(d->dir, connector, sizeof(connector)) < 0) {
		fprintf(log, "build: distcc: cannot write the connector:"
			" compiling locally\n");
		distcc_stop_relays(d);
		return 0;
	}
	if (relay_hosts(o, target, d, log) < 0)
		d->nrelay = 0;
	if (d->nrelay == 0) {
		fprintf(log, "build: distcc: no host reachable: compiling"
			" locally\n");
		distcc_stop_relays(d);
		d->slots = 0;
		return 0;
	}
	snprintf(d->hosts + strlen(d->hosts), sizeof(d->hosts) -
		 strlen(d->hosts), "localhost/%ld", local);
	if (mkdir_p(statedir, 0755, err, sizeof(err)) < 0) {
		fprintf(log, "build: distcc: %s: compiling locally\n", err);
		distcc_stop_relays(d);
		d->slots = 0;
		return 0;
	}
	if (pathf(d->logpath, sizeof(d->logpath), "%s/log", statedir) < 0) {
		distcc_stop_relays(d);
		d->slots = 0;
		return 0;
	}
	unlink(d->logpath);
	snprintf(d->env[0], sizeof(d->env[0]), "DISTCC_HOSTS=%s", d->hosts);
	snprintf(d->env[1], sizeof(d->env[1]), "DISTCC_SSH=%s", connector);
	snprintf(d->env[2], sizeof(d->env[2]), "DISTCC_DIR=%s", statedir);
	snprintf(d->env[3], sizeof(d->env[3]), "DISTCC_LOG=%s", d->logpath);
	/* Info level: one "compile F on HOST completed ok" line per compile,
	 * what distcc_account counts. */
	snprintf(d->env[4], sizeof(d->env[4]), "DISTCC_VERBOSE=0");
	snprintf(d->env[5], sizeof(d->env[5]), "DISTCC_FALLBACK=1");
	snprintf(d->env[6], sizeof(d->env[6]), "DISTCC_IO_TIMEOUT=120");
	snprintf(d->env[7], sizeof(d->env[7]), "CCACHE_PREFIX=distcc");
	fprintf(log, "build: distcc: DISTCC_HOSTS=%s\n", d->hosts);
	fflush(log);
	return (int)d->nrelay;
}

size_t distcc_env(const struct distcc *d, char *env[], size_t at, size_t max)
{
	for (size_t i = 0; d->nrelay > 0 && i < DISTCC_ENV && at + 1 < max; i++)
		env[at++] = (char *)d->env[i];
	env[at] = NULL;
	return at;
}

/* The distcc process of a log line, "distcc[PID] ...": PID, or -1. */
static long line_pid(const char *p, const char *eol)
{
	long pid = 0;

	if ((size_t)(eol - p) < 9 || memcmp(p, "distcc[", 7) != 0)
		return -1;
	for (p += 7; p < eol && *p >= '0' && *p <= '9' && pid < 1L << 31; p++)
		pid = pid * 10 + (*p - '0');
	return p < eol && *p == ']' ? pid : -1;
}

/* Processes that tried a host and may fall back: an open-addressed set
 * of pids (0: never used, -1: removed), each removed as it completes. The
 * slot of pid, or where to add it; -1 if full. */
#define TRIED_MAX 4096
static int tried_slot(const long *set, long pid)
{
	size_t i = (size_t)pid % TRIED_MAX;
	int reuse = -1;

	for (size_t n = 0; n < TRIED_MAX; n++, i = (i + 1) % TRIED_MAX) {
		if (set[i] == pid)
			return (int)i;
		if (set[i] == -1 && reuse < 0)
			reuse = (int)i;
		if (set[i] == 0)
			return reuse >= 0 ? reuse : (int)i;
	}
	return reuse;
}

int distcc_count(const char *text, size_t len, struct distcc_counts *c)
{
	const char *p = text, *end;
	long *tried;

	memset(c, 0, sizeof(*c));
	if (text == NULL)
		return 0;	/* no log: nothing went anywhere */
	end = text + len;
	tried = calloc(TRIED_MAX, sizeof(*tried));
	if (tried == NULL)
		return -1;
	while (p != NULL && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl != NULL ? nl : end;
		size_t n = (size_t)(eol - p);
		const char *m = memmem(p, n, "] compile ", 10);
		const char *on, *ok;

		long pid = line_pid(p, eol);
		int slot = pid > 0 ? tried_slot(tried, pid) : -1;

		/* A compile falls back when distcc cannot reach a host
		 * ("failed to distribute") or the host fails it after
		 * "exec on @host" (no answer, a dropped connection): either
		 * way it then completes on localhost. */
		if (slot >= 0 && (memmem(p, n, "] exec on @", 11) != NULL ||
				  memmem(p, n, "failed to distribute", 20) != NULL))
			tried[slot] = pid;
		on = m != NULL ? memmem(m + 10, (size_t)(eol - m - 10), " on ",
					4) : NULL;
		ok = on != NULL ? memmem(on + 4, (size_t)(eol - on - 4),
					 " completed ok", 13) : NULL;
		/* "compile (null)": kbuild's probes of the compiler, run
		 * locally and not compiles of the tree. */
		if (ok != NULL && ok > on + 4 &&
		    memmem(m, (size_t)(on - m), "(null)", 6) == NULL) {
			const char *h = on + 4;
			size_t hn = (size_t)(ok - h), k;

			/* "@lab1/2" is the host lab1; "localhost" stays. */
			if (hn > 0 && *h == '@') {
				h++;
				hn--;
			}
			for (k = 0; k < hn; k++) {
				if (h[k] == '/' || h[k] == ' ')
					break;
			}
			hn = k;
			for (k = 0; k < c->nhosts; k++) {
				if (strlen(c->host[k].name) == hn &&
				    memcmp(c->host[k].name, h, hn) == 0)
					break;
			}
			if (hn > 0 && k == c->nhosts && k < DISTCC_COUNT_HOSTS &&
			    hn < sizeof(c->host[k].name)) {
				memcpy(c->host[k].name, h, hn);
				c->host[k].name[hn] = '\0';
				c->nhosts++;
			}
			if (k < c->nhosts)
				c->host[k].compiles++;
			c->total++;
			if (slot >= 0 && tried[slot] == pid) {
				if (hn == 9 && memcmp(h, "localhost", 9) == 0)
					c->fallbacks++;
				tried[slot] = -1;
			}
		}
		p = eol + 1;
	}
	free(tried);
	return 0;
}

void distcc_account(struct distcc *d, FILE *log)
{
	struct distcc_counts c;
	size_t len;
	char *text;

	if (d->logpath[0] == '\0')
		return;
	text = file_read(d->logpath, DISTCC_LOG_MAX, &len, NULL, 0);
	if (text == NULL) {
		fprintf(log, "build: distcc: no compiles (no distcc log)\n");
		return;
	}
	distcc_count(text, len, &c);
	free(text);
	fprintf(log, "build: distcc: %ld compiles:", c.total);
	for (size_t k = 0; k < c.nhosts; k++)
		fprintf(log, " %s %ld%s", c.host[k].name, c.host[k].compiles,
			k + 1 < c.nhosts ? "," : "");
	fprintf(log, "; %ld fell back to local compiles after a host"
		" failed; %ld refused by the relay\n", c.fallbacks,
		d->relay != NULL ? distcc_relay_refused(d->relay) : 0);
	unlink(d->logpath);
	d->logpath[0] = '\0';
}
