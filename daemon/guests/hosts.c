/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hosts.c - owns the hypervisor hosts of the [host NAME] sections
 * (config.c parses them): one libvirt connection per host, each host's health, and the choice of the
 * host a job runs on.
 *
 * A remote host has a thread of its own that connects, makes sure the
 * storage pool is there and has room, removes what this daemon left there
 * before (guests and volumes named with its prefix), and then watches the
 * connection (libvirt's keepalive and close callback, guest_conn.c). A host
 * that fails is marked down: nothing new is placed there, the jobs on it
 * fail over (job/boot.c), and once the last of them has let go of the old
 * connection the thread connects again every HOST_RETRY_S seconds until
 * the host answers. A call that hangs on one host holds only that host's
 * thread or the job that made it. The connect itself (virConnectOpen has
 * no timeout: a server that accepts and never speaks holds it for ever)
 * runs on a helper thread the host's thread waits for at most
 * HOST_CONNECT_S: then it is abandoned, the host stays down with that
 * error and is tried again, and a stop never waits for it.
 *
 * Without [host] sections there is one implicit host: the daemon's own
 * connection, capacity [jobs] workers, every target, accel as [jobs]
 * accel decides.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "guests/guests.h"

#define HOST_RETRY_S 3
#define HOST_CHECK_MS 500
#define POOL_CHECK_S 30
#define HOST_STOP_WAIT_S 5
#define HOST_CONNECT_S 10
/* Abandoned connects still hanging on one host: no new try past this
 * many (each holds a thread and a socket until the peer gives up). */
#define HOST_HUNG_MAX 3

int hosts_need_local(const struct config *c)
{
	if (c->nhosts == 0)
		return 1;
	for (size_t i = 0; i < c->nhosts; i++) {
		if (strcmp(c->hosts[i].uri, HOST_URI_LOCAL) == 0)
			return 1;
	}
	return 0;
}

/* ---- placement ---- */

static int better(const struct host_choice *a, const struct host_choice *b,
		  int some_free)
{
	long fa = a->capacity - a->load, fb = b->capacity - b->load;
	int ka = a->runs == HOST_RUNS_KVM, kb = b->runs == HOST_RUNS_KVM;

	if (some_free) {
		if (ka != kb)
			return ka > kb;
		return fa > fb;
	}
	if (fa != fb)
		return fa > fb;
	return ka > kb;
}

int hosts_choose(const struct host_choice *c, size_t n)
{
	int best = -1, some_free = 0;

	for (size_t i = 0; i < n; i++) {
		if (c[i].up && c[i].runs != HOST_RUNS_NOT &&
		    c[i].load < c[i].capacity)
			some_free = 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!c[i].up || c[i].runs == HOST_RUNS_NOT)
			continue;
		if (some_free && c[i].load >= c[i].capacity)
			continue;
		if (best < 0 || better(&c[i], &c[best], some_free))
			best = (int)i;
	}
	return best;
}

/* ---- run time ---- */

enum host_state { HOST_CONNECTING, HOST_UP, HOST_DOWN };

struct host {
	struct host_conf conf;
	int local, implicit;
	/* Under lock: */
	struct guest_host *gh;		/* NULL while not connected */
	enum host_state state;
	time_t since;
	char error[512];
	long jobs, guests;		/* placed now, running now */
	unsigned long placed, failures;
	unsigned users;			/* placements holding gh */
	pthread_t thread;
	int has_thread;
	atomic_int hung;		/* abandoned connects not yet returned */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* stop requests */
	struct host host[HOSTS_MAX];
	size_t n;
	int stopping;
	char prefix[40];
	char *default_uri;		/* for the status of the local host */
} hs = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static const char *state_name(enum host_state s)
{
	switch (s) {
	case HOST_UP: return "up";
	case HOST_DOWN: return "down";
	case HOST_CONNECTING: return "connecting";
	}
	return "down";
}

/* Under hs.lock. */
static void set_state(struct host *h, enum host_state s, const char *why)
{
	if (h->state != s)
		h->since = time(NULL);
	h->state = s;
	if (why != NULL)
		snprintf(h->error, sizeof(h->error), "%s", why);
}

/* Sleeps up to ms unless the hosts are stopping; 1 when stopping. */
static int wait_ms(long ms)
{
	int stop;

	pthread_mutex_lock(&hs.lock);
	if (!hs.stopping)
		cond_wait_ms(&hs.cond, &hs.lock, ms);
	stop = hs.stopping;
	pthread_mutex_unlock(&hs.lock);
	return stop;
}

/* One connect on its helper thread. Whichever of the two lets go last
 * frees it: the host's thread when the connect returned in time, the
 * helper when it was abandoned (closing what it opened too late). */
struct connect_try {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char uri[512];
	struct guest_host *gh;
	char err[512];
	int done, abandoned;
	atomic_int *hung;
};

static int stopping_now(void)
{
	int stop;

	pthread_mutex_lock(&hs.lock);
	stop = hs.stopping;
	pthread_mutex_unlock(&hs.lock);
	return stop;
}

static void connect_try_free(struct connect_try *t)
{
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static void *connect_main(void *arg)
{
	struct connect_try *t = arg;
	char err[512] = "";
	struct guest_host *gh = guest_host_open(t->uri, err, sizeof(err));
	int abandoned;

	pthread_mutex_lock(&t->lock);
	t->gh = gh;
	snprintf(t->err, sizeof(t->err), "%s", err);
	t->done = 1;
	abandoned = t->abandoned;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	if (abandoned) {
		/* During a stop libvirt may be going away under it: the
		 * late connection is then left to the process's exit. */
		if (gh != NULL && !stopping_now())
			guest_host_close(gh);
		atomic_fetch_sub(t->hung, 1);
		connect_try_free(t);
	}
	return NULL;
}

/* guest_host_open(h's URI) with a deadline of HOST_CONNECT_S, given up
 * at once when the hosts stop. NULL with err set when it failed, timed
 * out or was given up. */
static struct guest_host *host_connect(struct host *h, char *err,
				       size_t errlen)
{
	struct connect_try *t;
	struct guest_host *gh = NULL;
	pthread_attr_t attr;
	pthread_t thread;
	double deadline = now_monotonic() + HOST_CONNECT_S;
	int started;

	if (atomic_load(&h->hung) >= HOST_HUNG_MAX) {
		errf(err, errlen, "%d connects to %s still hang; not trying"
		     " another yet", HOST_HUNG_MAX, h->conf.uri);
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		errf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	snprintf(t->uri, sizeof(t->uri), "%s", h->conf.uri);
	t->hung = &h->hung;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	started = pthread_create(&thread, &attr, connect_main, t) == 0;
	pthread_attr_destroy(&attr);
	if (!started) {
		errf(err, errlen, "cannot start a connect thread");
		connect_try_free(t);
		return NULL;
	}
	pthread_mutex_lock(&t->lock);
	while (!t->done && now_monotonic() < deadline && !stopping_now())
		cond_wait_ms(&t->cond, &t->lock, 100);
	if (t->done) {
		gh = t->gh;
		if (gh == NULL)
			errf(err, errlen, "%s", t->err);
		pthread_mutex_unlock(&t->lock);
		connect_try_free(t);
		return gh;
	}
	t->abandoned = 1;
	atomic_fetch_add(&h->hung, 1);
	pthread_mutex_unlock(&t->lock);
	errf(err, errlen, "connect to %s did not complete within %d s",
	     h->conf.uri, HOST_CONNECT_S);
	return NULL;
}

/* A new connection made usable: the pool is there with room, and what a
 * crash (of the daemon or of the host's libvirtd) left behind is gone. */
static int host_prepare(struct host *h, struct guest_host *gh, char *err,
			size_t errlen)
{
	int guests = 0, vols = 0;

	if (guest_destroy_orphans(gh, hs.prefix, &guests, err, errlen) < 0)
		return -1;
	if (guest_pool_ensure(gh, h->conf.pool, h->conf.pool_path, 0, err,
			      errlen) < 0 ||
	    guest_vol_delete_prefix(gh, h->conf.pool, hs.prefix, &vols, err,
				    errlen) < 0 ||
	    guest_pool_ensure(gh, h->conf.pool, NULL, h->conf.min_free_mb, err,
			      errlen) < 0)
		return -1;
	if (guests > 0 || vols > 0)
		log_info("host=%s removed %d guest(s) and %d volume(s) left by an"
			 " earlier run", h->conf.name, guests, vols);
	return 0;
}

static void *host_main(void *arg)
{
	struct host *h = arg;
	double next_pool = 0, next_try = 0;
	char err[512];

	for (;;) {
		enum host_state state;
		struct guest_host *gh;
		unsigned users;

		pthread_mutex_lock(&hs.lock);
		state = h->state;
		gh = h->gh;
		users = h->users;
		pthread_mutex_unlock(&hs.lock);
		if (state == HOST_UP) {
			int ok = guest_host_alive(gh, err, sizeof(err));

			if (ok && now_monotonic() >= next_pool) {
				next_pool = now_monotonic() + POOL_CHECK_S;
				ok = guest_pool_ensure(gh, h->conf.pool, NULL,
						       h->conf.min_free_mb, err,
						       sizeof(err)) == 0;
			}
			if (!ok) {
				pthread_mutex_lock(&hs.lock);
				h->failures++;
				set_state(h, HOST_DOWN, err);
				pthread_mutex_unlock(&hs.lock);
				log_warn("host=%s down: %s", h->conf.name, err);
			}
			if (wait_ms(HOST_CHECK_MS))
				break;
			continue;
		}
		/* Down: the old connection goes once nobody uses it. */
		if (gh != NULL) {
			if (users > 0) {
				if (wait_ms(200))
					break;
				continue;
			}
			pthread_mutex_lock(&hs.lock);
			h->gh = NULL;
			pthread_mutex_unlock(&hs.lock);
			guest_host_close(gh);
		}
		if (now_monotonic() < next_try) {
			if (wait_ms(200))
				break;
			continue;
		}
		next_try = now_monotonic() + HOST_RETRY_S;
		gh = host_connect(h, err, sizeof(err));
		if (gh == NULL && stopping_now())
			break;
		if (gh != NULL && host_prepare(h, gh, err, sizeof(err)) < 0) {
			guest_host_close(gh);
			gh = NULL;
		}
		pthread_mutex_lock(&hs.lock);
		if (gh != NULL) {
			h->gh = gh;
			set_state(h, HOST_UP, NULL);
			next_pool = now_monotonic() + POOL_CHECK_S;
		} else {
			/* The first failure is logged; the same again not. */
			if (strcmp(h->error, err) != 0)
				log_warn("host=%s unreachable: %s", h->conf.name,
					 err);
			set_state(h, h->state == HOST_CONNECTING
				  ? HOST_CONNECTING : HOST_DOWN, err);
		}
		pthread_mutex_unlock(&hs.lock);
		if (gh != NULL)
			log_info("host=%s up uri=%s capacity=%ld", h->conf.name,
				 h->conf.uri, h->conf.capacity);
	}
	return NULL;
}

int hosts_start(const struct config *cfg, struct guest_host *local,
		const char *local_uri, const char *prefix, char *err,
		size_t errlen)
{
	char *uri = strdup(local_uri);
	int orphans = 0;

	if (uri == NULL) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	/* Only this instance's guests: another rcgated on the same libvirt
	 * names its own with its own id. Remote hosts do this as they
	 * connect (host_main). */
	if (local != NULL &&
	    guest_destroy_orphans(local, prefix, &orphans, err, errlen) < 0) {
		free(uri);
		return -1;
	}
	if (orphans > 0)
		log_info("destroyed %d orphaned guest(s)", orphans);
	pthread_mutex_lock(&hs.lock);
	memset(hs.host, 0, sizeof(hs.host));
	hs.n = 0;
	hs.stopping = 0;
	free(hs.default_uri);
	hs.default_uri = uri;
	snprintf(hs.prefix, sizeof(hs.prefix), "%s", prefix);
	if (cfg->nhosts == 0) {
		struct host *h = &hs.host[hs.n++];

		snprintf(h->conf.name, sizeof(h->conf.name), "local");
		snprintf(h->conf.uri, sizeof(h->conf.uri), HOST_URI_LOCAL);
		h->conf.capacity = cfg->workers;
		h->local = h->implicit = 1;
	}
	for (size_t i = 0; i < cfg->nhosts && hs.n < HOSTS_MAX; i++) {
		struct host *h = &hs.host[hs.n++];

		h->conf = cfg->hosts[i];
		h->local = strcmp(h->conf.uri, HOST_URI_LOCAL) == 0;
	}
	for (size_t i = 0; i < hs.n; i++) {
		struct host *h = &hs.host[i];

		h->since = time(NULL);
		if (h->local) {
			if (local == NULL) {
				pthread_mutex_unlock(&hs.lock);
				errf(err, errlen, "host %s: no local libvirt "
				     "connection", h->conf.name);
				return -1;
			}
			h->gh = local;
			h->state = HOST_UP;
			continue;
		}
		h->state = HOST_CONNECTING;
		if (pthread_create(&h->thread, NULL, host_main, h) != 0) {
			pthread_mutex_unlock(&hs.lock);
			errf(err, errlen, "host %s: cannot start its thread",
			     h->conf.name);
			hosts_stop();
			return -1;
		}
		h->has_thread = 1;
	}
	pthread_mutex_unlock(&hs.lock);
	return 0;
}

void hosts_stop(void)
{
	pthread_mutex_lock(&hs.lock);
	hs.stopping = 1;
	pthread_cond_broadcast(&hs.cond);
	pthread_mutex_unlock(&hs.lock);
	for (size_t i = 0; i < hs.n; i++) {
		struct host *h = &hs.host[i];

		if (h->has_thread) {
			struct timespec ts;

			/* A thread stuck in virConnectOpen to a host that
			 * accepts but never answers (no keepalive before the
			 * connection exists) must not hold the daemon's
			 * stop: it is left behind with its connection. */
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += HOST_STOP_WAIT_S;
			if (pthread_timedjoin_np(h->thread, NULL, &ts) != 0) {
				log_warn("host=%s: its thread is stuck in a libvirt"
					 " call; not waiting for it", h->conf.name);
				pthread_detach(h->thread);
				h->has_thread = 0;
				h->gh = NULL;
				continue;
			}
		}
		h->has_thread = 0;
		/* The local connection is main's to close. */
		if (!h->local && h->gh != NULL)
			guest_host_close(h->gh);
		h->gh = NULL;
	}
	pthread_mutex_lock(&hs.lock);
	hs.n = 0;
	pthread_mutex_unlock(&hs.lock);
}

size_t hosts_count(void)
{
	size_t n;

	pthread_mutex_lock(&hs.lock);
	n = hs.n;
	pthread_mutex_unlock(&hs.lock);
	return n;
}

static enum host_runs host_runs(const struct host *h, const char *target)
{
	if (h->implicit)
		return HOST_RUNS_TCG;	/* every target; accel decided later */
	if (word_list_has(h->conf.kvm, target))
		return HOST_RUNS_KVM;
	if (word_list_has(h->conf.tcg, target))
		return HOST_RUNS_TCG;
	return HOST_RUNS_NOT;
}

int hosts_place(const char *target, struct host_placement *out, char *err,
		size_t errlen)
{
	struct host_choice c[HOSTS_MAX];
	int best, any = 0;

	*out = (struct host_placement){ .index = -1, .accel = -1 };
	pthread_mutex_lock(&hs.lock);
	for (size_t i = 0; i < hs.n; i++) {
		const struct host *h = &hs.host[i];

		c[i] = (struct host_choice){ h->state == HOST_UP && h->gh != NULL,
			host_runs(h, target), h->conf.capacity, h->jobs };
		if (c[i].runs != HOST_RUNS_NOT)
			any = 1;
	}
	best = hosts_choose(c, hs.n);
	if (best >= 0) {
		struct host *h = &hs.host[best];

		h->jobs++;
		h->placed++;
		h->users++;
		out->index = best;
		out->gh = h->gh;
		out->name = h->conf.name;
		out->uri = h->local ? hs.default_uri : h->conf.uri;
		out->pool = h->conf.pool;
		out->local = h->local;
		out->accel = h->implicit ? -1 : c[best].runs == HOST_RUNS_KVM;
	}
	pthread_mutex_unlock(&hs.lock);
	if (best >= 0)
		return 1;
	if (!any) {
		errf(err, errlen, "no configured host runs target %s", target);
		return -1;
	}
	return 0;
}

void hosts_release(struct host_placement *p)
{
	if (p == NULL || p->index < 0)
		return;
	pthread_mutex_lock(&hs.lock);
	if ((size_t)p->index < hs.n) {
		struct host *h = &hs.host[p->index];

		h->jobs--;
		h->users--;
	}
	pthread_mutex_unlock(&hs.lock);
	p->index = -1;
	p->gh = NULL;
}

void hosts_guest_delta(const struct host_placement *p, int delta)
{
	if (p == NULL || p->index < 0)
		return;
	pthread_mutex_lock(&hs.lock);
	if ((size_t)p->index < hs.n)
		hs.host[p->index].guests += delta;
	pthread_mutex_unlock(&hs.lock);
}

void hosts_failed(const struct host_placement *p, const char *why)
{
	int marked = 0;

	if (p == NULL || p->index < 0)
		return;
	pthread_mutex_lock(&hs.lock);
	if ((size_t)p->index < hs.n) {
		struct host *h = &hs.host[p->index];

		/* Only the connection the placement used: a host already
		 * reconnected is not taken down for an old failure. */
		if (h->gh == p->gh && h->state == HOST_UP && !h->local) {
			h->failures++;
			set_state(h, HOST_DOWN, why);
			marked = 1;
		} else if (h->local) {
			h->failures++;
			snprintf(h->error, sizeof(h->error), "%s", why);
		}
	}
	pthread_mutex_unlock(&hs.lock);
	if (marked)
		log_warn("host=%s down: %s", p->name, why);
}

int hosts_usable(const struct host_placement *p, char *why, size_t len)
{
	int up;

	if (p == NULL || p->index < 0) {
		snprintf(why, len, "not placed");
		return 0;
	}
	pthread_mutex_lock(&hs.lock);
	up = (size_t)p->index < hs.n && hs.host[p->index].gh == p->gh &&
		hs.host[p->index].state == HOST_UP;
	if (!up)
		snprintf(why, len, "host %s is down: %s", p->name,
			 (size_t)p->index < hs.n ? hs.host[p->index].error : "");
	pthread_mutex_unlock(&hs.lock);
	if (up && !p->local && !guest_host_alive(p->gh, why, len))
		up = 0;
	return up;
}

size_t hosts_status(struct host_status *out, size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&hs.lock);
	for (size_t i = 0; i < hs.n && n < max; i++, n++) {
		const struct host *h = &hs.host[i];
		struct host_status *s = &out[n];

		memset(s, 0, sizeof(*s));
		snprintf(s->name, sizeof(s->name), "%s", h->conf.name);
		snprintf(s->uri, sizeof(s->uri), "%s", h->local && hs.default_uri
			 ? hs.default_uri : h->conf.uri);
		snprintf(s->state, sizeof(s->state), "%s", state_name(h->state));
		time_iso8601(h->since, s->since);
		snprintf(s->error, sizeof(s->error), "%s", h->error);
		if (h->implicit) {
			struct strbuf b;

			strbuf_init(&b, s->tcg, sizeof(s->tcg));
			for (size_t t = 0; t < target_count(); t++)
				strbuf_printf(&b, "%s%s", t ? " " : "",
					      target_at(t)->name);
		} else {
			snprintf(s->kvm, sizeof(s->kvm), "%s", h->conf.kvm);
			snprintf(s->tcg, sizeof(s->tcg), "%s", h->conf.tcg);
		}
		s->local = h->local;
		s->auto_accel = h->implicit;
		s->capacity = h->conf.capacity;
		s->jobs = h->jobs;
		s->guests = h->guests;
		s->placed = h->placed;
		s->failures = h->failures;
	}
	pthread_mutex_unlock(&hs.lock);
	return n;
}
