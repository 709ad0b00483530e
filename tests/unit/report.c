/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/report.c: golden plain-text reports for the 2023
 * scenario (one ext4 regression shared by 6.1.64-rc1, 5.15.140-rc1 and
 * 5.10.202-rc1), a clean rc and an rc with an infra error; the Tested-by
 * rule; and the e-mail reply, parsed back with GMime header by header, with
 * threading, body round trip and header injection attempts.
 *
 * RCGATE_UPDATE_GOLDEN=1 rewrites tests/data/report/ from the current output
 * (then review the diff).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <gmime/gmime.h>

#include "base/base.h"
#include "intake/intake.h"
#include "report/report.h"
#include "testutil.h"

#define FARM_FROM "rcgate <rcgate@example.org>"
#define REPLY_DATE "Sat, 25 Nov 2023 09:30:00 +0000"

/* ---- helpers ---- */

static void load_announcement(const char *name, struct announcement *a)
{
	char err[256];
	size_t len;
	char *raw = test_data_read("mail", name, &len);

	assert_int_equal(announce_parse(raw, len, a, err, sizeof(err)), 0);
	free(raw);
}

/* Mail readers wrap past 78 columns: only a line with a URL may be longer. */
static void assert_width(const char *text, const char *name)
{
	for (const char *line = text; *line; ) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);

		if (n > 78 && memmem(line, n, "://", 3) == NULL)
			fail_msg("%s: a line of %zu columns: %.*s", name, n, (int)n, line);
		line += n + (nl != NULL);
	}
}

/* Compares got with tests/data/report/<name>, or rewrites it on request. */
static void assert_golden(const char *got, const char *name)
{
	char path[4096];
	size_t len;
	char *want;

	test_data_path(path, sizeof(path), "report", name);
	if (getenv("RCGATE_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "wb");

		assert_non_null(f);
		assert_int_equal(fwrite(got, 1, strlen(got), f), strlen(got));
		assert_int_equal(fclose(f), 0);
	}
	want = test_file_read(path, &len);
	assert_string_equal(got, want);
	free(want);
	assert_width(got, name);
}

/* report_text(in) as the mail carries it: the 0-day form's Closes line
 * names the mail's own Message-ID. Caller frees. */
static char *mail_body(const struct report_input *in, GMimeMessage *msg)
{
	char *text = report_text(in), *ret;
	const char *id = g_mime_message_get_message_id(msg);

	if (strstr(text, "\n| Reported-by: ") == NULL)
		return text;
	assert_int_not_equal(asprintf(&ret, "%s| Closes: https://lore.kernel.org/r/%s/\n",
				      text, id), -1);
	free(text);
	return ret;
}

/* ---- the 2023 scenario ---- */

static const char *const also_6_1[] = { "5.15.140-rc1", "5.10.202-rc1" };

static const struct report_regression ext4_regression = {
	.id = 1,
	.test = "ext4.write_seq_512",
	.target = "x86_64",
	.diagnostic = "write 2 of 8 (512 bytes): position 512, expected 1024\n"
		      "buffer wrong at 0 have 62 expected 61\n",
	.state = "open",
	.also_in = also_6_1,
	.nalso = 2,
	.url = "http://rcgate.example.org/regressions/1",
};

static const struct report_target four_done[] = {
	{ "arm64", "done", "6.1.64-rc1", 48, 0, 2, 2.4, NULL, NULL, NULL, 0, NULL, NULL, NULL, 0 },
	{ "armv7", "done", "6.1.64-rc1", 48, 0, 2, 5.1, NULL, NULL, NULL, 0, NULL, NULL, NULL, 0 },
	{ "x86_64", "done", "6.1.64-rc1", 40, 8, 2, 3.0, NULL,
	  "http://rcgate.example.org/#/job/3",
	  "http://rcgate.example.org/api/v1/jobs/3/log", 3, NULL, NULL, NULL, 0 },
	{ "i386", "done", "6.1.64-rc1", 48, 0, 2, 3.3, NULL, NULL, NULL, 0, NULL, NULL, NULL, 0 },
};

static void scenario(struct report_input *in, struct announcement *a)
{
	load_announcement("announce-6.1.64-rc1.eml", a);
	memset(in, 0, sizeof(*in));
	in->farm = "rcgate";
	in->version = "6.1.64-rc1";
	in->baseline = "6.1.63";
	in->gate = "block";
	in->status_url = "http://rcgate.example.org/releases/6.1.64-rc1";
	in->regressions = &ext4_regression;
	in->nregressions = 1;
	in->targets = four_done;
	in->ntargets = 4;
	in->ann = a;
	in->tested_by = FARM_FROM;
	in->commit = "0123456789abcdef0123456789abcdef01234567";
}

static void test_golden_shared_regression(void **state)
{
	struct report_input in;
	struct announcement a;
	char *text;

	(void)state;
	scenario(&in, &a);
	text = report_text(&in);
	assert_non_null(text);
	assert_golden(text, "regression-6.1.64-rc1.txt");
	assert_non_null(strstr(text, "\nRegressions on x86_64.\n"));
	assert_non_null(strstr(text, "also affects: 5.15.140-rc1, 5.10.202-rc1"));
	/* A farm must not give Tested-by for a broken rc. */
	assert_null(strstr(text, "Tested-by:"));
	free(text);
	announce_free(&a);
}

static const struct report_target clean_targets[] = {
	{ "arm64", "done", "6.1.66-rc1", 50, 0, 0, 2.2, NULL, NULL, NULL, 0, NULL, NULL, NULL, 0 },
	{ "armv7", "done", "6.1.66-rc1", 50, 0, 0, 4.9, NULL, NULL, NULL, 0, NULL, NULL, NULL, 0 },
	/* built by rcgate from the git tree: its compiler and .config */
	{ "x86_64", "done", "6.1.66-rc1", 50, 0, 0, 2.8, NULL, NULL, NULL, 7,
	  "kvm", "gcc (Debian 12.2.0-14) 12.2.0",
	  "http://rcgate.example.org/api/v1/jobs/7/config", 0 },
	{ "i386", "done", "6.1.66-rc1", 50, 0, 0, 3.1, NULL, NULL, NULL, 0, NULL, NULL, NULL, 0 },
};

static void test_golden_clean(void **state)
{
	struct report_input in;
	struct announcement a;
	char *text;

	(void)state;
	load_announcement("announce-6.1.66-rc1.eml", &a);
	memset(&in, 0, sizeof(in));
	in.farm = "rcgate";
	in.version = "6.1.66-rc1";
	in.baseline = "6.1.65";
	in.gate = "pass";
	in.status_url = "http://rcgate.example.org/releases/6.1.66-rc1";
	in.commit = "e9b83e5b5b5a06ddf5b7b8e4bd0e3a5a3c1d0a21";
	in.describe = "v6.1.65-107-ge9b83e5b5b5a";
	in.targets = clean_targets;
	in.ntargets = 4;
	in.ann = &a;
	in.tested_by = FARM_FROM;
	text = report_text(&in);
	assert_non_null(text);
	assert_golden(text, "clean-6.1.66-rc1.txt");
	assert_non_null(strstr(text,
			       "\nNo regressions on arm64, arm, x86_64, and i386.\n"));
	assert_non_null(strstr(text, "\nTested-by: rcgate <rcgate@example.org>\n"));
	/* Only the kernel rcgate built has a build line: what rebuilds it. */
	assert_non_null(strstr(text, "\n## Build Summary\n* x86_64: gcc (Debian"
			       " 12.2.0-14) 12.2.0\n  config: http://rcgate"
			       ".example.org/api/v1/jobs/7/config\n\n"));
	assert_non_null(strstr(text, "\n* git describe: v6.1.65-107-ge9b83e5b5b5a\n"));
	free(text);
	announce_free(&a);
}

/* A failure confirmed by a rerun: the rerun boots the kernel its job
 * built, so it is no build of its own, its lines say whose rerun it is,
 * and the total counts the kernel's tests once. */
/* A report of version on targets t, from rcgate, and nothing else. */
static void input_of(struct report_input *in, const char *version,
		     const struct report_target *t, size_t n)
{
	memset(in, 0, sizeof(*in));
	in->farm = "rcgate";
	in->version = version;
	in->targets = t;
	in->ntargets = n;
}

static void test_rerun_is_its_jobs(void **state)
{
	static const struct report_target runs[] = {
		{ "x86_64", "done", "6.6.64-rc2", 190, 32, 9, 14.4, NULL,
		  "http://rcgate.example.org/#/job/21",
		  "http://rcgate.example.org/api/v1/jobs/21/log", 21, "tcg",
		  "gcc (Debian 12.2.0-14) 12.2.0",
		  "http://rcgate.example.org/api/v1/jobs/21/config", 0 },
		{ "x86_64", "done", NULL, 189, 32, 9, 35.7, NULL,
		  "http://rcgate.example.org/#/job/25",
		  "http://rcgate.example.org/api/v1/jobs/25/log", 25, "tcg",
		  NULL, "http://rcgate.example.org/api/v1/jobs/25/config", 21 },
	};
	struct report_input in;
	char *text;

	(void)state;
	input_of(&in, "6.6.64-rc2", runs, 2);
	text = report_text(&in);
	assert_non_null(text);
	assert_non_null(strstr(text, "\n## Build Summary\n* x86_64: gcc (Debian"
			       " 12.2.0-14) 12.2.0\n  config: http://rcgate"
			       ".example.org/api/v1/jobs/21/config\n\n"));
	assert_null(strstr(text, "compiler unknown"));
	assert_null(strstr(text, "jobs/25/config"));
	assert_non_null(strstr(text, "\n* x86_64: booted 6.6.64-rc2 in 14.4 s\n"
			       "* x86_64 (rerun of job 21): booted in 35.7 s\n"));
	assert_non_null(strstr(text, "\n* x86_64 (rerun of job 21): 230 total,"
			       " 189 passed, 32 failed, 9 skipped\n"));
	assert_non_null(strstr(text, "\ntotal: 231, pass: 190, fail: 32,"
			       " skip: 9\n"));
	/* "Regressions on"/"No regressions on" names the arch once. */
	assert_null(strstr(text, "x86_64 and x86_64"));
	free(text);
}

/* The report names what the bisections found: this rc's own culprit once
 * for the targets it explains (the seventeenth week round's full report,
 * sent after the follow-up, did not), another rc's for the regressions it
 * shares (a second branch's first report, before its own bisection), and
 * nothing for a regression without a culprit or one no longer counted. */
static void test_culprits_named(void **state)
{
	static const char own[] = "5be20becab13a1c5fa76d02ad234bfbcaf768187";
	static const char other[] = "de2e8240679c0a8c2b3e1f4a5d6c7b8e9f0a1b2c";
	static const char subj[] = "ext4: properly sync file size update"
				   " after O_DIRECT write";
	static const struct report_target runs[] = {
		{ "x86_64", "done", "6.6.64-rc2", 190, 32, 9, 14.4, NULL, NULL,
		  NULL, 21, NULL, NULL, NULL, 0 },
		{ "i386", "done", "6.6.64-rc2", 190, 32, 9, 14.4, NULL, NULL,
		  NULL, 22, NULL, NULL, NULL, 0 },
		{ "arm64", "done", "6.6.64-rc2", 190, 32, 9, 14.4, NULL, NULL,
		  NULL, 23, NULL, NULL, NULL, 0 },
	};
	struct report_regression r[] = {
		{ .id = 1, .test = "ext4.append_flags", .target = "x86_64",
		  .state = "confirmed", .culprit = own, .culprit_subject = subj,
		  .culprit_in = "6.6.64-rc2" },
		{ .id = 2, .test = "ext4.append_flags", .target = "i386",
		  .state = "confirmed", .culprit = own, .culprit_subject = subj,
		  .culprit_in = "6.6.64-rc2" },
		{ .id = 3, .test = "ext4.preadv_offset", .target = "x86_64",
		  .state = "confirmed", .culprit = own, .culprit_subject = subj,
		  .culprit_in = "6.6.64-rc2" },
		{ .id = 4, .test = "ext4.append_flags", .target = "arm64",
		  .state = "confirmed", .culprit = other,
		  .culprit_subject = "ext4:\nforged", .culprit_in = "6.1.193-rc1" },
		{ .id = 5, .test = "xfs.append_flags", .target = "arm64",
		  .state = "confirmed" },
		{ .id = 6, .test = "btrfs.append_flags", .target = "arm64",
		  .state = "fixed", .culprit = "0123456789abcdef",
		  .culprit_in = "6.6.64-rc2" },
	};
	struct report_input in;
	char *text;

	(void)state;
	input_of(&in, "6.6.64-rc2", runs, 3);
	in.regressions = r;
	in.nregressions = 6;
	text = report_text(&in);
	assert_non_null(text);
	assert_non_null(strstr(text, "\nRegressions on x86_64, i386, and arm64.\n"
			       "Bisected on x86_64 and i386 to 5be20becab13"
			       " (\"ext4: properly sync file size\nupdate after"
			       " O_DIRECT write\").\nThe same regressions on"
			       " arm64 were bisected in 6.1.193-rc1 to"
			       " de2e8240679c\n(\"ext4: forged\").\n\n"
			       "## Build\n"));
	assert_null(strstr(text, "5be20becab13a1"));
	assert_null(strstr(text, "0123456789ab"));
	/* once each */
	assert_null(strstr(strstr(text, "Bisected on") + 1, "Bisected on"));
	free(text);
	/* Nothing bisected: no such line. */
	for (size_t i = 0; i < 6; i++)
		r[i].culprit = NULL;
	text = report_text(&in);
	assert_null(strstr(text, "isected"));
	free(text);
}

static const struct report_target infra_targets[] = {
	{ "arm64", "done", "5.15.140-rc1", 50, 0, 0, 2.3, NULL, NULL, NULL, 0, NULL, NULL, NULL, 0 },
	{ "armv7", "infra_error", "5.15.140-rc1", 0, 0, 0, 600.0,
	  "guest output ended before the completion marker\n(timeout after 600 s)",
	  NULL, NULL, 0, NULL, NULL, NULL, 0 },
	{ "x86_64", "done", "5.15.140-rc1", 50, 0, 0, 2.9, NULL, NULL, NULL, 0, NULL, NULL, NULL, 0 },
	{ "i386", "done", "5.15.140-rc1", 50, 0, 0, 3.0, NULL, NULL, NULL, 0, NULL, NULL, NULL, 0 },
};

static void test_golden_infra_error(void **state)
{
	struct report_input in;
	struct announcement a;
	char *text;

	(void)state;
	load_announcement("announce-5.15.140-rc1.eml", &a);
	memset(&in, 0, sizeof(in));
	in.farm = "rcgate";
	in.version = "5.15.140-rc1";
	in.baseline = "5.15.139";
	in.gate = "pass";
	in.status_url = "http://rcgate.example.org/releases/5.15.140-rc1";
	in.targets = infra_targets;
	in.ntargets = 4;
	in.ann = &a;
	in.tested_by = FARM_FROM;
	text = report_text(&in);
	assert_non_null(text);
	assert_golden(text, "infra-5.15.140-rc1.txt");
	assert_non_null(strstr(text, "\nNot tested on arm (infrastructure error).\n"));
	assert_null(strstr(text, "Tested-by:"));
	free(text);
	announce_free(&a);
}

/* ---- rules ---- */

static void test_tested_by_rules(void **state)
{
	static const struct report_regression invalid = {
		.id = 2, .test = "ext4.append_4096", .target = "i386",
		.state = "invalid",
	};
	struct report_input in;
	char *text;

	(void)state;
	input_of(&in, "6.1.66-rc1", clean_targets, 4);
	in.tested_by = FARM_FROM;

	/* No gate given, all clean: trailer. */
	text = report_text(&in);
	assert_non_null(strstr(text, "Tested-by: "));
	assert_non_null(strstr(text, "(no baseline)"));
	free(text);

	/* A gate that says block wins even without a listed regression. */
	in.gate = "block";
	text = report_text(&in);
	assert_null(strstr(text, "Tested-by: "));
	free(text);

	/* A regression triaged invalid does not count. */
	in.gate = "pass";
	in.regressions = &invalid;
	in.nregressions = 1;
	text = report_text(&in);
	assert_non_null(strstr(text, "Tested-by: "));
	assert_non_null(strstr(text, "## Resolved Regressions (not counted)\n* i386, ext4.append_4096\n  (triaged invalid: not a regression)\n"));
	assert_non_null(strstr(text, "\nNo regressions on"));
	free(text);

	/* No targets, no trailer: nothing was tested. */
	in.ntargets = 0;
	text = report_text(&in);
	assert_null(strstr(text, "Tested-by: "));
	assert_non_null(strstr(text, "\nNo test results.\n"));
	free(text);

	/* No identity, no trailer. */
	in.ntargets = 4;
	in.tested_by = NULL;
	text = report_text(&in);
	assert_null(strstr(text, "Tested-by: "));
	free(text);
}

static void test_arch_lists(void **state)
{
	static const struct report_target two[] = {
		{ "arm64", "done", NULL, 1, 0, 0, 1.0, NULL, NULL, NULL, 0, NULL, NULL, NULL, 0 },
		{ "x86_64", "done", NULL, 1, 0, 0, 1.0, NULL, NULL, NULL, 0, NULL, NULL, NULL, 0 },
	};
	static const struct report_regression both[] = {
		{ 1, "a", "x86_64", NULL, "open", NULL, 0, NULL, NULL, NULL, NULL, NULL },
		{ 2, "b", "arm64", NULL, "confirmed", NULL, 0, NULL, NULL, NULL,
		  NULL, NULL },
		{ 3, "c", "x86_64", NULL, "open", NULL, 0, NULL, NULL, NULL, NULL, NULL },
	};
	struct report_input in;
	char *text;

	(void)state;
	input_of(&in, "6.1.64-rc1", two, 2);
	text = report_text(&in);
	assert_non_null(strstr(text, "No regressions on arm64 and x86_64.\n"));
	free(text);
	in.ntargets = 1;
	text = report_text(&in);
	assert_non_null(strstr(text, "No regressions on arm64.\n"));
	free(text);
	in.ntargets = 2;
	in.regressions = both;
	in.nregressions = 3;
	text = report_text(&in);
	/* Targets' order, each arch once. */
	assert_non_null(strstr(text, "Regressions on arm64 and x86_64.\n"));
	free(text);
}

/* Long diagnostics and infra errors are wrapped at 78 columns, indented
 * under their item; a URL is never broken. */
static void test_long_lines_wrap(void **state)
{
	static const struct report_target one[] = {
		{ "armv7", "infra_error", NULL, 0, 0, 0, 0.0,
		  "guest output ended before the completion marker (timeout after"
		  " 600 s) while the agent was still running the xfs suite",
		  NULL, NULL, 0, NULL, NULL, NULL, 0 },
	};
	static const struct report_regression reg[] = {
		{ 1, "ext4.crash_osync_extend", "x86_64",
		  "crash_osync_extend: st_size 4096 after power cut, expected >= 65536"
		  " (O_SYNC|O_DIRECT extension not durable)\n"
		  "see https://example.org/a/very/long/url/that/must/not/be/broken/at/all/ever/x",
		  "open", NULL, 0, NULL, NULL, NULL, NULL, NULL },
	};
	struct report_input in;
	char *text;

	(void)state;
	input_of(&in, "6.1.64-rc1", one, 1);
	in.regressions = reg;
	in.nregressions = 1;
	text = report_text(&in);
	assert_width(text, "long lines");
	assert_non_null(strstr(text, "\n      (O_SYNC|O_DIRECT extension not durable)\n"));
	assert_non_null(strstr(text, "https://example.org/a/very/long/url/that/must/not/be/broken/at/all/ever/x\n"));
	free(text);
}

static void test_text_sanitized_and_null(void **state)
{
	static const struct report_regression nasty = {
		.id = 3, .test = "ext4.x\r\nTested-by: evil", .target = "x86_64",
		.diagnostic = "line one\r\n\r\n  \n\tline\x1b[31m two\n", .state = "open",
	};
	struct report_input in;
	char *text;

	(void)state;
	assert_null(report_text(NULL));
	memset(&in, 0, sizeof(in));
	assert_null(report_text(&in));
	in.farm = "rcgate";
	assert_null(report_text(&in));
	in.version = "6.1.64-rc1";
	in.regressions = &nasty;
	in.nregressions = 1;
	text = report_text(&in);
	assert_non_null(text);
	assert_non_null(strstr(text, "* x86_64, ext4.x  Tested-by: evil\n"
				     "    line one\n"
				     "     line [31m two\n"));
	assert_null(strchr(text, '\r'));
	assert_null(strchr(text, '\x1b'));
	free(text);
}

/* ---- the e-mail ---- */

static GMimeMessage *parse_message(const char *raw)
{
	GMimeStream *stream = g_mime_stream_mem_new_with_buffer(raw, strlen(raw));
	GMimeParser *parser = g_mime_parser_new_with_stream(stream);
	GMimeMessage *msg = g_mime_parser_construct_message(parser, NULL);

	g_object_unref(parser);
	g_object_unref(stream);
	assert_non_null(msg);
	return msg;
}

static char *list_string(InternetAddressList *list)
{
	char *s = internet_address_list_to_string(list, NULL, FALSE);
	char *copy = strdup(s ? s : "");

	g_free(s);
	return copy;
}

static void test_email_headers_threading_body(void **state)
{
	struct report_input in;
	struct announcement a;
	char err[256], *mail, *text, *s, *want_to;
	GMimeMessage *msg;
	GMimeObject *body;
	GDateTime *date;
	size_t n;

	(void)state;
	scenario(&in, &a);
	in.tested_by = NULL;	/* report_email then signs with From */
	mail = report_email(&in, FARM_FROM, REPLY_DATE, err, sizeof(err));
	assert_non_null(mail);
	assert_string_equal(err, "");
	assert_golden(mail, "regression-6.1.64-rc1.eml");

	msg = parse_message(mail);
	s = list_string(g_mime_message_get_from(msg));
	assert_string_equal(s, FARM_FROM);
	free(s);
	n = strlen(a.from) + strlen(a.to) + 3;
	want_to = malloc(n);
	assert_non_null(want_to);
	snprintf(want_to, n, "%s, %s", a.from, a.to);
	s = list_string(g_mime_message_get_to(msg));
	assert_string_equal(s, want_to);
	free(s);
	free(want_to);
	/* The announcement Cc's its sender, who is in To already: a
	 * reply-all names everyone once. */
	s = list_string(g_mime_message_get_cc(msg));
	assert_non_null(strstr(a.cc, "Greg Kroah-Hartman <gregkh@linuxfoundation.org>, "));
	assert_string_equal(s, a.cc + strlen("Greg Kroah-Hartman <gregkh@linuxfoundation.org>, "));
	assert_null(strstr(s, "gregkh@"));
	free(s);
	assert_string_equal(g_mime_message_get_subject(msg),
			    "Re: [PATCH 6.1 000/372] 6.1.64-rc1 review");
	assert_string_equal(g_mime_object_get_header(GMIME_OBJECT(msg), "In-Reply-To"),
			    "<20231124172024.664207345@linuxfoundation.org>");
	assert_string_equal(g_mime_object_get_header(GMIME_OBJECT(msg), "References"),
			    "<20231124172024.664207345@linuxfoundation.org>");
	assert_string_equal(g_mime_object_get_header(GMIME_OBJECT(msg), "MIME-Version"),
			    "1.0");
	s = (char *)g_mime_message_get_message_id(msg);
	assert_non_null(s);
	assert_true(strncmp(s, "rcgate.6.1.64-rc1.20231125T093000Z.", 35) == 0);
	assert_non_null(strstr(s, "@example.org"));
	date = g_mime_message_get_date(msg);
	assert_non_null(date);
	assert_int_equal(g_date_time_to_unix(date), 1700904600);

	body = g_mime_message_get_mime_part(msg);
	assert_true(GMIME_IS_TEXT_PART(body));
	assert_true(g_mime_content_type_is_type(g_mime_object_get_content_type(body),
						"text", "plain"));
	assert_string_equal(g_mime_object_get_content_type_parameter(body, "charset"),
			    "utf-8");
	s = g_mime_text_part_get_text(GMIME_TEXT_PART(body));
	in.tested_by = FARM_FROM;
	text = mail_body(&in, msg);
	assert_string_equal(s, text);
	g_free(s);
	free(text);
	g_object_unref(msg);

	/* Deterministic: same input, same bytes. */
	in.tested_by = NULL;
	s = report_email(&in, FARM_FROM, REPLY_DATE, err, sizeof(err));
	assert_string_equal(s, mail);
	free(s);
	free(mail);
	announce_free(&a);
}

static void test_email_clean_has_tested_by_non_ascii(void **state)
{
	struct report_input in;
	struct announcement a;
	char err[256], *mail, *s;
	GMimeMessage *msg;

	(void)state;
	load_announcement("announce-6.1.65-rc2-encoded.eml", &a);
	memset(&in, 0, sizeof(in));
	in.farm = "rcgate";
	in.version = "6.1.65-rc2";
	in.gate = "pass";
	in.targets = clean_targets;
	in.ntargets = 4;
	in.ann = &a;
	mail = report_email(&in, "Farm D\xc3\xad" "az <farm@example.org>",
			    "Wed, 29 Nov 2023 08:00:00 +0100", err, sizeof(err));
	assert_non_null(mail);
	/* Non-ASCII names leave as encoded words, not raw 8-bit headers. */
	assert_null(strstr(mail, "D\xc3\xad" "az <daniel"));
	/* The body is UTF-8 but the mail stays 7-bit clean for SMTP. */
	assert_non_null(strstr(mail, "\nContent-Transfer-Encoding: quoted-printable\n"));
	for (const char *p = mail; *p; p++)
		assert_true((unsigned char)*p < 0x80);
	msg = parse_message(mail);
	s = list_string(g_mime_message_get_cc(msg));
	assert_non_null(strstr(s, "Daniel D\xc3\xad" "az <daniel.diaz@linaro.org>"));
	free(s);
	s = g_mime_text_part_get_text(GMIME_TEXT_PART(g_mime_message_get_mime_part(msg)));
	assert_non_null(strstr(s, "\nTested-by: Farm D\xc3\xad" "az <farm@example.org>\n"));
	g_free(s);
	assert_true(strncmp(g_mime_message_get_message_id(msg),
			    "rcgate.6.1.65-rc2.20231129T070000Z.", 35) == 0);
	g_object_unref(msg);
	free(mail);
	announce_free(&a);
}

/* SMTP lines stop at 998 bytes: a long diagnostic must still arrive whole. */
static void test_email_long_line(void **state)
{
	struct report_regression r = ext4_regression;
	struct report_input in;
	struct announcement a;
	char err[256], *mail, *text, *s, *diag;
	GMimeMessage *msg;
	size_t maxline = 0, cur = 0;

	(void)state;
	scenario(&in, &a);
	diag = malloc(2001);
	assert_non_null(diag);
	memset(diag, 'd', 2000);
	diag[2000] = '\0';
	r.diagnostic = diag;
	in.regressions = &r;
	mail = report_email(&in, FARM_FROM, REPLY_DATE, err, sizeof(err));
	assert_non_null(mail);
	for (const char *p = mail; *p; p++) {
		cur = *p == '\n' ? 0 : cur + 1;
		if (cur > maxline)
			maxline = cur;
	}
	assert_true(maxline <= 998);
	msg = parse_message(mail);
	s = g_mime_text_part_get_text(GMIME_TEXT_PART(g_mime_message_get_mime_part(msg)));
	in.tested_by = FARM_FROM;
	text = mail_body(&in, msg);
	assert_string_equal(s, text);
	g_free(s);
	free(text);
	g_object_unref(msg);
	free(mail);
	free(diag);
	announce_free(&a);
}

static void test_email_errors(void **state)
{
	struct report_input in;
	struct announcement a;
	char err[256];

	(void)state;
	scenario(&in, &a);
	in.ann = NULL;
	assert_null(report_email(&in, FARM_FROM, REPLY_DATE, err, sizeof(err)));
	assert_string_equal(err, "no announcement for 6.1.64-rc1: nothing to reply to");
	in.ann = &a;
	assert_null(report_email(&in, FARM_FROM, "yesterday", err, sizeof(err)));
	assert_string_equal(err, "date \"yesterday\" is not an RFC 2822 date");
	assert_null(report_email(&in, "nobody", REPLY_DATE, err, sizeof(err)));
	assert_string_equal(err, "from has no mailbox with a domain");
	assert_null(report_email(&in, NULL, REPLY_DATE, err, sizeof(err)));
	assert_null(report_email(NULL, FARM_FROM, REPLY_DATE, err, sizeof(err)));
	memcpy(a.message_id, "a@b>\r\nBcc: x@y", 15);
	assert_null(report_email(&in, FARM_FROM, REPLY_DATE, err, sizeof(err)));
	assert_string_equal(err, "announcement Message-ID is empty or has spaces, <> or control characters");
	a.message_id[0] = '\0';
	assert_null(report_email(&in, FARM_FROM, REPLY_DATE, NULL, 0));
	announce_free(&a);
}

/* A follow-up quoting a commit subject with ESC and other controls: none
 * reaches the mail, newlines and tabs of the body stay (issue 27). */
static void test_followup_controls(void **state)
{
	struct report_input in;
	struct announcement a;
	char err[256], *mail, *body;

	(void)state;
	scenario(&in, &a);
	mail = report_mail_compose(&(struct report_mail){ .ann = &a,
		.farm = "farm", .version = "6.1.64-rc1", .kind = "bisection",
		.from = FARM_FROM, .date = REPLY_DATE,
		.body = "culprit: 1234 ext4: fix\x1b[2J\x1b]0;pwned\x07 it\n"
			"\tnext line\x7f\x01\n" }, NULL, 0, err, sizeof(err));
	assert_non_null(mail);
	body = strstr(mail, "\n\n");
	assert_non_null(body);
	for (const char *p = body; *p; p++)
		if (((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t' &&
		     *p != '\r') || *p == 0x7f)
			fail_msg("control byte 0x%02x in the mail", (unsigned char)*p);
	assert_non_null(strstr(body, "fix [2J ]0;pwned  it"));
	assert_non_null(strstr(body, "\tnext line"));
	free(mail);
	announce_free(&a);
}

/* The only header names a reply may carry. */
static int expected_header(const char *name)
{
	static const char *const names[] = {
		"From", "To", "Cc", "Subject", "Date", "Message-Id",
		"In-Reply-To", "References", "MIME-Version", "Content-Type",
		"Content-Transfer-Encoding",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (g_ascii_strcasecmp(name, names[i]) == 0)
			return 1;
	return 0;
}

static void test_email_header_injection(void **state)
{
	struct announcement a;
	struct report_input in;
	char err[256], *mail;
	GMimeMessage *msg;
	GMimeHeaderList *headers;
	const char *p;

	(void)state;
	memset(&a, 0, sizeof(a));
	snprintf(a.version, sizeof(a.version), "6.1.64-rc1");
	snprintf(a.subject, sizeof(a.subject),
		 "[PATCH 6.1 000/372] 6.1.64-rc1 review\r\nX-Injected: subject");
	snprintf(a.message_id, sizeof(a.message_id), "20231124172024.664207345@linuxfoundation.org");
	snprintf(a.from, sizeof(a.from),
		 "Greg <gregkh@linuxfoundation.org>\r\nX-Injected: from");
	a.to = strdup("stable@vger.kernel.org\nX-Injected: to");
	a.cc = strdup("a@b.c\r\n\r\nX-Injected: cc-body");
	assert_non_null(a.to);
	assert_non_null(a.cc);
	memset(&in, 0, sizeof(in));
	in.farm = "rcgate\r\nX-Injected: farm";
	in.version = "6.1.64-rc1\nX-Injected: version";
	in.targets = clean_targets;
	in.ntargets = 4;
	in.ann = &a;
	mail = report_email(&in, "rcgate <rcgate@example.org>\r\nX-Injected: me",
			    REPLY_DATE, err, sizeof(err));
	assert_non_null(mail);

	/* No line of the header block starts a header we did not write. */
	for (p = mail; *p && *p != '\n'; p = strchr(p, '\n') + 1) {
		const char *colon = strchr(p, ':');
		const char *nl = strchr(p, '\n');
		char name[64];

		assert_non_null(nl);
		if (*p == ' ' || *p == '\t')
			continue;	/* folded continuation */
		assert_non_null(colon);
		assert_true(colon < nl && (size_t)(colon - p) < sizeof(name));
		memcpy(name, p, (size_t)(colon - p));
		name[colon - p] = '\0';
		if (!expected_header(name))
			fail_msg("unexpected header \"%s\"", name);
	}
	msg = parse_message(mail);
	headers = g_mime_object_get_header_list(GMIME_OBJECT(msg));
	assert_false(g_mime_header_list_contains(headers, "X-Injected"));
	assert_false(g_mime_header_list_contains(headers, "Bcc"));
	for (int i = 0; i < g_mime_header_list_get_count(headers); i++)
		assert_true(expected_header(g_mime_header_get_name(
			g_mime_header_list_get_header_at(headers, i))));
	assert_null(strpbrk(g_mime_message_get_subject(msg), "\r\n"));
	g_object_unref(msg);
	free(mail);
	announce_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_shared_regression),
		cmocka_unit_test(test_golden_clean),
		cmocka_unit_test(test_rerun_is_its_jobs),
		cmocka_unit_test(test_culprits_named),
		cmocka_unit_test(test_golden_infra_error),
		cmocka_unit_test(test_tested_by_rules),
		cmocka_unit_test(test_arch_lists),
		cmocka_unit_test(test_long_lines_wrap),
		cmocka_unit_test(test_text_sanitized_and_null),
		cmocka_unit_test(test_email_headers_threading_body),
		cmocka_unit_test(test_email_clean_has_tested_by_non_ascii),
		cmocka_unit_test(test_email_long_line),
		cmocka_unit_test(test_email_errors),
		cmocka_unit_test(test_email_header_injection),
		cmocka_unit_test(test_followup_controls),
	};

	announce_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
