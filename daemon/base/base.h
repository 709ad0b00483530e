/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * base/base.h - the floor every module stands on: errors, files and
 * processes (util.c), the log, the configuration, kernel versions, the job
 * state and target tables.
 *
 * The public header of daemon/base/: a section per file. A .c file includes
 * its own folder's headers and those of lower floors only (docs/design.md,
 * tests/layers.sh).
 */
#ifndef RCGATE_BASE_H
#define RCGATE_BASE_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
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
/* The lock file at path (created if missing), held exclusively: its fd,
 * waiting while another holds it; -1 with err. Closing the fd lets go. */
int lock_file(const char *path, char *err, size_t errlen);
int rm_rf(const char *path);
/* sha256 of a file as 64 lowercase hex digits + NUL into out[65]. */
int sha256_file(const char *path, char out[65], char *err, size_t errlen);
/* The same, without reading a file this process hashed before and that
 * has not changed since (same device, inode, size, mtime and ctime);
 * *memo says which it was. */
int sha256_file_memo(const char *path, char out[65], int *memo, char *err,
		     size_t errlen);
void sha256_hex(const void *buf, size_t len, char out[65]);
int is_sha256_hex(const char *s);
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
/* pthread_cond_timedwait on cond (a default, CLOCK_REALTIME one) for at
 * most ms milliseconds; mu held, as for it. */
void cond_wait_ms(pthread_cond_t *cond, pthread_mutex_t *mu, long ms);
/* The daemon's date formats, all UTC: ISO 8601 ("2023-11-28T16:43:00Z",
 * the store's and the API's), with milliseconds (job logs), and RFC 2822
 * (a mail's Date:). */
void time_iso8601(time_t t, char buf[32]);
struct timespec;
void time_iso8601_ms(const struct timespec *ts, char buf[32]);
void time_rfc2822(time_t t, char buf[40]);
/* time_iso8601 of now. */
void now_iso8601(char buf[32]);
int parse_long(const char *s, long min, long max, long *out);
/* Whether list (words separated by blanks or commas) has word. */
int word_list_has(const char *list, const char *word);
/* A new API token "rcg_<40 hex>" into out[48] and its stored hash. */
int token_generate(char out[48], char hash[65]);

/* ---- inherit.c: what rcgated takes over from whoever started it ---- */
/* First thing in main(): every descriptor above 2 closed, umask 077. */
void inherit_reset(void);
/* Closes every descriptor from lowfd up: close_range(2), else each one
 * /proc/self/fd lists (fds_close_listed, also on its own for its test).
 * 0, or -1 when neither works. */
int fds_close_from(int lowfd);
int fds_close_listed(int lowfd);
/* A state dir open to group or others is made private: the dir 0700 and
 * everything under it of ours without group and other bits, except the
 * subtree keep (a cache dir inside it: NULL for none). A dir already
 * private is left as it is (nothing in it was reachable). 0, or -1 with
 * err. */
int state_dir_private(const char *dir, const char *keep, char *err,
		      size_t errlen);

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
/* A job's log (job.log): every line starts with the time to the
 * millisecond (bench/matrix.sh puts boots on one time line from them) and
 * is written whole and flushed, whichever thread writes it. f may be
 * NULL (nothing is written); fmt has no trailing newline. */
void joblog_write(FILE *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void joblog_vwrite(FILE *f, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* ---- config.c: the configuration file ---- */
#define HOSTS_MAX 16
#define HOST_NAME_MAX_LEN 31
/* uri = local: the daemon's own connection ([libvirt] uri), whose files
 * guests read directly; any other URI gets its files as volumes. */
#define HOST_URI_LOCAL "local"

/* One [host NAME] section. */
struct host_conf {
	char name[HOST_NAME_MAX_LEN + 1];
	char uri[512];
	long capacity;		/* guests at once */
	char kvm[128];		/* targets run under KVM, space-separated */
	char tcg[128];		/* targets run under TCG */
	char pool[64];		/* storage pool rcgate owns there */
	char pool_path[512];	/* creates the pool there if it is missing */
	long min_free_mb;	/* less free in the pool: the host is full */
	/* Builds (build/distcc.c): compiles kbuild sends to this host's
	 * distccd, at most build_slots at once (0: none), for the targets
	 * whose compilers it has. A [host] with build_slots and no uri is
	 * a build host only. */
	long build_slots;
	char distcc[128];	/* its distccd: HOST:PORT */
	char compilers[128];	/* targets it compiles, space-separated */
};

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
	long guest_vcpus;
	long disk_size;		/* MiB */
	char *filesystems;	/* "ext4 xfs btrfs": one disk and suite each */
	char *kernel_args;	/* added to every guest's command line */
	long crash_test;	/* 1: power-cut test after the suite */
	char *suite;		/* "all", "smoke", "deep" or "exer" (boot.c) */
	long max_artifact_mb;
	long max_body_kb;
	long max_connections, max_connections_per_ip;
	long header_timeout, request_timeout;	/* seconds */
	long reruns;		/* extra runs of a failing target */
	long link_window_days;	/* occurrences this recent link */
	char *farm;		/* name in reports */
	char *public_url;	/* base of links; empty: http://listen:port */
	char *lore_url;		/* the list's lore archive; empty: none */
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
	long build_memory_mb, build_file_mb, build_tree_max_mb, build_fetch_max_mb;
	/* a build's cgroup (build/cgroup.c): 0 no limit / default weight */
	long build_cgroup_pids_max, build_cgroup_memory_mb, build_cgroup_cpu_weight;
	long build_cache_max_gb;	/* trees and clones kept; 0: no cap */
	long allow_root;		/* 1: root may build and boot */
	char *bisect_upstream_git;	/* "": no prerequisite search */
	long bisect_parallel;		/* steps of a bisection round at once */
	char *mail_from;
	char *regressions_list;	/* regzbot's list: shipped regressions */
	char *smtp_url;		/* empty: no mail */
	char *webhook_url;	/* empty: no webhook */
	char *webhook_secret;
	long notify_attempts;
	char *maildir;		/* watched for announcements; empty: none */
	char *announce_senders;	/* whose announcements count */
	long announce_max_per_hour;	/* new rcs per sender and branch */
	char *announce_dkim;		/* "require", "prefer" or "off" */
	char *announce_dkim_keys;	/* file of pinned keys; empty: DNS */
	char *announce_dkim_signers;	/* d= domains besides From's own */
	long announce_max_recipients;	/* a reply's recipients at most */
	char *announce_lists;		/* where unverified rcs' replies go */
	char *web_dir;		/* the dashboard's static files */
	char *local_dirs;	/* file:// artifacts only from these */
	char *allow_networks;	/* special addresses downloads may reach */
	struct host_conf *hosts;	/* [host NAME] sections with a uri */
	size_t nhosts;
	/* Copies of the [host] sections with build_slots (config_load):
	 * where builds send compiles, guests' hosts or not. */
	struct host_conf *build_hosts;
	size_t nbuild_hosts;
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
/* After the whole file (config_load does it): every [host] has a URI and
 * names known targets, each at most once, or is a build host (build_slots,
 * distcc, compilers); then config_hosts_split. */
int config_hosts_check(const struct config *, char *err, size_t errlen);
/* Copies the hosts with build_slots into build_hosts and keeps only those
 * with a uri in hosts (the guests' hosts): 0, or -1 with err. */
int config_hosts_split(struct config *, char *err, size_t errlen);

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

/* What a release's artifact is: how a job gets its kernel. */
struct artifact_kind {
	const char *name;	/* deb, image, source, git */
	int posted;		/* a kernel CI posted: fetched by URL */
	int built;		/* rcgated builds it (buildjob.c) */
	int bare_image;		/* a kernel image; may have a modules tar */
};
/* NULL when name is no kind. */
const struct artifact_kind *artifact_kind_find(const char *name);

#endif /* RCGATE_BASE_H */
