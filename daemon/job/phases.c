/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * phases.c - the job as a table of phases, and the runner that walks it.
 * Each row names the state the job is in while it runs, whether this job
 * wants it (a predicate on the attempt: its artifact kind, a bisection
 * step, the crash test's setting) and its exec, which lives in the file
 * that owns that work. The runner never names a kind, a bisection or a
 * host: adding a phase adds a row here, not a branch there.
 */
#include <string.h>

#include "job_internal.h"

#include "base/base.h"
#include "store/store.h"
#include "job/job.h"

const struct phase *const job_phases[] = {
	&phase_fetch,		/* fetching: a kernel CI posted */
	&phase_reuse,		/* fetching: a rerun's kernel, built before */
	&phase_source,		/* fetching: a tarball and patch, or git */
	&phase_build,		/* building: may end the job (its result) */
	&phase_initramfs,	/* booting */
	&phase_disks,		/* booting */
	&phase_place,		/* booting: the host */
	&phase_accel,		/* running: KVM or TCG, probed */
	&phase_crash,		/* running, beside the suite */
	&phase_suite,		/* running */
	&phase_results,		/* running, joins the crash test: done */
};
const size_t job_nphases = sizeof(job_phases) / sizeof(job_phases[0]);

#define BESIDE_MAX 4

struct beside {
	const struct phase *p;
	struct jobrun *r;
	pthread_t thread;
	int started;		/* on its thread */
	int deferred;		/* no thread: runs at the join */
	int rc;
};

/* One exec, its time added to the row's step. */
static int run_row(const struct phase *p, struct jobrun *r)
{
	double mark = now_monotonic();
	int rc = p->exec(r);

	if (p->step != PHASE_STEP_NONE) {
		pthread_mutex_lock(&r->lock);
		*(double *)((char *)&r->steps + p->step) += lap(&mark);
		pthread_mutex_unlock(&r->lock);
	}
	return rc;
}

static void *beside_main(void *arg)
{
	struct beside *b = arg;

	b->rc = run_row(b->p, b->r);
	return NULL;
}

/* Waits for every beside row; a deferred one runs now when run_deferred.
 * PHASE_STOP if one failed. */
static int join_all(struct beside *b, size_t n, struct jobrun *r,
		    int run_deferred)
{
	int rc = PHASE_NEXT;

	for (size_t i = 0; i < n; i++) {
		if (b[i].started)
			pthread_join(b[i].thread, NULL);
		else if (b[i].deferred && run_deferred)
			b[i].rc = run_row(b[i].p, r);
		else
			continue;
		if (b[i].rc < 0)
			rc = PHASE_STOP;
	}
	return rc;
}

int phases_run(const struct phase *const *table, size_t n, struct jobrun *r,
	       int (*advance_fn)(struct jobrun *, const char *, const char *))
{
	const char *state = JS_FETCHING;
	struct beside beside[BESIDE_MAX];
	size_t nbeside = 0;
	int rc = PHASE_NEXT;

	for (size_t i = 0; i < n && rc == PHASE_NEXT; i++) {
		const struct phase *p = table[i];

		if (p->wants != NULL && !p->wants(r))
			continue;
		if (*r->cancel) {
			rc = PHASE_STOP;
			break;
		}
		if (strcmp(p->state, state) != 0) {
			if (!advance_fn(r, state, p->state)) {
				rc = PHASE_STOP;
				break;
			}
			state = p->state;
		}
		if (p->flags & PHASE_JOIN) {
			rc = join_all(beside, nbeside, r, 1);
			nbeside = 0;
			if (rc < 0)
				break;
		}
		if ((p->flags & PHASE_BESIDE) && nbeside < BESIDE_MAX) {
			struct beside *b = &beside[nbeside++];

			*b = (struct beside){ .p = p, .r = r, .rc = PHASE_NEXT };
			b->started = pthread_create(&b->thread, NULL,
						    beside_main, b) == 0;
			b->deferred = !b->started;
			continue;
		}
		rc = run_row(p, r);
	}
	/* Rows still beside: joined; the deferred ones run only when
	 * nothing failed. */
	if (nbeside > 0 && join_all(beside, nbeside, r, rc >= 0) < 0)
		rc = PHASE_STOP;
	return rc;
}
