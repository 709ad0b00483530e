/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * inherit.c - owns what rcgated takes over from whoever started it. The
 * descriptors it did not open are closed before anything else runs (a
 * shell's "exec 7</root/secret" would otherwise outlive the drop to
 * [daemon] user and reach every build); the umask is its own (077:
 * whatever it creates is its user's alone, as are QEMU, the sandbox and
 * the relays it starts, which all run as that user); and a state dir it
 * finds open to others (made by an older rcgated, or by hand) is closed:
 * the dir 0700, what is in it without group and other bits, once.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

#define PRIVATE_BITS 077	/* group and other */

int fds_close_listed(int lowfd)
{
	int fds[256], n, dfd;
	DIR *d;
	struct dirent *de;

	/* Closing while readdir walks the directory may skip entries: a
	 * batch is collected, closed, and the walk starts again until a
	 * walk finds nothing to close. */
	do {
		d = opendir("/proc/self/fd");
		if (d == NULL)
			return -1;
		dfd = dirfd(d);
		n = 0;
		while ((de = readdir(d)) != NULL &&
		       n < (int)(sizeof(fds) / sizeof(fds[0]))) {
			long fd;

			if (parse_long(de->d_name, 0, INT_MAX, &fd) < 0 ||
			    fd < lowfd || fd == dfd)
				continue;
			fds[n++] = (int)fd;
		}
		closedir(d);
		for (int i = 0; i < n; i++)
			close(fds[i]);
	} while (n > 0);
	return 0;
}

int fds_close_from(int lowfd)
{
	if (close_range((unsigned)lowfd, ~0U, 0) == 0)
		return 0;
	/* Kernels before 5.9 (ENOSYS), or a seccomp filter that refuses the
	 * call: the descriptors /proc lists. */
	return fds_close_listed(lowfd);
}

/* The walk's one use at a time: rcgated's start, before any thread. */
static const char *walk_skip;
static int walk_failed;

static int make_private(const char *path, const struct stat *sb, int flag,
			struct FTW *ftw)
{
	(void)ftw;
	if (walk_skip != NULL && strcmp(path, walk_skip) == 0)
		return FTW_SKIP_SUBTREE;
	if (flag == FTW_SL || (sb->st_mode & PRIVATE_BITS) == 0 ||
	    sb->st_uid != geteuid())
		return FTW_CONTINUE;
	if (chmod(path, sb->st_mode & 07777 & ~(mode_t)PRIVATE_BITS) < 0)
		walk_failed = errno;
	return FTW_CONTINUE;
}

int state_dir_private(const char *dir, const char *keep, char *err,
		      size_t errlen)
{
	struct stat sb;

	if (stat(dir, &sb) < 0) {
		errf(err, errlen, "state dir %s: %s", dir, strerror(errno));
		return -1;
	}
	/* A 0700 dir kept everything in it from others: nothing to walk. */
	if ((sb.st_mode & PRIVATE_BITS) == 0)
		return 0;
	walk_skip = keep;
	walk_failed = 0;
	if (nftw(dir, make_private, 32, FTW_PHYS | FTW_MOUNT |
		 FTW_ACTIONRETVAL) < 0)
		walk_failed = errno;
	walk_skip = NULL;
	if (walk_failed != 0 || stat(dir, &sb) < 0 ||
	    (sb.st_mode & PRIVATE_BITS) != 0) {
		errf(err, errlen, "cannot make state dir %s private (0700): %s",
		     dir, strerror(walk_failed != 0 ? walk_failed : EPERM));
		return -1;
	}
	return 0;
}

void inherit_reset(void)
{
	fds_close_from(3);
	umask(PRIVATE_BITS);
}
