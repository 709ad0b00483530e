/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libFuzzer target for the API's request bodies (daemon/api*.c). The
 * handlers validate their bodies themselves, so this target calls the real
 * handlers from api_routes(), with an in-memory store behind them, for the
 * POST routes that read a body:
 *
 *   POST /api/v1/releases            release with artifacts (JSON)
 *   POST /api/v1/regressions/{id}    triage (JSON)
 *   POST /api/v1/tokens              token creation (JSON)
 *   POST /api/v1/announcements       a raw announcement mail
 *
 * Input: up to four requests separated by NUL bytes, each the request
 * path, a newline, then the body, e.g. "/api/v1/tokens\n{\"name\": \"ci\"}".
 * They run in order against a database that starts empty for every input,
 * so a later request sees what an earlier one stored (a release announced
 * by mail, then given its artifacts). A path that none of the routes below
 * matches is skipped.
 *
 * Beyond "no crash, no leak": the answer is 2xx, 400, 404, 409 or 422,
 * never 500 (the store is healthy, so a 500 means validation let through
 * something the store refuses); every answer is a JSON object, errors in
 * the {"error": {"status", "message"}} shape with the same status; and an
 * accepted body really satisfies what the schemas promise (checked here
 * with the helpers, independently of the handler's order of checks).
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "base/base.h"
#include "artifact/artifact.h"
#include "http/http.h"

static const char *const body_patterns[] = {
	"/api/v1/releases",
	"/api/v1/regressions/{id}",
	"/api/v1/tokens",
	"/api/v1/announcements",
};

#define MAX_REQUESTS 4

static struct config cfg;

/* A fresh in-memory database, so each input starts from the same state. */
static void store_reset(void)
{
	static const struct api_context actx = {
		.cfg = &cfg, .db_path = ":memory:", .workers = 1,
		.base_url = "http://127.0.0.1:8080",
	};
	static int opened;
	char err[256];

	if (!opened) {
		config_defaults(&cfg);
		log_init("-", LOG_ERR, err, sizeof(err));
		check(fetch_init("/tmp", "", err, sizeof(err)) == 0);
		opened = 1;
	} else {
		api_free();
	}
	check(api_init(&actx, err, sizeof(err)) == 0);
}

/* The POST route of pattern, from the daemon's own table. */
static const struct http_route *post_route(const char *pattern)
{
	size_t n;
	const struct http_route *r = api_routes(&n);

	for (size_t i = 0; i < n; i++)
		if (strcmp(r[i].method, "POST") == 0 &&
		    strcmp(r[i].pattern, pattern) == 0)
			return &r[i];
	return NULL;
}

static void check_error_shape(const json_t *doc, int status)
{
	json_t *e = json_object_get(doc, "error");
	const char *msg = json_string_value(json_object_get(e, "message"));

	check(json_is_object(e));
	check(json_integer_value(json_object_get(e, "status")) == status);
	check(msg != NULL && msg[0] != '\0');
}

/* A 201 for POST /releases: the request was what the schema allows. */
static void check_release_accepted(const json_t *req, const json_t *doc)
{
	const char *version = json_string_value(json_object_get(req, "version"));
	json_t *arts = json_object_get(req, "artifacts"), *a;
	struct kversion kv;
	char err[256];
	size_t i;

	check(version != NULL && kversion_parse(version, &kv, err,
						sizeof(err)) == 0);
	check(json_is_array(arts) && json_array_size(arts) >= 1 &&
	      json_array_size(arts) <= target_count());
	json_array_foreach(arts, i, a) {
		const char *target = json_string_value(json_object_get(a, "target"));
		const char *url = json_string_value(json_object_get(a, "url"));
		const char *sha = json_string_value(json_object_get(a, "sha256"));

		check(target != NULL && target_find(target) != NULL);
		check(url != NULL && fetch_url_check(url, err, sizeof(err)) == 0);
		check(sha != NULL && is_sha256_hex(sha));
	}
	check(strcmp(json_string_value(json_object_get(doc, "version")),
		     version) == 0);
	check(json_array_size(json_object_get(doc, "jobs")) ==
	      json_array_size(arts));
}

/* A 201 for POST /tokens: a token of the documented form, echoed fields. */
static void check_token_accepted(const json_t *req, const json_t *doc)
{
	const char *name = json_string_value(json_object_get(req, "name"));
	const char *scope = json_string_value(json_object_get(doc, "scope"));
	const char *token = json_string_value(json_object_get(doc, "token"));

	check(name != NULL && strlen(name) >= 1 && strlen(name) <= 64);
	check(strcmp(json_string_value(json_object_get(doc, "name")), name) == 0);
	check(scope != NULL && (strcmp(scope, "read") == 0 ||
				strcmp(scope, "write") == 0 ||
				strcmp(scope, "admin") == 0));
	check(token != NULL && strlen(token) == 44 &&
	      strncmp(token, "rcg_", 4) == 0);
}

static void check_response(const char *pattern, const char *body,
			   size_t body_len, const struct http_response *resp)
{
	json_error_t jerr;
	json_t *doc, *req;
	int s = resp->status;

	check(s == 200 || s == 201 || s == 400 || s == 404 || s == 409 ||
	      s == 422);
	check(resp->body != NULL && resp->len == strlen(resp->body));
	doc = json_loadb(resp->body, resp->len, 0, &jerr);
	check(json_is_object(doc));
	if (s >= 400) {
		check_error_shape(doc, s);
	} else if (s == 201 && strcmp(pattern, "/api/v1/announcements") != 0) {
		req = json_loadb(body, body_len, JSON_REJECT_DUPLICATES, &jerr);
		check(json_is_object(req));
		if (strcmp(pattern, "/api/v1/releases") == 0)
			check_release_accepted(req, doc);
		else if (strcmp(pattern, "/api/v1/tokens") == 0)
			check_token_accepted(req, doc);
		json_decref(req);
	} else {
		/* An announcement recorded: the release it made or updated. */
		check(strcmp(pattern, "/api/v1/announcements") == 0);
		check(json_string_value(json_object_get(doc, "version")) != NULL);
	}
	json_decref(doc);
}

/* One request "path\nbody" of data[0..size); 1 if it changed the database. */
static int one_request(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	struct http_request req;
	struct http_response resp;
	const struct http_route *rt = NULL;
	const char *params[4] = { NULL };
	char path[256], *body = NULL;
	size_t plen, blen;
	int changed;

	if (nl == NULL || (plen = (size_t)(nl - data)) >= sizeof(path))
		return 0;
	for (size_t i = 0; i < sizeof(body_patterns) / sizeof(body_patterns[0]);
	     i++) {
		memcpy(path, data, plen);
		path[plen] = '\0';
		memset(params, 0, sizeof(params));
		if (http_route_match(body_patterns[i], path, params, 4)) {
			rt = post_route(body_patterns[i]);
			break;
		}
	}
	if (rt == NULL)
		return 0;

	/* As http.c collects it: NUL-terminated, NULL when nothing came. */
	blen = size - plen - 1;
	if (blen > 0) {
		body = malloc(blen + 1);
		if (body == NULL)
			return 0;
		memcpy(body, nl + 1, blen);
		body[blen] = '\0';
	}
	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	req.method = "POST";
	req.path = path;
	memcpy(req.params, params, sizeof(params));
	req.body = body;
	req.body_len = blen;
	req.request_id = "fuzz";
	rt->handler(&req, &resp);
	check_response(rt->pattern, body, blen, &resp);
	/* Tokens change nothing another request here reads. */
	changed = resp.status < 400 && strcmp(rt->pattern, "/api/v1/tokens") != 0;
	free(resp.body);
	free(body);
	return changed;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready, dirty;
	size_t n = 0;

	/* Every input starts from an empty database, so it replays alike. */
	if (!ready || dirty) {
		store_reset();
		ready = 1;
		dirty = 0;
	}
	/* Up to MAX_REQUESTS requests, separated by NUL bytes, in order:
	 * an announcement, then the release's artifacts, for example. */
	while (size > 0 && n++ < MAX_REQUESTS) {
		const uint8_t *nul = memchr(data, '\0', size);
		size_t len = nul != NULL ? (size_t)(nul - data) : size;

		dirty |= one_request(data, len);
		if (nul == NULL)
			break;
		data += len + 1;
		size -= len + 1;
	}
	return 0;
}
