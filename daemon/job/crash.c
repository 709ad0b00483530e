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

/* The crash-consistency test (the bug 91562895f803 fixed): the agent
 * extends a file with O_SYNC|O_DIRECT writes on a fresh ext4 disk and says
 * how much is durable; we cut power (destroy) at that moment, boot again on
 * the same disk, and the agent checks size and content. */
static int crash_phase(struct jobrun *r, const char *kernel, const char *initrd,
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
	    disk_wait_released(d.path[0], r->cancel, 60) < 0) {
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

static int crash_wanted(const struct jobrun *r)
{
	return sched_ctx.cfg->crash_test && !r->step;
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
