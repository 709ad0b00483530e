/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * srctree.c - the source tree of a tarball build: the release tarball
 * unpacked once per tarball (checked entry by entry, capped) and shared
 * read-only, a hard-link copy per build, and the rc's patch applied to
 * that copy without writing through the links into the shared tree.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "build/build.h"
#include "build_internal.h"

/* ---- the shared, pristine tree of a tarball ---- */

/* Extracts the tarball under dir, dropping its top directory
 * (linux-6.1.63/ or linux-source-6.1/). Refuses absolute or .. paths and
 * anything but files, directories and symlinks (libarchive refuses to
 * write through a symlink), and stops as soon as what it wrote passes
 * max_bytes or MAX_ENTRIES entries (a small tarball can unpack to
 * gigabytes). */
#define MAX_ENTRIES 400000L	/* 6.1 has about 80 000 */
static int unpack(const char *tarball, const char *dir, long long max_bytes,
		  char *err, size_t errlen)
{
	struct archive *a = archive_read_new(), *w = archive_write_disk_new();
	struct archive_entry *e;
	long long written = 0;
	long entries = 0;
	int rc = -1, r;

	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	archive_write_disk_set_options(w, ARCHIVE_EXTRACT_TIME |
				       ARCHIVE_EXTRACT_PERM |
				       ARCHIVE_EXTRACT_SECURE_SYMLINKS |
				       ARCHIVE_EXTRACT_SECURE_NODOTDOT);
	if (archive_read_open_filename(a, tarball, 1 << 16) != ARCHIVE_OK) {
		errf(err, errlen, "open %s: %s", tarball, archive_error_string(a));
		goto out;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e), *slash;
		char path[PATH_MAX];
		mode_t type = archive_entry_filetype(e);

		slash = name != NULL ? strchr(name, '/') : NULL;
		if (slash == NULL || slash[1] == '\0')
			continue;	/* the top directory itself, or pax headers */
		if (++entries > MAX_ENTRIES) {
			errf(err, errlen, "%s: more than %ld entries", tarball,
			     MAX_ENTRIES);
			goto out;
		}
		/* The entry goes under dir (absolute), so the archive's own
		 * path must be relative and stay inside it. */
		if (name[0] == '/' || strstr(name, "../") != NULL) {
			errf(err, errlen, "%s: path leaves the tree", name);
			goto out;
		}
		if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) {
			errf(err, errlen, "%s: unexpected entry type in %s", name,
			     tarball);
			goto out;
		}
		if (pathf(path, sizeof(path), "%s/%s", dir, slash + 1) < 0) {
			errf(err, errlen, "%s: path too long", name);
			goto out;
		}
		archive_entry_set_pathname(e, path);
		if (archive_entry_hardlink(e) != NULL) {
			errf(err, errlen, "%s: hard links are not expected", name);
			goto out;
		}
		if (archive_write_header(w, e) != ARCHIVE_OK) {
			errf(err, errlen, "unpack %s: %s", name, archive_error_string(w));
			goto out;
		}
		if (archive_entry_size(e) > 0) {
			const void *buf;
			size_t len;
			la_int64_t off;

			while ((r = archive_read_data_block(a, &buf, &len, &off)) ==
			       ARCHIVE_OK) {
				written += (long long)len;
				if (max_bytes > 0 && written > max_bytes) {
					errf(err, errlen, "%s unpacks to more than"
					     " %lld MiB ([build] tree_max_mb)",
					     tarball, max_bytes >> 20);
					goto out;
				}
				if (archive_write_data_block(w, buf, len, off) != ARCHIVE_OK) {
					errf(err, errlen, "unpack %s: %s", name,
					     archive_error_string(w));
					goto out;
				}
			}
			if (r != ARCHIVE_EOF) {
				errf(err, errlen, "read %s: %s", tarball,
				     archive_error_string(a));
				goto out;
			}
		}
		archive_write_finish_entry(w);
	}
	if (r != ARCHIVE_EOF) {
		errf(err, errlen, "read %s: %s", tarball, archive_error_string(a));
		goto out;
	}
	rc = 0;
out:
	archive_read_free(a);
	archive_write_free(w);
	return rc;
}

/* root/src/<sha> holds the tarball's tree once (a stamp file says it is
 * complete); one unpacking at a time per tarball. */
int tree_pristine(const struct build_source *src, const char *root,
		  long long max_bytes, char *dir, size_t dirlen, FILE *log,
		  char *err, size_t errlen)
{
	char srcdir[PATH_MAX], lock[PATH_MAX], stamp[PATH_MAX], tmp[PATH_MAX];
	int fd, rc = -1;

	if (pathf(srcdir, sizeof(srcdir), "%s/src", root) < 0 ||
	    pathf(dir, dirlen, "%s/%.16s", srcdir, src->tarball_sha256) < 0 ||
	    pathf(lock, sizeof(lock), "%s.lock", dir) < 0 ||
	    pathf(stamp, sizeof(stamp), "%s/.rcgate-unpacked", dir) < 0 ||
	    pathf(tmp, sizeof(tmp), "%s.tmp", dir) < 0) {
		errf(err, errlen, "build root path too long");
		return -1;
	}
	if (mkdir_p(srcdir, 0755, err, errlen) < 0)
		return -1;
	fd = lock_file(lock, err, errlen);
	if (fd < 0)
		return -1;
	futimens(fd, NULL);	/* used now: buildcache.c's LRU */
	if (access(stamp, F_OK) == 0) {
		rc = 0;
		goto out;
	}
	if (build_free_space_ok(root, err, errlen) < 0)
		goto out;
	fprintf(log, "build: unpacking %s\n", src->tarball);
	fflush(log);
	rm_rf(tmp);
	rm_rf(dir);
	if (mkdir(tmp, 0755) < 0) {
		errf(err, errlen, "mkdir %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (unpack(src->tarball, tmp, max_bytes, err, errlen) < 0) {
		rm_rf(tmp);
		goto out;
	}
	if (rename(tmp, dir) < 0) {
		errf(err, errlen, "rename %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (close(open(stamp, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		errf(err, errlen, "stamp %s: %s", stamp, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

/* ---- the build's own tree: hard links to the pristine one ---- */

static const char *link_from, *link_to;
static int link_err;

static int link_one(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	char dst[PATH_MAX];

	(void)ftw;
	if (pathf(dst, sizeof(dst), "%s%s", link_to, path + strlen(link_from)) < 0) {
		link_err = ENAMETOOLONG;
		return 1;
	}
	if (flag == FTW_D) {
		if (mkdir(dst, st->st_mode & 07777) < 0 && errno != EEXIST)
			goto fail;
	} else if (flag == FTW_SL) {
		char target[PATH_MAX];
		ssize_t n = readlink(path, target, sizeof(target) - 1);

		if (n < 0)
			goto fail;
		target[n] = '\0';
		if (symlink(target, dst) < 0)
			goto fail;
	} else if (flag == FTW_F) {
		if (link(path, dst) < 0)
			goto fail;
	}
	return 0;
fail:
	link_err = errno;
	return 1;
}

static pthread_mutex_t link_lock = PTHREAD_MUTEX_INITIALIZER;

int tree_copy(const char *from, const char *to, char *err, size_t errlen)
{
	int rc;

	pthread_mutex_lock(&link_lock);	/* nftw has no user pointer */
	link_from = from;
	link_to = to;
	link_err = 0;
	rc = nftw(from, link_one, 64, FTW_PHYS);
	pthread_mutex_unlock(&link_lock);
	if (rc != 0) {
		errf(err, errlen, "copying the source tree: %s",
		     strerror(link_err != 0 ? link_err : errno));
		return -1;
	}
	return 0;
}

/* The patch as plain text in dst (a stable-review patch is gzip'ed). */
int tree_patch_plain(const char *patch, const char *dst, char *err,
		     size_t errlen)
{
	struct archive *a = archive_read_new();
	FILE *out = fopen(dst, "we");
	struct archive_entry *e;
	char buf[65536];
	ssize_t n;
	int rc = -1;

	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	if (out == NULL) {
		errf(err, errlen, "create %s: %s", dst, strerror(errno));
		goto done;
	}
	if (archive_read_open_filename(a, patch, 1 << 16) != ARCHIVE_OK ||
	    archive_read_next_header(a, &e) != ARCHIVE_OK) {
		errf(err, errlen, "read patch %s: %s", patch, archive_error_string(a));
		goto done;
	}
	while ((n = archive_read_data(a, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, out);
	if (n < 0) {
		errf(err, errlen, "read patch %s: %s", patch, archive_error_string(a));
		goto done;
	}
	rc = fflush(out) == 0 ? 0 : -1;
	if (rc < 0)
		errf(err, errlen, "write %s: %s", dst, strerror(errno));
done:
	if (out != NULL)
		fclose(out);
	archive_read_free(a);
	return rc;
}

/* 1 if path's directory, symbolic links resolved, is tree or below it,
 * and path itself is not a symbolic link (or does not exist). */
static int inside_tree(const char *tree, const char *path)
{
	char dir[PATH_MAX], real_tree[PATH_MAX], real_dir[PATH_MAX];
	char *slash;
	struct stat sb;
	size_t n;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL || realpath(tree, real_tree) == NULL)
		return 0;
	*slash = '\0';
	if (realpath(dir, real_dir) == NULL)
		return errno == ENOENT;	/* a new directory: patch makes it */
	n = strlen(real_tree);
	if (strncmp(real_dir, real_tree, n) != 0 ||
	    (real_dir[n] != '/' && real_dir[n] != '\0'))
		return 0;
	return lstat(path, &sb) != 0 || !S_ISLNK(sb.st_mode);
}

/* Gives every file the patch touches ("+++ b/path") its own copy, so
 * patching never writes through a hard link into the pristine tree. A path
 * that leaves the tree makes the patch unusable (-1). */
int tree_unshare_patched(const char *plain, const char *tree, char *err,
			 size_t errlen)
{
	FILE *f = fopen(plain, "re");
	char line[4096];
	int rc = 0;

	if (f == NULL) {
		errf(err, errlen, "open %s: %s", plain, strerror(errno));
		return -1;
	}
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		char rel[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX + 8];
		size_t n;
		char *data;

		if (strncmp(line, "+++ b/", 6) != 0)
			continue;
		n = strcspn(line + 6, " \t\r\n");
		snprintf(rel, sizeof(rel), "%.*s", (int)n, line + 6);
		if (rel[0] == '/' || strstr(rel, "..") != NULL) {
			errf(err, errlen, "patch touches %s, outside the tree", rel);
			rc = -1;
			break;
		}
		pathf(path, sizeof(path), "%s/%s", tree, rel);
		pathf(tmp, sizeof(tmp), "%s.unlink", path);
		/* rcgated itself writes here: never through a symlink of
		 * the tarball's, to a file outside the tree. */
		if (!inside_tree(tree, path)) {
			errf(err, errlen, "patch touches %s, which a symbolic link"
			     " takes out of the tree", rel);
			rc = -1;
			break;
		}
		data = file_read(path, 64u << 20, &n, NULL, 0);
		if (data == NULL)
			continue;	/* a new file: nothing to unshare */
		if (file_write_atomic(tmp, data, n, NULL, 0) < 0 ||
		    rename(tmp, path) < 0) {
			errf(err, errlen, "unshare %s: %s", rel, strerror(errno));
			rc = -1;
		}
		free(data);
	}
	fclose(f);
	return rc;
}
