/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * testutil_store.c - a real SQLite store in a fresh temporary directory,
 * for the unit tests that drive the store (testutil.h), and the engine
 * fixture built on it (testutil_store.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "base/base.h"
#include "store/store.h"
#include "review/review.h"
#include "testutil.h"
#include "testutil_store.h"

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

int test_store_setup(void **state)
{
	struct test_store *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	f->st = test_store_new(f->dir, sizeof(f->dir), f->db, sizeof(f->db));
	*state = f;
	return f->st != NULL ? 0 : -1;
}

int test_store_teardown(void **state)
{
	struct test_store *f = *state;

	test_store_free(f->st, f->dir);
	free(f);
	return 0;
}

/* ---- the engine fixture (testutil_store.h) ---- */

static struct test_engine *current;

static void count_kick(void)
{
	current->kicks++;
}

struct test_engine *test_engine_new(const char *base_url)
{
	struct test_engine *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	f->st = test_store_new(f->dir, sizeof(f->dir), f->db, sizeof(f->db));
	if (f->st == NULL) {
		free(f);
		return NULL;
	}
	config_defaults(&f->cfg);
	f->cfg.reruns = 1;
	f->ectx = (struct engine_context){ &f->cfg, f->db, base_url, count_kick,
					    NULL, NULL };
	current = f;
	return f;
}

void test_engine_free(struct test_engine *f)
{
	if (f == NULL)
		return;
	test_store_free(f->st, f->dir);
	config_free(&f->cfg);
	if (current == f)
		current = NULL;
	free(f);
}

void test_engine_add_release(struct test_engine *f, const char *version)
{
	static const char sha[] =
		"4fdd0172a8c3f41a97e92465b2ac1867e1c10d82d7aeed3d26ee7a5d14df1754";
	struct artifact_in art = { "x86_64", "https://k.example/k.deb", sha,
				   "deb", NULL, NULL, 0, NULL, NULL, NULL };
	struct kversion kv;
	int64_t id;
	char err[256];

	assert_int_equal(kversion_parse(version, &kv, err, sizeof(err)), 0);
	assert_int_equal(store_release_create(f->st, version, &kv, NULL, &art, 1,
					      &id, err, sizeof(err)), 0);
}

void test_engine_finish_next(struct test_engine *f, const char *want_version,
			     const struct result_row *rows, size_t n)
{
	struct job job;

	test_engine_finish_job(f, want_version, rows, n, &job);
}

void test_engine_finish_job(struct test_engine *f, const char *want_version,
			    const struct result_row *rows, size_t n,
			    struct job *job)
{
	char err[256];

	assert_int_equal(store_job_claim(f->st, "w0", job, err, sizeof(err)), 1);
	assert_string_equal(job->version, want_version);
	assert_int_equal(store_job_transition(f->st, job->id, "fetching",
					      "booting", NULL, err, sizeof(err)), 1);
	assert_int_equal(store_job_transition(f->st, job->id, "booting",
					      "running", NULL, err, sizeof(err)), 1);
	assert_int_equal(store_job_done(f->st, job->id, rows, n, 1.0, err,
					sizeof(err)), 1);
}

int test_engine_run(struct test_engine *f)
{
	char err[512];
	int n = engine_run_once(f->st, &f->ectx, err, sizeof(err));

	if (n < 0)
		fail_msg("engine: %s", err);
	return n;
}

int test_store_add_regression(const struct test_store *f, long long id,
			      long long job_id)
{
	char sql[512];
	sqlite3 *raw;
	int rc;

	if (sqlite3_open(f->db, &raw) != SQLITE_OK) {
		sqlite3_close(raw);
		return -1;
	}
	snprintf(sql, sizeof(sql),
		 "INSERT INTO regression (id, signature, test, target, fs, state,"
		 " first_seen, updated) VALUES (%lld, 's', 'ext4.write_seq_4096',"
		 " 'x86_64', 'ext4', 'confirmed', 'x', 'x');"
		 "INSERT INTO occurrence (regression_id, release_id, job_id, runs,"
		 " fails, seen) SELECT %lld, release_id, id, 2, 2, 'x' FROM job"
		 " WHERE id = %lld;", id, id, job_id);
	rc = sqlite3_exec(raw, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
	sqlite3_close(raw);
	return rc;
}

void test_engine_sql(struct test_engine *f, const char *text)
{
	sqlite3 *raw;
	char *e = NULL;

	assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
	if (sqlite3_exec(raw, text, NULL, NULL, &e) != SQLITE_OK)
		fail_msg("%s: %s", text, e);
	sqlite3_close(raw);
}
