/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * build/build.h - kernels rcgated builds itself: kbuild (build.c), its log
 * (buildlog.c), git trees (gitsrc.c), a job's build (buildjob.c), its
 * compiles on build hosts (distcc.c), the cores builds share (jobserver.c),
 * and announced rcs made into build jobs (source.c).
 *
 * The public header of daemon/build/: a section per file. A .c file includes
 * its own folder's headers and those of lower floors only (docs/design.md,
 * tests/layers.sh).
 */
#ifndef RCGATE_BUILD_H
#define RCGATE_BUILD_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base.h"

/* ==== buildlog.c ==== */
/* buildlog.c: the first error of a kbuild log, and whose failure it is. */


enum build_failure {
	BUILD_FAIL_SOURCE,	/* the tree does not build: a result */
	BUILD_FAIL_INFRA,	/* no disk, memory or toolchain: infra error */
};

struct build_diag {
	enum build_failure kind;
	char file[256];		/* relative to the source tree; "" if none */
	char message[512];	/* "error: ..." without positions or addresses */
	char line[1024];	/* the line as the log has it, for reports */
	char signature_text[800];	/* "file: message": equal for the same
					 * breakage in any tree or build dir */
};

/* Reads len bytes of a build log; srcdir (may be NULL) is the source
 * tree's absolute path, cut from the paths the log prints. Returns 1 with
 * out filled if it found an error or an infra failure (an infra failure
 * anywhere wins), 0 if it recognised none (out zeroed). */
int buildlog_first_error(const char *log, size_t len, const char *srcdir,
			 struct build_diag *out);

/* ==== build.c ==== */
/* build.c: kernels built from an rc's source, one target at a time. */



struct target;
struct job;
struct config;

/* The result a job of kind source records for its kernel build (pass, or
 * fail with the first error): KCIDB carries it as the build's status. */
#define BUILD_TEST "build.kernel"
/* Its signature when the revert check's revert does not apply. */
#define BUILD_REVERT_CONFLICT "-: the revert does not apply"

/* make's output for a job's build, beside its job.log. */
#define BUILD_LOG "build.log"
/* The .config a job's kernel was built with, beside its job.log: served
 * as GET /api/v1/jobs/{id}/config, linked from the report. */
#define BUILD_CONFIG "kernel.config"

/* The compiler a .config's text names (kbuild's CONFIG_CC_VERSION_TEXT,
 * "gcc (Debian 12.2.0-14) 12.2.0") into out, control characters and
 * quotes dropped; "" when it names none. */
void build_config_compiler(const char *config, char *out, size_t len);

/* What to build: a release tarball (linux-X.Y.Z.tar.*, already verified)
 * and, for an rc, the stable-review patch that applies to it (.gz or
 * plain). Local paths, read only. */
struct build_source {
	const char *tarball;
	const char *tarball_sha256;
	const char *patch;		/* NULL: the release itself */
	const char *patch_sha256;
	/* Instead of the above: a checked-out tree (gitsrc_checkout), built
	 * in place with its build/ directory kept for the next commit. */
	const char *tree;
};

/* ---- sandbox.c: what a sandboxed program sees ---- */
#define SANDBOX_PATHS 8
/* Besides the read-only system (/usr, /etc but rcgated's configuration),
 * a private /tmp, /proc and /dev: these paths, at the same place; NULL
 * ends each list. Writable paths are mounted after the read-only ones,
 * so one may sit inside another (a tree read-only, its build/ not). */
struct sandbox {
	const char *readable[SANDBOX_PATHS];
	const char *writable[SANDBOX_PATHS];
	int network;		/* 1: the host's network (git fetch only) */
	int measured;		/* the first N writable paths count toward
				 * build_options.disk_mb; 0: all of them */
	/* Non-NULL: readable[0] (a tree) is seen at this path too, the
	 * writable paths inside it in their places there, and a command
	 * whose cwd is in the tree runs there: every worktree's kbuild then
	 * has the same absolute paths (SANDBOX_TREE), so a copied worktree's
	 * objects (tools/objtool records absolute ones) stay up to date. */
	const char *tree_at;
};
#define SANDBOX_TREE "/rcgate/tree"

struct build_options {
	const char *root;		/* work space: <cache_dir>/build */
	const char *config_dir;		/* holds <target>.config fragments */
	const char *ccache_dir;		/* NULL or "": no ccache */
	long jobs;			/* make -j */
	long timeout;			/* seconds for the whole build */
	/* Polled while make runs: nonzero stops the build (infra, "cancelled"). */
	int (*cancelled)(void *cls);
	void *cls;
	/* NULL, or told where the build is: step (the build_step values of
	 * schemas/job.json), and while compiling kbuild's steps done and the
	 * target's previous build's count (-1 unknown). */
	void (*progress)(void *pcls, const char *step, long done, long total);
	void *pcls;
	/* Internal to build.c: called about once a second while a command
	 * runs. */
	void (*poll)(void *pollcls);
	void *pollcls;
	/* gitsrc.c: GIT_CONFIG_GLOBAL for fetches (NULL or "": none). */
	const char *git_config;
	/* The confinement of a build_run call (NULL: no path of ours
	 * visible, no network). no_sandbox ([build] sandbox = none) runs
	 * programs as rcgated itself, with only the limits below. */
	const struct sandbox *sandbox;
	int no_sandbox;
	long mem_mb;		/* address space per process; 0: 4096 */
	long file_mb;		/* largest file a process writes; 0: 4096,
				 * < 0: no limit (git's fetch: a whole
				 * tree's history is one pack) */
	long disk_mb;		/* the writable paths together, checked every
				 * few seconds while it runs; 0: no cap */
	long fetch_mb;		/* gitsrc.c: what one fetch may add (a file
				 * size limit on git and a disk check of the
				 * clone); 0: no cap */
	/* distcc.c: the [host] sections with build_slots (config's
	 * build_hosts); none: every compile is local. */
	const struct host_conf *build_hosts;
	size_t nbuild_hosts;
	/* jobserver.c: the token of the build these options run, NULL:
	 * make counts its own -j. build_run gives make the pipe. */
	const struct jobserver_token *jobserver;
	/* cgroup.c: the build's cgroup its programs start in, NULL (or fd
	 * -1): none. */
	const struct build_cgroup *cgroup;
};

/* The command line that runs argv under o's sandbox and limits, into out
 * (max entries with the final NULL; strings in out point into argv, store
 * or static data): 0, or -1 with err if it does not fit. */
int sandbox_argv(const struct build_options *o, const char *cwd,
		 const char *const argv[], const char **out, size_t max,
		 char *store, size_t storelen, char *err, size_t errlen);
/* Bytes the writable paths of sb use on disk (symlinks not followed). */
long long sandbox_disk_usage(const struct sandbox *sb);

/* ---- seccomp.c: the sandbox's system call filter ---- */

/* The descriptor number bwrap reads the filter from in the child
 * (sandbox_argv's --seccomp). */
#define SANDBOX_SECCOMP_FD 3
#define SANDBOX_SECCOMP_FD_STR "3"
/* A pipe holding the filter's BPF, to be read once by one bwrap: the read
 * end (close-on-exec, above 9), or -1 with err. The caller closes it. */
int sandbox_seccomp_fd(char *err, size_t errlen);

/* Runs argv (PATH lookup) in cwd (NULL: ours) with env, its output to
 * logfd, in its own process group, in o's sandbox (sandbox.c) with its
 * limits: the exit status (0..255), or -1 with err if it could not run,
 * was killed by a signal, passed deadline (now_monotonic()), wrote more
 * than o->disk_mb, or o->cancelled said so. No shell is involved. */
int build_run(const char *const argv[], const char *cwd, char *const env[],
	      int logfd, const struct build_options *o, double deadline,
	      char *err, size_t errlen);

struct build_result {
	char image[PATH_MAX];		/* the kernel image, under root/out/ */
	char image_sha256[65];
	char kernelrelease[128];	/* make kernelrelease */
	/* The final .config, kept beside the image ("" if it could not
	 * be), and the compiler it names (build_config_compiler). */
	char config[PATH_MAX];
	char compiler[256];
	struct build_diag diag;		/* when the build failed */
	double seconds;
};

/* Builds t's kernel from src with t's fragment merged on tinyconfig,
 * appending make's output to logpath. Returns 0 with res->image set, 1 if the
 * source does not build (res->diag from the log: a result, not an infra
 * error), -1 if the machine failed (disk, memory, toolchain, timeout,
 * cancel, unpacking; err says which). The source tree is unpacked once per
 * tarball and shared; each build works in a copy that it removes. */
int build_kernel(const struct build_source *src, const struct target *t,
		 const struct build_options *o, const char *logpath,
		 struct build_result *res, char *err, size_t errlen);

/* The options t's fragment sets to y that a final .config lacks (a
 * dependency the fragment forgot drops them silently): a space-separated
 * list into out, "" if none. 0, or -1 if a file cannot be read. */
int build_config_missing(const char *fragment, const char *config, char *out,
			 size_t outlen);

/* ---- distcc.c: a build's compiles spread over the build hosts ---- */
#define DISTCC_ENV 8
struct distcc_relay;
struct distcc {
	char dir[64];			/* the relays' sockets; "": none */
	struct distcc_relay *relay;	/* distccrelay.c's, NULL: none */
	size_t nrelay;			/* hosts relayed */
	long slots;			/* the hosts' build_slots, summed */
	char hosts[HOSTS_MAX * (HOST_NAME_MAX_LEN + 8) + 32];
	char logpath[PATH_MAX];		/* distcc's log; "": none */
	char env[DISTCC_ENV][PATH_MAX + 32];
};
/* Starts the relays of the hosts that compile target (those whose relay
 * starts; each one left out is logged) and makes distcc's environment,
 * its state and log in statedir (writable by the build): the number of
 * hosts, 0 if the build compiles locally only (none, or none usable:
 * never an error). distcc_stop_relays undoes it. */
int distcc_start(const struct build_options *o, const char *target,
		 const char *statedir, struct distcc *d, FILE *log);
/* Appends d's variables to env from index at (max entries with the final
 * NULL): the new count. Nothing if distcc_start returned 0. */
size_t distcc_env(const struct distcc *d, char *env[], size_t at, size_t max);
/* Writes to log where the compiles went (distcc's log), then removes it. */
void distcc_account(struct distcc *d, FILE *log);
void distcc_stop_relays(struct distcc *d);
#define DISTCC_COUNT_HOSTS (HOSTS_MAX + 1)
struct distcc_counts {
	struct { char name[HOST_NAME_MAX_LEN + 1]; long compiles; }
		host[DISTCC_COUNT_HOSTS];	/* "localhost" among them */
	size_t nhosts;
	long total, fallbacks;
};
/* Counts distcc's log lines: compiles completed per host, fallbacks. */
int distcc_count(const char *text, size_t len, struct distcc_counts *c);

/* ---- distccwire.c: what a build may ask of a build host ---- */
#define DCC_TOKEN_LEN 12		/* "ARGV" and 8 hex digits */
#define DCC_ARGC_MAX 512
#define DCC_ARG_MAX 4096
#define DCC_ARGV_BYTES_MAX (64 * 1024)
#define DCC_DOTI_MAX (128u << 20)	/* a preprocessed source */
#define DCC_HEADER_MAX (DCC_TOKEN_LEN * (DCC_ARGC_MAX + 3) + DCC_ARGV_BYTES_MAX)
struct dcc_request {
	size_t argc;
	char *argv[DCC_ARGC_MAX + 1];	/* each malloc'ed, NUL-terminated */
	size_t arglen[DCC_ARGC_MAX];	/* as the protocol said */
	uint32_t doti_len;		/* the source's bytes after the header */
};
/* A request's header (DIST .. DOTI's length) from the len bytes at buf:
 * 1 when it is complete (*used: its bytes; the source follows), 0 when
 * more bytes are needed, -1 with why if it is malformed, another
 * protocol version or over a cap. On 1, dcc_request_free frees r. */
int dcc_request_parse(const char *buf, size_t len, struct dcc_request *r,
		      size_t *used, char *why, size_t whylen);
void dcc_request_free(struct dcc_request *r);
/* r's header as the relay sends it on (version 1): its length, 0 if it
 * does not fit outlen. */
size_t dcc_request_header(const struct dcc_request *r, char *out,
			  size_t outlen);
/* The answer of a compile that failed (exit status 1) with why on its
 * stderr, as distccd sends it: its length, 0 if it does not fit. */
size_t dcc_refusal_reply(const char *why, char *out, size_t outlen);
/* 0 when argv is a compile a build host may run for a target whose gcc
 * is one of compilers (NULL-terminated), else -1 with why. */
int dcc_argv_check(char *const argv[], const size_t arglen[], size_t argc,
		   const char *const compilers[], char *why, size_t whylen);
/* The names a target's gcc reaches distccd under (cross_compile: the
 * target's prefix, NULL for the host's gcc) into out, NULL-terminated
 * (names holds what is made): their count; max is out's size (3). */
size_t dcc_target_compilers(const char *cross_compile, char names[][64],
			    const char *out[], size_t max);

/* ---- distccrelay.c: the relay between the sandbox and the hosts ---- */
/* Listens on <dir>/<host>.sock for each of the n hosts and relays what
 * dcc_argv_check lets through to the host's distccd; refusals are
 * written to log (the first few) and counted. NULL with err if nothing
 * can listen. */
struct distcc_relay *distcc_relay_start(const char *dir,
					const struct host_conf *const hosts[],
					size_t n, const char *const compilers[],
					FILE *log, char *err, size_t errlen);
/* Compiles refused so far. */
long distcc_relay_refused(struct distcc_relay *r);
/* Stops listening, ends every connection, waits for them, frees r. */
void distcc_relay_stop(struct distcc_relay *r);

/* ---- gitsrc.c: rcs from a git tree ---- */
int gitsrc_is_commit(const char *s);	/* 40 lowercase hex digits */
/* The upstream commit a backport's message names ("commit X upstream.",
 * "[ Upstream commit X ]", "(cherry picked from commit X)"): 0 with id,
 * -1 if none. */
int gitsrc_upstream_id(const char *message, char id[41]);
/* git://, http:// or https:// with a host and a path, no user
 * information, quotes, spaces or control characters; -1 with err. */
int gitsrc_url_check(const char *url, char *err, size_t errlen);
/* A plain branch name (linux-6.1.y): -1 with err otherwise. */
int gitsrc_branch_check(const char *branch, char *err, size_t errlen);
/* Fetches url into its cached bare clone under o->root/git (made on first
 * use; one fetch at a time per tree), then resolves ref (a commit, or a
 * branch of url) to commit. git's messages go to logfd. 0; 1 if ref is a
 * commit id the clone has (nothing fetched, no connection made); or -1
 * with err (network, unknown branch or commit, cancel, timeout). */
int gitsrc_fetch(const char *url, const char *ref, int logfd,
		 const struct build_options *o, char *gitdir, size_t gdlen,
		 char commit[41], char *err, size_t errlen);
/* The cached clone of url under root (<root>/git/<hash>.git), existing
 * or not: 0, or -1 if the path is too long. */
int gitsrc_clone_dir(const char *root, const char *url, char *out, size_t len);
/* Worktrees per target and clone: builds at once, and branches kept. */
#define GITSRC_WORKTREES 8
/* Checks commit out into a worktree of gitdir kept for name (a target):
 * the free one that last built branch (an affinity key: buildjob.c gives
 * the version's stable branch; NULL or "": any), else a new one,
 * else the free one used longest ago; only files that differ are
 * rewritten, untracked files but build/ go. The worktree is locked
 * (*lockfd, close it when done). 0 or -1. */
int gitsrc_checkout(const char *gitdir, const char *commit, const char *name,
		    const char *branch, int logfd,
		    const struct build_options *o, char *tree, size_t tlen,
		    int *lockfd, char *err, size_t errlen);
/* Whose worktree a git build takes (gitsrc_checkout's branch): the
 * stable branch of the version ("linux-6.1" for 6.1.193-rc1, a baseline
 * 6.1.192 or a bisection step of the rc alike, whatever ref named the
 * commit), else ref. Returns out. */
const char *gitsrc_branch_key(const char *version, const char *ref,
			      char *out, size_t len);
/* How many of gitdir's worktrees for name (a target) last built branch
 * (gitsrc_checkout's key) and are free now: the builds of branch that
 * could start at once and be incremental. */
int gitsrc_worktrees_warm(const char *gitdir, const char *name,
			  const char *branch);
/* A second warm worktree of branch for name (a target): a free one that
 * last built branch copied, objects and all, into a new slot (or the
 * free one of another branch used longest ago), which then builds the
 * branch's commits incrementally too. 1 when one was made, 0 when there
 * is nothing to copy or no slot free, -1 with err. Takes as long as
 * copying the tree (about 1.5 GB for a kernel and its objects);
 * o->cancelled stops it. */
int gitsrc_worktree_seed(const char *gitdir, const char *name,
			 const char *branch, const struct build_options *o,
			 char *err, size_t errlen);
/* The revert check: undoes commit in tree (checked out by gitsrc_checkout)
 * with `git revert --no-commit`, in the same sandbox. 0 if it applied, 1 if
 * it does not (a conflict, or git refuses: the tree is left as checked
 * out), -1 with err if git could not run. */
int gitsrc_revert(const char *gitdir, const char *tree, const char *commit,
		  int logfd, const struct build_options *o, char *err,
		  size_t errlen);
/* The version commit's Makefile says ("6.1.64-rc1"; `git show
 * <commit>:Makefile` in gitdir): 0, or -1 with err (no such commit or
 * file, or no VERSION and PATCHLEVEL lines). */
int gitsrc_commit_version(const char *gitdir, const char *commit,
			  const struct build_options *o, char *out,
			  size_t outlen, char *err, size_t errlen);
/* What gitsrc_fetch checks of url before it connects, alone: its form
 * (gitsrc_url_check) and that its host resolves to an address [fetch]
 * allow_networks allows (fetch_pin_host): 0, or -1 with err. */
int gitsrc_pin_check(const char *url, char *err, size_t errlen);
/* The same from a Makefile's text (`git show <commit>:Makefile`, a
 * bisection of a posted rc checking its branch head): -1 if it has no
 * VERSION and PATCHLEVEL lines. */
int gitsrc_makefile_version_text(const char *text, char *out, size_t outlen);
/* Checks the clear-signed file signed (sha256sums.asc) with gpgv against
 * keyring and writes only the signed text to out: 0, or -1 with err (bad
 * or missing signature, unknown key, gpgv missing). */
int build_verify_signed(const char *signed_path, const char *keyring,
			const char *out, const char *home, char *err,
			size_t errlen);
/* What git --git-dir=gitdir args... (at most 93) printed (NUL-terminated,
 * free it; at most 32 MiB), or NULL with err. */
char *gitsrc_git_out(const char *gitdir, const char *const args[],
		     const struct build_options *o, char *err, size_t errlen);

/* ---- buildcache.c: the build root's disk budget ---- */
/* Evicts unpacked release trees, clones and worktrees under root that are
 * not in use, least recently used first, until they hold at most
 * max_bytes (0: no budget); what it does is told to log (may be NULL).
 * The bytes freed. */
long long build_cache_evict(const char *root, long long max_bytes, FILE *log);

/* ---- origin.c: where built code may come from ---- */
/* The host of url, lowercase ("local" for file://): 0, or -1. */
int url_origin_host(const char *url, char *out, size_t len);
/* url (what: "tree" or "file", for the message) as it may be fetched:
 * under one of allow's space-separated URL prefixes, or its http:// or
 * git:// form upgraded to an https:// URL that is; into out. -1 with err
 * if neither, or if url is not plain (dot segments, escapes, user
 * information, queries, controls). */
int origin_pin(const char *allow, const char *what, const char *url,
	       char *out, size_t outlen, char *err, size_t errlen);
/* origin_pin of a file URL, in fetch_scope's shape: allow is the
 * file_origins string. What a download's redirects are held to. */
int origin_pin_file(void *allow, const char *url, char *out, size_t outlen,
		    char *err, size_t errlen);

/* ---- jobserver.c: the build budget, a make jobserver per build ---- */
/* The descriptors make finds its build's pipe at (MAKEFLAGS
 * --jobserver-auth), after SANDBOX_SECCOMP_FD. */
#define JOBSERVER_FD_R 4
#define JOBSERVER_FD_W 5
#define JOBSERVER_MAX_TOKENS 32
/* What a build holds while it runs. */
struct jobserver_token {
	int held;
	int slot;		/* 0 .. tokens-1, the lowest free: a build's
				 * own scratch names, its pipe, its cgroup */
	int fds[2];		/* its own pipe, for build_run to hand make */
	long tokens;		/* the full count */
};
/* Waits (cancellable, polling cancelled every 250 ms) for one of the
 * process's `tokens` ([build] jobs, capped at JOBSERVER_MAX_TOKENS) build
 * tokens: 0 with t held, 1 cancelled (err says so), -1 with err. Waiting
 * builds enter in the order of their rank (strcmp; NULL after any rank;
 * equal ranks in arrival order): buildjob_rank. A build holding more
 * than its share does not keep another from entering. */
int jobserver_enter(long tokens, const char *rank,
		    int (*cancelled)(void *cls), void *cls,
		    struct jobserver_token *t, char *err, size_t errlen);
/* Gives back t's token and every token lent to its pipe, whatever its
 * makes did with them, and closes the pipe (nothing if not held). */
void jobserver_leave(struct jobserver_token *t);
/* "MAKEFLAGS=-j<tokens> --jobserver-auth=R,W" for t into out: 0, or -1. */
int jobserver_makeflags(const struct jobserver_token *t, char *out, size_t len);
/* Tokens no make holds now: the budget's free ones and those lent and
 * unused in the builds' pipes (for tests). */
int jobserver_free(void);
/* Builds waiting to enter (for tests). */
int jobserver_waiting(void);
/* Bytes the build in slot has written into its pipe beyond the tokens
 * lent to it (discarded), while it is in (for tests). */
long jobserver_forged(int slot);

/* ---- cgroup.c: a cgroup v2 subtree per build ---- */
/* [build] cgroup_pids_max, cgroup_memory_mb, cgroup_cpu_weight (0: no
 * limit, or the default weight). */
struct cgroup_limits {
	long pids_max, memory_mb, cpu_weight;
};
/* A build's cgroup while it runs. */
struct build_cgroup {
	int fd;			/* its directory, for clone3; -1 none */
	int slot;
	char dir[PATH_MAX];
};
/* The cgroup v2 directory of the "0::" line of proc_cgroup (the text of
 * /proc/self/cgroup) under the cgroup2 mount of mountinfo (the text of
 * /proc/self/mountinfo), into out: 0; 1 if it is the hierarchy's root
 * (never delegated); -1 if either has none. */
int cgroup_parse(const char *proc_cgroup, const char *mountinfo, char *out,
		 size_t len);
/* The build in slot's cgroup, new, with l's limits, into out: 0; or -1
 * (out->fd -1) when rcgated has no delegated cgroup with the pids, memory
 * and cpu controllers (the first call says so in the log, once) or this
 * one could not be made (logged). The first call moves rcgated into the
 * leaf daemon/ of its cgroup. */
int cgroup_build_open(int slot, const struct cgroup_limits *l,
		      struct build_cgroup *out);
/* Kills what is left in c's cgroup and removes it (nothing if none). */
void cgroup_build_close(struct build_cgroup *c);
/* argv (PATH lookup) started in c's cgroup (clone3 CLONE_INTO_CGROUP),
 * in its own process group, stdin /dev/null, each dups[i][0] at
 * dups[i][1] in order, in cwd (NULL: ours): its pid, or -1 with *errp. */
pid_t cgroup_spawn(const struct build_cgroup *c, const char *const argv[],
		   char *const env[], const int dups[][2], size_t ndups,
		   const char *cwd, int *errp);

/* ---- buildjob.c: a job's build phase ---- */
struct buildjob_result {
	char image[PATH_MAX];		/* <cache_dir>/artifacts/<sha256> */
	char sha256[65];
	char kernelrelease[128];
	/* The compiler (build_result.compiler) and, for a git build, what
	 * git describe --tags says of the commit ("" unknown); the config
	 * is in the job's directory as BUILD_CONFIG. */
	char compiler[256];
	char describe[128];
	struct build_diag diag;		/* when the source does not build */
	double seconds;
};
/* What a build job's fetch left: the tarball and patch (kind source) in
 * the cache, or the cached clone and the commit (kind git). */
struct buildjob_src {
	char tarball[PATH_MAX], patch[PATH_MAX];
	char gitdir[PATH_MAX];
	char commit[41];
};
/* The job's fetching: kind source's tarball and patch into the cache
 * (sha256-checked), kind git's tree fetched and its ref resolved (git's
 * output in <job_dir>/build.log). An rc's own job (not a bisection
 * step) builds job->release_commit when another of its targets built
 * it, and its commit's Makefile must say the job's version. 0, or -1
 * with err (infra). */
int buildjob_fetch(const struct job *job, const struct config *cfg,
		   const char *cache_dir, const char *job_dir, FILE *joblog,
		   const atomic_int *cancel, struct buildjob_src *s, char *err,
		   size_t errlen);
/* The job's place among builds waiting for a token, into out (64
 * bytes): the claim order's (the rc due first, without a deadline last;
 * review builds before bisection steps; then the job's id). */
char *buildjob_rank(const struct job *job, char *out, size_t len);
/* The job's building: waits for a build token (jobserver.c: [build]
 * jobs builds at once, sharing as many make jobs, entering by rank),
 * checks a git commit out and builds t's kernel, make's output in
 * <job_dir>/build.log, progress (may be NULL) told each step. 0:
 * out->image is in the cache; 1: the source does not build (out->diag);
 * -1: infra (err), cancel included. */
int buildjob_build(const struct job *job, const struct target *t,
		   const struct config *cfg, const char *cache_dir,
		   const char *job_dir, FILE *joblog, const atomic_int *cancel,
		   const struct buildjob_src *s,
		   void (*progress)(void *, const char *, long, long),
		   void *pcls, struct buildjob_result *out, char *err,
		   size_t errlen);

/* ---- source.c: announced rcs made into jobs that build them ---- */
/* With [build] from_announcements: one thread resolves each announced rc
 * with a patch URL and no kernels into source jobs (kicked after an
 * announcement, and every 30 s). */
/* queued (may be NULL) is called when a pass made jobs. */
int source_start(const struct config *, const char *db_path,
		 const char *cache_dir, void (*queued)(void), char *err,
		 size_t errlen);
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

#endif /* RCGATE_BUILD_H */
