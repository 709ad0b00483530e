/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * suite.c: the runner of the agent's O_DIRECT suites and what every test
 * shares: the types of a test and its row, the pure check helpers (exposed
 * so the unit tests can pin the exact diagnostic wording the daemon stores
 * and reports), the probe of a directory, each test isolated in a child
 * process, the result lines, and the disks of one boot. The lowest floor of
 * the agent: it calls no other agent file.
 */
#ifndef RCGATE_AGENT_SUITE_H
#define RCGATE_AGENT_SUITE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "protocol.h"

enum test_status {
	TEST_PASS,
	TEST_FAIL,
	TEST_SKIP,
};

/* ---- what agent.c shares with the suite ---- */

/* Milliseconds on CLOCK_MONOTONIC. */
long long now_ms(void);
/* Sleeps ms milliseconds, a signal notwithstanding. */
void sleep_ms(long ms);

/*
 * The signals on which the agent, as PID 1, reports and powers off
 * (agent.c installs the handlers); a test's child process puts them back
 * to the default, so that a crash there ends only the test.
 */
extern const int suite_fatal_signals[];

/*
 * Where a test in its child process says what it is doing (NULL outside
 * suite_test_isolated's child): a test that never returns is reported
 * with it, beside what /proc says of the stuck task.
 */
#define SUITE_PROGRESS_LEN 128
extern char *suite_progress;
extern const size_t suite_nfatal_signals;

/*
 * Diagnostics of one test. A broken kernel can produce a problem per byte;
 * only the first DIAG_MAX lines are kept and the rest are counted, so the
 * output stays readable and the serial port is never flooded.
 */
#define DIAG_MAX 6
#define DIAG_LEN 160
#define DIAG_REASON_LEN 96

struct diag {
	unsigned int count;
	unsigned int dropped;
	char line[DIAG_MAX][DIAG_LEN];
	char skip_reason[DIAG_REASON_LEN];
};

/* d may be NULL: callers pass NULL to count a repeated problem silently. */
void diag_add(struct diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void diag_reset(struct diag *d);

/*
 * Check helpers. Each returns 0 when the value is as expected, otherwise a
 * nonzero count, and adds one diagnostic line to d (when d is not NULL).
 * Byte values are printed as two hex digits without 0x, like LTP's preadv03,
 * so "buffer wrong at 0 have 62 expected 61" matches the 2023 report.
 */
size_t check_fill(const unsigned char *buf, size_t len, long long file_off,
		  unsigned char want, struct diag *d);
size_t check_bytes(const unsigned char *have, const unsigned char *want,
		   size_t len, long long file_off, struct diag *d);
/* "write 2 of 8 (512 bytes): position 512, expected 1024" */
int check_position(long long have, long long want, const char *op,
		   unsigned int idx, unsigned int total, size_t len,
		   struct diag *d);
/* "write 2 of 8: st_size 512, expected 1024" */
int check_size(long long have, long long want, const char *op,
	       unsigned int idx, unsigned int total, struct diag *d);
/* "pread at 512 read 0 bytes, expected 512" */
int check_io_len(long long have, size_t want, const char *op,
		 long long file_off, struct diag *d);

/* Buffers for O_DIRECT: page alignment satisfies every device we boot. */
#define IO_ALIGN 4096
/* The most blocks a row writes per syscall (iovecs). */
#define MAX_IOV 16
/* The skip of every test on a filesystem that refuses O_DIRECT. */
#define NO_ODIRECT "O_DIRECT not supported"

struct iovec;

/*
 * The sequential write syscalls the tests go through. Unit tests replace them
 * to simulate a broken kernel (e.g. 6.1.64's position that never advances)
 * and check that the suite catches it; everything else uses libc's.
 */
struct suite_io {
	ssize_t (*write)(int fd, const void *buf, size_t len);
	ssize_t (*writev)(int fd, const struct iovec *iov, int iovcnt);
};

/* NULL restores libc's functions. */
void suite_set_io(const struct suite_io *io);

enum write_op { OP_WRITE, OP_WRITEV, OP_PWRITE, OP_PWRITEV };
enum read_op { RD_PREAD, RD_PREADV, RD_READ };
enum sync_op { SYNC_NONE, SYNC_FSYNC, SYNC_FDATASYNC };
enum misalign { MIS_NONE, MIS_BUFFER, MIS_OFFSET, MIS_LENGTH };

/* Test flags. */
#define ST_REOPEN 0x1 /* close and reopen the file before the readback */
/* test_mmap_buffer's variants (t_read.c) */
#define MB_FRESH_READ 0x10  /* read into a never-touched anonymous mmap */
#define MB_FILE_SRC 0x20    /* write from another file's mmap, 1st page touched */
#define MB_FILE_APPEND 0x40 /* the same, O_APPEND onto existing data */
#define MB_SAME_FILE 0x80   /* write from an mmap of the target file itself */
/* test_btrfs_extents: an inline extent instead of compressed ones */
#define ST_INLINE 0x100
/* test_race: the one operation the racing process repeats */
#define RACE_TRUNCATE 0x200
#define RACE_PUNCH 0x400
#define RACE_ZERO 0x800
#define RACE_COLLAPSE 0x1000
#define RACE_BUFFERED 0x2000
#define RACE_OPS (RACE_TRUNCATE | RACE_PUNCH | RACE_ZERO | RACE_COLLAPSE | \
		  RACE_BUFFERED)

/*
 * What the runner learned about the directory, handed to every test.
 * dio_offset_align and dio_mem_align come from statx(STATX_DIOALIGN) and are
 * 0 when the kernel does not say (before 6.1).
 */
struct suite_env {
	char path[4096]; /* the test's own file, created and removed by it */
	int odirect;     /* 0: open(O_DIRECT) fails with EINVAL here */
	unsigned int dio_offset_align;
	unsigned int dio_mem_align;
	/* A raw block device (bdev.c): path is the device, not a file. */
	int bdev;
	long long dev_size; /* its size in bytes */
};

struct suite_test;
typedef enum test_status (*suite_test_fn)(const struct suite_test *t,
					  const struct suite_env *env,
					  struct diag *d);

/*
 * One row of the suite. Not every function uses every parameter; a new test
 * is a new row (and at most a new function), never a branch in the runner.
 */
struct suite_test {
	const char *name;
	suite_test_fn run;
	size_t block_size;
	unsigned int nblocks;
	unsigned int blocks_per_call; /* blocks per write syscall (iovecs) */
	int open_flags;               /* added to O_RDWR|O_DIRECT */
	enum write_op write_op;
	enum read_op read_op;
	enum sync_op sync_op;
	enum misalign misalign;
	unsigned int flags;
	unsigned int rwf; /* RWF_* flags of pwritev2/preadv2 */
	/* bdev.c: the test's window of the device, in MiB from its start
	 * (negative: from its end). */
	int window;
	/* exer.c: the first seed, how many, operations per seed. */
	unsigned int exer_seed;
	unsigned int exer_seeds;
	unsigned int exer_ops;
};

struct suite_counts {
	unsigned int pass;
	unsigned int fail;
	unsigned int skip;
};

struct suite_options {
	unsigned int timeout_s; /* per test; 0 means the default of 60 */
	/* NULL, or a comma-separated list of test names: only those run, in
	 * the table's order, numbered and planned as the whole suite is. */
	const char *only;
};

/* 1 if name is one of only's comma-separated names (only NULL: all); the
 * name "smoke" (RCGATE_ONLY_SMOKE) stands for RCGATE_SMOKE_TESTS. */
int suite_selected(const char *only, const char *name);

/*
 * Find out whether dir takes O_DIRECT and with which alignment. Returns 0
 * (env->odirect says whether O_DIRECT works), or -1 with a message in err when
 * dir cannot be used at all.
 */
int suite_probe(const char *dir, struct suite_env *env, char *err,
		size_t errlen);

/*
 * Run one test in the calling process on <dir>/<name>.dat, which the test
 * creates and removes. Handles the skips common to all tests (no O_DIRECT,
 * block size below the O_DIRECT alignment). Used by the unit tests; suite_run
 * isolates each test in a child process instead.
 */
enum test_status suite_test_exec(const struct suite_test *t, const char *dir,
				 const struct suite_env *probed,
				 struct diag *d);

/*
 * Run t like suite_test_exec, but in a forked child bounded by timeout_s
 * seconds, so a crash or a hang in the kernel cannot take the agent (PID 1 in
 * the guest) down with it: those become a failed test with a diagnostic.
 */
enum test_status suite_test_isolated(const struct suite_test *t,
				     const char *dir,
				     const struct suite_env *env,
				     unsigned int timeout_s, struct diag *d);

/* Print "[indent]# name: line" for every diagnostic, the test's duration
 * ("# rcgate-time-ms: N", if duration_ms >= 0), then the result line. */
void suite_print_result(FILE *out, int indent, unsigned int number,
			long long duration_ms, const char *name,
			enum test_status st, const struct diag *d);

/* ---- several filesystems in one boot (rcgate.disks) ---- */

#define SUITE_MAX_DISKS 20

/* One disk to test: the device and the filesystem the host made on it. */
struct disk_spec {
	char dev[64]; /* "/dev/vdb" */
	char fs[32];  /* "xfs": mount type, mount point /mnt/<fs>, suite name */
};

/*
 * 1 when s is a valid KTAP test name ([A-Za-z0-9_.-]+) shorter than max
 * bytes, else 0. Filesystem types become suite names, so they must be.
 */
int suite_valid_name(const char *s, size_t max);

/*
 * Parse "/dev/vda:ext4,/dev/vdb:xfs" (at most SUITE_MAX_DISKS entries; no
 * fs or device twice, since the fs names the suite and the mount point).
 * Returns 0 with *n entries in out, or -1 with a message in err (out is
 * then undefined).
 */
int disks_parse(const char *value, struct disk_spec *out, unsigned int *n,
		char *err, size_t errlen);

/*
 * Whether the text of /proc/filesystems lists fs ("nodev\tproc" and
 * "\text4" lines). Returns 1 or 0.
 */
int fs_listed(const char *proc_filesystems, const char *fs);

/*
 * After mount(2) failed with errno e for a filesystem that the kernel does
 * (listed = 1) or does not (listed = 0) have: 1 when that means "this kernel
 * does not support the filesystem" (a SKIP), 0 when it is a real mount
 * failure (an infrastructure error). ENODEV always means the former; other
 * errors (EINVAL from a type the kernel lacks) only when it is not listed.
 */
int mount_error_unsupported(int e, int listed);

/* suite.c's pieces the tests, crash.c and suite_run share: the nested
 * block's head, a result's count, and the write() and writev() the unit
 * tests can replace (suite_set_io). */
void print_subtest_head(FILE *out, const char *name, size_t ntests);
void counts_add_status(struct suite_counts *c, enum test_status st);
ssize_t suite_write(int fd, const void *buf, size_t len);
ssize_t suite_writev(int fd, const struct iovec *iov, int iovcnt);

#endif
