/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The exerciser: seeded random sequences of data operations on one file
 * (or a window of a block device), each checked against an in-memory model
 * of what the file must hold right after it. exer.c owns the model, the
 * generator, the checks, the shrinker and the test functions; exer_ops.c
 * issues each operation in every form a program can (the syscall families,
 * native AIO, io_uring, mmap, splice, copy and clone, fallocate, truncate,
 * the syncs) and says what the kernel returned. Internal to the agent.
 *
 * A seed names a whole run: its profile (which operations are likely) is
 * seed / EXER_SEEDS_PER_PROFILE, and the operations are drawn from a PRNG
 * seeded with it, so `rcgate-agent --replay SEED` on the same filesystem
 * issues the same operations.
 */
#ifndef RCGATE_AGENT_EXER_H
#define RCGATE_AGENT_EXER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "suite.h"

/* The largest file (or device window) an operation may reach. */
#define EXER_MAX_SIZE (2L * 1024 * 1024)
/* The source file's size (copy, clone, sendfile, mmap sources). */
#define EXER_AUX_SIZE (1L * 1024 * 1024)
/* The largest single transfer: past 1 MiB a direct one takes more than
 * one bio (the block device profile's huge writes). */
#define EXER_MAX_IO (1280L * 1024)
/* The largest transfer of the usual length classes. */
#define EXER_TYPICAL_IO (512L * 1024)
#define EXER_MAX_OPS 400
/* Operations per seed in the suite's rows (and a replay's default). */
#define EXER_DEFAULT_OPS 120
#define EXER_MAX_IOV 8
#define EXER_MAX_AIO 4
#define EXER_SEEDS_PER_PROFILE 1000
/* The model tracks extents in these units (coverage and layouts). */
#define EXER_UNIT 4096L

enum exer_profile {
	EXER_PROFILE_SYNC = 1,  /* read/write families, ranges, direct-heavy */
	EXER_PROFILE_ASYNC = 2, /* native AIO and io_uring */
	EXER_PROFILE_MIXED = 3, /* everything: mmap, splice, copy, clone */
	EXER_PROFILE_BDEV = 4,  /* a raw block device window */
	EXER_PROFILE_FULL = 5,  /* a nearly full filesystem: ENOSPC's contract */
	EXER_PROFILE_MAX = 5,
};

enum exer_opkind {
	XO_WRITE,      /* lseek + write() */
	XO_PWRITE,
	XO_WRITEV,     /* lseek + writev() */
	XO_PWRITEV,
	XO_PWRITEV2,   /* with rwf; off -1 uses the position */
	XO_READ,
	XO_PREAD,
	XO_READV,
	XO_PREADV,
	XO_PREADV2,
	XO_AIO_WRITE,  /* 1..EXER_MAX_AIO iocbs in one io_submit */
	XO_AIO_READ,
	XO_URING_WRITE, /* variant: plain, vectored, fixed buffer, ... */
	XO_URING_READ,
	XO_URING_LINKED, /* a write linked to a read of the same range */
	XO_MMAP_WRITE,
	XO_MMAP_READ,
	XO_SPLICE_READ, /* file -> pipe */
	XO_SPLICE_WRITE, /* pipe -> file */
	XO_SENDFILE,    /* source file -> file at its position */
	XO_COPY_RANGE,  /* copy_file_range from the source file */
	XO_CLONE,       /* FICLONERANGE from the source file */
	XO_FALLOCATE,   /* variant: the mode */
	XO_TRUNCATE,
	XO_SYNC,        /* variant: fsync, fdatasync, sync_file_range, syncfs */
	XO_DROP,        /* POSIX_FADV_DONTNEED */
	XO_SEEK,        /* SEEK_DATA / SEEK_HOLE */
	XO_BLKZERO,     /* bdev: BLKZEROOUT / BLKDISCARD (variant) */
	XO_NKINDS,
};

/* A vectored write's variant: one iovec per page, the pages of the
 * buffer taken out of order (more segments than one bio holds). */
#define EXER_PAGE_IOVECS 0x40

/* Which descriptor an operation goes through. */
enum exer_fdkind { XF_DIRECT, XF_BUFFERED, XF_APPEND, XF_NFDS };

/* The user buffer an operation hands the kernel. */
enum exer_bufkind {
	XB_HEAP,       /* aligned, faulted */
	XB_MISALIGNED, /* faulted, off the DIO memory alignment */
	XB_FRESH,      /* fresh anonymous mmap, never touched: zeros */
	XB_HOLE,       /* one page of it PROT_NONE: EFAULT in the middle */
	XB_RDONLY,     /* read-only mapping: a read into it is EFAULT */
	XB_FILEMAP,    /* a mapping of the source file (writes) */
	XB_SELFMAP,    /* a mapping of the file itself (writes) */
	XB_NKINDS,
};

/* The layout a range had when the operation met it (coverage). */
enum exer_layout {
	XL_HOLE,
	XL_UNWRITTEN,
	XL_WRITTEN,
	XL_SHARED,
	XL_MIXED,    /* more than one of the above */
	XL_PAST_EOF, /* starts at or past EOF */
	XL_NLAYOUTS,
};

/* One operation, fully determined before it runs (so that a shrunk trace
 * replays the same syscalls). */
struct exer_op {
	uint8_t kind;     /* enum exer_opkind */
	uint8_t fd;       /* enum exer_fdkind */
	uint8_t buf;      /* enum exer_bufkind */
	uint8_t variant;  /* per kind: mode, flavour */
	uint8_t niov;     /* segments (vectored), iocbs (AIO) */
	uint8_t use_pos;  /* pwritev2/preadv2 with offset -1 */
	uint16_t tag;     /* names the data a write puts down */
	uint32_t rwf;     /* RWF_* */
	long long off;    /* file offset (the device window's for bdev) */
	long long len;
	long long src;    /* source offset: copy, clone, sendfile, selfmap */
};

/* The byte a write with tag puts at file offset off (depends on both, so
 * that data landing at the wrong offset or from the wrong write shows). */
unsigned char exer_byte(unsigned int tag, long long off);

/* What the source file holds at off. */
#define EXER_AUX_TAG 0xa5a5u

/* ---- exer_ops.c: issuing one operation ---- */

/* Everything an operation needs: descriptors, the source file, the ring,
 * the AIO context, reusable buffers. */
struct exer_io;

/* What the kernel answered. res: the syscall's return value or -errno
 * (for AIO and io_uring: each completion's res in parts[]). fault_at:
 * the offset into the buffer where it stops being accessible (or -1). */
struct exer_result {
	long long res;
	long long parts[EXER_MAX_AIO + 1];
	unsigned int nparts;
	long long fault_at;
	long long fault_len; /* how far the inaccessible part goes */
	long long pos_after; /* lseek(fd, 0, SEEK_CUR) afterwards */
	/* reads: what came back (valid for res bytes or per part) */
	const unsigned char *data;
	const char *skipped; /* set when the op could not run here */
};

/* Open the descriptors on path (creating and truncating it), the source
 * file path.src, the ring and the AIO context. bdev: path is a device and
 * base the window's first byte. 0, or -1 with a diagnostic. */
struct exer_io *exer_io_open(const char *path, const struct suite_env *env,
			     long long base, struct diag *d);
void exer_io_close(struct exer_io *io);
/* Issue op. The data a write puts down is built by the op itself
 * (exer_byte, or a mapping of the source file or of the file); model_size
 * is where an append lands. */
void exer_io_run(struct exer_io *io, const struct exer_op *op,
		 long long model_size, struct exer_result *r);
/* Read [off, off+len) back through way (0 buffered, 1 direct, 2 mmap)
 * into out. Returns bytes read, or -errno. */
long long exer_io_readback(struct exer_io *io, int way, long long off,
			   long long len, unsigned char *out);
long long exer_io_size(struct exer_io *io);
/* The direct I/O alignment in force (offset and memory). */
unsigned int exer_io_align(const struct exer_io *io);
/* 1 when the op kind is known unsupported here (EOPNOTSUPP seen once). */
int exer_io_unsupported(const struct exer_io *io, unsigned int kind,
			unsigned int variant);
void exer_io_mark_unsupported(struct exer_io *io, unsigned int kind,
			      unsigned int variant);
int exer_io_is_bdev(const struct exer_io *io);
unsigned int exer_io_fs_block(const struct exer_io *io);
/* The bytes of the last page past EOF, through a mapping, must be zero:
 * the offset of the first that is not, or -1. */
long long exer_io_tail_garbage(struct exer_io *io, long long size);
/* fallocate's mode for an XO_FALLOCATE variant. */
int exer_falloc_mode(unsigned int variant);
#define EXER_FALLOC_VARIANTS 7
/* Split [0, len) into n pieces, each a multiple of unit but the last
 * (the segments of a vectored call, the iocbs or sqes of one submit). */
void exer_pieces(long long len, unsigned int n, long long unit,
		 long long *start, long long *plen);

/* ---- exer.c ---- */

/* Describe op in one line ("pwritev2(direct, RWF_NOWAIT, 3 iov, heap) 8192
 * at 12288"). */
void exer_op_text(const struct exer_op *op, char *buf, size_t len);

struct exer_run_options {
	unsigned int seed;
	unsigned int nops;          /* operations to draw */
	const unsigned char *keep;  /* NULL, or keep[i]: run op i (replay) */
	int quiet;                  /* no shrink */
	FILE *trace;                /* NULL, or every op and its answer */
};

/* Run one seed on env's file; PASS or FAIL with diagnostics (the failing
 * step, its check, the shrunk trace). */
enum test_status exer_run_seed(const struct suite_env *env,
			       const struct exer_run_options *o,
			       struct diag *d);

/* The suite's rows: each runs a profile's fixed seeds
 * (t->nblocks seeds from the profile's first, t->blocks_per_call ops). */
enum test_status test_exer(const struct suite_test *t,
			   const struct suite_env *env, struct diag *d);

/* Seeds per row are multiplied by this: 1, or more for a deep run
 * (rcgate.exer=deep, --deep). */
extern unsigned int exer_seed_factor;
#define EXER_DEEP_FACTOR 5

/* rcgate-agent --replay SEED [--ops LIST] --dir DIR: one seed, its trace
 * printed to out. Returns 0 pass, 1 fail, 2 unusable. */
int exer_replay(const char *dir, unsigned int seed, const char *ops,
		unsigned int nops, FILE *out);

#endif
