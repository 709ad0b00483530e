/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Submission that must not block or that completes later: RWF_NOWAIT
 * writes and reads, native AIO and io_uring (raw syscalls), and an
 * extending write in flight while the same thread calls fallocate or
 * closes another descriptor of the file.
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

/* One pass of test_uring: pass 0 the ASYNC_N writes, pass 1 the reads of
 * them, through iov, each result and read checked. 0, or -1 after a
 * problem that ends the test (the ring may still hold I/Os). */
static int uring_pass(struct ring *ring, int fd, unsigned char *buf,
		      struct iovec *iov, unsigned int pass, struct image *im,
		      struct diag *d)
{
	const char *op = pass == 0 ? "writev" : "readv";
	unsigned int got = 0, i;

	for (i = 0; i < ASYNC_N; i++) {
		unsigned char *b = buf + i * ASYNC_LEN;

		if (pass == 0)
			pat_fill(b, ASYNC_LEN, async_offs[i], 2);
		else
			memset(b, 0, ASYNC_LEN);
		iov[i].iov_base = b;
		iov[i].iov_len = ASYNC_LEN;
		ring_queue(ring, pass == 0 ? IORING_OP_WRITEV :
					     IORING_OP_READV,
			   fd, &iov[i], 1, async_offs[i], i);
	}
	{
		long n = syscall(__NR_io_uring_enter, ring->fd, ASYNC_N,
				 ASYNC_N, IORING_ENTER_GETEVENTS, NULL, 0);

		if (n != ASYNC_N) {
			diag_add(d, "io_uring_enter of %d %s returned %ld%s%s",
				 ASYNC_N, op, n, n < 0 ? ": " : "",
				 n < 0 ? strerror(errno) : "");
			im->bad++;
			return -1;
		}
	}
	for (; got < ASYNC_N; got++) {
		struct io_uring_cqe c;
		uint64_t k;

		if (ring_wait_cqe(ring, &c) != 0) {
			diag_add(d, "io_uring_enter (wait): %s", strerror(errno));
			im->bad++;
			return -1;
		}
		k = c.user_data;
		if (k >= ASYNC_N || c.res != ASYNC_LEN) {
			diag_add(d, "io_uring %s %u at %lld: res %d%s%s, expected %ld",
				 op, (unsigned int)k,
				 k < ASYNC_N ? async_offs[k] : -1, c.res,
				 c.res < 0 ? " " : "",
				 c.res < 0 ? strerror(-c.res) : "", ASYNC_LEN);
			im->bad++;
			continue;
		}
		if (pass == 0)
			image_write(im, async_offs[k], ASYNC_LEN, 2);
		else
			im->bad += compare("io_uring read", buf + k * ASYNC_LEN,
					   im, async_offs[k], ASYNC_LEN, d);
	}
	return 0;
}

/*
 * One read across written extents and holes into a never-touched buffer:
 * io_uring first tries it non-blocking, and the filesystem must not return
 * (or queue) a part of it as the whole (fstests generic/676, MariaDB on
 * btrfs, ca93e44bfb5f).
 */
static void uring_read_across(struct ring *ring, int fd, struct image *im,
			      struct diag *d)
{
	const size_t len = 144 * KIB;
	struct iovec riov;
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long n;

	if (m == MAP_FAILED) {
		diag_add(d, "mmap: %s", strerror(errno));
		im->bad++;
		return;
	}
	riov.iov_base = m;
	riov.iov_len = len;
	ring_queue(ring, IORING_OP_READV, fd, &riov, 1, 32 * KIB, 7);
	n = syscall(__NR_io_uring_enter, ring->fd, 1, 1,
		    IORING_ENTER_GETEVENTS, NULL, 0);
	if (n != 1) {
		diag_add(d, "io_uring_enter of a readv across extents returned %ld", n);
		im->bad++;
	} else {
		struct io_uring_cqe c;

		if (ring_wait_cqe(ring, &c) != 0) {
			diag_add(d, "io_uring readv across extents: no completion: %s",
				 strerror(errno));
			im->bad++;
		} else if (c.res != (int)len) {
			diag_add(d, "io_uring readv of %zu at 32768 across extents and holes into an untouched buffer: res %d, expected %zu",
				 len, c.res, len);
			im->bad++;
		} else {
			im->bad += compare("io_uring readv across extents", m,
					   im, 32 * KIB, len, d);
		}
	}
	munmap(m, len);
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
	unsigned int pass;
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
	for (pass = 0; pass < 2; pass++)
		if (uring_pass(&ring, fd, buf, iov, pass, &im, d) != 0)
			goto done;
	verify(env->path, &im, "after io_uring", VIA_BUFFERED | VIA_MMAP, d);
	if (put(fd, buf, 96 * KIB, 16 * KIB, 3, &im, "extent after a hole", d) != 0 ||
	    put(fd, buf, 160 * KIB, 16 * KIB, 4, &im, "extent after a hole", d) != 0)
		goto done;
	uring_read_across(&ring, fd, &im, d);
done:
	ring_close(&ring);
out:
	return finish(fd, buf, &im, st);
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
