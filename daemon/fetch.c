/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fetch.c - owns libcurl for downloads: kernel artifacts go into a
 * content-addressed cache (<cache>/<sha256>). A download lands in
 * <cache>/partial/<sha256> first, resumes from there after a failure,
 * is hashed, and only a file whose SHA-256 matches is renamed into place.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>
#include <glib.h>

#include "rcgate.h"

#define FETCH_TRIES 4

int fetch_init(char *err, size_t errlen)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		errf(err, errlen, "curl_global_init failed");
		return -1;
	}
	return 0;
}

void fetch_cleanup(void)
{
	curl_global_cleanup();
}

int fetch_url_check(const char *url, char *err, size_t errlen)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *path = NULL;
	int rc = -1;
	CURLUcode uc;

	if (u == NULL) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	uc = curl_url_set(u, CURLUPART_URL, url, 0);
	if (uc != CURLUE_OK) {
		errf(err, errlen, "not a valid URL (%s)", curl_url_strerror(uc));
		goto out;
	}
	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0 &&
	     strcmp(scheme, "file") != 0)) {
		errf(err, errlen, "scheme must be http, https or file");
		goto out;
	}
	curl_url_get(u, CURLUPART_HOST, &host, 0);
	curl_url_get(u, CURLUPART_PATH, &path, 0);
	if (strcmp(scheme, "file") != 0 && (host == NULL || *host == '\0')) {
		errf(err, errlen, "URL has no host");
		goto out;
	}
	if (path == NULL || strcmp(path, "/") == 0 || path[0] == '\0') {
		errf(err, errlen, "URL has no path");
		goto out;
	}
	rc = 0;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(path);
	curl_url_cleanup(u);
	return rc;
}

struct download {
	FILE *out;
	FILE *joblog;
	long max_bytes;
	curl_off_t have;	/* bytes already on disk before this try */
	curl_off_t written;	/* bytes added by this try */
	double last_report;
	int too_big;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct download *d = userdata;
	size_t n = size * nmemb;

	if (d->have + d->written + (curl_off_t)n > d->max_bytes) {
		d->too_big = 1;
		return 0;
	}
	n = fwrite(ptr, 1, n, d->out);
	d->written += (curl_off_t)n;
	return n;
}

static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
		       curl_off_t ultotal, curl_off_t ulnow)
{
	struct download *d = userdata;
	double now = now_monotonic();

	(void)ultotal;
	(void)ulnow;
	if (d->joblog != NULL && now - d->last_report >= 2.0 && dlnow > 0) {
		fprintf(d->joblog, "fetch: %lld/%lld bytes\n",
			(long long)(d->have + dlnow),
			(long long)(dltotal > 0 ? d->have + dltotal : -1));
		fflush(d->joblog);
		d->last_report = now;
	}
	return 0;
}

/* One transfer attempt, appending to partial. Returns 0 on success, 1 on a
 * transient error worth retrying, -1 on a permanent one. */
static int fetch_once(const char *url, const char *partial, long max_bytes,
		      FILE *joblog, char *err, size_t errlen)
{
	struct download d = { 0 };
	struct stat st;
	CURL *c;
	CURLcode cc;
	long code = 0;
	char curlerr[CURL_ERROR_SIZE] = "";
	double secs = 0;
	curl_off_t speed = 0;
	int rc;

	if (stat(partial, &st) == 0)
		d.have = st.st_size;
	d.out = fopen(partial, "ab");
	if (d.out == NULL) {
		errf(err, errlen, "open %s: %s", partial, strerror(errno));
		return -1;
	}
	d.joblog = joblog;
	d.max_bytes = max_bytes;
	c = curl_easy_init();
	if (c == NULL) {
		fclose(d.out);
		errf(err, errlen, "curl_easy_init failed");
		return -1;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https,file");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
	/* A stalled server (under 1 KiB/s for 60 s) is a transient error. */
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max_bytes);
	curl_easy_setopt(c, CURLOPT_RESUME_FROM_LARGE, d.have);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &d);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, &d);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curlerr);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "rcgated/" RCGATE_VERSION);
	cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(c, CURLINFO_TOTAL_TIME, &secs);
	curl_easy_getinfo(c, CURLINFO_SPEED_DOWNLOAD_T, &speed);
	curl_easy_cleanup(c);
	if (fclose(d.out) != 0 && cc == CURLE_OK) {
		errf(err, errlen, "write %s: %s", partial, strerror(errno));
		return -1;
	}
	if (cc == CURLE_OK) {
		if (joblog != NULL)
			fprintf(joblog, "fetch: done in %.1f s, %lld bytes/s\n",
				secs, (long long)speed);
		return 0;
	}
	if (d.too_big || cc == CURLE_FILESIZE_EXCEEDED) {
		errf(err, errlen, "artifact larger than %ld bytes", max_bytes);
		return -1;
	}
	errf(err, errlen, "%s: %s", url, curlerr[0] ? curlerr :
	     curl_easy_strerror(cc));
	switch (cc) {
	case CURLE_HTTP_RETURNED_ERROR:
		/* 416: the partial file is already complete (or bigger than the
		 * artifact): let the hash decide. 5xx and 429 may pass. */
		if (code == 416)
			return 0;
		rc = code >= 500 || code == 429 || code == 408 ? 1 : -1;
		break;
	case CURLE_FILE_COULDNT_READ_FILE:
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
	case CURLE_REMOTE_ACCESS_DENIED:
		rc = -1;
		break;
	default:
		rc = 1;
		break;
	}
	return rc;
}

int fetch_artifact(const char *url, const char *sha256, const char *cache_dir,
		   long max_bytes, char *path, size_t pathlen, FILE *joblog,
		   char *err, size_t errlen)
{
	char partial[PATH_MAX], pdir[PATH_MAX], got[65];
	int rc = -1;

	if (!is_sha256_hex(sha256)) {
		errf(err, errlen, "bad sha256 '%.70s'", sha256);
		return -1;
	}
	if ((size_t)snprintf(path, pathlen, "%s/%s", cache_dir, sha256) >= pathlen ||
	    (size_t)snprintf(pdir, sizeof(pdir), "%s/partial", cache_dir) >= sizeof(pdir) ||
	    (size_t)snprintf(partial, sizeof(partial), "%s/%s", pdir, sha256) >=
		    sizeof(partial)) {
		errf(err, errlen, "cache path too long");
		return -1;
	}
	if (access(path, R_OK) == 0) {
		if (joblog != NULL)
			fprintf(joblog, "fetch: %s cached\n", sha256);
		return 0;
	}
	if (mkdir_p(pdir, 0755, err, errlen) < 0)
		return -1;
	if (joblog != NULL)
		fprintf(joblog, "fetch: %s\n", url);
	for (int attempt = 1; attempt <= FETCH_TRIES; attempt++) {
		rc = fetch_once(url, partial, max_bytes, joblog, err, errlen);
		if (rc <= 0)
			break;
		if (joblog != NULL)
			fprintf(joblog, "fetch: try %d failed (%s), retrying\n",
				attempt, err);
		if (attempt < FETCH_TRIES)
			sleep((unsigned)(1 << attempt));	/* 2, 4, 8 s */
	}
	if (rc != 0) {
		/* A permanent failure leaves nothing that could poison a retry
		 * with a different URL for the same hash. */
		if (rc < 0)
			unlink(partial);
		return -1;
	}
	if (sha256_file(partial, got, err, errlen) < 0)
		return -1;
	if (strcmp(got, sha256) != 0) {
		errf(err, errlen, "sha256 mismatch for %s: expected %s, got %s",
		     url, sha256, got);
		unlink(partial);
		return -1;
	}
	if (rename(partial, path) < 0) {
		errf(err, errlen, "rename into cache: %s", strerror(errno));
		return -1;
	}
	return 0;
}
