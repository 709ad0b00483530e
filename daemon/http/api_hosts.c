/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * api_hosts.c - GET /api/v1/hosts (schemas/hosts.json) and the hosts'
 * lines of /metrics: what hosts.c knows of each hypervisor host now (not
 * the store's: never cached).
 */
#include <jansson.h>
#include <glib.h>

#include "api_internal.h"
#include "base/base.h"
#include "guests/guests.h"
#include "http/http.h"

/* "a b" -> ["a","b"] */
static json_t *word_list(const char *s)
{
	json_t *a = json_array();

	for (const char *p = s; *p != '\0';) {
		size_t n;

		p += strspn(p, " ,");
		n = strcspn(p, " ,");
		if (n > 0)
			json_array_append_new(a, json_stringn(p, n));
		p += n;
	}
	return a;
}

int h_hosts(struct http_request *req, struct http_response *resp)
{
	struct host_status st[HOSTS_MAX];
	size_t n = hosts_status(st, HOSTS_MAX);
	json_t *list = json_array();

	(void)req;
	for (size_t i = 0; i < n; i++) {
		const struct host_status *s = &st[i];

		json_array_append_new(list, json_pack(
			"{s:s, s:s, s:b, s:s, s:s, s:s?, s:I, s:I, s:I, s:o, s:o,"
			" s:s, s:I, s:I}",
			"name", s->name, "uri", s->uri, "local", s->local,
			"state", s->state, "since", s->since,
			"error", s->error[0] ? s->error : NULL,
			"capacity", (json_int_t)s->capacity,
			"jobs", (json_int_t)s->jobs,
			"guests", (json_int_t)s->guests,
			"kvm", word_list(s->kvm), "tcg", word_list(s->tcg),
			"accel", s->auto_accel ? "auto" : "configured",
			"placed", (json_int_t)s->placed,
			"failures", (json_int_t)s->failures));
	}
	resp->no_etag = 1;
	return http_json(resp, 200, json_pack("{s:o}", "hosts", list));
}

/* Host names are [A-Za-z0-9._-] (hosts.c): no label escaping needed. */
void api_hosts_metrics(GString *out)
{
	struct host_status st[HOSTS_MAX];
	size_t n = hosts_status(st, HOSTS_MAX);
	static const struct {
		const char *name, *help, *type;
	} m[] = {
		{ "rcgate_host_up", "1 if the host is connected and takes jobs.", "gauge" },
		{ "rcgate_host_capacity", "Guests the host runs at once.", "gauge" },
		{ "rcgate_host_jobs", "Jobs placed on the host now.", "gauge" },
		{ "rcgate_host_guests", "Guests running on the host now.", "gauge" },
		{ "rcgate_host_failures_total", "Times the host failed (marked down).", "counter" },
		{ "rcgate_host_placed_total", "Job attempts placed on the host.", "counter" },
	};

	for (size_t k = 0; k < sizeof(m) / sizeof(m[0]); k++) {
		g_string_append_printf(out, "# HELP %s %s\n# TYPE %s %s\n",
				       m[k].name, m[k].help, m[k].name,
				       m[k].type);
		for (size_t i = 0; i < n; i++) {
			const struct host_status *s = &st[i];
			long v = k == 0 ? strcmp(s->state, "up") == 0
				: k == 1 ? s->capacity : k == 2 ? s->jobs
				: k == 3 ? s->guests : k == 4
				? (long)s->failures : (long)s->placed;

			g_string_append_printf(out, "%s{host=\"%s\"} %ld\n",
					       m[k].name, s->name, v);
		}
	}
}
