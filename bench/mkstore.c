/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mkstore - makes a store with years of history for bench/api.sh, through
 * the daemon's own write code: every release is created by
 * store_release_create, every job claimed, moved and finished by the
 * workers' store calls, and every release analysed by engine_run_once
 * (reruns, regressions linked across branches, fixes, reports, outbox),
 * exactly the transactions a real release goes through. Only the results
 * are made up, from a fixed pattern, so two runs make the same store.
 *
 *   mkstore DB [RELEASES [RESULTS_PER_JOB]]
 *
 * History: stable branches with an rc and a release per patch level,
 * four targets per release, every job RESULTS_PER_JOB results (default
 * 25; 10,000 releases make 40,000 jobs and 1,000,000 results). One
 * patch level in 40 fails a test, on the same test, target and diagnostic
 * in three branches' rcs, as in November 2023: one regression, three rcs.
 * Put DB on a tmpfs: every commit is synchronous = FULL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "store/store.h"
#include "review/review.h"

static const char *const sha =
	"4fdd0172a8c3f41a97e92465b2ac1867e1c10d82d7aeed3d26ee7a5d14df1754";
static const char *const branches[] = { "4.14", "4.19", "5.4", "5.10",
					"5.15", "6.1", "6.6", "6.12" };
#define NBRANCHES (sizeof(branches) / sizeof(branches[0]))
static const char *const targets[] = { "x86_64", "i386", "arm64", "armv7" };
static const char *const fs[] = { "ext4", "xfs", "btrfs" };
static const char *const ops[] = { "write_seq", "pwrite_seq", "writev_seq",
				   "pwritev_seq", "append", "overwrite",
				   "osync_extend", "dsync_extend" };

static long results_per_job = 25;

/* Does this (patch level, branch) rc fail, and how: a failing patch level
 * fails on three neighbouring branches with one diagnostic. */
static int failing(long patch, size_t branch, long rc)
{
	return rc > 0 && patch % 40 == 7 && branch % 3 != 2;
}

static int finish_queued(struct store *st, long *jobs, long *results)
{
	char err[512], tests[256][64], diag[128];
	struct result_row *rows = calloc((size_t)results_per_job, sizeof(*rows));
	struct job job;
	int rc;

	if (rows == NULL)
		return -1;
	while ((rc = store_job_claim(st, "bench", &job, err, sizeof(err))) == 1) {
		struct kversion kv;
		size_t b = 0;

		if (kversion_parse(job.version, &kv, err, sizeof(err)) < 0)
			break;
		while (b < NBRANCHES && strncmp(branches[b], job.version,
						strlen(branches[b])) != 0)
			b++;
		snprintf(diag, sizeof(diag), "write 2 of 8 (4096 bytes): position"
			 " 4096, expected 8192 (level %ld)", kv.patch);
		for (long i = 0; i < results_per_job; i++) {
			int fail = i == 0 && strcmp(job.target, "x86_64") == 0 &&
				   failing(kv.patch, b, kv.rc);

			snprintf(tests[i % 256], sizeof(tests[0]), "%s.%s_%ld",
				 fs[i % 3], ops[(i / 3) % 8], 512L << (i / 24));
			rows[i] = (struct result_row){ tests[i % 256],
				fail ? "fail" : "pass", fail ? diag : NULL,
				40 + i % 17, 1 };
		}
		if (store_job_transition(st, job.id, "fetching", "booting", NULL,
					 err, sizeof(err)) != 1 ||
		    store_job_transition(st, job.id, "booting", "running", NULL,
					 err, sizeof(err)) != 1 ||
		    store_job_done(st, job.id, rows, (size_t)results_per_job,
				   6.5, err, sizeof(err)) != 1) {
			rc = -1;
			break;
		}
		(*jobs)++;
		*results += results_per_job;
	}
	free(rows);
	if (rc < 0)
		fprintf(stderr, "mkstore: job: %s\n", err);
	return rc;
}

int main(int argc, char **argv)
{
	struct config cfg;
	struct engine_context ectx;
	struct store *st;
	char err[512];
	long releases = argc > 2 ? strtol(argv[2], NULL, 10) : 10000;
	long made = 0, jobs = 0, results = 0;

	if (argc < 2 || argc > 4 || releases < 1) {
		fprintf(stderr, "usage: mkstore DB [RELEASES [RESULTS_PER_JOB]]\n");
		return 2;
	}
	if (argc > 3)
		results_per_job = strtol(argv[3], NULL, 10);
	if (results_per_job < 1 || results_per_job > 256) {
		fprintf(stderr, "mkstore: 1..256 results per job\n");
		return 2;
	}
	log_init(NULL, LOG_ERR, err, sizeof(err));
	config_defaults(&cfg);
	ectx = (struct engine_context){ &cfg, argv[1], "http://rcgate.bench", NULL, NULL };
	st = store_open(argv[1], err, sizeof(err));
	if (st == NULL) {
		fprintf(stderr, "mkstore: %s\n", err);
		return 1;
	}
	/* Patch levels in time order, every branch at each level: an rc,
	 * then its release. */
	for (long patch = 1; made < releases; patch++) {
		for (size_t b = 0; b < NBRANCHES && made < releases; b++) {
			for (long rc = 1; rc >= 0 && made < releases; rc--) {
				struct artifact_in art[4];
				struct kversion kv;
				char version[48];
				int64_t id;

				snprintf(version, sizeof(version), rc ? "%s.%ld-rc%ld"
					 : "%s.%ld", branches[b], patch, rc);
				for (int t = 0; t < 4; t++)
					art[t] = (struct artifact_in){ targets[t],
						"https://kernels.example/k.deb", sha,
						"deb", NULL, NULL, 0, NULL, NULL, NULL };
				if (kversion_parse(version, &kv, err, sizeof(err)) < 0 ||
				    store_release_create(st, version, &kv, NULL, art, 4,
							 &id, err, sizeof(err)) < 0)
					goto fail;
				made++;
				/* Finished and analysed before the next one, as
				 * a review cycle goes: reruns of a failure are
				 * queued by the engine and finished here. */
				do {
					if (finish_queued(st, &jobs, &results) < 0)
						goto fail;
				} while (engine_run_once(st, &ectx, err, sizeof(err)) > 0);
			}
		}
		if (patch % 50 == 0)
			fprintf(stderr, "mkstore: %ld releases, %ld jobs, %ld results\n",
				made, jobs, results);
	}
	printf("%ld releases, %ld jobs, %ld results\n", made, jobs, results);
	store_close(st);
	config_free(&cfg);
	return 0;
fail:
	fprintf(stderr, "mkstore: %s\n", err);
	store_close(st);
	config_free(&cfg);
	return 1;
}
