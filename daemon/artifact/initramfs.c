/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * initramfs.c - the only libarchive user: reads kernel artifacts (.deb or
 * image + modules tarball), writes the kernel image and the gzip newc
 * initramfs the guest boots with.
 *
 * The package is streamed twice instead of unpacked: pass one writes the image
 * and collects the .modinfo of every module (one .ko in memory at a time),
 * kmod.c computes the closure, pass two copies just the needed .ko files into
 * the cpio. Memory stays at a few MB plus the largest module.
 */
#include "base/base.h"
#include "artifact/artifact.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (64 * 1024)
#define KO_MAX (64u << 20)		/* one module file */
#define TEXT_MAX (16u << 20)		/* modules.builtin{,.modinfo} */
#define IMAGE_MAX (512ull << 20)	/* kernel image */
#define AGENT_MAX (64u << 20)
#define MEMBER_MAX 200000		/* tar members per pass */

static const char *aerr(struct archive *a)
{
	const char *s = archive_error_string(a);

	return s != NULL ? s : "unknown libarchive error";
}

/* ---- reading: a tar stream, possibly nested in a .deb's ar ---- */

struct stream {
	struct archive *outer;	/* the .deb, NULL for a bare tarball */
	struct archive *tar;
	const char *path;
	size_t members;
	unsigned char buf[CHUNK];	/* for copying entry data out */
	unsigned char member[CHUNK];	/* compressed tarball from the ar */
};

/* libarchive pulls the inner tarball through this from the ar member. */
static la_ssize_t member_read(struct archive *a, void *client, const void **out)
{
	struct stream *s = client;
	la_ssize_t n = archive_read_data(s->outer, s->member, sizeof(s->member));

	if (n < 0) {
		archive_set_error(a, EIO, "%s", aerr(s->outer));
		return -1;
	}
	*out = s->member;
	return n;
}

static void stream_close(struct stream *s)
{
	if (s->tar != NULL)
		archive_read_free(s->tar);
	if (s->outer != NULL)
		archive_read_free(s->outer);
	s->tar = NULL;
	s->outer = NULL;
}

/* Position the .deb at its data.tar.* member. */
static int deb_find_data(struct stream *s, char *err, size_t errlen)
{
	struct archive_entry *e;
	bool first = true;
	int r;

	while ((r = archive_read_next_header(s->outer, &e)) == ARCHIVE_OK ||
	       r == ARCHIVE_WARN) {
		const char *name = archive_entry_pathname(e);

		if (name == NULL)
			name = "";
		if (first && strcmp(name, "debian-binary") != 0) {
			errf(err, errlen,
			      "%s: not a Debian package (first member is '%s')",
			      s->path, name);
			return -1;
		}
		first = false;
		if (strncmp(name, "data.tar", 8) == 0)
			return 0;
	}
	if (r == ARCHIVE_EOF)
		errf(err, errlen, "%s: %s", s->path,
		      first ? "not a Debian package (empty archive)"
			    : "no data.tar member");
	else
		errf(err, errlen, "%s: reading package: %s", s->path,
		      aerr(s->outer));
	return -1;
}

static int stream_open(struct stream *s, const char *path, bool deb, char *err,
		       size_t errlen)
{
	int r;

	memset(s, 0, offsetof(struct stream, buf));
	s->path = path;
	if (deb) {
		s->outer = archive_read_new();
		if (s->outer == NULL)
			goto oom;
		archive_read_support_format_ar(s->outer);
		if (archive_read_open_filename(s->outer, path, CHUNK) != ARCHIVE_OK) {
			errf(err, errlen, "%s: %s", path, aerr(s->outer));
			goto fail;
		}
		if (deb_find_data(s, err, errlen) < 0)
			goto fail;
	}
	s->tar = archive_read_new();
	if (s->tar == NULL)
		goto oom;
	archive_read_support_filter_all(s->tar);
	archive_read_support_format_tar(s->tar);
	if (deb)
		r = archive_read_open(s->tar, s, NULL, member_read, NULL);
	else
		r = archive_read_open_filename(s->tar, path, CHUNK);
	if (r != ARCHIVE_OK) {
		errf(err, errlen, "%s: %s", path, aerr(s->tar));
		goto fail;
	}
	return 0;
oom:
	errf(err, errlen, "%s: out of memory", path);
fail:
	stream_close(s);
	return -1;
}

/* 1 with the next regular file, 0 at the end, -1 on error. */
/* The calling build's cancel flag (initramfs_request.cancel). */
static __thread const atomic_int *build_cancel;

static int stream_next(struct stream *s, struct archive_entry **e, char *err,
		       size_t errlen)
{
	for (;;) {
		int r;

		if (build_cancel != NULL && *build_cancel) {
			errf(err, errlen, "%s: cancelled", s->path);
			return -1;
		}
		r = archive_read_next_header(s->tar, e);

		if (r == ARCHIVE_EOF)
			return 0;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			errf(err, errlen, "%s: reading tarball: %s", s->path,
			      aerr(s->tar));
			return -1;
		}
		if (++s->members > MEMBER_MAX) {
			errf(err, errlen, "%s: more than %d members", s->path,
			      MEMBER_MAX);
			return -1;
		}
		if (archive_entry_filetype(*e) == AE_IFREG &&
		    archive_entry_hardlink(*e) == NULL &&
		    archive_entry_pathname(*e) != NULL &&
		    archive_entry_size_is_set(*e))
			return 1;
	}
}

/* Read the current entry whole into *buf (grown as needed, caller frees). */
static int read_entry(struct stream *s, struct archive_entry *e, size_t cap,
		      unsigned char **buf, size_t *bufcap, size_t *len,
		      const char *what, char *err, size_t errlen)
{
	int64_t size = archive_entry_size(e);
	size_t got = 0;

	if (size < 0 || (uint64_t)size > cap) {
		errf(err, errlen, "%s: %s is %lld bytes, limit %zu", s->path,
		      what, (long long)size, cap);
		return -1;
	}
	if ((size_t)size + 1 > *bufcap) {
		unsigned char *n = realloc(*buf, (size_t)size + 1);

		if (n == NULL) {
			errf(err, errlen, "%s: out of memory for %s", s->path,
			      what);
			return -1;
		}
		*buf = n;
		*bufcap = (size_t)size + 1;
	}
	while (got < (size_t)size) {
		la_ssize_t n = archive_read_data(s->tar, *buf + got,
						 (size_t)size - got);

		if (n < 0) {
			errf(err, errlen, "%s: reading %s: %s", s->path, what,
			      aerr(s->tar));
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got != (size_t)size) {
		errf(err, errlen, "%s: %s is truncated", s->path, what);
		return -1;
	}
	(*buf)[got] = '\0';
	*len = got;
	return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ---- output files: written under a temporary name, renamed at the end ---- */

struct outfile {
	char tmp[PATH_MAX];
	int fd;
};

static int outfile_create(struct outfile *o, const char *final, char *err,
			  size_t errlen)
{
	int n = snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.XXXXXX", final);

	o->fd = -1;
	if (n < 0 || (size_t)n >= sizeof(o->tmp)) {
		errf(err, errlen, "%s: path too long", final);
		o->tmp[0] = '\0';
		return -1;
	}
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0 || fchmod(o->fd, 0644) < 0) {
		errf(err, errlen, "%s: %s", o->tmp, strerror(errno));
		if (o->fd >= 0) {
			close(o->fd);
			unlink(o->tmp);
			o->fd = -1;
		}
		o->tmp[0] = '\0';
		return -1;
	}
	return 0;
}

static void outfile_discard(struct outfile *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (o->tmp[0] != '\0')
		unlink(o->tmp);
	o->fd = -1;
	o->tmp[0] = '\0';
}

static int outfile_commit(struct outfile *o, const char *final, char *err,
			  size_t errlen)
{
	if (fsync(o->fd) < 0 || close(o->fd) < 0) {
		o->fd = -1;
		errf(err, errlen, "%s: %s", o->tmp, strerror(errno));
		return -1;
	}
	o->fd = -1;
	if (rename(o->tmp, final) < 0) {
		errf(err, errlen, "rename %s to %s: %s", o->tmp, final,
		      strerror(errno));
		return -1;
	}
	o->tmp[0] = '\0';
	return 0;
}

/* ---- pass one: image, kernel version, module metadata ---- */

/* "./lib/x" and "/lib/x" both become "lib/x". */
static const char *norm_path(const char *p)
{
	for (;;) {
		if (p[0] == '/')
			p++;
		else if (p[0] == '.' && p[1] == '/')
			p += 2;
		else
			return p;
	}
}

/* For lib/modules/<kver>/<rest> (or usr/lib/...): rest, and kver's span. */
static const char *modules_rest(const char *p, const char **kver, size_t *kvlen)
{
	const char *slash;

	if (strncmp(p, "usr/", 4) == 0)
		p += 4;
	if (strncmp(p, "lib/modules/", 12) != 0)
		return NULL;
	p += 12;
	slash = strchr(p, '/');
	if (slash == NULL || slash == p)
		return NULL;
	*kver = p;
	*kvlen = (size_t)(slash - p);
	return slash + 1;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static bool is_image(const char *path, const char *image_name)
{
	const char *base = strrchr(path, '/');

	base = base != NULL ? base + 1 : path;
	if (image_name == NULL)
		return strncmp(path, "boot/vmlinuz-", 13) == 0;
	if (strchr(image_name, '/') != NULL)
		return strcmp(path, norm_path(image_name)) == 0;
	return strcmp(base, image_name) == 0;
}

struct scan {
	const struct initramfs_request *req;
	struct kmod_table table;
	char kver[128];
	bool have_image;
	char image_kver[128];
	unsigned char *buf;
	size_t bufcap;
};

static int copy_entry_to_fd(struct stream *s, struct archive_entry *e, int fd,
			    uint64_t cap, const char *what, char *err,
			    size_t errlen)
{
	int64_t size = archive_entry_size(e);
	uint64_t total = 0;

	if (size < 0 || (uint64_t)size > cap) {
		errf(err, errlen, "%s: %s is %lld bytes, limit %llu", s->path,
		      what, (long long)size, (unsigned long long)cap);
		return -1;
	}
	for (;;) {
		la_ssize_t n = archive_read_data(s->tar, s->buf, sizeof(s->buf));

		if (n < 0) {
			errf(err, errlen, "%s: reading %s: %s", s->path, what,
			      aerr(s->tar));
			return -1;
		}
		if (n == 0)
			break;
		if (write_all(fd, s->buf, (size_t)n) < 0) {
			errf(err, errlen, "writing %s: %s", what,
			      strerror(errno));
			return -1;
		}
		total += (uint64_t)n;
	}
	if (total != (uint64_t)size) {
		errf(err, errlen, "%s: %s is truncated", s->path, what);
		return -1;
	}
	return 0;
}

static int scan_module_file(struct scan *sc, struct stream *s,
			    struct archive_entry *e, const char *path,
			    const char *rest, char *err, size_t errlen)
{
	char sub[512];
	size_t len;

	if (has_suffix(rest, ".ko")) {
		struct kmod_info info;

		if (read_entry(s, e, KO_MAX, &sc->buf, &sc->bufcap, &len, path,
			       err, errlen) < 0)
			return -1;
		if (kmod_info_from_elf(sc->buf, len, path, &info, sub,
				       sizeof(sub)) < 0)
			goto fail;
		if (kmod_table_add(&sc->table, &info, sub, sizeof(sub)) < 0) {
			kmod_info_clear(&info);
			goto fail;
		}
		return 0;
	}
	if (strcmp(rest, "modules.builtin") == 0) {
		if (read_entry(s, e, TEXT_MAX, &sc->buf, &sc->bufcap, &len, path,
			       err, errlen) < 0)
			return -1;
		if (kmod_table_add_builtin_list(&sc->table, (char *)sc->buf,
						len, sub, sizeof(sub)) < 0)
			goto fail;
		return 0;
	}
	if (strcmp(rest, "modules.builtin.modinfo") == 0) {
		if (read_entry(s, e, TEXT_MAX, &sc->buf, &sc->bufcap, &len, path,
			       err, errlen) < 0)
			return -1;
		if (kmod_table_add_builtin_modinfo(&sc->table, (char *)sc->buf,
						   len, sub, sizeof(sub)) < 0)
			goto fail;
	}
	return 0;
fail:
	errf(err, errlen, "%s: %s", s->path, sub);
	return -1;
}

static int scan_pass(struct scan *sc, const char *path, bool deb,
		     struct outfile *kernel, char *err, size_t errlen)
{
	struct stream *s = malloc(sizeof(*s));
	struct archive_entry *e;
	int r = -1;

	if (s == NULL) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	if (stream_open(s, path, deb, err, errlen) < 0) {
		free(s);
		return -1;
	}
	while ((r = stream_next(s, &e, err, errlen)) == 1) {
		const char *p = norm_path(archive_entry_pathname(e));
		const char *kv, *rest;
		size_t kvlen;

		if (deb && !sc->have_image && is_image(p, sc->req->image_name)) {
			const char *base = strrchr(p, '/');

			base = base != NULL ? base + 1 : p;
			if (copy_entry_to_fd(s, e, kernel->fd, IMAGE_MAX, p, err,
					     errlen) < 0) {
				r = -1;
				break;
			}
			sc->have_image = true;
			if (strncmp(base, "vmlinuz-", 8) == 0)
				snprintf(sc->image_kver, sizeof(sc->image_kver),
					 "%s", base + 8);
			continue;
		}
		rest = modules_rest(p, &kv, &kvlen);
		if (rest == NULL ||
		    !(has_suffix(rest, ".ko") ||
		      strcmp(rest, "modules.builtin") == 0 ||
		      strcmp(rest, "modules.builtin.modinfo") == 0))
			continue;
		if (kvlen >= sizeof(sc->kver)) {
			errf(err, errlen, "%s: kernel version too long in %s",
			      path, p);
			r = -1;
			break;
		}
		if (sc->kver[0] == '\0') {
			memcpy(sc->kver, kv, kvlen);
			sc->kver[kvlen] = '\0';
		} else if (strlen(sc->kver) != kvlen ||
			   memcmp(sc->kver, kv, kvlen) != 0) {
			errf(err, errlen,
			      "%s: modules for more than one kernel (%s and %.*s)",
			      path, sc->kver, (int)kvlen, kv);
			r = -1;
			break;
		}
		if (scan_module_file(sc, s, e, p, rest, err, errlen) < 0) {
			r = -1;
			break;
		}
	}
	stream_close(s);
	free(s);
	return r < 0 ? -1 : 0;
}

/* ---- pass two: the cpio ---- */

struct needed {
	const char *path;	/* in the archive, normalised */
	const char *file;	/* base name, also the name under /modules */
	bool written;
};

struct cpio {
	struct archive *w;
	struct archive_entry *e;
	unsigned int ino;
	const char *out;
};

static int cpio_header(struct cpio *c, const char *name, mode_t type,
		       mode_t perm, int64_t size, char *err, size_t errlen)
{
	struct archive_entry *e = c->e;

	archive_entry_clear(e);
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, (unsigned int)type);
	archive_entry_set_perm(e, perm);
	archive_entry_set_size(e, size);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	/* Fixed times and inode numbers make the initramfs reproducible. */
	archive_entry_set_mtime(e, 0, 0);
	archive_entry_set_ino(e, ++c->ino);
	archive_entry_set_nlink(e, type == AE_IFDIR ? 2 : 1);
	if (type == AE_IFCHR) {
		/* The kernel opens /dev/console before devtmpfs is mounted. */
		archive_entry_set_rdevmajor(e, 5);
		archive_entry_set_rdevminor(e, 1);
	}
	if (archive_write_header(c->w, e) != ARCHIVE_OK) {
		errf(err, errlen, "%s: writing %s: %s", c->out, name,
		      aerr(c->w));
		return -1;
	}
	return 0;
}

static int cpio_data(struct cpio *c, const void *p, size_t n, const char *name,
		     char *err, size_t errlen)
{
	la_ssize_t w = archive_write_data(c->w, p, n);

	if (w < 0 || (size_t)w != n) {
		errf(err, errlen, "%s: writing %s: %s", c->out, name,
		      aerr(c->w));
		return -1;
	}
	return 0;
}

static int cpio_agent(struct cpio *c, const char *agent, char *err,
		      size_t errlen)
{
	unsigned char buf[CHUNK];
	struct stat st;
	off_t total = 0;
	int fd = open(agent, O_RDONLY | O_CLOEXEC);
	int rc = -1;

	if (fd < 0 || fstat(fd, &st) < 0) {
		errf(err, errlen, "agent %s: %s", agent, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > AGENT_MAX) {
		errf(err, errlen, "agent %s: not a regular file of 1..%u bytes",
		      agent, AGENT_MAX);
		goto out;
	}
	if (cpio_header(c, "init", AE_IFREG, 0755, st.st_size, err, errlen) < 0)
		goto out;
	while (total < st.st_size) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			errf(err, errlen, "agent %s: %s", agent,
			      strerror(errno));
			goto out;
		}
		if (n == 0 || n > st.st_size - total)
			break;
		if (cpio_data(c, buf, (size_t)n, "init", err, errlen) < 0)
			goto out;
		total += n;
	}
	if (total != st.st_size) {
		errf(err, errlen, "agent %s: changed while being read", agent);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Copy the stream's current entry into the cpio as name. */
static int cpio_copy_entry(struct cpio *c, struct stream *s,
			   struct archive_entry *e, const char *name, char *err,
			   size_t errlen)
{
	const char *p = archive_entry_pathname(e);
	int64_t size = archive_entry_size(e), total = 0;

	if (size < 0 || size > (int64_t)KO_MAX) {
		errf(err, errlen, "%s: %s is larger than %u bytes", s->path, p,
		      KO_MAX);
		return -1;
	}
	if (cpio_header(c, name, AE_IFREG, 0644, size, err, errlen) < 0)
		return -1;
	for (;;) {
		la_ssize_t k = archive_read_data(s->tar, s->buf, sizeof(s->buf));

		if (k < 0) {
			errf(err, errlen, "%s: reading %s: %s", s->path, p,
			      aerr(s->tar));
			return -1;
		}
		if (k == 0)
			break;
		if (k > size - total) {
			errf(err, errlen, "%s: %s is longer than its header says",
			      s->path, p);
			return -1;
		}
		if (cpio_data(c, s->buf, (size_t)k, name, err, errlen) < 0)
			return -1;
		total += k;
	}
	if (total != size) {
		errf(err, errlen, "%s: %s is truncated", s->path, p);
		return -1;
	}
	return 0;
}

static int cpio_modules(struct cpio *c, const char *path, bool deb,
			struct needed *need, size_t nneed, char *err,
			size_t errlen)
{
	struct stream *s;
	struct archive_entry *e;
	size_t left = nneed;
	int r = 0;

	if (nneed == 0)
		return 0;
	s = malloc(sizeof(*s));
	if (s == NULL) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	if (stream_open(s, path, deb, err, errlen) < 0) {
		free(s);
		return -1;
	}
	/* Stop reading as soon as the last needed module is copied. */
	while (left > 0 && (r = stream_next(s, &e, err, errlen)) == 1) {
		const char *p = norm_path(archive_entry_pathname(e));
		struct needed *n = NULL;
		char name[PATH_MAX];

		for (size_t i = 0; i < nneed && n == NULL; i++)
			if (!need[i].written && strcmp(need[i].path, p) == 0)
				n = &need[i];
		if (n == NULL)
			continue;
		r = -1;
		snprintf(name, sizeof(name), RCGATE_INITRAMFS_MODULE_DIR "/%s",
			 n->file);
		if (cpio_copy_entry(c, s, e, name, err, errlen) < 0)
			break;
		n->written = true;
		left--;
		r = 1;
	}
	stream_close(s);
	free(s);
	if (r < 0)
		return -1;
	for (size_t i = 0; i < nneed; i++) {
		if (!need[i].written) {
			errf(err, errlen, "%s: %s vanished between passes",
			      path, need[i].path);
			return -1;
		}
	}
	return 0;
}

static int write_initrd(const struct initramfs_request *req, bool deb,
			const char *src, struct needed *need, size_t nneed,
			struct outfile *out, char *err, size_t errlen)
{
	static const char *const dirs[] = {
		"dev", "proc", "sys", "mnt", "tmp", RCGATE_INITRAMFS_MODULE_DIR,
	};
	struct cpio c = { .out = req->initrd_out };
	char *list = NULL;
	size_t listlen = 0, used = 0;
	int rc = -1;

	c.w = archive_write_new();
	c.e = archive_entry_new();
	if (c.w == NULL || c.e == NULL) {
		errf(err, errlen, "out of memory");
		goto out;
	}
	if (archive_write_add_filter_gzip(c.w) != ARCHIVE_OK ||
	    /* no build time in the gzip header: same inputs, same bytes */
	    archive_write_set_filter_option(c.w, "gzip", "timestamp",
					    NULL) != ARCHIVE_OK ||
	    archive_write_set_format_cpio_newc(c.w) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(c.w, 1) != ARCHIVE_OK ||
	    archive_write_open_fd(c.w, out->fd) != ARCHIVE_OK) {
		errf(err, errlen, "%s: %s", req->initrd_out, aerr(c.w));
		goto out;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (cpio_header(&c, dirs[i], AE_IFDIR, 0755, 0, err, errlen) < 0)
			goto out;
	if (cpio_header(&c, "dev/console", AE_IFCHR, 0600, 0, err, errlen) < 0)
		goto out;
	if (cpio_agent(&c, req->agent, err, errlen) < 0)
		goto out;
	if (cpio_modules(&c, src, deb, need, nneed, err, errlen) < 0)
		goto out;
	for (size_t i = 0; i < nneed; i++)
		listlen += strlen(need[i].file) + 1;
	list = malloc(listlen + 1);
	if (list == NULL) {
		errf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nneed; i++) {
		size_t n = strlen(need[i].file);

		memcpy(list + used, need[i].file, n);
		list[used + n] = '\n';
		used += n + 1;
	}
	if (cpio_header(&c, RCGATE_INITRAMFS_MODULE_LIST, AE_IFREG, 0644,
			(int64_t)used, err, errlen) < 0 ||
	    (used > 0 && cpio_data(&c, list, used,
				   RCGATE_INITRAMFS_MODULE_LIST, err,
				   errlen) < 0))
		goto out;
	if (archive_write_close(c.w) != ARCHIVE_OK) {
		errf(err, errlen, "%s: %s", req->initrd_out, aerr(c.w));
		goto out;
	}
	rc = 0;
out:
	free(list);
	if (c.e != NULL)
		archive_entry_free(c.e);
	if (c.w != NULL)
		archive_write_free(c.w);
	return rc;
}

/* ---- the entry point ---- */

static int copy_file(const char *from, int to, char *err, size_t errlen)
{
	unsigned char buf[CHUNK];
	uint64_t total = 0;
	int fd = open(from, O_RDONLY | O_CLOEXEC);
	int rc = -1;

	if (fd < 0) {
		errf(err, errlen, "kernel image %s: %s", from, strerror(errno));
		return -1;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			errf(err, errlen, "kernel image %s: %s", from,
			      strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		total += (uint64_t)n;
		if (total > IMAGE_MAX) {
			errf(err, errlen, "kernel image %s: larger than %llu bytes",
			      from, (unsigned long long)IMAGE_MAX);
			goto out;
		}
		if (write_all(to, buf, (size_t)n) < 0) {
			errf(err, errlen, "writing kernel image: %s",
			      strerror(errno));
			goto out;
		}
	}
	if (total == 0) {
		errf(err, errlen, "kernel image %s: empty", from);
		goto out;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

static int strv_copy(char ***dst, size_t *ndst, char *const *src, size_t n)
{
	*dst = calloc(n != 0 ? n : 1, sizeof(**dst));
	if (*dst == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		(*dst)[i] = strdup(src[i]);
		if ((*dst)[i] == NULL)
			return -1;
		(*ndst)++;
	}
	return 0;
}

void initramfs_result_free(struct initramfs_result *r)
{
	for (size_t i = 0; i < r->nloaded; i++)
		free(r->loaded[i]);
	for (size_t i = 0; i < r->nbuiltin; i++)
		free(r->builtin[i]);
	for (size_t i = 0; i < r->nmissing; i++)
		free(r->missing[i]);
	free(r->loaded);
	free(r->builtin);
	free(r->missing);
	memset(r, 0, sizeof(*r));
}

int initramfs_build(const struct initramfs_request *req,
		    struct initramfs_result *result, char *err, size_t errlen)
{
	struct scan sc = { .req = req };
	struct kmod_closure cl = { 0 };
	struct outfile kernel = { .fd = -1 }, initrd = { .fd = -1 };
	struct needed *need = NULL;
	bool deb = req->package != NULL;
	const char *src = deb ? req->package : req->modules_tar;
	char sub[512];
	int rc = -1;

	memset(result, 0, sizeof(*result));
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (deb == (req->kernel_image != NULL) || req->agent == NULL ||
	    req->kernel_out == NULL || req->initrd_out == NULL ||
	    (deb && req->modules_tar != NULL)) {
		errf(err, errlen,
		      "initramfs: need a package or a kernel image (+ modules tarball), an agent and two outputs");
		return -1;
	}
	build_cancel = req->cancel;
	if (outfile_create(&kernel, req->kernel_out, err, errlen) < 0 ||
	    outfile_create(&initrd, req->initrd_out, err, errlen) < 0)
		goto out;
	if (!deb && copy_file(req->kernel_image, kernel.fd, err, errlen) < 0)
		goto out;
	if (src != NULL && scan_pass(&sc, src, deb, &kernel, err, errlen) < 0)
		goto out;
	if (deb && !sc.have_image) {
		errf(err, errlen, "%s: no kernel image %s", src,
		      req->image_name != NULL ? req->image_name
					      : "boot/vmlinuz-*");
		goto out;
	}
	if (sc.kver[0] == '\0')
		memcpy(sc.kver, sc.image_kver, sizeof(sc.kver));
	if (kmod_closure_compute(&sc.table, req->modules, &cl, sub,
				 sizeof(sub)) < 0) {
		errf(err, errlen, "%s: %s", src != NULL ? src : req->kernel_image,
		      sub);
		goto out;
	}
	need = calloc(cl.norder != 0 ? cl.norder : 1, sizeof(*need));
	if (need == NULL) {
		errf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < cl.norder; i++) {
		const char *p = sc.table.mods[cl.order[i]].path;
		const char *base = strrchr(p, '/');

		need[i].path = p;
		need[i].file = base != NULL ? base + 1 : p;
		for (size_t k = 0; k < i; k++) {
			if (strcmp(need[k].file, need[i].file) == 0) {
				errf(err, errlen, "%s: two needed modules named %s",
				      src, need[i].file);
				goto out;
			}
		}
	}
	if (write_initrd(req, deb, src, need, cl.norder, &initrd, err,
			 errlen) < 0)
		goto out;
	result->loaded = calloc(cl.norder != 0 ? cl.norder : 1,
				sizeof(*result->loaded));
	if (result->loaded == NULL)
		goto oom;
	for (size_t i = 0; i < cl.norder; i++) {
		result->loaded[i] = strdup(sc.table.mods[cl.order[i]].name);
		if (result->loaded[i] == NULL)
			goto oom;
		result->nloaded++;
	}
	if (strv_copy(&result->builtin, &result->nbuiltin, cl.builtin,
		      cl.nbuiltin) < 0 ||
	    strv_copy(&result->missing, &result->nmissing, cl.missing,
		      cl.nmissing) < 0)
		goto oom;
	memcpy(result->kver, sc.kver, sizeof(result->kver));
	if (outfile_commit(&kernel, req->kernel_out, err, errlen) < 0 ||
	    outfile_commit(&initrd, req->initrd_out, err, errlen) < 0)
		goto out;
	rc = 0;
	goto out;
oom:
	errf(err, errlen, "out of memory");
out:
	if (rc < 0)
		initramfs_result_free(result);
	outfile_discard(&kernel);
	outfile_discard(&initrd);
	free(need);
	kmod_closure_free(&cl);
	kmod_table_free(&sc.table);
	free(sc.buf);
	build_cancel = NULL;
	return rc;
}
