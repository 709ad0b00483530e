/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fetch.c - owns libcurl for downloads: kernel artifacts go into a
 * content-addressed cache (<cache>/<sha256>). A download lands in
 * <cache>/partial/<sha256> first, resumes from there after a failure,
 * is hashed, and only a file whose SHA-256 matches is renamed into place.
 * Redirects are followed here, not by libcurl: every hop is judged as the
 * first URL was (http or https, the caller's scope, allow_networks at
 * connect) before it is requested, and named in the job log.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <dlfcn.h>
#include <glib.h>

#include "base/base.h"
#include "artifact/artifact.h"

#define FETCH_TRIES 4
#define MAX_REDIRECTS 5
#define MAX_REDIRECT_BODY (64 << 10)	/* a 3xx's page, read and dropped */
#define MAX_LOCAL_DIRS 16
#define MAX_NETS 32

/* What an artifact URL may reach. Set once at start, read-only after. */
struct net {
	int family;
	unsigned char addr[16];
	unsigned prefix;
};
static struct {
	char *dirs[MAX_LOCAL_DIRS];	/* canonical, no trailing '/' */
	size_t ndirs;
	struct net nets[MAX_NETS];
	size_t nnets;
} policy;

static int parse_net(const char *s, struct net *out)
{
	char buf[64], *slash;
	long prefix;

	if (strlen(s) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash++ = '\0';
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, buf, out->addr) == 1)
		out->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, out->addr) == 1)
		out->family = AF_INET6;
	else
		return -1;
	prefix = out->family == AF_INET ? 32 : 128;
	if (slash != NULL && parse_long(slash, 0, prefix, &prefix) < 0)
		return -1;
	out->prefix = (unsigned)prefix;
	return 0;
}

static int in_net(const struct net *n, int family, const unsigned char *a)
{
	unsigned full = n->prefix / 8, rest = n->prefix % 8;

	if (n->family != family || memcmp(n->addr, a, full) != 0)
		return 0;
	return rest == 0 ||
	       ((n->addr[full] ^ a[full]) & (0xff << (8 - rest)) & 0xff) == 0;
}

/*
 * Debian's libcurl links libssh2 for scp:// and sftp://, and
 * curl_global_init() calls libssh2_init(0), which initialises OpenSSL's
 * libcrypto: 1.4 MiB of its pages (and a few ms) in every rcgated, for
 * protocols we never allow (CURLOPT_PROTOCOLS_STR is http(s) or smtp(s)).
 * libssh2 initialises its crypto only on the first libssh2_init() call, so
 * making that first call ourselves with LIBSSH2_INIT_NO_CRYPTO (1, part of
 * its ABI) turns curl's into a no-op. Looked up at run time: a libcurl
 * built without libssh2 has no such symbol, and then nothing is to do.
 */
static void ssh2_init_without_crypto(void)
{
	int (*ssh2_init)(int);

	*(void **)&ssh2_init = dlsym(RTLD_DEFAULT, "libssh2_init");
	if (ssh2_init != NULL)
		(void)ssh2_init(1 /* LIBSSH2_INIT_NO_CRYPTO */);
}

static void policy_reset(void)
{
	for (size_t i = 0; i < policy.ndirs; i++)
		free(policy.dirs[i]);
	memset(&policy, 0, sizeof(policy));
}

int fetch_init(const char *local_dirs, const char *allow_networks, char *err,
	       size_t errlen)
{
	char *copy, *tok, *save = NULL;

	policy_reset();
	copy = strdup(local_dirs);
	if (copy == NULL)
		goto oom;
	for (tok = strtok_r(copy, " \t", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t", &save)) {
		char real[PATH_MAX];

		if (tok[0] != '/' || policy.ndirs == MAX_LOCAL_DIRS) {
			errf(err, errlen, "local_dirs: '%s' is not an absolute"
			     " path (or more than %d directories)", tok,
			     MAX_LOCAL_DIRS);
			goto fail;
		}
		/* A directory that does not exist yet allows nothing. */
		if (realpath(tok, real) == NULL) {
			log_warn("fetch: local_dirs: %s: %s (skipped)", tok,
				 strerror(errno));
			continue;
		}
		if (strcmp(real, "/") == 0) {
			errf(err, errlen, "local_dirs: '/' would allow every file");
			goto fail;
		}
		policy.dirs[policy.ndirs] = strdup(real);
		if (policy.dirs[policy.ndirs++] == NULL)
			goto oom_copy;
	}
	free(copy);
	copy = strdup(allow_networks);
	if (copy == NULL)
		goto oom;
	save = NULL;
	for (tok = strtok_r(copy, " \t,", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t,", &save)) {
		if (policy.nnets == MAX_NETS ||
		    parse_net(tok, &policy.nets[policy.nnets]) < 0) {
			errf(err, errlen, "allow_networks: '%s' is not an address"
			     " or address/prefix (at most %d)", tok, MAX_NETS);
			goto fail;
		}
		policy.nnets++;
	}
	free(copy);
	ssh2_init_without_crypto();
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		errf(err, errlen, "curl_global_init failed");
		return -1;
	}
	return 0;
oom_copy:
	free(copy);
oom:
	errf(err, errlen, "out of memory");
	return -1;
fail:
	free(copy);
	policy_reset();
	return -1;
}

void fetch_free(void)
{
	policy_reset();
	curl_global_cleanup();
}

/* Why an address is off limits by default, or NULL if it is public. */
static const char *address_class(int family, const unsigned char *a)
{
	static const struct {
		const char *net, *why;
	} special[] = {
		{ "0.0.0.0/8", "unspecified" }, { "10.0.0.0/8", "private" },
		{ "100.64.0.0/10", "shared address space" },
		{ "127.0.0.0/8", "loopback" }, { "169.254.0.0/16", "link-local" },
		{ "172.16.0.0/12", "private" }, { "192.0.0.0/24", "special" },
		{ "192.168.0.0/16", "private" }, { "198.18.0.0/15", "benchmarking" },
		{ "224.0.0.0/3", "multicast or reserved" },
		{ "::/128", "unspecified" }, { "::1/128", "loopback" },
		{ "fc00::/7", "unique local" }, { "fe80::/10", "link-local" },
		{ "ff00::/8", "multicast" },
	};
	struct net n;

	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
		if (parse_net(special[i].net, &n) == 0 && in_net(&n, family, a))
			return special[i].why;
	}
	return NULL;
}

/* Whether a connection to sa is allowed; why says why not. IPv4-mapped
 * IPv6 addresses are judged as the IPv4 address they carry. */
static int address_allowed(const struct sockaddr *sa, char *why, size_t len)
{
	unsigned char a[16];
	int family = sa->sa_family;
	char text[INET6_ADDRSTRLEN] = "?";
	const char *cls;

	if (family == AF_INET) {
		memcpy(a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (family == AF_INET6) {
		memcpy(a, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)a)) {
			memmove(a, a + 12, 4);
			family = AF_INET;
		}
	} else {
		snprintf(why, len, "address family %d", family);
		return 0;
	}
	for (size_t i = 0; i < policy.nnets; i++) {
		if (in_net(&policy.nets[i], family, a))
			return 1;
	}
	cls = address_class(family, a);
	if (cls == NULL)
		return 1;
	inet_ntop(family, a, text, sizeof(text));
	snprintf(why, len, "%s (%s) is not in [fetch] allow_networks", text, cls);
	return 0;
}

/* The canonical path of a file:// URL's file if it lies under one of the
 * local_dirs (or the path itself, if it is missing there), else NULL.
 * Outside the directories the answer is the same whether a file exists or
 * not, so a URL cannot probe the disk. */
static char *local_path(const char *path, char *err, size_t errlen)
{
	char real[PATH_MAX];
	size_t plen = strlen(path);

	if (strstr(path, "/../") != NULL || strstr(path, "/./") != NULL ||
	    (plen >= 3 && strcmp(path + plen - 3, "/..") == 0) ||
	    (plen >= 2 && strcmp(path + plen - 2, "/.") == 0))
		goto refuse;
	for (size_t i = 0; i < policy.ndirs; i++) {
		size_t n = strlen(policy.dirs[i]);

		if (strncmp(path, policy.dirs[i], n) != 0 || path[n] != '/')
			continue;
		/* Inside an allowed directory a file may come later (the
		 * fetch then says it is missing); symbolic links must not
		 * lead out of the directories. */
		if (realpath(path, real) == NULL) {
			if (errno == ENOENT)
				return strdup(path);
			break;
		}
		for (size_t j = 0; j < policy.ndirs; j++) {
			size_t m = strlen(policy.dirs[j]);

			if (strncmp(real, policy.dirs[j], m) == 0 && real[m] == '/')
				return strdup(real);
		}
		break;
	}
refuse:
	errf(err, errlen, "file URL is not a file under [fetch] local_dirs");
	return NULL;
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
	curl_url_get(u, CURLUPART_PATH, &path, CURLU_URLDECODE);
	if (strcmp(scheme, "file") != 0 && (host == NULL || *host == '\0')) {
		errf(err, errlen, "URL has no host");
		goto out;
	}
	if (path == NULL || strcmp(path, "/") == 0 || path[0] == '\0') {
		errf(err, errlen, "URL has no path");
		goto out;
	}
	if (strcmp(scheme, "file") == 0) {
		char *real;

		if (host != NULL && *host != '\0' && strcmp(host, "localhost") != 0) {
			errf(err, errlen, "file URL names a host");
			goto out;
		}
		real = local_path(path, err, errlen);
		if (real == NULL)
			goto out;
		free(real);
	}
	rc = 0;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(path);
	curl_url_cleanup(u);
	return rc;
}

int fetch_redirect_check(const char *from, const char *to, int hop,
			 const struct fetch_scope *scope, char *out,
			 size_t outlen, char *err, size_t errlen)
{
	char why[512];
	CURLU *u;
	char *scheme = NULL;
	int web;

	if (to == NULL || to[0] == '\0') {
		errf(err, errlen, "%.500s: redirect without a Location", from);
		return -1;
	}
	if (hop > MAX_REDIRECTS) {
		errf(err, errlen, "%.500s: more than %d redirects", from,
		     MAX_REDIRECTS);
		return -1;
	}
	if (strlen(to) >= outlen || strlen(to) > 2000) {
		errf(err, errlen, "redirect from %.500s to a URL of %zu bytes"
		     " refused", from, strlen(to));
		return -1;
	}
	u = curl_url();
	web = u != NULL && curl_url_set(u, CURLUPART_URL, to, 0) == CURLUE_OK &&
	      curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	      (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0);
	curl_free(scheme);
	curl_url_cleanup(u);
	if (!web) {
		errf(err, errlen, "redirect from %.500s to %.500s refused:"
		     " not an http or https URL", from, to);
		return -1;
	}
	if (scope == NULL || scope->pin == NULL) {
		snprintf(out, outlen, "%s", to);
		return 0;
	}
	if (scope->pin(scope->arg, to, out, outlen, why, sizeof(why)) < 0) {
		errf(err, errlen, "redirect from %.500s to %.500s refused: %s",
		     from, to, why);
		return -1;
	}
	return 0;
}

struct download {
	CURL *curl;
	FILE *out;
	FILE *joblog;
	long max_bytes;
	const atomic_int *cancel;
	curl_off_t have;	/* bytes already on disk before this try */
	curl_off_t written;	/* bytes added by this try */
	double last_report;
	long dropped;		/* bytes of redirect pages dropped */
	int too_big;
	char refused[160];	/* why a connection was not allowed */
};

static int cancelled(const atomic_int *cancel)
{
	return cancel != NULL && *cancel;
}

/* Sleeps up to secs, waking early (1) when cancelled. */
static int sleep_cancellable(double secs, const atomic_int *cancel)
{
	double until = now_monotonic() + secs;

	while (now_monotonic() < until) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		if (cancelled(cancel))
			return 1;
		nanosleep(&ts, NULL);
	}
	return cancelled(cancel);
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct download *d = userdata;
	size_t n = size * nmemb;
	long code = 0;

	/* A redirect's own page is not the artifact. */
	curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 300 && code < 400) {
		d->dropped += (long)n;
		return d->dropped > MAX_REDIRECT_BODY ? 0 : n;
	}
	if (d->have + d->written + (curl_off_t)n > d->max_bytes) {
		d->too_big = 1;
		return 0;
	}
	n = fwrite(ptr, 1, n, d->out);
	d->written += (curl_off_t)n;
	return n;
}

/* Also called about once a second while a transfer stalls, so a cancel
 * or a shutdown stops even a server that sends nothing. */
static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
		       curl_off_t ultotal, curl_off_t ulnow)
{
	struct download *d = userdata;
	double now = now_monotonic();

	(void)ultotal;
	(void)ulnow;
	if (cancelled(d->cancel))
		return 1;
	if (d->joblog != NULL && now - d->last_report >= 2.0 && dlnow > 0) {
		joblog_write(d->joblog, "fetch: %lld/%lld bytes",
			(long long)(d->have + dlnow),
			(long long)(dltotal > 0 ? d->have + dltotal : -1));
		d->last_report = now;
	}
	return 0;
}

int fetch_pin_host(const char *host, int port, char *out, size_t outlen,
		   char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	char why[160] = "no address", text[INET6_ADDRSTRLEN];
	char bare[256];
	size_t n = strlen(host);
	int rc;

	/* "[::1]" in a URL is "::1" to the resolver. */
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']')
		snprintf(bare, sizeof(bare), "%.*s", (int)(n - 2), host + 1);
	else
		snprintf(bare, sizeof(bare), "%s", host);
	rc = getaddrinfo(bare, NULL, &hints, &res);
	if (rc != 0) {
		errf(err, errlen, "cannot resolve %s: %s", bare, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		const void *addr;

		if (!address_allowed(ai->ai_addr, why, sizeof(why)))
			continue;
		addr = ai->ai_family == AF_INET
			? (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr
			: (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
		inet_ntop(ai->ai_family, addr, text, sizeof(text));
		if (ai->ai_family == AF_INET6)
			snprintf(out, outlen, "%s:%d:[%s]", host, port, text);
		else
			snprintf(out, outlen, "%s:%d:%s", host, port, text);
		freeaddrinfo(res);
		return 0;
	}
	freeaddrinfo(res);
	errf(err, errlen, "refused to connect: %s", why);
	return -1;
}

/* Every connection, redirects included, is checked here, after name
 * resolution: a host name cannot smuggle a loopback address past it. */
static curl_socket_t open_socket(void *clientp, curlsocktype purpose,
				 struct curl_sockaddr *a)
{
	struct download *d = clientp;

	(void)purpose;
	if (!address_allowed(&a->addr, d->refused, sizeof(d->refused)))
		return CURL_SOCKET_BAD;
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* The options every request of a transfer shares; the URL is set per hop. */
static void transfer_setup(CURL *c, struct download *d, long max_bytes,
			   char *curlerr)
{
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	/* Redirects are fetch_once's: each hop is checked before it is
	 * requested. */
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_socket);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, d);
	/* A stalled server (under 1 KiB/s for 60 s) is a transient error. */
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max_bytes);
	curl_easy_setopt(c, CURLOPT_RESUME_FROM_LARGE, d->have);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, d);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, d);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curlerr);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "rcgated/" RCGATE_VERSION);
}

/* The requests of one transfer, hop by hop: CURLE_OK with the last
 * response's code, or libcurl's error; -1 (err set) when a redirect is
 * refused. at holds the URL last requested. */
static int follow(CURL *c, const char *url, const struct fetch_scope *scope,
		  FILE *joblog, char *at, size_t atlen, long *code,
		  CURLcode *cc, char *err, size_t errlen)
{
	char next[2048];

	snprintf(at, atlen, "%s", url);
	for (int hop = 1;; hop++) {
		char *location = NULL;

		curl_easy_setopt(c, CURLOPT_URL, at);
		*cc = curl_easy_perform(c);
		*code = 0;
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, code);
		if (*cc != CURLE_OK || *code < 300 || *code >= 400)
			return 0;
		curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &location);
		if (joblog != NULL)
			joblog_write(joblog, "fetch: redirect %d (%ld): %s -> %s",
				hop, *code, at,
				location != NULL ? location : "(none)");
		if (fetch_redirect_check(at, location, hop, scope, next,
					 sizeof(next), err, errlen) < 0) {
			if (joblog != NULL)
				joblog_write(joblog, "fetch: %s", err);
			return -1;
		}
		snprintf(at, atlen, "%s", next);
	}
}

/* One transfer attempt, appending to partial. Returns 0 on success, 1 on a
 * transient error worth retrying, -1 on a permanent one. */
static int fetch_once(const char *url, const char *partial, long max_bytes,
		      const struct fetch_scope *scope, FILE *joblog,
		      const atomic_int *cancel, char *err, size_t errlen)
{
	struct download d = { 0 };
	struct stat st;
	CURLcode cc;
	long code = 0;
	char curlerr[CURL_ERROR_SIZE] = "", at[2048];
	double secs = 0;
	curl_off_t speed = 0;
	int rc;

	if (stat(partial, &st) == 0)
		d.have = st.st_size;
	d.out = fopen(partial, "abe");
	if (d.out == NULL) {
		errf(err, errlen, "open %s: %s", partial, strerror(errno));
		return -1;
	}
	d.joblog = joblog;
	d.max_bytes = max_bytes;
	d.cancel = cancel;
	d.curl = curl_easy_init();
	if (d.curl == NULL) {
		fclose(d.out);
		errf(err, errlen, "curl_easy_init failed");
		return -1;
	}
	transfer_setup(d.curl, &d, max_bytes, curlerr);
	rc = follow(d.curl, url, scope, joblog, at, sizeof(at), &code, &cc,
		    err, errlen);
	curl_easy_getinfo(d.curl, CURLINFO_TOTAL_TIME, &secs);
	curl_easy_getinfo(d.curl, CURLINFO_SPEED_DOWNLOAD_T, &speed);
	curl_easy_cleanup(d.curl);
	if (fclose(d.out) != 0 && rc == 0 && cc == CURLE_OK) {
		errf(err, errlen, "write %s: %s", partial, strerror(errno));
		return -1;
	}
	if (rc < 0)
		return -1;	/* a redirect refused: err says which */
	if (cc == CURLE_OK) {
		if (joblog != NULL)
			joblog_write(joblog, "fetch: done in %.1f s, %lld bytes/s",
				secs, (long long)speed);
		return 0;
	}
	if (cc == CURLE_ABORTED_BY_CALLBACK && cancelled(cancel)) {
		errf(err, errlen, "download cancelled");
		return -1;
	}
	if (d.refused[0] != '\0') {
		errf(err, errlen, "%s: refused to connect: %s", at, d.refused);
		return -1;
	}
	if (d.too_big || cc == CURLE_FILESIZE_EXCEEDED) {
		errf(err, errlen, "artifact larger than %ld bytes", max_bytes);
		return -1;
	}
	if (d.dropped > MAX_REDIRECT_BODY) {
		errf(err, errlen, "%s: a redirect's page is larger than %d"
		     " bytes", at, MAX_REDIRECT_BODY);
		return -1;
	}
	errf(err, errlen, "%s: %s", at, curlerr[0] ? curlerr :
	     curl_easy_strerror(cc));
	switch (cc) {
	case CURLE_HTTP_RETURNED_ERROR:
		/* 416: the partial file is already complete (or bigger than the
		 * artifact): let the hash decide. 5xx and 429 may pass. */
		if (code == 416)
			return 0;
		rc = code >= 500 || code == 429 || code == 408 ? 1 : -1;
		break;
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

/* Copies a local file (already checked against local_dirs) into partial:
 * a regular file only, opened without blocking and without following a
 * final symbolic link, in chunks that look at cancel. */
static int copy_local(const char *url, const char *partial, long max_bytes,
		      const atomic_int *cancel, char *err, size_t errlen)
{
	char path_err[160], *path = NULL, *decoded = NULL, buf[65536];
	int in = -1, out = -1, rc = -1;
	struct stat st;
	CURLU *u = curl_url();
	off_t total = 0;

	if (u == NULL || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PATH, &decoded, CURLU_URLDECODE) != CURLUE_OK) {
		errf(err, errlen, "%s: not a valid file URL", url);
		goto out;
	}
	path = local_path(decoded, path_err, sizeof(path_err));
	if (path == NULL) {
		errf(err, errlen, "%s: %s", url, path_err);
		goto out;
	}
	in = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		errf(err, errlen, "%s: %s", url, in < 0 ? strerror(errno)
		     : "not a regular file");
		goto out;
	}
	if (st.st_size > max_bytes) {
		errf(err, errlen, "artifact larger than %ld bytes", max_bytes);
		goto out;
	}
	out = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		errf(err, errlen, "open %s: %s", partial, strerror(errno));
		goto out;
	}
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			errf(err, errlen, "read %s: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		total += n;
		if (total > max_bytes) {
			errf(err, errlen, "artifact larger than %ld bytes", max_bytes);
			goto out;
		}
		if (write(out, buf, (size_t)n) != n) {
			errf(err, errlen, "write %s: %s", partial, strerror(errno));
			goto out;
		}
		if (cancelled(cancel)) {
			errf(err, errlen, "download cancelled");
			goto out;
		}
	}
	if (close(out) < 0) {
		out = -1;
		errf(err, errlen, "write %s: %s", partial, strerror(errno));
		goto out;
	}
	out = -1;
	rc = 0;
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	free(path);
	curl_free(decoded);
	curl_url_cleanup(u);
	return rc;
}

/* Waits for the artifact's lock, so one fetch at a time works on a hash
 * (a second job then finds the file cached). 1 when cancelled. */
static int lock_artifact(const char *lockpath, const atomic_int *cancel,
			 int *fd, char *err, size_t errlen)
{
	*fd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (*fd < 0) {
		errf(err, errlen, "open %s: %s", lockpath, strerror(errno));
		return -1;
	}
	while (flock(*fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			errf(err, errlen, "lock %s: %s", lockpath, strerror(errno));
			close(*fd);
			return -1;
		}
		if (sleep_cancellable(0.2, cancel)) {
			errf(err, errlen, "download cancelled");
			close(*fd);
			return 1;
		}
	}
	return 0;
}

/* One source, with retries: 0 when partial holds the whole transfer. */
static int fetch_source(const char *url, int local, const char *partial,
			long max_bytes, const struct fetch_scope *scope,
			FILE *joblog, const atomic_int *cancel, char *err,
			size_t errlen)
{
	int rc = -1;

	if (local)
		return copy_local(url, partial, max_bytes, cancel, err, errlen);
	for (int attempt = 1; attempt <= FETCH_TRIES; attempt++) {
		rc = fetch_once(url, partial, max_bytes, scope, joblog, cancel,
				err, errlen);
		if (rc <= 0)
			break;
		if (joblog != NULL)
			joblog_write(joblog, "fetch: try %d failed (%s), retrying",
				attempt, err);
		if (attempt < FETCH_TRIES &&
		    sleep_cancellable((double)(1 << attempt), cancel)) {	/* 2, 4, 8 s */
			errf(err, errlen, "download cancelled");
			return -1;
		}
	}
	return rc == 0 ? 0 : -1;
}

int fetch_artifact(const char *url, const char *sha256, const char *cache_dir,
		   long max_bytes, const struct fetch_scope *scope, char *path,
		   size_t pathlen, FILE *joblog, const atomic_int *cancel,
		   char *err, size_t errlen)
{
	char partial[PATH_MAX], pdir[PATH_MAX], lockpath[PATH_MAX], got[65],
		urlhash[65];
	int local = strncmp(url, "file:", 5) == 0, lockfd = -1, rc = -1;
	struct stat st;

	if (!is_sha256_hex(sha256)) {
		errf(err, errlen, "bad sha256 '%.70s'", sha256);
		return -1;
	}
	/* The partial file belongs to one source: a failed or wrong source
	 * never leaves bytes that another source's fetch would resume. */
	sha256_hex(url, strlen(url), urlhash);
	if ((size_t)snprintf(path, pathlen, "%s/%s", cache_dir, sha256) >= pathlen ||
	    (size_t)snprintf(pdir, sizeof(pdir), "%s/partial", cache_dir) >= sizeof(pdir) ||
	    (size_t)snprintf(partial, sizeof(partial), "%s/%s.%.16s", pdir, sha256,
			     urlhash) >= sizeof(partial) ||
	    (size_t)snprintf(lockpath, sizeof(lockpath), "%s/%s.lock", pdir,
			     sha256) >= sizeof(lockpath)) {
		errf(err, errlen, "cache path too long");
		return -1;
	}
	if (access(path, R_OK) == 0) {
		int memo;

		/* Verified before every use: a file changed in the cache
		 * (a build that wrote it, a bad disk) is fetched again,
		 * never booted or built by its name alone. A file this
		 * daemon hashed and nothing wrote since keeps its hash. */
		if (sha256_file_memo(path, got, &memo, err, errlen) == 0 &&
		    strcmp(got, sha256) == 0) {
			if (joblog != NULL)
				joblog_write(joblog, "fetch: %s cached (sha256"
					" verified%s)", sha256, memo ?
					", unchanged since it was hashed" : "");
			return 0;
		}
		log_warn("fetch: cached %s does not hash to its name any more;"
			 " fetching it again", path);
		if (joblog != NULL)
			joblog_write(joblog, "fetch: cached %s changed on disk;"
				" fetching it again", sha256);
		unlink(path);
		err[0] = '\0';
	}
	if (mkdir_p(pdir, 0755, err, errlen) < 0)
		return -1;
	if (lock_artifact(lockpath, cancel, &lockfd, err, errlen) != 0)
		return -1;
	if (access(path, R_OK) == 0) {
		if (joblog != NULL)
			joblog_write(joblog, "fetch: %s cached (by another job)", sha256);
		rc = 0;
		goto out;
	}
	if (joblog != NULL)
		joblog_write(joblog, "fetch: %s", url);
	for (int fresh = 0; fresh < 2; fresh++) {
		int resumed = !local && stat(partial, &st) == 0 && st.st_size > 0;

		if (fetch_source(url, local, partial, max_bytes, scope, joblog,
				 cancel, err, errlen) < 0) {
			/* A permanent failure leaves nothing to resume. */
			if (!cancelled(cancel))
				unlink(partial);
			goto out;
		}
		if (sha256_file(partial, got, err, errlen) < 0)
			goto out;
		if (strcmp(got, sha256) == 0)
			break;
		unlink(partial);
		/* The hash of what was fetched goes to the operator's log only:
		 * in the public job log it would tell anyone the hash of any
		 * file the daemon can read. */
		log_warn("fetch: sha256 mismatch url=%s expected=%s got=%s%s",
			 url, sha256, got, resumed ? " (resumed; retrying whole)" : "");
		if (!resumed) {
			errf(err, errlen, "sha256 mismatch for %s: the file fetched"
			     " is not the artifact with sha256 %s", url, sha256);
			goto out;
		}
		if (joblog != NULL)
			joblog_write(joblog, "fetch: resumed download did not match;"
				" fetching it whole again");
	}
	if (rename(partial, path) < 0) {
		errf(err, errlen, "rename into cache: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(lockfd);
	return rc;
}

int fetch_learn(const char *url, const char *cache_dir, long max_bytes,
		const struct fetch_scope *scope, char *path, size_t pathlen,
		char sha256[65], FILE *joblog, const atomic_int *cancel,
		char *err, size_t errlen)
{
	char pdir[PATH_MAX], partial[PATH_MAX], urlhash[65];
	int local = strncmp(url, "file:", 5) == 0;

	sha256_hex(url, strlen(url), urlhash);
	if (pathf(pdir, sizeof(pdir), "%s/partial", cache_dir) < 0 ||
	    pathf(partial, sizeof(partial), "%s/learn.%.16s.%ld", pdir, urlhash,
		  (long)getpid()) < 0) {
		errf(err, errlen, "cache path too long");
		return -1;
	}
	if (mkdir_p(pdir, 0755, err, errlen) < 0)
		return -1;
	unlink(partial);	/* never resumed: its hash is what we learn */
	if (fetch_source(url, local, partial, max_bytes, scope, joblog, cancel,
			 err, errlen) < 0 ||
	    sha256_file(partial, sha256, err, errlen) < 0) {
		unlink(partial);
		return -1;
	}
	if (pathf(path, pathlen, "%s/%s", cache_dir, sha256) < 0) {
		unlink(partial);
		errf(err, errlen, "cache path too long");
		return -1;
	}
	/* Content-addressed: the same bytes may be there already. */
	if (access(path, R_OK) == 0)
		unlink(partial);
	else if (rename(partial, path) < 0) {
		errf(err, errlen, "rename into cache: %s", strerror(errno));
		unlink(partial);
		return -1;
	}
	if (joblog != NULL)
		joblog_write(joblog, "fetch: %s has sha256 %s", url, sha256);
	return 0;
}
