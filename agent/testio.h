/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * testio.c: what the suite's test files (t_*.c: files on a filesystem,
 * bdev.c: a raw block device, crash.c: the power-cut promises) share: the
 * byte pattern, the image of what the file or device must hold, aligned
 * buffers, the byte comparison that writes the diagnostic, the steps of a
 * test on one file, and AIO and io_uring through raw syscalls. Internal to
 * the agent.
 */
#ifndef RCGATE_AGENT_TESTIO_H
#define RCGATE_AGENT_TESTIO_H

#include <stddef.h>
#include <stdint.h>

#include <linux/aio_abi.h>
#include <linux/io_uring.h>

#include "suite.h"

#define KIB 1024L
#define PAGE 4096L
#define BTRFS_MAGIC 0x9123683EU

/* The byte a test expects at offset off: one letter per 512-byte sector,
 * shifted by seed, so a misplaced sector shows as a wrong letter. */
unsigned char pat(long long off, unsigned int seed);
void pat_fill(unsigned char *buf, size_t len, long long off,
	      unsigned int seed);

/* What one test's file (or device window) must hold: a byte image and the
 * size. */
struct image {
	unsigned char *want;
	size_t cap;
	long long size;
	unsigned int bad; /* problems found so far */
};

int image_init(struct image *im, size_t cap, struct diag *d);
/* The file got len bytes of seed's pattern at off (len may be 0). */
void image_write(struct image *im, long long off, size_t len,
		 unsigned int seed);
void image_free(struct image *im);
/* The file got zeros at [off, off + len): a hole punched or zeroed. */
void image_zero(struct image *im, long long off, long long len);
/* The file was truncated (or extended) to size. */
void image_truncate(struct image *im, long long size);

/* A zeroed page-aligned buffer (free() it), or NULL with a diagnostic. */
unsigned char *aligned(size_t len, struct diag *d);

/* Compare have with the image at off; one diagnostic line, naming how
 * the bytes were read, for the first difference. Returns 1 if any. */
unsigned int compare(const char *how, const unsigned char *have,
		     const struct image *im, long long off, size_t len,
		     struct diag *d);

long long round_up(long long v, long long a);

/* The read paths of verify(). */
#define VIA_DIRECT 0x1
#define VIA_BUFFERED 0x2
#define VIA_MMAP 0x4
#define VIA_ALL (VIA_DIRECT | VIA_BUFFERED | VIA_MMAP)

/*
 * Check path against the image: st_size, then every byte through each read
 * path in how. step names the moment ("after truncate down"). Adds to
 * im->bad and returns the number of problems.
 */
unsigned int verify(const char *path, struct image *im, const char *step,
		    unsigned int how, struct diag *d);

/* ---- the steps of a test on one file ---- */

/* New file for the test: O_RDWR|O_DIRECT|extra. -1 with the verdict set
 * (a skip when the filesystem refuses O_DIRECT). */
int create(const struct suite_env *env, int extra, enum test_status *st,
	   struct diag *d);
/* The skip reason "<what>: <strerror(e)>". */
void skip(struct diag *d, const char *what, int e);
/* An operation the test needs failed with errno e: a skip with the reason
 * when the filesystem does not have it (EOPNOTSUPP), else a problem. */
void needed(int e, const char *what, struct image *im, enum test_status *st,
	    struct diag *d);
/* A direct pwrite of seed's pattern that must be complete: 0, or -1 with a
 * diagnostic. buf holds at least len bytes. */
int put(int fd, unsigned char *buf, long long off, size_t len,
	unsigned int seed, struct image *im, const char *what, struct diag *d);
/* 0, or -1 with errno; a diagnostic only for an error that counts (not
 * EOPNOTSUPP, nor an error listed in tolerated). */
int falloc(int fd, int mode, long long off, long long len, const char *what,
	   int tolerated, struct diag *d);
/* TEST_PASS when the image found no problem, else TEST_FAIL. */
enum test_status verdict(const struct image *im);
/* The end of a test on one file: closes fd, frees buf and the image; the
 * verdict from the image unless st is a skip. */
enum test_status finish(int fd, unsigned char *buf, struct image *im,
			enum test_status st);

/* The statfs f_type of the filesystem that holds the test's file (not
 * created yet: its directory is asked), 0 if statfs fails. */
uint32_t fs_type_of(const char *path);
int on_btrfs(const char *path);

/* ---- native AIO and io_uring ---- */

/* io_getevents(2) without a timeout, as a raw syscall: min to nr events
 * of ctx into ev, or -1 with errno. A 32-bit agent asks through
 * io_pgetevents_time64 first: io_getevents is a time32 system call
 * there, absent from a kernel without CONFIG_COMPAT_32BIT_TIME (so from
 * every i386 and armv7 kernel built on tinyconfig), where it failed the
 * AIO tests with ENOSYS; a kernel older than 5.1 gets io_getevents. */
long aio_getevents(aio_context_t ctx, long min, long nr, struct io_event *ev);

/* An io_uring's three mappings and its fd. */
struct ring {
	int fd;
	void *sq, *cq;
	size_t sq_len, cq_len, sqes_len;
	struct io_uring_sqe *sqes;
	struct io_uring_params p;
};

/* 0, or -1 with errno (ENOSYS: no io_uring in this kernel). */
int ring_open(struct ring *r, unsigned int entries);
void ring_close(struct ring *r);
uint32_t *ring_u32(void *base, uint32_t off);
/* Queue one sqe (the caller makes sure there is room). */
void ring_queue(struct ring *r, uint8_t op, int fd, void *iov,
		unsigned int nr, long long off, uint64_t data);
/* The same with the sqe's rw_flags (RWF_NOWAIT, RWF_DSYNC, ...). */
void ring_queue_flags(struct ring *r, uint8_t op, int fd, void *iov,
		      unsigned int nr, long long off, uint64_t data,
		      uint32_t rw_flags);
/* Waits for the next completion and takes it off the ring: 0, or -1 with
 * errno when io_uring_enter fails. */
int ring_wait_cqe(struct ring *r, struct io_uring_cqe *out);

#endif
