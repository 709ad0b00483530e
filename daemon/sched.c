/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sched.c - owns the worker threads. Each worker claims the oldest queued
 * job and walks it through fetching -> booting -> running -> done, or ends
 * it as an infra error (fetch failed, unusable artifact, boot timeout,
 * kernel panic, truncated agent output, libvirt error), which the store
 * retries up to the configured attempts. A test failure is only ever what
 * a complete KTAP report says; everything else is infrastructure.
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
#include "guest.h"
#include "initramfs.h"
#include "ktap.h"

#define CHANNEL_NAME "org.rcgate.results"
#define MAX_WORKERS 64

struct worker {
	pthread_t thread;
	unsigned index;
	_Atomic int64_t job_id;		/* 0 when idle */
	volatile int cancel;		/* set by the monitor or sched_stop */
};

static struct sched_context sc;
static struct worker workers[MAX_WORKERS];
static unsigned nworkers;
static pthread_t monitor_thread;
static int monitor_started;
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond = PTHREAD_COND_INITIALIZER;
static atomic_int stopping;
static atomic_uint running_guests;
static pthread_mutex_t kvm_lock = PTHREAD_MUTEX_INITIALIZER;

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

/* What one attempt of one job needs while it runs. */
struct run {
	struct store *st;
	struct worker *w;
	const struct job *job;
	const struct target *target;
	char dir[PATH_MAX];
	FILE *log;
};

static void jlog(struct run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void jlog(struct run *r, const char *fmt, ...)
{
	char ts[32];
	va_list ap;

	if (r->log == NULL)
		return;
	now_iso8601(ts);
	fprintf(r->log, "%s ", ts);
	va_start(ap, fmt);
	vfprintf(r->log, fmt, ap);
	va_end(ap);
	fputc('\n', r->log);
	fflush(r->log);
}

static void infra(struct run *r, const char *kind, const char *message)
{
	char err[256];
	int requeued = 0;

	jlog(r, "infra error %s: %s", kind, message);
	log_warn("job=%lld attempt=%ld target=%s infra_error=%s msg=%s",
		 (long long)r->job->id, r->job->attempt, r->job->target, kind,
		 message);
	if (store_job_infra(r->st, r->job->id, kind, message, sc.cfg->attempts,
			    &requeued, err, sizeof(err)) < 0)
		log_err("job=%lld: %s", (long long)r->job->id, err);
	else if (requeued)
		sched_kick();
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

static const char *mkfs_path(void)
{
	static const char *const candidates[] = {
		"/usr/sbin/mkfs.ext4", "/sbin/mkfs.ext4", NULL
	};

	for (size_t i = 0; candidates[i] != NULL; i++) {
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	}
	return "mkfs.ext4";
}

static int make_disk(struct run *r, const char *path, char *err, size_t errlen)
{
	char out[1024];
	char *argv[] = { (char *)mkfs_path(), "-q", "-F", "-E",
			 "lazy_itable_init=1,lazy_journal_init=1",
			 (char *)path, NULL };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int rc;

	if (fd < 0) {
		errf(err, errlen, "create %s: %s", path, strerror(errno));
		return -1;
	}
	if (ftruncate(fd, (off_t)sc.cfg->disk_size << 20) < 0) {
		errf(err, errlen, "size %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	rc = run_argv(argv, out, sizeof(out), err, errlen);
	if (rc != 0) {
		if (rc > 0)
			errf(err, errlen, "mkfs.ext4 exited %d: %s", rc, out);
		return -1;
	}
	jlog(r, "disk %s: %ld MiB ext4", path, sc.cfg->disk_size);
	return 0;
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
	size_t used;
	struct initramfs_request req = { 0 };
	struct initramfs_result res = { 0 };
	char *cached;

	snprintf(agent, sizeof(agent), "%s/rcgate-agent-%s", sc.cfg->agent_dir,
		 r->target->name);
	if (sha256_file(agent, agent_sha, err, errlen) < 0)
		return -1;
	used = (size_t)snprintf(keysrc, sizeof(keysrc), "%s %s %s %s %s",
				r->job->kind, r->job->sha256,
				r->job->modules_sha256, agent_sha,
				r->target->name);
	for (const char *const *m = r->target->modules; *m != NULL; m++)
		used += (size_t)snprintf(keysrc + used, sizeof(keysrc) - used,
					 " %s", *m);
	sha256_hex(keysrc, strlen(keysrc), key);
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
	req.modules = r->target->modules;
	req.kernel_out = tk;
	req.initrd_out = ti;
	if (initramfs_build(&req, &res, err, errlen) < 0) {
		rm_rf(tmp);
		return -1;
	}
	{
		char line[2048];
		size_t u = 0;

		line[0] = '\0';
		for (size_t i = 0; i < res.nloaded; i++)
			u += (size_t)snprintf(line + u, sizeof(line) - u, " %s",
					      res.loaded[i]);
		jlog(r, "initramfs %s built: kernel %s, modules:%s", key,
		     res.kver, line);
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

/* The agent's own "# rcgate-infra:" reason, if its output has one. */
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

/* Parses the agent's KTAP and stores the leaf results. */
static void finish(struct run *r, const char *ktap_path, double seconds)
{
	char err[512];
	size_t len = 0;
	char *text = file_read(ktap_path, 16u << 20, &len, err, sizeof(err));
	struct ktap_report rep;
	struct result_row *rows;
	size_t n = 0;
	int rc;

	if (text == NULL) {
		infra(r, "agent_output", err);
		return;
	}
	rc = ktap_parse(text, len, &rep);
	free(text);
	if (rep.infra_reason != NULL) {
		infra(r, "agent", rep.infra_reason);
		ktap_report_free(&rep);
		return;
	}
	if (rc < 0 || !rep.complete) {
		snprintf(err, sizeof(err), "agent output incomplete: %s",
			 rep.error != NULL ? rep.error : "no completeness marker");
		infra(r, "agent_output", err);
		ktap_report_free(&rep);
		return;
	}
	rows = calloc(rep.nresults + 1, sizeof(*rows));
	if (rows == NULL) {
		infra(r, "internal", "out of memory");
		ktap_report_free(&rep);
		return;
	}
	for (size_t i = 0; i < rep.nresults; i++) {
		const struct ktap_result *res = &rep.results[i];

		if (res->is_suite)
			continue;
		rows[n].test = res->path;
		rows[n].status = status_word(res->status);
		rows[n].diagnostic = res->diagnostic != NULL ? res->diagnostic
							     : res->directive_reason;
		n++;
	}
	if (store_job_done(r->st, r->job->id, rows, n, seconds, err,
			   sizeof(err)) < 0)
		log_err("job=%lld store results: %s", (long long)r->job->id, err);
	jlog(r, "done: %d pass, %d fail, %d skip in %.1f s",
	     ktap_count(&rep, KTAP_PASS), ktap_count(&rep, KTAP_FAIL),
	     ktap_count(&rep, KTAP_SKIP), seconds);
	log_info("job=%lld target=%s version=%s done pass=%d fail=%d skip=%d"
		 " seconds=%.1f", (long long)r->job->id, r->job->target,
		 r->job->version, ktap_count(&rep, KTAP_PASS),
		 ktap_count(&rep, KTAP_FAIL), ktap_count(&rep, KTAP_SKIP), seconds);
	free(rows);
	ktap_report_free(&rep);
}

static int boot(struct run *r, const char *kernel, const char *initrd,
		const char *disk, int use_kvm, int timeout_s,
		enum guest_outcome *outcome, double *seconds, char *err,
		size_t errlen)
{
	char name[64], cmdline[256], console[PATH_MAX + 16],
		channel[PATH_MAX + 16], tag[64];
	struct guest_spec spec = { 0 };
	int rc;

	snprintf(name, sizeof(name), "rcgate-%lld-%ld", (long long)r->job->id,
		 r->job->attempt);
	snprintf(cmdline, sizeof(cmdline),
		 "console=%s panic=-1 rcgate.port=%s rcgate.disk=/dev/vda"
		 " rcgate.fs=ext4", r->target->console, CHANNEL_NAME);
	snprintf(console, sizeof(console), "%s/console.log", r->dir);
	snprintf(channel, sizeof(channel), "%s/results.ktap", r->dir);
	snprintf(tag, sizeof(tag), "job=%lld attempt=%ld", (long long)r->job->id,
		 r->job->attempt);
	spec.name = name;
	spec.arch = r->target->arch;
	spec.emulator = r->target->emulator;
	spec.machine = r->target->machine;
	spec.cpu = r->target->cpu;
	spec.use_kvm = use_kvm;
	spec.memory_mib = (unsigned)sc.cfg->guest_memory;
	spec.vcpus = 1;
	spec.kernel = kernel;
	spec.initrd = initrd;
	spec.cmdline = cmdline;
	spec.disks[0] = disk;
	spec.ndisks = 1;
	spec.virtio_mmio = r->target->virtio_mmio;
	spec.console_log = console;
	spec.channel_log = channel;
	spec.channel_name = CHANNEL_NAME;
	spec.job_tag = tag;
	jlog(r, "boot %s accel=%s timeout=%d s cmdline=\"%s\"", name,
	     use_kvm ? "kvm" : "tcg", timeout_s, cmdline);
	atomic_fetch_add(&running_guests, 1);
	rc = guest_run(sc.host, &spec, RCGATE_MARKER, timeout_s, &r->w->cancel,
		       outcome, seconds, err, errlen);
	atomic_fetch_sub(&running_guests, 1);
	if (rc == 0)
		jlog(r, "guest %s after %.1f s", guest_outcome_name(*outcome),
		     *seconds);
	return rc;
}

static void run_job(struct store *st, struct worker *w, const struct job *job)
{
	struct run r = { .st = st, .w = w, .job = job };
	char err[1024], artifact[PATH_MAX], modules[PATH_MAX], kernel[PATH_MAX],
		initrd[PATH_MAX],
		kver[128], disk[PATH_MAX + 16], console[PATH_MAX + 16],
		ktap[PATH_MAX + 16], adir[PATH_MAX];
	enum guest_outcome outcome;
	double seconds = 0;
	int accel, timeout_s, booted = 0;

	r.target = target_find(job->target);
	snprintf(r.dir, sizeof(r.dir), "%s/jobs/%lld/%ld", sc.cfg->state_dir,
		 (long long)job->id, job->attempt);
	if (mkdir_p(r.dir, 0755, err, sizeof(err)) == 0) {
		char lp[PATH_MAX + 16];

		snprintf(lp, sizeof(lp), "%s/job.log", r.dir);
		r.log = fopen(lp, "ae");
	}
	jlog(&r, "job %lld attempt %ld: %s on %s (worker %u)", (long long)job->id,
	     job->attempt, job->version, job->target, w->index);
	if (r.target == NULL) {
		infra(&r, "config", "unknown target");
		goto out;
	}
	snprintf(adir, sizeof(adir), "%s/artifacts", sc.cache_dir);
	if (mkdir_p(adir, 0755, err, sizeof(err)) < 0 ||
	    fetch_artifact(job->url, job->sha256, adir,
			   sc.cfg->max_artifact_mb << 20, artifact,
			   sizeof(artifact), r.log, err, sizeof(err)) < 0) {
		infra(&r, "fetch", err);
		goto out;
	}
	if (job->modules_url[0] != '\0' &&
	    fetch_artifact(job->modules_url, job->modules_sha256, adir,
			   sc.cfg->max_artifact_mb << 20, modules,
			   sizeof(modules), r.log, err, sizeof(err)) < 0) {
		infra(&r, "fetch", err);
		goto out;
	}
	if (!advance(&r, "fetching", "booting"))
		goto out;
	if (prepare_boot(&r, artifact, job->modules_url[0] ? modules : NULL,
			 kernel, initrd, sizeof(kernel), kver,
			 sizeof(kver), err, sizeof(err)) < 0) {
		infra(&r, "artifact", err);
		goto out;
	}
	snprintf(disk, sizeof(disk), "%s/disk.img", r.dir);
	if (make_disk(&r, disk, err, sizeof(err)) < 0) {
		infra(&r, "disk", err);
		goto out;
	}
	store_job_note(st, job->id, NULL, kver, NULL, 0);
	if (!advance(&r, "booting", "running"))
		goto out;
	timeout_s = (int)((double)sc.cfg->job_timeout * r.target->timeout_factor);
	accel = accel_decision(r.target);
	if (accel < 0) {
		/* The probe is this job's own boot under KVM with a short
		 * timeout: if it completes, its results count. */
		if (boot(&r, kernel, initrd, disk, 1,
			 (int)sc.cfg->kvm_probe_timeout, &outcome, &seconds, err,
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
			if (make_disk(&r, disk, err, sizeof(err)) < 0) {
				infra(&r, "disk", err);
				goto out;
			}
		}
	}
	store_job_note(st, job->id, accel ? "kvm" : "tcg", NULL, NULL, 0);
	if (!booted &&
	    boot(&r, kernel, initrd, disk, accel, timeout_s, &outcome, &seconds,
		 err, sizeof(err)) < 0) {
		infra(&r, "libvirt", err);
		goto out;
	}
	snprintf(console, sizeof(console), "%s/console.log", r.dir);
	snprintf(ktap, sizeof(ktap), "%s/results.ktap", r.dir);
	switch (outcome) {
	case GUEST_COMPLETED:
		finish(&r, ktap, seconds);
		break;
	case GUEST_CANCELLED:
		jlog(&r, "stopped: %s", atomic_load(&stopping)
		     ? "daemon shutting down (job resumes at next start)"
		     : "cancelled");
		break;
	case GUEST_TIMEOUT:
	case GUEST_STOPPED: {
		char *reason = agent_infra_reason(ktap);

		if (reason != NULL) {
			infra(&r, "agent", reason);
			free(reason);
			break;
		}
		if (outcome == GUEST_STOPPED) {
			if (console_has(console, "Kernel panic"))
				infra(&r, "kernel_panic", "kernel panicked (see console log)");
			else
				infra(&r, "agent_output", "guest stopped before the agent"
				      " reported completion");
			break;
		}
		if (console_has(console, "Kernel panic"))
			infra(&r, "kernel_panic", "kernel panicked (see console log);"
			      " guest destroyed at the timeout");
		else
			infra(&r, "boot_timeout", "no complete result before the"
			      " timeout; guest destroyed");
		break;
	}
	}
	/* The scratch disk is large and worthless after the run. */
	unlink(disk);
out:
	if (r.log != NULL)
		fclose(r.log);
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
		if (engine_release_settled(st, sc.cfg, sc.base_url, job.release_id,
					   err, sizeof(err)) < 0)
			log_err("release analysis (job %lld): %s",
				(long long)job.id, err);
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
			    strcmp(state, "cancelled") == 0)
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
	int n = 0, orphans = 0;

	sc = *c;
	st = store_open(sc.db_path, err, errlen);
	if (st == NULL)
		return -1;
	if (store_requeue_unfinished(st, &n, err, errlen) < 0) {
		store_close(st);
		return -1;
	}
	{
		/* Releases whose last job ended just before a crash. */
		json_t *todo = store_rows(st, Q_RELEASES_UNANALYSED, err, errlen, "");
		size_t i;
		json_t *row;

		json_array_foreach(todo, i, row) {
			char e2[512];

			if (engine_release_settled(st, sc.cfg, sc.base_url,
					json_integer_value(json_object_get(row, "id")),
					e2, sizeof(e2)) < 0)
				log_err("release analysis: %s", e2);
		}
		json_decref(todo);
	}
	store_close(st);
	if (n > 0)
		log_info("requeued %d unfinished job(s) from a previous run", n);
	if (guest_destroy_orphans(sc.host, "rcgate-", &orphans, err, errlen) < 0)
		return -1;
	if (orphans > 0)
		log_info("destroyed %d orphaned guest(s)", orphans);
	atomic_store(&stopping, 0);
	nworkers = (unsigned)sc.cfg->workers;
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
	for (unsigned i = 0; i < nworkers; i++)
		pthread_join(workers[i].thread, NULL);
	if (monitor_started)
		pthread_join(monitor_thread, NULL);
	monitor_started = 0;
	nworkers = 0;
}
