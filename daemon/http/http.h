/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * http/http.h - the REST API and the dashboard: libmicrohttpd (http.c), the
 * response cache (respcache.c), the routes (api.c) and their handlers
 * (api_*.c).
 *
 * The public header of daemon/http/: a section per file. A .c file includes
 * its own folder's headers and those of lower floors only (docs/design.md,
 * tests/layers.sh).
 */
#ifndef RCGATE_HTTP_H
#define RCGATE_HTTP_H

#include "base/base.h"
#include "store/store.h"

/* ---- http.c: libmicrohttpd, the only user of microhttpd.h ---- */
#define HTTP_MAX_PARAMS 4
struct http_request {
	const char *method;
	const char *path;
	const char *params[HTTP_MAX_PARAMS];	/* {captures} of the route pattern */
	const char *body;		/* NUL-terminated, may be NULL */
	size_t body_len;
	const char *request_id;
	void *conn;			/* for http_query/http_header */
};
struct http_response {
	int status;
	char *body;			/* malloc'ed, freed by http.c */
	size_t len;
	const char *content_type;
	const char *allow;		/* for 405 */
	const char *challenge;		/* 401/403: WWW-Authenticate value */
	int ranges;			/* honour Range: bytes=... (logs) */
	int no_etag;			/* volatile content: no ETag */
	int retry_after;		/* seconds, for 503 */
};
enum http_scope { SCOPE_READ, SCOPE_WRITE, SCOPE_ADMIN };
/* A GET whose answer is made from the store alone (and the clock, within
 * a second) is cached: served from respcache.c until the next commit. */
enum http_cache { HTTP_NO_CACHE, HTTP_CACHE };
struct http_route {
	const char *method;
	const char *pattern;		/* "/api/v1/releases/{version}" */
	int (*handler)(struct http_request *, struct http_response *);
	enum http_scope scope;
	enum http_cache cache;
};
struct http_options {
	const char *listen;
	long port;			/* 0 = any free port */
	size_t max_body;
	unsigned max_connections, max_per_ip;
	/* Seconds: complete headers after connecting (or after the previous
	 * response), the whole request once its headers are in, and no
	 * progress at all. The first two hold however slowly bytes trickle. */
	unsigned header_timeout, request_timeout, idle_timeout;
	/* What HTTP_CACHE answers are valid for (store_generation); NULL:
	 * nothing is cached. */
	uint64_t (*generation)(void);
};
/* Starts serving routes[]; *bound_port gets the port. The route's scope is
 * checked with authorize (AUTH_*; -1 on a database error) as soon as the
 * headers are in, before any body is read. Returns NULL on error. */
struct http_server *http_start(const struct http_options *,
			       const struct http_route *routes, size_t nroutes,
			       int (*authorize)(const char *token,
						enum http_scope scope),
			       unsigned *bound_port, char *err, size_t errlen);
void http_stop(struct http_server *);
/* Request counters since start, for /metrics. */
struct http_stats {
	unsigned long requests[6];	/* by status class: [2] = 2xx ... */
	double seconds;			/* total handling time */
	unsigned long deadline_closes;	/* connections cut at a deadline */
	size_t unsent_bytes;		/* large answers held until sent */
	unsigned long unsent_refused;	/* 503s: over that cap */
	unsigned long cache_hits, cache_misses;	/* cached reads (respcache) */
	size_t cache_bytes;
};
void http_stats_get(struct http_stats *);
/* Matches a path (modified in place) against "/a/{x}/b"; captures go to
 * params. Returns 1 on a match. */
int http_route_match(const char *pattern, char *path, const char **params,
		     size_t maxparams);
/* A Range header h ("bytes=a-b", "bytes=a-", "bytes=-n"; one range, no
 * list) against a body of len bytes. Returns 0 with from <= to < len (the
 * bytes to send, inclusive), or -1 if h is not such a range, len is 0 or
 * the range starts at or past len (the caller answers 416). */
int http_range_parse(const char *h, size_t len, size_t *from, size_t *to);
const char *http_query(struct http_request *, const char *key);
const char *http_header(struct http_request *, const char *key);
/* Response helpers: take ownership of json (jansson json_t *). */
int http_json(struct http_response *, int status, struct json_t *json);
int http_error(struct http_response *, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int http_text(struct http_response *, int status, const char *type,
	      char *body, size_t len);

/* ---- respcache.c: read responses kept until the store changes ---- */
struct cached_body {		/* shared by every response that sends it */
	_Atomic long refs;
	size_t len;
	const char *type;		/* a string literal (Content-Type) */
	char etag[40];
	char data[];			/* len bytes and a NUL */
};
struct respcache;
struct respcache_stats {
	size_t entries, bytes;
	unsigned long hits, misses;
};
/* At most max_bytes of bodies (one body at most a quarter of it) and
 * max_entries keys; an answer is served for ttl seconds at most. */
struct respcache *respcache_new(size_t max_bytes, size_t max_entries,
				double ttl);
void respcache_free(struct respcache *);
/* The answer for key made at generation, with a reference the caller
 * releases (cached_body_release). NULL: none that may be served; then
 * *fill = 1 means this caller makes it and must respcache_put or
 * respcache_abandon the key (others wait for it), *fill = 0 that it
 * answers uncached. */
struct cached_body *respcache_get(struct respcache *, const char *key,
				  uint64_t generation, int *fill);
/* Keeps a copy of data with its ETag (http.c makes both; the type string
 * must outlive the cache) for key, made from what the store held at
 * generation. */
void respcache_put(struct respcache *, const char *key, uint64_t generation,
		   const char *type, const char *etag, const char *data,
		   size_t len);
/* The answer will not be cached (an error, a volatile answer). */
void respcache_abandon(struct respcache *, const char *key);
void cached_body_release(struct cached_body *);
void respcache_stats(struct respcache *, struct respcache_stats *);

/* ---- api.c: the REST API's route table (handlers in api_*.c) ---- */
struct api_context {
	const struct config *cfg;
	const char *db_path;
	unsigned workers;
	const char *base_url;		/* for absolute links (Atom) */
};
const struct http_route *api_routes(size_t *n);
int api_authorize(const char *token, enum http_scope scope);
int api_init(const struct api_context *, char *err, size_t errlen);
void api_free(void);

#endif /* RCGATE_HTTP_H */
