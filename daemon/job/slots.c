/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * slots.c - owns the guest slots of every host: who may define a domain
 * and who may start one, in the order that leaves the host idle least at
 * the end of a batch.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "job_internal.h"

#include "base/base.h"
#include "guests/guests.h"
#include "job/job.h"

/*
 * Guests at once. A boot holds a run slot ([jobs] workers of them) from
 * the start of its CPUs to its outcome, and before that a domain slot
 * (twice as many) from the creation of its domain to its start: so the
 * domains of the next boots are made, paused, while the others run, a run
 * slot is not spent waiting on libvirt, and at most two boots per guest
 * running wait with a domain made. Twice, not once: a crash-verify whose
 * power cut came while the slots were taken has its domain ready when a
 * slot frees, so the plan of the end (slotplan.c) can choose it (with
 * only `workers` domains, the crash-verify boots queued for a domain
 * behind the boots already waiting, and the end ran one guest alone for
 * up to 2.9 s, bench/README.md).
 *
 * Both go first to the boots of the rc whose "Responses should be made by"
 * comes first (rcs without one last), as jobs are claimed: with several
 * rcs in flight, a later rc's long boot does not take a slot from the
 * earlier rc's last ones. Among boots due at the same time, in the order
 * that leaves the host idle least at the end of a batch: the longest chain
 * first (list scheduling, longest processing time first), a chain's length
 * being what it took the last time on that target: the suite boot, or the
 * crash test's two boots with the power cut and the new domain between
 * them. Unknown lengths go first; equal ones in the order the jobs were
 * claimed. At the end of a batch,
 * when the boots a host has to come are few and their lengths known,
 * slotplan.c plays them out and may start another run waiter first: with
 * slots freeing at different times, longest first can leave one guest
 * running alone for longer.
 */
#define MAX_TARGETS 16
#define UNKNOWN_LENGTH 1e9
/* What the plan of a release's end must gain over longest first: lengths
 * vary by 5-10 % from one boot to the next (bench/README.md). */
#define PLAN_MARGIN_S 0.25

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

enum boot_kind boot_kind_of(const char *phase)
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

void length_learn(const struct target *t, size_t column, double seconds)
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

int slot_waiter_before(const struct slot_waiter *a,
		       const struct slot_waiter *b)
{
	/* UTC ISO 8601 of one format: text order is time order. */
	int due = strcmp(a->due, b->due);

	if (due != 0)
		return b->due[0] == '\0' || (a->due[0] != '\0' && due < 0);
	return a->length > b->length ||
	       (a->length == b->length && a->seq < b->seq);
}

const char *slot_due(const struct job *job)
{
	/* UTC ISO 8601: this sorts before every real deadline. */
	return job->rerun_of != 0 && job->deadline[0] != '\0' ?
		"0000-00-00T00:00:00Z" : job->deadline;
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
	/* Boots of rcs due at different times: the earlier rc's go first,
	 * whatever ends the host's work soonest. */
	for (unsigned i = 1; i < p->nwaiting; i++)
		if (strcmp(p->waiting[i].due, p->waiting[0].due) != 0)
			return NULL;
	/* The candidates first: pt[i] is p->waiting[i]'s. */
	for (unsigned i = 0; i < p->nwaiting; i++) {
		struct slot_boot *b = boot_entry(host, p->waiting[i].seq, 0);

		if (b == NULL || b->state != BOOT_WAIT_RUN || b->plan.own < 0)
			return NULL;
		pt[nt] = b->plan;
		pt[nt].ready = 0;
		if (slot_waiter_before(&p->waiting[i], &p->waiting[longest]))
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
		if (slot_waiter_before(&p->waiting[i], me))
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

int slot_acquire(unsigned host, int run, const struct target *t,
		 const char *phase, const char *due, uint64_t seq,
		 const atomic_int *cancel, int *planned)
{
	struct slot_pool *p = run ? &slots.run[host] : &slots.domains[host];
	struct slot_waiter me = { .seq = seq };
	struct plan_task pt;
	int rc = -1;

	pthread_mutex_lock(&slots.lock);
	me.length = chain_length(t, phase);
	snprintf(me.due, sizeof(me.due), "%s", due != NULL ? due : "");
	pt = boot_plan_task(t, phase);
	if (p->nwaiting < sizeof(p->waiting) / sizeof(p->waiting[0]))
		p->waiting[p->nwaiting++] = me;
	boot_set(host, seq, run ? BOOT_WAIT_RUN : BOOT_WAIT_DOMAIN, &pt);
	/* A new boot can change the plan's pick: the others look again. */
	pthread_cond_broadcast(&slots.cond);
	while (!*cancel && !atomic_load(&sched_stopping)) {
		if (p->free > 0 && slot_is_next(p, host, run, &me)) {
			p->free--;
			rc = 0;
			if (planned != NULL)
				*planned = run && p->plan_set;
			break;
		}
		/* The monitor sets cancel without a broadcast: look again
		 * now and then. */
		cond_wait_ms(&slots.cond, &slots.lock, 200);
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

void slot_release(unsigned host, int run, uint64_t seq, int follows)
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

/* Each host's capacity in guests; as many workers for all. */
unsigned slots_reset(void)
{
	struct host_status hst[HOSTS_MAX];
	size_t nh;
	unsigned total = 0;

	pthread_mutex_lock(&slots.lock);
	nh = hosts_status(hst, HOSTS_MAX);
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
	memset(slots.length, 0, sizeof(slots.length));
	pthread_mutex_unlock(&slots.lock);
	return total > MAX_SLOTS ? MAX_SLOTS : total;
}

void slots_wake(void)
{
	pthread_mutex_lock(&slots.lock);
	pthread_cond_broadcast(&slots.cond);
	pthread_mutex_unlock(&slots.lock);
}
