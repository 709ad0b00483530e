/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * api_internal.h - what the files of the REST API share, and nothing else
 * includes: api.c's module state and helpers, and every handler, so that
 * api.c's route table can name them. A section per file. The rest of the
 * daemon sees the API only through http.h's api.c section.
 */
#ifndef RCGATE_API_INTERNAL_H
#define RCGATE_API_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "base/base.h"
#include "store/store.h"
#include "http/http.h"

/* ---- api.c: the module's state, shared helpers and the route table ---- */
/* Set by api_init. Handlers run on a thread per connection and share this
 * one store connection (and its prepared statements): every use of
 * api_store holds api_lock. */
extern struct api_context api_ctx;
extern struct store *api_store;
extern pthread_mutex_t api_lock;

#define MAX_PAGE 200	/* the largest ?limit= of a list */

/* store_rows under api_lock, types as for store_rows. A database error is
 * logged and gives NULL; else the caller json_decref's the array. */
struct json_t *rows(enum store_query q, const char *types, ...);
/* SQLite has no booleans: the job's 0/1 column custom becomes JSON
 * true/false, in place. */
void job_booleans(struct json_t *job);
/* A path's {id}: a positive integer, nothing else. Returns 0 or -1. */
int parse_id(const char *s, int64_t *id);
/* ?key= as 0..max, def when absent. Returns 0, or -1 if it is not such a
 * number. */
int page_arg(struct http_request *req, const char *key, long def, long max,
	     long *out);

/* ---- api_releases.c: releases, their reports and announcements ---- */
int h_releases(struct http_request *, struct http_response *);
int h_release_post(struct http_request *, struct http_response *);
int h_release(struct http_request *, struct http_response *);
int h_release_cancel(struct http_request *, struct http_response *);
int h_release_gate(struct http_request *, struct http_response *);
int h_release_regressions(struct http_request *, struct http_response *);
int h_report_txt(struct http_request *, struct http_response *);
int h_report_eml(struct http_request *, struct http_response *);
int h_kcidb(struct http_request *, struct http_response *);
int h_announcement(struct http_request *, struct http_response *);

/* ---- api_regressions.c: regressions and their triage ---- */
int h_regressions(struct http_request *, struct http_response *);
int h_regression(struct http_request *, struct http_response *);
int h_regression_triage(struct http_request *, struct http_response *);

/* ---- api_jobs.c: jobs, their logs and retries ---- */
int h_job(struct http_request *, struct http_response *);
int h_job_log(struct http_request *, struct http_response *);
int h_job_config(struct http_request *, struct http_response *);
int h_job_retry(struct http_request *, struct http_response *);

/* ---- api_site.c: the dashboard, health, metrics, feed and targets ---- */
int h_index(struct http_request *, struct http_response *);
int h_static(struct http_request *, struct http_response *);
int h_healthz(struct http_request *, struct http_response *);
int h_metrics(struct http_request *, struct http_response *);
int h_feed(struct http_request *, struct http_response *);
int h_targets(struct http_request *, struct http_response *);
int h_states(struct http_request *, struct http_response *);
int h_tests(struct http_request *, struct http_response *);
/* The catalogue as GET /api/v1/tests gives it: {"tests": [...]}. */
struct json_t *tests_catalogue_json(void);

/* ---- tests_page.c: GET /tests, the catalogue as HTML ---- */
int h_tests_page(struct http_request *, struct http_response *);
/* The page for catalogue (tests_catalogue_json's shape), every text
 * escaped; *len its length. The caller frees it (malloc'd). */
char *tests_page_html(struct json_t *catalogue, size_t *len);

/* ---- api_hosts.c: the hypervisor hosts (hosts.c) ---- */
int h_hosts(struct http_request *, struct http_response *);
struct _GString;
void api_hosts_metrics(struct _GString *out);

#endif
