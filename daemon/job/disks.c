/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * disks.c - owns the scratch disks: one fresh image per filesystem the
 * suite runs on, formatted by the host's mkfs, removed after the boot.
 * mkfs runs through build.c's one program runner: in a sandbox that sees
 * only the image, with a deadline and the job's cancel.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

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

int make_disk(struct jobrun *r, const char *path, const struct fs_kind *fs,
	      char *err, size_t errlen)
{
	char out[512], tool[PATH_MAX], dir[PATH_MAX];
	const char *argv[8];
	long mb = sched_ctx.cfg->disk_size > fs->min_mb
		  ? sched_ctx.cfg->disk_size : fs->min_mb;
	struct sandbox sb = { .readable = { NULL }, .writable = { path, NULL } };
	struct build_options o = {
		.cancelled = mkfs_cancelled, .cls = (void *)r->cancel,
		.sandbox = &sb,
		.no_sandbox = strcmp(sched_ctx.cfg->build_sandbox, "none") == 0,
		.file_mb = -1,	/* the image: sized below, written in place */
	};
	size_t n = 0;
	int fd, logfd, rc;

	if (tool_path(fs->mkfs[0], tool, sizeof(tool)) == NULL) {
		errf(err, errlen, "%s is not installed on this host", fs->mkfs[0]);
		return -1;
	}
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
	if (rc != 0)
		return -1;
	jlog(r, "disk %s: %ld MiB %s", path, mb, fs->name);
	return 0;
}

/* One fresh disk per configured filesystem whose mkfs the host has; ext4
 * is required (the suite's reference), the others are skipped with a note
 * when the host cannot format them. */
int make_disks(struct jobrun *r, struct disk_set *d, char *err,
	       size_t errlen)
{
	char list[128], *save = NULL;

	d->n = 0;
	snprintf(list, sizeof(list), "%s", sched_ctx.cfg->filesystems);
	for (char *name = strtok_r(list, " ,", &save); name != NULL &&
	     d->n < GUEST_MAX_DISKS; name = strtok_r(NULL, " ,", &save)) {
		const struct fs_kind *fs = fs_find(name);

		if (fs == NULL) {
			errf(err, errlen, "unknown filesystem '%s' in [jobs]"
			     " filesystems", name);
			return -1;
		}
		if ((size_t)snprintf(d->path[d->n], sizeof(d->path[0]),
				     "%s/disk-%s.img", r->dir, fs->name) >=
		    sizeof(d->path[0])) {
			errf(err, errlen, "job directory path too long");
			return -1;
		}
		if (make_disk(r, d->path[d->n], fs, err, errlen) < 0) {
			if (strcmp(fs->name, "ext4") == 0)
				return -1;
			jlog(r, "%s not tested: %s", fs->name, err);
			continue;
		}
		d->fs[d->n++] = fs->name;
	}
	if (d->n == 0) {
		errf(err, errlen, "no filesystem to test (filesystems = %s)",
		     sched_ctx.cfg->filesystems);
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

	if (make_disks(r, &r->disks, err, sizeof(err)) < 0) {
		infra(r, "disk", err);
		return PHASE_STOP;
	}
	return PHASE_NEXT;
}

const struct phase phase_disks = {
	.name = "disks", .state = JS_BOOTING, .exec = disks_exec,
	.step = offsetof(struct job_steps, disks),
};
