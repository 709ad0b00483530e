/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the block-device tests (bdev.c) share (bdevio.h): a test's window of
 * the device with the image of what it must hold, the batch of native AIO
 * and io_uring I/Os two of them run, and the probe of the device.
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

/* ---- a window of the device ---- */

void win_end(struct win *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	image_free(&w->im);
}

/* "returned 4096" or "returned -1: Invalid argument", for diagnostics. */
const char *ret_text(long long r, int e, char *buf, size_t len)
{
	if (r < 0)
		snprintf(buf, len, "returned %lld: %s", r, strerror(e));
	else
		snprintf(buf, len, "returned %lld", r);
	return buf;
}

/* An AIO or io_uring result for diagnostics: "res 4096", "res -11
 * Resource temporarily unavailable" (a negative errno). */
const char *res_text(long long res, char *buf, size_t len)
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
int win_begin(const struct suite_test *t, const struct suite_env *env,
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
int win_put(struct win *w, long long off, size_t len, size_t boff,
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
unsigned int win_get(struct win *w, int fd, long long off, size_t len,
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
void win_verify(struct win *w, const struct suite_env *env,
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

enum test_status win_finish(struct win *w)
{
	enum test_status st = w->im.bad == 0 ? TEST_PASS : TEST_FAIL;

	win_end(w);
	return st;
}

/* ---- native AIO and io_uring ---- */

/* The batch both engines run: writes of every shape, out of order, one
 * with RWF_DSYNC, then reads of them into buffers at other offsets. */
const struct aop async_ops[NASYNC] = {
	{ 1, 2 * MIB, MIB + 4 * KIB, 0, 0, 1, NULL, 0 },
	{ 1, 512, 512, 1024, 0, 2, NULL, 0 },
	{ 1, 64 * KIB + 512, 24 * KIB, 512, 0, 3, NULL, 0 },
	{ 1, 4 * MIB, 64 * KIB, 0, RWF_DSYNC, 4, NULL, 0 },
	{ 0, 2 * MIB, MIB + 4 * KIB, 2048, 0, 0, NULL, 0 },
	{ 0, 512, 512, 0, 0, 0, NULL, 0 },
	{ 0, 64 * KIB + 512, 24 * KIB, 0, 0, 0, NULL, 0 },
	{ 0, 4 * MIB, 64 * KIB, 512, 0, 0, NULL, 0 },
};
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

void aops_free(struct aop *ops, size_t n)
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
int engine_run(struct win *w, int fd, int uring, struct aop *ops,
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
void aops_check(struct win *w, const char *engine, struct aop *ops,
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
