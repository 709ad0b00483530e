/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The suite's tests beyond sequential extension (issue 26): every way a
 * direct I/O is submitted (pwritev2/preadv2 and their RWF_ flags, native AIO
 * and io_uring through raw syscalls), every kind of user buffer (never
 * touched, partly unmapped, read-only, a file's mmap, many small segments,
 * several bios), every file layout under the I/O (holes, unwritten and mixed
 * extents, EOF, truncate, punch/zero/collapse, reflink, btrfs compressed and
 * inline extents), page-cache coherence and a bounded race.
 *
 * Each test keeps an image of what the file must hold (want[], size) and
 * checks it through O_DIRECT, buffered and mmap reads; a diagnostic says
 * which read, at which byte, what it found and what it expected. The table
 * rows are in suite.c; what each test means is in catalogue.h.
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
#include "dio.h"

#define BTRFS_MAGIC 0x9123683EU

/* The byte a test expects at file offset off: one letter per 512-byte
 * sector, shifted by seed, so a misplaced sector shows as a wrong letter. */
unsigned char pat(long long off, unsigned int seed)
{
	return (unsigned char)('a' + ((unsigned long long)(off >> 9) + seed) % 26);
}

void pat_fill(unsigned char *buf, size_t len, long long off,
		     unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pat(off + (long long)i, seed);
}

int image_init(struct image *im, size_t cap, struct diag *d)
{
	memset(im, 0, sizeof(*im));
	im->want = calloc(1, cap);
	if (im->want == NULL) {
		diag_add(d, "out of memory for a %zu byte image", cap);
		return -1;
	}
	im->cap = cap;
	return 0;
}

/* The file got len bytes of seed's pattern at off (len may be 0). */
void image_write(struct image *im, long long off, size_t len,
			unsigned int seed)
{
	if (off < 0 || (size_t)off + len > im->cap)
		return;
	pat_fill(im->want + off, len, off, seed);
	if (off + (long long)len > im->size)
		im->size = off + (long long)len;
}

static void image_zero(struct image *im, long long off, long long len)
{
	if (off < 0 || off >= (long long)im->cap)
		return;
	if (off + len > (long long)im->cap)
		len = (long long)im->cap - off;
	memset(im->want + off, 0, (size_t)len);
}

/* Truncate (or extend with zeros) to size. */
static void image_truncate(struct image *im, long long size)
{
	if (size < im->size)
		image_zero(im, size, im->size - size);
	im->size = size;
}

/* Caller frees with free(). */
unsigned char *aligned(size_t len, struct diag *d)
{
	void *p = NULL;
	int rc = posix_memalign(&p, PAGE, len > 0 ? len : 1);

	if (rc != 0) {
		diag_add(d, "posix_memalign(%zu): %s", len, strerror(rc));
		return NULL;
	}
	memset(p, 0, len);
	return p;
}

static long long round_up(long long v, long long a)
{
	return (v + a - 1) / a * a;
}

/* Compare have with the image at off; one line for the first difference. */
unsigned int compare(const char *how, const unsigned char *have,
			    const struct image *im, long long off, size_t len,
			    struct diag *d)
{
	size_t i, bad = 0, first_i = 0;

	for (i = 0; i < len; i++) {
		if (have[i] == im->want[off + (long long)i])
			continue;
		if (bad == 0)
			first_i = i;
		bad++;
	}
	if (bad > 0)
		diag_add(d, "%s: byte at %lld is %02x, expected %02x (%zu of %zu bytes wrong)",
			 how, off + (long long)first_i, have[first_i],
			 im->want[off + (long long)first_i], bad, len);
	return bad > 0;
}

/* The rest of the page that holds EOF, seen through a mapping, must be
 * zeros (mmap(2)): stale bytes there are disk blocks the file never wrote
 * (a sub-block direct write that did not zero its block's tail). */
static unsigned int past_eof(const char *how, const unsigned char *m,
			     long long size, size_t len, struct diag *d)
{
	size_t i;

	for (i = (size_t)size; i < len; i++)
		if (m[i] != 0)
			break;
	if (i == len)
		return 0;
	diag_add(d, "%s: byte at %zu, past EOF (%lld) in its page, is %02x, expected 00",
		 how, i, size, m[i]);
	return 1;
}

#define VIA_DIRECT 0x1
#define VIA_BUFFERED 0x2
#define VIA_MMAP 0x4
#define VIA_ALL (VIA_DIRECT | VIA_BUFFERED | VIA_MMAP)

/*
 * Check path against the image: st_size, then every byte through each read
 * path in how. step names the moment ("after truncate down"). Adds to
 * im->bad and returns the number of problems.
 */
static unsigned int verify(const char *path, struct image *im,
			   const char *step, unsigned int how, struct diag *d)
{
	unsigned int bad = 0;
	char label[112];
	struct stat st;
	unsigned char *buf = NULL;
	size_t len = (size_t)round_up(im->size, PAGE);
	int fd;

	if (stat(path, &st) != 0) {
		diag_add(d, "%s: stat: %s", step, strerror(errno));
		im->bad++;
		return 1;
	}
	if ((long long)st.st_size != im->size) {
		diag_add(d, "%s: st_size %lld, expected %lld", step,
			 (long long)st.st_size, im->size);
		bad++;
	}
	buf = aligned(len + PAGE, d);
	if (buf == NULL) {
		im->bad += bad + 1;
		return bad + 1;
	}
	if (how & VIA_DIRECT) {
		/* One read of the whole aligned length: it must stop at EOF. */
		fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
		if (fd < 0) {
			diag_add(d, "%s: open O_DIRECT: %s", step, strerror(errno));
			bad++;
		} else {
			ssize_t r = pread(fd, buf, len + PAGE, 0);

			snprintf(label, sizeof(label), "%s, direct read", step);
			if (r < 0) {
				diag_add(d, "%s: %s", label, strerror(errno));
				bad++;
			} else if ((long long)r != im->size) {
				diag_add(d, "%s returned %zd, expected %lld (st_size)",
					 label, r, im->size);
				bad++;
			} else {
				bad += compare(label, buf, im, 0, (size_t)r, d);
			}
			close(fd);
		}
	}
	if (how & VIA_BUFFERED) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			diag_add(d, "%s: open: %s", step, strerror(errno));
			bad++;
		} else {
			long long got = 0;
			ssize_t r;

			memset(buf, 0, len);
			while ((r = pread(fd, buf + got, len + PAGE - (size_t)got,
					  (off_t)got)) > 0)
				got += r;
			snprintf(label, sizeof(label), "%s, buffered read", step);
			if (r < 0) {
				diag_add(d, "%s: %s", label, strerror(errno));
				bad++;
			} else if (got != im->size) {
				diag_add(d, "%s returned %lld bytes, expected %lld",
					 label, got, im->size);
				bad++;
			} else {
				bad += compare(label, buf, im, 0, (size_t)got, d);
			}
			close(fd);
		}
	}
	/* A mapping past a short file's EOF would SIGBUS: its size is
	 * already reported above. */
	if ((how & VIA_MMAP) && im->size > 0 && (long long)st.st_size >= im->size) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);

			snprintf(label, sizeof(label), "%s, mmap read", step);
			if (m == MAP_FAILED) {
				diag_add(d, "%s: mmap: %s", label, strerror(errno));
				bad++;
			} else {
				bad += compare(label, m, im, 0, (size_t)im->size, d);
				bad += past_eof(label, m, im->size, len, d);
				munmap(m, len);
			}
			close(fd);
		}
	}
	free(buf);
	im->bad += bad;
	return bad;
}

/* New file for the test: O_RDWR|O_DIRECT|extra. -1 with the verdict set
 * (a skip when the filesystem refuses O_DIRECT). */
static int create(const struct suite_env *env, int extra, enum test_status *st,
		  struct diag *d)
{
	int fd = open(env->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC |
				 O_DIRECT | extra, 0600);

	if (fd >= 0)
		return fd;
	if (errno == EINVAL) {
		snprintf(d->skip_reason, sizeof(d->skip_reason),
			 "O_DIRECT not supported");
		*st = TEST_SKIP;
	} else {
		diag_add(d, "open %s: %s", env->path, strerror(errno));
		*st = TEST_FAIL;
	}
	return -1;
}

static void skip(struct diag *d, const char *what, int e)
{
	snprintf(d->skip_reason, sizeof(d->skip_reason), "%s: %s", what,
		 strerror(e));
}

/* An operation the test needs failed with errno e: a skip with the reason
 * when the filesystem does not have it (EOPNOTSUPP), else a problem. */
static void needed(int e, const char *what, struct image *im,
		   enum test_status *st, struct diag *d)
{
	if (e == EOPNOTSUPP) {
		skip(d, what, e);
		*st = TEST_SKIP;
	} else {
		im->bad++;
	}
}

/* A direct pwrite of seed's pattern that must be complete: 0, or -1 with a
 * diagnostic. buf holds at least len bytes. */
static int put(int fd, unsigned char *buf, long long off, size_t len,
	       unsigned int seed, struct image *im, const char *what,
	       struct diag *d)
{
	ssize_t r;

	pat_fill(buf, len, off, seed);
	r = pwrite(fd, buf, len, (off_t)off);
	if (r < 0) {
		diag_add(d, "%s: pwrite of %zu bytes at %lld: %s", what, len, off,
			 strerror(errno));
		im->bad++;
		return -1;
	}
	if ((size_t)r != len) {
		diag_add(d, "%s: pwrite of %zu bytes at %lld returned %zd", what,
			 len, off, r);
		im->bad++;
		if (r > 0)
			image_write(im, off, (size_t)r, seed);
		return -1;
	}
	image_write(im, off, len, seed);
	return 0;
}

/* 0, or -1 with errno; a diagnostic only for an error that counts (not
 * EOPNOTSUPP, nor an error listed in tolerated). */
static int falloc(int fd, int mode, long long off, long long len,
		  const char *what, int tolerated, struct diag *d)
{
	int e;

	if (fallocate(fd, mode, (off_t)off, (off_t)len) == 0)
		return 0;
	e = errno;
	if (e != EOPNOTSUPP && e != tolerated)
		diag_add(d, "fallocate %s at %lld+%lld: %s", what, off, len,
			 strerror(e));
	errno = e;
	return -1;
}

static enum test_status verdict(const struct image *im)
{
	return im->bad == 0 ? TEST_PASS : TEST_FAIL;
}

void image_free(struct image *im)
{
	free(im->want);
	im->want = NULL;
}

/* The end of a test on one file: closes fd, frees buf and the image; the
 * verdict from the image unless st is a skip. */
static enum test_status finish(int fd, unsigned char *buf, struct image *im,
			       enum test_status st)
{
	close(fd);
	free(buf);
	if (st != TEST_SKIP)
		st = verdict(im);
	image_free(im);
	return st;
}

/* ---- submission: pwritev2/preadv2 at offsets and with RWF_ flags ---- */

/*
 * Three writes of uneven iovecs at offsets in a sparse file (one past a
 * 1 MiB hole), with the row's RWF_ flags; preadv2 reads every range back
 * with another segmentation. A positional call leaves the file position
 * alone; offset -1 uses and advances it.
 */
enum test_status test_rwf_offsets(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d)
{
	static const long long offs[3] = { 0, 1024 * KIB + 8192, 64 * KIB };
	static const size_t segs[3][3] = { { 4096, 12288, 8192 },
					   { 8192, 4096, 4096 },
					   { 4096, 4096, 4096 } };
	enum test_status st = TEST_FAIL;
	struct image im;
	unsigned char *buf = NULL, *rbuf = NULL;
	unsigned int i, k;
	int fd;

	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, 2048 * KIB, d) != 0)
		goto out;
	buf = aligned(64 * KIB, d);
	rbuf = aligned(64 * KIB, d);
	if (buf == NULL || rbuf == NULL) {
		im.bad++;
		goto out;
	}
	for (i = 0; i < 3; i++) {
		struct iovec iov[3];
		size_t total = 0, at = 0;
		ssize_t r;

		for (k = 0; k < 3; k++) {
			iov[k].iov_base = buf + at;
			iov[k].iov_len = segs[i][k];
			at += segs[i][k];
		}
		total = at;
		pat_fill(buf, total, offs[i], i + 1);
		r = pwritev2(fd, iov, 3, (off_t)offs[i], (int)t->rwf);
		if (r < 0 && (errno == EOPNOTSUPP || errno == ENOSYS)) {
			skip(d, "pwritev2 with these flags", errno);
			st = TEST_SKIP;
			goto out;
		}
		if (r < 0 || (size_t)r != total) {
			diag_add(d, "pwritev2 %u of 3 (%zu bytes at %lld, flags %#x) returned %zd%s%s, expected %zu",
				 i + 1, total, offs[i], t->rwf, r,
				 r < 0 ? ": " : "", r < 0 ? strerror(errno) : "",
				 total);
			im.bad++;
			goto out;
		}
		image_write(&im, offs[i], total, i + 1);
		if (lseek(fd, 0, SEEK_CUR) != 0) {
			diag_add(d, "pwritev2 %u of 3 moved the file position to %lld, expected 0",
				 i + 1, (long long)lseek(fd, 0, SEEK_CUR));
			im.bad++;
		}
	}
	/* Read back with the segments in another order and the row's flags
	 * minus the write-only ones. */
	for (i = 0; i < 3; i++) {
		struct iovec iov[3];
		size_t at = 0;
		ssize_t r;
		char label[48];

		for (k = 0; k < 3; k++) {
			iov[k].iov_base = rbuf + at;
			iov[k].iov_len = segs[i][2 - k];
			at += segs[i][2 - k];
		}
		memset(rbuf, 0, at);
		r = preadv2(fd, iov, 3, (off_t)offs[i],
			    (int)(t->rwf & (unsigned int)RWF_HIPRI));
		snprintf(label, sizeof(label), "preadv2 %u of 3", i + 1);
		if (r < 0 || (size_t)r != at) {
			diag_add(d, "%s (%zu bytes at %lld) returned %zd, expected %zu",
				 label, at, offs[i], r, at);
			im.bad++;
			continue;
		}
		im.bad += compare(label, rbuf, &im, offs[i], at, d);
	}
	/* offset -1: the file position is used and advanced. */
	if (lseek(fd, (off_t)(128 * KIB), SEEK_SET) == (off_t)(128 * KIB)) {
		struct iovec iov = { .iov_base = buf, .iov_len = 8192 };
		ssize_t r;

		pat_fill(buf, 8192, 128 * KIB, 9);
		r = pwritev2(fd, &iov, 1, -1, (int)t->rwf);
		if (r != 8192) {
			diag_add(d, "pwritev2 at offset -1 (position 131072) returned %zd, expected 8192",
				 r);
			im.bad++;
		} else {
			image_write(&im, 128 * KIB, 8192, 9);
			if (lseek(fd, 0, SEEK_CUR) != (off_t)(136 * KIB)) {
				diag_add(d, "pwritev2 at offset -1: position %lld, expected %ld",
					 (long long)lseek(fd, 0, SEEK_CUR), 136 * KIB);
				im.bad++;
			}
		}
	}
	verify(env->path, &im, "after pwritev2", VIA_ALL, d);
out:
	close(fd);
	free(buf);
	free(rbuf);
	if (st != TEST_SKIP)
		st = verdict(&im);
	image_free(&im);
	return st;
}

/*
 * Since 6.0 a RWF_NOWAIT write that must update the file's times fails
 * with EAGAIN in kiocb_modified() before the filesystem maps anything,
 * which hides what xfs does with one over [written][hole] (883a790a8440:
 * write the first extent, then EAGAIN for the allocation). A blocking
 * rewrite of the written part (the same bytes) makes the times current; a
 * RWF_NOWAIT write in the same clock tick then reaches the mapping. A tick
 * can end in between, so it is retried, at most NOWAIT_TICK_TRIES times:
 * the first attempt that does not EAGAIN ends it, and every EAGAIN must
 * have left the bytes alone. buf: 64 KiB, aligned.
 */
#define NOWAIT_TICK_TRIES 200
static void nowait_in_tick(int fd, unsigned char *buf, struct image *im,
			   struct diag *d)
{
	const long long pre = 48 * KIB, off = 56 * KIB;
	const size_t len = 16 * KIB;
	unsigned char *rbuf = buf + 32 * KIB;
	unsigned int attempt;

	for (attempt = 1; attempt <= NOWAIT_TICK_TRIES; attempt++) {
		struct iovec iov = { .iov_base = buf, .iov_len = len };
		char label[128];
		ssize_t r;
		int e;

		memcpy(buf, im->want + pre, 16 * KIB);
		if (pwrite(fd, buf, 16 * KIB, (off_t)pre) != 16 * KIB) {
			diag_add(d, "rewrite of 16384 at %lld before RWF_NOWAIT: %s",
				 pre, strerror(errno));
			im->bad++;
			return;
		}
		pat_fill(buf, len, off, 6);
		r = pwritev2(fd, &iov, 1, (off_t)off, RWF_NOWAIT);
		e = errno;
		if (r < 0 && e != EAGAIN) {
			diag_add(d, "RWF_NOWAIT written+hole write at %lld (attempt %u): %s, expected success or EAGAIN",
				 off, attempt, strerror(e));
			im->bad++;
			return;
		}
		if (r > 0)
			image_write(im, off, (size_t)r, 6);
		if (pread(fd, rbuf, len, (off_t)off) != (ssize_t)len) {
			diag_add(d, "pread of %zu at %lld after RWF_NOWAIT: %s", len,
				 off, strerror(errno));
			im->bad++;
			return;
		}
		snprintf(label, sizeof(label),
			 "RWF_NOWAIT written+hole write at %lld in the tick of a blocking write (attempt %u of %u) returned %s",
			 off, attempt, NOWAIT_TICK_TRIES,
			 r < 0 ? "EAGAIN" : (size_t)r == len ? "all" : "short");
		if (compare(label, rbuf, im, off, len, d) != 0) {
			im->bad++;
			return;
		}
		if (r >= 0)
			return;
	}
}

/*
 * RWF_NOWAIT writes over allocated blocks, into a hole and past EOF: each
 * may complete (fully or short) or fail with EAGAIN, and EAGAIN must mean
 * that nothing was written: neither the bytes nor st_size changed.
 */
enum test_status test_nowait(const struct suite_test *t,
			     const struct suite_env *env, struct diag *d)
{
	static const struct {
		long long off;
		size_t len;
		const char *what;
	} steps[] = {
		{ 16 * KIB, 16 * KIB, "overwrite" },
		/* One I/O over two extents: btrfs (ca93e44bfb5f) and xfs
		 * refuse it up front rather than write a part and EAGAIN. */
		{ 80 * KIB, 32 * KIB, "unwritten+hole" },
		{ 112 * KIB, 16 * KIB, "hole" },
		{ 160 * KIB, 16 * KIB, "past EOF" },
		{ 56 * KIB, 16 * KIB, "written+hole" },
	};
	enum test_status st = TEST_FAIL;
	struct image im;
	unsigned char *buf = NULL;
	unsigned int i, again = 0;
	int fd;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, 256 * KIB, d) != 0)
		goto out;
	buf = aligned(64 * KIB, d);
	if (buf == NULL) {
		im.bad++;
		goto out;
	}
	/* [0, 64K) written and synced, [64K, 128K) a hole, then 128K: size. */
	if (put(fd, buf, 0, 64 * KIB, 0, &im, "prefill", d) != 0)
		goto out;
	if (ftruncate(fd, 128 * KIB) != 0 || fsync(fd) != 0) {
		diag_add(d, "ftruncate/fsync: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	image_truncate(&im, 128 * KIB);
	/* The holes must be holes: xfs may have allocated the prefill's
	 * extent past 64K (EOF alignment), as unwritten blocks a NOWAIT write
	 * may use without allocating, and 883a790a8440's bug (the first
	 * extent written, then EAGAIN for the allocation) needs a real hole
	 * after the written extent. */
	if (falloc(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 64 * KIB,
		   64 * KIB, "punch hole", 0, d) != 0 && errno != EOPNOTSUPP) {
		im.bad++;
		goto out;
	}
	if (falloc(fd, 0, 80 * KIB, 16 * KIB, "unwritten extent", 0, d) != 0 &&
	    errno != EOPNOTSUPP) {
		im.bad++;
		goto out;
	}
	if (fsync(fd) != 0) {
		diag_add(d, "fsync after the layout: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct iovec iov = { .iov_base = buf, .iov_len = steps[i].len };
		char step[64];
		ssize_t r;

		pat_fill(buf, steps[i].len, steps[i].off, i + 1);
		r = pwritev2(fd, &iov, 1, (off_t)steps[i].off, RWF_NOWAIT);
		if (r < 0 && errno == EOPNOTSUPP && i == 0) {
			skip(d, "RWF_NOWAIT write", errno);
			st = TEST_SKIP;
			goto out;
		}
		if (r < 0 && errno == EAGAIN) {
			again++;
		} else if (r < 0) {
			diag_add(d, "RWF_NOWAIT %s write at %lld failed: %s, expected success or EAGAIN",
				 steps[i].what, steps[i].off, strerror(errno));
			im.bad++;
		} else if ((size_t)r > steps[i].len) {
			diag_add(d, "RWF_NOWAIT %s write at %lld returned %zd, more than the %zu asked",
				 steps[i].what, steps[i].off, r, steps[i].len);
			im.bad++;
		} else {
			image_write(&im, steps[i].off, (size_t)r, i + 1);
		}
		snprintf(step, sizeof(step), "after RWF_NOWAIT %s write (%s)",
			 steps[i].what, r < 0 ? (errno == EAGAIN ? "EAGAIN" : "error") :
			 r == (ssize_t)steps[i].len ? "done" : "short");
		/* Direct reads only: a cached page in the range makes every
		 * later RWF_NOWAIT write EAGAIN before it reaches the
		 * filesystem, and the filesystem is what this checks. */
		verify(env->path, &im, step, VIA_DIRECT, d);
		/* A read with RWF_NOWAIT: all of it, or EAGAIN. */
		{
			struct iovec riov = { .iov_base = buf, .iov_len = 16 * KIB };

			memset(buf, 0, 16 * KIB);
			r = preadv2(fd, &riov, 1, 0, RWF_NOWAIT);
			if (r == 16 * KIB)
				im.bad += compare("RWF_NOWAIT read at 0", buf, &im,
						  0, 16 * KIB, d);
			else if (!(r < 0 && errno == EAGAIN)) {
				diag_add(d, "RWF_NOWAIT read of 16384 at 0 returned %zd%s%s, expected 16384 or EAGAIN",
					 r, r < 0 ? ": " : "",
					 r < 0 ? strerror(errno) : "");
				im.bad++;
			}
		}
	}
	nowait_in_tick(fd, buf, &im, d);
	verify(env->path, &im, "after the RWF_NOWAIT writes", VIA_ALL, d);
	if (im.bad > 0)
		diag_add(d, "%u of %zu RWF_NOWAIT writes returned EAGAIN", again,
			 sizeof(steps) / sizeof(steps[0]));
out:
	return finish(fd, buf, &im, st);
}

/*
 * Appends that are not plain write()s: pwritev2(RWF_APPEND) at offset 0
 * and at -1, and pwrite() on an O_APPEND descriptor (Linux appends whatever
 * the offset). Each must land at EOF.
 */
enum test_status test_append_flags(const struct suite_test *t,
				   const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct image im;
	unsigned char *buf = NULL;
	struct iovec iov;
	ssize_t r;
	int fd, afd = -1;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, 128 * KIB, d) != 0)
		goto out;
	buf = aligned(16 * KIB, d);
	if (buf == NULL) {
		im.bad++;
		goto out;
	}
	if (put(fd, buf, 0, 16 * KIB, 0, &im, "prefill", d) != 0)
		goto out;
	iov.iov_base = buf;
	iov.iov_len = 8 * KIB;
	pat_fill(buf, 8 * KIB, 16 * KIB, 1);
	r = pwritev2(fd, &iov, 1, 0, RWF_APPEND);
	if (r < 0 && (errno == EOPNOTSUPP || errno == EINVAL)) {
		skip(d, "pwritev2 RWF_APPEND", errno);
		st = TEST_SKIP;
		goto out;
	}
	if (r != 8 * KIB) {
		diag_add(d, "pwritev2(RWF_APPEND) of 8192 at offset 0 returned %zd, expected 8192", r);
		im.bad++;
		goto out;
	}
	image_write(&im, 16 * KIB, 8 * KIB, 1);
	verify(env->path, &im, "after RWF_APPEND at offset 0", VIA_DIRECT, d);
	/* offset -1 from position 0: appends and moves the position to EOF. */
	lseek(fd, 0, SEEK_SET);
	pat_fill(buf, 8 * KIB, 24 * KIB, 2);
	r = pwritev2(fd, &iov, 1, -1, RWF_APPEND);
	if (r != 8 * KIB) {
		diag_add(d, "pwritev2(RWF_APPEND) of 8192 at offset -1 returned %zd, expected 8192", r);
		im.bad++;
		goto out;
	}
	image_write(&im, 24 * KIB, 8 * KIB, 2);
	if (lseek(fd, 0, SEEK_CUR) != (off_t)(32 * KIB)) {
		diag_add(d, "pwritev2(RWF_APPEND) at offset -1: position %lld, expected 32768",
			 (long long)lseek(fd, 0, SEEK_CUR));
		im.bad++;
	}
	verify(env->path, &im, "after RWF_APPEND at offset -1", VIA_DIRECT, d);
	afd = open(env->path, O_WRONLY | O_APPEND | O_DIRECT | O_CLOEXEC);
	if (afd < 0) {
		diag_add(d, "open O_APPEND: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	pat_fill(buf, 16 * KIB, 32 * KIB, 3);
	r = pwrite(afd, buf, 16 * KIB, 0);
	if (r != 16 * KIB) {
		diag_add(d, "pwrite of 16384 at 0 on O_APPEND returned %zd, expected 16384", r);
		im.bad++;
		goto out;
	}
	image_write(&im, 32 * KIB, 16 * KIB, 3);
	verify(env->path, &im, "after pwrite on O_APPEND", VIA_ALL, d);
out:
	if (afd >= 0)
		close(afd);
	return finish(fd, buf, &im, st);
}

/* ---- submission: native AIO and io_uring, raw syscalls ---- */

#define ASYNC_N 4
#define ASYNC_LEN (16 * KIB)
/* Out of order and extending: the last block is written first. */
static const long long async_offs[ASYNC_N] = { 48 * KIB, 0, 32 * KIB, 16 * KIB };

/*
 * Four writes in one io_submit (out of order, extending the file), then
 * four reads in one io_submit; every event's res must be the full length.
 */
enum test_status test_aio(const struct suite_test *t,
			  const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	aio_context_t ctx = 0;
	struct iocb cbs[ASYNC_N], *cbp[ASYNC_N];
	struct io_event ev[ASYNC_N];
	struct image im;
	unsigned char *buf = NULL;
	unsigned int i, pass;
	int fd;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, 64 * KIB, d) != 0)
		goto out;
	buf = aligned(ASYNC_N * ASYNC_LEN, d);
	if (buf == NULL) {
		im.bad++;
		goto out;
	}
	if (syscall(__NR_io_setup, ASYNC_N, &ctx) != 0) {
		skip(d, "io_setup (native AIO, CONFIG_AIO)", errno);
		st = TEST_SKIP;
		goto out;
	}
	for (pass = 0; pass < 2; pass++) {
		const char *op = pass == 0 ? "write" : "read";
		long got = 0, n;

		memset(cbs, 0, sizeof(cbs));
		for (i = 0; i < ASYNC_N; i++) {
			unsigned char *b = buf + i * ASYNC_LEN;

			if (pass == 0)
				pat_fill(b, ASYNC_LEN, async_offs[i], 1);
			else
				memset(b, 0, ASYNC_LEN);
			cbs[i].aio_data = i;
			cbs[i].aio_fildes = (uint32_t)fd;
			cbs[i].aio_lio_opcode = pass == 0 ? IOCB_CMD_PWRITE :
							    IOCB_CMD_PREAD;
			cbs[i].aio_buf = (uint64_t)(uintptr_t)b;
			cbs[i].aio_nbytes = ASYNC_LEN;
			cbs[i].aio_offset = async_offs[i];
			cbp[i] = &cbs[i];
		}
		n = syscall(__NR_io_submit, ctx, (long)ASYNC_N, cbp);
		if (n != ASYNC_N) {
			diag_add(d, "io_submit of %d %ss returned %ld%s%s", ASYNC_N,
				 op, n, n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
			im.bad++;
			if (n <= 0)
				goto destroy;
		}
		while (got < n) {
			long r = aio_getevents(ctx, 1L, (long)(n - got), ev);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				diag_add(d, "io_getevents: %s", strerror(errno));
				im.bad++;
				goto destroy;
			}
			for (i = 0; i < (unsigned int)r; i++) {
				unsigned int k = (unsigned int)ev[i].data;

				if (k >= ASYNC_N || ev[i].res != ASYNC_LEN) {
					diag_add(d, "aio %s %u at %lld: res %lld, expected %ld",
						 op, k, k < ASYNC_N ? async_offs[k] : -1,
						 (long long)ev[i].res, ASYNC_LEN);
					im.bad++;
					continue;
				}
				if (pass == 0)
					image_write(&im, async_offs[k], ASYNC_LEN, 1);
				else
					im.bad += compare("aio read", buf + k * ASYNC_LEN,
							  &im, async_offs[k],
							  ASYNC_LEN, d);
			}
			got += r;
		}
	}
	verify(env->path, &im, "after aio", VIA_BUFFERED | VIA_MMAP, d);
destroy:
	syscall(__NR_io_destroy, ctx);
out:
	return finish(fd, buf, &im, st);
}

void ring_close(struct ring *r)
{
	if (r->sqes != NULL && r->sqes != MAP_FAILED)
		munmap(r->sqes, r->sqes_len);
	if (r->cq != NULL && r->cq != MAP_FAILED)
		munmap(r->cq, r->cq_len);
	if (r->sq != NULL && r->sq != MAP_FAILED)
		munmap(r->sq, r->sq_len);
	if (r->fd >= 0)
		close(r->fd);
}

long aio_getevents(aio_context_t ctx, long min, long nr, struct io_event *ev)
{
#ifdef __NR_io_pgetevents_time64
	long r = syscall(__NR_io_pgetevents_time64, ctx, min, nr, ev, NULL,
			 NULL);

	if (r >= 0 || errno != ENOSYS)
		return r;
#endif
	return syscall(__NR_io_getevents, ctx, min, nr, ev, NULL);
}

/* 0, or -1 with errno (ENOSYS: no io_uring in this kernel). */
int ring_open(struct ring *r, unsigned int entries)
{
	memset(r, 0, sizeof(*r));
	r->fd = (int)syscall(__NR_io_uring_setup, entries, &r->p);
	if (r->fd < 0)
		return -1;
	r->sq_len = r->p.sq_off.array + r->p.sq_entries * sizeof(uint32_t);
	r->cq_len = r->p.cq_off.cqes +
		    r->p.cq_entries * sizeof(struct io_uring_cqe);
	r->sqes_len = r->p.sq_entries * sizeof(struct io_uring_sqe);
	r->sq = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	r->cq = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->sq == MAP_FAILED || r->cq == MAP_FAILED || r->sqes == MAP_FAILED) {
		int e = errno;

		ring_close(r);
		errno = e;
		return -1;
	}
	return 0;
}

uint32_t *ring_u32(void *base, uint32_t off)
{
	return (uint32_t *)((char *)base + off);
}

/* Queue one sqe (the caller makes sure there is room). */
void ring_queue(struct ring *r, uint8_t op, int fd, void *iov,
		       unsigned int nr, long long off, uint64_t data)
{
	ring_queue_flags(r, op, fd, iov, nr, off, data, 0);
}

void ring_queue_flags(struct ring *r, uint8_t op, int fd, void *iov,
		      unsigned int nr, long long off, uint64_t data,
		      uint32_t rw_flags)
{
	uint32_t tail = *ring_u32(r->sq, r->p.sq_off.tail);
	uint32_t idx = tail & *ring_u32(r->sq, r->p.sq_off.ring_mask);
	struct io_uring_sqe *sqe = &r->sqes[idx];

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = op;
	sqe->fd = fd;
	sqe->addr = (uint64_t)(uintptr_t)iov;
	sqe->len = nr;
	sqe->off = (uint64_t)off;
	sqe->user_data = data;
	sqe->rw_flags = (__kernel_rwf_t)rw_flags;
	ring_u32(r->sq, r->p.sq_off.array)[idx] = idx;
	__atomic_store_n(ring_u32(r->sq, r->p.sq_off.tail), tail + 1,
			 __ATOMIC_RELEASE);
}

int ring_wait_cqe(struct ring *r, struct io_uring_cqe *out)
{
	uint32_t *headp = ring_u32(r->cq, r->p.cq_off.head);
	struct io_uring_cqe *cqes =
		(struct io_uring_cqe *)((char *)r->cq + r->p.cq_off.cqes);

	while (__atomic_load_n(ring_u32(r->cq, r->p.cq_off.tail),
			       __ATOMIC_ACQUIRE) == *headp) {
		if (syscall(__NR_io_uring_enter, r->fd, 0, 1,
			    IORING_ENTER_GETEVENTS, NULL, 0) < 0 && errno != EINTR)
			return -1;
	}
	*out = cqes[*headp & *ring_u32(r->cq, r->p.cq_off.ring_mask)];
	__atomic_store_n(headp, *headp + 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Four writev sqes in one io_uring_enter (out of order, extending), then
 * four readv; every cqe's res must be the full length.
 */
enum test_status test_uring(const struct suite_test *t,
			    const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct ring ring = { .fd = -1 };
	struct iovec iov[ASYNC_N];
	struct image im;
	unsigned char *buf = NULL;
	unsigned int i, pass;
	int fd;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, 192 * KIB, d) != 0)
		goto out;
	buf = aligned(ASYNC_N * ASYNC_LEN, d);
	if (buf == NULL) {
		im.bad++;
		goto out;
	}
	if (ring_open(&ring, 8) != 0) {
		skip(d, "io_uring_setup (CONFIG_IO_URING)", errno);
		st = TEST_SKIP;
		goto out;
	}
	for (pass = 0; pass < 2; pass++) {
		const char *op = pass == 0 ? "writev" : "readv";
		unsigned int got = 0;

		for (i = 0; i < ASYNC_N; i++) {
			unsigned char *b = buf + i * ASYNC_LEN;

			if (pass == 0)
				pat_fill(b, ASYNC_LEN, async_offs[i], 2);
			else
				memset(b, 0, ASYNC_LEN);
			iov[i].iov_base = b;
			iov[i].iov_len = ASYNC_LEN;
			ring_queue(&ring, pass == 0 ? IORING_OP_WRITEV :
						      IORING_OP_READV,
				   fd, &iov[i], 1, async_offs[i], i);
		}
		{
			long n = syscall(__NR_io_uring_enter, ring.fd, ASYNC_N,
					 ASYNC_N, IORING_ENTER_GETEVENTS, NULL, 0);

			if (n != ASYNC_N) {
				diag_add(d, "io_uring_enter of %d %s returned %ld%s%s",
					 ASYNC_N, op, n, n < 0 ? ": " : "",
					 n < 0 ? strerror(errno) : "");
				im.bad++;
				goto done;
			}
		}
		for (; got < ASYNC_N; got++) {
			struct io_uring_cqe c;
			uint64_t k;

			if (ring_wait_cqe(&ring, &c) != 0) {
				diag_add(d, "io_uring_enter (wait): %s", strerror(errno));
				im.bad++;
				goto done;
			}
			k = c.user_data;
			if (k >= ASYNC_N || c.res != ASYNC_LEN) {
				diag_add(d, "io_uring %s %u at %lld: res %d%s%s, expected %ld",
					 op, (unsigned int)k,
					 k < ASYNC_N ? async_offs[k] : -1, c.res,
					 c.res < 0 ? " " : "",
					 c.res < 0 ? strerror(-c.res) : "", ASYNC_LEN);
				im.bad++;
				continue;
			}
			if (pass == 0)
				image_write(&im, async_offs[k], ASYNC_LEN, 2);
			else
				im.bad += compare("io_uring read", buf + k * ASYNC_LEN,
						  &im, async_offs[k], ASYNC_LEN, d);
		}
	}
	verify(env->path, &im, "after io_uring", VIA_BUFFERED | VIA_MMAP, d);
	/*
	 * One read across written extents and holes into a never-touched
	 * buffer: io_uring first tries it non-blocking, and the filesystem
	 * must not return (or queue) a part of it as the whole (fstests
	 * generic/676, MariaDB on btrfs, ca93e44bfb5f).
	 */
	if (put(fd, buf, 96 * KIB, 16 * KIB, 3, &im, "extent after a hole", d) != 0 ||
	    put(fd, buf, 160 * KIB, 16 * KIB, 4, &im, "extent after a hole", d) != 0)
		goto done;
	{
		const size_t len = 144 * KIB;
		struct iovec riov;
		unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		long n;

		if (m == MAP_FAILED) {
			diag_add(d, "mmap: %s", strerror(errno));
			im.bad++;
			goto done;
		}
		riov.iov_base = m;
		riov.iov_len = len;
		ring_queue(&ring, IORING_OP_READV, fd, &riov, 1, 32 * KIB, 7);
		n = syscall(__NR_io_uring_enter, ring.fd, 1, 1,
			    IORING_ENTER_GETEVENTS, NULL, 0);
		if (n != 1) {
			diag_add(d, "io_uring_enter of a readv across extents returned %ld", n);
			im.bad++;
		} else {
			struct io_uring_cqe c;

			if (ring_wait_cqe(&ring, &c) != 0) {
				diag_add(d, "io_uring readv across extents: no completion: %s",
					 strerror(errno));
				im.bad++;
			} else if (c.res != (int)len) {
				diag_add(d, "io_uring readv of %zu at 32768 across extents and holes into an untouched buffer: res %d, expected %zu",
					 len, c.res, len);
				im.bad++;
			} else {
				im.bad += compare("io_uring readv across extents", m,
						  &im, 32 * KIB, len, d);
			}
		}
		munmap(m, len);
	}
done:
	ring_close(&ring);
out:
	return finish(fd, buf, &im, st);
}

/* ---- user buffers ---- */

/*
 * A 16 KiB buffer whose third page is unmapped. A direct write from it
 * must fail with EFAULT or stop short (at most the 8 KiB before the hole),
 * and the file must hold exactly what the return value says. A direct
 * read into it likewise, and a read into a read-only mapping must write
 * nothing. A write from a read-only mapping is an ordinary write.
 */
enum test_status test_efault(const struct suite_test *t,
			     const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct image im;
	unsigned char *m = MAP_FAILED, *buf = NULL;
	size_t len = 4 * PAGE;
	ssize_t r;
	int fd;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, 64 * KIB, d) != 0)
		goto out;
	buf = aligned(len, d);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (buf == NULL || m == MAP_FAILED) {
		diag_add(d, "buffers: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	pat_fill(m, len, 0, 1);
	munmap(m + 2 * PAGE, PAGE);
	r = pwrite(fd, m, len, 0);
	if (r < 0 && errno == EFAULT) {
		/* Nothing claimed written: st_size must not promise data. */
		struct stat sb;

		if (fstat(fd, &sb) == 0 && sb.st_size > 2 * PAGE) {
			diag_add(d, "write with an unmapped 3rd page: EFAULT but st_size %lld, expected <= 8192",
				 (long long)sb.st_size);
			im.bad++;
		}
		/* A partial write may have happened; take what is there as
		 * long as it is the pattern or zeros (never other bytes). */
		if (fstat(fd, &sb) == 0 && sb.st_size > 0 && sb.st_size <= 2 * PAGE) {
			unsigned char *rb = aligned((size_t)2 * PAGE, d);

			if (rb != NULL && pread(fd, rb, 2 * PAGE, 0) == sb.st_size) {
				long long i;

				for (i = 0; i < sb.st_size; i++)
					if (rb[i] != 0 && rb[i] != pat(i, 1))
						break;
				if (i < sb.st_size) {
					diag_add(d, "after EFAULT write: byte at %lld is %02x, expected %02x or 00",
						 i, rb[i], pat(i, 1));
					im.bad++;
				}
				memcpy(im.want, rb, (size_t)sb.st_size);
			}
			free(rb);
			im.size = sb.st_size;
		}
	} else if (r < 0 || r > 2 * PAGE) {
		diag_add(d, "write of 16384 with an unmapped 3rd page returned %zd%s%s, expected EFAULT or <= 8192",
			 r, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
		im.bad++;
	} else {
		image_write(&im, 0, (size_t)r, 1);
	}
	verify(env->path, &im, "after write from a partly unmapped buffer",
	       VIA_DIRECT | VIA_BUFFERED, d);
	/* The file is now 16 KiB of pattern 2, read into the holed buffer. */
	if (ftruncate(fd, 0) != 0) {
		diag_add(d, "ftruncate: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	image_truncate(&im, 0);
	if (put(fd, buf, 0, len, 2, &im, "prefill", d) != 0)
		goto out;
	memset(m, 0, 2 * PAGE);
	r = pread(fd, m, len, 0);
	if (r < 0 && errno == EFAULT) {
		/* fine: nothing promised */
	} else if (r < 0 || r > 2 * PAGE) {
		diag_add(d, "read of 16384 into a buffer with an unmapped 3rd page returned %zd%s%s, expected EFAULT or <= 8192",
			 r, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
		im.bad++;
	} else {
		im.bad += compare("short read into a partly unmapped buffer", m,
				  &im, 0, (size_t)r, d);
	}
	/* Read-only buffers: a write from one works, a read into one must
	 * fail without changing anything. */
	mprotect(m, 2 * PAGE, PROT_READ);
	r = pread(fd, m, 2 * PAGE, 0);
	if (r != -1 || errno != EFAULT) {
		diag_add(d, "read into a read-only buffer returned %zd%s%s, expected EFAULT",
			 r, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
		im.bad++;
	}
	/* Over a hole the kernel zeroes the user buffer instead of reading
	 * the disk: that path must fail with EFAULT as well (42c498c18a94),
	 * not return 0 as if the hole were at EOF. */
	if (ftruncate(fd, 32 * KIB) != 0) {
		diag_add(d, "ftruncate 32768: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	image_truncate(&im, 32 * KIB);
	r = pread(fd, m, 2 * PAGE, 16 * KIB);
	if (r != -1 || errno != EFAULT) {
		diag_add(d, "read of a hole into a read-only buffer returned %zd%s%s, expected EFAULT",
			 r, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
		im.bad++;
	}
	memset(buf, 0, len);
	mprotect(m, 2 * PAGE, PROT_READ | PROT_WRITE);
	pat_fill(m, 2 * PAGE, 8 * KIB, 3);
	mprotect(m, 2 * PAGE, PROT_READ);
	r = pwrite(fd, m, 2 * PAGE, 8 * KIB);
	if (r != 2 * PAGE) {
		diag_add(d, "write of 8192 from a read-only buffer returned %zd%s%s, expected 8192",
			 r, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
		im.bad++;
	} else {
		image_write(&im, 8 * KIB, 2 * PAGE, 3);
	}
	verify(env->path, &im, "after the read-only buffers", VIA_ALL, d);
out:
	if (m != MAP_FAILED) {
		munmap(m, 2 * PAGE);
		munmap(m + 3 * PAGE, PAGE);
	}
	close(fd);
	free(buf);
	st = verdict(&im);
	image_free(&im);
	return st;
}

#define MB_LEN (256 * KIB)

/*
 * Direct I/O whose user pages are not present yet, so the kernel must
 * fault them in half-way (fstests generic/708 and generic/362): the result
 * must be complete and the bytes, size and position right.
 */
enum test_status test_mmap_buffer(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct image im;
	unsigned char *buf = NULL, *m = MAP_FAILED;
	char srcpath[4200];
	long long base = 0;
	size_t mlen = MB_LEN;
	ssize_t r;
	int fd, sfd = -1;

	fd = create(env, (t->flags & MB_FILE_APPEND) ? O_APPEND : 0, &st, d);
	if (fd < 0)
		return st;
	snprintf(srcpath, sizeof(srcpath), "%s.src", env->path);
	if (image_init(&im, 2 * MB_LEN, d) != 0)
		goto out;
	buf = aligned(MB_LEN, d);
	if (buf == NULL) {
		im.bad++;
		goto out;
	}
	if (t->flags & MB_FRESH_READ) {
		if (put(fd, buf, 0, MB_LEN, 1, &im, "prefill", d) != 0)
			goto out;
		m = mmap(NULL, MB_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			diag_add(d, "mmap: %s", strerror(errno));
			im.bad++;
			goto out;
		}
		r = pread(fd, m, MB_LEN, 0);
		if (r != MB_LEN) {
			diag_add(d, "read of %ld into a never-touched mmap returned %zd%s%s",
				 MB_LEN, r, r < 0 ? ": " : "",
				 r < 0 ? strerror(errno) : "");
			im.bad++;
			goto out;
		}
		im.bad += compare("read into a never-touched mmap", m, &im, 0,
				  MB_LEN, d);
		goto check;
	}
	if (t->flags & MB_SAME_FILE) {
		/* The source is [0, 128K) of the file, the target [128K, 256K). */
		if (put(fd, buf, 0, MB_LEN, 1, &im, "prefill", d) != 0)
			goto out;
		mlen = MB_LEN / 2;
		m = mmap(NULL, mlen, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			diag_add(d, "mmap of the file itself: %s", strerror(errno));
			im.bad++;
			goto out;
		}
		r = pwrite(fd, m, mlen, (off_t)mlen);
		if (r != (ssize_t)mlen) {
			diag_add(d, "write of %zu from an mmap of the same file returned %zd%s%s",
				 mlen, r, r < 0 ? ": " : "",
				 r < 0 ? strerror(errno) : "");
			im.bad++;
			if (r <= 0)
				goto check;
		}
		memcpy(im.want + mlen, im.want, (size_t)r);
		goto check;
	}
	/* Another file, written buffered, mapped: page cache present but
	 * not in this process's page tables, except the first page. */
	sfd = open(srcpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (sfd < 0) {
		diag_add(d, "create %s: %s", srcpath, strerror(errno));
		im.bad++;
		goto out;
	}
	if (t->flags & MB_FILE_APPEND) {
		if (put(fd, buf, 0, 4 * KIB, 4, &im, "prefill", d) != 0)
			goto out;
		base = 4 * KIB;
	}
	pat_fill(buf, MB_LEN, base, 5);
	if (write(sfd, buf, MB_LEN) != MB_LEN) {
		diag_add(d, "buffered write of the source file: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	m = mmap(NULL, MB_LEN, PROT_READ, MAP_SHARED, sfd, 0);
	if (m == MAP_FAILED) {
		diag_add(d, "mmap of the source file: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	(void)*(volatile unsigned char *)m;
	r = (t->flags & MB_FILE_APPEND) ? write(fd, m, MB_LEN) :
					  pwrite(fd, m, MB_LEN, 0);
	if (r != MB_LEN) {
		diag_add(d, "%s of %ld from a file's mmap (first page touched) returned %zd%s%s, expected %ld",
			 (t->flags & MB_FILE_APPEND) ? "O_APPEND write" : "write",
			 MB_LEN, r, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "",
			 MB_LEN);
		im.bad++;
	}
	if (r > 0)
		image_write(&im, base, (size_t)r, 5);
	if ((t->flags & MB_FILE_APPEND) && r > 0 &&
	    lseek(fd, 0, SEEK_CUR) != (off_t)(base + r)) {
		diag_add(d, "O_APPEND write: position %lld, expected %lld",
			 (long long)lseek(fd, 0, SEEK_CUR), base + (long long)r);
		im.bad++;
	}
check:
	verify(env->path, &im, "after the write", VIA_ALL, d);
out:
	if (m != MAP_FAILED)
		munmap(m, mlen);
	if (sfd >= 0) {
		close(sfd);
		unlink(srcpath);
	}
	close(fd);
	free(buf);
	st = verdict(&im);
	image_free(&im);
	return st;
}

#define NSEG 256

/*
 * One pwritev of 256 segments of block_size bytes scattered over memory in
 * a shuffled order, and one preadv with another order: the segments must
 * land in iovec order, whatever their addresses.
 */
enum test_status test_many_iovecs(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct iovec iov[NSEG];
	struct image im;
	size_t seg = t->block_size, total = NSEG * seg;
	unsigned char *area = NULL;
	long long off = 8 * KIB;
	unsigned int k;
	ssize_t r;
	int fd;

	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, (size_t)off + total, d) != 0)
		goto out;
	area = aligned(total, d);
	if (area == NULL) {
		im.bad++;
		goto out;
	}
	/* 7 and 13 are coprime with 256: both orders are permutations. */
	for (k = 0; k < NSEG; k++) {
		iov[k].iov_base = area + (size_t)((k * 7) % NSEG) * seg;
		iov[k].iov_len = seg;
		pat_fill(iov[k].iov_base, seg, off + (long long)(k * seg), 1);
	}
	r = pwritev(fd, iov, NSEG, (off_t)off);
	if (r != (ssize_t)total) {
		diag_add(d, "pwritev of %d segments of %zu at %lld returned %zd%s%s, expected %zu",
			 NSEG, seg, off, r, r < 0 ? ": " : "",
			 r < 0 ? strerror(errno) : "", total);
		im.bad++;
		if (r <= 0)
			goto out;
	}
	image_write(&im, off, (size_t)r, 1);
	memset(area, 0, total);
	for (k = 0; k < NSEG; k++)
		iov[k].iov_base = area + (size_t)((k * 13) % NSEG) * seg;
	r = preadv(fd, iov, NSEG, (off_t)off);
	if (r != (ssize_t)total) {
		diag_add(d, "preadv of %d segments returned %zd, expected %zu",
			 NSEG, r, total);
		im.bad++;
	} else {
		for (k = 0; k < NSEG; k++) {
			char label[48];

			snprintf(label, sizeof(label), "preadv segment %u", k);
			if (compare(label, iov[k].iov_base, &im,
				    off + (long long)(k * seg), seg, d) != 0) {
				im.bad++;
				break;
			}
		}
	}
	verify(env->path, &im, "after pwritev", VIA_BUFFERED, d);
out:
	close(fd);
	free(area);
	st = verdict(&im);
	image_free(&im);
	return st;
}

/*
 * A 4 MiB direct write and read at 1 MiB + 4 KiB: several bios (a bio
 * holds at most 256 pages), reassembled in order.
 */
enum test_status test_large_io(const struct suite_test *t,
			       const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	const size_t len = 4096 * KIB;
	const long long off = 1028 * KIB;
	struct image im;
	unsigned char *buf = NULL;
	ssize_t r;
	int fd;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, (size_t)off + len, d) != 0)
		goto out;
	buf = aligned(len, d);
	if (buf == NULL) {
		im.bad++;
		goto out;
	}
	if (put(fd, buf, off, len, 1, &im, "4 MiB write", d) != 0)
		goto out;
	memset(buf, 0, len);
	r = pread(fd, buf, len, (off_t)off);
	if (r != (ssize_t)len) {
		diag_add(d, "4 MiB read at %lld returned %zd, expected %zu", off, r,
			 len);
		im.bad++;
	} else {
		im.bad += compare("4 MiB direct read", buf, &im, off, len, d);
	}
	verify(env->path, &im, "after the 4 MiB write", VIA_BUFFERED, d);
out:
	close(fd);
	free(buf);
	st = verdict(&im);
	image_free(&im);
	return st;
}

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
 * Reads and writes around an EOF that is not block aligned: a read that
 * crosses it is short, one at it returns 0, a write across it extends the
 * file, and a write past it leaves a zero gap.
 */
enum test_status test_eof(const struct suite_test *t,
			  const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct image im;
	unsigned char *buf = NULL;
	ssize_t r;
	int fd;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, 64 * KIB, d) != 0)
		goto out;
	buf = aligned(16 * KIB, d);
	if (buf == NULL) {
		im.bad++;
		goto out;
	}
	if (put(fd, buf, 0, 16 * KIB, 1, &im, "prefill", d) != 0)
		goto out;
	if (ftruncate(fd, 10000) != 0) {
		diag_add(d, "ftruncate 10000: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	image_truncate(&im, 10000);
	memset(buf, 0, 16 * KIB);
	r = pread(fd, buf, 8192, 8192);
	if (r != 10000 - 8192) {
		diag_add(d, "read of 8192 at 8192 with st_size 10000 returned %zd, expected 1808", r);
		im.bad++;
	} else {
		im.bad += compare("read across EOF", buf, &im, 8192, (size_t)r, d);
	}
	r = pread(fd, buf, 4096, 12288);
	if (r != 0) {
		diag_add(d, "read of 4096 at 12288 beyond st_size 10000 returned %zd, expected 0", r);
		im.bad++;
	}
	if (put(fd, buf, 8192, 8192, 2, &im, "write across EOF", d) != 0)
		goto out;
	verify(env->path, &im, "after a write across EOF", VIA_ALL, d);
	if (put(fd, buf, 40 * KIB, 4096, 3, &im, "write past EOF", d) != 0)
		goto out;
	verify(env->path, &im, "after a write past EOF", VIA_ALL, d);
out:
	close(fd);
	free(buf);
	st = verdict(&im);
	image_free(&im);
	return st;
}

/*
 * Truncate down to a size inside a block, up again: the tail of that block
 * and everything after must read as zeros through every path (no stale
 * data), and a direct write afterwards lands where it should.
 */
enum test_status test_truncate(const struct suite_test *t,
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
	buf = aligned(64 * KIB, d);
	if (buf == NULL) {
		im.bad++;
		goto out;
	}
	if (put(fd, buf, 0, 64 * KIB, 1, &im, "prefill", d) != 0 ||
	    fsync(fd) != 0)
		goto out;
	if (ftruncate(fd, 10000) != 0) {
		diag_add(d, "ftruncate 10000: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	image_truncate(&im, 10000);
	verify(env->path, &im, "after truncate down to 10000", VIA_ALL, d);
	if (ftruncate(fd, 96 * KIB) != 0) {
		diag_add(d, "ftruncate 98304: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	image_truncate(&im, 96 * KIB);
	verify(env->path, &im, "after truncate up to 98304", VIA_ALL, d);
	if (put(fd, buf, 32 * KIB, 8 * KIB, 2, &im, "write after truncate", d) != 0)
		goto out;
	if (put(fd, buf, 8 * KIB, 4 * KIB, 3, &im, "write into the cut block", d) != 0)
		goto out;
	verify(env->path, &im, "after writes into the truncated range", VIA_ALL, d);
out:
	close(fd);
	free(buf);
	st = verdict(&im);
	image_free(&im);
	return st;
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

/* The statfs f_type of the filesystem that holds the test's file (not
 * created yet: its directory is asked), 0 if statfs fails. */
static uint32_t fs_type_of(const char *path)
{
	struct statfs sf;
	char dir[4096];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash != NULL)
		*slash = '\0';
	return statfs(dir, &sf) == 0 ? (uint32_t)sf.f_type : 0;
}

static int on_btrfs(const char *path)
{
	return fs_type_of(path) == BTRFS_MAGIC;
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

/* ---- page cache coherence and a race ---- */

/*
 * With the file's pages cached (buffered read) and mapped (mmap), a direct
 * write must be seen by both; with pages dirtied by a buffered write and
 * through the mapping, a direct read must see those bytes.
 */
enum test_status test_coherence(const struct suite_test *t,
				const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct image im;
	unsigned char *buf = NULL, *m = MAP_FAILED;
	const size_t len = 64 * KIB;
	ssize_t r;
	int fd, bfd = -1;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, len, d) != 0)
		goto out;
	buf = aligned(len, d);
	if (buf == NULL) {
		im.bad++;
		goto out;
	}
	if (put(fd, buf, 0, len, 1, &im, "prefill", d) != 0)
		goto out;
	bfd = open(env->path, O_RDWR | O_CLOEXEC);
	m = bfd >= 0 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, bfd, 0) :
		       MAP_FAILED;
	if (m == MAP_FAILED) {
		diag_add(d, "buffered open and mmap: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	/* Cache and map every page. */
	if (pread(bfd, buf, len, 0) != (ssize_t)len) {
		diag_add(d, "buffered read: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	im.bad += compare("mmap before the direct write", m, &im, 0, len, d);
	if (put(fd, buf, 0, len, 2, &im, "direct write over cached pages", d) != 0)
		goto out;
	r = pread(bfd, buf, len, 0);
	if (r != (ssize_t)len) {
		diag_add(d, "buffered read after the direct write returned %zd", r);
		im.bad++;
	} else {
		im.bad += compare("buffered read after a direct write", buf, &im, 0,
				  len, d);
	}
	im.bad += compare("the old mmap after a direct write", m, &im, 0, len, d);
	/* Dirty pages: a buffered write and a store through the mapping. */
	pat_fill(buf, 16 * KIB, 8 * KIB, 3);
	if (pwrite(bfd, buf, 16 * KIB, 8 * KIB) != 16 * KIB) {
		diag_add(d, "buffered write: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	image_write(&im, 8 * KIB, 16 * KIB, 3);
	pat_fill(m + 40 * KIB, 4 * KIB, 40 * KIB, 4);
	image_write(&im, 40 * KIB, 4 * KIB, 4);
	memset(buf, 0, len);
	r = pread(fd, buf, len, 0);
	if (r != (ssize_t)len) {
		diag_add(d, "direct read after buffered and mmap stores returned %zd", r);
		im.bad++;
	} else {
		im.bad += compare("direct read of dirty pages", buf, &im, 0, len, d);
	}
	verify(env->path, &im, "at the end", VIA_ALL, d);
out:
	if (m != MAP_FAILED)
		munmap(m, len);
	if (bfd >= 0)
		close(bfd);
	close(fd);
	free(buf);
	st = verdict(&im);
	image_free(&im);
	return st;
}

#define RACE_BLOCKS 256

/*
 * A child appends RACE_BLOCKS blocks with O_DIRECT|O_APPEND while this
 * process reads the end of the file through the page cache as it grows:
 * every byte below the st_size it saw must already be the appended data
 * (i_size must not run ahead of the data). The diagnostic gives the
 * iteration, so a rerun tells flaky from reproduced.
 */
enum test_status test_race_append(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	size_t bs = t->block_size;
	unsigned char *buf = NULL, *rb = NULL;
	unsigned int iter = 0, bad = 0, live = 0;
	pid_t pid;
	int fd, rfd = -1, status = 0;

	fd = create(env, O_APPEND, &st, d);
	if (fd < 0)
		return st;
	buf = aligned(bs, d);
	rb = aligned(4 * bs, d);
	rfd = open(env->path, O_RDONLY | O_CLOEXEC);
	if (buf == NULL || rb == NULL || rfd < 0) {
		diag_add(d, "setup: %s", strerror(errno));
		st = TEST_FAIL;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		diag_add(d, "fork: %s", strerror(errno));
		st = TEST_FAIL;
		goto out;
	}
	if (pid == 0) {
		unsigned int i;

		for (i = 0; i < RACE_BLOCKS; i++) {
			pat_fill(buf, bs, (long long)i * (long long)bs, 1);
			if (write(fd, buf, bs) != (ssize_t)bs)
				_exit(1);
		}
		_exit(0);
	}
	for (;;) {
		struct stat sb;
		long long size, from;
		ssize_t r;
		int done = waitpid(pid, &status, WNOHANG) == pid;

		if (fstat(rfd, &sb) != 0)
			break;
		size = (long long)sb.st_size;
		from = size > (long long)(4 * bs) ? size - (long long)(4 * bs) : 0;
		r = pread(rfd, rb, (size_t)(size - from), (off_t)from);
		iter++;
		if (!done && size > 0 && size < (long long)RACE_BLOCKS * (long long)bs)
			live++;
		if (r > 0) {
			long long i;

			for (i = 0; i < r; i++)
				if (rb[i] != pat(from + i, 1))
					break;
			if (i < r && bad++ == 0)
				diag_add(d, "iteration %u: byte at %lld is %02x, expected %02x (st_size was %lld)",
					 iter, from + i, rb[i], pat(from + i, 1), size);
		}
		if (done)
			break;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		diag_add(d, "the appending process failed (status %#x)", status);
		bad++;
	}
	{
		struct stat sb;

		if (fstat(rfd, &sb) == 0 &&
		    (long long)sb.st_size != (long long)RACE_BLOCKS * (long long)bs) {
			diag_add(d, "st_size %lld after %d appends of %zu, expected %lld",
				 (long long)sb.st_size, RACE_BLOCKS, bs,
				 (long long)RACE_BLOCKS * (long long)bs);
			bad++;
		}
	}
	/* Whether the reads met the appends at all (one vCPU may run the
	 * appender through first): reads that saw a partly written file. */
	diag_add(d, "raced: %u of %u reads saw the file growing (between 1 and %d blocks)",
		 live, iter, RACE_BLOCKS - 1);
	if (bad > 0)
		diag_add(d, "%u bad reads in %u iterations", bad, iter);
	st = bad == 0 ? TEST_PASS : TEST_FAIL;
out:
	if (rfd >= 0)
		close(rfd);
	close(fd);
	free(buf);
	free(rb);
	return st;
}

#define RACE_ROUNDS 100
/* The racer's pace and bound: so many operations per round at most (and
 * as many before the first), and it stops when the rounds end. */
#define RACE_OPS_PER_ROUND 20
#define RACE_OPS_MAX ((RACE_ROUNDS + 1) * RACE_OPS_PER_ROUND)
#define RACE_LEN (64 * KIB)
/* The collapse is 52 KiB, 104 sectors: four periods of pat(), so data it
 * moves down still holds the pattern of its new offset. */
#define RACE_COLLAPSE_LEN (52 * KIB)

/* One operation of the racing process on fd, round i: 0, or -1 with
 * errno. Each test's row names one operation (t->flags). */
static int race_op(int fd, unsigned int op, unsigned int i,
		   const unsigned char *pat1)
{
	long long off = (long long)(i % 4) * 16 * KIB;

	switch (op) {
	case RACE_TRUNCATE:
		return ftruncate(fd, (i % 2) ? RACE_LEN : (off_t)off);
	case RACE_PUNCH:
		return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				 (off_t)off, 16 * KIB);
	case RACE_ZERO:
		return fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
				 (off_t)off, 16 * KIB);
	case RACE_COLLAPSE:
		if (fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 0, RACE_COLLAPSE_LEN) == 0)
			return 0;
		/* The file is already short (a collapse won the race with
		 * the writer's rewrite): nothing to collapse this round. */
		return errno == EINVAL ? 0 : -1;
	default:
		return pwrite(fd, pat1 + off, 16 * KIB, (off_t)off) == 16 * KIB ? 0 : -1;
	}
}

/* Shared by the direct rounds and the racing process (one anonymous
 * shared page): how many operations the racer did, and the rounds' end. */
struct race_shared {
	unsigned int done;
	unsigned int round;
	unsigned int stop;
};

/* The racing process: operation op on path, at most RACE_OPS_PER_ROUND
 * times per direct round (sh->round), until the rounds end (sh->stop),
 * at least once and at most RACE_OPS_MAX times, counting them in
 * sh->done. Unpaced, a fixed count of 200 ran inside 1 to 12 of the 100
 * rounds even on two vCPUs, and an unbounded one did thousands before the
 * first round (docs/agent.md). Exits 0, 2 when the filesystem does not
 * have the operation (EOPNOTSUPP on the first try), 1 when an operation
 * fails. */
static void race_loop(const char *path, unsigned int op,
		      const unsigned char *pat1, struct race_shared *sh)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	unsigned int i = 0, round = 0, in_round = 0;

	if (fd < 0)
		_exit(1);
	while (i < RACE_OPS_MAX &&
	       (i == 0 || !__atomic_load_n(&sh->stop, __ATOMIC_RELAXED))) {
		unsigned int r = __atomic_load_n(&sh->round, __ATOMIC_RELAXED);

		if (r != round) {
			round = r;
			in_round = 0;
		}
		if (in_round >= RACE_OPS_PER_ROUND) {
			sched_yield();	/* the rounds' turn (one vCPU) */
			continue;
		}
		if (race_op(fd, op, i, pat1) != 0)
			_exit(errno == EOPNOTSUPP && i == 0 ? 2 : 1);
		i++;
		in_round++;
		__atomic_store_n(&sh->done, i, __ATOMIC_RELAXED);
	}
	_exit(0);
}

static const char *race_op_name(unsigned int op)
{
	switch (op) {
	case RACE_TRUNCATE:
		return "truncate";
	case RACE_PUNCH:
		return "fallocate punch hole";
	case RACE_ZERO:
		return "fallocate zero range";
	case RACE_COLLAPSE:
		return "fallocate collapse range";
	default:
		return "buffered write";
	}
}

/* "raced: 1207 truncate operations ran during the direct rounds, in 97 of
 * 100 rounds (1 before them)": a pass that says how much the two processes really
 * interleaved (on one vCPU the racer may run all its operations inside
 * one round), and a failure's context. */
static void race_note(struct diag *d, unsigned int last, unsigned int first,
		      unsigned int rounds, unsigned int op)
{
	if (last == 0 && first == 0)
		return;	/* no operation at all: a skip or a failure says why */
	diag_add(d, "raced: %u %s operations ran during the direct rounds, in %u of %d rounds (%u before them)",
		 last - first, race_op_name(op), rounds, RACE_ROUNDS, first);
}

/* One round of the direct writer and reader: 0, or 1 with a diagnostic. */
static unsigned int race_round(int fd, int rfd, unsigned int iter,
			       const unsigned char *buf, unsigned char *rb,
			       struct diag *d)
{
	const char *how = rfd == fd ? "direct" : "buffered";
	ssize_t r = pwrite(fd, buf, RACE_LEN, 0);
	long long i;

	if (r != RACE_LEN) {
		diag_add(d, "iteration %u of %d: direct write of %ld at 0 returned %zd%s%s",
			 iter, RACE_ROUNDS, RACE_LEN, r, r < 0 ? ": " : "",
			 r < 0 ? strerror(errno) : "");
		return 1;
	}
	r = pread(rfd, rb, RACE_LEN, 0);
	if (r < 0) {
		diag_add(d, "iteration %u of %d: %s read: %s", iter, RACE_ROUNDS,
			 how, strerror(errno));
		return 1;
	}
	for (i = 0; i < r; i++)
		if (rb[i] != 0 && rb[i] != buf[i])
			break;
	if (i == r)
		return 0;
	diag_add(d, "iteration %u of %d: %s read: byte at %lld is %02x, expected %02x or 00 (stale data)",
		 iter, RACE_ROUNDS, how, i, rb[i], buf[i]);
	return 1;
}

/* A race test's file: len bytes of pattern 1 at 0, one direct write from
 * buf (which then holds them). 0, or -1 with a diagnostic. */
static int race_prefill(int fd, unsigned char *buf, long len, struct diag *d)
{
	pat_fill(buf, (size_t)len, 0, 1);
	if (pwrite(fd, buf, (size_t)len, 0) == (ssize_t)len)
		return 0;
	diag_add(d, "setup: direct write of %ld at 0: %s", len, strerror(errno));
	return -1;
}

/*
 * Direct writes and reads of one pattern over 64 KiB while another process
 * runs one operation on the same range (the row's flag: truncate down and
 * up, punch, zero, collapse, or buffered writes of the same pattern):
 * every byte a read returns (direct or buffered) is that pattern or zero,
 * never anything else (stale blocks), and a direct write is never short.
 * A failure names its iteration, so a rerun tells flaky from reproduced.
 */
enum test_status test_race(const struct suite_test *t,
			   const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	unsigned int op = t->flags & RACE_OPS;
	unsigned char *buf = NULL, *rb = NULL;
	unsigned int iter, bad = 0, first, now, rounds = 0;
	struct race_shared *sh;
	pid_t pid;
	int fd, bfd = -1, status = 0, reaped = 0;

	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	buf = aligned(RACE_LEN, d);
	rb = aligned(RACE_LEN, d);
	bfd = open(env->path, O_RDONLY | O_CLOEXEC);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		sh = NULL;
	if (buf == NULL || rb == NULL || bfd < 0 || sh == NULL) {
		diag_add(d, "setup: %s", strerror(errno));
		goto out;
	}
	if (race_prefill(fd, buf, RACE_LEN, d) != 0)
		goto out;
	pid = fork();
	if (pid < 0) {
		diag_add(d, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		race_loop(env->path, op, buf, sh);
	/* The first round waits for the racer's first operation (or its
	 * end): on one vCPU the child may not have run yet. */
	while (__atomic_load_n(&sh->done, __ATOMIC_RELAXED) == 0 && !reaped) {
		reaped = waitpid(pid, &status, WNOHANG) == pid;
		sched_yield();
	}
	first = now = __atomic_load_n(&sh->done, __ATOMIC_RELAXED);
	for (iter = 1; iter <= RACE_ROUNDS && bad == 0; iter++) {
		unsigned int before = now;

		__atomic_store_n(&sh->round, iter, __ATOMIC_RELAXED);
		bad += race_round(fd, iter % 3 == 0 ? bfd : fd, iter, buf, rb, d);
		now = __atomic_load_n(&sh->done, __ATOMIC_RELAXED);
		rounds += now != before;	/* the racer ran in this round */
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	race_note(d, now, first, rounds, op);
	if (bad > 0 && !reaped)
		kill(pid, SIGKILL);
	if (!reaped)
		reaped = waitpid(pid, &status, 0) == pid;
	if (reaped && bad == 0 && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 2) {
		snprintf(d->skip_reason, sizeof(d->skip_reason),
			 "%s not supported", race_op_name(op));
		st = TEST_SKIP;
		goto out;
	}
	if (bad == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
		diag_add(d, "the racing %s process failed (status %#x)",
			 race_op_name(op), status);
		bad++;
	}
	st = bad == 0 ? TEST_PASS : TEST_FAIL;
out:
	if (bfd >= 0)
		close(bfd);
	if (sh != NULL)
		munmap(sh, sizeof(*sh));
	close(fd);
	free(buf);
	free(rb);
	return st;
}

/* ---- a buffered reader during an asynchronous direct write ---- */

#define AIO_RACE_ROUNDS 24
/* Each write is 1 MiB (several bios): the read during it, of its last
 * 64 KiB, meets it in flight far more often than a 64 KiB write's. */
#define AIO_RACE_LEN (1024 * KIB)
#define AIO_RACE_WIN (64 * KIB)
#define AIO_RACE_AT (AIO_RACE_LEN - AIO_RACE_WIN)

/* First byte of b[0, AIO_RACE_WIN), the file at AIO_RACE_AT, that is not
 * pat(off, seed) (nor 0 or pat(off, old) when old is not 0): its index, or
 * AIO_RACE_WIN when none. */
static size_t pat_mismatch(const unsigned char *b, unsigned int seed,
			   unsigned int old)
{
	size_t i;

	for (i = 0; i < AIO_RACE_WIN; i++) {
		long long off = AIO_RACE_AT + (long long)i;

		if (b[i] != pat(off, seed) &&
		    (old == 0 || (b[i] != 0 && b[i] != pat(off, old))))
			break;
	}
	return i;
}

/* After round k's write completed, the window seen by a buffered read
 * (cached) and through a new mmap must be round k's: 0, or problems with
 * a diagnostic that says what the read during the write had seen. */
static unsigned int aio_race_after(int bfd, unsigned char *rb, unsigned int k,
				   const char *how, const char *during,
				   struct diag *d)
{
	unsigned int seed = 1 + k % 25, bad = 0;
	ssize_t r = pread(bfd, rb, AIO_RACE_WIN, AIO_RACE_AT);
	unsigned char *m;
	size_t i;

	if (r != AIO_RACE_WIN) {
		diag_add(d, "round %u of %d: buffered read after the completion returned %zd",
			 k, AIO_RACE_ROUNDS, r);
		return 1;
	}
	i = pat_mismatch(rb, seed, 0);
	if (i < AIO_RACE_WIN) {
		diag_add(d, "round %u of %d (%s): buffered read after the completion: byte at %lld is %02x, expected %02x (stale page cache; the buffered read during the write saw %s)",
			 k, AIO_RACE_ROUNDS, how, AIO_RACE_AT + (long long)i, rb[i],
			 pat(AIO_RACE_AT + (long long)i, seed), during);
		bad++;
	}
	m = mmap(NULL, AIO_RACE_WIN, PROT_READ, MAP_SHARED, bfd, AIO_RACE_AT);
	if (m == MAP_FAILED) {
		diag_add(d, "round %u: mmap: %s", k, strerror(errno));
		return bad + 1;
	}
	i = pat_mismatch(m, seed, 0);
	if (i < AIO_RACE_WIN) {
		diag_add(d, "round %u of %d (%s): mmap read after the completion: byte at %lld is %02x, expected %02x",
			 k, AIO_RACE_ROUNDS, how, AIO_RACE_AT + (long long)i, m[i],
			 pat(AIO_RACE_AT + (long long)i, seed));
		bad++;
	}
	munmap(m, AIO_RACE_WIN);
	return bad;
}

/* Round k: one native AIO direct write of AIO_RACE_LEN at 0, a buffered
 * read of its last AIO_RACE_WIN while it is in flight, the completion, the
 * checks. *raced counts rounds whose read saw old bytes or zeros. 0 or
 * the problems found. */
static unsigned int aio_race_round(aio_context_t ctx, int fd, int bfd,
				   unsigned char *buf, unsigned char *rb,
				   unsigned int k, unsigned int *raced,
				   struct diag *d)
{
	unsigned int seed = 1 + k % 25, old = 1 + (k - 1) % 25;
	const char *how = k % 2 ? "into a punched hole" : "over written blocks";
	const char *during = "only new data";
	struct iocb cb, *cbp = &cb;
	struct io_event ev;
	ssize_t r;
	long n;
	size_t i;

	if (k % 2 && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       0, AIO_RACE_LEN) != 0) {
		diag_add(d, "round %u: punch hole: %s", k, strerror(errno));
		return 1;
	}
	pat_fill(buf, AIO_RACE_LEN, 0, seed);
	memset(&cb, 0, sizeof(cb));
	cb.aio_fildes = (uint32_t)fd;
	cb.aio_lio_opcode = IOCB_CMD_PWRITE;
	cb.aio_buf = (uint64_t)(uintptr_t)buf;
	cb.aio_nbytes = AIO_RACE_LEN;
	n = syscall(__NR_io_submit, ctx, 1L, &cbp);
	if (n != 1) {
		diag_add(d, "round %u: io_submit returned %ld%s%s", k, n,
			 n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
		return 1;
	}
	/* The write is in flight (or done): a buffered read caches the
	 * window, each byte old, zero (the hole) or new. */
	r = pread(bfd, rb, AIO_RACE_WIN, AIO_RACE_AT);
	i = r == AIO_RACE_WIN ? pat_mismatch(rb, seed, old) : 0;
	if (r == AIO_RACE_WIN && i < AIO_RACE_WIN)
		diag_add(d, "round %u of %d (%s): buffered read during the write: byte at %lld is %02x, expected %02x, %02x or 00",
			 k, AIO_RACE_ROUNDS, how, AIO_RACE_AT + (long long)i, rb[i],
			 pat(AIO_RACE_AT + (long long)i, seed),
			 pat(AIO_RACE_AT + (long long)i, old));
	if (r == AIO_RACE_WIN && pat_mismatch(rb, seed, 0) < AIO_RACE_WIN) {
		during = k % 2 ? "zeros or old data" : "old data";
		(*raced)++;
	}
	while ((n = aio_getevents(ctx, 1L, 1L, &ev)) < 0 &&
	       errno == EINTR)
		;
	if (n != 1 || ev.res != AIO_RACE_LEN) {
		diag_add(d, "round %u of %d: aio write of %ld at 0: %s res %lld",
			 k, AIO_RACE_ROUNDS, AIO_RACE_LEN,
			 n != 1 ? "io_getevents failed," : "",
			 n == 1 ? (long long)ev.res : (long long)-errno);
		return 1;
	}
	if (r != AIO_RACE_WIN || i < AIO_RACE_WIN) {
		if (r != AIO_RACE_WIN)
			diag_add(d, "round %u: buffered read during the write returned %zd",
				 k, r);
		return 1;
	}
	return aio_race_after(bfd, rb, k, how, during, d);
}

/*
 * Native AIO direct writes of 1 MiB, each with a new pattern, alternately
 * into a punched hole (an unwritten extent until the completion) and over
 * written blocks; while each is in flight a buffered read caches its last
 * 64 KiB (zeros or the old pattern, if it meets the write in flight). Once io_getevents() reports the write, a
 * buffered read and a new mmap must see only the new pattern: the
 * completion must drop what the page cache read meanwhile (332391a9935d,
 * fstests generic/451).
 */
enum test_status test_race_aio_read(const struct suite_test *t,
				    const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	aio_context_t ctx = 0;
	unsigned char *buf = NULL, *rb = NULL;
	unsigned int k, bad = 0, raced = 0;
	struct sched_param sp = { .sched_priority = 1 };
	int fd, bfd = -1, fifo;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	buf = aligned(AIO_RACE_LEN, d);
	rb = aligned(AIO_RACE_WIN, d);
	bfd = open(env->path, O_RDONLY | O_CLOEXEC);
	if (buf == NULL || rb == NULL || bfd < 0) {
		diag_add(d, "setup: %s", strerror(errno));
		goto out;
	}
	if (race_prefill(fd, buf, AIO_RACE_LEN, d) != 0)
		goto out;
	if (syscall(__NR_io_setup, 1, &ctx) != 0) {
		skip(d, "io_setup (native AIO, CONFIG_AIO)", errno);
		st = TEST_SKIP;
		goto out;
	}
	/* SCHED_FIFO: on one CPU the completion's work (the unwritten
	 * extent's conversion, then the invalidation) cannot preempt the
	 * read between io_submit() and its end, only run when it sleeps.
	 * Measured, the read still met the write in only 2 to 15 of 24
	 * rounds on Debian's 6.1.192 (docs/agent.md). Without it (no
	 * CAP_SYS_NICE) the test still runs, as a plain race. */
	fifo = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
	for (k = 1; k <= AIO_RACE_ROUNDS && bad == 0; k++)
		bad += aio_race_round(ctx, fd, bfd, buf, rb, k, &raced, d);
	if (fifo) {
		sp.sched_priority = 0;
		sched_setscheduler(0, SCHED_OTHER, &sp);
	}
	syscall(__NR_io_destroy, ctx);
	diag_add(d, "raced: the buffered read during the write cached zeros or old data in %u of %u rounds%s",
		 raced, k - 1, fifo ? "" : " (not SCHED_FIFO)");
	st = bad == 0 ? TEST_PASS : TEST_FAIL;
out:
	if (bfd >= 0)
		close(bfd);
	close(fd);
	free(buf);
	free(rb);
	return st;
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

/* ---- EOF pollution: garbage past EOF must never become file data ---- */

/* The file's size before it grows: inside a block for every block size
 * from 512 to 4096 (8892 = 2 * 4096 + 700 = 17 * 512 + 188). */
#define POLLUTE_EOF (2 * PAGE + 700)
/* What is written through mmap past EOF: neither zero nor a pattern byte. */
#define POLLUTE_BYTE 0xee
#define EXT4_MAGIC 0xEF53U

static const struct grow_row {
	enum eof_grow op;
	long long off; /* where it starts */
	long long len;
	const char *what;
} grow_rows[] = {
	/* 64 bytes past EOF in EOF's block: btrfs before da2dccd7451d
	 * zeroed [EOF, pos) only when pos's block started past EOF. */
	{ EOF_GROW_BUFFERED, POLLUTE_EOF + 64, 100, "buffered write" },
	{ EOF_GROW_DIRECT, 3 * PAGE, PAGE, "direct write" }, /* the next page */
	/* One sector at the next sector boundary, in EOF's block: where the
	 * filesystem's blocks are larger (btrfs' 4096-byte sectors), it falls
	 * back to a buffered write, after the same check as above. */
	{ EOF_GROW_DIRECT_SECTOR, 18 * 512, 512, "sector direct write" },
	{ EOF_GROW_TRUNCATE, 0, 5 * PAGE, "truncate up" },
	{ EOF_GROW_FALLOCATE, 4 * PAGE, PAGE, "fallocate" },
};

/*
 * Where a correct kernel is known to leave the garbage (upstream bugs
 * without a fix in the kernels rcgate gates): checked there, every run
 * would fail. fixed_major 0: no fix known.
 */
static const struct eof_gap {
	uint32_t fs_type;
	int op; /* an eof_grow, or -1 for every operation */
	unsigned int fixed_major, fixed_minor;
	const char *why;
} eof_gaps[] = {
	/* Seen on 6.1.192 and 6.18.44: [EOF, the page's end) is never
	 * zeroed before an extending direct write. */
	{ EXT4_MAGIC, EOF_GROW_DIRECT, 0, 0,
	  "ext4 does not zero it before a direct write (6.1-6.18 at least)" },
	/* c7fc0366c656 "ext4: partial zero eof block on unaligned inode size
	 * extension" (6.13); 6.1 has no zeroing at all. */
	{ EXT4_MAGIC, -1, 6, 13, "ext4 before 6.13 lacks c7fc0366c656" },
};

const char *eof_zeroing_gap(unsigned long fs_type, const char *release,
			    enum eof_grow op)
{
	unsigned int major = 0, minor = 0;
	size_t i;

	if (release == NULL || sscanf(release, "%u.%u", &major, &minor) != 2)
		major = minor = 0;
	for (i = 0; i < sizeof(eof_gaps) / sizeof(eof_gaps[0]); i++) {
		const struct eof_gap *g = &eof_gaps[i];

		if (g->fs_type != fs_type || (g->op >= 0 && g->op != (int)op))
			continue;
		if (g->fixed_major == 0 || major < g->fixed_major ||
		    (major == g->fixed_major && minor < g->fixed_minor))
			return g->why;
	}
	return NULL;
}

/* The size the file has after row's operation. */
static long long grow_size(const struct grow_row *row)
{
	return row->op == EOF_GROW_TRUNCATE ? row->len : row->off + row->len;
}

/*
 * Writes POLLUTE_BYTE through a shared mapping from EOF to the end of its
 * page, or to upto if that comes first (fsx's pollute_eofpage: only what
 * the coming operation must zero), then maps the page again to see that
 * the garbage is in the page cache. Returns 1 when it is, 0 when it is not
 * there any more (nothing for the operation to zero: a note, no failure),
 * -1 with a diagnostic when mmap fails.
 */
static int pollute(int bfd, long long eof, long long upto, struct diag *d)
{
	long long pg = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : PAGE;
	long long base = eof / pg * pg;
	long long end = base + pg < upto ? base + pg : upto;
	unsigned char *m;
	int there;

	m = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED, bfd,
		 (off_t)base);
	if (m == MAP_FAILED) {
		diag_add(d, "mmap of the EOF page at %lld: %s", base, strerror(errno));
		return -1;
	}
	memset(m + (eof - base), POLLUTE_BYTE, (size_t)(end - eof));
	munmap(m, (size_t)pg);
	m = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, bfd, (off_t)base);
	if (m == MAP_FAILED) {
		diag_add(d, "mmap of the EOF page at %lld: %s", base, strerror(errno));
		return -1;
	}
	there = m[eof - base] == POLLUTE_BYTE && m[end - 1 - base] == POLLUTE_BYTE;
	munmap(m, (size_t)pg);
	return there;
}

/* Grows the file by row's operation; the image follows. 0, -1 with a
 * diagnostic, or 1 when the filesystem lacks it (EOPNOTSUPP). */
static int grow(const struct grow_row *row, const struct suite_env *env,
		int fd, int bfd, unsigned char *buf, struct image *im,
		const char *step, struct diag *d)
{
	ssize_t r;

	switch (row->op) {
	case EOF_GROW_BUFFERED:
		pat_fill(buf, (size_t)row->len, row->off, 9);
		r = pwrite(bfd, buf, (size_t)row->len, (off_t)row->off);
		if (r != row->len) {
			diag_add(d, "%s: returned %zd, expected %lld (%s)", step, r,
				 row->len, r < 0 ? strerror(errno) : "short");
			return -1;
		}
		image_write(im, row->off, (size_t)row->len, 9);
		return 0;
	case EOF_GROW_DIRECT_SECTOR:
		if (env->dio_offset_align > row->len)
			return 1; /* O_DIRECT needs larger alignment here */
		/* fallthrough */
	case EOF_GROW_DIRECT:
		return put(fd, buf, row->off, (size_t)row->len, 9, im, step, d);
	case EOF_GROW_TRUNCATE:
		if (ftruncate(fd, (off_t)row->len) != 0) {
			diag_add(d, "%s: %s", step, strerror(errno));
			return -1;
		}
		break;
	case EOF_GROW_FALLOCATE:
		if (falloc(fd, 0, row->off, row->len, "beyond EOF", 0, d) != 0)
			return errno == EOPNOTSUPP ? 1 : -1;
		break;
	}
	image_truncate(im, grow_size(row));
	return 0;
}

/* One row on a fresh file: POLLUTE_EOF bytes written and synced, the EOF
 * page polluted, the file grown, then checked through the page cache
 * (buffered, mmap) and, after fsync, on disk (O_DIRECT). Adds to *met
 * when the garbage was in the page cache when the operation ran. Returns
 * 1 when the row was checked, 0 when it could not be (a failure or skip
 * in *st, or the operation not supported here: a note). */
static int pollute_row(const struct grow_row *row, const struct suite_env *env,
			unsigned char *buf, unsigned int *met, enum test_status *st,
			struct diag *d)
{
	char step[96];
	struct image im;
	unsigned int before;
	int fd, bfd = -1, rc, there, checked = 0;

	fd = create(env, 0, st, d);
	if (fd < 0)
		return 0;
	if (image_init(&im, 8 * PAGE, d) != 0)
		goto out;
	bfd = open(env->path, O_RDWR | O_CLOEXEC);
	pat_fill(buf, POLLUTE_EOF, 0, 1);
	if (bfd < 0 || pwrite(bfd, buf, POLLUTE_EOF, 0) != POLLUTE_EOF ||
	    fsync(bfd) != 0) {
		diag_add(d, "%s: writing the first %ld bytes: %s", row->what,
			 POLLUTE_EOF, strerror(errno));
		im.bad++;
		goto out;
	}
	image_write(&im, 0, POLLUTE_EOF, 1);
	verify(env->path, &im, "before the pollution", VIA_ALL, d);
	there = pollute(bfd, POLLUTE_EOF, grow_size(row), d);
	if (there < 0) {
		im.bad++;
		goto out;
	}
	if (row->op == EOF_GROW_TRUNCATE)
		snprintf(step, sizeof(step), "truncate up to %lld from EOF %ld",
			 row->len, POLLUTE_EOF);
	else
		snprintf(step, sizeof(step), "%s of %lld at %lld past EOF %ld",
			 row->what, row->len, row->off, POLLUTE_EOF);
	rc = grow(row, env, fd, bfd, buf, &im, step, d);
	if (rc != 0) {
		if (rc > 0)
			diag_add(d, "%s: not supported here, not checked", step);
		else
			im.bad++;
		goto out;
	}
	before = im.bad;
	checked = 1;
	*met += (unsigned int)there;
	verify(env->path, &im, step, VIA_BUFFERED | VIA_MMAP, d);
	if (fsync(fd) != 0) {
		diag_add(d, "%s: fsync: %s", step, strerror(errno));
		im.bad++;
	}
	verify(env->path, &im, step, VIA_DIRECT, d);
	if (im.bad > before)
		diag_add(d, "%s: the %02x bytes written through mmap past the old EOF must read as zeros",
			 row->what, POLLUTE_BYTE);
out:
	if (bfd >= 0)
		close(bfd);
	close(fd);
	if (*st != TEST_SKIP && (im.want == NULL || im.bad > 0))
		*st = TEST_FAIL;
	image_free(&im);
	return checked;
}

/*
 * fstests generic/363's EOF pollution, one operation at a time: garbage
 * written through a shared mapping past EOF, inside EOF's page, must never
 * become file data when the file grows over it (a buffered write a little
 * past EOF in the same block, a direct write at the next page, a direct
 * write of one sector in EOF's block, truncate up, fallocate beyond EOF):
 * the filesystem zeros [EOF, the operation's start) first. The gap is
 * read back through buffered read and mmap, and after fsync through
 * O_DIRECT. Where a correct kernel is known not to
 * zero (eof_gaps) the operation is not checked and the pass says so; with
 * none left (ext4 before 6.13) the test is a SKIP with the reason.
 */
enum test_status test_eof_pollute(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_PASS;
	unsigned char *buf;
	unsigned int met = 0, ran = 0, checked = 0;
	struct utsname u;
	uint32_t fs = fs_type_of(env->path);
	const char *gap[sizeof(grow_rows) / sizeof(grow_rows[0])];
	size_t i, n = sizeof(grow_rows) / sizeof(grow_rows[0]);

	(void)t;
	if (uname(&u) != 0)
		u.release[0] = '\0';
	for (i = 0; i < n; i++) {
		gap[i] = eof_zeroing_gap(fs, u.release, grow_rows[i].op);
		ran += gap[i] == NULL;
	}
	if (ran == 0) {
		snprintf(d->skip_reason, sizeof(d->skip_reason),
			 "known gap, garbage past EOF stays: %s", gap[n - 1]);
		return TEST_SKIP;
	}
	buf = aligned(3 * PAGE, d); /* the first POLLUTE_EOF bytes */
	if (buf == NULL)
		return TEST_FAIL;
	for (i = 0; i < n && st != TEST_SKIP; i++)
		if (gap[i] == NULL)
			checked += (unsigned int)pollute_row(&grow_rows[i], env,
							     buf, &met, &st, d);
	free(buf);
	for (i = 0; i < n && st != TEST_SKIP; i++)
		if (gap[i] != NULL)
			diag_add(d, "%s: not checked here, a known gap: %s",
				 grow_rows[i].what, gap[i]);
	if (st == TEST_PASS)
		diag_add(d, "polluted: the garbage was in the page cache for %u of the %u operations checked",
			 met, checked);
	return st;
}

/* ---- fallocate under an asynchronous extending write ---- */

/* 1 when the AIO ring of ctx holds no completion yet, read without a
 * syscall (io_getevents would reap it): the kernel maps struct aio_ring at
 * ctx (id, nr, head, tail, magic, ...); 0 when it holds one or the ring is
 * not as expected. */
#define AIO_RING_MAGIC 0xa10a10a1U /* fs/aio.c */

static int aio_pending(aio_context_t ctx)
{
	const unsigned int *ring = (const unsigned int *)(uintptr_t)ctx;

	return ring[4] == AIO_RING_MAGIC &&
	       ring[2] == __atomic_load_n(&ring[3], __ATOMIC_ACQUIRE);
}

/* One direct write at a time through native AIO or io_uring, so that a
 * test can act while it is in flight. */
struct inflight {
	aio_context_t ctx;
	struct ring ring; /* fd -1: no io_uring here */
};

/* 0, or -1 with the test's skip reason set (no native AIO). */
static int inflight_open(struct inflight *f, struct diag *d)
{
	memset(f, 0, sizeof(*f));
	f->ring.fd = -1;
	if (syscall(__NR_io_setup, 1L, &f->ctx) != 0) {
		skip(d, "io_setup (native AIO, CONFIG_AIO)", errno);
		return -1;
	}
	if (ring_open(&f->ring, 2) != 0)
		f->ring.fd = -1; /* the io_uring rounds are left out */
	return 0;
}

static void inflight_close(struct inflight *f)
{
	if (f->ring.fd >= 0)
		ring_close(&f->ring);
	syscall(__NR_io_destroy, f->ctx);
}

/* Submits the write; returns 1 when it is still in flight on return, 0
 * when it already completed (ext4 makes extending direct writes
 * synchronous), -1 with a diagnostic when it could not be submitted. */
static int inflight_submit(struct inflight *f, int uring, int fd, void *buf,
			   size_t len, long long off, struct diag *d)
{
	if (uring) {
		ring_queue(&f->ring, IORING_OP_WRITE, fd, buf, (unsigned int)len, off, 1);
		if (syscall(__NR_io_uring_enter, f->ring.fd, 1, 0, 0, NULL, 0) != 1) {
			diag_add(d, "io_uring_enter: %s", strerror(errno));
			return -1;
		}
		return __atomic_load_n(ring_u32(f->ring.cq, f->ring.p.cq_off.tail),
				       __ATOMIC_ACQUIRE) ==
		       *ring_u32(f->ring.cq, f->ring.p.cq_off.head);
	} else {
		struct iocb cb, *cbp = &cb;

		memset(&cb, 0, sizeof(cb));
		cb.aio_fildes = (uint32_t)fd;
		cb.aio_lio_opcode = IOCB_CMD_PWRITE;
		cb.aio_buf = (uint64_t)(uintptr_t)buf;
		cb.aio_nbytes = len;
		cb.aio_offset = off;
		if (syscall(__NR_io_submit, f->ctx, 1L, &cbp) != 1) {
			diag_add(d, "io_submit: %s", strerror(errno));
			return -1;
		}
		return aio_pending(f->ctx);
	}
}

/* The write's result (LLONG_MIN when waiting failed). */
static long long inflight_wait(struct inflight *f, int uring)
{
	if (uring) {
		struct io_uring_cqe c;

		return ring_wait_cqe(&f->ring, &c) == 0 ? c.res : LLONG_MIN;
	} else {
		struct io_event ev;
		long n = 0;

		while (n != 1) {
			n = aio_getevents(f->ctx, 1L, 1L, &ev);
			if (n < 0 && errno != EINTR)
				return LLONG_MIN;
		}
		return (long long)ev.res;
	}
}

#define AF_ROUNDS 8
#define AF_LEN (1024 * KIB)

/* What test_aio_inflight does while the write is in flight. */
enum inflight_act { ACT_FALLOCATE, ACT_ZERO_RANGE, ACT_CLOSE };

static const char *const act_name[] = {
	[ACT_FALLOCATE] = "fallocate (plain)",
	[ACT_ZERO_RANGE] = "fallocate ZERO_RANGE",
	[ACT_CLOSE] = "close of another descriptor",
};

/*
 * One round: a fresh file of one block (block 0 written directly, or, for
 * fallocate, empty: fallocate makes block 0), an extending 1 MiB direct
 * write at one block submitted through the engine, the action at once in
 * the same thread, then the write's result, st_size (one block + 1 MiB)
 * and every byte through every read path (problems counted in im->bad).
 * Returns 1 if the write was in flight when the action started, 0 if not
 * or if it could not be submitted.
 */
static int inflight_round(struct inflight *f, const struct suite_env *env,
			  int uring, enum inflight_act act, unsigned int round,
			  unsigned char *buf, struct image *im, struct diag *d)
{
	const char *how = uring ? "io_uring" : "aio";
	long long bs = PAGE, res;
	enum test_status st = TEST_FAIL;
	struct stat sb;
	char step[200];
	int fd, other = -1, pending = 0;

	unlink(env->path);
	fd = create(env, 0, &st, d);
	if (fd < 0) {
		im->bad++;
		return 0;
	}
	image_truncate(im, 0);
	if (fstat(fd, &sb) == 0 && sb.st_blksize >= 512 && sb.st_blksize <= 64 * KIB)
		bs = sb.st_blksize;
	if (act == ACT_CLOSE) {
		/* i_size > 0: xfs trims nothing past the EOF of an empty file. */
		if (put(fd, buf, 0, (size_t)bs, 100 + round, im, "block 0", d) != 0)
			goto out;
		other = open(env->path, O_RDWR | O_CLOEXEC);
		if (other < 0) {
			diag_add(d, "second open: %s", strerror(errno));
			im->bad++;
			goto out;
		}
	}
	pat_fill(buf, AF_LEN, bs, round + 1);
	pending = inflight_submit(f, uring, fd, buf, AF_LEN, bs, d);
	if (pending < 0) {
		im->bad++;
		pending = 0;
		goto out;
	}
	if (act == ACT_CLOSE) {
		close(other);
		other = -1;
	} else if (fallocate(fd, act == ACT_ZERO_RANGE ? FALLOC_FL_ZERO_RANGE : 0,
			     0, (off_t)bs) != 0 &&
		   !(errno == EOPNOTSUPP && act == ACT_ZERO_RANGE)) {
		diag_add(d, "round %u: %s of [0, %lld) under an in-flight %s write: %s",
			 round + 1, act_name[act], bs, how, strerror(errno));
		im->bad++;
	}
	res = inflight_wait(f, uring);
	if (res != AF_LEN) {
		diag_add(d, "round %u: %s write of %ld at %lld: res %lld, expected %ld",
			 round + 1, how, AF_LEN, bs, res, AF_LEN);
		im->bad++;
		goto out;
	}
	if (act != ACT_CLOSE)
		image_zero(im, 0, bs);
	image_write(im, bs, AF_LEN, round + 1);
	snprintf(step, sizeof(step), "round %u: after %s %s an in-flight %s write of %ld at %lld",
		 round + 1, act_name[act], act == ACT_CLOSE ? "(EOF one block) during" :
		 "of [0, one block) under", how, AF_LEN, bs);
	verify(env->path, im, step, VIA_ALL, d);
out:
	if (other >= 0)
		close(other);
	close(fd);
	return pending;
}

/*
 * Rounds of inflight_round, alternating the two fallocate modes (or
 * closing) and the engines (rounds 3, 4, 7, 8 through io_uring).
 */
static enum test_status test_aio_inflight(const struct suite_env *env,
					  int closing, struct diag *d)
{
	struct image im;
	struct inflight f;
	unsigned char *buf = NULL;
	unsigned int round, inflight = 0;
	enum test_status st = TEST_FAIL;

	if (image_init(&im, (size_t)(64 * KIB + AF_LEN), d) != 0)
		return TEST_FAIL;
	buf = aligned(AF_LEN, d);
	if (buf == NULL) {
		image_free(&im);
		return TEST_FAIL;
	}
	if (inflight_open(&f, d) != 0) {
		st = TEST_SKIP;
		goto out;
	}
	for (round = 0; round < AF_ROUNDS && im.bad == 0; round++) {
		int uring = (round & 2) && f.ring.fd >= 0;
		enum inflight_act act = closing ? ACT_CLOSE :
					(round & 1) ? ACT_ZERO_RANGE : ACT_FALLOCATE;
		inflight += (unsigned int)inflight_round(&f, env, uring, act, round,
							 buf, &im, d);
	}
	/* A pass where the write was never in flight proves nothing. */
	diag_add(d, "%u of %u rounds: the write was in flight when the %s started",
		 inflight, round, closing ? "close" : "fallocate");
	inflight_close(&f);
	st = im.bad == 0 ? TEST_PASS : TEST_FAIL;
out:
	free(buf);
	image_free(&im);
	return st;
}

/*
 * fallocate under an extending asynchronous direct write, without
 * KEEP_SIZE: it must wait for the write before it computes the new size,
 * else it sets the size it saw (one block) after the completion extended
 * the file, and the write the application was told succeeded is cut off
 * (QEMU images on xfs, 249bd9087a52; fstests generic/586).
 */
enum test_status test_aio_fallocate(const struct suite_test *t,
				    const struct suite_env *env, struct diag *d)
{
	(void)t;
	return test_aio_inflight(env, 0, d);
}

/*
 * The close of another descriptor of the file under an extending
 * asynchronous direct write: xfs trims the blocks past EOF on close, and
 * must wait for the write first, else it frees the blocks the write is
 * filling and the completion extends the file over a hole (e4229d6b0bc9;
 * fstests generic/427).
 */
enum test_status test_aio_close(const struct suite_test *t,
				const struct suite_env *env, struct diag *d)
{
	(void)t;
	return test_aio_inflight(env, 1, d);
}

/* ---- splice from a direct-I/O file ---- */

#define SP_LEN (64 * KIB)

/*
 * splice() from a file opened O_DIRECT into a pipe with room for less than
 * asked: a pipe of one page, then a pipe of four pages three of them full.
 * Each splice must move what fits (a short count, never EAGAIN or an error
 * on a blocking pipe) at the right offset, and the bytes drained from the
 * pipe must be the file's, to EOF (fstests generic/591, 3253d9d09337).
 */
enum test_status test_splice_read(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct image im;
	unsigned char *buf = NULL, *got = NULL;
	int fd, rfd = -1, pipefd[2] = { -1, -1 };
	unsigned int pass;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, SP_LEN, d) != 0)
		goto out;
	buf = aligned(SP_LEN, d);
	got = aligned(SP_LEN + 16 * KIB, d);
	if (buf == NULL || got == NULL) {
		im.bad++;
		goto out;
	}
	if (put(fd, buf, 0, SP_LEN, 1, &im, "file", d) != 0)
		goto out;
	rfd = open(env->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (rfd < 0) {
		diag_add(d, "open O_DIRECT for reading: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	for (pass = 0; pass < 2 && im.bad == 0; pass++) {
		/* pass 0: a one-page pipe; pass 1: four pages, three full. */
		long pipe_sz = pass == 0 ? PAGE : 4 * PAGE;
		long held = pass == 0 ? 0 : 3 * PAGE; /* bytes of 'z' queued */
		loff_t off = 0;
		long long drained = 0;
		unsigned int calls = 0;

		if (pipe2(pipefd, O_CLOEXEC) != 0 ||
		    fcntl(pipefd[1], F_SETPIPE_SZ, pipe_sz) < pipe_sz) {
			diag_add(d, "pipe of %ld bytes: %s", pipe_sz, strerror(errno));
			im.bad++;
			break;
		}
		memset(got, 'z', (size_t)held);
		if (held > 0 && write(pipefd[1], got, (size_t)held) != held) {
			diag_add(d, "prefill the pipe: %s", strerror(errno));
			im.bad++;
			break;
		}
		while (off < SP_LEN && calls++ < 64) {
			long room = pipe_sz - held;
			long long at = off;
			ssize_t n = splice(rfd, &off, pipefd[1], NULL, SP_LEN, 0), r;

			if (n <= 0 || n > room || off != at + n) {
				diag_add(d, "splice of %ld at %lld from O_DIRECT into a pipe with %ld bytes free returned %zd%s%s and moved the offset to %lld, expected 1..%ld",
					 SP_LEN, at, room, n, n < 0 ? ": " : "",
					 n < 0 ? strerror(errno) : "", (long long)off, room);
				im.bad++;
				break;
			}
			if (held > 0 && read(pipefd[0], got, (size_t)held) != held) {
				im.bad++;
				break;
			}
			held = 0;
			r = read(pipefd[0], got, (size_t)n);
			if (r != n) {
				diag_add(d, "draining %zd bytes from the pipe got %zd", n, r);
				im.bad++;
				break;
			}
			im.bad += compare("bytes spliced from O_DIRECT", got, &im, at,
					  (size_t)n, d);
			drained += n;
		}
		if (im.bad == 0 && drained != SP_LEN) {
			diag_add(d, "spliced %lld bytes of %ld in %u calls", drained,
				 SP_LEN, calls);
			im.bad++;
		}
		if (im.bad == 0)
			diag_add(d, "pipe of %ld bytes%s: %u splices to EOF", pipe_sz,
				 pass ? ", 3 pages full" : "", calls);
		if (im.bad == 0 && splice(rfd, &off, pipefd[1], NULL, SP_LEN, 0) != 0) {
			diag_add(d, "splice at EOF (%lld) did not return 0", (long long)off);
			im.bad++;
		}
		close(pipefd[0]);
		close(pipefd[1]);
		pipefd[0] = pipefd[1] = -1;
	}
out:
	if (pipefd[0] >= 0) {
		close(pipefd[0]);
		close(pipefd[1]);
	}
	if (rfd >= 0)
		close(rfd);
	free(got);
	return finish(fd, buf, &im, st);
}
