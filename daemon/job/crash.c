/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * crash.c - owns the row crash: the crash-consistency test's two boots on
 * a disk of their own, with a power cut between them, beside the suite's
 * boot.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "job_internal.h"

#include "base/base.h"
#include "guests/guests.h"
#include "job/job.h"

/* A word of the agent's durable line: "test=" -> "crash_osync_extend",
 * only [a-z0-9_] and at most len - 1 bytes, else "?". */
static void durable_word(const char *line, size_t linelen, const char *key,
			 char *out, size_t len)
{
	const char *p = memmem(line, linelen, key, strlen(key));
	size_t n = 0;

	snprintf(out, len, "?");
	if (p == NULL)
		return;
	p += strlen(key);
	while (p + n < line + linelen && n + 1 < len &&
	       ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9') ||
		p[n] == '_'))
		n++;
	if (n > 0 && (p + n == line + linelen || p[n] == ' ')) {
		memcpy(out, p, n);
		out[n] = '\0';
	}
}

int crash_durable_parse(const char *text, struct durable *out, int max)
{
	const char *p = text;
	int count = 0;

	while (p != NULL && (p = strstr(p, RCGATE_DURABLE)) != NULL) {
		const char *end = strchr(p, '\n'), *line = p, *q;
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
		long size = -1;
		char *stop;

		p += len;
		/* Only a line of its own: not a quote inside another. */
		if (line != text && line[-1] != '\n')
			continue;
		q = memmem(line, len, RCGATE_DURABLE_SIZE,
			   strlen(RCGATE_DURABLE_SIZE));
		if (q != NULL) {
			q += strlen(RCGATE_DURABLE_SIZE);
			size = strtol(q, &stop, 10);
			if (stop == q || size < 0 || size > RCGATE_CRASH_BYTES ||
			    (stop < line + len && *stop != ' '))
				size = -1;
		}
		if (size < 0)
			continue;
		if (count < max) {
			out[count].size = size;
			durable_word(line, len, " test=", out[count].test,
				     sizeof(out[count].test));
			durable_word(line, len, " fs=", out[count].fs,
				     sizeof(out[count].fs));
		}
		count++;
	}
	return count;
}

/*
 * The promises the agent reported durable before the power cut (a
 * promise short of RCGATE_CRASH_BYTES gets a job log line: the check wants
 * all of them anyway). Returns how many, 0 when none.
 */
static int durable_promises(struct jobrun *r, const char *ktap_path)
{
	char *text = file_read(ktap_path, 1u << 20, NULL, NULL, 0);
	struct durable got[GUEST_MAX_DISKS];
	int n = text != NULL ? crash_durable_parse(text, got, GUEST_MAX_DISKS)
			     : 0;

	for (int i = 0; i < n && i < GUEST_MAX_DISKS; i++)
		if (got[i].size < RCGATE_CRASH_BYTES)
			jlog(r, "%s %s: only %ld of %d bytes promised before the "
			     "power cut", got[i].fs, got[i].test, got[i].size,
			     RCGATE_CRASH_BYTES);
	free(text);
	return n;
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
static int disk_wait_released(const char *path, const atomic_int *cancel,
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

/*
 * The power-cut test (the bug 91562895f803 fixed, and every other
 * promise): on fresh disks, one per promise and filesystem, the agent
 * writes what O_SYNC, O_DSYNC, fdatasync and RWF_DSYNC (AIO, io_uring)
 * promise and says so; we cut power (destroy) at that moment, boot again
 * on the same disks, and the agent checks size and content of each.
 */
static int crash_phase(struct jobrun *r, const char *kernel, const char *initrd,
		       int use_kvm, int timeout_s, struct phase_results *out)
{
	struct disk_set *d = calloc(1, sizeof(*d));
	struct boot_plan plan = { RCGATE_PHASE_CRASH_WRITE, d,
				  RCGATE_KEY_PHASE "=" RCGATE_PHASE_CRASH_WRITE,
				  RCGATE_CRASH_READY, use_kvm, timeout_s };
	char err[512], extra[96], console[PATH_MAX + 32], ktap[PATH_MAX + 32],
		name[64];
	struct guest_times first, second;
	enum guest_outcome outcome;
	double mark = now_monotonic(), gone;
	int rc, promised, ret = -1;

	if (d == NULL) {
		infra(r, "disk", "out of memory");
		return -1;
	}
	if (make_disks(r, d, RCGATE_CRASH_PROMISES, " by the power cut", err,
		       sizeof(err)) < 0) {
		infra(r, "disk", err);
		free(d);
		return -1;
	}
	mark = now_monotonic() - mark;
	pthread_mutex_lock(&r->lock);
	r->steps.disks += mark;
	pthread_mutex_unlock(&r->lock);
	rc = boot(r, kernel, initrd, &plan, &outcome, &first, err, sizeof(err));
	/* The power cut: the guest's destroy began at the ready line; the
	 * second boot may open the disks only once that qemu is gone. */
	mark = now_monotonic();
	/* On a host without our files the lock is on its copy: wait for
	 * the destroy itself. */
	if (!r->place.local ||
	    disk_wait_released(d->path[0], r->cancel, 60) < 0) {
		guest_name(r, plan.phase, name, sizeof(name));
		guest_wait_destroyed(r->place.gh, name);
	}
	gone = now_monotonic() - mark;
	pthread_mutex_lock(&r->lock);
	r->steps.destroy += gone;
	pthread_mutex_unlock(&r->lock);
	if (boot_outcome(r, rc, outcome, plan.phase, err) < 0)
		goto out;
	phase_paths(r, plan.phase, console, ktap, sizeof(console));
	promised = durable_promises(r, ktap);
	if (promised == 0) {
		infra(r, "agent_output", "crash-write phase reported no durable size");
		goto out;
	}
	jlog(r, "power cut after %d promises on %u disks (its qemu gone %.2f s "
	     "later)", promised, d->n, gone);
	/* Each promise writes RCGATE_CRASH_BYTES; fewer durable bytes than
	 * that is itself the finding, so the check always wants all. */
	snprintf(extra, sizeof(extra), RCGATE_KEY_PHASE "="
		 RCGATE_PHASE_CRASH_VERIFY " " RCGATE_KEY_EXPECT "=%d",
		 RCGATE_CRASH_BYTES);
	plan = (struct boot_plan){ RCGATE_PHASE_CRASH_VERIFY, d, extra,
				   RCGATE_MARKER, use_kvm, timeout_s };
	rc = boot(r, kernel, initrd, &plan, &outcome, &second, err, sizeof(err));
	if (boot_outcome(r, rc, outcome, plan.phase, err) < 0)
		goto out;
	/* The chain's length for the slot order: both boots and what lies
	 * between them. */
	length_learn(r->target, BOOT_CRASH_WRITE,
			   second.decided_at - first.running_at);
	phase_paths(r, plan.phase, console, ktap, sizeof(console));
	if (collect(r, ktap, out) == 0)
		ret = 0;
out:
	remove_disks(d);
	free(d);
	return ret;
}

/* Not for a bisection step, nor for a job that runs some tests only (a
 * rerun: engine.c reruns the whole suite, crash boots too, when a crash
 * test failed). */
static int crash_wanted(const struct jobrun *r)
{
	return sched_ctx.cfg->crash_test && !r->step &&
	       r->job->only_tests[0] == '\0';
}

static int crash_exec(struct jobrun *r)
{
	return crash_phase(r, r->kernel, r->initrd, r->accel, r->timeout_s,
			   &r->results[RESULTS_CRASH]) < 0 ? PHASE_STOP
							   : PHASE_NEXT;
}

const struct phase phase_crash = {
	.name = "crash", .state = JS_RUNNING, .wants = crash_wanted,
	.exec = crash_exec, .step = PHASE_STEP_NONE, .flags = PHASE_BESIDE,
};
