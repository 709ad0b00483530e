/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * boot.c - owns a job's guests: the rows place (the host it runs on,
 * hosts.c), accel (KVM or TCG, probed once per target with the job's own
 * boot) and suite (the suite's boot), and every boot's way through the
 * guest slots (slots.c) and libvirt (guest.c), on a host with our files
 * or one that gets them as volumes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job_internal.h"

#include "base/base.h"
#include "store/store.h"
#include "guests/guests.h"
#include "job/job.h"

static pthread_mutex_t kvm_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * A host without the daemon's files gets each file a boot names as a
 * volume, uploaded once per attempt (the crash test's second boot finds
 * its disk as the first left it). remote gets the path on the host.
 */
static int stage_file(struct jobrun *r, const char *local, char *remote,
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
			 sched_guest_prefix, (long long)r->job->id, r->job->attempt,
			 base);
		if (guest_vol_upload(r->place.gh, r->place.pool, sf->volume,
				     local, sf->remote, sizeof(sf->remote),
				     r->cancel, err, errlen) < 0) {
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

void unstage_all(struct jobrun *r)
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
static void host_check(struct jobrun *r, char *err, size_t errlen)
{
	char why[256];
	size_t len = strlen(err);

	if (r->place.local || hosts_usable(&r->place, why, sizeof(why)))
		return;
	for (int i = 0; i < 20 && strcmp(why, GUEST_WHY_NOT_ALIVE) == 0; i++) {
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

static int kvm_verdict_path(char *path, size_t len, const char *target)
{
	return snprintf(path, len, "%s/kvm/%s", sched_ctx.cfg->state_dir, target) <
	       (int)len ? 0 : -1;
}

/* -1 unknown (probe needed), 0 TCG, 1 KVM. */
static int accel_decision(const struct target *t)
{
	char path[PATH_MAX];
	char *v;
	int rc = -1;

	if (strcmp(sched_ctx.cfg->accel, "tcg") == 0)
		return 0;
	if (strcmp(sched_ctx.cfg->accel, "kvm") == 0)
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

	snprintf(dir, sizeof(dir), "%s/kvm", sched_ctx.cfg->state_dir);
	if (kvm_verdict_path(path, sizeof(path), t->name) < 0 ||
	    mkdir_p(dir, 0755, NULL, 0) < 0)
		return;
	pthread_mutex_lock(&kvm_lock);
	file_write_atomic(path, v, strlen(v), NULL, 0);
	pthread_mutex_unlock(&kvm_lock);
	log_info("accel target=%s verdict=%s", t->name, kvm_works ? "kvm" : "tcg");
}

/* One boot of the job. phase names its files (console-<phase>.log,
 * <phase>.ktap; the main suite keeps console.log and results.ktap). */
void phase_paths(struct jobrun *r, const char *phase, char *console,
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

void guest_name(const struct jobrun *r, const char *phase, char *name,
		size_t len)
{
	snprintf(name, len, "%s%lld-%ld%s%s", sched_guest_prefix,
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
static int boot_guest(struct jobrun *r, struct guest_spec *specp,
		      const struct boot_plan *plan, const char *name,
		      const char *cmdline, enum guest_outcome *outcome,
		      struct guest_times *times, char *err, size_t errlen);

int boot(struct jobrun *r, const char *kernel, const char *initrd,
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
	if (sched_ctx.cfg->kernel_args[0] != '\0')
		strbuf_printf(&cb, " %s", sched_ctx.cfg->kernel_args);
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
	spec.memory_mib = (unsigned)sched_ctx.cfg->guest_memory;
	spec.vcpus = (unsigned)sched_ctx.cfg->guest_vcpus;
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
				if (*r->cancel) {	/* stopped, not failed */
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
static int boot_guest(struct jobrun *r, struct guest_spec *specp,
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
	const char *due;
	int rc, planned = 0, completed;

	seq = r->prio + (plan->phase == NULL);
	due = slot_due(r->job);
	waited = now_monotonic();
	if (slot_acquire(host, 0, r->target, plan->phase, due,
			 seq, r->cancel, NULL) < 0) {
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
	if (slot_acquire(host, 1, r->target, plan->phase, due,
			 seq, r->cancel, &planned) < 0) {
		guest_discard(g);
		slot_release(host, 0, seq, 0);
		*outcome = GUEST_CANCELLED;
		return 0;
	}
	waited += now_monotonic() - mark;
	/* Running, it holds a run slot: its domain slot goes to the next
	 * boot, whose domain is then made while this one runs. */
	slot_release(host, 0, seq, -1);
	if (planned)
		jlog(r, "guest %s starts before the longest waiting chain: it"
		     " ends the host's last boots sooner (slotplan.c)", name);
	atomic_fetch_add(&sched_guests_running, 1);
	hosts_guest_delta(&r->place, 1);
	rc = guest_start_wait(g, plan->marker, plan->timeout_s, r->cancel,
			      outcome, times, err, errlen);
	hosts_guest_delta(&r->place, -1);
	atomic_fetch_sub(&sched_guests_running, 1);
	completed = rc == 0 && *outcome == GUEST_COMPLETED;
	/* A crash-write that completed has its crash-verify to come: the
	 * plan of the end counts it from now on. */
	slot_release(host, 1, seq, completed && kind == BOOT_CRASH_WRITE);
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
int boot_outcome(struct jobrun *r, int rc, enum guest_outcome outcome,
		 const char *phase, const char *err)
{
	char console[PATH_MAX + 32], ktap[PATH_MAX + 32], *reason;
	const char *kind, *message;

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
		jlog(r, "stopped: %s", atomic_load(&sched_stopping)
		     ? "daemon shutting down (job resumes at next start)"
		     : sibling ? "another boot of this attempt failed"
		     : "cancelled");
		return -1;
	}
	phase_paths(r, phase, console, ktap, sizeof(console));
	reason = agent_infra_reason(ktap);
	boot_failure_kind(outcome, reason,
			  reason == NULL && console_has(console, "Kernel panic"),
			  &kind, &message);
	infra(r, kind, message);
	free(reason);
	return -1;
}

/*
 * Chooses the host the attempt runs on (hosts.c), waiting while every
 * host that runs the target is down; records it on the job. -1 when it
 * cannot run anywhere (recorded) or was cancelled.
 */
static int place_job(struct jobrun *r, char *err, size_t errlen)
{
	int rc, waited = 0;

	while ((rc = hosts_place(r->target->name, &r->place, err, errlen)) == 0) {
		if (*r->cancel || atomic_load(&sched_stopping))
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

static int place_exec(struct jobrun *r)
{
	char err[1024];

	if (place_job(r, err, sizeof(err)) < 0)
		return PHASE_STOP;
	store_job_note(r->st, r->job->id, NULL, r->kver, NULL, 0);
	return PHASE_NEXT;
}

const struct phase phase_place = {
	.name = "place", .state = JS_BOOTING, .exec = place_exec,
	.step = PHASE_STEP_NONE,
};

/* The suite's boot plan: a job with only_tests runs only those (a
 * bisection step the tests it judges by, a rerun the failures it confirms:
 * engine.c rerun_only; no other job has them); else [jobs] suite = smoke
 * runs the agent's smoke group, exer the exerciser's rows alone, deep the
 * whole suite with the exerciser's deep seed set. */
static void suite_plan(struct jobrun *r, struct boot_plan *plan, char *only,
		       size_t len)
{
	const char *suite = sched_ctx.cfg->suite;
	/* A deep run's reruns and bisection steps run the same seeds. */
	const char *deep = strcmp(suite, "deep") == 0 ?
				   " " RCGATE_KEY_EXER "=" RCGATE_EXER_DEEP : "";

	only[0] = '\0';
	if (r->job->only_tests[0] != '\0')
		snprintf(only, len, RCGATE_KEY_ONLY "=%s%s", r->job->only_tests,
			 deep);
	else if (strcmp(suite, "smoke") == 0)
		snprintf(only, len, RCGATE_KEY_ONLY "=" RCGATE_ONLY_SMOKE);
	else if (strcmp(suite, "exer") == 0)
		snprintf(only, len, RCGATE_KEY_ONLY "=" RCGATE_ONLY_EXER);
	else
		snprintf(only, len, "%s", deep + (deep[0] != '\0'));
	*plan = (struct boot_plan){ NULL, &r->disks, only, RCGATE_MARKER,
				    r->accel, r->timeout_s };
}

/*
 * KVM or TCG. A configured host says which targets it runs under KVM; the
 * implicit one follows [jobs] accel, and probes: the probe is this job's
 * own suite boot under KVM with a short timeout, whose results count if
 * it completes.
 */
static int accel_exec(struct jobrun *r)
{
	char err[1024] = "", only[1100];
	struct boot_plan plan;
	enum guest_outcome outcome;
	struct guest_times times;
	double mark;

	r->timeout_s = (int)((double)sched_ctx.cfg->job_timeout *
			     r->target->timeout_factor);
	r->accel = r->place.accel >= 0 ? r->place.accel
				       : accel_decision(r->target);
	if (r->accel < 0) {
		r->accel = 1;
		suite_plan(r, &plan, only, sizeof(only));
		plan.timeout_s = (int)sched_ctx.cfg->kvm_probe_timeout;
		if (boot(r, r->kernel, r->initrd, &plan, &outcome, &times, err,
			 sizeof(err)) == 0 && outcome == GUEST_COMPLETED) {
			accel_record(r->target, 1);
			r->suite_booted = 1;
			r->suite_seconds = times.decided_s;
		} else if (*r->cancel) {
			return PHASE_STOP;
		} else {
			jlog(r, "KVM probe failed (%s): using TCG from now on",
			     err[0] ? err : "guest did not complete");
			accel_record(r->target, 0);
			r->accel = 0;
			remove_disks(&r->disks);
			mark = now_monotonic();
			if (make_disks(r, &r->disks, 1, "", err,
				       sizeof(err)) < 0) {
				infra(r, "disk", err);
				return PHASE_STOP;
			}
			pthread_mutex_lock(&r->lock);
			r->steps.disks += lap(&mark);
			pthread_mutex_unlock(&r->lock);
		}
	}
	store_job_note(r->st, r->job->id, r->accel ? "kvm" : "tcg", NULL, NULL,
		       0);
	return PHASE_NEXT;
}

const struct phase phase_accel = {
	.name = "accel", .state = JS_RUNNING, .exec = accel_exec,
	.step = PHASE_STEP_NONE,
};

/* The suite's boot (unless the KVM probe was it), its results, and the
 * kernel's identity. */
static int suite_exec(struct jobrun *r)
{
	char err[1024] = "", only[1100], ktap[PATH_MAX + 32],
		console[PATH_MAX + 32];
	struct boot_plan plan;
	enum guest_outcome outcome;
	struct guest_times times = { 0 };
	int rc, ok;

	if (!r->suite_booted) {
		suite_plan(r, &plan, only, sizeof(only));
		rc = boot(r, r->kernel, r->initrd, &plan, &outcome, &times, err,
			  sizeof(err));
		r->suite_booted = boot_outcome(r, rc, outcome, NULL, err) == 0;
		r->suite_seconds = times.decided_s;
	}
	/* The scratch disks are large and worthless after the run. */
	remove_disks(&r->disks);
	if (!r->suite_booted)
		return PHASE_STOP;
	phase_paths(r, NULL, console, ktap, sizeof(console));
	ok = collect(r, ktap, &r->results[RESULTS_SUITE]) == 0 &&
		/* A step's kernel is whatever version its commit says: the
		 * rc's version is not expected. */
		(r->step ||
		 kernel_identity(r, &r->results[RESULTS_SUITE].report) == 0);
	return ok ? PHASE_NEXT : PHASE_STOP;
}

const struct phase phase_suite = {
	.name = "suite", .state = JS_RUNNING, .exec = suite_exec,
	.step = PHASE_STEP_NONE,
};
