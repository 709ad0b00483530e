/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * regress.c - the regression rules, as pure functions so they are table-
 * tested without a database or a guest:
 *  - a failing test is a regression when the baseline passed it (or there
 *    is no baseline result: better a report than silence) and every rerun
 *    failed too; fails on both = known failure; a result that flips between
 *    runs is flaky (shown, never blocking);
 *  - the signature that links one regression across rcs and branches is
 *    test + target + normalised diagnostic (the fs is part of the test);
 *  - the gate: pending while jobs run, block on a regression, incomplete
 *    when infrastructure kept a target from being tested, else pass.
 */
#include <ctype.h>
#include <string.h>

#include "base/base.h"
#include "review/review.h"

enum test_class regress_classify(const struct test_runs *t, int reruns)
{
	if (t->fails == 0)
		return CLASS_PASS;
	if (t->baseline == BASE_FAIL)
		return CLASS_KNOWN_FAILURE;
	if (t->fails < t->runs)
		return CLASS_FLAKY;
	if (t->runs < 1 + reruns)
		return CLASS_RERUN;
	return CLASS_REGRESSION;
}

const char *regress_class_name(enum test_class c)
{
	static const char *const names[] = {
		"pass", "known_failure", "rerun", "regression", "flaky"
	};

	return names[c];
}

/* Copies in to out with hex numbers ("0x..."), numbers of five or more
 * digits and bracketed kernel timestamps ("[   12.345]") replaced by "N",
 * whitespace runs collapsed. Short numbers stay: "position 512, expected
 * 1024" is the failure itself. */
void regress_normalize_diag(const char *in, char *out, size_t len)
{
	size_t o = 0;
	const char *p = in != NULL ? in : "";

	if (len == 0)
		return;
	while (*p != '\0' && o + 1 < len) {
		if (*p == '[') {
			const char *q = p + 1;

			while (*q == ' ')
				q++;
			while (isdigit((unsigned char)*q) || *q == '.')
				q++;
			if (*q == ']' && q > p + 1) {
				p = q + 1;
				continue;
			}
		}
		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
		    isxdigit((unsigned char)p[2])) {
			p += 2;
			while (isxdigit((unsigned char)*p))
				p++;
			out[o++] = 'N';
			continue;
		}
		if (isdigit((unsigned char)*p)) {
			const char *q = p;

			while (isdigit((unsigned char)*q))
				q++;
			if (q - p >= 5) {
				out[o++] = 'N';
			} else {
				while (p < q && o + 1 < len)
					out[o++] = *p++;
			}
			p = q;
			continue;
		}
		if (isspace((unsigned char)*p)) {
			while (isspace((unsigned char)*p))
				p++;
			if (o > 0 && *p != '\0')
				out[o++] = ' ';
			continue;
		}
		out[o++] = *p++;
	}
	out[o] = '\0';
}

void regress_signature(const char *test, const char *target,
		       const char *diagnostic, char out[65])
{
	char norm[2048], buf[2400];
	int n;

	regress_normalize_diag(diagnostic, norm, sizeof(norm));
	n = snprintf(buf, sizeof(buf), "%s\n%s\n%s", test, target, norm);
	if (n < 0)
		n = 0;
	sha256_hex(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1,
		   out);
}

void regress_test_fs(const char *test, char *out, size_t len)
{
	const char *dot = strchr(test, '.');
	size_t n = dot != NULL ? (size_t)(dot - test) : 0;

	if (len == 0)
		return;
	if (n >= len)
		n = len - 1;
	memcpy(out, test, n);
	out[n] = '\0';
}

enum gate_verdict regress_gate(const struct gate_input *g)
{
	if (g->blocking_regressions > 0)
		return GATE_BLOCK;	/* known bad: no need to wait */
	if (g->jobs == 0 || g->unfinished > 0)
		return GATE_PENDING;
	if (g->infra_errors > 0)
		return GATE_INCOMPLETE;
	return GATE_PASS;
}

const char *regress_gate_name(enum gate_verdict v)
{
	static const char *const names[] = {
		"pass", "block", "pending", "incomplete"
	};

	return names[v];
}

int regress_confirmed(const struct test_runs *t)
{
	return t->fails >= 2;
}

int regress_fixes(const char *seen_on, const char *version)
{
	struct kversion a, b;

	if (seen_on == NULL || version == NULL ||
	    kversion_parse(seen_on, &a, NULL, 0) < 0 ||
	    kversion_parse(version, &b, NULL, 0) < 0 ||
	    strcmp(a.branch, b.branch) != 0)
		return 0;
	return kversion_cmp(&a, &b) < 0;
}
