/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * job_internal.h - what the files of job/ share and nothing else includes
 * (tests/unit/job_*.c aside): one attempt of one job (struct jobrun), the
 * phase table that runs it, the guest slots, the boots. A section per file.
 *
 *   sched.c    worker threads, the cancel monitor, start and stop
 *   phases.c   the job as a table of phases, and the runner that walks it
 *   run.c      one attempt's context: its log, infra errors, state changes
 *   slots.c    guest slots per host, in the order that ends a batch soonest
 *   prepare.c  phases fetch, source, build, initramfs
 *   disks.c    phase disks: scratch filesystems
 *   boot.c     phases place, accel, suite: guests through guest.c / hosts.c
 *   crash.c    phase crash: the power-cut test's two boots
 *   collect.c  phase results: KTAP into rows, the kernel's identity
 */
#ifndef RCGATE_JOB_INTERNAL_H
#define RCGATE_JOB_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base.h"
#include "store/store.h"
#include "artifact/artifact.h"
#include "guests/guests.h"
#include "build/build.h"
#include "job/job.h"

/* ---- sched.c: what every file of the job reads ---- */
#define MAX_SLOTS 64
/* Worker threads per guest slot: one job booting, one being prepared or
 * running its other chain. */
#define WORKERS_PER_SLOT 2
/* Worker threads that take only the jobs rcgated builds: up to two
 * building at once (the build budget, jobserver.c: [build] jobs tokens,
 * 2 by default), the third booting the kernel built before or waiting
 * for a token. They hold no guest worker. (A fourth, when each worker
 * held a store connection of its own, cost 0.3 MiB of idle memory:
 * bench/README.md, the week's fourth round; idle workers now claim
 * through one shared connection, sched.c.) */
#define BUILD_WORKERS 3
/* Worker threads that take only bisection steps and revert checks, so a
 * step waits for a build token at most, never for a build worker. In the
 * week's thirteenth round the round's two steps were queued at 4.8 min
 * and claimed at 6.4: the three build workers held other rcs' jobs, two
 * of them booting what they had built, while a token was free from 5.2.
 * The builds still share the [build] jobs tokens (jobserver.c). Two, as
 * a round of the bisection queues its steps at once (bisect.c): in the
 * fourteenth round the second step waited 1.9 minutes for the one
 * bisection worker to end the first, while the build tokens were shared
 * anyway. */
#define BISECT_WORKERS 2
#define MAX_WORKERS (MAX_SLOTS * WORKERS_PER_SLOT + BUILD_WORKERS + \
		     BISECT_WORKERS)

extern struct sched_context sched_ctx;
/* "rcgate-<instance>-": every guest of this daemon, and only those. */
extern char sched_guest_prefix[32];
extern atomic_int sched_stopping;
extern atomic_uint sched_guests_running;

/* ---- run.c: one attempt of one job ---- */

/* Where a job's time went, step by step (seconds), logged when it ends.
 * Every boot's define, wait (for a guest slot), start, guest and destroy
 * add up, so with the suite and the crash chain side by side the steps
 * exceed the total. */
struct job_steps {
	double build, fetch, initramfs, disks, define, wait, start, guest,
		destroy, results, cpu;
};

/* A parsed KTAP file and the result rows taken from it; rows point into
 * report, so both live until the results are stored. */
struct phase_results {
	struct ktap_report report;
	int parsed;
	struct result_row *rows;
	size_t n;
};

/* The scratch disks of one boot, vda, vdb, ... in order. */
struct disk_set {
	char path[GUEST_MAX_DISKS][PATH_MAX];
	const char *fs[GUEST_MAX_DISKS];
	unsigned n;
};

/* The result sets one attempt stores, in one transaction. */
enum { RESULTS_SUITE, RESULTS_CRASH, RESULTS_BUILD, RESULTS_SETS };

/*
 * What one attempt of one job needs while it runs, and what its phases
 * hand each other. Its suite boot and its crash chain run on two threads:
 * lock guards log, steps, failed and the store connection from then on.
 */
struct jobrun {
	struct store *st;
	atomic_int *cancel;		/* the worker's: set by the monitor,
					 * sched_stop, or a failed boot */
	unsigned worker;
	const struct job *job;		/* &built once a build made the image */
	const struct target *target;
	char dir[PATH_MAX];
	FILE *log;
	uint64_t prio;			/* claim order x 2: its boots' slot seq */
	pthread_mutex_t lock;
	struct job_steps steps;
	int failed;			/* an infra error is recorded */
	char build_step[16];		/* the last progress written */
	double build_written;
	/* The host it runs on; for a host without our files, what was
	 * uploaded there as volumes (stage_file), removed at the end. */
	struct host_placement place;
	int host_failed;		/* the host failed, not the job */
	pthread_mutex_t stage_lock;
	/* kernel, initrd, the suite's disks (one per filesystem kind, 4)
	 * and the crash boots' (up to GUEST_MAX_DISKS) */
	struct staged {
		char local[PATH_MAX], volume[128], remote[PATH_MAX];
	} staged[2 + 4 + GUEST_MAX_DISKS];
	unsigned nstaged;

	/* Handed from phase to phase. */
	int step;			/* a bisection step: no crash test, no
					 * version check, maybe no boot */
	struct buildjob_src bsrc;
	struct buildjob_result built_out;
	struct job built;
	struct result_row build_row;
	char artifact[PATH_MAX], modules[PATH_MAX];
	char kernel[PATH_MAX], initrd[PATH_MAX], kver[128];
	struct disk_set disks;
	int accel;			/* 1 KVM, 0 TCG */
	int timeout_s;
	int suite_booted;		/* the KVM probe was the suite's boot */
	double suite_seconds;
	struct phase_results results[RESULTS_SETS];
};

/* Seconds since *mark, and moves the mark to now. */
double lap(double *mark);
/* A line of the job's log, with a millisecond UTC time stamp. */
void jlog(struct jobrun *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* An infrastructure failure; retried while attempts last, unless final.
 * The attempt's first failure is the one recorded; it cancels the
 * attempt's other boot. */
void infra_as(struct jobrun *r, const char *kind, const char *message,
	      int final);
void infra(struct jobrun *r, const char *kind, const char *message);
/* The host failed under the job: retried on another host. */
void infra_host(struct jobrun *r, const char *message);
/* Moves the job from one state to another; 0 means it was cancelled (or
 * is being shut down). */
int advance(struct jobrun *r, const char *from, const char *to);
void log_steps(struct jobrun *r, double total);
/* A build's progress into the job row (buildjob_build's callback). */
void build_progress(void *cls, const char *step, long done, long total);

/* ---- phases.c: the job as a table ---- */

enum phase_flags {
	PHASE_BESIDE = 1,	/* runs on a thread of its own beside the
				 * rows after it (a failure to start the
				 * thread runs it at the join instead) */
	PHASE_JOIN = 2,		/* waits for every beside row first; stops
				 * if one of them failed */
};

/* What an exec returns. */
enum phase_rc {
	PHASE_STOP = -1,	/* failed (its infra error recorded) or cancelled */
	PHASE_NEXT = 0,		/* the next row */
	PHASE_END = 1,		/* the job's outcome is recorded: no more rows */
};

#define PHASE_STEP_NONE ((size_t)-1)

struct phase {
	const char *name;
	const char *state;	/* the job's state while it runs (JS_*) */
	/* Whether this attempt needs the row; NULL: always. */
	int (*wants)(const struct jobrun *r);
	int (*exec)(struct jobrun *r);
	size_t step;		/* offsetof(struct job_steps, x) its time
				 * adds to, or PHASE_STEP_NONE */
	unsigned flags;
};

/* The phases of every job, in order. */
extern const struct phase *const job_phases[];
extern const size_t job_nphases;

/*
 * Walks table for r: skips the rows r does not want, moves the job to
 * each row's state first (advance_fn; 0 from it stops the walk), runs
 * beside rows on their own thread, joins them at a join row and before
 * returning. Returns the last exec's phase_rc: PHASE_END or PHASE_NEXT
 * when every row ran, PHASE_STOP otherwise. The initial state is
 * JS_FETCHING (a claimed job's).
 */
int phases_run(const struct phase *const *table, size_t n, struct jobrun *r,
	       int (*advance_fn)(struct jobrun *, const char *, const char *));

/* ---- slots.c: guest slots ---- */

enum boot_kind { BOOT_SUITE, BOOT_CRASH_WRITE, BOOT_CRASH_VERIFY, BOOT_KINDS };
#define CRASH_WRITE_OWN BOOT_KINDS	/* a column of the learned lengths */

enum boot_kind boot_kind_of(const char *phase);
/* Each host's capacity in guests (hosts_status); the worker threads to
 * start for all of them. */
unsigned slots_reset(void);
/* Wakes every waiter (sched_stop). */
void slots_wake(void);
/*
 * A domain slot (run 0) or a run slot (run 1) of host. 0 with the slot
 * held, -1 when *cancel or the daemon stops first; due is the job's rc's
 * deadline (UTC ISO 8601, "" or NULL none); seq is unique among the
 * host's boots. *planned (may be NULL) tells whether the plan of the end
 * (not longest first) chose this boot.
 */
int slot_acquire(unsigned host, int run, const struct target *t,
		 const char *phase, const char *due, uint64_t seq,
		 const atomic_int *cancel, int *planned);
/* A boot waiting for a slot, and the order slots are handed out in: the
 * rc due first (none last), then the longest chain, then claim order. */
struct slot_waiter {
	char due[24];		/* the rc's deadline, UTC ISO 8601, or "" */
	double length;		/* expected seconds until its chain ends */
	uint64_t seq;		/* claim order, then the job's chain */
};
int slot_waiter_before(const struct slot_waiter *a,
		       const struct slot_waiter *b);
/* What job's boots are due by in that order: its rc's deadline, or for a
 * rerun of an rc with one, before every deadline (store_jobs.c claims
 * reruns first, and their boots keep that place). */
const char *slot_due(const struct job *job);
/* Gives a slot of host back. The boot is done with the host unless
 * follows: a crash-write whose crash-verify comes after the power cut. */
void slot_release(unsigned host, int run, uint64_t seq, int follows);
/* seconds: from the start of a boot of kind column to the end of its
 * chain, or the crash-write's own boot (CRASH_WRITE_OWN). */
void length_learn(const struct target *t, size_t column, double seconds);

/* ---- crash.c: the power cut ---- */

/* A promise the agent reported durable before the power cut. */
struct durable {
	char fs[16], test[40];	/* [a-z0-9_] only, "?" when absent or odd */
	long size;		/* 0..RCGATE_CRASH_BYTES */
};
/*
 * The "# rcgate-durable:" lines of a crash-write channel, each on a line
 * of its own with " size=<0..RCGATE_CRASH_BYTES>"; others are ignored.
 * The first max go to out; returns how many there were.
 */
int crash_durable_parse(const char *text, struct durable *out, int max);

/* ---- disks.c: scratch disks ---- */

struct fs_kind {
	const char *name;
	const char *mkfs[6];	/* argv without the device */
	long min_mb;
};
const struct fs_kind *fs_find(const char *name);
/* A fresh disk of fs at path: a copy of the template numbered unique (0:
 * the suite's; each number is formatted apart and has its own UUID). */
int make_disk(struct jobrun *r, const char *path, const struct fs_kind *fs,
	      unsigned unique, char *err, size_t errlen);
/* The scratch disks of [jobs] filesystems: copies fresh disks of each
 * (1: the suite's disk-<fs>.img; RCGATE_CRASH_PROMISES: the power cut's
 * disk-crash-<fs>-<k>.img from template k, one promise per filesystem
 * instance, and none of a raw kind, which holds no file). ext4 is
 * required (the suite's reference); another filesystem the host cannot
 * format, or for which the guest has no room, is left out with a note
 * ("<fs> not tested<what>: why"). */
int make_disks(struct jobrun *r, struct disk_set *d, unsigned copies,
	       const char *what, char *err, size_t errlen);
void remove_disks(const struct disk_set *d);

/* ---- boot.c: one boot of the job ---- */

struct boot_plan {
	const char *phase;		/* NULL: the main suite */
	const struct disk_set *disks;
	const char *extra_cmdline;	/* "" or e.g. "rcgate.phase=..." */
	const char *marker;
	int use_kvm;
	int timeout_s;
};
/* The console log and KTAP channel paths of a boot of phase. */
void phase_paths(struct jobrun *r, const char *phase, char *console,
		 char *channel, size_t len);
/* The domain name of a boot of this attempt. */
void guest_name(const struct jobrun *r, const char *phase, char *name,
		size_t len);
int boot(struct jobrun *r, const char *kernel, const char *initrd,
	 const struct boot_plan *plan, enum guest_outcome *outcome,
	 struct guest_times *times, char *err, size_t errlen);
/* Turns a boot that did not complete into the right infra error; 0 when
 * the boot completed. */
int boot_outcome(struct jobrun *r, int rc, enum guest_outcome outcome,
		 const char *phase, const char *err);
/* Every volume of the attempt goes once its guests have. */
void unstage_all(struct jobrun *r);

/* ---- collect.c: results ---- */

/*
 * The infra error a boot that did not complete is (pure): the agent's own
 * reason when its output has one, a panic seen on the console, the
 * timeout, or a guest that stopped early. *kind and the message are
 * static strings or reason.
 */
void boot_failure_kind(enum guest_outcome outcome, const char *agent_reason,
		       int console_panicked, const char **kind,
		       const char **message);
/* The agent's own RCGATE_INFRA reason in a KTAP file, or NULL (freed by
 * the caller). */
char *agent_infra_reason(const char *ktap_path);
int console_has(const char *path, const char *needle);
/*
 * A parsed report into result rows (pure): 0, or -1 with the infra kind
 * and message (agent, agent_output) when it is not a complete report.
 * p->rows point into p->report.
 */
int results_from_report(struct phase_results *p, const char **kind,
			char *msg, size_t msglen);
/* Parses a phase's KTAP file into p; on anything but a complete report
 * records the infra error and returns -1. */
int collect(struct jobrun *r, const char *ktap_path, struct phase_results *p);
void phase_results_free(struct phase_results *p);
/* Stores the rows of n result sets in one transaction (the job ends done;
 * a cancelled job keeps its state and drops them). */
void store_results(struct jobrun *r, struct phase_results *sets, size_t n,
		   double seconds);
/* "kernel=6.1.0-57-cloud-amd64" out of the agent's header line. */
void agent_kernel(const char *info, char *out, size_t len);
/* The kernel that ran must be the release's version unless custom. */
int kernel_identity(struct jobrun *r, const struct ktap_report *rep);

/* ---- the rows, each in the file that owns its work ---- */
extern const struct phase phase_fetch, phase_reuse, phase_source, phase_build,
	phase_initramfs, phase_disks, phase_place, phase_accel, phase_crash,
	phase_suite, phase_results;

#endif
