/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * series.c - the patch mails of an announced series ("[PATCH 6.1 123/372]
 * ...", a reply to the announcement from its sender): each recorded so a
 * bisection's culprit can be named by its patch and lore link.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmime/gmime.h>

#include "base/base.h"
#include "intake/intake.h"
#include "intake_internal.h"

/* "<id>" or "id" (the first of a list) into out without <>; -1 if none. */
static int first_msgid(const char *h, char *out, size_t len)
{
	const char *p = h, *end;

	while (p != NULL && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	if (p == NULL || *p == '\0')
		return -1;
	if (*p == '<')
		p++;
	end = p + strcspn(p, "> \t\r\n");
	if (end == p || (size_t)(end - p) >= len)
		return -1;
	memcpy(out, p, (size_t)(end - p));
	out[end - p] = '\0';
	return announce_valid_message_id(out) ? 0 : -1;
}

/* "[PATCH 6.1 123/372] subject" -> branch, number, total, subject. */
static int patch_subject(const char *s, struct series_patch *out)
{
	const char *p = s, *br;
	char *end;

	if (strncmp(p, "[PATCH ", 7) != 0)
		return -1;
	br = p += 7;
	while (isdigit((unsigned char)*p) || *p == '.')
		p++;
	if (p == br || *p != ' ' || (size_t)(p - br) >= sizeof(out->branch) ||
	    !intake_is_branch(br, (size_t)(p - br)))
		return -1;
	memcpy(out->branch, br, (size_t)(p - br));
	out->branch[p - br] = '\0';
	p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	out->number = strtol(p, &end, 10);
	if (*end != '/' || !isdigit((unsigned char)end[1]))
		return -1;
	out->total = strtol(end + 1, &end, 10);
	if (end[0] != ']' || end[1] != ' ' || out->number < 1 ||
	    out->number > out->total || out->total > 100000)
		return -1;
	snprintf(out->subject, sizeof(out->subject), "%s", end + 2);
	intake_blank_controls(out->subject);
	return 0;
}

int announce_parse_patch(const char *raw, size_t len, struct series_patch *out,
			 char *err, size_t errlen)
{
	GMimeStream *stream;
	GMimeParser *parser;
	GMimeMessage *msg;
	int rc;

	memset(out, 0, sizeof(*out));
	if (raw == NULL || len == 0 || len > ANNOUNCE_MAX_INPUT) {
		errf(err, errlen, "empty or over %u bytes", ANNOUNCE_MAX_INPUT);
		return -1;
	}
	announce_init();
	stream = g_mime_stream_mem_new_with_buffer(raw, len);
	parser = g_mime_parser_new_with_stream(stream);
	g_object_unref(stream);
	msg = g_mime_parser_construct_message(parser, NULL);
	g_object_unref(parser);
	if (msg == NULL) {
		errf(err, errlen, "not an RFC 822 message (no header block)");
		return -1;
	}
	rc = series_patch_of(msg, out, err, errlen);
	g_object_unref(msg);
	return rc;
}

int series_patch_of(GMimeMessage *msg, struct series_patch *out, char *err,
		    size_t errlen)
{
	const char *subject, *mid, *parent;
	int rc = 1;

	memset(out, 0, sizeof(*out));
	subject = g_mime_message_get_subject(msg);
	mid = g_mime_message_get_message_id(msg);
	parent = g_mime_object_get_header(GMIME_OBJECT(msg), "In-Reply-To");
	if (subject == NULL || patch_subject(subject, out) < 0)
		errf(err, errlen, "subject is not a patch of a stable series");
	else if (mid == NULL || strlen(mid) >= sizeof(out->message_id) ||
		 !announce_valid_message_id(mid))
		errf(err, errlen, "no usable Message-ID");
	else if (parent == NULL ||
		 first_msgid(parent, out->parent_id, sizeof(out->parent_id)) < 0)
		errf(err, errlen, "not a reply to an announcement (In-Reply-To)");
	else
		rc = 0;
	if (rc == 0) {
		snprintf(out->message_id, sizeof(out->message_id), "%s", mid);
		intake_single_sender(msg, g_mime_message_get_from(msg), out->from_addr,
			      sizeof(out->from_addr));
	}
	return rc;
}
