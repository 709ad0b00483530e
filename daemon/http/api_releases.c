/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * api_releases.c - the release resource: the list, one release with its
 * jobs, results, gate and regressions, POST /api/v1/releases and its
 * artifact checks, cancel, the gate, the release's regressions, its report
 * (text and e-mail), its KCIDB export, and announcements, which create
 * releases. The release's state is derived here from its jobs' states.
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "store/store.h"
#include "artifact/artifact.h"
#include "build/build.h"
#include "job/job.h"
#include "intake/intake.h"
#include "report/report.h"
#include "review/review.h"
#include "http/http.h"
#include "api_internal.h"

static int64_t jid(json_t *o)
{
	return json_integer_value(json_object_get(o, "id"));
}

/* The gate as the API shows it: the counts it was decided from, the
 * verdict and the engine's reasons (engine_gate_eval). NULL if there is
 * no such release or on an error (err set). */
static json_t *gate_json(int64_t release_id, char *err, size_t errlen)
{
	struct gate_result g;
	const struct lost_coverage_row *l;
	json_t *reasons, *lost, *out;
	int rc;

	pthread_mutex_lock(&api_lock);
	rc = engine_gate_eval(api_store, release_id, &g, err, errlen);
	pthread_mutex_unlock(&api_lock);
	if (rc <= 0)
		return NULL;
	reasons = json_array();
	for (size_t i = 0; i < g.nreasons; i++)
		json_array_append_new(reasons, json_string(g.reasons[i]));
	lost = json_array();
	l = g.lost.v;
	for (size_t i = 0; i < g.lost.n; i++)
		json_array_append_new(lost, json_pack("{s:s,s:s,s:s?}", "target",
			l[i].target, "test", l[i].test, "reason", l[i].reason));
	out = json_pack("{s:i,s:i,s:i,s:i,s:s?,s:b,s:s?,s:b,s:s,s:o,s:o}",
			"jobs", g.row->jobs, "unfinished", g.row->unfinished,
			"infra", g.row->infra, "blocking", g.row->blocking,
			"analysed", g.row->analysed, "deadline_passed",
			g.row->deadline_passed, "released_as", g.row->released_as,
			"released_with_known_regressions",
			g.released_with_known_regressions, "verdict",
			regress_gate_name(g.verdict), "reasons", reasons,
			"lost_coverage", lost);
	gate_result_free(&g);
	return out;
}

/* Release state from its jobs' states: the release is only as finished as
 * its slowest job. Counts are added state by state, then decided. */
struct state_tally {
	long active, queued, infra, done, cancelled;
};

static void tally_add(struct state_tally *t, const char *state, long n)
{
	const struct job_state *js = job_state_find(state);

	if (js == NULL)
		return;
	if (strcmp(state, JS_QUEUED) == 0)
		t->queued += n;
	else if (strcmp(state, JS_DONE) == 0)
		t->done += n;
	else if (strcmp(state, JS_INFRA_ERROR) == 0)
		t->infra += n;
	else if (strcmp(state, JS_CANCELLED) == 0)
		t->cancelled += n;
	else if (js->active)
		t->active += n;
}

static const char *tally_state(const struct state_tally *t)
{
	if (t->active > 0)
		return JS_RUNNING;
	if (t->queued > 0)
		return t->done + t->infra > 0 ? JS_RUNNING : JS_QUEUED;
	if (t->infra > 0)
		return JS_INFRA_ERROR;
	if (t->done > 0)
		return JS_DONE;
	return t->cancelled > 0 ? JS_CANCELLED : "empty";
}

/* From Q_RELEASE_JOB_COUNTS rows. */
static const char *release_state(json_t *counts)
{
	struct state_tally t = { 0 };
	size_t i;
	json_t *row;

	json_array_foreach(counts, i, row)
		tally_add(&t, json_string_value(json_object_get(row, "state")),
			  (long)json_integer_value(json_object_get(row, "n")));
	return tally_state(&t);
}

/* From Q_RELEASES' job_states, "done:3 infra_error:1" (NULL: no jobs). */
static void tally_text(struct state_tally *t, const char *s)
{
	while (s != NULL && *s != '\0') {
		const char *colon = strchr(s, ':'), *sp;
		char state[32];
		long n;

		if (colon == NULL || (size_t)(colon - s) >= sizeof(state))
			break;
		memcpy(state, s, (size_t)(colon - s));
		state[colon - s] = '\0';
		n = strtol(colon + 1, NULL, 10);
		tally_add(t, state, n);
		sp = strchr(colon, ' ');
		s = sp != NULL ? sp + 1 : NULL;
	}
}

static void split_also(json_t *list)
{
	size_t i;
	json_t *row;

	/* "5.15.140-rc1 5.10.202-rc1" -> ["5.15.140-rc1", "5.10.202-rc1"] */
	json_array_foreach(list, i, row) {
		const char *s = json_string_value(json_object_get(row, "also_in"));
		json_t *versions = json_array();

		while (s != NULL && *s != '\0') {
			const char *sp = strchr(s, ' ');
			size_t n = sp != NULL ? (size_t)(sp - s) : strlen(s);

			json_array_append_new(versions, json_stringn(s, n));
			s = sp != NULL ? sp + 1 : NULL;
		}
		json_object_set_new(row, "also_in", versions);
		json_object_set_new(row, "flaky", json_boolean(
			json_integer_value(json_object_get(row, "flaky"))));
	}
}

/* The release with its state, gate, totals, regressions, report parts and
 * jobs, each job with its results; the caller json_decref's it. NULL with
 * *status 404 if there is no such release, 500 on a database error. */
static json_t *release_json(const char *version, int *status)
{
	json_t *rel = rows(Q_RELEASE, "s", version), *r, *jobs, *counts, *job;
	json_t *rep, *last;
	struct result_counts totals = { 0 };
	size_t i;

	*status = 500;
	if (rel == NULL)
		return NULL;
	if (json_array_size(rel) == 0) {
		json_decref(rel);
		*status = 404;
		return NULL;
	}
	r = json_incref(json_array_get(rel, 0));
	json_decref(rel);
	if (json_is_integer(json_object_get(r, "announcement_verified")))
		json_object_set_new(r, "announcement_verified", json_boolean(
			json_integer_value(json_object_get(r, "announcement_verified"))));
	jobs = rows(Q_RELEASE_JOBS, "i", (int64_t)json_integer_value(json_object_get(r, "id")));
	counts = rows(Q_RELEASE_JOB_COUNTS, "i", (int64_t)json_integer_value(json_object_get(r, "id")));
	rep = rows(Q_RELEASE_REPORT, "i", jid(r));
	if (jobs == NULL || counts == NULL || rep == NULL) {
		json_decref(jobs);
		json_decref(counts);
		json_decref(rep);
		json_decref(r);
		return NULL;
	}
	/* Which parts of the newest report exist, so that clients link only
	 * what report.txt and report.eml will serve (they answer 404 else). */
	last = json_array_get(rep, 0);
	json_object_set_new(r, "report", last == NULL ? json_null()
		: json_pack("{s:b,s:b}",
			    "text", json_is_string(json_object_get(last, "text")),
			    "email", json_is_string(json_object_get(last, "email"))));
	json_decref(rep);
	json_array_foreach(jobs, i, job) {
		json_t *results = rows(Q_JOB_RESULTS, "i", (int64_t)json_integer_value(json_object_get(job, "id")));

		job_booleans(job);
		size_t k;
		json_t *res;

		json_array_foreach(results, k, res)
			result_counts_add(&totals, json_string_value(
				json_object_get(res, "status")));
		json_object_set_new(job, "results",
				    results != NULL ? results : json_array());
	}
	json_object_set_new(r, "state", json_string(release_state(counts)));
	if (json_is_null(json_object_get(r, "baseline"))) {
		/* What the engine compares with when none was given. */
		json_t *b = rows(Q_BASELINE_AUTO, "sli",
				 json_string_value(json_object_get(r, "branch")),
				 (long)json_integer_value(json_object_get(r, "patch")),
				 jid(r));

		json_object_set(r, "baseline_effective", json_array_size(b) > 0
			? json_object_get(json_array_get(b, 0), "version") : json_null());
		json_decref(b);
	} else {
		json_object_set(r, "baseline_effective", json_object_get(r, "baseline"));
	}
	{
		char err[256];
		json_t *g, *regs;

		g = gate_json(json_integer_value(json_object_get(r, "id")), err,
			      sizeof(err));
		json_object_set_new(r, "gate", g != NULL ? g : json_null());
		regs = rows(Q_RELEASE_REGRESSIONS, "i", (int64_t)json_integer_value(json_object_get(r, "id")));
		split_also(regs);
		json_object_set_new(r, "regressions", regs != NULL ? regs : json_array());
	}
	json_object_set_new(r, "totals", json_pack("{s:i,s:i,s:i}", "pass",
			    (int)totals.pass, "fail", (int)totals.fail, "skip",
			    (int)totals.skip));
	json_object_set_new(r, "jobs", jobs);
	json_decref(counts);
	*status = 200;
	return r;
}

/* The release row for {version}, or NULL with the error response set. */
static json_t *release_or_error(struct http_request *req,
				struct http_response *resp)
{
	json_t *rel = rows(Q_RELEASE, "s", req->params[0]), *r;

	if (rel == NULL) {
		http_error(resp, 500, "database error");
		return NULL;
	}
	if (json_array_size(rel) == 0) {
		json_decref(rel);
		http_error(resp, 404, "no release %.60s", req->params[0]);
		return NULL;
	}
	r = json_incref(json_array_get(rel, 0));
	json_decref(rel);
	if (json_is_integer(json_object_get(r, "announcement_verified")))
		json_object_set_new(r, "announcement_verified", json_boolean(
			json_integer_value(json_object_get(r, "announcement_verified"))));
	return r;
}

/* The list row's state and gate verdict from the columns Q_RELEASES
 * computed, and those columns dropped: the page is one query however long
 * the history. */
static void release_summary(json_t *row)
{
	struct state_tally t = { 0 };
	struct gate_row g;

	tally_text(&t, json_string_value(json_object_get(row, "job_states")));
	/* The gate's counts, from the same tally as the state (jobstate.c:
	 * queued and active are unfinished; infra_error and cancelled were
	 * not tested), as Q_RELEASE_GATE counts them. */
	g = (struct gate_row){
		.jobs = (int)json_integer_value(json_object_get(row, "jobs")),
		.unfinished = (int)(t.queued + t.active),
		.infra = (int)(t.infra + t.cancelled),
		.blocking = (int)json_integer_value(json_object_get(row, "blocking")),
		.analysed = json_string_value(json_object_get(row, "analysed")),
	};
	json_object_set_new(row, "gate", json_string(regress_gate_name(
		engine_gate_verdict(&g))));
	json_object_set_new(row, "state", json_string(tally_state(&t)));
	for (const char *const *k = (const char *const[]){ "job_states",
	     "blocking", "analysed", NULL }; *k != NULL; k++)
		json_object_del(row, *k);
}

int h_releases(struct http_request *req, struct http_response *resp)
{
	long limit, offset, skipped = 0, from = 0;
	char err[256];
	json_t *kept;
	const char *branch = http_query(req, "branch");
	const char *since = http_query(req, "since");
	const char *state = http_query(req, "state");

	if (page_arg(req, "limit", 50, MAX_PAGE, &limit) < 0 ||
	    page_arg(req, "offset", 0, LONG_MAX, &offset) < 0)
		return http_error(resp, 400, "limit must be 0..%d and offset >= 0",
				  MAX_PAGE);
	if (branch != NULL && strlen(branch) > 16)
		return http_error(resp, 400, "branch is like 6.1");
	if (since != NULL && (strlen(since) < 10 || strlen(since) > 20 ||
			      since[4] != '-' || since[7] != '-'))
		return http_error(resp, 400, "since is an ISO 8601 date or time"
				  " (2023-11-24 or 2023-11-24T00:00:00Z)");
	if (state != NULL && job_state_find(state) == NULL &&
	    strcmp(state, "empty") != 0)
		return http_error(resp, 400, "state is one of /api/v1/states or"
				  " empty");
	kept = json_array();
	/* The state is derived from the jobs, so a state filter pages over
	 * the matching releases: chunks are read until the page is full. */
	for (;;) {
		long chunk = state == NULL ? limit : 200;
		size_t i, n;
		json_t *list, *row;

		pthread_mutex_lock(&api_lock);
		list = store_rows(api_store, Q_RELEASES, err, sizeof(err), "ssll",
				  branch, since, chunk, state == NULL ? offset : from);
		pthread_mutex_unlock(&api_lock);
		if (list == NULL) {
			json_decref(kept);
			return http_error(resp, 500, "%s", err);
		}
		n = json_array_size(list);
		json_array_foreach(list, i, row) {
			release_summary(row);
			if (state != NULL && strcmp(state, json_string_value(
					json_object_get(row, "state"))) != 0)
				continue;
			if (state != NULL && skipped < offset) {
				skipped++;
				continue;
			}
			if ((long)json_array_size(kept) < limit)
				json_array_append(kept, row);
		}
		json_decref(list);
		from += (long)n;
		if (state == NULL || (long)n < chunk ||
		    (long)json_array_size(kept) >= limit)
			break;
	}
	return http_json(resp, 200, json_pack("{s:o,s:I,s:I}", "releases", kept,
			 "limit", (json_int_t)limit, "offset", (json_int_t)offset));
}

int h_release(struct http_request *req, struct http_response *resp)
{
	int status;
	json_t *r = release_json(req->params[0], &status);

	if (r == NULL)
		return status == 404
			? http_error(resp, 404, "no release %.60s", req->params[0])
			: http_error(resp, 500, "database error");
	return http_json(resp, 200, r);
}

/* Checks one artifact object of a POST /releases body. */
static int artifact_check(json_t *a, size_t i, struct artifact_in *out,
			  char *err, size_t errlen)
{
	const struct artifact_kind *kind;
	const char *key;
	json_t *v;
	char sub[256];

	memset(out, 0, sizeof(*out));
	if (!json_is_object(a)) {
		errf(err, errlen, "artifacts[%zu] is not an object", i);
		return -1;
	}
	json_object_foreach(a, key, v) {
		static const char *const known[] = { "target", "url", "sha256",
			"kind", "modules_url", "modules_sha256", "custom", NULL };
		size_t k;

		for (k = 0; known[k] != NULL && strcmp(known[k], key) != 0; k++)
			;
		if (known[k] == NULL) {
			errf(err, errlen, "artifacts[%zu]: unknown key '%.40s'", i,
			     key);
			return -1;
		}
	}
	out->target = json_string_value(json_object_get(a, "target"));
	out->url = json_string_value(json_object_get(a, "url"));
	out->sha256 = json_string_value(json_object_get(a, "sha256"));
	out->kind = json_string_value(json_object_get(a, "kind"));
	if (json_object_get(a, "custom") != NULL &&
	    !json_is_boolean(json_object_get(a, "custom"))) {
		errf(err, errlen, "artifacts[%zu].custom must be true or false", i);
		return -1;
	}
	out->custom = json_is_true(json_object_get(a, "custom"));
	for (const char *const *k = (const char *const[]){ "kind", "modules_url",
	     "modules_sha256", NULL }; *k != NULL; k++) {
		if (json_object_get(a, *k) != NULL &&
		    !json_is_string(json_object_get(a, *k))) {
			errf(err, errlen, "artifacts[%zu].%s must be a string", i, *k);
			return -1;
		}
	}
	if (out->target == NULL || target_find(out->target) == NULL) {
		errf(err, errlen, "artifacts[%zu].target must be one of x86_64,"
		     " i386, arm64, armv7", i);
		return -1;
	}
	if (out->url == NULL || strlen(out->url) > 2000) {
		errf(err, errlen, "artifacts[%zu].url must be a URL of at most"
		     " 2000 characters", i);
		return -1;
	}
	if (fetch_url_check(out->url, sub, sizeof(sub)) < 0) {
		errf(err, errlen, "artifacts[%zu].url: %s", i, sub);
		return -1;
	}
	if (out->sha256 == NULL || !is_sha256_hex(out->sha256)) {
		errf(err, errlen, "artifacts[%zu].sha256 must be 64 lowercase hex"
		     " digits", i);
		return -1;
	}
	if (out->kind == NULL)
		out->kind = "deb";
	kind = artifact_kind_find(out->kind);
	if (kind == NULL || !kind->posted) {
		errf(err, errlen, "artifacts[%zu].kind must be 'deb' (a Debian"
		     " linux-image package) or 'image' (a kernel image)", i);
		return -1;
	}
	out->modules_url = json_string_value(json_object_get(a, "modules_url"));
	out->modules_sha256 = json_string_value(json_object_get(a,
							       "modules_sha256"));
	if ((out->modules_url == NULL) != (out->modules_sha256 == NULL) ||
	    (out->modules_url != NULL && !kind->bare_image)) {
		errf(err, errlen, "artifacts[%zu]: modules_url and modules_sha256"
		     " go together, with kind 'image'", i);
		return -1;
	}
	if (out->modules_url != NULL) {
		if (strlen(out->modules_url) > 2000 ||
		    fetch_url_check(out->modules_url, sub, sizeof(sub)) < 0) {
			errf(err, errlen, "artifacts[%zu].modules_url: %s", i,
			     strlen(out->modules_url) > 2000 ? "too long" : sub);
			return -1;
		}
		if (!is_sha256_hex(out->modules_sha256)) {
			errf(err, errlen, "artifacts[%zu].modules_sha256 must be 64"
			     " lowercase hex digits", i);
			return -1;
		}
	}
	return 0;
}

/* A URL and its sha256 from a source object: both or neither (*url NULL
 * when absent); -1 with err if one is missing or malformed. */
static int source_url(json_t *src, const char *ukey, const char *skey,
		      const char **url, const char **sha, char *err,
		      size_t errlen)
{
	char sub[256];

	*url = json_string_value(json_object_get(src, ukey));
	*sha = json_string_value(json_object_get(src, skey));
	if ((json_object_get(src, ukey) != NULL && *url == NULL) ||
	    (json_object_get(src, skey) != NULL && *sha == NULL) ||
	    (*url == NULL) != (*sha == NULL)) {
		errf(err, errlen, "source.%s and source.%s are strings that go"
		     " together", ukey, skey);
		return -1;
	}
	if (*url == NULL)
		return 0;
	if (strlen(*url) > 2000 || fetch_url_check(*url, sub, sizeof(sub)) < 0) {
		errf(err, errlen, "source.%s: %s", ukey,
		     strlen(*url) > 2000 ? "longer than 2000 characters" : sub);
		return -1;
	}
	if (!is_sha256_hex(*sha)) {
		errf(err, errlen, "source.%s must be 64 lowercase hex digits", skey);
		return -1;
	}
	return 0;
}

/* {"source": {"git", "commit" | "branch"}}: the tree, and the rc as a
 * commit or as the branch whose head it is. */
static int source_git(json_t *src, const char **url, const char **ref,
		      char *err, size_t errlen)
{
	const char *key, *commit, *branch;
	json_t *v;

	json_object_foreach(src, key, v) {
		if (strcmp(key, "git") != 0 && strcmp(key, "commit") != 0 &&
		    strcmp(key, "branch") != 0) {
			errf(err, errlen, "source: unknown key '%.40s' (a git"
			     " source has git and commit or branch)", key);
			return -1;
		}
	}
	*url = json_string_value(json_object_get(src, "git"));
	commit = json_string_value(json_object_get(src, "commit"));
	branch = json_string_value(json_object_get(src, "branch"));
	if (*url == NULL || gitsrc_url_check(*url, err, errlen) < 0) {
		if (*url == NULL)
			errf(err, errlen, "source.git must be a string");
		return -1;
	}
	if ((json_object_get(src, "commit") != NULL) ==
	    (json_object_get(src, "branch") != NULL)) {
		errf(err, errlen, "source.git goes with commit or with branch"
		     " (one of them)");
		return -1;
	}
	if (json_object_get(src, "commit") != NULL) {
		if (commit == NULL || !gitsrc_is_commit(commit)) {
			errf(err, errlen, "source.commit must be 40 lowercase hex"
			     " digits");
			return -1;
		}
		*ref = commit;
	} else {
		if (branch == NULL || gitsrc_branch_check(branch, err, errlen) < 0) {
			if (branch == NULL)
				errf(err, errlen, "source.branch must be a string");
			return -1;
		}
		*ref = branch;
	}
	return 0;
}

/* {"source": {"tarball", "tarball_sha256", "patch", "patch_sha256"} or
 * {"git", "commit" | "branch"}, "targets": [...]}: one artifact of kind
 * source or git per target (all four when targets is absent), pointing
 * into body. */
static int source_check(json_t *body, struct artifact_in *in, size_t *n,
			char *err, size_t errlen)
{
	json_t *src = json_object_get(body, "source");
	json_t *targets = json_object_get(body, "targets"), *v;
	const char *tarball = NULL, *tsha = NULL, *patch = NULL, *psha = NULL,
		*git = NULL, *ref = NULL, *key;
	size_t i;

	if (!json_is_object(src)) {
		errf(err, errlen, "source must be an object with tarball,"
		     " tarball_sha256 and, for an rc, patch and patch_sha256;"
		     " or with git and commit or branch");
		return -1;
	}
	if (json_object_get(src, "git") != NULL) {
		if (source_git(src, &git, &ref, err, errlen) < 0)
			return -1;
	} else {
		json_object_foreach(src, key, v) {
			if (strcmp(key, "tarball") != 0 &&
			    strcmp(key, "tarball_sha256") != 0 &&
			    strcmp(key, "patch") != 0 &&
			    strcmp(key, "patch_sha256") != 0) {
				errf(err, errlen, "source: unknown key '%.40s'", key);
				return -1;
			}
		}
		if (source_url(src, "tarball", "tarball_sha256", &tarball, &tsha,
			       err, errlen) < 0 ||
		    source_url(src, "patch", "patch_sha256", &patch, &psha, err,
			       errlen) < 0)
			return -1;
		if (tarball == NULL) {
			errf(err, errlen, "source.tarball (the release the rc"
			     " applies to) is missing");
			return -1;
		}
	}
	/* Code is built only from the allowed origins (origin.c); an
	 * http:// or git:// URL whose https:// twin is allowed is stored
	 * upgraded. */
	{
		const char *const keys[] = { git != NULL ? "git" : "tarball",
					     "patch" };
		const char **urls[] = { git != NULL ? &git : &tarball, &patch };
		char pinned[2048];

		for (i = 0; i < 2; i++) {
			int tree = i == 0 && git != NULL;

			if (*urls[i] == NULL)
				continue;
			if (origin_pin(tree ? api_ctx.cfg->build_tree_origins
					    : api_ctx.cfg->build_file_origins,
				       tree ? "tree" : "file", *urls[i], pinned,
				       sizeof(pinned), err, errlen) < 0)
				return -1;
			if (strcmp(pinned, *urls[i]) != 0) {
				json_object_set_new(src, keys[i], json_string(pinned));
				*urls[i] = json_string_value(json_object_get(src, keys[i]));
			}
		}
	}
	if (targets != NULL && (!json_is_array(targets) ||
				json_array_size(targets) == 0 ||
				json_array_size(targets) > target_count())) {
		errf(err, errlen, "targets must be an array of 1..%zu target names",
		     target_count());
		return -1;
	}
	*n = targets != NULL ? json_array_size(targets) : target_count();
	for (i = 0; i < *n; i++) {
		const char *name = targets != NULL
			? json_string_value(json_array_get(targets, i))
			: target_at(i)->name;

		if (name == NULL || target_find(name) == NULL) {
			errf(err, errlen, "targets[%zu] must be one of x86_64, i386,"
			     " arm64, armv7", i);
			return -1;
		}
		in[i] = git != NULL
			? (struct artifact_in){ target_find(name)->name, git, "",
				"git", NULL, NULL, 0, NULL, NULL, ref }
			: (struct artifact_in){ target_find(name)->name, tarball,
				tsha, "source", NULL, NULL, 0, patch, psha, NULL };
	}
	return 0;
}

/* A POSTed release, checked: what store_release_create takes. in[]
 * points into the request's JSON. */
struct release_req {
	struct kversion kv;
	char version[48], baseline[48];	/* baseline "" when not given */
	struct artifact_in in[8];
	size_t n;
};

/* version and baseline: a version and, if given, one of the same branch. */
static int release_versions(json_t *body, struct release_req *r, char *err,
			    size_t errlen)
{
	const char *version = json_string_value(json_object_get(body, "version"));
	const char *baseline = json_string_value(json_object_get(body, "baseline"));
	struct kversion bkv;

	if (version == NULL) {
		snprintf(err, errlen, "version is missing or not a string");
		return -1;
	}
	if (kversion_parse(version, &r->kv, err, errlen) < 0)
		return -1;
	/* kversion_parse capped the length; the copy outlives body. */
	snprintf(r->version, sizeof(r->version), "%s", version);
	if (json_object_get(body, "baseline") == NULL)
		return 0;
	if (baseline == NULL ||
	    kversion_parse(baseline, &bkv, err, errlen) < 0 ||
	    strcmp(bkv.branch, r->kv.branch) != 0) {
		snprintf(err, errlen, "baseline must be a version of the same"
			 " branch (%s)", r->kv.branch);
		return -1;
	}
	snprintf(r->baseline, sizeof(r->baseline), "%s", baseline);
	return 0;
}

/* The kernels: posted artifacts, or a source rcgate builds; each target
 * once. */
static int release_kernels(json_t *body, struct release_req *r, char *err,
			   size_t errlen)
{
	json_t *arts = json_object_get(body, "artifacts");

	if ((json_object_get(body, "source") != NULL) == (arts != NULL)) {
		snprintf(err, errlen, "give either artifacts (kernels to test)"
			 " or source (rcgate builds them)");
		return -1;
	}
	if (json_object_get(body, "source") != NULL) {
		if (source_check(body, r->in, &r->n, err, errlen) < 0)
			return -1;
	} else if (json_object_get(body, "targets") != NULL) {
		snprintf(err, errlen, "targets go with source; artifacts name"
			 " their own targets");
		return -1;
	}
	if (arts != NULL) {
		r->n = json_array_size(arts);
		if (!json_is_array(arts) || r->n == 0 || r->n > target_count()) {
			snprintf(err, errlen, "artifacts must be an array of"
				 " 1..%zu objects", target_count());
			return -1;
		}
	}
	for (size_t i = 0; i < r->n; i++) {
		if (arts != NULL && artifact_check(json_array_get(arts, i), i,
						   &r->in[i], err, errlen) < 0)
			return -1;
		for (size_t k = 0; k < i; k++) {
			if (strcmp(r->in[k].target, r->in[i].target) == 0) {
				snprintf(err, errlen, "target %s given twice",
					 r->in[i].target);
				return -1;
			}
		}
	}
	return 0;
}

/* The request body as a release: -1 with err (a 400's message). */
static int release_request(json_t *body, struct release_req *r, char *err,
			   size_t errlen)
{
	const char *key;
	json_t *v;

	if (!json_is_object(body)) {
		snprintf(err, errlen, "body must be a JSON object");
		return -1;
	}
	json_object_foreach(body, key, v) {
		if (strcmp(key, "version") != 0 && strcmp(key, "artifacts") != 0 &&
		    strcmp(key, "baseline") != 0 && strcmp(key, "source") != 0 &&
		    strcmp(key, "targets") != 0) {
			snprintf(err, errlen, "unknown key '%.40s'", key);
			return -1;
		}
	}
	if (release_versions(body, r, err, errlen) < 0 ||
	    release_kernels(body, r, err, errlen) < 0)
		return -1;
	return 0;
}

int h_release_post(struct http_request *req, struct http_response *resp)
{
	struct release_req r = { 0 };
	json_error_t jerr;
	json_t *body, *created;
	char err[512];
	int64_t release_id;
	int rc, status;

	if (req->body == NULL || req->body_len == 0)
		return http_error(resp, 400, "request body is empty: expected a"
				  " JSON object with version and artifacts");
	body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (body == NULL)
		return http_error(resp, 400, "malformed JSON at line %d column %d:"
				  " %s", jerr.line, jerr.column, jerr.text);
	if (release_request(body, &r, err, sizeof(err)) < 0) {
		json_decref(body);
		return http_error(resp, 400, "%s", err);
	}
	pthread_mutex_lock(&api_lock);
	rc = store_release_create(api_store, r.version, &r.kv,
				  r.baseline[0] != '\0' ? r.baseline : NULL,
				  r.in, r.n, &release_id, err, sizeof(err));
	pthread_mutex_unlock(&api_lock);
	json_decref(body);
	if (rc == -2)
		return http_error(resp, 409, "release %s already exists",
				  r.version);
	if (rc < 0) {
		log_err("api: create release %s: %s", r.version, err);
		return http_error(resp, 500, "cannot store the release");
	}
	log_info("release created version=%s jobs=%zu request_id=%s", r.version,
		 r.n, req->request_id);
	sched_kick();
	created = release_json(r.version, &status);
	return created != NULL ? http_json(resp, 201, created)
			       : http_error(resp, 500, "database error");
}

int h_release_cancel(struct http_request *req, struct http_response *resp)
{
	char err[256];
	int n, rc;
	json_t *rel = release_or_error(req, resp);

	if (rel == NULL)
		return 0;
	json_decref(rel);
	pthread_mutex_lock(&api_lock);
	rc = store_release_cancel(api_store, req->params[0], &n, err, sizeof(err));
	pthread_mutex_unlock(&api_lock);
	if (rc < 0)
		return http_error(resp, 500, "%s", err);
	return http_json(resp, 200, json_pack("{s:s,s:i}", "version",
			 req->params[0], "cancelled", n));
}

int h_release_gate(struct http_request *req, struct http_response *resp)
{
	json_t *rel = release_or_error(req, resp), *g;
	char err[256];

	if (rel == NULL)
		return 0;
	g = gate_json(jid(rel), err, sizeof(err));
	if (g == NULL) {
		json_decref(rel);
		return http_error(resp, 500, "%s", err);
	}
	json_object_set(g, "version", json_object_get(rel, "version"));
	json_object_set(g, "deadline", json_object_get(rel, "deadline"));
	json_decref(rel);
	return http_json(resp, 200, g);
}

int h_release_regressions(struct http_request *req, struct http_response *resp)
{
	json_t *rel = release_or_error(req, resp), *regs;

	if (rel == NULL)
		return 0;
	regs = rows(Q_RELEASE_REGRESSIONS, "i", (int64_t)jid(rel));
	json_decref(rel);
	if (regs == NULL)
		return http_error(resp, 500, "database error");
	split_also(regs);
	return http_json(resp, 200, json_pack("{s:s,s:o}", "version",
			 req->params[0], "regressions", regs));
}

static int report_part(struct http_request *req, struct http_response *resp,
		       const char *field, const char *type)
{
	json_t *rel = release_or_error(req, resp), *rep;
	const char *text;
	char *copy;

	if (rel == NULL)
		return 0;
	rep = rows(Q_RELEASE_REPORT, "i", (int64_t)jid(rel));
	json_decref(rel);
	if (rep == NULL)
		return http_error(resp, 500, "database error");
	text = json_string_value(json_object_get(json_array_get(rep, 0), field));
	if (text == NULL) {
		size_t nreports = json_array_size(rep);

		json_decref(rep);
		return http_error(resp, 404, nreports == 0
				  ? "no report yet: the release is still being tested"
				  : "no e-mail report: the release has no announcement");
	}
	copy = strdup(text);
	json_decref(rep);
	if (copy == NULL)
		return http_error(resp, 500, "out of memory");
	return http_text(resp, 200, type, copy, strlen(copy));
}

int h_report_txt(struct http_request *req, struct http_response *resp)
{
	return report_part(req, resp, "text", "text/plain; charset=utf-8");
}

int h_report_eml(struct http_request *req, struct http_response *resp)
{
	return report_part(req, resp, "email", "message/rfc822");
}

/* The release as a KCIDB v5.3 submission (kcidb.c): the rows become the
 * typed input kcidb_submission takes. */
int h_kcidb(struct http_request *req, struct http_response *resp)
{
	json_t *rel = release_or_error(req, resp), *jobs, *regs, *job, *reg,
		**results = NULL, *out = NULL;
	struct kcidb_release kr;
	struct kcidb_job *kj = NULL;
	struct kcidb_regression *kg = NULL;
	struct kcidb_result **kres = NULL;
	size_t i, k, nj, ng;

	if (rel == NULL)
		return 0;
	jobs = rows(Q_RELEASE_JOBS, "i", jid(rel));
	regs = rows(Q_RELEASE_REGRESSIONS, "i", jid(rel));
	nj = json_array_size(jobs);
	ng = json_array_size(regs);
	kj = calloc(nj + 1, sizeof(*kj));
	kg = calloc(ng + 1, sizeof(*kg));
	kres = calloc(nj + 1, sizeof(*kres));
	results = calloc(nj + 1, sizeof(*results));
	if (jobs == NULL || regs == NULL || kj == NULL || kg == NULL ||
	    kres == NULL || results == NULL)
		goto out;
	kr = (struct kcidb_release){
		.version = json_string_value(json_object_get(rel, "version")),
		.rc = (long)json_integer_value(json_object_get(rel, "rc")),
		.git_tree = json_string_value(json_object_get(rel, "git_tree")),
		.git_branch = json_string_value(json_object_get(rel, "git_branch")),
		.message_id = json_string_value(json_object_get(rel, "message_id")),
		.public_url = api_ctx.cfg->public_url,
	};
	json_array_foreach(regs, i, reg) {
		kg[i] = (struct kcidb_regression){
			jid(reg), json_string_value(json_object_get(reg, "test")),
			json_string_value(json_object_get(reg, "target")),
			(int)json_integer_value(json_object_get(reg, "flaky")),
			json_string_value(json_object_get(reg, "culprit")),
			json_string_value(json_object_get(reg, "culprit_subject")),
			json_string_value(json_object_get(reg, "culprit_upstream")) };
	}
	json_array_foreach(jobs, i, job) {
		json_t *res;

		results[i] = rows(Q_JOB_RESULTS, "i", jid(job));
		kres[i] = calloc(json_array_size(results[i]) + 1, sizeof(**kres));
		if (results[i] == NULL || kres[i] == NULL)
			goto out;
		json_array_foreach(results[i], k, res) {
			json_t *d = json_object_get(res, "duration_ms");

			kres[i][k] = (struct kcidb_result){
				json_string_value(json_object_get(res, "test")),
				json_string_value(json_object_get(res, "status")),
				json_is_integer(d) ? (long)json_integer_value(d) : -1 };
		}
		kj[i] = (struct kcidb_job){
			jid(job), json_string_value(json_object_get(job, "target")),
			json_string_value(json_object_get(job, "suite")),
			json_string_value(json_object_get(job, "state")),
			json_string_value(json_object_get(job, "accel")),
			json_string_value(json_object_get(job, "started")),
			kres[i], json_array_size(results[i]) };
	}
	out = kcidb_submission(api_ctx.cfg->farm, &kr, kj, nj, kg, ng);
out:
	for (i = 0; i < nj; i++) {
		json_decref(results[i]);
		free(kres[i]);
	}
	free(results);
	free(kres);
	free(kj);
	free(kg);
	json_decref(jobs);
	json_decref(regs);
	json_decref(rel);
	if (out == NULL)
		return http_error(resp, 500, "cannot build the KCIDB submission");
	return http_json(resp, 200, out);
}

int h_announcement(struct http_request *req, struct http_response *resp)
{
	char err[512], version[48] = "";
	int created = 0, rc;

	if (req->body == NULL || req->body_len == 0)
		return http_error(resp, 400, "expected a raw RFC 822 message");
	pthread_mutex_lock(&api_lock);
	rc = trigger_announcement(api_store, api_ctx.cfg->announce_senders,
				  req->body, req->body_len, version,
				  sizeof(version), &created, err, sizeof(err));
	pthread_mutex_unlock(&api_lock);
	if (rc == -2) {
		log_err("announcement not stored: %s request_id=%s", err,
			req->request_id);
		resp->retry_after = 30;
		return http_error(resp, 503, "cannot take the announcement now"
				  " (%s); send it again later", err);
	}
	if (rc < 0)
		return http_error(resp, 400, "malformed message: %s", err);
	if (rc > 0) {
		log_info("announcement ignored: %s request_id=%s", err,
			 req->request_id);
		return http_error(resp, 422, "not an rc announcement: %s", err);
	}
	sched_kick();
	{
		int status;
		json_t *r = release_json(version, &status);

		return r != NULL ? http_json(resp, created ? 201 : 200, r)
				 : http_error(resp, 500, "database error");
	}
}
