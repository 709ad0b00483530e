/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * intake/intake.h - what starts a release: rc announcements parsed
 * (announce.c, GMime) and taken from the API and a Maildir (trigger.c).
 *
 * The public header of daemon/intake/: a section per file. A .c file includes
 * its own folder's headers and those of lower floors only (docs/design.md,
 * tests/layers.sh).
 */
#ifndef RCGATE_INTAKE_H
#define RCGATE_INTAKE_H

#include <stddef.h>

#include "base/base.h"

/* ==== announce.c ==== */
/*
 * announce.c - stable rc review announcements: raw RFC 822 mail in, the rc's
 * identity (version, branch, deadline, Message-ID, patch URL, git tree) out.
 *
 * Pure: no I/O and no global state beyond GMime's one-time initialisation.
 * GMime does all the MIME work (header unfolding, RFC 2047 encoded words,
 * quoted-printable and base64 bodies, multipart, charsets, dates); this
 * module only interprets the decoded values.
 *
 * What is an announcement:
 *   - Subject "[PATCH <X.Y> <0..0>/<N>] <X.Y.Z>-rc<R> review" (000/N, 00/N
 *     and 0/N alike; the version's X.Y must equal the bracket's X.Y), not
 *     "Re:"/"Fwd:" and not a reply (In-Reply-To with "Re:" anywhere in the
 *     subject); or, with any subject, "X-stable: review" together with a
 *     valid X-KernelTest-Version;
 *   - a Message-ID (it is what replies thread on).
 * The X-KernelTest-{Version,Branch,Tree,Patch,Deadline} headers win over
 * the subject and the body when present; a present but malformed one is an
 * error rather than silently ignored. The body (the first text/plain part)
 * gives the deadline ("Responses should be made by <RFC 2822 date>"), the
 * stable-review patch URL and the "git-url branch" line; an announcement
 * without a body is still one, with those fields empty.
 */


#define ANNOUNCE_MAX_INPUT (4u << 20)	/* bytes; more is an error */

struct announcement {
	char version[48];	/* "6.1.64-rc1" */
	char branch[32];	/* "6.1" */
	char subject[512];	/* decoded, control characters made spaces */
	char message_id[512];	/* without <> */
	char from[512];		/* decoded: "Greg Kroah-Hartman <gregkh@...>" */
	/* The address of the one From mailbox ("gregkh@linuxfoundation.org"),
	 * or "" when From is anything else (two From headers, a group,
	 * several mailboxes, a display name holding an address, an address
	 * with blanks or controls): then no sender can match. */
	char from_addr[320];
	char *to;		/* decoded address list, malloc'd, or NULL */
	char *cc;		/* decoded address list, malloc'd, or NULL */
	char date[32];		/* Date: in UTC, "2023-11-24T17:48:39Z", or "" */
	char deadline[32];	/* UTC, "2023-11-26T17:19:17Z", or "" */
	char patch_url[1024];	/* "" if none */
	char git_tree[1024];	/* "" if none */
	char git_branch[128];	/* "linux-6.1.y", "" if none */
	long npatches;		/* N of 000/N, -1 if unknown */
	/* The head of the body as replies quote it: from its first line to
	 * the line after "Responses should be made by" (Roeck's 7 lines),
	 * at most ANNOUNCE_HEAD_LINES lines, control characters made
	 * spaces; "" when the body does not start that way. */
	char head[1024];
	/* Not parsed: what reply_announcement (report/reply.c) knows of the
	 * stored announcement's DKIM verdict. unverified set: the mail was
	 * not verified (dkim says why), to holds [announce] lists and
	 * replies go there alone, never to From. */
	int unverified;
	char dkim[256];
};
#define ANNOUNCE_HEAD_LINES 12

/* A patch of an rc's series: "[PATCH 6.1 123/372] subject", a reply to
 * the announcement. Its Message-ID is the patch's lore link. */
struct series_patch {
	char branch[32];		/* "6.1" */
	long number, total;		/* 123, 372 */
	char subject[512];		/* after the brackets */
	char message_id[512];		/* without <> */
	char parent_id[512];		/* In-Reply-To: the announcement's */
	char from_addr[320];		/* as announcement.from_addr */
};

/* Parses raw as a patch of a series: 0 with out filled, 1 if it is not
 * one (err says why), -1 if it is no mail. */
int announce_parse_patch(const char *raw, size_t len, struct series_patch *out,
			 char *err, size_t errlen);

/*
 * Initialises GMime once per process; safe from any thread, any number of
 * times. announce_parse() and report.c call it themselves.
 */
void announce_init(void);

/*
 * Parses the raw message raw[0..len) (need not be NUL-terminated).
 * Returns 0 if it is an rc review announcement (*out filled in), 1 if it is
 * a valid mail that is not one (err says why: "reply (Re:)", "subject is
 * not an rc review", "no Message-ID", ...), -1 if the input is malformed or
 * unusable (err says why: empty, over ANNOUNCE_MAX_INPUT, not a message,
 * truncated header block, a field too long for *out, a malformed
 * X-KernelTest header). *out is always initialised, so announce_free() is
 * safe after any return; on a non-zero return it holds no allocations.
 */
int announce_parse(const char *raw, size_t len, struct announcement *out,
		   char *err, size_t errlen);

/*
 * 1 when id (without <>) can go verbatim into a header of our own, as the
 * reply's In-Reply-To and References: non-empty printable ASCII without
 * spaces, '<' or '>'. 0 otherwise, also for NULL.
 */
int announce_valid_message_id(const char *id);

/* Frees out->to and out->cc and sets them to NULL; out itself is the caller's. */
void announce_free(struct announcement *out);

/* ==== dkim.c ==== */
/*
 * dkim.c - whether an announcement is its sender's mail: the raw bytes as
 * received verified by libopendkim, against keys from DNS or a pinned key
 * file ([announce] dkim_keys: "selector._domainkey.domain TXT-record"
 * lines). A mail is verified when one DKIM-Signature passes and
 *   - its d= is the From: address's domain or one of signers,
 *   - its h= covers From and Subject, and To and Cc when the mail has them,
 *   - it has no l= (a signed prefix lets anyone append to the body),
 * and no From, To, Cc, Subject, Date or Message-ID header appears twice
 * (the signature covers only one). More than 4 DKIM-Signature headers, or
 * one over 4096 bytes, is not read at all.
 */
struct announce_dkim {
	int verified;		/* 1: a signature vouches for the mail */
	int tempfail;		/* a key lookup failed for now (DNS) */
	char detail[256];	/* "d=linuxfoundation.org s=korg", or why not */
};
/* Checks raw[0..len), the mail a (announce_parse's result) was parsed
 * from: 0 with out filled (verified or not, and why), -1 with err when
 * libopendkim cannot run at all. */
int announce_dkim_check(const char *raw, size_t len,
			const struct announcement *a, const char *signers,
			const char *keyfile, struct announce_dkim *out,
			char *err, size_t errlen);
/* 1 if domain (a signature's d=) is from_addr's domain or one of signers
 * (space-separated), case aside; 0 otherwise and for "" or NULL. */
int announce_dkim_domain_ok(const char *domain, const char *from_addr,
			    const char *signers);

/* ==== recipients.c ==== */
/*
 * Who a reply to an announcement goes to. Pure (GMime parses the address
 * lists).
 */
/* The recipients of a reply-all to an announcement from from (its first
 * recipient, not repeated in the lists), to and cc: each address once,
 * group and malformed mailboxes left out, at most max in all with from
 * counted; the kept To and Cc addresses into *to_out and *cc_out
 * (malloc'd, caller frees; NULL when none). The number of addresses left
 * out for the cap. */
long announce_recipients(const char *from, const char *to, const char *cc,
			 long max, char **to_out, char **cc_out);

/* ---- trigger.c: rc announcements from the API and a watched Maildir ---- */
struct store;
/* Parses a raw announcement and records the release if its sender is
 * one of senders (space-separated addresses, "*" for anyone). 0 = recorded
 * (*created says whether it is new; version set; a later announcement of
 * the same version under another Message-ID corrects the earlier one),
 * 1 = not an rc announcement or not from an accepted sender (err says why;
 * ignored; also an announcement [announce] dkim = require refuses), -1 =
 * malformed (err says why), -2 = a storage error or a DKIM key lookup
 * that failed for now: keep the mail and try again later. */
int trigger_announcement(struct store *, const char *senders, const char *raw,
			 size_t len, char *version, size_t vlen, int *created,
			 char *err, size_t errlen);
/* 1 if addr (the one From mailbox's address, announcement.from_addr) is
 * exactly one of senders (case aside), or senders has '*'; 0 for "". */
int trigger_sender_accepted(const char *senders, const char *addr);
/* Watches cfg->maildir/new: each message is ingested, then moved to cur/
 * (or to .rcgate-rejected/ with the reason logged). */
int trigger_start(const struct config *, const char *db_path, char *err,
		  size_t errlen);
void trigger_stop(void);

/* ---- lore.c: a series' patch mails from lore's thread mbox ---- */
#define LORE_MAX_DOWNLOAD (32L << 20)	/* the t.mbox.gz as fetched */
#define LORE_MAX_MBOX (64u << 20)	/* inflated (a 372-patch series
					 * with its replies is ~20 MiB) */
#define LORE_MAX_MAILS 20000
struct store;
struct config;
/* data[0..len), an mbox or its gzip: every patch of an announced series
 * in it from the announcement's sender (and accepted by senders) recorded
 * as a mailed one is (store_series_patch_add: a number already known
 * keeps its first mail), *recorded of them: 0;
 * -1 with err for a hostile or malformed one (not gzip, truncated,
 * inflating past LORE_MAX_MBOX, not an mbox, no mail, too many mails). */
int lore_series_record(struct store *, const char *senders, const char *data,
		       size_t len, long *recorded, char *err, size_t errlen);
/* "<lore_url>/<message_id>/t.mbox.gz" into out: 0, or -1 with err (a
 * Message-ID that is not one, or has / ? # %). */
int lore_thread_url(const char *lore_url, const char *message_id, char *out,
		    size_t outlen, char *err, size_t errlen);
/* release_id's announcement thread fetched from [report] lore_url (fetch.c:
 * its URL checks, allowed networks, LORE_MAX_DOWNLOAD; kept in
 * <cache_dir>/artifacts) and recorded by lore_series_record: 0, -1 with
 * err (logged). Blocks for the download. */
int lore_series_fetch(struct store *, const struct config *,
		      const char *cache_dir, int64_t release_id, long *recorded,
		      char *err, size_t errlen);

#endif /* RCGATE_INTAKE_H */
