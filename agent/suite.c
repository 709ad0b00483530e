/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The O_DIRECT test suite: the table of tests, the test functions, the check
 * helpers that word the diagnostics, and the runner that isolates each test in
 * a child process and prints the nested KTAP block.
 *
 * The tests target the class of bug shipped in 6.1.64: an O_DIRECT write that
 * returns the full count but leaves the file position (and so the placement of
 * the next write and i_size) wrong. So every write is followed by position and
 * size checks, and every byte is read back.
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

#include "exer.h"
#include "suite.h"

/* Buffers for O_DIRECT: page alignment satisfies every device we boot. */
#define IO_ALIGN 4096
#define MAX_IOV 16
#define DEFAULT_TIMEOUT_S 60
/* After SIGKILL, how long to wait for a child stuck in the kernel. */
#define KILL_GRACE_MS 3000
/* The skip of every test on a filesystem that refuses O_DIRECT. */
#define NO_ODIRECT "O_DIRECT not supported"

const int suite_fatal_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE,
				    SIGABRT, SIGSYS, SIGALRM };
const size_t suite_nfatal_signals =
	sizeof(suite_fatal_signals) / sizeof(suite_fatal_signals[0]);

long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void diag_reset(struct diag *d)
{
	memset(d, 0, sizeof(*d));
}

void diag_add(struct diag *d, const char *fmt, ...)
{
	va_list ap;
	char *p;

	if (d == NULL)
		return;
	if (d->count >= DIAG_MAX) {
		d->dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(d->line[d->count], DIAG_LEN, fmt, ap);
	va_end(ap);
	/* A newline would end the KTAP diagnostic line early. */
	for (p = d->line[d->count]; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	d->count++;
}

size_t check_fill(const unsigned char *buf, size_t len, long long file_off,
		  unsigned char want, struct diag *d)
{
	size_t i, bad = 0;

	for (i = 0; i < len; i++) {
		if (buf[i] == want)
			continue;
		if (bad == 0)
			diag_add(d, "buffer wrong at %lld have %02x expected %02x",
				 file_off + (long long)i, buf[i], want);
		bad++;
	}
	return bad;
}

size_t check_bytes(const unsigned char *have, const unsigned char *want,
		   size_t len, long long file_off, struct diag *d)
{
	size_t i, bad = 0;

	for (i = 0; i < len; i++) {
		if (have[i] == want[i])
			continue;
		if (bad == 0)
			diag_add(d, "buffer wrong at %lld have %02x expected %02x",
				 file_off + (long long)i, have[i], want[i]);
		bad++;
	}
	return bad;
}

int check_position(long long have, long long want, const char *op,
		   unsigned int idx, unsigned int total, size_t len,
		   struct diag *d)
{
	if (have == want)
		return 0;
	if (idx == 0)
		diag_add(d, "%s (%zu bytes): position %lld, expected %lld", op,
			 len, have, want);
	else
		diag_add(d, "%s %u of %u (%zu bytes): position %lld, expected %lld",
			 op, idx, total, len, have, want);
	return 1;
}

int check_size(long long have, long long want, const char *op,
	       unsigned int idx, unsigned int total, struct diag *d)
{
	if (have == want)
		return 0;
	if (idx == 0)
		diag_add(d, "%s: st_size %lld, expected %lld", op, have, want);
	else
		diag_add(d, "%s %u of %u: st_size %lld, expected %lld", op, idx,
			 total, have, want);
	return 1;
}

int check_io_len(long long have, size_t want, const char *op,
		 long long file_off, struct diag *d)
{
	if (have >= 0 && (size_t)have == want)
		return 0;
	diag_add(d, "%s at %lld read %lld bytes, expected %zu", op, file_off,
		 have, want);
	return 1;
}

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

static const struct suite_io libc_io = {
	.write = write,
	.writev = writev,
};
static struct suite_io io = {
	.write = write,
	.writev = writev,
};

void suite_set_io(const struct suite_io *ops)
{
	io = ops != NULL ? *ops : libc_io;
}

ssize_t suite_write(int fd, const void *buf, size_t len)
{
	return io.write(fd, buf, len);
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
		return io.write(fd, buf, (size_t)nblocks * bs);
	case OP_WRITEV:
		return io.writev(fd, iov, (int)k);
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
static enum test_status test_extend(const struct suite_test *t,
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
static enum test_status test_overwrite(const struct suite_test *t,
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
static enum test_status test_subblock(const struct suite_test *t,
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
static enum test_status test_unaligned(const struct suite_test *t,
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

/*
 * The table. Block i of every test is filled with 'a' + i like LTP's preadv03,
 * so a block landing in the wrong place shows up as "have 62 expected 61".
 */
#define ROW(nm, fn, bs, per, fl, wop, rop, sop, mis, tf)                        \
	{ .name = nm, .run = fn, .block_size = bs, .nblocks = 8,               \
	  .blocks_per_call = per, .open_flags = fl, .write_op = wop,           \
	  .read_op = rop, .sync_op = sop, .misalign = mis, .flags = tf }
/* A dio.c scenario: one call per test function, block size, flags, RWF_. */
#define DIO(nm, fn, bs, tf, rw)                                                \
	{ .name = nm, .run = fn, .block_size = bs, .nblocks = 1,               \
	  .blocks_per_call = 1, .write_op = OP_PWRITE, .read_op = RD_PREAD,    \
	  .flags = tf, .rwf = rw }
/* An exerciser row: seeds profile*1000+1 .. +n, ops per seed. */
#define EXER(nm, profile, n, ops)                                             \
	{ .name = nm, .run = test_exer, .block_size = 4096, .nblocks = 1,      \
	  .blocks_per_call = 1, .write_op = OP_PWRITE, .read_op = RD_PREAD,    \
	  .exer_seed = (profile) * EXER_SEEDS_PER_PROFILE + 1,                 \
	  .exer_seeds = n, .exer_ops = ops }
#define EXTEND(nm, bs, per, fl, wop, rop, sop)                                  \
	ROW(nm "_" #bs, test_extend, bs, per, fl, wop, rop, sop, MIS_NONE, 0)
#define PER_BS(bs)                                                             \
	EXTEND("write_seq", bs, 1, 0, OP_WRITE, RD_PREAD, SYNC_NONE),          \
	EXTEND("writev_seq", bs, 2, 0, OP_WRITEV, RD_PREADV, SYNC_NONE),       \
	EXTEND("pwrite_seq", bs, 1, 0, OP_PWRITE, RD_READ, SYNC_NONE),         \
	EXTEND("pwritev_seq", bs, 2, 0, OP_PWRITEV, RD_READ, SYNC_NONE),       \
	EXTEND("write_osync", bs, 1, O_SYNC, OP_WRITE, RD_PREAD, SYNC_NONE),   \
	EXTEND("write_odsync", bs, 1, O_DSYNC, OP_WRITE, RD_PREAD, SYNC_NONE), \
	EXTEND("writev_osync", bs, 2, O_SYNC, OP_WRITEV, RD_PREADV, SYNC_NONE),\
	EXTEND("write_fsync", bs, 1, 0, OP_WRITE, RD_PREAD, SYNC_FSYNC),       \
	EXTEND("write_fdatasync", bs, 1, 0, OP_WRITE, RD_PREAD, SYNC_FDATASYNC),\
	EXTEND("write_append", bs, 1, O_APPEND, OP_WRITE, RD_PREAD, SYNC_NONE),\
	ROW("write_overwrite_" #bs, test_overwrite, bs, 1, 0, OP_WRITE,        \
	    RD_PREAD, SYNC_NONE, MIS_NONE, 0),                                 \
	ROW("write_reopen_" #bs, test_extend, bs, 1, 0, OP_WRITE, RD_PREAD,    \
	    SYNC_NONE, MIS_NONE, ST_REOPEN)

static const struct suite_test tests[] = {
	PER_BS(512),
	PER_BS(4096),
	EXTEND("write_seq", 65536, 1, 0, OP_WRITE, RD_PREAD, SYNC_NONE),
	EXTEND("writev_seq", 65536, 2, 0, OP_WRITEV, RD_PREADV, SYNC_NONE),
	EXTEND("pwritev_seq", 65536, 2, 0, OP_PWRITEV, RD_READ, SYNC_NONE),
	ROW("subblock_write_512", test_subblock, 512, 1, 0, OP_WRITE, RD_PREAD,
	    SYNC_NONE, MIS_NONE, 0),
	ROW("subblock_pwrite_512", test_subblock, 512, 1, 0, OP_PWRITE,
	    RD_PREAD, SYNC_NONE, MIS_NONE, 0),
	ROW("unaligned_buffer", test_unaligned, 4096, 1, 0, OP_PWRITE,
	    RD_PREAD, SYNC_NONE, MIS_BUFFER, 0),
	ROW("unaligned_offset", test_unaligned, 4096, 1, 0, OP_PWRITE,
	    RD_PREAD, SYNC_NONE, MIS_OFFSET, 0),
	ROW("unaligned_length", test_unaligned, 4096, 1, 0, OP_PWRITE,
	    RD_PREAD, SYNC_NONE, MIS_LENGTH, 0),
	/* dio.c: one scenario each (catalogue.h says what and why). */
	DIO("pwritev2_offsets", test_rwf_offsets, 4096, 0, 0),
	DIO("pwritev2_dsync", test_rwf_offsets, 4096, 0, RWF_DSYNC),
	DIO("pwritev2_sync", test_rwf_offsets, 4096, 0, RWF_SYNC),
	DIO("pwritev2_hipri", test_rwf_offsets, 4096, 0, RWF_HIPRI),
	DIO("nowait", test_nowait, 4096, 0, RWF_NOWAIT),
	DIO("append_flags", test_append_flags, 4096, 0, RWF_APPEND),
	DIO("aio_rw", test_aio, 4096, 0, 0),
	DIO("uring_rw", test_uring, 4096, 0, 0),
	DIO("efault_buffer", test_efault, 4096, 0, 0),
	DIO("fresh_mmap_read", test_mmap_buffer, 4096, MB_FRESH_READ, 0),
	DIO("mmap_src_write", test_mmap_buffer, 4096, MB_FILE_SRC, 0),
	DIO("mmap_src_append", test_mmap_buffer, 4096, MB_FILE_APPEND, 0),
	DIO("mmap_same_file", test_mmap_buffer, 4096, MB_SAME_FILE, 0),
	DIO("many_iovecs_512", test_many_iovecs, 512, 0, 0),
	DIO("large_io", test_large_io, 4096, 0, 0),
	DIO("mixed_extents", test_mixed_extents, 4096, 0, 0),
	DIO("eof_cross", test_eof, 4096, 0, 0),
	DIO("truncate_updown", test_truncate, 4096, 0, 0),
	DIO("punch_zero_collapse", test_punch, 4096, 0, 0),
	DIO("reflink", test_reflink, 4096, 0, 0),
	DIO("reflink_nocow", test_reflink_nocow, 4096, 0, 0),
	DIO("btrfs_compressed", test_btrfs_extents, 4096, 0, 0),
	DIO("btrfs_inline", test_btrfs_extents, 4096, ST_INLINE, 0),
	DIO("coherence", test_coherence, 4096, 0, 0),
	DIO("race_append_read", test_race_append, 4096, 0, 0),
	DIO("race_truncate", test_race, 4096, RACE_TRUNCATE, 0),
	DIO("race_punch", test_race, 4096, RACE_PUNCH, 0),
	DIO("race_zero", test_race, 4096, RACE_ZERO, 0),
	DIO("race_collapse", test_race, 4096, RACE_COLLAPSE, 0),
	DIO("race_buffered", test_race, 4096, RACE_BUFFERED, 0),
	DIO("race_aio_read", test_race_aio_read, 4096, 0, 0),
	DIO("full_prealloc", test_full_prealloc, 4096, 0, 0),
	DIO("eof_pollute", test_eof_pollute, 4096, 0, 0),
	DIO("aio_fallocate", test_aio_fallocate, 4096, 0, 0),
	DIO("aio_close", test_aio_close, 4096, 0, 0),
	DIO("splice_read", test_splice_read, 4096, 0, 0),
	/* exer.c: seeded random operations checked against a model. */
	EXER("exer_sync", EXER_PROFILE_SYNC, 3, EXER_DEFAULT_OPS),
	EXER("exer_async", EXER_PROFILE_ASYNC, 3, EXER_DEFAULT_OPS),
	EXER("exer_mixed", EXER_PROFILE_MIXED, 3, EXER_DEFAULT_OPS),
};

#define CATALOGUE_ROW(nm, fs_, chk, fail, fx)                                 \
	{ .name = nm, .filesystems = fs_, .checks = chk, .failure = fail,      \
	  .fixes = fx },
static const struct catalogue_entry catalogue[] = {
	RCGATE_TEST_CATALOGUE(CATALOGUE_ROW)
};

const struct catalogue_entry *suite_catalogue(size_t *n)
{
	*n = sizeof(catalogue) / sizeof(catalogue[0]);
	return catalogue;
}

const struct catalogue_entry *suite_catalogue_find(const char *test)
{
	size_t i, cut = rcgate_catalogue_family_len(test);

	for (i = 0; i < sizeof(catalogue) / sizeof(catalogue[0]); i++)
		if (strcmp(catalogue[i].name, test) == 0)
			return &catalogue[i];
	for (i = 0; i < sizeof(catalogue) / sizeof(catalogue[0]); i++)
		if (strlen(catalogue[i].name) == cut &&
		    strncmp(catalogue[i].name, test, cut) == 0)
			return &catalogue[i];
	return NULL;
}

const struct suite_test *suite_tests(size_t *n)
{
	*n = sizeof(tests) / sizeof(tests[0]);
	return tests;
}

int suite_probe(const char *dir, struct suite_env *env, char *err,
		size_t errlen)
{
	struct statx stx;
	int fd, n;

	memset(env, 0, sizeof(*env));
	n = snprintf(env->path, sizeof(env->path), "%s/.rcgate-probe", dir);
	if (n < 0 || (size_t)n >= sizeof(env->path)) {
		snprintf(err, errlen, "directory name too long: %s", dir);
		return -1;
	}
	fd = open(env->path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC,
		  0600);
	if (fd < 0 && errno == EINVAL) {
		/* Tell "no O_DIRECT" apart from "cannot create files". */
		fd = open(env->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0) {
			snprintf(err, errlen, "create %s: %s", env->path,
				 strerror(errno));
			return -1;
		}
		close(fd);
		unlink(env->path);
		env->odirect = 0;
		return 0;
	}
	if (fd < 0) {
		snprintf(err, errlen, "create %s: %s", env->path, strerror(errno));
		return -1;
	}
	env->odirect = 1;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN)) {
		if (stx.stx_dio_offset_align == 0)
			env->odirect = 0;
		env->dio_offset_align = stx.stx_dio_offset_align;
		env->dio_mem_align = stx.stx_dio_mem_align;
	}
	close(fd);
	unlink(env->path);
	return 0;
}

enum test_status suite_test_exec(const struct suite_test *t, const char *dir,
				 const struct suite_env *probed, struct diag *d)
{
	struct suite_env env = *probed;
	enum test_status st;
	int n;

	diag_reset(d);
	if (!env.odirect) {
		snprintf(d->skip_reason, sizeof(d->skip_reason), NO_ODIRECT);
		return TEST_SKIP;
	}
	/*
	 * A 512-byte test on a 4Kn device would fail with EINVAL by design;
	 * that is not a regression.
	 */
	if (t->misalign == MIS_NONE && env.dio_offset_align > 0 &&
	    t->block_size % env.dio_offset_align != 0) {
		snprintf(d->skip_reason, sizeof(d->skip_reason),
			 "block size %zu below the O_DIRECT alignment %u",
			 t->block_size, env.dio_offset_align);
		return TEST_SKIP;
	}
	if (t->blocks_per_call == 0 || t->blocks_per_call > MAX_IOV ||
	    t->nblocks % t->blocks_per_call != 0) {
		diag_add(d, "bad table row: %u blocks, %u per call", t->nblocks,
			 t->blocks_per_call);
		return TEST_FAIL;
	}
	if (env.bdev)
		return t->run(t, &env, d);
	n = snprintf(env.path, sizeof(env.path), "%s/%s.dat", dir, t->name);
	if (n < 0 || (size_t)n >= sizeof(env.path)) {
		diag_add(d, "path too long for %s", t->name);
		return TEST_FAIL;
	}
	unlink(env.path);
	st = t->run(t, &env, d);
	unlink(env.path);
	return st;
}

void suite_print_result(FILE *out, int indent, unsigned int number,
			long long duration_ms, const char *name,
			enum test_status st, const struct diag *d)
{
	unsigned int i;

	for (i = 0; i < d->count && i < DIAG_MAX; i++)
		fprintf(out, "%*s# %s: %s\n", indent, "", name, d->line[i]);
	if (d->dropped > 0)
		fprintf(out, "%*s# %s: (%u more diagnostics not shown)\n",
			indent, "", name, d->dropped);
	/* daemon/ktap.c reads this as the result's duration. */
	if (duration_ms >= 0)
		fprintf(out, "%*s" RCGATE_TIME_MS " %lld\n", indent, "",
			duration_ms);
	if (st == TEST_SKIP)
		fprintf(out, "%*sok %u %s # SKIP %s\n", indent, "", number, name,
			d->skip_reason[0] != '\0' ? d->skip_reason : "skipped");
	else
		fprintf(out, "%*s%s %u %s\n", indent, "",
			st == TEST_PASS ? "ok" : "not ok", number, name);
	fflush(out);
}

/* The head of a nested suite: header, "# Subtest: <name>", plan. */
void print_subtest_head(FILE *out, const char *name, size_t ntests)
{
	fprintf(out, "    KTAP version 1\n");
	fprintf(out, "    # Subtest: %s\n", name);
	fprintf(out, "    1..%zu\n", ntests);
	fflush(out);
}

void counts_add_status(struct suite_counts *c, enum test_status st)
{
	if (st == TEST_PASS)
		c->pass++;
	else if (st == TEST_FAIL)
		c->fail++;
	else
		c->skip++;
}

/* Shared with the child: it writes, the parent reads after waitpid. */
struct child_result {
	int done;
	enum test_status status;
	struct diag diag;
};

/*
 * Wait for pid until deadline_ms. Returns 1 when reaped (*status set), 0 on
 * timeout, -1 on a waitpid error. SIGCHLD (the set chld) must be blocked
 * since before the fork: a blocked signal is kept pending even for init,
 * whose unhandled signals are otherwise dropped, so sigtimedwait wakes the
 * moment the test ends. Polling with a sleep left the guest's only CPU idle for up to the
 * sleep after every test (0.6-1.5 s of a suite boot under TCG).
 */
static int wait_until(pid_t pid, const sigset_t *chld, long long deadline_ms,
		      int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);
		long long left;
		struct timespec ts;

		if (r == pid)
			return 1;
		if (r < 0 && errno != EINTR)
			return -1;
		left = deadline_ms - now_ms();
		if (left <= 0)
			return 0;
		ts.tv_sec = (time_t)(left / 1000);
		ts.tv_nsec = (long)(left % 1000) * 1000000L;
		/* Another child's SIGCHLD, EINTR or EAGAIN: look again. */
		(void)sigtimedwait(chld, NULL, &ts);
	}
}

enum test_status suite_test_isolated(const struct suite_test *t,
				     const char *dir,
				     const struct suite_env *env,
				     unsigned int timeout_s, struct diag *d)
{
	struct child_result *res;
	enum test_status st;
	sigset_t chld, old_mask;
	pid_t pid;
	int status = 0, w;

	diag_reset(d);
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		diag_add(d, "mmap for the result: %s", strerror(errno));
		return TEST_FAIL;
	}
	memset(res, 0, sizeof(*res));
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old_mask);
	pid = fork();
	if (pid < 0) {
		diag_add(d, "fork: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		munmap(res, sizeof(*res));
		return TEST_FAIL;
	}
	if (pid == 0) {
		size_t i;

		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		/*
		 * The agent's fatal-signal handlers power the guest off; in a
		 * test process a crash must only end the test.
		 */
		for (i = 0; i < suite_nfatal_signals; i++)
			signal(suite_fatal_signals[i], SIG_DFL);
		res->status = suite_test_exec(t, dir, env, &res->diag);
		__atomic_store_n(&res->done, 1, __ATOMIC_SEQ_CST);
		_exit(0);
	}
	w = wait_until(pid, &chld, now_ms() + (long long)timeout_s * 1000,
		       &status);
	if (w == 0) {
		kill(pid, SIGKILL);
		w = wait_until(pid, &chld, now_ms() + KILL_GRACE_MS, &status);
		diag_add(d, "timed out after %u s%s", timeout_s,
			 w == 1 ? "" : " (process stuck in the kernel, not reaped)");
		st = TEST_FAIL;
	} else if (w < 0) {
		diag_add(d, "waitpid: %s", strerror(errno));
		st = TEST_FAIL;
	} else if (__atomic_load_n(&res->done, __ATOMIC_SEQ_CST)) {
		*d = res->diag;
		st = res->status;
	} else if (WIFSIGNALED(status)) {
		*d = res->diag;
		diag_add(d, "test process killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
		st = TEST_FAIL;
	} else {
		*d = res->diag;
		diag_add(d, "test process exited with status %d without a result",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		st = TEST_FAIL;
	}
	/* Unblocked: a SIGCHLD still pending goes to its default, ignored. */
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	munmap(res, sizeof(*res));
	/* The child may have died before its own cleanup. */
	if (!env->bdev) {
		char path[4096];
		int n = snprintf(path, sizeof(path), "%s/%s.dat", dir, t->name);

		if (n > 0 && (size_t)n < sizeof(path))
			unlink(path);
	}
	return st;
}

int suite_selected(const char *only, const char *name)
{
	size_t nl = strlen(name);
	size_t gl = strlen(RCGATE_ONLY_SMOKE);

	if (only == NULL)
		return 1;
	for (const char *p = only; *p != '\0';) {
		size_t n = strcspn(p, ",");

		if (n == nl && strncmp(p, name, n) == 0)
			return 1;
		if (n == gl && strncmp(p, RCGATE_ONLY_SMOKE, n) == 0 &&
		    suite_selected(RCGATE_SMOKE_TESTS, name))
			return 1;
		if (n == strlen(RCGATE_ONLY_EXER) &&
		    strncmp(p, RCGATE_ONLY_EXER, n) == 0 &&
		    strncmp(name, RCGATE_ONLY_EXER "_", n + 1) == 0)
			return 1;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

int suite_run(const char *dir, const char *suite_name, FILE *out,
	      const struct suite_options *opt, struct suite_counts *counts,
	      char *err, size_t errlen)
{
	unsigned int timeout_s = opt != NULL && opt->timeout_s > 0 ?
					 opt->timeout_s : DEFAULT_TIMEOUT_S;
	const char *only = opt != NULL ? opt->only : NULL;
	struct suite_env env;
	struct diag d;
	struct stat sb;
	size_t n, i, planned = 0, number = 0;
	int bdev = stat(dir, &sb) == 0 && S_ISBLK(sb.st_mode);
	const struct suite_test *t = bdev ? bdev_tests(&n) : suite_tests(&n);

	memset(counts, 0, sizeof(*counts));
	if ((bdev ? bdev_probe(dir, &env, err, errlen) :
		    suite_probe(dir, &env, err, errlen)) != 0)
		return -1;
	for (i = 0; i < n; i++)
		planned += suite_selected(only, t[i].name);
	print_subtest_head(out, suite_name, planned);
	for (i = 0; i < n; i++) {
		enum test_status st;
		long long started;

		if (!suite_selected(only, t[i].name))
			continue;
		/* Buffered output must not be duplicated into the child. */
		fflush(out);
		started = now_ms();
		st = suite_test_isolated(&t[i], dir, &env, timeout_s, &d);
		suite_print_result(out, 4, (unsigned int)++number,
				   now_ms() - started, t[i].name, st, &d);
		counts_add_status(counts, st);
	}
	return 0;
}

/* ---- several filesystems in one boot ---- */

int suite_valid_name(const char *s, size_t max)
{
	size_t i, len = strlen(s);

	if (len == 0 || len >= max)
		return 0;
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

/* One "/dev/<name>:<fs>" entry of len bytes at p. */
static int disk_entry_parse(const char *p, size_t len, struct disk_spec *out,
			    char *err, size_t errlen)
{
	const char *colon = memchr(p, ':', len);
	size_t dlen, flen;

	if (colon == NULL) {
		snprintf(err, errlen, "entry '%.*s' is not device:fstype",
			 (int)(len > 60 ? 60 : len), p);
		return -1;
	}
	dlen = (size_t)(colon - p);
	flen = len - dlen - 1;
	if (dlen >= sizeof(out->dev) || flen >= sizeof(out->fs)) {
		snprintf(err, errlen, "entry '%.*s' too long",
			 (int)(len > 60 ? 60 : len), p);
		return -1;
	}
	memcpy(out->dev, p, dlen);
	out->dev[dlen] = '\0';
	memcpy(out->fs, colon + 1, flen);
	out->fs[flen] = '\0';
	/* The device name comes from the host but is opened as root here. */
	if (strncmp(out->dev, "/dev/", 5) != 0 || strstr(out->dev, "..") != NULL ||
	    !suite_valid_name(out->dev + 5, sizeof(out->dev) - 5)) {
		snprintf(err, errlen, "device '%s' is not /dev/<name>", out->dev);
		return -1;
	}
	if (!suite_valid_name(out->fs, sizeof(out->fs))) {
		snprintf(err, errlen, "bad filesystem type '%s'", out->fs);
		return -1;
	}
	return 0;
}

int disks_parse(const char *value, struct disk_spec *out, unsigned int *n,
		char *err, size_t errlen)
{
	const char *p = value;
	unsigned int count = 0, i;

	*n = 0;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);

		if (count == SUITE_MAX_DISKS) {
			snprintf(err, errlen, "more than %d disks", SUITE_MAX_DISKS);
			return -1;
		}
		if (disk_entry_parse(p, len, &out[count], err, errlen) != 0)
			return -1;
		for (i = 0; i < count; i++) {
			if (strcmp(out[i].dev, out[count].dev) == 0) {
				snprintf(err, errlen, "device %s listed twice",
					 out[i].dev);
				return -1;
			}
		}
		count++;
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	*n = count;
	return 0;
}

int fs_listed(const char *text, const char *fs)
{
	size_t flen = strlen(fs);
	const char *line = text;

	while (line != NULL && *line != '\0') {
		const char *end = strchr(line, '\n');
		const char *name = line;
		size_t len;

		if (end == NULL)
			end = line + strlen(line);
		/* "nodev\tproc" or "\text4": the name follows the last tab. */
		for (const char *q = line; q < end; q++)
			if (*q == '\t' || *q == ' ')
				name = q + 1;
		len = (size_t)(end - name);
		if (len == flen && memcmp(name, fs, flen) == 0)
			return 1;
		line = *end == '\n' ? end + 1 : NULL;
	}
	return 0;
}

int mount_error_unsupported(int e, int listed)
{
	return e == ENODEV || !listed;
}
