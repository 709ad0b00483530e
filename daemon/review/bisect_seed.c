/* SPDX-License-Identifier: GPL-2.0-only
 *
 * bisect_seed.c - owns the worktree a bisection's second step will build
 * in, copied before the bisection starts. A round of two steps builds
 * both incrementally only when the branch has two warm worktrees for the
 * target (bisect_width), and a week has one: so drive() used to copy it
 * (gitsrc_worktree_seed, 21 s in the eighth week round) between the
 * regression's report and its first round, on the critical path. A
 * failure of an rc built from git is rerun first to confirm it, and the
 * rerun boots the kernel its job built (no worktree), so this thread
 * copies the warm worktree while the rerun runs: when the rerun confirms
 * the regression, the round starts at once with two warm worktrees. A
 * rerun that does not confirm leaves a copy that buildcache.c's LRU
 * evicts like any other worktree.
 *
 * It copies only when [bisect] parallel is 2 or more and the branch has
 * exactly one warm worktree free for the target (two or more: enough
 * for a round of two; a wider round's further copies need the range's
 * length, which drive() knows: bisect_seeds). While it copies, the
 * source is locked, and a pass of drive() that counted warm worktrees
 * then would see none and build a round cold: drive() waits while
 * bisect_seed_busy() says the branch is being copied, and the copy does
 * not start once a bisection of the branch runs on the target (the
 * store's query, asked again after the copy is marked busy, so one of
 * the two always sees the other).
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "store/store.h"
#include "build/build.h"
#include "review/review.h"

static const struct engine_context *seed_ctx;
static int seed_pass(struct store *, void *);
static struct consumer seed_consumer = {
	.name = "bisect-seeds", .pass = seed_pass, .period = 60,
};

/* What is being copied: "gitdir\ntarget\nbranch", "" none. */
static pthread_mutex_t busy_mu = PTHREAD_MUTEX_INITIALIZER;
static char busy[PATH_MAX + 400];

static void busy_key(char *out, size_t len, const char *gitdir,
		     const char *target, const char *branch)
{
	snprintf(out, len, "%s\n%s\n%s", gitdir, target, branch);
}

int bisect_seed_busy(const char *gitdir, const char *target,
		     const char *branch)
{
	char key[sizeof(busy)];
	int rc;

	busy_key(key, sizeof(key), gitdir, target, branch);
	pthread_mutex_lock(&busy_mu);
	rc = busy[0] != '\0' && strcmp(busy, key) == 0;
	pthread_mutex_unlock(&busy_mu);
	return rc;
}

static void busy_set(const char *key)
{
	pthread_mutex_lock(&busy_mu);
	snprintf(busy, sizeof(busy), "%s", key);
	pthread_mutex_unlock(&busy_mu);
}

/* The daemon stops (never, without the thread: the unit tests). */
static int seed_stopping(void *cls)
{
	(void)cls;
	return consumer_stopping(&seed_consumer);
}

/* Whether copies are made at all: a round of one needs none, and
 * without a cache there are no worktrees. */
static int seeding(const struct engine_context *c)
{
	return c->cache_dir != NULL && c->cfg->bisect_parallel >= 2;
}

/* Whether rc release_id's rerun on target still waits for a copy (the
 * store asked again, after the copy was marked busy). */
static int still_wanted(struct store *st, int64_t release_id,
			const char *target)
{
	struct rowset r = { 0 };
	char err[512];
	int found = 0;

	if (store_seed_candidates(st, &r, err, sizeof(err)) < 0) {
		log_err("bisect-seeds: %s", err);
		return 0;
	}
	for (size_t i = 0; i < r.n && !found; i++) {
		const struct seed_candidate *c =
			&((const struct seed_candidate *)r.v)[i];

		found = c->release_id == release_id &&
			strcmp(c->target, target) == 0;
	}
	rowset_free(&r);
	return found;
}

/* One candidate: 1 when a worktree was copied, else 0. */
static int seed_one(struct store *st, const struct engine_context *c,
		    const struct seed_candidate *cd)
{
	char root[PATH_MAX], gitdir[PATH_MAX], branch[300], key[sizeof(busy)],
	     err[512] = "";
	struct build_options o;
	double t0 = now_monotonic();
	int rc;

	bisect_opts(&o, c, root, sizeof(root));
	o.cancelled = seed_stopping;
	if (gitsrc_clone_dir(root, cd->tree, gitdir, sizeof(gitdir)) < 0)
		return 0;
	gitsrc_branch_key(cd->version, NULL, branch, sizeof(branch));
	if (gitsrc_worktrees_warm(gitdir, cd->target, branch) != 1)
		return 0;
	busy_key(key, sizeof(key), gitdir, cd->target, branch);
	busy_set(key);
	rc = 0;
	if (still_wanted(st, cd->release_id, cd->target))
		rc = gitsrc_worktree_seed(gitdir, cd->target, branch, &o, err,
					  sizeof(err));
	busy_set("");
	/* A pass of drive() that waited for the copy goes on. */
	engine_kick();
	if (rc < 0)
		log_warn("bisect-seeds: no second worktree of %s for %s: %s",
			 branch, cd->target, err);
	if (rc <= 0)
		return 0;
	log_info("bisect-seeds: a warm worktree of %s for %s copied in %.0f s"
		 " while %s's rerun runs, so that a bisection's steps build"
		 " incrementally side by side", branch, cd->target,
		 now_monotonic() - t0, cd->version);
	return 1;
}

int bisect_seed_once(struct store *st, const struct engine_context *c,
		     char *err, size_t errlen)
{
	struct rowset todo = { 0 };
	int made = 0;

	if (!seeding(c))
		return 0;
	if (store_seed_candidates(st, &todo, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < todo.n && !seed_stopping(NULL); i++)
		made += seed_one(st, c,
				 &((const struct seed_candidate *)todo.v)[i]);
	rowset_free(&todo);
	return made;
}

static int seed_pass(struct store *st, void *arg)
{
	char err[512];
	int n;

	(void)arg;
	n = bisect_seed_once(st, seed_ctx, err, sizeof(err));
	if (n < 0)
		log_err("bisect-seeds: %s", err);
	return CONSUMER_PERIOD;
}

void bisect_seed_kick(void)
{
	consumer_kick(&seed_consumer);
}

int bisect_seed_start(const struct engine_context *c, char *err,
		      size_t errlen)
{
	if (!seeding(c))
		return 0;
	seed_ctx = c;
	return consumer_start(&seed_consumer, c->db_path, err, errlen);
}

/* A no-op when the thread never started (consumer_stop). */
void bisect_seed_stop(void)
{
	consumer_stop(&seed_consumer);
}
