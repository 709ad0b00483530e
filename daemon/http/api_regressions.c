/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * api_regressions.c - the regression resource: the filtered list, one
 * regression with every affected rc, its branches and its history, and
 * triage (POST: invalid, open or confirmed, with a reason).
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "store/store.h"
#include "http/http.h"
#include "api_internal.h"
#include "report/report.h"

int h_regressions(struct http_request *req, struct http_response *resp)
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
	{
		/* Bisections, each with the regressions whose bisection named
		 * the same upstream commit: one cause across branches. */
		json_t *bis = rows(Q_REGRESSION_BISECTIONS, "i", (int64_t)id), *b;
		size_t k;

		json_array_foreach(bis, k, b) {
			static const char *const lists[] = { "same_cause", "jobs" };

			for (size_t l = 0; l < 2; l++) {
				const char *p = json_string_value(json_object_get(b, lists[l]));
				json_t *ids = json_array();

				while (p != NULL && *p != '\0') {
					json_array_append_new(ids, json_integer(strtoll(p, NULL, 10)));
					p = strchr(p, ',');
					p = p != NULL ? p + 1 : NULL;
				}
				json_object_set_new(b, lists[l], ids);
			}
			/* Stored as JSON text (prereq.c): an array, or null. */
			const char *pl = json_string_value(json_object_get(b, "prerequisites"));
			json_t *list = pl != NULL ? json_loads(pl, 0, NULL) : NULL;

			json_object_set_new(b, "prerequisites",
					    json_is_array(list) ? list : json_null());
			if (list != NULL && !json_is_array(list))
				json_decref(list);
		}
		json_object_set_new(r, "bisections", bis);
	}
	return r;
}

int h_regression(struct http_request *req, struct http_response *resp)
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

int h_regression_triage(struct http_request *req, struct http_response *resp)
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
	/* The threads that were told of it hear of the triage too. */
	if (rc > 0)
		reply_triage(api_store, api_ctx.cfg, id, state, reason);
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
