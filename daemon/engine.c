/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * engine.c - what happens when a release's last job ends: compare with the
 * baseline, rerun failing targets, link each regression to every affected
 * rc, mark fixes, decide the gate, write the report and queue its delivery
 * (the rc's mail thread, webhooks). The rules themselves are in regress.c;
 * this file applies them to the store, from one consumer thread that
 * takes every release whose jobs have all ended and that is not analysed
 * (workers only finish jobs and kick it).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "rcgate.h"
#include "announce.h"
#include "report.h"

/* The consumer thread; engine_kick() may come from any thread. */
static struct engine_context ectx;
static pthread_t engine_thread;
static int engine_running;
static atomic_int engine_stopping;
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond = PTHREAD_COND_INITIALIZER;
static int wake_pending;

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static long jint(json_t *o, const char *key)
{
	return (long)json_integer_value(json_object_get(o, key));
}

static json_t *first_row(json_t *rows)
{
	json_t *r = json_array_size(rows) > 0
			    ? json_incref(json_array_get(rows, 0)) : NULL;

	json_decref(rows);
	return r;
}

/* The baseline release: the explicit one, or the last tested release of
 * the branch before this one. Returns a new reference or NULL. */
static json_t *baseline_of(struct store *st, json_t *rel, char *err,
			   size_t errlen)
{
	const char *explicit = jstr(rel, "baseline");

	if (explicit != NULL)
		return first_row(store_rows(st, Q_RELEASE, err, errlen, "s",
					    explicit));
	return first_row(store_rows(st, Q_BASELINE_AUTO, err, errlen, "sli",
				    jstr(rel, "branch"), jint(rel, "patch"),
				    (int64_t)jint(rel, "id")));
}

static enum baseline_status baseline_status_of(json_t *base_runs,
					       const char *target,
					       const char *test)
{
	size_t i;
	json_t *row;

	json_array_foreach(base_runs, i, row) {
		if (strcmp(jstr(row, "target"), target) == 0 &&
		    strcmp(jstr(row, "test"), test) == 0)
			return jint(row, "fails") > 0 ? BASE_FAIL : BASE_PASS;
	}
	return BASE_NONE;
}

/* Builds the report from the store's view of the release and queues it. */
static int write_report(struct store *st, const struct config *cfg,
			const char *base_url, json_t *rel, json_t *baseline,
			const char *gate, char *err, size_t errlen)
{
	int64_t id = jint(rel, "id");
	json_t *regs = store_rows(st, Q_RELEASE_REGRESSIONS, err, errlen, "i", id);
	json_t *jobs = store_rows(st, Q_RELEASE_JOBS, err, errlen, "i", id);
	struct report_regression *rr = NULL;
	struct report_target *rt = NULL;
	struct report_input in = { 0 };
	struct announcement ann;
	char status_url[1024], date[64], **also = NULL, **urls = NULL;
	char *text = NULL, *email = NULL, *hook = NULL;
	struct outbox_in out[2];
	size_t nout = 0, nr = 0, nt = 0, i;
	json_t *row;
	int rc = -1;

	if (regs == NULL || jobs == NULL)
		goto out;
	rr = calloc(json_array_size(regs) + 1, sizeof(*rr));
	also = calloc(json_array_size(regs) + 1, sizeof(*also));
	urls = calloc(json_array_size(regs) + 1, sizeof(*urls));
	rt = calloc(json_array_size(jobs) + 1, sizeof(*rt));
	if (rr == NULL || rt == NULL || also == NULL || urls == NULL) {
		errf(err, errlen, "out of memory");
		goto out;
	}
	json_array_foreach(regs, i, row) {
		const char *list = jstr(row, "also_in");

		if (jint(row, "flaky"))
			continue;	/* flaky results are on the status page */
		rr[nr].id = jint(row, "id");
		rr[nr].test = jstr(row, "test");
		rr[nr].target = jstr(row, "target");
		rr[nr].diagnostic = jstr(row, "diagnostic");
		rr[nr].state = jstr(row, "state");
		if (list != NULL && (also[nr] = strdup(list)) != NULL) {
			/* "a b c" -> pointers into the copy, cut at the spaces */
			size_t cap = 16, k = 0;
			const char **v = calloc(cap, sizeof(*v));
			char *p = also[nr];

			while (v != NULL && p != NULL && *p != '\0' && k < cap) {
				char *sp = strchr(p, ' ');

				v[k++] = p;
				if (sp != NULL)
					*sp++ = '\0';
				p = sp;
			}
			rr[nr].also_in = (const char *const *)v;
			rr[nr].nalso = k;
		}
		if (asprintf(&urls[nr], "%s/api/v1/regressions/%ld", base_url,
			     rr[nr].id) >= 0)
			rr[nr].url = urls[nr];
		nr++;
	}
	json_array_foreach(jobs, i, row) {
		json_t *results = store_rows(st, Q_JOB_RESULTS, err, errlen, "i",
					     (int64_t)jint(row, "id"));
		size_t k;
		json_t *res;

		rt[nt].target = jstr(row, "target");
		rt[nt].state = jstr(row, "state");
		rt[nt].kernel = jstr(row, "kernel_version");
		rt[nt].seconds = json_real_value(json_object_get(row, "boot_seconds"));
		rt[nt].error = jstr(row, "error");
		{
			struct result_counts c = { 0 };

			json_array_foreach(results, k, res)
				result_counts_add(&c, jstr(res, "status"));
			rt[nt].pass = c.pass;
			rt[nt].fail = c.fail;
			rt[nt].skip = c.skip;
		}
		json_decref(results);
		nt++;
	}
	snprintf(status_url, sizeof(status_url), "%s/api/v1/releases/%s",
		 base_url, jstr(rel, "version"));
	in.farm = cfg->farm;
	in.tested_by = cfg->mail_from;
	in.version = jstr(rel, "version");
	in.baseline = baseline != NULL ? jstr(baseline, "version") : NULL;
	in.gate = gate;
	in.status_url = status_url;
	in.regressions = rr;
	in.nregressions = nr;
	in.targets = rt;
	in.ntargets = nt;
	memset(&ann, 0, sizeof(ann));
	if (jstr(rel, "message_id") != NULL) {
		snprintf(ann.version, sizeof(ann.version), "%s", jstr(rel, "version"));
		snprintf(ann.branch, sizeof(ann.branch), "%s", jstr(rel, "branch"));
		snprintf(ann.subject, sizeof(ann.subject), "%s",
			 jstr(rel, "subject") ? jstr(rel, "subject") : "");
		snprintf(ann.message_id, sizeof(ann.message_id), "%s",
			 jstr(rel, "message_id"));
		snprintf(ann.from, sizeof(ann.from), "%s",
			 jstr(rel, "mail_from") ? jstr(rel, "mail_from") : "");
		ann.to = (char *)jstr(rel, "mail_to");
		ann.cc = (char *)jstr(rel, "mail_cc");
		ann.npatches = -1;
		in.ann = &ann;
	}
	text = report_text(&in);
	if (text == NULL) {
		errf(err, errlen, "cannot render the report");
		goto out;
	}
	if (in.ann != NULL) {
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", &tm);
		email = report_email(&in, cfg->mail_from, date, err, errlen);
		if (email == NULL)
			log_warn("report for %s: no e-mail: %s", in.version, err);
		else if (cfg->smtp_url[0] != '\0')
			out[nout++] = (struct outbox_in){ "smtp", cfg->smtp_url, email };
	}
	if (cfg->webhook_url[0] != '\0') {
		json_t *payload = json_pack("{s:s,s:s,s:s,s:s,s:s?,s:s?,s:i}",
			"event", "report", "version", in.version, "gate", gate,
			"status_url", status_url, "baseline", in.baseline,
			"message_id", jstr(rel, "message_id"),
			"regressions", (int)nr);

		if (payload != NULL) {
			json_object_set_new(payload, "report", json_string(text));
			hook = json_dumps(payload, JSON_COMPACT | JSON_SORT_KEYS);
			json_decref(payload);
		}
		if (hook != NULL)
			out[nout++] = (struct outbox_in){ "webhook", cfg->webhook_url,
							  hook };
	}
	rc = store_report_add(st, id, gate, text, email, out, nout, err, errlen);
out:
	for (i = 0; rr != NULL && i < nr; i++) {
		free((void *)rr[i].also_in);
		free(also[i]);
		free(urls[i]);
	}
	free(rr);
	free(rt);
	free(also);
	free(urls);
	free(text);
	free(email);
	free(hook);
	json_decref(regs);
	json_decref(jobs);
	return rc;
}

json_t *engine_gate(struct store *st, int64_t release_id, char *err,
		    size_t errlen)
{
	json_t *g = first_row(store_rows(st, Q_RELEASE_GATE, err, errlen, "i",
					 release_id));
	json_t *regs, *reasons, *row, *jobs;
	struct gate_input in;
	enum gate_verdict v;
	size_t i;

	if (g == NULL)
		return NULL;
	in.jobs = (int)jint(g, "jobs");
	in.unfinished = (int)jint(g, "unfinished");
	in.infra_errors = (int)jint(g, "infra");
	in.blocking_regressions = (int)jint(g, "blocking");
	/* Regressions are decided when the last job ends: until then a
	 * finished-looking release is still pending. */
	if (json_is_null(json_object_get(g, "analysed")) && in.unfinished == 0 &&
	    in.jobs > 0)
		in.unfinished = 1;
	v = regress_gate(&in);
	reasons = json_array();
	regs = store_rows(st, Q_RELEASE_REGRESSIONS, err, errlen, "i", release_id);
	json_array_foreach(regs, i, row) {
		char line[512];

		if (jint(row, "flaky") || strcmp(jstr(row, "state"), "invalid") == 0)
			continue;
		snprintf(line, sizeof(line), "regression %ld: %s fails on %s%s%s",
			 jint(row, "id"), jstr(row, "test"), jstr(row, "target"),
			 jstr(row, "also_in") ? " (also in " : "",
			 jstr(row, "also_in") ? jstr(row, "also_in") : "");
		if (jstr(row, "also_in"))
			strncat(line, ")", sizeof(line) - strlen(line) - 1);
		json_array_append_new(reasons, json_string(line));
	}
	jobs = store_rows(st, Q_RELEASE_JOBS, err, errlen, "i", release_id);
	json_array_foreach(jobs, i, row) {
		char line[512];
		const char *state = jstr(row, "state");

		if (strcmp(state, JS_INFRA_ERROR) == 0)
			snprintf(line, sizeof(line), "%s not tested: %s", jstr(row, "target"),
				 jstr(row, "error") ? jstr(row, "error") : "infra error");
		else if (strcmp(state, JS_CANCELLED) == 0)
			snprintf(line, sizeof(line), "%s not tested: cancelled",
				 jstr(row, "target"));
		else if (strcmp(state, JS_DONE) != 0)
			snprintf(line, sizeof(line), "%s still %s", jstr(row, "target"),
				 state);
		else
			continue;
		json_array_append_new(reasons, json_string(line));
	}
	if (in.jobs == 0)
		json_array_append_new(reasons, json_string("no kernels submitted yet"));
	json_decref(jobs);
	json_decref(regs);
	/* An rc that shipped anyway, past its deadline, with a blocking
	 * regression: the case of 6.1.64, said out loud. */
	{
		int shipped = v == GATE_BLOCK && jint(g, "deadline_passed") &&
			      jstr(g, "released_as") != NULL;

		json_object_set_new(g, "released_with_known_regressions",
				    json_boolean(shipped));
		if (shipped) {
			char line[160];

			snprintf(line, sizeof(line), "released as %s with known"
				 " regressions after the review deadline",
				 jstr(g, "released_as"));
			json_array_insert_new(reasons, 0, json_string(line));
		}
	}
	json_object_set_new(g, "deadline_passed",
			    json_boolean(jint(g, "deadline_passed")));
	json_object_set_new(g, "verdict", json_string(regress_gate_name(v)));
	json_object_set_new(g, "reasons", reasons);
	return g;
}

/* Returns 1 if reruns were queued (analysis continues when they end). */
static int queue_reruns(struct store *st, const struct config *cfg,
			int64_t id, json_t *runs, json_t *base_runs,
			char *err, size_t errlen)
{
	char done[8][16];
	size_t ndone = 0, i;
	json_t *row;
	int queued = 0;

	json_array_foreach(runs, i, row) {
		struct test_runs t = { (int)jint(row, "runs"), (int)jint(row, "fails"),
			baseline_status_of(base_runs, jstr(row, "target"),
					   jstr(row, "test")) };
		const char *target = jstr(row, "target");
		json_t *n;
		int seen = 0;

		if (regress_classify(&t, (int)cfg->reruns) != CLASS_RERUN)
			continue;
		for (size_t k = 0; k < ndone; k++)
			seen |= strcmp(done[k], target) == 0;
		if (seen || ndone == 8)
			continue;
		/* A rerun that itself failed for infrastructure reasons is not
		 * retried forever: the reruns already made are the limit. */
		n = first_row(store_rows(st, Q_RERUN_COUNT, err, errlen, "is", id,
					 target));
		if (n != NULL && jint(n, "n") >= cfg->reruns) {
			json_decref(n);
			continue;
		}
		json_decref(n);
		if (store_job_rerun(st, id, target, err, errlen) < 0)
			return -1;
		snprintf(done[ndone++], sizeof(done[0]), "%s", target);
		log_info("release=%lld target=%s: failure rerun queued",
			 (long long)id, target);
		queued = 1;
	}
	return queued;
}

/* Regressions this release fixes on its branch: the candidates the store
 * finds (its test passes here), where regress_fixes() says this release
 * comes after an occurrence. */
static int mark_fixes(struct store *st, int64_t id, const char *version,
		      int *nfixed, char *err, size_t errlen)
{
	json_t *cands = store_fix_candidates(st, id, err, errlen), *row;
	size_t i;

	*nfixed = 0;
	if (cands == NULL)
		return -1;
	json_array_foreach(cands, i, row) {
		int rc;

		if (!regress_fixes(jstr(row, "seen_on"), version))
			continue;
		rc = store_regression_fix(st, jint(row, "id"), jstr(row, "branch"),
					  version, err, errlen);
		if (rc < 0) {
			json_decref(cands);
			return -1;
		}
		*nfixed += rc;
	}
	json_decref(cands);
	return 0;
}

static int settle(struct store *st, const struct config *cfg,
		  const char *base_url, void (*jobs_queued)(void), int64_t id,
		  char *err, size_t errlen)
{
	json_t *rel, *g, *baseline = NULL, *runs = NULL, *base_runs = NULL, *row;
	int rc = -1, nfixed = 0, nreg = 0;
	size_t i;

	rel = first_row(store_rows(st, Q_RELEASE_BY_ID, err, errlen, "i", id));
	if (rel == NULL)
		return -1;
	g = first_row(store_rows(st, Q_RELEASE_GATE, err, errlen, "i", id));
	if (g == NULL || jint(g, "unfinished") > 0 ||
	    !json_is_null(json_object_get(g, "analysed"))) {
		rc = 0;
		goto out;
	}
	baseline = baseline_of(st, rel, err, errlen);
	runs = store_rows(st, Q_RELEASE_RUNS, err, errlen, "i", id);
	base_runs = baseline != NULL
		? store_rows(st, Q_RELEASE_RUNS, err, errlen, "i",
			     (int64_t)jint(baseline, "id"))
		: json_array();
	if (runs == NULL || base_runs == NULL)
		goto out;
	switch (queue_reruns(st, cfg, id, runs, base_runs, err, errlen)) {
	case -1:
		goto out;
	case 1:
		if (jobs_queued != NULL)
			jobs_queued();
		rc = 0;
		goto out;
	}
	if (store_release_claim_analysis(st, id, err, errlen) <= 0) {
		rc = 0;	/* someone else did (or an error, logged by caller) */
		goto out;
	}
	json_array_foreach(runs, i, row) {
		struct test_runs t = { (int)jint(row, "runs"), (int)jint(row, "fails"),
			baseline_status_of(base_runs, jstr(row, "target"),
					   jstr(row, "test")) };
		enum test_class c = regress_classify(&t, (int)cfg->reruns);
		struct occurrence_in o;
		char sig[65], fs[32];
		int64_t rid;
		int created;

		/* A rerun that could not run leaves CLASS_RERUN: decide with
		 * what we have rather than wait forever. */
		if (c == CLASS_RERUN)
			c = CLASS_REGRESSION;
		if (c != CLASS_REGRESSION && c != CLASS_FLAKY)
			continue;
		regress_signature(jstr(row, "test"), jstr(row, "target"),
				  jstr(row, "diagnostic"), sig);
		regress_test_fs(jstr(row, "test"), fs, sizeof(fs));
		o.signature = sig;
		o.test = jstr(row, "test");
		o.target = jstr(row, "target");
		o.fs = fs;
		o.diagnostic = jstr(row, "diagnostic");
		o.release_id = id;
		o.job_id = jint(row, "job_id");
		o.branch = jstr(rel, "branch");
		o.version = jstr(rel, "version");
		o.flaky = c == CLASS_FLAKY;
		o.runs = t.runs;
		o.fails = t.fails;
		o.confirmed = !o.flaky && regress_confirmed(&t);
		o.window_days = cfg->link_window_days;
		if (store_regression_link(st, &o, &rid, &created, err, errlen) < 0)
			goto out;
		nreg++;
		log_info("release=%s regression=%lld %s test=%s target=%s"
			 " baseline=%s runs=%d fails=%d", jstr(rel, "version"),
			 (long long)rid, created ? "new" : "linked", o.test,
			 o.target, t.baseline == BASE_PASS ? "pass" : "none",
			 t.runs, t.fails);
	}
	if (mark_fixes(st, id, jstr(rel, "version"), &nfixed, err, errlen) < 0)
		goto out;
	{
		json_t *gate = engine_gate(st, id, err, errlen);
		const char *verdict = gate != NULL ? jstr(gate, "verdict") : "pending";

		log_info("release=%s analysed regressions=%d fixed=%d gate=%s"
			 " baseline=%s", jstr(rel, "version"), nreg, nfixed, verdict,
			 baseline != NULL ? jstr(baseline, "version") : "none");
		rc = write_report(st, cfg, base_url, rel, baseline, verdict, err,
				  errlen);
		json_decref(gate);
	}
out:
	json_decref(g);
	json_decref(rel);
	json_decref(baseline);
	json_decref(runs);
	json_decref(base_runs);
	return rc;
}

int engine_run_once(struct store *st, const struct engine_context *c,
		    char *err, size_t errlen)
{
	json_t *todo = store_rows(st, Q_RELEASES_UNANALYSED, err, errlen, "");
	size_t i;
	json_t *row;
	int n = 0, failed = 0;

	if (todo == NULL)
		return -1;
	json_array_foreach(todo, i, row) {
		char e2[512];
		int64_t id = json_integer_value(json_object_get(row, "id"));

		if (settle(st, c->cfg, c->base_url, c->jobs_queued, id, e2,
			   sizeof(e2)) < 0) {
			log_err("release analysis: release %lld: %s",
				(long long)id, e2);
			errf(err, errlen, "%s", e2);
			failed = 1;
			continue;
		}
		n++;
	}
	json_decref(todo);
	return failed ? -1 : n;
}

void engine_kick(void)
{
	pthread_mutex_lock(&wake_lock);
	wake_pending = 1;
	pthread_cond_signal(&wake_cond);
	pthread_mutex_unlock(&wake_lock);
}

/* Sleeps until kicked or secs pass. */
static void engine_wait(int secs)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	pthread_mutex_lock(&wake_lock);
	while (!wake_pending && !atomic_load(&engine_stopping)) {
		if (pthread_cond_timedwait(&wake_cond, &wake_lock, &ts) == ETIMEDOUT)
			break;
	}
	wake_pending = 0;
	pthread_mutex_unlock(&wake_lock);
}

static void *engine_main(void *arg)
{
	char err[512];
	struct store *st = store_open(ectx.db_path, err, sizeof(err));

	(void)arg;
	if (st == NULL) {
		log_err("engine: %s", err);
		return NULL;
	}
	/* The first pass also picks up what a crash left: releases whose
	 * last job ended just before it. */
	while (!atomic_load(&engine_stopping)) {
		/* After an error, back off rather than fail every second. */
		int rc = engine_run_once(st, &ectx, err, sizeof(err));

		engine_wait(rc < 0 ? 30 : 5);
	}
	store_close(st);
	return NULL;
}

int engine_start(const struct engine_context *c, char *err, size_t errlen)
{
	ectx = *c;
	atomic_store(&engine_stopping, 0);
	if (pthread_create(&engine_thread, NULL, engine_main, NULL) != 0) {
		errf(err, errlen, "cannot start the engine thread");
		return -1;
	}
	engine_running = 1;
	return 0;
}

void engine_stop(void)
{
	if (!engine_running)
		return;
	atomic_store(&engine_stopping, 1);
	engine_kick();
	pthread_join(engine_thread, NULL);
	engine_running = 0;
}
