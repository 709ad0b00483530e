/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * buildjob.c - a job's build phase, for an artifact of kind 'source': the
 * release tarball and the rc's patch fetched into the content-addressed
 * cache (sha256-checked like any artifact), the build budget taken (one
 * kernel build at a time, [build] jobs make jobs, beside the guests), the
 * kernel built by build.c with the job's log in <job dir>/build.log, and
 * the image moved into the cache under its sha256, exactly where a kernel
 * CI posted would be. The worker (sched.c) then boots it as kind 'image'.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rcgate.h"
#include "build.h"

static pthread_mutex_t budget = PTHREAD_MUTEX_INITIALIZER;

static int is_cancelled(void *cls)
{
	const volatile int *cancel = cls;

	return cancel != NULL && *cancel;
}

int buildjob_run(const struct job *job, const struct target *t,
		 const struct config *cfg, const char *cache_dir,
		 const char *job_dir, FILE *joblog, const volatile int *cancel,
		 struct buildjob_result *out, char *err, size_t errlen)
{
	char adir[PATH_MAX], tarball[PATH_MAX], patch[PATH_MAX], root[PATH_MAX],
		ccache[PATH_MAX], logpath[PATH_MAX], image[PATH_MAX];
	struct build_source src = { 0 };
	struct build_options o = { 0 };
	struct build_result res;
	double waited = now_monotonic();
	int rc;

	memset(out, 0, sizeof(*out));
	if (pathf(adir, sizeof(adir), "%s/artifacts", cache_dir) < 0 ||
	    pathf(root, sizeof(root), "%s/build", cache_dir) < 0 ||
	    pathf(logpath, sizeof(logpath), "%s/" BUILD_LOG, job_dir) < 0) {
		errf(err, errlen, "cache path too long");
		return -1;
	}
	if (mkdir_p(adir, 0755, err, errlen) < 0 ||
	    fetch_artifact(job->url, job->sha256, adir,
			   cfg->max_artifact_mb << 20, tarball, sizeof(tarball),
			   joblog, cancel, err, errlen) < 0)
		return -1;
	if (job->patch_url[0] != '\0' &&
	    fetch_artifact(job->patch_url, job->patch_sha256, adir,
			   cfg->max_artifact_mb << 20, patch, sizeof(patch),
			   joblog, cancel, err, errlen) < 0)
		return -1;
	src = (struct build_source){ tarball, job->sha256,
		job->patch_url[0] != '\0' ? patch : NULL,
		job->patch_url[0] != '\0' ? job->patch_sha256 : NULL };
	if (strcmp(cfg->build_ccache_dir, "none") == 0)
		ccache[0] = '\0';
	else if (cfg->build_ccache_dir[0] != '\0')
		snprintf(ccache, sizeof(ccache), "%s", cfg->build_ccache_dir);
	else if (pathf(ccache, sizeof(ccache), "%s/ccache", cache_dir) < 0)
		ccache[0] = '\0';
	o = (struct build_options){ root, cfg->build_config_dir, ccache,
		cfg->build_jobs, cfg->build_timeout, is_cancelled, (void *)cancel };
	/* The build budget: a second build waits here, cancellable. */
	while (pthread_mutex_trylock(&budget) != 0) {
		if (is_cancelled((void *)cancel)) {
			errf(err, errlen, "cancelled while waiting to build");
			return -1;
		}
		sleep_ms(250);
	}
	waited = now_monotonic() - waited;
	if (joblog != NULL) {
		fprintf(joblog, "build: %s for %s (waited %.1f s for the build"
			" budget); make's output in " BUILD_LOG "\n",
			job->patch_url[0] != '\0' ? "release tarball + rc patch"
						  : "release tarball",
			t->name, waited);
		fflush(joblog);
	}
	rc = build_kernel(&src, t, &o, logpath, &res, err, errlen);
	pthread_mutex_unlock(&budget);
	out->seconds = res.seconds;
	if (rc == 1) {
		out->diag = res.diag;
		if (joblog != NULL) {
			fprintf(joblog, "build: %s does not build: %s\n", t->name,
				res.diag.line[0] != '\0' ? res.diag.line
							 : res.diag.message);
			fflush(joblog);
		}
		return 1;
	}
	if (rc < 0)
		return -1;
	/* Into the cache under its hash, as if CI had posted it. */
	if (pathf(image, sizeof(image), "%s/%s", adir, res.image_sha256) < 0) {
		errf(err, errlen, "cache path too long");
		return -1;
	}
	if (access(image, R_OK) == 0)
		unlink(res.image);	/* the same image built before */
	else if (rename(res.image, image) < 0) {
		errf(err, errlen, "into the cache: %s", strerror(errno));
		unlink(res.image);
		return -1;
	}
	snprintf(out->image, sizeof(out->image), "%s", image);
	snprintf(out->sha256, sizeof(out->sha256), "%s", res.image_sha256);
	snprintf(out->kernelrelease, sizeof(out->kernelrelease), "%s",
		 res.kernelrelease);
	if (joblog != NULL) {
		fprintf(joblog, "build: %s built in %.0f s: %s (%s)\n", t->name,
			res.seconds, res.kernelrelease, res.image_sha256);
		fflush(joblog);
	}
	return 0;
}
