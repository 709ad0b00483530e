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

/* A store in a new temporary directory (dir and db get their paths), or
 * NULL; test_store_free closes it and removes the directory. In
 * testutil_store.c, which needs the daemon's library. */
struct store;
struct store *test_store_new(char *dir, size_t dirlen, char *db, size_t dblen);
void test_store_free(struct store *, const char *dir);
/* Claims the next queued job (it must be of a release of want_version),
 * takes it through booting and running and finishes it with rows[0..n),
 * as a worker does: 0, or -1 with err. */
struct result_row;
int test_job_finish(struct store *, const char *want_version,
		    const struct result_row *rows, size_t n, char *err,
		    size_t errlen);

#endif
