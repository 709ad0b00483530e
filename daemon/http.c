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

#include <jansson.h>
#include <microhttpd.h>

#include "rcgate.h"

struct http_server {
	struct MHD_Daemon *mhd;
	const struct http_route *routes;
	size_t nroutes;
	size_t max_body;
	int (*authorize)(const char *token, enum http_scope scope);
};

struct pending {
	char *body;
	size_t len;
	int too_large;
	char request_id[24];
};

static atomic_ulong request_counter;
static atomic_ulong status_counts[6];
static _Atomic unsigned long long handling_us;

void http_stats_get(struct http_stats *out)
{
	for (int i = 0; i < 6; i++)
		out->requests[i] = atomic_load(&status_counts[i]);
	out->seconds = (double)atomic_load(&handling_us) / 1e6;
}

/* A strong validator from the body: same bytes, same ETag. */
static void make_etag(const char *body, size_t len, char out[40])
{
	char hex[65];

	sha256_hex(body, len, hex);
	snprintf(out, 40, "\"%.32s\"", hex);
}

/* "bytes=a-b" or "bytes=a-" or "bytes=-n" against len; 0 ok, -1 bad.
 * Not static only so tests/fuzz/range_fuzz.c can reach it (rcgate.h). */
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

static enum MHD_Result send_response(struct MHD_Connection *conn,
				     const char *method,
				     struct http_response *resp,
				     const char *request_id)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char etag[40] = "", crange[96] = "";
	int is_get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	const char *inm, *range;
	size_t from = 0, to = 0;

	if (is_get && resp->status == 200 && !resp->no_etag) {
		make_etag(resp->body, resp->len, etag);
		inm = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						  "If-None-Match");
		if (inm != NULL && (strcmp(inm, etag) == 0 || strcmp(inm, "*") == 0)) {
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
	r = MHD_create_response_from_buffer(resp->len, resp->body,
					    MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(resp->body);
		return MHD_NO;
	}
	resp->body = NULL;
	if (resp->status != 304)
		MHD_add_response_header(r, "Content-Type", resp->content_type != NULL
					? resp->content_type : "application/json");
	MHD_add_response_header(r, "X-Request-Id", request_id);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (is_get) {
		/* Reads are public and cheap to revalidate; bots and other
		 * origins may read them (writes need a token anyway). */
		MHD_add_response_header(r, "Cache-Control", "no-cache");
		MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
		if (etag[0] != '\0')
			MHD_add_response_header(r, "ETag", etag);
	}
	if (resp->ranges)
		MHD_add_response_header(r, "Accept-Ranges", "bytes");
	if (crange[0] != '\0')
		MHD_add_response_header(r, "Content-Range", crange);
	if (resp->allow != NULL)
		MHD_add_response_header(r, "Allow", resp->allow);
	if (resp->auth_challenge)
		MHD_add_response_header(r, "WWW-Authenticate",
					"Bearer realm=\"rcgate\"");
	ret = MHD_queue_response(conn, (unsigned)resp->status, r);
	MHD_destroy_response(r);
	return ret;
}

static void dispatch(struct http_server *srv, struct http_request *req,
		     struct http_response *resp, int too_large)
{
	char allow[128] = "";
	char buf[1024];
	size_t plen = strlen(req->path);

	if (plen >= sizeof(buf)) {
		http_error(resp, 414, "path longer than %zu bytes", sizeof(buf) - 1);
		return;
	}
	for (size_t i = 0; i < srv->nroutes; i++) {
		const struct http_route *rt = &srv->routes[i];
		const char *params[4] = { NULL };

		memcpy(buf, req->path, plen + 1);
		if (!http_route_match(rt->pattern, buf, params, 4))
			continue;
		if (strcmp(rt->method, req->method) != 0 &&
		    !(strcmp(req->method, "HEAD") == 0 &&
		      strcmp(rt->method, "GET") == 0)) {
			size_t used = strlen(allow);

			snprintf(allow + used, sizeof(allow) - used, "%s%s",
				 used ? ", " : "", rt->method);
			continue;
		}
		if (rt->scope != SCOPE_READ) {
			const char *auth = http_header(req, "Authorization");

			if (auth == NULL || strncmp(auth, "Bearer ", 7) != 0 ||
			    auth[7] == '\0') {
				resp->auth_challenge = 1;
				http_error(resp, 401, "this endpoint needs a bearer token");
				return;
			}
			if (srv->authorize(auth + 7, rt->scope) != 1) {
				resp->auth_challenge = 1;
				http_error(resp, 401, "token is not valid for this endpoint");
				return;
			}
		}
		if (too_large) {
			http_error(resp, 413, "request body larger than %zu bytes",
				   srv->max_body);
			return;
		}
		memcpy(req->params, params, sizeof(params));
		rt->handler(req, resp);
		return;
	}
	if (allow[0] != '\0') {
		static __thread char allow_copy[128];

		memcpy(allow_copy, allow, sizeof(allow));
		resp->allow = allow_copy;
		http_error(resp, 405, "method %s not allowed here (allowed: %s)",
			   req->method, allow);
		return;
	}
	http_error(resp, 404, "no such resource: %s", req->path);
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
	double start;
	enum MHD_Result ret;

	(void)version;
	if (p == NULL) {
		p = calloc(1, sizeof(*p));
		if (p == NULL)
			return MHD_NO;
		snprintf(p->request_id, sizeof(p->request_id), "r%lu",
			 (unsigned long)atomic_fetch_add(&request_counter, 1) + 1);
		*con_cls = p;
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
	start = now_monotonic();
	memset(&req, 0, sizeof(req));
	req.method = method;
	req.path = url;
	req.body = p->body;
	req.body_len = p->len;
	req.request_id = p->request_id;
	req.conn = conn;
	dispatch(srv, &req, &resp, p->too_large);
	ret = send_response(conn, method, &resp, p->request_id);
	{
		double secs = now_monotonic() - start;
		int klass = resp.status / 100;

		atomic_fetch_add(&status_counts[klass >= 1 && klass <= 5 ? klass : 0], 1);
		atomic_fetch_add(&handling_us, (unsigned long long)(secs * 1e6));
		log_info("http request_id=%s method=%s path=%s status=%d ms=%.1f",
			 p->request_id, method, url, resp.status, secs * 1000.0);
	}
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn,
			 void **con_cls, enum MHD_RequestTerminationCode code)
{
	struct pending *p = *con_cls;

	(void)cls;
	(void)conn;
	(void)code;
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

struct http_server *http_start(const char *listen, long port,
			       const struct http_route *routes, size_t nroutes,
			       size_t max_body,
			       int (*authorize)(const char *, enum http_scope),
			       unsigned *bound_port, char *err, size_t errlen)
{
	struct http_server *srv;
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *info;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, listen, &sa.sin_addr) != 1) {
		errf(err, errlen, "listen address '%s' is not an IPv4 address",
		     listen);
		return NULL;
	}
	srv = calloc(1, sizeof(*srv));
	if (srv == NULL) {
		errf(err, errlen, "out of memory");
		return NULL;
	}
	srv->routes = routes;
	srv->nroutes = nroutes;
	srv->max_body = max_body;
	srv->authorize = authorize;
	srv->mhd = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
			MHD_USE_AUTO,
		(uint16_t)port, NULL, NULL, on_request, srv,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, srv,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)256,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
		MHD_OPTION_END);
	if (srv->mhd == NULL) {
		errf(err, errlen, "cannot listen on %s:%ld (port in use?)",
		     listen, port);
		free(srv);
		return NULL;
	}
	info = MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_BIND_PORT);
	*bound_port = info != NULL ? info->port : (unsigned)port;
	return srv;
}

void http_stop(struct http_server *srv)
{
	if (srv == NULL)
		return;
	MHD_stop_daemon(srv->mhd);
	free(srv);
}
