/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * End of file: a short read and writes across an unaligned EOF, truncate
 * into a block and back up, and garbage written through a mapping past
 * EOF that must never become file data when the file grows over it.
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

/* ---- EOF ---- */

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
