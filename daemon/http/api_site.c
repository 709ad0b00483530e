/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * api_site.c - what is around the REST API's resources: the dashboard's
 * files (/ and /web/{file} from web_dir), /healthz, /metrics (Prometheus
 * text), /feed.atom (regression events and reports) and the targets
 * table (/api/v1/targets). The only API file that uses GLib.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <jansson.h>

#include "base/base.h"
#include "store/store.h"
#include "job/job.h"
#include "http/http.h"
#include "api_internal.h"
#include "../../agent/catalogue.h"
#include "report/report.h"

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
	snprintf(path, sizeof(path), "%s/%s", api_ctx.cfg->web_dir, name);
	body = file_read(path, 4u << 20, &len, err, sizeof(err));
	if (body == NULL)
		return http_error(resp, 404, "no such file");
	return http_text(resp, 200, type, body, len);
}

int h_index(struct http_request *req, struct http_response *resp)
{
	(void)req;
	return serve_file(resp, "index.html");
}

int h_static(struct http_request *req, struct http_response *resp)
{
	return serve_file(resp, req->params[0]);
}

int h_healthz(struct http_request *req, struct http_response *resp)
{
	char why[600], mail[640] = "off";
	int version;

	(void)req;
	pthread_mutex_lock(&api_lock);
	version = store_schema_version(api_store);
	pthread_mutex_unlock(&api_lock);
	if (version < 0)
		return http_error(resp, 503, "database unavailable");
	/* Mail that would go out with unusable addresses is refused (reply.c):
	 * say so where an operator looks first. */
	if (api_ctx.cfg->smtp_url[0] != '\0') {
		if (reply_mail_allowed(api_ctx.cfg->public_url,
				       api_ctx.cfg->mail_from, why, sizeof(why)))
			snprintf(mail, sizeof(mail), "on");
		else
			snprintf(mail, sizeof(mail), "refused: %s", why);
	}
	return http_json(resp, 200, json_pack("{s:s,s:s,s:i,s:i,s:s}", "status",
			 "ok", "version", RCGATE_VERSION, "schema", version,
			 "workers", (int)api_ctx.workers, "mail", mail));
}

/* One gauge sample per state, zero included: a state with no rows must
 * still have a series, or rate() and alerts on it see nothing at all.
 * Returns the count of state only_state (for the queue depth). */
static long long metric_rows(GString *out, const char *name, const char *help,
			     enum store_query q, const char *const *states,
			     const char *only_state)
{
	json_t *list = rows(q, "");
	long long wanted = 0;
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
		if (only_state != NULL && strcmp(*s, only_state) == 0)
			wanted = n;
	}
	json_decref(list);
	return wanted;
}

/* The part of /metrics the store holds, made again only after a commit
 * (store_generation): a scrape costs no query while nothing changes. */
static pthread_mutex_t metrics_lock = PTHREAD_MUTEX_INITIALIZER;
static GString *metrics_store;
static uint64_t metrics_generation;

static void metrics_from_store(GString *out)
{
	static const char *const regression_states[] = { "open", "confirmed",
		"fixed", "invalid", NULL };
	static const char *const outbox_states[] = { "pending", "sent",
		"failed", NULL };
	const char *job_states[16];
	uint64_t gen = store_generation();
	long long queued;

	pthread_mutex_lock(&metrics_lock);
	if (metrics_store != NULL && metrics_generation == gen) {
		g_string_append_len(out, metrics_store->str,
				    (gssize)metrics_store->len);
		pthread_mutex_unlock(&metrics_lock);
		return;
	}
	for (size_t i = 0; i < job_state_count() && i + 1 < 16; i++) {
		job_states[i] = job_state_at(i)->name;
		job_states[i + 1] = NULL;
	}
	if (metrics_store == NULL)
		metrics_store = g_string_new(NULL);
	g_string_truncate(metrics_store, 0);
	queued = metric_rows(metrics_store, "rcgate_jobs", "Jobs by state.",
			     Q_METRICS_JOBS, job_states, JS_QUEUED);
	metric_rows(metrics_store, "rcgate_regressions", "Regressions by state.",
		    Q_METRICS_REGRESSIONS, regression_states, NULL);
	metric_rows(metrics_store, "rcgate_outbox", "Report deliveries by state.",
		    Q_METRICS_OUTBOX, outbox_states, NULL);
	g_string_append_printf(metrics_store, "# HELP rcgate_queue_depth Jobs"
		" waiting for a worker.\n# TYPE rcgate_queue_depth gauge\n"
		"rcgate_queue_depth %lld\n", queued);
	metrics_generation = gen;
	g_string_append_len(out, metrics_store->str, (gssize)metrics_store->len);
	pthread_mutex_unlock(&metrics_lock);
}

int h_metrics(struct http_request *req, struct http_response *resp)
{
	static const char *const classes[] = { "other", "1xx", "2xx", "3xx",
					       "4xx", "5xx" };
	GString *out = g_string_new(NULL);
	struct http_stats hs;
	unsigned long total = 0;

	(void)req;
	g_string_append(out, "# HELP rcgate_build_info The running rcgated's"
		" version.\n# TYPE rcgate_build_info gauge\n"
		"rcgate_build_info{version=\"" RCGATE_VERSION "\"} 1\n");
	metrics_from_store(out);
	g_string_append_printf(out, "# HELP rcgate_guests_running Guests running"
		" now.\n# TYPE rcgate_guests_running gauge\n"
		"rcgate_guests_running %u\n", sched_running());
	api_hosts_metrics(out);
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
	g_string_append_printf(out, "# HELP rcgate_http_unsent_bytes Bytes of"
		" large uncached answers made and not yet sent (capped).\n"
		"# TYPE rcgate_http_unsent_bytes gauge\nrcgate_http_unsent_bytes"
		" %zu\n# HELP rcgate_http_unsent_refused_total Large answers"
		" refused with 503 while that cap was reached.\n"
		"# TYPE rcgate_http_unsent_refused_total counter\n"
		"rcgate_http_unsent_refused_total %lu\n", hs.unsent_bytes,
		hs.unsent_refused);
	g_string_append_printf(out, "# HELP rcgate_http_cache_requests_total"
		" Cacheable reads, answered from the response cache (hit) or made"
		" (miss).\n# TYPE rcgate_http_cache_requests_total counter\n"
		"rcgate_http_cache_requests_total{result=\"hit\"} %lu\n"
		"rcgate_http_cache_requests_total{result=\"miss\"} %lu\n"
		"# HELP rcgate_http_cache_bytes Bytes of answers in the response"
		" cache.\n# TYPE rcgate_http_cache_bytes gauge\n"
		"rcgate_http_cache_bytes %zu\n", hs.cache_hits, hs.cache_misses,
		hs.cache_bytes);
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

int h_feed(struct http_request *req, struct http_response *resp)
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
	snprintf(base, sizeof(base), "%s", api_ctx.base_url != NULL ? api_ctx.base_url : "");
	esc = g_markup_escape_text(base, -1);
	tag = g_markup_escape_text(api_ctx.cfg->feed_tag, -1);
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

/* The job state table, for clients that must know which states are final
 * (the dashboard stops polling there) without a list of their own. */
int h_states(struct http_request *req, struct http_response *resp)
{
	json_t *list = json_array();

	(void)req;
	for (size_t i = 0; i < job_state_count(); i++) {
		const struct job_state *s = job_state_at(i);

		json_array_append_new(list, json_pack("{s:s,s:b,s:b,s:s}", "name",
			s->name, "final", s->final, "active", s->active, "meaning",
			s->meaning));
	}
	return http_json(resp, 200, json_pack("{s:o}", "job_states", list));
}

/* "ext4 xfs btrfs" -> ["ext4", "xfs", "btrfs"] */
static json_t *word_array(const char *words)
{
	json_t *a = json_array();

	for (const char *p = words; *p != '\0';) {
		size_t n;

		p += strspn(p, " ");
		n = strcspn(p, " ");
		if (n > 0)
			json_array_append_new(a, json_stringn(p, n));
		p += n;
	}
	return a;
}

/* "883a790a8440 xfs: subject; ca93e44bfb5f btrfs: subject" -> one object
 * per fix, {"commit", "subject"}: a fix starts with 12 hex digits and a
 * blank, after "; " (a subject may hold a "; " of its own). */
static json_t *fix_array(const char *fixes)
{
	json_t *a = json_array();
	const char *p = fixes;

	while (strlen(p) > 13 && strspn(p, "0123456789abcdef") == 12 &&
	       p[12] == ' ') {
		const char *end = p + 13, *next;

		for (next = strstr(end, "; "); next != NULL;
		     next = strstr(next + 2, "; ")) {
			if (strspn(next + 2, "0123456789abcdef") == 12 &&
			    next[14] == ' ')
				break;
		}
		json_array_append_new(a, json_pack("{s:s%,s:s%}", "commit", p,
			(size_t)12, "subject", end, next != NULL
			? (size_t)(next - end) : strlen(end)));
		if (next == NULL)
			break;
		p = next + 2;
	}
	return a;
}

/* The suite's catalogue (agent/catalogue.h, written once for the agent,
 * this API, reports and docs/agent.md): what each test checks, what its
 * failure means, the upstream fixes it models. */
json_t *tests_catalogue_json(void)
{
	json_t *list = json_array();

#define CATALOGUE_ROW(name, fs, checks, failure, fixes)                      \
	json_array_append_new(list, json_pack("{s:s,s:o,s:s,s:s,s:o}",       \
		"name", name, "filesystems", word_array(fs), "checks", checks, \
		"failure", failure, "fixes", fix_array(fixes)));
	RCGATE_TEST_CATALOGUE(CATALOGUE_ROW)
#undef CATALOGUE_ROW
	return json_pack("{s:o}", "tests", list);
}

int h_tests(struct http_request *req, struct http_response *resp)
{
	(void)req;
	return http_json(resp, 200, tests_catalogue_json());
}

int h_targets(struct http_request *req, struct http_response *resp)
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
