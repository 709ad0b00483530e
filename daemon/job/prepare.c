/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * prepare.c - owns how a job gets its kernel and initramfs: the rows
 * fetch (a kernel CI posted), source and build (rcgated builds it:
 * build.h's buildjob_*), and initramfs (the kernel, the agent and the
 * modules the target needs, cached by what went into them).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "job_internal.h"
#include "base/base.h"
#include "store/store.h"
#include "artifact/artifact.h"
#include "build/build.h"
#include "job/job.h"

static int kind_posted(const struct jobrun *r)
{
	const struct artifact_kind *k = artifact_kind_find(r->job->kind);

	return k != NULL && k->posted;
}

static int kind_built(const struct jobrun *r)
{
	const struct artifact_kind *k = artifact_kind_find(r->job->kind);

	return k != NULL && k->built;
}

/* From here on the job is one of kind 'image': the kernel rcgated built
 * (sha256, at path in the cache), booted like one CI posted. */
static void become_image(struct jobrun *r, const char *sha256,
			 const char *path)
{
	r->built = *r->job;
	snprintf(r->built.kind, sizeof(r->built.kind), "image");
	snprintf(r->built.sha256, sizeof(r->built.sha256), "%s", sha256);
	r->built.modules_url[0] = r->built.modules_sha256[0] = '\0';
	r->job = &r->built;
	snprintf(r->artifact, sizeof(r->artifact), "%s", path);
}

/* A rerun of a job that built its kernel boots that kernel again: the
 * same commit and image, and no rebuild on the way to the confirmation
 * (a rebuild of the branch could even be of another commit, had the
 * branch moved). */
static int kind_rerun_built(const struct jobrun *r)
{
	return kind_built(r) && r->job->rerun_image[0] != '\0';
}

/* The image from the content-addressed cache, where buildjob_build left
 * it, checked against its sha256; the job becomes one of kind 'image'
 * and the source and build rows pass. An image gone from the cache (or
 * not what it was) is built again by those rows. */
static int reuse_exec(struct jobrun *r)
{
	const struct job *job = r->job;
	char path[PATH_MAX], sum[65], err[512];

	if (!is_sha256_hex(job->rerun_image) ||
	    pathf(path, sizeof(path), "%s/artifacts/%s", sched_ctx.cache_dir,
		  job->rerun_image) < 0 ||
	    sha256_file(path, sum, err, sizeof(err)) < 0 ||
	    strcmp(sum, job->rerun_image) != 0) {
		jlog(r, "rerun of job %lld: its kernel (image %.12s) is no"
		     " longer in the cache: built again", (long long)job->rerun_of,
		     job->rerun_image);
		return PHASE_NEXT;
	}
	store_job_build_progress(r->st, job->id, "done", -1, -1,
				 job->rerun_commit[0] ? job->rerun_commit : NULL,
				 NULL, 0);
	store_job_built(r->st, job->id, job->rerun_image, 0, NULL, 0);
	jlog(r, "rerun of job %lld: boots the kernel it built (%.12s, image"
	     " %.12s) again, no rebuild", (long long)job->rerun_of,
	     job->rerun_commit, job->rerun_image);
	become_image(r, job->rerun_image, path);
	return PHASE_NEXT;
}

const struct phase phase_reuse = {
	.name = "reuse", .state = JS_FETCHING, .wants = kind_rerun_built,
	.exec = reuse_exec, .step = offsetof(struct job_steps, fetch),
};

/* A kernel CI posted (and its modules), into the content-addressed cache. */
static int fetch_exec(struct jobrun *r)
{
	char err[1024], adir[PATH_MAX];
	const struct job *job = r->job;

	snprintf(adir, sizeof(adir), "%s/artifacts", sched_ctx.cache_dir);
	if (mkdir_p(adir, 0755, err, sizeof(err)) < 0 ||
	    fetch_artifact(job->url, job->sha256, adir,
			   sched_ctx.cfg->max_artifact_mb << 20, NULL,
			   r->artifact,
			   sizeof(r->artifact), r->log, r->cancel, err,
			   sizeof(err)) < 0) {
		/* A cancel or a clean stop is not the download's failure:
		 * the job keeps its attempt (sched_stop requeues it) and
		 * resumes the partial file at the next start. */
		if (!*r->cancel)
			infra(r, "fetch", err);
		return PHASE_STOP;
	}
	if (job->modules_url[0] != '\0' &&
	    fetch_artifact(job->modules_url, job->modules_sha256, adir,
			   sched_ctx.cfg->max_artifact_mb << 20, NULL,
			   r->modules,
			   sizeof(r->modules), r->log, r->cancel, err,
			   sizeof(err)) < 0) {
		if (!*r->cancel)
			infra(r, "fetch", err);
		return PHASE_STOP;
	}
	return PHASE_NEXT;
}

const struct phase phase_fetch = {
	.name = "fetch", .state = JS_FETCHING, .wants = kind_posted,
	.exec = fetch_exec, .step = offsetof(struct job_steps, fetch),
};

/* The tarball and patch, or the git tree and its commit. */
static int source_exec(struct jobrun *r)
{
	char err[1024];

	if (buildjob_fetch(r->job, sched_ctx.cfg, sched_ctx.cache_dir, r->dir,
			   r->log, r->cancel, &r->bsrc, err, sizeof(err)) < 0) {
		if (!*r->cancel)
			infra(r, "fetch", err);
		return PHASE_STOP;
	}
	if (r->bsrc.commit[0] != '\0') {
		char rec[41];

		/* Another target of the rc that fetched the branch at the
		 * same moment may have recorded another head first: one rc,
		 * one tree (the clone has both). */
		if (store_job_record_commit(r->st, r->job->id, r->bsrc.commit,
					    rec, err, sizeof(err)) < 0)
			jlog(r, "store: %s", err);
		else if (strcmp(rec, r->bsrc.commit) != 0 &&
			 gitsrc_is_commit(rec)) {
			jlog(r, "git: %s, which another target of this rc recorded"
			     " first, not the head %.12s fetched now: one rc is"
			     " built from one tree", rec, r->bsrc.commit);
			snprintf(r->bsrc.commit, sizeof(r->bsrc.commit), "%s", rec);
		}
	}
	return PHASE_NEXT;
}

const struct phase phase_source = {
	.name = "source", .state = JS_FETCHING, .wants = kind_built,
	.exec = source_exec, .step = offsetof(struct job_steps, fetch),
};

/*
 * Built here: from then on the job is one of kind 'image' whose kernel is
 * the image the build left in the cache. A source that does not build is
 * this job's result, and so is a bisection step that judges the build
 * only (only_tests "-"): both end the job here.
 */
static int build_exec(struct jobrun *r)
{
	char err[1024];
	const struct job *job = r->job;
	struct buildjob_result *out = &r->built_out;
	int rc;

	rc = buildjob_build(job, r->target, sched_ctx.cfg, sched_ctx.cache_dir,
			    r->dir, r->log, r->cancel, &r->bsrc,
			    build_progress, r, out, err, sizeof(err));
	store_job_built(r->st, job->id, rc == 0 ? out->sha256 : NULL,
			out->seconds, NULL, 0);
	if (rc >= 0)	/* a build that fails still says what it was */
		store_job_build_facts(r->st, job->id, out->compiler,
				      out->describe, NULL, 0);
	if (rc < 0) {
		/* A cancel or a clean stop is not the build's failure: the
		 * job keeps its attempt (sched_stop requeues it). */
		if (!*r->cancel)
			infra(r, "build", err);
		return PHASE_STOP;
	}
	r->build_row = (struct result_row){ BUILD_TEST,
		rc == 0 ? "pass" : "fail",
		rc == 0 ? NULL : out->diag.signature_text,
		(long)(out->seconds * 1000), 1 };
	r->results[RESULTS_BUILD].rows = &r->build_row;
	r->results[RESULTS_BUILD].n = 1;
	if (rc == 1 || (r->step && strcmp(job->only_tests, "-") == 0)) {
		if (rc == 1)
			jlog(r, "build failed: %s", out->diag.line);
		store_results(r, &r->results[RESULTS_BUILD], 1, 0);
		return PHASE_END;
	}
	become_image(r, out->sha256, out->image);
	return PHASE_NEXT;
}

const struct phase phase_build = {
	.name = "build", .state = JS_BUILDING, .wants = kind_built,
	.exec = build_exec, .step = offsetof(struct job_steps, build),
};

/* Kernel + initramfs for (artifact, agent, module list), built once and
 * kept under <cache>/initramfs/<key>/. */
static int prepare_boot(struct jobrun *r, const char *artifact,
			const char *modules_tar, char *kernel,
			char *initrd, size_t len, char *kver, size_t kverlen,
			char *err, size_t errlen)
{
	char agent[PATH_MAX], agent_sha[65], keysrc[1024], key[65];
	char dir[PATH_MAX], tmp[PATH_MAX + 32], tk[PATH_MAX + 48],
		ti[PATH_MAX + 48], kv[PATH_MAX + 8];
	struct strbuf ks;
	struct initramfs_request req = { 0 };
	struct initramfs_result res = { 0 };
	char *cached;
	int memo;

	snprintf(agent, sizeof(agent), "%s/rcgate-agent-%s", sched_ctx.cfg->agent_dir,
		 r->target->name);
	if (sha256_file_memo(agent, agent_sha, &memo, err, errlen) < 0)
		return -1;
	strbuf_init(&ks, keysrc, sizeof(keysrc));
	strbuf_printf(&ks, "%s %s %s %s %s", r->job->kind, r->job->sha256,
		      r->job->modules_sha256, agent_sha, r->target->name);
	for (const char *const *m = r->target->modules; *m != NULL; m++)
		strbuf_printf(&ks, " %s", *m);
	if (ks.overflow) {
		errf(err, errlen, "initramfs cache key too long");
		return -1;
	}
	sha256_hex(keysrc, ks.len, key);
	snprintf(dir, sizeof(dir), "%s/initramfs/%s", sched_ctx.cache_dir, key);
	if ((size_t)snprintf(kernel, len, "%s/kernel", dir) >= len ||
	    (size_t)snprintf(initrd, len, "%s/initrd.gz", dir) >= len) {
		errf(err, errlen, "cache path too long");
		return -1;
	}
	snprintf(kv, sizeof(kv), "%s/kver", dir);
	cached = file_read(kv, 256, NULL, NULL, 0);
	if (cached != NULL) {
		snprintf(kver, kverlen, "%s", cached);
		free(cached);
		jlog(r, "initramfs %s cached (kernel %s)", key, kver);
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%lld", dir, (long long)r->job->id);
	rm_rf(tmp);
	if (mkdir_p(tmp, 0755, err, errlen) < 0)
		return -1;
	snprintf(tk, sizeof(tk), "%s/kernel", tmp);
	snprintf(ti, sizeof(ti), "%s/initrd.gz", tmp);
	if (artifact_kind_find(r->job->kind) != NULL &&
	    artifact_kind_find(r->job->kind)->bare_image) {
		req.kernel_image = artifact;
		req.modules_tar = modules_tar;
	} else {
		req.package = artifact;
	}
	req.agent = agent;
	req.cancel = r->cancel;
	req.modules = r->target->modules;
	req.kernel_out = tk;
	req.initrd_out = ti;
	if (initramfs_build(&req, &res, err, errlen) < 0) {
		rm_rf(tmp);
		return -1;
	}
	{
		char line[2048];
		struct strbuf lb;

		strbuf_init(&lb, line, sizeof(line));
		for (size_t i = 0; i < res.nloaded; i++)
			strbuf_printf(&lb, " %s", res.loaded[i]);
		jlog(r, "initramfs %s built: kernel %s, modules:%s%s", key,
		     res.kver, line, lb.overflow ? " ..." : "");
		for (size_t i = 0; i < res.nmissing; i++)
			jlog(r, "initramfs: module %s not in this kernel (skipped)",
			     res.missing[i]);
	}
	snprintf(kver, kverlen, "%s", res.kver);
	snprintf(tk, sizeof(tk), "%s/kver", tmp);
	if (file_write_atomic(tk, res.kver, strlen(res.kver), err, errlen) < 0) {
		initramfs_result_free(&res);
		rm_rf(tmp);
		return -1;
	}
	initramfs_result_free(&res);
	/* Another worker may have built the same key meanwhile: either copy
	 * is complete, keep whichever landed first. */
	if (rename(tmp, dir) < 0)
		rm_rf(tmp);
	return 0;
}

static int initramfs_exec(struct jobrun *r)
{
	char err[1024];

	if (prepare_boot(r, r->artifact,
			 r->job->modules_url[0] ? r->modules : NULL, r->kernel,
			 r->initrd, sizeof(r->kernel), r->kver, sizeof(r->kver),
			 err, sizeof(err)) < 0) {
		if (!*r->cancel)	/* stopped while reading the package */
			infra(r, "artifact", err);
		return PHASE_STOP;
	}
	/* A bare image names no version; one built here is what make
	 * kernelrelease said. */
	if (r->kver[0] == '\0' && r->built_out.kernelrelease[0] != '\0')
		snprintf(r->kver, sizeof(r->kver), "%s",
			 r->built_out.kernelrelease);
	return PHASE_NEXT;
}

const struct phase phase_initramfs = {
	.name = "initramfs", .state = JS_BOOTING, .exec = initramfs_exec,
	.step = offsetof(struct job_steps, initramfs),
};
