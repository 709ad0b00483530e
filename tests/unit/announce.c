/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/announce.c: the real-format fixtures in
 * tests/data/mail (the Nov 2023 cycle and friends), what is not an
 * announcement and why, the X-KernelTest header precedence, and inputs that
 * must never crash it (garbage, truncation at every byte, huge headers).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>

#include "base/base.h"
#include "intake/intake.h"
#include "testutil.h"

/* ---- helpers ---- */

static int parse_file(const char *name, struct announcement *a, char *err,
		      size_t errlen)
{
	size_t len;
	char *raw = test_data_read("mail", name, &len);
	int rc = announce_parse(raw, len, a, err, errlen);

	free(raw);
	return rc;
}

static int parse_str(const char *raw, struct announcement *a, char *err,
		     size_t errlen)
{
	return announce_parse(raw, strlen(raw), a, err, errlen);
}

/* A minimal Greg-style announcement with extra headers and a given subject. */
static char *make_mail(const char *subject, const char *extra_headers,
		       const char *body)
{
	size_t n = strlen(subject) + strlen(extra_headers) + strlen(body) + 1024;
	char *m = malloc(n);

	assert_non_null(m);
	snprintf(m, n,
		 "From: Greg Kroah-Hartman <gregkh@linuxfoundation.org>\n"
		 "To: stable@vger.kernel.org\n"
		 "Subject: %s\n"
		 "Date: Fri, 24 Nov 2023 17:48:39 +0000\n"
		 "Message-ID: <20231124172024.664207345@linuxfoundation.org>\n"
		 "%s"
		 "MIME-Version: 1.0\n"
		 "Content-Type: text/plain; charset=UTF-8\n"
		 "\n%s",
		 subject, extra_headers, body);
	return m;
}

static const char body_6_1_64[] =
	"This is the start of the stable review cycle for the 6.1.64 release.\n"
	"Responses should be made by Sun, 26 Nov 2023 17:19:17 +0000.\n"
	"Anything received after that time might be too late.\n"
	"The whole patch series can be found in one patch at:\n"
	"\thttps://www.kernel.org/pub/linux/kernel/v6.x/stable-review/patch-6.1.64-rc1.gz\n"
	"or in the git tree and branch at:\n"
	"\tgit://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git linux-6.1.y\n";

/* ---- the fixtures ---- */

static void test_6_1_64_rc1_every_field(void **state)
{
	struct announcement a;
	char err[256];

	(void)state;
	assert_int_equal(parse_file("announce-6.1.64-rc1.eml", &a, err,
				    sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_string_equal(a.version, "6.1.64-rc1");
	assert_string_equal(a.branch, "6.1");
	assert_string_equal(a.subject, "[PATCH 6.1 000/372] 6.1.64-rc1 review");
	assert_string_equal(a.message_id,
			    "20231124172024.664207345@linuxfoundation.org");
	assert_string_equal(a.from,
			    "Greg Kroah-Hartman <gregkh@linuxfoundation.org>");
	assert_string_equal(a.to, "stable@vger.kernel.org");
	assert_string_equal(a.cc,
		"Greg Kroah-Hartman <gregkh@linuxfoundation.org>, "
		"patches@lists.linux.dev, linux-kernel@vger.kernel.org, "
		"torvalds@linux-foundation.org, akpm@linux-foundation.org, "
		"linux@roeck-us.net, shuah@kernel.org, patches@kernelci.org, "
		"lkft-triage@lists.linaro.org, pavel@denx.de, "
		"jonathanh@nvidia.com, f.fainelli@gmail.com, "
		"sudipm.mukherjee@gmail.com, srw@sladewatkins.net, "
		"rwarsow@gmx.de, conor@kernel.org, allen.lkml@gmail.com");
	assert_string_equal(a.date, "2023-11-24T17:48:39Z");
	assert_string_equal(a.deadline, "2023-11-26T17:19:17Z");
	/* The head replies quote: Roeck's seven lines, blank line kept. */
	assert_string_equal(a.head,
		"This is the start of the stable review cycle for the 6.1.64 release.\n"
		"There are 372 patches in this series, all will be posted as a response\n"
		"to this one.  If anyone has any issues with these being applied, please\n"
		"let me know.\n"
		"\n"
		"Responses should be made by Sun, 26 Nov 2023 17:19:17 +0000.\n"
		"Anything received after that time might be too late.");
	assert_string_equal(a.patch_url,
		"https://www.kernel.org/pub/linux/kernel/v6.x/stable-review/patch-6.1.64-rc1.gz");
	assert_string_equal(a.git_tree,
		"git://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git");
	assert_string_equal(a.git_branch, "linux-6.1.y");
	assert_int_equal(a.npatches, 372);
	announce_free(&a);
	assert_null(a.to);
	assert_null(a.cc);
	announce_free(&a);	/* twice is harmless */
}

struct fixture_case {
	const char *file, *version, *branch, *message_id, *date, *deadline;
	const char *patch_url, *git_tree, *git_branch;
	long npatches;
};

#define STABLE_RC "git://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git"
#define REVIEW(vx, v) "https://www.kernel.org/pub/linux/kernel/" vx "/stable-review/patch-" v ".gz"

static const struct fixture_case fixtures[] = {
	{ "announce-5.15.140-rc1.eml", "5.15.140-rc1", "5.15",
	  "20231124172028.107505484@linuxfoundation.org",
	  "2023-11-24T17:46:52Z", "2023-11-26T17:19:17Z",
	  REVIEW("v5.x", "5.15.140-rc1"), STABLE_RC, "linux-5.15.y", 297 },
	{ "announce-5.10.202-rc1.eml", "5.10.202-rc1", "5.10",
	  "20231124171930.281665051@linuxfoundation.org",
	  "2023-11-24T17:49:02Z", "2023-11-26T17:19:17Z",
	  REVIEW("v5.x", "5.10.202-rc1"), STABLE_RC, "linux-5.10.y", 193 },
	/* Date: in +0100: stored in UTC. */
	{ "announce-6.1.66-rc1.eml", "6.1.66-rc1", "6.1",
	  "20231204192935.163661217@linuxfoundation.org",
	  "2023-12-04T19:29:35Z", "2023-12-06T19:29:23Z",
	  REVIEW("v6.x", "6.1.66-rc1"), STABLE_RC, "linux-6.1.y", 107 },
	/* X-KernelTest-* win over the body: other deadline, other URL. */
	{ "announce-6.6.3-rc1-xkerneltest.eml", "6.6.3-rc1", "6.6",
	  "20231124172010.413667547@linuxfoundation.org",
	  "2023-11-24T17:42:49Z", "2023-11-26T17:19:00Z",
	  "http://kernel.org/pub/linux/kernel/v6.x/stable-review/patch-6.6.3-rc1.gz",
	  STABLE_RC, "linux-6.6.y", 530 },
	/* Quoted-printable body with soft breaks, folded Subject. */
	{ "announce-5.4.262-rc1-qp.eml", "5.4.262-rc1", "5.4",
	  "20231124171941.909624388@linuxfoundation.org",
	  "2023-11-24T17:53:37Z", "2023-11-26T17:19:17Z",
	  REVIEW("v5.x", "5.4.262-rc1"), STABLE_RC, "linux-5.4.y", 159 },
	/* 0/N, multipart/mixed, patch URL from the line after "in one patch at:". */
	{ "announce-4.14.332-rc1-sasha.eml", "4.14.332-rc1", "4.14",
	  "20231202160819.2513104-1-sashal@kernel.org",
	  "2023-12-02T16:08:14Z", "2023-12-04T16:08:13Z",
	  "https://git.kernel.org/pub/scm/linux/kernel/git/sashal/linux-stable.git/patch/?id=linux-4.14.y&id2=v4.14.331",
	  "https://git.kernel.org/pub/scm/linux/kernel/git/sashal/linux-stable.git",
	  "linux-4.14.y", 5 },
	/* Encoded-word Subject; the text/html part before text/plain is skipped. */
	{ "announce-6.1.65-rc2-encoded.eml", "6.1.65-rc2", "6.1",
	  "20231128201203.122478941@linuxfoundation.org",
	  "2023-11-28T20:12:03Z", "2023-11-30T20:11:55Z",
	  REVIEW("v6.x", "6.1.65-rc2"), STABLE_RC, "linux-6.1.y", 82 },
};

static void test_fixture_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		const struct fixture_case *c = &fixtures[i];
		struct announcement a;
		char err[256];

		print_message("# %s\n", c->file);
		assert_int_equal(parse_file(c->file, &a, err, sizeof(err)), 0);
		assert_string_equal(a.version, c->version);
		assert_string_equal(a.branch, c->branch);
		assert_string_equal(a.message_id, c->message_id);
		assert_string_equal(a.date, c->date);
		assert_string_equal(a.deadline, c->deadline);
		assert_string_equal(a.patch_url, c->patch_url);
		assert_string_equal(a.git_tree, c->git_tree);
		assert_string_equal(a.git_branch, c->git_branch);
		assert_int_equal(a.npatches, c->npatches);
		assert_non_null(a.to);
		assert_non_null(a.cc);
		announce_free(&a);
	}
}

static void test_decoded_subject_and_names(void **state)
{
	struct announcement a;
	char err[256];

	(void)state;
	assert_int_equal(parse_file("announce-6.1.65-rc2-encoded.eml", &a, err,
				    sizeof(err)), 0);
	assert_string_equal(a.subject, "[PATCH 6.1 000/82] 6.1.65-rc2 review");
	assert_non_null(strstr(a.cc, "Daniel D\xc3\xad" "az <daniel.diaz@linaro.org>"));
	announce_free(&a);

	assert_int_equal(parse_file("announce-5.4.262-rc1-qp.eml", &a, err,
				    sizeof(err)), 0);
	/* Folding white space survives unfolding; it is not the parser's to drop. */
	assert_non_null(strstr(a.subject, "[PATCH 5.4"));
	assert_non_null(strstr(a.subject, "5.4.262-rc1 review"));
	assert_null(strchr(a.subject, '\n'));
	assert_null(strchr(a.subject, '\t'));
	announce_free(&a);

	assert_int_equal(parse_file("announce-4.14.332-rc1-sasha.eml", &a, err,
				    sizeof(err)), 0);
	assert_string_equal(a.from, "Sasha Levin <sashal@kernel.org>");
	assert_string_equal(a.to,
			    "stable@vger.kernel.org, linux-kernel@vger.kernel.org");
	announce_free(&a);
}

/* A mail with only a header block is a valid announcement without body facts. */
static void test_headers_only(void **state)
{
	struct announcement a;
	char err[256];

	(void)state;
	assert_int_equal(parse_file("headers-only.eml", &a, err, sizeof(err)),
			 0);
	assert_string_equal(a.version, "5.10.202-rc1");
	assert_string_equal(a.head, "");	/* no body: nothing quoted */
	assert_string_equal(a.deadline, "");
	assert_string_equal(a.patch_url, "");
	assert_string_equal(a.git_tree, "");
	assert_string_equal(a.git_branch, "");
	announce_free(&a);
}

/* ---- not announcements ---- */

struct reject_case {
	const char *file;
	int rc;
	const char *why;
};

static const struct reject_case rejects[] = {
	{ "reply-preadv03.eml", 1, "reply (Re:)" },
	{ "patch-6.1-001-ext4.eml", 1,
	  "patch 1/372 of a series, not the cover letter" },
	{ "unrelated-list-mail.eml", 1, "subject is not an rc review" },
	{ "unrelated-ext4-corruption.eml", 1,
	  "reply (In-Reply-To and Re: in the subject)" },
	{ "no-message-id.eml", 1, "no Message-ID" },
	{ "branch-mismatch.eml", 1,
	  "subject branch 6.1 does not match version 6.2.64-rc1" },
	{ "garbage.eml", -1, "not an RFC 822 message (no header block)" },
	{ "truncated-headers.eml", -1, "header block is truncated" },
};

static void test_reject_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rejects) / sizeof(rejects[0]); i++) {
		struct announcement a;
		char err[256];

		print_message("# %s\n", rejects[i].file);
		assert_int_equal(parse_file(rejects[i].file, &a, err,
					    sizeof(err)), rejects[i].rc);
		assert_string_equal(err, rejects[i].why);
		assert_null(a.to);
		assert_null(a.cc);
		announce_free(&a);
	}
}

static void test_reply_prefixes(void **state)
{
	static const char *const subjects[] = {
		"Re: [PATCH 6.1 000/372] 6.1.64-rc1 review",
		"RE: [PATCH 6.1 000/372] 6.1.64-rc1 review",
		"re:[PATCH 6.1 000/372] 6.1.64-rc1 review",
		"Fwd: [PATCH 6.1 000/372] 6.1.64-rc1 review",
		"FW: [PATCH 6.1 000/372] 6.1.64-rc1 review",
		"AW: [PATCH 6.1 000/372] 6.1.64-rc1 review",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(subjects) / sizeof(subjects[0]); i++) {
		struct announcement a;
		char err[256];
		char *m = make_mail(subjects[i], "", body_6_1_64);

		assert_int_equal(parse_str(m, &a, err, sizeof(err)), 1);
		assert_true(strcmp(err, "reply (Re:)") == 0 ||
			    strcmp(err, "forward (Fwd:)") == 0);
		free(m);
	}
}

static void test_subject_shapes(void **state)
{
	static const struct {
		const char *subject;
		int rc;
		long npatches;
	} cases[] = {
		{ "[PATCH 6.1 000/372] 6.1.64-rc1 review", 0, 372 },
		{ "[PATCH 6.1 00/37] 6.1.64-rc1 review", 0, 37 },
		{ "[PATCH 6.1 0/3] 6.1.64-rc3 review", 0, 3 },
		{ "  [patch 6.1 000/372]   6.1.64-rc1   review  ", 0, 372 },
		{ "[PATCH 6.1 001/372] 6.1.64-rc1 review", 1, 0 },
		{ "[PATCH 6.1 000/372] 6.1.64 review", 1, 0 },
		{ "[PATCH 6.1 000/372] 6.1.64-rc1", 1, 0 },
		{ "[PATCH 6.1 000/372] 6.1.64-rc1 review please", 1, 0 },
		{ "[PATCH 6.1 000/0] 6.1.64-rc1 review", 1, 0 },
		{ "[PATCH 6.10 000/372] 6.1.64-rc1 review", 1, 0 },
		{ "[PATCH v2 6.1 000/372] 6.1.64-rc1 review", 1, 0 },
		{ "[PATCH 6.1 000/372 6.1.64-rc1 review", 1, 0 },
		{ "6.1.64-rc1 review", 1, 0 },
		{ "[PATCH 6.1 000/372] 6.1.x-rc1 review", 1, 0 },
		{ "", 1, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct announcement a;
		char err[256];
		char *m = make_mail(cases[i].subject, "", body_6_1_64);

		print_message("# subject \"%s\"\n", cases[i].subject);
		assert_int_equal(parse_str(m, &a, err, sizeof(err)),
				 cases[i].rc);
		if (cases[i].rc == 0)
			assert_int_equal(a.npatches, cases[i].npatches);
		announce_free(&a);
		free(m);
	}
}

/* An announcement starts a thread: a tester's reply whose subject lost its
 * "Re:" still carries In-Reply-To (or References) and is not one. */
static void test_in_reply_to_is_a_reply(void **state)
{
	static const char *const headers[] = {
		"In-Reply-To: <20231124172024.664207345@linuxfoundation.org>\n",
		"References: <20231124172024.664207345@linuxfoundation.org>\n",
	};

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct announcement a;
		char err[256];
		char *m = make_mail("[PATCH 6.1 000/372] 6.1.64-rc1 review",
				    headers[i], body_6_1_64);

		assert_int_equal(parse_str(m, &a, err, sizeof(err)), 1);
		assert_non_null(strstr(err, "reply"));
		announce_free(&a);
		free(m);
	}
}

/* Trees and patches named by the mail are only http(s) (and git for
 * trees): a javascript: or file: URL is refused, never stored. */
static void test_url_schemes(void **state)
{
	static const struct {
		const char *header;
		int rc;
	} cases[] = {
		{ "X-KernelTest-Patch: javascript:alert(1)\n", -1 },
		{ "X-KernelTest-Patch: file:///etc/passwd\n", -1 },
		{ "X-KernelTest-Tree: file:///etc/passwd\n", -1 },
		{ "X-KernelTest-Tree: ssh://evil/x\n", -1 },
		{ "X-KernelTest-Tree: git://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git\n", 0 },
		{ "X-KernelTest-Patch: https://www.kernel.org/pub/linux/kernel/v6.x/stable-review/patch-6.1.64-rc1.gz\n", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct announcement a;
		char err[256] = "";
		char *m = make_mail("[PATCH 6.1 000/372] 6.1.64-rc1 review",
				    cases[i].header, body_6_1_64);
		int rc = parse_str(m, &a, err, sizeof(err));

		if (rc != cases[i].rc)
			fail_msg("case %zu: rc %d (%s), want %d", i, rc, err,
				 cases[i].rc);
		if (rc < 0 && strstr(err, "scheme") == NULL)
			fail_msg("case %zu: error '%s' does not name the scheme", i, err);
		announce_free(&a);
		free(m);
	}
}

/* ---- X-KernelTest headers ---- */

static void test_xkerneltest_without_review_subject(void **state)
{
	struct announcement a;
	char err[256];
	char *m = make_mail("Linux stable rc for testing",
			    "X-KernelTest-Version: 6.1.64-rc1\n"
			    "X-KernelTest-Branch: linux-6.1.y\n"
			    "X-stable: review\n",
			    body_6_1_64);

	(void)state;
	assert_int_equal(parse_str(m, &a, err, sizeof(err)), 0);
	assert_string_equal(a.version, "6.1.64-rc1");
	assert_string_equal(a.branch, "6.1");
	assert_int_equal(a.npatches, -1);
	assert_string_equal(a.deadline, "2023-11-26T17:19:17Z");
	announce_free(&a);
	free(m);

	/* Without X-stable: review the subject decides. */
	m = make_mail("Linux stable rc for testing",
		      "X-KernelTest-Version: 6.1.64-rc1\n", body_6_1_64);
	assert_int_equal(parse_str(m, &a, err, sizeof(err)), 1);
	assert_string_equal(err, "subject is not an rc review");
	free(m);
}

static void test_xkerneltest_errors(void **state)
{
	static const struct {
		const char *headers;
		int rc;
		const char *why;
	} cases[] = {
		{ "X-KernelTest-Version: 6.1.64\n", -1,
		  "X-KernelTest-Version \"6.1.64\" is not an rc version" },
		{ "X-KernelTest-Version: 6.1.64-rc1 extra\n", -1,
		  "X-KernelTest-Version is not a single token" },
		{ "X-KernelTest-Deadline: next sunday\n", -1,
		  "X-KernelTest-Deadline is not a single token" },
		{ "X-KernelTest-Deadline: 2023-11-26T25:19+00:00\n", -1,
		  "X-KernelTest-Deadline \"2023-11-26T25:19+00:00\" is not an ISO 8601 date" },
		{ "X-KernelTest-Branch: linux-5.15.y\n", 1,
		  "X-KernelTest-Branch linux-5.15.y does not match version 6.1.64-rc1" },
		{ "X-KernelTest-Version: 6.6.3-rc1\n", 1,
		  "subject branch 6.1 does not match version 6.6.3-rc1" },
		{ "X-KernelTest-Tree:\n", -1, "X-KernelTest-Tree is empty" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct announcement a;
		char err[256];
		char *m = make_mail("[PATCH 6.1 000/372] 6.1.64-rc1 review",
				    cases[i].headers, body_6_1_64);

		print_message("# %s", cases[i].headers);
		assert_int_equal(parse_str(m, &a, err, sizeof(err)),
				 cases[i].rc);
		assert_string_equal(err, cases[i].why);
		free(m);
	}
}

static void test_xkerneltest_deadline_forms(void **state)
{
	static const struct {
		const char *value, *utc;
	} cases[] = {
		{ "2023-11-26T17:19+00:00", "2023-11-26T17:19:00Z" },
		{ "2023-11-26T17:19:17Z", "2023-11-26T17:19:17Z" },
		{ "2023-11-26T18:19:17+0100", "2023-11-26T17:19:17Z" },
		{ "2023-11-26T12:19-05:00", "2023-11-26T17:19:00Z" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct announcement a;
		char err[256], hdr[128];
		char *m;

		snprintf(hdr, sizeof(hdr), "X-KernelTest-Deadline: %s\n",
			 cases[i].value);
		m = make_mail("[PATCH 6.1 000/372] 6.1.64-rc1 review", hdr,
			      body_6_1_64);
		assert_int_equal(parse_str(m, &a, err, sizeof(err)), 0);
		assert_string_equal(a.deadline, cases[i].utc);
		announce_free(&a);
		free(m);
	}
}

/* ---- bodies ---- */

static void test_base64_body_and_crlf(void **state)
{
	/* "Responses should be made by Sun, 26 Nov 2023 17:19:17 +0000.\n" */
	static const char raw[] =
		"From: Greg Kroah-Hartman <gregkh@linuxfoundation.org>\r\n"
		"Subject: [PATCH 6.1 000/372] 6.1.64-rc1 review\r\n"
		"Message-ID: <x@y>\r\n"
		"MIME-Version: 1.0\r\n"
		"Content-Type: text/plain; charset=UTF-8\r\n"
		"Content-Transfer-Encoding: base64\r\n"
		"\r\n"
		"UmVzcG9uc2VzIHNob3VsZCBiZSBtYWRlIGJ5IFN1biwgMjYgTm92IDIw\r\n"
		"MjMgMTc6MTk6MTcgKzAwMDAuCg==\r\n";
	struct announcement a;
	char err[256];

	(void)state;
	assert_int_equal(parse_str(raw, &a, err, sizeof(err)), 0);
	assert_string_equal(a.message_id, "x@y");
	assert_string_equal(a.deadline, "2023-11-26T17:19:17Z");
	assert_string_equal(a.date, "");
	assert_null(a.to);
	assert_null(a.cc);
	announce_free(&a);
}

static void test_unparseable_dates_are_empty(void **state)
{
	struct announcement a;
	char err[256];
	char *m = make_mail("[PATCH 6.1 000/372] 6.1.64-rc1 review", "",
			    "Responses should be made by the end of the week.\n");

	(void)state;
	assert_int_equal(parse_str(m, &a, err, sizeof(err)), 0);
	assert_string_equal(a.deadline, "");
	announce_free(&a);
	free(m);

	/* Likewise a Date: GMime cannot read leaves the date unknown. */
	assert_int_equal(parse_str("From: g@k.org\nDate: Fri, 99 Nov 2023 17:48:39 +0000\n"
				   "Subject: [PATCH 6.1 000/372] 6.1.64-rc1 review\n"
				   "Message-ID: <a@b>\n\nbody\n", &a, err, sizeof(err)), 0);
	assert_string_equal(a.date, "");
	announce_free(&a);
}

/* ---- caps and hostile input ---- */

static void test_empty_null_and_too_big(void **state)
{
	struct announcement a;
	char err[256];
	char *big;

	(void)state;
	assert_int_equal(announce_parse(NULL, 10, &a, err, sizeof(err)), -1);
	assert_string_equal(err, "empty input");
	assert_int_equal(announce_parse("", 0, &a, err, sizeof(err)), -1);
	assert_int_equal(announce_parse("x", 1, NULL, err, sizeof(err)), -1);
	/* err may be NULL: the caller does not care why. */
	assert_int_equal(announce_parse("", 0, &a, NULL, 0), -1);

	big = calloc(1, ANNOUNCE_MAX_INPUT + 1);
	assert_non_null(big);
	memset(big, 'a', ANNOUNCE_MAX_INPUT + 1);
	assert_int_equal(announce_parse(big, ANNOUNCE_MAX_INPUT + 1, &a, err,
					sizeof(err)), -1);
	assert_string_equal(err, "input is 4194305 bytes, more than 4194304");
	free(big);
}

static void test_huge_header_lines(void **state)
{
	size_t n = 1u << 20;
	char *filler = malloc(n + 1), *m, hdr[2048];
	struct announcement a;
	char err[256];

	(void)state;
	assert_non_null(filler);
	memset(filler, 'x', n);
	filler[n] = '\0';

	/* A megabyte Subject is simply not an announcement. */
	m = make_mail(filler, "", body_6_1_64);
	assert_int_equal(parse_str(m, &a, err, sizeof(err)), 1);
	free(m);

	/* A too-long field of a real announcement is an error, not cut short. */
	m = make_mail("[PATCH 6.1 000/372] 6.1.64-rc1 review", "", body_6_1_64);
	{
		size_t len = strlen(m) + n + 64;
		char *m2 = malloc(len);

		assert_non_null(m2);
		snprintf(m2, len, "X-Long: %s\n%s", filler, m);
		assert_int_equal(parse_str(m2, &a, err, sizeof(err)), 0);
		announce_free(&a);
		free(m2);
	}
	free(m);

	filler[600] = '\0';
	snprintf(hdr, sizeof(hdr), "Cc: x@y\nX-KernelTest-Tree: git://%s\n",
		 filler);
	m = make_mail("[PATCH 6.1 000/372] 6.1.64-rc1 review", hdr, body_6_1_64);
	assert_int_equal(parse_str(m, &a, err, sizeof(err)), 0);
	assert_int_equal(strlen(a.git_tree), 606);
	announce_free(&a);
	free(m);

	filler[600] = 'x';
	filler[1500] = '\0';
	snprintf(hdr, sizeof(hdr), "X-KernelTest-Patch: http://%s\n", filler);
	m = make_mail("[PATCH 6.1 000/372] 6.1.64-rc1 review", hdr, body_6_1_64);
	assert_int_equal(parse_str(m, &a, err, sizeof(err)), -1);
	assert_string_equal(err,
			    "X-KernelTest-Patch too long (1507 bytes, max 1023)");
	assert_null(a.to);
	free(m);
	free(filler);
}

static void test_field_too_long(void **state)
{
	char name[600], raw[2048];
	struct announcement a;
	char err[256];

	(void)state;
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(raw, sizeof(raw),
		 "From: %s <gregkh@linuxfoundation.org>\n"
		 "Subject: [PATCH 6.1 000/372] 6.1.64-rc1 review\n"
		 "Message-ID: <a@b>\n\nbody\n", name);
	assert_int_equal(parse_str(raw, &a, err, sizeof(err)), -1);
	assert_string_equal(err, "From too long (628 bytes, max 511)");

	snprintf(raw, sizeof(raw),
		 "From: g@k.org\n"
		 "Subject: [PATCH 6.1 000/372] 6.1.64-rc1 review\n"
		 "Message-ID: <%s@b>\n\nbody\n", name);
	assert_int_equal(parse_str(raw, &a, err, sizeof(err)), -1);
	assert_string_equal(err, "Message-ID too long (601 bytes, max 511)");
}

/* Encoded words can smuggle CR/LF; nothing stored may carry a line break. */
static void test_encoded_crlf_is_blanked(void **state)
{
	static const char raw[] =
		"From: =?utf-8?q?Greg=0D=0AX-Evil:_1?= <gregkh@linuxfoundation.org>\n"
		"To: =?utf-8?q?a=0Ab?= <a@b.c>\n"
		"Subject: [PATCH 6.1 000/372] 6.1.64-rc1 review\n"
		"Message-ID: <a@b>\n\nbody\n";
	struct announcement a;
	char err[256];

	(void)state;
	assert_int_equal(parse_str(raw, &a, err, sizeof(err)), 0);
	assert_null(strpbrk(a.from, "\r\n"));
	assert_null(strpbrk(a.to, "\r\n"));
	announce_free(&a);
}

static void test_not_a_mail(void **state)
{
	static const char *const inputs[] = {
		"hello world\nthis is text\n",
		"From: a@b.c",			/* cut mid-line */
		"\n\nbody only\n",
		"Subject: [PATCH 6.1 000/372] 6.1.64-rc1 review\nMessage-ID: <a@b>\n\nno From\n",
		":\n:\n:\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		struct announcement a;
		char err[256];

		print_message("# input %zu\n", i);
		assert_int_equal(parse_str(inputs[i], &a, err, sizeof(err)),
				 -1);
		assert_true(err[0] != '\0');
	}
}

static void test_binary_body_and_nul_bytes(void **state)
{
	char raw[600];
	size_t n;
	struct announcement a;
	char err[256];

	(void)state;
	n = (size_t)snprintf(raw, sizeof(raw),
			     "From: g@k.org\nSubject: [PATCH 6.1 000/372] 6.1.64-rc1 review\n"
			     "Message-ID: <a@b>\n\n");
	for (size_t i = 0; i < 256 && n < sizeof(raw); i++)
		raw[n++] = (char)i;
	assert_int_equal(announce_parse(raw, n, &a, err, sizeof(err)), 0);
	assert_string_equal(a.deadline, "");
	announce_free(&a);
}

/* Every prefix and many one-byte corruptions: a verdict, never a crash. */
static void test_truncation_and_mutation(void **state)
{
	static const char *const files[] = {
		"announce-6.1.64-rc1.eml", "announce-4.14.332-rc1-sasha.eml",
		"announce-5.4.262-rc1-qp.eml",
	};
	static const char bytes[] = { '\0', '\n', '\r', ':', '=', '[', ' ',
				      '-', '\x80', '\xff', '"', '<' };

	(void)state;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		size_t len;
		char *raw = test_data_read("mail", files[f], &len);

		for (size_t cut = 0; cut <= len; cut++) {
			struct announcement a;
			char err[256];
			int rc = announce_parse(raw, cut, &a, err, sizeof(err));

			assert_true(rc >= -1 && rc <= 1);
			if (rc == 0) {
				assert_true(strlen(a.version) < sizeof(a.version));
				assert_true(a.message_id[0] != '\0');
			}
			announce_free(&a);
		}
		for (size_t pos = 0; pos < len; pos += 7) {
			char saved = raw[pos];

			for (size_t b = 0; b < sizeof(bytes); b++) {
				struct announcement a;
				char err[256];
				int rc;

				raw[pos] = bytes[b];
				rc = announce_parse(raw, len, &a, err, sizeof(err));
				assert_true(rc >= -1 && rc <= 1);
				announce_free(&a);
			}
			raw[pos] = saved;
		}
		free(raw);
	}
}

/* The one Message-ID check, shared with report.c's reply. */
static void test_valid_message_id(void **state)
{
	static const struct {
		const char *id;
		int valid;
	} cases[] = {
		{ "20231124172028.107505484@linuxfoundation.org", 1 },
		{ "a!#$%&'*+/=?^_`{|}~-.@x", 1 },
		{ "", 0 },
		{ "two words@x", 0 },
		{ "<angle@x>", 0 },
		{ "tab\t@x", 0 },
		{ "crlf@x\r\nBcc: victim@example.org", 0 },
		{ "del\x7f@x", 0 },
		{ "utf8-\xc3\xa9@x", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (announce_valid_message_id(cases[i].id) != cases[i].valid)
			fail_msg("\"%s\": want %d", cases[i].id, cases[i].valid);
	assert_int_equal(announce_valid_message_id(NULL), 0);
}

/* ---- the sender: exactly one plain mailbox (issue 27) ---- */

/* make_mail with its From: line replaced by from_lines. */
static char *mail_from(const char *from_lines)
{
	char *m = make_mail("[PATCH 6.1 000/372] 6.1.64-rc1 review", "",
			    body_6_1_64);
	const char *rest = strchr(m, '\n') + 1;
	size_t n = strlen(from_lines) + strlen(rest) + 1;
	char *out = malloc(n);

	assert_non_null(out);
	snprintf(out, n, "%s%s", from_lines, rest);
	free(m);
	return out;
}

static void test_from_single_mailbox(void **state)
{
	static const struct {
		const char *from;	/* header line(s) */
		const char *addr;	/* from_addr: "" refused */
	} cases[] = {
		{ "From: Greg Kroah-Hartman <gregkh@linuxfoundation.org>\n",
		  "gregkh@linuxfoundation.org" },
		{ "From: gregkh@linuxfoundation.org\n",
		  "gregkh@linuxfoundation.org" },
		/* Two From headers: whichever GMime keeps, no sender. */
		{ "From: Evil <evil@example.org>\n"
		  "From: Greg Kroah-Hartman <gregkh@linuxfoundation.org>\n", "" },
		{ "From: Greg Kroah-Hartman <gregkh@linuxfoundation.org>\n"
		  "From: Evil <evil@example.org>\n", "" },
		/* A group, and two mailboxes in one header. */
		{ "From: stable: gregkh@linuxfoundation.org;\n", "" },
		{ "From: evil@example.org, gregkh@linuxfoundation.org\n", "" },
		{ "From: Evil <evil@example.org>, Greg <gregkh@linuxfoundation.org>\n", "" },
		/* A display name that holds the address. */
		{ "From: \"gregkh@linuxfoundation.org\" <evil@example.org>\n", "" },
		{ "From: \"Greg <gregkh@linuxfoundation.org>\" <evil@example.org>\n", "" },
		{ "From: =?UTF-8?Q?gregkh=40linuxfoundation=2Eorg?= <evil@example.org>\n", "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct announcement a;
		char err[256];
		char *m = mail_from(cases[i].from);
		int rc = parse_str(m, &a, err, sizeof(err));

		if (rc != 0 || strcmp(a.from_addr, cases[i].addr) != 0)
			fail_msg("case %zu (%s): rc %d from_addr '%s' (%s)", i,
				 cases[i].from, rc, a.from_addr, err);
		assert_int_equal(trigger_sender_accepted(
			"gregkh@linuxfoundation.org sashal@kernel.org",
			a.from_addr), cases[i].addr[0] != '\0');
		/* Not even '*' accepts a mail without one sender. */
		assert_int_equal(trigger_sender_accepted("*", a.from_addr),
				 cases[i].addr[0] != '\0');
		announce_free(&a);
		free(m);
	}
	/* Exact addresses: no prefix, suffix or display-name match. */
	assert_int_equal(trigger_sender_accepted("gregkh@linuxfoundation.org",
						 "xgregkh@linuxfoundation.org"), 0);
	assert_int_equal(trigger_sender_accepted("gregkh@linuxfoundation.org",
						 "gregkh@linuxfoundation.org.evil"), 0);
	assert_int_equal(trigger_sender_accepted("gregkh@linuxfoundation.org",
						 "GregKH@LinuxFoundation.org"), 1);
}

/* A patch of the series (the real mail): its number and Message-ID; an
 * announcement or a tester's reply is no patch. */
static void test_series_patch(void **state)
{
	static const char *const not_patches[] = {
		"announce-6.1.64-rc1.eml", "reply-preadv03.eml",
		"unrelated-list-mail.eml",
	};
	struct series_patch p;
	char err[256], *raw;
	size_t len;

	(void)state;
	raw = test_data_read("mail", "patch-6.1-001-ext4-full.eml", &len);
	assert_int_equal(announce_parse_patch(raw, len, &p, err, sizeof(err)), 0);
	free(raw);
	assert_string_equal(p.branch, "6.1");
	assert_int_equal(p.number, 1);
	assert_int_equal(p.total, 372);
	assert_string_equal(p.subject, "ext4: properly sync file size update"
			    " after O_SYNC direct IO");
	assert_string_equal(p.message_id, "20231124172024.712357781@linuxfoundation.org");
	assert_string_equal(p.parent_id, "20231124172024.664207345@linuxfoundation.org");
	assert_string_equal(p.from_addr, "gregkh@linuxfoundation.org");
	for (size_t i = 0; i < sizeof(not_patches) / sizeof(not_patches[0]); i++) {
		raw = test_data_read("mail", not_patches[i], &len);
		assert_int_equal(announce_parse_patch(raw, len, &p, err,
						      sizeof(err)), 1);
		free(raw);
	}
	assert_int_equal(announce_parse_patch("", 0, &p, err, sizeof(err)), -1);
}

/* A reply's recipients: From first, each address once, groups and
 * malformed mailboxes out, at most max in all. */
static void test_recipients_capped(void **state)
{
	GString *cc = g_string_new("Greg Kroah-Hartman <gregkh@linuxfoundation.org>,"
				   " STABLE@vger.kernel.org, list: a@b.org, c@d.org;,"
				   " \"x\" <bad addr@x.org>");
	char *to = NULL, *ccs = NULL;
	long dropped;

	(void)state;
	for (int i = 0; i < 300; i++)
		g_string_append_printf(cc, ", victim%d@example.org", i);
	dropped = announce_recipients("Greg Kroah-Hartman <gregkh@linuxfoundation.org>",
				      "stable@vger.kernel.org", cc->str, 30, &to, &ccs);
	assert_string_equal(to, "stable@vger.kernel.org");
	/* 28 more: 30 with From and To. */
	assert_non_null(strstr(ccs, "victim27@example.org"));
	assert_null(strstr(ccs, "victim28@example.org"));
	assert_null(strstr(ccs, "gregkh"));
	assert_null(strstr(ccs, "vger"));
	assert_null(strstr(ccs, "a@b.org"));
	assert_null(strstr(ccs, "bad"));
	assert_int_equal(dropped, 272);
	free(to);
	free(ccs);
	/* Under the cap nobody is left out. */
	dropped = announce_recipients("gregkh@linuxfoundation.org", NULL,
				      "a@x.org, b@x.org", 3, &to, &ccs);
	assert_null(to);
	assert_string_equal(ccs, "a@x.org, b@x.org");
	assert_int_equal(dropped, 0);
	free(ccs);
	dropped = announce_recipients(NULL, "", "not an address", 3, &to, &ccs);
	assert_null(to);
	assert_null(ccs);
	assert_int_equal(dropped, 0);
	g_string_free(cc, TRUE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_6_1_64_rc1_every_field),
		cmocka_unit_test(test_series_patch),
		cmocka_unit_test(test_fixture_table),
		cmocka_unit_test(test_decoded_subject_and_names),
		cmocka_unit_test(test_headers_only),
		cmocka_unit_test(test_reject_table),
		cmocka_unit_test(test_reply_prefixes),
		cmocka_unit_test(test_subject_shapes),
		cmocka_unit_test(test_in_reply_to_is_a_reply),
		cmocka_unit_test(test_url_schemes),
		cmocka_unit_test(test_xkerneltest_without_review_subject),
		cmocka_unit_test(test_xkerneltest_errors),
		cmocka_unit_test(test_xkerneltest_deadline_forms),
		cmocka_unit_test(test_base64_body_and_crlf),
		cmocka_unit_test(test_unparseable_dates_are_empty),
		cmocka_unit_test(test_empty_null_and_too_big),
		cmocka_unit_test(test_huge_header_lines),
		cmocka_unit_test(test_field_too_long),
		cmocka_unit_test(test_encoded_crlf_is_blanked),
		cmocka_unit_test(test_not_a_mail),
		cmocka_unit_test(test_binary_body_and_nul_bytes),
		cmocka_unit_test(test_truncation_and_mutation),
		cmocka_unit_test(test_valid_message_id),
		cmocka_unit_test(test_from_single_mailbox),
		cmocka_unit_test(test_recipients_capped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
