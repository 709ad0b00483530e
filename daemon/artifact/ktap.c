/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ktap.c - KTAP v1 parser for the agent's output.
 *
 * Owns no state beyond the report it fills: one pass over the buffer, line
 * by line, with a stack of open nesting levels. Everything that enters is
 * bounded (input size, line length, depth, result count, diagnostics per
 * result) because the input comes from a guest kernel we are testing and
 * may be cut off, garbled or hostile. See ktap.h for the accepted format.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "artifact/artifact.h"
#include "../../agent/protocol.h"

#define SUBTEST "# Subtest:"
#define MAX_NUMBER 999999999L		/* test and plan numbers */
#define MAX_MARKER_VALUE 999999999999L	/* marker counts, milliseconds */

/*
 * A static message for when even formatting an error fails to allocate;
 * ktap_report_free() knows not to free it.
 */
static char oom_message[] = "out of memory";

/* Diagnostic lines waiting for the next result at one level. */
struct diag {
	char *text;		/* '\n'-joined, NUL-terminated; NULL if empty */
	size_t len, cap, nlines;
};

struct level {
	int has_header;
	long plan;		/* -1 until the plan line */
	long seen;		/* results so far at this level */
	char *name;		/* from "# Subtest:", or NULL */
	size_t first;		/* index of the level's first result */
	struct diag pending;
	long pending_ms;	/* from RCGATE_TIME_MS, -1 if none */
};

struct parser {
	struct ktap_report *out;
	struct level levels[KTAP_MAX_DEPTH + 1];
	int depth;		/* deepest open level; -1 before the header */
	int marker_seen;
	int failed;		/* after an error only infra lines count */
	size_t lineno;
	size_t infra_line;
	size_t results_cap;
};

static void fail(struct parser *p, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct parser *p, size_t line, const char *fmt, ...)
{
	char msg[1024];
	char *s;
	va_list ap;
	int n;

	if (p->failed)
		return;
	p->failed = 1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Worst case is a 1 KiB message plus the prefix. */
	s = malloc(sizeof(msg) + 64);
	if (s == NULL) {
		p->out->error = oom_message;
		return;
	}
	if (line == 0)
		n = snprintf(s, sizeof(msg) + 64, "%s", msg);
	else
		n = snprintf(s, sizeof(msg) + 64, "line %zu: %s", line, msg);
	if (n < 0) {
		free(s);
		p->out->error = oom_message;
		return;
	}
	p->out->error = s;
}

static void oom(struct parser *p)
{
	fail(p, p->lineno, "out of memory");
}

/* Returns a copy of s[0..n) with a NUL appended, or NULL; caller frees. */
static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d == NULL)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static int has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

static size_t name_span(const char *s)
{
	size_t n = 0;

	while (is_name_char(s[n]))
		n++;
	return n;
}

static const char *skip_spaces(const char *s)
{
	while (*s == ' ')
		s++;
	return s;
}

/*
 * Parse a run of decimal digits at *s of value at most max and advance *s.
 * No sign, no spaces: KTAP numbers are plain digits.
 */
static int parse_digits(const char **s, long max, long *out)
{
	const char *c = *s;
	long v = 0;

	if (*c < '0' || *c > '9')
		return -1;
	for (; *c >= '0' && *c <= '9'; c++) {
		if (v > (max - (*c - '0')) / 10)
			return -1;
		v = v * 10 + (*c - '0');
	}
	*s = c;
	*out = v;
	return 0;
}

static void diag_clear(struct diag *d)
{
	free(d->text);
	memset(d, 0, sizeof(*d));
}

static int diag_append(struct parser *p, struct diag *d, const char *line)
{
	size_t n = strlen(line);
	size_t need = d->len + (d->nlines ? 1 : 0) + n + 1;

	if (d->nlines >= KTAP_MAX_DIAG_LINES || need > KTAP_MAX_DIAG_BYTES) {
		p->out->dropped_diag_lines++;
		return 0;
	}
	if (need > d->cap) {
		size_t cap = d->cap ? d->cap : 256;
		char *t;

		while (cap < need)
			cap *= 2;
		t = realloc(d->text, cap);
		if (t == NULL)
			return -1;
		d->text = t;
		d->cap = cap;
	}
	if (d->nlines)
		d->text[d->len++] = '\n';
	memcpy(d->text + d->len, line, n);
	d->len += n;
	d->text[d->len] = '\0';
	d->nlines++;
	return 0;
}

/* Unattached diagnostics are dropped but counted, like noise. */
static void diag_discard(struct parser *p, struct diag *d)
{
	p->out->ignored_lines += d->nlines;
	diag_clear(d);
}

static int open_level(struct parser *p, int d)
{
	struct level *lvl;

	if (d > KTAP_MAX_DEPTH) {
		fail(p, p->lineno, "nesting deeper than %d levels",
		     KTAP_MAX_DEPTH);
		return -1;
	}
	/*
	 * The top-level plan is what makes truncation detectable at the top,
	 * so no subtest may start before it.
	 */
	if (d == 1 && p->levels[0].plan < 0) {
		fail(p, p->lineno, "subtest before the top-level plan");
		return -1;
	}
	lvl = &p->levels[d];
	memset(lvl, 0, sizeof(*lvl));
	lvl->plan = -1;
	lvl->pending_ms = -1;
	lvl->first = p->out->nresults;
	p->depth = d;
	return 0;
}

static void close_level(struct parser *p)
{
	struct level *lvl = &p->levels[p->depth];

	diag_discard(p, &lvl->pending);
	free(lvl->name);
	lvl->name = NULL;
	p->depth--;
}

static void on_header(struct parser *p, int d, const char *c)
{
	struct level *lvl;

	if (strcmp(c, "KTAP version 1") != 0 &&
	    strcmp(c, "TAP version 13") != 0 &&
	    strcmp(c, "TAP version 14") != 0) {
		fail(p, p->lineno, "unsupported version line \"%.64s\"", c);
		return;
	}
	if (p->marker_seen) {
		fail(p, p->lineno, "header after the completeness marker");
		return;
	}
	if (p->depth < 0) {
		if (d != 0) {
			fail(p, p->lineno,
			     "first header is indented (top-level header missing)");
			return;
		}
		if (open_level(p, 0) == 0)
			p->levels[0].has_header = 1;
		return;
	}
	if (d == p->depth + 1) {
		if (open_level(p, d) == 0)
			p->levels[d].has_header = 1;
		return;
	}
	lvl = &p->levels[p->depth];
	/* "# Subtest:" may come first in some kunit versions. */
	if (d == p->depth && d > 0 && !lvl->has_header && lvl->plan < 0 &&
	    lvl->seen == 0) {
		lvl->has_header = 1;
		return;
	}
	if (d == p->depth)
		fail(p, p->lineno, "second header at depth %d", d);
	else
		fail(p, p->lineno, "header at depth %d while depth %d is open",
		     d, p->depth);
}

static void on_plan(struct parser *p, int d, const char *c)
{
	const char *s = c + 3;
	struct level *lvl;
	long n;

	if (p->depth < 0) {
		fail(p, p->lineno, "plan before the KTAP header");
		return;
	}
	if (p->marker_seen) {
		fail(p, p->lineno, "plan after the completeness marker");
		return;
	}
	if (parse_digits(&s, KTAP_MAX_RESULTS, &n) < 0) {
		fail(p, p->lineno, "bad plan \"%.64s\"", c);
		return;
	}
	s = skip_spaces(s);
	/* "1..0 # SKIP reason" is valid TAP: an empty, skipped level. */
	if (*s != '\0' && *s != '#') {
		fail(p, p->lineno, "bad plan \"%.64s\"", c);
		return;
	}
	if (d == p->depth + 1) {
		if (open_level(p, d) < 0)
			return;
	} else if (d != p->depth) {
		fail(p, p->lineno, "plan at depth %d while depth %d is open", d,
		     p->depth);
		return;
	}
	lvl = &p->levels[d];
	if (lvl->plan >= 0) {
		fail(p, p->lineno, "second plan at depth %d", d);
		return;
	}
	if (lvl->seen > 0) {
		fail(p, p->lineno, "plan after results at depth %d", d);
		return;
	}
	lvl->plan = n;
	diag_discard(p, &lvl->pending);
}

/* Prefix the paths of results [from, nresults) with "name.". */
static int prefix_paths(struct parser *p, size_t from, const char *name)
{
	size_t nl = strlen(name);

	for (size_t i = from; i < p->out->nresults; i++) {
		struct ktap_result *r = &p->out->results[i];
		size_t pl = strlen(r->path);
		char *np = malloc(nl + 1 + pl + 1);

		if (np == NULL)
			return -1;
		memcpy(np, name, nl);
		np[nl] = '.';
		memcpy(np + nl + 1, r->path, pl + 1);
		free(r->path);
		r->path = np;
	}
	return 0;
}

static struct ktap_result *new_result(struct parser *p)
{
	struct ktap_report *out = p->out;
	struct ktap_result *r;

	if (out->nresults >= KTAP_MAX_RESULTS) {
		fail(p, p->lineno, "more than %d results", KTAP_MAX_RESULTS);
		return NULL;
	}
	if (out->nresults == p->results_cap) {
		size_t cap = p->results_cap ? p->results_cap * 2 : 64;
		struct ktap_result *nr;

		if (cap > KTAP_MAX_RESULTS)
			cap = KTAP_MAX_RESULTS;
		nr = realloc(out->results, cap * sizeof(*nr));
		if (nr == NULL) {
			oom(p);
			return NULL;
		}
		out->results = nr;
		p->results_cap = cap;
	}
	r = &out->results[out->nresults];
	memset(r, 0, sizeof(*r));
	return r;
}

/*
 * Split "ok 3 name # SKIP reason" into its parts. On success *name points
 * into c (length *name_len) and *reason is allocated (or NULL).
 */
static int parse_result(struct parser *p, const char *c, long *number,
			const char **name, size_t *name_len,
			enum ktap_status *status, char **reason)
{
	int ok = has_prefix(c, "ok");
	const char *s = c + (ok ? 2 : 6);
	const char *dir;

	*reason = NULL;
	if (*s != ' ') {
		fail(p, p->lineno, "result without a test number");
		return -1;
	}
	s = skip_spaces(s);
	if (parse_digits(&s, MAX_NUMBER, number) < 0) {
		fail(p, p->lineno, "result without a valid test number");
		return -1;
	}
	if (*s != ' ') {
		fail(p, p->lineno, "result %ld without a name", *number);
		return -1;
	}
	s = skip_spaces(s);
	if (s[0] == '-' && s[1] == ' ')	/* TAP's "ok 1 - name" */
		s = skip_spaces(s + 1);
	*name = s;
	*name_len = name_span(s);
	if (*name_len == 0) {
		fail(p, p->lineno, "result %ld without a name", *number);
		return -1;
	}
	s = skip_spaces(s + *name_len);
	if (*s != '\0' && *s != '#') {
		fail(p, p->lineno, "bad test name \"%.*s%.32s\"",
		     (int)(*name_len > 64 ? 64 : *name_len), *name,
		     *name + *name_len);
		return -1;
	}
	*status = ok ? KTAP_PASS : KTAP_FAIL;
	if (*s != '#')
		return 0;
	dir = skip_spaces(s + 1);
	/* Any other "# ..." after the name is a comment: TAP says ignore. */
	if (strncasecmp(dir, "SKIP", 4) == 0 &&
	    (dir[4] == '\0' || dir[4] == ' '))
		*status = KTAP_SKIP;
	else if (strncasecmp(dir, "TODO", 4) == 0 &&
		 (dir[4] == '\0' || dir[4] == ' '))
		*status = ok ? KTAP_PASS : KTAP_XFAIL;
	else
		return 0;
	dir = skip_spaces(dir + 4);
	if (*dir != '\0') {
		*reason = dup_n(dir, strlen(dir));
		if (*reason == NULL) {
			oom(p);
			return -1;
		}
	}
	return 0;
}

static void on_result(struct parser *p, int d, const char *c)
{
	struct level *lvl;
	struct ktap_result *r;
	const char *name;
	size_t name_len;
	long number;
	enum ktap_status status;
	char *reason;
	int is_suite = 0;

	if (p->depth < 0) {
		fail(p, p->lineno, "result before the KTAP header");
		return;
	}
	if (p->marker_seen) {
		fail(p, p->lineno, "result after the completeness marker");
		return;
	}
	if (parse_result(p, c, &number, &name, &name_len, &status,
			 &reason) < 0)
		return;
	if (d == p->depth - 1) {
		/* This result closes the nested level: it is the suite's. */
		lvl = &p->levels[p->depth];
		if (lvl->plan >= 0 && lvl->seen != lvl->plan) {
			fail(p, p->lineno,
			     "subtest \"%.*s\" ended after %ld of %ld planned results",
			     (int)name_len, name, lvl->seen, lvl->plan);
			goto out;
		}
		if (lvl->name != NULL &&
		    (strlen(lvl->name) != name_len ||
		     memcmp(lvl->name, name, name_len) != 0)) {
			fail(p, p->lineno,
			     "result \"%.*s\" closes subtest \"%s\"",
			     (int)name_len, name, lvl->name);
			goto out;
		}
		is_suite = 1;
	} else if (d != p->depth) {
		fail(p, p->lineno, "result at depth %d while depth %d is open",
		     d, p->depth);
		goto out;
	}
	lvl = &p->levels[d];
	if (d == 0 && lvl->plan < 0) {
		fail(p, p->lineno, "result before the top-level plan");
		goto out;
	}
	if (number != lvl->seen + 1) {
		fail(p, p->lineno, "test number %ld out of order, expected %ld",
		     number, lvl->seen + 1);
		goto out;
	}
	if (lvl->plan >= 0 && number > lvl->plan) {
		fail(p, p->lineno, "test number %ld beyond the plan 1..%ld",
		     number, lvl->plan);
		goto out;
	}
	if (is_suite) {
		char *suite = dup_n(name, name_len);

		if (suite == NULL ||
		    prefix_paths(p, p->levels[d + 1].first, suite) < 0) {
			free(suite);
			oom(p);
			goto out;
		}
		free(suite);
		close_level(p);
	}
	r = new_result(p);
	if (r == NULL)
		goto out;
	r->path = dup_n(name, name_len);
	if (r->path == NULL) {
		oom(p);
		goto out;
	}
	r->status = status;
	r->directive_reason = reason;
	reason = NULL;
	r->is_suite = is_suite;
	r->depth = d;
	r->number = number;
	r->line = p->lineno;
	r->duration_ms = lvl->pending_ms;
	lvl->pending_ms = -1;
	/* The pending text moves into the result. */
	r->diagnostic = lvl->pending.nlines ? lvl->pending.text : NULL;
	if (r->diagnostic == NULL)
		free(lvl->pending.text);
	memset(&lvl->pending, 0, sizeof(lvl->pending));
	p->out->nresults++;
	lvl->seen++;
out:
	free(reason);
}

static int parse_marker(struct parser *p, const char *c)
{
	static const char *const keys[] = {
		RCGATE_MARKER_PASS, RCGATE_MARKER_FAIL, RCGATE_MARKER_SKIP,
		RCGATE_MARKER_DURATION,
	};
	long vals[4];
	int have[4] = { 0 };
	const char *s = c + strlen(RCGATE_MARKER);
	struct ktap_report *out = p->out;

	while (*(s = skip_spaces(s)) != '\0') {
		size_t klen = strcspn(s, "= ");
		int k;

		for (k = 0; k < 4; k++)
			if (strlen(keys[k]) == klen &&
			    memcmp(s, keys[k], klen) == 0)
				break;
		s += klen;
		if (*s != '=') {
			fail(p, p->lineno, "bad completeness marker field");
			return -1;
		}
		s++;
		if (k == 4) {	/* unknown key: newer agent, skip it */
			s += strcspn(s, " ");
			continue;
		}
		if (have[k] ||
		    parse_digits(&s, MAX_MARKER_VALUE, &vals[k]) < 0 ||
		    (*s != ' ' && *s != '\0')) {
			fail(p, p->lineno, "bad or repeated %s= in the completeness marker",
			     keys[k]);
			return -1;
		}
		have[k] = 1;
	}
	for (int k = 0; k < 4; k++) {
		if (!have[k]) {
			fail(p, p->lineno, "completeness marker without %s=",
			     keys[k]);
			return -1;
		}
	}
	out->marker_pass = vals[0];
	out->marker_fail = vals[1];
	out->marker_skip = vals[2];
	out->marker_duration_ms = vals[3];
	return 0;
}

static void on_marker(struct parser *p, int d, const char *c, int cut)
{
	struct ktap_report *out = p->out;
	long pass, fail_n, skip;

	if (p->depth < 0) {
		fail(p, p->lineno, "completeness marker without a KTAP header");
		return;
	}
	if (p->marker_seen) {
		fail(p, p->lineno, "second completeness marker");
		return;
	}
	if (d != 0) {
		fail(p, p->lineno, "completeness marker at depth %d", d);
		return;
	}
	if (p->depth > 0) {
		fail(p, p->lineno,
		     "completeness marker inside an open subtest at depth %d",
		     p->depth);
		return;
	}
	if (p->levels[0].seen != p->levels[0].plan) {
		fail(p, p->lineno,
		     "completeness marker after %ld of %ld planned results",
		     p->levels[0].seen, p->levels[0].plan);
		return;
	}
	/*
	 * Without its newline the marker may itself be cut short
	 * ("duration_ms=12" of 1234), so it does not count.
	 */
	if (cut) {
		fail(p, p->lineno,
		     "completeness marker not terminated by a newline (output cut off?)");
		return;
	}
	if (parse_marker(p, c) < 0)
		return;
	pass = ktap_count(out, KTAP_PASS) + ktap_count(out, KTAP_XFAIL);
	fail_n = ktap_count(out, KTAP_FAIL);
	skip = ktap_count(out, KTAP_SKIP);
	if (pass != out->marker_pass || fail_n != out->marker_fail ||
	    skip != out->marker_skip) {
		fail(p, p->lineno,
		     "completeness marker says pass=%ld fail=%ld skip=%ld but the output has pass=%ld fail=%ld skip=%ld",
		     out->marker_pass, out->marker_fail, out->marker_skip,
		     pass, fail_n, skip);
		return;
	}
	p->marker_seen = 1;
	diag_discard(p, &p->levels[0].pending);
}

/* Keep the first reason: later ones are usually consequences. */
static void on_infra(struct parser *p, const char *c)
{
	const char *s = skip_spaces(c + strlen(RCGATE_INFRA));

	if (p->out->infra_reason != NULL)
		return;
	p->infra_line = p->lineno;
	p->out->infra_reason = dup_n(s, strlen(s));
	if (p->out->infra_reason == NULL)
		oom(p);
}

static void on_diag(struct parser *p, int d, const char *c)
{
	const char *text = c[1] == ' ' ? c + 2 : c + 1;
	struct level *lvl;

	if (p->depth < 0 || p->marker_seen) {
		p->out->ignored_lines++;
		return;
	}
	if (has_prefix(c, SUBTEST)) {
		const char *name = skip_spaces(c + strlen(SUBTEST));
		size_t n = name_span(name);

		if (n == 0 || name[n] != '\0') {
			fail(p, p->lineno, "bad subtest name \"%.64s\"", name);
			return;
		}
		if (d == p->depth + 1) {
			if (open_level(p, d) < 0)
				return;
		}
		lvl = &p->levels[p->depth];
		if (d == p->depth && d > 0 && lvl->name == NULL &&
		    lvl->plan < 0 && lvl->seen == 0) {
			lvl->name = dup_n(name, n);
			if (lvl->name == NULL)
				oom(p);
			return;
		}
		/* Otherwise it is just a diagnostic that looks like one. */
	}
	if (d == 0 && p->depth == 0 && p->levels[0].plan < 0 &&
	    has_prefix(c, RCGATE_UTS) && p->out->uts_version == NULL) {
		const char *v = c + strlen(RCGATE_UTS);

		p->out->uts_version = dup_n(v, strlen(v));
		if (p->out->uts_version == NULL)
			oom(p);
		return;
	}
	if (d == 0 && p->depth == 0 && p->levels[0].plan < 0 &&
	    has_prefix(c, RCGATE_AGENT_INFO) && p->out->agent_info == NULL) {
		const char *v = c + strlen(RCGATE_AGENT_INFO);

		p->out->agent_info = dup_n(v, strlen(v));
		if (p->out->agent_info == NULL)
			oom(p);
		return;
	}
	if (d > p->depth) {
		p->out->ignored_lines++;
		return;
	}
	/* The agent's timing of the next result: data, not a diagnostic
	 * (it would make every run's signature differ). */
	if (has_prefix(c, RCGATE_TIME_MS)) {
		const char *s = skip_spaces(c + strlen(RCGATE_TIME_MS));
		long ms;

		if (parse_digits(&s, MAX_MARKER_VALUE, &ms) == 0 && *s == '\0') {
			p->levels[d].pending_ms = ms;
			return;
		}
	}
	if (diag_append(p, &p->levels[d].pending, text) < 0)
		oom(p);
}

/*
 * One line, already stripped of NULs, trailing CR and blanks, capped and
 * made printable. cut says it had no terminating newline.
 */
static void on_line(struct parser *p, const char *s, int cut)
{
	size_t indent = strspn(s, " ");
	const char *c = s + indent;
	int d;

	if (has_prefix(c, RCGATE_INFRA))
		on_infra(p, c);
	if (p->failed)
		return;
	if (*c == '\0' || indent % 4 != 0 || indent / 4 > KTAP_MAX_DEPTH + 1) {
		p->out->ignored_lines++;
		return;
	}
	d = (int)(indent / 4);
	if (has_prefix(c, RCGATE_INFRA))
		return;
	/*
	 * A last line without its newline may be cut anywhere ("ok 3 odi"):
	 * only the marker is looked at, to say so. The output is incomplete
	 * either way, since nothing can follow the marker.
	 */
	if (cut && !has_prefix(c, RCGATE_MARKER)) {
		p->out->ignored_lines++;
		return;
	}
	if (has_prefix(c, "KTAP version ") || has_prefix(c, "TAP version "))
		on_header(p, d, c);
	else if (has_prefix(c, "1..") && c[3] >= '0' && c[3] <= '9')
		on_plan(p, d, c);
	else if (has_prefix(c, "ok ") || has_prefix(c, "not ok ") ||
		 strcmp(c, "ok") == 0 || strcmp(c, "not ok") == 0)
		on_result(p, d, c);
	else if (has_prefix(c, RCGATE_MARKER) &&
		 (c[strlen(RCGATE_MARKER)] == ' ' ||
		  c[strlen(RCGATE_MARKER)] == '\0'))
		on_marker(p, d, c, cut);
	else if (c[0] == '#')
		on_diag(p, d, c);
	else
		p->out->ignored_lines++;
}

static void finish(struct parser *p)
{
	struct ktap_report *out = p->out;
	struct level *lvl;

	if (p->failed)
		return;
	if (p->depth < 0) {
		fail(p, 0, "no KTAP header in %zu lines of output", out->lines);
		return;
	}
	if (out->infra_reason != NULL) {
		fail(p, p->infra_line,
		     "agent reported an infrastructure failure: %s",
		     out->infra_reason);
		return;
	}
	lvl = &p->levels[p->depth];
	if (p->depth > 0) {
		if (lvl->plan >= 0)
			fail(p, 0,
			     "output ends after line %zu inside subtest \"%s\" at depth %d, after %ld of %ld results",
			     out->lines, lvl->name ? lvl->name : "?", p->depth,
			     lvl->seen, lvl->plan);
		else
			fail(p, 0,
			     "output ends after line %zu inside subtest \"%s\" at depth %d, after %ld results",
			     out->lines, lvl->name ? lvl->name : "?", p->depth,
			     lvl->seen);
		return;
	}
	if (lvl->plan < 0 || lvl->seen != lvl->plan) {
		fail(p, 0,
		     "output ends after line %zu with %ld of %ld planned top-level results",
		     out->lines, lvl->seen, lvl->plan < 0 ? 0 : lvl->plan);
		return;
	}
	if (!p->marker_seen)
		fail(p, 0,
		     "output ends after line %zu without the completeness marker",
		     out->lines);
}

/*
 * Copy one raw line into line[] the way on_line() wants it. Returns its
 * length.
 */
static size_t clean_line(struct parser *p, const char *raw, size_t n,
			 char line[KTAP_MAX_LINE + 1])
{
	size_t len = 0;
	int truncated = 0;

	for (size_t i = 0; i < n; i++) {
		if (raw[i] == '\0') {
			p->out->nul_bytes++;
			continue;
		}
		if (len == KTAP_MAX_LINE) {
			truncated = 1;
			continue;
		}
		line[len++] = raw[i];
	}
	if (truncated)
		p->out->truncated_lines++;
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
			   line[len - 1] == '\t'))
		len--;
	line[len] = '\0';
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)line[i];

		if (ch == '\t')
			line[i] = ' ';
		else if (ch < 0x20 || ch >= 0x7f)
			line[i] = '?';
	}
	return len;
}

int ktap_parse(const char *buf, size_t len, struct ktap_report *out)
{
	struct parser p;
	char line[KTAP_MAX_LINE + 1];
	size_t pos = 0, oversize = 0;

	if (out == NULL)
		return -1;
	memset(out, 0, sizeof(*out));
	memset(&p, 0, sizeof(p));
	p.out = out;
	p.depth = -1;
	if (buf == NULL && len > 0) {
		fail(&p, 0, "no input buffer");
		return -1;
	}
	/* Parse what fits so the caller still sees early results. */
	if (len > KTAP_MAX_INPUT) {
		oversize = len;
		len = KTAP_MAX_INPUT;
	}
	while (pos < len) {
		const char *start = buf + pos;
		const char *nl = memchr(start, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - start) : len - pos;

		p.lineno++;
		out->lines++;
		clean_line(&p, start, n, line);
		on_line(&p, line, nl == NULL);
		pos += n + (nl ? 1 : 0);
	}
	if (oversize)
		fail(&p, 0, "output is %zu bytes, more than the %u byte cap",
		     oversize, KTAP_MAX_INPUT);
	finish(&p);
	/*
	 * Results inside a level that never closed still get the names of
	 * the levels around them where those are known, so partial output
	 * reads "ext4.write_seq_512" like complete output does.
	 */
	while (p.depth >= 0) {
		struct level *lvl = &p.levels[p.depth];

		if (p.depth > 0 && lvl->name != NULL &&
		    prefix_paths(&p, lvl->first, lvl->name) < 0)
			oom(&p);
		close_level(&p);
	}
	out->complete = out->error == NULL;
	return out->complete ? 0 : -1;
}

void ktap_report_free(struct ktap_report *out)
{
	if (out == NULL)
		return;
	for (size_t i = 0; i < out->nresults; i++) {
		free(out->results[i].path);
		free(out->results[i].diagnostic);
		free(out->results[i].directive_reason);
	}
	free(out->results);
	if (out->error != oom_message)
		free(out->error);
	free(out->infra_reason);
	free(out->agent_info);
	free(out->uts_version);
	memset(out, 0, sizeof(*out));
}

const char *ktap_status_name(enum ktap_status status)
{
	static const char *const names[] = {
		[KTAP_PASS] = "PASS",
		[KTAP_FAIL] = "FAIL",
		[KTAP_SKIP] = "SKIP",
		[KTAP_XFAIL] = "XFAIL",
	};

	if ((unsigned int)status >= sizeof(names) / sizeof(names[0]))
		return "?";
	return names[status];
}

int ktap_count(const struct ktap_report *report, enum ktap_status status)
{
	int n = 0;

	if (report == NULL)
		return 0;
	for (size_t i = 0; i < report->nresults; i++)
		if (!report->results[i].is_suite &&
		    report->results[i].status == status)
			n++;
	return n;
}

const struct ktap_result *ktap_find(const struct ktap_report *report,
				    const char *path)
{
	if (report == NULL || path == NULL)
		return NULL;
	for (size_t i = 0; i < report->nresults; i++)
		if (strcmp(report->results[i].path, path) == 0)
			return &report->results[i];
	return NULL;
}
