/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The suite on a raw block device (issue 26): direct I/O that no filesystem
 * stands between, so block/fops.c (blkdev_direct_IO and its end-of-device
 * rules), bio building from user pages (bio_iov_iter_get_pages: partial
 * pages, several bios, many segments), the block device's page cache, and
 * native AIO and io_uring completions on it.
 *
 * The host gives the guest an empty disk ("<dev>:bdev" in rcgate.disks);
 * each test owns a window of it (suite_test.window, in MiB from the start,
 * or from the end for end-of-device), writes the window with a known
 * pattern first, keeps an image of what it must hold and checks it through
 * O_DIRECT and buffered reads. Nothing here assumes the disk was zeroed, so
 * the suite can run again on the same device (and on a loop device on the
 * host: rcgate-agent --dir /dev/loop0 --fs bdev).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/aio_abi.h>
#include <linux/fs.h>

#include "dio.h"
#include "exer.h"
#include "suite.h"

#define MIB (1024 * KIB)
/* Each test's window and the smallest device that holds them all. */
#define WIN (6 * MIB)
#define BDEV_MIN_SIZE (48 * MIB)
/* The seed of the pattern every window starts with. */
#define SEED0 0

/* ---- a window of the device ---- */

struct win {
	int fd;    /* O_RDWR|O_DIRECT on the device */
	long long base;
	struct image im; /* window-relative offsets */
};

static void win_end(struct win *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	image_free(&w->im);
}

/* "returned 4096" or "returned -1: Invalid argument", for diagnostics. */
static const char *ret_text(long long r, int e, char *buf, size_t len)
{
	if (r < 0)
		snprintf(buf, len, "returned %lld: %s", r, strerror(e));
	else
		snprintf(buf, len, "returned %lld", r);
	return buf;
}

/* An AIO or io_uring result for diagnostics: "res 4096", "res -11
 * Resource temporarily unavailable" (a negative errno). */
static const char *res_text(long long res, char *buf, size_t len)
{
	if (res < 0 && res > -4096)
		snprintf(buf, len, "res %lld %s", res, strerror((int)-res));
	else
		snprintf(buf, len, "res %lld", res);
	return buf;
}

/*
 * Opens the device and writes the whole window with SEED0. Returns 0, or
 * -1 with *st set (a failure with a diagnostic).
 */
static int win_begin(const struct suite_test *t, const struct suite_env *env,
		     struct win *w, enum test_status *st, struct diag *d)
{
	unsigned char *buf;
	char rt[96];
	ssize_t r;
	int e;

	w->fd = -1;
	memset(&w->im, 0, sizeof(w->im));
	*st = TEST_FAIL;
	w->base = t->window >= 0 ? (long long)t->window * MIB :
				   env->dev_size + (long long)t->window * MIB;
	if (w->base < 0 || w->base + WIN > env->dev_size) {
		diag_add(d, "window %d MiB outside the %lld-byte device",
			 t->window, env->dev_size);
		return -1;
	}
	w->fd = open(env->path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (w->fd < 0) {
		diag_add(d, "open %s O_DIRECT: %s", env->path, strerror(errno));
		return -1;
	}
	if (image_init(&w->im, WIN, d) != 0)
		goto fail;
	buf = aligned(WIN, d);
	if (buf == NULL)
		goto fail;
	pat_fill(buf, WIN, 0, SEED0);
	r = pwrite(w->fd, buf, WIN, (off_t)w->base);
	e = errno;
	free(buf);
	if (r != WIN) {
		diag_add(d, "prefill: pwrite of %ld bytes at %lld %s", WIN, w->base,
			 ret_text(r, e, rt, sizeof(rt)));
		goto fail;
	}
	image_write(&w->im, 0, WIN, SEED0);
	return 0;
fail:
	win_end(w);
	return -1;
}

/*
 * A direct write of seed's pattern at window offset off from buf + boff
 * (boff: how far from page alignment the user buffer starts) that must be
 * complete. 0, or -1 with a diagnostic.
 */
static int win_put(struct win *w, long long off, size_t len, size_t boff,
		   unsigned int seed, const char *what, struct diag *d)
{
	unsigned char *buf = aligned(len + boff, d);
	char rt[96];
	ssize_t r;

	if (buf == NULL) {
		w->im.bad++;
		return -1;
	}
	pat_fill(buf + boff, len, off, seed);
	r = pwrite(w->fd, buf + boff, len, (off_t)(w->base + off));
	free(buf);
	if (r != (ssize_t)len) {
		diag_add(d, "%s: pwrite of %zu bytes at %lld (buffer at page + %zu) %s, expected %zu",
			 what, len, w->base + off, boff,
			 ret_text(r, errno, rt, sizeof(rt)), len);
		w->im.bad++;
		if (r > 0)
			image_write(&w->im, off, (size_t)r, seed);
		return -1;
	}
	image_write(&w->im, off, len, seed);
	return 0;
}

/* Reads [off, off + len) of the window through fd into a buffer starting
 * boff bytes after a page (poisoned first) and compares it with the
 * image. Returns the number of problems (0 or 1). */
static unsigned int win_get(struct win *w, int fd, long long off, size_t len,
			    size_t boff, const char *how, struct diag *d)
{
	unsigned char *buf = aligned(len + boff, d);
	char rt[96];
	ssize_t r;
	unsigned int bad = 0;

	if (buf == NULL)
		return 1;
	memset(buf, 0xa5, len + boff);
	r = pread(fd, buf + boff, len, (off_t)(w->base + off));
	if (r != (ssize_t)len) {
		diag_add(d, "%s: pread of %zu bytes at %lld %s, expected %zu", how,
			 len, w->base + off, ret_text(r, errno, rt, sizeof(rt)),
			 len);
		bad = 1;
	} else {
		/* compare() names window offsets: the label adds the base. */
		char label[128];

		snprintf(label, sizeof(label), "%s (window at %lld)", how,
			 w->base);
		bad = compare(label, buf + boff, &w->im, off, len, d);
	}
	free(buf);
	return bad;
}

/* The whole window through O_DIRECT and through the page cache. */
static void win_verify(struct win *w, const struct suite_env *env,
		       const char *step, struct diag *d)
{
	char how[112];
	int bfd;

	snprintf(how, sizeof(how), "%s, direct read", step);
	w->im.bad += win_get(w, w->fd, 0, WIN, 0, how, d);
	bfd = open(env->path, O_RDONLY | O_CLOEXEC);
	if (bfd < 0) {
		diag_add(d, "%s: open buffered: %s", step, strerror(errno));
		w->im.bad++;
		return;
	}
	snprintf(how, sizeof(how), "%s, buffered read", step);
	w->im.bad += win_get(w, bfd, 0, WIN, 0, how, d);
	close(bfd);
}

static enum test_status win_finish(struct win *w)
{
	enum test_status st = w->im.bad == 0 ? TEST_PASS : TEST_FAIL;

	win_end(w);
	return st;
}

/* ---- plain and positional direct I/O ---- */

/*
 * Writes of every shape a bio is built from: one sector at an odd sector,
 * a page at a sector offset, 64 KiB, 1 MiB + 4 KiB (two bios: a bio holds
 * 256 pages), and 2 MiB + 1536 from a buffer 512 bytes into a page (every
 * page partly used, several bios); each read back directly into a buffer
 * at another offset. Then write() and read() with the file position, and
 * writev()/readv().
 */
enum test_status test_bdev_rw(const struct suite_test *t,
			      const struct suite_env *env, struct diag *d)
{
	static const struct {
		long long off;
		size_t len, boff, rboff;
	} ops[] = {
		{ 3 * 512, 512, 0, 1024 },
		{ 8 * KIB + 512, 4 * KIB, 0, 512 },
		{ 64 * KIB, 64 * KIB, 0, 0 },
		{ MIB, MIB + 4 * KIB, 0, 2048 },
		{ 3 * MIB - 512, 2 * MIB + 1536, 512, 0 },
	};
	enum test_status st;
	struct win w;
	unsigned char *buf = NULL;
	struct iovec iov[3];
	char rt[96];
	size_t i;
	ssize_t r;

	if (win_begin(t, env, &w, &st, d) != 0)
		return st;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		char what[64];

		snprintf(what, sizeof(what), "write %zu of %zu", i + 1,
			 sizeof(ops) / sizeof(ops[0]));
		if (win_put(&w, ops[i].off, ops[i].len, ops[i].boff,
			    (unsigned int)i + 1, what, d) != 0)
			continue;
		snprintf(what, sizeof(what), "read back of write %zu", i + 1);
		w.im.bad += win_get(&w, w.fd, ops[i].off, ops[i].len,
				    ops[i].rboff, what, d);
	}
	/* write() and read() move the position by what they return. */
	buf = aligned(3 * 8 * KIB, d);
	if (buf == NULL) {
		w.im.bad++;
		goto out;
	}
	pat_fill(buf, 3 * 8 * KIB, 5 * MIB, 9);
	if (lseek(w.fd, (off_t)(w.base + 5 * MIB), SEEK_SET) < 0) {
		diag_add(d, "lseek: %s", strerror(errno));
		w.im.bad++;
		goto out;
	}
	for (i = 0; i < 2; i++) {
		long long want = w.base + 5 * MIB + (long long)(i + 1) * 8 * KIB;
		long long pos;

		r = write(w.fd, buf + i * 8 * KIB, 8 * KIB);
		if (r != 8 * KIB) {
			diag_add(d, "write() %zu of 8192 %s", i + 1,
				 ret_text(r, errno, rt, sizeof(rt)));
			w.im.bad++;
			goto out;
		}
		image_write(&w.im, 5 * MIB + (long long)i * 8 * KIB, 8 * KIB, 9);
		pos = lseek(w.fd, 0, SEEK_CUR);
		if (pos != want) {
			diag_add(d, "write() %zu of 8192: position %lld, expected %lld",
				 i + 1, pos, want);
			w.im.bad++;
		}
	}
	iov[0].iov_base = buf + 16 * KIB;
	iov[0].iov_len = 4 * KIB;
	iov[1].iov_base = buf + 20 * KIB;
	iov[1].iov_len = 4 * KIB;
	if (lseek(w.fd, (off_t)(w.base + 5 * MIB + 16 * KIB), SEEK_SET) < 0 ||
	    (r = writev(w.fd, iov, 2)) != 8 * KIB) {
		diag_add(d, "writev of 2 x 4096 at %lld failed or was short",
			 w.base + 5 * MIB + 16 * KIB);
		w.im.bad++;
		goto out;
	}
	image_write(&w.im, 5 * MIB + 16 * KIB, 8 * KIB, 9);
	if (lseek(w.fd, 0, SEEK_CUR) != w.base + 5 * MIB + 24 * KIB) {
		diag_add(d, "writev: position %lld, expected %lld",
			 (long long)lseek(w.fd, 0, SEEK_CUR),
			 w.base + 5 * MIB + 24 * KIB);
		w.im.bad++;
	}
	memset(buf, 0, 3 * 8 * KIB);
	if (lseek(w.fd, (off_t)(w.base + 5 * MIB), SEEK_SET) < 0 ||
	    (r = read(w.fd, buf, 8 * KIB)) != 8 * KIB) {
		diag_add(d, "read() of 8192 at %lld failed or was short",
			 w.base + 5 * MIB);
		w.im.bad++;
		goto out;
	}
	iov[0].iov_base = buf + 8 * KIB;
	iov[0].iov_len = 12 * KIB;
	iov[1].iov_base = buf + 20 * KIB;
	iov[1].iov_len = 4 * KIB;
	r = readv(w.fd, iov, 2);
	if (r != 16 * KIB) {
		diag_add(d, "readv of 12288 + 4096 after read() %s, expected 16384",
			 ret_text(r, errno, rt, sizeof(rt)));
		w.im.bad++;
	} else {
		w.im.bad += compare("read() and readv() after the position", buf,
				    &w.im, 5 * MIB, 24 * KIB, d);
	}
	if (lseek(w.fd, 0, SEEK_CUR) != w.base + 5 * MIB + 24 * KIB) {
		diag_add(d, "read() and readv(): position %lld, expected %lld",
			 (long long)lseek(w.fd, 0, SEEK_CUR),
			 w.base + 5 * MIB + 24 * KIB);
		w.im.bad++;
	}
	win_verify(&w, env, "after the writes", d);
out:
	free(buf);
	return win_finish(&w);
}

/* ---- vectors ---- */

#define VSEG 300
#define VSEG_LEN 1536

/*
 * One pwritev() of 300 segments of 1536 bytes, each starting 3 KiB into a
 * page so that it spans two (600 pages: several bios, every bvec a partial
 * page), in shuffled memory order; one preadv() of 150 segments of 3 KiB
 * in another order. Then iovecs the device cannot take (a segment length
 * that is not a multiple of the sector, a segment address off the DMA
 * alignment): EINVAL with nothing written, or (newer kernels may accept)
 * exactly the right bytes.
 */
enum test_status test_bdev_vectored(const struct suite_test *t,
				    const struct suite_env *env, struct diag *d)
{
	enum test_status st;
	struct win w;
	struct iovec *iov = NULL;
	unsigned char *area = NULL;
	const long long off = 512 * KIB + 512;
	const size_t total = (size_t)VSEG * VSEG_LEN;
	unsigned int k;
	char rt[96];
	ssize_t r;

	if (win_begin(t, env, &w, &st, d) != 0)
		return st;
	iov = calloc(VSEG, sizeof(*iov));
	area = aligned((size_t)VSEG * 2 * PAGE, d);
	if (iov == NULL || area == NULL) {
		diag_add(d, "out of memory");
		w.im.bad++;
		goto out;
	}
	/* 7 is coprime with 300: the slots are a permutation. */
	for (k = 0; k < VSEG; k++) {
		iov[k].iov_base = area + (size_t)((k * 7) % VSEG) * 2 * PAGE + 3 * KIB;
		iov[k].iov_len = VSEG_LEN;
		pat_fill(iov[k].iov_base, VSEG_LEN, off + (long long)k * VSEG_LEN, 1);
	}
	r = pwritev(w.fd, iov, VSEG, (off_t)(w.base + off));
	if (r != (ssize_t)total) {
		diag_add(d, "pwritev of %d segments of %d bytes spanning two pages each at %lld %s, expected %zu",
			 VSEG, VSEG_LEN, w.base + off,
			 ret_text(r, errno, rt, sizeof(rt)), total);
		w.im.bad++;
		goto out;
	}
	image_write(&w.im, off, total, 1);
	memset(area, 0xa5, (size_t)VSEG * 2 * PAGE);
	for (k = 0; k < VSEG / 2; k++) {
		iov[k].iov_base = area + (size_t)((k * 11) % (VSEG / 2)) * 4 * PAGE + 512;
		iov[k].iov_len = 2 * VSEG_LEN;
	}
	r = preadv(w.fd, iov, VSEG / 2, (off_t)(w.base + off));
	if (r != (ssize_t)total) {
		diag_add(d, "preadv of %d segments of %d bytes %s, expected %zu",
			 VSEG / 2, 2 * VSEG_LEN, ret_text(r, errno, rt, sizeof(rt)),
			 total);
		w.im.bad++;
	} else {
		for (k = 0; k < VSEG / 2; k++) {
			char label[48];

			snprintf(label, sizeof(label), "preadv segment %u", k);
			if (compare(label, iov[k].iov_base, &w.im,
				    off + (long long)k * 2 * VSEG_LEN,
				    2 * VSEG_LEN, d) != 0) {
				w.im.bad++;
				break;
			}
		}
	}
	/* Segments the device cannot take as they are. */
	{
		static const struct {
			const char *what;
			size_t addr[2], len[2];
		} bad[] = {
			{ "segment lengths 1000 + 24", { 0, 1024 }, { 1000, 24 } },
			{ "a segment address 8 bytes off the sector", { 8, 2048 },
			  { 512, 512 } },
		};
		size_t b;

		for (b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
			long long at = 4 * MIB + (long long)b * 64 * KIB;
			struct iovec v[2];
			size_t len = bad[b].len[0] + bad[b].len[1];

			for (k = 0; k < 2; k++) {
				v[k].iov_base = area + bad[b].addr[k];
				v[k].iov_len = bad[b].len[k];
				pat_fill(v[k].iov_base, bad[b].len[k],
					 at + (k ? (long long)bad[b].len[0] : 0), 3);
			}
			r = pwritev(w.fd, v, 2, (off_t)(w.base + at));
			if (r < 0 && errno == EINVAL) {
				diag_add(d, "pwritev with %s: EINVAL", bad[b].what);
				continue;
			}
			if (r == (ssize_t)len) {
				diag_add(d, "pwritev with %s: accepted, checking data",
					 bad[b].what);
				image_write(&w.im, at, len, 3);
				continue;
			}
			diag_add(d, "pwritev with %s at %lld %s, expected EINVAL or %zu",
				 bad[b].what, w.base + at,
				 ret_text(r, errno, rt, sizeof(rt)), len);
			w.im.bad++;
			if (r > 0)
				image_write(&w.im, at, (size_t)r, 3);
		}
	}
	win_verify(&w, env, "after the vectors", d);
out:
	free(iov);
	free(area);
	return win_finish(&w);
}

/* ---- RWF_NOWAIT ---- */

/* More pages than one bio holds (256), one segment each. */
#define NOWAIT_SEGS 264

/*
 * RWF_NOWAIT direct writes of one page and of 1 MiB + 8 KiB (more than one
 * bio: kernels refuse those with EAGAIN rather than risk a partial write),
 * then reads likewise: each completes whole or fails with EAGAIN, and
 * EAGAIN leaves the device untouched. Then a buffered write that is not
 * yet written back: a RWF_NOWAIT direct read of it must fail with EAGAIN or
 * see the new bytes, and a blocking direct read must see them.
 */
enum test_status test_bdev_nowait(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d)
{
	/* nseg 0: one segment of len; else nseg pages of the buffer, taken
	 * in a shuffled order so that no two segments can merge into one
	 * bvec (pages faulted in order are often physically contiguous, and
	 * a bio then holds the whole of a contiguous 1 MiB + 8 KiB). */
	static const struct {
		long long off;
		size_t len;
		unsigned int nseg;
	} ops[] = {
		{ 64 * KIB, 4 * KIB, 0 },
		{ MIB, MIB + 8 * KIB, 0 },
		{ 3 * MIB + 512 * KIB, NOWAIT_SEGS * PAGE, NOWAIT_SEGS },
	};
	enum test_status st;
	struct win w;
	unsigned char *buf = NULL, *seg = NULL;
	struct iovec *iov = NULL;
	char rt[96];
	size_t i;
	ssize_t r;
	int bfd = -1;

	if (win_begin(t, env, &w, &st, d) != 0)
		return st;
	buf = aligned(MIB + 8 * KIB, d);
	seg = aligned(NOWAIT_SEGS * PAGE, d);
	iov = calloc(NOWAIT_SEGS, sizeof(*iov));
	if (buf == NULL || seg == NULL || iov == NULL) {
		w.im.bad++;
		goto out;
	}
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		unsigned int nv = ops[i].nseg ? ops[i].nseg : 1, k;

		if (ops[i].nseg == 0) {
			iov[0].iov_base = buf;
			iov[0].iov_len = ops[i].len;
			pat_fill(buf, ops[i].len, ops[i].off, 4);
		}
		for (k = 0; k < ops[i].nseg; k++) {
			/* 101 is coprime with NOWAIT_SEGS: a permutation. */
			iov[k].iov_base = seg + (size_t)((k * 101) % NOWAIT_SEGS) * PAGE;
			iov[k].iov_len = PAGE;
			pat_fill(iov[k].iov_base, PAGE, ops[i].off + (long long)k * PAGE, 4);
		}
		r = pwritev2(w.fd, iov, (int)nv, (off_t)(w.base + ops[i].off), RWF_NOWAIT);
		diag_add(d, "RWF_NOWAIT write of %zu in %u segment%s: %s", ops[i].len,
			 nv, nv > 1 ? "s" : "",
			 r == (ssize_t)ops[i].len ? "complete" :
			 r < 0 && errno == EAGAIN ? "EAGAIN" : "other");
		if (r == (ssize_t)ops[i].len) {
			image_write(&w.im, ops[i].off, ops[i].len, 4);
		} else if (!(r < 0 && errno == EAGAIN)) {
			diag_add(d, "RWF_NOWAIT pwritev2 of %zu at %lld %s, expected %zu or EAGAIN",
				 ops[i].len, w.base + ops[i].off,
				 ret_text(r, errno, rt, sizeof(rt)), ops[i].len);
			w.im.bad++;
			if (r > 0)
				image_write(&w.im, ops[i].off, (size_t)r, 4);
		}
		/* EAGAIN: the image still says SEED0, and the reads tell. */
		memset(buf, 0xa5, MIB + 8 * KIB);
		memset(seg, 0xa5, NOWAIT_SEGS * PAGE);
		r = preadv2(w.fd, iov, (int)nv, (off_t)(w.base + ops[i].off), RWF_NOWAIT);
		if (r == (ssize_t)ops[i].len) {
			for (k = 0; k < nv; k++)
				if (compare("RWF_NOWAIT preadv2", iov[k].iov_base, &w.im,
					    ops[i].off + (long long)k * PAGE,
					    iov[k].iov_len, d) != 0) {
					w.im.bad++;
					break;
				}
		} else if (!(r < 0 && errno == EAGAIN)) {
			diag_add(d, "RWF_NOWAIT preadv2 of %zu at %lld %s, expected %zu or EAGAIN",
				 ops[i].len, w.base + ops[i].off,
				 ret_text(r, errno, rt, sizeof(rt)), ops[i].len);
			w.im.bad++;
		}
		w.im.bad += win_get(&w, w.fd, ops[i].off, ops[i].len, 0,
				    "after RWF_NOWAIT, direct read", d);
	}
	bfd = open(env->path, O_RDWR | O_CLOEXEC);
	if (bfd < 0) {
		diag_add(d, "open buffered: %s", strerror(errno));
		w.im.bad++;
		goto out;
	}
	pat_fill(buf, 8 * KIB, 3 * MIB, 5);
	r = pwrite(bfd, buf, 8 * KIB, (off_t)(w.base + 3 * MIB));
	if (r != 8 * KIB) {
		diag_add(d, "buffered pwrite of 8192 %s", ret_text(r, errno, rt, sizeof(rt)));
		w.im.bad++;
		goto out;
	}
	image_write(&w.im, 3 * MIB, 8 * KIB, 5);
	memset(buf, 0xa5, 8 * KIB);
	iov[0].iov_base = buf;
	iov[0].iov_len = 8 * KIB;
	r = preadv2(w.fd, iov, 1, (off_t)(w.base + 3 * MIB), RWF_NOWAIT);
	if (r == 8 * KIB)
		w.im.bad += compare("RWF_NOWAIT direct read of a dirty buffered range",
				    buf, &w.im, 3 * MIB, 8 * KIB, d);
	else if (!(r < 0 && errno == EAGAIN)) {
		diag_add(d, "RWF_NOWAIT direct read of a dirty buffered range %s, expected 8192 or EAGAIN",
			 ret_text(r, errno, rt, sizeof(rt)));
		w.im.bad++;
	}
	w.im.bad += win_get(&w, w.fd, 3 * MIB, 8 * KIB, 0,
			    "direct read of a dirty buffered range", d);
	win_verify(&w, env, "after RWF_NOWAIT", d);
out:
	if (bfd >= 0)
		close(bfd);
	free(iov);
	free(seg);
	free(buf);
	return win_finish(&w);
}

/* ---- native AIO and io_uring ---- */

/* One asynchronous I/O of a batch, and its result. */
struct aop {
	int write;
	long long off; /* window-relative */
	size_t len, boff;
	int rwf;           /* RWF_ flags (aio_rw_flags, rw_flags) */
	unsigned int seed; /* what a write writes */
	unsigned char *mem; /* the page-aligned buffer (len + boff) */
	long long res;
};

/* The batch both engines run: writes of every shape, out of order, one
 * with RWF_DSYNC, then reads of them into buffers at other offsets. */
static const struct aop async_ops[] = {
	{ 1, 2 * MIB, MIB + 4 * KIB, 0, 0, 1, NULL, 0 },
	{ 1, 512, 512, 1024, 0, 2, NULL, 0 },
	{ 1, 64 * KIB + 512, 24 * KIB, 512, 0, 3, NULL, 0 },
	{ 1, 4 * MIB, 64 * KIB, 0, RWF_DSYNC, 4, NULL, 0 },
	{ 0, 2 * MIB, MIB + 4 * KIB, 2048, 0, 0, NULL, 0 },
	{ 0, 512, 512, 0, 0, 0, NULL, 0 },
	{ 0, 64 * KIB + 512, 24 * KIB, 0, 0, 0, NULL, 0 },
	{ 0, 4 * MIB, 64 * KIB, 512, 0, 0, NULL, 0 },
};
#define NASYNC (sizeof(async_ops) / sizeof(async_ops[0]))

static int aops_alloc(struct aop *ops, size_t n, struct diag *d)
{
	size_t i;

	for (i = 0; i < n; i++) {
		ops[i].mem = aligned(ops[i].len + ops[i].boff, d);
		if (ops[i].mem == NULL)
			return -1;
		if (ops[i].write)
			pat_fill(ops[i].mem + ops[i].boff, ops[i].len, ops[i].off,
				 ops[i].seed);
		else
			memset(ops[i].mem, 0xa5, ops[i].len + ops[i].boff);
	}
	return 0;
}

static void aops_free(struct aop *ops, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ops[i].mem);
}

/* ops[0..n) on fd (their offsets from base) through native AIO in one
 * io_submit; res in each. 0, or -1: with *skip set to errno when this
 * kernel has no native AIO, else with a diagnostic. */
static int aio_batch(int fd, long long base, struct aop *ops, size_t n,
		     int *skip, struct diag *d)
{
	aio_context_t ctx = 0;
	struct iocb cbs[NASYNC], *cbp[NASYNC];
	struct io_event ev[NASYNC];
	long got = 0, r;
	size_t i;
	int rc = -1;

	if (n > NASYNC)
		return -1;
	if (syscall(__NR_io_setup, (long)NASYNC, &ctx) != 0) {
		*skip = errno;
		return -1;
	}
	memset(cbs, 0, sizeof(cbs));
	for (i = 0; i < n; i++) {
		cbs[i].aio_data = i;
		cbs[i].aio_fildes = (uint32_t)fd;
		cbs[i].aio_lio_opcode = ops[i].write ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD;
		cbs[i].aio_buf = (uint64_t)(uintptr_t)(ops[i].mem + ops[i].boff);
		cbs[i].aio_nbytes = ops[i].len;
		cbs[i].aio_offset = base + ops[i].off;
		cbs[i].aio_rw_flags = ops[i].rwf;
		cbp[i] = &cbs[i];
		ops[i].res = LLONG_MIN;
	}
	r = syscall(__NR_io_submit, ctx, (long)n, cbp);
	if (r != (long)n) {
		diag_add(d, "io_submit of %zu returned %ld%s%s", n, r,
			 r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
		if (r <= 0)
			goto out;
	}
	while (got < r) {
		long e = aio_getevents(ctx, 1L, r - got, ev);

		if (e < 0 && errno == EINTR)
			continue;
		if (e <= 0) {
			diag_add(d, "io_getevents: %s", strerror(errno));
			goto out;
		}
		for (i = 0; i < (size_t)e; i++)
			if (ev[i].data < n)
				ops[ev[i].data].res = ev[i].res;
		got += e;
	}
	rc = r == (long)n ? 0 : -1;
out:
	syscall(__NR_io_destroy, ctx);
	return rc;
}

/* The same through io_uring (READ/WRITE with rw_flags), one enter. */
static int uring_batch(int fd, long long base, struct aop *ops, size_t n,
		       int *skip, struct diag *d)
{
	struct ring ring;
	unsigned int got = 0;
	size_t i;
	long r;
	int rc = -1;

	if (n > NASYNC)
		return -1;
	if (ring_open(&ring, NASYNC) != 0) {
		*skip = errno;
		return -1;
	}
	for (i = 0; i < n; i++) {
		/* The sqe ring_queue fills is the one at the tail now. */
		uint32_t idx = *ring_u32(ring.sq, ring.p.sq_off.tail) &
			       *ring_u32(ring.sq, ring.p.sq_off.ring_mask);

		ring_queue(&ring, ops[i].write ? IORING_OP_WRITE : IORING_OP_READ,
			   fd, ops[i].mem + ops[i].boff, (unsigned int)ops[i].len,
			   base + ops[i].off, i);
		ring.sqes[idx].rw_flags = (uint32_t)ops[i].rwf;
		ops[i].res = LLONG_MIN;
	}
	r = syscall(__NR_io_uring_enter, ring.fd, (unsigned int)n,
		    (unsigned int)n, IORING_ENTER_GETEVENTS, NULL, 0);
	if (r != (long)n) {
		diag_add(d, "io_uring_enter of %zu returned %ld%s%s", n, r,
			 r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
		goto out;
	}
	for (; got < n; got++) {
		struct io_uring_cqe c;

		if (ring_wait_cqe(&ring, &c) != 0) {
			diag_add(d, "io_uring_enter (wait): %s", strerror(errno));
			goto out;
		}
		if (c.user_data < n)
			ops[c.user_data].res = c.res;
	}
	rc = 0;
out:
	ring_close(&ring);
	return rc;
}

/*
 * ops[0..n) through one engine on fd (the window's own descriptor, or
 * another on the same device): their buffers made, then the batch. 1 when
 * it ran, 0 when this kernel lacks the engine (*skip set, nothing
 * counted), -1 after a problem counted in w->im.bad. aops_free() after.
 */
static int engine_run(struct win *w, int fd, int uring, struct aop *ops,
		      size_t n, int *skip, struct diag *d)
{
	int rc;

	*skip = 0;
	if (aops_alloc(ops, n, d) != 0) {
		w->im.bad++;
		return -1;
	}
	rc = uring ? uring_batch(fd, w->base, ops, n, skip, d) :
		     aio_batch(fd, w->base, ops, n, skip, d);
	if (rc == 0)
		return 1;
	if (*skip != 0)
		return 0;
	w->im.bad++;
	return -1;
}

/* Checks every result of a batch that ran: a write's res is its length
 * (the image learns what it wrote), a read's res its length and its bytes
 * the image's. */
static void aops_check(struct win *w, const char *engine, struct aop *ops,
		       size_t n, struct diag *d)
{
	for (size_t i = 0; i < n; i++) {
		const char *op = ops[i].write ? "write" : "read";
		char label[96];

		if (ops[i].res != (long long)ops[i].len) {
			diag_add(d, "%s %s %zu of %zu bytes at %lld: %s, expected %zu",
				 engine, op, i, ops[i].len, w->base + ops[i].off,
				 res_text(ops[i].res, label, sizeof(label)), ops[i].len);
			w->im.bad++;
			if (ops[i].write && ops[i].res > 0)
				image_write(&w->im, ops[i].off, (size_t)ops[i].res,
					    ops[i].seed);
			continue;
		}
		if (ops[i].write) {
			image_write(&w->im, ops[i].off, ops[i].len, ops[i].seed);
			continue;
		}
		snprintf(label, sizeof(label), "%s read %zu (window at %lld)",
			 engine, i, w->base);
		w->im.bad += compare(label, ops[i].mem + ops[i].boff, &w->im,
				     ops[i].off, ops[i].len, d);
	}
}

/*
 * The batch through one engine: the writes in one submission, the reads in
 * another, every result and byte checked, then the window read back.
 */
static enum test_status async_test(const struct suite_test *t,
				   const struct suite_env *env, int uring,
				   struct diag *d)
{
	const char *engine = uring ? "io_uring" : "aio";
	struct aop ops[NASYNC];
	enum test_status st;
	struct win w;
	size_t half = 0, pass;
	int skip = 0;

	if (win_begin(t, env, &w, &st, d) != 0)
		return st;
	memcpy(ops, async_ops, sizeof(ops)); /* every mem NULL */
	while (half < NASYNC && ops[half].write)
		half++;
	for (pass = 0; pass < 2; pass++) {
		struct aop *o = pass == 0 ? ops : ops + half;
		size_t n = pass == 0 ? half : NASYNC - half;
		int rc = engine_run(&w, w.fd, uring, o, n, &skip, d);

		if (rc == 0) {
			snprintf(d->skip_reason, sizeof(d->skip_reason), "%s: %s",
				 uring ? "io_uring_setup (CONFIG_IO_URING)" :
					 "io_setup (native AIO, CONFIG_AIO)",
				 strerror(skip));
			aops_free(ops, NASYNC);
			win_end(&w);
			return TEST_SKIP;
		}
		if (rc < 0)
			goto out;
		aops_check(&w, engine, o, n, d);
	}
	win_verify(&w, env, uring ? "after io_uring" : "after aio", d);
out:
	aops_free(ops, NASYNC);
	return win_finish(&w);
}

enum test_status test_bdev_aio(const struct suite_test *t,
			       const struct suite_env *env, struct diag *d)
{
	return async_test(t, env, 0, d);
}

enum test_status test_bdev_uring(const struct suite_test *t,
				 const struct suite_env *env, struct diag *d)
{
	return async_test(t, env, 1, d);
}

/* ---- the page cache of the device ---- */

/*
 * The block device's page cache and direct I/O must agree: a direct read
 * sees a buffered write not yet written back and bytes dirtied through a
 * shared mapping; a buffered read and an old mapping see a direct write
 * over pages they had cached.
 */
enum test_status test_bdev_coherence(const struct suite_test *t,
				     const struct suite_env *env,
				     struct diag *d)
{
	enum test_status st;
	struct win w;
	unsigned char *buf = NULL, *m = MAP_FAILED;
	const size_t mlen = 256 * KIB;
	const long long moff = 2 * MIB;
	char rt[96];
	ssize_t r;
	int bfd = -1;

	if (win_begin(t, env, &w, &st, d) != 0)
		return st;
	buf = aligned(64 * KIB, d);
	bfd = open(env->path, O_RDWR | O_CLOEXEC);
	if (buf == NULL || bfd < 0) {
		diag_add(d, "buffered open: %s", strerror(errno));
		w.im.bad++;
		goto out;
	}
	/* 1. Dirty page cache, then a direct read. */
	pat_fill(buf, 16 * KIB, 64 * KIB + 512, 6);
	r = pwrite(bfd, buf, 16 * KIB, (off_t)(w.base + 64 * KIB + 512));
	if (r != 16 * KIB) {
		diag_add(d, "buffered pwrite %s", ret_text(r, errno, rt, sizeof(rt)));
		w.im.bad++;
		goto out;
	}
	image_write(&w.im, 64 * KIB + 512, 16 * KIB, 6);
	w.im.bad += win_get(&w, w.fd, 64 * KIB, 32 * KIB, 0,
			    "direct read after an unsynced buffered write", d);
	/* 2. Cached pages, then a direct write over them. */
	w.im.bad += win_get(&w, bfd, MIB, 64 * KIB, 0, "buffered read (caching)", d);
	if (win_put(&w, MIB + 4 * KIB, 32 * KIB, 0, 7,
		    "direct write over cached pages", d) == 0)
		w.im.bad += win_get(&w, bfd, MIB, 64 * KIB, 0,
				    "buffered read after a direct write over cached pages", d);
	/* 3. An old shared mapping sees a direct write; bytes dirtied
	 * through the mapping are what a direct read sees. */
	m = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_SHARED, bfd,
		 (off_t)(w.base + moff));
	if (m == MAP_FAILED) {
		diag_add(d, "mmap of the device: %s", strerror(errno));
		w.im.bad++;
		goto out;
	}
	w.im.bad += compare("mmap read (caching)", m, &w.im, moff, mlen, d);
	if (win_put(&w, moff + 8 * KIB, 64 * KIB, 0, 8,
		    "direct write under a mapping", d) == 0)
		w.im.bad += compare("mmap read after a direct write", m, &w.im,
				    moff, mlen, d);
	pat_fill(m + 128 * KIB, 8 * KIB, moff + 128 * KIB, 9);
	image_write(&w.im, moff + 128 * KIB, 8 * KIB, 9);
	w.im.bad += win_get(&w, w.fd, moff + 124 * KIB, 16 * KIB, 0,
			    "direct read of bytes dirtied through a mapping", d);
	win_verify(&w, env, "after the coherence checks", d);
out:
	if (m != MAP_FAILED)
		munmap(m, mlen);
	if (bfd >= 0)
		close(bfd);
	free(buf);
	return win_finish(&w);
}

/* ---- faulting user buffers ---- */

/*
 * A read into a read-only buffer fails with EFAULT and changes nothing. A
 * write from 16 KiB whose third page is unmapped fails with EFAULT or
 * stops short at most at the hole; either way the device holds new bytes
 * only in the part before the hole (the old ones elsewhere), and exactly
 * the new bytes up to what a short count reports. A read into such a
 * buffer returns EFAULT or a short count of right bytes.
 */
enum test_status test_bdev_efault(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d)
{
	enum test_status st;
	struct win w;
	const size_t len = 4 * PAGE;
	const long long off = 256 * KIB;
	unsigned char *m = MAP_FAILED, *rb = NULL;
	char rt[96];
	ssize_t r;
	size_t i;

	if (win_begin(t, env, &w, &st, d) != 0)
		return st;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	rb = aligned(len, d);
	if (m == MAP_FAILED || rb == NULL) {
		diag_add(d, "buffers: %s", strerror(errno));
		w.im.bad++;
		goto out;
	}
	memset(m, 0x5a, 2 * PAGE);
	mprotect(m, 2 * PAGE, PROT_READ);
	r = pread(w.fd, m, 2 * PAGE, (off_t)(w.base + off));
	if (r != -1 || errno != EFAULT) {
		diag_add(d, "direct read into a read-only buffer %s, expected EFAULT",
			 ret_text(r, errno, rt, sizeof(rt)));
		w.im.bad++;
	}
	for (i = 0; i < 2 * PAGE && m[i] == 0x5a; i++)
		;
	if (i < 2 * PAGE) {
		diag_add(d, "direct read into a read-only buffer changed it at byte %zu", i);
		w.im.bad++;
	}
	mprotect(m, 2 * PAGE, PROT_READ | PROT_WRITE);
	pat_fill(m, 2 * PAGE, off, 2);
	pat_fill(m + 3 * PAGE, PAGE, off + 3 * PAGE, 2);
	munmap(m + 2 * PAGE, PAGE);
	r = pwrite(w.fd, m, len, (off_t)(w.base + off));
	diag_add(d, "direct write with an unmapped 3rd page: %s",
		 ret_text(r, errno, rt, sizeof(rt)));
	if (r > 0 && r <= 2 * PAGE) {
		image_write(&w.im, off, (size_t)r, 2);
	} else if (r == -1 && errno == EFAULT) {
		/* Some of the part before the hole may be on the device: take
		 * each sector as it is if it is old or new, never other. */
		if (pread(w.fd, rb, len, (off_t)(w.base + off)) == (ssize_t)len) {
			for (i = 0; i < 2 * PAGE; i += 512)
				if (memcmp(rb + i, m + i, 512) == 0)
					image_write(&w.im, off + (long long)i, 512, 2);
		}
	} else {
		diag_add(d, "direct write of 16384 with an unmapped 3rd page %s, expected EFAULT or <= 8192",
			 ret_text(r, errno, rt, sizeof(rt)));
		w.im.bad++;
	}
	w.im.bad += win_get(&w, w.fd, off, len, 0,
			    "after a write from a partly unmapped buffer", d);
	memset(m, 0, 2 * PAGE);
	r = pread(w.fd, m, len, (off_t)(w.base + off));
	if (r > 0 && r <= 2 * PAGE)
		w.im.bad += compare("short direct read into a partly unmapped buffer",
				    m, &w.im, off, (size_t)r, d);
	else if (!(r == -1 && errno == EFAULT)) {
		diag_add(d, "direct read of 16384 into a buffer with an unmapped 3rd page %s, expected EFAULT or <= 8192",
			 ret_text(r, errno, rt, sizeof(rt)));
		w.im.bad++;
	}
	win_verify(&w, env, "after the faulting buffers", d);
out:
	if (m != MAP_FAILED) {
		munmap(m, 2 * PAGE);
		munmap(m + 3 * PAGE, PAGE);
	}
	free(rb);
	return win_finish(&w);
}

/* ---- the end of the device ---- */

/*
 * At the last bytes of the device (its window is its last 6 MiB): a read
 * across the end returns the bytes up to it (pread, preadv2, AIO and
 * io_uring alike), a read at or past the end returns 0, a write across the
 * end writes and returns the part up to it, a write at or past the end
 * fails with ENOSPC; write() leaves the position at the end.
 */
enum test_status test_bdev_eod(const struct suite_test *t,
			       const struct suite_env *env, struct diag *d)
{
	enum test_status st;
	struct win w;
	unsigned char *buf = NULL;
	const long long tail = WIN - 4 * KIB; /* window offset of the last page */
	struct aop ops[2];
	struct iovec iov[2];
	char rt[96];
	ssize_t r;
	int skip, e;

	if (win_begin(t, env, &w, &st, d) != 0)
		return st;
	buf = aligned(16 * KIB, d);
	if (buf == NULL) {
		w.im.bad++;
		goto out;
	}
	pat_fill(buf, 8 * KIB, tail, 3);
	r = pwrite(w.fd, buf, 8 * KIB, (off_t)(w.base + tail));
	if (r != 4 * KIB) {
		diag_add(d, "pwrite of 8192 at %lld, 4096 before the end, %s, expected 4096",
			 w.base + tail, ret_text(r, errno, rt, sizeof(rt)));
		w.im.bad++;
	}
	if (r > 0)
		image_write(&w.im, tail, r < 4 * KIB ? (size_t)r : 4 * KIB, 3);
	for (long long past = 0; past <= MIB; past += MIB) {
		r = pwrite(w.fd, buf, 4 * KIB, (off_t)(env->dev_size + past));
		e = errno;
		if (r != -1 || e != ENOSPC) {
			diag_add(d, "pwrite of 4096 at %lld (the end + %lld) %s, expected ENOSPC",
				 env->dev_size + past, past,
				 ret_text(r, e, rt, sizeof(rt)));
			w.im.bad++;
		}
		r = pread(w.fd, buf, 4 * KIB, (off_t)(env->dev_size + past));
		if (r != 0) {
			diag_add(d, "pread of 4096 at %lld (the end + %lld) %s, expected 0",
				 env->dev_size + past, past,
				 ret_text(r, errno, rt, sizeof(rt)));
			w.im.bad++;
		}
	}
	memset(buf, 0xa5, 16 * KIB);
	r = pread(w.fd, buf, 8 * KIB, (off_t)(w.base + tail));
	if (r != 4 * KIB) {
		diag_add(d, "pread of 8192 at %lld, 4096 before the end, %s, expected 4096",
			 w.base + tail, ret_text(r, errno, rt, sizeof(rt)));
		w.im.bad++;
	} else {
		w.im.bad += compare("pread across the end", buf, &w.im, tail,
				    4 * KIB, d);
	}
	iov[0].iov_base = buf;
	iov[0].iov_len = 2 * KIB;
	iov[1].iov_base = buf + 4 * KIB;
	iov[1].iov_len = 8 * KIB;
	memset(buf, 0xa5, 16 * KIB);
	r = preadv2(w.fd, iov, 2, (off_t)(w.base + tail), 0);
	if (r != 4 * KIB) {
		diag_add(d, "preadv2 of 2048 + 8192 at %lld %s, expected 4096",
			 w.base + tail, ret_text(r, errno, rt, sizeof(rt)));
		w.im.bad++;
	} else {
		w.im.bad += compare("preadv2 across the end, segment 1", buf,
				    &w.im, tail, 2 * KIB, d);
		w.im.bad += compare("preadv2 across the end, segment 2",
				    buf + 4 * KIB, &w.im, tail + 2 * KIB, 2 * KIB, d);
	}
	/* write() across the end: short, and the position at the end. */
	if (lseek(w.fd, (off_t)(w.base + tail), SEEK_SET) >= 0) {
		long long pos;

		pat_fill(buf, 8 * KIB, tail, 4);
		r = write(w.fd, buf, 8 * KIB);
		pos = lseek(w.fd, 0, SEEK_CUR);
		if (r != 4 * KIB || pos != env->dev_size) {
			diag_add(d, "write() of 8192 at %lld %s and left the position at %lld, expected 4096 and %lld",
				 w.base + tail, ret_text(r, errno, rt, sizeof(rt)),
				 pos, env->dev_size);
			w.im.bad++;
		}
		if (r > 0)
			image_write(&w.im, tail, r < 4 * KIB ? (size_t)r : 4 * KIB, 4);
	}
	/* The engines: writes across the end, through O_DIRECT and (io_uring,
	 * which punts the buffered write of a block device to a worker and
	 * must still report the part written: 4d9cb92ca41d) the page cache. */
	{
		static const struct {
			int uring, buffered;
			const char *what;
		} ew[] = {
			{ 0, 0, "aio direct write" },
			{ 1, 0, "io_uring direct write" },
			{ 1, 1, "io_uring buffered write" },
		};
		int bfd = open(env->path, O_RDWR | O_CLOEXEC);

		for (size_t k = 0; bfd >= 0 && k < sizeof(ew) / sizeof(ew[0]); k++) {
			memset(ops, 0, sizeof(ops));
			ops[0].write = 1;
			ops[0].off = tail;
			ops[0].len = 8 * KIB;
			ops[0].seed = 5 + (unsigned int)k;
			if (engine_run(&w, ew[k].buffered ? bfd : w.fd, ew[k].uring,
				       ops, 1, &skip, d) > 0) {
				if (ops[0].res != 4 * KIB) {
					diag_add(d, "%s of 8192 at %lld, 4096 before the end: %s, expected 4096",
						 ew[k].what, w.base + tail,
						 res_text(ops[0].res, rt, sizeof(rt)));
					w.im.bad++;
				}
				/* What is on the device now is the new page
				 * or (an error) the old one: the reads tell. */
				if (ops[0].res > 0)
					image_write(&w.im, tail, 4 * KIB, ops[0].seed);
			}
			aops_free(ops, 1);
			if (ew[k].buffered && fsync(bfd) != 0) {
				diag_add(d, "fsync of the device: %s", strerror(errno));
				w.im.bad++;
			}
		}
		if (bfd >= 0)
			close(bfd);
	}
	/* The engines: a read across the end and one past it. */
	for (int uring = 0; uring < 2; uring++) {
		const char *engine = uring ? "io_uring" : "aio";
		int ran;

		memset(ops, 0, sizeof(ops));
		ops[0].off = tail;
		ops[0].len = 8 * KIB;
		ops[1].off = WIN;
		ops[1].len = 4 * KIB;
		ran = engine_run(&w, w.fd, uring, ops, 2, &skip, d);
		if (ran > 0 && ops[0].res != 4 * KIB) {
			diag_add(d, "%s read of 8192 at %lld, 4096 before the end: %s, expected 4096",
				 engine, w.base + tail, res_text(ops[0].res, rt, sizeof(rt)));
			w.im.bad++;
		} else if (ran > 0) {
			w.im.bad += compare(uring ? "io_uring read across the end" :
						    "aio read across the end",
					    ops[0].mem, &w.im, tail, 4 * KIB, d);
		}
		if (ran > 0 && ops[1].res != 0) {
			diag_add(d, "%s read of 4096 at the end: %s, expected 0",
				 engine, res_text(ops[1].res, rt, sizeof(rt)));
			w.im.bad++;
		}
		aops_free(ops, 2);
	}
	win_verify(&w, env, "after the end-of-device checks", d);
out:
	free(buf);
	return win_finish(&w);
}

/* ---- the table and the probe ---- */

#define BDEV(nm, fn, win)                                                      \
	{ .name = nm, .run = fn, .block_size = 512, .nblocks = 1,              \
	  .blocks_per_call = 1, .write_op = OP_PWRITE, .read_op = RD_PREAD,    \
	  .window = win }

static const struct suite_test bdev_table[] = {
	BDEV("bdev_rw", test_bdev_rw, 0),
	BDEV("bdev_vectored", test_bdev_vectored, 6),
	BDEV("bdev_nowait", test_bdev_nowait, 12),
	BDEV("bdev_aio", test_bdev_aio, 18),
	BDEV("bdev_uring", test_bdev_uring, 24),
	BDEV("bdev_coherence", test_bdev_coherence, 30),
	BDEV("bdev_efault", test_bdev_efault, 36),
	/* From the end: the last WIN bytes. */
	BDEV("bdev_eod", test_bdev_eod, -6),
	/* exer.c: random operations on the device's last 2 MiB. */
	{ .name = "exer_bdev", .run = test_exer, .block_size = 512,
	  .nblocks = 1, .blocks_per_call = 1, .write_op = OP_PWRITE,
	  .read_op = RD_PREAD, .window = -6,
	  .exer_seed = EXER_PROFILE_BDEV * EXER_SEEDS_PER_PROFILE + 1,
	  .exer_seeds = 3, .exer_ops = EXER_DEFAULT_OPS },
};

const struct suite_test *bdev_tests(size_t *n)
{
	*n = sizeof(bdev_table) / sizeof(bdev_table[0]);
	return bdev_table;
}

/*
 * Devices split requests at max_sectors_kb (often 128 KiB-1 MiB on real
 * hardware, more on virtio): lowered to BDEV_SPLIT_KB, every I/O of the
 * suite above it is split, the path where a NOWAIT request may not be
 * split (9cea62b2cbab) and a multi-bio one must not be partly issued
 * (67d59247d4b5). Best effort: a device that refuses keeps its own.
 */
#define BDEV_SPLIT_KB 64

static void bdev_split_small(int fd)
{
	struct stat st;
	char path[96], cur[32];
	ssize_t n;
	int sfd;

	if (fstat(fd, &st) != 0)
		return;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/max_sectors_kb",
		 major(st.st_rdev), minor(st.st_rdev));
	sfd = open(path, O_RDWR | O_CLOEXEC);
	if (sfd < 0)
		return;
	n = read(sfd, cur, sizeof(cur) - 1);
	if (n > 0) {
		cur[n] = '\0';
		if (strtol(cur, NULL, 10) > BDEV_SPLIT_KB) {
			int len = snprintf(cur, sizeof(cur), "%d\n", BDEV_SPLIT_KB);

			/* Refused (a device whose minimum is above it): the
			 * device keeps its own limit, nothing else to do. */
			(void)!pwrite(sfd, cur, (size_t)len, 0);
		}
	}
	close(sfd);
}

int bdev_probe(const char *dev, struct suite_env *env, char *err,
	       size_t errlen)
{
	unsigned long long size = 0;
	int lbs = 0, fd, n;

	memset(env, 0, sizeof(*env));
	env->bdev = 1;
	n = snprintf(env->path, sizeof(env->path), "%s", dev);
	if (n < 0 || (size_t)n >= sizeof(env->path)) {
		snprintf(err, errlen, "device name too long: %s", dev);
		return -1;
	}
	fd = open(dev, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "open %s O_DIRECT: %s", dev, strerror(errno));
		return -1;
	}
	if (ioctl(fd, BLKGETSIZE64, &size) != 0 || ioctl(fd, BLKSSZGET, &lbs) != 0) {
		snprintf(err, errlen, "%s: size and sector size: %s", dev,
			 strerror(errno));
		close(fd);
		return -1;
	}
	bdev_split_small(fd);
	close(fd);
	if ((long long)size < BDEV_MIN_SIZE || lbs < 512 || lbs > 4096) {
		snprintf(err, errlen, "%s: %llu bytes of %d-byte sectors, need >= %ld bytes of 512-4096",
			 dev, size, lbs, (long)BDEV_MIN_SIZE);
		return -1;
	}
	env->odirect = 1;
	env->dev_size = (long long)size;
	env->dio_offset_align = (unsigned int)lbs;
	env->dio_mem_align = (unsigned int)lbs;
	return 0;
}
