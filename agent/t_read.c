/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The user buffers and read paths of a direct I/O: a buffer partly unmapped
 * or read-only, a never-touched anonymous mmap, another file's mmap or the
 * target file's own, many small segments, one I/O of several bios, and
 * splice from a file opened O_DIRECT.
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

/* ---- user buffers ---- */

/* test_efault's first step: a direct write of len bytes from m, whose
 * third page is unmapped, must fail with EFAULT (and leave at most the
 * first two pages, of the pattern or zeros) or stop short before the
 * hole; the image learns what the file holds. */
static void efault_write(int fd, unsigned char *m, size_t len,
			 struct image *im, struct diag *d)
{
	ssize_t r;

	r = pwrite(fd, m, len, 0);
	if (r < 0 && errno == EFAULT) {
		/* Nothing claimed written: st_size must not promise data. */
		struct stat sb;

		if (fstat(fd, &sb) == 0 && sb.st_size > 2 * PAGE) {
			diag_add(d, "write with an unmapped 3rd page: EFAULT but st_size %lld, expected <= 8192",
				 (long long)sb.st_size);
			im->bad++;
		}
		/* A partial write may have happened; take what is there as
		 * long as it is the pattern or zeros (never other bytes). */
		if (fstat(fd, &sb) == 0 && sb.st_size > 0 && sb.st_size <= 2 * PAGE) {
			unsigned char *rb = aligned((size_t)2 * PAGE, d);

			if (rb != NULL && pread(fd, rb, 2 * PAGE, 0) == sb.st_size) {
				long long i;

				for (i = 0; i < sb.st_size; i++)
					if (rb[i] != 0 && rb[i] != pat(i, 1))
						break;
				if (i < sb.st_size) {
					diag_add(d, "after EFAULT write: byte at %lld is %02x, expected %02x or 00",
						 i, rb[i], pat(i, 1));
					im->bad++;
				}
				memcpy(im->want, rb, (size_t)sb.st_size);
			}
			free(rb);
			im->size = sb.st_size;
		}
	} else if (r < 0 || r > 2 * PAGE) {
		diag_add(d, "write of 16384 with an unmapped 3rd page returned %zd%s%s, expected EFAULT or <= 8192",
			 r, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
		im->bad++;
	} else {
		image_write(im, 0, (size_t)r, 1);
	}
}

/*
 * A 16 KiB buffer whose third page is unmapped. A direct write from it
 * must fail with EFAULT or stop short (at most the 8 KiB before the hole),
 * and the file must hold exactly what the return value says. A direct
 * read into it likewise, and a read into a read-only mapping must write
 * nothing. A write from a read-only mapping is an ordinary write.
 */
enum test_status test_efault(const struct suite_test *t,
			     const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct image im;
	unsigned char *m = MAP_FAILED, *buf = NULL;
	size_t len = 4 * PAGE;
	ssize_t r;
	int fd;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, 64 * KIB, d) != 0)
		goto out;
	buf = aligned(len, d);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (buf == NULL || m == MAP_FAILED) {
		diag_add(d, "buffers: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	pat_fill(m, len, 0, 1);
	munmap(m + 2 * PAGE, PAGE);
	efault_write(fd, m, len, &im, d);
	verify(env->path, &im, "after write from a partly unmapped buffer",
	       VIA_DIRECT | VIA_BUFFERED, d);
	/* The file is now 16 KiB of pattern 2, read into the holed buffer. */
	if (ftruncate(fd, 0) != 0) {
		diag_add(d, "ftruncate: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	image_truncate(&im, 0);
	if (put(fd, buf, 0, len, 2, &im, "prefill", d) != 0)
		goto out;
	memset(m, 0, 2 * PAGE);
	r = pread(fd, m, len, 0);
	if (r < 0 && errno == EFAULT) {
		/* fine: nothing promised */
	} else if (r < 0 || r > 2 * PAGE) {
		diag_add(d, "read of 16384 into a buffer with an unmapped 3rd page returned %zd%s%s, expected EFAULT or <= 8192",
			 r, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
		im.bad++;
	} else {
		im.bad += compare("short read into a partly unmapped buffer", m,
				  &im, 0, (size_t)r, d);
	}
	/* Read-only buffers: a write from one works, a read into one must
	 * fail without changing anything. */
	mprotect(m, 2 * PAGE, PROT_READ);
	r = pread(fd, m, 2 * PAGE, 0);
	if (r != -1 || errno != EFAULT) {
		diag_add(d, "read into a read-only buffer returned %zd%s%s, expected EFAULT",
			 r, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
		im.bad++;
	}
	/* Over a hole the kernel zeroes the user buffer instead of reading
	 * the disk: that path must fail with EFAULT as well (42c498c18a94),
	 * not return 0 as if the hole were at EOF. */
	if (ftruncate(fd, 32 * KIB) != 0) {
		diag_add(d, "ftruncate 32768: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	image_truncate(&im, 32 * KIB);
	r = pread(fd, m, 2 * PAGE, 16 * KIB);
	if (r != -1 || errno != EFAULT) {
		diag_add(d, "read of a hole into a read-only buffer returned %zd%s%s, expected EFAULT",
			 r, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
		im.bad++;
	}
	memset(buf, 0, len);
	mprotect(m, 2 * PAGE, PROT_READ | PROT_WRITE);
	pat_fill(m, 2 * PAGE, 8 * KIB, 3);
	mprotect(m, 2 * PAGE, PROT_READ);
	r = pwrite(fd, m, 2 * PAGE, 8 * KIB);
	if (r != 2 * PAGE) {
		diag_add(d, "write of 8192 from a read-only buffer returned %zd%s%s, expected 8192",
			 r, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
		im.bad++;
	} else {
		image_write(&im, 8 * KIB, 2 * PAGE, 3);
	}
	verify(env->path, &im, "after the read-only buffers", VIA_ALL, d);
out:
	if (m != MAP_FAILED) {
		munmap(m, 2 * PAGE);
		munmap(m + 3 * PAGE, PAGE);
	}
	close(fd);
	free(buf);
	st = verdict(&im);
	image_free(&im);
	return st;
}

#define MB_LEN (256 * KIB)

/* MB_FRESH_READ: a direct read into a never-touched anonymous mmap (*m,
 * MB_LEN bytes). 0 when the file is to be checked, -1 when the test ends. */
static int mb_fresh_read(int fd, unsigned char *buf, unsigned char **m,
			 struct image *im, struct diag *d)
{
	ssize_t r;

	if (put(fd, buf, 0, MB_LEN, 1, im, "prefill", d) != 0)
		return -1;
	*m = mmap(NULL, MB_LEN, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*m == MAP_FAILED) {
		diag_add(d, "mmap: %s", strerror(errno));
		im->bad++;
		return -1;
	}
	r = pread(fd, *m, MB_LEN, 0);
	if (r != MB_LEN) {
		diag_add(d, "read of %ld into a never-touched mmap returned %zd%s%s",
			 MB_LEN, r, r < 0 ? ": " : "",
			 r < 0 ? strerror(errno) : "");
		im->bad++;
		return -1;
	}
	im->bad += compare("read into a never-touched mmap", *m, im, 0,
			   MB_LEN, d);
	return 0;
}

/* MB_SAME_FILE: a direct write from an mmap (*m, *mlen bytes) of the
 * target file itself. 0 when the file is to be checked, -1 when the test
 * ends. */
static int mb_same_file(int fd, unsigned char *buf, unsigned char **m,
			size_t *mlen, struct image *im, struct diag *d)
{
	ssize_t r;

	/* The source is [0, 128K) of the file, the target [128K, 256K). */
	if (put(fd, buf, 0, MB_LEN, 1, im, "prefill", d) != 0)
		return -1;
	*mlen = MB_LEN / 2;
	*m = mmap(NULL, *mlen, PROT_READ, MAP_SHARED, fd, 0);
	if (*m == MAP_FAILED) {
		diag_add(d, "mmap of the file itself: %s", strerror(errno));
		im->bad++;
		return -1;
	}
	r = pwrite(fd, *m, *mlen, (off_t)*mlen);
	if (r != (ssize_t)*mlen) {
		diag_add(d, "write of %zu from an mmap of the same file returned %zd%s%s",
			 *mlen, r, r < 0 ? ": " : "",
			 r < 0 ? strerror(errno) : "");
		im->bad++;
		if (r <= 0)
			return 0;
	}
	memcpy(im->want + *mlen, im->want, (size_t)r);
	return 0;
}

/*
 * Direct I/O whose user pages are not present yet, so the kernel must
 * fault them in half-way (fstests generic/708 and generic/362): the result
 * must be complete and the bytes, size and position right.
 */
enum test_status test_mmap_buffer(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct image im;
	unsigned char *buf = NULL, *m = MAP_FAILED;
	char srcpath[4200];
	long long base = 0;
	size_t mlen = MB_LEN;
	ssize_t r;
	int fd, sfd = -1;

	fd = create(env, (t->flags & MB_FILE_APPEND) ? O_APPEND : 0, &st, d);
	if (fd < 0)
		return st;
	snprintf(srcpath, sizeof(srcpath), "%s.src", env->path);
	if (image_init(&im, 2 * MB_LEN, d) != 0)
		goto out;
	buf = aligned(MB_LEN, d);
	if (buf == NULL) {
		im.bad++;
		goto out;
	}
	if (t->flags & MB_FRESH_READ) {
		if (mb_fresh_read(fd, buf, &m, &im, d) != 0)
			goto out;
		goto check;
	}
	if (t->flags & MB_SAME_FILE) {
		if (mb_same_file(fd, buf, &m, &mlen, &im, d) != 0)
			goto out;
		goto check;
	}
	/* Another file, written buffered, mapped: page cache present but
	 * not in this process's page tables, except the first page. */
	sfd = open(srcpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (sfd < 0) {
		diag_add(d, "create %s: %s", srcpath, strerror(errno));
		im.bad++;
		goto out;
	}
	if (t->flags & MB_FILE_APPEND) {
		if (put(fd, buf, 0, 4 * KIB, 4, &im, "prefill", d) != 0)
			goto out;
		base = 4 * KIB;
	}
	pat_fill(buf, MB_LEN, base, 5);
	if (write(sfd, buf, MB_LEN) != MB_LEN) {
		diag_add(d, "buffered write of the source file: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	m = mmap(NULL, MB_LEN, PROT_READ, MAP_SHARED, sfd, 0);
	if (m == MAP_FAILED) {
		diag_add(d, "mmap of the source file: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	(void)*(volatile unsigned char *)m;
	r = (t->flags & MB_FILE_APPEND) ? write(fd, m, MB_LEN) :
					  pwrite(fd, m, MB_LEN, 0);
	if (r != MB_LEN) {
		diag_add(d, "%s of %ld from a file's mmap (first page touched) returned %zd%s%s, expected %ld",
			 (t->flags & MB_FILE_APPEND) ? "O_APPEND write" : "write",
			 MB_LEN, r, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "",
			 MB_LEN);
		im.bad++;
	}
	if (r > 0)
		image_write(&im, base, (size_t)r, 5);
	if ((t->flags & MB_FILE_APPEND) && r > 0 &&
	    lseek(fd, 0, SEEK_CUR) != (off_t)(base + r)) {
		diag_add(d, "O_APPEND write: position %lld, expected %lld",
			 (long long)lseek(fd, 0, SEEK_CUR), base + (long long)r);
		im.bad++;
	}
check:
	verify(env->path, &im, "after the write", VIA_ALL, d);
out:
	if (m != MAP_FAILED)
		munmap(m, mlen);
	if (sfd >= 0) {
		close(sfd);
		unlink(srcpath);
	}
	close(fd);
	free(buf);
	st = verdict(&im);
	image_free(&im);
	return st;
}

#define NSEG 256

/*
 * One pwritev of 256 segments of block_size bytes scattered over memory in
 * a shuffled order, and one preadv with another order: the segments must
 * land in iovec order, whatever their addresses.
 */
enum test_status test_many_iovecs(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct iovec iov[NSEG];
	struct image im;
	size_t seg = t->block_size, total = NSEG * seg;
	unsigned char *area = NULL;
	long long off = 8 * KIB;
	unsigned int k;
	ssize_t r;
	int fd;

	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, (size_t)off + total, d) != 0)
		goto out;
	area = aligned(total, d);
	if (area == NULL) {
		im.bad++;
		goto out;
	}
	/* 7 and 13 are coprime with 256: both orders are permutations. */
	for (k = 0; k < NSEG; k++) {
		iov[k].iov_base = area + (size_t)((k * 7) % NSEG) * seg;
		iov[k].iov_len = seg;
		pat_fill(iov[k].iov_base, seg, off + (long long)(k * seg), 1);
	}
	r = pwritev(fd, iov, NSEG, (off_t)off);
	if (r != (ssize_t)total) {
		diag_add(d, "pwritev of %d segments of %zu at %lld returned %zd%s%s, expected %zu",
			 NSEG, seg, off, r, r < 0 ? ": " : "",
			 r < 0 ? strerror(errno) : "", total);
		im.bad++;
		if (r <= 0)
			goto out;
	}
	image_write(&im, off, (size_t)r, 1);
	memset(area, 0, total);
	for (k = 0; k < NSEG; k++)
		iov[k].iov_base = area + (size_t)((k * 13) % NSEG) * seg;
	r = preadv(fd, iov, NSEG, (off_t)off);
	if (r != (ssize_t)total) {
		diag_add(d, "preadv of %d segments returned %zd, expected %zu",
			 NSEG, r, total);
		im.bad++;
	} else {
		for (k = 0; k < NSEG; k++) {
			char label[48];

			snprintf(label, sizeof(label), "preadv segment %u", k);
			if (compare(label, iov[k].iov_base, &im,
				    off + (long long)(k * seg), seg, d) != 0) {
				im.bad++;
				break;
			}
		}
	}
	verify(env->path, &im, "after pwritev", VIA_BUFFERED, d);
out:
	close(fd);
	free(area);
	st = verdict(&im);
	image_free(&im);
	return st;
}

/*
 * A 4 MiB direct write and read at 1 MiB + 4 KiB: several bios (a bio
 * holds at most 256 pages), reassembled in order.
 */
enum test_status test_large_io(const struct suite_test *t,
			       const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	const size_t len = 4096 * KIB;
	const long long off = 1028 * KIB;
	struct image im;
	unsigned char *buf = NULL;
	ssize_t r;
	int fd;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, (size_t)off + len, d) != 0)
		goto out;
	buf = aligned(len, d);
	if (buf == NULL) {
		im.bad++;
		goto out;
	}
	if (put(fd, buf, off, len, 1, &im, "4 MiB write", d) != 0)
		goto out;
	memset(buf, 0, len);
	r = pread(fd, buf, len, (off_t)off);
	if (r != (ssize_t)len) {
		diag_add(d, "4 MiB read at %lld returned %zd, expected %zu", off, r,
			 len);
		im.bad++;
	} else {
		im.bad += compare("4 MiB direct read", buf, &im, off, len, d);
	}
	verify(env->path, &im, "after the 4 MiB write", VIA_BUFFERED, d);
out:
	close(fd);
	free(buf);
	st = verdict(&im);
	image_free(&im);
	return st;
}

/* ---- splice from a direct-I/O file ---- */

#define SP_LEN (64 * KIB)

/*
 * splice() from a file opened O_DIRECT into a pipe with room for less than
 * asked: a pipe of one page, then a pipe of four pages three of them full.
 * Each splice must move what fits (a short count, never EAGAIN or an error
 * on a blocking pipe) at the right offset, and the bytes drained from the
 * pipe must be the file's, to EOF (fstests generic/591, 3253d9d09337).
 */
enum test_status test_splice_read(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d)
{
	enum test_status st = TEST_FAIL;
	struct image im;
	unsigned char *buf = NULL, *got = NULL;
	int fd, rfd = -1, pipefd[2] = { -1, -1 };
	unsigned int pass;

	(void)t;
	fd = create(env, 0, &st, d);
	if (fd < 0)
		return st;
	if (image_init(&im, SP_LEN, d) != 0)
		goto out;
	buf = aligned(SP_LEN, d);
	got = aligned(SP_LEN + 16 * KIB, d);
	if (buf == NULL || got == NULL) {
		im.bad++;
		goto out;
	}
	if (put(fd, buf, 0, SP_LEN, 1, &im, "file", d) != 0)
		goto out;
	rfd = open(env->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (rfd < 0) {
		diag_add(d, "open O_DIRECT for reading: %s", strerror(errno));
		im.bad++;
		goto out;
	}
	for (pass = 0; pass < 2 && im.bad == 0; pass++) {
		/* pass 0: a one-page pipe; pass 1: four pages, three full. */
		long pipe_sz = pass == 0 ? PAGE : 4 * PAGE;
		long held = pass == 0 ? 0 : 3 * PAGE; /* bytes of 'z' queued */
		loff_t off = 0;
		long long drained = 0;
		unsigned int calls = 0;

		if (pipe2(pipefd, O_CLOEXEC) != 0 ||
		    fcntl(pipefd[1], F_SETPIPE_SZ, pipe_sz) < pipe_sz) {
			diag_add(d, "pipe of %ld bytes: %s", pipe_sz, strerror(errno));
			im.bad++;
			break;
		}
		memset(got, 'z', (size_t)held);
		if (held > 0 && write(pipefd[1], got, (size_t)held) != held) {
			diag_add(d, "prefill the pipe: %s", strerror(errno));
			im.bad++;
			break;
		}
		while (off < SP_LEN && calls++ < 64) {
			long room = pipe_sz - held;
			long long at = off;
			ssize_t n = splice(rfd, &off, pipefd[1], NULL, SP_LEN, 0), r;

			if (n <= 0 || n > room || off != at + n) {
				diag_add(d, "splice of %ld at %lld from O_DIRECT into a pipe with %ld bytes free returned %zd%s%s and moved the offset to %lld, expected 1..%ld",
					 SP_LEN, at, room, n, n < 0 ? ": " : "",
					 n < 0 ? strerror(errno) : "", (long long)off, room);
				im.bad++;
				break;
			}
			if (held > 0 && read(pipefd[0], got, (size_t)held) != held) {
				im.bad++;
				break;
			}
			held = 0;
			r = read(pipefd[0], got, (size_t)n);
			if (r != n) {
				diag_add(d, "draining %zd bytes from the pipe got %zd", n, r);
				im.bad++;
				break;
			}
			im.bad += compare("bytes spliced from O_DIRECT", got, &im, at,
					  (size_t)n, d);
			drained += n;
		}
		if (im.bad == 0 && drained != SP_LEN) {
			diag_add(d, "spliced %lld bytes of %ld in %u calls", drained,
				 SP_LEN, calls);
			im.bad++;
		}
		if (im.bad == 0)
			diag_add(d, "pipe of %ld bytes%s: %u splices to EOF", pipe_sz,
				 pass ? ", 3 pages full" : "", calls);
		if (im.bad == 0 && splice(rfd, &off, pipefd[1], NULL, SP_LEN, 0) != 0) {
			diag_add(d, "splice at EOF (%lld) did not return 0", (long long)off);
			im.bad++;
		}
		close(pipefd[0]);
		close(pipefd[1]);
		pipefd[0] = pipefd[1] = -1;
	}
out:
	if (pipefd[0] >= 0) {
		close(pipefd[0]);
		close(pipefd[1]);
	}
	if (rfd >= 0)
		close(rfd);
	free(got);
	return finish(fd, buf, &im, st);
}
