/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The file layouts under a direct I/O: written, unwritten and hole extents
 * in one I/O, punch hole, zero and collapse range, reflinked extents
 * (FICLONE, FICLONERANGE, a no-CoW file on btrfs), btrfs compressed and
 * inline extents, and direct writes into preallocated blocks of a full
 * filesystem.
 * Each test is one row of catalogue.h: what it checks, what its failure
 * means, and the function and parameters it runs with (table.c makes the
 * tables from them).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/aio_abi.h>
#include <linux/fs.h>
#include <linux/io_uring.h>

#include "suite.h"
#include "testio.h"
#include "tests.h"

/* ---- file layouts ---- */


/*
 * [written 64K][hole 64K][unwritten 64K][written 64K], read whole by one
 * direct read (zeros where nothing was written), then one direct write
 * across all four, then a write past EOF into blocks preallocated with
 * KEEP_SIZE.
 */
enum test_status test_mixed_extents(const struct suite_test *t,
				    const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct image im;
	unsigned char *buf = NULL;
	struct stat sb;
	int fd;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, 512 * KIB, d) != 0)
		goto out;
	buf = aligned(256 * KIB, d);
	if (buf == NULL) {
		im.bad++;
		goto out;
	}
	if (put(fd, buf, 0, 64 * KIB, 1, &im, "written extent", d) != 0)
		goto out;
	if (falloc(fd, 0, 128 * KIB, 64 * KIB, "unwritten extent", 0, d) != 0) {
		needed(errno, "fallocate", &im, &st, d);
		goto out;
	}
	image_truncate(&im, 192 * KIB);
	if (put(fd, buf, 192 * KIB, 64 * KIB, 1, &im, "written extent", d) != 0)
		goto out;
	/* btrfs accounts the blocks of a direct write when its ordered extent
	 * completes, which may be after write() returned: fsync waits. */
	if (fsync(fd) == 0 && fstat(fd, &sb) == 0 &&
	    (long long)sb.st_blocks * 512 < 192 * KIB) {
		diag_add(d, "st_blocks %lld (%lld bytes) after 128K written and 64K preallocated, expected >= 196608",
			 (long long)sb.st_blocks, (long long)sb.st_blocks * 512);
		im.bad++;
	}
	verify(env->path, &im, "[written][hole][unwritten][written]", VIA_ALL, d);
	if (put(fd, buf, 32 * KIB, 192 * KIB, 2, &im, "write across all four", d) != 0)
		goto out;
	verify(env->path, &im, "after one write across all four", VIA_ALL, d);
	/* Blocks allocated past EOF; a write beyond the old EOF into them
	 * must leave zeros between the old EOF and the write. */
	if (falloc(fd, FALLOC_FL_KEEP_SIZE, 256 * KIB, 128 * KIB, "past EOF", 0, d) != 0) {
		im.bad++;
		goto out;
	}
	if (put(fd, buf, 320 * KIB, 16 * KIB, 3, &im, "write into blocks past EOF", d) != 0)
		goto out;
	verify(env->path, &im, "after a write past EOF into KEEP_SIZE blocks",
	       VIA_ALL, d);
out:
	return finish(fd, buf, &im, st);
}

/*
 * Punch a hole and zero a range inside written data, write into the hole,
 * then collapse a range (where the filesystem can): zeros and shifted
 * bytes exactly where the model says.
 */
enum test_status test_punch(const struct suite_test *t,
			    const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct image im;
	unsigned char *buf = NULL;
	int fd;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, 128 * KIB, d) != 0)
		goto out;
	buf = aligned(128 * KIB, d);
	if (buf == NULL) {
		im.bad++;
		goto out;
	}
	if (put(fd, buf, 0, 128 * KIB, 1, &im, "prefill", d) != 0)
		goto out;
	if (falloc(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 16 * KIB,
		   16 * KIB, "punch hole", 0, d) != 0) {
		needed(errno, "fallocate PUNCH_HOLE", &im, &st, d);
		goto out;
	}
	image_zero(&im, 16 * KIB, 16 * KIB);
	if (falloc(fd, FALLOC_FL_ZERO_RANGE, 48 * KIB, 8 * KIB, "zero range", 0, d) == 0)
		image_zero(&im, 48 * KIB, 8 * KIB);
	else if (errno != EOPNOTSUPP)
		im.bad++;
	verify(env->path, &im, "after punch hole and zero range", VIA_ALL, d);
	if (put(fd, buf, 20 * KIB, 8 * KIB, 2, &im, "write into the hole", d) != 0)
		goto out;
	verify(env->path, &im, "after a write into the punched hole", VIA_ALL, d);
	if (falloc(fd, FALLOC_FL_COLLAPSE_RANGE, 96 * KIB, 8 * KIB, "collapse range", EINVAL, d) == 0) {
		memmove(im.want + 96 * KIB, im.want + 104 * KIB, 24 * KIB);
		image_truncate(&im, 120 * KIB);
		verify(env->path, &im, "after collapse range", VIA_ALL, d);
	} else if (errno != EOPNOTSUPP && errno != EINVAL) {
		im.bad++;
	}
out:
	return finish(fd, buf, &im, st);
}

/*
 * The set-up of a test on two files: images a (the test's file) and b (a
 * second file, env->path + suffix, created with O_DIRECT; its name in
 * path2), both of cap bytes, and a buffer of cap bytes in *buf. The second
 * file's descriptor, or -1 with a->bad counted; the images and *buf can be
 * freed either way.
 */
static int two_files(const struct suite_env *env, const char *suffix,
		     size_t cap, struct image *a, struct image *b,
		     unsigned char **buf, char *path2, size_t len2,
		     struct diag *d)
{
	int fd2;

	memset(b, 0, sizeof(*b));
	*buf = NULL;
	snprintf(path2, len2, "%s%s", env->path, suffix);
	if (image_init(a, cap, d) != 0 || image_init(b, cap, d) != 0) {
		a->bad++;
		return -1;
	}
	*buf = aligned(cap, d);
	fd2 = open(path2, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600);
	if (*buf == NULL || fd2 < 0) {
		diag_add(d, "create %s: %s", path2, strerror(errno));
		a->bad++;
		if (fd2 >= 0) {
			close(fd2);
			unlink(path2);
		}
		return -1;
	}
	return fd2;
}

/* The end of a test on two files: closes both (removing the second),
 * frees what two_files() made; the verdict from both images unless st
 * is a skip. */
static enum test_status two_files_end(int fd, int fd2, const char *path2,
				      struct image *a, struct image *b,
				      unsigned char *buf, enum test_status st)
{
	a->bad += b->bad;
	if (fd2 >= 0) {
		close(fd2);
		unlink(path2);
	}
	close(fd);
	free(buf);
	if (st != TEST_SKIP)
		st = verdict(a);
	image_free(b);
	image_free(a);
	return st;
}

/*
 * Shared extents: FICLONE a file, FICLONERANGE part of it, then direct
 * writes into the clone. The clone changes where written, the source
 * never (copy on write under O_DIRECT).
 */
enum test_status test_reflink(const struct suite_test *t,
			      const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct image src, dst;
	struct file_clone_range fcr;
	unsigned char *buf = NULL;
	char srcpath[4200];
	int fd, sfd;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	sfd = two_files(env, ".src", 128 * KIB, &dst, &src, &buf, srcpath,
			sizeof(srcpath), d);
	if (sfd < 0)
		goto out;
	if (put(sfd, buf, 0, 64 * KIB, 1, &src, "source", d) != 0)
		goto out;
	if (ioctl(fd, FICLONE, sfd) != 0) {
		if (errno == EOPNOTSUPP || errno == ENOTTY || errno == EXDEV ||
		    errno == EINVAL) {
			skip(d, "FICLONE (no reflink here)", errno);
			st = TEST_SKIP;
			goto out;
		}
		diag_add(d, "FICLONE: %s", strerror(errno));
		dst.bad++;
		goto out;
	}
	memcpy(dst.want, src.want, 64 * KIB);
	dst.size = 64 * KIB;
	verify(env->path, &dst, "clone", VIA_ALL, d);
	if (put(fd, buf, 16 * KIB, 8 * KIB, 2, &dst, "write into the clone", d) != 0)
		goto out;
	verify(srcpath, &src, "source after a write into its clone", VIA_ALL, d);
	verify(env->path, &dst, "clone after a write into it", VIA_ALL, d);
	fcr.src_fd = sfd;
	fcr.src_offset = 32 * KIB;
	fcr.src_length = 16 * KIB;
	fcr.dest_offset = 64 * KIB;
	if (ioctl(fd, FICLONERANGE, &fcr) != 0) {
		diag_add(d, "FICLONERANGE 32K+16K to 64K: %s", strerror(errno));
		dst.bad++;
		goto out;
	}
	memcpy(dst.want + 64 * KIB, src.want + 32 * KIB, 16 * KIB);
	dst.size = 80 * KIB;
	if (put(fd, buf, 68 * KIB, 4 * KIB, 3, &dst, "write into the cloned range", d) != 0)
		goto out;
	if (put(sfd, buf, 36 * KIB, 4 * KIB, 4, &src, "write into the source", d) != 0)
		goto out;
	verify(srcpath, &src, "source after FICLONERANGE and writes", VIA_ALL, d);
	verify(env->path, &dst, "clone after FICLONERANGE and writes", VIA_ALL, d);
out:
	return two_files_end(fd, sfd, srcpath, &dst, &src, buf, st);
}

/*
 * btrfs only. flags 0: compressed extents (chattr +c, buffered writes,
 * fsync), read and overwritten with O_DIRECT (which falls back to buffered
 * I/O there). ST_INLINE: a 100-byte file (an inline extent), read with
 * O_DIRECT and extended by a direct write.
 */
enum test_status test_btrfs_extents(const struct suite_test *t,
				    const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct image im;
	unsigned char *buf = NULL;
	size_t blen = (t->flags & ST_INLINE) ? 100 : 128 * KIB;
	ssize_t r;
	int bfd = -1, fd = -1;

	memset(&im, 0, sizeof(im));
	if (!on_btrfs(env->path)) {
		snprintf(d->skip_reason, sizeof(d->skip_reason),
			 "%s extents exist on btrfs only",
			 (t->flags & ST_INLINE) ? "inline" : "compressed");
		return TEST_SKIP;
	}
	if (image_init(&im, 256 * KIB, d) != 0)
		return TEST_FAIL;
	buf = aligned(128 * KIB, d);
	bfd = open(env->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (buf == NULL || bfd < 0) {
		diag_add(d, "create %s: %s", env->path, strerror(errno));
		im.bad++;
		goto out;
	}
	if (!(t->flags & ST_INLINE)) {
		int iattr = 0;

		if (ioctl(bfd, FS_IOC_GETFLAGS, &iattr) != 0) {
			skip(d, "FS_IOC_GETFLAGS", errno);
			st = TEST_SKIP;
			goto out;
		}
		iattr |= FS_COMPR_FL;
		if (ioctl(bfd, FS_IOC_SETFLAGS, &iattr) != 0) {
			skip(d, "chattr +c (FS_IOC_SETFLAGS)", errno);
			st = TEST_SKIP;
			goto out;
		}
	}
	/* Buffered, compressible: the letters repeat in 512-byte runs. */
	pat_fill(buf, blen, 0, 1);
	if (write(bfd, buf, blen) != (ssize_t)blen || fsync(bfd) != 0) {
		diag_add(d, "buffered write of %zu bytes and fsync: %s", blen,
			 strerror(errno));
		im.bad++;
		goto out;
	}
	image_write(&im, 0, blen, 1);
	fd = open(env->path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		diag_add(d, "open O_DIRECT: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	memset(buf, 0, 128 * KIB);
	r = pread(fd, buf, (size_t)round_up((long long)blen, PAGE), 0);
	if (r != (ssize_t)blen) {
		diag_add(d, "direct read of a %s extent returned %zd, expected %zu",
			 (t->flags & ST_INLINE) ? "inline" : "compressed", r, blen);
		im.bad++;
	} else {
		im.bad += compare((t->flags & ST_INLINE) ? "direct read of an inline extent" :
			  "direct read of compressed extents", buf, &im, 0, blen, d);
	}
	if (t->flags & ST_INLINE) {
		if (put(fd, buf, 4 * KIB, 4 * KIB, 2, &im, "write after an inline extent", d) != 0)
			goto out;
		verify(env->path, &im, "after extending an inline file", VIA_ALL, d);
		if (put(fd, buf, 0, 4 * KIB, 3, &im, "overwrite of the inline extent", d) != 0)
			goto out;
	} else {
		if (put(fd, buf, 8 * KIB, 8 * KIB, 2, &im, "overwrite inside compressed extents", d) != 0)
			goto out;
		verify(env->path, &im, "after a direct overwrite of compressed data", VIA_ALL, d);
		if (put(fd, buf, 128 * KIB, 16 * KIB, 3, &im, "extending write", d) != 0)
			goto out;
	}
	verify(env->path, &im, "at the end", VIA_ALL, d);
out:
	if (fd >= 0)
		close(fd);
	if (bfd >= 0)
		close(bfd);
	free(buf);
	if (st != TEST_SKIP)
		st = verdict(&im);
	image_free(&im);
	return st;
}

/* Sets chattr +C (no data CoW) on an empty file: 0, or -1 with errno. */
static int set_nocow(int fd)
{
	int iattr = 0;

	if (ioctl(fd, FS_IOC_GETFLAGS, &iattr) != 0)
		return -1;
	iattr |= FS_NOCOW_FL;
	return ioctl(fd, FS_IOC_SETFLAGS, &iattr);
}

/*
 * btrfs only. A no-CoW file (chattr +C) written as two extents of 32 KiB,
 * the second cloned into another no-CoW file: one direct write over both
 * may go in place into the first extent only, the shared second one must
 * be copied. If the filesystem maps the whole write to the first extent's
 * disk blocks (7833b865953c), the bytes after it land in the blocks the
 * clone shares, and the clone changes.
 */
enum test_status test_reflink_nocow(const struct suite_test *t,
				    const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct image im, cl;
	struct file_clone_range fcr;
	unsigned char *buf = NULL;
	char clpath[4200];
	int fd, cfd;

	(void)t;
	if (!on_btrfs(env->path)) {
		snprintf(d->skip_reason, sizeof(d->skip_reason),
			 "no-CoW files and clones: btrfs only here");
		return TEST_SKIP;
	}
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	cfd = two_files(env, ".clone", 64 * KIB, &im, &cl, &buf, clpath,
			sizeof(clpath), d);
	if (cfd < 0)
		goto out;
	if (set_nocow(fd) != 0 || set_nocow(cfd) != 0) {
		diag_add(d, "chattr +C (FS_IOC_SETFLAGS FS_NOCOW_FL): %s",
			 strerror(errno));
		im.bad++;
		goto out;
	}
	/* Two extents: each write is on disk before the next is allocated. */
	if (put(fd, buf, 0, 32 * KIB, 1, &im, "first extent", d) != 0 ||
	    fsync(fd) != 0 ||
	    put(fd, buf, 32 * KIB, 32 * KIB, 2, &im, "second extent", d) != 0 ||
	    fsync(fd) != 0)
		goto out;
	fcr.src_fd = fd;
	fcr.src_offset = 32 * KIB;
	fcr.src_length = 32 * KIB;
	fcr.dest_offset = 0;
	if (ioctl(cfd, FICLONERANGE, &fcr) != 0) {
		diag_add(d, "FICLONERANGE 32K+32K of a no-CoW file: %s",
			 strerror(errno));
		im.bad++;
		goto out;
	}
	memcpy(cl.want, im.want + 32 * KIB, 32 * KIB);
	cl.size = 32 * KIB;
	/* Read it whole first: the two extents' maps are then cached (and
	 * merged where the blocks are contiguous). */
	if (pread(fd, buf, 64 * KIB, 0) != 64 * KIB) {
		diag_add(d, "direct read of 64 KiB: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	if (put(fd, buf, 0, 64 * KIB, 3, &im, "write over [own][shared]", d) != 0)
		goto out;
	verify(clpath, &cl, "clone after a direct write over its source's no-CoW and shared extents",
	       VIA_ALL, d);
	verify(env->path, &im, "no-CoW file after a write over [own][shared]",
	       VIA_ALL, d);
out:
	return two_files_end(fd, cfd, clpath, &im, &cl, buf, st);
}

/* ---- a full filesystem ---- */

/*
 * Fills the filesystem holding path with fallocate() calls on path (a new
 * file), from 32 MiB down to 4 KiB chunks, until even 4 KiB gets ENOSPC.
 * Returns the bytes allocated, or -1 with a diagnostic (an error other than
 * ENOSPC, or no fallocate at all: errno EOPNOTSUPP, no diagnostic).
 */
static long long fill_fs(const char *path, struct diag *d)
{
	long long off = 0, chunk = 32 * KIB * KIB;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0) {
		diag_add(d, "create %s: %s", path, strerror(errno));
		return -1;
	}
	while (chunk >= PAGE) {
		if (fallocate(fd, 0, (off_t)off, (off_t)chunk) == 0) {
			off += chunk;
			continue;
		}
		if (errno != ENOSPC) {
			int e = errno;

			if (e != EOPNOTSUPP)
				diag_add(d, "filling the filesystem: fallocate at %lld+%lld: %s",
					 off, chunk, strerror(e));
			close(fd);
			errno = e;
			return -1;
		}
		/* A partial allocation may stay behind: go on after it. */
		{
			struct stat sb;

			if (fstat(fd, &sb) == 0 && (long long)sb.st_size > off)
				off = (long long)sb.st_size;
		}
		chunk /= 2;
	}
	close(fd);
	return off;
}

#define FULL_LEN (256 * KIB)
/* Only a scratch filesystem is filled: the guest's disks are 16-320 MiB.
 * On anything larger (the unit tests run the suite on the host's /var/tmp)
 * the test is a SKIP, never a full host disk. */
#define FULL_MAX_FS (1024 * KIB * KIB)

/*
 * A direct write into a file's own preallocated blocks needs no new data
 * space: with the filesystem full (fallocate until ENOSPC), direct writes
 * into the preallocated range must still succeed, whole, and read back
 * through every path. The filler is removed and the space given back
 * (syncfs) before the verdict, so later tests have room again.
 */
enum test_status test_full_prealloc(const struct suite_test *t,
				    const struct suite_env *env,
				    struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct image im;
	unsigned char *buf = NULL;
	char fill[sizeof(env->path) + 8];
	long long filled = -1;
	long i;
	int fd;

	(void)t;
	memset(&im, 0, sizeof(im));
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	{
		struct statfs sf;

		if (fstatfs(fd, &sf) != 0 ||
		    (long long)sf.f_blocks * (long long)sf.f_bsize > FULL_MAX_FS) {
			snprintf(d->skip_reason, sizeof(d->skip_reason),
				 "not a scratch filesystem (over 1 GiB or statfs failed): not filled");
			close(fd);
			return TEST_SKIP;
		}
	}
	snprintf(fill, sizeof(fill), "%s.fill", env->path);
	if (image_init(&im, FULL_LEN, d) != 0)
		goto out;
	buf = aligned(16 * KIB, d);
	if (buf == NULL) {
		im.bad++;
		goto out;
	}
	/* Four preallocated extents with holes between: a write into the
	 * middle of one splits it, and the extent list no longer fits where
	 * it was (ext4's inode holds four), so the split needs a new block. */
	for (i = 0; i < 4; i++) {
		if (falloc(fd, 0, i * FULL_LEN / 4, FULL_LEN / 8, "preallocate", 0, d) == 0)
			continue;
		needed(errno, "fallocate", &im, &st, d);
		goto out;
	}
	if (ftruncate(fd, FULL_LEN) != 0) {
		diag_add(d, "ftruncate to %ld: %s", FULL_LEN, strerror(errno));
		im.bad++;
		goto out;
	}
	image_truncate(&im, FULL_LEN);
	filled = fill_fs(fill, d);
	if (filled < 0) {
		needed(errno, "fallocate", &im, &st, d);
		goto out;
	}
	if (put(fd, buf, FULL_LEN / 4 + 8 * KIB, 16 * KIB, 1, &im,
		"filesystem full, direct write into the middle of a preallocated extent", d) == 0)
		put(fd, buf, 4 * KIB, 8 * KIB, 2, &im,
		    "filesystem full, second direct write into a preallocated extent", d);
	verify(env->path, &im, "filesystem full, after direct writes into preallocated blocks",
	       VIA_ALL, d);
	if (im.bad > 0)
		diag_add(d, "the filesystem was full: %lld bytes preallocated by the filler",
			 filled);
out:
	unlink(fill);
	syncfs(fd);
	return finish(fd, buf, &im, st);
}
