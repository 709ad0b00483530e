/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * buildjob.c - a job's build phase, for an artifact of kind 'source': the
 * release tarball and the rc's patch fetched into the content-addressed
 * cache (sha256-checked like any artifact), a build token taken
 * (jobserver.c: [build] jobs builds at once sharing as many make jobs,
 * beside the guests), the
 * kernel built by build.c with the job's log in <job dir>/build.log, and
 * the image moved into the cache under its sha256, exactly where a kernel
 * CI posted would be. The job's next rows (job/) then boot it as kind 'image'.
 * Kind 'git' is the same with gitsrc.c: the tree fetched into its cached
 * clone (the job's fetching), checked out in the target's worktree and
 * built there (building).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "store/store.h"
#include "artifact/artifact.h"
#include "build/build.h"

static const char *tree_key(const struct job *job, char *out, size_t len)
{
	return gitsrc_branch_key(job->version, job->git_ref, out, len);
}

static int is_cancelled(void *cls)
{
	const atomic_int *cancel = cls;

	return cancel != NULL && *cancel;
}

char *buildjob_rank(const struct job *job, char *out, size_t len)
{
	/* As store_job_claim_kind orders them (reruns build nothing). */
	snprintf(out, len, "%c%-23s%c%020lld", job->deadline[0] ? '0' : '1',
		 job->deadline, job->bisection_id != 0 ? '1' : '0',
		 (long long)job->id);
	return out;
}

/* Where a job's build works and logs, and its build options. */
struct job_build {
	char adir[PATH_MAX];		/* <cache>/artifacts */
	char root[PATH_MAX];		/* <cache>/build */
	char ccache[PATH_MAX];
	char logpath[PATH_MAX];		/* <job dir>/build.log */
	struct build_options o;
};

static int job_build_init(struct job_build *b, const struct job *job,
			  const struct config *cfg,
			  const char *cache_dir, const char *job_dir,
			  const atomic_int *cancel, char *err, size_t errlen)
{
	if (pathf(b->adir, sizeof(b->adir), "%s/artifacts", cache_dir) < 0 ||
	    pathf(b->root, sizeof(b->root), "%s/build", cache_dir) < 0 ||
	    pathf(b->logpath, sizeof(b->logpath), "%s/" BUILD_LOG, job_dir) < 0) {
		errf(err, errlen, "cache path too long");
		return -1;
	}
	if (strcmp(cfg->build_ccache_dir, "none") == 0)
		b->ccache[0] = '\0';
	else if (cfg->build_ccache_dir[0] != '\0')
		snprintf(b->ccache, sizeof(b->ccache), "%s", cfg->build_ccache_dir);
	else if (pathf(b->ccache, sizeof(b->ccache), "%s/ccache", cache_dir) < 0)
		b->ccache[0] = '\0';
	/* One compiler cache per source origin (the URL's host): a build
	 * can only ever poison the objects of builds from where it came. */
	if (b->ccache[0] != '\0') {
		char host[256];

		if (url_origin_host(job->url, host, sizeof(host)) < 0 ||
		    pathf(b->ccache + strlen(b->ccache),
			  sizeof(b->ccache) - strlen(b->ccache), "/origin-%s",
			  host) < 0) {
			errf(err, errlen, "no origin host in %.100s", job->url);
			return -1;
		}
	}
	b->o = (struct build_options){ b->root, cfg->build_config_dir, b->ccache,
		cfg->build_jobs, cfg->build_timeout, is_cancelled,
		(void *)cancel, NULL, NULL, NULL, NULL, cfg->build_git_config,
		NULL, strcmp(cfg->build_sandbox, "none") == 0,
		cfg->build_memory_mb, cfg->build_file_mb, cfg->build_tree_max_mb,
		cfg->build_fetch_max_mb, cfg->build_hosts, cfg->nbuild_hosts, NULL,
		NULL };
	return 0;
}

/* ref of url into the cached clone (nothing fetched for a commit id it
 * has), resolved into s->commit; for an rc's own job (not a bisection
 * step) the commit's Makefile must say the job's version: a branch's
 * head that is another rc (the branch moved on, or was not updated yet)
 * is not this rc, and is not recorded as the commit it built. */
static int fetch_ref(const struct job *job, const char *url, const char *ref,
		     struct job_build *b, FILE *blog, FILE *joblog,
		     struct buildjob_src *s, char *err, size_t errlen)
{
	char said[64], e[512] = "";
	int rc;

	if (joblog != NULL && gitsrc_is_commit(ref)) {
		joblog_write(joblog, "git: %s from %s, fetched unless the cached"
			     " clone has it (git's output in " BUILD_LOG ")",
			     ref, url);
	} else if (joblog != NULL) {
		joblog_write(joblog, "git: fetching %s for %s (git's output in "
			BUILD_LOG ")", url, ref);
	}
	rc = gitsrc_fetch(url, ref, fileno(blog), &b->o, s->gitdir,
			  sizeof(s->gitdir), s->commit, err, errlen);
	if (rc < 0)
		return -1;
	if (job->bisection_id == 0) {
		if (gitsrc_commit_version(s->gitdir, s->commit, &b->o, said,
					  sizeof(said), e, sizeof(e)) < 0) {
			errf(err, errlen, "%s at %.12s is no kernel of %s: %s",
			     job->git_ref, s->commit, job->version, e);
			return -1;
		}
		if (strcmp(said, job->version) != 0) {
			errf(err, errlen, "%s at %.12s is %s, not %s (its"
			     " Makefile)", job->git_ref, s->commit, said,
			     job->version);
			return -1;
		}
	}
	if (rc == 1 && joblog != NULL)
		joblog_write(joblog, "git: %.12s is in the cached clone already:"
			     " nothing fetched", ref);
	else if (joblog != NULL)
		joblog_write(joblog, "git: %s is %s", ref, s->commit);
	return 0;
}

/* The commit this rc was first built from (its branch's head when the
 * first of its jobs fetched it): every target and attempt of an rc
 * builds the same one, even once the branch has moved on, and the clone
 * has it (nothing fetched). 0, or -1 when it cannot be used (then the
 * branch is fetched as for the first). */
static int fetch_pinned(const struct job *job, const char *url,
			struct job_build *b, FILE *blog, FILE *joblog,
			struct buildjob_src *s)
{
	char e[512] = "";

	if (fetch_ref(job, url, job->release_commit, b, blog, NULL, s, e,
		      sizeof(e)) == 0) {
		if (joblog != NULL)
			joblog_write(joblog, "git: %.12s, the commit of %s"
				     " this rc was first built from (nothing"
				     " fetched if the cached clone has it)",
				     s->commit, job->git_ref);
		return 0;
	}
	if (joblog != NULL)
		joblog_write(joblog, "git: %.12s, which this rc was first built"
			     " from, cannot be built (%s): its branch %s is"
			     " fetched", job->release_commit, e, job->git_ref);
	memset(s, 0, sizeof(*s));
	return -1;
}

int buildjob_fetch(const struct job *job, const struct config *cfg,
		   const char *cache_dir, const char *job_dir, FILE *joblog,
		   const atomic_int *cancel, struct buildjob_src *s, char *err,
		   size_t errlen)
{
	/* A bisection step builds its own commit of the rc's tree. */
	const char *ref = job->git_commit[0] != '\0' ? job->git_commit
						     : job->git_ref;
	struct job_build b;
	char url[2048], patch[2048];
	FILE *blog;
	int rc, git = strcmp(job->kind, "git") == 0;

	memset(s, 0, sizeof(*s));
	if (job_build_init(&b, job, cfg, cache_dir, job_dir, cancel, err, errlen) < 0)
		return -1;
	/* The last gate, whoever made the job (a mail, a POST, a
	 * bisection): code is fetched only from the allowed origins. */
	if (origin_pin(git ? cfg->build_tree_origins : cfg->build_file_origins,
		       git ? "tree" : "file", job->url, url, sizeof(url), err,
		       errlen) < 0 ||
	    (job->patch_url[0] != '\0' &&
	     origin_pin(cfg->build_file_origins, "file", job->patch_url, patch,
			sizeof(patch), err, errlen) < 0))
		return -1;
	if (!git) {
		/* A redirect may lead only where the first URL may. */
		const struct fetch_scope scope = { origin_pin_file,
						   cfg->build_file_origins };

		if (mkdir_p(b.adir, 0755, err, errlen) < 0 ||
		    fetch_artifact(url, job->sha256, b.adir,
				   cfg->max_artifact_mb << 20, &scope,
				   s->tarball, sizeof(s->tarball), joblog,
				   cancel, err, errlen) < 0)
			return -1;
		if (job->patch_url[0] != '\0' &&
		    fetch_artifact(patch, job->patch_sha256, b.adir,
				   cfg->max_artifact_mb << 20, &scope,
				   s->patch, sizeof(s->patch), joblog, cancel,
				   err, errlen) < 0)
			return -1;
		return 0;
	}
	if (mkdir_p(b.root, 0755, err, errlen) < 0)
		return -1;
	blog = fopen(b.logpath, "ae");
	if (blog == NULL) {
		errf(err, errlen, "build log %s: %s", b.logpath, strerror(errno));
		return -1;
	}
	rc = -1;
	if (job->bisection_id == 0 && job->git_commit[0] == '\0' &&
	    gitsrc_is_commit(job->release_commit))
		rc = fetch_pinned(job, url, &b, blog, joblog, s);
	if (rc != 0)
		rc = fetch_ref(job, url, ref, &b, blog, joblog, s, err, errlen);
	fclose(blog);
	return rc;
}

/* What a reader needs to build the same kernel: the .config into the
 * job's directory (BUILD_CONFIG), the compiler, and for a git build what
 * git describe says of the commit. None of it fails the build. */
static void build_facts(const struct build_result *res,
			const struct buildjob_src *s, const struct job_build *b,
			const char *job_dir, struct buildjob_result *out)
{
	char path[PATH_MAX], err[256];
	size_t n;
	char *text;

	snprintf(out->compiler, sizeof(out->compiler), "%s", res->compiler);
	if (res->config[0] != '\0') {
		text = file_read(res->config, 16 << 20, &n, NULL, 0);
		if (text != NULL &&
		    pathf(path, sizeof(path), "%s/%s", job_dir, BUILD_CONFIG) == 0)
			file_write_atomic(path, text, n, NULL, 0);
		free(text);
		unlink(res->config);
	}
	if (s->gitdir[0] != '\0' && gitsrc_is_commit(s->commit)) {
		const char *args[] = { "describe", "--tags", "--abbrev=12",
				       s->commit, NULL };
		char *d = gitsrc_git_out(s->gitdir, args, &b->o, err, sizeof(err));

		if (d != NULL)
			snprintf(out->describe, sizeof(out->describe), "%.*s",
				 (int)strcspn(d, "\n"), d);
		free(d);
	}
}

/* The revert check's job: the culprit reverted in the checked-out rc, in
 * the sandbox like every git command. 0 (reverted, or no revert asked), 1
 * when it does not apply (res->diag says so: the job's result, not an
 * infra error), -1. */
static int revert_culprit(const struct job *job, const struct job_build *b,
			  const char *gitdir, const char *tree, FILE *joblog,
			  struct build_result *res, char *err, size_t errlen)
{
	FILE *blog;
	int rc;

	if (job->revert_commit[0] == '\0')
		return 0;
	blog = fopen(b->logpath, "ae");
	if (blog == NULL) {
		errf(err, errlen, "build log %s: %s", b->logpath, strerror(errno));
		return -1;
	}
	rc = gitsrc_revert(gitdir, tree, job->revert_commit, fileno(blog), &b->o,
			   err, errlen);
	fclose(blog);
	if (joblog != NULL && rc >= 0)
		joblog_write(joblog, "git: revert %.12s %s", job->revert_commit,
			     rc == 0 ? "applied" : "does not apply");
	if (rc == 1) {
		snprintf(res->diag.message, sizeof(res->diag.message),
			 "%.12s does not revert cleanly", job->revert_commit);
		snprintf(res->diag.signature_text,
			 sizeof(res->diag.signature_text), BUILD_REVERT_CONFLICT);
		snprintf(res->diag.line, sizeof(res->diag.line),
			 "git revert --no-commit %.12s failed (see " BUILD_LOG ")",
			 job->revert_commit);
	}
	return rc;
}

int buildjob_build(const struct job *job, const struct target *t,
		   const struct config *cfg, const char *cache_dir,
		   const char *job_dir, FILE *joblog, const atomic_int *cancel,
		   const struct buildjob_src *s,
		   void (*progress)(void *, const char *, long, long),
		   void *pcls, struct buildjob_result *out, char *err,
		   size_t errlen)
{
	char image[PATH_MAX], tree[PATH_MAX];
	struct build_source src = { 0 };
	struct job_build b;
	struct build_result res = { 0 };
	double waited = now_monotonic();
	struct jobserver_token tok;
	struct build_cgroup bcg;
	char key[300], rank[64];
	int rc, lockfd = -1;

	memset(out, 0, sizeof(*out));
	if (job_build_init(&b, job, cfg, cache_dir, job_dir, cancel, err, errlen) < 0)
		return -1;
	b.o.progress = progress;
	b.o.pcls = pcls;
	if (progress != NULL)
		progress(pcls, "waiting", -1, -1);
	/* The build budget: a build token (jobserver.c), cancellable. */
	if (jobserver_enter(cfg->build_jobs,
			    buildjob_rank(job, rank, sizeof(rank)),
			    is_cancelled, (void *)cancel, &tok, err,
			    errlen) != 0)
		return -1;
	b.o.jobserver = &tok;
	/* The kernel's ceiling on the whole build, where rcgated has a
	 * delegated cgroup (cgroup.c); the rlimits hold in any case. */
	cgroup_build_open(tok.slot, &(struct cgroup_limits){
		cfg->build_cgroup_pids_max, cfg->build_cgroup_memory_mb,
		cfg->build_cgroup_cpu_weight }, &bcg);
	b.o.cgroup = &bcg;
	waited = now_monotonic() - waited;
	{
		FILE *blog = fopen(b.logpath, "ae");

		build_cache_evict(b.root, (long long)cfg->build_cache_max_gb << 30,
				  blog);
		if (blog != NULL)
			fclose(blog);
	}
	if (s->gitdir[0] != '\0') {
		FILE *blog = fopen(b.logpath, "ae");

		if (progress != NULL)
			progress(pcls, "checkout", -1, -1);
		rc = blog == NULL ? -1
			: gitsrc_checkout(s->gitdir, s->commit, t->name,
					  tree_key(job, key, sizeof(key)),
					  fileno(blog), &b.o, tree, sizeof(tree),
					  &lockfd, err, errlen);
		if (blog == NULL)
			errf(err, errlen, "build log %s: %s", b.logpath,
			     strerror(errno));
		else
			fclose(blog);
		if (rc < 0)
			goto unlock;
		src.tree = tree;
		rc = revert_culprit(job, &b, s->gitdir, tree, joblog, &res, err,
				    errlen);
		if (rc != 0)
			goto unlock;
	} else {
		src = (struct build_source){ s->tarball, job->sha256,
			job->patch_url[0] != '\0' ? s->patch : NULL,
			job->patch_url[0] != '\0' ? job->patch_sha256 : NULL,
			NULL };
	}
	if (joblog != NULL) {
		joblog_write(joblog, "build: %s for %s (waited %.1f s for the build"
			" budget); make's output in " BUILD_LOG,
			s->gitdir[0] != '\0' ? "git tree"
			: job->patch_url[0] != '\0' ? "release tarball + rc patch"
						    : "release tarball",
			t->name, waited);
	}
	rc = build_kernel(&src, t, &b.o, b.logpath, &res, err, errlen);
unlock:
	if (lockfd >= 0)
		close(lockfd);
	cgroup_build_close(&bcg);
	jobserver_leave(&tok);
	if (rc < 0 && src.tarball == NULL && src.tree == NULL)
		return -1;	/* checkout or version: no build ran */
	out->seconds = res.seconds;
	if (rc == 1) {
		out->diag = res.diag;
		build_facts(&res, s, &b, job_dir, out);
		if (joblog != NULL) {
			joblog_write(joblog, "build: %s does not build: %s", t->name,
				res.diag.line[0] != '\0' ? res.diag.line
							 : res.diag.message);
		}
		return 1;
	}
	if (rc < 0)
		return -1;
	/* Into the cache under its hash, as if CI had posted it. */
	if (mkdir_p(b.adir, 0755, err, errlen) < 0 ||
	    pathf(image, sizeof(image), "%s/%s", b.adir, res.image_sha256) < 0) {
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
	build_facts(&res, s, &b, job_dir, out);
	if (joblog != NULL) {
		joblog_write(joblog, "build: %s built in %.0f s: %s (%s)", t->name,
			res.seconds, res.kernelrelease, res.image_sha256);
	}
	return 0;
}
