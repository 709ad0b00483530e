/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report.h - the per-rc test report: plain text in the style test farms
 * reply to stable review announcements with, and the RFC 822 reply itself.
 *
 * Pure functions over plain structs: no database, no network, no clock, no
 * randomness, so the same input always gives the same bytes (golden tests).
 * Every string in the input may hold anything: control characters are made
 * harmless in the text and can never create a header in the e-mail.
 */
#ifndef RCGATE_REPORT_H
#define RCGATE_REPORT_H

#include <stddef.h>

#include "announce.h"

struct report_regression {
	long id;
	const char *test;		/* "ext4.write_seq_512" */
	const char *target;		/* "x86_64" */
	const char *diagnostic;		/* multi-line, may be NULL */
	/*
	 * open/confirmed (or NULL/anything else): counts as a regression of
	 * this rc; fixed/invalid: listed as resolved, does not count.
	 */
	const char *state;
	const char *const *also_in;	/* other affected rcs: "5.15.140-rc1" */
	size_t nalso;
	const char *url;		/* link to the regression, may be NULL */
};

struct report_target {
	const char *target;		/* "x86_64", "i386", "arm64", "armv7" */
	const char *state;		/* job state: "done", "infra_error", ... */
	const char *kernel;		/* what was booted, may be NULL */
	long pass, fail, skip;
	double seconds;
	const char *error;		/* infra error message or NULL */
};

struct report_input {
	const char *farm;		/* "rcgate" */
	const char *version;		/* "6.1.64-rc1" */
	const char *baseline;		/* "6.1.63" or NULL */
	const char *gate;		/* "pass" / "block", may be NULL */
	const char *status_url;		/* may be NULL */
	const struct report_regression *regressions;
	size_t nregressions;
	const struct report_target *targets;
	size_t ntargets;
	const struct announcement *ann;	/* may be NULL (no Build section) */
	/*
	 * Who gives the Tested-by: "rcgate <rcgate@example.org>". NULL:
	 * report_text() writes no trailer, report_email() uses its From.
	 */
	const char *tested_by;
};

/*
 * The plain-text report body: "Results from <farm>.", the verdict line
 * ("No regressions on arm64, arm, x86_64, and i386." / "Regressions on
 * x86_64."), the build, the regressions against the baseline (with the
 * other rcs each one also affects), a per-target summary with infra
 * errors, links, and a Tested-by trailer only when the rc is clean: no
 * counted regression, every target done without error, at least one
 * target, and the gate (if given) "pass". Target names map to the arch
 * names test farms use (armv7 -> arm).
 * Returns a malloc'd UTF-8 string the caller frees, or NULL if in, farm or
 * version is NULL or memory runs out.
 */
char *report_text(const struct report_input *in);

/*
 * The complete RFC 822 reply to in->ann (required): From: from, To: the
 * announcement's From and To, Cc: its Cc, Subject: "Re: <subject>",
 * In-Reply-To and References: its Message-ID, Date: date_rfc2822, a new
 * Message-ID derived from farm, version, date, body and from's domain (so
 * the output is deterministic), MIME-Version, text/plain; charset=utf-8
 * with the transfer encoding GMime picks, body = report_text(in) (with the
 * Tested-by trailer given by from when in->tested_by is NULL). Line ends
 * are LF; SMTP senders convert.
 * Returns a malloc'd string the caller frees, or NULL with err set.
 */
char *report_email(const struct report_input *in, const char *from,
		   const char *date_rfc2822, char *err, size_t errlen);

/*
 * A follow-up in ann's thread (the same headers as report_email: Re:
 * subject, In-Reply-To and References, reply-all, a deterministic
 * Message-ID) with body as it is: a bisection's culprit, sent after the
 * report. NULL with err on a missing field or an unusable Message-ID.
 */
char *report_followup_email(const struct announcement *ann, const char *farm,
			    const char *version, const char *from,
			    const char *date_rfc2822, const char *body,
			    char *err, size_t errlen);

#endif /* RCGATE_REPORT_H */
