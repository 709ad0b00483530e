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
/* "rcgate-<instance>-": every guest of this daemon, and only those. */
static char guest_prefix[32] = "rcgate-";
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
/* Where a job's time went, step by step (seconds; every boot's create,
 * guest and destroy add up), logged when it ends. */
struct job_steps {
	double fetch, initramfs, disks, create, guest, destroy, results;
};

struct run {
	struct store *st;
	struct worker *w;
	const struct job *job;
	const struct target *target;
	char dir[PATH_MAX];
	FILE *log;
	struct job_steps steps;
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

/* An infrastructure failure; retried while attempts last, unless
 * another attempt could only fail the same way (final). */
static void infra_as(struct run *r, const char *kind, const char *message,
		     int final)
{
	char err[256];
	int requeued = 0;

	jlog(r, "infra error %s: %s", kind, message);
	log_warn("job=%lld attempt=%ld target=%s infra_error=%s msg=%s",
		 (long long)r->job->id, r->job->attempt, r->job->target, kind,
		 message);
	if (store_job_infra(r->st, r->job->id, kind, message,
			    final ? 0 : sc.cfg->attempts, &requeued, err,
			    sizeof(err)) < 0)
		log_err("job=%lld: %s", (long long)r->job->id, err);
	else if (requeued)
		sched_kick();
}

static void infra(struct run *r, const char *kind, const char *message)
{
	infra_as(r, kind, message, 0);
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
	store_job_mismatch(r->st, r->job->id, msg, NULL, 0);
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

static int boot(struct run *r, const char *kernel, const char *initrd,
		const struct boot_plan *plan, enum guest_outcome *outcome,
		double *seconds, char *err, size_t errlen)
{
	char name[64], cmdline[512], console[PATH_MAX + 32],
		channel[PATH_MAX + 32], tag[64];
	struct guest_spec spec = { 0 };
	struct guest_times times;
	struct strbuf cb;
	int rc;

	snprintf(name, sizeof(name), "%s%lld-%ld%s%s", guest_prefix,
		 (long long)r->job->id, r->job->attempt, plan->phase ? "-" : "",
		 plan->phase ? plan->phase : "");
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
	jlog(r, "boot %s accel=%s timeout=%d s cmdline=\"%s\"", name,
	     plan->use_kvm ? "kvm" : "tcg", plan->timeout_s, cmdline);
	atomic_fetch_add(&running_guests, 1);
	rc = guest_run(sc.host, &spec, plan->marker, plan->timeout_s,
		       &r->w->cancel, outcome, &times, err, errlen);
	atomic_fetch_sub(&running_guests, 1);
	*seconds = times.decided_s;
	r->steps.create += times.create_s;
	r->steps.guest += times.run_s;
	r->steps.destroy += times.destroy_s;
	if (rc == 0)
		jlog(r, "guest %s after %.1f s (create %.2f s, run %.2f s,"
		     " destroy %.2f s)", guest_outcome_name(*outcome), *seconds,
		     times.create_s, times.run_s, times.destroy_s);
	return rc;
}

/* Turns a boot that did not complete into the right infra error; returns
 * 0 when the boot completed. */
static int boot_outcome(struct run *r, int rc, enum guest_outcome outcome,
			const char *phase, const char *err)
{
	char console[PATH_MAX + 32], ktap[PATH_MAX + 32], *reason;

	if (rc < 0) {
		infra(r, "libvirt", err);
		return -1;
	}
	if (outcome == GUEST_COMPLETED)
		return 0;
	if (outcome == GUEST_CANCELLED) {
		jlog(r, "stopped: %s", atomic_load(&stopping)
		     ? "daemon shutting down (job resumes at next start)"
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
	char err[512], extra[96], console[PATH_MAX + 32], ktap[PATH_MAX + 32];
	enum guest_outcome outcome;
	double seconds;
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
	rc = boot(r, kernel, initrd, &plan, &outcome, &seconds, err, sizeof(err));
	if (boot_outcome(r, rc, outcome, plan.phase, err) < 0)
		goto fail;
	phase_paths(r, plan.phase, console, ktap, sizeof(console));
	size = durable_size(ktap);
	if (size < 0) {
		infra(r, "agent_output", "crash-write phase reported no durable size");
		goto fail;
	}
	jlog(r, "power cut after %ld durable bytes", size);
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
	rc = boot(r, kernel, initrd, &plan, &outcome, &seconds, err, sizeof(err));
	if (boot_outcome(r, rc, outcome, plan.phase, err) < 0)
		goto fail;
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
 * the crash phases make again. */
static void log_steps(struct run *r, double total)
{
	const struct job_steps *s = &r->steps;

	jlog(r, "time: fetch %.2f s, initramfs %.2f s, disks %.2f s, create %.2f s,"
	     " guest %.2f s, destroy %.2f s, results %.2f s; total %.2f s",
	     s->fetch, s->initramfs, s->disks, s->create, s->guest, s->destroy,
	     s->results, total);
	log_info("job=%lld steps fetch=%.2f initramfs=%.2f disks=%.2f create=%.2f"
		 " guest=%.2f destroy=%.2f results=%.2f total=%.2f",
		 (long long)r->job->id, s->fetch, s->initramfs, s->disks,
		 s->create, s->guest, s->destroy, s->results, total);
}

static void run_job(struct store *st, struct worker *w, const struct job *job)
{
	struct run r = { .st = st, .w = w, .job = job };
	double mark = 0, started = 0;
	char err[1024], artifact[PATH_MAX], modules[PATH_MAX], kernel[PATH_MAX],
		initrd[PATH_MAX], kver[128], adir[PATH_MAX];
	struct phase_results phases[2] = { 0 };
	struct disk_set disks;
	struct boot_plan plan;
	enum guest_outcome outcome;
	double seconds = 0;
	int accel, timeout_s, booted = 0, rc;

	memset(&disks, 0, sizeof(disks));
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
	if (mkdir_p(adir, 0755, err, sizeof(err)) < 0 ||
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
	r.steps.fetch = lap(&mark);
	if (!advance(&r, JS_FETCHING, JS_BOOTING))
		goto out;
	if (prepare_boot(&r, artifact, job->modules_url[0] ? modules : NULL,
			 kernel, initrd, sizeof(kernel), kver,
			 sizeof(kver), err, sizeof(err)) < 0) {
		infra(&r, "artifact", err);
		goto out;
	}
	r.steps.initramfs = lap(&mark);
	if (make_disks(&r, &disks, err, sizeof(err)) < 0) {
		infra(&r, "disk", err);
		goto out;
	}
	r.steps.disks = lap(&mark);
	store_job_note(st, job->id, NULL, kver, NULL, 0);
	if (!advance(&r, JS_BOOTING, JS_RUNNING))
		goto out;
	timeout_s = (int)((double)sc.cfg->job_timeout * r.target->timeout_factor);
	plan = (struct boot_plan){ NULL, &disks, "", RCGATE_MARKER, 1, timeout_s };
	accel = accel_decision(r.target);
	if (accel < 0) {
		/* The probe is this job's own boot under KVM with a short
		 * timeout: if it completes, its results count. */
		plan.timeout_s = (int)sc.cfg->kvm_probe_timeout;
		if (boot(&r, kernel, initrd, &plan, &outcome, &seconds, err,
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
			if (make_disks(&r, &disks, err, sizeof(err)) < 0) {
				infra(&r, "disk", err);
				goto out;
			}
		}
		plan.timeout_s = timeout_s;
	}
	store_job_note(st, job->id, accel ? "kvm" : "tcg", NULL, NULL, 0);
	plan.use_kvm = accel;
	if (!booted) {
		rc = boot(&r, kernel, initrd, &plan, &outcome, &seconds, err,
			  sizeof(err));
		if (boot_outcome(&r, rc, outcome, NULL, err) < 0)
			goto out;
	}
	/* The scratch disks are large and worthless after the run. */
	remove_disks(&disks);
	{
		char ktap[PATH_MAX + 32], console[PATH_MAX + 32];

		phase_paths(&r, NULL, console, ktap, sizeof(console));
		lap(&mark);
		if (collect(&r, ktap, &phases[0]) < 0 ||
		    kernel_identity(&r, &phases[0].report) < 0)
			goto out;
	}
	if (sc.cfg->crash_test &&
	    crash_phase(&r, kernel, initrd, accel, timeout_s, &phases[1]) < 0)
		goto out;
	lap(&mark);
	store_results(&r, phases, 2, seconds);
	r.steps.results = lap(&mark);
out:
	if (started > 0)
		log_steps(&r, now_monotonic() - started);
	remove_disks(&disks);
	phase_results_free(&phases[0]);
	phase_results_free(&phases[1]);
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
	 * names its own with its own id. */
	if (guest_destroy_orphans(sc.host, guest_prefix, &orphans, err, errlen) < 0)
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
