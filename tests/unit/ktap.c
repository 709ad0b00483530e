/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/ktap.c: tables of inline KTAP snippets and of the
 * golden logs in tests/data/ktap (found through $RCGATE_SRCDIR), then the
 * properties a table cannot state (every truncation point, caps, NULs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "artifact/artifact.h"
#include "testutil.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* What a parse must produce; err is a substring of out.error. */
struct expect {
	int rc;
	const char *err;	/* NULL: error must be NULL (rc 0) */
	int pass, fail, skip, xfail;
	size_t nresults;
	const char *infra;	/* substring of infra_reason, or NULL */
};

static void check_expect(const char *what, const struct ktap_report *r,
			 int rc, const struct expect *e)
{
	if (rc != e->rc || (e->err == NULL) != (r->error == NULL) ||
	    (e->err != NULL && strstr(r->error, e->err) == NULL))
		fail_msg("%s: rc %d error \"%s\", expected rc %d error \"%s\"",
			 what, rc, r->error ? r->error : "(null)", e->rc,
			 e->err ? e->err : "(null)");
	assert_int_equal(r->complete, rc == 0);
	assert_int_equal(ktap_count(r, KTAP_PASS), e->pass);
	assert_int_equal(ktap_count(r, KTAP_FAIL), e->fail);
	assert_int_equal(ktap_count(r, KTAP_SKIP), e->skip);
	assert_int_equal(ktap_count(r, KTAP_XFAIL), e->xfail);
	assert_int_equal(r->nresults, e->nresults);
	if (e->infra == NULL) {
		assert_null(r->infra_reason);
	} else {
		assert_non_null(r->infra_reason);
		assert_non_null(strstr(r->infra_reason, e->infra));
	}
	/* Every stored path is non-empty and every string printable. */
	for (size_t i = 0; i < r->nresults; i++) {
		const struct ktap_result *res = &r->results[i];

		assert_non_null(res->path);
		assert_true(res->path[0] != '\0');
		for (const char *s = res->diagnostic; s && *s; s++)
			assert_true(*s == '\n' || (*s >= 0x20 && *s < 0x7f));
	}
}

/* ---- inline cases ---- */

struct inline_case {
	const char *name;
	const char *text;
	struct expect e;
};

#define HDR "KTAP version 1\n"
#define MARK(p, f, s) "# rcgate-complete pass=" #p " fail=" #f " skip=" #s \
	" duration_ms=7\n"
#define NEST(body) "    KTAP version 1\n    # Subtest: ext4\n" body

static const struct inline_case inline_cases[] = {
	{ "flat all pass", HDR "1..2\nok 1 a\nok 2 b\n" MARK(2, 0, 0),
	  { 0, NULL, 2, 0, 0, 0, 2, NULL } },
	{ "empty plan", HDR "1..0\n" MARK(0, 0, 0),
	  { 0, NULL, 0, 0, 0, 0, 0, NULL } },
	{ "empty plan with skip", HDR "1..0 # SKIP no tests here\n"
	  MARK(0, 0, 0), { 0, NULL, 0, 0, 0, 0, 0, NULL } },
	{ "empty input", "", { -1, "no KTAP header", 0, 0, 0, 0, 0, NULL } },
	{ "only noise", "[    1.0] hello\nworld\n\n",
	  { -1, "no KTAP header in 3 lines", 0, 0, 0, 0, 0, NULL } },
	{ "missing marker", HDR "1..1\nok 1 a\n",
	  { -1, "without the completeness marker", 1, 0, 0, 0, 1, NULL } },
	{ "missing header", "1..1\nok 1 a\n" MARK(1, 0, 0),
	  { -1, "line 1: plan before the KTAP header", 0, 0, 0, 0, 0,
	    NULL } },
	{ "result before header", "ok 1 a\n",
	  { -1, "result before the KTAP header", 0, 0, 0, 0, 0, NULL } },
	{ "marker before header", MARK(0, 0, 0),
	  { -1, "marker without a KTAP header", 0, 0, 0, 0, 0, NULL } },
	{ "plan short at top", HDR "1..3\nok 1 a\nok 2 b\n" MARK(2, 0, 0),
	  { -1, "line 5: completeness marker after 2 of 3 planned", 2, 0, 0,
	    0, 2, NULL } },
	{ "plan short at end", HDR "1..3\nok 1 a\n",
	  { -1, "with 1 of 3 planned top-level results", 1, 0, 0, 0, 1,
	    NULL } },
	{ "plan exceeded", HDR "1..1\nok 1 a\nok 2 b\n" MARK(2, 0, 0),
	  { -1, "line 4: test number 2 beyond the plan 1..1", 1, 0, 0, 0, 1,
	    NULL } },
	{ "nested plan short", HDR "1..1\n" NEST("    1..2\n    ok 1 a\n")
	  "ok 1 ext4\n" MARK(1, 0, 0),
	  { -1, "subtest \"ext4\" ended after 1 of 2", 1, 0, 0, 0, 1,
	    NULL } },
	{ "duplicate number", HDR "1..2\nok 1 a\nok 1 b\n" MARK(2, 0, 0),
	  { -1, "line 4: test number 1 out of order, expected 2", 1, 0, 0, 0,
	    1, NULL } },
	{ "skipped number", HDR "1..3\nok 1 a\nok 3 b\n",
	  { -1, "test number 3 out of order, expected 2", 1, 0, 0, 0, 1,
	    NULL } },
	{ "number zero", HDR "1..1\nok 0 a\n",
	  { -1, "test number 0 out of order", 0, 0, 0, 0, 0, NULL } },
	{ "number too large", HDR "1..1\nok 99999999999 a\n",
	  { -1, "without a valid test number", 0, 0, 0, 0, 0, NULL } },
	{ "no number", HDR "1..1\nok a\n",
	  { -1, "without a valid test number", 0, 0, 0, 0, 0, NULL } },
	{ "bare ok", HDR "1..1\nok\n",
	  { -1, "without a test number", 0, 0, 0, 0, 0, NULL } },
	{ "no name", HDR "1..1\nok 1\n",
	  { -1, "result 1 without a name", 0, 0, 0, 0, 0, NULL } },
	{ "bad name", HDR "1..1\nok 1 write seq\n",
	  { -1, "bad test name \"write seq\"", 0, 0, 0, 0, 0, NULL } },
	{ "tap dash", HDR "1..1\nok 1 - a\n" MARK(1, 0, 0),
	  { 0, NULL, 1, 0, 0, 0, 1, NULL } },
	{ "result after marker", HDR "1..1\nok 1 a\n" MARK(1, 0, 0)
	  "ok 2 b\n",
	  { -1, "line 5: result after the completeness marker", 1, 0, 0, 0, 1,
	    NULL } },
	{ "plan after marker", HDR "1..1\nok 1 a\n" MARK(1, 0, 0) "1..2\n",
	  { -1, "plan after the completeness marker", 1, 0, 0, 0, 1, NULL } },
	{ "header after marker", HDR "1..1\nok 1 a\n" MARK(1, 0, 0) HDR,
	  { -1, "header after the completeness marker", 1, 0, 0, 0, 1,
	    NULL } },
	{ "noise after marker", HDR "1..1\nok 1 a\n" MARK(1, 0, 0)
	  "reboot: Power down\n# bye\n",
	  { 0, NULL, 1, 0, 0, 0, 1, NULL } },
	{ "second marker", HDR "1..1\nok 1 a\n" MARK(1, 0, 0) MARK(1, 0, 0),
	  { -1, "second completeness marker", 1, 0, 0, 0, 1, NULL } },
	{ "marker count mismatch", HDR "1..2\nok 1 a\nnot ok 2 b\n"
	  MARK(2, 0, 0),
	  { -1, "says pass=2 fail=0 skip=0 but the output has pass=1 fail=1",
	    1, 1, 0, 0, 2, NULL } },
	{ "marker skip mismatch", HDR "1..1\nok 1 a # SKIP x\n" MARK(0, 0, 0),
	  { -1, "but the output has pass=0 fail=0 skip=1", 0, 0, 1, 0, 1,
	    NULL } },
	{ "marker missing field", HDR "1..1\nok 1 a\n"
	  "# rcgate-complete pass=1 fail=0 duration_ms=3\n",
	  { -1, "marker without skip=", 1, 0, 0, 0, 1, NULL } },
	{ "marker bad value", HDR "1..1\nok 1 a\n"
	  "# rcgate-complete pass=one fail=0 skip=0 duration_ms=3\n",
	  { -1, "bad or repeated pass=", 1, 0, 0, 0, 1, NULL } },
	{ "marker negative", HDR "1..1\nok 1 a\n"
	  "# rcgate-complete pass=1 fail=-1 skip=0 duration_ms=3\n",
	  { -1, "bad or repeated fail=", 1, 0, 0, 0, 1, NULL } },
	{ "marker repeated key", HDR "1..1\nok 1 a\n"
	  "# rcgate-complete pass=1 pass=1 fail=0 skip=0 duration_ms=3\n",
	  { -1, "bad or repeated pass=", 1, 0, 0, 0, 1, NULL } },
	{ "marker field without =", HDR "1..1\nok 1 a\n"
	  "# rcgate-complete pass=1 fail=0 skip=0 duration_ms=3 junk\n",
	  { -1, "bad completeness marker field", 1, 0, 0, 0, 1, NULL } },
	{ "marker unknown key", HDR "1..1\nok 1 a\n"
	  "# rcgate-complete pass=1 fail=0 skip=0 duration_ms=3 xfail=0\n",
	  { 0, NULL, 1, 0, 0, 0, 1, NULL } },
	{ "marker indented", HDR "1..1\nok 1 a\n    " MARK(1, 0, 0),
	  { -1, "completeness marker at depth 1", 1, 0, 0, 0, 1, NULL } },
	{ "marker inside subtest", HDR "1..1\n" NEST("    1..1\n    ok 1 a\n")
	  MARK(1, 0, 0),
	  { -1, "marker inside an open subtest", 1, 0, 0, 0, 1, NULL } },
	{ "marker without newline", HDR "1..1\nok 1 a\n"
	  "# rcgate-complete pass=1 fail=0 skip=0 duration_ms=3",
	  { -1, "not terminated by a newline", 1, 0, 0, 0, 1, NULL } },
	{ "infra", HDR "1..1\n# rcgate-infra: disk missing\n",
	  { -1, "line 3: agent reported an infrastructure failure: disk "
	    "missing", 0, 0, 0, 0, 0, "disk missing" } },
	{ "infra wins over marker", HDR "1..1\nok 1 a\n"
	  "    # rcgate-infra: results port missing\n" MARK(1, 0, 0),
	  { -1, "infrastructure failure: results port missing", 1, 0, 0, 0,
	    1, "results port missing" } },
	{ "infra before header", "# rcgate-infra: no virtio port\n",
	  { -1, "no KTAP header", 0, 0, 0, 0, 0, "no virtio port" } },
	{ "infra keeps first", HDR "1..1\n# rcgate-infra: modprobe ext4\n"
	  "# rcgate-infra: mount failed\n",
	  { -1, "modprobe ext4", 0, 0, 0, 0, 0, "modprobe ext4" } },
	{ "infra after error", HDR "1..1\nok 2 a\n# rcgate-infra: late\n",
	  { -1, "out of order", 0, 0, 0, 0, 0, "late" } },
	{ "todo is xfail", HDR "1..2\nnot ok 1 a # TODO flaky\n"
	  "ok 2 b # TODO fixed\n" MARK(2, 0, 0),
	  { 0, NULL, 1, 0, 0, 1, 2, NULL } },
	{ "not ok skip is skip", HDR "1..2\nnot ok 1 a # SKIP no fs\n"
	  "ok 2 b # skip\n" MARK(0, 0, 2),
	  { 0, NULL, 0, 0, 2, 0, 2, NULL } },
	{ "other directive is a comment", HDR "1..1\nnot ok 1 a # SKIPPED?\n"
	  MARK(0, 1, 0), { 0, NULL, 0, 1, 0, 0, 1, NULL } },
	{ "version 2", "KTAP version 2\n1..0\n",
	  { -1, "unsupported version line", 0, 0, 0, 0, 0, NULL } },
	{ "tap 14 header", "TAP version 14\n1..0\n" MARK(0, 0, 0),
	  { 0, NULL, 0, 0, 0, 0, 0, NULL } },
	{ "second top header", HDR "1..1\n" HDR,
	  { -1, "second header at depth 0", 0, 0, 0, 0, 0, NULL } },
	{ "indented first header", "    KTAP version 1\n",
	  { -1, "first header is indented", 0, 0, 0, 0, 0, NULL } },
	{ "second plan", HDR "1..1\n1..1\n",
	  { -1, "second plan at depth 0", 0, 0, 0, 0, 0, NULL } },
	{ "subtest before top plan", HDR "    KTAP version 1\n",
	  { -1, "line 2: subtest before the top-level plan", 0, 0, 0, 0, 0,
	    NULL } },
	{ "plan after results", HDR "1..1\n    KTAP version 1\n    ok 1 a\n"
	  "    1..1\n", { -1, "line 5: plan after results at depth 1", 1, 0,
	  0, 0, 1, NULL } },
	{ "result before plan", HDR "ok 1 a\n1..1\n",
	  { -1, "result before the top-level plan", 0, 0, 0, 0, 0, NULL } },
	{ "bad plan", HDR "1..3x\n",
	  { -1, "bad plan \"1..3x\"", 0, 0, 0, 0, 0, NULL } },
	{ "huge plan", HDR "1..100001\n",
	  { -1, "bad plan", 0, 0, 0, 0, 0, NULL } },
	{ "result two levels deep", HDR "1..1\n        ok 1 a\n",
	  { -1, "result at depth 2 while depth 0 is open", 0, 0, 0, 0, 0,
	    NULL } },
	{ "dedent by two", HDR "1..1\n" NEST("    1..1\n")
	  "        KTAP version 1\n        1..1\n        ok 1 a\nok 1 ext4\n",
	  { -1, "result at depth 0 while depth 2 is open", 1, 0, 0, 0, 1,
	    NULL } },
	{ "header jumps two levels", HDR "1..1\n        KTAP version 1\n",
	  { -1, "header at depth 2 while depth 0 is open", 0, 0, 0, 0, 0,
	    NULL } },
	{ "bad subtest name", HDR "1..1\n    # Subtest: my suite\n",
	  { -1, "bad subtest name \"my suite\"", 0, 0, 0, 0, 0, NULL } },
	{ "subtest name mismatch", HDR "1..1\n" NEST("    1..0\n")
	  "ok 1 xfs\n", { -1, "result \"xfs\" closes subtest \"ext4\"", 0, 0,
	  0, 0, 0, NULL } },
	{ "suite failing with passing children is kept", HDR "1..1\n"
	  NEST("    1..1\n    ok 1 a\n") "not ok 1 ext4\n" MARK(1, 0, 0),
	  { 0, NULL, 1, 0, 0, 0, 2, NULL } },
	{ "suite skipped without block", HDR "1..1\nok 1 btrfs # SKIP no "
	  "btrfs\n" MARK(0, 0, 1), { 0, NULL, 0, 0, 1, 0, 1, NULL } },
	{ "subtest line before header", HDR "1..1\n    # Subtest: ext4\n"
	  "    KTAP version 1\n    1..1\n    ok 1 a\nok 1 ext4\n"
	  MARK(1, 0, 0), { 0, NULL, 1, 0, 0, 0, 2, NULL } },
	{ "nested level without plan", HDR "1..1\n" NEST("    ok 1 p1\n"
	  "    ok 2 p2\n") "ok 1 ext4\n" MARK(2, 0, 0),
	  { 0, NULL, 2, 0, 0, 0, 3, NULL } },
	{ "nested level opened by plan", HDR "1..1\n    1..1\n    ok 1 a\n"
	  "ok 1 ext4\n" MARK(1, 0, 0), { 0, NULL, 1, 0, 0, 0, 2, NULL } },
	{ "deeper diagnostic ignored", HDR "1..1\n        # stray\nok 1 a\n"
	  MARK(1, 0, 0), { 0, NULL, 1, 0, 0, 0, 1, NULL } },
	{ "two-space noise", HDR "1..1\n  ok 1 a\nok 1 a\n" MARK(1, 0, 0),
	  { 0, NULL, 1, 0, 0, 0, 1, NULL } },
	{ "kernel log noise", HDR "[    1.234] foo\n1..1\n"
	  "[    1.235] ext4: bar\nok 1 a\n[    1.236] baz\n" MARK(1, 0, 0),
	  { 0, NULL, 1, 0, 0, 0, 1, NULL } },
	{ "crlf", "KTAP version 1\r\n1..1\r\nok 1 a # SKIP why\r\n"
	  "# rcgate-complete pass=0 fail=0 skip=1 duration_ms=1\r\n",
	  { 0, NULL, 0, 0, 1, 0, 1, NULL } },
	{ "ok with trailing blanks", HDR "1..1\nok 1 a  \t\n" MARK(1, 0, 0),
	  { 0, NULL, 1, 0, 0, 0, 1, NULL } },
};

static void test_inline(void **state)
{
	const struct inline_case *c = *state;
	struct ktap_report r;
	int rc;

	rc = ktap_parse(c->text, strlen(c->text), &r);
	check_expect(c->name, &r, rc, &c->e);
	ktap_report_free(&r);
}

/* ---- golden files ---- */

struct golden_case {
	const char *file;
	struct expect e;
};

static const struct golden_case golden_cases[] = {
	{ "contract.ktap", { 0, NULL, 1, 1, 1, 0, 4, NULL } },
	{ "all_pass.ktap", { 0, NULL, 6, 0, 0, 0, 8, NULL } },
	{ "bad_kernel.ktap", { 0, NULL, 4, 3, 0, 0, 9, NULL } },
	{ "skip_todo.ktap", { 0, NULL, 0, 0, 3, 1, 5, NULL } },
	{ "infra.ktap", { -1, "line 6: agent reported an infrastructure "
	  "failure: mount /dev/vda", 0, 0, 0, 0, 0, "mount /dev/vda" } },
	{ "noise.ktap", { 0, NULL, 1, 1, 0, 0, 3, NULL } },
	{ "crlf.ktap", { 0, NULL, 1, 1, 1, 0, 4, NULL } },
	{ "nul.ktap", { 0, NULL, 1, 1, 1, 0, 4, NULL } },
	{ "no_final_newline.ktap", { 0, NULL, 1, 1, 1, 0, 4, NULL } },
	{ "marker_no_newline.ktap", { -1, "line 13: completeness marker not "
	  "terminated", 1, 1, 1, 0, 4, NULL } },
	{ "truncated.ktap", { -1, "output ends after line 11 inside subtest "
	  "\"ext4\" at depth 1, after 2 of 3 results", 1, 1, 0, 0, 2,
	  NULL } },
	{ "no_marker.ktap", { -1, "output ends after line 12 without the "
	  "completeness marker", 1, 1, 1, 0, 4, NULL } },
	{ "marker_mismatch.ktap", { -1, "line 13: completeness marker says "
	  "pass=2 fail=0", 1, 1, 1, 0, 4, NULL } },
	{ "plan_mismatch.ktap", { -1, "line 12: subtest \"ext4\" ended after "
	  "3 of 4 planned results", 1, 1, 1, 0, 3, NULL } },
	{ "after_marker.ktap", { -1, "line 14: result after the completeness "
	  "marker", 1, 1, 1, 0, 4, NULL } },
	{ "missing_header.ktap", { -1, "line 2: plan before the KTAP header",
	  0, 0, 0, 0, 0, NULL } },
	{ "duplicate_number.ktap", { -1, "line 11: test number 2 out of "
	  "order, expected 3", 1, 1, 0, 0, 2, NULL } },
	{ "deep_nesting.ktap", { 0, NULL, 1, 0, 0, 0, 9, NULL } },
	{ "too_deep.ktap", { -1, "line 27: nesting deeper than 8 levels",
	  0, 0, 0, 0, 0, NULL } },
	{ "no_subtest.ktap", { 0, NULL, 2, 1, 0, 0, 5, NULL } },
	{ "kunit_style.ktap", { 0, NULL, 1, 0, 1, 0, 3, NULL } },
	{ "suite_mismatch.ktap", { -1, "line 7: result \"xfs\" closes "
	  "subtest \"ext4\"", 1, 0, 0, 0, 1, NULL } },
};

static void test_golden(void **state)
{
	const struct golden_case *c = *state;
	struct ktap_report r;
	size_t len;
	char *buf = test_data_read("ktap", c->file, &len);
	int rc;

	rc = ktap_parse(buf, len, &r);
	check_expect(c->file, &r, rc, &c->e);
	ktap_report_free(&r);
	free(buf);
}

/* ---- properties ---- */

static void check_contract_report(const struct ktap_report *r)
{
	const struct ktap_result *res = r->results;

	assert_int_equal(r->nresults, 4);
	assert_string_equal(res[0].path, "ext4.write_seq_512");
	assert_int_equal(res[0].status, KTAP_FAIL);
	assert_string_equal(res[0].diagnostic,
			    "write_seq_512: write 2 of 8 (512 bytes): position 512, expected 1024\n"
			    "write_seq_512: buffer wrong at 0 have 62 expected 61");
	assert_null(res[0].directive_reason);
	assert_int_equal(res[0].depth, 1);
	assert_int_equal(res[0].is_suite, 0);
	assert_int_equal(res[0].number, 1);
	assert_int_equal(res[0].line, 9);

	assert_string_equal(res[1].path, "ext4.pwritev_seq_4096");
	assert_int_equal(res[1].status, KTAP_PASS);
	assert_null(res[1].diagnostic);

	assert_string_equal(res[2].path, "ext4.odirect_unaligned");
	assert_int_equal(res[2].status, KTAP_SKIP);
	assert_string_equal(res[2].directive_reason,
			    "fs does not support O_DIRECT");
	assert_null(res[2].diagnostic);

	assert_string_equal(res[3].path, "ext4");
	assert_int_equal(res[3].status, KTAP_PASS);
	assert_int_equal(res[3].is_suite, 1);
	assert_int_equal(res[3].depth, 0);
	assert_int_equal(res[3].line, 12);
	/* The agent line precedes the plan, so it belongs to no result. */
	assert_null(res[3].diagnostic);

	assert_string_equal(r->agent_info,
			    "version=0.1 kernel=6.1.0-57-cloud-amd64 machine=x86_64");
	assert_int_equal(r->marker_pass, 1);
	assert_int_equal(r->marker_fail, 1);
	assert_int_equal(r->marker_skip, 1);
	assert_int_equal(r->marker_duration_ms, 1234);
	assert_null(r->infra_reason);
	assert_int_equal(r->lines, 13);
}

static void test_contract_example(void **state)
{
	struct ktap_report r;
	size_t len;
	char *buf = test_data_read("ktap", "contract.ktap", &len);

	(void)state;
	assert_int_equal(ktap_parse(buf, len, &r), 0);
	assert_int_equal(r.complete, 1);
	assert_null(r.error);
	check_contract_report(&r);
	assert_int_equal(r.ignored_lines, 0);
	assert_ptr_equal(ktap_find(&r, "ext4.odirect_unaligned"),
			 &r.results[2]);
	assert_null(ktap_find(&r, "ext4.nope"));
	ktap_report_free(&r);
	free(buf);
}

/* CRLF and NUL variants must give exactly the contract's results. */
static void test_crlf_and_nul_same_as_contract(void **state)
{
	static const char *const files[] = { "crlf.ktap", "nul.ktap" };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		struct ktap_report r;
		size_t len;
		char *buf = test_data_read("ktap", files[i], &len);

		assert_int_equal(ktap_parse(buf, len, &r), 0);
		check_contract_report(&r);
		assert_int_equal(r.nul_bytes, i == 1 ? 4 : 0);
		ktap_report_free(&r);
		free(buf);
	}
}

/*
 * Cutting a complete log anywhere must give "incomplete" with an error
 * that says the output stopped, never a clean parse. The results kept are
 * a prefix of the full ones, with full paths.
 */
static void check_every_cut(const char *file)
{
	struct ktap_report full;
	size_t len;
	char *buf = test_data_read("ktap", file, &len);

	assert_int_equal(ktap_parse(buf, len, &full), 0);
	for (size_t cut = 0; cut < len; cut++) {
		struct ktap_report r;
		char *copy = malloc(cut ? cut : 1);

		/* A fresh allocation of exactly cut bytes lets ASan see
		 * any read past the end. */
		assert_non_null(copy);
		memcpy(copy, buf, cut);
		assert_int_equal(ktap_parse(copy, cut, &r), -1);
		assert_int_equal(r.complete, 0);
		assert_non_null(r.error);
		if (strstr(r.error, "output ends") == NULL &&
		    strstr(r.error, "no KTAP header") == NULL &&
		    strstr(r.error, "not terminated by a newline") == NULL)
			fail_msg("%s cut at %zu: unexpected error \"%s\"", file,
				 cut, r.error);
		assert_true(r.nresults <= full.nresults);
		for (size_t i = 0; i < r.nresults; i++) {
			if (r.results[i].depth == 0)
				continue;
			assert_string_equal(r.results[i].path,
					    full.results[i].path);
			assert_int_equal(r.results[i].status,
					 full.results[i].status);
		}
		ktap_report_free(&r);
		free(copy);
	}
	ktap_report_free(&full);
	free(buf);
}

static void test_truncated_everywhere(void **state)
{
	(void)state;
	check_every_cut("contract.ktap");
	check_every_cut("bad_kernel.ktap");
	check_every_cut("crlf.ktap");
	check_every_cut("skip_todo.ktap");
}

static void test_embedded_nul_inline(void **state)
{
	static const char text[] = "KTAP version 1\n1..1\n\0ok 1 wr\0ite\0\n"
		"# rcgate-complete pass=1 fail=0 skip=0 duration_ms=0\n\0";
	struct ktap_report r;

	(void)state;
	assert_int_equal(ktap_parse(text, sizeof(text) - 1, &r), 0);
	assert_string_equal(r.results[0].path, "write");
	assert_int_equal(r.nul_bytes, 4);
	ktap_report_free(&r);
}

static void test_unprintable_become_question_marks(void **state)
{
	static const char text[] = "KTAP version 1\n1..1\n"
		"# bad \x1b[31mred\x1b[0m \xc3\xa9 cr\rhere\tx\n"
		"not ok 1 a # SKIP why\x7f\n"
		"# rcgate-complete pass=0 fail=0 skip=1 duration_ms=0\n";
	struct ktap_report r;

	(void)state;
	assert_int_equal(ktap_parse(text, sizeof(text) - 1, &r), 0);
	assert_string_equal(r.results[0].diagnostic,
			    "bad ?[31mred?[0m ?? cr?here x");
	assert_string_equal(r.results[0].directive_reason, "why?");
	ktap_report_free(&r);
}

/* Diagnostics go to the next result at their own indentation only. */
/* "# rcgate-time-ms: N" before a result is its duration, not part of its
 * diagnostic (which feeds the regression signature); a malformed one is
 * an ordinary diagnostic. */
static void test_durations(void **state)
{
	static const char text[] =
		"KTAP version 1\n"
		"1..1\n"
		"    KTAP version 1\n"
		"    # Subtest: ext4\n"
		"    1..3\n"
		"    # a: buffer wrong\n"
		"    # rcgate-time-ms: 1234\n"
		"    not ok 1 a\n"
		"    ok 2 b\n"
		"    # rcgate-time-ms: 12x\n"
		"    ok 3 c\n"
		"ok 1 ext4\n"
		"# rcgate-complete pass=2 fail=1 skip=0 duration_ms=0\n";
	struct ktap_report r;

	(void)state;
	assert_int_equal(ktap_parse(text, sizeof(text) - 1, &r), 0);
	assert_int_equal(r.nresults, 4);
	assert_string_equal(r.results[0].diagnostic, "a: buffer wrong");
	assert_int_equal(r.results[0].duration_ms, 1234);
	assert_int_equal(r.results[1].duration_ms, -1);
	assert_int_equal(r.results[2].duration_ms, -1);
	assert_string_equal(r.results[2].diagnostic, "rcgate-time-ms: 12x");
	ktap_report_free(&r);
}

static void test_diagnostics_attach(void **state)
{
	static const char text[] =
		"KTAP version 1\n"
		"# before plan: dropped\n"
		"1..2\n"
		"# for suite ext4 (depth 0, before the block)\n"
		"    KTAP version 1\n"
		"    # Subtest: ext4\n"
		"    # before plan: dropped too\n"
		"    1..2\n"
		"    # a1\n"
		"#\n"
		"    # a2\n"
		"    ok 1 a\n"
		"    not ok 2 b\n"
		"    # trailing: dropped\n"
		"ok 1 ext4\n"
		"# c1\n"
		"not ok 2 c\n"
		"# after: dropped\n"
		"# rcgate-complete pass=1 fail=2 skip=0 duration_ms=0\n";
	struct ktap_report r;

	(void)state;
	assert_int_equal(ktap_parse(text, sizeof(text) - 1, &r), 0);
	assert_int_equal(r.nresults, 4);
	assert_string_equal(r.results[0].path, "ext4.a");
	assert_string_equal(r.results[0].diagnostic, "a1\na2");
	assert_null(r.results[1].diagnostic);
	assert_string_equal(r.results[2].path, "ext4");
	assert_string_equal(r.results[2].diagnostic,
			    "for suite ext4 (depth 0, before the block)\n");
	assert_string_equal(r.results[3].path, "c");
	assert_string_equal(r.results[3].diagnostic, "c1");
	assert_int_equal(r.ignored_lines, 4);
	ktap_report_free(&r);
}

static void test_diagnostic_caps(void **state)
{
	size_t cap = 256 * 1024, used = 0;
	char *text = malloc(cap);
	char long_line[KTAP_MAX_LINE + 1];
	struct ktap_report r;

	(void)state;
	assert_non_null(text);
	used += (size_t)snprintf(text + used, cap - used, "KTAP version 1\n1..2\n");
	for (int i = 0; i < KTAP_MAX_DIAG_LINES + 10; i++)
		used += (size_t)snprintf(text + used, cap - used, "# line %d\n", i);
	used += (size_t)snprintf(text + used, cap - used, "not ok 1 lines\n");
	memset(long_line, 'x', sizeof(long_line) - 1);
	long_line[sizeof(long_line) - 1] = '\0';
	for (int i = 0; i < 5; i++)
		used += (size_t)snprintf(text + used, cap - used, "# %s\n",
					 long_line);
	used += (size_t)snprintf(text + used, cap - used,
				 "not ok 2 bytes\n# rcgate-complete pass=0 fail=2 skip=0 duration_ms=0\n");
	assert_true(used < cap);

	assert_int_equal(ktap_parse(text, used, &r), 0);
	assert_non_null(strstr(r.results[0].diagnostic, "line 63"));
	assert_null(strstr(r.results[0].diagnostic, "line 64"));
	/* Lines are capped at 4096 bytes, "# " included: 4094 x's each. */
	assert_true(strlen(r.results[1].diagnostic) <= KTAP_MAX_DIAG_BYTES);
	assert_int_equal(strlen(r.results[1].diagnostic), 2 * 4094 + 1);
	assert_int_equal(r.dropped_diag_lines, 10 + 3);
	assert_int_equal(r.truncated_lines, 5);
	ktap_report_free(&r);
	free(text);
}

static void test_huge_lines(void **state)
{
	size_t big = 1 << 20;
	size_t cap = 3 * big, used = 0;
	char *text = malloc(cap);
	struct ktap_report r;

	(void)state;
	assert_non_null(text);
	used += (size_t)snprintf(text + used, cap - used, "KTAP version 1\n1..1\n");
	/* A 1 MiB noise line, then a result whose name is too long. */
	memset(text + used, 'n', big);
	used += big;
	text[used++] = '\n';
	used += (size_t)snprintf(text + used, cap - used, "ok 1 ");
	memset(text + used, 'a', big);
	used += big;
	used += (size_t)snprintf(text + used, cap - used,
				 " # SKIP lost\n# rcgate-complete pass=1 fail=0 skip=0 duration_ms=0\n");
	assert_int_equal(ktap_parse(text, used, &r), 0);
	assert_int_equal(r.truncated_lines, 2);
	assert_int_equal(r.ignored_lines, 1);
	assert_int_equal(strlen(r.results[0].path), KTAP_MAX_LINE - 5);
	assert_int_equal(r.results[0].status, KTAP_PASS);
	ktap_report_free(&r);
	free(text);
}

static void test_input_cap(void **state)
{
	size_t len = KTAP_MAX_INPUT + 1;
	char *text = malloc(len);
	size_t golden_len;
	char *golden = test_data_read("ktap", "contract.ktap", &golden_len);
	struct ktap_report r;

	(void)state;
	assert_non_null(text);
	memset(text, '\n', len);
	memcpy(text, golden, golden_len);
	assert_int_equal(ktap_parse(text, len, &r), -1);
	assert_non_null(strstr(r.error, "more than the 16777216 byte cap"));
	/* What came before the cap is still there. */
	assert_int_equal(r.nresults, 4);
	ktap_report_free(&r);

	/* At the cap exactly it is fine. */
	assert_int_equal(ktap_parse(text, len - 1, &r), 0);
	ktap_report_free(&r);
	free(text);
	free(golden);
}

static void test_results_cap(void **state)
{
	size_t n = KTAP_MAX_RESULTS + 1;
	size_t cap = n * 24 + 256, used = 0;
	char *text = malloc(cap);
	struct ktap_report r;

	(void)state;
	assert_non_null(text);
	/* A nested level without a plan is the only way past 1..100000. */
	used += (size_t)snprintf(text + used, cap - used,
				 "KTAP version 1\n1..1\n    KTAP version 1\n");
	for (size_t i = 1; i <= n; i++)
		used += (size_t)snprintf(text + used, cap - used,
					 "    ok %zu t%zu\n", i, i);
	used += (size_t)snprintf(text + used, cap - used, "ok 1 s\n");
	assert_true(used < cap);
	assert_int_equal(ktap_parse(text, used, &r), -1);
	assert_non_null(strstr(r.error, "more than 100000 results"));
	assert_int_equal(r.nresults, KTAP_MAX_RESULTS);
	ktap_report_free(&r);
	free(text);
}

static void test_deep_nesting(void **state)
{
	struct ktap_report r;
	size_t len;
	char *buf = test_data_read("ktap", "deep_nesting.ktap", &len);

	(void)state;
	assert_int_equal(ktap_parse(buf, len, &r), 0);
	assert_string_equal(r.results[0].path,
			    "l1.l2.l3.l4.l5.l6.l7.l8.leaf");
	assert_int_equal(r.results[0].depth, KTAP_MAX_DEPTH);
	assert_string_equal(r.results[8].path, "l1");
	ktap_report_free(&r);
	free(buf);
}

static void test_bad_arguments(void **state)
{
	struct ktap_report r;

	(void)state;
	assert_int_equal(ktap_parse("x", 1, NULL), -1);
	assert_int_equal(ktap_parse(NULL, 5, &r), -1);
	assert_non_null(strstr(r.error, "no input"));
	ktap_report_free(&r);
	assert_int_equal(ktap_parse(NULL, 0, &r), -1);
	ktap_report_free(&r);
	/* Freeing twice and freeing NULL are harmless. */
	ktap_report_free(&r);
	ktap_report_free(NULL);
	assert_int_equal(ktap_count(NULL, KTAP_PASS), 0);
	assert_null(ktap_find(NULL, "x"));
}

static void test_status_names(void **state)
{
	(void)state;
	assert_string_equal(ktap_status_name(KTAP_PASS), "PASS");
	assert_string_equal(ktap_status_name(KTAP_FAIL), "FAIL");
	assert_string_equal(ktap_status_name(KTAP_SKIP), "SKIP");
	assert_string_equal(ktap_status_name(KTAP_XFAIL), "XFAIL");
	assert_string_equal(ktap_status_name((enum ktap_status)42), "?");
}

static const struct CMUnitTest fixed_tests[] = {
	cmocka_unit_test(test_contract_example),
	cmocka_unit_test(test_crlf_and_nul_same_as_contract),
	cmocka_unit_test(test_truncated_everywhere),
	cmocka_unit_test(test_embedded_nul_inline),
	cmocka_unit_test(test_unprintable_become_question_marks),
	cmocka_unit_test(test_diagnostics_attach),
	cmocka_unit_test(test_durations),
	cmocka_unit_test(test_diagnostic_caps),
	cmocka_unit_test(test_huge_lines),
	cmocka_unit_test(test_input_cap),
	cmocka_unit_test(test_results_cap),
	cmocka_unit_test(test_deep_nesting),
	cmocka_unit_test(test_bad_arguments),
	cmocka_unit_test(test_status_names),
};

int main(void)
{
	/* One cmocka test per table row, so TAP output names each case. */
	static struct CMUnitTest tests[ARRAY_SIZE(fixed_tests) +
				       ARRAY_SIZE(inline_cases) +
				       ARRAY_SIZE(golden_cases)];
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(fixed_tests); i++)
		tests[n++] = fixed_tests[i];
	for (size_t i = 0; i < ARRAY_SIZE(inline_cases); i++) {
		tests[n].name = inline_cases[i].name;
		tests[n].test_func = test_inline;
		tests[n].initial_state = (void *)&inline_cases[i];
		n++;
	}
	for (size_t i = 0; i < ARRAY_SIZE(golden_cases); i++) {
		tests[n].name = golden_cases[i].file;
		tests[n].test_func = test_golden;
		tests[n].initial_state = (void *)&golden_cases[i];
		n++;
	}
	return cmocka_run_group_tests_name("ktap", tests, NULL, NULL);
}
