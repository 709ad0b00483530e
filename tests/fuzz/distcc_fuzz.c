/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libFuzzer target for what a build sends a build host through the relay
 * (daemon/build/distccwire.c): dcc_request_parse() on the bytes as they
 * arrive, then dcc_argv_check() of what it read and dcc_request_header()
 * of what the relay would send on.
 *
 * Input: the bytes of a connection, read in one piece.
 *
 * Beyond "no crash": a complete header lies inside the input, with 2..
 * DCC_ARGC_MAX arguments each within DCC_ARG_MAX and the source within
 * DCC_DOTI_MAX; re-encoded it has the same length and, but for the case
 * of hex digits, the same bytes; every prefix of it is "more"; an
 * accepted command line is printable ASCII, starts with an x86_64 gcc
 * name, and holds no '@' argument, -wrapper, -B or -fplugin.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "base/base.h"
#include "build/build.h"

static const char *const compilers[] = { "gcc", "x86_64-linux-gnu-gcc",
					 NULL };

static void check_accepted(const struct dcc_request *r)
{
	const char *a0 = r->argv[0];

	if (strncmp(a0, "/usr/bin/", 9) == 0)
		a0 += 9;
	check(strcmp(a0, "gcc") == 0 || strcmp(a0, "x86_64-linux-gnu-gcc") == 0);
	for (size_t i = 0; i < r->argc; i++) {
		const char *a = r->argv[i];

		check(strlen(a) == r->arglen[i] && r->arglen[i] > 0);
		for (size_t k = 0; k < r->arglen[i]; k++)
			check(a[k] >= 0x20 && a[k] < 0x7f);
		check(a[0] != '@');
		check(strcmp(a, "-wrapper") != 0);
		check(strncmp(a, "-B", 2) != 0);
		check(strncmp(a, "-fplugin", 8) != 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct dcc_request r;
	char why[256], *out;
	size_t used = 0, hl;
	int rc = dcc_request_parse(buf, size, &r, &used, why, sizeof(why));

	check(rc >= -1 && rc <= 1);
	if (rc != 1) {
		check(r.argc == 0);
		if (rc < 0)
			check(why[0] != '\0');
		return 0;
	}
	check(used <= size && used <= DCC_HEADER_MAX);
	check(r.argc >= 2 && r.argc <= DCC_ARGC_MAX && r.argv[r.argc] == NULL);
	check(r.doti_len <= DCC_DOTI_MAX);
	for (size_t i = 0; i < r.argc; i++)
		check(r.arglen[i] <= DCC_ARG_MAX);
	out = malloc(DCC_HEADER_MAX);
	check(out != NULL);
	hl = dcc_request_header(&r, out, DCC_HEADER_MAX);
	check(hl == used);
	for (size_t i = 0; i < hl; i++)
		check(out[i] == buf[i] || tolower((unsigned char)buf[i]) == out[i]);
	free(out);
	if (dcc_argv_check(r.argv, r.arglen, r.argc, compilers, why,
			   sizeof(why)) == 0)
		check_accepted(&r);
	else
		check(why[0] != '\0');
	dcc_request_free(&r);
	/* A prefix of a complete header is never complete nor wrong. */
	if (used > 0) {
		struct dcc_request p;

		check(dcc_request_parse(buf, used - 1, &p, &hl, why,
					sizeof(why)) == 0);
	}
	return 0;
}
