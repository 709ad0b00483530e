/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bdevio.c: what the block-device tests (bdev.c) share: a test's window of
 * the device and the image of what it must hold, the batch of native AIO
 * and io_uring I/Os, and the probe of the device. Internal to the agent.
 */
#ifndef RCGATE_AGENT_BDEVIO_H
#define RCGATE_AGENT_BDEVIO_H

#include <stddef.h>

#include "suite.h"
#include "testio.h"

#define MIB (1024 * KIB)
/* Each test's window and the smallest device that holds them all. */
#define WIN (6 * MIB)
#define BDEV_MIN_SIZE (48 * MIB)
/* The seed of the pattern every window starts with. */
#define SEED0 0

/* ---- a window of the device ---- */

struct win {
	int fd;    /* O_RDWR|O_DIRECT on the device */
	long long base;
	struct image im; /* window-relative offsets */
};

void win_end(struct win *w);
/* "returned 4096" or "returned -1: Invalid argument", for diagnostics. */
const char *ret_text(long long r, int e, char *buf, size_t len);
/* An AIO or io_uring result for diagnostics: "res 4096", "res -11
 * Resource temporarily unavailable" (a negative errno). */
const char *res_text(long long res, char *buf, size_t len);
/* Opens the device and writes the whole window with SEED0. Returns 0, or
 * -1 with *st set (a failure with a diagnostic). */
int win_begin(const struct suite_test *t, const struct suite_env *env,
	      struct win *w, enum test_status *st, struct diag *d);
/* A direct write of seed's pattern at window offset off from buf + boff
 * that must be complete. 0, or -1 with a diagnostic. */
int win_put(struct win *w, long long off, size_t len, size_t boff,
	    unsigned int seed, const char *what, struct diag *d);
/* Reads [off, off + len) of the window through fd and compares it with
 * the image. Returns the number of problems (0 or 1). */
unsigned int win_get(struct win *w, int fd, long long off, size_t len,
		     size_t boff, const char *how, struct diag *d);
/* The whole window through O_DIRECT and through the page cache. */
void win_verify(struct win *w, const struct suite_env *env, const char *step,
		struct diag *d);
enum test_status win_finish(struct win *w);

/* ---- native AIO and io_uring ---- */

/* One asynchronous I/O of a batch, and its result. */
struct aop {
	int write;
	long long off; /* window-relative */
	size_t len, boff;
	int rwf;           /* RWF_ flags (aio_rw_flags, rw_flags) */
	unsigned int seed; /* what a write writes */
	unsigned char *mem; /* the page-aligned buffer (len + boff) */
	long long res;
};

/* The batch both engines run (bdev_aio, bdev_uring): writes of every
 * shape, out of order, one with RWF_DSYNC, then reads of them. */
#define NASYNC 8
extern const struct aop async_ops[NASYNC];

void aops_free(struct aop *ops, size_t n);
/* ops[0..n) through one engine on fd: 1 when it ran, 0 when this kernel
 * lacks the engine (*skip set), -1 after a problem counted in w->im.bad.
 * aops_free() after. */
int engine_run(struct win *w, int fd, int uring, struct aop *ops, size_t n,
	       int *skip, struct diag *d);
/* Checks every result of a batch that ran, and a read's bytes. */
void aops_check(struct win *w, const char *engine, struct aop *ops, size_t n,
		struct diag *d);

/* ---- the device ---- */

/* env for the device dev: its size and logical sector size (BLKGETSIZE64,
 * BLKSSZGET). -1 with a message in err when it cannot be used (too small,
 * no O_DIRECT). */
int bdev_probe(const char *dev, struct suite_env *env, char *err,
	       size_t errlen);

#endif
