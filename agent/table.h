/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * table.c: the suites' tables, the catalogue as a table, and suite_run,
 * which runs the table of a directory or of a block device.
 */
#ifndef RCGATE_AGENT_TABLE_H
#define RCGATE_AGENT_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "catalogue.h"
#include "suite.h"

/* One row of catalogue.h. */
struct catalogue_entry {
	const char *name;
	const char *filesystems;
	const char *checks;
	const char *failure;
	const char *fixes;
};

/* catalogue.h as a table; *n receives its length. */
const struct catalogue_entry *suite_catalogue(size_t *n);
/* The entry of a test ("write_seq_4096" -> "write_seq"), or NULL. */
const struct catalogue_entry *suite_catalogue_find(const char *test);

/* The built-in table; *n receives its length. */
const struct suite_test *suite_tests(size_t *n);
/* The block device suite's table (bdev.c's tests): suite_run runs it
 * instead of suite_tests' when its dir is a block device (a disk the host
 * gave as "<dev>:bdev", or a loop device on the host); each test owns a
 * window of the device. */
const struct suite_test *bdev_tests(size_t *n);

/*
 * Run every test of the table in dir and print the nested KTAP block
 * (indentation 4, "KTAP version 1", "# Subtest: <suite_name>", plan, results)
 * to out. The caller prints the parent's result line from counts (the suite
 * is "not ok" when counts->fail > 0). Each test runs in a forked child, bounded
 * by opt->timeout_s, so a crash or a hang becomes a failed test and not a
 * stuck agent. Returns 0, or -1 with a message in err when dir is unusable; in
 * that case nothing has been printed.
 */
int suite_run(const char *dir, const char *suite_name, FILE *out,
	      const struct suite_options *opt, struct suite_counts *counts,
	      char *err, size_t errlen);

#endif
