/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * review/review.h - deciding what results mean: regression rules
 * (regress.c), the analysis of a finished release (engine.c), bisection
 * (bisect.c) and the prerequisite search (prereq.c).
 *
 * The public header of daemon/review/: a section per file. A .c file includes
 * its own folder's headers and those of lower floors only (docs/design.md,
 * tests/layers.sh).
 */
#ifndef RCGATE_REVIEW_H
#define RCGATE_REVIEW_H

#include <stddef.h>

#include "base/base.h"
#include "store/store.h"

/* ==== prereq.c ==== */
/* prereq.c: the upstream commits a culprit backport may need (a hint). */


#define PREREQ_NAME 64		/* longest identifier kept */
#define PREREQ_PATH 256
#define PREREQ_FILES 32
#define PREREQ_FUNCS 48
#define PREREQ_CALLS 96
#define PREREQ_MEMBERS 48
#define PREREQ_MAX 10		/* candidates listed */

/* What a change touches, read from its unified diff with function
 * context (git -W): the files, the functions it changes (each hunk holds
 * whole functions: their definition lines at column 0), the functions
 * its changed lines call, the struct members they use (->x, .x), and
 * what any line of its hunks calls through a member (->x(): "indirect").
 * Comments and string literals are not read; the
 * commonest helpers (kfree, IS_ERR, spin_lock, ...) are left out. The
 * fingerprint is a patch-id: SHA-256 of the files and changed lines
 * without whitespace or line numbers, so the same change applied at
 * another offset (a backport) has the same one. */
struct prereq_sig {
	char files[PREREQ_FILES][PREREQ_PATH];
	char funcs[PREREQ_FUNCS][PREREQ_NAME];
	char calls[PREREQ_CALLS][PREREQ_NAME];
	char members[PREREQ_MEMBERS][PREREQ_NAME];
	char indirect[PREREQ_MEMBERS][PREREQ_NAME];	/* ->x( in its hunks */
	/* Filled by the search, not the scan: the struct members the
	 * culprit's functions are assigned to (".end_io = ext4_dio_write_end_io"
	 * makes ext4_dio_write_end_io an implementation of ->end_io). */
	char impl_member[8][PREREQ_NAME], impl_func[8][PREREQ_NAME];
	size_t nfiles, nfuncs, ncalls, nmembers, nindirect, nimpl;
	char fingerprint[65];	/* "" for a diff with no changed line */
};
void prereq_scan(const char *diff, size_t len, struct prereq_sig *sig);
/* How strongly cand relates to the culprit: shared files (3 each), a
 * function the culprit calls that cand changes (4), code that calls an
 * operation the culprit implements (4), a function both change (3), one
 * the culprit changes that cand calls (2), members both use (1 each, at
 * most 3). 0: unrelated. why gets the reasons in words
 * ("changes generic_write_sync(), which the culprit calls; ..."). */
int prereq_score(const struct prereq_sig *culprit, const struct prereq_sig *cand,
		 char *why, size_t whylen);

/* The search in the cached clones updir (upstream) and stdir (stable):
 * the commits of v<base>..upstream in updir that relate to culprit (a
 * commit of stdir) and that stdir's v<base>..bad lacks, as a JSON array
 * ([{commit, subject, score, why}], best first, at most PREREQ_MAX) in
 * *list; msg says what was searched. 0, or -1 with msg saying why
 * nothing could be (no such commit or tag, git failed). */
struct build_options;
struct json_t;
int prereq_search(const char *updir, const char *stdir, const char *culprit,
		  const char *upstream, const char *base, const char *bad,
		  const struct build_options *o, struct json_t **list,
		  char *msg, size_t msglen);

/* The search (prereq_run_once: the prerequisite thread's pass) and the
 * thread itself: started only with [bisect] upstream_git. */
struct config;
struct store;
int prereq_run_once(struct store *, const struct config *, const char *cache_dir);
int prereq_start(const struct config *, const char *db_path,
		 const char *cache_dir, char *err, size_t errlen);
void prereq_kick(void);
void prereq_stop(void);

/* ---- bisect.c: the rules of a bisection (issue 15) ---- */
enum bisect_verdict { BISECT_UNTESTED, BISECT_GOOD, BISECT_BAD, BISECT_SKIP };
enum { BISECT_STEP, BISECT_FOUND, BISECT_AMBIGUOUS, BISECT_EMPTY };
/* A round of k steps that run at once (k >= 1). v[0..n): the verdicts of
 * the commits after the good end, oldest first, v[n-1] the bad end (its
 * verdict need not be set: it is bad). Returns BISECT_STEP with
 * next[0..*count) the commits to test (1 <= *count <= k, oldest first:
 * the untested commits nearest the points that split what is left into
 * k + 1 near-equal parts, so a round leaves a (k + 1)-th:
 * ceil(log_{k+1}(n)) rounds without skips; fewer than k when fewer are
 * left untested; k = 1: the one nearest the middle, ties to the older),
 * BISECT_FOUND when [*lo, *hi] is one commit, the first bad one (*hi),
 * BISECT_AMBIGUOUS when only skipped commits are left between the last
 * good and the first bad (the first bad one is in [*lo, *hi]),
 * BISECT_EMPTY for n = 0. */
int bisect_round(const enum bisect_verdict *v, size_t n, size_t k,
		 size_t *next, size_t *count, size_t *lo, size_t *hi);
/* How many steps a round runs at once, given k ([bisect] parallel), the
 * branch's free worktrees whose build would be incremental (warm) and
 * the m candidates left. A step in a new worktree builds the whole tree
 * (from the compiler cache: a warm week measured 394 s for it against
 * 75 s for the incremental step beside it, bench/README.md), and a round
 * waits for its slowest step: so a round is wider than warm only when no
 * worktree is warm (every step builds it all anyway) or when the width
 * saves two rounds or more (a 372-commit rc: 9 rounds alone, 6 by two). */
size_t bisect_width(size_t k, size_t warm, size_t m);
/* How many warm worktrees to copy before a round (gitsrc_worktree_seed:
 * tens of seconds each, against a round of minutes): k - warm when some
 * worktree is warm to copy and k incremental steps at once take fewer
 * rounds than the warm ones alone; else 0. */
size_t bisect_seeds(size_t k, size_t warm, size_t m);
/* What a step and a revert check run for a bisection's tests
 * (",name,name,", or "-" for a build): the list rcgate.only takes, "-"
 * for none, or "" (the whole suite) for one too long for the kernel's
 * command line. */
void bisect_step_only(const char *tests, char *out, size_t len);
struct revert_todo;
/* ---- bisect_revert.c: a culprit checked by reverting it ---- */
/* The revert check's answer from its job (state done, its build and test
 * results; or infra_error, cancelled): "pass", "fail", "conflict" (the
 * revert does not apply) or "infra" (never "fail"), with msg its words
 * for the follow-up and the API; NULL while the job is not final. */
const char *bisect_revert_verdict(const struct revert_todo *t, char *msg,
				  size_t len);
/* The finished revert checks into their bisections, each one's
 * follow-up told (it waits for all of an rc's). 0, -1. */
struct engine_context;
int bisect_revert_settle(struct store *, const struct engine_context *,
			 char *err, size_t errlen);
/* One bisection per cause: candidate cd waits while another target of
 * its rc bisects the same kind of failure (0), takes its culprit and
 * queues its own revert check once it is found (1), or bisects on its
 * own (-1: no such bisection, or each ended without a culprit). */
int bisect_follow(struct store *, const struct bisect_candidate *cd);
/* The engine's bisection pass: starts a bisection for each confirmed
 * regression of an rc built from git, turns each finished step into the
 * next one or the answer, and sends the answer to every affected rc's
 * thread. Returns 1 if steps were queued, 0, or -1 on a store error. */
struct engine_context;
struct store;
int bisect_run_once(struct store *, const struct engine_context *,
		    char *err, size_t errlen);
/* The posted rcs' trees are fetched by a thread of their own once this
 * started it (a first clone of linux-stable-rc takes minutes, which the
 * engine's pass, and with it every other rc's reports, must not wait
 * for); until then, and in the unit tests, bisect_run_once fetches them
 * itself. bisect_posted_once is that thread's pass: every confirmed
 * regression of a posted rc, its tree fetched and its bisection started
 * (or a failed row saying why); returns how many rows it wrote, or -1. */
int bisect_posted_start(const struct engine_context *, char *err,
			size_t errlen);
void bisect_posted_stop(void);
int bisect_posted_once(struct store *, const struct engine_context *,
		       char *err, size_t errlen);
/* The build options of a bisection's git work (its clone, worktrees):
 * root is <cache_dir>/build. */
struct build_options;
void bisect_opts(struct build_options *o, const struct engine_context *c,
		 char *root, size_t rlen);
/* bisect_seed.c: a confirmed regression's bisection starts with two warm
 * worktrees of its branch, the second copied while the rerun that
 * confirms it runs. bisect_seed_once is the pass (how many copies it
 * made, -1 with err on a store error); the thread starts only with
 * [bisect] parallel >= 2 and a cache, and the engine kicks it when it
 * queues reruns. bisect_seed_busy: whether a copy of branch's worktree
 * for target is under way (drive() waits for it). */
int bisect_seed_once(struct store *, const struct engine_context *,
		     char *err, size_t errlen);
int bisect_seed_start(const struct engine_context *, char *err,
		      size_t errlen);
void bisect_seed_kick(void);
void bisect_seed_stop(void);
int bisect_seed_busy(const char *gitdir, const char *target,
		     const char *branch);
/* What a bisection found goes to the rc's thread (and the webhook)
 * through reply_bisection() (reply.h). */
struct config;

/* ---- bisect_tree.c: the tree a posted rc's bisection builds from ---- */
/* tree is "URL BRANCH" (the announcement's X-KernelTest-Tree and -Branch):
 * split into url and branch, 0; -1 with why (none named, too long). */
int bisect_tree_split(const char *tree, char *url, size_t ulen, char *branch,
		      size_t blen, char *why, size_t wlen);
/* The same, checked as every git fetch of rcgated is (git://, http://,
 * https://; a plain URL under [build] tree_origins, written into url as
 * it will be fetched; a plain branch name): 0, or -1 with why. No I/O. */
int bisect_tree_check(const struct config *, const char *tree, char *url,
		      size_t ulen, char *branch, size_t blen, char *why,
		      size_t wlen);
/* bisect_tree_check and the address of url ([fetch] allow_networks),
 * then the branch fetched into the cached clone of url
 * (<cache_dir>/build, in the sandbox; git's output in
 * <cache_dir>/build/bisect-fetch.log) and its head in commit, if the
 * head's Makefile says version: 0. Otherwise -1 with why, the reason the
 * rc is not bisected (refused before any fetch, the fetch failed, or the
 * branch has moved on). cancelled (may be NULL) is polled while git runs:
 * nonzero stops it (-1). */
int bisect_tree_fetch(const struct config *, const char *cache_dir,
		      const char *tree, const char *version, char *url,
		      size_t ulen, char commit[41], int (*cancelled)(void *),
		      char *why, size_t wlen);

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
	/* A bisection named a backport whose prerequisites are to be
	 * searched (prereq_kick, wired by main.c); NULL: none. */
	void (*culprit_found)(void);
};
int engine_start(const struct engine_context *, char *err, size_t errlen);
/* The announcement a release was made from: reply_announcement() in
 * reply.h, with every mail rcgate composes. */
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
	/* tests the rc only skipped that its baseline passed (issue 26):
	 * lost_coverage_row, each also one of the reasons; the verdict does
	 * not change (not a regression of the kernel's code) */
	struct rowset lost;
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

#endif /* RCGATE_REVIEW_H */
