/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report/report.h - what rcgate says: the report text (report.c), KCIDB
 * (kcidb.c), and delivery by mail and webhook (notify.c).
 *
 * The public header of daemon/report/: a section per file. A .c file includes
 * its own folder's headers and those of lower floors only (docs/design.md,
 * scripts/check-layers).
 */
#ifndef RCGATE_REPORT_H
#define RCGATE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "intake/intake.h"

/* ==== report.c: from report.h ==== */
/*
 * report.h - the per-rc test report: plain text in the style test farms
 * reply to stable review announcements with, and the RFC 822 reply itself.
 *
 * Pure functions over plain structs: no database, no network, no clock, no
 * randomness, so the same input always gives the same bytes (golden tests).
 * Every string in the input may hold anything: control characters are made
 * harmless in the text and can never create a header in the e-mail.
 */



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

/* ==== kcidb.c: from kcidb.h ==== */
/*
 * kcidb.h - a release as a KCIDB v5.3 submission (KernelCI's common
 * database): the announcement's checkout, one build per target, every test
 * result, each regression as an issue with incidents on its failing tests.
 *
 * Pure: typed rows in, a jansson object out; no database, no clock. The
 * rules it keeps are those of kcidb-io's v5.3 schema (tests/data/kcidb/
 * and tests/integration/kcidb_check.py check a real export against them):
 * ids "<origin>:<local id>" with origin [a-z0-9_]+, git_repository_url
 * https:// only, dot-separated test paths that start with the suite, no
 * null values, RFC 3339 times, absolute URLs only where a public URL is
 * configured.
 */


struct json_t;

struct kcidb_result {
	const char *test;	/* "ext4.write_seq_512" */
	const char *status;	/* pass, fail, skip, xfail */
	long duration_ms;	/* -1: unknown */
};

struct kcidb_job {
	int64_t id;
	const char *target, *suite, *state, *accel;	/* accel may be NULL */
	const char *started;	/* RFC 3339 UTC, or NULL if never run */
	const struct kcidb_result *results;
	size_t nresults;
};

struct kcidb_regression {
	int64_t id;
	const char *test, *target;
	int flaky;
	/* A bisection's first bad commit (NULL: not bisected): the issue
	 * then says its culprit is the code, names the commit, and is
	 * version 2 (KCIDB triages on an issue's highest version). */
	const char *culprit, *culprit_subject, *culprit_upstream;
};

struct kcidb_release {
	const char *version;	/* "6.1.64-rc1" */
	long rc;		/* 0 for a release */
	const char *git_tree, *git_branch, *message_id;	/* may be NULL */
	const char *public_url;	/* base of log links; NULL/"": none */
};

/* origin: the farm's name, made a KCIDB origin ([a-z0-9_]+, lower case,
 * anything else '_') into out. */
void kcidb_origin(const char *farm, char *out, size_t len);
/* The https:// URL of a git tree: https:// as it is, kernel.org's git://
 * and http:// trees mapped to https://; 0 with out set, -1 if the tree has
 * no https:// form we know (then the field is omitted). */
int kcidb_repository_url(const char *tree, char *out, size_t len);
/* A new submission object (caller json_decref's), or NULL on no memory. */
struct json_t *kcidb_submission(const char *farm,
				const struct kcidb_release *rel,
				const struct kcidb_job *jobs, size_t njobs,
				const struct kcidb_regression *regs,
				size_t nregs);

/* ---- notify.c: delivers the outbox (SMTP and webhooks, libcurl) ---- */
int notify_start(const struct config *, const char *db_path, char *err,
		 size_t errlen);
void notify_stop(void);
void notify_kick(void);
/* Hex HMAC-SHA256 of body with key, as sent in X-Rcgate-Signature. */
void notify_signature(const char *key, const char *body, size_t len,
		      char out[65]);

#endif /* RCGATE_REPORT_H */
