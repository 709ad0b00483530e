/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The write paths: sequential extension of a file by every write syscall
 * (write, writev, pwrite, pwritev, with O_SYNC, O_DSYNC, fsync, fdatasync,
 * O_APPEND), overwrites, sub-block and misaligned writes, pwritev2 at
 * offsets with its RWF_ flags, and the ways to append.
 *
 * The sequential tests target the class of bug shipped in 6.1.64: an
 * O_DIRECT write that returns the full count but leaves the file position
 * (and so the placement of the next write and i_size) wrong. So every write
 * is followed by position and size checks, and every byte is read back.
 * Each test is one row of catalogue.h: what it checks, what its failure
 * means, and the function and parameters it runs with (table.c makes the
 * tables from them).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#include "suite.h"
#include "testio.h"
#include "tests.h"

/*
 * Problem counts of one test. Only the first problem of each kind gets a
 * diagnostic line (the rest would repeat it), and the totals go in one last
 * line, so a test prints a handful of lines however broken the kernel is.
 */
struct tally {
	unsigned int ret;
	unsigned int pos;
	unsigned int size;
	unsigned int io;
	unsigned int errors;
	size_t bytes;
};

static struct diag *first(unsigned int count, struct diag *d)
{
	return count == 0 ? d : NULL;
}

static enum test_status tally_verdict(const struct tally *ty, struct diag *d)
{
	char line[DIAG_LEN];
	size_t used = 0;

	if (ty->ret == 0 && ty->pos == 0 && ty->size == 0 && ty->io == 0 &&
	    ty->errors == 0 && ty->bytes == 0)
		return TEST_PASS;
	if (ty->ret > 1 || ty->pos > 1 || ty->size > 1 || ty->io > 1 ||
	    ty->bytes > 1) {
		line[0] = '\0';
#define TALLY_PART(cond, ...)                                                   \
	do {                                                                    \
		if ((cond) && used < sizeof(line)) {                            \
			int w = snprintf(line + used, sizeof(line) - used,      \
					 __VA_ARGS__);                           \
			if (w > 0)                                              \
				used += (size_t)w;                              \
		}                                                               \
	} while (0)
		TALLY_PART(ty->ret, " wrong return %u", ty->ret);
		TALLY_PART(ty->pos, " wrong position %u", ty->pos);
		TALLY_PART(ty->size, " wrong st_size %u", ty->size);
		TALLY_PART(ty->io, " short reads %u", ty->io);
		TALLY_PART(ty->bytes, " wrong bytes %zu", ty->bytes);
#undef TALLY_PART
		diag_add(d, "totals:%s", line);
	}
	return TEST_FAIL;
}

static const char *const write_op_name[] = {
	[OP_WRITE] = "write",
	[OP_WRITEV] = "writev",
	[OP_PWRITE] = "pwrite",
	[OP_PWRITEV] = "pwritev",
};

static const char *const read_op_name[] = {
	[RD_PREAD] = "pread",
	[RD_PREADV] = "preadv",
	[RD_READ] = "read",
};

static int op_is_positional(enum write_op op)
{
	return op == OP_PWRITE || op == OP_PWRITEV;
}

static unsigned char pattern(unsigned char base, unsigned int block)
{
	return (unsigned char)(base + block % 26);
}

/* Caller frees with free(). */
static unsigned char *io_alloc(size_t len, struct diag *d)
{
	void *p = NULL;
	int rc = posix_memalign(&p, IO_ALIGN, len);

	if (rc != 0) {
		diag_add(d, "posix_memalign(%zu): %s", len, strerror(rc));
		return NULL;
	}
	memset(p, 0, len);
	return p;
}

/*
 * The start of every test: create its file, O_RDWR|O_DIRECT plus the row's
 * open_flags. Returns the fd, or -1 with the test's verdict in *st: a skip
 * when the filesystem refuses O_DIRECT (EINVAL), else a failure with a
 * diagnostic.
 */
static int test_create(const struct suite_test *t,
		       const struct suite_env *env, enum test_status *st,
		       struct diag *d)
{
	int fd = open(env->path, O_RDWR | O_DIRECT | O_CLOEXEC | O_CREAT |
			  O_TRUNC | t->open_flags, 0600);

	if (fd >= 0)
		return fd;
	if (errno == EINVAL) {
		snprintf(d->skip_reason, sizeof(d->skip_reason), NO_ODIRECT);
		*st = TEST_SKIP;
	} else {
		diag_add(d, "open %s: %s", env->path, strerror(errno));
		*st = TEST_FAIL;
	}
	return -1;
}


static ssize_t do_write(int fd, enum write_op op, unsigned char *buf,
			unsigned int nblocks, size_t bs, off_t off)
{
	struct iovec iov[MAX_IOV];
	unsigned int k;

	for (k = 0; k < nblocks && k < MAX_IOV; k++) {
		iov[k].iov_base = buf + (size_t)k * bs;
		iov[k].iov_len = bs;
	}
	switch (op) {
	case OP_WRITE:
		return suite_write(fd, buf, (size_t)nblocks * bs);
	case OP_WRITEV:
		return suite_writev(fd, iov, (int)k);
	case OP_PWRITE:
		return pwrite(fd, buf, (size_t)nblocks * bs, off);
	case OP_PWRITEV:
		return pwritev(fd, iov, (int)k, off);
	}
	errno = EINVAL;
	return -1;
}

static ssize_t do_read(int fd, enum read_op op, unsigned char *buf, size_t len,
		       off_t off)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	switch (op) {
	case RD_PREAD:
		return pread(fd, buf, len, off);
	case RD_PREADV:
		return preadv(fd, &iov, 1, off);
	case RD_READ:
		return read(fd, buf, len);
	}
	errno = EINVAL;
	return -1;
}

/*
 * Write blocks 0..nblocks-1 (block i filled with pattern(base, i)) with the
 * row's write op, starting at file position 0 for the sequential ops. After
 * every call check the return value, the file position and st_size, which can
 * never drop below size_before. buf holds blocks_per_call blocks. Returns -1
 * when a syscall failed outright (the test cannot go on).
 */
static int write_phase(int fd, const struct suite_test *t, unsigned char base,
		       long long size_before, unsigned char *buf,
		       struct tally *ty, struct diag *d)
{
	const char *name = write_op_name[t->write_op];
	size_t bs = t->block_size;
	unsigned int per = t->blocks_per_call;
	unsigned int calls = t->nblocks / per;
	off_t pos_start = lseek(fd, 0, SEEK_CUR);
	unsigned int c, k;

	for (c = 0; c < calls; c++) {
		unsigned int blk = c * per;
		size_t want = (size_t)per * bs;
		long long end = (long long)(blk + per) * (long long)bs;
		long long pos_want = op_is_positional(t->write_op) ? pos_start : end;
		struct stat st;
		ssize_t ret;
		off_t pos;

		for (k = 0; k < per; k++)
			memset(buf + (size_t)k * bs, pattern(base, blk + k), bs);
		/* An append must land at the end wherever the position is. */
		if ((t->open_flags & O_APPEND) && lseek(fd, 0, SEEK_SET) != 0) {
			diag_add(d, "lseek 0 before append: %s", strerror(errno));
			ty->errors++;
			return -1;
		}
		ret = do_write(fd, t->write_op, buf, per, bs,
			       (off_t)blk * (off_t)bs);
		if (ret < 0) {
			diag_add(d, "%s %u of %u (%zu bytes) failed: %s", name,
				 c + 1, calls, want, strerror(errno));
			ty->errors++;
			return -1;
		}
		if ((size_t)ret != want) {
			diag_add(first(ty->ret, d),
				 "%s %u of %u returned %zd, expected %zu", name,
				 c + 1, calls, ret, want);
			ty->ret++;
		}
		pos = lseek(fd, 0, SEEK_CUR);
		ty->pos += check_position(pos, pos_want, name, c + 1, calls,
					  want, first(ty->pos, d));
		if (t->sync_op != SYNC_NONE &&
		    (t->sync_op == SYNC_FSYNC ? fsync(fd) : fdatasync(fd)) != 0) {
			diag_add(d, "%s after %s %u: %s",
				 t->sync_op == SYNC_FSYNC ? "fsync" : "fdatasync",
				 name, c + 1, strerror(errno));
			ty->errors++;
			return -1;
		}
		if (fstat(fd, &st) != 0) {
			diag_add(d, "fstat: %s", strerror(errno));
			ty->errors++;
			return -1;
		}
		ty->size += check_size((long long)st.st_size,
				       end > size_before ? end : size_before,
				       name, c + 1, calls, first(ty->size, d));
	}
	return 0;
}

/*
 * Read every block back with the row's read op and compare it with
 * pattern(base, i). read() starts from position 0 and must advance by what it
 * returned.
 */
static void read_phase(int fd, const struct suite_test *t, unsigned char base,
		       unsigned char *buf, struct tally *ty, struct diag *d)
{
	const char *name = read_op_name[t->read_op];
	size_t bs = t->block_size;
	unsigned int i;

	if (t->read_op == RD_READ && lseek(fd, 0, SEEK_SET) != 0) {
		diag_add(d, "lseek 0 before read: %s", strerror(errno));
		ty->errors++;
		return;
	}
	for (i = 0; i < t->nblocks; i++) {
		long long off = (long long)i * (long long)bs;
		off_t before = lseek(fd, 0, SEEK_CUR);
		ssize_t ret;

		memset(buf, 0, bs);
		ret = do_read(fd, t->read_op, buf, bs, (off_t)off);
		if (ret < 0) {
			diag_add(first(ty->io, d), "%s at %lld failed: %s",
				 name, off, strerror(errno));
			ty->io++;
			continue;
		}
		ty->io += check_io_len(ret, bs, name, off, first(ty->io, d));
		ty->bytes += check_fill(buf, (size_t)ret, off,
					pattern(base, i), first(ty->bytes, d));
		if (t->read_op == RD_READ)
			ty->pos += check_position(lseek(fd, 0, SEEK_CUR),
						  (long long)before + ret, name,
						  i + 1, t->nblocks, bs,
						  first(ty->pos, d));
	}
}

/*
 * Extending writes into a new file (write, writev, pwrite, pwritev, with
 * O_SYNC/O_DSYNC/O_APPEND or fsync/fdatasync per the row), optionally a close
 * and reopen, then the readback.
 */
enum test_status test_extend(const struct suite_test *t,
			     const struct suite_env *env, struct diag *d)
{
	struct tally ty = { 0 };
	enum test_status verdict;
	unsigned char *buf;
	int fd;

	fd = test_create(t, env, &verdict, d);
	if (fd < 0)
		return verdict;
	buf = io_alloc(t->block_size * t->blocks_per_call, d);
	if (buf == NULL) {
		close(fd);
		return TEST_FAIL;
	}
	if (write_phase(fd, t, 'a', 0, buf, &ty, d) != 0)
		goto out;
	if (t->flags & ST_REOPEN) {
		struct stat st;
		long long want = (long long)t->nblocks * (long long)t->block_size;

		if (fsync(fd) != 0) {
			diag_add(d, "fsync before close: %s", strerror(errno));
			ty.errors++;
		}
		close(fd);
		fd = open(env->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
		if (fd < 0) {
			diag_add(d, "reopen %s: %s", env->path, strerror(errno));
			ty.errors++;
			goto out;
		}
		if (fstat(fd, &st) != 0) {
			diag_add(d, "fstat after reopen: %s", strerror(errno));
			ty.errors++;
			goto out;
		}
		ty.size += check_size((long long)st.st_size, want, "reopen", 0, 0,
				      first(ty.size, d));
	}
	read_phase(fd, t, 'a', buf, &ty, d);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return tally_verdict(&ty, d);
}

/*
 * Fill the file with positional writes (known good placement), rewind, then
 * overwrite every block with the row's write op: the position must advance,
 * st_size must not change, the new bytes must be there.
 */
enum test_status test_overwrite(const struct suite_test *t,
				const struct suite_env *env,
				struct diag *d)
{
	struct suite_test fill = *t;
	struct tally ty = { 0 };
	long long size = (long long)t->nblocks * (long long)t->block_size;
	enum test_status verdict;
	unsigned char *buf;
	int fd;

	fd = test_create(t, env, &verdict, d);
	if (fd < 0)
		return verdict;
	buf = io_alloc(t->block_size * t->blocks_per_call, d);
	if (buf == NULL) {
		close(fd);
		return TEST_FAIL;
	}
	fill.write_op = OP_PWRITE;
	fill.blocks_per_call = 1;
	fill.sync_op = SYNC_NONE;
	if (write_phase(fd, &fill, 'a', 0, buf, &ty, d) != 0)
		goto out;
	if (lseek(fd, 0, SEEK_SET) != 0) {
		diag_add(d, "lseek 0 before overwrite: %s", strerror(errno));
		ty.errors++;
		goto out;
	}
	if (write_phase(fd, t, 'A', size, buf, &ty, d) != 0)
		goto out;
	read_phase(fd, t, 'A', buf, &ty, d);
out:
	close(fd);
	free(buf);
	return tally_verdict(&ty, d);
}

/*
 * One write at offset block_size into a new file: with 512 bytes on a 4 KiB
 * block filesystem this is ext4's sub-block O_DIRECT path, which must zero the
 * rest of the block. Then a second write leaves a hole. Checks position, size
 * and every byte including the zeros.
 */
enum test_status test_subblock(const struct suite_test *t,
			       const struct suite_env *env,
			       struct diag *d)
{
	const char *name = write_op_name[t->write_op];
	size_t bs = t->block_size;
	size_t cap = 8 * bs > IO_ALIGN ? 8 * bs : IO_ALIGN;
	const long long offs[2] = { (long long)bs, 3 * (long long)bs };
	struct tally ty = { 0 };
	unsigned char *buf, *want = NULL, *have = NULL;
	long long size = 0;
	enum test_status verdict;
	unsigned int i;
	int fd;

	fd = test_create(t, env, &verdict, d);
	if (fd < 0)
		return verdict;
	buf = io_alloc(bs, d);
	want = io_alloc(cap, d);
	have = io_alloc(cap, d);
	if (buf == NULL || want == NULL || have == NULL) {
		ty.errors++;
		goto out;
	}
	for (i = 0; i < 2; i++) {
		long long pos_want = op_is_positional(t->write_op) ? 0 :
								      offs[i] + (long long)bs;
		struct stat st;
		ssize_t ret;

		memset(buf, pattern('a', i), bs);
		if (!op_is_positional(t->write_op) &&
		    lseek(fd, (off_t)offs[i], SEEK_SET) != (off_t)offs[i]) {
			diag_add(d, "lseek %lld: %s", offs[i], strerror(errno));
			ty.errors++;
			goto out;
		}
		ret = do_write(fd, t->write_op, buf, 1, bs, (off_t)offs[i]);
		if (ret < 0) {
			diag_add(d, "%s %u of 2 (%zu bytes at %lld) failed: %s",
				 name, i + 1, bs, offs[i], strerror(errno));
			ty.errors++;
			goto out;
		}
		if ((size_t)ret != bs) {
			diag_add(first(ty.ret, d),
				 "%s %u of 2 returned %zd, expected %zu", name,
				 i + 1, ret, bs);
			ty.ret++;
		}
		memcpy(want + offs[i], buf, bs);
		size = offs[i] + (long long)bs;
		ty.pos += check_position(lseek(fd, 0, SEEK_CUR), pos_want, name,
					 i + 1, 2, bs, first(ty.pos, d));
		if (fstat(fd, &st) != 0) {
			diag_add(d, "fstat: %s", strerror(errno));
			ty.errors++;
			goto out;
		}
		ty.size += check_size((long long)st.st_size, size, name, i + 1,
				      2, first(ty.size, d));
	}
	{
		/* Aligned length past EOF: O_DIRECT reads stop at i_size. */
		size_t len = ((size_t)size + IO_ALIGN - 1) / IO_ALIGN * IO_ALIGN;
		ssize_t ret = pread(fd, have, len, 0);

		if (ret < 0) {
			diag_add(d, "pread at 0 failed: %s", strerror(errno));
			ty.errors++;
			goto out;
		}
		ty.io += check_io_len(ret, (size_t)size, "pread", 0, d);
		ty.bytes += check_bytes(have, want, (size_t)ret, 0, d);
	}
out:
	close(fd);
	free(buf);
	free(want);
	free(have);
	return tally_verdict(&ty, d);
}

/*
 * A misaligned O_DIRECT write (buffer address, file offset or length) must
 * either fail with EINVAL and change nothing, or succeed (a filesystem may
 * fall back to buffered I/O) with exactly the right bytes in place. The
 * diagnostic says which of the two happened, also when the test passes.
 */
enum test_status test_unaligned(const struct suite_test *t,
				const struct suite_env *env,
				struct diag *d)
{
	static const char *const what_name[] = {
		[MIS_NONE] = "aligned",
		[MIS_BUFFER] = "misaligned buffer",
		[MIS_OFFSET] = "misaligned offset",
		[MIS_LENGTH] = "odd length",
	};
	size_t bs = t->block_size;
	size_t cap = 4 * bs;
	struct tally ty = { 0 };
	unsigned char *mem, *want = NULL, *have = NULL, *src;
	long long size_before = 0, size_want;
	size_t len = bs;
	off_t off = 0;
	enum test_status verdict;
	struct stat st;
	ssize_t ret;
	int fd, rfd = -1;

	fd = test_create(t, env, &verdict, d);
	if (fd < 0)
		return verdict;
	mem = io_alloc(2 * bs, d);
	want = io_alloc(cap, d);
	have = io_alloc(cap, d);
	if (mem == NULL || want == NULL || have == NULL) {
		ty.errors++;
		goto out;
	}
	src = mem;
	switch (t->misalign) {
	case MIS_BUFFER:
		src = mem + 1;
		break;
	case MIS_OFFSET:
		/* Known content around the target so a misplaced write shows. */
		memset(mem, 'a', bs);
		memset(mem + bs, 'b', bs);
		if (pwrite(fd, mem, 2 * bs, 0) != (ssize_t)(2 * bs)) {
			diag_add(d, "prefill pwrite of %zu bytes: %s", 2 * bs,
				 strerror(errno));
			ty.errors++;
			goto out;
		}
		memcpy(want, mem, 2 * bs);
		size_before = 2 * (long long)bs;
		off = 1;
		break;
	case MIS_LENGTH:
		len = bs / 2 + 1;
		break;
	case MIS_NONE:
		break;
	}
	memset(src, 'm', len);
	ret = pwrite(fd, src, len, off);
	size_want = size_before;
	if (ret < 0 && errno == EINVAL) {
		diag_add(d, "%s: pwrite of %zu bytes at %lld rejected with EINVAL",
			 what_name[t->misalign], len, (long long)off);
	} else if (ret < 0) {
		diag_add(d, "%s: pwrite of %zu bytes at %lld failed: %s, expected EINVAL or success",
			 what_name[t->misalign], len, (long long)off,
			 strerror(errno));
		ty.errors++;
		goto out;
	} else {
		diag_add(d, "%s: pwrite of %zu bytes at %lld accepted (%zd bytes written), checking data",
			 what_name[t->misalign], len, (long long)off, ret);
		memcpy(want + off, src, (size_t)ret);
		if ((long long)off + ret > size_want)
			size_want = (long long)off + ret;
	}
	if (fstat(fd, &st) != 0) {
		diag_add(d, "fstat: %s", strerror(errno));
		ty.errors++;
		goto out;
	}
	ty.size += check_size((long long)st.st_size, size_want,
			      what_name[t->misalign], 0, 0, d);
	/*
	 * Read through the page cache so this check does not depend on
	 * O_DIRECT alignment; the direct write invalidated any cached pages.
	 */
	rfd = open(env->path, O_RDONLY | O_CLOEXEC);
	if (rfd < 0) {
		diag_add(d, "open for readback: %s", strerror(errno));
		ty.errors++;
		goto out;
	}
	ret = pread(rfd, have, cap, 0);
	if (ret < 0) {
		diag_add(d, "pread at 0 failed: %s", strerror(errno));
		ty.errors++;
		goto out;
	}
	ty.io += check_io_len(ret, (size_t)size_want, "pread", 0, d);
	ty.bytes += check_bytes(have, want, (size_t)ret, 0, d);
out:
	if (rfd >= 0)
		close(rfd);
	close(fd);
	free(mem);
	free(want);
	free(have);
	return tally_verdict(&ty, d);
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
