/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wtcopy.c - a worktree copied with bytes of its own (gitsrc.c's second
 * warm worktree of a branch): every file, directory and symbolic link,
 * with its mode and times, so that kbuild's objects in the copy stay
 * newer than their sources and make rebuilds only what a checkout then
 * changes. The tree is untrusted (a kernel tree from a remote): nothing
 * is ever followed through a symbolic link, each level is opened
 * relative to its parent with O_NOFOLLOW, and anything but a regular
 * file, directory or symbolic link is left out.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "build_internal.h"

#define MAX_DEPTH 64		/* a kernel tree is about 12 deep */

struct copy {
	double deadline;
	const struct build_options *o;	/* its cancelled hook */
	char *err;
	size_t errlen;
	const char *where;	/* for the message: the tree's top */
};

static int fail(struct copy *c, const char *what, const char *name, int e)
{
	errf(c->err, c->errlen, "copying %s: %s %s: %s", c->where, what, name,
	     strerror(e));
	return -1;
}

/* The bytes of in into out: copy_file_range (in the kernel, no user
 * buffer), read/write where it cannot (another filesystem, old kernel). */
static int copy_bytes(int in, int out, off_t size)
{
	char buf[65536];
	off_t done = 0;

	while (done < size) {
		ssize_t n = copy_file_range(in, NULL, out, NULL,
					    (size_t)(size - done), 0);

		if (n < 0 && (errno == EXDEV || errno == ENOSYS ||
			      errno == EINVAL || errno == EOPNOTSUPP))
			break;
		if (n < 0)
			return -1;
		if (n == 0)		/* the file shrank under us */
			return 0;
		done += n;
	}
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf)), w = 0;

		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		while (w < n) {
			ssize_t k = write(out, buf + w, (size_t)(n - w));

			if (k < 0)
				return -1;
			w += k;
		}
	}
}

static int copy_file(struct copy *c, int sdir, int ddir, const char *name,
		     const struct stat *st)
{
	struct timespec t[2] = { st->st_atim, st->st_mtim };
	int in, out, rc;

	in = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return fail(c, "open", name, errno);
	out = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		     O_CLOEXEC, st->st_mode & 0777);
	if (out < 0) {
		close(in);
		return fail(c, "create", name, errno);
	}
	rc = copy_bytes(in, out, st->st_size);
	if (rc < 0)
		rc = fail(c, "copy", name, errno);
	else if (fchmod(out, st->st_mode & 0777) < 0 || futimens(out, t) < 0)
		rc = fail(c, "set the times of", name, errno);
	close(in);
	if (close(out) < 0 && rc == 0)
		rc = fail(c, "write", name, errno);
	return rc;
}

static int copy_link(struct copy *c, int sdir, int ddir, const char *name,
		     const struct stat *st)
{
	struct timespec t[2] = { st->st_atim, st->st_mtim };
	char target[PATH_MAX];
	ssize_t n = readlinkat(sdir, name, target, sizeof(target) - 1);

	if (n < 0)
		return fail(c, "read the link", name, errno);
	target[n] = '\0';
	if (symlinkat(target, ddir, name) < 0)
		return fail(c, "create the link", name, errno);
	utimensat(ddir, name, t, AT_SYMLINK_NOFOLLOW);
	return 0;
}

static int copy_dir(struct copy *c, int sdir, int ddir, const char *skip,
		    int depth);

static int copy_subdir(struct copy *c, int sdir, int ddir, const char *name,
		       const struct stat *st, int depth)
{
	struct timespec t[2] = { st->st_atim, st->st_mtim };
	int s, d, rc;

	if (depth >= MAX_DEPTH) {
		errf(c->err, c->errlen, "copying %s: deeper than %d levels at %s",
		     c->where, MAX_DEPTH, name);
		return -1;
	}
	if (mkdirat(ddir, name, 0700) < 0)
		return fail(c, "create the directory", name, errno);
	s = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s < 0 || d < 0) {
		rc = fail(c, "open the directory", name, errno);
	} else {
		rc = copy_dir(c, s, d, NULL, depth + 1);
		/* Its own times last: creating its entries changed them. */
		if (rc == 0 && (fchmod(d, st->st_mode & 07777) < 0 ||
				futimens(d, t) < 0))
			rc = fail(c, "set the times of", name, errno);
	}
	if (s >= 0)
		close(s);
	if (d >= 0)
		close(d);
	return rc;
}

static int copy_dir(struct copy *c, int sdir, int ddir, const char *skip,
		    int depth)
{
	int fd = dup(sdir), rc = 0;
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (dir == NULL) {
		if (fd >= 0)
			close(fd);
		return fail(c, "list", ".", errno);
	}
	if (now_monotonic() > c->deadline) {
		closedir(dir);
		errf(c->err, c->errlen, "copying %s: out of time", c->where);
		return -1;
	}
	if (c->o->cancelled != NULL && c->o->cancelled(c->o->cls)) {
		closedir(dir);
		errf(c->err, c->errlen, "copying %s: cancelled", c->where);
		return -1;
	}
	while (rc == 0 && (errno = 0, e = readdir(dir)) != NULL) {
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    (skip != NULL && strcmp(e->d_name, skip) == 0))
			continue;
		if (fstatat(sdir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			rc = fail(c, "stat", e->d_name, errno);
		else if (S_ISREG(st.st_mode))
			rc = copy_file(c, sdir, ddir, e->d_name, &st);
		else if (S_ISDIR(st.st_mode))
			rc = copy_subdir(c, sdir, ddir, e->d_name, &st, depth);
		else if (S_ISLNK(st.st_mode))
			rc = copy_link(c, sdir, ddir, e->d_name, &st);
	}
	if (rc == 0 && e == NULL && errno != 0)
		rc = fail(c, "list", ".", errno);
	closedir(dir);
	return rc;
}

int tree_copy_bytes(const char *from, const char *to, const char *skip,
		    double deadline, const struct build_options *o, char *err,
		    size_t errlen)
{
	struct copy c = { deadline, o, err, errlen, from };
	int s = open(from, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int d = open(to, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc;

	if (s < 0 || d < 0)
		rc = fail(&c, "open", s < 0 ? from : to, errno);
	else
		rc = copy_dir(&c, s, d, skip, 0);
	if (s >= 0)
		close(s);
	if (d >= 0)
		close(d);
	return rc;
}
