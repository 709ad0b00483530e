/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report.c - renders a per-rc test report as plain text and as the RFC 822
 * reply to the rc's announcement (mail.c composes the message; this file
 * only decides what to say).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmime/gmime.h>

#include "base/base.h"
#include "intake/intake.h"
#include "report/report.h"
#include "report_internal.h"
#include "../../agent/catalogue.h"

/* Appends s as one line's worth of text: control characters become spaces. */
static void put_clean(GString *out, const char *s)
{
	for (; s && *s; s++)
		g_string_append_c(out, (unsigned char)*s < 0x20 || *s == 0x7f ?
					       ' ' : *s);
}

/* One name per target everywhere in the report: the kernel's ARCH name,
 * as the list's other farms write it (arm, not armv7); other spellings of
 * the same machines are mapped to it. */
static const char *arch_name(const char *target)
{
	static const struct {
		const char *alias, *target;
	} map[] = {
		{ "armv7", "arm" },
		{ "armhf", "arm" },
		{ "aarch64", "arm64" },
		{ "amd64", "x86_64" },
		{ "i686", "i386" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(target, map[i].alias) == 0)
			return map[i].target;
	return target;
}

static int regression_counts(const struct report_regression *r)
{
	return !r->state || (strcmp(r->state, "fixed") != 0 &&
			     strcmp(r->state, "invalid") != 0);
}

static int target_failed_to_run(const struct report_target *t)
{
	return !t->state || strcmp(t->state, "done") != 0 || t->error;
}

/* A job not over yet: its results come in the full report. */
static int target_still_running(const struct report_target *t)
{
	return t->state && job_state_find(t->state) && !job_state_final(t->state);
}

/* Adds name to the list unless present: arch names of several targets may coincide. */
static void add_unique(GPtrArray *list, const char *name)
{
	for (guint i = 0; i < list->len; i++)
		if (strcmp(g_ptr_array_index(list, i), name) == 0)
			return;
	g_ptr_array_add(list, (gpointer)name);
}

/* "a", "a and b", "a, b, and c" */
static void put_list(GString *out, GPtrArray *list)
{
	for (guint i = 0; i < list->len; i++) {
		if (i > 0)
			g_string_append(out, list->len == 2 ? " and " :
					i + 1 == list->len ? ", and " : ", ");
		put_clean(out, g_ptr_array_index(list, i));
	}
}

static void put_verdict(GString *out, const struct report_input *in)
{
	GPtrArray *bad = g_ptr_array_new(), *ok = g_ptr_array_new();
	GPtrArray *broken = g_ptr_array_new(), *running = g_ptr_array_new();

	/* Targets' order first, so the lines read like the summary. */
	for (size_t t = 0; t < in->ntargets; t++) {
		const char *name = in->targets[t].target ?
					   in->targets[t].target : "?";

		for (size_t r = 0; r < in->nregressions; r++)
			if (regression_counts(&in->regressions[r]) &&
			    in->regressions[r].target &&
			    strcmp(in->regressions[r].target, name) == 0)
				add_unique(bad, arch_name(name));
		if (target_still_running(&in->targets[t]))
			add_unique(running, arch_name(name));
		else if (target_failed_to_run(&in->targets[t]))
			add_unique(broken, arch_name(name));
		else
			add_unique(ok, arch_name(name));
	}
	for (size_t r = 0; r < in->nregressions; r++)
		if (regression_counts(&in->regressions[r]))
			add_unique(bad, arch_name(in->regressions[r].target ?
						  in->regressions[r].target :
						  "?"));

	if (bad->len > 0) {
		g_string_append(out, "Regressions on ");
		put_list(out, bad);
		g_string_append(out, ".\n");
	} else if (ok->len > 0) {
		g_string_append(out, "No regressions on ");
		put_list(out, ok);
		g_string_append(out, ".\n");
	} else {
		g_string_append(out, "No test results.\n");
	}
	if (broken->len > 0) {
		g_string_append(out, "Not tested on ");
		put_list(out, broken);
		g_string_append(out, " (infrastructure error).\n");
	}
	if (running->len > 0) {
		GString *l = g_string_new("Still being tested on ");

		put_list(l, running);
		g_string_append(l, ": this report is partial, sent as soon as a"
				" regression was confirmed; the full one follows"
				" when testing ends.");
		report_wrap(out, l->str, "", WRAP_DROP_LEAD);
		g_string_free(l, TRUE);
	}
	if (in->late)
		g_string_append(out, "This report comes after the review"
				" deadline.\n");
	g_ptr_array_free(running, TRUE);
	g_ptr_array_free(bad, TRUE);
	g_ptr_array_free(ok, TRUE);
	g_ptr_array_free(broken, TRUE);
}


/* Whether q and r are counted regressions bisected to the same culprit
 * by the same rc's bisection: one line of put_culprits. */
static int same_culprit(const struct report_regression *q,
			const struct report_regression *r)
{
	return regression_counts(q) && regression_counts(r) &&
	       q->culprit != NULL && r->culprit != NULL &&
	       strcmp(q->culprit, r->culprit) == 0 &&
	       g_strcmp0(q->culprit_in, r->culprit_in) == 0;
}

/* The first bad commit of a counted regression that has one, grouped by
 * (culprit, the rc whose bisection found it) in the regressions' order;
 * fills archs with the group's arch names. NULL past the last group. */
static const struct report_regression *
culprit_group(const struct report_input *in, size_t *from, GPtrArray *archs)
{
	const struct report_regression *g = NULL;

	g_ptr_array_set_size(archs, 0);
	for (; *from < in->nregressions && g == NULL; (*from)++) {
		const struct report_regression *r = &in->regressions[*from];
		int seen = 0;

		if (!regression_counts(r) || r->culprit == NULL)
			continue;
		for (size_t k = 0; k < *from && !seen; k++)
			seen = same_culprit(&in->regressions[k], r);
		if (!seen)
			g = r;
	}
	for (size_t k = 0; g != NULL && k < in->nregressions; k++) {
		const struct report_regression *r = &in->regressions[k];

		if (same_culprit(r, g))
			add_unique(archs, arch_name(r->target ? r->target : "?"));
	}
	return g;
}

/* What the bisections found, so that a reader of this mail alone (the
 * full report may come after the follow-up that names the culprit, and
 * the first report of a branch after another branch's bisection) sees
 * the cause: "Bisected on x86_64 and i386 to <commit> ("subject")." */
static void put_culprits(GString *out, const struct report_input *in)
{
	GPtrArray *archs = g_ptr_array_new();
	const struct report_regression *g;
	size_t from = 0;

	while ((g = culprit_group(in, &from, archs)) != NULL) {
		GString *l = g_string_new(NULL);
		char id[13];
		int here = g->culprit_in == NULL ||
			   strcmp(g->culprit_in, in->version) == 0;

		if (here) {
			g_string_append(l, "Bisected on ");
			put_list(l, archs);
			g_string_append(l, " to ");
		} else {
			g_string_append(l, "The same regressions on ");
			put_list(l, archs);
			g_string_append(l, " were bisected in ");
			put_clean(l, g->culprit_in);
			g_string_append(l, " to ");
		}
		snprintf(id, sizeof(id), "%s", g->culprit);
		put_clean(l, id);
		if (g->culprit_subject != NULL) {
			g_string_append(l, " (\"");
			put_clean(l, g->culprit_subject);
			g_string_append(l, "\")");
		}
		g_string_append_c(l, '.');
		report_wrap(out, l->str, "", WRAP_DROP_LEAD);
		g_string_free(l, TRUE);
	}
	g_ptr_array_free(archs, TRUE);
}


void report_wrap(GString *out, const char *line, const char *indent,
		 enum wrap_lead lead)
{
	size_t col = 0, ilen = strlen(indent);
	const char *p = line;
	int first = 1;

	while (*p == ' ') {
		if (lead == WRAP_KEEP_LEAD) {
			g_string_append_c(out, ' ');
			col++;
		}
		p++;
	}
	while (*p) {
		size_t w = strcspn(p, " ");

		if (!first && col + 1 + w > REPORT_WIDTH) {
			g_string_append_c(out, '\n');
			g_string_append(out, indent);
			col = ilen;
		} else if (!first) {
			g_string_append_c(out, ' ');
			col++;
		}
		g_string_append_len(out, p, (gssize)w);
		col += w;
		first = 0;
		p += w;
		while (*p == ' ')
			p++;
	}
	g_string_append_c(out, '\n');
}

/* "<prefix><value>\n" for an indented detail line, nothing if value is. */
static void put_detail(GString *out, const char *prefix, const char *value)
{
	if (!value)
		return;
	g_string_append(out, prefix);
	put_clean(out, value);
	g_string_append_c(out, '\n');
}

static void put_item(GString *out, const char *label, const char *value)
{
	if (!value || !*value)
		return;
	g_string_append_printf(out, "* %s: ", label);
	put_clean(out, value);
	g_string_append_c(out, '\n');
}

static void put_build(GString *out, const struct report_input *in)
{
	const struct announcement *a = in->ann;

	g_string_append(out, "\n## Build\n");
	put_item(out, "kernel", in->version);
	put_item(out, "commit", in->commit);
	put_item(out, "git describe", in->describe);
	if (a) {
		put_item(out, "git", a->git_tree);
		put_item(out, "git branch", a->git_branch);
		put_item(out, "patch", a->patch_url);
		if (a->message_id[0]) {
			g_string_append(out, "* announcement: <");
			put_clean(out, a->message_id);
			g_string_append(out, ">\n");
		}
		if (a->unverified) {
			/* Two lines within 78 columns: the reason is the
			 * verifier's and may be long. */
			char why[67];
			const char *dkim = a->dkim[0] ? a->dkim : "not checked";

			g_string_append(out, "* announcement unverified: this mail"
					" goes to the lists alone\n  (DKIM: ");
			snprintf(why, sizeof(why), "%.66s", dkim);
			put_clean(out, why);
			g_string_append(out, strlen(dkim) >= sizeof(why) ? "...)\n" :
									  ")\n");
		}
		put_item(out, "deadline", a->deadline);
	}
}

/* A target's line's name: its arch, and for a rerun the job it reruns
 * (the same kernel booted again, so a reader does not take it for a
 * kernel or a target of its own). */
static void put_target(GString *line, const struct report_target *t)
{
	put_clean(line, arch_name(t->target ? t->target : "?"));
	if (t->rerun_of > 0)
		g_string_append_printf(line, " (rerun of job %ld)", t->rerun_of);
}

/* The kernels rcgate built itself: per target its compiler and .config,
 * what a reader needs to build the same one. Nothing for posted kernels,
 * nor for reruns (they boot what their job built). */
static void put_build_summary(GString *out, const struct report_input *in)
{
	int any = 0;

	for (size_t i = 0; i < in->ntargets; i++) {
		const struct report_target *t = &in->targets[i];
		GString *line;

		if ((!t->compiler && !t->config_url) || t->rerun_of > 0)
			continue;
		if (!any++)
			g_string_append(out, "\n## Build Summary\n");
		line = g_string_new("* ");
		put_clean(line, arch_name(t->target ? t->target : "?"));
		g_string_append(line, ": ");
		put_clean(line, t->compiler ? t->compiler : "compiler unknown");
		report_wrap(out, line->str, "    ", WRAP_KEEP_LEAD);
		g_string_free(line, TRUE);
		put_detail(out, "  config: ", t->config_url);
	}
}

/* Each non-empty line of a diagnostic, indented under its regression. */
static void put_diagnostic(GString *out, const char *diag)
{
	const char *p = diag;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		gchar *line = g_strndup(p, len);

		g_strchomp(line);
		if (*line) {
			GString *l = g_string_new("    ");

			put_clean(l, line);
			report_wrap(out, l->str, "      ", WRAP_KEEP_LEAD);
			g_string_free(l, TRUE);
		}
		g_free(line);
		if (!nl)
			break;
		p = nl + 1;
	}
}

/* The catalogue row of a KTAP result ("xfs.write_seq_512" -> "write_seq":
 * the filesystem prefix off, then catalogue.h's rule), or NULL when the
 * catalogue has no row for it. */
static const char *catalogue_row(const char *test)
{
#define ROW_NAME(n, f, c, w, x) n,
	static const char *const rows[] = { RCGATE_TEST_CATALOGUE(ROW_NAME) };
#undef ROW_NAME
	const size_t nrows = sizeof(rows) / sizeof(rows[0]);
	const char *name = strchr(test, '.');
	size_t cut;

	name = name != NULL ? name + 1 : test;
	cut = rcgate_catalogue_family_len(name);
	for (size_t i = 0; i < nrows; i++)
		if (strcmp(rows[i], name) == 0)
			return rows[i];
	for (size_t i = 0; i < nrows; i++)
		if (strlen(rows[i]) == cut && strncmp(rows[i], name, cut) == 0)
			return rows[i];
	return NULL;
}

static void put_regression(GString *out, const struct report_input *in,
			   const struct report_regression *r)
{
	const char *row;
	int first = 1;

	g_string_append(out, "* ");
	put_clean(out, arch_name(r->target ? r->target : "?"));
	g_string_append(out, ", ");
	put_clean(out, r->test ? r->test : "?");
	g_string_append_c(out, '\n');
	put_diagnostic(out, r->diagnostic);
	/* Only what a reader acts on: a resolved one says how it ended. */
	if (!regression_counts(r))
		g_string_append(out, strcmp(r->state, "invalid") == 0 ?
				"  (triaged invalid: not a regression)\n" :
				"  (fixed)\n");
	for (size_t i = 0; i < r->nalso; i++) {
		if (!r->also_in[i] || strcmp(r->also_in[i], in->version) == 0)
			continue;
		g_string_append(out, first ? "  also affects: " : ", ");
		put_clean(out, r->also_in[i]);
		first = 0;
	}
	if (!first)
		g_string_append_c(out, '\n');
	/* The same regression, as reported in the other rcs' threads. */
	for (size_t i = 0; r->also_links && i < r->nalso; i++) {
		if (!r->also_in[i] || !r->also_links[i] ||
		    strcmp(r->also_in[i], in->version) == 0)
			continue;
		g_string_append(out, "  reported for ");
		put_clean(out, r->also_in[i]);
		g_string_append(out, ": ");
		put_clean(out, r->also_links[i]);
		g_string_append_c(out, '\n');
	}
	put_detail(out, "  ", r->url);
	/* What the test checks and what its failure means. */
	row = r->test != NULL ? catalogue_row(r->test) : NULL;
	if (in->tests_url && row != NULL) {
		g_string_append(out, "  test: ");
		put_clean(out, in->tests_url);
		g_string_append_c(out, '#');
		put_clean(out, row);
		g_string_append_c(out, '\n');
	}
}

static void put_regressions(GString *out, const struct report_input *in)
{
	size_t counted = 0, resolved = 0;

	g_string_append(out, "\n## Test Regressions");
	if (in->baseline) {
		g_string_append(out, " (compared to ");
		put_clean(out, in->baseline);
		g_string_append(out, ")\n");
	} else {
		g_string_append(out, " (no baseline)\n");
	}
	for (size_t i = 0; i < in->nregressions; i++) {
		if (regression_counts(&in->regressions[i])) {
			put_regression(out, in, &in->regressions[i]);
			counted++;
		} else {
			resolved++;
		}
	}
	if (counted == 0)
		g_string_append(out, "None.\n");
	if (resolved == 0)
		return;
	g_string_append(out, "\n## Resolved Regressions (not counted)\n");
	for (size_t i = 0; i < in->nregressions; i++)
		if (!regression_counts(&in->regressions[i]))
			put_regression(out, in, &in->regressions[i]);
}

/* Tests the baseline passed that this rc only skipped: not a regression of
 * the code, but coverage the rc did not get, said with the skip reason so
 * a config or a missing feature can be fixed. */
static void put_lost_coverage(GString *out, const struct report_input *in)
{
	if (in->nlost == 0 || !in->baseline)
		return;
	g_string_append(out, "\n## Lost Coverage (skipped here, passed on ");
	put_clean(out, in->baseline);
	g_string_append(out, ")\n");
	for (size_t i = 0; i < in->nlost; i++) {
		const struct report_lost *l = &in->lost[i];
		GString *line = g_string_new("* ");

		put_clean(line, arch_name(l->target ? l->target : "?"));
		g_string_append(line, ": ");
		put_clean(line, l->test ? l->test : "?");
		g_string_append(line, ": ");
		put_clean(line, l->reason ? l->reason : "skipped, no reason given");
		report_wrap(out, line->str, "    ", WRAP_KEEP_LEAD);
		g_string_free(line, TRUE);
	}
}

/* LKFT's section for what the previous round reported and this rc fixes. */
static void put_fixes(GString *out, const struct report_input *in)
{
	if (in->nfixes == 0)
		return;
	g_string_append(out, "\n## Test Fixes");
	if (in->baseline) {
		g_string_append(out, " (compared to ");
		put_clean(out, in->baseline);
		g_string_append_c(out, ')');
	}
	g_string_append(out, "\nFollowing regressions from the previous round"
			" have been fixed now:\n");
	for (size_t i = 0; i < in->nfixes; i++) {
		const struct report_fix *f = &in->fixes[i];
		GString *l = g_string_new("* ");

		put_clean(l, arch_name(f->target ? f->target : "?"));
		g_string_append(l, ", ");
		put_clean(l, f->test ? f->test : "?");
		if (f->seen_in && *f->seen_in) {
			g_string_append(l, " (failed in ");
			put_clean(l, f->seen_in);
			g_string_append_c(l, ')');
		}
		report_wrap(out, l->str, "    ", WRAP_KEEP_LEAD);
		g_string_free(l, TRUE);
		put_detail(out, "  ", f->url);
	}
}

/* A job state in words a reader of the list uses. */
static const char *state_words(const char *state)
{
	if (!state)
		return "unknown";
	if (strcmp(state, "infra_error") == 0)
		return "infrastructure error";
	if (strcmp(state, "cancelled") == 0)
		return "cancelled";
	return "not finished";
}

static void put_boots(GString *out, const struct report_input *in)
{
	g_string_append(out, "\n## Boot Summary\n");
	for (size_t i = 0; i < in->ntargets; i++) {
		const struct report_target *t = &in->targets[i];
		GString *line = g_string_new("* ");

		put_target(line, t);
		if (target_still_running(t)) {
			g_string_append(line, ": still being tested");
		} else if (target_failed_to_run(t)) {
			g_string_append(line, ": not tested, ");
			g_string_append(line, state_words(t->state));
			if (t->error) {
				g_string_append(line, ": ");
				put_clean(line, t->error);
			}
		} else {
			g_string_append(line, ": booted");
			if (t->kernel) {
				g_string_append_c(line, ' ');
				put_clean(line, t->kernel);
			}
			g_string_append_printf(line, " in %.1f s", t->seconds);
		}
		report_wrap(out, line->str, "    ", WRAP_KEEP_LEAD);
		g_string_free(line, TRUE);
	}
}

/* The machine a target's guests are (the target table): what a reader
 * needs to run the kernel the same way. */
static void put_machine(GString *out, const struct report_target *t)
{
	const struct target *tt = t->target ? target_find(t->target) : NULL;

	if (tt == NULL)
		return;
	g_string_append(out, "  qemu: ");
	put_clean(out, strrchr(tt->emulator, '/') ? strrchr(tt->emulator, '/') + 1
						  : tt->emulator);
	g_string_append(out, " -machine ");
	put_clean(out, tt->machine);
	if (tt->cpu) {
		g_string_append(out, " -cpu ");
		put_clean(out, tt->cpu);
	}
	if (t->accel) {
		g_string_append(out, " -accel ");
		put_clean(out, t->accel);
	}
	g_string_append_c(out, '\n');
}

/* Per target results; one with failures says where to look and how to
 * run it again. */
static void put_summary(GString *out, const struct report_input *in)
{
	long pass = 0, fail = 0, skip = 0;

	g_string_append(out, "\n## Test result summary\n");
	for (size_t i = 0; i < in->ntargets; i++) {
		const struct report_target *t = &in->targets[i];
		GString *line;

		if (target_failed_to_run(t))
			continue;
		line = g_string_new("* ");
		put_target(line, t);
		g_string_append_printf(line,
				       ": %ld total, %ld passed, %ld failed, %ld skipped",
				       t->pass + t->fail + t->skip, t->pass,
				       t->fail, t->skip);
		report_wrap(out, line->str, "    ", WRAP_KEEP_LEAD);
		g_string_free(line, TRUE);
		if (t->fail > 0) {
			put_detail(out, "  details: ", t->job_url);
			put_detail(out, "  log: ", t->log_url);
			put_machine(out, t);
			if (t->job_id > 0)
				g_string_append_printf(out, "  rerun: rcgatectl retry"
						       " %ld\n", t->job_id);
		}
		if (t->rerun_of > 0)
			continue;	/* the total counts each kernel once */
		pass += t->pass;
		fail += t->fail;
		skip += t->skip;
	}
	g_string_append_printf(out,
			       "total: %ld, pass: %ld, fail: %ld, skip: %ld\n",
			       pass + fail + skip, pass, fail, skip);
}

static void put_links(GString *out, const struct report_input *in)
{
	if (!in->status_url)
		return;
	g_string_append(out, "\n## Links\n");
	put_item(out, "status", in->status_url);
}

/* A farm must never give Tested-by for an rc it found broken or could not test. */
static int rc_is_clean(const struct report_input *in)
{
	if (in->ntargets == 0)
		return 0;
	if (in->gate && strcmp(in->gate, "pass") != 0)
		return 0;
	for (size_t i = 0; i < in->nregressions; i++)
		if (regression_counts(&in->regressions[i]))
			return 0;
	for (size_t i = 0; i < in->ntargets; i++)
		if (target_failed_to_run(&in->targets[i]))
			return 0;
	return 1;
}

static int has_counted_regression(const struct report_input *in)
{
	for (size_t i = 0; i < in->nregressions; i++)
		if (regression_counts(&in->regressions[i]))
			return 1;
	return 0;
}

/*
 * The trailers: one bare Tested-by for a clean rc (b4 collects it for the
 * series); for a regressed one the 0-day robot's form, each line behind
 * "| " so b4 never applies them to the patches under review, the Closes
 * link naming this very mail (own_id; NULL: no Closes line).
 */
static void put_trailers(GString *out, const struct report_input *in,
			 const char *tested_by, const char *own_id)
{
	if (!tested_by)
		return;
	if (rc_is_clean(in)) {
		g_string_append(out, "\nTested-by: ");
		put_clean(out, tested_by);
		g_string_append_c(out, '\n');
		return;
	}
	if (!has_counted_regression(in))
		return;
	g_string_append(out, "\nIf a separate patch fixes a regression reported"
			" here, please add these\ntags to it (the bars keep them"
			" out of the series under review):\n| Reported-by: ");
	put_clean(out, tested_by);
	g_string_append_c(out, '\n');
	if (own_id) {
		g_string_append(out, "| Closes: https://lore.kernel.org/r/");
		put_clean(out, own_id);
		g_string_append(out, "/\n");
	}
}

/* Each line of text behind prefix (empty lines behind empty_prefix),
 * control characters made spaces. */
static void put_lines(GString *out, const char *text, const char *prefix,
		      const char *empty_prefix)
{
	for (const char *p = text; *p; ) {
		size_t n = strcspn(p, "\n");
		gchar *line = g_strndup(p, n);

		g_string_append(out, n > 0 ? prefix : empty_prefix);
		put_clean(out, line);
		g_string_append_c(out, '\n');
		g_free(line);
		p += n;
		if (*p)
			p++;
	}
}

static void put_signature(GString *out, const char *signature)
{
	if (!signature || !*signature)
		return;
	g_string_append(out, "\n-- \n");
	put_lines(out, signature, "", "");
}

/* The head of the announcement, quoted as the list's testers quote it
 * (the review cycle's paragraph and its deadline), under who wrote it. */
static void put_quote(GString *out, const struct announcement *a)
{
	GString *who;

	if (!a || !a->head[0])
		return;
	who = g_string_new(NULL);
	put_clean(who, a->from[0] ? a->from : "The announcement");
	g_string_append(who, " wrote:");
	report_wrap(out, who->str, "  ", WRAP_KEEP_LEAD);
	g_string_free(who, TRUE);
	put_lines(out, a->head, "> ", ">");
	g_string_append_c(out, '\n');
}

/* The text with the trailers given by tested_by (may be NULL); caller frees. */
static char *render(const struct report_input *in, const char *tested_by,
		    const char *own_id)
{
	GString *out;
	gchar *valid;
	char *ret;

	if (!in || !in->farm || !in->version)
		return NULL;
	out = g_string_new(NULL);
	put_quote(out, in->ann);
	g_string_append(out, "Results from ");
	put_clean(out, in->farm);
	g_string_append(out, ".\n\n");
	put_verdict(out, in);
	put_culprits(out, in);
	put_build(out, in);
	put_build_summary(out, in);
	put_regressions(out, in);
	put_lost_coverage(out, in);
	put_fixes(out, in);
	put_boots(out, in);
	put_summary(out, in);
	put_links(out, in);
	put_trailers(out, in, tested_by, own_id);
	put_signature(out, in->signature);
	/* The mail says charset=utf-8: make that true whatever came in. */
	valid = g_utf8_make_valid(out->str, (gssize)out->len);
	g_string_free(out, TRUE);
	ret = valid ? strdup(valid) : NULL;
	g_free(valid);
	return ret;
}

char *report_text(const struct report_input *in)
{
	return render(in, in ? in->tested_by : NULL, NULL);
}

char *report_email(const struct report_input *in, const char *from,
		   const char *date_rfc2822, char *err, size_t errlen)
{
	struct report_mail m = { 0 };
	char *body, *ret;

	errf(err, errlen, "%s", "");
	if (!in || !in->farm || !in->version) {
		errf(err, errlen, "report needs farm and version");
		return NULL;
	}
	if (!in->ann) {
		errf(err, errlen,
			"no announcement for %.48s: nothing to reply to",
			in->version);
		return NULL;
	}
	if (!from || !date_rfc2822) {
		errf(err, errlen, "report mail needs from and date");
		return NULL;
	}
	/* The Closes link names this mail: the mark becomes its id. */
	body = render(in, in->tested_by ? in->tested_by : from,
		      REPORT_ID_MARK);
	if (!body) {
		errf(err, errlen, "out of memory rendering the report");
		return NULL;
	}
	m.ann = in->ann;
	m.farm = in->farm;
	m.version = in->version;
	m.from = from;
	m.date = date_rfc2822;
	m.body = body;
	/* The Message-ID goes into In-Reply-To verbatim: the composer
	 * refuses one that could carry a header. */
	ret = report_mail_compose(&m, NULL, 0, err, errlen);
	free(body);
	return ret;
}
