/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libFuzzer target for daemon/announce.c: one input is one raw e-mail.
 * Besides "no crash, no leak" it checks announce.h's contract: every field
 * is a C string within its array, a rejection leaves no allocation behind
 * and says why, and an accepted announcement has the identity the rest of
 * the daemon relies on (a version of its own branch, a Message-ID that can
 * go into our replies' headers, UTC times).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "base/base.h"
#include "intake/intake.h"

/* "2023-11-26T17:19:17Z" (years before 1000 may print shorter) or "". */
static void check_utc(const char *s)
{
	size_t n = strlen(s);

	if (n == 0)
		return;
	check(n >= 17 && s[n - 1] == 'Z' && s[n - 10] == 'T');
	check(s[n - 7] == ':' && s[n - 4] == ':');
}

static void check_no_controls(const char *s)
{
	for (; *s != '\0'; s++)
		check((unsigned char)*s >= 0x20 && *s != 0x7f);
}

static void check_accepted(const struct announcement *a)
{
	size_t blen = strlen(a->branch);
	struct kversion kv;
	char err[128];

	/* parse_version's shape: X.Y.Z-rcR with the branch as its X.Y. */
	check(a->version[0] != '\0' && blen > 0);
	check(strncmp(a->version, a->branch, blen) == 0 &&
	      a->version[blen] == '.');
	check(strstr(a->version, "-rc") != NULL);
	for (const char *p = a->version; *p != '\0'; p++)
		check(isdigit((unsigned char)*p) || *p == '.' || *p == '-' ||
		      *p == 'r' || *p == 'c');

	/* Goes into In-Reply-To/References of our reports verbatim. */
	check(a->message_id[0] != '\0');
	for (const char *p = a->message_id; *p != '\0'; p++)
		check((unsigned char)*p > 0x20 && (unsigned char)*p < 0x7f &&
		      *p != '<' && *p != '>');

	check(a->from[0] != '\0');
	check_no_controls(a->subject);
	check_no_controls(a->from);
	if (a->to != NULL)
		check_no_controls(a->to);
	if (a->cc != NULL)
		check_no_controls(a->cc);
	check_utc(a->date);
	check_utc(a->deadline);
	check(a->npatches == -1 || a->npatches >= 1);
	if (a->git_branch[0] != '\0') {
		size_t n = strlen(a->git_branch);

		check(strncasecmp(a->git_branch, "linux-", 6) == 0 && n >= 8 &&
		      strcmp(a->git_branch + n - 2, ".y") == 0);
	}

	/*
	 * trigger.c hands the version to kversion_parse, which is stricter
	 * (no leading zeros) and then ignores the mail; when it agrees, the
	 * two parsers must agree on the branch too.
	 */
	if (kversion_parse(a->version, &kv, err, sizeof(err)) == 0) {
		check(strcmp(kv.branch, a->branch) == 0);
		check(kv.rc >= 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct announcement a;
	char err[256];
	int rc;

	/* Garbage in *out must not survive: announce_parse initialises it. */
	memset(&a, 0x5a, sizeof(a));
	memset(err, 0x5a, sizeof(err));
	rc = announce_parse((const char *)data, size, &a, err, sizeof(err));
	check(rc == -1 || rc == 0 || rc == 1);
	check_terminated(err);
	check_terminated(a.version);
	check_terminated(a.branch);
	check_terminated(a.subject);
	check_terminated(a.message_id);
	check_terminated(a.from);
	check_terminated(a.date);
	check_terminated(a.deadline);
	check_terminated(a.patch_url);
	check_terminated(a.git_tree);
	check_terminated(a.git_branch);
	if (rc != 0) {
		check(err[0] != '\0');
		check(a.to == NULL && a.cc == NULL);
	} else {
		check_accepted(&a);
	}
	announce_free(&a);
	check(a.to == NULL && a.cc == NULL);
	return 0;
}
