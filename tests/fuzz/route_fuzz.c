/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libFuzzer target for http_route_match() (daemon/http.c). The input is a
 * request path, matched against every pattern of the API's route table as
 * dispatch() does; an input with a newline is "pattern\npath" and is also
 * matched against that pattern, since the matcher's contract does not
 * depend on the table. On a match, the captures must be non-empty single
 * path segments inside the buffer, exactly one per {name}, never more than
 * maxparams, and putting them back into the pattern must give the path.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "http/http.h"

#define MAXPARAMS 4

/* The pattern with each {name} replaced by its capture equals path. */
static void check_match(const char *pattern, const char *path, const char *buf,
			size_t buflen, const char **params)
{
	const char *p = pattern, *s = path;
	size_t np = 0;

	while (*p != '\0') {
		if (*p == '{') {
			const char *close = strchr(p, '}');
			size_t n;

			check(close != NULL && np < MAXPARAMS);
			check(params[np] >= buf && params[np] < buf + buflen);
			n = strlen(params[np]);
			check(n > 0 && memchr(params[np], '/', n) == NULL);
			check(strncmp(s, params[np], n) == 0);
			s += n;
			np++;
			p = close + 1;
			continue;
		}
		check(*s == *p);
		p++;
		s++;
	}
	check(*s == '\0');
	for (size_t i = np; i < MAXPARAMS; i++)
		check(params[i] == NULL);
}

static void match_one(const char *pattern, const char *path, size_t len)
{
	const char *params[MAXPARAMS + 1] = { NULL };
	const char *guard = "guard";
	char *buf = malloc(len + 1);

	if (buf == NULL)
		return;
	memcpy(buf, path, len + 1);
	params[MAXPARAMS] = guard;
	if (http_route_match(pattern, buf, params, MAXPARAMS) == 1)
		check_match(pattern, path, buf, len + 1, params);
	check(params[MAXPARAMS] == guard);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct http_route *routes;
	const char *matched = NULL;
	size_t nroutes;
	char *text, *nl;

	/* A URL from libmicrohttpd is a C string: cut at the first NUL. */
	text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	routes = api_routes(&nroutes);
	for (size_t i = 0; i < nroutes; i++) {
		const char *params[MAXPARAMS] = { NULL };
		char *buf = strdup(text);

		if (buf == NULL)
			break;
		if (http_route_match(routes[i].pattern, buf, params,
				     MAXPARAMS) == 1) {
			/* dispatch() takes the first match: a path claimed
			 * by two patterns would hide the later route. */
			check(matched == NULL ||
			      strcmp(matched, routes[i].pattern) == 0);
			matched = routes[i].pattern;
			/* A path without captures matches only itself. */
			if (strchr(routes[i].pattern, '{') == NULL)
				check(strcmp(routes[i].pattern, text) == 0);
		}
		free(buf);
		match_one(routes[i].pattern, text, strlen(text));
	}

	nl = strchr(text, '\n');
	if (nl != NULL) {
		*nl = '\0';
		match_one(text, nl + 1, strlen(nl + 1));
	}
	free(text);
	return 0;
}
