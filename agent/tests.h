/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The suites' tests, a section per family file. Each test is a
 * suite_test_fn named in its row of catalogue.h (with what it checks and
 * what its failure means). A family calls only the floors below it
 * (testio.c, bdevio.c, suite.c), never another family.
 */
#ifndef RCGATE_AGENT_TESTS_H
#define RCGATE_AGENT_TESTS_H

#include <stddef.h>
#include <stdio.h>

#include "protocol.h"
#include "suite.h"


/* ---- t_write.c: the write paths ---- */

enum test_status test_extend(const struct suite_test *t,
			     const struct suite_env *env, struct diag *d);
enum test_status test_overwrite(const struct suite_test *t,
				const struct suite_env *env, struct diag *d);
enum test_status test_subblock(const struct suite_test *t,
			       const struct suite_env *env, struct diag *d);
enum test_status test_unaligned(const struct suite_test *t,
				const struct suite_env *env, struct diag *d);
enum test_status test_rwf_offsets(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d);
enum test_status test_append_flags(const struct suite_test *t,
				   const struct suite_env *env, struct diag *d);

/* ---- t_async.c: RWF_NOWAIT, native AIO, io_uring ---- */

enum test_status test_nowait(const struct suite_test *t,
			     const struct suite_env *env, struct diag *d);
enum test_status test_aio(const struct suite_test *t,
			  const struct suite_env *env, struct diag *d);
enum test_status test_uring(const struct suite_test *t,
			    const struct suite_env *env, struct diag *d);
enum test_status test_aio_fallocate(const struct suite_test *t,
				    const struct suite_env *env, struct diag *d);
enum test_status test_aio_close(const struct suite_test *t,
				const struct suite_env *env, struct diag *d);

/* ---- t_read.c: user buffers and read paths ---- */

enum test_status test_efault(const struct suite_test *t,
			     const struct suite_env *env, struct diag *d);
enum test_status test_mmap_buffer(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d);
enum test_status test_many_iovecs(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d);
enum test_status test_large_io(const struct suite_test *t,
			       const struct suite_env *env, struct diag *d);
enum test_status test_splice_read(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d);

/* ---- t_layout.c: extents, holes, reflinks, a full filesystem ---- */

enum test_status test_mixed_extents(const struct suite_test *t,
				    const struct suite_env *env,
				    struct diag *d);
enum test_status test_punch(const struct suite_test *t,
			    const struct suite_env *env, struct diag *d);
enum test_status test_reflink(const struct suite_test *t,
			      const struct suite_env *env, struct diag *d);
enum test_status test_btrfs_extents(const struct suite_test *t,
				    const struct suite_env *env,
				    struct diag *d);
enum test_status test_reflink_nocow(const struct suite_test *t,
				    const struct suite_env *env,
				    struct diag *d);
enum test_status test_full_prealloc(const struct suite_test *t,
				    const struct suite_env *env,
				    struct diag *d);

/* ---- t_eof.c: the end of the file ---- */

enum test_status test_eof(const struct suite_test *t,
			  const struct suite_env *env, struct diag *d);
enum test_status test_truncate(const struct suite_test *t,
			       const struct suite_env *env, struct diag *d);
enum test_status test_eof_pollute(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d);
/* The operations that test_eof_pollute grows a file by, over garbage
 * written through mmap past its EOF. */
enum eof_grow {
	EOF_GROW_BUFFERED,
	EOF_GROW_DIRECT,
	EOF_GROW_DIRECT_SECTOR,
	EOF_GROW_TRUNCATE,
	EOF_GROW_FALLOCATE,
};
/*
 * Why a filesystem (statfs f_type) on kernel release ("6.1.192-...") is
 * known to leave that garbage when op grows the file, or NULL: ext4 before
 * 6.13 (c7fc0366c656) for every operation, ext4 for a direct write on
 * every kernel seen. There test_eof_pollute would fail every run of a
 * correct kernel, so it does not check that operation and says so.
 */
const char *eof_zeroing_gap(unsigned long fs_type, const char *release,
			    enum eof_grow op);

/* ---- t_race.c: page-cache coherence and races ---- */

enum test_status test_coherence(const struct suite_test *t,
				const struct suite_env *env, struct diag *d);
enum test_status test_race_append(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d);
enum test_status test_race(const struct suite_test *t,
			   const struct suite_env *env, struct diag *d);
enum test_status test_race_aio_read(const struct suite_test *t,
				    const struct suite_env *env, struct diag *d);

/* ---- bdev.c: the suite on a raw block device ---- */

enum test_status test_bdev_rw(const struct suite_test *t,
			      const struct suite_env *env, struct diag *d);
enum test_status test_bdev_vectored(const struct suite_test *t,
				    const struct suite_env *env, struct diag *d);
enum test_status test_bdev_nowait(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d);
enum test_status test_bdev_aio(const struct suite_test *t,
			       const struct suite_env *env, struct diag *d);
enum test_status test_bdev_uring(const struct suite_test *t,
				 const struct suite_env *env, struct diag *d);
enum test_status test_bdev_coherence(const struct suite_test *t,
				     const struct suite_env *env,
				     struct diag *d);
enum test_status test_bdev_efault(const struct suite_test *t,
				  const struct suite_env *env, struct diag *d);
enum test_status test_bdev_eod(const struct suite_test *t,
			       const struct suite_env *env, struct diag *d);
/* ---- crash consistency (91562895f803 and the other promises): crash.c ---- */

#define CRASH_FILE "crash.dat"
/* How much is written is part of the contract with the daemon. */
#define CRASH_BLOCK RCGATE_CRASH_BLOCK
#define CRASH_BLOCKS RCGATE_CRASH_BLOCKS
#define CRASH_PROMISES RCGATE_CRASH_PROMISES
#define CRASH_TEST_NAME "crash_osync_extend"

/*
 * The promises, in the daemon's disk order (protocol.h): 0 O_SYNC write()
 * extension (crash_osync_extend, crash.dat), 1 O_DSYNC pwrite() extension,
 * 2 pwritev() extension then fdatasync, 3 native AIO RWF_DSYNC writes into
 * blocks fallocated (and fsynced) before, 4 io_uring RWF_NOWAIT|RWF_DSYNC
 * writes into such blocks (-EAGAIN goes again without RWF_NOWAIT), 5
 * O_APPEND write()s (the position checked after each), then fsync. Each
 * writes CRASH_BLOCKS blocks of CRASH_BLOCK bytes at 0, block i filled with
 * crash_pattern. NULL for a promise number out of range.
 */
const char *crash_test_name(unsigned int promise);
const char *crash_file_name(unsigned int promise);

/* The byte expected at file offset off: block i holds 'A' + i (mod 26). */
unsigned char crash_pattern(long long off);

/* Why this kernel cannot make promise at all (no AIO, no io_uring): the
 * reason in why, or NULL when it can. */
const char *crash_unsupported(unsigned int promise, char *why, size_t len);

/*
 * Phase crash-write of one promise: create <dir>/<its file> (O_TRUNC) and
 * write it. Promise 0 checks the file position after each write() (a wrong
 * one is a diagnostic in d, and writing goes on); a failed or short write
 * ends the writing. The file is deliberately left open and never synced
 * beyond what the promise does: the caller's power cut is the point.
 * Returns the bytes the kernel promised are durable (0 when a batch or
 * fdatasync failed), or -1 with a message in err when the file cannot be
 * created or the promise's interface is missing (see crash_unsupported).
 * *fd_out (may be NULL) receives the open descriptor, else it is closed.
 */
long long crash_write(const char *dir, unsigned int promise, int *fd_out,
		      struct diag *d, char *err, size_t errlen);

/*
 * Phase crash-verify of one promise, after the power cut and a fresh mount:
 * its file must exist, have st_size >= expect, and its first expect bytes
 * must match crash_pattern. TEST_SKIP when crash_unsupported. Diagnostics
 * such as "st_size 0 after power cut, expected >= 65536 (O_SYNC|O_DIRECT
 * extension not durable)", "buffer wrong at 4096 have 00 expected 42" or
 * "crash.dat missing after power cut".
 */
enum test_status crash_verify(const char *dir, unsigned int promise,
			      long long expect, struct diag *d);

/* One disk (or directory) of crash-verify and the promise it holds. */
struct crash_disk {
	const char *dir;
	unsigned int promise;
	int unsupported;	/* its filesystem is not in this kernel: SKIP */
};

/*
 * crash_verify of each disk as a nested KTAP block like suite_run's:
 * header, "# Subtest: <suite_name>", "1..n", one result per disk named
 * after its promise. The caller prints the parent's result line from
 * counts.
 */
void crash_verify_run(const struct crash_disk *disks, unsigned int n,
		      const char *suite_name, long long expect, FILE *out,
		      struct suite_counts *counts);

#endif
