/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every test of the suite's families shares (testio.h): the byte
 * pattern, the image of what a file (or device window) must hold and its
 * check through O_DIRECT, buffered and mmap reads, the steps of a test on
 * one file (create, put, falloc, finish), the filesystem a path is on, and
 * native AIO and io_uring through raw syscalls.
 *
 * A diagnostic says which read, at which byte, what it found and what it
 * expected.
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

void image_zero(struct image *im, long long off, long long len)
{
	if (off < 0 || off >= (long long)im->cap)
		return;
	if (off + len > (long long)im->cap)
		len = (long long)im->cap - off;
	memset(im->want + off, 0, (size_t)len);
}

/* Truncate (or extend with zeros) to size. */
void image_truncate(struct image *im, long long size)
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

long long round_up(long long v, long long a)
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

/*
 * Check path against the image: st_size, then every byte through each read
 * path in how. step names the moment ("after truncate down"). Adds to
 * im->bad and returns the number of problems.
 */
unsigned int verify(const char *path, struct image *im,
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
int create(const struct suite_env *env, int extra, enum test_status *st,
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

void skip(struct diag *d, const char *what, int e)
{
	snprintf(d->skip_reason, sizeof(d->skip_reason), "%s: %s", what,
		 strerror(e));
}

/* An operation the test needs failed with errno e: a skip with the reason
 * when the filesystem does not have it (EOPNOTSUPP), else a problem. */
void needed(int e, const char *what, struct image *im,
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
int put(int fd, unsigned char *buf, long long off, size_t len,
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
int falloc(int fd, int mode, long long off, long long len,
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

enum test_status verdict(const struct image *im)
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
enum test_status finish(int fd, unsigned char *buf, struct image *im,
			enum test_status st)
{
	close(fd);
	free(buf);
	if (st != TEST_SKIP)
		st = verdict(im);
	image_free(im);
	return st;
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

/* The statfs f_type of the filesystem that holds the test's file (not
 * created yet: its directory is asked), 0 if statfs fails. */
uint32_t fs_type_of(const char *path)
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

int on_btrfs(const char *path)
{
	return fs_type_of(path) == BTRFS_MAGIC;
}
