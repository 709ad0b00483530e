/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rcgate.h - the daemon's internal header, one section per module.
 *
 * Modules that their own tests drive through a narrow interface declare it
 * in their own header (ktap.h, kmod.h, initramfs.h, guest.h, announce.h,
 * report.h, kcidb.h) and use the util.c section of this one; the API's
 * files share api_internal.h. See docs/design.md.
 */
#ifndef RCGATE_H
#define RCGATE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* What the daemon and the guest agent must agree on. */
#include "../agent/protocol.h"

#define RCGATE_VERSION "0.1"

/* ---- util.c: errors, files, hashing, processes ---- */
void errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* snprintf for paths: -1 if the result did not fit (out is then cut). */
int pathf(char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void sleep_ms(long ms);
/* Read a whole regular file of at most cap bytes (a larger one, a FIFO or a
 * device is an error, never cut or waited for); NUL-terminated; caller frees. */
char *file_read(const char *path, size_t cap, size_t *len, char *err,
		size_t errlen);
int file_write_atomic(const char *path, const void *buf, size_t len,
		      char *err, size_t errlen);
/* file_write_atomic with the new file's mode, unless path already holds
 * exactly buf: then it is left alone (no write, same inode and mtime). */
int file_write_if_changed(const char *path, const void *buf, size_t len,
			  mode_t mode, char *err, size_t errlen);
int mkdir_p(const char *path, mode_t mode, char *err, size_t errlen);
int rm_rf(const char *path);
/* sha256 of a file as 64 lowercase hex digits + NUL into out[65]. */
int sha256_file(const char *path, char out[65], char *err, size_t errlen);
void sha256_hex(const void *buf, size_t len, char out[65]);
int is_sha256_hex(const char *s);
/* Run argv (no shell), wait, capture up to cap bytes of combined output
 * into out (may be NULL). Returns the exit status or -1. */
int run_argv(char *const argv[], char *out, size_t cap, char *err,
	     size_t errlen);
/* A string built in a caller's fixed buffer by appending. Once an append
 * does not fit, the buffer keeps what fitted (NUL-terminated) and
 * overflow stays set: later appends do nothing, so a cut can never write
 * past the end, and the caller decides whether a cut is an error. */
struct strbuf {
	char *buf;
	size_t cap, len;
	int overflow;
};
void strbuf_init(struct strbuf *, char *buf, size_t cap);
void strbuf_printf(struct strbuf *, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
double now_monotonic(void);
/* ISO 8601 UTC timestamp of now into buf[32]. */
void now_iso8601(char buf[32]);
int parse_long(const char *s, long min, long max, long *out);
/* A new API token "rcg_<40 hex>" into out[48] and its stored hash. */
int token_generate(char out[48], char hash[65]);

/* ---- log.c: one-line log records to stderr or a file ---- */
enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };
int log_init(const char *path, enum log_level level, char *err, size_t errlen);
int log_reopen(void);
void log_free(void);
int log_level_parse(const char *s, enum log_level *out);
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* ---- config.c: the configuration file ---- */
struct config {
	char *user;		/* run as this user; empty: as started */
	char *state_dir;
	char *cache_dir;	/* empty: <state_dir>/cache */
	char *listen;
	long port;
	char *log_file;
	char *log_level;
	char *agent_dir;
	char *libvirt_uri;	/* empty: qemu:///embed under state_dir */
	long workers;
	long job_timeout;	/* seconds, wall clock per boot */
	long attempts;		/* automatic tries on infra error */
	char *accel;		/* auto | tcg | kvm */
	long kvm_probe_timeout;
	long guest_memory;	/* MiB */
	long disk_size;		/* MiB */
	char *filesystems;	/* "ext4 xfs btrfs": one disk and suite each */
	char *kernel_args;	/* added to every guest's command line */
	long crash_test;	/* 1: power-cut test after the suite */
	long max_artifact_mb;
	long max_body_kb;
	long max_connections, max_connections_per_ip;
	long header_timeout, request_timeout;	/* seconds */
	long reruns;		/* extra runs of a failing target */
	long link_window_days;	/* occurrences this recent link */
	char *farm;		/* name in reports */
	char *public_url;	/* base of links; empty: http://listen:port */
	char *feed_tag;		/* tag: URI authority of Atom ids */
	char *build_config_dir;	/* <target>.config fragments */
	char *build_ccache_dir;	/* empty: <cache_dir>/ccache; "none" */
	long build_jobs, build_timeout;
	long build_from_announcements;	/* 1: announced rcs are built */
	char *build_targets;		/* "x86_64 arm64": built for those */
	char *build_announced_source;	/* "patch" or "git" */
	char *build_keyring;		/* gpgv keyring for sha256sums.asc */
	char *build_git_config;		/* GIT_CONFIG_GLOBAL of fetches */
	char *build_sandbox;		/* "bwrap" or "none" */
	char *build_tree_origins;	/* git URL prefixes builds may use */
	char *build_file_origins;	/* tarball, sums and patch prefixes */
	long build_memory_mb, build_file_mb, build_tree_max_mb;
	long build_cache_max_gb;	/* trees and clones kept; 0: no cap */
	long allow_root;		/* 1: root may build and boot */
	char *bisect_upstream_git;	/* "": no prerequisite search */
	char *mail_from;
	char *smtp_url;		/* empty: no mail */
	char *webhook_url;	/* empty: no webhook */
	char *webhook_secret;
	long notify_attempts;
	char *maildir;		/* watched for announcements; empty: none */
	char *announce_senders;	/* whose announcements count */
	long announce_max_per_hour;	/* new rcs per sender and branch */
	char *web_dir;		/* the dashboard's static files */
	char *local_dirs;	/* file:// artifacts only from these */
	char *allow_networks;	/* special addresses downloads may reach */
	struct host_conf *hosts;	/* [host NAME] sections (hosts.c) */
	size_t nhosts;
};
void config_defaults(struct config *);
/* Parse text; unknown directives and bad values are errors naming the line. */
int config_parse(struct config *, const char *text, const char *name,
		 char *err, size_t errlen);
int config_load(struct config *, const char *path, char *err, size_t errlen);
void config_free(struct config *);
/* Print every directive with its effective value (rcgated -n -v). */
void config_dump(const struct config *, FILE *out);
char *config_libvirt_uri(const struct config *);	/* caller frees */

/* ---- version.c: kernel version strings ---- */
struct kversion {
	char branch[32];	/* "6.1" */
	long major, minor, patch;
	long rc;		/* 0 for a release */
};
int kversion_parse(const char *s, struct kversion *out, char *err,
		   size_t errlen);
/* The upstream version ("6.1.192") a running kernel says it is, from its
 * uname -r (release) and uname -v (uts, may be NULL): Debian's packaged
 * kernels name it in uname -v, others lead uname -r with it. -1 if
 * neither does. */
int kversion_running(const char *release, const char *uts, char *out,
		     size_t len);
/* Orders two versions of one branch: 6.1.63 < 6.1.64-rc1 < 6.1.64-rc2 <
 * 6.1.64 (a release comes after its rcs). <0, 0, >0. */
int kversion_cmp(const struct kversion *a, const struct kversion *b);
/* The release an rc applies to, "6.1.63" for 6.1.64-rc1 and "6.1" for
 * 6.1.1-rc1 (its tarball, its tag v6.1.63). */
void kversion_previous(const struct kversion *v, char *out, size_t len);
/* 1 if running ("6.1.64", from kversion_running) is want's X.Y.Z: an rc
 * kernel says 6.1.64(-rc1) for 6.1.64-rc1. */
int kversion_matches(const struct kversion *want, const char *running);

/* ---- bisect.c: the rules of a bisection (issue 15) ---- */
enum bisect_verdict { BISECT_UNTESTED, BISECT_GOOD, BISECT_BAD, BISECT_SKIP };
enum { BISECT_STEP, BISECT_FOUND, BISECT_AMBIGUOUS, BISECT_EMPTY };
/* v[0..n): the verdicts of the commits after the good end, oldest first,
 * v[n-1] the bad end (its verdict need not be set: it is bad). Returns
 * BISECT_STEP with *next the commit to test (the untested one nearest the
 * middle of what is left), BISECT_FOUND when [*lo, *hi] is one commit, the
 * first bad one (*hi), BISECT_AMBIGUOUS when only skipped commits are left
 * between the last good and the first bad (the first bad one is in [*lo,
 * *hi]), BISECT_EMPTY for n = 0. */
int bisect_next(const enum bisect_verdict *v, size_t n, size_t *next,
		size_t *lo, size_t *hi);
/* The upstream commit a backport's message names ("commit X upstream.",
 * "[ Upstream commit X ]", "(cherry picked from commit X)"): 0 with id,
 * -1 if none. */
int bisect_upstream_id(const char *message, char id[41]);
/* The engine's bisection pass: starts a bisection for each confirmed
 * regression of an rc built from git, turns each finished step into the
 * next one or the answer, and sends the answer to every affected rc's
 * thread. Returns 1 if steps were queued, 0, or -1 on a store error. */
struct engine_context;
struct store;
int bisect_run_once(struct store *, const struct engine_context *,
		    char *err, size_t errlen);
/* Tells the bisected rc's thread (and the webhook) what bisection id
 * found, from the store: the culprit, other rcs whose bisection named the
 * same upstream commit, and the prerequisite candidates if searched. */
struct config;
void bisect_announce(struct store *, const struct config *, int64_t id);

/* ---- jobstate.c: the job state table ---- */
#define JS_QUEUED "queued"
#define JS_FETCHING "fetching"
#define JS_BUILDING "building"
#define JS_BOOTING "booting"
#define JS_RUNNING "running"
#define JS_DONE "done"
#define JS_INFRA_ERROR "infra_error"
#define JS_CANCELLED "cancelled"
/* The same sets as SQL lists, for the store's queries. */
#define JOB_ACTIVE_SQL "('fetching','building','booting','running')"
#define JOB_UNFINISHED_SQL "('queued','fetching','building','booting','running')"
#define JOB_FINAL_SQL "('done','infra_error','cancelled')"
struct job_state {
	const char *name;
	int final;		/* will not change again unless retried */
	int active;		/* a worker holds the job */
	const char *meaning;
};
size_t job_state_count(void);
const struct job_state *job_state_at(size_t i);
const struct job_state *job_state_find(const char *name);	/* NULL: none */
int job_state_final(const char *name);
/* Pass/fail/skip counting, written once (xfail counts nowhere). */
struct result_counts {
	long pass, fail, skip;
};
void result_counts_add(struct result_counts *, const char *status);

/* ---- targets.c: the target table (data, not code) ---- */
struct target {
	const char *name;	/* x86_64, i386, arm64, armv7 */
	const char *arch;	/* libvirt arch */
	const char *emulator;
	const char *machine;
	const char *cpu;	/* NULL: machine default */
	const char *console;	/* kernel console device */
	int virtio_mmio;
	const char *const *modules;	/* wanted in the initramfs */
	double timeout_factor;	/* slower targets get longer under TCG */
	/* kbuild (build.c): ARCH=, the cross compiler's prefix (NULL: the
	 * host's gcc, which builds x86_64 and i386 alike), the image's make
	 * target and where it lands under the build directory. */
	const char *kbuild_arch, *cross_compile, *image_target, *image_path;
	/* Added to its guests' command line (NULL: none): probes that cost
	 * boot time and find nothing on the emulated machine. */
	const char *boot_args;
};
const struct target *target_find(const char *name);
size_t target_count(void);
const struct target *target_at(size_t i);

/* ---- store.c: SQLite, the only user of sqlite3.h ---- */
struct store;
struct json_t;
/* Opens (creating) the database, sets WAL and applies pending migrations.
 * One store per thread. */
struct store *store_open(const char *path, char *err, size_t errlen);
void store_close(struct store *);
/* Before the first store_open of a daemon: an existing database must be a
 * non-empty regular file that passes SQLite's quick_check. A missing one
 * is fine (it is created); anything else is refused, never overwritten. */
int store_check(const char *path, char *err, size_t errlen);
/* This installation's id (8 hex digits, made once and kept): guests are
 * named after it so two daemons on one libvirt never touch each other's. */
int store_instance_id(struct store *, char *out, size_t len, char *err,
		      size_t errlen);
int store_schema_version(struct store *);
/* Changes after every commit of any store in this process, once the commit
 * is visible to every connection: a read made after loading generation g
 * and tagged g is current for as long as store_generation() == g. */
uint64_t store_generation(void);

struct artifact_in {
	const char *target, *url, *sha256, *kind;
	const char *modules_url, *modules_sha256;	/* kind 'image', optional */
	int custom;	/* a build the submitter knows is not the release's version */
	/* kind 'source': url/sha256 are the release tarball, these the rc's
	 * patch (NULL for a release) */
	const char *patch_url, *patch_sha256;
	/* kind 'git': url is the tree, this the commit or branch (sha256 "") */
	const char *git_ref;
};
/* Creates the release, its artifacts and one queued job per artifact in one
 * transaction; a release known only from its announcement gets its
 * artifacts here. baseline may be NULL (the engine picks the last tested
 * release of the branch). Returns 0, -1 on error, -2 if the version exists
 * with artifacts. */
int store_release_create(struct store *, const char *version,
			 const struct kversion *, const char *baseline,
			 const struct artifact_in *, size_t n,
			 int64_t *release_id, char *err, size_t errlen);

/* Read-only queries come back as JSON (one object per row, column names as
 * keys) so the HTTP layer needs no per-table structs. */
enum store_query {
	Q_RELEASES,		/* branch|NULL, since|NULL, limit, offset; with
				 * job_states ("state:n ...") and blocking,
				 * so a page is one query */
	Q_RELEASE,		/* version */
	Q_RELEASE_JOBS,		/* release id */
	Q_JOB,			/* job id */
	Q_JOB_RESULTS,		/* job id */
	Q_JOB_EVENTS,		/* job id */
	Q_RELEASE_JOB_COUNTS,	/* release id: state, n */
	Q_RELEASE_BY_ID,	/* release id */
	Q_RELEASE_RUNS,		/* release id: per target+test runs, fails */
	Q_BASELINE_AUTO,	/* branch, patch, release id */
	Q_RELEASE_GATE,		/* release id: jobs, unfinished, infra, blocking */
	Q_RELEASE_REGRESSIONS,	/* release id */
	Q_REGRESSIONS,		/* state|NULL, branch|NULL, limit, offset, test|NULL */
	Q_REGRESSION,		/* regression id */
	Q_REGRESSION_OCCURRENCES,	/* regression id */
	Q_REGRESSION_BRANCHES,	/* regression id */
	Q_REGRESSION_EVENTS,	/* regression id */
	Q_RERUN_COUNT,		/* release id, target */
	Q_RELEASES_UNANALYSED,	/* none */
	Q_RELEASE_REPORT,	/* release id: newest report */
	Q_FIX_CANDIDATES,	/* release id: id, branch, seen_on */
	Q_METRICS_JOBS,		/* none: state, n */
	Q_METRICS_REGRESSIONS,	/* none: state, n */
	Q_METRICS_OUTBOX,	/* none: state, n */
	Q_FEED,			/* limit: newest regression events and reports */
	Q_SOURCES_UNRESOLVED,	/* none: announced rcs to build (source.c) */
	Q_BISECT_CANDIDATES,	/* none: confirmed regressions of git rcs */
	Q_BISECT_GOOD,		/* release id, target, test: a passing commit */
	Q_BISECTIONS_RUNNING,	/* none */
	Q_BISECT_STEPS,		/* bisection id */
	Q_BISECTION,		/* bisection id */
	Q_REGRESSION_BISECTIONS,	/* regression id: its bisections, and
				 * the regressions that share a culprit */
	Q_PREREQ_PENDING,	/* (none): bisections whose prerequisite
				 * search is to run (prereq.c) */
	Q_COUNT
};
/* types: one char per argument: 'i' int64_t, 's' const char *, 'l' long,
 * 'd' double.
 * Returns a new JSON array (caller json_decref's) or NULL with err set. */
struct json_t *store_rows(struct store *, enum store_query, char *err,
			  size_t errlen, const char *types, ...);
struct json_t *store_vrows(struct store *, enum store_query, char *err,
			   size_t errlen, const char *types, va_list ap);

/* Typed rows for the engine, the gate and reports: the store fills them,
 * domain code reads fields, and JSON stays at the HTTP edge. A rowset
 * owns its rows and every string they point to; rowset_free() releases
 * all (a zeroed rowset is empty and may be freed). */
struct rowset {
	void *v;		/* an array of the reader's row type */
	size_t n;
	struct json_t *backing;	/* the strings' storage */
};
void rowset_free(struct rowset *);
struct release_row {
	int64_t id;
	long rc, patch;
	const char *version, *branch, *baseline, *subject, *message_id,
		*mail_from, *mail_to, *mail_cc, *analysed;	/* may be NULL */
};
struct job_row {
	int64_t id;
	const char *target, *state, *kernel_version, *error;	/* may be NULL */
	double boot_seconds;
	struct result_counts counts;	/* of its results, if counted */
};
struct run_row {		/* one test on one target, over all runs */
	const char *target, *test, *diagnostic;	/* diagnostic of a failure */
	int runs, fails;
	int64_t job_id;		/* a job where it failed */
};
struct regression_row {		/* a regression as it occurs in a release */
	int64_t id;
	const char *test, *target, *state, *diagnostic;
	const char *also_in;	/* the other rcs it affects, "a b c", or NULL */
	int flaky;
};
struct gate_row {
	int jobs, unfinished, infra, blocking, deadline_passed;
	const char *analysed, *released_as;	/* may be NULL */
};
/* Each returns 0 with out filled (an unknown id gives an empty set), -1
 * with err. */
int store_release_get(struct store *, int64_t id, struct rowset *out,
		      char *err, size_t errlen);		/* release_row */
/* The explicit baseline, or the newest tested release of the branch
 * below it; an empty set if none. */
int store_release_baseline(struct store *, const struct release_row *,
			   struct rowset *out, char *err, size_t errlen);
int store_release_runs(struct store *, int64_t id, struct rowset *out,
		       char *err, size_t errlen);		/* run_row */
/* counted: also fill each row's counts, one results query per job (the
 * report needs them, the gate does not). */
int store_release_jobs(struct store *, int64_t id, int counted,
		       struct rowset *out, char *err, size_t errlen);	/* job_row */
int store_release_regressions(struct store *, int64_t id, struct rowset *out,
			      char *err, size_t errlen);	/* regression_row */
int store_release_gate(struct store *, int64_t id, struct rowset *out,
		       char *err, size_t errlen);		/* gate_row */
/* Releases whose jobs have all ended and that are not analysed: the
 * engine's queue (int64_t ids). */
int store_releases_unanalysed(struct store *, struct rowset *out, char *err,
			      size_t errlen);
/* Announced rcs with a patch URL and no kernels that source.c has not
 * tried yet (source_todo rows), and the mark that it tried (error NULL:
 * resolved). */
struct source_todo {
	int64_t id;
	const char *version, *patch_url;	/* patch_url may be NULL */
	const char *git_tree, *git_branch;	/* NULL unless both announced */
};
int store_sources_unresolved(struct store *, struct rowset *out, char *err,
			     size_t errlen);
int store_source_tried(struct store *, int64_t id, const char *error,
		       char *err, size_t errlen);

/* ---- store.c: bisections (issue 15) ---- */
struct bisect_candidate {
	int64_t regression_id, release_id, job_id, artifact_id;
	const char *version, *branch, *target, *test, *tree, *bad;
	const char *tests;	/* ",name,name," of the tests it bisects */
};
int store_bisect_candidates(struct store *, struct rowset *out, char *err,
			    size_t errlen);
struct bisection_row {
	int64_t id, regression_id, release_id, job_id;
	long good_tested;
	const char *version, *target, *test, *tests, *tree, *good, *bad,
		*commits;
};
int store_bisections_running(struct store *, struct rowset *out, char *err,
			     size_t errlen);
struct bisect_step_row {
	int64_t id;
	const char *git_commit, *state, *build, *status;
};
int store_bisect_steps(struct store *, int64_t bisection_id,
		       struct rowset *out, char *err, size_t errlen);
/* A commit of the release's own, on the same branch, at which test passed
 * on target (the newest release first): 1 with good, 0 none, -1. */
int store_bisect_good(struct store *, int64_t release_id, const char *target,
		      const char *test, char good[41], char *err, size_t errlen);
int store_bisection_create(struct store *, const struct bisect_candidate *,
			   const char *good, int good_tested,
			   const char *commits, const char *state,
			   const char *message, int64_t *id, char *err,
			   size_t errlen);
/* Queues a step: a job of the release on the rc job's artifact, building
 * commit and running only_tests (NULL: the build alone). */
int store_bisect_step_add(struct store *, int64_t bisection_id,
			  int64_t rc_job_id, const char *commit,
			  const char *only_tests, char *err, size_t errlen);
/* prereq_state: NULL, or "pending" when the follow-up waits for the
 * prerequisite search (prereq.c). */
int store_bisection_finish(struct store *, int64_t id, const char *state,
			   const char *culprit, const char *subject,
			   const char *upstream, const char *range_first,
			   const char *range_last, const char *message,
			   const char *prereq_state, char *err, size_t errlen);
/* The search's answer: state "done" or "failed", list a JSON array (or
 * NULL), message what it did or why it failed. */
int store_prereq_finish(struct store *, int64_t id, const char *state,
			const char *list, const char *message, char *err,
			size_t errlen);
/* One delivery (a follow-up mail or a webhook) outside a report. */
struct outbox_in;
int store_outbox_add(struct store *, const struct outbox_in *, char *err,
		     size_t errlen);

/* Reruns already queued for a target of a release. */
int store_rerun_count(struct store *, int64_t id, const char *target,
		      char *err, size_t errlen);

struct job {
	int64_t id, release_id;
	long attempt;
	char target[16];
	char suite[32];
	char version[48];
	char url[2048];
	char sha256[65];
	char kind[16];
	char modules_url[2048];		/* "" when none */
	char modules_sha256[65];
	int custom;			/* the artifact is a custom build */
	char patch_url[2048];		/* kind source: the rc's patch, or "" */
	char patch_sha256[65];
	char git_ref[256];		/* kind git: commit or branch (url: the tree) */
	int64_t bisection_id;		/* 0, or the bisection this step is of */
	char git_commit[41];		/* a step: this commit, not git_ref */
	char only_tests[1024];		/* a step: only these ("" all; "-" none) */
};
/* Takes the oldest queued job and moves it to 'fetching'. 1 = claimed,
 * 0 = none queued, -1 = error. */
int store_job_claim(struct store *, const char *worker, struct job *out,
		    char *err, size_t errlen);
/* Compare-and-set of a job's state, with an event row. Returns 1 if the job
 * was in 'from' and is now in 'to', 0 if it was not in 'from' (e.g. it was
 * cancelled meanwhile), -1 on error. from NULL = any active state. */
int store_job_transition(struct store *, int64_t id, const char *from,
			 const char *to, const char *message, char *err,
			 size_t errlen);
/* A source job's build: the image it made (NULL if none) and its time. */
int store_job_built(struct store *, int64_t id, const char *sha256,
		    double seconds, char *err, size_t errlen);
/* A build's step and progress (done, total < 0: unknown), and the commit
 * a git build checks out (NULL: unchanged). */
int store_job_build_progress(struct store *, int64_t id, const char *step,
			     long done, long total, const char *commit,
			     char *err, size_t errlen);
int store_job_note(struct store *, int64_t id, const char *accel,
		   const char *kernel_version, char *err, size_t errlen);
/* The host (hosts.c) the job's current attempt runs on. */
int store_job_host(struct store *, int64_t id, const char *host, char *err,
		   size_t errlen);
/* Records that the kernel which ran says it is another version. */
int store_job_mismatch(struct store *, int64_t id, const char *message,
		       char *err, size_t errlen);
struct result_row {
	const char *test, *status, *diagnostic;
	long duration_ms;
	int timed;		/* 0: duration_ms unknown (stored as NULL) */
};
/* Stores all results and moves running -> done in one transaction. */
int store_job_done(struct store *, int64_t id, const struct result_row *,
		   size_t n, double boot_seconds, char *err, size_t errlen);
/* Records an infrastructure failure. With attempts left the job goes back
 * to 'queued' with attempt+1 (*requeued = 1), else it ends in infra_error. */
int store_job_infra(struct store *, int64_t id, const char *kind,
		    const char *message, long max_attempts, int *requeued,
		    char *err, size_t errlen);
/* Every job left in fetching/booting/running is queued again: after a clean
 * stop (max_attempts 0) as the same attempt; after a crash as the next
 * attempt, and a job that has used max_attempts ends in infra_error
 * instead (an artifact that crashes the daemon is not retried for ever).
 * *count = jobs requeued, *failed = jobs ended. */
int store_requeue_unfinished(struct store *, long max_attempts, int *count,
			     int *failed, char *err, size_t errlen);
int store_release_cancel(struct store *, const char *version, int *count,
			 char *err, size_t errlen);
int store_job_state_get(struct store *, int64_t id, char *state, size_t len);
/* Queues a finished job again as a new attempt and reopens its release's
 * analysis. 1 = requeued, 0 = not finished (or unknown), -1 = error. */
int store_job_retry(struct store *, int64_t id, char *err, size_t errlen);

/* Regression bookkeeping (store.c). */
struct occurrence_in {
	const char *signature, *test, *target, *fs, *diagnostic;
	int64_t release_id, job_id;
	const char *branch, *version;
	int flaky, runs, fails;
	int confirmed;		/* regress_confirmed(): confirms an open one */
	long window_days;	/* link to a regression seen this recently */
};
/* Links the failure to the regression with its signature seen within the
 * window (creating one if none), records the occurrence for the release
 * and opens the branch; a confirmed occurrence confirms an open
 * regression. */
int store_regression_link(struct store *, const struct occurrence_in *,
			  int64_t *regression_id, int *created, char *err,
			  size_t errlen);
/* The fix candidates of a release: open regressions of its branch whose
 * test passes (and never fails) on its target here, one per other
 * non-flaky occurrence on the branch (regress_fixes() decides which are
 * earlier). 0 with out filled (fix_candidate rows), -1 with err. */
struct fix_candidate {
	int64_t id;
	const char *branch, *seen_on;
};
int store_fix_candidates(struct store *, int64_t release_id,
			 struct rowset *out, char *err, size_t errlen);
/* Marks the regression fixed on branch by version; one fixed on every
 * branch it hit becomes fixed. 1 marked, 0 already, -1 error. */
int store_regression_fix(struct store *, int64_t id, const char *branch,
			 const char *version, char *err, size_t errlen);
/* Claims the release's analysis: 1 if this caller set 'analysed'. */
int store_release_claim_analysis(struct store *, int64_t release_id,
				 char *err, size_t errlen);
int store_job_rerun(struct store *, int64_t release_id, const char *target,
		    char *err, size_t errlen);
int store_regression_triage(struct store *, int64_t id, const char *state,
			    const char *reason, char *err, size_t errlen);
/* Report and its deliveries in one transaction. */
struct outbox_in {
	const char *kind, *destination, *payload;
};
int store_report_add(struct store *, int64_t release_id, const char *gate,
		     const char *text, const char *email,
		     const struct outbox_in *, size_t n, char *err,
		     size_t errlen);
struct outbox_item {
	int64_t id;
	char kind[16];
	char destination[1024];
	char *payload;		/* caller frees */
	long attempts;
};
/* The oldest due delivery: 1 found, 0 none, -1 error. */
int store_outbox_next(struct store *, struct outbox_item *, char *err,
		      size_t errlen);
/* ok: sent. Otherwise retried after delay_s, or failed after max tries. */
int store_outbox_done(struct store *, int64_t id, int ok, const char *error,
		      long delay_s, long max_attempts, char *err,
		      size_t errlen);
struct announce_in {
	const char *version, *branch, *subject, *message_id, *from, *to, *cc,
		*date, *deadline, *patch_url, *git_tree, *git_branch;
	long rc, patch;
};
/* Creates the release from an announcement, or fills the announcement
 * into an existing release that has none. 0 created, 1 updated, 2 already
 * announced (nothing changed), 3 corrected (it had another Message-ID),
 * -1 error. */
int store_release_announce(struct store *, const struct announce_in *,
			   int64_t *release_id, char *err, size_t errlen);

int store_token_add(struct store *, const char *name, const char *hash,
		    const char *scope, char *err, size_t errlen);
/* AUTH_OK if a token with this hash exists and carries scope, AUTH_SCOPE if
 * it exists with a smaller scope, AUTH_INVALID if none, -1 on error. */
int store_token_check(struct store *, const char *hash, const char *scope);

/* ---- http.c: libmicrohttpd, the only user of microhttpd.h ---- */
#define HTTP_MAX_PARAMS 4
struct http_request {
	const char *method;
	const char *path;
	const char *params[HTTP_MAX_PARAMS];	/* {captures} of the route pattern */
	const char *body;		/* NUL-terminated, may be NULL */
	size_t body_len;
	const char *request_id;
	void *conn;			/* for http_query/http_header */
};
struct http_response {
	int status;
	char *body;			/* malloc'ed, freed by http.c */
	size_t len;
	const char *content_type;
	const char *allow;		/* for 405 */
	const char *challenge;		/* 401/403: WWW-Authenticate value */
	int ranges;			/* honour Range: bytes=... (logs) */
	int no_etag;			/* volatile content: no ETag */
	int retry_after;		/* seconds, for 503 */
};
enum http_scope { SCOPE_READ, SCOPE_WRITE, SCOPE_ADMIN };
/* What an authorize callback answers. */
enum { AUTH_INVALID = 0, AUTH_OK = 1, AUTH_SCOPE = 2 };
/* A GET whose answer is made from the store alone (and the clock, within
 * a second) is cached: served from respcache.c until the next commit. */
enum http_cache { HTTP_NO_CACHE, HTTP_CACHE };
struct http_route {
	const char *method;
	const char *pattern;		/* "/api/v1/releases/{version}" */
	int (*handler)(struct http_request *, struct http_response *);
	enum http_scope scope;
	enum http_cache cache;
};
struct http_options {
	const char *listen;
	long port;			/* 0 = any free port */
	size_t max_body;
	unsigned max_connections, max_per_ip;
	/* Seconds: complete headers after connecting (or after the previous
	 * response), the whole request once its headers are in, and no
	 * progress at all. The first two hold however slowly bytes trickle. */
	unsigned header_timeout, request_timeout, idle_timeout;
	/* What HTTP_CACHE answers are valid for (store_generation); NULL:
	 * nothing is cached. */
	uint64_t (*generation)(void);
};
/* Starts serving routes[]; *bound_port gets the port. The route's scope is
 * checked with authorize (AUTH_*; -1 on a database error) as soon as the
 * headers are in, before any body is read. Returns NULL on error. */
struct http_server *http_start(const struct http_options *,
			       const struct http_route *routes, size_t nroutes,
			       int (*authorize)(const char *token,
						enum http_scope scope),
			       unsigned *bound_port, char *err, size_t errlen);
void http_stop(struct http_server *);
/* Request counters since start, for /metrics. */
struct http_stats {
	unsigned long requests[6];	/* by status class: [2] = 2xx ... */
	double seconds;			/* total handling time */
	unsigned long deadline_closes;	/* connections cut at a deadline */
	unsigned long cache_hits, cache_misses;	/* cached reads (respcache) */
	size_t cache_bytes;
};
void http_stats_get(struct http_stats *);
/* Matches a path (modified in place) against "/a/{x}/b"; captures go to
 * params. Returns 1 on a match. */
int http_route_match(const char *pattern, char *path, const char **params,
		     size_t maxparams);
/* A Range header h ("bytes=a-b", "bytes=a-", "bytes=-n"; one range, no
 * list) against a body of len bytes. Returns 0 with from <= to < len (the
 * bytes to send, inclusive), or -1 if h is not such a range, len is 0 or
 * the range starts at or past len (the caller answers 416). */
int http_range_parse(const char *h, size_t len, size_t *from, size_t *to);
const char *http_query(struct http_request *, const char *key);
const char *http_header(struct http_request *, const char *key);
/* Response helpers: take ownership of json (jansson json_t *). */
int http_json(struct http_response *, int status, struct json_t *json);
int http_error(struct http_response *, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int http_text(struct http_response *, int status, const char *type,
	      char *body, size_t len);

/* ---- respcache.c: read responses kept until the store changes ---- */
struct cached_body {		/* shared by every response that sends it */
	_Atomic long refs;
	size_t len;
	const char *type;		/* a string literal (Content-Type) */
	char etag[40];
	char data[];			/* len bytes and a NUL */
};
struct respcache;
struct respcache_stats {
	size_t entries, bytes;
	unsigned long hits, misses;
};
/* At most max_bytes of bodies (one body at most a quarter of it) and
 * max_entries keys; an answer is served for ttl seconds at most. */
struct respcache *respcache_new(size_t max_bytes, size_t max_entries,
				double ttl);
void respcache_free(struct respcache *);
/* The answer for key made at generation, with a reference the caller
 * releases (cached_body_release). NULL: none that may be served; then
 * *fill = 1 means this caller makes it and must respcache_put or
 * respcache_abandon the key (others wait for it), *fill = 0 that it
 * answers uncached. */
struct cached_body *respcache_get(struct respcache *, const char *key,
				  uint64_t generation, int *fill);
/* Keeps a copy of data with its ETag (http.c makes both; the type string
 * must outlive the cache) for key, made from what the store held at
 * generation. */
void respcache_put(struct respcache *, const char *key, uint64_t generation,
		   const char *type, const char *etag, const char *data,
		   size_t len);
/* The answer will not be cached (an error, a volatile answer). */
void respcache_abandon(struct respcache *, const char *key);
void cached_body_release(struct cached_body *);
void respcache_stats(struct respcache *, struct respcache_stats *);

/* ---- api.c: the REST API's route table (handlers in api_*.c) ---- */
struct api_context {
	const struct config *cfg;
	const char *db_path;
	unsigned workers;
	const char *base_url;		/* for absolute links (Atom) */
};
const struct http_route *api_routes(size_t *n);
int api_authorize(const char *token, enum http_scope scope);
int api_init(const struct api_context *, char *err, size_t errlen);
void api_free(void);

/* ---- fetch.c: libcurl downloads into a content-addressed cache ---- */
/* local_dirs: space-separated directories whose files file:// URLs may
 * name (none: no file:// at all); allow_networks: addresses or CIDR
 * prefixes that downloads may reach although they are loopback,
 * link-local, private or otherwise special. */
int fetch_init(const char *local_dirs, const char *allow_networks, char *err,
	       size_t errlen);
void fetch_free(void);
/* The address of host (a URL's host) that connections may reach under
 * allow_networks, as "host:port:address" (curl's CURLOPT_RESOLVE form, for
 * git's http.curloptResolve): 0, or -1 with err (none allowed). */
int fetch_pin_host(const char *host, int port, char *out, size_t outlen,
		   char *err, size_t errlen);
/* Accepts http and https URLs that libcurl can parse, and file URLs of
 * files under local_dirs. */
int fetch_url_check(const char *url, char *err, size_t errlen);
/* Makes sure <cache_dir>/<sha256> holds the artifact, downloading url if it
 * is not cached; verifies the hash before the file appears there. One
 * fetch per hash at a time; a set *cancel (may be NULL) stops it within a
 * fraction of a second, even a stalled one. Progress and errors are
 * written to joblog (may be NULL). path gets the cached file's path. */
int fetch_artifact(const char *url, const char *sha256, const char *cache_dir,
		   long max_bytes, char *path, size_t pathlen, FILE *joblog,
		   const volatile int *cancel, char *err, size_t errlen);

/* For a file whose hash nobody published (an rc's stable-review patch):
 * downloads url with the same checks, learns its sha256 and keeps it in
 * the cache under it. Concurrent calls for one URL download twice. */
int fetch_learn(const char *url, const char *cache_dir, long max_bytes,
		char *path, size_t pathlen, char sha256[65], FILE *joblog,
		const volatile int *cancel, char *err, size_t errlen);

/* ---- source.c: announced rcs made into jobs that build them ---- */
/* With [build] from_announcements: one thread resolves each announced rc
 * with a patch URL and no kernels into source jobs (kicked after an
 * announcement, and every 30 s). */
int source_start(const struct config *, const char *db_path,
		 const char *cache_dir, char *err, size_t errlen);
void source_stop(void);
void source_kick(void);
/* kernel.org's layout: the tarball the rc's patch applies to and the
 * sha256sums.asc that lists it, both from patch_url; name gets the
 * tarball's file name. -1 with err if the URL is not
 * .../stable-review/patch-<version>.gz. */
int source_urls(const char *version, const char *patch_url, char *tarball,
		size_t tlen, char *sums, size_t slen, char *name, size_t nlen,
		char *err, size_t errlen);
/* The sha256 of name in a sha256sums file ("<hex>  <name>" lines, signed
 * or not): 0, or -1 if it is not listed. */
int source_sums_find(const char *text, size_t len, const char *name,
		     char sha256[65]);

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
	struct guest_host *host;
	void (*job_ended)(void);	/* a job reached a final state */
};
/* Requeues what a previous run left unfinished and starts cfg->workers
 * worker threads plus a monitor that notices cancelled jobs. */
int sched_start(const struct sched_context *, char *err, size_t errlen);
/* Destroys running guests (their jobs stay unfinished and are requeued at
 * the next start) and joins every thread. */
void sched_stop(void);
/* Wakes idle workers: new jobs were queued. */
void sched_kick(void);
/* Guests running now, for /healthz and /metrics. */
unsigned sched_running(void);

/* ---- regress.c: regression decisions (pure: plain data in and out) ---- */
enum baseline_status { BASE_NONE, BASE_PASS, BASE_FAIL };
enum test_class {
	CLASS_PASS,		/* no failing run */
	CLASS_KNOWN_FAILURE,	/* fails on the baseline too */
	CLASS_RERUN,		/* failed, not yet rerun enough to decide */
	CLASS_REGRESSION,	/* every run failed, the baseline passed (or none) */
	CLASS_FLAKY,		/* failed and passed: shown, never blocks */
};
struct test_runs {
	int runs, fails;	/* skips are not runs */
	enum baseline_status baseline;
};
enum test_class regress_classify(const struct test_runs *, int reruns);
/* A regression's failure is confirmed once it failed in two runs (the
 * first and a rerun): from then on it is "confirmed", not just "open". */
int regress_confirmed(const struct test_runs *);
/* Whether passing on version fixes a regression seen on seen_on (same
 * branch): only a later rc or release fixes; an earlier one that passes
 * says nothing. Both strings are versions; 0 if either is not one. */
int regress_fixes(const char *seen_on, const char *version);
const char *regress_class_name(enum test_class);
/* Diagnostics with run-specific noise (addresses, timestamps, long numbers)
 * replaced, so the same failure on two rcs has one signature. */
void regress_normalize_diag(const char *in, char *out, size_t len);
/* sha256 hex of test, target and the normalised diagnostic. */
void regress_signature(const char *test, const char *target,
		       const char *diagnostic, char out[65]);
/* The filesystem a test ran on: the first component of "ext4.write_seq". */
void regress_test_fs(const char *test, char *out, size_t len);

enum gate_verdict { GATE_PASS, GATE_BLOCK, GATE_PENDING, GATE_INCOMPLETE };
struct gate_input {
	int jobs, unfinished, infra_errors;
	int blocking_regressions;	/* open/confirmed, not flaky, not fixed */
};
enum gate_verdict regress_gate(const struct gate_input *);
const char *regress_gate_name(enum gate_verdict);

/* ---- engine.c: decides a finished release's regressions and reports ---- */
/* The engine consumes "releases whose last job ended and that are not
 * analysed" from the store, as notify.c consumes the outbox: one thread,
 * woken by engine_kick() and every few seconds, so a crash, a cancel or a
 * worker's last job all reach it the same way. For each such release it
 * reruns failing targets (once per configured rerun; jobs_queued then
 * wakes the workers), or links regressions across rcs, marks fixes,
 * writes the report and queues its deliveries. */
struct engine_context {
	const struct config *cfg;
	const char *db_path;
	const char *base_url;		/* for links in reports */
	void (*jobs_queued)(void);	/* reruns were queued */
	const char *cache_dir;		/* NULL: no bisections (build/git) */
};
int engine_start(const struct engine_context *, char *err, size_t errlen);
/* The announcement a release was made from, for a reply in its thread:
 * 1, or 0 if it was not announced by mail (ann zeroed). */
struct announcement;
int engine_announcement(const struct release_row *, struct announcement *);
void engine_stop(void);
void engine_kick(void);
/* One pass over the releases waiting for analysis, in the caller's
 * thread (the engine's loop, and unit tests): returns how many it
 * settled (analysed or sent back for reruns), -1 on error. */
int engine_run_once(struct store *, const struct engine_context *, char *err,
		    size_t errlen);
/* The gate of a release, with its reasons built here and only here. */
struct gate_result {
	enum gate_verdict verdict;
	const struct gate_row *row;	/* the counts it was decided from */
	char **reasons;			/* one sentence each */
	size_t nreasons;
	int released_with_known_regressions;
	struct rowset row_set;		/* owns row */
};
/* 1 with out filled (gate_result_free it), 0 if no such release, -1 on
 * error. */
int engine_gate_eval(struct store *, int64_t release_id,
		     struct gate_result *out, char *err, size_t errlen);
void gate_result_free(struct gate_result *);
/* The verdict alone, from the gate's counts (what a list of releases
 * shows); engine_gate_eval decides by this too. */
enum gate_verdict engine_gate_verdict(const struct gate_row *);

/* ---- notify.c: delivers the outbox (SMTP and webhooks, libcurl) ---- */
int notify_start(const struct config *, const char *db_path, char *err,
		 size_t errlen);
void notify_stop(void);
void notify_kick(void);
/* Hex HMAC-SHA256 of body with key, as sent in X-Rcgate-Signature. */
void notify_signature(const char *key, const char *body, size_t len,
		      char out[65]);

/* ---- trigger.c: rc announcements from the API and a watched Maildir ---- */
/* Parses a raw announcement and records the release if its sender is
 * one of senders (space-separated addresses, "*" for anyone). 0 = recorded
 * (*created says whether it is new; version set; a later announcement of
 * the same version under another Message-ID corrects the earlier one),
 * 1 = not an rc announcement or not from an accepted sender (err says why;
 * ignored), -1 = malformed (err says why), -2 = a storage error: keep the
 * mail and try again later. */
int trigger_announcement(struct store *, const char *senders, const char *raw,
			 size_t len, char *version, size_t vlen, int *created,
			 char *err, size_t errlen);
/* 1 if addr (the one From mailbox's address, announcement.from_addr) is
 * exactly one of senders (case aside), or senders has '*'; 0 for "". */
int trigger_sender_accepted(const char *senders, const char *addr);
/* Watches cfg->maildir/new: each message is ingested, then moved to cur/
 * (or to .rcgate-rejected/ with the reason logged). */
int trigger_start(const struct config *, const char *db_path, char *err,
		  size_t errlen);
void trigger_stop(void);
#endif
