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

#include "suite.h"
#include "testio.h"
#include "bdevio.h"
#include "tests.h"

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

/* One I/O of test_bdev_nowait: an RWF_NOWAIT write of len bytes at window
 * offset off (nseg 0: from buf in one segment; else nseg shuffled pages of
 * seg), complete or EAGAIN with nothing written, then an RWF_NOWAIT read
 * of the same range and a direct one. */
static void nowait_op(struct win *w, unsigned char *buf, unsigned char *seg,
		      struct iovec *iov, long long off, size_t len,
		      unsigned int nseg, struct diag *d)
{
	unsigned int nv = nseg ? nseg : 1, k;
	char rt[96];
	ssize_t r;

	if (nseg == 0) {
		iov[0].iov_base = buf;
		iov[0].iov_len = len;
		pat_fill(buf, len, off, 4);
	}
	for (k = 0; k < nseg; k++) {
		/* 101 is coprime with NOWAIT_SEGS: a permutation. */
		iov[k].iov_base = seg + (size_t)((k * 101) % NOWAIT_SEGS) * PAGE;
		iov[k].iov_len = PAGE;
		pat_fill(iov[k].iov_base, PAGE, off + (long long)k * PAGE, 4);
	}
	r = pwritev2(w->fd, iov, (int)nv, (off_t)(w->base + off), RWF_NOWAIT);
	diag_add(d, "RWF_NOWAIT write of %zu in %u segment%s: %s", len,
		 nv, nv > 1 ? "s" : "",
		 r == (ssize_t)len ? "complete" :
		 r < 0 && errno == EAGAIN ? "EAGAIN" : "other");
	if (r == (ssize_t)len) {
		image_write(&w->im, off, len, 4);
	} else if (!(r < 0 && errno == EAGAIN)) {
		diag_add(d, "RWF_NOWAIT pwritev2 of %zu at %lld %s, expected %zu or EAGAIN",
			 len, w->base + off,
			 ret_text(r, errno, rt, sizeof(rt)), len);
		w->im.bad++;
		if (r > 0)
			image_write(&w->im, off, (size_t)r, 4);
	}
	/* EAGAIN: the image still says SEED0, and the reads tell. */
	memset(buf, 0xa5, MIB + 8 * KIB);
	memset(seg, 0xa5, NOWAIT_SEGS * PAGE);
	r = preadv2(w->fd, iov, (int)nv, (off_t)(w->base + off), RWF_NOWAIT);
	if (r == (ssize_t)len) {
		for (k = 0; k < nv; k++)
			if (compare("RWF_NOWAIT preadv2", iov[k].iov_base, &w->im,
				    off + (long long)k * PAGE,
				    iov[k].iov_len, d) != 0) {
				w->im.bad++;
				break;
			}
	} else if (!(r < 0 && errno == EAGAIN)) {
		diag_add(d, "RWF_NOWAIT preadv2 of %zu at %lld %s, expected %zu or EAGAIN",
			 len, w->base + off,
			 ret_text(r, errno, rt, sizeof(rt)), len);
		w->im.bad++;
	}
	w->im.bad += win_get(w, w->fd, off, len, 0,
			     "after RWF_NOWAIT, direct read", d);
}

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
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		nowait_op(&w, buf, seg, iov, ops[i].off, ops[i].len, ops[i].nseg,
			  d);
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

/* test_bdev_eod's syscalls: pwrite across the end, at and past it, pread
 * and preadv2 across it, write() across it and the position it leaves. */
static void eod_syscalls(struct win *w, const struct suite_env *env,
			 unsigned char *buf, long long tail, struct diag *d)
{
	struct iovec iov[2];
	char rt[96];
	ssize_t r;
	int e;

	pat_fill(buf, 8 * KIB, tail, 3);
	r = pwrite(w->fd, buf, 8 * KIB, (off_t)(w->base + tail));
	if (r != 4 * KIB) {
		diag_add(d, "pwrite of 8192 at %lld, 4096 before the end, %s, expected 4096",
			 w->base + tail, ret_text(r, errno, rt, sizeof(rt)));
		w->im.bad++;
	}
	if (r > 0)
		image_write(&w->im, tail, r < 4 * KIB ? (size_t)r : 4 * KIB, 3);
	for (long long past = 0; past <= MIB; past += MIB) {
		r = pwrite(w->fd, buf, 4 * KIB, (off_t)(env->dev_size + past));
		e = errno;
		if (r != -1 || e != ENOSPC) {
			diag_add(d, "pwrite of 4096 at %lld (the end + %lld) %s, expected ENOSPC",
				 env->dev_size + past, past,
				 ret_text(r, e, rt, sizeof(rt)));
			w->im.bad++;
		}
		r = pread(w->fd, buf, 4 * KIB, (off_t)(env->dev_size + past));
		if (r != 0) {
			diag_add(d, "pread of 4096 at %lld (the end + %lld) %s, expected 0",
				 env->dev_size + past, past,
				 ret_text(r, errno, rt, sizeof(rt)));
			w->im.bad++;
		}
	}
	memset(buf, 0xa5, 16 * KIB);
	r = pread(w->fd, buf, 8 * KIB, (off_t)(w->base + tail));
	if (r != 4 * KIB) {
		diag_add(d, "pread of 8192 at %lld, 4096 before the end, %s, expected 4096",
			 w->base + tail, ret_text(r, errno, rt, sizeof(rt)));
		w->im.bad++;
	} else {
		w->im.bad += compare("pread across the end", buf, &w->im, tail,
				     4 * KIB, d);
	}
	iov[0].iov_base = buf;
	iov[0].iov_len = 2 * KIB;
	iov[1].iov_base = buf + 4 * KIB;
	iov[1].iov_len = 8 * KIB;
	memset(buf, 0xa5, 16 * KIB);
	r = preadv2(w->fd, iov, 2, (off_t)(w->base + tail), 0);
	if (r != 4 * KIB) {
		diag_add(d, "preadv2 of 2048 + 8192 at %lld %s, expected 4096",
			 w->base + tail, ret_text(r, errno, rt, sizeof(rt)));
		w->im.bad++;
	} else {
		w->im.bad += compare("preadv2 across the end, segment 1", buf,
				     &w->im, tail, 2 * KIB, d);
		w->im.bad += compare("preadv2 across the end, segment 2",
				     buf + 4 * KIB, &w->im, tail + 2 * KIB, 2 * KIB, d);
	}
	/* write() across the end: short, and the position at the end. */
	if (lseek(w->fd, (off_t)(w->base + tail), SEEK_SET) >= 0) {
		long long pos;

		pat_fill(buf, 8 * KIB, tail, 4);
		r = write(w->fd, buf, 8 * KIB);
		pos = lseek(w->fd, 0, SEEK_CUR);
		if (r != 4 * KIB || pos != env->dev_size) {
			diag_add(d, "write() of 8192 at %lld %s and left the position at %lld, expected 4096 and %lld",
				 w->base + tail, ret_text(r, errno, rt, sizeof(rt)),
				 pos, env->dev_size);
			w->im.bad++;
		}
		if (r > 0)
			image_write(&w->im, tail, r < 4 * KIB ? (size_t)r : 4 * KIB, 4);
	}
}

/* The engines: writes across the end, through O_DIRECT and (io_uring,
 * which punts the buffered write of a block device to a worker and
 * must still report the part written: 4d9cb92ca41d) the page cache. */
static void eod_engine_writes(struct win *w, const struct suite_env *env,
			      long long tail, struct diag *d)
{
	struct aop ops[1];
	char rt[96];
	int skip;

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
		if (engine_run(w, ew[k].buffered ? bfd : w->fd, ew[k].uring,
			       ops, 1, &skip, d) > 0) {
			if (ops[0].res != 4 * KIB) {
				diag_add(d, "%s of 8192 at %lld, 4096 before the end: %s, expected 4096",
					 ew[k].what, w->base + tail,
					 res_text(ops[0].res, rt, sizeof(rt)));
				w->im.bad++;
			}
			/* What is on the device now is the new page
			 * or (an error) the old one: the reads tell. */
			if (ops[0].res > 0)
				image_write(&w->im, tail, 4 * KIB, ops[0].seed);
		}
		aops_free(ops, 1);
		if (ew[k].buffered && fsync(bfd) != 0) {
			diag_add(d, "fsync of the device: %s", strerror(errno));
			w->im.bad++;
		}
	}
	if (bfd >= 0)
		close(bfd);
}

/* The engines: a read across the end and one past it. */
static void eod_engine_reads(struct win *w, long long tail, struct diag *d)
{
	struct aop ops[2];
	char rt[96];
	int skip;

	for (int uring = 0; uring < 2; uring++) {
		const char *engine = uring ? "io_uring" : "aio";
		int ran;

		memset(ops, 0, sizeof(ops));
		ops[0].off = tail;
		ops[0].len = 8 * KIB;
		ops[1].off = WIN;
		ops[1].len = 4 * KIB;
		ran = engine_run(w, w->fd, uring, ops, 2, &skip, d);
		if (ran > 0 && ops[0].res != 4 * KIB) {
			diag_add(d, "%s read of 8192 at %lld, 4096 before the end: %s, expected 4096",
				 engine, w->base + tail, res_text(ops[0].res, rt, sizeof(rt)));
			w->im.bad++;
		} else if (ran > 0) {
			w->im.bad += compare(uring ? "io_uring read across the end" :
						     "aio read across the end",
					     ops[0].mem, &w->im, tail, 4 * KIB, d);
		}
		if (ran > 0 && ops[1].res != 0) {
			diag_add(d, "%s read of 4096 at the end: %s, expected 0",
				 engine, res_text(ops[1].res, rt, sizeof(rt)));
			w->im.bad++;
		}
		aops_free(ops, 2);
	}
}

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

	if (win_begin(t, env, &w, &st, d) != 0)
		return st;
	buf = aligned(16 * KIB, d);
	if (buf == NULL) {
		w.im.bad++;
		goto out;
	}
	eod_syscalls(&w, env, buf, tail, d);
	eod_engine_writes(&w, env, tail, d);
	eod_engine_reads(&w, tail, d);
	win_verify(&w, env, "after the end-of-device checks", d);
out:
	free(buf);
	return win_finish(&w);
}
