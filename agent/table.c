/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The suites' tables (the files of a filesystem, a raw block device), made
 * from catalogue.h's rows, where a test's catalogue entry and its row are
 * one row; the catalogue as a table; and suite_run, which runs a
 * directory's or a device's table through the runner of suite.c.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/fs.h>

#include "suite.h"
#include "bdevio.h"
#include "tests.h"
#include "exer.h"
#include "table.h"

#define DEFAULT_TIMEOUT_S 60

/*
 * The tables are catalogue.h's rows expanded once per pass, a pass taking
 * its rows from each row's kind: the file suite is every block-size family
 * at 512 bytes, then at 4096, then at 65536, then the tests of one row
 * each; the block device's suite is the BDEV rows. That is the order of the
 * results the daemon's goldens and bisections know. Each kind gives what
 * it adds to the passes (P512, P4K, P64K, PONE, PBDEV) and the pass picks
 * its own; a PROMISE adds nothing (crash.c runs the promises).
 *
 * Block i of a file suite test is filled with 'a' + i like LTP's preadv03,
 * so a block landing in the wrong place shows up as "have 62 expected 61".
 */
#define PICK_P512(p512, p4k, p64k, one, bdev) p512
#define PICK_P4K(p512, p4k, p64k, one, bdev) p4k
#define PICK_P64K(p512, p4k, p64k, one, bdev) p64k
#define PICK_PONE(p512, p4k, p64k, one, bdev) one
#define PICK_PBDEV(p512, p4k, p64k, one, bdev) bdev
#define TABLE_ROW(pass, nm, fs, checks, failure, fixes, kind, ...)             \
	kind(PICK_##pass, nm, __VA_ARGS__)

/* A file suite test of eight blocks of bs bytes, per of them per call. */
#define ROW_OF(nm, fn, bs, per, fl, wop, rop, sop, mis, tf)                     \
	{ .name = nm, .run = fn, .block_size = bs, .nblocks = 8,               \
	  .blocks_per_call = per, .open_flags = fl, .write_op = wop,           \
	  .read_op = rop, .sync_op = sop, .misalign = mis, .flags = tf },
#define SIZED(nm, bs, fn, per, fl, wop, rop, sop, tf)                          \
	ROW_OF(nm "_" #bs, fn, bs, per, fl, wop, rop, sop, MIS_NONE, tf)
/* A scenario of t_*.c: one call of its function; block size, flags, RWF_. */
#define DIO_OF(nm, fn, bs, tf, rw)                                             \
	{ .name = nm, .run = fn, .block_size = bs, .nblocks = 1,               \
	  .blocks_per_call = 1, .write_op = OP_PWRITE, .read_op = RD_PREAD,    \
	  .flags = tf, .rwf = rw },

#define AT_512(nm, ...) SIZED(nm, 512, __VA_ARGS__)
#define AT_4096(nm, ...) SIZED(nm, 4096, __VA_ARGS__)
#define AT_65536(nm, ...) SIZED(nm, 65536, __VA_ARGS__)
#define BDEV_OF(nm, fn, win)                                                   \
	{ .name = nm, .run = fn, .block_size = 512, .nblocks = 1,              \
	  .blocks_per_call = 1, .write_op = OP_PWRITE, .read_op = RD_PREAD,    \
	  .window = win },
/* exer.c: seeds profile * 1000 + 1 .. + n, ops operations each; on a
 * device the window is its last 2 MiB (exer.c takes it as it finds it). */
#define EXER_OF(nm, profile, n, ops)                                           \
	{ .name = nm, .run = test_exer, .block_size = 4096, .nblocks = 1,      \
	  .blocks_per_call = 1, .write_op = OP_PWRITE, .read_op = RD_PREAD,    \
	  .exer_seed = (profile) * EXER_SEEDS_PER_PROFILE + 1,                 \
	  .exer_seeds = n, .exer_ops = ops },
#define EXER_BDEV_OF(nm, profile, n, ops)                                      \
	{ .name = nm, .run = test_exer, .block_size = 512, .nblocks = 1,       \
	  .blocks_per_call = 1, .write_op = OP_PWRITE, .read_op = RD_PREAD,    \
	  .window = -6, .exer_seed = (profile) * EXER_SEEDS_PER_PROFILE + 1,   \
	  .exer_seeds = n, .exer_ops = ops },
#define NONE(...)

/* The kinds: which of the row macros above each pass applies to a row. */
#define PER_BS(pick, nm, ...)                                                  \
	pick(AT_512, AT_4096, NONE, NONE, NONE)(nm, __VA_ARGS__)
#define PER_BS_64K(pick, nm, ...)                                              \
	pick(AT_512, AT_4096, AT_65536, NONE, NONE)(nm, __VA_ARGS__)
#define AT_BS(pick, nm, ...) pick(NONE, NONE, NONE, SIZED, NONE)(nm, __VA_ARGS__)
#define ROW(pick, nm, ...) pick(NONE, NONE, NONE, ROW_OF, NONE)(nm, __VA_ARGS__)
#define DIO(pick, nm, ...) pick(NONE, NONE, NONE, DIO_OF, NONE)(nm, __VA_ARGS__)
#define DIO_AT_BS(pick, nm, bs, fn, tf, rw)                                    \
	pick(NONE, NONE, NONE, DIO_OF, NONE)(nm "_" #bs, fn, bs, tf, rw)
/* bdev.c: win is the test's window of the device in MiB from its start,
 * negative from its end (bdev_eod: the last WIN bytes). */
#define BDEV(pick, nm, ...) pick(NONE, NONE, NONE, NONE, BDEV_OF)(nm, __VA_ARGS__)
#define EXER(pick, nm, ...) pick(NONE, NONE, NONE, EXER_OF, NONE)(nm, __VA_ARGS__)
#define EXER_BDEV(pick, nm, ...)                                               \
	pick(NONE, NONE, NONE, NONE, EXER_BDEV_OF)(nm, __VA_ARGS__)
#define PROMISE(pick, nm, k)

static const struct suite_test tests[] = {
	RCGATE_TEST_TABLE(P512, TABLE_ROW)
	RCGATE_TEST_TABLE(P4K, TABLE_ROW)
	RCGATE_TEST_TABLE(P64K, TABLE_ROW)
	RCGATE_TEST_TABLE(PONE, TABLE_ROW)
};

static const struct suite_test bdev_table[] = {
	RCGATE_TEST_TABLE(PBDEV, TABLE_ROW)
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
