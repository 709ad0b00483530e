/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * testutil_store.c - a real SQLite store in a fresh temporary directory,
 * for the unit tests that drive the store or the engine (testutil.h).
 */
#include <stdio.h>
#include <stdlib.h>

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
