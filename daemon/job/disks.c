/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * disks.c - owns the scratch disks: one fresh image per filesystem the
 * suite runs on, removed after the boot. Each is a copy of a template
 * that the host's mkfs formatted once (per filesystem, size and mkfs
 * binary) into the cache: a copy of a freshly formatted image is a
 * freshly formatted image, made in milliseconds instead of a sandboxed
 * mkfs per disk on the critical path of every job. mkfs runs through
 * build.c's one program runner: in a sandbox that sees only the image,
 * with a deadline and the job's cancel.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/fs.h>

#include "job_internal.h"

#include "base/base.h"
#include "guests/guests.h"
#include "build/build.h"
#include "job/job.h"

/* Filesystems the suite runs on, each on its own scratch disk. xfs needs
 * 300 MiB at least with Debian 12's xfsprogs. */
static const struct fs_kind fs_kinds[] = {
	{ "ext4", { "mkfs.ext4", "-q", "-F", "-E",
		    "lazy_itable_init=1,lazy_journal_init=1" }, 16 },
	{ "xfs", { "mkfs.xfs", "-q", "-f" }, 320 },
	{ "btrfs", { "mkfs.btrfs", "-q", "-f" }, 128 },
	/* No filesystem: the agent's block-device suite runs on the raw
	 * disk (its windows need 48 MiB; an empty sparse file). */
	{ RCGATE_FS_BDEV, { NULL }, 64 },
};

const struct fs_kind *fs_find(const char *name)
{
	for (size_t i = 0; i < sizeof(fs_kinds) / sizeof(fs_kinds[0]); i++) {
		if (strcmp(fs_kinds[i].name, name) == 0)
			return &fs_kinds[i];
	}
	return NULL;
}

/* The host's mkfs program for fs, or NULL when it is not installed. */
static const char *tool_path(const char *tool, char *buf, size_t len)
{
	static const char *const dirs[] = { "/usr/sbin", "/sbin", "/usr/bin",
					    "/bin", NULL };

	for (size_t i = 0; dirs[i] != NULL; i++) {
		snprintf(buf, len, "%s/%s", dirs[i], tool);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

/* A formatting that takes longer than this is stuck (xfs on 320 MiB: well
 * under a second). */
#define MKFS_TIMEOUT_S 60

static int mkfs_cancelled(void *cls)
{
	const atomic_int *cancel = cls;

	return sched_stopping || (cancel != NULL && *cancel);
}

/* What mkfs said, for its error: the first bytes of its output file. */
static void mkfs_output(int fd, char *out, size_t len)
{
	ssize_t n = pread(fd, out, len - 1, 0);

	out[n > 0 ? n : 0] = '\0';
	for (char *p = out; *p != '\0'; p++)
		if (*p == '\n' || (unsigned char)*p < ' ')
			*p = ' ';
}

/* Formats path (created here, mb MiB) with fs's mkfs at tool. */
static int mkfs_run(struct jobrun *r, const char *tool, const char *path,
		    const struct fs_kind *fs, long mb, char *err,
		    size_t errlen)
{
	char out[512], dir[PATH_MAX];
	const char *argv[8];
	struct sandbox sb = { .readable = { NULL }, .writable = { path, NULL } };
	struct build_options o = {
		.cancelled = mkfs_cancelled, .cls = (void *)r->cancel,
		.sandbox = &sb,
		.no_sandbox = strcmp(sched_ctx.cfg->build_sandbox, "none") == 0,
		.file_mb = -1,	/* the image: sized below, written in place */
	};
	size_t n = 0;
	int fd, logfd, rc;

	argv[n++] = tool;
	for (size_t i = 1; i < 6 && fs->mkfs[i] != NULL; i++)
		argv[n++] = fs->mkfs[i];
	argv[n++] = path;
	argv[n] = NULL;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		errf(err, errlen, "create %s: %s", path, strerror(errno));
		return -1;
	}
	if (ftruncate(fd, (off_t)mb << 20) < 0) {
		errf(err, errlen, "size %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	snprintf(dir, sizeof(dir), "%s", path);
	logfd = open(dirname(dir), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (logfd < 0) {
		errf(err, errlen, "mkfs output file in %s: %s", dir,
		     strerror(errno));
		return -1;
	}
	rc = build_run(argv, NULL, NULL, logfd, &o,
		       now_monotonic() + MKFS_TIMEOUT_S, err, errlen);
	if (rc > 0) {
		mkfs_output(logfd, out, sizeof(out));
		errf(err, errlen, "%s exited %d: %s", fs->mkfs[0], rc, out);
	}
	close(logfd);
	return rc == 0 ? 0 : -1;
}

#define BLOCK 4096

static int all_zero(const unsigned char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* Turns the blocks of zeros mkfs wrote (xfs zeroes its 64 MiB log) into
 * holes, so that every copy of the template reads and writes only the
 * metadata mkfs laid down. */
static int sparsify(int fd, char *err, size_t errlen)
{
	enum { LEN = 64 * BLOCK };
	unsigned char *buf = malloc(LEN);
	off_t off = 0;
	ssize_t got = -1;

	if (buf == NULL) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	while ((got = pread(fd, buf, LEN, off)) > 0) {
		for (ssize_t b = 0; b < got; b += BLOCK) {
			size_t len = (size_t)(got - b) < BLOCK
				     ? (size_t)(got - b) : BLOCK;

			if (len == BLOCK && all_zero(buf + b, len) &&
			    fallocate(fd, FALLOC_FL_PUNCH_HOLE |
				      FALLOC_FL_KEEP_SIZE, off + b,
				      BLOCK) < 0 && errno != EOPNOTSUPP) {
				errf(err, errlen, "punch hole: %s",
				     strerror(errno));
				free(buf);
				return -1;
			}
		}
		off += got;
	}
	free(buf);
	if (got < 0) {
		errf(err, errlen, "read template: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The formatted tmp becomes the template tpl: its zeros punched out,
 * readable by every daemon sharing the cache (an empty filesystem),
 * durable, then renamed into place. */
static int template_finish(const char *tmp, const char *tpl, char *err,
			   size_t errlen)
{
	int fd = open(tmp, O_RDWR | O_CLOEXEC), rc = -1;

	if (fd < 0) {
		errf(err, errlen, "open %s: %s", tmp, strerror(errno));
		return -1;
	}
	if (sparsify(fd, err, errlen) == 0) {
		if (fchmod(fd, 0644) < 0 || fsync(fd) < 0 ||
		    rename(tmp, tpl) < 0)
			errf(err, errlen, "disk template %s: %s", tpl,
			     strerror(errno));
		else
			rc = 0;
	}
	close(fd);
	return rc;
}

/* The template for fs at mb MiB formatted by the mkfs at tool, made now
 * if the cache lacks it: <cache>/disks/<fs>-<mb>M[-u<unique>]-<key>.img,
 * where key names the mkfs binary (device, inode, size, mtime), so an
 * upgraded mkfs makes a template of its own. Templates of another unique
 * number are formatted apart, so they have their own UUID: one guest may
 * mount one copy of each (xfs refuses a second filesystem of the same
 * UUID, btrfs takes two for devices of one filesystem). Made under a name
 * of this thread's and renamed into place, so jobs and daemons sharing
 * the cache never see half of one. */
static int template_get(struct jobrun *r, const char *tool,
			const struct fs_kind *fs, long mb, unsigned unique,
			char *tpl, size_t tpllen, char *err, size_t errlen)
{
	char u[16] = "";

	char dir[PATH_MAX], tmp[PATH_MAX];
	struct stat st;

	if (stat(tool, &st) < 0) {
		errf(err, errlen, "%s: %s", tool, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(dir, sizeof(dir), "%s/disks",
			     sched_ctx.cache_dir) >= sizeof(dir) ||
	    (unique > 0 && snprintf(u, sizeof(u), "-u%u", unique) < 0) ||
	    (size_t)snprintf(tpl, tpllen, "%s/%s-%ldM%s-%jx-%jx-%jx-%jx.img",
			     dir, fs->name, mb, u, (uintmax_t)st.st_dev,
			     (uintmax_t)st.st_ino, (uintmax_t)st.st_size,
			     (uintmax_t)st.st_mtime) >= tpllen) {
		errf(err, errlen, "disk template path too long");
		return -1;
	}
	if (stat(tpl, &st) == 0 && st.st_size == (off_t)mb << 20)
		return 0;
	if (mkdir_p(dir, 0755, err, errlen) < 0)
		return -1;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%d.%ld", tpl, (int)getpid(),
			     (long)gettid()) >= sizeof(tmp)) {
		errf(err, errlen, "disk template path too long");
		return -1;
	}
	if (mkfs_run(r, tool, tmp, fs, mb, err, errlen) < 0) {
		unlink(tmp);
		return -1;
	}
	if (template_finish(tmp, tpl, err, errlen) < 0) {
		unlink(tmp);
		return -1;
	}
	jlog(r, "disk template %s: %ld MiB %s formatted", tpl, mb, fs->name);
	return 0;
}

/* Copies [off, end) of in to out: copy_file_range, or read and write
 * where the kernel cannot (another filesystem type). */
static int copy_range(int in, int out, off_t off, off_t end)
{
	char buf[4 * BLOCK];

	while (off < end) {
		off_t o_in = off, o_out = off;
		ssize_t n = copy_file_range(in, &o_in, out, &o_out,
					    (size_t)(end - off), 0);

		if (n < 0 && (errno == EXDEV || errno == EINVAL ||
			      errno == ENOSYS || errno == EOPNOTSUPP)) {
			size_t want = (size_t)(end - off) < sizeof(buf)
				      ? (size_t)(end - off) : sizeof(buf);

			n = pread(in, buf, want, off);
			if (n > 0 && pwrite(out, buf, (size_t)n, off) != n)
				return -1;
		}
		if (n <= 0)
			return n == 0 ? (errno = EIO, -1) : -1;
		off += n;
	}
	return 0;
}

/* path becomes a copy of the template tpl: a reflink where the
 * filesystem shares blocks, else its data extents copied and its holes
 * left holes. */
static int copy_template(const char *tpl, const char *path, char *err,
			 size_t errlen)
{
	int in = open(tpl, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
	struct stat st;
	off_t data = 0, hole;

	if (in < 0 || fstat(in, &st) < 0) {
		errf(err, errlen, "open %s: %s", tpl, strerror(errno));
		goto out;
	}
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0) {
		errf(err, errlen, "create %s: %s", path, strerror(errno));
		goto out;
	}
	if (ioctl(out, FICLONE, in) == 0) {
		rc = 0;
		goto out;
	}
	if (ftruncate(out, st.st_size) < 0) {
		errf(err, errlen, "size %s: %s", path, strerror(errno));
		goto out;
	}
	while ((data = lseek(in, data, SEEK_DATA)) >= 0) {
		hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0 || copy_range(in, out, data, hole) < 0) {
			errf(err, errlen, "copy %s: %s", tpl, strerror(errno));
			goto out;
		}
		data = hole;
	}
	if (errno != ENXIO) {
		errf(err, errlen, "seek %s: %s", tpl, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0 && rc == 0) {
		errf(err, errlen, "write %s: %s", path, strerror(errno));
		rc = -1;
	}
	if (rc < 0)
		unlink(path);
	return rc;
}

/* A disk without a filesystem: min_mb of zeros, all a hole. */
static int raw_disk(struct jobrun *r, const char *path,
		    const struct fs_kind *fs, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), e = 0;

	if (fd < 0 || ftruncate(fd, (off_t)fs->min_mb << 20) < 0)
		e = errno;
	if (fd >= 0 && close(fd) < 0 && e == 0)
		e = errno;
	if (e != 0) {
		errf(err, errlen, "create %s: %s", path, strerror(e));
		if (fd >= 0)
			unlink(path);
		return -1;
	}
	jlog(r, "disk %s: %ld MiB raw (%s)", path, fs->min_mb, fs->name);
	return 0;
}

int make_disk(struct jobrun *r, const char *path, const struct fs_kind *fs,
	      unsigned unique, char *err, size_t errlen)
{
	char tool[PATH_MAX], tpl[PATH_MAX];
	long mb = sched_ctx.cfg->disk_size > fs->min_mb
		  ? sched_ctx.cfg->disk_size : fs->min_mb;

	if (fs->mkfs[0] == NULL)
		return raw_disk(r, path, fs, err, errlen);
	if (tool_path(fs->mkfs[0], tool, sizeof(tool)) == NULL) {
		errf(err, errlen, "%s is not installed on this host", fs->mkfs[0]);
		return -1;
	}
	if (template_get(r, tool, fs, mb, unique, tpl, sizeof(tpl), err,
			 errlen) < 0 ||
	    copy_template(tpl, path, err, errlen) < 0)
		return -1;
	jlog(r, "disk %s: %ld MiB %s", path, mb, fs->name);
	return 0;
}

/* The disks of one filesystem: copies of them from templates 0.. (a
 * copies > 1 set names each disk by its number); the count made, which
 * is copies unless one failed (err says why; none is left). */
static unsigned fs_disks(struct jobrun *r, struct disk_set *d,
			 const struct fs_kind *fs, unsigned copies, char *err,
			 size_t errlen)
{
	unsigned first = d->n, k;

	for (k = 0; k < copies; k++, d->n++) {
		int len = copies == 1
			? snprintf(d->path[d->n], sizeof(d->path[0]),
				   "%s/disk-%s.img", r->dir, fs->name)
			: snprintf(d->path[d->n], sizeof(d->path[0]),
				   "%s/disk-crash-%s-%u.img", r->dir, fs->name, k);

		if (len < 0 || (size_t)len >= sizeof(d->path[0])) {
			errf(err, errlen, "job directory path too long");
			break;
		}
		if (make_disk(r, d->path[d->n], fs, k, err, errlen) < 0)
			break;
		d->fs[d->n] = fs->name;
	}
	if (k < copies)
		while (d->n > first)
			unlink(d->path[--d->n]);
	return k;
}

int make_disks(struct jobrun *r, struct disk_set *d, unsigned copies,
	       const char *what, char *err, size_t errlen)
{
	char list[128], *save = NULL;

	d->n = 0;
	snprintf(list, sizeof(list), "%s", sched_ctx.cfg->filesystems);
	for (char *name = strtok_r(list, " ,", &save); name != NULL;
	     name = strtok_r(NULL, " ,", &save)) {
		const struct fs_kind *fs = fs_find(name);

		if (fs == NULL) {
			errf(err, errlen, "unknown filesystem '%s' in [jobs]"
			     " filesystems", name);
			return -1;
		}
		if (copies > 1 && fs->mkfs[0] == NULL)
			continue;	/* a raw disk holds no file */
		if (d->n + copies > GUEST_MAX_DISKS) {
			jlog(r, "%s not tested%s: more than %d disks", fs->name,
			     what, GUEST_MAX_DISKS);
			continue;
		}
		if (fs_disks(r, d, fs, copies, err, errlen) == copies)
			continue;
		if (strcmp(fs->name, "ext4") == 0)
			return -1;
		jlog(r, "%s not tested%s: %s", fs->name, what, err);
	}
	if (d->n == 0) {
		errf(err, errlen, "no filesystem to test%s (filesystems = %s)",
		     what, sched_ctx.cfg->filesystems);
		return -1;
	}
	return 0;
}

void remove_disks(const struct disk_set *d)
{
	for (unsigned i = 0; i < d->n; i++)
		unlink(d->path[i]);
}

static int disks_exec(struct jobrun *r)
{
	char err[1024];

	if (make_disks(r, &r->disks, 1, "", err, sizeof(err)) < 0) {
		infra(r, "disk", err);
		return PHASE_STOP;
	}
	return PHASE_NEXT;
}

const struct phase phase_disks = {
	.name = "disks", .state = JS_BOOTING, .exec = disks_exec,
	.step = offsetof(struct job_steps, disks),
};
