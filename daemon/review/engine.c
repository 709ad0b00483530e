/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * engine.c - what happens when a release's last job ends: compare with the
 * baseline, rerun failing targets, link each regression to every affected
 * rc, mark fixes, decide the gate, write the report and queue its delivery
 * (the rc's mail thread, webhooks: reply.c composes). The rules themselves
 * are in regress.c;
 * this file applies them to the store, from one consumer thread that
 * takes every release whose jobs have all ended and that is not analysed
 * (workers only finish jobs and kick it).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "base/base.h"
#include "store/store.h"
#include "intake/intake.h"
#include "report/report.h"
#include "review/review.h"

/* The consumer thread; engine_kick() may come from any thread. */
static struct engine_context ectx;

static enum baseline_status baseline_status_of(const struct rowset *base_runs,
					       const char *target,
					       const char *test)
{
	const struct run_row *r = base_runs->v;

	for (size_t i = 0; i < base_runs->n; i++) {
		if (strcmp(r[i].target, target) == 0 && strcmp(r[i].test, test) == 0)
			return r[i].fails > 0 ? BASE_FAIL : BASE_PASS;
	}
	return BASE_NONE;
}

static int add_reason(struct gate_result *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int add_reason(struct gate_result *g, const char *fmt, ...)
{
	char **nr = realloc(g->reasons, (g->nreasons + 1) * sizeof(*nr));
	va_list ap;
	int rc;

	if (nr == NULL)
		return -1;
	g->reasons = nr;
	va_start(ap, fmt);
	rc = vasprintf(&g->reasons[g->nreasons], fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -1;
	g->nreasons++;
	return 0;
}

void gate_result_free(struct gate_result *g)
{
	for (size_t i = 0; i < g->nreasons; i++)
		free(g->reasons[i]);
	free(g->reasons);
	rowset_free(&g->lost);
	rowset_free(&g->row_set);
	memset(g, 0, sizeof(*g));
}

/* The tests the release lost against its baseline, into g->lost, each
 * also said as a reason. No baseline: nothing to lose. */
static int add_lost_coverage(struct store *st, int64_t release_id,
			     struct gate_result *g, char *err, size_t errlen)
{
	struct rowset rels = { 0 }, bases = { 0 };
	const struct release_row *base;
	const struct lost_coverage_row *l;
	int rc = -1;

	if (store_release_get(st, release_id, &rels, err, errlen) < 0)
		return -1;
	if (rels.n == 0) {
		rc = 0;
		goto out;
	}
	if (store_release_baseline(st, rels.v, &bases, err, errlen) < 0)
		goto out;
	if (bases.n == 0) {
		rc = 0;
		goto out;
	}
	base = bases.v;
	if (store_release_lost_coverage(st, release_id, base->id, &g->lost, err,
					errlen) < 0)
		goto out;
	l = g->lost.v;
	for (size_t i = 0; i < g->lost.n; i++) {
		if (add_reason(g, "lost coverage: %s skipped on %s (%s), passed"
			       " on %s", l[i].test, l[i].target,
			       l[i].reason != NULL ? l[i].reason : "no reason given",
			       base->version) < 0) {
			errf(err, errlen, "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	rowset_free(&rels);
	rowset_free(&bases);
	return rc;
}

enum gate_verdict engine_gate_verdict(const struct gate_row *row)
{
	struct gate_input in;

	in.jobs = row->jobs;
	in.unfinished = row->unfinished;
	in.infra_errors = row->infra;
	in.blocking_regressions = row->blocking;
	/* Regressions are decided when the last job ends: until then a
	 * finished-looking release is still pending. */
	if (row->analysed == NULL && in.unfinished == 0 && in.jobs > 0)
		in.unfinished = 1;
	return regress_gate(&in);
}

int engine_gate_eval(struct store *st, int64_t release_id,
		     struct gate_result *out, char *err, size_t errlen)
{
	struct rowset regs = { 0 }, jobs = { 0 };
	const struct gate_row *row;
	const struct regression_row *g;
	const struct job_row *j;
	size_t i;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (store_release_gate(st, release_id, &out->row_set, err, errlen) < 0)
		return -1;
	if (out->row_set.n == 0) {
		rowset_free(&out->row_set);
		return 0;
	}
	row = out->row_set.v;
	out->row = row;
	out->verdict = engine_gate_verdict(row);
	if (store_release_regressions(st, release_id, &regs, err, errlen) < 0 ||
	    store_release_jobs(st, release_id, 0, &jobs, err, errlen) < 0)
		goto out;
	/* An rc that shipped anyway, past its deadline, with a blocking
	 * regression: the case of 6.1.64, said out loud, first. */
	out->released_with_known_regressions = out->verdict == GATE_BLOCK &&
		row->deadline_passed && row->released_as != NULL;
	if (out->released_with_known_regressions &&
	    add_reason(out, "released as %s with known regressions after the"
		       " review deadline", row->released_as) < 0)
		goto oom;
	g = regs.v;
	for (i = 0; i < regs.n; i++) {
		if (g[i].flaky || strcmp(g[i].state, "invalid") == 0)
			continue;
		if (add_reason(out, "regression %lld: %s fails on %s%s%s%s",
			       (long long)g[i].id, g[i].test, g[i].target,
			       g[i].also_in ? " (also in " : "",
			       g[i].also_in ? g[i].also_in : "",
			       g[i].also_in ? ")" : "") < 0)
			goto oom;
	}
	j = jobs.v;
	for (i = 0; i < jobs.n; i++) {
		int r = 0;

		if (strcmp(j[i].state, JS_INFRA_ERROR) == 0)
			r = add_reason(out, "%s not tested: %s", j[i].target,
				       j[i].error ? j[i].error : "infra error");
		else if (strcmp(j[i].state, JS_CANCELLED) == 0)
			r = add_reason(out, "%s not tested: cancelled", j[i].target);
		else if (strcmp(j[i].state, JS_DONE) != 0)
			r = add_reason(out, "%s still %s", j[i].target, j[i].state);
		if (r < 0)
			goto oom;
	}
	if (row->jobs == 0 && add_reason(out, "no kernels submitted yet") < 0)
		goto oom;
	if (add_lost_coverage(st, release_id, out, err, errlen) < 0) {
		gate_result_free(out);
		goto out;
	}
	rc = 1;
	goto out;
oom:
	errf(err, errlen, "out of memory");
	gate_result_free(out);
out:
	rowset_free(&regs);
	rowset_free(&jobs);
	return rc;
}

/* What the rerun of target runs (out, for store_job_rerun): only the
 * tests that failed there, by the agent's names, so confirming 32
 * failures does not run the other 199 tests again (the week's fourteenth
 * round: the x86_64 rerun took 1.6 of the 4.2 minutes before the first
 * report, the i386 one 1.3 before its revert check). A name runs on every
 * filesystem; the others' results are runs of tests that passed, which
 * the rules count as such. NULL, the whole suite as the job ran it, when
 * a failure is the build's or a crash test's (the crash boots run only
 * beside the whole suite, crash.c), or the list would not fit the kernel
 * command line (bisect_step_only). */
static const char *rerun_only(const struct run_row *r, size_t n,
			      const struct rowset *base_runs, int reruns,
			      const char *target, char *out, size_t len)
{
	char tests[1024], name[260];
	struct strbuf sb;

	strbuf_init(&sb, tests, sizeof(tests));
	strbuf_printf(&sb, ",");
	for (size_t i = 0; i < n; i++) {
		struct test_runs t = { r[i].runs, r[i].fails,
			baseline_status_of(base_runs, r[i].target, r[i].test) };
		const char *dot = strchr(r[i].test, '.');

		if (strcmp(r[i].target, target) != 0 ||
		    regress_classify(&t, reruns) != CLASS_RERUN)
			continue;
		if (dot == NULL || dot[1] == '\0' ||
		    strncmp(r[i].test, "build.", 6) == 0 ||
		    strncmp(dot + 1, RCGATE_CRASH_PREFIX,
			    strlen(RCGATE_CRASH_PREFIX)) == 0)
			return NULL;
		snprintf(name, sizeof(name), ",%s,", dot + 1);
		if (strstr(tests, name) == NULL)
			strbuf_printf(&sb, "%s", name + 1);
	}
	if (sb.overflow || sb.len < 2)
		return NULL;
	bisect_step_only(tests, out, len);
	return out[0] != '\0' ? out : NULL;
}

/* Returns 1 if reruns were queued (analysis continues when they end). */
static int queue_reruns(struct store *st, const struct config *cfg,
			int64_t id, const struct rowset *runs,
			const struct rowset *base_runs, char *err, size_t errlen)
{
	const struct run_row *r = runs->v;
	char done[8][16], tests[1024];
	const char *only;
	size_t ndone = 0;
	int queued = 0;

	for (size_t i = 0; i < runs->n; i++) {
		struct test_runs t = { r[i].runs, r[i].fails,
			baseline_status_of(base_runs, r[i].target, r[i].test) };
		int seen = 0, n;

		if (regress_classify(&t, (int)cfg->reruns) != CLASS_RERUN)
			continue;
		for (size_t k = 0; k < ndone; k++)
			seen |= strcmp(done[k], r[i].target) == 0;
		if (seen || ndone == 8)
			continue;
		/* A rerun that itself failed for infrastructure reasons is not
		 * retried forever: the reruns already made are the limit. */
		n = store_rerun_count(st, id, r[i].target, err, errlen);
		if (n < 0)
			return -1;
		if (n >= cfg->reruns)
			continue;
		only = rerun_only(r, runs->n, base_runs, (int)cfg->reruns,
				  r[i].target, tests, sizeof(tests));
		if (store_job_rerun(st, id, r[i].target, only, err, errlen) < 0)
			return -1;
		snprintf(done[ndone++], sizeof(done[0]), "%s", r[i].target);
		log_info("release=%lld target=%s: failure rerun queued (%s)",
			 (long long)id, r[i].target, only != NULL ? only :
			 "the whole suite");
		queued = 1;
	}
	return queued;
}

/* Regressions this release fixes on its branch: the candidates the store
 * finds (its test passes here), where regress_fixes() says this release
 * comes after an occurrence. */
static int mark_fixes(struct store *st, const struct config *cfg, int64_t id,
		      const char *version, int *nfixed, char *err, size_t errlen)
{
	struct rowset cands;
	const struct fix_candidate *c;

	*nfixed = 0;
	if (store_fix_candidates(st, id, &cands, err, errlen) < 0)
		return -1;
	c = cands.v;
	for (size_t i = 0; i < cands.n; i++) {
		int rc;

		if (!regress_fixes(c[i].seen_on, version))
			continue;
		rc = store_regression_fix(st, c[i].id, c[i].branch, version, err,
					  errlen);
		if (rc < 0) {
			rowset_free(&cands);
			return -1;
		}
		*nfixed += rc;
		if (rc > 0)
			reply_fixed(st, cfg, c[i].id, version);
	}
	rowset_free(&cands);
	return 0;
}

/* One failing test of rel as a regression (new, or linked to the same
 * failure seen elsewhere), or a flaky one. */
static int link_run(struct store *st, const struct config *cfg,
		    const struct release_row *rel, const struct run_row *r,
		    const struct test_runs *t, int flaky, char *err,
		    size_t errlen)
{
	struct occurrence_in o;
	char sig[65], fs[32];
	int64_t rid;
	int created;

	regress_signature(r->test, r->target, r->diagnostic, sig);
	regress_test_fs(r->test, fs, sizeof(fs));
	o.signature = sig;
	o.test = r->test;
	o.target = r->target;
	o.fs = fs;
	o.diagnostic = r->diagnostic;
	o.release_id = rel->id;
	o.job_id = r->job_id;
	o.branch = rel->branch;
	o.version = rel->version;
	o.flaky = flaky;
	o.runs = t->runs;
	o.fails = t->fails;
	o.confirmed = !o.flaky && regress_confirmed(t);
	o.window_days = cfg->link_window_days;
	if (store_regression_link(st, &o, &rid, &created, err, errlen) < 0)
		return -1;
	log_info("release=%s regression=%lld %s test=%s target=%s"
		 " baseline=%s runs=%d fails=%d", rel->version,
		 (long long)rid, created ? "new" : "linked", o.test,
		 o.target, t->baseline == BASE_PASS ? "pass" : "none",
		 t->runs, t->fails);
	return 0;
}

/* A release's results beside its baseline's (settle, report_early). */
struct release_runs {
	struct rowset bases, runs, base_runs;
	const struct release_row *baseline;	/* NULL: none */
};

static int release_runs_load(struct store *st, const struct release_row *rel,
			     struct release_runs *rr, char *err, size_t errlen)
{
	if (store_release_baseline(st, rel, &rr->bases, err, errlen) < 0)
		return -1;
	rr->baseline = rr->bases.n > 0 ? rr->bases.v : NULL;
	if (store_release_runs(st, rel->id, &rr->runs, err, errlen) < 0 ||
	    (rr->baseline != NULL &&
	     store_release_runs(st, rr->baseline->id, &rr->base_runs, err,
				errlen) < 0))
		return -1;
	return 0;
}

static void release_runs_free(struct release_runs *rr)
{
	rowset_free(&rr->bases);
	rowset_free(&rr->runs);
	rowset_free(&rr->base_runs);
}

/* queue_reruns, and the scheduler told when it queued some. */
static int rerun_failures(struct store *st, const struct config *cfg,
			  int64_t id, const struct release_runs *rr,
			  void (*jobs_queued)(void), char *err, size_t errlen)
{
	int q = queue_reruns(st, cfg, id, &rr->runs, &rr->base_runs, err, errlen);

	if (q == 1 && jobs_queued != NULL)
		jobs_queued();
	/* A confirmed failure is bisected next: its second worktree is
	 * copied while the rerun runs (bisect_seed.c). */
	if (q == 1)
		bisect_seed_kick();
	return q;
}

/* Whether the rc already has run r's regression (its test on its target). */
static int is_linked(const struct rowset *linked, const struct run_row *r)
{
	const struct regression_row *g = linked->v;

	for (size_t i = 0; i < linked->n; i++)
		if (strcmp(g[i].test, r->test) == 0 &&
		    strcmp(g[i].target, r->target) == 0)
			return 1;
	return 0;
}

/*
 * A release still testing whose finished targets show a regression that
 * a rerun confirmed: reported now, not when its last job ends (the list's
 * deadline does not wait for a slow target). Failures of finished targets
 * are rerun now to confirm them. The report says which targets are still
 * running; the full one follows when they end. Once per release; after
 * it (reported), what a later rerun confirms is linked at once, so that
 * it is bisected, or takes the culprit its rc's other targets found,
 * before the last job ends (the eighteenth week round's i386 and arm64
 * waited 69 s for armv7's rerun), and reported in the full report.
 */
static int report_early(struct store *st, const struct config *cfg,
			const char *base_url, void (*jobs_queued)(void),
			const struct partial_row *p, char *err, size_t errlen)
{
	struct rowset rels = { 0 }, linked = { 0 };
	struct release_runs rr = { 0 };
	const struct release_row *rel;
	const struct run_row *r;
	int rc = -1, confirmed = 0;

	if (store_release_get(st, p->id, &rels, err, errlen) < 0)
		goto out;
	rel = rels.v;
	if (rels.n == 0 || release_runs_load(st, rel, &rr, err, errlen) < 0)
		goto out;
	if (rerun_failures(st, cfg, p->id, &rr, jobs_queued, err, errlen) < 0)
		goto out;
	if (p->reported &&
	    store_release_regressions(st, p->id, &linked, err, errlen) < 0)
		goto out;
	r = rr.runs.v;
	for (size_t i = 0; i < rr.runs.n; i++) {
		struct test_runs t = { r[i].runs, r[i].fails,
			baseline_status_of(&rr.base_runs, r[i].target, r[i].test) };

		if (regress_classify(&t, (int)cfg->reruns) != CLASS_REGRESSION ||
		    !regress_confirmed(&t) || is_linked(&linked, &r[i]))
			continue;
		if (link_run(st, cfg, rel, &r[i], &t, 0, err, errlen) < 0)
			goto out;
		confirmed++;
	}
	rc = 0;
	if (confirmed > 0 && p->reported)
		log_info("release=%s confirmed regressions=%d after its partial"
			 " report: bisected now, reported in the full one",
			 rel->version, confirmed);
	else if (confirmed > 0) {
		log_info("release=%s confirmed regressions=%d before its last"
			 " job ended: partial report", rel->version, confirmed);
		rc = reply_report(st, cfg, base_url, rel, rr.baseline, "pending",
				  err, errlen);
	}
out:
	rowset_free(&rels);
	rowset_free(&linked);
	release_runs_free(&rr);
	return rc;
}

static int settle(struct store *st, const struct config *cfg,
		  const char *base_url, void (*jobs_queued)(void), int64_t id,
		  char *err, size_t errlen)
{
	struct rowset rels = { 0 }, gates = { 0 };
	struct release_runs rr = { 0 };
	const struct release_row *rel, *baseline;
	const struct gate_row *g;
	const struct run_row *r;
	int rc = -1, nfixed = 0, nreg = 0;

	if (store_release_get(st, id, &rels, err, errlen) < 0 ||
	    store_release_gate(st, id, &gates, err, errlen) < 0)
		goto out;
	rel = rels.v;
	g = gates.v;
	if (rels.n == 0 || gates.n == 0 || g->unfinished > 0 || g->analysed != NULL) {
		rc = 0;
		goto out;
	}
	if (release_runs_load(st, rel, &rr, err, errlen) < 0)
		goto out;
	baseline = rr.baseline;
	switch (rerun_failures(st, cfg, id, &rr, jobs_queued, err, errlen)) {
	case -1:
		goto out;
	case 1:
		rc = 0;
		goto out;
	}
	if (store_release_claim_analysis(st, id, err, errlen) <= 0) {
		rc = 0;	/* someone else did (or an error, logged by caller) */
		goto out;
	}
	r = rr.runs.v;
	for (size_t i = 0; i < rr.runs.n; i++) {
		struct test_runs t = { r[i].runs, r[i].fails,
			baseline_status_of(&rr.base_runs, r[i].target, r[i].test) };
		enum test_class c = regress_classify(&t, (int)cfg->reruns);

		/* A rerun that could not run leaves CLASS_RERUN: decide with
		 * what we have rather than wait forever. */
		if (c == CLASS_RERUN)
			c = CLASS_REGRESSION;
		if (c != CLASS_REGRESSION && c != CLASS_FLAKY)
			continue;
		if (link_run(st, cfg, rel, &r[i], &t, c == CLASS_FLAKY, err,
			     errlen) < 0)
			goto out;
		nreg++;
	}
	if (mark_fixes(st, cfg, id, rel->version, &nfixed, err, errlen) < 0)
		goto out;
	{
		struct gate_result gate;
		int have = engine_gate_eval(st, id, &gate, err, errlen);
		const char *verdict = have > 0 ? regress_gate_name(gate.verdict)
					       : "pending";

		log_info("release=%s analysed regressions=%d fixed=%d gate=%s"
			 " baseline=%s", rel->version, nreg, nfixed, verdict,
			 baseline != NULL ? baseline->version : "none");
		rc = reply_report(st, cfg, base_url, rel, baseline, verdict, err,
				  errlen);
		if (have > 0)
			gate_result_free(&gate);
	}
out:
	rowset_free(&rels);
	rowset_free(&gates);
	release_runs_free(&rr);
	return rc;
}

int engine_run_once(struct store *st, const struct engine_context *c,
		    char *err, size_t errlen)
{
	struct rowset todo;
	const int64_t *ids;
	int n = 0, failed = 0;

	if (store_releases_unanalysed(st, &todo, err, errlen) < 0)
		return -1;
	ids = todo.v;
	for (size_t i = 0; i < todo.n; i++) {
		char e2[512];

		if (settle(st, c->cfg, c->base_url, c->jobs_queued, ids[i], e2,
			   sizeof(e2)) < 0) {
			log_err("release analysis: release %lld: %s",
				(long long)ids[i], e2);
			errf(err, errlen, "%s", e2);
			failed = 1;
			continue;
		}
		n++;
	}
	rowset_free(&todo);
	/* Confirmed regressions of releases still testing: reported now. */
	if (store_releases_partial(st, &todo, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < todo.n; i++) {
		const struct partial_row *p =
			&((const struct partial_row *)todo.v)[i];
		char e2[512];

		if (report_early(st, c->cfg, c->base_url, c->jobs_queued, p,
				 e2, sizeof(e2)) < 0) {
			log_err("early report: release %lld: %s",
				(long long)p->id, e2);
			errf(err, errlen, "%s", e2);
			failed = 1;
		}
	}
	rowset_free(&todo);
	/* An rc that shipped with a known regression: tell regzbot. */
	reply_shipped(st, c->cfg);
	if (c->cache_dir != NULL) {
		char e2[512];
		int b = bisect_run_once(st, c, e2, sizeof(e2));

		if (b < 0)
			log_err("bisection: %s", e2);
		else if (b > 0 && c->jobs_queued != NULL)
			c->jobs_queued();
	}
	return failed ? -1 : n;
}

/* One pass: after an error, back off rather than fail every second. The
 * first pass also picks up what a crash left: releases whose last job
 * ended just before it. */
static int engine_pass(struct store *st, void *arg)
{
	char err[512];

	(void)arg;
	if (engine_run_once(st, &ectx, err, sizeof(err)) < 0)
		return 30;
	return CONSUMER_PERIOD;
}

static struct consumer engine_consumer = {
	.name = "engine", .pass = engine_pass, .period = 5,
};

void engine_kick(void)
{
	consumer_kick(&engine_consumer);
}

int engine_start(const struct engine_context *c, char *err, size_t errlen)
{
	ectx = *c;
	return consumer_start(&engine_consumer, c->db_path, err, errlen);
}

void engine_stop(void)
{
	consumer_stop(&engine_consumer);
}
