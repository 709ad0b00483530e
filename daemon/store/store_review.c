/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * store_review.c - what the review writes: regression occurrences and
 * fixes, triage, bisections and their steps, the prerequisite search,
 * reports, the mail table and the outbox it feeds.
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


/*
 * A follower (017-bisect-lead.sql) whose revert check failed: the lead's
 * culprit, reverted on its target, did not make its tests pass, so its
 * failure has a cause of its own and it bisects on its own. Its row
 * becomes that bisection (UNIQUE release, target, test): what it took
 * and why it is bisected again stay in the message, which the bisection
 * keeps (store_bisection_finish adds to it).
 */
#define BISECT_REFOLLOW \
	" DO UPDATE SET regression_id = excluded.regression_id," \
	" job_id = excluded.job_id, tests = excluded.tests," \
	" tree = excluded.tree, good = excluded.good, bad = excluded.bad," \
	" good_tested = excluded.good_tested, commits = excluded.commits," \
	" state = excluded.state, culprit = NULL, culprit_subject = NULL," \
	" culprit_upstream = NULL, culprit_author = NULL, culprit_date = NULL," \
	" culprit_people = NULL, range_first = NULL, range_last = NULL," \
	" prereq_state = NULL, prerequisites = NULL, prereq_message = NULL," \
	" revert_state = NULL, revert_message = NULL, revert_job = NULL," \
	" lead = NULL, created = excluded.created, finished = excluded.finished," \
	" message = 'The culprit ' || substr(bisection.culprit, 1, 12) ||" \
	"  ' of bisection ' || bisection.lead || ' on ' || coalesce((SELECT" \
	"  l.target FROM bisection l WHERE l.id = bisection.lead), '?') ||" \
	"  ' does not explain the failure on ' || bisection.target || ': ' ||" \
	"  coalesce(bisection.revert_message, 'reverting it did not fix it') ||" \
	"  '. So ' || bisection.target || ' was bisected on its own.' ||" \
	"  coalesce(char(10) || excluded.message, '')" \
	" WHERE " BISECT_UNEXPLAINED("bisection")

int store_bisection_create(struct store *st, const struct bisect_candidate *c,
			   const char *good, int good_tested,
			   const char *commits, const char *state,
			   const char *message, int64_t *id, char *err,
			   size_t errlen)
{
	char now[32];
	sqlite3_stmt *q;
	int build = strcmp(c->test, "build.kernel") == 0, step;

	now_iso8601(now);
	if (store_run(st, "INSERT INTO bisection (regression_id, release_id, job_id,"
		    " target, test, tests, tree, good, bad, good_tested, commits,"
		    " state, message, created, finished) VALUES (?, ?, ?, ?, ?, ?,"
		    " ?, ?, ?, ?, ?, ?, ?, ?,"
		    " CASE WHEN ? = 'running' THEN NULL ELSE ? END)"
		    " ON CONFLICT (release_id, target, test)" BISECT_REFOLLOW,
		err, errlen, "iiissssssl" "ssssss", c->regression_id,
		c->release_id, c->job_id, c->target, c->test,
		build ? "-" : c->tests, c->tree,
		good != NULL ? good : "", c->bad, (long)good_tested,
		commits != NULL ? commits : "", state, message, now, state,
		now) < 0)
		return -1;
	/* The row's id, inserted or taken over (an update sets no rowid). */
	q = store_prepare(st, "SELECT id FROM bisection WHERE release_id = ?"
			  " AND target = ? AND test = ?", err, errlen);
	if (q == NULL)
		return -1;
	sqlite3_bind_int64(q, 1, c->release_id);
	sqlite3_bind_text(q, 2, c->target, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 3, c->test, -1, SQLITE_STATIC);
	step = sqlite3_step(q);
	*id = step == SQLITE_ROW ? sqlite3_column_int64(q, 0) : 0;
	sqlite3_finalize(q);
	return step == SQLITE_ROW ? 0 : store_fail(st, "bisection id", err, errlen);
}

/* Whether a bisection of tests (",name,...," or "-" for a build) bisects
 * one of want's: for a build, whether both are. */
static int tests_overlap(const char *tests, const char *want)
{
	char name[260];

	if (strcmp(tests, "-") == 0 || strcmp(want, "-") == 0)
		return strcmp(tests, want) == 0;
	for (const char *p = want; *p == ','; ) {
		size_t n = strcspn(p + 1, ",");

		if (p[n + 1] != ',')
			break;		/* the end: ",a,b," has no more */
		if (n > 0 && n + 3 <= sizeof(name)) {
			snprintf(name, sizeof(name), ",%.*s,", (int)n, p + 1);
			if (strstr(tests, name) != NULL)
				return 1;
		}
		p += n + 1;
	}
	return 0;
}

int store_bisect_lead(struct store *st, const struct bisect_candidate *c,
		      struct bisect_lead *lead, char *err, size_t errlen)
{
	sqlite3_stmt *stmt = store_prepare(st,
		"SELECT id, state = 'found', target, culprit, bad, tests"
		" FROM bisection WHERE release_id = ?1 AND target != ?2"
		" AND (test = 'build.kernel') = (?3 = 'build.kernel')"
		" AND lead IS NULL AND state IN ('running', 'found')"
		" AND NOT EXISTS (SELECT 1 FROM bisection f WHERE f.lead ="
		"  bisection.id AND f.target = ?2 AND " BISECT_UNEXPLAINED("f") ")"
		" ORDER BY state = 'found' DESC, id", err, errlen);
	const char *want = strcmp(c->test, "build.kernel") == 0 ? "-" : c->tests;
	int step, found = 0;

	if (stmt == NULL)
		return -1;
	memset(lead, 0, sizeof(*lead));
	sqlite3_bind_int64(stmt, 1, c->release_id);
	sqlite3_bind_text(stmt, 2, c->target, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 3, c->test, -1, SQLITE_STATIC);
	/* Only one that bisects a test c fails too: a failure of other
	 * tests on another target may well have another cause. */
	while ((step = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *tests = (const char *)sqlite3_column_text(stmt, 5);

		if (tests == NULL || want == NULL || !tests_overlap(tests, want))
			continue;
		lead->id = sqlite3_column_int64(stmt, 0);
		store_copy_col(lead->target, sizeof(lead->target), stmt, 2);
		store_copy_col(lead->culprit, sizeof(lead->culprit), stmt, 3);
		store_copy_col(lead->bad, sizeof(lead->bad), stmt, 4);
		found = sqlite3_column_int(stmt, 1) ? 2 : 1;
		break;
	}
	sqlite3_finalize(stmt);
	if (found == 0 && step != SQLITE_DONE)
		return store_fail(st, "bisection lead", err, errlen);
	return found;
}

int store_bisection_follow(struct store *st, const struct bisect_candidate *c,
			   int64_t lead, const char *bad, const char *message,
			   int64_t *id, char *err, size_t errlen)
{
	char now[32];
	int build = strcmp(c->test, "build.kernel") == 0, n;

	now_iso8601(now);
	n = store_run(st, "INSERT INTO bisection (regression_id, release_id,"
		    " job_id, target, test, tests, tree, good, bad, good_tested,"
		    " commits, state, culprit, culprit_subject, culprit_upstream,"
		    " culprit_author, culprit_date, culprit_people, message,"
		    " created, finished, lead)"
		    " SELECT ?, ?, ?, ?, ?, ?, l.tree, l.good, ?, l.good_tested,"
		    " l.commits, 'found', l.culprit, l.culprit_subject,"
		    " l.culprit_upstream, l.culprit_author, l.culprit_date,"
		    " l.culprit_people, ?, ?, ?, l.id FROM bisection l"
		    " WHERE l.id = ? AND l.state = 'found' AND l.culprit IS NOT NULL"
		    " ON CONFLICT (release_id, target, test) DO NOTHING",
		err, errlen, "iiisss" "ssss" "i", c->regression_id, c->release_id,
		c->job_id, c->target, c->test, build ? "-" : c->tests, bad,
		message, now, now, lead);
	if (n < 0)
		return -1;
	if (n == 0)
		return 0;
	*id = sqlite3_last_insert_rowid(st->db);
	return 1;
}

int store_bisect_step_add(struct store *st, int64_t bisection_id,
			  int64_t rc_job_id, const char *git_commit,
			  const char *only_tests, const char *revert,
			  char *err, size_t errlen)
{
	char now[32];
	int64_t job_id;

	now_iso8601(now);
	if (store_begin(st, err, errlen) < 0)
		return -1;
	if (store_run(st, "INSERT INTO job (release_id, artifact_id, target, suite,"
		    " created, bisection_id, git_commit, only_tests, revert_commit)"
		    " SELECT release_id, artifact_id, target, suite, ?, ?, ?, ?, ?"
		    " FROM job WHERE id = ?", err, errlen, "siss" "si", now,
		bisection_id, git_commit, only_tests != NULL ? only_tests : "-",
		revert, rc_job_id) <= 0)
		goto fail;
	job_id = sqlite3_last_insert_rowid(st->db);
	if (revert != NULL &&
	    store_run(st, "UPDATE bisection SET revert_state = 'pending',"
		      " revert_message = NULL, revert_job = ? WHERE id = ?", err,
		      errlen, "ii", job_id, bisection_id) < 0)
		goto fail;
	if (store_run(st, "INSERT INTO job_event (job_id, at, state, attempt, message)"
		    " VALUES (?, ?, 'queued', 1, ?)", err, errlen, "iss", job_id,
		now, revert != NULL ? "revert check" : "bisection step") < 0 ||
	    store_commit(st, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	store_rollback(st);
	return -1;
}

int store_bisection_finish(struct store *st, int64_t id, const char *state,
			   const char *culprit, const char *subject,
			   const char *upstream, const char *range_first,
			   const char *range_last, const char *message,
			   const char *prereq_state, char *err, size_t errlen)
{
	char now[32];

	now_iso8601(now);
	/* A message the row has (BISECT_REFOLLOW's) stays, first. */
	return store_run(st, "UPDATE bisection SET state = ?1, culprit = ?2,"
		       " culprit_subject = ?3, culprit_upstream = ?4, range_first = ?5,"
		       " range_last = ?6, message = CASE WHEN message IS NULL THEN ?7"
		       " WHEN ?7 IS NULL THEN message ELSE message || char(10) || ?7"
		       " END, finished = ?8, prereq_state = ?9"
		       " WHERE id = ?10 AND state = 'running'", err, errlen,
		   "sssssssssi", state, culprit, subject, upstream, range_first,
		   range_last, message, now, prereq_state, id) < 0 ? -1 : 0;
}

int store_revert_finish(struct store *st, int64_t id, const char *state,
			const char *message, char *err, size_t errlen)
{
	return store_run(st, "UPDATE bisection SET revert_state = ?,"
		       " revert_message = ? WHERE id = ? AND revert_state = 'pending'",
		       err, errlen, "ssi", state, message, id) < 0 ? -1 : 0;
}

int store_prereq_finish(struct store *st, int64_t id, const char *state,
			const char *list, const char *message, char *err,
			size_t errlen)
{
	return store_run(st, "UPDATE bisection SET prereq_state = ?, prerequisites = ?,"
		       " prereq_message = ? WHERE id = ? AND prereq_state = 'pending'",
		   err, errlen, "sssi", state, list, message, id) < 0 ? -1 : 0;
}

int store_outbox_add(struct store *st, const struct outbox_in *o, char *err,
		     size_t errlen)
{
	char now[32];

	now_iso8601(now);
	return store_run(st, "INSERT INTO outbox (kind, destination, payload,"
		       " next_attempt, created) VALUES (?, ?, ?, ?, ?)", err,
		   errlen, "sssss", o->kind, o->destination, o->payload, now,
		   now) < 0 ? -1 : 0;
}

int store_source_tried(struct store *st, int64_t id, const char *error,
		       char *err, size_t errlen)
{
	char now[32];

	now_iso8601(now);
	return store_run(st, "UPDATE release SET source_tried = ?, source_error = ?"
		   " WHERE id = ?", err, errlen, "ssi", now, error, id) < 0
		? -1 : 0;
}

int store_regression_event(struct store *st, int64_t id, const char *state,
			    const char *message, char *err, size_t errlen)
{
	char now[32];

	now_iso8601(now);
	return store_run(st, "INSERT INTO regression_event (regression_id, at, state,"
		       " message) VALUES (?, ?, ?, ?)", err, errlen, "isss", id,
		   now, state, message);
}

int store_regression_link(struct store *st, const struct occurrence_in *o,
			  int64_t *regression_id, int *created, char *err,
			  size_t errlen)
{
	char now[32], since[32], msg[160];
	sqlite3_stmt *stmt;
	time_t t = time(NULL) - (time_t)o->window_days * 86400;
	int64_t id = 0;

	*created = 0;
	now_iso8601(now);
	time_iso8601(t, since);
	if (store_begin(st, err, errlen) < 0)
		return -1;
	/* The same failure seen recently on any rc of any branch is the same
	 * regression: that is what links 5.10, 5.15 and 6.1 in one cycle. */
	stmt = store_prepare(st, "SELECT g.id FROM regression g WHERE g.signature = ?"
			   " AND (SELECT max(seen) FROM occurrence"
			   "  WHERE regression_id = g.id) >= ?"
			   " ORDER BY g.id DESC LIMIT 1", err, errlen);
	if (stmt == NULL)
		goto fail;
	sqlite3_bind_text(stmt, 1, o->signature, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, since, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		id = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	if (id == 0) {
		if (store_run(st, "INSERT INTO regression (signature, test, target, fs,"
			    " diagnostic, first_seen, updated)"
			    " VALUES (?, ?, ?, ?, ?, ?, ?)", err, errlen, "sssssss",
			o->signature, o->test, o->target, o->fs, o->diagnostic,
			now, now) < 0)
			goto fail;
		id = sqlite3_last_insert_rowid(st->db);
		*created = 1;
		if (store_regression_event(st, id, "open", "first seen", err, errlen) < 0)
			goto fail;
	}
	if (store_run(st, "INSERT INTO occurrence (regression_id, release_id, job_id,"
		    " flaky, runs, fails, seen) VALUES (?, ?, ?, ?, ?, ?, ?)"
		    " ON CONFLICT (regression_id, release_id) DO UPDATE SET"
		    " flaky = excluded.flaky, runs = excluded.runs,"
		    " fails = excluded.fails, seen = excluded.seen", err, errlen,
		"iiiiiis", id, o->release_id, o->job_id, (int64_t)o->flaky,
		(int64_t)o->runs, (int64_t)o->fails, now) < 0)
		goto fail;
	if (!o->flaky) {
		/* A failure on this branch (again) opens the branch, even one
		 * that a later rc had fixed. */
		int changed = store_run(st, "INSERT INTO regression_branch (regression_id,"
				      " branch, state, updated) VALUES (?, ?, 'open', ?)"
				      " ON CONFLICT (regression_id, branch) DO UPDATE"
				      " SET state = 'open', fixed_in = NULL,"
				      " updated = excluded.updated"
				      " WHERE regression_branch.state != 'open'",
				  err, errlen, "iss", id, o->branch, now);

		if (changed < 0)
			goto fail;
		int ch = store_run(st, "UPDATE regression SET state = 'open', updated = ?"
				 " WHERE id = ? AND state = 'fixed'", err, errlen,
			     "si", now, id);

		if (ch < 0 || (ch > 0 && store_regression_event(st, id, "open",
				"fails again after a fix", err, errlen) < 0))
			goto fail;
		ch = o->confirmed
			? store_run(st, "UPDATE regression SET state = 'confirmed',"
			      " updated = ? WHERE id = ? AND state = 'open'", err,
			      errlen, "si", now, id) : 0;
		if (ch < 0 || (ch > 0 && store_regression_event(st, id, "confirmed",
				"reproduced by a rerun", err, errlen) < 0))
			goto fail;
	}
	snprintf(msg, sizeof(msg), "seen on %s (%d of %d runs failed%s)",
		 o->version, o->fails, o->runs, o->flaky ? ", flaky" : "");
	if (store_regression_event(st, id, "occurrence", msg, err, errlen) < 0 ||
	    store_commit(st, err, errlen) < 0)
		goto fail;
	*regression_id = id;
	return 0;
fail:
	store_rollback(st);
	return -1;
}

int store_regression_fix(struct store *st, int64_t id, const char *branch,
			 const char *version, char *err, size_t errlen)
{
	char now[32], msg[128];
	int changed;

	now_iso8601(now);
	if (store_begin(st, err, errlen) < 0)
		return -1;
	changed = store_run(st, "UPDATE regression_branch SET state = 'fixed',"
		      " fixed_in = ?, updated = ? WHERE regression_id = ?"
		      " AND branch = ? AND state = 'open'", err, errlen, "ssis",
		      version, now, id, branch);
	if (changed < 0)
		goto fail;
	if (changed > 0) {
		snprintf(msg, sizeof(msg), "fixed on %s: passes on %s", branch,
			 version);
		if (store_regression_event(st, id, "fixed", msg, err, errlen) < 0)
			goto fail;
		/* Fixed everywhere it was seen: the regression is fixed. */
		if (store_run(st, "UPDATE regression SET state = 'fixed', updated = ?"
			    " WHERE id = ? AND state IN ('open','confirmed')"
			    " AND NOT EXISTS (SELECT 1 FROM regression_branch b"
			    " WHERE b.regression_id = regression.id AND"
			    " b.state = 'open')", err, errlen, "si", now, id) < 0)
			goto fail;
	}
	if (store_commit(st, err, errlen) < 0)
		goto fail;
	return changed > 0;
fail:
	store_rollback(st);
	return -1;
}

int store_release_claim_analysis(struct store *st, int64_t release_id,
				 char *err, size_t errlen)
{
	char now[32];

	now_iso8601(now);
	return store_run(st, "UPDATE release SET analysed = ? WHERE id = ?"
		       " AND analysed IS NULL", err, errlen, "si", now,
		   release_id);
}

int store_regression_triage(struct store *st, int64_t id, const char *state,
			    const char *reason, char *err, size_t errlen)
{
	char now[32];
	int n;

	now_iso8601(now);
	if (store_begin(st, err, errlen) < 0)
		return -1;
	n = store_run(st, "UPDATE regression SET state = ?, reason = ?, updated = ?"
		    " WHERE id = ?", err, errlen, "sssi", state, reason, now, id);
	if (n < 0 || (n > 0 && store_regression_event(st, id, state, reason, err,
						errlen) < 0) ||
	    store_commit(st, err, errlen) < 0) {
		store_rollback(st);
		return -1;
	}
	return n;
}

int store_report_add(struct store *st, int64_t release_id, const char *gate,
		     const char *text, const char *email,
		     const struct outbox_in *out, size_t n, char *err,
		     size_t errlen)
{
	char now[32];

	now_iso8601(now);
	if (store_begin(st, err, errlen) < 0)
		return -1;
	if (store_run(st, "INSERT INTO report (release_id, created, gate, text, email)"
		    " VALUES (?, ?, ?, ?, ?)", err, errlen, "issss", release_id,
		now, gate, text, email) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		if (store_run(st, "INSERT INTO outbox (kind, destination, payload,"
			    " next_attempt, created) VALUES (?, ?, ?, ?, ?)", err,
			errlen, "sssss", out[i].kind, out[i].destination,
			out[i].payload, now, now) < 0)
			goto fail;
	}
	if (store_commit(st, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	store_rollback(st);
	return -1;
}

int store_mail_add(struct store *st, const struct mail_in *m,
		   const struct outbox_in *out, size_t n, char *err,
		   size_t errlen)
{
	char now[32];
	int added;

	now_iso8601(now);
	if (store_begin(st, err, errlen) < 0)
		return -1;
	added = store_run(st, "INSERT OR IGNORE INTO mail (kind, release_id,"
		    " regression_id, about, message_id, created, refused)"
		    " VALUES (?, ?, ?, ?, ?, ?, ?)", err, errlen, "siiisss",
		    m->kind, m->release_id, m->regression_id, m->about,
		    m->message_id, now, m->refused);
	if (added < 0)
		goto fail;
	for (size_t i = 0; added > 0 && i < m->nalso; i++)
		if (store_run(st, "INSERT OR IGNORE INTO mail (kind, release_id,"
			    " regression_id, about, message_id, created, refused)"
			    " VALUES (?, ?, ?, ?, ?, ?, ?)", err, errlen, "siiisss",
			m->kind, m->release_id, m->also_regressions[i], m->about,
			m->message_id, now, m->refused) < 0)
			goto fail;
	if (m->report_text != NULL &&
	    store_run(st, "INSERT INTO report (release_id, created, gate, text, email)"
		    " VALUES (?, ?, ?, ?, ?)", err, errlen, "issss",
		m->release_id, now, m->gate, m->report_text, m->email) < 0)
		goto fail;
	for (size_t i = 0; added > 0 && i < n; i++) {
		if (store_run(st, "INSERT INTO outbox (kind, destination, payload,"
			    " next_attempt, created) VALUES (?, ?, ?, ?, ?)", err,
			errlen, "sssss", out[i].kind, out[i].destination,
			out[i].payload, now, now) < 0)
			goto fail;
	}
	if (store_commit(st, err, errlen) < 0)
		goto fail;
	return added > 0;
fail:
	store_rollback(st);
	return -1;
}

int store_bisection_culprit(struct store *st, int64_t id, const char *author,
			    const char *date, const char *people, char *err,
			    size_t errlen)
{
	return store_run(st, "UPDATE bisection SET culprit_author = ?, culprit_date = ?,"
		   " culprit_people = ? WHERE id = ?", err, errlen, "sssi", author,
		   date, people, id) < 0 ? -1 : 0;
}

int store_outbox_next(struct store *st, struct outbox_item *it, char *err,
		      size_t errlen)
{
	char now[32];
	sqlite3_stmt *stmt;
	int rc;

	now_iso8601(now);
	stmt = store_prepare(st, "SELECT id, kind, destination, payload, attempts"
			   " FROM outbox WHERE state = 'pending' AND next_attempt <= ?"
			   " ORDER BY next_attempt, id LIMIT 1", err, errlen);
	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, now, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		const char *p = (const char *)sqlite3_column_text(stmt, 3);

		it->id = sqlite3_column_int64(stmt, 0);
		store_copy_col(it->kind, sizeof(it->kind), stmt, 1);
		store_copy_col(it->destination, sizeof(it->destination), stmt, 2);
		it->payload = strdup(p != NULL ? p : "");
		it->attempts = sqlite3_column_int(stmt, 4);
		sqlite3_finalize(stmt);
		if (it->payload == NULL) {
			errf(err, errlen, "out of memory");
			return -1;
		}
		return 1;
	}
	sqlite3_finalize(stmt);
	if (rc == SQLITE_DONE)
		return 0;
	return store_fail(st, "outbox", err, errlen);
}

int store_outbox_done(struct store *st, int64_t id, int ok, const char *error,
		      long delay_s, long max_attempts, char *err, size_t errlen)
{
	char now[32], next[32];
	time_t t = time(NULL) + delay_s;

	now_iso8601(now);
	time_iso8601(t, next);
	if (ok)
		return store_run(st, "UPDATE outbox SET state = 'sent', sent = ?,"
			       " attempts = attempts + 1, last_error = NULL"
			       " WHERE id = ?", err, errlen, "si", now, id) < 0
			? -1 : 0;
	return store_run(st, "UPDATE outbox SET attempts = attempts + 1,"
		       " last_error = ?, next_attempt = ?, state = CASE WHEN"
		       " attempts + 1 >= ? THEN 'failed' ELSE 'pending' END"
		       " WHERE id = ?", err, errlen, "ssli", error, next,
		   max_attempts, id) < 0 ? -1 : 0;
}

/* 1 if the release has an announcement, 0 if not, -1 on error. */
static int release_announced(struct store *st, int64_t id)
{
	sqlite3_stmt *stmt = store_prepare(st, "SELECT message_id IS NOT NULL FROM"
				     " release WHERE id = ?", NULL, 0);
	int rc = -1;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_int64(stmt, 1, id);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		rc = sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);
	return rc;
}

int store_release_announce(struct store *st, const struct announce_in *a,
			   int64_t *release_id, char *err, size_t errlen)
{
	char now[32];
	int64_t existing;
	int rc, changed, had_announcement = 0;

	now_iso8601(now);
	if (store_begin(st, err, errlen) < 0)
		return -1;
	existing = store_release_id_of(st, a->version);
	if (existing < 0) {
		store_fail(st, "find release", err, errlen);
		goto fail;
	}
	if (existing == 0) {
		if (store_run(st, "INSERT INTO release (version, branch, rc, patch,"
			    " created) VALUES (?, ?, ?, ?, ?)", err, errlen, "sslls",
			a->version, a->branch, a->rc, a->patch, now) < 0)
			goto fail;
		existing = sqlite3_last_insert_rowid(st->db);
		rc = 0;
	} else {
		rc = 1;
		had_announcement = release_announced(st, existing);
		if (had_announcement < 0) {
			store_fail(st, "find release", err, errlen);
			goto fail;
		}
	}
	*release_id = existing;
	/* A release without an announcement takes this one; one announced
	 * under another Message-ID is corrected by it (the sender was
	 * accepted, and the later mail is the one the maintainer meant),
	 * unless the earlier one was DKIM-verified and this one is not;
	 * the same Message-ID again changes nothing. */
	changed = store_run(st, "UPDATE release SET announced = ?, deadline = ?,"
		      " message_id = ?, subject = ?, mail_from = ?, mail_to = ?,"
		      " mail_cc = ?, patch_url = ?, git_tree = ?, git_branch = ?,"
		      " announce_head = ?, mail_verified = ?, mail_dkim = ?"
		      " WHERE id = ? AND (message_id IS NULL OR message_id <> ?)"
		      " AND (? = 1 OR message_id IS NULL OR mail_verified = 0)",
		      err, errlen, "ssssssssssslsisl",
		      a->date != NULL && a->date[0] ? a->date : now,
		      a->deadline != NULL && a->deadline[0] ? a->deadline : NULL,
		      a->message_id, a->subject, a->from, a->to, a->cc,
		      a->patch_url, a->git_tree, a->git_branch, a->head,
		      (long)(a->verified != 0), a->dkim, existing, a->message_id,
		      (long)(a->verified != 0));
	if (changed < 0)
		goto fail;
	if (changed == 0)
		rc = 2;
	else if (rc == 1 && had_announcement)
		rc = 3;
	if (store_commit(st, err, errlen) < 0)
		goto fail;
	return rc;
fail:
	store_rollback(st);
	return -1;
}

int store_series_patch_add(struct store *st, const char *parent_id,
			   const char *from_addr, long number, long total,
			   const char *subject, const char *message_id,
			   char *version, size_t vlen, char *err, size_t errlen)
{
	sqlite3_stmt *stmt;
	int64_t release_id = 0;
	int rc;

	if (from_addr == NULL || *from_addr == '\0')
		return 0;
	/* Only the announcement's own sender speaks for its series. */
	stmt = store_prepare(st, "SELECT id, version FROM release WHERE"
			     " message_id = ?1 AND (mail_from = ?2 OR"
			     " instr(lower(mail_from), '<' || lower(?2) || '>') > 0)",
			     err, errlen);
	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, parent_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, from_addr, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		release_id = sqlite3_column_int64(stmt, 0);
		snprintf(version, vlen, "%s",
			 (const char *)sqlite3_column_text(stmt, 1));
	} else if (rc != SQLITE_DONE) {
		sqlite3_finalize(stmt);
		return store_fail(st, "series patch", err, errlen);
	}
	sqlite3_finalize(stmt);
	if (release_id == 0)
		return 0;
	if (store_run(st, "INSERT OR IGNORE INTO series_patch (release_id,"
		      " number, total, subject, message_id) VALUES (?, ?, ?, ?, ?)",
		      err, errlen, "illss", release_id, number, total, subject,
		      message_id) < 0)
		return -1;
	return 1;
}
