/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The suites' tables (the files of a filesystem, a raw block device), the
 * catalogue as a table, and suite_run, which runs a directory's or a
 * device's table through the runner of suite.c.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/fs.h>

#include "suite.h"
#include "bdevio.h"
#include "tests.h"
#include "table.h"

#define DEFAULT_TIMEOUT_S 60

/*
 * The table. Block i of every test is filled with 'a' + i like LTP's preadv03,
 * so a block landing in the wrong place shows up as "have 62 expected 61".
 */
#define ROW(nm, fn, bs, per, fl, wop, rop, sop, mis, tf)                        \
	{ .name = nm, .run = fn, .block_size = bs, .nblocks = 8,               \
	  .blocks_per_call = per, .open_flags = fl, .write_op = wop,           \
	  .read_op = rop, .sync_op = sop, .misalign = mis, .flags = tf }
/* A dio.c scenario: one call per test function, block size, flags, RWF_. */
#define DIO(nm, fn, bs, tf, rw)                                                \
	{ .name = nm, .run = fn, .block_size = bs, .nblocks = 1,               \
	  .blocks_per_call = 1, .write_op = OP_PWRITE, .read_op = RD_PREAD,    \
	  .flags = tf, .rwf = rw }
#define EXTEND(nm, bs, per, fl, wop, rop, sop)                                  \
	ROW(nm "_" #bs, test_extend, bs, per, fl, wop, rop, sop, MIS_NONE, 0)
#define PER_BS(bs)                                                             \
	EXTEND("write_seq", bs, 1, 0, OP_WRITE, RD_PREAD, SYNC_NONE),          \
	EXTEND("writev_seq", bs, 2, 0, OP_WRITEV, RD_PREADV, SYNC_NONE),       \
	EXTEND("pwrite_seq", bs, 1, 0, OP_PWRITE, RD_READ, SYNC_NONE),         \
	EXTEND("pwritev_seq", bs, 2, 0, OP_PWRITEV, RD_READ, SYNC_NONE),       \
	EXTEND("write_osync", bs, 1, O_SYNC, OP_WRITE, RD_PREAD, SYNC_NONE),   \
	EXTEND("write_odsync", bs, 1, O_DSYNC, OP_WRITE, RD_PREAD, SYNC_NONE), \
	EXTEND("writev_osync", bs, 2, O_SYNC, OP_WRITEV, RD_PREADV, SYNC_NONE),\
	EXTEND("write_fsync", bs, 1, 0, OP_WRITE, RD_PREAD, SYNC_FSYNC),       \
	EXTEND("write_fdatasync", bs, 1, 0, OP_WRITE, RD_PREAD, SYNC_FDATASYNC),\
	EXTEND("write_append", bs, 1, O_APPEND, OP_WRITE, RD_PREAD, SYNC_NONE),\
	ROW("write_overwrite_" #bs, test_overwrite, bs, 1, 0, OP_WRITE,        \
	    RD_PREAD, SYNC_NONE, MIS_NONE, 0),                                 \
	ROW("write_reopen_" #bs, test_extend, bs, 1, 0, OP_WRITE, RD_PREAD,    \
	    SYNC_NONE, MIS_NONE, ST_REOPEN)

static const struct suite_test tests[] = {
	PER_BS(512),
	PER_BS(4096),
	EXTEND("write_seq", 65536, 1, 0, OP_WRITE, RD_PREAD, SYNC_NONE),
	EXTEND("writev_seq", 65536, 2, 0, OP_WRITEV, RD_PREADV, SYNC_NONE),
	EXTEND("pwritev_seq", 65536, 2, 0, OP_PWRITEV, RD_READ, SYNC_NONE),
	ROW("subblock_write_512", test_subblock, 512, 1, 0, OP_WRITE, RD_PREAD,
	    SYNC_NONE, MIS_NONE, 0),
	ROW("subblock_pwrite_512", test_subblock, 512, 1, 0, OP_PWRITE,
	    RD_PREAD, SYNC_NONE, MIS_NONE, 0),
	ROW("unaligned_buffer", test_unaligned, 4096, 1, 0, OP_PWRITE,
	    RD_PREAD, SYNC_NONE, MIS_BUFFER, 0),
	ROW("unaligned_offset", test_unaligned, 4096, 1, 0, OP_PWRITE,
	    RD_PREAD, SYNC_NONE, MIS_OFFSET, 0),
	ROW("unaligned_length", test_unaligned, 4096, 1, 0, OP_PWRITE,
	    RD_PREAD, SYNC_NONE, MIS_LENGTH, 0),
	/* dio.c: one scenario each (catalogue.h says what and why). */
	DIO("pwritev2_offsets", test_rwf_offsets, 4096, 0, 0),
	DIO("pwritev2_dsync", test_rwf_offsets, 4096, 0, RWF_DSYNC),
	DIO("pwritev2_sync", test_rwf_offsets, 4096, 0, RWF_SYNC),
	DIO("pwritev2_hipri", test_rwf_offsets, 4096, 0, RWF_HIPRI),
	DIO("nowait", test_nowait, 4096, 0, RWF_NOWAIT),
	DIO("append_flags", test_append_flags, 4096, 0, RWF_APPEND),
	DIO("aio_rw", test_aio, 4096, 0, 0),
	DIO("uring_rw", test_uring, 4096, 0, 0),
	DIO("efault_buffer", test_efault, 4096, 0, 0),
	DIO("fresh_mmap_read", test_mmap_buffer, 4096, MB_FRESH_READ, 0),
	DIO("mmap_src_write", test_mmap_buffer, 4096, MB_FILE_SRC, 0),
	DIO("mmap_src_append", test_mmap_buffer, 4096, MB_FILE_APPEND, 0),
	DIO("mmap_same_file", test_mmap_buffer, 4096, MB_SAME_FILE, 0),
	DIO("many_iovecs_512", test_many_iovecs, 512, 0, 0),
	DIO("large_io", test_large_io, 4096, 0, 0),
	DIO("mixed_extents", test_mixed_extents, 4096, 0, 0),
	DIO("eof_cross", test_eof, 4096, 0, 0),
	DIO("truncate_updown", test_truncate, 4096, 0, 0),
	DIO("punch_zero_collapse", test_punch, 4096, 0, 0),
	DIO("reflink", test_reflink, 4096, 0, 0),
	DIO("reflink_nocow", test_reflink_nocow, 4096, 0, 0),
	DIO("btrfs_compressed", test_btrfs_extents, 4096, 0, 0),
	DIO("btrfs_inline", test_btrfs_extents, 4096, ST_INLINE, 0),
	DIO("coherence", test_coherence, 4096, 0, 0),
	DIO("race_append_read", test_race_append, 4096, 0, 0),
	DIO("race_truncate", test_race, 4096, RACE_TRUNCATE, 0),
	DIO("race_punch", test_race, 4096, RACE_PUNCH, 0),
	DIO("race_zero", test_race, 4096, RACE_ZERO, 0),
	DIO("race_collapse", test_race, 4096, RACE_COLLAPSE, 0),
	DIO("race_buffered", test_race, 4096, RACE_BUFFERED, 0),
	DIO("race_aio_read", test_race_aio_read, 4096, 0, 0),
	DIO("full_prealloc", test_full_prealloc, 4096, 0, 0),
	DIO("eof_pollute", test_eof_pollute, 4096, 0, 0),
	DIO("aio_fallocate", test_aio_fallocate, 4096, 0, 0),
	DIO("aio_close", test_aio_close, 4096, 0, 0),
	DIO("splice_read", test_splice_read, 4096, 0, 0),
};

#define CATALOGUE_ROW(nm, fs_, chk, fail, fx)                                 \
	{ .name = nm, .filesystems = fs_, .checks = chk, .failure = fail,      \
	  .fixes = fx },
static const struct catalogue_entry catalogue[] = {
	RCGATE_TEST_CATALOGUE(CATALOGUE_ROW)
};

const struct catalogue_entry *suite_catalogue(size_t *n)
{
	*n = sizeof(catalogue) / sizeof(catalogue[0]);
	return catalogue;
}

const struct catalogue_entry *suite_catalogue_find(const char *test)
{
	size_t i, cut = rcgate_catalogue_family_len(test);

	for (i = 0; i < sizeof(catalogue) / sizeof(catalogue[0]); i++)
		if (strcmp(catalogue[i].name, test) == 0)
			return &catalogue[i];
	for (i = 0; i < sizeof(catalogue) / sizeof(catalogue[0]); i++)
		if (strlen(catalogue[i].name) == cut &&
		    strncmp(catalogue[i].name, test, cut) == 0)
			return &catalogue[i];
	return NULL;
}

const struct suite_test *suite_tests(size_t *n)
{
	*n = sizeof(tests) / sizeof(tests[0]);
	return tests;
}

#define BDEV(nm, fn, win)                                                      \
	{ .name = nm, .run = fn, .block_size = 512, .nblocks = 1,              \
	  .blocks_per_call = 1, .write_op = OP_PWRITE, .read_op = RD_PREAD,    \
	  .window = win }

static const struct suite_test bdev_table[] = {
	BDEV("bdev_rw", test_bdev_rw, 0),
	BDEV("bdev_vectored", test_bdev_vectored, 6),
	BDEV("bdev_nowait", test_bdev_nowait, 12),
	BDEV("bdev_aio", test_bdev_aio, 18),
	BDEV("bdev_uring", test_bdev_uring, 24),
	BDEV("bdev_coherence", test_bdev_coherence, 30),
	BDEV("bdev_efault", test_bdev_efault, 36),
	/* From the end: the last WIN bytes. */
	BDEV("bdev_eod", test_bdev_eod, -6),
};

const struct suite_test *bdev_tests(size_t *n)
{
	*n = sizeof(bdev_table) / sizeof(bdev_table[0]);
	return bdev_table;
}

int suite_run(const char *dir, const char *suite_name, FILE *out,
	      const struct suite_options *opt, struct suite_counts *counts,
	      char *err, size_t errlen)
{
	unsigned int timeout_s = opt != NULL && opt->timeout_s > 0 ?
					 opt->timeout_s : DEFAULT_TIMEOUT_S;
	const char *only = opt != NULL ? opt->only : NULL;
	struct suite_env env;
	struct diag d;
	struct stat sb;
	size_t n, i, planned = 0, number = 0;
	int bdev = stat(dir, &sb) == 0 && S_ISBLK(sb.st_mode);
	const struct suite_test *t = bdev ? bdev_tests(&n) : suite_tests(&n);

	memset(counts, 0, sizeof(*counts));
	if ((bdev ? bdev_probe(dir, &env, err, errlen) :
		    suite_probe(dir, &env, err, errlen)) != 0)
		return -1;
	for (i = 0; i < n; i++)
		planned += suite_selected(only, t[i].name);
	print_subtest_head(out, suite_name, planned);
	for (i = 0; i < n; i++) {
		enum test_status st;
		long long started;

		if (!suite_selected(only, t[i].name))
			continue;
		/* Buffered output must not be duplicated into the child. */
		fflush(out);
		started = now_ms();
		st = suite_test_isolated(&t[i], dir, &env, timeout_s, &d);
		suite_print_result(out, 4, (unsigned int)++number,
				   now_ms() - started, t[i].name, st, &d);
		counts_add_status(counts, st);
	}
	return 0;
}
