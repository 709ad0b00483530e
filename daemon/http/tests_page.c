/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tests_page.c - GET /tests: the suite's catalogue as one HTML page, an
 * entry per test with the anchor #<name> (reports and replies link a
 * failing test's entry as <public_url>/tests#<name>, the catalogue row's
 * name: write_seq for write_seq_4096). Made on the server from the same
 * JSON as GET /api/v1/tests, every text escaped, no script: the anchor
 * works in any browser and in a mail client's link preview.
 */
#include <string.h>

#include <glib.h>
#include <jansson.h>

#include "base/base.h"
#include "http/http.h"
#include "api_internal.h"

static void put_escaped(GString *out, const char *s)
{
	char *esc = g_markup_escape_text(s != NULL ? s : "", -1);

	g_string_append(out, esc);
	g_free(esc);
}

/* A row name is an anchor only if it is a plain identifier: the catalogue
 * is ours, but the page must stay valid whatever a row holds. */
static int plain_name(const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	return n > 0 && n < 64 &&
		strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

static void put_entry(GString *out, json_t *t)
{
	const char *name = json_string_value(json_object_get(t, "name"));
	json_t *fs = json_object_get(t, "filesystems");
	json_t *fixes = json_object_get(t, "fixes"), *v;
	size_t i;

	if (plain_name(name))
		g_string_append_printf(out, "<section class=\"test\" id=\"%s\">\n"
				       "<h2><a href=\"#%s\">%s</a></h2>\n",
				       name, name, name);
	else {
		g_string_append(out, "<section class=\"test\">\n<h2>");
		put_escaped(out, name);
		g_string_append(out, "</h2>\n");
	}
	g_string_append(out, "<dl>\n<dt>Filesystems</dt><dd>");
	json_array_foreach(fs, i, v) {
		if (i > 0)
			g_string_append_c(out, ' ');
		put_escaped(out, json_string_value(v));
	}
	g_string_append(out, "</dd>\n<dt>Checks</dt><dd>");
	put_escaped(out, json_string_value(json_object_get(t, "checks")));
	g_string_append(out, "</dd>\n<dt>A failure means</dt><dd>");
	put_escaped(out, json_string_value(json_object_get(t, "failure")));
	g_string_append(out, "</dd>\n<dt>Upstream fixes it models</dt><dd>");
	if (json_array_size(fixes) == 0)
		g_string_append(out, "none yet");
	else {
		g_string_append(out, "<ul>");
		json_array_foreach(fixes, i, v) {
			g_string_append(out, "<li><code>");
			put_escaped(out, json_string_value(json_object_get(v, "commit")));
			g_string_append(out, "</code> ");
			put_escaped(out, json_string_value(json_object_get(v, "subject")));
			g_string_append(out, "</li>");
		}
		g_string_append(out, "</ul>");
	}
	g_string_append(out, "</dd>\n</dl>\n</section>\n");
}

char *tests_page_html(json_t *catalogue, size_t *len)
{
	GString *out = g_string_new(
		"<!DOCTYPE html>\n<!-- SPDX-License-Identifier: GPL-2.0-only -->\n"
		"<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"
		" style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'\">\n"
		"<meta name=\"referrer\" content=\"no-referrer\">\n"
		"<title>rcgate: the test catalogue</title>\n"
		"<link rel=\"icon\" href=\"/web/favicon.svg\" type=\"image/svg+xml\">\n"
		"<link rel=\"stylesheet\" href=\"/web/style.css\">\n</head>\n<body>\n"
		"<header class=\"top\"><a class=\"brand\" href=\"/#/\">"
		"<img src=\"/web/favicon.svg\" alt=\"\" width=\"24\" height=\"24\"> rcgate</a></header>\n"
		"<main id=\"main\" class=\"catalogue\">\n<h1>The test catalogue</h1>\n"
		"<p>Every test of rcgate's in-guest direct-I/O suite: where it runs,"
		" what it checks, what its failure means for a user of the kernel,"
		" and the upstream fixes of the bugs it models. A test named"
		" <code>&lt;fs&gt;.&lt;name&gt;_&lt;block size&gt;</code> in a report"
		" is the entry <code>&lt;name&gt;</code>. As JSON:"
		" <a href=\"/api/v1/tests\">/api/v1/tests</a>.</p>\n");
	json_t *tests = json_object_get(catalogue, "tests"), *t;
	size_t i;
	char *ret;

	json_array_foreach(tests, i, t)
		put_entry(out, t);
	g_string_append(out, "</main>\n</body>\n</html>\n");
	*len = out->len;
	/* GLib's allocator is malloc's: http_text() frees it with free(). */
	ret = g_string_free(out, FALSE);
	return ret;
}

int h_tests_page(struct http_request *req, struct http_response *resp)
{
	json_t *catalogue = tests_catalogue_json();
	size_t len;
	char *body;

	(void)req;
	if (catalogue == NULL)
		return http_error(resp, 500, "out of memory");
	body = tests_page_html(catalogue, &len);
	json_decref(catalogue);
	return http_text(resp, 200, "text/html; charset=utf-8", body, len);
}
