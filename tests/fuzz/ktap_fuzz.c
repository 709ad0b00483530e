/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libFuzzer target for daemon/ktap.c. Besides "no crash, no leak" it checks
 * the report's invariants, since a parser that returns garbage quietly is
 * worse than one that crashes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "artifact/artifact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ktap_report r;
	int rc = ktap_parse((const char *)data, size, &r);
	size_t leaves = 0;

	check(rc == 0 || rc == -1);
	check((rc == 0) == (r.error == NULL));
	check(r.complete == (rc == 0));
	check(r.nresults <= KTAP_MAX_RESULTS);
	for (size_t i = 0; i < r.nresults; i++) {
		const struct ktap_result *res = &r.results[i];

		check(res->path != NULL && res->path[0] != '\0');
		check(res->depth >= 0 && res->depth <= KTAP_MAX_DEPTH);
		check(res->status >= KTAP_PASS && res->status <= KTAP_XFAIL);
		if (res->diagnostic != NULL)
			check(strlen(res->diagnostic) < KTAP_MAX_DIAG_BYTES);
		if (!res->is_suite)
			leaves++;
	}
	check((size_t)(ktap_count(&r, KTAP_PASS) + ktap_count(&r, KTAP_FAIL) +
		       ktap_count(&r, KTAP_SKIP) +
		       ktap_count(&r, KTAP_XFAIL)) == leaves);
	if (rc == 0) {
		check(r.infra_reason == NULL);
		check(r.marker_fail == ktap_count(&r, KTAP_FAIL));
		check(r.marker_skip == ktap_count(&r, KTAP_SKIP));
	}
	ktap_report_free(&r);
	check(r.results == NULL && r.error == NULL && r.nresults == 0);
	return 0;
}
