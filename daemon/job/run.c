/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * run.c - owns one attempt's context while its phases run: its log (one
 * time-stamped line each), its infra errors (the first one is recorded and
 * cancels the rest of the attempt), its state changes and its timings.
 */
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "job_internal.h"

#include "base/base.h"
#include "store/store.h"
#include "guests/guests.h"
#include "job/job.h"

/* Seconds since *mark, and moves the mark to now. */
double lap(double *mark)
{
	double now = now_monotonic(), d = now - *mark;

	*mark = now;
	return d;
}

/* The job's own lines (log.c's joblog_write stamps them). */
void jlog(struct jobrun *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	joblog_vwrite(r->log, fmt, ap);
	va_end(ap);
}

/* While rcgated stops, whatever fails was stopped by the stop (a download
 * or a build cancelled, a guest destroyed): nothing is recorded, and
 * sched_stop queues the job again as the same attempt, which the next
 * start resumes (run_job says so in the job log). 1 when that is so. */
static int stopping(struct jobrun *r, const char *kind, const char *message)
{
	if (!atomic_load(&sched_stopping))
		return 0;
	jlog(r, "%s: %s (not recorded: the daemon is stopping)", kind, message);
	return 1;
}

/* An infrastructure failure; retried while attempts last, unless
 * another attempt could only fail the same way (final). The attempt's
 * first failure is the one recorded; it stops the attempt's other boot,
 * whose own ending is then only logged. */
void infra_as(struct jobrun *r, const char *kind, const char *message,
	      int final)
{
	char err[256];
	int requeued = 0, first, rc = 0;

	if (stopping(r, kind, message))
		return;
	jlog(r, "infra error %s: %s", kind, message);
	pthread_mutex_lock(&r->lock);
	first = !r->failed;
	r->failed = 1;
	if (first) {
		*r->cancel = 1;
		rc = store_job_infra(r->st, r->job->id, kind, message,
				     final ? 0 : sched_ctx.cfg->attempts, &requeued,
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

void infra(struct jobrun *r, const char *kind, const char *message)
{
	infra_as(r, kind, message, 0);
}

/* The host failed under the job: an infra error that moves the job to
 * another host. It costs an attempt, but every host may fail once on top
 * of [jobs] attempts before the job gives up. */
void infra_host(struct jobrun *r, const char *message)
{
	char msg[768], err[256];
	int requeued = 0, first, rc = 0;

	snprintf(msg, sizeof(msg), "host %s (%s): %s", r->place.name,
		 r->place.uri, message);
	if (stopping(r, "host_down", msg))
		return;
	jlog(r, "infra error host_down: %s", msg);
	pthread_mutex_lock(&r->lock);
	first = !r->failed;
	r->failed = 1;
	if (first) {
		*r->cancel = 1;
		rc = store_job_infra(r->st, r->job->id, "host_down", msg,
				     sched_ctx.cfg->attempts + (long)hosts_count(),
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

/* Moves the job on; 0 means it was cancelled (or is being shut down). */
int advance(struct jobrun *r, const char *from, const char *to)
{
	char err[256];
	int rc = store_job_transition(r->st, r->job->id, from, to, NULL, err,
				      sizeof(err));

	if (rc < 0)
		log_err("job=%lld: %s", (long long)r->job->id, err);
	if (rc == 1)
		jlog(r, "state %s", to);
	return rc == 1 && !*r->cancel;
}

/* One line per job: the steps named, so an overhead has a name. The
 * disk format counts also the scratch disks a KVM probe's fallback and
 * the crash phases make; define, wait, start, guest and destroy add up
 * over the boots (destroy: only what a boot had to wait for, the power
 * cut before the crash test's second boot), and cpu is the guests'. */
void log_steps(struct jobrun *r, double total)
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

/* A build's progress into the job row: every step, and while compiling
 * at most every 2 s (each write is a commit the API's readers see). */
void build_progress(void *cls, const char *step, long done, long total)
{
	struct jobrun *r = cls;
	double now = now_monotonic();

	if (strcmp(step, r->build_step) == 0 && now - r->build_written < 2)
		return;
	snprintf(r->build_step, sizeof(r->build_step), "%s", step);
	r->build_written = now;
	store_job_build_progress(r->st, r->job->id, step, done, total, NULL,
				 NULL, 0);
}
