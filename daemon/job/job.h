/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * job/job.h - running jobs: the workers and the phase table (the files of job/,
 * sharing job_internal.h) and the plan of a batch's end (slotplan.c).
 *
 * The public header of daemon/job/: a section per file. A .c file includes
 * its own folder's headers and those of lower floors only (docs/design.md,
 * tests/layers.sh).
 */
#ifndef RCGATE_JOB_H
#define RCGATE_JOB_H

#include "base/base.h"

/* ---- slotplan.c: who takes a free guest slot at a release's end ---- */
struct plan_slot {		/* one guest slot of a host */
	double free_at;		/* seconds from now its guest should end; <= 0 free */
	double follow_at;	/* a crash chain's second boot: ready then, */
	double follow;		/* this long (0: none) */
};
struct plan_task {		/* one boot to come */
	double own;		/* its expected seconds */
	double gap;		/* then this long until its follow-up is ready, */
	double follow;		/* which takes this long (0: none) */
	double ready;		/* seconds from now it can start; <= 0 now */
};
#define SLOTPLAN_SLOTS_MAX 16
#define SLOTPLAN_TASKS_MAX 32	/* tasks, their follow-ups and the slots' */
/* The index of the task to start on a slot free now, among those ready
 * now: longest (the longest-chain-first choice, ready now) unless another
 * one ends every known boot at least margin seconds sooner. */
unsigned slotplan_pick(const struct plan_slot *slots, unsigned nslots,
		       const struct plan_task *tasks, unsigned ntasks,
		       unsigned longest, double margin);

/* ---- sched.c: the worker pool that runs jobs ---- */
struct guest_host;
struct sched_context {
	const struct config *cfg;
	const char *db_path;
	const char *cache_dir;
	void (*job_ended)(void);	/* a job reached a final state */
	const char *guest_prefix;	/* "rcgate-<instance>-" */
};
/* Requeues what a previous run left unfinished and starts worker threads
 * for the hosts' capacity (hosts_start first) plus a monitor that notices
 * cancelled jobs. */
int sched_start(const struct sched_context *, char *err, size_t errlen);
/* Destroys running guests (their jobs stay unfinished and are requeued at
 * the next start) and joins every thread. */
void sched_stop(void);
/* Wakes idle workers: new jobs were queued. */
void sched_kick(void);
/* Guests running now, for /healthz and /metrics. */
unsigned sched_running(void);
/* 1 while a worker still runs job id: a cancelled job is final in the
 * store at once, but its build or guest (and the worktree it holds) stops
 * up to seconds later. */
int sched_job_active(int64_t id);

#endif /* RCGATE_JOB_H */
