/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * api.c - the REST API (/api/v1) and /healthz: the route table and one
 * handler per route. Handlers validate input completely before touching
 * the store, and answer with JSON bodies described in schemas/.
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <jansson.h>

#include "rcgate.h"
#include "kcidb.h"

static struct api_context ctx;
static struct store *api_store;
static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;

#define MAX_LOG_BYTES (4u << 20)
#define MAX_PAGE 200

int api_open(const struct api_context *c, char *err, size_t errlen)
{
	ctx = *c;
	api_store = store_open(c->db_path, err, errlen);
	return api_store != NULL ? 0 : -1;
}

void api_close(void)
{
	store_close(api_store);
	api_store = NULL;
}

int api_authorize(const char *token, enum http_scope scope)
{
	char hash[65];
	int rc;

	if (strlen(token) > 256)
		return AUTH_INVALID;
	sha256_hex(token, strlen(token), hash);
	pthread_mutex_lock(&api_lock);
	rc = store_token_check(api_store, hash, scope == SCOPE_ADMIN ? "admin"
			       : scope == SCOPE_WRITE ? "write" : "read");
	pthread_mutex_unlock(&api_lock);
	return rc;
}

/* store_rows under the API's lock; NULL (logged) on a database error.
 * types as for store_rows: 'i' int64_t, 's' string, 'l' long. */
static json_t *rows(enum store_query q, const char *types, ...)
{
	char err[256];
	va_list ap;
	json_t *r;

	va_start(ap, types);
	pthread_mutex_lock(&api_lock);
	r = store_vrows(api_store, q, err, sizeof(err), types, ap);
	pthread_mutex_unlock(&api_lock);
	va_end(ap);
	if (r == NULL)
		log_err("api: %s", err);
	return r;
}

static int64_t jid(json_t *o)
{
	return json_integer_value(json_object_get(o, "id"));
}

/* SQLite has no booleans: the job's 0/1 columns become JSON true/false. */
static void job_booleans(json_t *job)
{
	json_object_set_new(job, "custom", json_boolean(
		json_integer_value(json_object_get(job, "custom"))));
}

static int parse_id(const char *s, int64_t *id)
{
	long v;

	if (parse_long(s, 1, LONG_MAX, &v) < 0)
		return -1;
	*id = v;
	return 0;
}

/* Release state from its jobs' states: the release is only as finished as
 * its slowest job. */
static const char *release_state(json_t *counts)
{
	long active = 0, queued = 0, infra = 0, done = 0, cancelled = 0;
	size_t i;
	json_t *row;

	json_array_foreach(counts, i, row) {
		const char *state = json_string_value(json_object_get(row, "state"));
		long n = (long)json_integer_value(json_object_get(row, "n"));

		if (state == NULL)
			continue;
		if (strcmp(state, "queued") == 0)
			queued += n;
		else if (strcmp(state, "done") == 0)
			done += n;
		else if (strcmp(state, "infra_error") == 0)
			infra += n;
		else if (strcmp(state, "cancelled") == 0)
			cancelled += n;
		else
			active += n;
	}
	if (active > 0)
		return "running";
	if (queued > 0)
		return done + infra > 0 ? "running" : "queued";
	if (infra > 0)
		return "infra_error";
	if (done > 0)
		return "done";
	return cancelled > 0 ? "cancelled" : "empty";
}

static int h_healthz(struct http_request *req, struct http_response *resp)
{
	int version;

	(void)req;
	pthread_mutex_lock(&api_lock);
	version = store_schema_version(api_store);
	pthread_mutex_unlock(&api_lock);
	if (version < 0)
		return http_error(resp, 503, "database unavailable");
	return http_json(resp, 200, json_pack("{s:s,s:s,s:i,s:i}", "status", "ok",
			 "version", RCGATE_VERSION, "schema", version,
			 "workers", (int)ctx.workers));
}

static int h_targets(struct http_request *req, struct http_response *resp)
{
	json_t *list = json_array();

	(void)req;
	for (size_t i = 0; i < target_count(); i++) {
		const struct target *t = target_at(i);

		json_array_append_new(list, json_pack("{s:s,s:s,s:s,s:s,s:s?,s:s,s:b}",
			"name", t->name, "arch", t->arch, "emulator", t->emulator,
			"machine", t->machine, "cpu", t->cpu, "console", t->console,
			"virtio_mmio", t->virtio_mmio));
	}
	return http_json(resp, 200, json_pack("{s:o}", "targets", list));
}

static int page_arg(struct http_request *req, const char *key, long def,
		    long max, long *out)
{
	const char *v = http_query(req, key);

	if (v == NULL) {
		*out = def;
		return 0;
	}
	return parse_long(v, 0, max, out);
}

static int h_releases(struct http_request *req, struct http_response *resp)
{
	long limit, offset;
	char err[256];
	json_t *list;
	size_t i;
	json_t *row;

	const char *branch = http_query(req, "branch");
	const char *since = http_query(req, "since");
	const char *state = http_query(req, "state");
	json_t *kept;

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
	pthread_mutex_lock(&api_lock);
	list = store_rows(api_store, Q_RELEASES, err, sizeof(err), "ssll", branch,
			  since, limit, offset);
	pthread_mutex_unlock(&api_lock);
	if (list == NULL)
		return http_error(resp, 500, "%s", err);
	kept = json_array();
	json_array_foreach(list, i, row) {
		json_t *counts = rows(Q_RELEASE_JOB_COUNTS, "i", jid(row)), *g;
		char gerr[256];

		json_object_set_new(row, "state", json_string(release_state(counts)));
		json_decref(counts);
		pthread_mutex_lock(&api_lock);
		g = engine_gate(api_store, jid(row), gerr, sizeof(gerr));
		pthread_mutex_unlock(&api_lock);
		json_object_set_new(row, "gate", json_string(g != NULL
			? json_string_value(json_object_get(g, "verdict")) : "pending"));
		json_decref(g);
		/* The state is derived from the jobs, so it filters the page. */
		if (state == NULL || strcmp(state, json_string_value(
					json_object_get(row, "state"))) == 0)
			json_array_append(kept, row);
	}
	json_decref(list);
	list = kept;
	return http_json(resp, 200, json_pack("{s:o,s:I,s:I}", "releases", list,
			 "limit", (json_int_t)limit, "offset", (json_int_t)offset));
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

/* The release with its jobs and each job's results; NULL if unknown. */
static json_t *release_json(const char *version, int *status)
{
	json_t *rel = rows(Q_RELEASE, "s", version), *r, *jobs, *counts, *job;
	json_t *rep, *last;
	long pass = 0, fail = 0, skip = 0;
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

		json_array_foreach(results, k, res) {
			const char *st = json_string_value(json_object_get(res, "status"));

			if (st == NULL)
				continue;
			if (strcmp(st, "pass") == 0)
				pass++;
			else if (strcmp(st, "fail") == 0)
				fail++;
			else if (strcmp(st, "skip") == 0)
				skip++;
		}
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

		pthread_mutex_lock(&api_lock);
		g = engine_gate(api_store, json_integer_value(json_object_get(r, "id")),
				err, sizeof(err));
		pthread_mutex_unlock(&api_lock);
		json_object_set_new(r, "gate", g != NULL ? g : json_null());
		regs = rows(Q_RELEASE_REGRESSIONS, "i", (int64_t)json_integer_value(json_object_get(r, "id")));
		split_also(regs);
		json_object_set_new(r, "regressions", regs != NULL ? regs : json_array());
	}
	json_object_set_new(r, "totals", json_pack("{s:i,s:i,s:i}", "pass",
			    (int)pass, "fail", (int)fail, "skip", (int)skip));
	json_object_set_new(r, "jobs", jobs);
	json_decref(counts);
	*status = 200;
	return r;
}

static int h_release(struct http_request *req, struct http_response *resp)
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
	const char *key;
	json_t *v;
	char sub[256];

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
	if (strcmp(out->kind, "deb") != 0 && strcmp(out->kind, "image") != 0) {
		errf(err, errlen, "artifacts[%zu].kind must be 'deb' (a Debian"
		     " linux-image package) or 'image' (a kernel image)", i);
		return -1;
	}
	out->modules_url = json_string_value(json_object_get(a, "modules_url"));
	out->modules_sha256 = json_string_value(json_object_get(a,
							       "modules_sha256"));
	if ((out->modules_url == NULL) != (out->modules_sha256 == NULL) ||
	    (out->modules_url != NULL && strcmp(out->kind, "image") != 0)) {
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

static int h_release_post(struct http_request *req, struct http_response *resp)
{
	json_error_t jerr;
	json_t *body, *arts, *v;
	struct artifact_in in[8];
	struct kversion kv;
	const char *version, *key, *baseline = NULL;
	char err[512], vcopy[48], bcopy[48];
	int64_t release_id;
	size_t n;
	int rc;

	if (req->body == NULL || req->body_len == 0)
		return http_error(resp, 400, "request body is empty: expected a"
				  " JSON object with version and artifacts");
	body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (body == NULL)
		return http_error(resp, 400, "malformed JSON at line %d column %d:"
				  " %s", jerr.line, jerr.column, jerr.text);
	if (!json_is_object(body)) {
		json_decref(body);
		return http_error(resp, 400, "body must be a JSON object");
	}
	json_object_foreach(body, key, v) {
		if (strcmp(key, "version") != 0 && strcmp(key, "artifacts") != 0 &&
		    strcmp(key, "baseline") != 0) {
			http_error(resp, 400, "unknown key '%.40s'", key);
			json_decref(body);
			return 0;
		}
	}
	version = json_string_value(json_object_get(body, "version"));
	if (version == NULL) {
		json_decref(body);
		return http_error(resp, 400, "version is missing or not a string");
	}
	if (kversion_parse(version, &kv, err, sizeof(err)) < 0) {
		json_decref(body);
		return http_error(resp, 400, "%s", err);
	}
	/* kversion_parse capped the length; keep a copy that outlives body. */
	snprintf(vcopy, sizeof(vcopy), "%s", version);
	version = vcopy;
	baseline = json_string_value(json_object_get(body, "baseline"));
	if (json_object_get(body, "baseline") != NULL) {
		struct kversion bkv;

		if (baseline == NULL ||
		    kversion_parse(baseline, &bkv, err, sizeof(err)) < 0 ||
		    strcmp(bkv.branch, kv.branch) != 0) {
			json_decref(body);
			return http_error(resp, 400, "baseline must be a version of"
					  " the same branch (%s)", kv.branch);
		}
		snprintf(bcopy, sizeof(bcopy), "%s", baseline);
		baseline = bcopy;
	}
	arts = json_object_get(body, "artifacts");
	n = json_array_size(arts);
	if (!json_is_array(arts) || n == 0 || n > target_count()) {
		json_decref(body);
		return http_error(resp, 400, "artifacts must be an array of 1..%zu"
				  " objects", target_count());
	}
	for (size_t i = 0; i < n; i++) {
		if (artifact_check(json_array_get(arts, i), i, &in[i], err,
				   sizeof(err)) < 0) {
			json_decref(body);
			return http_error(resp, 400, "%s", err);
		}
		for (size_t k = 0; k < i; k++) {
			if (strcmp(in[k].target, in[i].target) == 0) {
				/* in[] points into body: answer before freeing. */
				http_error(resp, 400, "target %s given twice",
					   in[i].target);
				json_decref(body);
				return 0;
			}
		}
	}
	pthread_mutex_lock(&api_lock);
	rc = store_release_create(api_store, version, &kv, baseline, in, n,
				  &release_id,
				  err, sizeof(err));
	pthread_mutex_unlock(&api_lock);
	if (rc == -2) {
		json_decref(body);
		return http_error(resp, 409, "release %s already exists", version);
	}
	if (rc < 0) {
		json_decref(body);
		log_err("api: create release %s: %s", version, err);
		return http_error(resp, 500, "cannot store the release");
	}
	log_info("release created version=%s jobs=%zu request_id=%s", version, n,
		 req->request_id);
	sched_kick();
	{
		int status;
		json_t *r = release_json(version, &status);

		json_decref(body);
		return r != NULL ? http_json(resp, 201, r)
				 : http_error(resp, 500, "database error");
	}
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
	return r;
}

/* The job row for {id} (its id in *id), or NULL with the error response
 * set. */
static json_t *job_or_error(struct http_request *req,
			    struct http_response *resp, int64_t *id)
{
	json_t *job, *j;

	if (parse_id(req->params[0], id) < 0) {
		http_error(resp, 400, "job id must be a positive integer");
		return NULL;
	}
	job = rows(Q_JOB, "i", *id);
	if (job == NULL) {
		http_error(resp, 500, "database error");
		return NULL;
	}
	if (json_array_size(job) == 0) {
		json_decref(job);
		http_error(resp, 404, "no job %lld", (long long)*id);
		return NULL;
	}
	j = json_incref(json_array_get(job, 0));
	job_booleans(j);
	json_decref(job);
	return j;
}

static int h_release_cancel(struct http_request *req, struct http_response *resp)
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

static int h_job(struct http_request *req, struct http_response *resp)
{
	int64_t id;
	json_t *j = job_or_error(req, resp, &id);

	if (j == NULL)
		return 0;
	json_object_set_new(j, "results", rows(Q_JOB_RESULTS, "i", (int64_t)id));
	json_object_set_new(j, "events", rows(Q_JOB_EVENTS, "i", (int64_t)id));
	return http_json(resp, 200, j);
}

/* Appends "==== title ====" and the file's tail (at most cap bytes) to
 * *buf; a missing file adds nothing. */
static int append_file(char **buf, size_t *len, const char *title,
		       const char *path, size_t cap)
{
	char err[256];
	size_t flen = 0;
	char *text = file_read(path, 64u << 20, &flen, err, sizeof(err));
	const char *start;
	char *nb;
	size_t hlen, take;
	char head[256];

	if (text == NULL)
		return 0;
	start = text;
	take = flen;
	if (take > cap) {
		start = text + (flen - cap);
		take = cap;
	}
	hlen = (size_t)snprintf(head, sizeof(head), "==== %s%s ====\n", title,
				take < flen ? " (tail)" : "");
	nb = realloc(*buf, *len + hlen + take + 2);
	if (nb == NULL) {
		free(text);
		return -1;
	}
	*buf = nb;
	memcpy(*buf + *len, head, hlen);
	memcpy(*buf + *len + hlen, start, take);
	*len += hlen + take;
	if (take > 0 && start[take - 1] != '\n')
		(*buf)[(*len)++] = '\n';
	(*buf)[*len] = '\0';
	free(text);
	return 0;
}

static int h_job_log(struct http_request *req, struct http_response *resp)
{
	int64_t id;
	json_t *job;
	long attempt;
	char dir[PATH_MAX], path[PATH_MAX + 32];
	char *buf = NULL;
	size_t len = 0;
	static const char *const parts[][2] = {
		{ "rcgate", RCGATE_JOB_LOG },
		{ "console", RCGATE_CONSOLE_LOG },
		{ "results (KTAP)", RCGATE_RESULTS_KTAP },
		/* The power-cut test's two boots (sched.c phase_paths). */
		{ RCGATE_PHASE_CRASH_WRITE " console",
		  RCGATE_PHASE_CONSOLE_LOG(RCGATE_PHASE_CRASH_WRITE) },
		{ RCGATE_PHASE_CRASH_WRITE " output",
		  RCGATE_PHASE_KTAP(RCGATE_PHASE_CRASH_WRITE) },
		{ RCGATE_PHASE_CRASH_VERIFY " console",
		  RCGATE_PHASE_CONSOLE_LOG(RCGATE_PHASE_CRASH_VERIFY) },
		{ RCGATE_PHASE_CRASH_VERIFY " results (KTAP)",
		  RCGATE_PHASE_KTAP(RCGATE_PHASE_CRASH_VERIFY) },
	};

	job = job_or_error(req, resp, &id);
	if (job == NULL)
		return 0;
	attempt = (long)json_integer_value(json_object_get(job, "attempt"));
	json_decref(job);
	snprintf(dir, sizeof(dir), "%s/jobs/%lld/%ld", ctx.cfg->state_dir,
		 (long long)id, attempt);
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, parts[i][1]);
		if (append_file(&buf, &len, parts[i][0], path,
				MAX_LOG_BYTES / 2) < 0) {
			free(buf);
			return http_error(resp, 500, "out of memory");
		}
	}
	if (buf == NULL) {
		buf = strdup("");
		if (buf == NULL)
			return http_error(resp, 500, "out of memory");
	}
	resp->ranges = 1;	/* follow a running job: Range: bytes=N- */
	return http_text(resp, 200, "text/plain; charset=utf-8", buf, len);
}


static int h_release_gate(struct http_request *req, struct http_response *resp)
{
	json_t *rel = release_or_error(req, resp), *g;
	char err[256];

	if (rel == NULL)
		return 0;
	pthread_mutex_lock(&api_lock);
	g = engine_gate(api_store, jid(rel), err, sizeof(err));
	pthread_mutex_unlock(&api_lock);
	if (g == NULL) {
		json_decref(rel);
		return http_error(resp, 500, "%s", err);
	}
	json_object_set(g, "version", json_object_get(rel, "version"));
	json_object_set(g, "deadline", json_object_get(rel, "deadline"));
	json_decref(rel);
	return http_json(resp, 200, g);
}

static int h_release_regressions(struct http_request *req,
				 struct http_response *resp)
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

static int h_report_txt(struct http_request *req, struct http_response *resp)
{
	return report_part(req, resp, "text", "text/plain; charset=utf-8");
}

static int h_report_eml(struct http_request *req, struct http_response *resp)
{
	return report_part(req, resp, "email", "message/rfc822");
}

static int h_regressions(struct http_request *req, struct http_response *resp)
{
	long limit, offset;
	const char *state = http_query(req, "state");
	const char *branch = http_query(req, "branch");
	const char *test = http_query(req, "test");
	char err[256];
	json_t *list;

	if (test != NULL && strlen(test) > 128)
		return http_error(resp, 400, "test is a name like ext4.write_seq_512");
	if (page_arg(req, "limit", 50, MAX_PAGE, &limit) < 0 ||
	    page_arg(req, "offset", 0, LONG_MAX, &offset) < 0)
		return http_error(resp, 400, "limit must be 0..%d and offset >= 0",
				  MAX_PAGE);
	if (state != NULL && strcmp(state, "open") != 0 &&
	    strcmp(state, "confirmed") != 0 && strcmp(state, "fixed") != 0 &&
	    strcmp(state, "invalid") != 0)
		return http_error(resp, 400, "state must be open, confirmed, fixed"
				  " or invalid");
	if (branch != NULL && strlen(branch) > 16)
		return http_error(resp, 400, "branch is like 6.1");
	pthread_mutex_lock(&api_lock);
	list = store_rows(api_store, Q_REGRESSIONS, err, sizeof(err), "sslls",
			  state, branch, limit, offset, test);
	pthread_mutex_unlock(&api_lock);
	if (list == NULL)
		return http_error(resp, 500, "%s", err);
	return http_json(resp, 200, json_pack("{s:o,s:I,s:I}", "regressions", list,
			 "limit", (json_int_t)limit, "offset", (json_int_t)offset));
}

/* One regression with every affected rc, its branches and its history. */
static json_t *regression_json(int64_t id)
{
	json_t *g = rows(Q_REGRESSION, "i", (int64_t)id), *r, *occ;
	size_t i;
	json_t *row;

	if (g == NULL || json_array_size(g) == 0) {
		json_decref(g);
		return NULL;
	}
	r = json_incref(json_array_get(g, 0));
	json_decref(g);
	occ = rows(Q_REGRESSION_OCCURRENCES, "i", (int64_t)id);
	json_array_foreach(occ, i, row)
		json_object_set_new(row, "flaky", json_boolean(
			json_integer_value(json_object_get(row, "flaky"))));
	json_object_set_new(r, "occurrences", occ);
	json_object_set_new(r, "branches", rows(Q_REGRESSION_BRANCHES, "i", (int64_t)id));
	json_object_set_new(r, "events", rows(Q_REGRESSION_EVENTS, "i", (int64_t)id));
	return r;
}

static int h_regression(struct http_request *req, struct http_response *resp)
{
	int64_t id;
	json_t *r;

	if (parse_id(req->params[0], &id) < 0)
		return http_error(resp, 400, "regression id must be a positive integer");
	r = regression_json(id);
	if (r == NULL)
		return http_error(resp, 404, "no regression %lld", (long long)id);
	return http_json(resp, 200, r);
}

static int h_regression_triage(struct http_request *req,
			       struct http_response *resp)
{
	json_error_t jerr;
	json_t *body;
	const char *state, *reason;
	char err[256];
	int64_t id;
	int rc;

	if (parse_id(req->params[0], &id) < 0)
		return http_error(resp, 400, "regression id must be a positive integer");
	if (req->body == NULL)
		return http_error(resp, 400, "expected {\"state\": ..., \"reason\": ...}");
	body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (body == NULL)
		return http_error(resp, 400, "malformed JSON at line %d column %d: %s",
				  jerr.line, jerr.column, jerr.text);
	state = json_string_value(json_object_get(body, "state"));
	reason = json_string_value(json_object_get(body, "reason"));
	if (!json_is_object(body) || json_object_size(body) != 2 ||
	    state == NULL || reason == NULL) {
		json_decref(body);
		return http_error(resp, 400, "expected exactly {\"state\": ...,"
				  " \"reason\": ...}");
	}
	if (strcmp(state, "invalid") != 0 && strcmp(state, "open") != 0 &&
	    strcmp(state, "confirmed") != 0) {
		json_decref(body);
		return http_error(resp, 400, "state must be invalid, open or"
				  " confirmed (fixed is decided by test results)");
	}
	if (reason[0] == '\0' || strlen(reason) > 1000) {
		json_decref(body);
		return http_error(resp, 400, "reason must be 1..1000 characters");
	}
	pthread_mutex_lock(&api_lock);
	rc = store_regression_triage(api_store, id, state, reason, err, sizeof(err));
	pthread_mutex_unlock(&api_lock);
	json_decref(body);
	if (rc < 0)
		return http_error(resp, 500, "%s", err);
	if (rc == 0)
		return http_error(resp, 404, "no regression %lld", (long long)id);
	log_info("regression=%lld triaged request_id=%s", (long long)id,
		 req->request_id);
	return http_json(resp, 200, regression_json(id));
}

static int h_announcement(struct http_request *req, struct http_response *resp)
{
	char err[512], version[48] = "";
	int created = 0, rc;

	if (req->body == NULL || req->body_len == 0)
		return http_error(resp, 400, "expected a raw RFC 822 message");
	pthread_mutex_lock(&api_lock);
	rc = trigger_announcement(api_store, ctx.cfg->announce_senders,
				  req->body, req->body_len, version,
				  sizeof(version), &created, err, sizeof(err));
	pthread_mutex_unlock(&api_lock);
	if (rc == -2) {
		log_err("announcement not stored: %s request_id=%s", err,
			req->request_id);
		resp->retry_after = 30;
		return http_error(resp, 503, "cannot store the announcement now"
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

static int h_job_retry(struct http_request *req, struct http_response *resp)
{
	int64_t id;
	char err[256];
	int rc;

	if (parse_id(req->params[0], &id) < 0)
		return http_error(resp, 400, "job id must be a positive integer");
	pthread_mutex_lock(&api_lock);
	rc = store_job_retry(api_store, id, err, sizeof(err));
	pthread_mutex_unlock(&api_lock);
	if (rc < 0)
		return http_error(resp, 500, "%s", err);
	if (rc == 0)
		return http_error(resp, 409, "job %lld is unknown or not finished",
				  (long long)id);
	sched_kick();
	return h_job(req, resp);
}

static int h_token_create(struct http_request *req, struct http_response *resp)
{
	json_error_t jerr;
	json_t *body = req->body != NULL
		? json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr)
		: NULL;
	const char *name = json_string_value(json_object_get(body, "name"));
	const char *scope = json_string_value(json_object_get(body, "scope"));
	char token[48], hash[65], err[256];
	size_t known = (name != NULL) + (json_object_get(body, "scope") != NULL);
	int rc;

	if (scope == NULL && json_object_get(body, "scope") == NULL)
		scope = "write";
	if (!json_is_object(body) || json_object_size(body) != known ||
	    scope == NULL || name == NULL || strlen(name) == 0 || strlen(name) > 64 ||
	    (strcmp(scope, "read") != 0 && strcmp(scope, "write") != 0 &&
	     strcmp(scope, "admin") != 0)) {
		json_decref(body);
		return http_error(resp, 400, "expected {\"name\": 1..64 chars,"
				  " \"scope\": read|write|admin}");
	}
	if (token_generate(token, hash) < 0) {
		json_decref(body);
		return http_error(resp, 500, "no randomness");
	}
	pthread_mutex_lock(&api_lock);
	rc = store_token_add(api_store, name, hash, scope, err, sizeof(err));
	pthread_mutex_unlock(&api_lock);
	if (rc < 0) {
		json_decref(body);
		return http_error(resp, 500, "%s", err);
	}
	log_info("token created name=%s scope=%s request_id=%s", name, scope,
		 req->request_id);
	rc = http_json(resp, 201, json_pack("{s:s,s:s,s:s}", "name", name,
		       "scope", scope, "token", token));
	json_decref(body);
	return rc;
}

/* The dashboard: plain files from web_dir, names limited to one safe
 * path segment so nothing outside it can be reached. */
static int serve_file(struct http_response *resp, const char *name)
{
	static const struct { const char *ext, *type; } types[] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".js", "text/javascript; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".svg", "image/svg+xml" },
		{ ".png", "image/png" },
	};
	const char *type = NULL, *dot = strrchr(name, '.');
	char path[PATH_MAX], err[256];
	size_t len = 0;
	char *body;

	for (const char *p = name; *p != '\0'; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '_' || *p == '.'))
			return http_error(resp, 404, "no such file");
	}
	if (name[0] == '.' || dot == NULL)
		return http_error(resp, 404, "no such file");
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (strcmp(dot, types[i].ext) == 0)
			type = types[i].type;
	}
	if (type == NULL)
		return http_error(resp, 404, "no such file");
	snprintf(path, sizeof(path), "%s/%s", ctx.cfg->web_dir, name);
	body = file_read(path, 4u << 20, &len, err, sizeof(err));
	if (body == NULL)
		return http_error(resp, 404, "no such file");
	return http_text(resp, 200, type, body, len);
}

static int h_index(struct http_request *req, struct http_response *resp)
{
	(void)req;
	return serve_file(resp, "index.html");
}

static int h_static(struct http_request *req, struct http_response *resp)
{
	return serve_file(resp, req->params[0]);
}

/* One gauge sample per state, zero included: a state with no rows must
 * still have a series, or rate() and alerts on it see nothing at all. */
static void metric_rows(GString *out, const char *name, const char *help,
			enum store_query q, const char *const *states)
{
	json_t *list = rows(q, "");
	size_t i;
	json_t *row;

	g_string_append_printf(out, "# HELP %s %s\n# TYPE %s gauge\n", name,
			       help, name);
	for (const char *const *s = states; *s != NULL; s++) {
		long long n = 0;

		json_array_foreach(list, i, row) {
			if (strcmp(json_string_value(json_object_get(row, "state")),
				   *s) == 0)
				n = json_integer_value(json_object_get(row, "n"));
		}
		g_string_append_printf(out, "%s{state=\"%s\"} %lld\n", name, *s, n);
	}
	json_decref(list);
}

static int h_metrics(struct http_request *req, struct http_response *resp)
{
	static const char *const classes[] = { "other", "1xx", "2xx", "3xx",
					       "4xx", "5xx" };
	GString *out = g_string_new(NULL);
	struct http_stats hs;
	json_t *queued;
	unsigned long total = 0;

	static const char *const job_states[] = { "queued", "fetching",
		"booting", "running", "done", "infra_error", "cancelled", NULL };
	static const char *const regression_states[] = { "open", "confirmed",
		"fixed", "invalid", NULL };
	static const char *const outbox_states[] = { "pending", "sent",
		"failed", NULL };

	(void)req;
	g_string_append(out, "# HELP rcgate_build_info The running rcgated's"
		" version.\n# TYPE rcgate_build_info gauge\n"
		"rcgate_build_info{version=\"" RCGATE_VERSION "\"} 1\n");
	metric_rows(out, "rcgate_jobs", "Jobs by state.", Q_METRICS_JOBS,
		    job_states);
	metric_rows(out, "rcgate_regressions", "Regressions by state.",
		    Q_METRICS_REGRESSIONS, regression_states);
	metric_rows(out, "rcgate_outbox", "Report deliveries by state.",
		    Q_METRICS_OUTBOX, outbox_states);
	queued = rows(Q_METRICS_JOBS, "");
	{
		size_t i;
		json_t *row;
		long long q = 0;

		json_array_foreach(queued, i, row)
			if (strcmp(json_string_value(json_object_get(row, "state")),
				   "queued") == 0)
				q = json_integer_value(json_object_get(row, "n"));
		g_string_append_printf(out, "# HELP rcgate_queue_depth Jobs waiting"
			" for a worker.\n# TYPE rcgate_queue_depth gauge\n"
			"rcgate_queue_depth %lld\n", q);
	}
	json_decref(queued);
	g_string_append_printf(out, "# HELP rcgate_guests_running Guests running"
		" now.\n# TYPE rcgate_guests_running gauge\n"
		"rcgate_guests_running %u\n", sched_running());
	http_stats_get(&hs);
	g_string_append(out, "# HELP rcgate_http_requests_total HTTP requests"
		" answered, by status class.\n# TYPE rcgate_http_requests_total"
		" counter\n");
	for (int i = 1; i < 6; i++) {
		g_string_append_printf(out, "rcgate_http_requests_total{code=\"%s\"}"
				       " %lu\n", classes[i], hs.requests[i]);
		total += hs.requests[i];
	}
	g_string_append_printf(out, "# HELP rcgate_http_request_seconds Time"
		" spent answering requests.\n# TYPE rcgate_http_request_seconds"
		" summary\nrcgate_http_request_seconds_sum %.6f\n"
		"rcgate_http_request_seconds_count %lu\n", hs.seconds, total);
	g_string_append_printf(out, "# HELP rcgate_http_deadline_closes_total"
		" Connections cut because their headers or body did not arrive in"
		" time.\n# TYPE rcgate_http_deadline_closes_total counter\n"
		"rcgate_http_deadline_closes_total %lu\n", hs.deadline_closes);
	resp->no_etag = 1;
	total = out->len;
	return http_text(resp, 200, "text/plain; version=0.0.4; charset=utf-8",
			 g_string_free(out, FALSE), total);
}

static void atom_text(GString *out, const char *tag, const char *text)
{
	char *esc = g_markup_escape_text(text != NULL ? text : "", -1);

	g_string_append_printf(out, "<%s>%s</%s>\n", tag, esc, tag);
	g_free(esc);
}

static int h_feed(struct http_request *req, struct http_response *resp)
{
	json_t *list = rows(Q_FEED, "l", (long)100);
	GString *out;
	const char *updated = "1970-01-01T00:00:00Z";
	size_t i, len;
	json_t *row;
	char base[600], *esc, *tag;

	(void)req;
	if (list == NULL)
		return http_error(resp, 500, "database error");
	if (json_array_size(list) > 0)
		updated = json_string_value(json_object_get(json_array_get(list, 0), "at"));
	snprintf(base, sizeof(base), "%s", ctx.base_url != NULL ? ctx.base_url : "");
	esc = g_markup_escape_text(base, -1);
	tag = g_markup_escape_text(ctx.cfg->feed_tag, -1);
	out = g_string_new("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
			   "<feed xmlns=\"http://www.w3.org/2005/Atom\">\n");
	atom_text(out, "title", "rcgate: regressions and release gates");
	/* Ids are tag: URIs (RFC 4151) from the configured authority, never
	 * the daemon's address: they stay the same across restarts, ports
	 * and hosts (RFC 4287 4.2.6); links may change. */
	g_string_append_printf(out, "<id>tag:%s:feed</id>\n<link rel=\"self\""
			       " href=\"%s/feed.atom\"/>\n", tag, esc);
	atom_text(out, "updated", updated);
	g_string_append(out, "<author><name>rcgate</name></author>\n");
	json_array_foreach(list, i, row) {
		char *link = g_markup_escape_text(json_string_value(
			json_object_get(row, "link")), -1);

		g_string_append(out, "<entry>\n");
		g_string_append_printf(out, "<id>tag:%s:%s</id>\n", tag,
			json_string_value(json_object_get(row, "id")));
		atom_text(out, "title", json_string_value(json_object_get(row, "title")));
		atom_text(out, "updated", json_string_value(json_object_get(row, "at")));
		g_string_append_printf(out, "<link href=\"%s%s\"/>\n", esc, link);
		atom_text(out, "summary", json_string_value(json_object_get(row, "summary")));
		g_string_append(out, "</entry>\n");
		g_free(link);
	}
	g_string_append(out, "</feed>\n");
	g_free(esc);
	g_free(tag);
	json_decref(list);
	len = out->len;
	return http_text(resp, 200, "application/atom+xml; charset=utf-8",
			 g_string_free(out, FALSE), len);
}

/* The release as a KCIDB v5.3 submission (kcidb.c): the rows become the
 * typed input kcidb_submission takes. */
static int h_kcidb(struct http_request *req, struct http_response *resp)
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
		.public_url = ctx.cfg->public_url,
	};
	json_array_foreach(regs, i, reg) {
		kg[i] = (struct kcidb_regression){
			jid(reg), json_string_value(json_object_get(reg, "test")),
			json_string_value(json_object_get(reg, "target")),
			(int)json_integer_value(json_object_get(reg, "flaky")) };
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
	out = kcidb_submission(ctx.cfg->farm, &kr, kj, nj, kg, ng);
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

static const struct http_route routes[] = {
	{ "GET", "/", h_index, SCOPE_READ },
	{ "GET", "/web/{file}", h_static, SCOPE_READ },
	{ "GET", "/healthz", h_healthz, SCOPE_READ },
	{ "GET", "/metrics", h_metrics, SCOPE_READ },
	{ "GET", "/feed.atom", h_feed, SCOPE_READ },
	{ "GET", "/api/v1/targets", h_targets, SCOPE_READ },
	{ "GET", "/api/v1/releases", h_releases, SCOPE_READ },
	{ "POST", "/api/v1/releases", h_release_post, SCOPE_WRITE },
	{ "GET", "/api/v1/releases/{version}", h_release, SCOPE_READ },
	{ "POST", "/api/v1/releases/{version}/cancel", h_release_cancel, SCOPE_WRITE },
	{ "GET", "/api/v1/releases/{version}/gate", h_release_gate, SCOPE_READ },
	{ "GET", "/api/v1/releases/{version}/regressions", h_release_regressions, SCOPE_READ },
	{ "GET", "/api/v1/releases/{version}/report.txt", h_report_txt, SCOPE_READ },
	{ "GET", "/api/v1/releases/{version}/report.eml", h_report_eml, SCOPE_READ },
	{ "GET", "/api/v1/releases/{version}/kcidb.json", h_kcidb, SCOPE_READ },
	{ "GET", "/api/v1/regressions", h_regressions, SCOPE_READ },
	{ "GET", "/api/v1/regressions/{id}", h_regression, SCOPE_READ },
	{ "POST", "/api/v1/regressions/{id}", h_regression_triage, SCOPE_WRITE },
	{ "POST", "/api/v1/announcements", h_announcement, SCOPE_WRITE },
	{ "GET", "/api/v1/jobs/{id}", h_job, SCOPE_READ },
	{ "GET", "/api/v1/jobs/{id}/log", h_job_log, SCOPE_READ },
	{ "POST", "/api/v1/jobs/{id}/retry", h_job_retry, SCOPE_WRITE },
	{ "POST", "/api/v1/tokens", h_token_create, SCOPE_ADMIN },
};

const struct http_route *api_routes(size_t *n)
{
	*n = sizeof(routes) / sizeof(routes[0]);
	return routes;
}
