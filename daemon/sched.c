/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sched.c - owns the worker threads and the guest slots. A worker claims
 * the oldest queued job and walks it through fetching -> booting ->
 * running -> done, or ends it as an infra error (fetch failed, unusable
 * artifact, boot timeout, kernel panic, truncated agent output, libvirt
 * error), which the store retries up to the configured attempts. A test
 * failure is only ever what a complete KTAP report says; everything else
 * is infrastructure.
 *
 * [jobs] workers is the number of guests at once: each boot holds one of
 * that many slots from the domain's creation to its outcome. There are
 * more worker threads than slots, so that a job's fetch, initramfs and
 * disks are made while other jobs' guests run, and a job's suite boot and
 * its crash boots run side by side: the host is never waiting for the
 * host's own steps while there is a guest to run.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "rcgate.h"
#include "build.h"
#include "guest.h"
#include "hosts.h"
#include "initramfs.h"
#include "ktap.h"

#define MAX_SLOTS 64
/* Worker threads per guest slot: one job booting, one being prepared or
 * running its other chain. */
#define WORKERS_PER_SLOT 2
#define MAX_WORKERS (MAX_SLOTS * WORKERS_PER_SLOT)

struct worker {
	pthread_t thread;
	unsigned index;
	_Atomic int64_t job_id;		/* 0 when idle */
	volatile int cancel;		/* set by the monitor, sched_stop, or
					 * the job's own failed boot */
};

static struct sched_context sc;
static struct worker workers[MAX_WORKERS];
static unsigned nworkers;
static pthread_t monitor_thread;
static int monitor_started;
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond = PTHREAD_COND_INITIALIZER;
static atomic_int stopping;
/* "rcgate-<instance>-": every guest of this daemon, and only those. */
static char guest_prefix[32] = "rcgate-";
static atomic_uint running_guests;
static pthread_mutex_t kvm_lock = PTHREAD_MUTEX_INITIALIZER;
/* Claims in order: equal boots get a slot in the order of their jobs. */
static atomic_uint_fast64_t claim_seq;

unsigned sched_running(void)
{
	return atomic_load(&running_guests);
}

void sched_kick(void)
{
	pthread_mutex_lock(&wake_lock);
	pthread_cond_broadcast(&wake_cond);
	pthread_mutex_unlock(&wake_lock);
}

static void idle_wait(double seconds)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)seconds;
	pthread_mutex_lock(&wake_lock);
	if (!atomic_load(&stopping))
		pthread_cond_timedwait(&wake_cond, &wake_lock, &ts);
	pthread_mutex_unlock(&wake_lock);
}

/*
 * Guests at once. A boot holds a run slot ([jobs] workers of them) from
 * the start of its CPUs to its outcome, and before that a domain slot
 * (twice as many) from the creation of its domain: so the domain of the
 * next boot is made, paused, while the others run, and a run slot is not
 * spent waiting on libvirt, and no more domains wait than can start soon.
 *
 * Both are handed out in the order that leaves the host idle least at the
 * end of a batch: the longest chain first (list scheduling, longest
 * processing time first), a chain's length being what it took the last
 * time on that target: the suite boot, or the crash test's two boots with
 * the power cut and the new domain between them. Unknown lengths go first;
 * equal ones in the order the jobs were claimed. At the end of a batch,
 * when the boots a host has to come are few and their lengths known,
 * slotplan.c plays them out and may start another run waiter first: with
 * slots freeing at different times, longest first can leave one guest
 * running alone for longer.
 */
enum boot_kind { BOOT_SUITE, BOOT_CRASH_WRITE, BOOT_CRASH_VERIFY, BOOT_KINDS };
#define CRASH_WRITE_OWN BOOT_KINDS	/* a column of slots.length */
#define MAX_TARGETS 16
#define UNKNOWN_LENGTH 1e9
/* What the plan of a release's end must gain over longest first: lengths
 * vary by 5-10 % from one boot to the next (bench/README.md). */
#define PLAN_MARGIN_S 0.25

struct slot_waiter {
	double length;		/* expected seconds until its chain ends */
	uint64_t seq;		/* claim order, then the job's chain */
};

struct slot_pool {
	unsigned free;
	struct slot_waiter waiting[MAX_WORKERS * 2];
	unsigned nwaiting;
	/* The plan's pick, made once per state of the slots (slots.gen):
	 * every waiter must see the same one, whenever it looks. */
	uint64_t plan_gen;
	int plan_made, plan_set;
	uint64_t plan_seq;
};

/*
 * Every boot a host has to come, for the plan of a batch's end: where it
 * is, what it is expected to take (plan: own < 0 when not known) and since
 * when it is there. A crash-write that completed leaves BOOT_FOLLOW behind
 * until its crash-verify (the same seq) waits for a domain: the power cut
 * lies between them.
 */
enum boot_state {
	BOOT_NONE, BOOT_WAIT_DOMAIN, BOOT_CREATING, BOOT_WAIT_RUN,
	BOOT_RUNNING, BOOT_FOLLOW
};
struct slot_boot {
	enum boot_state state;
	uint64_t seq;
	struct plan_task plan;
	double since;		/* now_monotonic() */
};
#define HOST_BOOTS (MAX_WORKERS * 2)
/* A crash-verify that has not come this long after its follow-up was due:
 * the chain ended otherwise (a failed power cut); forget it. */
#define FOLLOW_STALE_S 30.0

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* Per host (hosts.c): guests at once there, and domains made. */
	struct slot_pool domains[HOSTS_MAX], run[HOSTS_MAX];
	struct slot_boot boots[HOSTS_MAX][HOST_BOOTS];
	/* Seconds a chain took from the start of its boot, per target and
	 * boot kind; and in column CRASH_WRITE_OWN the crash-write boot's
	 * own (its chain is both boots). */
	double length[MAX_TARGETS][BOOT_KINDS + 1];
	uint64_t gen;		/* bumped by every change to slots or boots */
} slots = { .lock = PTHREAD_MUTEX_INITIALIZER,
	    .cond = PTHREAD_COND_INITIALIZER };

static size_t target_index(const struct target *t)
{
	for (size_t i = 0; i < target_count() && i < MAX_TARGETS; i++) {
		if (target_at(i) == t)
			return i;
	}
	return MAX_TARGETS;
}

static enum boot_kind boot_kind_of(const char *phase)
{
	if (phase == NULL)
		return BOOT_SUITE;
	return strcmp(phase, RCGATE_PHASE_CRASH_WRITE) == 0
		? BOOT_CRASH_WRITE : BOOT_CRASH_VERIFY;
}

/* Under slots.lock. */
static double chain_length(const struct target *t, const char *phase)
{
	size_t i = target_index(t);
	double len = i < MAX_TARGETS ? slots.length[i][boot_kind_of(phase)] : 0;

	return len > 0 ? len : UNKNOWN_LENGTH;
}

/* seconds: from the start of a boot of kind column to the end of its
 * chain, or the crash-write's own boot (CRASH_WRITE_OWN). */
static void length_learn(const struct target *t, size_t column,
			 double seconds)
{
	size_t i = target_index(t);

	if (i >= MAX_TARGETS || seconds <= 0)
		return;
	pthread_mutex_lock(&slots.lock);
	slots.length[i][column] = seconds;
	pthread_mutex_unlock(&slots.lock);
}

/* Under slots.lock: a boot of phase as the plan sees it; own < 0 when a
 * length it needs is not known yet. */
static struct plan_task boot_plan_task(const struct target *t,
				       const char *phase)
{
	size_t i = target_index(t);
	struct plan_task pt = { -1, 0, 0, 0 };
	enum boot_kind k = boot_kind_of(phase);

	if (i >= MAX_TARGETS || slots.length[i][k] <= 0)
		return pt;
	if (k != BOOT_CRASH_WRITE) {
		pt.own = slots.length[i][k];
		return pt;
	}
	/* The chain is both boots and the power cut between them. */
	if (slots.length[i][CRASH_WRITE_OWN] <= 0 ||
	    slots.length[i][BOOT_CRASH_VERIFY] <= 0)
		return pt;
	pt.own = slots.length[i][CRASH_WRITE_OWN];
	pt.follow = slots.length[i][BOOT_CRASH_VERIFY];
	pt.gap = slots.length[i][k] - pt.own - pt.follow;
	if (pt.gap < 0)
		pt.gap = 0;
	return pt;
}

/* Under slots.lock: host's entry for seq; with make, a free one taken for
 * it if it has none (NULL: none, or full). */
static struct slot_boot *boot_entry(unsigned host, uint64_t seq, int make)
{
	struct slot_boot *spare = NULL;

	for (unsigned i = 0; i < HOST_BOOTS; i++) {
		struct slot_boot *b = &slots.boots[host][i];

		if (b->state != BOOT_NONE && b->seq == seq)
			return b;
		if (b->state == BOOT_NONE && spare == NULL)
			spare = b;
	}
	if (!make || spare == NULL)
		return NULL;
	spare->seq = seq;
	return spare;
}

/* Under slots.lock. */
static void boot_set(unsigned host, uint64_t seq, enum boot_state state,
		     const struct plan_task *pt)
{
	struct slot_boot *b = boot_entry(host, seq, 1);

	if (b == NULL)
		return;
	b->state = state;
	if (pt != NULL)
		b->plan = *pt;
	b->since = now_monotonic();
	slots.gen++;
}

static int waiter_before(const struct slot_waiter *a,
			 const struct slot_waiter *b)
{
	return a->length > b->length ||
	       (a->length == b->length && a->seq < b->seq);
}

/* Under slots.lock: ready-soon boots that are not run waiters, as the plan
 * sees them: when each can start (seconds from now), and its length. */
static int boot_as_task(struct slot_boot *b, double now,
			struct plan_task *out)
{
	*out = b->plan;
	switch (b->state) {
	case BOOT_WAIT_DOMAIN:
		out->ready = 0.3;	/* a domain made: 0.1-0.3 s */
		return 1;
	case BOOT_CREATING:
		out->ready = 0.2;
		return 1;
	case BOOT_FOLLOW:
		if (now - b->since > b->plan.gap + FOLLOW_STALE_S) {
			b->state = BOOT_NONE;
			return 0;
		}
		out->own = b->plan.follow;
		out->ready = b->since + b->plan.gap - now;
		if (out->ready < 0.3)
			out->ready = 0.3;
		out->gap = out->follow = 0;
		return 1;
	default:
		return 0;
	}
}

/*
 * Under slots.lock: the run waiter of host that slotplan.c would start
 * instead of the longest chain, or NULL to keep to longest first. It plays
 * out every boot the host has to come (slots.boots): the running guests,
 * the run waiters (the candidates), the boots making their domain or
 * waiting for one, and the crash-verify boots due after a power cut; only
 * when every length is known and the lot is small.
 */
static const struct slot_waiter *endgame_pick(unsigned host)
{
	struct slot_pool *p = &slots.run[host];
	struct plan_slot ps[MAX_SLOTS];
	struct plan_task pt[SLOTPLAN_TASKS_MAX];
	unsigned ns = 0, nt = 0, longest = 0, pick;
	double now = now_monotonic();

	if (p->free == 0 || p->nwaiting < 2 ||
	    p->nwaiting > SLOTPLAN_TASKS_MAX)
		return NULL;
	/* The candidates first: pt[i] is p->waiting[i]'s. */
	for (unsigned i = 0; i < p->nwaiting; i++) {
		struct slot_boot *b = boot_entry(host, p->waiting[i].seq, 0);

		if (b == NULL || b->state != BOOT_WAIT_RUN || b->plan.own < 0)
			return NULL;
		pt[nt] = b->plan;
		pt[nt].ready = 0;
		if (waiter_before(&p->waiting[i], &p->waiting[longest]))
			longest = i;
		nt++;
	}
	for (unsigned i = 0; i < HOST_BOOTS; i++) {
		struct slot_boot *b = &slots.boots[host][i];
		struct plan_task t;

		if (b->state == BOOT_RUNNING) {
			double left = b->since + b->plan.own - now;

			if (b->plan.own < 0 || ns == MAX_SLOTS)
				return NULL;
			ps[ns].free_at = left > 0.05 ? left : 0.05;
			ps[ns].follow = b->plan.follow;
			ps[ns].follow_at = ps[ns].free_at + b->plan.gap;
			ns++;
		} else if (b->state != BOOT_WAIT_RUN &&
			   boot_as_task(b, now, &t)) {
			if (t.own < 0 || nt == SLOTPLAN_TASKS_MAX)
				return NULL;
			pt[nt++] = t;
		}
	}
	for (unsigned i = 0; i < p->free && ns < MAX_SLOTS; i++)
		ps[ns++] = (struct plan_slot){ 0, 0, 0 };
	pick = slotplan_pick(ps, ns, pt, nt, longest, PLAN_MARGIN_S);
	return pick == longest || pick >= p->nwaiting ? NULL
						       : &p->waiting[pick];
}

static int slot_is_next(struct slot_pool *p, unsigned host, int is_run,
			const struct slot_waiter *me)
{
	if (is_run && (!p->plan_made || p->plan_gen != slots.gen)) {
		const struct slot_waiter *planned = endgame_pick(host);

		p->plan_made = 1;
		p->plan_gen = slots.gen;
		p->plan_set = planned != NULL;
		p->plan_seq = planned != NULL ? planned->seq : 0;
	}
	if (is_run && p->plan_set)
		return p->plan_seq == me->seq;
	for (unsigned i = 0; i < p->nwaiting; i++) {
		if (waiter_before(&p->waiting[i], me))
			return 0;
	}
	return 1;
}

static void slot_forget(struct slot_pool *p, uint64_t seq)
{
	slots.gen++;
	for (unsigned i = 0; i < p->nwaiting; i++) {
		if (p->waiting[i].seq == seq) {
			p->waiting[i] = p->waiting[--p->nwaiting];
			break;
		}
	}
}

/*
 * A domain slot (run 0) or a run slot (run 1) of host. 0 with the slot
 * held, -1 when *cancel or the daemon stops first; seq is unique among the
 * host's boots. *planned (may be NULL) tells whether the plan of the end
 * (not longest first) chose this boot.
 */
static int slot_acquire(unsigned host, int run, const struct target *t,
			const char *phase, uint64_t seq,
			const volatile int *cancel, int *planned)
{
	struct slot_pool *p = run ? &slots.run[host] : &slots.domains[host];
	struct slot_waiter me = { 0, seq };
	struct plan_task pt;
	int rc = -1;

	pthread_mutex_lock(&slots.lock);
	me.length = chain_length(t, phase);
	pt = boot_plan_task(t, phase);
	if (p->nwaiting < sizeof(p->waiting) / sizeof(p->waiting[0]))
		p->waiting[p->nwaiting++] = me;
	boot_set(host, seq, run ? BOOT_WAIT_RUN : BOOT_WAIT_DOMAIN, &pt);
	/* A new boot can change the plan's pick: the others look again. */
	pthread_cond_broadcast(&slots.cond);
	while (!*cancel && !atomic_load(&stopping)) {
		struct timespec ts;

		if (p->free > 0 && slot_is_next(p, host, run, &me)) {
			p->free--;
			rc = 0;
			if (planned != NULL)
				*planned = run && p->plan_set;
			break;
		}
		/* The monitor sets cancel without a broadcast: look again
		 * now and then. */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&slots.cond, &slots.lock, &ts);
	}
	slot_forget(p, seq);
	if (rc == 0)
		boot_set(host, seq, run ? BOOT_RUNNING : BOOT_CREATING, NULL);
	else
		boot_set(host, seq, BOOT_NONE, NULL);
	pthread_cond_broadcast(&slots.cond);
	pthread_mutex_unlock(&slots.lock);
	return rc;
}

/* Gives a slot of host back. The boot is done with the host unless
 * follows: a crash-write whose crash-verify comes after the power cut. */
static void slot_release(unsigned host, int run, uint64_t seq, int follows)
{
	struct slot_pool *p = run ? &slots.run[host] : &slots.domains[host];

	pthread_mutex_lock(&slots.lock);
	p->free++;
	if (run || follows >= 0)
		boot_set(host, seq, follows > 0 ? BOOT_FOLLOW : BOOT_NONE,
			 NULL);
	slots.gen++;
	pthread_cond_broadcast(&slots.cond);
	pthread_mutex_unlock(&slots.lock);
}

/* Where a job's time went, step by step (seconds), logged when it ends.
 * Every boot's define, wait (for a guest slot), start, guest and destroy
 * add up, so with the suite and the crash chain side by side the steps
 * exceed the total. */
struct job_steps {
	double build, fetch, initramfs, disks, define, wait, start, guest,
		destroy, results, cpu;
};

/* What one attempt of one job needs while it runs. Its suite boot and its
 * crash chain run on two threads: lock guards log, steps, failed and the
 * store connection from then on. */
struct run {
	struct store *st;
	struct worker *w;
	const struct job *job;
	const struct target *target;
	char dir[PATH_MAX];
	FILE *log;
	uint64_t prio;			/* claim order x 2: its boots' slot seq */
	pthread_mutex_t lock;
	struct job_steps steps;
	int failed;			/* an infra error is recorded */
	char build_step[16];		/* the last progress written */
	double build_written;
	/* The host it runs on; for a host without our files, what was
	 * uploaded there as volumes (stage_file), removed at the end. */
	struct host_placement place;
	int host_failed;		/* the host failed, not the job */
	pthread_mutex_t stage_lock;
	struct staged {
		char local[PATH_MAX], volume[128], remote[PATH_MAX];
	} staged[8];
	unsigned nstaged;
};

/* Seconds since *mark, and moves the mark to now. */
static double lap(double *mark)
{
	double now = now_monotonic(), d = now - *mark;

	*mark = now;
	return d;
}

static void jlog(struct run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Job log lines carry milliseconds: the boots of a job, and of several,
 * are placed on one time line from them (bench/matrix.sh). */
static void jlog(struct run *r, const char *fmt, ...)
{
	char ts[40];
	struct timespec now;
	struct tm tm;
	va_list ap;

	if (r->log == NULL)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, 24, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + strlen(ts), sizeof(ts) - strlen(ts), ".%03ldZ",
		 now.tv_nsec / 1000000L);
	pthread_mutex_lock(&r->lock);
	fprintf(r->log, "%s ", ts);
	va_start(ap, fmt);
	vfprintf(r->log, fmt, ap);
	va_end(ap);
	fputc('\n', r->log);
	fflush(r->log);
	pthread_mutex_unlock(&r->lock);
}

/* An infrastructure failure; retried while attempts last, unless
 * another attempt could only fail the same way (final). The attempt's
 * first failure is the one recorded; it stops the attempt's other boot,
 * whose own ending is then only logged. */
static void infra_as(struct run *r, const char *kind, const char *message,
		     int final)
{
	char err[256];
	int requeued = 0, first, rc = 0;

	jlog(r, "infra error %s: %s", kind, message);
	pthread_mutex_lock(&r->lock);
	first = !r->failed;
	r->failed = 1;
	if (first) {
		r->w->cancel = 1;
		rc = store_job_infra(r->st, r->job->id, kind, message,
				     final ? 0 : sc.cfg->attempts, &requeued,
				     err, sizeof(err));
	}
	pthread_mutex_unlock(&r->lock);
	if (!first)
		return;
	log_warn("job=%lld attempt=%ld target=%s infra_error=%s msg=%s",
		 (long long)r->job->id, r->job->attempt, r->job->target, kind,
		 message);
	if (rc < 0)
		log_err("job=%lld: %s", (long long)r->job->id, err);
	else if (requeued)
		sched_kick();
}

static void infra(struct run *r, const char *kind, const char *message)
{
	infra_as(r, kind, message, 0);
}

/* The host failed under the job: an infra error that moves the job to
 * another host. It costs an attempt, but every host may fail once on top
 * of [jobs] attempts before the job gives up. */
static void infra_host(struct run *r, const char *message)
{
	char msg[768], err[256];
	int requeued = 0, first, rc = 0;

	snprintf(msg, sizeof(msg), "host %s (%s): %s", r->place.name,
		 r->place.uri, message);
	jlog(r, "infra error host_down: %s", msg);
	pthread_mutex_lock(&r->lock);
	first = !r->failed;
	r->failed = 1;
	if (first) {
		r->w->cancel = 1;
		rc = store_job_infra(r->st, r->job->id, "host_down", msg,
				     sc.cfg->attempts + (long)hosts_count(),
				     &requeued, err, sizeof(err));
	}
	pthread_mutex_unlock(&r->lock);
	if (!first)
		return;
	log_warn("job=%lld attempt=%ld target=%s host=%s infra_error=host_down"
		 " requeued=%d", (long long)r->job->id, r->job->attempt,
		 r->job->target, r->place.name, requeued);
	if (rc < 0)
		log_err("job=%lld: %s", (long long)r->job->id, err);
	else if (requeued)
		sched_kick();
}

/*
 * A host without the daemon's files gets each file a boot names as a
 * volume, uploaded once per attempt (the crash test's second boot finds
 * its disk as the first left it). remote gets the path on the host.
 */
static int stage_file(struct run *r, const char *local, char *remote,
		      size_t len, char *err, size_t errlen)
{
	const char *base = strrchr(local, '/');
	struct staged *sf = NULL;
	double mark = now_monotonic();
	int rc = 0;

	base = base != NULL ? base + 1 : local;
	pthread_mutex_lock(&r->stage_lock);
	for (unsigned i = 0; i < r->nstaged; i++) {
		if (strcmp(r->staged[i].local, local) == 0)
			sf = &r->staged[i];
	}
	if (sf == NULL) {
		if (r->nstaged >= sizeof(r->staged) / sizeof(r->staged[0])) {
			errf(err, errlen, "more than %zu files for one job",
			     sizeof(r->staged) / sizeof(r->staged[0]));
			rc = -1;
			goto out;
		}
		sf = &r->staged[r->nstaged];
		snprintf(sf->local, sizeof(sf->local), "%s", local);
		snprintf(sf->volume, sizeof(sf->volume), "%s%lld-%ld-%s",
			 guest_prefix, (long long)r->job->id, r->job->attempt,
			 base);
		if (guest_vol_upload(r->place.gh, r->place.pool, sf->volume,
				     local, sf->remote, sizeof(sf->remote),
				     &r->w->cancel, err, errlen) < 0) {
			rc = -1;
			goto out;
		}
		r->nstaged++;
		jlog(r, "uploaded %s to volume %s on host %s in %.2f s", base,
		     sf->volume, r->place.name, now_monotonic() - mark);
	}
	snprintf(remote, len, "%s", sf->remote);
out:
	pthread_mutex_unlock(&r->stage_lock);
	return rc;
}

/* Every volume of the attempt goes once its guests have. */
static void unstage_all(struct run *r)
{
	char err[512];

	for (unsigned i = 0; i < r->nstaged; i++) {
		if (guest_vol_delete(r->place.gh, r->place.pool,
				     r->staged[i].volume, err, sizeof(err)) < 0)
			jlog(r, "volume %s not removed (removed when the host "
			     "next connects): %s", r->staged[i].volume, err);
	}
	r->nstaged = 0;
}

/*
 * After a libvirt call failed: was it the host? Then it is marked down,
 * and err (the failed call's message) gets the connection's own reason
 * ("no answer to keepalive probes"), which libvirt's close callback
 * reports on the event loop thread, possibly just after the call has
 * returned: it is given a moment.
 */
static void host_check(struct run *r, char *err, size_t errlen)
{
	char why[256];
	size_t len = strlen(err);

	if (r->place.local || hosts_usable(&r->place, why, sizeof(why)))
		return;
	for (int i = 0; i < 20 && strcmp(why, "connection not alive") == 0; i++) {
		sleep_ms(50);
		guest_host_alive(r->place.gh, why, sizeof(why));
	}
	hosts_failed(&r->place, why);
	pthread_mutex_lock(&r->lock);
	r->host_failed = 1;
	pthread_mutex_unlock(&r->lock);
	jlog(r, "host %s failed: %s (%s)", r->place.name, why, err);
	if (strstr(err, why) == NULL && len < errlen)
		snprintf(err + len, errlen - len, " (connection: %s)", why);
}

/* "kernel=6.1.0-57-cloud-amd64" out of the agent's header line. */
static void agent_kernel(const char *info, char *out, size_t len)
{
	const char *k = info != NULL ? strstr(info, "kernel=") : NULL;

	out[0] = '\0';
	if (k != NULL)
		snprintf(out, len, "%.*s", (int)strcspn(k + 7, " "), k + 7);
}

/* The kernel that ran must be the release's version (6.1.64 for
 * 6.1.64-rc1), as it says itself, unless the artifact is marked custom:
 * Debian's 6.1.192 tested as 6.1.64-rc1 would be a wrong answer to the
 * review. A mismatch is kept on the job either way; without custom it
 * ends the job (no retry: the same kernel would say the same). */
static int kernel_identity(struct run *r, const struct ktap_report *rep)
{
	char release[128], running[32], msg[512], err[256];
	struct kversion want;
	struct strbuf mb;

	agent_kernel(rep->agent_info, release, sizeof(release));
	if (kversion_running(release, rep->uts_version, running,
			     sizeof(running)) < 0) {
		jlog(r, "kernel identity unknown (uname -r '%s'): not checked",
		     release);
		return 0;
	}
	if (kversion_parse(r->job->version, &want, err, sizeof(err)) < 0 ||
	    kversion_matches(&want, running))
		return 0;
	strbuf_init(&mb, msg, sizeof(msg));
	strbuf_printf(&mb, "the kernel that ran says it is %s (uname -r %s),"
		      " not %s", running, release, r->job->version);
	pthread_mutex_lock(&r->lock);
	store_job_mismatch(r->st, r->job->id, msg, NULL, 0);
	pthread_mutex_unlock(&r->lock);
	if (r->job->custom) {
		jlog(r, "%s: a custom build, results kept", msg);
		return 0;
	}
	strbuf_printf(&mb, "; submit the artifact with \"custom\": true if"
		      " this build is meant");
	infra_as(r, "kernel_mismatch", msg, 1);
	return -1;
}

/* Moves the job on; 0 means it was cancelled (or is being shut down). */
static int advance(struct run *r, const char *from, const char *to)
{
	char err[256];
	int rc = store_job_transition(r->st, r->job->id, from, to, NULL, err,
				      sizeof(err));

	if (rc < 0)
		log_err("job=%lld: %s", (long long)r->job->id, err);
	if (rc == 1)
		jlog(r, "state %s", to);
	return rc == 1 && !r->w->cancel;
}

/* Filesystems the suite runs on, each on its own scratch disk. xfs needs
 * 300 MiB at least with Debian 12's xfsprogs. */
struct fs_kind {
	const char *name;
	const char *mkfs[6];	/* argv without the device */
	long min_mb;
};

static const struct fs_kind fs_kinds[] = {
	{ "ext4", { "mkfs.ext4", "-q", "-F", "-E",
		    "lazy_itable_init=1,lazy_journal_init=1" }, 16 },
	{ "xfs", { "mkfs.xfs", "-q", "-f" }, 320 },
	{ "btrfs", { "mkfs.btrfs", "-q", "-f" }, 128 },
};

static const struct fs_kind *fs_find(const char *name)
{
	for (size_t i = 0; i < sizeof(fs_kinds) / sizeof(fs_kinds[0]); i++) {
		if (strcmp(fs_kinds[i].name, name) == 0)
			return &fs_kinds[i];
	}
	return NULL;
}

/* The host's mkfs program for fs, or NULL when it is not installed. */
static const char *tool_path(const char *tool, char *buf, size_t len)
{
	static const char *const dirs[] = { "/usr/sbin", "/sbin", "/usr/bin",
					    "/bin", NULL };

	for (size_t i = 0; dirs[i] != NULL; i++) {
		snprintf(buf, len, "%s/%s", dirs[i], tool);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

static int make_disk(struct run *r, const char *path, const struct fs_kind *fs,
		     char *err, size_t errlen)
{
	char out[1024], tool[PATH_MAX];
	char *argv[8];
	long mb = sc.cfg->disk_size > fs->min_mb ? sc.cfg->disk_size : fs->min_mb;
	size_t n = 0;
	int fd, rc;

	if (tool_path(fs->mkfs[0], tool, sizeof(tool)) == NULL) {
		errf(err, errlen, "%s is not installed on this host", fs->mkfs[0]);
		return -1;
	}
	argv[n++] = tool;
	for (size_t i = 1; i < 6 && fs->mkfs[i] != NULL; i++)
		argv[n++] = (char *)fs->mkfs[i];
	argv[n++] = (char *)path;
	argv[n] = NULL;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		errf(err, errlen, "create %s: %s", path, strerror(errno));
		return -1;
	}
	if (ftruncate(fd, (off_t)mb << 20) < 0) {
		errf(err, errlen, "size %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	rc = run_argv(argv, out, sizeof(out), err, errlen);
	if (rc != 0) {
		if (rc > 0)
			errf(err, errlen, "%s exited %d: %s", fs->mkfs[0], rc, out);
		return -1;
	}
	jlog(r, "disk %s: %ld MiB %s", path, mb, fs->name);
	return 0;
}

/* The scratch disks of one boot, vda, vdb, ... in order. */
struct disk_set {
	char path[GUEST_MAX_DISKS][PATH_MAX];
	const char *fs[GUEST_MAX_DISKS];
	unsigned n;
};

/* One fresh disk per configured filesystem whose mkfs the host has; ext4
 * is required (the suite's reference), the others are skipped with a note
 * when the host cannot format them. */
static int make_disks(struct run *r, struct disk_set *d, char *err,
		      size_t errlen)
{
	char list[128], *save = NULL;

	d->n = 0;
	snprintf(list, sizeof(list), "%s", sc.cfg->filesystems);
	for (char *name = strtok_r(list, " ,", &save); name != NULL &&
	     d->n < GUEST_MAX_DISKS; name = strtok_r(NULL, " ,", &save)) {
		const struct fs_kind *fs = fs_find(name);

		if (fs == NULL) {
			errf(err, errlen, "unknown filesystem '%s' in [jobs]"
			     " filesystems", name);
			return -1;
		}
		if ((size_t)snprintf(d->path[d->n], sizeof(d->path[0]),
				     "%s/disk-%s.img", r->dir, fs->name) >=
		    sizeof(d->path[0])) {
			errf(err, errlen, "job directory path too long");
			return -1;
		}
		if (make_disk(r, d->path[d->n], fs, err, errlen) < 0) {
			if (strcmp(fs->name, "ext4") == 0)
				return -1;
			jlog(r, "%s not tested: %s", fs->name, err);
			continue;
		}
		d->fs[d->n++] = fs->name;
	}
	if (d->n == 0) {
		errf(err, errlen, "no filesystem to test (filesystems = %s)",
		     sc.cfg->filesystems);
		return -1;
	}
	return 0;
}

static void remove_disks(const struct disk_set *d)
{
	for (unsigned i = 0; i < d->n; i++)
		unlink(d->path[i]);
}

/* Kernel + initramfs for (artifact, agent, module list), built once and
 * kept under <cache>/initramfs/<key>/. */
static int prepare_boot(struct run *r, const char *artifact,
			const char *modules_tar, char *kernel,
			char *initrd, size_t len, char *kver, size_t kverlen,
			char *err, size_t errlen)
{
	char agent[PATH_MAX], agent_sha[65], keysrc[1024], key[65];
	char dir[PATH_MAX], tmp[PATH_MAX + 32], tk[PATH_MAX + 48],
		ti[PATH_MAX + 48], kv[PATH_MAX + 8];
	struct strbuf ks;
	struct initramfs_request req = { 0 };
	struct initramfs_result res = { 0 };
	char *cached;

	snprintf(agent, sizeof(agent), "%s/rcgate-agent-%s", sc.cfg->agent_dir,
		 r->target->name);
	if (sha256_file(agent, agent_sha, err, errlen) < 0)
		return -1;
	strbuf_init(&ks, keysrc, sizeof(keysrc));
	strbuf_printf(&ks, "%s %s %s %s %s", r->job->kind, r->job->sha256,
		      r->job->modules_sha256, agent_sha, r->target->name);
	for (const char *const *m = r->target->modules; *m != NULL; m++)
		strbuf_printf(&ks, " %s", *m);
	if (ks.overflow) {
		errf(err, errlen, "initramfs cache key too long");
		return -1;
	}
	sha256_hex(keysrc, ks.len, key);
	snprintf(dir, sizeof(dir), "%s/initramfs/%s", sc.cache_dir, key);
	if ((size_t)snprintf(kernel, len, "%s/kernel", dir) >= len ||
	    (size_t)snprintf(initrd, len, "%s/initrd.gz", dir) >= len) {
		errf(err, errlen, "cache path too long");
		return -1;
	}
	snprintf(kv, sizeof(kv), "%s/kver", dir);
	cached = file_read(kv, 256, NULL, NULL, 0);
	if (cached != NULL) {
		snprintf(kver, kverlen, "%s", cached);
		free(cached);
		jlog(r, "initramfs %s cached (kernel %s)", key, kver);
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%lld", dir, (long long)r->job->id);
	rm_rf(tmp);
	if (mkdir_p(tmp, 0755, err, errlen) < 0)
		return -1;
	snprintf(tk, sizeof(tk), "%s/kernel", tmp);
	snprintf(ti, sizeof(ti), "%s/initrd.gz", tmp);
	if (strcmp(r->job->kind, "image") == 0) {
		req.kernel_image = artifact;
		req.modules_tar = modules_tar;
	} else {
		req.package = artifact;
	}
	req.agent = agent;
	req.cancel = &r->w->cancel;
	req.modules = r->target->modules;
	req.kernel_out = tk;
	req.initrd_out = ti;
	if (initramfs_build(&req, &res, err, errlen) < 0) {
		rm_rf(tmp);
		return -1;
	}
	{
		char line[2048];
		struct strbuf lb;

		strbuf_init(&lb, line, sizeof(line));
		for (size_t i = 0; i < res.nloaded; i++)
			strbuf_printf(&lb, " %s", res.loaded[i]);
		jlog(r, "initramfs %s built: kernel %s, modules:%s%s", key,
		     res.kver, line, lb.overflow ? " ..." : "");
		for (size_t i = 0; i < res.nmissing; i++)
			jlog(r, "initramfs: module %s not in this kernel (skipped)",
			     res.missing[i]);
	}
	snprintf(kver, kverlen, "%s", res.kver);
	snprintf(tk, sizeof(tk), "%s/kver", tmp);
	if (file_write_atomic(tk, res.kver, strlen(res.kver), err, errlen) < 0) {
		initramfs_result_free(&res);
		rm_rf(tmp);
		return -1;
	}
	initramfs_result_free(&res);
	/* Another worker may have built the same key meanwhile: either copy
	 * is complete, keep whichever landed first. */
	if (rename(tmp, dir) < 0)
		rm_rf(tmp);
	return 0;
}

static int kvm_verdict_path(char *path, size_t len, const char *target)
{
	return snprintf(path, len, "%s/kvm/%s", sc.cfg->state_dir, target) <
	       (int)len ? 0 : -1;
}

/* -1 unknown (probe needed), 0 TCG, 1 KVM. */
static int accel_decision(const struct target *t)
{
	char path[PATH_MAX];
	char *v;
	int rc = -1;

	if (strcmp(sc.cfg->accel, "tcg") == 0)
		return 0;
	if (strcmp(sc.cfg->accel, "kvm") == 0)
		return 1;
	if (access("/dev/kvm", R_OK | W_OK) != 0)
		return 0;
	if (kvm_verdict_path(path, sizeof(path), t->name) < 0)
		return 0;
	pthread_mutex_lock(&kvm_lock);
	v = file_read(path, 16, NULL, NULL, 0);
	pthread_mutex_unlock(&kvm_lock);
	if (v != NULL) {
		rc = strncmp(v, "kvm", 3) == 0;
		free(v);
	}
	return rc;
}

static void accel_record(const struct target *t, int kvm_works)
{
	char path[PATH_MAX], dir[PATH_MAX];
	const char *v = kvm_works ? "kvm\n" : "tcg\n";

	snprintf(dir, sizeof(dir), "%s/kvm", sc.cfg->state_dir);
	if (kvm_verdict_path(path, sizeof(path), t->name) < 0 ||
	    mkdir_p(dir, 0755, NULL, 0) < 0)
		return;
	pthread_mutex_lock(&kvm_lock);
	file_write_atomic(path, v, strlen(v), NULL, 0);
	pthread_mutex_unlock(&kvm_lock);
	log_info("accel target=%s verdict=%s", t->name, kvm_works ? "kvm" : "tcg");
}

/* The agent's own RCGATE_INFRA reason, if its output has one. */
static char *agent_infra_reason(const char *ktap_path)
{
	size_t len = 0;
	char *text = file_read(ktap_path, 16u << 20, &len, NULL, 0);
	struct ktap_report rep;
	char *reason = NULL;

	if (text == NULL)
		return NULL;
	ktap_parse(text, len, &rep);
	free(text);
	if (rep.infra_reason != NULL)
		reason = strdup(rep.infra_reason);
	ktap_report_free(&rep);
	return reason;
}

static int console_has(const char *path, const char *needle)
{
	char *text = file_read(path, 32u << 20, NULL, NULL, 0);
	int found;

	if (text == NULL)
		return 0;
	found = strstr(text, needle) != NULL;
	free(text);
	return found;
}

static const char *status_word(enum ktap_status s)
{
	switch (s) {
	case KTAP_PASS:
		return "pass";
	case KTAP_FAIL:
		return "fail";
	case KTAP_SKIP:
		return "skip";
	case KTAP_XFAIL:
		return "xfail";
	}
	return "fail";
}

/* A parsed KTAP file and the result rows taken from it; rows point into
 * report, so both live until the results are stored. */
struct phase_results {
	struct ktap_report report;
	int parsed;
	struct result_row *rows;
	size_t n;
};

static void phase_results_free(struct phase_results *p)
{
	if (p->parsed)
		ktap_report_free(&p->report);
	free(p->rows);
	memset(p, 0, sizeof(*p));
}

/* Parses a phase's KTAP. On anything but a complete report it records the
 * infra error (the agent's own reason when it gave one) and returns -1. */
static int collect(struct run *r, const char *ktap_path,
		   struct phase_results *p)
{
	char err[512];
	size_t len = 0;
	char *text = file_read(ktap_path, 16u << 20, &len, err, sizeof(err));
	int rc;

	if (text == NULL) {
		infra(r, "agent_output", err);
		return -1;
	}
	rc = ktap_parse(text, len, &p->report);
	p->parsed = 1;
	free(text);
	if (p->report.infra_reason != NULL) {
		infra(r, "agent", p->report.infra_reason);
		return -1;
	}
	if (rc < 0 || !p->report.complete) {
		snprintf(err, sizeof(err), "agent output incomplete: %s",
			 p->report.error != NULL ? p->report.error
						 : "no completeness marker");
		infra(r, "agent_output", err);
		return -1;
	}
	p->rows = calloc(p->report.nresults + 1, sizeof(*p->rows));
	if (p->rows == NULL) {
		infra(r, "internal", "out of memory");
		return -1;
	}
	for (size_t i = 0; i < p->report.nresults; i++) {
		const struct ktap_result *res = &p->report.results[i];

		if (res->is_suite)
			continue;
		p->rows[p->n].test = res->path;
		p->rows[p->n].status = status_word(res->status);
		p->rows[p->n].diagnostic = res->diagnostic != NULL
			? res->diagnostic : res->directive_reason;
		p->rows[p->n].duration_ms = res->duration_ms;
		p->rows[p->n].timed = res->duration_ms >= 0;
		p->n++;
	}
	return 0;
}

/* Stores the results of every phase in one transaction. */
static void store_results(struct run *r, struct phase_results *phases,
			  size_t nphases, double seconds)
{
	struct result_row *all;
	size_t n = 0, total = 0;
	struct result_counts c = { 0 };
	char err[512];

	for (size_t i = 0; i < nphases; i++)
		total += phases[i].n;
	all = calloc(total + 1, sizeof(*all));
	if (all == NULL) {
		infra(r, "internal", "out of memory");
		return;
	}
	for (size_t i = 0; i < nphases; i++) {
		for (size_t k = 0; k < phases[i].n; k++) {
			all[n] = phases[i].rows[k];
			result_counts_add(&c, all[n].status);
			n++;
		}
	}
	if (store_job_done(r->st, r->job->id, all, n, seconds, err,
			   sizeof(err)) < 0)
		log_err("job=%lld store results: %s", (long long)r->job->id, err);
	free(all);
	jlog(r, "done: %ld pass, %ld fail, %ld skip; suite boot %.1f s", c.pass,
	     c.fail, c.skip, seconds);
	log_info("job=%lld target=%s version=%s done pass=%ld fail=%ld skip=%ld"
		 " seconds=%.1f", (long long)r->job->id, r->job->target,
		 r->job->version, c.pass, c.fail, c.skip, seconds);
}

/* One boot of the job. phase names its files (console-<phase>.log,
 * <phase>.ktap; the main suite keeps console.log and results.ktap). */
struct boot_plan {
	const char *phase;		/* NULL: the main suite */
	const struct disk_set *disks;
	const char *extra_cmdline;	/* "" or e.g. "rcgate.phase=..." */
	const char *marker;
	int use_kvm;
	int timeout_s;
};

static void phase_paths(struct run *r, const char *phase, char *console,
			char *channel, size_t len)
{
	if (phase == NULL) {
		snprintf(console, len, "%s/" RCGATE_CONSOLE_LOG, r->dir);
		snprintf(channel, len, "%s/" RCGATE_RESULTS_KTAP, r->dir);
	} else {
		snprintf(console, len, "%s/" RCGATE_PHASE_CONSOLE_LOG("%s"),
			 r->dir, phase);
		snprintf(channel, len, "%s/" RCGATE_PHASE_KTAP("%s"), r->dir,
			 phase);
	}
}

/* The domain name of a boot of this attempt. */
static void guest_name(const struct run *r, const char *phase, char *name,
		       size_t len)
{
	snprintf(name, len, "%s%lld-%ld%s%s", guest_prefix,
		 (long long)r->job->id, r->job->attempt, phase ? "-" : "",
		 phase ? phase : "");
}

/*
 * One boot: creates the domain (paused) once it has a domain slot, starts
 * it once it has a run slot, and gives both back at the outcome; the
 * domain is destroyed in the background (its disks are not to be used
 * again before its qemu has gone: disk_wait_released). A boot cancelled
 * while it waits for a slot ends as GUEST_CANCELLED. *times: as far as
 * the boot got.
 */
static int boot_guest(struct run *r, struct guest_spec *specp,
		      const struct boot_plan *plan, const char *name,
		      const char *cmdline, enum guest_outcome *outcome,
		      struct guest_times *times, char *err, size_t errlen);

static int boot(struct run *r, const char *kernel, const char *initrd,
		const struct boot_plan *plan, enum guest_outcome *outcome,
		struct guest_times *times, char *err, size_t errlen)
{
	char name[64], cmdline[1536], console[PATH_MAX + 32],
		channel[PATH_MAX + 32], tag[64];
	struct guest_spec spec = { 0 };
	struct strbuf cb;

	*times = (struct guest_times){ .cpu_s = -1 };
	guest_name(r, plan->phase, name, sizeof(name));
	strbuf_init(&cb, cmdline, sizeof(cmdline));
	strbuf_printf(&cb, "console=%s panic=-1 " RCGATE_KEY_PORT "=%s "
		      RCGATE_KEY_DISKS "=", r->target->console,
		      RCGATE_CHANNEL_NAME);
	for (unsigned i = 0; i < plan->disks->n; i++) {
		strbuf_printf(&cb, "%s/dev/vd%c:%s", i ? "," : "", 'a' + i,
			      plan->disks->fs[i]);
		spec.disks[i] = plan->disks->path[i];
	}
	spec.ndisks = plan->disks->n;
	if (r->target->boot_args != NULL)
		strbuf_printf(&cb, " %s", r->target->boot_args);
	if (sc.cfg->kernel_args[0] != '\0')
		strbuf_printf(&cb, " %s", sc.cfg->kernel_args);
	if (plan->extra_cmdline[0] != '\0')
		strbuf_printf(&cb, " %s", plan->extra_cmdline);
	if (cb.overflow) {
		errf(err, errlen, "kernel command line longer than %zu bytes",
		     sizeof(cmdline) - 1);
		return -1;
	}
	phase_paths(r, plan->phase, console, channel, sizeof(console));
	snprintf(tag, sizeof(tag), "job=%lld attempt=%ld", (long long)r->job->id,
		 r->job->attempt);
	spec.name = name;
	spec.arch = r->target->arch;
	spec.emulator = r->target->emulator;
	spec.machine = r->target->machine;
	spec.cpu = r->target->cpu;
	spec.use_kvm = plan->use_kvm;
	spec.memory_mib = (unsigned)sc.cfg->guest_memory;
	spec.vcpus = 1;
	spec.kernel = kernel;
	spec.initrd = initrd;
	spec.cmdline = cmdline;
	spec.virtio_mmio = r->target->virtio_mmio;
	spec.console_log = console;
	spec.channel_log = channel;
	spec.channel_name = RCGATE_CHANNEL_NAME;
	spec.job_tag = tag;
	spec.destroy_later = 1;
	if (!r->place.local) {
		/* The host has none of our files: they go as volumes, and
		 * the console and results come back as streams. */
		char remote[2 + GUEST_MAX_DISKS][PATH_MAX];
		const char *local[2 + GUEST_MAX_DISKS] = { kernel, initrd };

		spec.streams = 1;
		for (unsigned i = 0; i < spec.ndisks; i++)
			local[2 + i] = spec.disks[i];
		for (unsigned i = 0; i < 2 + spec.ndisks; i++) {
			if (local[i] == NULL)
				continue;
			if (stage_file(r, local[i], remote[i], sizeof(remote[i]),
				       err, errlen) < 0) {
				if (r->w->cancel) {	/* stopped, not failed */
					*outcome = GUEST_CANCELLED;
					return 0;
				}
				/* A refused upload (pool full, connection
				 * lost) is the host's failure either way. */
				hosts_failed(&r->place, err);
				pthread_mutex_lock(&r->lock);
				r->host_failed = 1;
				pthread_mutex_unlock(&r->lock);
				return -1;
			}
		}
		spec.kernel = remote[0];
		spec.initrd = initrd != NULL ? remote[1] : NULL;
		for (unsigned i = 0; i < spec.ndisks; i++)
			spec.disks[i] = remote[2 + i];
		return boot_guest(r, &spec, plan, name, cmdline, outcome, times,
				  err, errlen);
	}
	return boot_guest(r, &spec, plan, name, cmdline, outcome, times, err,
			  errlen);
}

/* The second half of boot: slots, the guest's life, the figures. */
static int boot_guest(struct run *r, struct guest_spec *specp,
		      const struct boot_plan *plan, const char *name,
		      const char *cmdline, enum guest_outcome *outcome,
		      struct guest_times *times, char *err, size_t errlen)
{
	const struct guest_spec spec = *specp;
	unsigned host = (unsigned)r->place.index;
	enum boot_kind kind = boot_kind_of(plan->phase);
	struct guest *g;
	double waited, mark;
	uint64_t seq;
	int rc, planned = 0, completed;

	seq = r->prio + (plan->phase == NULL);
	waited = now_monotonic();
	if (slot_acquire(host, 0, r->target, plan->phase, seq,
			 &r->w->cancel, NULL) < 0) {
		*outcome = GUEST_CANCELLED;
		return 0;
	}
	waited = now_monotonic() - waited;
	jlog(r, "boot %s on host %s accel=%s timeout=%d s cmdline=\"%s\"", name,
	     r->place.name, plan->use_kvm ? "kvm" : "tcg", plan->timeout_s,
	     cmdline);
	if (guest_create(r->place.gh, &spec, &g, times, err, errlen) < 0) {
		slot_release(host, 0, seq, 0);
		host_check(r, err, errlen);
		return -1;
	}
	mark = now_monotonic();
	if (slot_acquire(host, 1, r->target, plan->phase, seq,
			 &r->w->cancel, &planned) < 0) {
		guest_discard(g);
		slot_release(host, 0, seq, 0);
		*outcome = GUEST_CANCELLED;
		return 0;
	}
	waited += now_monotonic() - mark;
	if (planned)
		jlog(r, "guest %s starts before the longest waiting chain: it"
		     " ends the host's last boots sooner (slotplan.c)", name);
	atomic_fetch_add(&running_guests, 1);
	hosts_guest_delta(&r->place, 1);
	rc = guest_start_wait(g, plan->marker, plan->timeout_s, &r->w->cancel,
			      outcome, times, err, errlen);
	hosts_guest_delta(&r->place, -1);
	atomic_fetch_sub(&running_guests, 1);
	completed = rc == 0 && *outcome == GUEST_COMPLETED;
	/* A crash-write that completed has its crash-verify to come: the
	 * plan of the end counts it from now on. */
	slot_release(host, 1, seq, completed && kind == BOOT_CRASH_WRITE);
	slot_release(host, 0, seq, -1);
	if (rc < 0)
		host_check(r, err, errlen);
	if (completed)	/* a crash-write's chain is learned after both */
		length_learn(r->target, kind == BOOT_CRASH_WRITE ?
			     CRASH_WRITE_OWN : (size_t)kind, times->run_s);
	pthread_mutex_lock(&r->lock);
	r->steps.wait += waited;
	r->steps.define += times->define_s;
	r->steps.start += times->start_s;
	r->steps.guest += times->run_s;
	r->steps.destroy += times->destroy_s;
	if (times->cpu_s > 0)
		r->steps.cpu += times->cpu_s;
	pthread_mutex_unlock(&r->lock);
	/* The span (Unix times: CPUs started, outcome) and the guest's CPU
	 * time are what bench/matrix.sh reads to find when the host had a
	 * core without a guest. */
	if (rc == 0)
		jlog(r, "guest %s: %s after %.1f s (define %.2f s, wait %.2f s,"
		     " start %.2f s, run %.2f s, destroy %.2f s; cpu %.2f s;"
		     " span %.3f %.3f)", name, guest_outcome_name(*outcome),
		     times->decided_s, times->define_s, waited,
		     times->start_s, times->run_s, times->destroy_s,
		     times->cpu_s, times->running_at, times->decided_at);
	return rc;
}

/* Turns a boot that did not complete into the right infra error; returns
 * 0 when the boot completed. */
static int boot_outcome(struct run *r, int rc, enum guest_outcome outcome,
			const char *phase, const char *err)
{
	char console[PATH_MAX + 32], ktap[PATH_MAX + 32], *reason;

	if (rc < 0) {
		int host_failed;

		pthread_mutex_lock(&r->lock);
		host_failed = r->host_failed;
		pthread_mutex_unlock(&r->lock);
		if (host_failed)
			infra_host(r, err);
		else
			infra(r, "libvirt", err);
		return -1;
	}
	if (outcome == GUEST_COMPLETED)
		return 0;
	if (outcome == GUEST_CANCELLED) {
		int sibling;

		pthread_mutex_lock(&r->lock);
		sibling = r->failed;
		pthread_mutex_unlock(&r->lock);
		jlog(r, "stopped: %s", atomic_load(&stopping)
		     ? "daemon shutting down (job resumes at next start)"
		     : sibling ? "another boot of this attempt failed"
		     : "cancelled");
		return -1;
	}
	phase_paths(r, phase, console, ktap, sizeof(console));
	reason = agent_infra_reason(ktap);
	if (reason != NULL) {
		infra(r, "agent", reason);
		free(reason);
	} else if (console_has(console, "Kernel panic")) {
		infra(r, "kernel_panic", outcome == GUEST_TIMEOUT
		      ? "kernel panicked (see console log); guest destroyed at the timeout"
		      : "kernel panicked (see console log)");
	} else if (outcome == GUEST_TIMEOUT) {
		infra(r, "boot_timeout", "no complete result before the timeout;"
		      " guest destroyed");
	} else {
		infra(r, "agent_output", "guest stopped before the agent reported"
		      " completion");
	}
	return -1;
}

/* The durable size the agent reported before the power cut, or -1. */
static long durable_size(const char *ktap_path)
{
	char *text = file_read(ktap_path, 1u << 20, NULL, NULL, 0);
	const char *p = text != NULL ? strstr(text, RCGATE_DURABLE) : NULL;
	long size = -1;

	p = p != NULL ? strstr(p, RCGATE_DURABLE_SIZE) : NULL;
	if (p != NULL) {
		char *end;

		p += strlen(RCGATE_DURABLE_SIZE);
		size = strtol(p, &end, 10);
		if (end == p || size < 0)
			size = -1;
	}
	free(text);
	return size;
}

/*
 * Waits until the qemu that had path open has let it go, which it does
 * only as it exits: qemu holds OFD locks on an image for as long as it has
 * it open, and a second qemu could not open it before. This is sooner than
 * the end of the domain's destroy, which waits until init has reaped the
 * process (seconds on some hosts). 0 once released; -1 when no lock was
 * ever seen (locks unsupported or qemu already gone: the caller waits for
 * the destroy itself), or when cancelled or after timeout_s.
 */
static int disk_wait_released(const char *path, const volatile int *cancel,
			      double timeout_s)
{
	double start = now_monotonic();
	int fd = open(path, O_RDONLY | O_CLOEXEC), seen = 0, rc = -1;

	if (fd < 0)
		return -1;
	for (;;) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		struct timespec ts = { 0, 10 * 1000000L };

		if (fcntl(fd, F_OFD_GETLK, &fl) < 0)
			break;
		if (fl.l_type == F_UNLCK) {
			rc = seen ? 0 : -1;
			break;
		}
		seen = 1;
		if (*cancel || now_monotonic() - start > timeout_s)
			break;
		nanosleep(&ts, NULL);
	}
	close(fd);
	return rc;
}

/* The crash-consistency test (the bug 91562895f803 fixed): the agent
 * extends a file with O_SYNC|O_DIRECT writes on a fresh ext4 disk and says
 * how much is durable; we cut power (destroy) at that moment, boot again on
 * the same disk, and the agent checks size and content. */
static int crash_phase(struct run *r, const char *kernel, const char *initrd,
		       int use_kvm, int timeout_s, struct phase_results *out)
{
	struct disk_set d = { .n = 1 };
	struct boot_plan plan = { RCGATE_PHASE_CRASH_WRITE, &d,
				  RCGATE_KEY_PHASE "=" RCGATE_PHASE_CRASH_WRITE,
				  RCGATE_CRASH_READY, use_kvm, timeout_s };
	char err[512], extra[96], console[PATH_MAX + 32], ktap[PATH_MAX + 32],
		name[64];
	struct guest_times first, second;
	enum guest_outcome outcome;
	double mark = now_monotonic(), gone;
	long size;
	int rc;

	if ((size_t)snprintf(d.path[0], sizeof(d.path[0]), "%s/disk-crash.img",
			     r->dir) >= sizeof(d.path[0])) {
		infra(r, "disk", "job directory path too long");
		return -1;
	}
	d.fs[0] = "ext4";
	if (make_disk(r, d.path[0], fs_find("ext4"), err, sizeof(err)) < 0) {
		infra(r, "disk", err);
		return -1;
	}
	mark = now_monotonic() - mark;
	pthread_mutex_lock(&r->lock);
	r->steps.disks += mark;
	pthread_mutex_unlock(&r->lock);
	rc = boot(r, kernel, initrd, &plan, &outcome, &first, err, sizeof(err));
	/* The power cut: the guest's destroy began at the ready line; the
	 * second boot may open the disk only once that qemu is gone. */
	mark = now_monotonic();
	/* On a host without our files the lock is on its copy: wait for
	 * the destroy itself. */
	if (!r->place.local ||
	    disk_wait_released(d.path[0], &r->w->cancel, 60) < 0) {
		guest_name(r, plan.phase, name, sizeof(name));
		guest_wait_destroyed(r->place.gh, name);
	}
	gone = now_monotonic() - mark;
	pthread_mutex_lock(&r->lock);
	r->steps.destroy += gone;
	pthread_mutex_unlock(&r->lock);
	if (boot_outcome(r, rc, outcome, plan.phase, err) < 0)
		goto fail;
	phase_paths(r, plan.phase, console, ktap, sizeof(console));
	size = durable_size(ktap);
	if (size < 0) {
		infra(r, "agent_output", "crash-write phase reported no durable size");
		goto fail;
	}
	jlog(r, "power cut after %ld durable bytes (its qemu gone %.2f s later)",
	     size, gone);
	/* The agent writes RCGATE_CRASH_BYTES; fewer durable bytes than that
	 * is itself the finding, so the check always wants all of them. */
	if (size < RCGATE_CRASH_BYTES) {
		jlog(r, "only %ld of %d bytes were written before the power cut",
		     size, RCGATE_CRASH_BYTES);
		size = RCGATE_CRASH_BYTES;
	}
	snprintf(extra, sizeof(extra), RCGATE_KEY_PHASE "="
		 RCGATE_PHASE_CRASH_VERIFY " " RCGATE_KEY_EXPECT "=%ld", size);
	plan = (struct boot_plan){ RCGATE_PHASE_CRASH_VERIFY, &d, extra,
				   RCGATE_MARKER, use_kvm, timeout_s };
	rc = boot(r, kernel, initrd, &plan, &outcome, &second, err, sizeof(err));
	if (boot_outcome(r, rc, outcome, plan.phase, err) < 0)
		goto fail;
	/* The chain's length for the slot order: both boots and what lies
	 * between them. */
	length_learn(r->target, BOOT_CRASH_WRITE,
			   second.decided_at - first.running_at);
	phase_paths(r, plan.phase, console, ktap, sizeof(console));
	if (collect(r, ktap, out) < 0)
		goto fail;
	unlink(d.path[0]);
	return 0;
fail:
	unlink(d.path[0]);
	return -1;
}

/* One line per job: the steps named, so an overhead has a name. The
 * disk format counts also the scratch disks a KVM probe's fallback and
 * the crash phases make; define, wait, start, guest and destroy add up
 * over the boots (destroy: only what a boot had to wait for, the power
 * cut before the crash test's second boot), and cpu is the guests'. */
static void log_steps(struct run *r, double total)
{
	const struct job_steps *s = &r->steps;

	char build[48] = "";

	if (s->build > 0)
		snprintf(build, sizeof(build), "build %.2f s, ", s->build);
	jlog(r, "time: %sfetch %.2f s, initramfs %.2f s, disks %.2f s,"
	     " define %.2f s, wait %.2f s, start %.2f s, guest %.2f s,"
	     " results %.2f s, destroy %.2f s; total %.2f s; guest cpu %.2f s",
	     build, s->fetch, s->initramfs, s->disks, s->define, s->wait, s->start,
	     s->guest, s->results, s->destroy, total, s->cpu);
	log_info("job=%lld steps build=%.2f fetch=%.2f initramfs=%.2f disks=%.2f"
		 " define=%.2f wait=%.2f start=%.2f guest=%.2f results=%.2f"
		 " destroy=%.2f total=%.2f cpu=%.2f", (long long)r->job->id,
		 s->build, s->fetch, s->initramfs, s->disks, s->define, s->wait,
		 s->start, s->guest, s->results, s->destroy, total, s->cpu);
}

/*
 * Chooses the host the attempt runs on (hosts.c), waiting while every
 * host that runs the target is down; records it on the job. -1 when it
 * cannot run anywhere (recorded) or was cancelled.
 */
static int place_job(struct run *r, char *err, size_t errlen)
{
	int rc, waited = 0;

	while ((rc = hosts_place(r->target->name, &r->place, err, errlen)) == 0) {
		if (r->w->cancel || atomic_load(&stopping))
			return -1;
		if (!waited)
			jlog(r, "waiting for a host that runs %s to be up",
			     r->target->name);
		waited = 1;
		sleep_ms(500);
	}
	if (rc < 0) {
		infra_as(r, "no_host", err, 1);
		return -1;
	}
	jlog(r, "host %s (%s) runs this attempt%s", r->place.name, r->place.uri,
	     r->place.accel < 0 ? "" : r->place.accel ? " under KVM"
	     : " under TCG");
	pthread_mutex_lock(&r->lock);
	store_job_host(r->st, r->job->id, r->place.name, NULL, 0);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

/* The crash test's two boots, on a thread of their own beside the suite's
 * boot (they use a disk of their own). */
struct crash_chain {
	struct run *r;
	const char *kernel, *initrd;
	int use_kvm, timeout_s;
	struct phase_results *out;
	int rc;
	pthread_t thread;
};

static void *crash_chain_main(void *arg)
{
	struct crash_chain *c = arg;

	c->rc = crash_phase(c->r, c->kernel, c->initrd, c->use_kvm,
			    c->timeout_s, c->out);
	return NULL;
}

/* A build's progress into the job row: every step, and while compiling
 * at most every 2 s (each write is a commit the API's readers see). */
static void build_progress(void *cls, const char *step, long done, long total)
{
	struct run *r = cls;
	double now = now_monotonic();

	if (strcmp(step, r->build_step) == 0 && now - r->build_written < 2)
		return;
	snprintf(r->build_step, sizeof(r->build_step), "%s", step);
	r->build_written = now;
	store_job_build_progress(r->st, r->job->id, step, done, total, NULL,
				 NULL, 0);
}

static void run_job(struct store *st, struct worker *w, const struct job *job)
{
	struct run r = { .st = st, .w = w, .job = job };
	double mark = 0, started = 0;
	char err[1024], artifact[PATH_MAX], modules[PATH_MAX], kernel[PATH_MAX],
		initrd[PATH_MAX], kver[128], adir[PATH_MAX];
	struct phase_results phases[3] = { 0 };	/* suite, crash, build */
	struct buildjob_result built_out = { .sha256 = "" };
	struct result_row build_row;
	struct job built;
	struct crash_chain chain = { .rc = -1 };
	struct disk_set disks;
	struct boot_plan plan;
	struct guest_times times = { 0 };
	enum guest_outcome outcome;
	int accel, timeout_s, booted = 0, rc, chain_running = 0, suite_ok = 0;
	const char *at = JS_FETCHING;	/* the state the job is in */
	/* A bisection step: no crash test, no version check, maybe no boot. */
	int step = job->bisection_id != 0;
	int crash = sc.cfg->crash_test && !step;
	char only[1100] = "";

	memset(&disks, 0, sizeof(disks));
	pthread_mutex_init(&r.lock, NULL);
	pthread_mutex_init(&r.stage_lock, NULL);
	r.place.index = -1;
	/* Its boots' order among equals: the crash chain, then the suite. */
	r.prio = atomic_fetch_add(&claim_seq, 1) * 2;
	r.target = target_find(job->target);
	snprintf(r.dir, sizeof(r.dir), "%s/jobs/%lld/%ld", sc.cfg->state_dir,
		 (long long)job->id, job->attempt);
	if (mkdir_p(r.dir, 0755, err, sizeof(err)) == 0) {
		char lp[PATH_MAX + 16];

		snprintf(lp, sizeof(lp), "%s/" RCGATE_JOB_LOG, r.dir);
		r.log = fopen(lp, "ae");
	}
	jlog(&r, "job %lld attempt %ld: %s on %s (worker %u)", (long long)job->id,
	     job->attempt, job->version, job->target, w->index);
	if (r.target == NULL) {
		infra(&r, "config", "unknown target");
		goto out;
	}
	mark = started = now_monotonic();
	snprintf(adir, sizeof(adir), "%s/artifacts", sc.cache_dir);
	if (strcmp(job->kind, "source") == 0 || strcmp(job->kind, "git") == 0) {
		/* Built here: from then on the job is one of kind 'image'
		 * whose kernel is the image the build left in the cache. A
		 * source that does not build is this job's result. */
		struct buildjob_src bsrc;

		rc = buildjob_fetch(job, sc.cfg, sc.cache_dir, r.dir, r.log,
				    &w->cancel, &bsrc, err, sizeof(err));
		r.steps.fetch = lap(&mark);
		if (rc < 0) {
			if (!w->cancel)
				infra(&r, "fetch", err);
			goto out;
		}
		if (bsrc.commit[0] != '\0')
			store_job_build_progress(st, job->id, "waiting", -1, -1,
						 bsrc.commit, NULL, 0);
		if (!advance(&r, JS_FETCHING, JS_BUILDING))
			goto out;
		at = JS_BUILDING;
		rc = buildjob_build(job, r.target, sc.cfg, sc.cache_dir, r.dir,
				    r.log, &w->cancel, &bsrc, !step, build_progress,
				    &r, &built_out, err, sizeof(err));
		r.steps.build = lap(&mark);
		store_job_built(st, job->id, rc == 0 ? built_out.sha256 : NULL,
				built_out.seconds, NULL, 0);
		if (rc < 0) {
			/* A cancel or a clean stop is not the build's failure:
			 * the job keeps its attempt (sched_stop requeues it). */
			if (!w->cancel)
				infra(&r, "build", err);
			goto out;
		}
		build_row = (struct result_row){ BUILD_TEST, rc == 0 ? "pass" : "fail",
			rc == 0 ? NULL : built_out.diag.signature_text,
			(long)(built_out.seconds * 1000), 1 };
		phases[2].rows = &build_row;
		phases[2].n = 1;
		/* A step of a build regression's bisection ends with its
		 * build: that is all it judges. */
		if (rc == 1 || (step && strcmp(job->only_tests, "-") == 0)) {
			if (rc == 1)
				jlog(&r, "build failed: %s", built_out.diag.line);
			/* Results are stored from 'running' (compare-and-set):
			 * the job passes through the states it did not need. */
			if (!advance(&r, JS_BUILDING, JS_BOOTING) ||
			    !advance(&r, JS_BOOTING, JS_RUNNING)) {
				phases[2] = (struct phase_results){ 0 };
				goto out;
			}
			store_results(&r, &phases[2], 1, 0);
			phases[2] = (struct phase_results){ 0 };
			goto out;
		}
		built = *job;
		snprintf(built.kind, sizeof(built.kind), "image");
		snprintf(built.sha256, sizeof(built.sha256), "%s", built_out.sha256);
		built.modules_url[0] = built.modules_sha256[0] = '\0';
		job = r.job = &built;
		snprintf(artifact, sizeof(artifact), "%s", built_out.image);
	} else if (mkdir_p(adir, 0755, err, sizeof(err)) < 0 ||
	    fetch_artifact(job->url, job->sha256, adir,
			   sc.cfg->max_artifact_mb << 20, artifact,
			   sizeof(artifact), r.log, &w->cancel, err,
			   sizeof(err)) < 0) {
		infra(&r, "fetch", err);
		goto out;
	}
	if (job->modules_url[0] != '\0' &&
	    fetch_artifact(job->modules_url, job->modules_sha256, adir,
			   sc.cfg->max_artifact_mb << 20, modules,
			   sizeof(modules), r.log, &w->cancel, err,
			   sizeof(err)) < 0) {
		infra(&r, "fetch", err);
		goto out;
	}
	if (strcmp(at, JS_FETCHING) == 0)
		r.steps.fetch = lap(&mark);
	if (!advance(&r, at, JS_BOOTING))
		goto out;
	if (prepare_boot(&r, artifact, job->modules_url[0] ? modules : NULL,
			 kernel, initrd, sizeof(kernel), kver,
			 sizeof(kver), err, sizeof(err)) < 0) {
		if (!w->cancel)		/* stopped while reading the package */
			infra(&r, "artifact", err);
		goto out;
	}
	r.steps.initramfs = lap(&mark);
	if (make_disks(&r, &disks, err, sizeof(err)) < 0) {
		infra(&r, "disk", err);
		goto out;
	}
	r.steps.disks = lap(&mark);
	if (place_job(&r, err, sizeof(err)) < 0)
		goto out;
	/* A bare image names no version; one built here is what make
	 * kernelrelease said. */
	if (kver[0] == '\0' && built_out.kernelrelease[0] != '\0')
		snprintf(kver, sizeof(kver), "%s", built_out.kernelrelease);
	store_job_note(st, job->id, NULL, kver, NULL, 0);
	if (!advance(&r, JS_BOOTING, JS_RUNNING))
		goto out;
	timeout_s = (int)((double)sc.cfg->job_timeout * r.target->timeout_factor);
	/* A bisection step runs only the tests it judges by. */
	if (step && job->only_tests[0] != '\0')
		snprintf(only, sizeof(only), RCGATE_KEY_ONLY "=%s", job->only_tests);
	plan = (struct boot_plan){ NULL, &disks, only, RCGATE_MARKER, 1, timeout_s };
	/* A configured host says which targets it runs under KVM; the
	 * implicit one follows [jobs] accel (and probes). */
	accel = r.place.accel >= 0 ? r.place.accel : accel_decision(r.target);
	if (accel < 0) {
		/* The probe is this job's own boot under KVM with a short
		 * timeout: if it completes, its results count. */
		plan.timeout_s = (int)sc.cfg->kvm_probe_timeout;
		if (boot(&r, kernel, initrd, &plan, &outcome, &times, err,
			 sizeof(err)) == 0 && outcome == GUEST_COMPLETED) {
			accel_record(r.target, 1);
			accel = 1;
			booted = 1;
		} else if (w->cancel) {
			goto out;
		} else {
			jlog(&r, "KVM probe failed (%s): using TCG from now on",
			     err[0] ? err : "guest did not complete");
			accel_record(r.target, 0);
			accel = 0;
			remove_disks(&disks);
			mark = now_monotonic();
			if (make_disks(&r, &disks, err, sizeof(err)) < 0) {
				infra(&r, "disk", err);
				goto out;
			}
			r.steps.disks += lap(&mark);
		}
		plan.timeout_s = timeout_s;
	}
	store_job_note(st, job->id, accel ? "kvm" : "tcg", NULL, NULL, 0);
	plan.use_kvm = accel;
	/* From here the crash chain may run beside the suite: the store
	 * connection and the steps are shared under r.lock. */
	if (crash) {
		chain = (struct crash_chain){ &r, kernel, initrd, accel,
					      timeout_s, &phases[1], -1, 0 };
		chain_running = pthread_create(&chain.thread, NULL,
					       crash_chain_main, &chain) == 0;
	}
	if (!booted) {
		rc = boot(&r, kernel, initrd, &plan, &outcome, &times, err,
			  sizeof(err));
		booted = boot_outcome(&r, rc, outcome, NULL, err) == 0;
	}
	/* The scratch disks are large and worthless after the run. */
	remove_disks(&disks);
	if (booted) {
		char ktap[PATH_MAX + 32], console[PATH_MAX + 32];

		phase_paths(&r, NULL, console, ktap, sizeof(console));
		suite_ok = collect(&r, ktap, &phases[0]) == 0 &&
			/* A step's kernel is whatever version its commit
			 * says: the rc's version is not expected. */
			(step || kernel_identity(&r, &phases[0].report) == 0);
	}
	if (chain_running)
		pthread_join(chain.thread, NULL);
	else if (suite_ok && crash)
		crash_chain_main(&chain);	/* no thread: after the suite */
	if (!suite_ok || (crash && chain.rc < 0) || r.failed)
		goto out;
	lap(&mark);
	store_results(&r, phases, 3, times.decided_s);
	r.steps.results = lap(&mark);
out:
	if (started > 0)
		log_steps(&r, now_monotonic() - started);
	remove_disks(&disks);
	if (r.nstaged > 0)
		unstage_all(&r);
	hosts_release(&r.place);
	phase_results_free(&phases[0]);
	phase_results_free(&phases[1]);
	phases[2] = (struct phase_results){ 0 };	/* its row is on the stack */
	if (r.log != NULL)
		fclose(r.log);
	pthread_mutex_destroy(&r.stage_lock);
	pthread_mutex_destroy(&r.lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char err[512], name[32];
	struct store *st = store_open(sc.db_path, err, sizeof(err));

	if (st == NULL) {
		log_err("worker %u: %s", w->index, err);
		return NULL;
	}
	snprintf(name, sizeof(name), "worker-%u", w->index);
	while (!atomic_load(&stopping)) {
		struct job job;
		int rc = store_job_claim(st, name, &job, err, sizeof(err));

		if (rc < 0) {
			log_err("%s: %s", name, err);
			idle_wait(1);
			continue;
		}
		if (rc == 0) {
			idle_wait(1);
			continue;
		}
		w->cancel = 0;
		atomic_store(&w->job_id, job.id);
		log_info("%s job=%lld version=%s target=%s attempt=%ld", name,
			 (long long)job.id, job.version, job.target, job.attempt);
		run_job(st, w, &job);
		atomic_store(&w->job_id, 0);
		if (sc.job_ended != NULL)
			sc.job_ended();
	}
	store_close(st);
	return NULL;
}

/* Notices jobs cancelled through the API and stops their guests. */
static void *monitor_main(void *arg)
{
	char err[256];
	struct store *st = store_open(sc.db_path, err, sizeof(err));

	(void)arg;
	if (st == NULL) {
		log_err("monitor: %s", err);
		return NULL;
	}
	while (!atomic_load(&stopping)) {
		for (unsigned i = 0; i < nworkers; i++) {
			int64_t id = atomic_load(&workers[i].job_id);
			char state[32];

			if (id != 0 && store_job_state_get(st, id, state,
							   sizeof(state)) == 0 &&
			    strcmp(state, JS_CANCELLED) == 0)
				workers[i].cancel = 1;
		}
		idle_wait(1);
	}
	store_close(st);
	return NULL;
}

int sched_start(const struct sched_context *c, char *err, size_t errlen)
{
	struct store *st;
	int n = 0, failed = 0, orphans = 0;
	char instance[16];

	sc = *c;
	st = store_open(sc.db_path, err, errlen);
	if (st == NULL)
		return -1;
	if (store_instance_id(st, instance, sizeof(instance), err, errlen) < 0 ||
	    store_requeue_unfinished(st, sc.cfg->attempts, &n, &failed, err,
				     errlen) < 0) {
		store_close(st);
		return -1;
	}
	snprintf(guest_prefix, sizeof(guest_prefix), "rcgate-%s-", instance);
	store_close(st);
	if (n > 0)
		log_info("requeued %d unfinished job(s) from a previous run", n);
	if (failed > 0)
		log_warn("%d job(s) ended as infra errors: the daemon had stopped"
			 " unexpectedly during each of their attempts", failed);
	/* Only this instance's guests: another rcgated on the same libvirt
	 * names its own with its own id. Remote hosts do this as they
	 * connect (hosts.c). */
	if (sc.host != NULL &&
	    guest_destroy_orphans(sc.host, guest_prefix, &orphans, err, errlen) < 0)
		return -1;
	if (hosts_start(sc.cfg, sc.host, guest_prefix, err, errlen) < 0)
		return -1;
	if (orphans > 0)
		log_info("destroyed %d orphaned guest(s)", orphans);
	atomic_store(&stopping, 0);
	pthread_mutex_lock(&slots.lock);
	{
		/* Each host's capacity in guests; as many workers for all. */
		struct host_status hst[HOSTS_MAX];
		size_t nh = hosts_status(hst, HOSTS_MAX);
		unsigned total = 0;

		for (size_t i = 0; i < nh; i++) {
			slots.run[i].free = (unsigned)hst[i].capacity;
			if (slots.run[i].free > MAX_SLOTS)
				slots.run[i].free = MAX_SLOTS;
			slots.domains[i].free = slots.run[i].free * 2;
			slots.run[i].nwaiting = slots.domains[i].nwaiting = 0;
			slots.run[i].plan_made = 0;
			memset(slots.boots[i], 0, sizeof(slots.boots[i]));
			total += slots.run[i].free;
		}
		if (total > MAX_SLOTS)
			total = MAX_SLOTS;
		nworkers = total * WORKERS_PER_SLOT;
	}
	memset(slots.length, 0, sizeof(slots.length));
	pthread_mutex_unlock(&slots.lock);
	for (unsigned i = 0; i < nworkers; i++) {
		workers[i].index = i;
		atomic_store(&workers[i].job_id, 0);
		if (pthread_create(&workers[i].thread, NULL, worker_main,
				   &workers[i]) != 0) {
			errf(err, errlen, "cannot start worker threads");
			nworkers = i;
			sched_stop();
			return -1;
		}
	}
	if (pthread_create(&monitor_thread, NULL, monitor_main, NULL) != 0) {
		errf(err, errlen, "cannot start the monitor thread");
		sched_stop();
		return -1;
	}
	monitor_started = 1;
	return 0;
}

void sched_stop(void)
{
	atomic_store(&stopping, 1);
	for (unsigned i = 0; i < nworkers; i++)
		workers[i].cancel = 1;
	sched_kick();
	pthread_mutex_lock(&slots.lock);
	pthread_cond_broadcast(&slots.cond);
	pthread_mutex_unlock(&slots.lock);
	for (unsigned i = 0; i < nworkers; i++)
		pthread_join(workers[i].thread, NULL);
	if (monitor_started)
		pthread_join(monitor_thread, NULL);
	monitor_started = 0;
	hosts_stop();
	if (nworkers > 0) {
		/* A clean stop costs a job no attempt: what the workers left
		 * unfinished is queued again as it was. */
		char err[256];
		struct store *st = store_open(sc.db_path, err, sizeof(err));
		int n = 0, failed = 0;

		if (st == NULL ||
		    store_requeue_unfinished(st, 0, &n, &failed, err, sizeof(err)) < 0)
			log_err("requeue at stop: %s", err);
		else if (n > 0)
			log_info("stop: %d unfinished job(s) queued again", n);
		store_close(st);
	}
	nworkers = 0;
}
