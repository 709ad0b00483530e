/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/reply.c: the whole conversation of the 2023 cycle
 * against a real SQLite store, driven by engine_run_once() as the daemon
 * drives it, no guests. 6.1.64-rc1 (its real announcement) regresses
 * ext4.write_seq_512 on x86_64 and so does 5.15.140-rc1; 6.1.64 ships
 * with it; 6.1.66-rc1 fixes it on 6.1; then it is triaged invalid. Every
 * mail queued in the outbox is checked: who it goes to, the thread it is
 * in, the trailers (the 0-day form for a regression, one bare Tested-by
 * for a clean rc), regzbot's commands only in the regzbot thread and in
 * paragraphs of their own, release tags only, 78 columns, each mail sent
 * once. Each mail is kept as a golden file (tests/data/report/thread/)
 * with its date and rcgate's own Message-IDs replaced by placeholders.
 * RCGATE_UPDATE_GOLDEN=1 rewrites them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "base/base.h"
#include "store/store.h"
#include "intake/intake.h"
#include "report/report.h"
#include "review/review.h"
#include "testutil.h"
#include "testutil_store.h"

#define FROM "rcgate <rcgate@ci.test>"

#define fixture test_engine

static void set(char **field, const char *value)
{
	free(*field);
	*field = strdup(value);
	assert_non_null(*field);
}

static int setup(void **state)
{
	struct fixture *f = test_engine_new("https://rcgate.ci.test");

	if (f == NULL)
		return -1;
	set(&f->cfg.public_url, "https://rcgate.ci.test");
	set(&f->cfg.mail_from, FROM);
	set(&f->cfg.smtp_url, "smtp://127.0.0.1:25");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	test_engine_free(*state);
	return 0;
}

/* The release of a real announcement (tests/data/mail), as intake stores
 * it; deadline NULL: the announcement's own (passed). Its version into
 * version[48]. */
static void store_announcement(struct fixture *f, const char *file,
			       const char *deadline, char version[48])
{
	struct announcement a;
	struct announce_in in = { 0 };
	struct kversion kv;
	char err[256], *raw;
	size_t len;
	int64_t id;

	raw = test_data_read("mail", file, &len);
	assert_int_equal(announce_parse(raw, len, &a, err, sizeof(err)), 0);
	free(raw);
	assert_int_equal(kversion_parse(a.version, &kv, err, sizeof(err)), 0);
	in.version = a.version;
	in.branch = kv.branch;
	in.rc = kv.rc;
	in.patch = kv.patch;
	in.subject = a.subject;
	in.message_id = a.message_id;
	in.from = a.from;
	in.to = a.to;
	in.cc = a.cc;
	in.date = a.date;
	in.deadline = deadline != NULL ? deadline : a.deadline;
	in.head = a.head;
	/* The real mails were DKIM-signed (tests/data's copies lost their
	 * signatures): their replies reach their recipients. */
	in.verified = 1;
	in.dkim = "d=linuxfoundation.org s=korg";
	assert_true(store_release_announce(f->st, &in, &id, err, sizeof(err)) >= 0);
	snprintf(version, 48, "%s", a.version);
	announce_free(&a);
}

/* The release from its real announcement, deadline passed, then its
 * x86_64 kernel. */
static void announce(struct fixture *f, const char *file)
{
	char version[48];

	store_announcement(f, file, NULL, version);
	test_engine_add_release(f, version);
}

#define add_release test_engine_add_release
#define run_once test_engine_run

static void finish_next(struct fixture *f, const char *status,
			const char *want_version)
{
	/* "fail2": both tests fail (one cause, two regressions). */
	int both = strcmp(status, "fail2") == 0;
	struct result_row rows[] = {
		{ "ext4.write_seq_512", both ? "fail" : status,
		  strncmp(status, "fail", 4) == 0
			  ? "write 2 of 8 (512 bytes): position 512, expected 1024"
			  : NULL, 0, 0 },
		{ "ext4.pwrite_seq_512", both ? "fail" : "pass",
		  both ? "pwrite 2 of 8: position 0, expected 512" : NULL, 0, 0 },
	};

	test_engine_finish_next(f, want_version, rows, 2);
}

/* A release tested to the end: pass, or fail twice (the rerun). */
static void test_release(struct fixture *f, const char *version,
			 const char *status)
{
	finish_next(f, status, version);
	run_once(f);
	if (strncmp(status, "fail", 4) == 0) {
		finish_next(f, status, version);
		run_once(f);
	}
}

/* ---- the outbox ---- */

#define MAX_MAILS 16
struct mails {
	char *text[MAX_MAILS];
	size_t n;
};

/* The SMTP payloads queued since mail number from (0: all). */
static void outbox(struct fixture *f, struct mails *m)
{
	sqlite3 *h;
	sqlite3_stmt *stmt;

	memset(m, 0, sizeof(*m));
	assert_int_equal(sqlite3_open_v2(f->db, &h, SQLITE_OPEN_READONLY, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT payload FROM outbox"
					    " WHERE kind = 'smtp' ORDER BY id",
					    -1, &stmt, NULL), SQLITE_OK);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		assert_true(m->n < MAX_MAILS);
		m->text[m->n++] = strdup((const char *)sqlite3_column_text(stmt, 0));
	}
	sqlite3_finalize(stmt);
	sqlite3_close(h);
}

static void mails_free(struct mails *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->text[i]);
	m->n = 0;
}

/* The value of header name (first line only) into buf. */
static const char *header(const char *mail, const char *name, char *buf,
			  size_t len)
{
	size_t n = strlen(name);

	for (const char *p = mail; p && *p && *p != '\n'; ) {
		if (strncasecmp(p, name, n) == 0 && p[n] == ':') {
			p += n + 1;
			while (*p == ' ')
				p++;
			snprintf(buf, len, "%.*s", (int)strcspn(p, "\n"), p);
			return buf;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	buf[0] = '\0';
	return buf;
}

static const char *body_of(const char *mail)
{
	const char *b = strstr(mail, "\n\n");

	assert_non_null(b);
	return b + 2;
}

/* Every body line fits 78 columns but a lone URL. */
static void assert_width(const char *mail)
{
	for (const char *line = body_of(mail); *line; ) {
		size_t n = strcspn(line, "\n");

		if (n > 78 && memmem(line, n, "://", 3) == NULL)
			fail_msg("a line of %zu columns: %.*s", n, (int)n, line);
		line += n + (line[n] == '\n');
	}
}

/* How many lines of the body start with prefix. */
static int lines_starting(const char *mail, const char *prefix)
{
	int n = 0;

	for (const char *line = body_of(mail); *line; ) {
		size_t k = strcspn(line, "\n");

		n += strncmp(line, prefix, strlen(prefix)) == 0;
		line += k + (line[k] == '\n');
	}
	return n;
}

/* Every "#regzbot" line is a paragraph of its own. */
static int regzbot_paragraphs_alone(const char *mail)
{
	const char *b = body_of(mail), *p = b;

	while ((p = strstr(p, "#regzbot")) != NULL) {
		const char *end = p + strcspn(p, "\n");

		if ((p - b < 2 || p[-1] != '\n' || p[-2] != '\n') ||
		    strncmp(end, "\n\n", 2) != 0)
			return 0;
		p = end;
	}
	return 1;
}

/* The mail with its Date and rcgate's Message-IDs (rcgate.*@ci.test)
 * replaced by <date>, ID-1, ...: the same bytes every run. */
static char *normalised(const char *mail, char ids[][256], size_t *nids)
{
	size_t cap = strlen(mail) + 4096, k = 0;
	char *out = malloc(cap);
	const char *p = mail, *body = strstr(mail, "\n\n");

	assert_non_null(out);
	while (*p) {
		if ((p == mail || p[-1] == '\n') && p < body &&
		    strncmp(p, "Date: ", 6) == 0) {
			k += (size_t)snprintf(out + k, cap - k, "Date: <date>");
			p += strcspn(p, "\n");
			continue;
		}
		if (strncmp(p, "rcgate.", 7) == 0 && (p == mail || p[-1] == '<' ||
						      p[-1] == '/')) {
			size_t n = strcspn(p, ">/ \n");
			size_t i;

			if (n > 8 && memmem(p, n, "@ci.test", 8) != NULL) {
				for (i = 0; i < *nids; i++)
					if (strlen(ids[i]) == n &&
					    strncmp(ids[i], p, n) == 0)
						break;
				if (i == *nids) {
					snprintf(ids[i], 256, "%.*s", (int)n, p);
					(*nids)++;
				}
				k += (size_t)snprintf(out + k, cap - k, "ID-%zu",
						      i + 1);
				p += n;
				continue;
			}
		}
		out[k++] = *p++;
	}
	out[k] = '\0';
	return out;
}

static void assert_golden(const char *got, const char *name)
{
	char path[4096];
	size_t len;
	char *want;

	test_data_path(path, sizeof(path), "report", name);
	if (getenv("RCGATE_UPDATE_GOLDEN")) {
		FILE *fp = fopen(path, "wb");

		assert_non_null(fp);
		assert_int_equal(fwrite(got, 1, strlen(got), fp), strlen(got));
		assert_int_equal(fclose(fp), 0);
	}
	want = test_file_read(path, &len);
	assert_string_equal(got, want);
	free(want);
}

/* ---- the 2023 cycle ---- */

static void test_conversation(void **state)
{
	struct fixture *f = *state;
	static char ids[MAX_MAILS][256];
	size_t nids = 0;
	struct mails m;
	char h[1024], report_id[256], regzbot_id[256], err[256], *s, *want;
	static const char *const golden[] = {
		"thread/01-report-6.1.64-rc1.eml",
		"thread/02-report-5.15.140-rc1.eml",
		"thread/03-also-in-6.1.64-rc1-thread.eml",
		"thread/04-regzbot-6.1.64.eml",
		"thread/05-regzbot-resolve.eml",
		"thread/06-report-6.1.66-rc1.eml",
		"thread/07-invalid-6.1.64-rc1.eml",
		"thread/08-invalid-5.15.140-rc1.eml",
		"thread/09-regzbot-invalid.eml",
	};

	add_release(f, "6.1.63");
	test_release(f, "6.1.63", "pass");
	add_release(f, "5.15.139");
	test_release(f, "5.15.139", "pass");

	/* 6.1.64-rc1 regresses: the report in its thread, 0-day trailers. */
	announce(f, "announce-6.1.64-rc1.eml");
	test_release(f, "6.1.64-rc1", "fail");
	outbox(f, &m);
	assert_int_equal(m.n, 1);
	assert_string_equal(header(m.text[0], "In-Reply-To", h, sizeof(h)),
			    "<20231124172024.664207345@linuxfoundation.org>");
	snprintf(report_id, sizeof(report_id), "%s",
		 header(m.text[0], "Message-Id", h, sizeof(h)) + 1);
	report_id[strlen(report_id) - 1] = '\0';
	assert_int_equal(lines_starting(m.text[0], "| Reported-by: " FROM), 1);
	assert_int_equal(asprintf(&want, "| Closes: https://lore.kernel.org/r/%s/",
				  report_id), (int)strlen(report_id) + 37);
	assert_int_equal(lines_starting(m.text[0], want), 1);
	free(want);
	/* Nothing b4 would take for the series. */
	assert_int_equal(lines_starting(m.text[0], "Tested-by:"), 0);
	assert_int_equal(lines_starting(m.text[0], "Reported-by:"), 0);
	assert_int_equal(lines_starting(m.text[0], "Closes:"), 0);
	assert_null(strstr(m.text[0], "#regzbot"));
	assert_non_null(strstr(m.text[0], "https://rcgate.ci.test/#/regression/1\n"));
	assert_non_null(strstr(m.text[0], "\n-- \nrcgate test farm, https://rcgate.ci.test\n"));
	mails_free(&m);

	/* 5.15.140-rc1: the same regression, its own thread. */
	announce(f, "announce-5.15.140-rc1.eml");
	test_release(f, "5.15.140-rc1", "fail");
	/* It points at the same regression's report in the other thread. */
	outbox(f, &m);
	assert_int_equal(m.n, 3);
	assert_int_not_equal(asprintf(&want, "\n  reported for 6.1.64-rc1:"
				      " https://lore.kernel.org/r/%s/\n", report_id), -1);
	assert_non_null(strstr(m.text[1], want));
	free(want);
	/* ... and 6.1.64-rc1's thread hears of 5.15.140-rc1, under rcgate's
	 * report there. */
	assert_non_null(strstr(header(m.text[2], "In-Reply-To", h, sizeof(h)),
			       report_id));
	assert_non_null(strstr(m.text[2], "also affect 5.15.140-rc1:\n"
			       "* x86_64, ext4.write_seq_512\n"));
	mails_free(&m);

	/* 6.1.64 ships with it: regzbot hears of it, once. */
	add_release(f, "6.1.64");
	test_release(f, "6.1.64", "fail");
	run_once(f);
	outbox(f, &m);
	assert_int_equal(m.n, 4);
	s = m.text[3];
	assert_string_equal(header(s, "To", h, sizeof(h)),
			    "regressions@lists.linux.dev");
	assert_string_equal(header(s, "Subject", h, sizeof(h)),
			    "[REGRESSION] 6.1.64: ext4.write_seq_512 fails on x86_64");
	assert_non_null(strstr(header(s, "In-Reply-To", h, sizeof(h)), report_id));
	assert_non_null(strstr(s, "\n\n#regzbot introduced: v6.1.63..v6.1.64\n\n"));
	assert_true(regzbot_paragraphs_alone(s));
	snprintf(regzbot_id, sizeof(regzbot_id), "%s",
		 header(s, "Message-Id", h, sizeof(h)) + 1);
	regzbot_id[strlen(regzbot_id) - 1] = '\0';
	mails_free(&m);

	/* 6.1.66-rc1 passes: LKFT's Test Fixes, one Tested-by, regzbot
	 * resolved in its own thread. */
	announce(f, "announce-6.1.66-rc1.eml");
	test_release(f, "6.1.66-rc1", "pass");
	outbox(f, &m);
	assert_int_equal(m.n, 6);
	/* mark_fixes() tells regzbot before the rc's report is written. */
	s = m.text[5];
	assert_string_equal(header(s, "In-Reply-To", h, sizeof(h)),
			    "<20231204192935.163661217@linuxfoundation.org>");
	assert_non_null(strstr(s, "\n## Test Fixes (compared to 6.1.64)\n"
			       "Following regressions from the previous round have"
			       " been fixed now:\n* x86_64, ext4.write_seq_512"
			       " (failed in 6.1.64-rc1, 6.1.64)\n"));
	assert_int_equal(lines_starting(s, "Tested-by: " FROM), 1);
	assert_int_equal(lines_starting(s, "Tested-by:"), 1);
	assert_int_equal(lines_starting(s, "| "), 0);
	assert_null(strstr(s, "#regzbot"));
	s = m.text[4];
	assert_string_equal(header(s, "Subject", h, sizeof(h)),
			    "Re: [REGRESSION] 6.1.64: ext4.write_seq_512 fails on x86_64");
	assert_non_null(strstr(header(s, "In-Reply-To", h, sizeof(h)), regzbot_id));
	assert_non_null(strstr(s, "\n\n#regzbot resolve: fixed in 6.1.66-rc1\n\n"));
	assert_true(regzbot_paragraphs_alone(s));
	mails_free(&m);

	/* Triaged invalid: a follow-up under each report that named it,
	 * and regzbot told; a second triage sends nothing new. */
	/* As the API's triage does it: the store, then the mails. */
	assert_int_equal(store_regression_triage(f->st, 1, "invalid",
						 "the test\nwas wrong", err,
						 sizeof(err)), 1);
	reply_triage(f->st, &f->cfg, 1, "invalid", "the test\nwas wrong");
	reply_triage(f->st, &f->cfg, 1, "invalid", "the test was wrong");
	run_once(f);
	outbox(f, &m);
	assert_int_equal(m.n, 9);
	assert_non_null(strstr(header(m.text[6], "In-Reply-To", h, sizeof(h)),
			       report_id));
	assert_non_null(strstr(m.text[6], "It was triaged as not a regression of"
			       " the rc (the test was wrong)."));
	assert_null(strstr(m.text[6], "#regzbot"));
	assert_non_null(strstr(m.text[8], "\n\n#regzbot invalid: the test was wrong\n\n"));
	assert_non_null(strstr(header(m.text[8], "In-Reply-To", h, sizeof(h)),
			       regzbot_id));

	/* Every mail: 78 columns, release tags only, no internal words. */
	for (size_t i = 0; i < m.n; i++) {
		char *norm;

		assert_width(m.text[i]);
		/* pages, not JSON (raw logs are text) */
		assert_null(strstr(m.text[i], "/api/v1/releases"));
		assert_null(strstr(m.text[i], "/api/v1/regressions"));
		assert_null(strstr(m.text[i], "Gate:"));
		assert_null(strstr(m.text[i], "regression #"));
		assert_null(strstr(m.text[i], "infra_error"));
		assert_int_equal(lines_starting(m.text[i], "-- "), 1);
		if (strstr(m.text[i], "#regzbot") != NULL)
			assert_string_equal(header(m.text[i], "To", h, sizeof(h)),
					    "regressions@lists.linux.dev");
		norm = normalised(m.text[i], ids, &nids);
		assert_golden(norm, golden[i]);
		free(norm);
	}
	mails_free(&m);
	(void)err;
}

/* Two regressions of one rc that shipped: one regzbot report naming both,
 * resolved once the last of them is fixed or triaged. */
static void test_regzbot_one_report_per_rc(void **state)
{
	struct fixture *f = *state;
	struct mails m;
	char err[256];

	add_release(f, "6.1.63");
	test_release(f, "6.1.63", "pass");
	announce(f, "announce-6.1.64-rc1.eml");
	test_release(f, "6.1.64-rc1", "fail2");
	add_release(f, "6.1.64");
	test_release(f, "6.1.64", "fail2");
	run_once(f);
	outbox(f, &m);
	assert_int_equal(m.n, 2);
	assert_non_null(strstr(m.text[1], "Subject: [REGRESSION] 6.1.64:"
			       " ext4.pwrite_seq_512 and 1 other test fail\n"));
	assert_non_null(strstr(m.text[1], "\n* x86_64, ext4.pwrite_seq_512\n"));
	assert_non_null(strstr(m.text[1], "\n* x86_64, ext4.write_seq_512\n"));
	assert_int_equal(lines_starting(m.text[1], "#regzbot introduced: v6.1.63..v6.1.64"), 1);
	mails_free(&m);
	/* One of the two triaged invalid: the other is open, regzbot waits. */
	assert_int_equal(store_regression_triage(f->st, 1, "invalid", "flaky disk",
						 err, sizeof(err)), 1);
	reply_triage(f->st, &f->cfg, 1, "invalid", "flaky disk");
	outbox(f, &m);
	assert_int_equal(m.n, 3);	/* the follow-up in the rc thread only */
	assert_null(strstr(m.text[2], "#regzbot"));
	mails_free(&m);
	assert_int_equal(store_regression_triage(f->st, 2, "invalid", "flaky disk",
						 err, sizeof(err)), 1);
	reply_triage(f->st, &f->cfg, 2, "invalid", "flaky disk");
	outbox(f, &m);
	assert_int_equal(m.n, 5);
	assert_true(regzbot_paragraphs_alone(m.text[4]));
	assert_non_null(strstr(m.text[4], "\n\n#regzbot invalid: flaky disk\n\n"));
	mails_free(&m);
}

/* A finished bisection of 6.1.64-rc1 (as bisect.c leaves it): the
 * follow-up threads under rcgate's report, names the culprit as git show
 * does, Cc's its author and the people who signed it off, lists possible
 * dependencies in Greg's idiom; a second target that found the same
 * commit sends nothing more. */
static void test_bisection_followup(void **state)
{
	static const char *const prereqs =
		"[{\"commit\": \"936e114a245b6e38e0dbf706a67e7611fc993da1\","
		" \"subject\": \"iomap: update ki_pos a little later in"
		" iomap_dio_complete\", \"why\": \"changes iomap_dio_complete(),"
		" as the culprit does; upstream before the culprit\"}]";
	struct fixture *f = *state;
	struct mails m;
	char err[256], h[1024], report_id[256], sql[20480], people[512];
	char commits[372 * 41 + 1];
	size_t used = 0, len;
	static char ids[MAX_MAILS][256];
	size_t nids = 0;
	sqlite3 *raw;
	char *norm;

	add_release(f, "6.1.63");
	test_release(f, "6.1.63", "pass");
	announce(f, "announce-6.1.64-rc1.eml");
	test_release(f, "6.1.64-rc1", "fail");
	/* The series' first patch (the real mail) reaches intake: it is no
	 * announcement, but its Message-ID becomes the culprit's lore link.
	 * Not from the announcement's sender: ignored. */
	{
		char *mail = test_data_read("mail", "patch-6.1-001-ext4-full.eml",
					    &len), version[48];
		int created;

		assert_int_equal(trigger_announcement(f->st, "someone@else.org",
						      mail, len, version,
						      sizeof(version), &created,
						      err, sizeof(err)), 1);
		assert_int_equal(store_series_patch_id(f->st, 2, 1, h, sizeof(h),
						       err, sizeof(err)), 0);
		assert_int_equal(trigger_announcement(f->st,
						      "gregkh@linuxfoundation.org",
						      mail, len, version,
						      sizeof(version), &created,
						      err, sizeof(err)), 1);
		assert_string_equal(err, "a patch of the series, recorded as"
				    " 6.1.64-rc1's 1/372");
		free(mail);
	}
	reply_commit_people("ext4: properly sync file size\n\ncommit 9156 upstream.\n\n"
			    "Signed-off-by: Jan Kara <jack@suse.cz>\n"
			    "Signed-off-by: Theodore Ts'o <tytso@mit.edu>\n"
			    "Reviewed-by: JAN KARA <Jack@suse.cz>\n"
			    "Acked-by: \"Evil\" <x@y>, Bcc: z@w\n"
			    "Cc: stable@vger.kernel.org\n"
			    "Signed-off-by: Greg Kroah-Hartman <gregkh@linuxfoundation.org> # 6.1\n",
			    people, sizeof(people));
	assert_string_equal(people, "Jan Kara <jack@suse.cz>, Theodore Ts'o"
			    " <tytso@mit.edu>, Greg Kroah-Hartman"
			    " <gregkh@linuxfoundation.org>");
	/* The range is the whole series (372 commits from v6.1.63 to "Linux
	 * 6.1.64-rc1"), the culprit its first: patch 001/372, as in the real
	 * series. */
	for (int k = 1; k <= 372; k++)
		used += (size_t)snprintf(commits + used, sizeof(commits) - used,
					 "%s%s", k > 1 ? " " : "", k == 1 ?
					 "c97d13d25d29b3b73348e209d928bb7b98c50fff" :
					 "0000000000000000000000000000000000000000");
	assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
	for (int t = 0; t < 2; t++) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO bisection (regression_id, release_id, job_id,"
			 " target, test, tests, tree, good, bad, good_tested, commits,"
			 " state, culprit, culprit_subject, culprit_upstream, created,"
			 " prereq_state, prerequisites, culprit_author, culprit_date,"
			 " culprit_people, revert_state) VALUES (1, 2, 2, '%s', 'ext4.write_seq_512',"
			 " ',write_seq_512,', 'git://git.kernel.org/stable-rc.git',"
			 " 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',"
			 " 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 1, '%s', 'found',"
			 " 'c97d13d25d29b3b73348e209d928bb7b98c50fff',"
			 " 'ext4: properly sync file size update after O_SYNC direct IO',"
			 " '91562895f8030cb9a0470b1db49de79346a69f91', 'x', 'done', '%s',"
			 " 'Jan Kara <jack@suse.cz>', 'Fri, 13 Oct 2023 14:13:50 +0200',"
			 " '%s', 'pending')", t ? "i386" : "x86_64", commits, prereqs,
			 "Jan Kara <jack@suse.cz>,"
			 " Theodore Ts''o <tytso@mit.edu>, Greg Kroah-Hartman"
			 " <gregkh@linuxfoundation.org>");
		assert_int_equal(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
	}
	/* arm64 did not bisect: it took x86_64's culprit (lead) and its
	 * revert check passed (017-bisect-lead.sql). */
	assert_int_equal(sqlite3_exec(raw, "INSERT INTO bisection (id, regression_id,"
		" release_id, job_id, target, test, tests, tree, good, bad,"
		" good_tested, commits, state, culprit, created, revert_state,"
		" revert_message, lead) SELECT 10, 1, 2, 2, 'arm64', test, tests, tree,"
		" good, bad, 1, commits, 'found', culprit, 'x', 'pass', 'reverting"
		" c97d13d25d29 on top of 6.1.64-rc1 makes ext4.write_seq_512 pass',"
		" id FROM bisection WHERE id = 1", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	/* The follow-up waits for the revert check. */
	reply_bisection(f->st, &f->cfg, 1);
	outbox(f, &m);
	assert_int_equal(m.n, 1);
	mails_free(&m);
	/* Both targets bisected to the same commit: one mail, once both
	 * revert checks are in, with each one's. */
	assert_int_equal(store_revert_finish(f->st, 1, "pass", "reverting"
		" c97d13d25d29 on top of 6.1.64-rc1 makes ext4.write_seq_512"
		" pass", err, sizeof(err)), 0);
	reply_bisection(f->st, &f->cfg, 1);
	outbox(f, &m);
	assert_int_equal(m.n, 1);	/* i386's revert check is pending */
	mails_free(&m);
	assert_int_equal(store_revert_finish(f->st, 2, "fail", "with"
		" c97d13d25d29 reverted on top of 6.1.64-rc1, still failing:"
		" ext4.write_seq_512", err, sizeof(err)), 0);
	/* Nor while another bisection of the rc runs: its answer may be
	 * the same commit. */
	assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
	assert_int_equal(sqlite3_exec(raw, "INSERT INTO bisection (regression_id,"
		" release_id, job_id, target, test, tests, tree, good, bad,"
		" good_tested, commits, state, created) VALUES (1, 2, 2, 'arm64',"
		" 'build.kernel', '-', 't', 'a', 'b', 1, 'b', 'running', 'x')",
		NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	reply_bisection(f->st, &f->cfg, 2);
	outbox(f, &m);
	assert_int_equal(m.n, 1);
	mails_free(&m);
	assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
	assert_int_equal(sqlite3_exec(raw, "DELETE FROM bisection WHERE target"
		" = 'arm64' AND lead IS NULL", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	reply_bisection(f->st, &f->cfg, 2);	/* the last one in sends it */
	reply_bisection(f->st, &f->cfg, 1);	/* again: once */
	outbox(f, &m);
	assert_int_equal(m.n, 2);
	assert_non_null(strstr(m.text[1], "ext4.write_seq_512 on x86_64 and i386 in"));
	/* arm64 is named as a target that only reverted it, with its
	 * revert check. */
	assert_non_null(strstr(m.text[1], "\nThe same failure on arm64 was not"
			       " bisected again: the culprit was reverted\n"
			       "there too.\n"));
	assert_non_null(strstr(m.text[1], "\nrevert on arm64: PASS (reverting"));
	assert_non_null(strstr(m.text[1], "\n  ext4.write_seq_512 pass)\n"
			       "revert on i386: FAIL (with c97d13d25d29 reverted"
			       " on top of 6.1.64-rc1, still\n  failing:"
			       " ext4.write_seq_512)\n"));
	snprintf(report_id, sizeof(report_id), "%s",
		 header(m.text[0], "Message-Id", h, sizeof(h)));
	assert_string_equal(header(m.text[1], "In-Reply-To", h, sizeof(h)), report_id);
	assert_non_null(strstr(m.text[1], "\n\n[PATCH 6.1 001/372] ext4: properly sync file"
			       " size update after O_SYNC direct\n    IO\n"
			       "    https://lore.kernel.org/r/20231124172024.712357781"
			       "@linuxfoundation.org/\n"));
	assert_non_null(strstr(m.text[1], "\ncommit c97d13d25d29b3b73348e209d928bb7b98c50fff\n"
			       "Author: Jan Kara <jack@suse.cz>\n"
			       "Date:   Fri, 13 Oct 2023 14:13:50 +0200\n\n"
			       "    ext4: properly sync file size update after O_SYNC direct IO\n\n"
			       "    commit 91562895f8030cb9a0470b1db49de79346a69f91 upstream.\n"));
	assert_non_null(strstr(m.text[1], "\nPossible dependencies"));
	/* KernelCI's form, wrapped at 78 */
	assert_non_null(strstr(m.text[1], "\n\nrevert on x86_64: PASS (reverting"
			       " c97d13d25d29 on top of 6.1.64-rc1 makes\n"
			       "  ext4.write_seq_512 pass)\n"));
	assert_non_null(strstr(m.text[1], "\n    936e114a245b (\"iomap: update ki_pos a little"
			       " later in iomap_dio_complete\")\n"));
	assert_non_null(strstr(m.text[1], "jack@suse.cz"));
	assert_non_null(strstr(m.text[1], "tytso@mit.edu"));
	/* Greg is in To already: named once. */
	assert_null(strstr(strstr(m.text[1], "gregkh@") + 1, "gregkh@linuxfoundation.org>,\n"));
	assert_null(strstr(m.text[1], "regression #"));
	assert_width(m.text[1]);
	norm = normalised(m.text[1], ids, &nids);
	assert_golden(norm, "thread/10-bisection-6.1.64-rc1.eml");
	free(norm);
	mails_free(&m);

	/* A bisection without an answer says why, wrapped, once. */
	assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
	assert_int_equal(sqlite3_exec(raw, "INSERT INTO bisection (id, regression_id,"
		" release_id, job_id, target, test, tests, tree, good, bad,"
		" good_tested, commits, state, message, created) VALUES (3, 1, 2, 2,"
		" 'armv7', 'ext4.write_seq_512', ',write_seq_512,', 't', 'a', 'b', 1,"
		" 'b', 'ambiguous', 'rcgate bisected the failure of ext4.write_seq_512"
		" on armv7 in 6.1.64-rc1, but commits that could not be judged (they"
		" do not build, or their boot failed) hide the answer: the first bad"
		" commit is one of 3.', 'x')", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	reply_bisection(f->st, &f->cfg, 3);
	reply_bisection(f->st, &f->cfg, 3);
	outbox(f, &m);
	assert_int_equal(m.n, 3);
	assert_width(m.text[2]);
	assert_non_null(strstr(m.text[2], "hide the answer"));
	mails_free(&m);
	(void)err;
}

/* Bisection id's follow-up is asked for; then the outbox holds n mails. */
static void replied(struct fixture *f, int64_t id, struct mails *m, size_t n)
{
	reply_bisection(f->st, &f->cfg, id);
	outbox(f, m);
	assert_int_equal(m->n, n);
}

/*
 * A target that took another's culprit but whose revert check failed: the
 * culprit's follow-up says the failure there has a cause of its own,
 * bisected next; that target's row becomes its own bisection (the real
 * store's take-over, store_bisection_create), and when it finds another
 * commit its follow-up says why it was bisected again. The first
 * follow-up is not sent twice.
 */
static void test_followup_unexplained(void **state)
{
	struct fixture *f = *state;
	struct bisect_candidate c = { 1, 2, 2, 0, "6.1.64-rc1", "6.1", "arm64",
				      "ext4.write_seq_512", "git://t/s.git",
				      "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
				      ",write_seq_512," };
	const char *second = "dddddddddddddddddddddddddddddddddddddddd";
	struct mails m;
	char err[256];
	int64_t id = 0;

	add_release(f, "6.1.63");
	test_release(f, "6.1.63", "pass");
	announce(f, "announce-6.1.64-rc1.eml");
	test_release(f, "6.1.64-rc1", "fail");
	test_engine_sql(f, "INSERT INTO bisection (id, regression_id,"
		" release_id, job_id, target, test, tests, tree, good, bad,"
		" good_tested, commits, state, culprit, culprit_subject, created,"
		" revert_state, revert_message) VALUES (1, 1, 2, 2, 'x86_64',"
		" 'ext4.write_seq_512', ',write_seq_512,', 'git://t/s.git',"
		" 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',"
		" 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 1,"
		" 'cccccccccccccccccccccccccccccccccccccccc"
		" bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'found',"
		" 'cccccccccccccccccccccccccccccccccccccccc', 'ext4: one', 'x',"
		" 'pass', 'reverting cccccccccccc on top of 6.1.64-rc1 makes"
		" ext4.write_seq_512 pass');"
		"INSERT INTO bisection (id, regression_id, release_id, job_id, target,"
		" test, tests, tree, good, bad, good_tested, commits, state, culprit,"
		" created, revert_state, revert_message, lead) SELECT 2, 1, 2, 2,"
		" 'arm64', test, tests, tree, good, bad, 1, commits, 'found', culprit,"
		" 'x', 'fail', 'with cccccccccccc reverted on top of 6.1.64-rc1, still"
		" failing: ext4.write_seq_512', 1 FROM bisection WHERE id = 1;"
		"INSERT INTO bisection (id, regression_id, release_id, job_id, target,"
		" test, tests, tree, good, bad, good_tested, commits, state, culprit,"
		" created, revert_state, revert_message, lead) SELECT 3, 1, 2, 2,"
		" 'i386', test, tests, tree, good, bad, 1, commits, 'found', culprit,"
		" 'x', 'fail', revert_message, 1 FROM bisection WHERE id = 2");
	replied(f, 2, &m, 2);
	assert_non_null(strstr(m.text[1], "\nrevert on arm64: FAIL (with"));
	/* Both named as the list writes them: "arm64 and i386". */
	assert_non_null(strstr(m.text[1], "\nOn arm64 and i386 reverting it does"
			       " not fix the failure: it has a cause of its\nown"
			       " there, bisected next, with a follow-up of its"
			       " own.\n"));
	assert_width(m.text[1]);
	mails_free(&m);
	/* arm64 bisects on its own: its row, taken over, and found. */
	assert_int_equal(store_bisection_create(f->st, &c, c.bad, 1, c.bad,
		"running", NULL, &id, err, sizeof(err)), 0);
	assert_int_equal(id, 2);
	assert_int_equal(store_bisection_finish(f->st, id, "found", second,
		"ext4: two", NULL, NULL, NULL, NULL, NULL, err, sizeof(err)), 0);
	reply_bisection(f->st, &f->cfg, 2);
	replied(f, 1, &m, 3);	/* the first culprit's: once */
	assert_non_null(strstr(m.text[2], "\ncommit " "dddddddddddddddddddd"));
	assert_non_null(strstr(m.text[2], "\nThe culprit cccccccccccc of bisection 1"
			       " on x86_64 does not explain the failure\non"
			       " arm64: with cccccccccccc reverted"));
	assert_non_null(strstr(m.text[2], "So arm64 was bisected on its own.\n"));
	assert_null(strstr(m.text[2], "was not bisected again"));
	assert_width(m.text[2]);
	mails_free(&m);
}

/* Claims the next job, of target, for worker and leaves it running: a
 * target still being tested while the engine decides. */
static void start_job(struct fixture *f, const char *worker,
		      const char *target, struct job *job)
{
	char err[256];

	assert_int_equal(store_job_claim(f->st, worker, job, err, sizeof(err)), 1);
	assert_string_equal(job->target, target);
	assert_int_equal(store_job_transition(f->st, job->id, "fetching",
					      "running", NULL, err, sizeof(err)), 1);
}

/*
 * A regression confirmed (x86_64 failed, and its rerun) while arm64 is
 * still running is reported then, saying in words that arm64 is not
 * done; the full report follows when arm64 ends. Never a Tested-by for
 * the partial one.
 */
static void test_partial_report(void **state)
{
	struct fixture *f = *state;
	struct artifact_in art[2] = {
		{ "x86_64", "https://k.example/k.deb",
		  "4fdd0172a8c3f41a97e92465b2ac1867e1c10d82d7aeed3d26ee7a5d14df1754",
		  "deb", NULL, NULL, 0, NULL, NULL, NULL },
		{ "arm64", "https://k.example/k-arm64.deb",
		  "5fdd0172a8c3f41a97e92465b2ac1867e1c10d82d7aeed3d26ee7a5d14df1754",
		  "deb", NULL, NULL, 0, NULL, NULL, NULL },
	};
	struct result_row pass[] = {
		{ "ext4.write_seq_512", "pass", NULL, 0, 0 },
		{ "ext4.pwrite_seq_512", "pass", NULL, 0, 0 },
	};
	struct kversion kv;
	struct mails m;
	struct job arm;
	char err[256], ids[8][256], version[48], *norm;
	size_t nids = 0;
	int64_t id;

	add_release(f, "6.1.63");
	test_release(f, "6.1.63", "pass");
	/* A deadline far ahead: the partial report is not a late one. */
	store_announcement(f, "announce-6.1.64-rc1.eml", "2099-01-01T00:00:00Z",
			   version);
	assert_int_equal(kversion_parse(version, &kv, err, sizeof(err)), 0);
	assert_int_equal(store_release_create(f->st, version, &kv, NULL, art,
					      2, &id, err, sizeof(err)), 0);

	finish_next(f, "fail", "6.1.64-rc1");		/* x86_64 */
	start_job(f, "w1", "arm64", &arm);
	run_once(f);		/* x86_64's failure is rerun now */
	outbox(f, &m);
	assert_int_equal(m.n, 0);
	finish_next(f, "fail", "6.1.64-rc1");		/* the rerun */
	run_once(f);
	run_once(f);		/* once: the release has its report */
	outbox(f, &m);
	assert_int_equal(m.n, 1);
	assert_non_null(strstr(m.text[0], "\nRegressions on x86_64.\nStill being"
			       " tested on arm64: this report is partial"));
	assert_non_null(strstr(m.text[0], "\n* arm64: still being tested\n"));
	assert_non_null(strstr(m.text[0], "\n| Reported-by: "));
	assert_null(strstr(m.text[0], "\nTested-by:"));
	assert_null(strstr(m.text[0], "deadline.\n"));
	assert_width(m.text[0]);
	norm = normalised(m.text[0], ids, &nids);
	assert_golden(norm, "thread/11-partial-6.1.64-rc1.eml");
	free(norm);
	mails_free(&m);

	/* arm64 ends: the full report, which no longer says partial. */
	assert_int_equal(store_job_done(f->st, arm.id, pass, 2, 1.0, err,
					sizeof(err)), 1);
	run_once(f);
	outbox(f, &m);
	assert_int_equal(m.n, 2);
	assert_null(strstr(m.text[1], "Still being tested"));
	assert_non_null(strstr(m.text[1], "\nRegressions on x86_64.\n"));
	mails_free(&m);
}

/*
 * After the partial report, a failure of a target that ends later is
 * rerun at once, and what the rerun confirms is linked then (so it is
 * bisected, or takes the culprit of its rc's other targets), not when
 * the rc's last job ends: in the eighteenth week round i386's and
 * arm64's regressions, confirmed 4 s after x86_64's partial report,
 * waited 69 s for armv7's rerun to end. No second partial report: the
 * full one names them all.
 */
static void test_confirmed_after_partial_report(void **state)
{
	static const char sha[] =
		"4fdd0172a8c3f41a97e92465b2ac1867e1c10d82d7aeed3d26ee7a5d14df1754";
	struct fixture *f = *state;
	struct artifact_in art[3] = {
		{ "x86_64", "https://k.example/k.deb", sha, "deb", NULL, NULL, 0,
		  NULL, NULL, NULL },
		{ "i386", "https://k.example/k-i386.deb", sha, "deb", NULL, NULL,
		  0, NULL, NULL, NULL },
		{ "arm64", "https://k.example/k-arm64.deb", sha, "deb", NULL,
		  NULL, 0, NULL, NULL, NULL },
	};
	struct result_row pass[] = {
		{ "ext4.write_seq_512", "pass", NULL, 0, 0 },
		{ "ext4.pwrite_seq_512", "pass", NULL, 0, 0 },
	};
	struct result_row fail[] = {
		{ "ext4.write_seq_512", "fail", "write 2 of 8 (512 bytes):"
		  " position 512, expected 1024", 0, 0 },
		{ "ext4.pwrite_seq_512", "pass", NULL, 0, 0 },
	};
	struct kversion kv;
	struct mails m;
	struct rowset partial = { 0 };
	struct job i386, arm, rerun;
	char err[256], version[48];
	json_t *regs;
	int64_t id;

	assert_int_equal(kversion_parse("6.1.63", &kv, err, sizeof(err)), 0);
	assert_int_equal(store_release_create(f->st, "6.1.63", &kv, NULL, art, 3,
					      &id, err, sizeof(err)), 0);
	for (int i = 0; i < 3; i++)
		test_engine_finish_next(f, "6.1.63", pass, 2);
	run_once(f);
	store_announcement(f, "announce-6.1.64-rc1.eml", "2099-01-01T00:00:00Z",
			   version);
	assert_int_equal(kversion_parse(version, &kv, err, sizeof(err)), 0);
	assert_int_equal(store_release_create(f->st, version, &kv, NULL, art, 3,
					      &id, err, sizeof(err)), 0);
	test_engine_finish_next(f, version, fail, 2);		/* x86_64 */
	start_job(f, "w1", "i386", &i386);
	start_job(f, "w2", "arm64", &arm);
	run_once(f);				/* x86_64's rerun queued */
	test_engine_finish_next(f, version, fail, 2);	/* and fails */
	run_once(f);
	outbox(f, &m);
	assert_int_equal(m.n, 1);
	assert_non_null(strstr(m.text[0], "\nRegressions on x86_64.\nStill"));
	mails_free(&m);

	/* i386 fails while arm64 runs: rerun now, confirmed, linked. */
	assert_int_equal(store_job_done(f->st, i386.id, fail, 2, 1.0, err,
					sizeof(err)), 1);
	run_once(f);
	test_engine_finish_job(f, version, fail, 2, &rerun);
	assert_string_equal(rerun.target, "i386");
	run_once(f);
	regs = store_rows(f->st, Q_REGRESSIONS, err, sizeof(err), "sslls",
			  NULL, NULL, 50L, 0L, NULL);
	assert_int_equal(json_array_size(regs), 2);
	json_decref(regs);
	/* Nothing more to do there until arm64 ends: no second report, and
	 * the rc leaves the early pass. */
	run_once(f);
	outbox(f, &m);
	assert_int_equal(m.n, 1);
	mails_free(&m);
	assert_int_equal(store_releases_partial(f->st, &partial, err,
						sizeof(err)), 0);
	assert_int_equal(partial.n, 0);
	rowset_free(&partial);

	/* arm64 passes: the full report names both. */
	assert_int_equal(store_job_done(f->st, arm.id, pass, 2, 1.0, err,
					sizeof(err)), 1);
	run_once(f);
	outbox(f, &m);
	assert_int_equal(m.n, 2);
	assert_non_null(strstr(m.text[1], "\nRegressions on x86_64 and i386.\n"));
	mails_free(&m);
}

static void test_mail_allowed(void **state)
{
	static const struct {
		const char *url, *from;
		int ok;
	} cases[] = {
		{ "https://rcgate.ci.test", FROM, 1 },
		{ "https://ci.kernel.org:8443/rcgate", "ci <ci@kernel.org>", 1 },
		{ "", FROM, 0 },
		{ "http://127.0.0.1:8080", FROM, 0 },
		{ "http://localhost:8080", FROM, 0 },
		{ "http://[::1]:8080", FROM, 0 },
		{ "http://192.168.1.20:8080", FROM, 0 },
		{ "http://10.0.0.1", FROM, 0 },
		{ "http://172.20.0.1", FROM, 0 },
		{ "http://172.32.0.1", FROM, 1 },
		{ "https://rcgate.example.org", FROM, 0 },
		{ "https://example.com", FROM, 0 },
		{ "https://rcgate.invalid", FROM, 0 },
		{ "https://rcgate", FROM, 0 },
		{ "https://rcgate.ci.test", "rcgate <rcgate@localhost>", 0 },
		{ "https://rcgate.ci.test", "rcgate <rcgate@example.org>", 0 },
		{ "https://rcgate.ci.test", "rcgate@farm.invalid", 0 },
		{ "https://rcgate.ci.test", "rcgate", 0 },
	};
	char why[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why[0] = '\0';
		if (reply_mail_allowed(cases[i].url, cases[i].from, why,
				       sizeof(why)) != cases[i].ok)
			fail_msg("%s / %s: want %d (%s)", cases[i].url,
				 cases[i].from, cases[i].ok, why);
		if (!cases[i].ok)
			assert_true(why[0] != '\0');
	}
}

/* With the defaults (mail_from rcgate@localhost, no public_url) the
 * report is stored and nothing is mailed. */
static void test_refuses_with_defaults(void **state)
{
	struct fixture *f = *state;
	struct mails m;

	set(&f->cfg.public_url, "");
	set(&f->cfg.mail_from, "rcgate <rcgate@localhost>");
	add_release(f, "6.1.63");
	test_release(f, "6.1.63", "pass");
	announce(f, "announce-6.1.64-rc1.eml");
	test_release(f, "6.1.64-rc1", "fail");
	outbox(f, &m);
	assert_int_equal(m.n, 0);
	{
		char err[256];
		json_t *r = store_rows(f->st, Q_RELEASE_REPORT, err, sizeof(err),
				       "i", (int64_t)2);

		assert_int_equal(json_array_size(r), 1);
		json_decref(r);
	}
	/* Recorded as refused, with the reason: it is never sent later, and
	 * nothing threads under a mail nobody received. */
	{
		sqlite3 *h;
		sqlite3_stmt *q;
		char id[512], err[256];

		assert_int_equal(sqlite3_open_v2(f->db, &h, SQLITE_OPEN_READONLY,
						 NULL), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(h, "SELECT refused FROM mail"
						    " WHERE kind = 'report'"
						    " AND release_id = 2", -1,
						    &q, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(q), SQLITE_ROW);
		assert_non_null(strstr((const char *)sqlite3_column_text(q, 0),
				       "public_url is not set"));
		sqlite3_finalize(q);
		sqlite3_close(h);
		assert_int_equal(store_mail_id(f->st, "report", 2, 0, -1, id,
					       sizeof(id), err, sizeof(err)), 0);
	}
	set(&f->cfg.public_url, "https://rcgate.ci.test");
	set(&f->cfg.mail_from, FROM);
	run_once(f);
	outbox(f, &m);
	assert_int_equal(m.n, 0);
	/* Nobody heard of the regression: its triage retracts nothing. */
	{
		char err[256];

		assert_int_equal(store_regression_triage(f->st, 1, "invalid",
							 "flaky disk", err,
							 sizeof(err)), 1);
	}
	reply_triage(f->st, &f->cfg, 1, "invalid", "flaky disk");
	outbox(f, &m);
	assert_int_equal(m.n, 0);
}

static void test_regzbot_range(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(reply_regzbot_range("6.1.64", out, sizeof(out)), 0);
	assert_string_equal(out, "v6.1.63..v6.1.64");
	assert_int_equal(reply_regzbot_range("6.6.1", out, sizeof(out)), 0);
	assert_string_equal(out, "v6.6..v6.6.1");
	assert_int_equal(reply_regzbot_range("6.1.64-rc1", out, sizeof(out)), -1);
	assert_int_equal(reply_regzbot_range("6.1", out, sizeof(out)), -1);
	assert_int_equal(reply_regzbot_range(NULL, out, sizeof(out)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_conversation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_with_defaults, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_regzbot_one_report_per_rc,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bisection_followup, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_followup_unexplained,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_report, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_confirmed_after_partial_report,
						setup, teardown),
		cmocka_unit_test(test_mail_allowed),
		cmocka_unit_test(test_regzbot_range),
	};

	log_init("/dev/null", LOG_ERR, NULL, 0);
	return cmocka_run_group_tests_name("reply", tests, NULL, NULL);
}
