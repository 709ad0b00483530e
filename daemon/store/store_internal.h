/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * store_internal.h - what the files of store/ share and nothing else
 * includes: the connection, the transaction and statement helpers.
 *
 *   store.c         open, migrate, check; transactions; tokens
 *   store_read.c    the named read queries and typed rows
 *   store_jobs.c    releases and the job state machine
 *   store_review.c  regressions, bisections, reports, mail, outbox
 */
#ifndef RCGATE_STORE_INTERNAL_H
#define RCGATE_STORE_INTERNAL_H

#include <stdarg.h>

#include <jansson.h>
#include <sqlite3.h>

#include "base/base.h"
#include "store/store.h"

struct store {
	sqlite3 *db;
	/* The read queries, prepared once per connection (a prepare costs
	 * more than most of these queries run). */
	sqlite3_stmt *cached[Q_COUNT];
};

/* Where a column of a query goes in a typed row: 's' const char *, 'i'
 * int64_t, 'l' long, 'n' int, 'd' double. */
struct column {
	const char *name;
	size_t offset;
	char type;
};
#define COL(row, field, type) { #field, offsetof(struct row, field), type }

/* A job's source as the claim and the job's page read it: its artifact's
 * (a, joined on j.artifact_id), except for a bisection step or revert
 * check of an rc whose kernels were not built from git (CI posted them):
 * those build from the bisection's tree (bisect.c fetched it and checked
 * its branch head), as a git job with nothing else of the artifact.
 * JOB_SRC_JOIN goes after the artifact's join; the claim reads the
 * columns in JOB_SRC_COLS' order. */
#define JOB_SRC_JOIN \
	" LEFT JOIN bisection pb ON pb.id = j.bisection_id AND a.kind != 'git'"
#define JOB_SRC(col, posted, as) \
	" CASE WHEN pb.id IS NULL THEN a." col " ELSE " posted " END AS " as
#define JOB_SRC_COLS \
	JOB_SRC("url", "pb.tree", "url") "," JOB_SRC("sha256", "''", "sha256") \
	"," JOB_SRC("kind", "'git'", "kind") "," \
	JOB_SRC("modules_url", "NULL", "modules_url") "," \
	JOB_SRC("modules_sha256", "NULL", "modules_sha256") "," \
	JOB_SRC("custom = 1", "0", "custom") "," \
	JOB_SRC("patch_url", "NULL", "patch_url") "," \
	JOB_SRC("patch_sha256", "NULL", "patch_sha256") "," \
	JOB_SRC("git_ref", "NULL", "git_ref")

/* Bisection row b (an SQL name) is a follower (017-bisect-lead.sql) whose
 * revert check failed: the culprit it took does not explain its failure,
 * so it bisects on its own (BISECT_NOT_YET counts it as not bisected,
 * store_bisect_lead does not offer that lead again, BISECT_REFOLLOW takes
 * the row over). Never NULL. */
#define BISECT_UNEXPLAINED(b) \
	"(" b ".lead IS NOT NULL AND " b ".revert_state IS 'fail')"

/* Runs one statement with bound arguments to completion. */
int store_run(struct store *st, const char *sql, char *err, size_t errlen,
	       const char *types, ...);

int store_begin(struct store *st, char *err, size_t errlen);

int store_commit(struct store *st, char *err, size_t errlen);

void store_rollback(struct store *st);

sqlite3_stmt *store_prepare(struct store *st, const char *sql, char *err,
			     size_t errlen);

int store_bind_args(sqlite3_stmt *stmt, const char *types, va_list ap);

long store_col_long(json_t *row, const char *key);

void store_copy_col(char *dst, size_t len, sqlite3_stmt *stmt, int col);

int store_regression_event(struct store *st, int64_t id, const char *state,
			    const char *message, char *err, size_t errlen);

int64_t store_release_id_of(struct store *st, const char *version);

int store_fail(struct store *st, const char *what, char *err,
		      size_t errlen);
#endif /* RCGATE_STORE_INTERNAL_H */
