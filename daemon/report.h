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
	/* NULL, or per also_in entry the link to rcgate's report in that
	 * rc's thread (entries may be NULL) */
	const char *const *also_links;
};

/* A regression of an earlier rc of the branch that passes in this one. */
struct report_fix {
	const char *test, *target;
	const char *seen_in;		/* "6.1.64-rc1 6.1.65-rc1", may be NULL */
	const char *url;		/* may be NULL */
};

struct report_target {
	const char *target;		/* "x86_64", "i386", "arm64", "armv7" */
	const char *state;		/* job state: "done", "infra_error", ... */
	const char *kernel;		/* what was booted, may be NULL */
	long pass, fail, skip;
	double seconds;
	const char *error;		/* infra error message or NULL */
	/* Where a reader finds and reruns it (dashboard page, raw log,
	 * the job's id for "rcgatectl retry"): any may be NULL/0. */
	const char *job_url, *log_url;
	long job_id;
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
	const struct report_fix *fixes;	/* fixed by this rc, may be NULL */
	size_t nfixes;
	/* The farm's "-- " signature lines ("rcgate test farm, https://..."),
	 * may be NULL. */
	const char *signature;
	int late;	/* the review deadline passed before this report */
	const char *commit;	/* the exact commit built (git rcs), or NULL */
};

/*
 * The plain-text report body: "Results from <farm>.", the verdict line
 * ("No regressions on arm64, arm, x86_64, and i386." / "Regressions on
 * x86_64."), the build, the regressions against the baseline (with the
 * other rcs each one also affects), a per-target summary with infra
 * errors, links, and a Tested-by trailer only when the rc is clean: no
 * counted regression, every target done without error, at least one
 * target, and the gate (if given) "pass". Target names map to the
 * kernel's ARCH names (armv7 -> arm). Boots and test results are
 * separate sections; a target with failures gets its job page, log and
 * the command that reruns it.
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
 * Any other mail of the conversation (report_mail_compose): a follow-up in
 * the rc thread (parent_id NULL: under the announcement; else under
 * rcgate's own mail with that Message-ID, References naming both), or a
 * mail to other people (to set) that still points at the thread.
 */
struct report_mail {
	const struct announcement *ann;	/* the rc thread, required */
	const char *farm, *version;	/* for the Message-ID */
	const char *kind;		/* Message-ID part: "invalid", ... */
	const char *from, *date;	/* From:, RFC 2822 Date: */
	const char *parent_id;		/* own mail replied to, may be NULL */
	/* NULL: reply-all to ann. Else To: these addresses, and Cc: cc plus
	 * (reply_all set) the announcement's sender and lists. */
	const char *to;
	const char *cc;			/* extra Cc (the culprit's people) */
	int reply_all;
	const char *subject;		/* NULL: "Re: " ann's subject */
	/* The body; "@MESSAGE_ID@" in it becomes the mail's own id (for the
	 * 0-day robot's "| Closes:" link), which is derived from the body
	 * as given, so it stays deterministic. */
	const char *body;
};

/* The mail as RFC 822 text (caller frees); its Message-ID (without <>)
 * into id (may be NULL). NULL with err on a missing field or a bad
 * address, date or Message-ID. */
char *report_mail_compose(const struct report_mail *m, char *id, size_t idlen,
			  char *err, size_t errlen);

/* The Message-ID (without <>) of a mail composed here, into buf; -1 if it
 * has none. */
int report_message_id(const char *email, char *buf, size_t len);

#define REPORT_ID_MARK "@MESSAGE_ID@"

#endif /* RCGATE_REPORT_H */
