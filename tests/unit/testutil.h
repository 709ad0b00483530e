/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * testutil.h - what the unit tests share: reading the golden files under
 * tests/data/. They are found through $RCGATE_SRCDIR (make check sets it),
 * else from the current directory. Built into tests/unit/libtestutil.a;
 * failures fail the calling cmocka test.
 */
#ifndef RCGATE_TESTUTIL_H
#define RCGATE_TESTUTIL_H

#include <stddef.h>

/* "<srcdir>/tests/data/<dir>/<name>" into path[size]. */
void test_data_path(char *path, size_t size, const char *dir,
		    const char *name);

/*
 * The whole file at path, NUL-terminated (in exactly *len + 1 bytes, so
 * ASan sees a read past the end); *len may be NULL. The caller frees it.
 */
char *test_file_read(const char *path, size_t *len);

/* test_file_read of tests/data/<dir>/<name>. */
char *test_data_read(const char *dir, const char *name, size_t *len);

/* The test's own command (git setting up a fixture), outside any
 * sandbox: fixed arguments, no shell, its output to /dev/null; a
 * failure to run or a nonzero exit fails the test. */
void test_run(const char *const argv[]);

/* The commit ref names in the repository gitdir (git rev-parse), 40 hex
 * digits into out; a failure fails the test. */
void test_git_rev(const char *gitdir, const char *ref, char out[41]);

/* A store in a new temporary directory (dir and db get their paths), or
 * NULL; test_store_free closes it and removes the directory. In
 * testutil_store.c, which needs the daemon's library. */
struct store;
struct store *test_store_new(char *dir, size_t dirlen, char *db, size_t dblen);
void test_store_free(struct store *, const char *dir);

/* A cmocka fixture of one such store: test_store_setup and
 * test_store_teardown as a test's setup and teardown, *state the
 * struct test_store. */
struct test_store {
	char dir[64];
	char db[128];
	struct store *st;
};
int test_store_setup(void **state);
int test_store_teardown(void **state);
/* A confirmed regression (ext4.write_seq_4096 on x86_64) with id, seen
 * twice in two runs of job_id's release on that job, written with SQL
 * as the engine would leave it; 0, or -1. */
int test_store_add_regression(const struct test_store *f, long long id,
			      long long job_id);

#endif
