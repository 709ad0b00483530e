/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * lore.c - owns reading an announced series' patch mails from lore's
 * thread mbox (<lore_url>/<announcement's Message-ID>/t.mbox.gz), for a
 * culprit whose patch mail never reached intake: each patch of the series
 * from the announcement's sender is recorded as a mailed one is
 * (series_patch), so the follow-up names the culprit "[PATCH 6.1 123/372]"
 * with its lore link. The mbox is untrusted: the download is fetch.c's
 * (URL checks, allowed networks, its size cap), the gzip stream is
 * inflated to at most LORE_MAX_MBOX bytes, an mbox must start with a
 * "From " line, and at most LORE_MAX_MAILS messages are read, each no
 * larger than an announcement may be.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gio/gio.h>
#include <gmime/gmime.h>

#include "base/base.h"
#include "store/store.h"
#include "artifact/artifact.h"
#include "intake/intake.h"
#include "intake_internal.h"

/* The gzip stream of buf[0..len) inflated, at most max bytes: a new
 * buffer (caller g_free's) with its length in *out_len, or NULL with err
 * (not gzip, truncated, or larger than max). */
static char *gunzip_capped(const char *buf, size_t len, size_t max,
			   size_t *out_len, char *err, size_t errlen)
{
	GZlibDecompressor *z = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP);
	GByteArray *out = g_byte_array_new();
	char chunk[65536];
	size_t in_at = 0;
	GError *ge = NULL;

	for (;;) {
		gsize read = 0, written = 0;
		GConverterResult r = g_converter_convert(G_CONVERTER(z),
			buf + in_at, len - in_at, chunk, sizeof(chunk),
			G_CONVERTER_INPUT_AT_END, &read, &written, &ge);

		if (r == G_CONVERTER_ERROR) {
			if (g_error_matches(ge, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT))
				errf(err, errlen, "the mbox's gzip stream is"
				     " truncated");
			else
				errf(err, errlen, "the mbox is not a whole gzip"
				     " stream: %s", ge->message);
			g_error_free(ge);
			goto fail;
		}
		in_at += read;
		if (out->len + written > max) {
			errf(err, errlen, "the mbox inflates to more than %zu MiB",
			     max >> 20);
			goto fail;
		}
		g_byte_array_append(out, (const guint8 *)chunk, (guint)written);
		if (r == G_CONVERTER_FINISHED)
			break;
		if (read == 0 && written == 0) {
			errf(err, errlen, "the mbox's gzip stream is truncated");
			goto fail;
		}
	}
	g_object_unref(z);
	*out_len = out->len;
	g_byte_array_append(out, (const guint8 *)"", 1);
	return (char *)g_byte_array_free(out, FALSE);
fail:
	g_object_unref(z);
	g_byte_array_free(out, TRUE);
	return NULL;
}

int lore_series_record(struct store *st, const char *senders, const char *data,
		       size_t len, long *recorded, char *err, size_t errlen)
{
	GMimeStream *stream;
	GMimeParser *parser;
	char *inflated = NULL;
	size_t n = len;
	long mails = 0;
	int rc = 0;

	*recorded = 0;
	if (len >= 2 && (unsigned char)data[0] == 0x1f &&
	    (unsigned char)data[1] == 0x8b) {
		inflated = gunzip_capped(data, len, LORE_MAX_MBOX, &n, err, errlen);
		if (inflated == NULL)
			return -1;
		data = inflated;
	} else if (len > LORE_MAX_MBOX) {
		errf(err, errlen, "the mbox is larger than %u MiB",
		     LORE_MAX_MBOX >> 20);
		return -1;
	}
	if (n < 5 || strncmp(data, "From ", 5) != 0) {
		errf(err, errlen, "not an mbox (it does not start with a"
		     " \"From \" line)");
		g_free(inflated);
		return -1;
	}
	announce_init();
	stream = g_mime_stream_mem_new_with_buffer(data, n);
	parser = g_mime_parser_new_with_stream(stream);
	g_object_unref(stream);
	g_mime_parser_set_format(parser, GMIME_FORMAT_MBOX);
	while (!g_mime_parser_eos(parser)) {
		GMimeMessage *msg = g_mime_parser_construct_message(parser, NULL);
		struct series_patch p;
		char e2[256], version[48];
		gint64 start, end;
		int r;

		if (msg == NULL)
			break;
		start = g_mime_parser_get_mbox_marker_offset(parser);
		end = g_mime_parser_tell(parser);
		if (++mails > LORE_MAX_MAILS) {
			g_object_unref(msg);
			errf(err, errlen, "the mbox has more than %d mails",
			     LORE_MAX_MAILS);
			rc = -1;
			break;
		}
		/* One mail may be no larger than intake takes. */
		if (end - start > (gint64)ANNOUNCE_MAX_INPUT ||
		    series_patch_of(msg, &p, e2, sizeof(e2)) != 0 ||
		    !trigger_sender_accepted(senders, p.from_addr)) {
			g_object_unref(msg);
			continue;
		}
		g_object_unref(msg);
		r = store_series_patch_add(st, p.parent_id, p.from_addr, p.number,
					   p.total, p.subject, p.message_id,
					   version, sizeof(version), e2, sizeof(e2));
		if (r < 0) {
			errf(err, errlen, "%s", e2);
			rc = -1;
			break;
		}
		*recorded += r;
	}
	g_object_unref(parser);
	g_free(inflated);
	if (rc == 0 && mails == 0) {
		errf(err, errlen, "the mbox holds no mail");
		rc = -1;
	}
	return rc;
}

int lore_thread_url(const char *lore_url, const char *message_id, char *out,
		    size_t outlen, char *err, size_t errlen)
{
	size_t n = strlen(lore_url);

	if (!announce_valid_message_id(message_id) ||
	    strpbrk(message_id, "/?#%") != NULL) {
		errf(err, errlen, "Message-ID <%.100s> cannot be a lore path",
		     message_id);
		return -1;
	}
	while (n > 0 && lore_url[n - 1] == '/')
		n--;
	if (pathf(out, outlen, "%.*s/%s/t.mbox.gz", (int)n, lore_url,
		  message_id) < 0) {
		errf(err, errlen, "lore URL too long");
		return -1;
	}
	return 0;
}

int lore_series_fetch(struct store *st, const struct config *cfg,
		      const char *cache_dir, int64_t release_id, long *recorded,
		      char *err, size_t errlen)
{
	struct rowset rels = { 0 };
	const struct release_row *rel;
	char url[2048], adir[PATH_MAX], path[PATH_MAX], sha[65];
	char *data;
	size_t len;
	int rc = -1;

	*recorded = 0;
	if (cfg->lore_url[0] == '\0') {
		errf(err, errlen, "no [report] lore_url");
		return -1;
	}
	if (store_release_get(st, release_id, &rels, err, errlen) < 0)
		return -1;
	rel = rels.v;
	if (rels.n == 0 || rel->message_id == NULL) {
		errf(err, errlen, "release %lld has no announcement", (long long)
		     release_id);
		goto out;
	}
	if (lore_thread_url(cfg->lore_url, rel->message_id, url, sizeof(url),
			    err, errlen) < 0 ||
	    fetch_url_check(url, err, errlen) < 0)
		goto out;
	if (pathf(adir, sizeof(adir), "%s/artifacts", cache_dir) < 0 ||
	    mkdir_p(adir, 0755, err, errlen) < 0)
		goto out;
	if (fetch_learn(url, adir, LORE_MAX_DOWNLOAD, NULL, path, sizeof(path),
			sha, NULL, NULL, err, errlen) < 0)
		goto out;
	data = file_read(path, LORE_MAX_DOWNLOAD, &len, err, errlen);
	if (data == NULL)
		goto out;
	rc = lore_series_record(st, cfg->announce_senders, data, len, recorded,
				err, errlen);
	free(data);
	if (rc == 0)
		log_info("lore: %s: %ld patch%s of %s's series recorded", url,
			 *recorded, *recorded == 1 ? "" : "es", rel->version);
out:
	if (rc < 0)
		log_warn("lore: release %lld: %s", (long long)release_id, err);
	rowset_free(&rels);
	return rc;
}
