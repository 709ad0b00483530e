/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * prereq.c - after a bisection names a backport as the culprit, lists
 * the upstream commits it may depend on that its branch lacks: in 2023
 * the ext4 backport 91562895f803 needed iomap's 936e114a245b, and a
 * person had to find that. This is a hint, ranked, never a verdict.
 *
 * The rules (prereq_scan, prereq_score: no I/O, unit-tested) read what a
 * diff touches; the search (prereq_search) runs git in the cached clones:
 *  1. the culprit's diff in the stable tree;
 *  2. in the upstream tree ([bisect] upstream_git, fetched like any tree),
 *     the branch's base release tag (v6.1) and the culprit's upstream
 *     commit U, which must descend from it;
 *  3. the files that define the functions the culprit calls (git grep at
 *     U, names defined in more than 3 files skipped: wrappers, macros),
 *     and those that call the operations it implements (its functions
 *     assigned to a struct member: ".end_io = ext4_dio_write_end_io" in
 *     its files makes every "->end_io(" caller at U relevant, up to 16);
 *  4. every commit in base..U that touches those files or the culprit's
 *     own, its diff with whole functions (git -W), scored against the
 *     culprit (prereq_score);
 *  5. those the branch already has are dropped: named by a "commit X
 *     upstream." line in base..rc, or with the same fingerprint (a
 *     patch-id) as a branch commit;
 *  6. the best PREREQ_MAX, newest first among equals.
 * Its own thread, because a first fetch of an upstream tree can take an
 * hour; the bisection's follow-up mail waits for it (bisect.c).
 */
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/base.h"
#include "store/store.h"
#include "build/build.h"
#include "report/report.h"
#include "review/review.h"

/* ---- the rules ---- */

static int in_set(char set[][PREREQ_NAME], size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(set[i], s) == 0)
			return 1;
	return 0;
}

static void set_add(char set[][PREREQ_NAME], size_t *n, size_t cap,
		    const char *s, size_t len)
{
	char name[PREREQ_NAME];

	if (len == 0 || len >= PREREQ_NAME || *n >= cap)
		return;
	memcpy(name, s, len);
	name[len] = '\0';
	if (!in_set(set, *n, name))
		memcpy(set[(*n)++], name, len + 1);
}

/* Calls and members that say nothing about what a change depends on. */
static int common_name(const char *s, size_t len)
{
	static const char *const names[] = {
		"if", "for", "while", "switch", "return", "sizeof", "typeof",
		"likely", "unlikely", "defined", "WARN_ON", "WARN_ON_ONCE",
		"BUG_ON", "BUG", "kfree", "kmalloc", "kzalloc", "kcalloc",
		"vfree", "IS_ERR", "PTR_ERR", "ERR_PTR", "IS_ERR_OR_NULL",
		"min", "max", "min_t", "max_t", "list_empty", "spin_lock",
		"spin_unlock", "spin_lock_irqsave", "spin_unlock_irqrestore",
		"mutex_lock", "mutex_unlock", "pr_err", "pr_warn", "pr_info",
		"pr_debug", "printk", "memset", "memcpy", "strcmp", "strlen",
		"ARRAY_SIZE", "READ_ONCE", "WRITE_ONCE", "container_of",
		"EXPORT_SYMBOL", "EXPORT_SYMBOL_GPL", "static_assert",
		"flags", "size", "len", "data", "next", "prev", "list",
		"lock", "count", "name", "type", "ops", "private", "state",
	};

	if (len < 3)
		return 1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0)
			return 1;
	return 0;
}

static int ident_start(int c)
{
	return isalpha(c) || c == '_';
}

static int ident_char(int c)
{
	return isalnum(c) || c == '_';
}

/* One line of a hunk (without its +/- or space): a function definition's
 * name when the line starts one at column 0 (git -W puts the whole
 * function in the hunk, its first line included); the ->x( and .x( calls
 * of any line (what the code calls through a struct of operations); and
 * for a changed line, its calls and members, and the line without
 * whitespace appended to norm (the fingerprint). */
static void scan_line(const char *p, const char *end, struct prereq_sig *s,
		      struct strbuf *norm)
{
	const char *q = p;
	int definition;

	while (q < end && (*q == ' ' || *q == '\t'))
		q++;
	if (norm != NULL) {
		for (const char *c = p; c < end; c++)
			if (!isspace((unsigned char)*c))
				strbuf_printf(norm, "%c", *c);
		strbuf_printf(norm, "\n");
	}
	/* A comment's words are not code. */
	if (q < end && (*q == '*' || (end - q >= 2 && (q[1] == '*' || q[1] == '/') &&
				      *q == '/')))
		return;
	definition = ident_start((unsigned char)*p) &&
		     memchr(p, ';', (size_t)(end - p)) == NULL &&
		     memchr(p, '(', (size_t)(end - p)) != NULL;
	for (const char *c = p; c < end;) {
		if (*c == '/' && c + 1 < end && (c[1] == '*' || c[1] == '/'))
			break;
		if (*c == '"' || *c == '\'') {
			char quote = *c++;

			while (c < end && *c != quote)
				c += *c == '\\' && c + 1 < end ? 2 : 1;
			c++;
			continue;
		}
		if (!ident_start((unsigned char)*c) ||
		    (c > p && ident_char((unsigned char)c[-1]))) {
			c++;
			continue;
		}
		const char *b = c, *a;

		while (c < end && ident_char((unsigned char)*c))
			c++;
		size_t len = (size_t)(c - b);
		int member = (b - p >= 2 && b[-2] == '-' && b[-1] == '>') ||
			     (b - p >= 1 && b[-1] == '.');

		for (a = c; a < end && (*a == ' ' || *a == '\t'); a++)
			;
		if (member && a < end && *a == '(' && len >= 3)
			set_add(s->indirect, &s->nindirect, PREREQ_MEMBERS, b, len);
		if (definition && a < end && *a == '(') {
			if (!common_name(b, len))
				set_add(s->funcs, &s->nfuncs, PREREQ_FUNCS, b, len);
			definition = 0;	/* the rest are parameters */
			continue;
		}
		if (norm == NULL || common_name(b, len))
			continue;
		if (member)
			set_add(s->members, &s->nmembers, PREREQ_MEMBERS, b, len);
		else if (a < end && *a == '(')
			set_add(s->calls, &s->ncalls, PREREQ_CALLS, b, len);
	}
}

void prereq_scan(const char *diff, size_t len, struct prereq_sig *s)
{
	const char *p = diff, *end = diff + len;
	char *nb = malloc(len + 1);
	struct strbuf norm;
	int changed = 0, in_hunk = 0;

	memset(s, 0, sizeof(*s));
	strbuf_init(&norm, nb != NULL ? nb : s->fingerprint, nb != NULL ? len + 1 : 1);
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if (eol == NULL)
			eol = end;
		if (strncmp(p, "diff --git ", 11) == 0) {
			const char *b = NULL;

			in_hunk = 0;
			for (const char *c = p; c + 3 <= eol; c++)
				if (memcmp(c, " b/", 3) == 0)
					b = c + 3;	/* the last " b/" */
			if (b != NULL && eol - b < PREREQ_PATH && s->nfiles < PREREQ_FILES) {
				memcpy(s->files[s->nfiles], b, (size_t)(eol - b));
				s->files[s->nfiles][eol - b] = '\0';
				strbuf_printf(&norm, "%s\n", s->files[s->nfiles]);
				s->nfiles++;
			}
		} else if (strncmp(p, "@@ ", 3) == 0) {
			/* Its header names the function before the hunk's
			 * first line: with -W that is the previous one, so
			 * the functions come from the lines themselves. */
			in_hunk = 1;
		} else if (in_hunk && (*p == '+' || *p == '-')) {
			strbuf_printf(&norm, "%c", *p);
			scan_line(p + 1, eol, s, &norm);
			changed = 1;
		} else if (in_hunk && *p == ' ') {
			scan_line(p + 1, eol, s, NULL);
		}
		p = eol + 1;
	}
	if (changed && nb != NULL)
		sha256_hex(nb, norm.len, s->fingerprint);
	else
		s->fingerprint[0] = '\0';
	free(nb);
}

int prereq_score(const struct prereq_sig *k, const struct prereq_sig *c,
		 char *why, size_t whylen)
{
	struct strbuf sb;
	int score = 0, members = 0;

	strbuf_init(&sb, why, whylen);
	for (size_t i = 0; i < c->nfuncs; i++) {
		if (in_set((char (*)[PREREQ_NAME])k->calls, k->ncalls, c->funcs[i])) {
			score += 4;
			strbuf_printf(&sb, "%schanges %s(), which the culprit calls",
				      sb.len ? "; " : "", c->funcs[i]);
		} else if (in_set((char (*)[PREREQ_NAME])k->funcs, k->nfuncs,
				  c->funcs[i])) {
			score += 3;
			strbuf_printf(&sb, "%schanges %s(), as the culprit does",
				      sb.len ? "; " : "", c->funcs[i]);
		}
	}
	for (size_t i = 0; i < c->ncalls; i++)
		if (in_set((char (*)[PREREQ_NAME])k->funcs, k->nfuncs, c->calls[i])) {
			score += 2;
			strbuf_printf(&sb, "%scalls %s(), which the culprit changes",
				      sb.len ? "; " : "", c->calls[i]);
		}
	for (size_t i = 0; i < k->nimpl; i++)
		if (in_set((char (*)[PREREQ_NAME])c->indirect, c->nindirect,
			   k->impl_member[i])) {
			score += 4;
			strbuf_printf(&sb, "%schanges code that calls ->%s(), which the"
				      " culprit's %s() implements", sb.len ? "; " : "",
				      k->impl_member[i], k->impl_func[i]);
		}
	for (size_t i = 0; i < c->nfiles; i++)
		for (size_t j = 0; j < k->nfiles; j++)
			if (strcmp(c->files[i], k->files[j]) == 0) {
				score += 3;
				strbuf_printf(&sb, "%stouches %s", sb.len ? "; " : "",
					      c->files[i]);
			}
	for (size_t i = 0; i < c->nmembers && members < 3; i++)
		if (in_set((char (*)[PREREQ_NAME])k->members, k->nmembers,
			   c->members[i])) {
			score++;
			members++;
			strbuf_printf(&sb, "%suses ->%s as the culprit does",
				      sb.len ? "; " : "", c->members[i]);
		}
	return score;
}

/* ---- the search ---- */

#define MAX_DEF_NAMES 24	/* called functions looked up */
#define MAX_LOG 2000		/* upstream commits read */

struct cand {
	char commit[41];
	char subject[200];
	char why[600];
	char fingerprint[65];
	char files[4][PREREQ_PATH];
	size_t nfiles;
	int score;
	size_t order;		/* in git log: 0 is the newest */
};

/* Splits `git log --format=%x01%H %s -p` output into commits: calls fn
 * with each commit id, subject and diff. */
static void each_commit(char *out, void (*fn)(void *, const char *id,
					      const char *subject,
					      const char *diff, size_t len),
			void *arg)
{
	char *p = strchr(out, '\001');

	while (p != NULL) {
		char *next = strchr(p + 1, '\001'), *nl, *body;

		if (next != NULL)
			*next = '\0';
		p++;
		nl = strchr(p, '\n');
		body = nl != NULL ? nl + 1 : p + strlen(p);
		if (nl != NULL)
			*nl = '\0';
		if (strlen(p) > 41 && p[40] == ' ') {
			p[40] = '\0';
			if (gitsrc_is_commit(p))
				fn(arg, p, p + 41, body, strlen(body));
		}
		p = next;
	}
}

struct upstream_pass {
	const struct prereq_sig *culprit;
	const char *upstream;	/* U itself is not a candidate */
	struct cand *v;
	size_t n, cap, seen;
	struct prereq_sig sig;	/* scratch */
};

static void upstream_commit(void *arg, const char *id, const char *subject,
			    const char *diff, size_t len)
{
	struct upstream_pass *u = arg;
	struct cand *c;
	char why[600];
	int score;

	u->seen++;
	if (strcmp(id, u->upstream) == 0)
		return;
	prereq_scan(diff, len, &u->sig);
	score = prereq_score(u->culprit, &u->sig, why, sizeof(why));
	if (score <= 0)
		return;
	if (u->n == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 32;
		struct cand *v = realloc(u->v, cap * sizeof(*v));

		if (v == NULL)
			return;
		u->v = v;
		u->cap = cap;
	}
	c = &u->v[u->n];
	memset(c, 0, sizeof(*c));
	snprintf(c->commit, sizeof(c->commit), "%s", id);
	snprintf(c->subject, sizeof(c->subject), "%s", subject);
	snprintf(c->why, sizeof(c->why), "%s", why);
	memcpy(c->fingerprint, u->sig.fingerprint, sizeof(c->fingerprint));
	for (size_t i = 0; i < u->sig.nfiles && c->nfiles < 4; i++)
		memcpy(c->files[c->nfiles++], u->sig.files[i], PREREQ_PATH);
	c->score = score;
	c->order = u->n;
	u->n++;
}

struct branch_pass {
	struct cand *v;
	size_t n;
	struct prereq_sig sig;
	size_t dropped;
};

static void drop(struct branch_pass *b, size_t i)
{
	b->v[i].score = 0;
	b->dropped++;
}

static void branch_commit(void *arg, const char *id, const char *subject,
			  const char *diff, size_t len)
{
	struct branch_pass *b = arg;

	(void)id;
	(void)subject;
	prereq_scan(diff, len, &b->sig);
	if (b->sig.fingerprint[0] == '\0')
		return;
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].score > 0 &&
		    strcmp(b->v[i].fingerprint, b->sig.fingerprint) == 0)
			drop(b, i);
}

static int by_rank(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->score != y->score)
		return y->score - x->score;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Is rev a commit of gitdir? Its id in out, or 0 with out "". */
static int have_commit(const char *gitdir, const char *rev,
		       const struct build_options *o, char out[41])
{
	char spec[PREREQ_NAME + 64], err[256];
	const char *args[] = { "rev-parse", "--quiet", "--verify", spec, NULL };
	char *s;

	snprintf(spec, sizeof(spec), "%s^{commit}", rev);
	out[0] = '\0';
	s = gitsrc_git_out(gitdir, args, o, err, sizeof(err));
	if (s == NULL)
		return 0;
	snprintf(out, 41, "%.40s", s);
	free(s);
	return gitsrc_is_commit(out);
}

/* The paths of the files at upstream (*.c, and *.h with headers) whose
 * lines match the extended regex re, added to paths unless more than
 * max match (a name that common says nothing). */
static void grep_files(const char *updir, const char *upstream, const char *re,
		       int headers, size_t max, const struct build_options *o,
		       char paths[][PREREQ_PATH], size_t *npaths, size_t cap)
{
	const char *args[] = { "grep", "-l", "-E", "-e", re, upstream, "--",
			       "*.c", headers ? "*.h" : NULL, NULL };
	char err[256], *out, *save = NULL, found[16][PREREQ_PATH];
	size_t nfound = 0;

	out = gitsrc_git_out(updir, args, o, err, sizeof(err));
	if (out == NULL)
		return;		/* git grep exits 1 when nothing matches */
	for (char *l = strtok_r(out, "\n", &save); l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		const char *path = strchr(l, ':');	/* "<commit>:<path>" */

		if (nfound == max || nfound == 16) {
			free(out);
			return;
		}
		snprintf(found[nfound++], PREREQ_PATH, "%s", path != NULL ? path + 1 : l);
	}
	free(out);
	for (size_t f = 0; f < nfound; f++) {
		int dup = 0;

		for (size_t j = 0; j < *npaths; j++)
			dup |= strcmp(paths[j], found[f]) == 0;
		if (!dup && *npaths < cap)
			memcpy(paths[(*npaths)++], found[f], PREREQ_PATH);
	}
}

/* The files that define the functions the culprit calls but does not
 * define itself, added to *paths: a definition starts at column 0 and
 * names the function after its type ("static inline ssize_t
 * generic_write_sync("); a name defined in more than 3 files is skipped. */
static void defining_files(const char *updir, const char *upstream,
			   const struct prereq_sig *k, const struct build_options *o,
			   char paths[][PREREQ_PATH], size_t *npaths, size_t cap)
{
	size_t looked = 0;

	for (size_t i = 0; i < k->ncalls && looked < MAX_DEF_NAMES; i++) {
		char re[PREREQ_NAME + 48];

		if (in_set((char (*)[PREREQ_NAME])k->funcs, k->nfuncs, k->calls[i]))
			continue;
		looked++;
		snprintf(re, sizeof(re), "^[A-Za-z_].*[ *]%s\\(", k->calls[i]);
		grep_files(updir, upstream, re, 1, 3, o, paths, npaths, cap);
	}
}

/* The struct members the culprit's functions are assigned to in its
 * files at the culprit (".end_io = ext4_dio_write_end_io,"): the
 * operations it implements, into k->impl_*. */
static void implemented(const char *stdir, const char *culprit,
			struct prereq_sig *k, const struct build_options *o)
{
	char re[PREREQ_FUNCS * (PREREQ_NAME + 1) + 128], err[256], *out, *save = NULL;
	const char *args[8 + PREREQ_FILES] = { "grep", "-h", "-E", "-e", re, culprit,
					       "--" };
	struct strbuf sb;
	size_t n = 7;

	if (k->nfuncs == 0)
		return;
	strbuf_init(&sb, re, sizeof(re));
	strbuf_printf(&sb, "\\.[A-Za-z_][A-Za-z0-9_]*[[:space:]]*=[[:space:]]*&?(");
	for (size_t i = 0; i < k->nfuncs; i++)
		strbuf_printf(&sb, "%s%s", i ? "|" : "", k->funcs[i]);
	strbuf_printf(&sb, ")[[:space:]]*,?[[:space:]]*$");
	for (size_t i = 0; i < k->nfiles; i++)
		args[n++] = k->files[i];
	args[n] = NULL;
	out = gitsrc_git_out(stdir, args, o, err, sizeof(err));
	if (out == NULL)
		return;		/* exit 1: no such assignment */
	for (char *l = strtok_r(out, "\n", &save); l != NULL && k->nimpl < 8;
	     l = strtok_r(NULL, "\n", &save)) {
		char *m = strchr(l, '.'), *f;
		size_t ml, fl;

		if (m == NULL)
			continue;
		m++;
		for (ml = 0; ident_char((unsigned char)m[ml]); ml++)
			;
		f = strchr(m + ml, '=');
		if (f == NULL || ml == 0 || ml >= PREREQ_NAME)
			continue;
		for (f++; *f == ' ' || *f == '\t' || *f == '&'; f++)
			;
		for (fl = 0; ident_char((unsigned char)f[fl]); fl++)
			;
		if (fl == 0 || fl >= PREREQ_NAME)
			continue;
		memcpy(k->impl_member[k->nimpl], m, ml);
		k->impl_member[k->nimpl][ml] = '\0';
		memcpy(k->impl_func[k->nimpl], f, fl);
		k->impl_func[k->nimpl][fl] = '\0';
		if (in_set(k->funcs, k->nfuncs, k->impl_func[k->nimpl]))
			k->nimpl++;
	}
	free(out);
}

/* The files (at upstream) that call the operations the culprit
 * implements (->end_io(...)), at most 16 per operation, added to paths. */
static void calling_files(const char *updir, const char *upstream,
			  const struct prereq_sig *k, const struct build_options *o,
			  char paths[][PREREQ_PATH], size_t *npaths, size_t cap)
{
	for (size_t i = 0; i < k->nimpl; i++) {
		char re[PREREQ_NAME + 48];

		snprintf(re, sizeof(re), "(->|\\.)%s[[:space:]]*\\(", k->impl_member[i]);
		grep_files(updir, upstream, re, 0, 16, o, paths, npaths, cap);
	}
}

/* The commit ids a branch's messages name as upstream ("commit X
 * upstream." and the other forms gitsrc_upstream_id reads). */
static void drop_named(const char *stdir, const char *range,
		       const struct build_options *o, struct branch_pass *b)
{
	char err[256], *out, max[32];
	const char *args[] = { "log", "--format=%x01%B", max, range, NULL };

	snprintf(max, sizeof(max), "--max-count=%d", 20000);
	out = gitsrc_git_out(stdir, args, o, err, sizeof(err));
	if (out == NULL)
		return;
	for (char *p = strchr(out, '\001'); p != NULL;) {
		char *next = strchr(p + 1, '\001'), id[41];

		if (next != NULL)
			*next = '\0';
		if (gitsrc_upstream_id(p + 1, id) == 0)
			for (size_t i = 0; i < b->n; i++)
				if (b->v[i].score > 0 && strcmp(b->v[i].commit, id) == 0)
					drop(b, i);
		p = next;
	}
	free(out);
}

/* git log's arguments up to "--" (the paths follow): every non-merge
 * commit of range, newest first, "\001<id> <subject>" and its diff with
 * whole functions. Returns how many it wrote. */
static size_t log_args(const char **args, const char *max, const char *range)
{
	static const char *const fixed[] = { "log", "--no-merges", "--no-color",
					     "-p", "-W", "--format=%x01%H %s" };
	size_t n = 0;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		args[n++] = fixed[i];
	args[n++] = max;
	args[n++] = range;
	args[n++] = "--";
	return n;
}

/* The upstream commits in range that touch paths (git log's output, or
 * NULL with err). */
static char *upstream_log(const char *updir, const char *range,
			  char paths[][PREREQ_PATH], size_t npaths,
			  const struct build_options *o, char *err,
			  size_t errlen)
{
	const char *args[16 + PREREQ_FILES + MAX_DEF_NAMES + 16];
	char max[32];
	size_t n;

	snprintf(max, sizeof(max), "--max-count=%d", MAX_LOG);
	n = log_args(args, max, range);
	for (size_t i = 0; i < npaths && n + 1 < sizeof(args) / sizeof(args[0]); i++)
		args[n++] = paths[i];
	args[n] = NULL;
	return gitsrc_git_out(updir, args, o, err, errlen);
}

/* What the branch has: base..rc in the stable tree (the upstream base
 * commit when the stable tree has it, as real stable trees do; else its
 * own tag of the base release; else its history). Drops from br the
 * candidates the branch already has, by name and then by the files the
 * likely ones touch. */
static void branch_has(const char *stdir, const char *upbase,
		       const char *basetag, const char *bad,
		       const struct build_options *o, struct branch_pass *br)
{
	const char *args[72];
	char stbase[41], range[128], err[512];
	size_t n, nfile0;

	if (have_commit(stdir, upbase, o, stbase) ||
	    have_commit(stdir, basetag, o, stbase))
		snprintf(range, sizeof(range), "%s..%s", stbase, bad);
	else
		snprintf(range, sizeof(range), "%s", bad);
	drop_named(stdir, range, o, br);
	n = nfile0 = log_args(args, "--max-count=20000", range);
	for (size_t i = 0; i < br->n && n < 70; i++)
		for (size_t f = 0; f < br->v[i].nfiles && n < 70; f++) {
			int dup = 0;

			if (br->v[i].score <= 0)
				break;
			for (size_t j = nfile0; j < n; j++)
				dup |= strcmp(args[j], br->v[i].files[f]) == 0;
			if (!dup)
				args[n++] = br->v[i].files[f];
		}
	args[n] = NULL;
	if (n > nfile0) {
		char *out = gitsrc_git_out(stdir, args, o, err, sizeof(err));

		if (out != NULL)
			each_commit(out, branch_commit, br);
		free(out);
	}
}

/* The candidates that still relate to the culprit, best first, at most
 * PREREQ_MAX. */
static json_t *ranked_list(struct upstream_pass *up, size_t *listed)
{
	json_t *list = json_array();

	qsort(up->v, up->n, sizeof(*up->v), by_rank);
	for (size_t i = 0; i < up->n && *listed < PREREQ_MAX; i++) {
		if (up->v[i].score <= 0)
			continue;
		json_array_append_new(list, json_pack("{s:s,s:s,s:i,s:s}",
			"commit", up->v[i].commit, "subject", up->v[i].subject,
			"score", up->v[i].score, "why", up->v[i].why));
		(*listed)++;
	}
	return list;
}

int prereq_search(const char *updir, const char *stdir, const char *culprit,
		  const char *upstream, const char *base, const char *bad,
		  const struct build_options *o, json_t **list, char *msg,
		  size_t msglen)
{
	char err[512], basetag[64], upbase[41], range[128],
		paths[PREREQ_FILES + MAX_DEF_NAMES + 16][PREREQ_PATH];
	const char *show[] = { "show", "-W", "--no-color", "--format=",
			       culprit, NULL };
	struct prereq_sig *k = malloc(sizeof(*k));
	struct upstream_pass up = { 0 };
	struct branch_pass br = { 0 };
	size_t npaths = 0, listed = 0;
	char *out = NULL;
	int rc = -1;

	*list = NULL;
	snprintf(basetag, sizeof(basetag), "v%s", base);
	if (k == NULL) {
		errf(msg, msglen, "out of memory");
		return -1;
	}
	out = gitsrc_git_out(stdir, show, o, err, sizeof(err));
	if (out == NULL) {
		errf(msg, msglen, "the culprit's diff: %s", err);
		goto done;
	}
	prereq_scan(out, strlen(out), k);
	free(out);
	out = NULL;
	if (!have_commit(updir, upstream, o, range)) {
		errf(msg, msglen, "the upstream tree has no commit %.12s", upstream);
		goto done;
	}
	if (!have_commit(updir, basetag, o, upbase)) {
		errf(msg, msglen, "the upstream tree has no tag %s (the branch's"
		     " base release)", basetag);
		goto done;
	}
	for (size_t i = 0; i < k->nfiles; i++)
		memcpy(paths[npaths++], k->files[i], PREREQ_PATH);
	defining_files(updir, upstream, k, o, paths, &npaths,
		       sizeof(paths) / sizeof(paths[0]));
	implemented(stdir, culprit, k, o);
	calling_files(updir, upstream, k, o, paths, &npaths,
		      sizeof(paths) / sizeof(paths[0]));
	if (npaths == 0) {
		errf(msg, msglen, "the culprit changes no file");
		goto done;
	}
	snprintf(range, sizeof(range), "%s..%s", upbase, upstream);
	out = upstream_log(updir, range, paths, npaths, o, err, sizeof(err));
	if (out == NULL) {
		errf(msg, msglen, "git log %s in the upstream tree: %s", basetag, err);
		goto done;
	}
	up.culprit = k;
	up.upstream = upstream;
	each_commit(out, upstream_commit, &up);
	free(out);
	out = NULL;
	br.v = up.v;
	br.n = up.n;
	branch_has(stdir, upbase, basetag, bad, o, &br);
	*list = ranked_list(&up, &listed);
	snprintf(msg, msglen, "%zu upstream commits in %s..%.12s touch the files"
		 " the culprit touches, define what it calls or call what it"
		 " implements; %zu of them"
		 " relate to it, %zu the branch already has; %zu listed",
		 up.seen, basetag, upstream, up.n, br.dropped, listed);
	rc = 0;
done:
	free(up.v);
	free(k);
	return rc;
}

/* ---- the thread ---- */

static const struct config *pcfg;
static char *pcache;
static int prereq_pass(struct store *, void *);
static struct consumer prereq_consumer = {
	.name = "prerequisites", .pass = prereq_pass, .period = 60,
};

static int prereq_cancelled(void *cls)
{
	(void)cls;
	return consumer_stopping(&prereq_consumer);
}

/* One pending search: fetch the culprit's upstream commit and look for
 * what it needs that the branch lacks. Fills *list (or leaves it NULL)
 * and msg; returns 0 when the search ran. */
static int search_one(const struct config *cfg, const char *root,
		      const struct prereq_todo *b, json_t **list, char *msg,
		      size_t msglen)
{
	struct build_options o = { .root = root, .timeout = 3600,
				   .git_config = cfg->build_git_config,
				   .cancelled = prereq_cancelled };
	char updir[PATH_MAX], stdir[PATH_MAX], commit[41], err[512];
	char logpath[PATH_MAX + 16], base[48];
	struct kversion kv;
	int logfd, rc = -1;

	if (b->version == NULL || b->tree == NULL || b->culprit == NULL ||
	    b->culprit_upstream == NULL || b->bad == NULL ||
	    kversion_parse(b->version, &kv, msg, msglen) < 0) {
		snprintf(msg, msglen, "the bisection lacks a culprit"
			 " or its upstream id");
		return -1;
	}
	if (gitsrc_clone_dir(root, b->tree, stdir, sizeof(stdir)) < 0) {
		snprintf(msg, msglen, "the stable tree's path is too long");
		return -1;
	}
	/* git's own messages about the upstream fetch */
	snprintf(logpath, sizeof(logpath), "%s/prereq.log", root);
	logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0)
		logfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	snprintf(base, sizeof(base), "%s", kv.branch);
	log_info("prerequisites: bisection %lld: fetching %s",
		 (long long)b->id, cfg->bisect_upstream_git);
	if (gitsrc_fetch(cfg->bisect_upstream_git, b->culprit_upstream, logfd,
			 &o, updir, sizeof(updir), commit, err,
			 sizeof(err)) < 0)
		snprintf(msg, msglen, "the upstream tree %s: %s",
			 cfg->bisect_upstream_git, err);
	else
		rc = prereq_search(updir, stdir, b->culprit, b->culprit_upstream,
				   base, b->bad, &o, list, msg, msglen);
	if (logfd >= 0)
		close(logfd);
	return rc;
}

int prereq_run_once(struct store *st, const struct config *cfg,
		    const char *cache_dir)
{
	struct rowset todo = { 0 };
	char err[512], root[PATH_MAX];
	int done = 0;

	if (store_prereq_pending(st, &todo, err, sizeof(err)) < 0) {
		log_err("prerequisites: %s", err);
		return -1;
	}
	snprintf(root, sizeof(root), "%s/build", cache_dir);
	for (size_t i = 0; i < todo.n; i++) {
		const struct prereq_todo *b = &((const struct prereq_todo *)todo.v)[i];
		char msg[600], *s;
		json_t *list = NULL;
		int rc;

		if (consumer_stopping(&prereq_consumer))
			break;
		rc = search_one(cfg, root, b, &list, msg, sizeof(msg));
		if (consumer_stopping(&prereq_consumer)) {
			json_decref(list);
			break;	/* still pending: searched again at start */
		}
		s = list != NULL ? json_dumps(list, JSON_COMPACT) : NULL;
		if (store_prereq_finish(st, b->id, rc == 0 ? "done" : "failed", s,
					msg, err, sizeof(err)) < 0) {
			log_err("prerequisites: bisection %lld: %s",
				(long long)b->id, err);
		} else {
			log_info("prerequisites: bisection %lld: %s",
				 (long long)b->id, msg);
			reply_bisection(st, cfg, b->id);
			done++;
		}
		free(s);
		json_decref(list);
	}
	rowset_free(&todo);
	return done;
}

static int prereq_pass(struct store *st, void *arg)
{
	(void)arg;
	prereq_run_once(st, pcfg, pcache);	/* logs its own errors */
	return CONSUMER_PERIOD;
}

void prereq_kick(void)
{
	consumer_kick(&prereq_consumer);
}

int prereq_start(const struct config *cfg, const char *db_path,
		 const char *cache_dir, char *err, size_t errlen)
{
	if (cfg->bisect_upstream_git[0] == '\0')
		return 0;
	pcfg = cfg;
	pcache = strdup(cache_dir);
	if (pcache == NULL) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	return consumer_start(&prereq_consumer, db_path, err, errlen);
}

void prereq_stop(void)
{
	consumer_stop(&prereq_consumer);
	free(pcache);
	pcache = NULL;
}
