/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * version.c - parses stable kernel version strings: "6.1.64", "6.1.64-rc1",
 * "6.7" and "6.7-rc3". The branch of 6.1.64-rc1 is "6.1".
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static int take_number(const char **p, long *out)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -1;
	if (**p == '0' && isdigit((unsigned char)(*p)[1]))
		return -1;	/* no leading zeros: "6.01" is not a version */
	errno = 0;
	*out = strtol(*p, &end, 10);
	if (errno != 0 || *out > 100000)
		return -1;
	*p = end;
	return 0;
}

int kversion_parse(const char *s, struct kversion *out, char *err,
		   size_t errlen)
{
	const char *p = s;

	memset(out, 0, sizeof(*out));
	if (strlen(s) > 40)
		goto bad;
	if (take_number(&p, &out->major) < 0 || *p++ != '.' ||
	    take_number(&p, &out->minor) < 0)
		goto bad;
	if (*p == '.') {
		p++;
		if (take_number(&p, &out->patch) < 0)
			goto bad;
	}
	if (strncmp(p, "-rc", 3) == 0) {
		p += 3;
		if (take_number(&p, &out->rc) < 0 || out->rc == 0)
			goto bad;
	}
	if (*p != '\0')
		goto bad;
	snprintf(out->branch, sizeof(out->branch), "%ld.%ld", out->major,
		 out->minor);
	return 0;
bad:
	errf(err, errlen,
	     "version '%.60s' is not like 6.1.64 or 6.1.64-rc1", s);
	return -1;
}

/* Leading "X.Y" or "X.Y.Z" of s as numbers; 0, or -1 if s starts otherwise. */
static int leading_version(const char *s, long *major, long *minor, long *patch)
{
	const char *p = s;

	*patch = 0;
	if (take_number(&p, major) < 0 || *p++ != '.' || take_number(&p, minor) < 0)
		return -1;
	if (*p == '.') {
		p++;
		if (take_number(&p, patch) < 0)
			return -1;
	}
	return 0;
}

int kversion_running(const char *release, const char *uts, char *out,
		     size_t len)
{
	long major, minor, patch;
	const char *deb = uts != NULL ? strstr(uts, "Debian ") : NULL;

	/* Debian's uname -r is its ABI name ("6.1.0-57-cloud-amd64"); the
	 * upstream version is in uname -v ("... Debian 6.1.192-3 (...)"). */
	if (deb != NULL && leading_version(deb + 7, &major, &minor, &patch) == 0) {
		snprintf(out, len, "%ld.%ld.%ld", major, minor, patch);
		return 0;
	}
	if (release != NULL && leading_version(release, &major, &minor, &patch) == 0) {
		snprintf(out, len, "%ld.%ld.%ld", major, minor, patch);
		return 0;
	}
	return -1;
}

int kversion_matches(const struct kversion *want, const char *running)
{
	long major, minor, patch;

	return leading_version(running, &major, &minor, &patch) == 0 &&
	       major == want->major && minor == want->minor &&
	       patch == want->patch;
}

int kversion_cmp(const struct kversion *a, const struct kversion *b)
{
	long ka[3] = { a->major, a->minor, a->patch };
	long kb[3] = { b->major, b->minor, b->patch };

	for (int i = 0; i < 3; i++) {
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	}
	if (a->rc == b->rc)
		return 0;
	if (a->rc == 0 || b->rc == 0)	/* the release after its rcs */
		return a->rc == 0 ? 1 : -1;
	return a->rc < b->rc ? -1 : 1;
}

void kversion_previous(const struct kversion *v, char *out, size_t len)
{
	if (v->patch > 1)
		snprintf(out, len, "%ld.%ld.%ld", v->major, v->minor, v->patch - 1);
	else
		snprintf(out, len, "%ld.%ld", v->major, v->minor);
}
