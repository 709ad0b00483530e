/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sched.c - owns the worker threads. A worker claims the oldest queued job
 * and runs the job's phase table (phases.c) for it: fetching -> (building
 * ->) booting -> running -> done, or an infra error (fetch failed, unusable
 * artifact, boot timeout, kernel panic, truncated agent output, libvirt
 * error), which the store retries up to the configured attempts. A test
 * failure is only ever what a complete KTAP report says; everything else
 * is infrastructure.
 *
 * [jobs] workers is the number of guests at once: each boot holds one of
 * that many slots (slots.c) from the domain's creation to its outcome.
 * There are more worker threads than slots, so that a job's fetch,
 * initramfs and disks are made while other jobs' guests run, and a job's
 * suite boot and its crash boots run side by side: the host is never
 * waiting for the host's own steps while there is a guest to run.
 *
 * A job rcgated builds (artifact kind source or git) is claimed only by
 * one of BUILD_WORKERS build workers, and a kernel CI posted only by a
 * guest worker: a build that hangs, or waits for the build budget, holds
 * no guest worker, and posted kernels keep flowing beside it. A
 * bisection's steps and revert checks are also claimed by the
 * BISECT_WORKERS bisection workers, which take nothing else: a step
 * never waits for a review build to end and boot. A rerun
 * that boots the image its job built builds nothing, and any worker
 * takes it (store_jobs.c). A built kernel's boots take guest slots like
 * any other (slots.c).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "job_internal.h"

#include "base/base.h"
#include "store/store.h"
#include "guests/guests.h"
#include "job/job.h"

struct worker {
	pthread_t thread;
	unsigned index;
	enum claim_kind claims;		/* CLAIM_BUILT: a build worker,
					 * CLAIM_BISECT: the bisection's */
	_Atomic int64_t job_id;		/* 0 when idle */
	atomic_int cancel;		/* set by the monitor, sched_stop, or
					 * the job's own failed boot */
};

struct sched_context sched_ctx;
char sched_guest_prefix[32] = "rcgate-";
atomic_int sched_stopping;
atomic_uint sched_guests_running;
static struct worker workers[MAX_WORKERS];
static unsigned nworkers;
static pthread_t monitor_thread;
static int monitor_started;
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond = PTHREAD_COND_INITIALIZER;
/* The one store connection of the idle workers' claims and the monitor
 * (each connection costs about 0.3 MiB: bench/README.md); a claimed job
 * runs on a connection of its own. */
static struct store *claim_st;
static pthread_mutex_t claim_lock = PTHREAD_MUTEX_INITIALIZER;
/* Claims in order: equal boots get a slot in the order of their jobs. */
static atomic_uint_fast64_t claim_seq;

unsigned sched_running(void)
{
	return atomic_load(&sched_guests_running);
}

int sched_job_active(int64_t id)
{
	for (unsigned i = 0; id != 0 && i < nworkers; i++)
		if (atomic_load(&workers[i].job_id) == id)
			return 1;
	return 0;
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
	if (!atomic_load(&sched_stopping))
		pthread_cond_timedwait(&wake_cond, &wake_lock, &ts);
	pthread_mutex_unlock(&wake_lock);
}

/* One attempt of one job: its context, the phase table, the clean-up. */
static void run_job(struct store *st, struct worker *w, const struct job *job)
{
	struct jobrun r = { .st = st, .cancel = &w->cancel, .worker = w->index,
			    .job = job };
	double started = 0;
	char err[1024];

	pthread_mutex_init(&r.lock, NULL);
	pthread_mutex_init(&r.stage_lock, NULL);
	r.place.index = -1;
	r.step = job->bisection_id != 0;
	/* Its boots' order among equals: the crash chain, then the suite. */
	r.prio = atomic_fetch_add(&claim_seq, 1) * 2;
	r.target = target_find(job->target);
	snprintf(r.dir, sizeof(r.dir), "%s/jobs/%lld/%ld",
		 sched_ctx.cfg->state_dir, (long long)job->id, job->attempt);
	if (mkdir_p(r.dir, 0755, err, sizeof(err)) == 0) {
		char lp[PATH_MAX + 16];

		snprintf(lp, sizeof(lp), "%s/" RCGATE_JOB_LOG, r.dir);
		r.log = fopen(lp, "ae");
	}
	jlog(&r, "job %lld attempt %ld: %s on %s (worker %u)", (long long)job->id,
	     job->attempt, job->version, job->target, w->index);
	if (r.target == NULL) {
		infra(&r, "config", "unknown target");
	} else {
		started = now_monotonic();
		/* Stopped by a stop, not failed: sched_stop queues it again
		 * and the next start runs this attempt anew. */
		if (phases_run(job_phases, job_nphases, &r, advance) ==
		    PHASE_STOP && atomic_load(&sched_stopping) && !r.failed)
			jlog(&r, "stopped: daemon shutting down (job resumes as"
			     " attempt %ld at next start)", job->attempt);
		log_steps(&r, now_monotonic() - started);
	}
	remove_disks(&r.disks);
	if (r.nstaged > 0)
		unstage_all(&r);
	hosts_release(&r.place);
	phase_results_free(&r.results[RESULTS_SUITE]);
	phase_results_free(&r.results[RESULTS_CRASH]);
	/* The build's row is r.build_row. */
	r.results[RESULTS_BUILD] = (struct phase_results){ 0 };
	if (r.log != NULL)
		fclose(r.log);
	pthread_mutex_destroy(&r.stage_lock);
	pthread_mutex_destroy(&r.lock);
}

/* Claims the next job for worker W (under the claim lock): 1 with *job
 * set, 0 when there is none, -1 on a store error. */
static int claim(struct worker *w, const char *name, struct job *job,
		 char *err, size_t errlen)
{
	int rc;

	pthread_mutex_lock(&claim_lock);
	rc = store_job_claim_kind(claim_st, name, w->claims, job, err, errlen);
	pthread_mutex_unlock(&claim_lock);
	return rc;
}

/* A worker holds a store connection only while it runs a job: idle, it
 * claims through claim_st. A job whose connection cannot be opened is an
 * infra error of its attempt, recorded through claim_st. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char err[512], name[32];

	snprintf(name, sizeof(name), "worker-%u", w->index);
	while (!atomic_load(&sched_stopping)) {
		struct job job;
		struct store *st;
		int rc = claim(w, name, &job, err, sizeof(err));

		if (rc < 0)
			log_err("%s: %s", name, err);
		if (rc <= 0) {
			idle_wait(1);
			continue;
		}
		st = store_open(sched_ctx.db_path, err, sizeof(err));
		if (st == NULL) {
			char e2[256];
			int requeued = 0;

			log_err("%s: job %lld: %s", name, (long long)job.id, err);
			pthread_mutex_lock(&claim_lock);
			if (store_job_infra(claim_st, job.id, "store", err,
					    sched_ctx.cfg->attempts, &requeued,
					    e2, sizeof(e2)) < 0)
				log_err("%s: %s", name, e2);
			pthread_mutex_unlock(&claim_lock);
			idle_wait(1);
			continue;
		}
		w->cancel = 0;
		atomic_store(&w->job_id, job.id);
		log_info("%s job=%lld version=%s target=%s attempt=%ld", name,
			 (long long)job.id, job.version, job.target, job.attempt);
		run_job(st, w, &job);
		store_close(st);
		atomic_store(&w->job_id, 0);
		if (sched_ctx.job_ended != NULL)
			sched_ctx.job_ended();
	}
	return NULL;
}

/* Notices jobs cancelled through the API and stops their guests. */
static void *monitor_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&sched_stopping)) {
		for (unsigned i = 0; i < nworkers; i++) {
			int64_t id = atomic_load(&workers[i].job_id);
			char state[32];
			int rc = -1;

			if (id != 0) {
				pthread_mutex_lock(&claim_lock);
				rc = store_job_state_get(claim_st, id, state,
							 sizeof(state));
				pthread_mutex_unlock(&claim_lock);
			}
			if (rc == 0 && strcmp(state, JS_CANCELLED) == 0)
				workers[i].cancel = 1;
		}
		idle_wait(1);
	}
	return NULL;
}

int sched_start(const struct sched_context *c, char *err, size_t errlen)
{
	struct store *st;
	int n = 0, failed = 0;
	unsigned nguest;

	sched_ctx = *c;
	snprintf(sched_guest_prefix, sizeof(sched_guest_prefix), "%s",
		 c->guest_prefix);
	st = store_open(sched_ctx.db_path, err, errlen);
	if (st == NULL)
		return -1;
	if (store_requeue_unfinished(st, sched_ctx.cfg->attempts, &n, &failed,
				     err, errlen) < 0) {
		store_close(st);
		return -1;
	}
	claim_st = st;
	if (n > 0)
		log_info("requeued %d unfinished job(s) from a previous run", n);
	if (failed > 0)
		log_warn("%d job(s) ended as infra errors: the daemon had stopped"
			 " unexpectedly during each of their attempts", failed);
	atomic_store(&sched_stopping, 0);
	nguest = slots_reset() * WORKERS_PER_SLOT;
	nworkers = nguest + BUILD_WORKERS + BISECT_WORKERS;
	for (unsigned i = 0; i < nworkers; i++) {
		workers[i].index = i;
		workers[i].claims = i < nguest ? CLAIM_POSTED :
			i < nguest + BUILD_WORKERS ? CLAIM_BUILT : CLAIM_BISECT;
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
	atomic_store(&sched_stopping, 1);
	for (unsigned i = 0; i < nworkers; i++)
		workers[i].cancel = 1;
	sched_kick();
	slots_wake();
	for (unsigned i = 0; i < nworkers; i++)
		pthread_join(workers[i].thread, NULL);
	if (monitor_started)
		pthread_join(monitor_thread, NULL);
	monitor_started = 0;
	if (nworkers > 0 && claim_st != NULL) {
		/* A clean stop costs a job no attempt: what the workers left
		 * unfinished is queued again as it was. */
		char err[256];
		int n = 0, failed = 0;

		if (store_requeue_unfinished(claim_st, 0, &n, &failed, err,
					     sizeof(err)) < 0)
			log_err("requeue at stop: %s", err);
		else if (n > 0)
			log_info("stop: %d unfinished job(s) queued again", n);
	}
	store_close(claim_st);
	claim_st = NULL;
	nworkers = 0;
}
