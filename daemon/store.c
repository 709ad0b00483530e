/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * store.c - owns the SQLite database: the only file that includes
 * sqlite3.h. WAL mode, foreign keys, migrations compiled in from
 * schemas/sql/ and tracked with PRAGMA user_version, every statement
 * prepared with bound parameters, every state change one transaction.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "rcgate.h"
#include "store_migrations.h"

struct store {
	sqlite3 *db;
};

static const char *const query_sql[] = {
	[Q_RELEASES] =
		"SELECT r.id, r.version, r.branch, r.rc, r.created, r.baseline,"
		" (SELECT count(*) FROM job j WHERE j.release_id = r.id) AS jobs,"
		" (SELECT count(*) FROM job j WHERE j.release_id = r.id"
		"  AND j.state IN ('done','infra_error','cancelled')) AS jobs_finished"
		" FROM release r ORDER BY r.id DESC LIMIT ? OFFSET ?",
	[Q_RELEASE] =
		"SELECT id, version, branch, rc, created, announced, deadline,"
		" message_id, baseline FROM release WHERE version = ?",
	[Q_RELEASE_JOBS] =
		"SELECT j.id, j.target, j.suite, j.state, j.attempt, j.accel,"
		" j.error_kind, j.error, j.created, j.started, j.finished,"
		" j.boot_seconds, j.kernel_version, a.kind, a.url, a.sha256,"
		" a.modules_url, a.modules_sha256"
		" FROM job j JOIN artifact a ON a.id = j.artifact_id"
		" WHERE j.release_id = ? ORDER BY j.id",
	[Q_JOB] =
		"SELECT j.id, r.version, j.target, j.suite, j.state, j.attempt,"
		" j.worker, j.accel, j.error_kind, j.error, j.created, j.started,"
		" j.finished, j.boot_seconds, j.kernel_version, a.kind, a.url,"
		" a.sha256, a.modules_url, a.modules_sha256"
		" FROM job j JOIN release r ON r.id = j.release_id"
		" JOIN artifact a ON a.id = j.artifact_id WHERE j.id = ?",
	[Q_JOB_RESULTS] =
		"SELECT test, status, diagnostic FROM result WHERE job_id = ?"
		" ORDER BY id",
	[Q_JOB_EVENTS] =
		"SELECT at, state, attempt, message FROM job_event"
		" WHERE job_id = ? ORDER BY id",
	[Q_RELEASE_JOB_COUNTS] =
		"SELECT state, count(*) AS n FROM job WHERE release_id = ?"
		" GROUP BY state",
};

static int store_fail(struct store *st, const char *what, char *err,
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

static int begin(struct store *st, char *err, size_t errlen)
{
	/* IMMEDIATE takes the write lock up front, so two workers claiming
	 * jobs serialise instead of failing on lock upgrade. */
	return exec_sql(st, "BEGIN IMMEDIATE", err, errlen);
}

static int commit(struct store *st, char *err, size_t errlen)
{
	return exec_sql(st, "COMMIT", err, errlen);
}

static void rollback(struct store *st)
{
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

static sqlite3_stmt *prepare(struct store *st, const char *sql, char *err,
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

	stmt = prepare(st, "PRAGMA user_version", NULL, 0);
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
		if (begin(st, err, errlen) < 0)
			return -1;
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d",
			 migrations[i].version);
		if (exec_sql(st, migrations[i].sql, err, errlen) < 0 ||
		    exec_sql(st, pragma, err, errlen) < 0) {
			size_t len = strlen(err);

			rollback(st);
			snprintf(err + len, errlen - len, " (migration %s)",
				 migrations[i].name);
			return -1;
		}
		if (commit(st, err, errlen) < 0) {
			rollback(st);
			return -1;
		}
		log_info("store: applied migration %s", migrations[i].name);
	}
	return 0;
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
	if (exec_sql(st, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;"
			 " PRAGMA synchronous = NORMAL;", err, errlen) < 0)
		goto fail;
	if (migrate(st, err, errlen) < 0)
		goto fail;
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
	sqlite3_close(st->db);
	free(st);
}

static int bind_args(sqlite3_stmt *stmt, const char *types, va_list ap)
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
static int run(struct store *st, const char *sql, char *err, size_t errlen,
	       const char *types, ...)
{
	sqlite3_stmt *stmt = prepare(st, sql, err, errlen);
	va_list ap;
	int rc;

	if (stmt == NULL)
		return -1;
	va_start(ap, types);
	rc = bind_args(stmt, types, ap);
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

static json_t *column_json(sqlite3_stmt *stmt, int col)
{
	switch (sqlite3_column_type(stmt, col)) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(stmt, col));
	case SQLITE_FLOAT:
		return json_real(sqlite3_column_double(stmt, col));
	case SQLITE_NULL:
		return json_null();
	default: {
		const char *text = (const char *)sqlite3_column_text(stmt, col);
		size_t len = (size_t)sqlite3_column_bytes(stmt, col);
		json_t *v = json_stringn(text != NULL ? text : "", len);
		char *clean;

		if (v != NULL || text == NULL)
			return v;
		/* Console-derived text may hold invalid UTF-8: keep the ASCII,
		 * mark the rest, never fail the whole response for it. */
		clean = malloc(len + 1);
		if (clean == NULL)
			return json_null();
		for (size_t i = 0; i < len; i++)
			clean[i] = (unsigned char)text[i] < 0x80 && text[i] != 0
					   ? text[i] : '?';
		v = json_stringn(clean, len);
		free(clean);
		return v;
	}
	}
}

json_t *store_rows(struct store *st, enum store_query q, char *err,
		   size_t errlen, const char *types, ...)
{
	sqlite3_stmt *stmt;
	json_t *rows;
	va_list ap;
	int rc;

	stmt = prepare(st, query_sql[q], err, errlen);
	if (stmt == NULL)
		return NULL;
	va_start(ap, types);
	rc = bind_args(stmt, types, ap);
	va_end(ap);
	if (rc < 0) {
		sqlite3_finalize(stmt);
		store_fail(st, "bind", err, errlen);
		return NULL;
	}
	rows = json_array();
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		json_t *row = json_object();

		for (int c = 0; c < sqlite3_column_count(stmt); c++)
			json_object_set_new(row, sqlite3_column_name(stmt, c),
					    column_json(stmt, c));
		json_array_append_new(rows, row);
	}
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE) {
		json_decref(rows);
		store_fail(st, "query", err, errlen);
		return NULL;
	}
	return rows;
}

int store_release_create(struct store *st, const char *version,
			 const struct kversion *kv,
			 const struct artifact_in *arts, size_t n,
			 int64_t *release_id, char *err, size_t errlen)
{
	char now[32];
	int rc;

	now_iso8601(now);
	if (begin(st, err, errlen) < 0)
		return -1;
	rc = run(st, "INSERT INTO release (version, branch, rc, created)"
		     " VALUES (?, ?, ?, ?)", err, errlen, "ssls", version,
		 kv->branch, kv->rc, now);
	if (rc < 0) {
		int exists = sqlite3_extended_errcode(st->db) ==
			     SQLITE_CONSTRAINT_UNIQUE;

		rollback(st);
		if (exists) {
			errf(err, errlen, "release %s exists", version);
			return -2;
		}
		return -1;
	}
	*release_id = sqlite3_last_insert_rowid(st->db);
	for (size_t i = 0; i < n; i++) {
		int64_t artifact_id, job_id;

		if (run(st, "INSERT INTO artifact (release_id, target, url,"
			    " sha256, kind, modules_url, modules_sha256)"
			    " VALUES (?, ?, ?, ?, ?, ?, ?)", err, errlen,
			"issssss", *release_id, arts[i].target, arts[i].url,
			arts[i].sha256, arts[i].kind, arts[i].modules_url,
			arts[i].modules_sha256) < 0)
			goto fail;
		artifact_id = sqlite3_last_insert_rowid(st->db);
		if (run(st, "INSERT INTO job (release_id, artifact_id, target,"
			    " created) VALUES (?, ?, ?, ?)", err, errlen, "iiss",
			*release_id, artifact_id, arts[i].target, now) < 0)
			goto fail;
		job_id = sqlite3_last_insert_rowid(st->db);
		if (run(st, "INSERT INTO job_event (job_id, at, state, attempt,"
			    " message) VALUES (?, ?, 'queued', 1, 'submitted')",
			err, errlen, "is", job_id, now) < 0)
			goto fail;
	}
	if (commit(st, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	rollback(st);
	return -1;
}

static void copy_col(char *dst, size_t len, sqlite3_stmt *stmt, int col)
{
	const char *s = (const char *)sqlite3_column_text(stmt, col);

	snprintf(dst, len, "%s", s != NULL ? s : "");
}

static int add_event(struct store *st, int64_t id, const char *state,
		     const char *message, char *err, size_t errlen)
{
	char now[32];

	now_iso8601(now);
	return run(st, "INSERT INTO job_event (job_id, at, state, attempt,"
		       " message) SELECT id, ?, ?, attempt, ? FROM job"
		       " WHERE id = ?", err, errlen, "sssi", now, state,
		   message, id);
}

int store_job_claim(struct store *st, const char *worker, struct job *out,
		    char *err, size_t errlen)
{
	sqlite3_stmt *stmt;
	char now[32];
	int rc;

	if (begin(st, err, errlen) < 0)
		return -1;
	stmt = prepare(st,
		"SELECT j.id, j.release_id, j.attempt, j.target, j.suite,"
		" r.version, a.url, a.sha256, a.kind, a.modules_url,"
		" a.modules_sha256 FROM job j"
		" JOIN release r ON r.id = j.release_id"
		" JOIN artifact a ON a.id = j.artifact_id"
		" WHERE j.state = 'queued' ORDER BY j.id LIMIT 1", err, errlen);
	if (stmt == NULL) {
		rollback(st);
		return -1;
	}
	rc = sqlite3_step(stmt);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(stmt);
		rollback(st);
		if (rc == SQLITE_DONE)
			return 0;
		return store_fail(st, "claim", err, errlen);
	}
	memset(out, 0, sizeof(*out));
	out->id = sqlite3_column_int64(stmt, 0);
	out->release_id = sqlite3_column_int64(stmt, 1);
	out->attempt = sqlite3_column_int(stmt, 2);
	copy_col(out->target, sizeof(out->target), stmt, 3);
	copy_col(out->suite, sizeof(out->suite), stmt, 4);
	copy_col(out->version, sizeof(out->version), stmt, 5);
	copy_col(out->url, sizeof(out->url), stmt, 6);
	copy_col(out->sha256, sizeof(out->sha256), stmt, 7);
	copy_col(out->kind, sizeof(out->kind), stmt, 8);
	copy_col(out->modules_url, sizeof(out->modules_url), stmt, 9);
	copy_col(out->modules_sha256, sizeof(out->modules_sha256), stmt, 10);
	sqlite3_finalize(stmt);
	now_iso8601(now);
	if (run(st, "UPDATE job SET state = 'fetching', worker = ?,"
		    " started = ?, finished = NULL, error = NULL,"
		    " error_kind = NULL WHERE id = ?", err, errlen, "ssi",
		worker, now, out->id) < 0 ||
	    add_event(st, out->id, "fetching", worker, err, errlen) < 0 ||
	    commit(st, err, errlen) < 0) {
		rollback(st);
		return -1;
	}
	return 1;
}

static const char *const active_states = "('fetching','booting','running')";

int store_job_transition(struct store *st, int64_t id, const char *from,
			 const char *to, const char *message, char *err,
			 size_t errlen)
{
	char sql[256], now[32];
	int changed;
	int final = strcmp(to, "done") == 0 || strcmp(to, "infra_error") == 0 ||
		    strcmp(to, "cancelled") == 0;

	now_iso8601(now);
	if (from != NULL)
		snprintf(sql, sizeof(sql),
			 "UPDATE job SET state = ?, finished = ? WHERE id = ?"
			 " AND state = ?");
	else
		snprintf(sql, sizeof(sql),
			 "UPDATE job SET state = ?, finished = ? WHERE id = ?"
			 " AND state IN %s", active_states);
	if (begin(st, err, errlen) < 0)
		return -1;
	changed = from != NULL
		? run(st, sql, err, errlen, "ssis", to, final ? now : NULL, id, from)
		: run(st, sql, err, errlen, "ssi", to, final ? now : NULL, id);
	if (changed < 0)
		goto fail;
	if (changed > 0 && add_event(st, id, to, message, err, errlen) < 0)
		goto fail;
	if (commit(st, err, errlen) < 0)
		goto fail;
	return changed > 0;
fail:
	rollback(st);
	return -1;
}

int store_job_note(struct store *st, int64_t id, const char *accel,
		   const char *kernel_version, char *err, size_t errlen)
{
	return run(st, "UPDATE job SET accel = coalesce(?, accel),"
		       " kernel_version = coalesce(?, kernel_version)"
		       " WHERE id = ?", err, errlen, "ssi", accel,
		   kernel_version, id) < 0 ? -1 : 0;
}

int store_job_done(struct store *st, int64_t id, const struct result_row *rows,
		   size_t n, double boot_seconds, char *err, size_t errlen)
{
	sqlite3_stmt *ins;
	char now[32];
	int changed;

	if (begin(st, err, errlen) < 0)
		return -1;
	/* Results of an earlier attempt that died half-way never mix with
	 * these: one attempt's results are written whole or not at all. */
	if (run(st, "DELETE FROM result WHERE job_id = ?", err, errlen, "i",
		id) < 0)
		goto fail;
	ins = prepare(st, "INSERT INTO result (job_id, test, status, diagnostic)"
			  " VALUES (?, ?, ?, ?)", err, errlen);
	if (ins == NULL)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		sqlite3_bind_int64(ins, 1, id);
		sqlite3_bind_text(ins, 2, rows[i].test, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 3, rows[i].status, -1, SQLITE_STATIC);
		if (rows[i].diagnostic != NULL)
			sqlite3_bind_text(ins, 4, rows[i].diagnostic, -1,
					  SQLITE_STATIC);
		else
			sqlite3_bind_null(ins, 4);
		if (sqlite3_step(ins) != SQLITE_DONE) {
			store_fail(st, "insert result", err, errlen);
			sqlite3_finalize(ins);
			goto fail;
		}
		sqlite3_reset(ins);
		sqlite3_clear_bindings(ins);
	}
	sqlite3_finalize(ins);
	now_iso8601(now);
	changed = run(st, "UPDATE job SET state = 'done', finished = ?,"
			  " boot_seconds = round(?, 3) WHERE id = ?"
			  " AND state = 'running'", err, errlen, "sdi", now,
		      boot_seconds, id);
	if (changed < 0)
		goto fail;
	if (changed == 0) {
		/* Cancelled while the guest ran: keep it cancelled, drop results. */
		rollback(st);
		return 0;
	}
	if (add_event(st, id, "done", NULL, err, errlen) < 0 ||
	    commit(st, err, errlen) < 0)
		goto fail;
	return 1;
fail:
	rollback(st);
	return -1;
}

int store_job_infra(struct store *st, int64_t id, const char *kind,
		    const char *message, long max_attempts, int *requeued,
		    char *err, size_t errlen)
{
	char now[32], msg[1100];
	int changed;

	*requeued = 0;
	now_iso8601(now);
	snprintf(msg, sizeof(msg), "%s: %s", kind, message);
	if (begin(st, err, errlen) < 0)
		return -1;
	changed = run(st, "UPDATE job SET state = 'infra_error', finished = ?,"
			  " error_kind = ?, error = ? WHERE id = ? AND state IN"
			  " ('fetching','booting','running')", err, errlen,
		      "sssi", now, kind, message, id);
	if (changed < 0)
		goto fail;
	if (changed == 0) {
		rollback(st);
		return 0;
	}
	if (add_event(st, id, "infra_error", msg, err, errlen) < 0)
		goto fail;
	changed = run(st, "UPDATE job SET state = 'queued', attempt = attempt + 1,"
			  " finished = NULL WHERE id = ? AND attempt < ?", err,
		      errlen, "il", id, max_attempts);
	if (changed < 0)
		goto fail;
	if (changed > 0) {
		*requeued = 1;
		if (add_event(st, id, "queued", "automatic retry", err, errlen) < 0)
			goto fail;
	}
	if (commit(st, err, errlen) < 0)
		goto fail;
	return 1;
fail:
	rollback(st);
	return -1;
}

int store_requeue_unfinished(struct store *st, int *count, char *err,
			     size_t errlen)
{
	char now[32];
	int n;

	now_iso8601(now);
	if (begin(st, err, errlen) < 0)
		return -1;
	if (run(st, "INSERT INTO job_event (job_id, at, state, attempt, message)"
		    " SELECT id, ?, 'queued', attempt, 'requeued after restart'"
		    " FROM job WHERE state IN ('fetching','booting','running')",
		err, errlen, "s", now) < 0)
		goto fail;
	n = run(st, "UPDATE job SET state = 'queued', worker = NULL"
		    " WHERE state IN ('fetching','booting','running')", err,
		errlen, "");
	if (n < 0 || commit(st, err, errlen) < 0)
		goto fail;
	*count = n;
	return 0;
fail:
	rollback(st);
	return -1;
}

int store_release_cancel(struct store *st, const char *version, int *count,
			 char *err, size_t errlen)
{
	char now[32];
	int n;

	now_iso8601(now);
	if (begin(st, err, errlen) < 0)
		return -1;
	if (run(st, "INSERT INTO job_event (job_id, at, state, attempt, message)"
		    " SELECT j.id, ?, 'cancelled', j.attempt, 'cancelled by request'"
		    " FROM job j JOIN release r ON r.id = j.release_id"
		    " WHERE r.version = ? AND j.state IN"
		    " ('queued','fetching','booting','running')", err, errlen,
		"ss", now, version) < 0)
		goto fail;
	n = run(st, "UPDATE job SET state = 'cancelled', finished = ?"
		    " WHERE release_id = (SELECT id FROM release WHERE version = ?)"
		    " AND state IN ('queued','fetching','booting','running')",
		err, errlen, "ss", now, version);
	if (n < 0 || commit(st, err, errlen) < 0)
		goto fail;
	*count = n;
	return 0;
fail:
	rollback(st);
	return -1;
}

int store_job_state_get(struct store *st, int64_t id, char *state, size_t len)
{
	sqlite3_stmt *stmt = prepare(st, "SELECT state FROM job WHERE id = ?",
				     NULL, 0);
	int rc = -1;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, id);
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		copy_col(state, len, stmt, 0);
		rc = 0;
	}
	sqlite3_finalize(stmt);
	return rc;
}

int store_token_add(struct store *st, const char *name, const char *hash,
		    const char *scope, char *err, size_t errlen)
{
	char now[32];

	now_iso8601(now);
	return run(st, "INSERT INTO token (name, hash, scope, created)"
		       " VALUES (?, ?, ?, ?)", err, errlen, "ssss", name, hash,
		   scope, now) < 0 ? -1 : 0;
}

int store_token_check(struct store *st, const char *hash, const char *scope)
{
	sqlite3_stmt *stmt = prepare(st, "SELECT scope FROM token WHERE hash = ?",
				     NULL, 0);
	int rc = 0;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, hash, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		const char *have = (const char *)sqlite3_column_text(stmt, 0);

		/* 'admin' implies every scope. */
		rc = have != NULL && (strcmp(have, scope) == 0 ||
				      strcmp(have, "admin") == 0);
	}
	sqlite3_finalize(stmt);
	return rc;
}
