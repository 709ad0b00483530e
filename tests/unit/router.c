/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for the route matcher in http.c and the API's route table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "http/http.h"

static const struct {
	const char *pattern, *path;
	int match;
	const char *p0, *p1;
} cases[] = {
	{ "/healthz", "/healthz", 1, NULL, NULL },
	{ "/healthz", "/healthz/", 0, NULL, NULL },
	{ "/api/v1/releases", "/api/v1/releases", 1, NULL, NULL },
	{ "/api/v1/releases/{version}", "/api/v1/releases/6.1.64-rc1", 1, "6.1.64-rc1", NULL },
	{ "/api/v1/releases/{version}", "/api/v1/releases/", 0, NULL, NULL },
	{ "/api/v1/releases/{version}", "/api/v1/releases", 0, NULL, NULL },
	{ "/api/v1/releases/{version}", "/api/v1/releases/a/b", 0, NULL, NULL },
	{ "/api/v1/jobs/{id}/log", "/api/v1/jobs/17/log", 1, "17", NULL },
	{ "/api/v1/jobs/{id}/log", "/api/v1/jobs/17/logs", 0, NULL, NULL },
	{ "/api/v1/jobs/{id}/log", "/api/v1/jobs//log", 0, NULL, NULL },
	{ "/a/{x}/b/{y}", "/a/1/b/2", 1, "1", "2" },
};

static void test_match(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[256];
		const char *params[4] = { NULL };
		int m;

		snprintf(buf, sizeof(buf), "%s", cases[i].path);
		m = http_route_match(cases[i].pattern, buf, params, 4);
		if (m != cases[i].match)
			fail_msg("case %zu: %s vs %s gave %d", i, cases[i].pattern,
				 cases[i].path, m);
		if (m && cases[i].p0 != NULL)
			assert_string_equal(params[0], cases[i].p0);
		if (m && cases[i].p1 != NULL)
			assert_string_equal(params[1], cases[i].p1);
	}
}

/* Every write route needs a token; no two routes share method+pattern. */
static void test_table(void **state)
{
	size_t n;
	const struct http_route *r = api_routes(&n);

	(void)state;
	assert_true(n >= 6);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(r[i].method, "GET") != 0)
			assert_true(r[i].scope == SCOPE_WRITE ||
				    r[i].scope == SCOPE_ADMIN);
		for (size_t k = i + 1; k < n; k++)
			assert_false(strcmp(r[i].method, r[k].method) == 0 &&
				     strcmp(r[i].pattern, r[k].pattern) == 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_table),
	};
	return cmocka_run_group_tests_name("router", tests, NULL, NULL);
}
