/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * reply.h - every mail and webhook rcgate sends, composed in one place
 * (reply.c): the rc's report, the bisection follow-up, the follow-up when
 * a reported regression is triaged invalid, and the regzbot mails for a
 * regression that shipped in a stable release (report, resolved, invalid).
 *
 * Each function reads what it needs from the store, composes with
 * report.c, and records the mail with its deliveries in one transaction
 * (store_mail_add), at most once per kind and subject. Failures are
 * logged: a mail that cannot be composed never stops the engine.
 */
#ifndef RCGATE_REPLY_H
#define RCGATE_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "announce.h"

struct store;
struct config;
struct release_row;

/* The rc's announcement as stored (thread, recipients): 1 with ann filled
 * (ann->to and ->cc point into rel), 0 when the release has none. */
int reply_announcement(const struct release_row *rel, struct announcement *ann);

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

#endif /* RCGATE_REPLY_H */
