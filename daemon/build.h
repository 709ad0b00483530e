/* SPDX-License-Identifier: GPL-2.0-only */
/* build.c: kernels built from an rc's source, one target at a time. */
#ifndef RCGATE_BUILD_H
#define RCGATE_BUILD_H

#include <limits.h>
#include <stdio.h>

#include "buildlog.h"

struct target;
struct job;
struct config;

/* The result a job of kind source records for its kernel build (pass, or
 * fail with the first error): KCIDB carries it as the build's status. */
#define BUILD_TEST "build.kernel"

/* make's output for a job's build, beside its job.log. */
#define BUILD_LOG "build.log"

/* What to build: a release tarball (linux-X.Y.Z.tar.*, already verified)
 * and, for an rc, the stable-review patch that applies to it (.gz or
 * plain). Local paths, read only. */
struct build_source {
	const char *tarball;
	const char *tarball_sha256;
	const char *patch;		/* NULL: the release itself */
	const char *patch_sha256;
};

struct build_options {
	const char *root;		/* work space: <cache_dir>/build */
	const char *config_dir;		/* holds <target>.config fragments */
	const char *ccache_dir;		/* NULL or "": no ccache */
	long jobs;			/* make -j */
	long timeout;			/* seconds for the whole build */
	/* Polled while make runs: nonzero stops the build (infra, "cancelled"). */
	int (*cancelled)(void *cls);
	void *cls;
};

struct build_result {
	char image[PATH_MAX];		/* the kernel image, under root/out/ */
	char image_sha256[65];
	char kernelrelease[128];	/* make kernelrelease */
	struct build_diag diag;		/* when the build failed */
	double seconds;
};

/* Builds t's kernel from src with t's fragment merged on tinyconfig,
 * appending make's output to logpath. Returns 0 with res->image set, 1 if the
 * source does not build (res->diag from the log: a result, not an infra
 * error), -1 if the machine failed (disk, memory, toolchain, timeout,
 * cancel, unpacking; err says which). The source tree is unpacked once per
 * tarball and shared; each build works in a copy that it removes. */
int build_kernel(const struct build_source *src, const struct target *t,
		 const struct build_options *o, const char *logpath,
		 struct build_result *res, char *err, size_t errlen);

/* The options t's fragment sets to y that a final .config lacks (a
 * dependency the fragment forgot drops them silently): a space-separated
 * list into out, "" if none. 0, or -1 if a file cannot be read. Not static
 * for tests/unit/build.c. */
int build_config_missing(const char *fragment, const char *config, char *out,
			 size_t outlen);

/* ---- buildjob.c: a job's build phase ---- */
struct buildjob_result {
	char image[PATH_MAX];		/* <cache_dir>/artifacts/<sha256> */
	char sha256[65];
	char kernelrelease[128];
	struct build_diag diag;		/* when the source does not build */
	double seconds;
};
/* Fetches job's source (kind 'source': url the tarball, patch_url the
 * rc's patch) into the cache, waits for the build budget (one build at a
 * time) and builds t's kernel, its output in <job_dir>/build.log and the
 * steps in joblog. 0: out->image is in the cache; 1: the source does not
 * build (out->diag); -1: infra (err), cancel included. */
int buildjob_run(const struct job *job, const struct target *t,
		 const struct config *cfg, const char *cache_dir,
		 const char *job_dir, FILE *joblog, const volatile int *cancel,
		 struct buildjob_result *out, char *err, size_t errlen);

#endif
