/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report_internal.h - what reply.c, followup.c and report.c share and
 * nothing else includes: the helpers every mail rcgate composes goes
 * through.
 */
#ifndef RCGATE_REPORT_INTERNAL_H
#define RCGATE_REPORT_INTERNAL_H

#include <glib.h>

#include "base/base.h"
#include "store/store.h"
#include "report/report.h"

/* The base of dashboard links: the public URL, else what the daemon
 * serves on (never in a mail: reply_mail_allowed refuses that). */
const char *reply_link_base(const struct config *cfg, const char *base_url);

/* "-- " lines: the farm, where its results are, whom to write to. */
char *reply_signature(const struct config *cfg, const char *base);

/* The kernel's ARCH names where the ecosystem uses them. */
const char *reply_kernel_arch(const char *target);

/* Records the mail and queues it (SMTP, if mail may go out) and hook
 * (may be NULL). 1 queued, 0 already sent or not allowed, -1 error. */
int reply_send_mail(struct store *st, const struct config *cfg,
		     struct mail_in *m, const char *hook, char *err,
		     size_t errlen);

/* The release row of id into rows (caller frees); NULL if none. */
const struct release_row *reply_release_of(struct store *st, int64_t id,
					    struct rowset *rows);

/* The Message-ID of rcgate's first report in rel's thread into id; 0 if
 * none was sent (a follow-up then replies to the announcement). */
int reply_report_id(struct store *st, int64_t release_id, char *id,
			size_t len);

/* ---- report.c ---- */
#define REPORT_WIDTH 78	/* mail readers wrap longer lines */
enum wrap_lead {
	WRAP_DROP_LEAD,		/* a paragraph: leading blanks go */
	WRAP_KEEP_LEAD,		/* an indented item: they stay, and count */
};
/* Adds text and a newline, broken at blanks into lines of at most
 * REPORT_WIDTH columns, continuations starting with indent; a word longer
 * than that (a URL) stays whole. Every mail's text wraps through here. */
void report_wrap(GString *out, const char *text, const char *indent,
		 enum wrap_lead lead);

#endif /* RCGATE_REPORT_INTERNAL_H */
