/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report/report.h - what rcgate says: the report text (report.c), KCIDB
 * (kcidb.c), and delivery by mail and webhook (notify.c).
 *
 * The public header of daemon/report/: a section per file. A .c file includes
 * its own folder's headers and those of lower floors only (docs/design.md,
 * tests/layers.sh).
 */
#ifndef RCGATE_REPORT_H
#define RCGATE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "intake/intake.h"

/* ==== report.c ==== */
/*
 * report.c - the per-rc test report: plain text in the style test farms
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
	/* NULL, or per also_in entry the link to rcgate's report in that
	 * rc's thread (entries may be NULL) */
	const char *const *also_links;
	/* Its first bad commit, its subject, and the rc whose bisection
	 * found it (this one or another that has the same regression); all
	 * NULL when none has. */
	const char *culprit, *culprit_subject, *culprit_in;
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
	const char *accel;	/* "kvm", "tcg", or NULL */
	/* A kernel rcgate built: the compiler and the link to its .config
	 * (NULL: a posted kernel, or unknown). */
	const char *compiler, *config_url;
	long rerun_of;		/* a rerun of job rerun_of (the same kernel,
				 * booted again to confirm failures), or 0 */
};

/* A test this rc only skipped that its baseline passed (issue 26). */
struct report_lost {
	const char *target, *test, *reason;	/* reason may be NULL */
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
	const char *describe;	/* its git describe --tags, or NULL */
	/* The suite's catalogue page ("https://.../tests"): each failing
	 * test links its entry, <tests_url>#<test>. NULL: none. */
	const char *tests_url;
	const struct report_lost *lost;	/* lost coverage, may be NULL */
	size_t nlost;
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
 * separate sections; a target with failures gets its job page, log, the
 * QEMU machine it ran on and the command that reruns it; a regression
 * links its test's catalogue entry.
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

/* ==== kcidb.c ==== */
/*
 * kcidb.c - a release as a KCIDB v5.3 submission (KernelCI's common
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

/* ---- reply.c: every mail and webhook rcgate sends, composed in one place ---- */
/*
 * The rc's report, the bisection follow-up, the follow-up when
 * a reported regression is triaged invalid, and the regzbot mails for a
 * regression that shipped in a stable release (report, resolved, invalid).
 *
 * Each function reads what it needs from the store, composes with
 * report.c, and records the mail with its deliveries in one transaction
 * (store_mail_add), at most once per kind and subject. Failures are
 * logged: a mail that cannot be composed never stops the engine.
 */
struct store;
struct config;
struct release_row;

/* The rc's announcement as stored (thread, recipients): 1 with ann filled,
 * 0 when the release has none. Its recipients are what every reply may
 * reach: a DKIM-verified announcement's From, To and Cc, at most [announce]
 * max_recipients; an unverified one's [announce] lists alone (ann->to,
 * with ann->unverified set). ann->to and ->cc are malloc'd: announce_free(). */
int reply_announcement(const struct config *, const struct release_row *rel,
		       struct announcement *ann);

/*
 * Whether mail may go out: not while public_url (its host) or mail_from
 * (its domain) is loopback, a private or link-local IPv4 address,
 * localhost, *.invalid, *.localhost, *.local or example.* (RFC 2606),
 * since the Tested-by address ends up in the
 * kernel's history and the links in the list's archive. 1 allowed;
 * 0 with why set.
 */
int reply_mail_allowed(const char *public_url, const char *mail_from,
		       char *why, size_t whylen);

/* The report of a release whose analysis just ended (engine.c): its text
 * stored, the reply to the announcement and the webhook queued. */
int reply_report(struct store *, const struct config *, const char *base_url,
		 const struct release_row *rel,
		 const struct release_row *baseline, const char *gate,
		 char *err, size_t errlen);

/* The follow-up of a finished bisection, threaded under rcgate's report
 * in the rc's thread; one per culprit and rc. */
void reply_bisection(struct store *, const struct config *, int64_t id);

/* A regression was triaged (api): invalid gets a follow-up under each of
 * rcgate's reports that named it, and "#regzbot invalid:" if it was
 * reported to regzbot. */
void reply_triage(struct store *, const struct config *, int64_t regression_id,
		  const char *state, const char *reason);

/* A regression is fixed on a branch by version (engine.c): "#regzbot
 * resolve:" if it was reported to regzbot. The rc's own report lists it
 * under "## Test Fixes". */
void reply_fixed(struct store *, const struct config *, int64_t regression_id,
		 const char *version);

/* Reports each regression that shipped in a stable release to the
 * regressions list, once (engine pass). Returns the number queued. */
int reply_shipped(struct store *, const struct config *);

/* The regzbot range of a regression that shipped in released_as
 * ("6.1.64"): "v6.1.63..v6.1.64" (release tags, never stable-rc commit
 * ids, which every rc rewrites); "v6.1..v6.1.1" for the first. -1 if
 * released_as is not a stable version. */
int reply_regzbot_range(const char *released_as, char *out, size_t len);

/* The addresses of a commit message's Signed-off-by, Reviewed-by and
 * Acked-by lines, each once, ", "-separated into out (at most 20, cut at
 * a whole address when out is full); "" if none. Only "Name <addr>" or
 * "addr" with one @ and no control characters or quotes are kept. */
void reply_commit_people(const char *message, char *out, size_t len);

#endif /* RCGATE_REPORT_H */
