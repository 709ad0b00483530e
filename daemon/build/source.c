/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * source.c - turns an announced rc into kernels to build: the
 * announcement names its stable-review patch (patch-6.1.64-rc1.gz, which
 * applies to 6.1.63); on kernel.org's layout the release tarball and the
 * sha256sums.asc that lists it sit in the directory above stable-review/.
 * One consumer thread (consumer.c) takes every announced
 * rc that has a patch URL and no kernels, learns the patch's hash (nobody
 * publishes one; the announcement from a configured sender is the anchor),
 * reads the tarball's hash from sha256sums.asc, and creates one job of
 * kind 'source' per target, exactly as POST /api/v1/releases with a source
 * would. With [build] keyring, sha256sums.asc's signature is checked with
 * gpgv and only its signed text is read. With [build] announced_source =
 * git (or when the announcement names a tree and branch but no patch),
 * the jobs are of kind 'git': the branch's head, checked when fetched. Off unless [build] from_announcements = 1. A release it cannot
 * resolve keeps its error (source_error) and waits for a POST.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unistd.h>

#include "base/base.h"
#include "store/store.h"
#include "artifact/artifact.h"
#include "build/build.h"

static const struct config *scfg;
static char *scache;
static void (*jobs_queued)(void);	/* sched_kick, wired by main.c */
/* Set by source_stop: every download of a pass stops within a fraction
 * of a second, however slowly a server trickles. */
static atomic_int source_cancel;
static int source_pass(struct store *, void *);
static struct consumer source_consumer = {
	.name = "source", .pass = source_pass, .period = 30,
};

int source_urls(const char *version, const char *patch_url, char *tarball,
		size_t tlen, char *sums, size_t slen, char *name, size_t nlen,
		char *err, size_t errlen)
{
	struct kversion kv;
	const char *sr;
	char want[96], base[48];
	size_t dirlen;

	if (kversion_parse(version, &kv, err, errlen) < 0)
		return -1;
	if (kv.rc == 0) {
		errf(err, errlen, "%s is not an rc", version);
		return -1;
	}
	snprintf(want, sizeof(want), "/stable-review/patch-%s.gz", version);
	sr = strstr(patch_url, "/stable-review/");
	if (sr == NULL || strcmp(sr, want) != 0) {
		errf(err, errlen, "patch URL does not end in %s", want);
		return -1;
	}
	kversion_previous(&kv, base, sizeof(base));
	dirlen = (size_t)(sr - patch_url);
	if (pathf(name, nlen, "linux-%s.tar.xz", base) < 0 ||
	    pathf(tarball, tlen, "%.*s/%s", (int)dirlen, patch_url, name) < 0 ||
	    pathf(sums, slen, "%.*s/sha256sums.asc", (int)dirlen, patch_url) < 0) {
		errf(err, errlen, "URL too long");
		return -1;
	}
	return 0;
}

int source_sums_find(const char *text, size_t len, const char *name,
		     char sha256[65])
{
	const char *p = text, *end = text + len;
	size_t nl = strlen(name);

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = eol != NULL ? (size_t)(eol - p) : (size_t)(end - p);

		if (n > 0 && p[n - 1] == '\r')
			n--;
		/* "<64 hex>  linux-6.1.63.tar.xz" (sha256sum's format) */
		if (n == 64 + 2 + nl && p[64] == ' ' && p[65] == ' ' &&
		    memcmp(p + 66, name, nl) == 0) {
			memcpy(sha256, p, 64);
			sha256[64] = '\0';
			if (is_sha256_hex(sha256))
				return 0;
		}
		p = eol != NULL ? eol + 1 : end;
	}
	return -1;
}

/* The artifacts for one release: each target of [build] targets. */
static size_t build_targets(struct artifact_in *in, struct artifact_in proto)
{
	size_t n = 0;

	for (size_t i = 0; i < target_count(); i++) {
		const char *tn = target_at(i)->name, *p = scfg->build_targets;
		size_t tl = strlen(tn);

		/* A whole word of [build] targets. */
		while ((p = strstr(p, tn)) != NULL &&
		       !((p == scfg->build_targets || p[-1] == ' ') &&
			 (p[tl] == '\0' || p[tl] == ' ')))
			p += tl;
		if (p != NULL) {
			in[n] = proto;
			in[n++].target = tn;
		}
	}
	return n;
}

/* The release tarball's sha256 from sha256sums.asc, its signature checked
 * first when a keyring is configured (then only the signed text counts). */
static int tarball_sha256(const char *sums, const char *adir, const char *name,
			  char tsha[65], char *err, size_t errlen)
{
	char path[PATH_MAX], plain[PATH_MAX], home[PATH_MAX];
	size_t len;
	char *text;
	int rc;
	const struct fetch_scope scope = { origin_pin_file,
					   scfg->build_file_origins };

	if (fetch_learn(sums, adir, 16L << 20, &scope, path, sizeof(path), tsha,
			NULL, &source_cancel, err, errlen) < 0)
		return -1;
	if (scfg->build_keyring[0] != '\0') {
		if (pathf(plain, sizeof(plain), "%s/%s.signed.%ld", adir, tsha,
			  (long)getpid()) < 0 ||
		    pathf(home, sizeof(home), "%s/build", scache) < 0 ||
		    mkdir_p(home, 0755, err, errlen) < 0) {
			if (err[0] == '\0')
				errf(err, errlen, "path too long");
			return -1;
		}
		if (build_verify_signed(path, scfg->build_keyring, plain, home, err,
					errlen) < 0)
			return -1;
		text = file_read(plain, 16u << 20, &len, err, errlen);
		unlink(plain);
	} else {
		text = file_read(path, 16u << 20, &len, err, errlen);
	}
	if (text == NULL)
		return -1;
	rc = source_sums_find(text, len, name, tsha);
	free(text);
	if (rc < 0) {
		errf(err, errlen, "%s does not list %s%s", sums, name,
		     scfg->build_keyring[0] != '\0' ? " in its signed text" : "");
		return -1;
	}
	return 0;
}

/* One release: its source artifacts (1), 0 if kernels came meanwhile, or
 * -1 with err. */
static int resolve(struct store *st, const struct source_todo *t, char *err,
		   size_t errlen)
{
	char tarball[2048], sums[2048], name[128], path[PATH_MAX],
		tsha[65], psha[65], adir[PATH_MAX], tree[2048], patch[2048],
		pinned[2048];
	struct artifact_in in[8];
	struct kversion kv;
	int64_t rid;
	size_t n;
	int rc, git = t->git_tree != NULL && t->git_branch != NULL &&
		      (strcmp(scfg->build_announced_source, "git") == 0 ||
		       t->patch_url == NULL || t->patch_url[0] == '\0');

	if (kversion_parse(t->version, &kv, err, errlen) < 0)
		return -1;
	/* Whatever the mail says, only the allowed origins are fetched
	 * from (plain http:// and git:// upgraded to https:// there): a
	 * forged announcement can at most build a genuine rc. */
	if (git) {
		if (origin_pin(scfg->build_tree_origins, "tree", t->git_tree, tree,
			       sizeof(tree), err, errlen) < 0 ||
		    gitsrc_url_check(tree, err, errlen) < 0 ||
		    gitsrc_branch_check(t->git_branch, err, errlen) < 0)
			return -1;
		n = build_targets(in, (struct artifact_in){ NULL, tree,
			"", "git", NULL, NULL, 0, NULL, NULL, t->git_branch });
	} else {
		const struct fetch_scope scope = { origin_pin_file,
						   scfg->build_file_origins };

		if (origin_pin(scfg->build_file_origins, "file", t->patch_url,
			       patch, sizeof(patch), err, errlen) < 0 ||
		    source_urls(t->version, patch, tarball,
				sizeof(tarball), sums, sizeof(sums), name,
				sizeof(name), err, errlen) < 0 ||
		    origin_pin(scfg->build_file_origins, "file", tarball, pinned,
			       sizeof(pinned), err, errlen) < 0 ||
		    origin_pin(scfg->build_file_origins, "file", sums, pinned,
			       sizeof(pinned), err, errlen) < 0 ||
		    fetch_url_check(tarball, err, errlen) < 0 ||
		    pathf(adir, sizeof(adir), "%s/artifacts", scache) < 0 ||
		    mkdir_p(adir, 0755, err, errlen) < 0 ||
		    tarball_sha256(sums, adir, name, tsha, err, errlen) < 0)
			return -1;
		if (fetch_learn(patch, adir, scfg->max_artifact_mb << 20,
				&scope, path, sizeof(path), psha, NULL,
				&source_cancel, err, errlen) < 0)
			return -1;
		n = build_targets(in, (struct artifact_in){ NULL, tarball, tsha,
			"source", NULL, NULL, 0, patch, psha, NULL });
	}
	if (n == 0) {
		errf(err, errlen, "[build] targets names no target");
		return -1;
	}
	rc = store_release_create(st, t->version, &kv, NULL, in, n, &rid, err,
				  errlen);
	if (rc == -2)
		return 0;	/* kernels were posted meanwhile: theirs win */
	if (rc < 0)
		return -1;
	if (git)
		log_info("source: release %s (%lld) builds from %s branch %s (its"
			 " head when its first job fetches, for every target)",
			 t->version, (long long)t->id, tree, t->git_branch);
	else
		log_info("source: release %s (%lld) builds from %s + %s (patch"
			 " sha256 %s%s)", t->version, (long long)t->id, name,
			 patch, psha, scfg->build_keyring[0] != '\0'
			 ? ", tarball hash from a verified signature" : "");
	return 1;
}

/* One pass: 1 if it created jobs (the workers are kicked), 0 if nothing
 * was waiting, -1 on a store error. */
static int source_run_once(struct store *st)
{
	struct rowset todo;
	const struct source_todo *t;
	char err[512];
	int made = 0;

	if (store_sources_unresolved(st, &todo, err, sizeof(err)) < 0) {
		log_err("source: %s", err);
		return -1;
	}
	t = todo.v;
	for (size_t i = 0; i < todo.n && !consumer_stopping(&source_consumer); i++) {
		char e2[512] = "";
		int rc = resolve(st, &t[i], e2, sizeof(e2));

		if (rc < 0)
			log_warn("source: release %s: %s (POST its source or"
				 " kernels)", t[i].version, e2);
		store_source_tried(st, t[i].id, rc < 0 ? e2 : NULL, NULL, 0);
		made |= rc > 0;
	}
	rowset_free(&todo);
	return made;
}

static int source_pass(struct store *st, void *arg)
{
	(void)arg;
	if (source_run_once(st) > 0 && jobs_queued != NULL)
		jobs_queued();
	return 0;
}

void source_kick(void)
{
	consumer_kick(&source_consumer);
}

int source_start(const struct config *cfg, const char *db_path,
		 const char *cache_dir, void (*queued)(void), char *err,
		 size_t errlen)
{
	if (!cfg->build_from_announcements)
		return 0;
	scfg = cfg;
	jobs_queued = queued;
	scache = strdup(cache_dir);
	if (scache == NULL) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	return consumer_start(&source_consumer, db_path, err, errlen);
}

void source_stop(void)
{
	source_cancel = 1;
	consumer_stop(&source_consumer);
	free(scache);
	scache = NULL;
}
