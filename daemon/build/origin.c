/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * origin.c - owns where code that rcgated builds may come from: the
 * [build] allowlists of URL prefixes for git trees (tree_origins) and for
 * release tarballs, sha256sums.asc and stable-review patches
 * (file_origins). Whatever a mail or a POST says, a URL outside them is
 * refused; a plain http:// or git:// URL whose https:// twin is inside is
 * upgraded; a download's redirects are held to the same rules, hop by
 * hop (origin_pin_file). A prefix of another scheme is the operator's
 * explicit choice (a test's loopback server). Pure string logic: tests/unit/origin.c.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "build/build.h"

/* Characters and segments that could make a URL mean more than its prefix
 * says once a client normalises it: dot segments, escapes, user
 * information, queries, fragments, backslashes, blanks and controls. */
static int url_plain(const char *url)
{
	const char *auth = strstr(url, "://");

	if (auth == NULL)
		return 0;
	auth += 3;
	if (memchr(auth, '@', strcspn(auth, "/")) != NULL)
		return 0;
	for (const char *p = url; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;

		if (c <= ' ' || c >= 0x7f || strchr("%?#\\\"'<>`", c) != NULL)
			return 0;
		if (c == '/' && p[1] == '.' &&
		    (p[2] == '/' || p[2] == '\0' ||
		     (p[2] == '.' && (p[3] == '/' || p[3] == '\0'))))
			return 0;
	}
	return 1;
}

int url_origin_host(const char *url, char *out, size_t len)
{
	const char *h = strstr(url, "://");
	size_t n;

	if (h == NULL || len == 0)
		return -1;
	h += 3;
	if (strncmp(url, "file://", 7) == 0) {
		snprintf(out, len, "local");
		return 0;
	}
	n = h[0] == '[' ? strcspn(h, "]") + 1 : strcspn(h, ":/?#");
	if (n == 0 || n >= len || h[n - 1] == '\0')
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)h[i];

		if (!isalnum(c) && strchr(".-[]:", c) == NULL)
			return -1;
		out[i] = (char)tolower(c);
	}
	out[n] = '\0';
	return 0;
}

/* url starts with one of allow's space-separated prefixes, at a
 * boundary: a prefix ending in '/' or ':' (any port of a host), or
 * followed by '/' or the end ("https://kernel.org" is not a prefix of
 * "https://kernel.org.example"). */
static int under(const char *allow, const char *url)
{
	for (const char *p = allow; *p != '\0';) {
		size_t n;

		p += strspn(p, " \t");
		n = strcspn(p, " \t");
		if (n > 0 && strncmp(url, p, n) == 0 &&
		    (p[n - 1] == '/' || p[n - 1] == ':' || url[n] == '/' ||
		     url[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

int origin_pin(const char *allow, const char *what, const char *url,
	       char *out, size_t outlen, char *err, size_t errlen)
{
	char https[2100];

	if (strlen(url) > 2000 || !url_plain(url)) {
		errf(err, errlen, "%s URL '%.100s' is not a plain URL (no dot"
		     " segments, escapes, user information, queries or"
		     " controls)", what, url);
		return -1;
	}
	if (under(allow, url)) {
		snprintf(out, outlen, "%s", url);
		return 0;
	}
	/* Plain text on the wire is anybody's: the https:// twin, if that
	 * is allowed. */
	https[0] = '\0';
	if (strncmp(url, "http://", 7) == 0)
		snprintf(https, sizeof(https), "https://%s", url + 7);
	else if (strncmp(url, "git://", 6) == 0)
		snprintf(https, sizeof(https), "https://%s", url + 6);
	if (https[0] != '\0' && under(allow, https)) {
		snprintf(out, outlen, "%s", https);
		return 0;
	}
	errf(err, errlen, "%s URL '%.100s' is not under an allowed origin"
	     " ([build] %s)", what, url,
	     strcmp(what, "tree") == 0 ? "tree_origins" : "file_origins");
	return -1;
}

int origin_pin_file(void *allow, const char *url, char *out, size_t outlen,
		    char *err, size_t errlen)
{
	return origin_pin(allow, "file", url, out, outlen, err, errlen);
}
