/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * version.c - parses stable kernel version strings: "6.1.64", "6.1.64-rc1",
 * "6.7" and "6.7-rc3". The branch of 6.1.64-rc1 is "6.1".
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rcgate.h"

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
