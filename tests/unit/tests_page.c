/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/http/tests_page.c (GET /tests): every catalogue
 * row of agent/catalogue.h is an entry with the anchor #<name> reports
 * link to, with its fixes; whatever a row holds is escaped, and a name
 * that is not a plain identifier never becomes an id.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/base.h"
#include "http/http.h"
#include "../../daemon/http/api_internal.h"
#include "../../agent/catalogue.h"

static void test_every_row_has_its_anchor(void **state)
{
	json_t *cat = tests_catalogue_json();
	size_t len, rows = 0;
	char *html, id[96];

	(void)state;
	assert_non_null(cat);
	html = tests_page_html(cat, &len);
	assert_non_null(html);
	assert_int_equal(strlen(html), len);
#define ROW(name, fs, checks, failure, fixes)                                \
	snprintf(id, sizeof(id), "<section class=\"test\" id=\"%s\">", name); \
	assert_non_null(strstr(html, id));                                   \
	rows++;
	RCGATE_TEST_CATALOGUE(ROW)
#undef ROW
	assert_int_equal(rows, json_array_size(json_object_get(cat, "tests")));
	/* write_seq names the 6.1.64 fix, as a commit and its subject. */
	assert_non_null(strstr(strstr(html, "id=\"write_seq\""),
			       "<li><code>936e114a245b</code> iomap: update ki_pos"));
	assert_null(strstr(html, "<script"));
	free(html);
	json_decref(cat);
}

static void test_hostile_rows_are_escaped(void **state)
{
	json_t *cat = json_pack(
		"{s:[{s:s,s:[s],s:s,s:s,s:[{s:s,s:s}]}, {s:s,s:[],s:s,s:s,s:[]}]}",
		"tests",
		"name", "<script>alert(1)</script>", "filesystems", "x\"fs",
		"checks", "a < b & c", "failure", "'quoted'",
		"fixes", "commit", "0123456789ab", "subject", "<b>bold</b>",
		"name", "ok_name", "filesystems", "checks", "fine", "failure",
		"fine", "fixes");
	size_t len;
	char *html;

	(void)state;
	assert_non_null(cat);
	html = tests_page_html(cat, &len);
	assert_non_null(html);
	assert_null(strstr(html, "<script>"));
	assert_null(strstr(html, "<b>"));
	assert_non_null(strstr(html, "<h2>&lt;script&gt;alert(1)&lt;/script&gt;</h2>"));
	assert_non_null(strstr(html, "x&quot;fs"));
	assert_non_null(strstr(html, "a &lt; b &amp; c"));
	assert_non_null(strstr(html, "&apos;quoted&apos;"));
	assert_non_null(strstr(html, "&lt;b&gt;bold&lt;/b&gt;"));
	/* Only the plain name became an anchor. */
	assert_non_null(strstr(html, "id=\"ok_name\""));
	assert_null(strstr(html, "id=\"&lt;"));
	assert_non_null(strstr(html, "none yet"));
	free(html);
	json_decref(cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_row_has_its_anchor),
		cmocka_unit_test(test_hostile_rows_are_escaped),
	};

	return cmocka_run_group_tests_name("tests_page", tests, NULL, NULL);
}
