/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mail.c - composes every mail rcgate sends (report_mail_compose): the
 * RFC 822 message built with GMime, which owns header folding and
 * encoding; its Message-ID, recipients (reply-all or chosen, each address
 * once), subject, threading headers and UTF-8 body. report.c and reply.c
 * decide what to say.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmime/gmime.h>

#include "base/base.h"
#include "intake/intake.h"
#include "report/report.h"
#include "report_internal.h"

/* A malloc'd copy of s with control characters made spaces; NULL if s is. */
static char *clean_dup(const char *s)
{
	char *c;

	if (!s || !(c = strdup(s)))
		return NULL;
	for (char *p = c; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	return c;
}

/* Parses a (cleaned) address list; NULL with err if it holds no address. */
static InternetAddressList *parse_addresses(const char *s, const char *what,
					    char *err, size_t errlen)
{
	char *clean = clean_dup(s);
	InternetAddressList *list = clean ?
					    internet_address_list_parse(NULL, clean) :
					    NULL;

	free(clean);
	if (!list || internet_address_list_length(list) == 0) {
		if (list)
			g_object_unref(list);
		errf(err, errlen, "%s has no usable address", what);
		return NULL;
	}
	return list;
}

/* Keeps the characters a Message-ID's parts may safely hold. */
static void put_id_part(GString *out, const char *s)
{
	for (; s && *s; s++)
		if (isalnum((unsigned char)*s) || *s == '.' || *s == '-' ||
		    *s == '_')
			g_string_append_c(out, *s);
}

/* 32-bit FNV-1a: distinguishes two reports with the same date. */
static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

/* The domain of the first mailbox in list, or NULL. */
static const char *first_domain(InternetAddressList *list)
{
	InternetAddress *a = internet_address_list_get_address(list, 0);
	const char *addr, *at;

	if (!a || !INTERNET_ADDRESS_IS_MAILBOX(a))
		return NULL;
	addr = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a));
	at = addr ? strrchr(addr, '@') : NULL;
	return at && at[1] ? at + 1 : NULL;
}

/* Whether list holds a mailbox with addr (case-insensitive). */
static int list_has(InternetAddressList *list, const char *addr)
{
	int n = internet_address_list_length(list);

	for (int i = 0; i < n; i++) {
		InternetAddress *a = internet_address_list_get_address(list, i);
		const char *have;

		if (!INTERNET_ADDRESS_IS_MAILBOX(a))
			continue;
		have = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a));
		if (have && g_ascii_strcasecmp(have, addr) == 0)
			return 1;
	}
	return 0;
}

/* Appends src's addresses to dst, leaving out any already in dst or in
 * also (may be NULL): a reply-all names each recipient once. */
static void append_unique(InternetAddressList *dst, InternetAddressList *src,
			  InternetAddressList *also)
{
	int n = internet_address_list_length(src);

	for (int i = 0; i < n; i++) {
		InternetAddress *a = internet_address_list_get_address(src, i);
		const char *addr = INTERNET_ADDRESS_IS_MAILBOX(a)
			? internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a))
			: NULL;

		if (addr && (list_has(dst, addr) || (also && list_has(also, addr))))
			continue;
		internet_address_list_add(dst, a);
	}
}

/* Adds the (cleaned) address list s to the message's list of type, leaving
 * out addresses already there or in also (may be NULL). */
static int add_addresses(GMimeMessage *msg, GMimeAddressType type,
			 const char *s, const char *what,
			 InternetAddressList *also, char *err, size_t errlen)
{
	InternetAddressList *list;

	if (!s || !*s)
		return 0;
	if (!(list = parse_addresses(s, what, err, errlen)))
		return -1;
	append_unique(g_mime_message_get_addresses(msg, type), list, also);
	g_object_unref(list);
	return 0;
}

/* farm.version[.kind].stamp.hash@domain: the same mail, the same id. */
static gchar *make_message_id(const struct report_mail *m, GDateTime *date,
			      const char *domain)
{
	GString *s = g_string_new(NULL);
	GDateTime *utc = g_date_time_to_utc(date);
	gchar *stamp = utc ? g_date_time_format(utc, "%Y%m%dT%H%M%SZ") : NULL;

	if (utc)
		g_date_time_unref(utc);
	put_id_part(s, m->farm);
	g_string_append_c(s, '.');
	put_id_part(s, m->version);
	if (m->kind) {
		g_string_append_c(s, '.');
		put_id_part(s, m->kind);
	}
	g_string_append_printf(s, ".%s.%08x@", stamp ? stamp : "0",
			       fnv1a(m->body));
	g_free(stamp);
	put_id_part(s, domain);
	return g_string_free(s, FALSE);
}

/* body with every REPORT_ID_MARK replaced by id; caller g_free's. */
static gchar *fill_id(const char *body, const char *id)
{
	GString *s = g_string_new(NULL);
	const char *p = body, *hit;

	while ((hit = strstr(p, REPORT_ID_MARK)) != NULL) {
		g_string_append_len(s, p, hit - p);
		g_string_append(s, id);
		p = hit + strlen(REPORT_ID_MARK);
	}
	g_string_append(s, p);
	return g_string_free(s, FALSE);
}

/* To and Cc: reply-all (the sender and the announcement's To, Cc the
 * rest), or m's own To, then m's Cc and, as asked, the announcement's;
 * each address once (the maintainer Cc's himself on announcements). An
 * unverified announcement's sender is no recipient: its To then holds
 * the lists (reply_announcement). */
static int set_recipients(GMimeMessage *msg, const struct report_mail *m,
			  char *err, size_t errlen)
{
	const struct announcement *a = m->ann;
	const char *from = a->unverified ? NULL : a->from;
	InternetAddressList *to;

	if (!m->to) {
		if ((!from || !*from) && (!a->to || !*a->to)) {
			errf(err, errlen, "announcement From has no usable"
			     " address");
			return -1;
		}
		if (add_addresses(msg, GMIME_ADDRESS_TYPE_TO, from,
				  "announcement From", NULL, err, errlen) < 0 ||
		    add_addresses(msg, GMIME_ADDRESS_TYPE_TO, a->to,
				  "announcement To", NULL, err, errlen) < 0)
			return -1;
	} else if (add_addresses(msg, GMIME_ADDRESS_TYPE_TO, m->to, "to", NULL,
				 err, errlen) < 0) {
		return -1;
	}
	to = g_mime_message_get_addresses(msg, GMIME_ADDRESS_TYPE_TO);
	if (add_addresses(msg, GMIME_ADDRESS_TYPE_CC, m->cc, "cc", to, err,
			  errlen) < 0 ||
	    (m->to && m->reply_all &&
	     (add_addresses(msg, GMIME_ADDRESS_TYPE_CC, from,
			    "announcement From", to, err, errlen) < 0 ||
	      add_addresses(msg, GMIME_ADDRESS_TYPE_CC, a->to,
			    "announcement To", to, err, errlen) < 0)) ||
	    ((!m->to || m->reply_all) &&
	     add_addresses(msg, GMIME_ADDRESS_TYPE_CC, a->cc, "announcement Cc",
			   to, err, errlen) < 0))
		return -1;
	return 0;
}

/* m's subject, or "Re: " and the announcement's, without control
 * characters. */
static int set_subject(GMimeMessage *msg, const struct report_mail *m,
		       char *err, size_t errlen)
{
	char *clean = clean_dup(m->subject ? m->subject : m->ann->subject);
	GString *s;

	if (!clean) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	s = g_string_new(NULL);
	if (!m->subject && g_ascii_strncasecmp(g_strchug(clean), "re:", 3) != 0)
		g_string_append(s, "Re: ");
	g_string_append(s, m->subject ? g_strchug(clean) : clean);
	free(clean);
	g_mime_message_set_subject(msg, s->str, "utf-8");
	g_string_free(s, TRUE);
	return 0;
}

/* Threaded under the announcement, or under rcgate's own mail in that
 * thread: References names the whole chain. */
static void set_thread(GMimeMessage *msg, const struct report_mail *m)
{
	const char *ann_id = m->ann->message_id;
	GString *s = g_string_new("<");

	g_string_append(s, m->parent_id ? m->parent_id : ann_id);
	g_string_append_c(s, '>');
	g_mime_object_set_header(GMIME_OBJECT(msg), "In-Reply-To", s->str,
				 NULL);
	g_string_assign(s, "<");
	g_string_append(s, ann_id);
	g_string_append_c(s, '>');
	if (m->parent_id)
		g_string_append_printf(s, " <%s>", m->parent_id);
	g_mime_object_set_header(GMIME_OBJECT(msg), "References", s->str,
				 NULL);
	g_string_free(s, TRUE);
}

/*
 * Not g_mime_text_part_set_text(): it converts the text to the smallest
 * charset that fits (iso-8859-1 for "D\u00edaz"), and the body is promised
 * as UTF-8. The 7bit constraint keeps the mail valid for SMTP servers
 * without 8BITMIME: an ASCII report (the usual case) stays plain,
 * anything else becomes quoted-printable.
 */
static void set_body(GMimeMessage *msg, const char *body)
{
	GMimeTextPart *part = g_mime_text_part_new_with_subtype("plain");
	GMimeDataWrapper *content;
	GMimeStream *stream;

	g_mime_text_part_set_charset(part, "utf-8");
	stream = g_mime_stream_mem_new_with_buffer(body, strlen(body));
	content = g_mime_data_wrapper_new_with_stream(
		stream, GMIME_CONTENT_ENCODING_DEFAULT);
	g_object_unref(stream);
	g_mime_part_set_content(GMIME_PART(part), content);
	g_object_unref(content);
	g_mime_part_set_content_encoding(
		GMIME_PART(part),
		g_mime_part_get_best_content_encoding(
			GMIME_PART(part), GMIME_ENCODING_CONSTRAINT_7BIT));
	g_mime_message_set_mime_part(msg, GMIME_OBJECT(part));
	g_object_unref(part);
}

/* Builds the message; returns it (caller unrefs) or NULL with err set. */
static GMimeMessage *build(const struct report_mail *m, char *id,
			   size_t idlen, char *err, size_t errlen)
{
	InternetAddressList *list;
	GMimeMessage *msg;
	GDateTime *date;
	const char *domain;
	gchar *msgid, *body;

	date = g_mime_utils_header_decode_date(m->date);
	if (!date) {
		errf(err, errlen, "date \"%.64s\" is not an RFC 2822 date",
			m->date);
		return NULL;
	}
	msg = g_mime_message_new(TRUE);
	g_mime_message_set_date(msg, date);

	if (!(list = parse_addresses(m->from, "from", err, errlen)))
		goto fail;
	domain = first_domain(list);
	if (!domain) {
		g_object_unref(list);
		errf(err, errlen, "from has no mailbox with a domain");
		goto fail;
	}
	msgid = make_message_id(m, date, domain);
	g_mime_message_set_message_id(msg, msgid);
	if (id)
		snprintf(id, idlen, "%s", msgid);
	body = fill_id(m->body, msgid);
	g_free(msgid);
	internet_address_list_append(
		g_mime_message_get_addresses(msg, GMIME_ADDRESS_TYPE_FROM), list);
	g_object_unref(list);
	if (set_recipients(msg, m, err, errlen) < 0 ||
	    set_subject(msg, m, err, errlen) < 0) {
		g_free(body);
		goto fail;
	}
	set_thread(msg, m);
	set_body(msg, body);
	g_free(body);
	g_date_time_unref(date);
	return msg;
fail:
	g_date_time_unref(date);
	g_object_unref(msg);
	return NULL;
}

char *report_mail_compose(const struct report_mail *m, char *id, size_t idlen,
			  char *err, size_t errlen)
{
	GMimeMessage *msg;
	gchar *text;
	char *ret;

	errf(err, errlen, "%s", "");
	if (!m || !m->ann || !m->farm || !m->version || !m->from || !m->date ||
	    !m->body) {
		errf(err, errlen, "a mail needs its announcement, farm,"
		     " version, from, date and body");
		return NULL;
	}
	if (!announce_valid_message_id(m->ann->message_id) ||
	    (m->parent_id && !announce_valid_message_id(m->parent_id))) {
		errf(err, errlen, "%s Message-ID is empty or has spaces, <>"
		     " or control characters",
		     announce_valid_message_id(m->ann->message_id) ?
			     "parent" : "announcement");
		return NULL;
	}
	announce_init();
	/* Whatever a body quotes (a commit subject, a build's error line),
	 * no control character but newline and tab reaches a mail: an ESC
	 * would drive the reader's terminal. */
	{
		struct report_mail clean_m = *m;
		char *clean = strdup(m->body);

		if (clean == NULL) {
			errf(err, errlen, "out of memory");
			return NULL;
		}
		for (char *p = clean; *p; p++)
			if (((unsigned char)*p < 0x20 && *p != '\n' &&
			     *p != '\t') || *p == 0x7f)
				*p = ' ';
		clean_m.body = clean;
		msg = build(&clean_m, id, idlen, err, errlen);
		free(clean);
	}
	if (!msg)
		return NULL;
	text = g_mime_object_to_string(GMIME_OBJECT(msg), NULL);
	g_object_unref(msg);
	if (!text) {
		errf(err, errlen, "GMime could not write the message");
		return NULL;
	}
	ret = strdup(text);
	g_free(text);
	if (!ret)
		errf(err, errlen, "out of memory");
	return ret;
}

int report_message_id(const char *email, char *buf, size_t len)
{
	const char *p = email;

	while (p && *p && *p != '\n') {
		if (g_ascii_strncasecmp(p, "Message-Id: <", 13) == 0) {
			size_t n = strcspn(p + 13, ">\n");

			if (p[13 + n] != '>' || n == 0 || n >= len)
				return -1;
			memcpy(buf, p + 13, n);
			buf[n] = '\0';
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}
