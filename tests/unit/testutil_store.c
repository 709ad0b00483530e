/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * testutil_store.c - a real SQLite store in a fresh temporary directory,
 * for the unit tests that drive the store or the engine (testutil.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "store/store.h"
#include "testutil.h"

struct store *test_store_new(char *dir, size_t dirlen, char *db, size_t dblen)
{
	char err[256];
	struct store *st;

	snprintf(dir, dirlen, "/tmp/rcgate-test-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return NULL;
	snprintf(db, dblen, "%s/t.db", dir);
	st = store_open(db, err, sizeof(err));
	if (st == NULL)
		fprintf(stderr, "test store: %s\n", err);
	return st;
}

void test_store_free(struct store *st, const char *dir)
{
	store_close(st);
	rm_rf(dir);
}

int test_job_finish(struct store *st, const char *want_version,
		    const struct result_row *rows, size_t n, char *err,
		    size_t errlen)
{
	struct job job;

	if (store_job_claim(st, "w0", &job, err, errlen) != 1) {
		snprintf(err, errlen, "no job to claim");
		return -1;
	}
	if (strcmp(job.version, want_version) != 0) {
		snprintf(err, errlen, "claimed a job of %s, expected %s",
			 job.version, want_version);
		return -1;
	}
	if (store_job_transition(st, job.id, "fetching", "booting", NULL, err,
				 errlen) != 1 ||
	    store_job_transition(st, job.id, "booting", "running", NULL, err,
				 errlen) != 1 ||
	    store_job_done(st, job.id, rows, n, 1.0, err, errlen) != 1)
		return -1;
	return 0;
}
