// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exerciser as the suite sees it: a row runs its seeds (exer.c runs
 * each), a failure is shrunk to the fewest operations that still break a
 * promise (delta debugging over fresh files), and the shrunk trace and
 * the replay command become the diagnostic; `rcgate-agent --replay`
 * comes here too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "bdevio.h"
#include "exer_internal.h"

#define SHRINK_MAX_REPLAYS 40
#define SHRINK_MAX_MS 20000

/* Seeds per row are multiplied by this (rcgate.exer=deep). */
unsigned int exer_seed_factor = 1;

/* ---- shrinking ---- */

struct shrinker {
	const struct suite_env *env;
	const struct exer_op *ops;
	unsigned int seed;
	unsigned int n;
	unsigned int replays;
	long long deadline;
	struct exer_outcome last; /* the smallest failing replay's verdict */
};

static int still_fails(struct shrinker *s, const unsigned int *idx,
		       unsigned int count)
{
	unsigned char keep[EXER_MAX_OPS];
	struct exer_outcome o;
	struct diag tmp;
	unsigned int i;

	memset(keep, 0, sizeof(keep));
	for (i = 0; i < count; i++)
		keep[idx[i]] = 1;
	diag_reset(&tmp);
	s->replays++;
	if (exer_run_ops(s->env, s->seed, s->ops, s->n, keep, NULL, &o, &tmp) != 1)
		return 0;
	s->last = o;
	return 1;
}

/* Delta debugging: drop chunks of the kept operations while the trace
 * still breaks a promise, until no single one can go or the budget ends. */
static unsigned int shrink(struct shrinker *s, unsigned int *idx,
			   unsigned int count)
{
	unsigned int gran = 2, cand[EXER_MAX_OPS];

	while (count >= 2 && s->replays < SHRINK_MAX_REPLAYS &&
	       now_ms() < s->deadline) {
		unsigned int chunk = (count + gran - 1) / gran, start, i, c;
		int reduced = 0;

		for (start = 0; start < count && !reduced; start += chunk) {
			if (s->replays >= SHRINK_MAX_REPLAYS || now_ms() >= s->deadline)
				break;
			for (i = 0, c = 0; i < count; i++)
				if (i < start || i >= start + chunk)
					cand[c++] = idx[i];
			if (c > 0 && still_fails(s, cand, c)) {
				memcpy(idx, cand, c * sizeof(*idx));
				count = c;
				gran = gran > 2 ? gran - 1 : 2;
				reduced = 1;
			}
		}
		if (!reduced) {
			if (gran >= count)
				break;
			gran = gran * 2 < count ? gran * 2 : count;
		}
	}
	return count;
}

/* The shrunk trace as diagnostics: the replay command, then the ops. */
static void trace_diag(unsigned int seed, const struct exer_op *ops,
		       const unsigned int *idx, unsigned int count,
		       struct diag *d)
{
	char line[DIAG_LEN], text[160];
	size_t len;
	unsigned int i, shown = 0;

	len = (size_t)snprintf(line, sizeof(line),
			       "replay: rcgate-agent --replay %u --ops ", seed);
	for (i = 0; i < count && len < sizeof(line) - 12; i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%u",
					i ? "," : "", idx[i]);
	diag_add(d, "%s%s", line, i < count ? ",..." : "");
	for (i = 0; i < count && d->count < DIAG_MAX - 1; i++) {
		exer_op_text(&ops[idx[i]], text, sizeof(text));
		diag_add(d, "op %u: %s", idx[i], text);
		shown++;
	}
	if (shown < count)
		diag_add(d, "(%u more ops: see the replay)", count - shown);
}

static void report_failure(const struct suite_env *env, unsigned int seed,
			   const struct exer_op *ops, const struct exer_outcome *rn,
			   int do_shrink, struct diag *d)
{
	struct shrinker s = { .env = env, .ops = ops, .seed = seed,
			      .n = rn->fail_step + 1 };
	unsigned int idx[EXER_MAX_OPS], count, i;

	s.deadline = now_ms() + SHRINK_MAX_MS;
	for (i = 0; i < s.n; i++)
		idx[i] = i;
	count = s.n;
	if (!do_shrink) {
		diag_add(d, "seed %u step %u: %s", seed, rn->fail_step, rn->why);
		return;
	}
	if (!still_fails(&s, idx, count)) {
		diag_add(d, "seed %u step %u: %s", seed, rn->fail_step, rn->why);
		diag_add(d, "the %u ops did not fail again on a fresh file (timing?): not shrunk",
			 count);
		count = count > 4 ? 4 : count;
		trace_diag(seed, ops, idx + s.n - count, count, d);
		return;
	}
	/* Most failures need few ops and the last is one of them: try the
	 * failing op alone before cutting halves. */
	if (count > 1 && still_fails(&s, idx + count - 1, 1)) {
		idx[0] = idx[count - 1];
		count = 1;
	}
	count = shrink(&s, idx, count);
	diag_add(d, "seed %u step %u: %s", seed, s.last.fail_step, s.last.why);
	diag_add(d, "shrunk to %u of %u ops in %u replays", count, s.n,
		 s.replays);
	trace_diag(seed, ops, idx, count, d);
}

/* ---- the suite's rows and the replay ---- */

struct exer_stats {
	unsigned char cells[EXER_CELLS / 8 + 1];
	unsigned int skipped;
};

static enum test_status run_seed(const struct suite_env *env,
				 const struct exer_run_options *o,
				 struct exer_stats *stats, struct diag *d)
{
	struct exer_op *ops;
	struct exer_outcome rn;
	unsigned int n = o->nops > EXER_MAX_OPS ? EXER_MAX_OPS : o->nops, i;
	int rc;

	ops = calloc(n ? n : 1, sizeof(*ops));
	if (ops == NULL) {
		diag_add(d, "out of memory");
		return TEST_FAIL;
	}
	exer_draw(o->seed, env, ops, n);
	rc = exer_run_ops(env, o->seed, ops, n, o->keep, o->trace, &rn, d);
	if (stats != NULL && rc >= 0) {
		for (i = 0; i < sizeof(stats->cells); i++)
			stats->cells[i] |= rn.cells[i];
		stats->skipped += rn.skipped;
	}
	if (rc == 1)
		report_failure(env, o->seed, ops, &rn, !o->quiet, d);
	free(ops);
	return rc == 0 ? TEST_PASS : TEST_FAIL;
}

enum test_status exer_run_seed(const struct suite_env *env,
			       const struct exer_run_options *o,
			       struct diag *d)
{
	return run_seed(env, o, NULL, d);
}

static unsigned int cells_count(const struct exer_stats *s)
{
	unsigned int i, n = 0;

	for (i = 0; i < EXER_CELLS; i++)
		n += (s->cells[i / 8] >> (i % 8)) & 1;
	return n;
}

/* The full profile fills the filesystem: only one made for the test
 * (a guest's scratch disk), never a host's. */
#define FULL_MAX_FS (2LL << 30)

static int too_big_to_fill(const struct suite_env *env, struct diag *d)
{
	char dir[4096], *slash;
	struct statfs sf;
	long long bytes;

	snprintf(dir, sizeof(dir), "%s", env->path);
	slash = strrchr(dir, '/');
	if (slash != NULL)
		*slash = '\0';
	if (statfs(slash != NULL ? dir : ".", &sf) != 0)
		return 0;
	bytes = (long long)sf.f_blocks * (long long)sf.f_bsize;
	if (bytes <= FULL_MAX_FS)
		return 0;
	snprintf(d->skip_reason, sizeof(d->skip_reason),
		 "a filesystem of %lld MiB is not filled (at most %lld MiB)",
		 bytes >> 20, FULL_MAX_FS >> 20);
	return 1;
}

enum test_status test_exer(const struct suite_test *t,
		 	   const struct suite_env *env, struct diag *d)
{
	struct exer_stats stats;
	struct exer_run_options o = { .nops = t->exer_ops };
	unsigned int seeds = t->exer_seeds * exer_seed_factor, i;
	long long start = now_ms();

	if (t->exer_seed / EXER_SEEDS_PER_PROFILE == EXER_PROFILE_FULL &&
	    !env->bdev && too_big_to_fill(env, d))
		return TEST_SKIP;

	memset(&stats, 0, sizeof(stats));
	for (i = 0; i < seeds; i++) {
		o.seed = t->exer_seed + i;
		if (run_seed(env, &o, &stats, d) != TEST_PASS)
			return TEST_FAIL;
	}
	diag_add(d, "seeds %u-%u, %u ops each (%u not issued here): %lld ms, %u of %u cells (op x buffer x layout)",
		 t->exer_seed, t->exer_seed + seeds - 1, t->exer_ops,
		 stats.skipped, now_ms() - start, cells_count(&stats), EXER_CELLS);
	return TEST_PASS;
}

static int parse_ops(const char *list, unsigned char *keep, unsigned int n)
{
	const char *p = list;
	char *end;

	memset(keep, 0, n);
	while (*p != '\0') {
		unsigned long v = strtoul(p, &end, 10);

		if (end == p || v >= n || (*end != ',' && *end != '\0'))
			return -1;
		keep[v] = 1;
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

int exer_replay(const char *dir, unsigned int seed, const char *ops,
		unsigned int nops, FILE *out)
{
	struct exer_run_options o = { .seed = seed, .nops = nops, .quiet = 1,
				      .trace = out };
	unsigned char keep[EXER_MAX_OPS];
	struct suite_env env;
	struct stat sb;
	struct diag d;
	char err[256];
	unsigned int i;
	enum test_status st;

	if (nops == 0 || nops > EXER_MAX_OPS)
		o.nops = nops = EXER_MAX_OPS;
	if (ops != NULL) {
		if (parse_ops(ops, keep, nops) != 0) {
			fprintf(stderr, "rcgate-agent: --ops: comma-separated op numbers below %u\n",
				nops);
			return 2;
		}
		o.keep = keep;
	}
	memset(&env, 0, sizeof(env));
	if (stat(dir, &sb) == 0 && S_ISBLK(sb.st_mode) ?
		    bdev_probe(dir, &env, err, sizeof(err)) != 0 :
		    suite_probe(dir, &env, err, sizeof(err)) != 0) {
		fprintf(stderr, "rcgate-agent: %s: %s\n", dir, err);
		return 2;
	}
	if (!env.bdev)
		snprintf(env.path, sizeof(env.path), "%s/exer-replay.dat", dir);
	else
		snprintf(env.path, sizeof(env.path), "%s", dir);
	diag_reset(&d);
	if (seed / EXER_SEEDS_PER_PROFILE == EXER_PROFILE_FULL && !env.bdev &&
	    too_big_to_fill(&env, &d)) {
		fprintf(stderr, "rcgate-agent: %s\n", d.skip_reason);
		return 2;
	}
	st = exer_run_seed(&env, &o, &d);
	for (i = 0; i < d.count && i < DIAG_MAX; i++)
		fprintf(out, "# %s\n", d.line[i]);
	fprintf(out, "%s seed %u\n", st == TEST_PASS ? "ok" : "not ok", seed);
	return st == TEST_PASS ? 0 : 1;
}
