/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Page-cache coherence and races: a direct write over cached and mapped
 * pages, a direct read of dirty ones, appends while another process reads
 * the growing end, direct rounds while another process truncates, punches,
 * zeroes, collapses or rewrites the range, and a buffered reader during an
 * asynchronous direct write.
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
