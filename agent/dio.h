/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the suite's test files (dio.c: files on a filesystem, bdev.c: a raw
 * block device) share: the byte pattern, the image of what the file or
 * device must hold, aligned buffers, the byte comparison that writes the
 * diagnostic, and io_uring through raw syscalls. Internal to the agent.
 */
#ifndef RCGATE_AGENT_DIO_H
#define RCGATE_AGENT_DIO_H

#include <stddef.h>
#include <stdint.h>

#include <linux/aio_abi.h>
#include <linux/io_uring.h>

#include "suite.h"

#define KIB 1024L
#define PAGE 4096L

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

/* A zeroed page-aligned buffer (free() it), or NULL with a diagnostic. */
unsigned char *aligned(size_t len, struct diag *d);

/* Compare have with the image at off; one diagnostic line, naming how
 * the bytes were read, for the first difference. Returns 1 if any. */
unsigned int compare(const char *how, const unsigned char *have,
		     const struct image *im, long long off, size_t len,
		     struct diag *d);

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
