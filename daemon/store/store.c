/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * store.c - owns the SQLite database: the only folder whose files include
 * sqlite3.h. WAL mode, foreign keys, migrations compiled in from
 * schemas/sql/ and tracked with PRAGMA user_version, every statement
 * prepared with bound parameters, every state change one transaction.
 * This file: opening, migrating and checking a database, the transaction
 * and statement helpers (store_internal.h), tokens.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "base/base.h"
#include "store/store.h"
#include "store_internal.h"
#include "store_migrations.h"


/* Bumped after every commit of any store in this process (the WAL hook
 * runs once the commit is durable and visible): what the HTTP layer's
 * response cache keys on. */
static _Atomic uint64_t generation = 1;

uint64_t store_generation(void)
{
	return atomic_load(&generation);
}

/* The WAL hook replaces SQLite's automatic checkpoint (setting one clears
 * the other), so it checkpoints as the default does, at 1000 pages. */
static int on_commit(void *arg, sqlite3 *db, const char *name, int pages)
{
	(void)arg;
	atomic_fetch_add(&generation, 1);
	if (pages >= 1000)
		sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE,
					  NULL, NULL);
	return SQLITE_OK;
}

int store_fail(struct store *st, const char *what, char *err,
		      size_t errlen)
{
	errf(err, errlen, "sqlite: %s: %s", what, sqlite3_errmsg(st->db));
	return -1;
}

static int exec_sql(struct store *st, const char *sql, char *err,
		    size_t errlen)
{
	char *msg = NULL;

	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		errf(err, errlen, "sqlite: %s", msg != NULL ? msg : "exec failed");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

int store_begin(struct store *st, char *err, size_t errlen)
{
	/* IMMEDIATE takes the write lock up front, so two workers claiming
	 * jobs serialise instead of failing on lock upgrade. */
	return exec_sql(st, "BEGIN IMMEDIATE", err, errlen);
}

int store_commit(struct store *st, char *err, size_t errlen)
{
	return exec_sql(st, "COMMIT", err, errlen);
}

void store_rollback(struct store *st)
{
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

sqlite3_stmt *store_prepare(struct store *st, const char *sql, char *err,
			     size_t errlen)
{
	sqlite3_stmt *stmt = NULL;

	if (sqlite3_prepare_v2(st->db, sql, -1, &stmt, NULL) != SQLITE_OK) {
		store_fail(st, "prepare", err, errlen);
		return NULL;
	}
	return stmt;
}

static int user_version(struct store *st)
{
	sqlite3_stmt *stmt;
	int v = -1;

	stmt = store_prepare(st, "PRAGMA user_version", NULL, 0);
	if (stmt == NULL)
		return -1;
	if (sqlite3_step(stmt) == SQLITE_ROW)
		v = sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);
	return v;
}

int store_schema_version(struct store *st)
{
	return user_version(st);
}

/* After a migration, before its commit: no row may point at a row that
 * is not there (migrations run with foreign keys off, so that one can
 * make a table again; SQLite's procedure for changing a constraint). */
static int foreign_keys_ok(struct store *st, char *err, size_t errlen)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, "PRAGMA foreign_key_check", -1, &s,
			       NULL) != SQLITE_OK)
		return store_fail(st, "foreign_key_check", err, errlen);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		errf(err, errlen, "foreign key broken: a row of %s points at"
		     " a missing row of %s", sqlite3_column_text(s, 0),
		     sqlite3_column_text(s, 2));
	else if (rc != SQLITE_DONE)
		store_fail(st, "foreign_key_check", err, errlen);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int migrate(struct store *st, char *err, size_t errlen)
{
	int current = user_version(st);

	if (current < 0)
		return store_fail(st, "read user_version", err, errlen);
	if (current > migrations[migration_count - 1].version) {
		errf(err, errlen,
		     "database schema %d is newer than this rcgated (%d)",
		     current, migrations[migration_count - 1].version);
		return -1;
	}
	for (unsigned i = 0; i < migration_count; i++) {
		char pragma[64];

		if (migrations[i].version <= current)
			continue;
		if (store_begin(st, err, errlen) < 0)
			return -1;
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d",
			 migrations[i].version);
		if (exec_sql(st, migrations[i].sql, err, errlen) < 0 ||
		    exec_sql(st, pragma, err, errlen) < 0 ||
		    foreign_keys_ok(st, err, errlen) < 0) {
			size_t len = strlen(err);

			store_rollback(st);
			snprintf(err + len, errlen - len, " (migration %s)",
				 migrations[i].name);
			return -1;
		}
		if (store_commit(st, err, errlen) < 0) {
			store_rollback(st);
			return -1;
		}
		log_info("store: applied migration %s", migrations[i].name);
	}
	return 0;
}

int store_check(const char *path, char *err, size_t errlen)
{
	struct stat sb;
	sqlite3 *db = NULL;
	sqlite3_stmt *stmt = NULL;
	const char *verdict;
	int rc = -1;

	if (stat(path, &sb) < 0)
		return errno == ENOENT ? 0 : (errf(err, errlen, "%s: %s", path,
						   strerror(errno)), -1);
	if (!S_ISREG(sb.st_mode)) {
		errf(err, errlen, "database %s is not a regular file", path);
		return -1;
	}
	/* SQLite takes an empty file for a new database: the tokens, the
	 * releases and the regressions would silently be gone. */
	if (sb.st_size == 0) {
		errf(err, errlen, "database %s is empty (0 bytes), not a new one:"
		     " refusing to create a database over it (move it away to"
		     " start afresh, or restore a backup)", path);
		return -1;
	}
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &stmt, NULL) !=
		    SQLITE_OK ||
	    sqlite3_step(stmt) != SQLITE_ROW) {
		errf(err, errlen, "database %s cannot be read: %s (restore a"
		     " backup)", path, db != NULL ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	verdict = (const char *)sqlite3_column_text(stmt, 0);
	if (verdict == NULL || strcmp(verdict, "ok") != 0) {
		errf(err, errlen, "database %s is corrupt (%.200s): restore a"
		     " backup", path, verdict != NULL ? verdict : "?");
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	return rc;
}

int store_instance_id(struct store *st, char *out, size_t len, char *err,
		      size_t errlen)
{
	unsigned char raw[4];
	char fresh[9];
	sqlite3_stmt *stmt;
	int rc = -1;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		errf(err, errlen, "getrandom: %s", strerror(errno));
		return -1;
	}
	snprintf(fresh, sizeof(fresh), "%02x%02x%02x%02x", raw[0], raw[1],
		 raw[2], raw[3]);
	if (store_run(st, "INSERT OR IGNORE INTO meta (key, value) VALUES"
		    " ('instance', ?)", err, errlen, "s", fresh) < 0)
		return -1;
	stmt = store_prepare(st, "SELECT value FROM meta WHERE key = 'instance'", err,
		       errlen);
	if (stmt == NULL)
		return -1;
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		snprintf(out, len, "%s", (const char *)sqlite3_column_text(stmt, 0));
		rc = 0;
	} else {
		store_fail(st, "read instance id", err, errlen);
	}
	sqlite3_finalize(stmt);
	return rc;
}

struct store *store_open(const char *path, char *err, size_t errlen)
{
	struct store *st = calloc(1, sizeof(*st));

	if (st == NULL) {
		errf(err, errlen, "out of memory");
		return NULL;
	}
	if (sqlite3_open_v2(path, &st->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				    SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		errf(err, errlen, "sqlite: open %s: %s", path,
		     st->db != NULL ? sqlite3_errmsg(st->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(st->db, 10000);
	sqlite3_extended_result_codes(st->db, 1);
	/* synchronous = FULL: a store_commit (and so a 201) has reached the disk
	 * before it is answered, and survives a power cut (rcgated(8)). */
	if (exec_sql(st, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = OFF;"
			 " PRAGMA synchronous = FULL; PRAGMA cache_size = -256;",
			 err, errlen) < 0)
		goto fail;
	if (migrate(st, err, errlen) < 0 ||
	    exec_sql(st, "PRAGMA foreign_keys = ON;", err, errlen) < 0)
		goto fail;
	sqlite3_wal_hook(st->db, on_commit, NULL);
	return st;
fail:
	sqlite3_close(st->db);
	free(st);
	return NULL;
}

void store_close(struct store *st)
{
	if (st == NULL)
		return;
	for (int q = 0; q < Q_COUNT; q++)
		sqlite3_finalize(st->cached[q]);
	sqlite3_close(st->db);
	free(st);
}

int store_bind_args(sqlite3_stmt *stmt, const char *types, va_list ap)
{
	for (int i = 0; types[i] != '\0'; i++) {
		int rc;

		switch (types[i]) {
		case 'i':
			rc = sqlite3_bind_int64(stmt, i + 1, va_arg(ap, int64_t));
			break;
		case 'l':
			rc = sqlite3_bind_int64(stmt, i + 1, va_arg(ap, long));
			break;
		case 'd':
			rc = sqlite3_bind_double(stmt, i + 1, va_arg(ap, double));
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);

			rc = s != NULL ? sqlite3_bind_text(stmt, i + 1, s, -1,
							   SQLITE_TRANSIENT)
				       : sqlite3_bind_null(stmt, i + 1);
			break;
		}
		default:
			return -1;
		}
		if (rc != SQLITE_OK)
			return -1;
	}
	return 0;
}

/* Runs one statement with bound arguments to completion. */
int store_run(struct store *st, const char *sql, char *err, size_t errlen,
	       const char *types, ...)
{
	sqlite3_stmt *stmt = store_prepare(st, sql, err, errlen);
	va_list ap;
	int rc;

	if (stmt == NULL)
		return -1;
	va_start(ap, types);
	rc = store_bind_args(stmt, types, ap);
	va_end(ap);
	if (rc < 0) {
		sqlite3_finalize(stmt);
		return store_fail(st, "bind", err, errlen);
	}
	rc = sqlite3_step(stmt);
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return store_fail(st, "step", err, errlen);
	return sqlite3_changes(st->db);
}

int store_token_add(struct store *st, const char *name, const char *hash,
		    const char *scope, char *err, size_t errlen)
{
	char now[32];

	now_iso8601(now);
	return store_run(st, "INSERT INTO token (name, hash, scope, created)"
		       " VALUES (?, ?, ?, ?)", err, errlen, "ssss", name, hash,
		   scope, now) < 0 ? -1 : 0;
}

int store_token_check(struct store *st, const char *hash, const char *scope)
{
	sqlite3_stmt *stmt = store_prepare(st, "SELECT scope FROM token WHERE hash = ?",
				     NULL, 0);
	int rc = AUTH_INVALID, step;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, hash, -1, SQLITE_STATIC);
	step = sqlite3_step(stmt);
	if (step == SQLITE_ROW) {
		const char *have = (const char *)sqlite3_column_text(stmt, 0);

		/* 'admin' implies every scope. */
		rc = have != NULL && (strcmp(have, scope) == 0 ||
				      strcmp(have, "admin") == 0)
			? AUTH_OK : AUTH_SCOPE;
	} else if (step != SQLITE_DONE) {
		rc = -1;
	}
	sqlite3_finalize(stmt);
	return rc;
}
