/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * notify.c - owns delivery: one thread takes due rows from the outbox and
 * sends them, mail over SMTP and webhooks as signed JSON POSTs, both with
 * libcurl. A row leaves the outbox only when the peer accepted it, so a
 * restart or an unreachable server delays a report but never loses it
 * (at-least-once). Retries back off exponentially, capped at an hour.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <glib.h>
#include <gmime/gmime.h>

#include "base/base.h"
#include "store/store.h"
#include "report/report.h"

static const struct config *ncfg;

void notify_signature(const char *key, const char *body, size_t len,
		      char out[65])
{
	GHmac *h = g_hmac_new(G_CHECKSUM_SHA256, (const guchar *)key, strlen(key));

	g_hmac_update(h, (const guchar *)body, (gssize)len);
	memcpy(out, g_hmac_get_string(h), 64);
	out[64] = '\0';
	g_hmac_unref(h);
}

struct upload {
	const char *data;
	size_t len, off;
};

static size_t read_cb(char *buf, size_t size, size_t nmemb, void *userdata)
{
	struct upload *u = userdata;
	size_t n = size * nmemb;

	if (n > u->len - u->off)
		n = u->len - u->off;
	memcpy(buf, u->data + u->off, n);
	u->off += n;
	return n;
}

static size_t discard_cb(char *p, size_t size, size_t nmemb, void *userdata)
{
	(void)p;
	(void)userdata;
	return size * nmemb;
}

/* Addresses from a header value, via GMime's parser. */
static int add_rcpts(struct curl_slist **list, const char *value)
{
	InternetAddressList *al;
	int n = 0;

	if (value == NULL)
		return 0;
	al = internet_address_list_parse(NULL, value);
	if (al == NULL)
		return 0;
	for (int i = 0; i < internet_address_list_length(al); i++) {
		InternetAddress *a = internet_address_list_get_address(al, i);

		if (INTERNET_ADDRESS_IS_MAILBOX(a)) {
			const char *addr = internet_address_mailbox_get_addr(
				INTERNET_ADDRESS_MAILBOX(a));
			char *bracketed = g_strdup_printf("<%s>", addr);
			int dup = 0;

			/* The announcer is usually in To and Cc: one RCPT. */
			for (struct curl_slist *l = *list; l != NULL; l = l->next)
				dup |= g_ascii_strcasecmp(l->data, bracketed) == 0;
			if (!dup) {
				*list = curl_slist_append(*list, bracketed);
				n++;
			}
			g_free(bracketed);
		}
	}
	g_object_unref(al);
	return n;
}

static int send_mail(const char *url, const char *msg, char *err,
		     size_t errlen)
{
	GMimeStream *stream;
	GMimeParser *parser;
	GMimeMessage *m;
	struct curl_slist *rcpts = NULL;
	struct upload u = { msg, strlen(msg), 0 };
	char curlerr[CURL_ERROR_SIZE] = "";
	const char *from;
	InternetAddressList *fl;
	char *sender = NULL;
	CURL *c;
	CURLcode cc;

	stream = g_mime_stream_mem_new_with_buffer(msg, strlen(msg));
	parser = g_mime_parser_new_with_stream(stream);
	m = g_mime_parser_construct_message(parser, NULL);
	g_object_unref(parser);
	g_object_unref(stream);
	if (m == NULL) {
		errf(err, errlen, "outbox mail does not parse");
		return -1;
	}
	add_rcpts(&rcpts, g_mime_object_get_header(GMIME_OBJECT(m), "To"));
	add_rcpts(&rcpts, g_mime_object_get_header(GMIME_OBJECT(m), "Cc"));
	from = g_mime_object_get_header(GMIME_OBJECT(m), "From");
	fl = from != NULL ? internet_address_list_parse(NULL, from) : NULL;
	if (fl != NULL && internet_address_list_length(fl) > 0 &&
	    INTERNET_ADDRESS_IS_MAILBOX(internet_address_list_get_address(fl, 0)))
		sender = g_strdup_printf("<%s>", internet_address_mailbox_get_addr(
			INTERNET_ADDRESS_MAILBOX(internet_address_list_get_address(fl, 0))));
	if (fl != NULL)
		g_object_unref(fl);
	g_object_unref(m);
	if (rcpts == NULL || sender == NULL) {
		curl_slist_free_all(rcpts);
		g_free(sender);
		errf(err, errlen, "outbox mail has no sender or recipients");
		return -1;
	}
	c = curl_easy_init();
	if (c == NULL) {
		curl_slist_free_all(rcpts);
		g_free(sender);
		errf(err, errlen, "curl_easy_init failed");
		return -1;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	curl_easy_setopt(c, CURLOPT_MAIL_FROM, sender);
	curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpts);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, read_cb);
	curl_easy_setopt(c, CURLOPT_READDATA, &u);
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	/* Stored mails have LF line ends; SMTP wants CRLF. */
	curl_easy_setopt(c, CURLOPT_CRLF, 1L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curlerr);
	cc = curl_easy_perform(c);
	curl_easy_cleanup(c);
	curl_slist_free_all(rcpts);
	g_free(sender);
	if (cc != CURLE_OK) {
		errf(err, errlen, "smtp %s: %s", url,
		     curlerr[0] ? curlerr : curl_easy_strerror(cc));
		return -1;
	}
	return 0;
}

static int send_webhook(const char *url, const char *body, char *err,
			size_t errlen)
{
	struct curl_slist *h = NULL;
	char sig[65], header[128], curlerr[CURL_ERROR_SIZE] = "";
	long code = 0;
	CURL *c = curl_easy_init();
	CURLcode cc;

	if (c == NULL) {
		errf(err, errlen, "curl_easy_init failed");
		return -1;
	}
	h = curl_slist_append(h, "Content-Type: application/json");
	if (ncfg->webhook_secret[0] != '\0') {
		notify_signature(ncfg->webhook_secret, body, strlen(body), sig);
		snprintf(header, sizeof(header), "X-Rcgate-Signature: sha256=%s", sig);
		h = curl_slist_append(h, header);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard_cb);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "rcgated/" RCGATE_VERSION);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curlerr);
	cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	if (cc != CURLE_OK) {
		errf(err, errlen, "webhook %s: %s", url,
		     curlerr[0] ? curlerr : curl_easy_strerror(cc));
		return -1;
	}
	if (code < 200 || code > 299) {
		errf(err, errlen, "webhook %s answered %ld", url, code);
		return -1;
	}
	return 0;
}

/* One message of the outbox: CONSUMER_NOW while there are more. */
static int notify_pass(struct store *st, void *arg)
{
	char err[512];
	struct outbox_item it;
	int rc = store_outbox_next(st, &it, err, sizeof(err)), sent;
	long delay;

	(void)arg;
	if (rc <= 0) {
		if (rc < 0)
			log_err("notify: %s", err);
		return CONSUMER_PERIOD;
	}
	err[0] = '\0';
	sent = strcmp(it.kind, "smtp") == 0
		? send_mail(it.destination, it.payload, err, sizeof(err))
		: send_webhook(it.destination, it.payload, err, sizeof(err));
	free(it.payload);
	delay = 5L << (it.attempts < 10 ? it.attempts : 10);
	if (delay > 3600)
		delay = 3600;
	if (sent == 0)
		log_info("notify: outbox=%lld kind=%s delivered",
			 (long long)it.id, it.kind);
	else
		log_warn("notify: outbox=%lld kind=%s attempt=%ld failed: %s;"
			 " retry in %ld s", (long long)it.id, it.kind,
			 it.attempts + 1, err, delay);
	if (store_outbox_done(st, it.id, sent == 0, err, delay,
			      ncfg->notify_attempts, err, sizeof(err)) < 0)
		log_err("notify: %s", err);
	return CONSUMER_NOW;
}

static struct consumer notify_consumer = {
	.name = "notify", .pass = notify_pass, .period = 1,
};

void notify_kick(void)
{
	consumer_kick(&notify_consumer);
}

int notify_start(const struct config *cfg, const char *db_path, char *err,
		 size_t errlen)
{
	ncfg = cfg;
	return consumer_start(&notify_consumer, db_path, err, errlen);
}

void notify_stop(void)
{
	consumer_stop(&notify_consumer);
}
