/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * testutil_store.h - the store+engine fixture of the unit tests that drive
 * the engine as the daemon does (engine.c, reply.c): a real store in a
 * fresh directory, default config with one rerun, releases of one x86_64
 * kernel, jobs finished with the store's own write functions. In
 * testutil_store.c; failures fail the calling cmocka test.
 */
#ifndef RCGATE_TESTUTIL_STORE_H
#define RCGATE_TESTUTIL_STORE_H

#include "base/base.h"
#include "store/store.h"
#include "review/review.h"

struct test_engine {
	char dir[64];
	char db[128];
	struct store *st;
	struct config cfg;
	struct engine_context ectx;	/* base_url as given, jobs_queued counts */
	int kicks;			/* jobs_queued calls */
};

/* A new fixture (test_engine_free frees it), or NULL. One at a time: the
 * kick counter is global, as the engine's callback has no argument. */
struct test_engine *test_engine_new(const char *base_url);
void test_engine_free(struct test_engine *);

/* A release with one x86_64 deb kernel, queued. */
void test_engine_add_release(struct test_engine *, const char *version);

/* Claims the next queued job (of want_version), runs it through booting
 * and running, and finishes it with rows. */
void test_engine_finish_next(struct test_engine *, const char *want_version,
			     const struct result_row *rows, size_t n);
/* The same, and says which job it was (a rerun's only_tests, say). */
void test_engine_finish_job(struct test_engine *, const char *want_version,
			    const struct result_row *rows, size_t n,
			    struct job *claimed);

/* Runs text (SQL statements) on the fixture's database by a connection
 * of its own, as another process would; an error fails the test. */
void test_engine_sql(struct test_engine *, const char *text);

/* One engine pass; an error fails the test. Returns its count. */
int test_engine_run(struct test_engine *);

#endif /* RCGATE_TESTUTIL_STORE_H */
