/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/intake/dkim.c: the real announcement signed with a
 * test-only key (tests/data/dkim, regenerate.sh) verified by libopendkim
 * against the pinned key file, and every way a forger would try to reuse
 * or fake a signature: no signature, the body or From: changed after
 * signing, a Cc: added above the signed one, l= with text appended, a
 * valid signature of another domain, h= leaving Cc out, a key that is not
 * there, and DKIM-Signature headers that are duplicated, huge, malformed
 * or binary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "intake/intake.h"
#include "testutil.h"

static char keys[4096];

/* The verdict on raw (NUL-terminated), parsed first as intake does. */
static void check(const char *raw, const char *signers,
		  struct announce_dkim *v)
{
	struct announcement a;
	char err[256];

	assert_int_equal(announce_parse(raw, strlen(raw), &a, err, sizeof(err)), 0);
	assert_int_equal(announce_dkim_check(raw, strlen(raw), &a, signers, keys,
					     v, err, sizeof(err)), 0);
	announce_free(&a);
}

static char *fixture(const char *name)
{
	size_t len;

	return test_data_read("dkim", name, &len);
}

/* raw with the first occurrence of from replaced by to (malloc'd). */
static char *replace(const char *raw, const char *from, const char *to)
{
	const char *hit = strstr(raw, from);
	char *out;

	assert_non_null(hit);
	assert_int_not_equal(asprintf(&out, "%.*s%s%s", (int)(hit - raw), raw, to,
				      hit + strlen(from)), -1);
	return out;
}

static void test_signed_is_verified(void **state)
{
	struct announce_dkim v;
	char *raw = fixture("signed.eml");

	(void)state;
	check(raw, "", &v);
	assert_int_equal(v.verified, 1);
	assert_string_equal(v.detail, "d=linuxfoundation.org s=test");
	free(raw);
}

static void test_unsigned_is_not(void **state)
{
	struct announce_dkim v;
	size_t len;
	char *raw = test_data_read("mail", "announce-6.1.64-rc1.eml", &len);

	(void)state;
	check(raw, "", &v);
	assert_int_equal(v.verified, 0);
	assert_string_equal(v.detail, "no DKIM-Signature");
	free(raw);
}

/* What a forger changes in a genuine signed mail, and what is left. */
static void test_altered_after_signing(void **state)
{
	static const struct {
		const char *from, *to, *why;
	} edits[] = {
		{ "There are 372 patches", "There are 373 patches", "body" },
		{ "linux-6.1.y\n", "linux-6.1.y\nhttp://evil.example/x\n", "body" },
		{ "From: Greg Kroah-Hartman", "From: Greg KH", "signature" },
		{ "Subject: [PATCH 6.1 000/372] 6.1.64-rc1",
		  "Subject: [PATCH 6.1 000/372] 6.1.65-rc1", "signature" },
		{ "allen.lkml@gmail.com", "allen.lkml@gmail.com, victim@example.org",
		  "signature" },
		/* A second Cc: above the signed one: DKIM hashes the last,
		 * GMime would read both. */
		{ "DKIM-Signature:", "Cc: a@example.org, b@example.org\nDKIM-Signature:",
		  "" },
		{ "DKIM-Signature:", "Subject: [PATCH 6.1 000/372] 6.1.65-rc1 review\nDKIM-Signature:",
		  "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		struct announce_dkim v;
		char *raw = fixture("signed.eml"), *bad;
		struct announcement a;
		char err[256];

		bad = replace(raw, edits[i].from, edits[i].to);
		/* A mail that no longer parses as an announcement is never
		 * checked; the rest must not verify. */
		if (announce_parse(bad, strlen(bad), &a, err, sizeof(err)) == 0) {
			assert_int_equal(announce_dkim_check(bad, strlen(bad), &a,
							     "", keys, &v, err,
							     sizeof(err)), 0);
			if (v.verified)
				fail_msg("edit %zu verified", i);
			assert_non_null(strstr(v.detail, edits[i].why));
			announce_free(&a);
		}
		free(bad);
		free(raw);
	}
}

static void test_length_tag(void **state)
{
	struct announce_dkim v;
	char *raw = fixture("signed-l.eml"), *more;

	(void)state;
	/* l= is refused even when nothing was appended ... */
	check(raw, "", &v);
	assert_int_equal(v.verified, 0);
	assert_non_null(strstr(v.detail, "(l=)"));
	/* ... since anything can be. */
	assert_int_not_equal(asprintf(&more, "%s\nhttp://evil.example/patch.gz\n",
				      raw), -1);
	check(more, "", &v);
	assert_int_equal(v.verified, 0);
	free(more);
	free(raw);
}

static void test_domain_must_be_the_senders(void **state)
{
	struct announce_dkim v;
	char *raw = fixture("signed-example-org.eml");

	(void)state;
	check(raw, "", &v);
	assert_int_equal(v.verified, 0);
	assert_non_null(strstr(v.detail, "d=example.org is neither the From: domain"));
	/* A configured signer is accepted. */
	check(raw, "kernel.org example.org", &v);
	assert_int_equal(v.verified, 1);
	assert_string_equal(v.detail, "d=example.org s=test");
	free(raw);
}

static void test_recipients_must_be_signed(void **state)
{
	struct announce_dkim v;
	char *raw = fixture("signed-no-cc.eml");

	(void)state;
	check(raw, "", &v);
	assert_int_equal(v.verified, 0);
	assert_non_null(strstr(v.detail, "From, Subject, To and Cc must all be signed"));
	free(raw);
}

static void test_unknown_key(void **state)
{
	struct announce_dkim v;
	char *raw = fixture("signed.eml"), *bad = replace(raw, "s=test;", "s=other;");

	(void)state;
	check(bad, "", &v);
	assert_int_equal(v.verified, 0);
	assert_int_equal(v.tempfail, 0);
	free(bad);
	free(raw);
}

/* Many, huge, malformed and binary DKIM-Signature headers: refused
 * without a crash, and never verified. */
static void test_hostile_signature_headers(void **state)
{
	char *raw = fixture("signed.eml"), *sig_end, *sig, *bad, *big;
	size_t siglen;
	struct announce_dkim v;
	static const char *const malformed[] = {
		"DKIM-Signature: v=1; a=rsa-sha256; d=; s=; b=; bh=;\n",
		"DKIM-Signature: ;;;;===;;\n",
		"DKIM-Signature: v=1; a=rsa-sha256; d=linuxfoundation.org; s=test;"
		" h=from; bh=!!!!; b=%%%%\n",
		"DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/simple; d=linuxfoundation.org;"
		" s=test; l=-5; h=From:To:Cc:Subject; bh=AAAA; b=AAAA\n",
		"DKIM-Signature: \x01\x02\xff\xfe v=1; d=linuxfoundation.org\n",
	};

	(void)state;
	/* The first header, folded lines and all, is the signature. */
	sig_end = strstr(raw, "\nFrom: ");
	assert_non_null(sig_end);
	siglen = (size_t)(sig_end - raw) + 1;
	sig = strndup(raw, siglen);
	assert_non_null(sig);

	/* Five copies of a valid signature: more than 4 are not read. */
	assert_int_not_equal(asprintf(&bad, "%s%s%s%s%s", sig, sig, sig, sig, raw), -1);
	check(bad, "", &v);
	assert_int_equal(v.verified, 0);
	assert_non_null(strstr(v.detail, "5 DKIM-Signature headers"));
	free(bad);
	/* Two are read, and the valid one verifies. */
	assert_int_not_equal(asprintf(&bad, "%s%s", sig, raw), -1);
	check(bad, "", &v);
	assert_int_equal(v.verified, 1);
	free(bad);

	/* One of 64 KiB. */
	big = malloc(65536 + 64);
	assert_non_null(big);
	strcpy(big, "DKIM-Signature: v=1; b=");
	memset(big + strlen(big), 'A', 65536);
	big[65536 + 23] = '\0';
	assert_int_not_equal(asprintf(&bad, "%s\n%s", big, raw), -1);
	check(bad, "", &v);
	assert_int_equal(v.verified, 0);
	assert_non_null(strstr(v.detail, "the longest 65560 bytes"));
	free(bad);
	free(big);

	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		/* In place of the valid one, and beside it. */
		bad = replace(raw, sig, malformed[i]);
		check(bad, "", &v);
		assert_int_equal(v.verified, 0);
		free(bad);
		assert_int_not_equal(asprintf(&bad, "%s%s", malformed[i], raw), -1);
		check(bad, "", &v);
		free(bad);
	}
	free(sig);
	free(raw);
}

static void test_domain_ok(void **state)
{
	(void)state;
	assert_true(announce_dkim_domain_ok("linuxfoundation.org",
					    "gregkh@linuxfoundation.org", ""));
	assert_true(announce_dkim_domain_ok("LinuxFoundation.ORG",
					    "gregkh@linuxfoundation.org", NULL));
	assert_true(announce_dkim_domain_ok("kernel.org", "x@y.org",
					    "a.org,kernel.org"));
	assert_false(announce_dkim_domain_ok("foundation.org",
					     "gregkh@linuxfoundation.org", ""));
	assert_false(announce_dkim_domain_ok("evil.linuxfoundation.org",
					     "gregkh@linuxfoundation.org", ""));
	assert_false(announce_dkim_domain_ok("kernel.or", "x@y.org", "kernel.org"));
	assert_false(announce_dkim_domain_ok("", "x@", ""));
	assert_false(announce_dkim_domain_ok(NULL, "x@y.org", "y.org"));
	assert_false(announce_dkim_domain_ok("y.org", "", ""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signed_is_verified),
		cmocka_unit_test(test_unsigned_is_not),
		cmocka_unit_test(test_altered_after_signing),
		cmocka_unit_test(test_length_tag),
		cmocka_unit_test(test_domain_must_be_the_senders),
		cmocka_unit_test(test_recipients_must_be_signed),
		cmocka_unit_test(test_unknown_key),
		cmocka_unit_test(test_hostile_signature_headers),
		cmocka_unit_test(test_domain_ok),
	};

	test_data_path(keys, sizeof(keys), "dkim", "keys");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
