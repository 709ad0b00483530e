/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kcidb.h - a release as a KCIDB v5.3 submission (KernelCI's common
 * database): the announcement's checkout, one build per target, every test
 * result, each regression as an issue with incidents on its failing tests.
 *
 * Pure: typed rows in, a jansson object out; no database, no clock. The
 * rules it keeps are those of kcidb-io's v5.3 schema (tests/data/kcidb/
 * and tests/integration/kcidb_check.py check a real export against them):
 * ids "<origin>:<local id>" with origin [a-z0-9_]+, git_repository_url
 * https:// only, dot-separated test paths that start with the suite, no
 * null values, RFC 3339 times, absolute URLs only where a public URL is
 * configured.
 */
#ifndef RCGATE_KCIDB_H
#define RCGATE_KCIDB_H

#include <stddef.h>
#include <stdint.h>

struct json_t;

struct kcidb_result {
	const char *test;	/* "ext4.write_seq_512" */
	const char *status;	/* pass, fail, skip, xfail */
	long duration_ms;	/* -1: unknown */
};

struct kcidb_job {
	int64_t id;
	const char *target, *suite, *state, *accel;	/* accel may be NULL */
	const char *started;	/* RFC 3339 UTC, or NULL if never run */
	const struct kcidb_result *results;
	size_t nresults;
};

struct kcidb_regression {
	int64_t id;
	const char *test, *target;
	int flaky;
	/* A bisection's first bad commit (NULL: not bisected): the issue
	 * then says its culprit is the code, names the commit, and is
	 * version 2 (KCIDB triages on an issue's highest version). */
	const char *culprit, *culprit_subject, *culprit_upstream;
};

struct kcidb_release {
	const char *version;	/* "6.1.64-rc1" */
	long rc;		/* 0 for a release */
	const char *git_tree, *git_branch, *message_id;	/* may be NULL */
	const char *public_url;	/* base of log links; NULL/"": none */
};

/* origin: the farm's name, made a KCIDB origin ([a-z0-9_]+, lower case,
 * anything else '_') into out. */
void kcidb_origin(const char *farm, char *out, size_t len);
/* The https:// URL of a git tree: https:// as it is, kernel.org's git://
 * and http:// trees mapped to https://; 0 with out set, -1 if the tree has
 * no https:// form we know (then the field is omitted). */
int kcidb_repository_url(const char *tree, char *out, size_t len);
/* A new submission object (caller json_decref's), or NULL on no memory. */
struct json_t *kcidb_submission(const char *farm,
				const struct kcidb_release *rel,
				const struct kcidb_job *jobs, size_t njobs,
				const struct kcidb_regression *regs,
				size_t nregs);

#endif /* RCGATE_KCIDB_H */
