/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * http.c - owns libmicrohttpd: accepts connections, collects request bodies
 * up to a cap, matches the route table (method + pattern), checks bearer
 * tokens for the route's scope, and sends what the handler filled in. Error
 * bodies are JSON everywhere: {"error": {"status": N, "message": "..."}}.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <jansson.h>
#include <microhttpd.h>

#include "base/base.h"
#include "store/store.h"
#include "http/http.h"

/* A connection as the deadline sweeper sees it. deadline 0: none. */
struct tracked_conn {
	struct tracked_conn *prev, *next;
	int fd;
	double deadline;
};

enum conn_phase {
	CONN_IDLE,		/* waiting for a request's headers */
	CONN_BODY,		/* headers in: reading the body, handling */
	CONN_ANSWERED,		/* response queued */
};

struct http_server {
	struct MHD_Daemon *mhd;
	const struct http_route *routes;
	size_t nroutes;
	size_t max_body;
	double header_timeout, request_timeout;
	int (*authorize)(const char *token, enum http_scope scope);
	/* Deadlines that a trickling client cannot extend (MHD's own
	 * timeout restarts with every byte): the sweeper shuts down the
	 * socket of a connection past its deadline. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t sweeper;
	int sweeper_started, stopping;
	struct tracked_conn *conns;
	/* HTTP_CACHE routes' answers, valid at generation() (NULL: none). */
	struct respcache *cache;
	uint64_t (*generation)(void);
};

struct pending {
	char *body;
	size_t len;
	int too_large;
	int answered;
	double start;
	const struct http_route *route;
	char pathbuf[1024];
	const char *params[HTTP_MAX_PARAMS];
	char request_id[24];
};

static atomic_ulong request_counter;
static atomic_ulong status_counts[6];
static _Atomic unsigned long long handling_us;
static atomic_ulong deadline_closes;
/* An answer made for one request (not the cache's shared ones: a job's
 * log, its .config) is a copy until MHD has sent it, so a slow reader
 * holds its copy: 100 slow readers of a 300 KiB log would hold 30 MiB.
 * The bytes of such answers over UNSENT_SMALL held at once are capped;
 * past the cap a large answer is 503 with Retry-After (one alone is
 * always sent, whatever its size). */
#define UNSENT_CAP ((size_t)8 << 20)
#define UNSENT_SMALL ((size_t)64 << 10)
static atomic_size_t unsent_bytes;
static atomic_ulong unsent_refused;
struct unsent {
	char *body;
	size_t len;
};
static struct respcache *stats_cache;	/* the running server's */

void http_stats_get(struct http_stats *out)
{
	struct respcache_stats cs = { 0 };

	for (int i = 0; i < 6; i++)
		out->requests[i] = atomic_load(&status_counts[i]);
	out->seconds = (double)atomic_load(&handling_us) / 1e6;
	out->deadline_closes = atomic_load(&deadline_closes);
	out->unsent_bytes = atomic_load(&unsent_bytes);
	out->unsent_refused = atomic_load(&unsent_refused);
	if (stats_cache != NULL)
		respcache_stats(stats_cache, &cs);
	out->cache_hits = cs.hits;
	out->cache_misses = cs.misses;
	out->cache_bytes = cs.bytes;
}

static void on_connection(void *cls, struct MHD_Connection *conn,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct http_server *srv = cls;
	struct tracked_conn *tc = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *info = MHD_get_connection_info(
			conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		tc = calloc(1, sizeof(*tc));
		if (tc == NULL || info == NULL) {
			free(tc);
			return;		/* untracked: MHD's idle timeout only */
		}
		tc->fd = info->connect_fd;
		pthread_mutex_lock(&srv->lock);
		tc->deadline = now_monotonic() + srv->header_timeout;
		tc->next = srv->conns;
		if (srv->conns != NULL)
			srv->conns->prev = tc;
		srv->conns = tc;
		pthread_mutex_unlock(&srv->lock);
		*socket_context = tc;
		return;
	}
	/* MHD_CONNECTION_NOTIFY_CLOSED comes before MHD closes the socket,
	 * so the sweeper never shuts down a reused descriptor. */
	if (tc == NULL)
		return;
	pthread_mutex_lock(&srv->lock);
	if (tc->prev != NULL)
		tc->prev->next = tc->next;
	else
		srv->conns = tc->next;
	if (tc->next != NULL)
		tc->next->prev = tc->prev;
	pthread_mutex_unlock(&srv->lock);
	free(tc);
	*socket_context = NULL;
}

static void conn_state(struct http_server *srv, struct MHD_Connection *conn,
		       enum conn_phase phase)
{
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct tracked_conn *tc = info != NULL ? info->socket_context : NULL;

	if (tc == NULL)
		return;
	pthread_mutex_lock(&srv->lock);
	switch (phase) {
	case CONN_IDLE:
		tc->deadline = now_monotonic() + srv->header_timeout;
		break;
	case CONN_BODY:
		tc->deadline = now_monotonic() + srv->request_timeout;
		break;
	case CONN_ANSWERED:
		tc->deadline = 0;	/* a stalled reader: MHD's timeout */
		break;
	}
	pthread_mutex_unlock(&srv->lock);
}

static void *sweeper_main(void *arg)
{
	struct http_server *srv = arg;

	pthread_mutex_lock(&srv->lock);
	while (!srv->stopping) {
		double now = now_monotonic();

		for (struct tracked_conn *tc = srv->conns; tc != NULL; tc = tc->next) {
			if (tc->deadline > 0 && now > tc->deadline) {
				shutdown(tc->fd, SHUT_RDWR);
				tc->deadline = 0;
				atomic_fetch_add(&deadline_closes, 1);
			}
		}
		cond_wait_ms(&srv->wake, &srv->lock, 250);
	}
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

/* RFC 6750: the scheme is case-insensitive, a missing or unknown token is
 * 401 invalid_token, a valid one without the scope 403 insufficient_scope.
 * Returns 1 if the request may go on, else 0 with resp filled. */
static int authorized(struct http_server *srv, struct http_request *req,
		      struct http_response *resp, enum http_scope scope)
{
	const char *auth = http_header(req, "Authorization");
	const char *token;
	int rc;

	if (auth == NULL || strncasecmp(auth, "Bearer ", 7) != 0) {
		resp->challenge = "Bearer realm=\"rcgate\"";
		http_error(resp, 401, "this endpoint needs a bearer token");
		return 0;
	}
	for (token = auth + 7; *token == ' '; token++)
		;
	rc = *token != '\0' ? srv->authorize(token, scope) : 0;
	if (rc == AUTH_OK)
		return 1;
	if (rc == AUTH_SCOPE) {
		resp->challenge = scope == SCOPE_ADMIN
			? "Bearer realm=\"rcgate\", error=\"insufficient_scope\", scope=\"admin\""
			: "Bearer realm=\"rcgate\", error=\"insufficient_scope\", scope=\"write\"";
		http_error(resp, 403, "token lacks the %s scope this endpoint needs",
			   scope == SCOPE_ADMIN ? "admin" : "write");
		return 0;
	}
	resp->challenge = "Bearer realm=\"rcgate\", error=\"invalid_token\"";
	http_error(resp, rc < 0 ? 503 : 401, rc < 0
		   ? "cannot check the token now (database error)"
		   : "token is not valid for this endpoint");
	return 0;
}

/* A strong validator from the body: same bytes, same ETag. */
static void make_etag(const char *body, size_t len, char out[40])
{
	char hex[65];

	sha256_hex(body, len, hex);
	snprintf(out, 40, "\"%.32s\"", hex);
}

/* If-None-Match names this ETag (or any): the answer is 304. */
static int etag_matches(struct MHD_Connection *conn, const char *etag)
{
	const char *inm = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						      "If-None-Match");

	return inm != NULL && (strcmp(inm, etag) == 0 || strcmp(inm, "*") == 0);
}

/* The headers every answer carries (type NULL: none, as for a 304), and
 * what a read adds: reads are public and cheap to revalidate; bots and
 * other origins may read them (writes need a token anyway). */
static void add_headers(struct MHD_Response *r, const char *type,
			const char *request_id, int is_get, const char *etag)
{
	if (type != NULL)
		MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "X-Request-Id", request_id);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (is_get) {
		MHD_add_response_header(r, "Cache-Control", "no-cache");
		MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
		if (etag != NULL && etag[0] != '\0')
			MHD_add_response_header(r, "ETag", etag);
	}
}

/* "bytes=a-b" or "bytes=a-" or "bytes=-n" against len; 0 ok, -1 bad.
 * Not static only so tests/fuzz/range_fuzz.c can reach it (http/http.h). */
int http_range_parse(const char *h, size_t len, size_t *from, size_t *to)
{
	long a = -1, b = -1;
	char *end;

	if (strncmp(h, "bytes=", 6) != 0 || strchr(h, ',') != NULL || len == 0)
		return -1;
	h += 6;
	if (*h == '-') {
		b = strtol(h + 1, &end, 10);
		if (end == h + 1 || *end != '\0' || b <= 0)
			return -1;
		*from = (size_t)b >= len ? 0 : len - (size_t)b;
		*to = len - 1;
		return 0;
	}
	a = strtol(h, &end, 10);
	if (end == h || *end != '-' || a < 0)
		return -1;
	h = end + 1;
	if (*h != '\0') {
		b = strtol(h, &end, 10);
		if (end == h || *end != '\0' || b < a)
			return -1;
	}
	if ((size_t)a >= len)
		return -1;
	*from = (size_t)a;
	*to = b < 0 || (size_t)b >= len ? len - 1 : (size_t)b;
	return 0;
}

const char *http_query(struct http_request *req, const char *key)
{
	return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND,
					   key);
}

const char *http_header(struct http_request *req, const char *key)
{
	return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, key);
}

int http_text(struct http_response *resp, int status, const char *type,
	      char *body, size_t len)
{
	free(resp->body);
	resp->status = status;
	resp->content_type = type;
	resp->body = body;
	resp->len = len;
	return 0;
}

int http_json(struct http_response *resp, int status, json_t *json)
{
	char *text;

	if (json == NULL)
		return http_error(resp, 500, "out of memory");
	text = json_dumps(json, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(json);
	if (text == NULL)
		return http_error(resp, 500, "cannot encode response");
	return http_text(resp, status, "application/json", text, strlen(text));
}

int http_error(struct http_response *resp, int status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	json_t *err;
	char *text;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Messages quote client input that may be cut mid-character or not be
	 * UTF-8 at all: keep them ASCII so the error body always encodes. */
	for (char *c = msg; *c != '\0'; c++) {
		if ((unsigned char)*c >= 0x80 || (unsigned char)*c < 0x20)
			*c = '?';
	}
	err = json_pack("{s:{s:i,s:s}}", "error", "status", status, "message",
			msg);
	text = err != NULL ? json_dumps(err, JSON_PRESERVE_ORDER) : NULL;
	json_decref(err);
	if (text == NULL)
		text = strdup("{\"error\":{\"status\":500,\"message\":\"out of memory\"}}");
	return http_text(resp, status, "application/json", text,
			 text != NULL ? strlen(text) : 0);
}

/* Matches "/a/{x}/b" against "/a/123/b"; captures go into params (pointing
 * into buf, a writable copy of the path). */
int http_route_match(const char *pattern, char *buf, const char **params,
		       size_t maxparams)
{
	const char *p = pattern;
	char *s = buf;
	size_t np = 0;

	while (*p != '\0' && *s != '\0') {
		if (*p == '{') {
			char *end = strchr(s, '/');
			const char *pend = strchr(p, '}');

			if (pend == NULL || np >= maxparams)
				return 0;
			if (end == s)
				return 0;	/* empty segment */
			params[np++] = s;
			p = pend + 1;
			if (end == NULL) {
				s += strlen(s);
			} else {
				*end = '\0';
				s = end + 1;
				if (*p != '/')
					return 0;
				p++;
			}
			continue;
		}
		if (*p != *s)
			return 0;
		p++;
		s++;
	}
	return *p == '\0' && *s == '\0';
}

/* Counts len against UNSENT_CAP: 1 taken, 0 over the cap. */
static int unsent_take(size_t len)
{
	size_t cur = atomic_load(&unsent_bytes);

	do {
		if (cur != 0 && cur + len > UNSENT_CAP)
			return 0;
	} while (!atomic_compare_exchange_weak(&unsent_bytes, &cur, cur + len));
	return 1;
}

static void unsent_free(void *cls)
{
	struct unsent *u = cls;

	atomic_fetch_sub(&unsent_bytes, u->len);
	free(u->body);
	free(u);
}

/* The MHD response of body (taken, freed when sent): large ones counted
 * against UNSENT_CAP. NULL when out of memory (body freed). */
static struct MHD_Response *body_response(char *body, size_t len)
{
	struct MHD_Response *r;
	struct unsent *u;

	if (len <= UNSENT_SMALL)
		return MHD_create_response_from_buffer(len, body,
						       MHD_RESPMEM_MUST_FREE);
	u = malloc(sizeof(*u));
	if (u == NULL) {
		atomic_fetch_sub(&unsent_bytes, len);	/* unsent_take's */
		free(body);
		return NULL;
	}
	u->body = body;
	u->len = len;
	r = MHD_create_response_from_buffer_with_free_callback_cls(
		len, body, unsent_free, u);
	if (r == NULL)
		unsent_free(u);
	return r;
}

static enum MHD_Result send_response(struct MHD_Connection *conn,
				     const char *method,
				     struct http_response *resp,
				     const char *request_id)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char etag[40] = "", crange[96] = "";
	int is_get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	const char *range;
	size_t from = 0, to = 0;

	if (is_get && resp->status == 200 && !resp->no_etag) {
		make_etag(resp->body, resp->len, etag);
		if (etag_matches(conn, etag)) {
			free(resp->body);
			resp->body = NULL;
			resp->len = 0;
			resp->status = 304;
		}
	}
	range = resp->ranges && resp->status == 200
		? MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Range") : NULL;
	if (range != NULL) {
		if (http_range_parse(range, resp->len, &from, &to) == 0) {
			memmove(resp->body, resp->body + from, to - from + 1);
			snprintf(crange, sizeof(crange), "bytes %zu-%zu/%zu", from, to,
				 resp->len);
			resp->len = to - from + 1;
			resp->status = 206;
		} else {
			snprintf(crange, sizeof(crange), "bytes */%zu", resp->len);
			http_error(resp, 416, "range not satisfiable");
		}
	}
	if (resp->len > UNSENT_SMALL && !unsent_take(resp->len)) {
		atomic_fetch_add(&unsent_refused, 1);
		http_error(resp, 503, "too many large answers are being sent"
			   " to slow readers; retry");
		resp->retry_after = 5;
		etag[0] = crange[0] = '\0';
	}
	r = body_response(resp->body, resp->len);
	resp->body = NULL;
	if (r == NULL)
		return MHD_NO;
	add_headers(r, resp->status == 304 ? NULL : resp->content_type != NULL
		    ? resp->content_type : "application/json", request_id, is_get,
		    etag);
	if (resp->ranges)
		MHD_add_response_header(r, "Accept-Ranges", "bytes");
	if (crange[0] != '\0')
		MHD_add_response_header(r, "Content-Range", crange);
	if (resp->allow != NULL)
		MHD_add_response_header(r, "Allow", resp->allow);
	if (resp->retry_after > 0) {
		char ra[16];

		snprintf(ra, sizeof(ra), "%d", resp->retry_after);
		MHD_add_response_header(r, "Retry-After", ra);
	}
	if (resp->challenge != NULL)
		MHD_add_response_header(r, "WWW-Authenticate", resp->challenge);
	ret = MHD_queue_response(conn, (unsigned)resp->status, r);
	MHD_destroy_response(r);
	return ret;
}

static void release_body(void *cls)
{
	cached_body_release(cls);
}

/* A cached answer: its bytes are shared, not copied (the response holds a
 * reference until MHD has sent them). Takes the caller's reference. */
static enum MHD_Result send_cached(struct MHD_Connection *conn,
				   struct cached_body *b, int *status,
				   const char *request_id)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	*status = etag_matches(conn, b->etag) ? 304 : 200;
	r = MHD_create_response_from_buffer_with_free_callback_cls(
		*status == 304 ? 0 : b->len, b->data, release_body, b);
	if (r == NULL) {
		cached_body_release(b);
		return MHD_NO;
	}
	add_headers(r, *status == 304 ? NULL : b->type != NULL ? b->type
		    : "application/json", request_id, 1, b->etag);
	ret = MHD_queue_response(conn, (unsigned)*status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result key_arg(void *cls, enum MHD_ValueKind kind,
			       const char *key, const char *value)
{
	struct strbuf *sb = cls;

	(void)kind;
	/* Length-prefixed, so no decoded value can make two queries one key. */
	if (value != NULL)
		strbuf_printf(sb, "&%zu:%s%zu:%s", strlen(key), key,
			      strlen(value), value);
	else
		strbuf_printf(sb, "&%zu:%s-", strlen(key), key);
	return MHD_YES;
}

/* The cache key of a request: its path and its query. 0, or -1 if it is
 * too long to cache. */
static int cache_key(struct MHD_Connection *conn, const char *url, char *out,
		     size_t len)
{
	struct strbuf sb;

	strbuf_init(&sb, out, len);
	strbuf_printf(&sb, "%s", url);
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, key_arg, &sb);
	return strlen(out) + 1 < len ? 0 : -1;
}

/* The route for a request whose headers are in, checked before any body
 * is read: an unknown path, a wrong method, a missing or insufficient
 * token or a declared body over the cap is answered at once, so nobody
 * can make the daemon buffer a body it will refuse. Returns the route (its
 * captures in params, pointing into pathbuf) or NULL with resp filled. */
static const struct http_route *route_resolve(struct http_server *srv,
					      struct http_request *req,
					      struct http_response *resp,
					      char *pathbuf, size_t buflen,
					      const char **params)
{
	char allow[128];
	struct strbuf ab;
	size_t plen = strlen(req->path);
	const char *clen;

	strbuf_init(&ab, allow, sizeof(allow));
	if (plen >= buflen) {
		http_error(resp, 414, "path longer than %zu bytes", buflen - 1);
		return NULL;
	}
	for (size_t i = 0; i < srv->nroutes; i++) {
		const struct http_route *rt = &srv->routes[i];

		memcpy(pathbuf, req->path, plen + 1);
		memset(params, 0, HTTP_MAX_PARAMS * sizeof(*params));
		if (!http_route_match(rt->pattern, pathbuf, params,
				      HTTP_MAX_PARAMS))
			continue;
		if (strcmp(rt->method, req->method) != 0 &&
		    !(strcmp(req->method, "HEAD") == 0 &&
		      strcmp(rt->method, "GET") == 0)) {
			strbuf_printf(&ab, "%s%s", ab.len ? ", " : "", rt->method);
			continue;
		}
		if (rt->scope != SCOPE_READ && !authorized(srv, req, resp, rt->scope))
			return NULL;
		clen = http_header(req, "Content-Length");
		if (clen != NULL && strtoull(clen, NULL, 10) > srv->max_body) {
			http_error(resp, 413, "request body larger than %zu bytes",
				   srv->max_body);
			return NULL;
		}
		return rt;
	}
	if (ab.len > 0) {
		static __thread char allow_copy[128];

		memcpy(allow_copy, allow, sizeof(allow));
		resp->allow = allow_copy;
		http_error(resp, 405, "method %s not allowed here (allowed: %s)",
			   req->method, allow);
		return NULL;
	}
	http_error(resp, 404, "no such resource: %s", req->path);
	return NULL;
}

static void request_init(struct http_request *req, struct MHD_Connection *conn,
			 const char *url, const char *method,
			 const struct pending *p)
{
	memset(req, 0, sizeof(*req));
	req->method = method;
	req->path = url;
	req->body = p->body;
	req->body_len = p->len;
	req->request_id = p->request_id;
	req->conn = conn;
}

/* Counts and logs an answered request: reads that succeeded at debug
 * (at thousands a second they would be most of the log), everything else
 * (writes, errors) at info. */
static void answered(struct http_server *srv, struct MHD_Connection *conn,
		     const char *method, const char *url, int status,
		     struct pending *p, const char *how)
{
	double secs = now_monotonic() - p->start;
	int klass = status / 100;
	int read_ok = status < 400 && (strcmp(method, "GET") == 0 ||
				       strcmp(method, "HEAD") == 0);

	p->answered = 1;
	conn_state(srv, conn, CONN_ANSWERED);
	atomic_fetch_add(&status_counts[klass >= 1 && klass <= 5 ? klass : 0], 1);
	atomic_fetch_add(&handling_us, (unsigned long long)(secs * 1e6));
	log_msg(read_ok ? LOG_DEBUG : LOG_INFO, "http request_id=%s method=%s path=%s"
		" status=%d ms=%.3f%s", p->request_id, method, url, status,
		secs * 1000.0, how);
}

static enum MHD_Result answer(struct http_server *srv,
			      struct MHD_Connection *conn, const char *method,
			      const char *url, struct http_response *resp,
			      struct pending *p)
{
	enum MHD_Result ret = send_response(conn, method, resp, p->request_id);

	answered(srv, conn, method, url, resp->status, p, "");
	return ret;
}

/* A cacheable read: from the cache, or made by the handler and kept. */
static enum MHD_Result answer_cacheable(struct http_server *srv,
					struct MHD_Connection *conn,
					const char *method, const char *url,
					struct http_request *req,
					struct pending *p)
{
	struct http_response resp = { 0 };
	struct cached_body *b;
	enum MHD_Result ret;
	char key[1200];
	uint64_t gen;
	int fill = 0, status;

	if (cache_key(conn, url, key, sizeof(key)) < 0) {
		p->route->handler(req, &resp);
		return answer(srv, conn, method, url, &resp, p);
	}
	gen = srv->generation();
	b = respcache_get(srv->cache, key, gen, &fill);
	if (b != NULL) {
		ret = send_cached(conn, b, &status, p->request_id);
		answered(srv, conn, method, url, status, p, " cache=hit");
		return ret;
	}
	p->route->handler(req, &resp);
	if (fill) {
		if (resp.status == 200 && !resp.no_etag && !resp.ranges &&
		    resp.body != NULL) {
			char etag[40];

			make_etag(resp.body, resp.len, etag);
			respcache_put(srv->cache, key, gen, resp.content_type,
				      etag, resp.body, resp.len);
		} else {
			respcache_abandon(srv->cache, key);
		}
	}
	return answer(srv, conn, method, url, &resp, p);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct http_server *srv = cls;
	struct pending *p = *con_cls;
	struct http_request req;
	struct http_response resp = { 0 };

	(void)version;
	if (p == NULL) {
		/* The headers are complete: this is where the header
		 * deadline ends and the request's own deadline starts. */
		p = calloc(1, sizeof(*p));
		if (p == NULL)
			return MHD_NO;
		snprintf(p->request_id, sizeof(p->request_id), "r%lu",
			 (unsigned long)atomic_fetch_add(&request_counter, 1) + 1);
		p->start = now_monotonic();
		*con_cls = p;
		conn_state(srv, conn, CONN_BODY);
		request_init(&req, conn, url, method, p);
		p->route = route_resolve(srv, &req, &resp, p->pathbuf,
					 sizeof(p->pathbuf), p->params);
		if (p->route == NULL)
			return answer(srv, conn, method, url, &resp, p);
		return MHD_YES;
	}
	if (p->answered) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		/* Keep reading what the client sends, but stop storing it once
		 * it passes the cap: the answer is 413, and nothing grows. */
		if (!p->too_large && p->len + *upload_data_size <= srv->max_body) {
			char *nb = realloc(p->body, p->len + *upload_data_size + 1);

			if (nb == NULL)
				return MHD_NO;
			p->body = nb;
			memcpy(p->body + p->len, upload_data, *upload_data_size);
			p->len += *upload_data_size;
			p->body[p->len] = '\0';
		} else {
			p->too_large = 1;
			free(p->body);
			p->body = NULL;
			p->len = 0;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	request_init(&req, conn, url, method, p);
	if (p->too_large) {
		http_error(&resp, 413, "request body larger than %zu bytes",
			   srv->max_body);
	} else {
		memcpy(req.params, p->params, sizeof(req.params));
		if (p->route->cache == HTTP_CACHE && srv->cache != NULL &&
		    (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0))
			return answer_cacheable(srv, conn, method, url, &req, p);
		p->route->handler(&req, &resp);
	}
	return answer(srv, conn, method, url, &resp, p);
}

static void on_completed(void *cls, struct MHD_Connection *conn,
			 void **con_cls, enum MHD_RequestTerminationCode code)
{
	struct pending *p = *con_cls;

	(void)code;
	conn_state(cls, conn, CONN_IDLE);
	if (p != NULL) {
		free(p->body);
		free(p);
		*con_cls = NULL;
	}
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	log_warn("http: %s", line);
}

struct http_server *http_start(const struct http_options *o,
			       const struct http_route *routes, size_t nroutes,
			       int (*authorize)(const char *, enum http_scope),
			       unsigned *bound_port, char *err, size_t errlen)
{
	struct http_server *srv;
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *info;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)o->port);
	if (inet_pton(AF_INET, o->listen, &sa.sin_addr) != 1) {
		errf(err, errlen, "listen address '%s' is not an IPv4 address",
		     o->listen);
		return NULL;
	}
	srv = calloc(1, sizeof(*srv));
	if (srv == NULL) {
		errf(err, errlen, "out of memory");
		return NULL;
	}
	srv->routes = routes;
	srv->nroutes = nroutes;
	srv->max_body = o->max_body;
	srv->header_timeout = (double)o->header_timeout;
	srv->request_timeout = (double)o->request_timeout;
	srv->authorize = authorize;
	if (o->generation != NULL) {
		/* 32 MiB of answers at most, each kept a second at most. */
		srv->cache = respcache_new(32u << 20, 4096, 1.0);
		srv->generation = o->generation;
		stats_cache = srv->cache;
	}
	pthread_mutex_init(&srv->lock, NULL);
	pthread_cond_init(&srv->wake, NULL);
	if (pthread_create(&srv->sweeper, NULL, sweeper_main, srv) != 0) {
		errf(err, errlen, "cannot start the HTTP deadline thread");
		goto fail;
	}
	srv->sweeper_started = 1;
	/* A thread per connection: a slow page or a slow client holds only
	 * its own thread; the per-address limit keeps one client from
	 * taking every connection. */
	srv->mhd = MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			MHD_USE_ERROR_LOG | MHD_USE_AUTO,
		(uint16_t)o->port, NULL, NULL, on_request, srv,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, srv,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
		MHD_OPTION_CONNECTION_LIMIT, o->max_connections,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->max_per_ip,
		MHD_OPTION_CONNECTION_TIMEOUT, o->idle_timeout,
		/* MHD touches a connection's whole pool: 32 KiB each (what
		 * nginx allows for headers) keeps 300 held connections near
		 * 15 MiB; headers over it get 431. */
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
		MHD_OPTION_THREAD_STACK_SIZE, (size_t)(512 * 1024),
		MHD_OPTION_END);
	if (srv->mhd == NULL) {
		errf(err, errlen, "cannot listen on %s:%ld (port in use?)",
		     o->listen, o->port);
		goto fail;
	}
	info = MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_BIND_PORT);
	*bound_port = info != NULL ? info->port : (unsigned)o->port;
	return srv;
fail:
	http_stop(srv);
	return NULL;
}

void http_stop(struct http_server *srv)
{
	if (srv == NULL)
		return;
	if (srv->mhd != NULL)
		MHD_stop_daemon(srv->mhd);
	if (srv->sweeper_started) {
		pthread_mutex_lock(&srv->lock);
		srv->stopping = 1;
		pthread_cond_signal(&srv->wake);
		pthread_mutex_unlock(&srv->lock);
		pthread_join(srv->sweeper, NULL);
	}
	pthread_mutex_destroy(&srv->lock);
	pthread_cond_destroy(&srv->wake);
	if (stats_cache == srv->cache)
		stats_cache = NULL;
	respcache_free(srv->cache);
	free(srv);
}
