/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libFuzzer target for the request values the daemon parses itself:
 * http_range_parse() (the Range header of job logs, daemon/http.c) and
 * parse_long() (daemon/util.c), which the API applies to query values such
 * as ?limit= and ?offset= and to {id} path segments.
 *
 * Input: "<body length> <value>", e.g. "4096 bytes=0-99"; without leading
 * digits the body is 4096 bytes. The value is what the client sent
 * (a C string, as libmicrohttpd hands it over).
 *
 * Beyond "no crash": an accepted range lies inside the body, and for
 * values made only of digits and '-' the result must equal what RFC 9110's
 * byte ranges say, computed here independently of strtol.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "base/base.h"
#include "http/http.h"

#define MAX_PAGE 200	/* the API's largest ?limit= (api_internal.h) */

/* s[0..n) as a decimal of 1..18 digits (no sign, no blanks); false if not. */
static bool plain_decimal(const char *s, size_t n, unsigned long long *out)
{
	unsigned long long v = 0;

	if (n == 0 || n > 18)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned long long)(s[i] - '0');
	}
	*out = v;
	return true;
}

/*
 * The expected answer for "bytes=<spec>" when spec is "A-B", "A-" or "-N"
 * with plain decimals: returns false if spec is not of that simple form
 * (the parser's answer is then only checked for consistency).
 */
static bool expected_range(const char *spec, size_t len, int *rc,
			   size_t *from, size_t *to)
{
	const char *dash = strchr(spec, '-');
	unsigned long long a, b;
	size_t alen, blen;

	if (dash == NULL || strchr(dash + 1, '-') != NULL)
		return false;
	alen = (size_t)(dash - spec);
	blen = strlen(dash + 1);
	*rc = -1;
	if (alen == 0) {
		if (!plain_decimal(dash + 1, blen, &b))
			return false;
		if (len > 0 && b > 0) {
			*rc = 0;
			*from = b >= len ? 0 : len - (size_t)b;
			*to = len - 1;
		}
		return true;
	}
	if (!plain_decimal(spec, alen, &a))
		return false;
	if (blen == 0) {
		b = ULLONG_MAX;
	} else if (!plain_decimal(dash + 1, blen, &b)) {
		return false;
	} else if (b < a) {
		return true;
	}
	if (len > 0 && a < len) {
		*rc = 0;
		*from = (size_t)a;
		*to = b >= len ? len - 1 : (size_t)b;
	}
	return true;
}

static void fuzz_range(const char *h, size_t len)
{
	size_t from = (size_t)-1, to = (size_t)-1, efrom = 0, eto = 0;
	int rc = http_range_parse(h, len, &from, &to), erc;

	check(rc == 0 || rc == -1);
	if (rc == 0) {
		/* send_response() memmoves body[from..to]. */
		check(len > 0 && from <= to && to < len);
		check(strncmp(h, "bytes=", 6) == 0 && strchr(h, ',') == NULL);
	}
	if (strncmp(h, "bytes=", 6) == 0 &&
	    expected_range(h + 6, len, &erc, &efrom, &eto)) {
		check(rc == erc);
		if (rc == 0)
			check(from == efrom && to == eto);
	}
}

static void fuzz_long(const char *v, long min, long max)
{
	unsigned long long want;
	long got = LONG_MIN;
	int rc = parse_long(v, min, max, &got);

	check(rc == 0 || rc == -1);
	if (rc == 0)
		check(got >= min && got <= max);
	if (plain_decimal(v, strlen(v), &want))
		check(rc == ((want >= (unsigned long long)min &&
			      want <= (unsigned long long)max) ? 0 : -1) &&
		      (rc < 0 || (unsigned long long)got == want));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len = 4096, i = 0;
	char *text;

	text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (size > 0 && text[0] >= '0' && text[0] <= '9') {
		len = 0;
		/* Bodies are capped at 4 MiB (MAX_LOG_BYTES); allow more. */
		while (text[i] >= '0' && text[i] <= '9' && len < (64u << 20))
			len = len * 10 + (size_t)(text[i++] - '0');
		while (text[i] >= '0' && text[i] <= '9')
			i++;
		if (text[i] == ' ')
			i++;
	}
	fuzz_range(text + i, len);
	fuzz_long(text + i, 0, MAX_PAGE);	/* ?limit= */
	fuzz_long(text + i, 0, LONG_MAX);	/* ?offset= */
	fuzz_long(text + i, 1, LONG_MAX);	/* {id} */
	free(text);
	return 0;
}
