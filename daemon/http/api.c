/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * api.c - the REST API's core: the module's state (its store connection,
 * the lock around it, main.c's context), API tokens (api_authorize checks
 * them, POST /api/v1/tokens makes them), the helpers the resource files
 * share (api_internal.h) and the route table: the one index of every
 * endpoint (/api/v1, /, /web, /healthz, /metrics, /feed.atom), each row
 * naming its handler in api_releases.c, api_regressions.c, api_jobs.c or
 * api_site.c. Handlers validate input completely before touching the
 * store, and answer with JSON bodies described in schemas/.
 */
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "store/store.h"
#include "http/http.h"
#include "api_internal.h"

struct api_context api_ctx;
struct store *api_store;
pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;

int api_init(const struct api_context *c, char *err, size_t errlen)
{
	api_ctx = *c;
	api_store = store_open(c->db_path, err, errlen);
	return api_store != NULL ? 0 : -1;
}

void api_free(void)
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

/* Made here, beside api_authorize that checks them: a token is access to
 * the whole API, not part of one resource. */
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

/* ---- the helpers the resource files share (api_internal.h) ---- */

json_t *rows(enum store_query q, const char *types, ...)
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

void job_booleans(json_t *job)
{
	json_object_set_new(job, "custom", json_boolean(
		json_integer_value(json_object_get(job, "custom"))));
}

int parse_id(const char *s, int64_t *id)
{
	long v;

	if (parse_long(s, 1, LONG_MAX, &v) < 0)
		return -1;
	*id = v;
	return 0;
}

int page_arg(struct http_request *req, const char *key, long def, long max,
	     long *out)
{
	const char *v = http_query(req, key);

	if (v == NULL) {
		*out = def;
		return 0;
	}
	return parse_long(v, 0, max, out);
}

/* Every endpoint, each row naming its handler: the index to start from.
 * HTTP_CACHE: the answer comes from the store (and the dashboard's files)
 * alone, so it is kept until the next commit (respcache.c); the job log
 * (files a running guest writes), /metrics (live counters) and /healthz
 * are made at every request. */
static const struct http_route routes[] = {
	{ "GET", "/", h_index, SCOPE_READ, HTTP_CACHE },
	{ "GET", "/web/{file}", h_static, SCOPE_READ, HTTP_CACHE },
	{ "GET", "/healthz", h_healthz, SCOPE_READ, HTTP_NO_CACHE },
	{ "GET", "/metrics", h_metrics, SCOPE_READ, HTTP_NO_CACHE },
	{ "GET", "/feed.atom", h_feed, SCOPE_READ, HTTP_CACHE },
	{ "GET", "/api/v1/targets", h_targets, SCOPE_READ, HTTP_CACHE },
	{ "GET", "/api/v1/hosts", h_hosts, SCOPE_READ, HTTP_NO_CACHE },
	{ "GET", "/api/v1/states", h_states, SCOPE_READ, HTTP_CACHE },
	{ "GET", "/api/v1/tests", h_tests, SCOPE_READ, HTTP_CACHE },
	{ "GET", "/tests", h_tests_page, SCOPE_READ, HTTP_CACHE },
	{ "GET", "/api/v1/releases", h_releases, SCOPE_READ, HTTP_CACHE },
	{ "POST", "/api/v1/releases", h_release_post, SCOPE_WRITE, HTTP_NO_CACHE },
	{ "GET", "/api/v1/releases/{version}", h_release, SCOPE_READ, HTTP_CACHE },
	{ "POST", "/api/v1/releases/{version}/cancel", h_release_cancel, SCOPE_WRITE, HTTP_NO_CACHE },
	{ "GET", "/api/v1/releases/{version}/gate", h_release_gate, SCOPE_READ, HTTP_CACHE },
	{ "GET", "/api/v1/releases/{version}/regressions", h_release_regressions, SCOPE_READ, HTTP_CACHE },
	{ "GET", "/api/v1/releases/{version}/report.txt", h_report_txt, SCOPE_READ, HTTP_CACHE },
	{ "GET", "/api/v1/releases/{version}/report.eml", h_report_eml, SCOPE_READ, HTTP_CACHE },
	{ "GET", "/api/v1/releases/{version}/kcidb.json", h_kcidb, SCOPE_READ, HTTP_CACHE },
	{ "GET", "/api/v1/regressions", h_regressions, SCOPE_READ, HTTP_CACHE },
	{ "GET", "/api/v1/regressions/{id}", h_regression, SCOPE_READ, HTTP_CACHE },
	{ "POST", "/api/v1/regressions/{id}", h_regression_triage, SCOPE_WRITE, HTTP_NO_CACHE },
	{ "POST", "/api/v1/announcements", h_announcement, SCOPE_WRITE, HTTP_NO_CACHE },
	{ "GET", "/api/v1/jobs/{id}", h_job, SCOPE_READ, HTTP_CACHE },
	{ "GET", "/api/v1/jobs/{id}/log", h_job_log, SCOPE_READ, HTTP_NO_CACHE },
	{ "GET", "/api/v1/jobs/{id}/config", h_job_config, SCOPE_READ, HTTP_NO_CACHE },
	{ "POST", "/api/v1/jobs/{id}/retry", h_job_retry, SCOPE_WRITE, HTTP_NO_CACHE },
	{ "POST", "/api/v1/tokens", h_token_create, SCOPE_ADMIN, HTTP_NO_CACHE },
};

const struct http_route *api_routes(size_t *n)
{
	*n = sizeof(routes) / sizeof(routes[0]);
	return routes;
}
