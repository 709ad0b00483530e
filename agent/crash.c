/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * crash.c - the power-cut promises: what each way of asking for durability
 * (O_SYNC, O_DSYNC, fdatasync, RWF_DSYNC through native AIO and io_uring,
 * fsync after O_APPEND writes)
 * promised before the host cut the power, checked after the next mount.
 *
 * One promise per filesystem instance: a sync on ext4 or xfs commits the
 * whole journal, so a later promise on the same disk would make an earlier
 * one durable by accident and hide its bug. The daemon attaches one disk
 * per promise and filesystem; the k-th disk of a filesystem keeps promise
 * k (protocol.h). On the host every promise writes its own file in one
 * directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "testio.h"
#include "suite.h"
#include "tests.h"

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif
#ifndef RWF_DSYNC
#define RWF_DSYNC 0x00000002
#endif

struct promise {
	const char *test;	/* the KTAP result's name */
	const char *file;	/* in the disk's (or host directory's) root */
	const char *what;	/* "<what> not durable" after a power cut */
	int prealloc;		/* written into fallocated blocks, no extension */
};

/* In RCGATE_CRASH_PROMISES order: the daemon's k-th disk of a filesystem. */
static const struct promise promises[CRASH_PROMISES] = {
	{ CRASH_TEST_NAME, CRASH_FILE, "O_SYNC|O_DIRECT extension", 0 },
	{ "crash_odsync_extend", "crash-odsync.dat",
	  "O_DSYNC|O_DIRECT extension", 0 },
	{ "crash_fdatasync_extend", "crash-fdatasync.dat",
	  "direct extension then fdatasync", 0 },
	{ "crash_aio_dsync", "crash-aio.dat",
	  "AIO RWF_DSYNC write into preallocated blocks", 1 },
	{ "crash_uring_dsync", "crash-uring.dat",
	  "io_uring RWF_NOWAIT|RWF_DSYNC write into preallocated blocks", 1 },
	{ "crash_fsync_append", "crash-append.dat",
	  "O_APPEND|O_DIRECT appends then fsync", 0 },
};

const char *crash_test_name(unsigned int promise)
{
	return promise < CRASH_PROMISES ? promises[promise].test : NULL;
}

const char *crash_file_name(unsigned int promise)
{
	return promise < CRASH_PROMISES ? promises[promise].file : NULL;
}

unsigned char crash_pattern(long long off)
{
	return (unsigned char)('A' + (off / CRASH_BLOCK) % 26);
}

static int crash_path(char *path, size_t len, const char *dir,
		      unsigned int promise)
{
	int n = snprintf(path, len, "%s/%s", dir, promises[promise].file);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* ---- the writes of boot 1 ---- */

/* 16 write()s, the position checked after each (6.1.64): on an O_SYNC
 * descriptor, or an O_APPEND one (then fsync). */
static long long write_seq(int fd, unsigned char *buf, struct diag *d)
{
	long long written = 0;
	unsigned int i, pos_bad = 0;

	for (i = 0; i < CRASH_BLOCKS; i++) {
		long long want_pos = (long long)(i + 1) * CRASH_BLOCK;
		ssize_t ret;

		ret = suite_write(fd, buf + (size_t)i * CRASH_BLOCK, CRASH_BLOCK);
		if (ret < 0) {
			diag_add(d, "write %u of %u (%d bytes) failed: %s", i + 1,
				 CRASH_BLOCKS, CRASH_BLOCK, strerror(errno));
			break;
		}
		written += ret;
		if (ret != CRASH_BLOCK) {
			/* The next O_DIRECT write would be misaligned anyway. */
			diag_add(d, "write %u of %u returned %zd, expected %d",
				 i + 1, CRASH_BLOCKS, ret, CRASH_BLOCK);
			break;
		}
		/*
		 * A wrong position (6.1.64) puts the next block in the wrong
		 * place; keep writing, crash-verify will see the damage.
		 */
		pos_bad += (unsigned int)check_position(lseek(fd, 0, SEEK_CUR),
							want_pos, "write", i + 1,
							CRASH_BLOCKS, CRASH_BLOCK,
							pos_bad == 0 ? d : NULL);
	}
	if (pos_bad > 1)
		diag_add(d, "totals: wrong position %u", pos_bad);
	return written;
}

/* O_DSYNC: 16 pwrite()s. */
static long long write_odsync(int fd, unsigned char *buf, struct diag *d)
{
	long long written = 0;

	for (unsigned int i = 0; i < CRASH_BLOCKS; i++) {
		off_t off = (off_t)i * CRASH_BLOCK;
		ssize_t ret;

		ret = pwrite(fd, buf + off, CRASH_BLOCK, off);
		if (ret != CRASH_BLOCK) {
			diag_add(d, "pwrite %u of %u at %lld returned %zd%s%s",
				 i + 1, CRASH_BLOCKS, (long long)off, ret,
				 ret < 0 ? ": " : "", ret < 0 ? strerror(errno) : "");
			return written + (ret > 0 ? ret : 0);
		}
		written += ret;
	}
	return written;
}

/* Four pwritev()s of four blocks, then fdatasync: only then promised. */
static long long write_fdatasync(int fd, unsigned char *buf, struct diag *d)
{
	long long done = 0;

	for (unsigned int c = 0; c < CRASH_BLOCKS / 4; c++) {
		struct iovec iov[4];
		ssize_t ret;

		for (unsigned int k = 0; k < 4; k++)
			iov[k] = (struct iovec){ buf + (size_t)(c * 4 + k) *
						 CRASH_BLOCK, CRASH_BLOCK };
		ret = pwritev(fd, iov, 4, (off_t)done);
		if (ret != 4 * CRASH_BLOCK) {
			diag_add(d, "pwritev %u of %u at %lld returned %zd%s%s",
				 c + 1, CRASH_BLOCKS / 4, done, ret,
				 ret < 0 ? ": " : "", ret < 0 ? strerror(errno) : "");
			if (ret > 0)
				done += ret;
			break;
		}
		done += ret;
	}
	if (fdatasync(fd) != 0) {
		diag_add(d, "fdatasync: %s", strerror(errno));
		return 0;
	}
	return done;
}

/* The blocks a prealloc promise writes into, made durable first: the
 * promise is the write's, not fallocate's. A failure is the promise's
 * (nothing written), not the host's. */
static int prealloc(int fd, struct diag *d)
{
	if (fallocate(fd, 0, 0, RCGATE_CRASH_BYTES) != 0) {
		diag_add(d, "fallocate of %d bytes: %s", RCGATE_CRASH_BYTES,
			 strerror(errno));
		return -1;
	}
	if (fsync(fd) != 0) {
		diag_add(d, "fsync after fallocate: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* One io_submit of 16 RWF_DSYNC writes, each event a full block. */
static long long write_aio(int fd, unsigned char *buf, struct diag *d,
			   char *err, size_t errlen)
{
	struct iocb cb[CRASH_BLOCKS], *cbp[CRASH_BLOCKS];
	struct io_event ev[CRASH_BLOCKS];
	aio_context_t ctx = 0;
	long long written = 0;
	long n, got = 0;

	if (syscall(__NR_io_setup, CRASH_BLOCKS, &ctx) != 0) {
		snprintf(err, errlen, "io_setup: %s", strerror(errno));
		return -1;
	}
	for (unsigned int i = 0; i < CRASH_BLOCKS; i++) {
		cb[i] = (struct iocb){
			.aio_data = i, .aio_lio_opcode = IOCB_CMD_PWRITE,
			.aio_fildes = (uint32_t)fd, .aio_rw_flags = RWF_DSYNC,
			.aio_buf = (uint64_t)(uintptr_t)(buf + (size_t)i *
							 CRASH_BLOCK),
			.aio_nbytes = CRASH_BLOCK,
			.aio_offset = (int64_t)i * CRASH_BLOCK,
		};
		cbp[i] = &cb[i];
	}
	n = syscall(__NR_io_submit, ctx, (long)CRASH_BLOCKS, cbp);
	if (n != CRASH_BLOCKS)
		diag_add(d, "io_submit of %d RWF_DSYNC writes returned %ld%s%s",
			 CRASH_BLOCKS, n, n < 0 ? ": " : "",
			 n < 0 ? strerror(errno) : "");
	while (n > 0 && got < n) {
		long r = aio_getevents(ctx, 1L, n - got, ev);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			diag_add(d, "io_getevents: %s", r < 0 ? strerror(errno) :
				 "no event");
			break;
		}
		for (long k = 0; k < r; k++) {
			if (ev[k].res == CRASH_BLOCK) {
				written += CRASH_BLOCK;
				continue;
			}
			diag_add(d, "aio write of block %llu: res %lld, expected %d",
				 (unsigned long long)ev[k].data,
				 (long long)ev[k].res, CRASH_BLOCK);
		}
		got += r;
	}
	syscall(__NR_io_destroy, ctx);
	/* Only a run of whole blocks from 0 counts: fewer is the finding. */
	return written == RCGATE_CRASH_BYTES ? written : 0;
}

/* Queued with RWF_NOWAIT|RWF_DSYNC; a write the kernel would have to wait
 * for (-EAGAIN) goes again without RWF_NOWAIT. *nowait counts the blocks
 * that completed without it. */
static long long write_uring(int fd, unsigned char *buf, unsigned int *nowait,
			     struct diag *d, char *err, size_t errlen)
{
	struct iovec iov[CRASH_BLOCKS];
	struct ring r;
	long long written = 0;
	unsigned int pending;

	*nowait = 0;
	if (ring_open(&r, CRASH_BLOCKS) != 0) {
		snprintf(err, errlen, "io_uring_setup: %s", strerror(errno));
		return -1;
	}
	for (unsigned int i = 0; i < CRASH_BLOCKS; i++) {
		iov[i] = (struct iovec){ buf + (size_t)i * CRASH_BLOCK,
					 CRASH_BLOCK };
		ring_queue_flags(&r, IORING_OP_WRITEV, fd, &iov[i], 1,
				 (long long)i * CRASH_BLOCK, i,
				 RWF_NOWAIT | RWF_DSYNC);
	}
	pending = CRASH_BLOCKS;
	for (unsigned int done = 0; done < CRASH_BLOCKS;) {
		struct io_uring_cqe cqe;
		unsigned int blk;

		if (pending > 0) {
			long n = syscall(__NR_io_uring_enter, r.fd, pending, 0,
					 0, NULL, 0);

			if (n < 0 && errno != EINTR) {
				diag_add(d, "io_uring_enter: %s", strerror(errno));
				break;
			}
			pending -= n > 0 ? (unsigned int)n : 0;
		}
		if (ring_wait_cqe(&r, &cqe) != 0) {
			diag_add(d, "io_uring wait: %s", strerror(errno));
			break;
		}
		blk = (unsigned int)cqe.user_data % CRASH_BLOCKS;
		if (cqe.res == -EAGAIN && cqe.user_data < CRASH_BLOCKS) {
			/* Once, without RWF_NOWAIT: io_uring may wait now. */
			ring_queue_flags(&r, IORING_OP_WRITEV, fd, &iov[blk], 1,
					 (long long)blk * CRASH_BLOCK,
					 CRASH_BLOCKS + blk, RWF_DSYNC);
			pending++;
			continue;
		}
		if (cqe.res == CRASH_BLOCK) {
			written += CRASH_BLOCK;
			*nowait += cqe.user_data < CRASH_BLOCKS;
		} else {
			diag_add(d, "io_uring write of block %u: res %d, expected %d",
				 blk, cqe.res, CRASH_BLOCK);
		}
		done++;
	}
	ring_close(&r);
	return written == RCGATE_CRASH_BYTES ? written : 0;
}

long long crash_write(const char *dir, unsigned int promise, int *fd_out,
		      struct diag *d, char *err, size_t errlen)
{
	static const int extra[CRASH_PROMISES] = { O_SYNC, O_DSYNC, 0, 0, 0,
						   O_APPEND };
	static const char *const extra_name[CRASH_PROMISES] = {
		"|O_SYNC", "|O_DSYNC", "", "", "", "|O_APPEND" };
	char path[4096];
	unsigned char *buf;
	long long written = -1;
	unsigned int nowait = 0;
	int fd;

	if (fd_out != NULL)
		*fd_out = -1;
	diag_reset(d);
	if (promise >= CRASH_PROMISES || crash_path(path, sizeof(path), dir,
						    promise) != 0) {
		snprintf(err, errlen, "no promise %u or directory name too "
			 "long: %s", promise, dir);
		return -1;
	}
	buf = aligned(RCGATE_CRASH_BYTES, d);
	if (buf == NULL) {
		snprintf(err, errlen, "out of memory for %d bytes",
			 RCGATE_CRASH_BYTES);
		return -1;
	}
	/* What every writer below writes: block i is crash_pattern's. */
	for (unsigned int i = 0; i < CRASH_BLOCKS; i++)
		memset(buf + (size_t)i * CRASH_BLOCK,
		       crash_pattern((long long)i * CRASH_BLOCK), CRASH_BLOCK);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_DIRECT | O_CLOEXEC |
			extra[promise], 0600);
	if (fd < 0) {
		snprintf(err, errlen, "create %s with O_DIRECT%s: %s", path,
			 extra_name[promise], strerror(errno));
		free(buf);
		return -1;
	}
	if (promises[promise].prealloc && prealloc(fd, d) != 0) {
		written = 0;
		goto out;
	}
	switch (promise) {
	case 0: written = write_seq(fd, buf, d); break;
	case 1: written = write_odsync(fd, buf, d); break;
	case 2: written = write_fdatasync(fd, buf, d); break;
	case 3: written = write_aio(fd, buf, d, err, errlen); break;
	case 4:
		written = write_uring(fd, buf, &nowait, d, err, errlen);
		if (written >= 0)
			diag_add(d, "%u of %d blocks completed under RWF_NOWAIT",
				 nowait, CRASH_BLOCKS);
		break;
	default:
		written = write_seq(fd, buf, d);
		if (fsync(fd) != 0) {
			diag_add(d, "fsync: %s", strerror(errno));
			written = 0;
		}
		break;
	}
out:
	free(buf);
	if (fd_out != NULL && written >= 0)
		*fd_out = fd;
	else
		close(fd);
	return written;
}

/* ---- the checks of boot 2 ---- */

const char *crash_unsupported(unsigned int promise, char *why,
				     size_t len)
{
	if (promise == 3) {
		aio_context_t ctx = 0;

		if (syscall(__NR_io_setup, 1, &ctx) != 0) {
			snprintf(why, len, "io_setup (native AIO, CONFIG_AIO): %s",
				 strerror(errno));
			return why;
		}
		syscall(__NR_io_destroy, ctx);
	} else if (promise == 4) {
		struct ring r;

		if (ring_open(&r, 1) != 0) {
			snprintf(why, len, "io_uring_setup (CONFIG_IO_URING): %s",
				 strerror(errno));
			return why;
		}
		ring_close(&r);
	}
	return NULL;
}

enum test_status crash_verify(const char *dir, unsigned int promise,
			      long long expect, struct diag *d)
{
	const struct promise *p;
	char path[4096];
	unsigned char *buf;
	long long off = 0, limit, bad = 0;
	enum test_status st = TEST_PASS;
	struct stat sb;
	int fd;

	diag_reset(d);
	if (promise >= CRASH_PROMISES || crash_path(path, sizeof(path), dir,
						    promise) != 0) {
		diag_add(d, "no promise %u or directory name too long: %s",
			 promise, dir);
		return TEST_FAIL;
	}
	p = &promises[promise];
	if (crash_unsupported(promise, d->skip_reason,
			      sizeof(d->skip_reason)) != NULL)
		return TEST_SKIP;
	/* Buffered reads: the page cache is empty after the reboot. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			diag_add(d, "%s missing after power cut", p->file);
		else
			diag_add(d, "open %s: %s", p->file, strerror(errno));
		return TEST_FAIL;
	}
	if (fstat(fd, &sb) != 0) {
		diag_add(d, "fstat %s: %s", p->file, strerror(errno));
		close(fd);
		return TEST_FAIL;
	}
	if ((long long)sb.st_size < expect) {
		diag_add(d, "st_size %lld after power cut, expected >= %lld "
			 "(%s not durable)", (long long)sb.st_size, expect,
			 p->what);
		st = TEST_FAIL;
	}
	limit = (long long)sb.st_size < expect ? (long long)sb.st_size : expect;
	buf = malloc(CRASH_BLOCK);
	if (buf == NULL) {
		diag_add(d, "out of memory");
		close(fd);
		return TEST_FAIL;
	}
	while (off < limit) {
		/* Within one block: its bytes all hold one value. */
		long long room = CRASH_BLOCK - off % CRASH_BLOCK;
		size_t want = (size_t)(limit - off < room ? limit - off : room);
		ssize_t ret = pread(fd, buf, want, (off_t)off);

		if (ret <= 0) {
			diag_add(d, "pread at %lld %s, st_size %lld", off,
				 ret < 0 ? strerror(errno) : "hit end of file",
				 (long long)sb.st_size);
			st = TEST_FAIL;
			break;
		}
		bad += (long long)check_fill(buf, (size_t)ret, off,
					     crash_pattern(off),
					     bad == 0 ? d : NULL);
		off += ret;
	}
	if (bad > 0) {
		diag_add(d, "totals: wrong bytes %lld of %lld (%s not durable)",
			 bad, limit, p->what);
		st = TEST_FAIL;
	}
	free(buf);
	close(fd);
	return st;
}

void crash_verify_run(const struct crash_disk *disks, unsigned int n,
		      const char *suite_name, long long expect, FILE *out,
		      struct suite_counts *counts)
{
	memset(counts, 0, sizeof(*counts));
	print_subtest_head(out, suite_name, n);
	for (unsigned int i = 0; i < n; i++) {
		long long started = now_ms();
		const char *name = crash_test_name(disks[i].promise);
		enum test_status st;
		struct diag d;

		diag_reset(&d);
		if (name == NULL) {
			name = "crash_unknown";
			diag_add(&d, "no promise %u", disks[i].promise);
			st = TEST_FAIL;
		} else if (disks[i].unsupported) {
			snprintf(d.skip_reason, sizeof(d.skip_reason),
				 "%s not supported by this kernel", suite_name);
			st = TEST_SKIP;
		} else {
			st = crash_verify(disks[i].dir, disks[i].promise, expect,
					  &d);
		}
		suite_print_result(out, 4, i + 1, now_ms() - started, name, st,
				   &d);
		counts_add_status(counts, st);
	}
}
