/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * store/store.h - SQLite, the only user of sqlite3.h (store.c), and the
 * background consumer loop every store-driven thread is (consumer.c).
 *
 * The public header of daemon/store/: a section per file. A .c file includes
 * its own folder's headers and those of lower floors only (docs/design.md,
 * tests/layers.sh).
 */
#ifndef RCGATE_STORE_H
#define RCGATE_STORE_H

#include "base/base.h"

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
	Q_RELEASES_PARTIAL,	/* none */
	Q_RELEASE_REPORT,	/* release id: newest report */
	Q_FIX_CANDIDATES,	/* release id: id, branch, seen_on */
	Q_METRICS_JOBS,		/* none: state, n */
	Q_METRICS_REGRESSIONS,	/* none: state, n */
	Q_METRICS_OUTBOX,	/* none: state, n */
	Q_FEED,			/* limit: newest regression events and reports */
	Q_SOURCES_UNRESOLVED,	/* none: announced rcs to build (source.c) */
	Q_BISECT_CANDIDATES,	/* none: confirmed regressions of git rcs */
	Q_BISECT_UNBISECTABLE,	/* none: ... of rcs not built from git */
	Q_BISECT_GOOD,		/* release id, target, test: a passing commit */
	Q_BISECTIONS_RUNNING,	/* none */
	Q_BISECT_STEPS,		/* bisection id */
	Q_BISECTION,		/* bisection id */
	Q_BISECTION_SIBLINGS,	/* bisection id: every bisection of its rc */
	Q_REGRESSION_BISECTIONS,	/* regression id: its bisections, and
				 * the regressions that share a culprit */
	Q_REVERT_PENDING,	/* (none): bisections whose revert check
				 * waits, with its job (bisect.c) */
	Q_PREREQ_PENDING,	/* (none): bisections whose prerequisite
				 * search is to run (prereq.c) */
	Q_SEED_CANDIDATES,	/* (none): git rcs whose failure rerun is
				 * unfinished (bisect_seed.c) */
	/* issue 28, reply.c: the mails of the conversation */
	Q_RELEASE_FIXES,	/* release id: regressions it fixes */
	Q_SHIPPED_REGRESSIONS,	/* none: rcs released with a regression
				 * not reported to regzbot yet */
	Q_REGRESSION_MAILS,	/* regression id: the mails about it and
				 * the reports of the rcs it occurs in */
	Q_REGZBOT_GROUP,	/* message id: the regressions a regzbot
				 * report is about, their state on its branch */
	/* issue 26: tests the rc only skipped that its baseline passed */
	Q_RELEASE_LOST_COVERAGE,	/* release id, baseline release id */
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
	const char *announce_head;	/* the body's head, may be NULL */
	/* The announcement's DKIM verdict: 1 verified (replies to its
	 * recipients), 0 not (replies to [announce] lists alone); why, as
	 * shown (may be NULL). */
	long mail_verified;
	const char *mail_dkim;
};
struct job_row {
	int64_t id;
	const char *target, *state, *kernel_version, *error;	/* may be NULL */
	double boot_seconds;
	int64_t rerun_of;		/* a rerun: the job it reruns (0 none) */
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
	/* Its first bad commit, of this rc's bisection on its target, else
	 * of another rc's (culprit_in: that rc's version); NULL if none. */
	const char *culprit, *culprit_subject, *culprit_in;
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
/* Releases still testing that have results (a job done, one unfinished)
 * and no report yet, where a confirmed regression is reported early; or
 * a report and a job ended since with failures not yet rerun or linked,
 * where they are rerun and what a rerun confirmed is linked (and
 * bisected) without another report. */
struct partial_row {
	int64_t id;
	int reported;
};
int store_releases_partial(struct store *, struct rowset *out, char *err,
			   size_t errlen);			/* partial_row */
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
/* The confirmed regressions that cannot be bisected (no job of the
 * release on the target was built from git), as candidates whose tree is
 * the announcement's "tree branch" ("" none) and whose bad is the kind
 * of artifact tested instead ("image", "deb", "source"). */
int store_bisect_unbisectable(struct store *, struct rowset *out, char *err,
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
/* One bisection per cause (017-bisect-lead.sql): the bisection of
 * another target of c's rc, of c's kind (build or tests) and bisecting
 * one of c's failing tests, that c follows.
 * 2 with *lead a found one (c takes its answer), 1 while one runs
 * (c waits for it), 0 none (c bisects on its own: none started, or each
 * ended without a culprit), -1. */
struct bisect_lead {
	int64_t id;
	char target[32];
	char culprit[41];		/* found: the first bad commit */
	char bad[41];			/* the rc's commit it bisected to */
};
int store_bisect_lead(struct store *, const struct bisect_candidate *c,
		      struct bisect_lead *lead, char *err, size_t errlen);
/* c's row that takes found bisection lead's answer (culprit, range,
 * people; lead set, no prerequisite search of its own), at commit bad of
 * lead's tree, with message. 1 with *id, 0 when c has a row already or
 * lead is not found, -1. */
int store_bisection_follow(struct store *, const struct bisect_candidate *c,
			   int64_t lead, const char *bad, const char *message,
			   int64_t *id, char *err, size_t errlen);
/* Queues a step: a job of the release on the rc job's artifact, building
 * commit and running only_tests (NULL: the build alone). With revert (the
 * culprit) it is the revert check instead: commit with revert reverted,
 * and the bisection's revert_state becomes 'pending'. */
int store_bisect_step_add(struct store *, int64_t bisection_id,
			  int64_t rc_job_id, const char *commit,
			  const char *only_tests, const char *revert,
			  char *err, size_t errlen);
/* Bisections whose revert check waits (revert_state 'pending'), with
 * their revert job's state and verdict, oldest first. */
struct revert_todo {
	int64_t id, job_id;
	const char *version, *test, *culprit, *state, *error, *build,
		*build_sign, *status, *failing;
};
int store_revert_pending(struct store *, struct rowset *out, char *err,
			 size_t errlen);
/* The revert check's answer (state pass, fail, conflict, infra). */
int store_revert_finish(struct store *, int64_t id, const char *state,
			const char *message, char *err, size_t errlen);
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
/* Bisections whose follow-up waits for the prerequisite search
 * (prereq_state 'pending'), oldest first. */
struct prereq_todo {
	int64_t id;
	const char *version, *tree, *culprit, *culprit_upstream, *bad;
};
int store_prereq_pending(struct store *, struct rowset *out, char *err,
			 size_t errlen);
/* The targets of rcs built from git whose failure rerun is queued or
 * running (a bisection is likely to follow), where no bisection of the
 * branch runs on the target: tree is the rc job's (what its bisection
 * would build from). One row per rc and target, oldest rc first. */
struct seed_candidate {
	int64_t release_id;
	const char *version, *target, *tree;
};
int store_seed_candidates(struct store *, struct rowset *out, char *err,
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
	char revert_commit[41];		/* the revert check: git_commit with
					 * this commit reverted ("" none) */
	char deadline[24];		/* its release's "Responses should be
					 * made by", UTC ISO 8601 ("" none) */
	int64_t rerun_of;		/* a rerun: the job it reruns (0 none) */
	char rerun_image[65];		/* a rerun of a job that built its
					 * kernel: that image's sha256 ("")
					 * and commit, booted again as is */
	char rerun_commit[41];
	char release_commit[41];	/* kind git: the commit the release
					 * was first built from (git_ref's
					 * head then; "" none yet) */
};
/* Takes the oldest queued job and moves it to 'fetching'. 1 = claimed,
 * 0 = none queued, -1 = error. */
int store_job_claim(struct store *, const char *worker, struct job *out,
		    char *err, size_t errlen);
/* Which jobs a claimer takes: any, only those rcgated builds (artifact
 * kinds with built set: the build workers'), only the others, or only
 * bisection steps and revert checks (the bisection worker's). */
enum claim_kind { CLAIM_ANY, CLAIM_BUILT, CLAIM_POSTED, CLAIM_BISECT };
/* store_job_claim among the jobs want takes, in the same order. */
int store_job_claim_kind(struct store *, const char *worker,
			 enum claim_kind want, struct job *out, char *err,
			 size_t errlen);
/* Compare-and-set of a job's state, with an event row. Returns 1 if the job
 * was in 'from' and is now in 'to', 0 if it was not in 'from' (e.g. it was
 * cancelled meanwhile), -1 on error. from NULL = any active state. */
int store_job_transition(struct store *, int64_t id, const char *from,
			 const char *to, const char *message, char *err,
			 size_t errlen);
/* A source job's build: the image it made (NULL if none) and its time. */
int store_job_built(struct store *, int64_t id, const char *sha256,
		    double seconds, char *err, size_t errlen);
/* What its build says for a reader who rebuilds it: the compiler and
 * git describe of the commit ("" or NULL: unknown). */
int store_job_build_facts(struct store *, int64_t id, const char *compiler,
			  const char *describe, char *err, size_t errlen);
/* A build's step and progress (done, total < 0: unknown), and the commit
 * a git build checks out (NULL: unchanged). */
int store_job_build_progress(struct store *, int64_t id, const char *step,
			     long done, long total, const char *commit,
			     char *err, size_t errlen);
/* The commit a git job fetched, recorded as its built_commit in one
 * statement: an rc's own job (not a bisection step, no commit of its
 * own) records the one another job of the same release, tree and branch
 * recorded first, if one did, so two targets that fetched a moving
 * branch at the same moment build one tree. What was recorded into out
 * (41 bytes). 0, -1. */
int store_job_record_commit(struct store *, int64_t id, const char *commit,
			    char out[41], char *err, size_t errlen);
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
/* Stores all results and moves the job from its active state to done in
 * one transaction; 0 (results dropped) when it is no longer active. */
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
/* Cancels one unfinished job, with message in its events (the scheduler's
 * monitor then stops its build or guest): 1, 0 when it had ended, -1. */
int store_job_cancel(struct store *, int64_t id, const char *message,
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
/* Lost coverage (issue 26): a test that every finished run of a target
 * in the release skipped (no pass, no fail) while the baseline's runs of
 * the same target passed it and never failed it. Not a regression of the
 * kernel's code (the reason is usually a feature missing from a config or
 * a syscall gone), but the rc was not tested where its baseline was: the
 * gate and the report say so, with the skip reason. 0 with out filled
 * (lost_coverage_row, ordered by target and test), -1 with err. */
struct lost_coverage_row {
	const char *target, *test, *reason;	/* reason may be NULL */
};
int store_release_lost_coverage(struct store *, int64_t release_id,
				int64_t baseline_id, struct rowset *out,
				char *err, size_t errlen);
/* Marks the regression fixed on branch by version; one fixed on every
 * branch it hit becomes fixed. 1 marked, 0 already, -1 error. */
int store_regression_fix(struct store *, int64_t id, const char *branch,
			 const char *version, char *err, size_t errlen);
/* Claims the release's analysis: 1 if this caller set 'analysed'. */
int store_release_claim_analysis(struct store *, int64_t release_id,
				 char *err, size_t errlen);
/* A rerun of the release's job on target that runs only only_tests (the
 * agent's names, comma-separated; NULL: the whole suite, as the job). */
int store_job_rerun(struct store *, int64_t release_id, const char *target,
		    const char *only_tests, char *err, size_t errlen);
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
/* A mail rcgate composed (reply.c), recorded with its deliveries in one
 * transaction, at most once per kind and subject (release, regression,
 * about: 0 if none). 1 recorded and queued, 0 already sent (nothing
 * queued), -1 error. With report_text set, the rc's report is stored in
 * the same transaction (gate and report_text as store_report_add). */
struct mail_in {
	const char *kind;	/* report, bisection, invalid, regzbot, ... */
	int64_t release_id, regression_id, about;
	const char *message_id;	/* without <> */
	const char *email;	/* the RFC 822 text (for the report row) */
	const char *gate, *report_text;	/* report only, else NULL */
	/* Why it does not go out by SMTP (never later either), or NULL. */
	const char *refused;
	/* More regressions the same mail is about (a regzbot report of all
	 * of an rc's): recorded with it, same kind, release and id. */
	const int64_t *also_regressions;
	size_t nalso;
};
int store_mail_add(struct store *, const struct mail_in *,
		   const struct outbox_in *, size_t n, char *err,
		   size_t errlen);
/* The culprit's author ("Name <addr>"), author date (RFC 2822) and the
 * people its follow-up is Cc'd to (reply_commit_people), any may be NULL. */
int store_bisection_culprit(struct store *, int64_t id, const char *author,
			    const char *date, const char *people, char *err,
			    size_t errlen);
/* The Message-ID of rcgate's mail of kind about release/regression/about
 * (about < 0: the first of any) into buf: 1 found, 0 none, -1 error. A
 * mail that was refused (never sent) is none: nothing threads under it. */
int store_mail_id(struct store *, const char *kind, int64_t release_id,
		  int64_t regression_id, int64_t about, char *buf, size_t len,
		  char *err, size_t errlen);
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
	const char *head;	/* the body's head (announcement.head), or NULL */
	long rc, patch;
	int verified;		/* its DKIM signature was verified */
	const char *dkim;	/* the verdict as shown, or NULL */
};
/* A patch of the series of the release announced as parent_id, by the
 * announcement's sender: 1 recorded (version set), 0 no such release or
 * not its sender, -1 error. The same number again keeps the first. */
int store_series_patch_add(struct store *, const char *parent_id,
			   const char *from_addr, long number, long total,
			   const char *subject, const char *message_id,
			   char *version, size_t vlen, char *err, size_t errlen);
/* The Message-ID of patch number of release_id's series into buf: 1, or
 * 0 when it never reached intake, -1 error. */
int store_series_patch_id(struct store *, int64_t release_id, long number,
			  char *buf, size_t len, char *err, size_t errlen);
/* Creates the release from an announcement, or fills the announcement
 * into an existing release that has none. 0 created, 1 updated, 2 already
 * announced (nothing changed), 3 corrected (it had another Message-ID),
 * -1 error. */
int store_release_announce(struct store *, const struct announce_in *,
			   int64_t *release_id, char *err, size_t errlen);

int store_token_add(struct store *, const char *name, const char *hash,
		    const char *scope, char *err, size_t errlen);
/* What a token check (and the HTTP layer's authorize callback) answers. */
enum { AUTH_INVALID = 0, AUTH_OK = 1, AUTH_SCOPE = 2 };
/* AUTH_OK if a token with this hash exists and carries scope, AUTH_SCOPE if
 * it exists with a smaller scope, AUTH_INVALID if none, -1 on error. */
int store_token_check(struct store *, const char *hash, const char *scope);

/* ---- consumer.c: a thread that runs one pass over the store now and then ---- */
/* consumer.c: a thread that runs one pass over the store now and then. */


struct store;

/* The shape of every background loop (engine, notify, trigger, source,
 * prereq): its own store connection, a pass when kicked or when the pass
 * says, and a stop that waits for the pass under way (which polls
 * consumer_stopping to end early). */
#define CONSUMER_PERIOD 0	/* pass's answer: the next one in period s */
#define CONSUMER_NOW (-1)	/* pass's answer: more to do, again at once */
struct consumer {
	const char *name;		/* "source": thread and log name */
	/* One pass: CONSUMER_PERIOD, CONSUMER_NOW, or the seconds until
	 * the next pass (a kick comes sooner either way). */
	int (*pass)(struct store *, void *arg);
	void *arg;
	int period;			/* seconds between passes unkicked */
	/* its own */
	char *db;
	pthread_t thread;
	int running, pending;
	atomic_int stopping;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};
int consumer_start(struct consumer *, const char *db_path, char *err,
		   size_t errlen);
void consumer_kick(struct consumer *);
int consumer_stopping(struct consumer *);
void consumer_stop(struct consumer *);

#endif /* RCGATE_STORE_H */
