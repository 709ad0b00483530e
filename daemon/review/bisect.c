/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bisect.c - the rules of a bisection, apart from how its steps run: the
 * commits between a good and a bad end (oldest first, the bad end last,
 * as `git rev-list --reverse --ancestry-path good..bad` lists a stable
 * branch), the verdict of each step tested so far (good, bad, or skip for
 * a commit that could not be judged: it does not build for another
 * reason, or its boot was an infra error, as `git bisect skip`), and from
 * those the next commits to test or the answer (bisect_round: no I/O,
 * unit-tested on every shape; a round tests [bisect] parallel commits at
 * once, splitting what is left in as many parts plus one).
 *
 * Then the engine's pass over bisections (bisect_run_once): a confirmed
 * regression (never a flaky one) of an rc whose failing job was built from
 * git starts one (so does one of an rc whose kernels CI posted, from the
 * tree and branch its announcement names: bisect_tree.c checks and fetches
 * them, and its head must be the rc), between the newest earlier release of the branch that
 * passed the test at a known commit (or, failing that, the tree's tag of
 * the previous release, checked first as a step of its own) and the rc's
 * commit. Each step is a job of the rc (store.c keeps them out of the rc's
 * own jobs) that builds one commit of the target in its worktree (an
 * incremental build) and runs only the failing tests (rcgate.only), or
 * only builds for a build regression; claimed after every review job. The
 * answer goes into the store and, as a follow-up, into the rc's thread.
 *
 * A culprit found is then checked the way KernelCI does: one more job of
 * the rc builds the rc's commit with the culprit reverted (buildjob.c)
 * and runs the same tests; the follow-up waits for it and says "revert:
 * PASS" or "revert: FAIL" (or that the revert does not apply, or that the
 * farm could not check it: never a FAIL).
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "base/base.h"
#include "store/store.h"
#include "build/build.h"
#include "job/job.h"
#include "intake/intake.h"
#include "report/report.h"
#include "review/review.h"

int bisect_round(const enum bisect_verdict *v, size_t n, size_t k,
		 size_t *next, size_t *count, size_t *lo_out, size_t *hi_out)
{
	size_t hi = n - 1, first, span;
	long lo = -1;

	*count = 0;
	if (n == 0)
		return BISECT_EMPTY;
	/* The first bad commit and the last good one before it. */
	for (size_t i = 0; i < n; i++)
		if (v[i] == BISECT_BAD) {
			hi = i;
			break;
		}
	for (size_t i = 0; i < hi; i++)
		if (v[i] == BISECT_GOOD)
			lo = (long)i;
	first = (size_t)(lo + 1);
	*lo_out = first;	/* the first candidate */
	*hi_out = hi;		/* the last candidate (known bad) */
	if ((long)hi - lo == 1)
		return BISECT_FOUND;
	/* span candidates for the first bad one: testing commit i splits
	 * them after i + 1 - first of them. The j-th of k points splits
	 * them after j * span / (k + 1): all of it times k + 1, so the
	 * middle of an even span stays exact (k = 1: the old middle, ties
	 * to the older commit). */
	span = hi - first + 1;
	for (size_t j = 1; j <= k && *count < span - 1; j++) {
		size_t want = (k + 1) * first + j * span, best = SIZE_MAX,
			bestd = SIZE_MAX;

		for (size_t i = first; i < hi; i++) {
			size_t at = (k + 1) * (i + 1),
				d = at > want ? at - want : want - at, c = 0;

			while (c < *count && next[c] != i)
				c++;
			if (v[i] == BISECT_UNTESTED && c == *count && d < bestd) {
				best = i;
				bestd = d;
			}
		}
		if (best == SIZE_MAX)
			break;
		next[(*count)++] = best;
	}
	if (*count == 0)
		return BISECT_AMBIGUOUS;	/* only skipped commits left */
	/* Oldest first (skips can move a point past the next one's). */
	for (size_t i = 1; i < *count; i++)
		for (size_t j = i; j > 0 && next[j - 1] > next[j]; j--) {
			size_t t = next[j];

			next[j] = next[j - 1];
			next[j - 1] = t;
		}
	return BISECT_STEP;
}

/* Rounds to find the first bad of m candidates with k steps a round. */
static size_t rounds_for(size_t m, size_t k)
{
	size_t r = 0, reach = 1;

	while (reach < m) {
		reach *= k + 1;
		r++;
	}
	return r;
}

size_t bisect_width(size_t k, size_t warm, size_t m)
{
	if (k <= 1)
		return 1;
	if (warm >= k || warm == 0 || rounds_for(m, 1) >= rounds_for(m, k) + 2)
		return k;
	return warm;
}

size_t bisect_seeds(size_t k, size_t warm, size_t m)
{
	if (k <= 1 || warm == 0 || warm >= k ||
	    rounds_for(m, warm) <= rounds_for(m, k))
		return 0;
	return k - warm;
}

/* ---- the engine's pass: bisections as jobs ---- */

#define MAX_COMMITS 4096	/* a stable rc has a few hundred */
/* [bisect] parallel, the steps of a round run at once: 2 splits what is
 * left in three, 6 rounds instead of 9 for 372 commits, for the wall of
 * one round when two builds share the cores (build/: one jobserver). 1
 * is one step at a time. */
#define BISECT_PARALLEL_MAX 8	/* what a round's next[] holds */

/* commits is "id id ... id": the i-th is at i * 41. */
static size_t ncommits(const char *commits)
{
	size_t len = strlen(commits);

	return len == 0 ? 0 : (len + 1) / 41;
}

static void commit_at(const char *commits, size_t i, char out[41])
{
	memcpy(out, commits + i * 41, 40);
	out[40] = '\0';
}

/* What the steps run: the suite's tests by name ("write_seq_4096,..." of
 * ",write_seq_4096,...,"), or "-" for a build (no boot at all). */
static void only_tests(const char *tests, char *out, size_t len)
{
	size_t n;

	if (tests[0] != ',') {
		snprintf(out, len, "-");
		return;
	}
	n = strlen(tests);
	snprintf(out, len, "%.*s", (int)(n >= 2 ? n - 2 : 0), tests + 1);
}

/* What a step (and the revert check) runs for tests: a list that would
 * not fit the kernel command line (armv7's is 1024 bytes) becomes the
 * whole suite, judged by the same tests. */
void bisect_step_only(const char *tests, char *out, size_t len)
{
	only_tests(tests, out, len);
	if (strlen(out) > 700)
		out[0] = '\0';
}

void bisect_opts(struct build_options *o, const struct engine_context *c,
		 char *root, size_t rlen)
{
	memset(o, 0, sizeof(*o));
	snprintf(root, rlen, "%s/build", c->cache_dir);
	o->root = root;
	o->timeout = 600;
	o->git_config = c->cfg->build_git_config;
}

/* The baseline's tag in the tree: v6.1.192 for 6.1.193-rc1. */
static int tag_commit(const char *gitdir, const struct build_options *o,
		      const char *version, char good[41])
{
	struct kversion kv;
	char base[48], spec[80], err[256];
	const char *args[] = { "rev-parse", "--quiet", "--verify", spec, NULL };
	char *out;

	if (kversion_parse(version, &kv, NULL, 0) < 0)
		return -1;
	kversion_previous(&kv, base, sizeof(base));
	snprintf(spec, sizeof(spec), "v%s^{commit}", base);
	out = gitsrc_git_out(gitdir, args, o, err, sizeof(err));
	if (out == NULL)
		return -1;
	snprintf(good, 41, "%.40s", out);
	free(out);
	return gitsrc_is_commit(good) ? 0 : -1;
}

static int start(struct store *st, const struct engine_context *c,
		 const struct bisect_candidate *cd)
{
	char root[PATH_MAX], gitdir[PATH_MAX], good[41] = "", range[100],
		err[512], msg[600];
	const char *args[] = { "rev-list", "--reverse", "--ancestry-path",
			       range, NULL };
	struct build_options o;
	struct strbuf sb;
	char *out = NULL, *list = NULL;
	const char *state = "running";
	int tested, rc;
	int64_t id;

	bisect_opts(&o, c, root, sizeof(root));
	msg[0] = '\0';
	if (gitsrc_clone_dir(root, cd->tree, gitdir, sizeof(gitdir)) < 0)
		return -1;
	tested = store_bisect_good(st, cd->release_id, cd->target, cd->test,
				   good, err, sizeof(err));
	if (tested < 0) {
		log_err("bisection of %s on %s: %s", cd->version, cd->target, err);
		return -1;
	}
	if (tested == 0 && tag_commit(gitdir, &o, cd->version, good) < 0) {
		snprintf(msg, sizeof(msg), "no good end: no earlier release of"
			 " %s passed %s on %s at a known commit, and the tree has"
			 " no tag of the previous release", cd->branch, cd->test,
			 cd->target);
		state = "failed";
	}
	if (good[0] != '\0') {
		snprintf(range, sizeof(range), "%s..%s", good, cd->bad);
		out = gitsrc_git_out(gitdir, args, &o, err, sizeof(err));
		if (out == NULL) {
			snprintf(msg, sizeof(msg), "git rev-list %.12s..%.12s: %s",
				 good, cd->bad, err);
			state = "failed";
		}
	}
	if (out != NULL) {
		size_t n = 0, cap = strlen(out) + 1;
		char *save = NULL;

		list = malloc(cap);
		if (list == NULL) {
			free(out);
			return -1;
		}
		strbuf_init(&sb, list, cap);
		for (char *p = strtok_r(out, "\n", &save); p != NULL;
		     p = strtok_r(NULL, "\n", &save)) {
			if (!gitsrc_is_commit(p))
				continue;
			strbuf_printf(&sb, "%s%s", n ? " " : "", p);
			n++;
		}
		free(out);
		if (n == 0 || n > MAX_COMMITS ||
		    strcmp(list + (n - 1) * 41, cd->bad) != 0) {
			if (n == 0)
				snprintf(msg, sizeof(msg), "the rc's commit %.12s is"
					 " not after the good end %.12s", cd->bad, good);
			else if (n > MAX_COMMITS)
				snprintf(msg, sizeof(msg), "%zu commits between the"
					 " ends: more than %d", n, MAX_COMMITS);
			else
				snprintf(msg, sizeof(msg), "the rc's commit is not"
					 " the last of the range");
			state = "failed";
		}
	}
	rc = store_bisection_create(st, cd, good, tested == 1, list, state,
				    msg[0] ? msg : NULL, &id, err, sizeof(err));
	if (rc < 0)
		log_err("bisection of %s on %s: %s", cd->version, cd->target, err);
	else
		log_info("bisection %lld: regression %lld (%s on %s) in %s: %s%s%s",
			 (long long)id, (long long)cd->regression_id, cd->test,
			 cd->target, cd->version, state, msg[0] ? ": " : "", msg);
	free(list);
	return rc;
}

/* A confirmed regression of an rc not built from git that cannot be
 * bisected from its announcement's tree either (why says what stopped
 * it; NULL: no bisections here): never silently nothing. A failed
 * bisection says why, in the log and the API. 0 with its row written, -1. */
static int unbisectable(struct store *st, const struct bisect_candidate *cd,
			const char *why)
{
	char msg[1400], err[512];
	int posted = strcmp(cd->bad, "source") != 0;
	struct bisect_candidate c = *cd;
	int64_t id;

	if (cd->tree[0] != '\0')
		snprintf(msg, sizeof(msg), "not bisected: %s's kernels for %s were"
			 " %s, not built here from git; %s", cd->version,
			 cd->target, posted ? "posted by CI" : "built from the"
			 " release tarball and patch", why != NULL ? why
			 : "this rcgated does not bisect (no cache directory)");
	else
		snprintf(msg, sizeof(msg), "not bisected: %s's kernels for %s were"
			 " %s, and neither its announcement (X-KernelTest-Tree,"
			 " X-KernelTest-Branch) nor its source names a git tree"
			 " to build the steps from", cd->version, cd->target,
			 posted ? "posted by CI" : "built from the release tarball"
			 " and patch");
	/* The row needs a tree and ends: none to bisect, no commit known. */
	c.tree = cd->tree[0] != '\0' ? cd->tree : "-";
	c.bad = "";
	if (store_bisection_create(st, &c, NULL, 0, NULL, "failed", msg, &id,
				   err, sizeof(err)) < 0) {
		log_err("bisection of %s on %s: %s", cd->version, cd->target, err);
		return -1;
	}
	log_warn("regression %lld (%s on %s) in %s: %s",
		 (long long)cd->regression_id, cd->test, cd->target, cd->version,
		 msg);
	return 0;
}

/* ---- the posted rcs' trees, fetched beside the engine ---- */

static const struct engine_context *posted_ctx;
static int posted_pass(struct store *, void *);
static struct consumer posted_consumer = {
	.name = "bisect-trees", .pass = posted_pass, .period = 60,
};
static int posted_thread;

/* A fetch under way stops when the daemon does. */
static int posted_stopping(void *cls)
{
	(void)cls;
	return consumer_stopping(&posted_consumer);
}

/* A confirmed regression of an rc whose kernels were posted (or built
 * from the tarball and patch) and whose announcement names a tree and
 * branch: the branch fetched (bisect_tree.c: the URL checked first) and
 * bisected from its head, when that is the rc, with rcgated's own builds
 * (the steps' source is the bisection's tree: store.h JOB_SRC). 1 when
 * its bisection row was written (running, or failed with why), else 0:
 * the candidate is still there, for the next pass. */
static int posted(struct store *st, const struct engine_context *c,
		  const struct bisect_candidate *cd)
{
	char url[2100], commit[41], why[1200];
	struct bisect_candidate b = *cd;
	int rc = bisect_follow(st, cd);

	if (rc >= 0)
		return rc;	/* another target leads: no fetch for this one */
	if (c->cache_dir == NULL || cd->tree[0] == '\0')
		return unbisectable(st, cd, NULL) == 0;
	if (bisect_tree_fetch(c->cfg, c->cache_dir, cd->tree, cd->version, url,
			      sizeof(url), commit, posted_thread ? posted_stopping
			      : NULL, why, sizeof(why)) < 0) {
		/* Stopped with the daemon: fetched again at the next start. */
		if (posted_thread && consumer_stopping(&posted_consumer))
			return 0;
		return unbisectable(st, cd, why) == 0;
	}
	log_info("bisection of %s on %s: its kernels were posted; the branch"
		 " head %.12s of %s says %s: bisecting from there", cd->version,
		 cd->target, commit, url, cd->version);
	b.tree = url;
	b.bad = commit;
	return start(st, c, &b) == 0;
}

int bisect_posted_once(struct store *st, const struct engine_context *c,
		       char *err, size_t errlen)
{
	struct rowset todo = { 0 };
	int done = 0;

	if (store_bisect_unbisectable(st, &todo, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < todo.n; i++) {
		if (posted_thread && consumer_stopping(&posted_consumer))
			break;
		done += posted(st, c,
			       &((const struct bisect_candidate *)todo.v)[i]);
	}
	rowset_free(&todo);
	return done;
}

static int posted_pass(struct store *st, void *arg)
{
	char err[512];
	int n;

	(void)arg;
	n = bisect_posted_once(st, posted_ctx, err, sizeof(err));
	if (n < 0)
		log_err("bisect-trees: %s", err);
	/* A bisection row written (started, or why not): the engine drives
	 * it from here. Only then: the engine kicks this thread on each of
	 * its passes, and a kick back for a candidate left as it was (a fetch
	 * stopped, a store error) would make the two a loop. */
	if (n > 0)
		engine_kick();
	return CONSUMER_PERIOD;
}

int bisect_posted_start(const struct engine_context *c, char *err,
			size_t errlen)
{
	posted_ctx = c;
	if (consumer_start(&posted_consumer, c->db_path, err, errlen) < 0)
		return -1;
	posted_thread = 1;
	return 0;
}

void bisect_posted_stop(void)
{
	if (!posted_thread)
		return;
	consumer_stop(&posted_consumer);
	posted_thread = 0;
}

/* The line of text starting at offset at into out (cut to fit); returns
 * the offset of the next line. */
static size_t line_at(const char *text, size_t at, char *out, size_t len)
{
	size_t n = strcspn(text + at, "\n");

	snprintf(out, len, "%.*s", (int)n, text + at);
	return at + n + (text[at + n] == '\n');
}

/* The culprit is the number-th commit after the good end: when that is
 * the series (the follow-up checks) and its patch mail never reached
 * intake, the announcement's thread is read from lore ([report]
 * lore_url), so the follow-up can name the patch and link it. */
static void culprit_patch(struct store *st, const struct engine_context *c,
			  const struct bisection_row *b, size_t number)
{
	char id[512], err[512];
	long n;

	if (c->cfg->lore_url[0] == '\0' || c->cache_dir == NULL ||
	    store_series_patch_id(st, b->release_id, (long)number, id, sizeof(id),
				  err, sizeof(err)) != 0)
		return;
	if (lore_series_fetch(st, c->cfg, c->cache_dir, b->release_id, &n, err,
			      sizeof(err)) == 0)
		log_info("bisection %lld: %ld patch%s of the series read from"
			 " lore", (long long)b->id, n, n == 1 ? "" : "es");
}

/* The bisection's answer into the store, its revert check queued when it
 * found a culprit: 1 if a job was queued, 0, -1. */
static int finish(struct store *st, const struct engine_context *c,
		  const struct bisection_row *b, int outcome, size_t lo,
		  size_t hi, const char *why)
{
	char root[PATH_MAX], gitdir[PATH_MAX], first[41], last[41], err[512],
		upstream[41] = "", subject[256] = "", text[2048];
	/* subject, author, author date, then the message for the upstream
	 * id and the people of its trailers */
	const char *fmt[] = { "log", "-1", "--format=%s%n%an <%ae>%n%aD%n%n%b",
			      first, NULL };
	char author[256] = "", adate[64] = "", people[2048] = "";
	struct build_options o;
	struct strbuf sb;
	const char *state, *prereq = NULL;
	char *log = NULL;
	int queued = 0;

	bisect_opts(&o, c, root, sizeof(root));
	strbuf_init(&sb, text, sizeof(text));
	if (outcome == BISECT_FOUND || outcome == BISECT_AMBIGUOUS) {
		commit_at(b->commits, lo, first);
		commit_at(b->commits, hi, last);
		if (gitsrc_clone_dir(root, b->tree, gitdir, sizeof(gitdir)) == 0)
			log = gitsrc_git_out(gitdir, fmt, &o, err, sizeof(err));
		if (log != NULL) {
			size_t at = 0;

			at = line_at(log, at, subject, sizeof(subject));
			at = line_at(log, at, author, sizeof(author));
			line_at(log, at, adate, sizeof(adate));
			gitsrc_upstream_id(log, upstream);
			reply_commit_people(log, people, sizeof(people));
			free(log);
		}
	}
	if (outcome == BISECT_FOUND) {
		state = "found";
		/* With an upstream tree, the follow-up waits for the
		 * prerequisite search (prereq.c) and says both at once. */
		if (upstream[0] != '\0' && c->cfg->bisect_upstream_git[0] != '\0')
			prereq = "pending";
	} else if (outcome == BISECT_AMBIGUOUS) {
		state = "ambiguous";
		strbuf_printf(&sb, "%s bisected the failure of %s on %s in"
			      " %s, but commits that could not be judged (they do"
			      " not build, or their boot failed) hide the answer:"
			      " the first bad commit is one of %zu, from %s to"
			      " %s.\n", c->cfg->farm, b->test, b->target,
			      b->version, hi - lo + 1, first, last);
	} else {
		state = "failed";
		strbuf_printf(&sb, "%s", why);
	}
	if (store_bisection_finish(st, b->id, state,
				   outcome == BISECT_FOUND ? last : NULL,
				   subject[0] ? subject : NULL,
				   upstream[0] ? upstream : NULL,
				   outcome == BISECT_AMBIGUOUS ? first : NULL,
				   outcome == BISECT_AMBIGUOUS ? last : NULL,
				   outcome == BISECT_FOUND ? NULL : text, prereq,
				   err, sizeof(err)) < 0)
		return -1;
	if (outcome == BISECT_FOUND)
		culprit_patch(st, c, b, hi + 1);
	if (author[0] != '\0' &&
	    store_bisection_culprit(st, b->id, author, adate[0] ? adate : NULL,
				    people[0] ? people : NULL, err,
				    sizeof(err)) < 0)
		log_warn("bisection %lld: %s", (long long)b->id, err);
	if (outcome == BISECT_FOUND) {
		char only[1024];

		bisect_step_only(b->tests, only, sizeof(only));
		if (store_bisect_step_add(st, b->id, b->job_id, b->bad, only, last,
					  err, sizeof(err)) < 0)
			log_warn("bisection %lld: no revert check: %s",
				 (long long)b->id, err);
		else {
			log_info("bisection %lld: revert check queued: %.12s"
				 " reverted on %.12s", (long long)b->id, last,
				 b->bad);
			queued = 1;
		}
	}
	log_info("bisection %lld: %s%s%s%s", (long long)b->id, state,
		 outcome == BISECT_FOUND ? ": " : "",
		 outcome == BISECT_FOUND ? last : "",
		 prereq != NULL ? " (prerequisite search next)" : "");
	if (prereq != NULL) {
		if (c->culprit_found != NULL)
			c->culprit_found();
	}
	else if (outcome != BISECT_EMPTY)
		reply_bisection(st, c->cfg, b->id);
	return queued;
}

/* A step's verdict: bad when one of the bisected tests failed, good when
 * they passed; skip when it could not be judged (its build failed for a
 * test regression, or no test ran: an infra error). */
static enum bisect_verdict step_verdict(const struct bisection_row *b,
					const struct bisect_step_row *s)
{
	if (strcmp(s->state, JS_DONE) != 0 || s->status == NULL ||
	    (s->build != NULL && strcmp(s->build, "fail") == 0 &&
	     strcmp(b->test, BUILD_TEST) != 0))
		return BISECT_SKIP;
	return strcmp(s->status, "fail") == 0 ? BISECT_BAD
	     : strcmp(s->status, "pass") == 0 ? BISECT_GOOD : BISECT_SKIP;
}

/* The index of commit among b's n commits, or -1 (the good end). */
static long commit_index(const struct bisection_row *b, size_t n,
			 const char *commit)
{
	char at[41];

	for (size_t i = 0; commit != NULL && i < n; i++) {
		commit_at(b->commits, i, at);
		if (strcmp(commit, at) == 0)
			return (long)i;
	}
	return -1;
}

/* 1 when a step of b's that has not ended could still change the answer:
 * the good end (its failure stops the bisection) or a commit in [lo, hi),
 * what the verdicts so far leave open (bisect_round's lo and hi). */
static int running_counts(const struct bisection_row *b,
			  const struct bisect_step_row *s, size_t nsteps,
			  size_t n, size_t lo, size_t hi)
{
	for (size_t i = 0; i < nsteps; i++) {
		long at = commit_index(b, n, s[i].git_commit);

		if (!job_state_final(s[i].state) &&
		    (at < 0 || ((size_t)at >= lo && (size_t)at < hi)))
			return 1;
	}
	return 0;
}

/* The verdicts of b's final steps into v, v[n-1] bad already; 1
 * with why when they stop the bisection before the rules answer: the good
 * end (checked first when no release passed there) does not pass, or a
 * step was cancelled. A cancelled step stops it only where its verdict
 * would still count (the good end, or a commit in [lo, hi) of what the
 * others left open): one a round's other step made moot does not, and
 * none stops it while a step that could make it moot still runs. */
static int verdicts(const struct bisection_row *b,
		    const struct bisect_step_row *s, size_t nsteps,
		    enum bisect_verdict *v, size_t n, int *good_checked,
		    char *why, size_t len)
{
	size_t next[1], count, lo, hi;

	for (size_t i = 0; i < nsteps; i++) {
		enum bisect_verdict d = step_verdict(b, &s[i]);
		long at = commit_index(b, n, s[i].git_commit);

		if (strcmp(s[i].state, JS_CANCELLED) == 0 ||
		    !job_state_final(s[i].state))
			continue;	/* a running step: untested still */
		if (at < 0 && s[i].git_commit != NULL &&
		    strcmp(s[i].git_commit, b->good) == 0) {
			if (d != BISECT_GOOD) {
				snprintf(why, len, "Bisection stopped: the good end"
					 " %.12s does not reproduce: %s %s there.\n",
					 b->good, b->test, d == BISECT_BAD ? "fails"
					 : "could not be judged");
				return 1;
			}
			*good_checked = 1;
		} else if (at >= 0)
			v[at] = d;
	}
	bisect_round(v, n, 1, next, &count, &lo, &hi);
	/* Not while a step that could still make it moot runs. */
	if (running_counts(b, s, nsteps, n, lo, hi))
		return 0;
	for (size_t i = 0; i < nsteps; i++) {
		long at = commit_index(b, n, s[i].git_commit);

		if (strcmp(s[i].state, JS_CANCELLED) == 0 &&
		    (at < 0 || ((size_t)at >= lo && (size_t)at < hi))) {
			snprintf(why, len, "Bisection stopped: step job %lld"
				 " was cancelled.\n", (long long)s[i].id);
			return 1;
		}
	}
	return 0;
}

/* Queues the round's steps: the good end first when it is not checked
 * yet (beside k - 1 commits), then the commits at next[0..count); logs
 * each. 1 when one was queued, -1 when none could be. */
static int queue_round(struct store *st, const struct bisection_row *b,
		       int good_checked, const size_t *next, size_t count,
		       size_t nsteps, size_t lo, size_t hi)
{
	char err[512], only[1024], commit[41];
	size_t n = ncommits(b->commits), queued = 0;

	bisect_step_only(b->tests, only, sizeof(only));
	for (size_t j = good_checked ? 1 : 0; j <= count; j++) {
		if (j > 0)
			commit_at(b->commits, next[j - 1], commit);
		else
			snprintf(commit, sizeof(commit), "%s", b->good);
		if (store_bisect_step_add(st, b->id, b->job_id, commit, only,
					  NULL, err, sizeof(err)) < 0) {
			log_err("bisection %lld: %s", (long long)b->id, err);
			continue;
		}
		queued++;
		log_info("bisection %lld: step %zu tests %.12s%s (%zu of %zu"
			 " commits left, %zu at once)", (long long)b->id,
			 nsteps + queued, commit, j == 0 ? ", the good end" : "",
			 hi - lo + 1, n, count + !good_checked);
	}
	return queued > 0 ? 1 : -1;
}

/* The bisected branch's free worktrees for the target that would build
 * a step incrementally (bisect_width) in *warm, once the copies
 * bisect_seeds asks for with k steps a round and m candidates are made
 * (gitsrc_worktree_seed: the engine waits for them, tens of seconds on a
 * disk; a round that builds incrementally in each gains minutes). -1
 * while bisect_seed.c copies one (its source is locked: counted now, the
 * round would build cold), else 0. */
static int round_worktrees(const struct engine_context *c,
			   const struct bisection_row *b, size_t k, size_t m,
			   size_t *warm)
{
	char root[PATH_MAX], gitdir[PATH_MAX], key[300], err[512] = "";
	struct build_options o;
	size_t want;
	int n;

	*warm = 0;
	bisect_opts(&o, c, root, sizeof(root));
	if (gitsrc_clone_dir(root, b->tree, gitdir, sizeof(gitdir)) < 0)
		return 0;
	gitsrc_branch_key(b->version, NULL, key, sizeof(key));
	if (bisect_seed_busy(gitdir, b->target, key))
		return -1;
	n = gitsrc_worktrees_warm(gitdir, b->target, key);
	*warm = n > 0 ? (size_t)n : 0;
	want = bisect_seeds(k, *warm, m);
	for (size_t i = 0; i < want; i++) {
		double t0 = now_monotonic();
		int rc = gitsrc_worktree_seed(gitdir, b->target, key, &o, err,
					      sizeof(err));

		if (rc < 0)
			log_warn("bisection %lld: no second worktree of %s for"
				 " %s: %s", (long long)b->id, key, b->target, err);
		if (rc <= 0)
			break;
		(*warm)++;
		log_info("bisection %lld: a warm worktree of %s for %s copied"
			 " in %.0f s, so that steps build incrementally side by"
			 " side", (long long)b->id, key, b->target,
			 now_monotonic() - t0);
	}
	return 0;
}

/* Cancels b's steps still running (the scheduler's monitor stops their
 * builds and guests within a second), why in each one's events. */
static void cancel_running(struct store *st, const struct bisection_row *b,
			   const struct bisect_step_row *s, size_t nsteps,
			   const char *why)
{
	char err[512];

	for (size_t i = 0; i < nsteps; i++) {
		if (job_state_final(s[i].state))
			continue;
		if (store_job_cancel(st, s[i].id, why, err, sizeof(err)) < 0)
			log_err("bisection %lld: %s", (long long)b->id, err);
		else
			log_info("bisection %lld: step job %lld (%.12s)"
				 " cancelled: %s", (long long)b->id,
				 (long long)s[i].id, s[i].git_commit != NULL ?
				 s[i].git_commit : "?", why);
	}
}

/* A round is decided as soon as its steps still running cannot change
 * the answer: with the verdicts so far the first bad commit lies in
 * [lo, hi], and a step outside [lo, hi) is moot (one at a commit before
 * a good one or after a bad one). Then those steps are cancelled, which
 * frees their cores and worktrees for the next round or the revert
 * check, and the pass goes on; 1. While a running step could still
 * count (or is the good end, which can stop the bisection), 0. */
static int round_decided(struct store *st, const struct bisection_row *b,
			 const struct bisect_step_row *s, size_t nsteps,
			 const enum bisect_verdict *v, size_t n)
{
	size_t next[1], count, lo, hi;

	bisect_round(v, n, 1, next, &count, &lo, &hi);
	if (running_counts(b, s, nsteps, n, lo, hi))
		return 0;
	/* Every step still running is moot (none, when all have ended). */
	cancel_running(st, b, s, nsteps, "moot: the other steps of its"
		       " bisection round decided it");
	/* A cancelled step's build still holds its warm worktree until its
	 * worker lets go (seconds): a step queued before then would build
	 * in a cold one. Its end kicks the engine again. */
	for (size_t i = 0; i < nsteps; i++)
		if ((strcmp(s[i].state, JS_CANCELLED) == 0 ||
		     !job_state_final(s[i].state)) && sched_job_active(s[i].id))
			return 0;
	return 1;
}

/* One pass over a running bisection: while a step of the round runs
 * whose verdict could still count, nothing (round_decided); then the
 * next round's steps, or the answer. 1 when steps were queued, 0, -1. */
static int drive(struct store *st, const struct engine_context *c,
		 const struct bisection_row *b)
{
	struct rowset steps = { 0 };
	const struct bisect_step_row *s;
	enum bisect_verdict *v = NULL;
	size_t n = ncommits(b->commits), k = (size_t)c->cfg->bisect_parallel,
		next[BISECT_PARALLEL_MAX], count = 0, lo, hi;
	char err[512] = "", why[600];
	int rc = -1, outcome, good_checked = b->good_tested != 0;

	if (store_bisect_steps(st, b->id, &steps, err, sizeof(err)) < 0) {
		log_err("bisection %lld: %s", (long long)b->id, err);
		return -1;
	}
	s = steps.v;
	if (n == 0) {		/* start() never lets one run so */
		rc = finish(st, c, b, BISECT_EMPTY, 0, 0, "Bisection stopped:"
			    " no commits between the ends.\n");
		goto out;
	}
	v = calloc(n + 1, sizeof(*v));
	if (v == NULL)
		goto out;
	v[n - 1] = BISECT_BAD;	/* the rc's own, confirmed failure */
	if (k < 1 || k > BISECT_PARALLEL_MAX)
		k = k < 1 ? 1 : BISECT_PARALLEL_MAX;
	if (verdicts(b, s, steps.n, v, n, &good_checked, why, sizeof(why))) {
		cancel_running(st, b, s, steps.n, "its bisection stopped");
		rc = finish(st, c, b, BISECT_EMPTY, 0, 0, why);
		goto out;
	}
	if (!round_decided(st, b, s, steps.n, v, n)) {
		rc = 0;		/* a step that still counts runs */
		goto out;
	}
	/* An unchecked good end takes one of the round's k places. */
	outcome = bisect_round(v, n, good_checked || k == 1 ? k : k - 1, next,
			       &count, &lo, &hi);
	if (outcome == BISECT_STEP && k > 1) {
		size_t m = hi - lo + 1, warm, w;

		if (round_worktrees(c, b, k, m, &warm) < 0) {
			rc = 0;	/* bisect-seeds copies one: it kicks */
			goto out;
		}
		w = bisect_width(k, warm, m);

		if (w < k) {
			k = w;
			outcome = bisect_round(v, n, good_checked || k == 1 ? k
					       : k - 1, next, &count, &lo, &hi);
		}
	}
	if (!good_checked || outcome == BISECT_STEP) {
		if (!good_checked && (k == 1 || outcome != BISECT_STEP))
			count = 0;	/* the good end alone */
		rc = queue_round(st, b, good_checked, next, count, steps.n, lo,
				 hi);
		goto out;
	}
	rc = finish(st, c, b, outcome, lo, hi, NULL);
out:
	free(v);
	rowset_free(&steps);
	return rc;
}

/* The confirmed regressions not bisected yet: each follows another
 * target's bisection of its rc (bisect_follow), or starts its own; the posted
 * rcs' ones on their thread. */
static int candidates(struct store *st, const struct engine_context *c,
		      char *err, size_t errlen)
{
	struct rowset todo = { 0 };

	if (store_bisect_candidates(st, &todo, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < todo.n; i++) {
		const struct bisect_candidate *cd =
			&((const struct bisect_candidate *)todo.v)[i];

		if (bisect_follow(st, cd) < 0)
			start(st, c, cd);
	}
	rowset_free(&todo);
	if (posted_thread)
		consumer_kick(&posted_consumer);
	else if (bisect_posted_once(st, c, err, errlen) < 0)
		return -1;
	return 0;
}

int bisect_run_once(struct store *st, const struct engine_context *c,
		    char *err, size_t errlen)
{
	struct rowset todo = { 0 };
	int queued = 0;

	/* A search that waits for an upstream tree no longer configured
	 * (the daemon restarted without [bisect] upstream_git) ends here,
	 * so its follow-up is not held back for ever. */
	if (c->cfg->bisect_upstream_git[0] == '\0') {
		struct rowset p = { 0 };

		if (store_prereq_pending(st, &p, err, errlen) < 0)
			return -1;
		for (size_t i = 0; i < p.n; i++) {
			int64_t id = ((const struct prereq_todo *)p.v)[i].id;

			if (store_prereq_finish(st, id, "failed", NULL, "[bisect]"
						" upstream_git is no longer set", err,
						errlen) == 0)
				reply_bisection(st, c->cfg, id);
		}
		rowset_free(&p);
	}
	if (bisect_revert_settle(st, c, err, errlen) < 0)
		return -1;
	if (candidates(st, c, err, errlen) < 0)
		return -1;
	if (store_bisections_running(st, &todo, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < todo.n; i++)
		queued |= drive(st, c, &((const struct bisection_row *)todo.v)[i]) > 0;
	rowset_free(&todo);
	/* A lead that found its culprit now: the targets that waited for
	 * it queue their revert checks beside its own, at once. */
	if (queued && candidates(st, c, err, errlen) < 0)
		return -1;
	return queued;
}
