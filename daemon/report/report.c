/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report.c - renders a per-rc test report as plain text and as the RFC 822
 * reply to the rc's announcement. The reply is built with GMime, which owns
 * header folding and encoding; this file only decides what to say.
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

/* Appends s as one line's worth of text: control characters become spaces. */
static void put_clean(GString *out, const char *s)
{
	for (; s && *s; s++)
		g_string_append_c(out, (unsigned char)*s < 0x20 || *s == 0x7f ?
					       ' ' : *s);
}

/* A malloc'd copy of s with control characters made spaces; NULL if s is. */
static char *clean_dup(const char *s)
{
	char *c;

	if (!s || !(c = strdup(s)))
		return NULL;
	for (char *p = c; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	return c;
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
	GPtrArray *broken = g_ptr_array_new();

	/* Targets' order first, so the lines read like the summary. */
	for (size_t t = 0; t < in->ntargets; t++) {
		const char *name = in->targets[t].target ?
					   in->targets[t].target : "?";

		for (size_t r = 0; r < in->nregressions; r++)
			if (regression_counts(&in->regressions[r]) &&
			    in->regressions[r].target &&
			    strcmp(in->regressions[r].target, name) == 0)
				add_unique(bad, arch_name(name));
		if (target_failed_to_run(&in->targets[t]))
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
	if (in->late)
		g_string_append(out, "This report comes after the review"
				" deadline.\n");
	g_ptr_array_free(bad, TRUE);
	g_ptr_array_free(ok, TRUE);
	g_ptr_array_free(broken, TRUE);
}

#define REPORT_WIDTH 78	/* mail readers wrap longer lines */

/* line, broken at blanks into lines of at most REPORT_WIDTH columns, the
 * continuations indented; a word longer than that (a URL) stays whole. */
static void put_wrapped(GString *out, const char *line, const char *indent)
{
	size_t col = 0, ilen = strlen(indent);
	const char *p = line;
	int first = 1;

	while (*p == ' ') {
		g_string_append_c(out, *p++);
		col++;
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
	if (a) {
		put_item(out, "git", a->git_tree);
		put_item(out, "git branch", a->git_branch);
		put_item(out, "patch", a->patch_url);
		if (a->message_id[0]) {
			g_string_append(out, "* announcement: <");
			put_clean(out, a->message_id);
			g_string_append(out, ">\n");
		}
		put_item(out, "deadline", a->deadline);
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
			put_wrapped(out, l->str, "      ");
			g_string_free(l, TRUE);
		}
		g_free(line);
		if (!nl)
			break;
		p = nl + 1;
	}
}

static void put_regression(GString *out, const struct report_input *in,
			   const struct report_regression *r)
{
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
	if (r->url) {
		g_string_append(out, "  ");
		put_clean(out, r->url);
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
		put_wrapped(out, line->str, "    ");
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
		put_wrapped(out, l->str, "    ");
		g_string_free(l, TRUE);
		if (f->url) {
			g_string_append(out, "  ");
			put_clean(out, f->url);
			g_string_append_c(out, '\n');
		}
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

		put_clean(line, arch_name(t->target ? t->target : "?"));
		if (target_failed_to_run(t)) {
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
		put_wrapped(out, line->str, "    ");
		g_string_free(line, TRUE);
	}
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
		put_clean(line, arch_name(t->target ? t->target : "?"));
		g_string_append_printf(line,
				       ": %ld total, %ld passed, %ld failed, %ld skipped",
				       t->pass + t->fail + t->skip, t->pass,
				       t->fail, t->skip);
		put_wrapped(out, line->str, "    ");
		g_string_free(line, TRUE);
		if (t->fail > 0) {
			if (t->job_url) {
				g_string_append(out, "  details: ");
				put_clean(out, t->job_url);
				g_string_append_c(out, '\n');
			}
			if (t->log_url) {
				g_string_append(out, "  log: ");
				put_clean(out, t->log_url);
				g_string_append_c(out, '\n');
			}
			if (t->job_id > 0)
				g_string_append_printf(out, "  rerun: rcgatectl retry"
						       " %ld\n", t->job_id);
		}
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

static void put_signature(GString *out, const char *signature)
{
	if (!signature || !*signature)
		return;
	g_string_append(out, "\n-- \n");
	for (const char *p = signature; *p; ) {
		size_t n = strcspn(p, "\n");
		gchar *line = g_strndup(p, n);

		put_clean(out, line);
		g_string_append_c(out, '\n');
		g_free(line);
		p += n;
		if (*p)
			p++;
	}
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
	out = g_string_new("Results from ");
	put_clean(out, in->farm);
	g_string_append(out, ".\n\n");
	put_verdict(out, in);
	put_build(out, in);
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

/* Parses a (cleaned) address list; NULL with err if it holds no address. */
static InternetAddressList *parse_addresses(const char *s, const char *what,
					    char *err, size_t errlen)
{
	char *clean = clean_dup(s);
	InternetAddressList *list = clean ?
					    internet_address_list_parse(NULL, clean) :
					    NULL;

	free(clean);
	if (!list || internet_address_list_length(list) == 0) {
		if (list)
			g_object_unref(list);
		errf(err, errlen, "%s has no usable address", what);
		return NULL;
	}
	return list;
}

/* Keeps the characters a Message-ID's parts may safely hold. */
static void put_id_part(GString *out, const char *s)
{
	for (; s && *s; s++)
		if (isalnum((unsigned char)*s) || *s == '.' || *s == '-' ||
		    *s == '_')
			g_string_append_c(out, *s);
}

/* 32-bit FNV-1a: distinguishes two reports with the same date. */
static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

/* The domain of the first mailbox in list, or NULL. */
static const char *first_domain(InternetAddressList *list)
{
	InternetAddress *a = internet_address_list_get_address(list, 0);
	const char *addr, *at;

	if (!a || !INTERNET_ADDRESS_IS_MAILBOX(a))
		return NULL;
	addr = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a));
	at = addr ? strrchr(addr, '@') : NULL;
	return at && at[1] ? at + 1 : NULL;
}

/* Whether list holds a mailbox with addr (case-insensitive). */
static int list_has(InternetAddressList *list, const char *addr)
{
	int n = internet_address_list_length(list);

	for (int i = 0; i < n; i++) {
		InternetAddress *a = internet_address_list_get_address(list, i);
		const char *have;

		if (!INTERNET_ADDRESS_IS_MAILBOX(a))
			continue;
		have = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a));
		if (have && g_ascii_strcasecmp(have, addr) == 0)
			return 1;
	}
	return 0;
}

/* Appends src's addresses to dst, leaving out any already in dst or in
 * also (may be NULL): a reply-all names each recipient once. */
static void append_unique(InternetAddressList *dst, InternetAddressList *src,
			  InternetAddressList *also)
{
	int n = internet_address_list_length(src);

	for (int i = 0; i < n; i++) {
		InternetAddress *a = internet_address_list_get_address(src, i);
		const char *addr = INTERNET_ADDRESS_IS_MAILBOX(a)
			? internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a))
			: NULL;

		if (addr && (list_has(dst, addr) || (also && list_has(also, addr))))
			continue;
		internet_address_list_add(dst, a);
	}
}

/* Adds the (cleaned) address list s to the message's list of type, leaving
 * out addresses already there or in also (may be NULL). */
static int add_addresses(GMimeMessage *msg, GMimeAddressType type,
			 const char *s, const char *what,
			 InternetAddressList *also, char *err, size_t errlen)
{
	InternetAddressList *list;

	if (!s || !*s)
		return 0;
	if (!(list = parse_addresses(s, what, err, errlen)))
		return -1;
	append_unique(g_mime_message_get_addresses(msg, type), list, also);
	g_object_unref(list);
	return 0;
}

/* farm.version[.kind].stamp.hash@domain: the same mail, the same id. */
static gchar *make_message_id(const struct report_mail *m, GDateTime *date,
			      const char *domain)
{
	GString *s = g_string_new(NULL);
	GDateTime *utc = g_date_time_to_utc(date);
	gchar *stamp = utc ? g_date_time_format(utc, "%Y%m%dT%H%M%SZ") : NULL;

	if (utc)
		g_date_time_unref(utc);
	put_id_part(s, m->farm);
	g_string_append_c(s, '.');
	put_id_part(s, m->version);
	if (m->kind) {
		g_string_append_c(s, '.');
		put_id_part(s, m->kind);
	}
	g_string_append_printf(s, ".%s.%08x@", stamp ? stamp : "0",
			       fnv1a(m->body));
	g_free(stamp);
	put_id_part(s, domain);
	return g_string_free(s, FALSE);
}

/* body with every REPORT_ID_MARK replaced by id; caller g_free's. */
static gchar *fill_id(const char *body, const char *id)
{
	GString *s = g_string_new(NULL);
	const char *p = body, *hit;

	while ((hit = strstr(p, REPORT_ID_MARK)) != NULL) {
		g_string_append_len(s, p, hit - p);
		g_string_append(s, id);
		p = hit + strlen(REPORT_ID_MARK);
	}
	g_string_append(s, p);
	return g_string_free(s, FALSE);
}

/* Builds the message; returns it (caller unrefs) or NULL with err set. */
static GMimeMessage *build(const struct report_mail *m, char *id,
			   size_t idlen, char *err, size_t errlen)
{
	const struct announcement *a = m->ann;
	InternetAddressList *list;
	GMimeMessage *msg;
	GMimeTextPart *part;
	GMimeDataWrapper *content;
	GMimeStream *stream;
	GDateTime *date;
	GString *s;
	const char *domain;
	gchar *msgid, *body;
	char *clean;

	date = g_mime_utils_header_decode_date(m->date);
	if (!date) {
		errf(err, errlen, "date \"%.64s\" is not an RFC 2822 date",
			m->date);
		return NULL;
	}
	msg = g_mime_message_new(TRUE);
	g_mime_message_set_date(msg, date);

	if (!(list = parse_addresses(m->from, "from", err, errlen)))
		goto fail;
	domain = first_domain(list);
	if (!domain) {
		g_object_unref(list);
		errf(err, errlen, "from has no mailbox with a domain");
		goto fail;
	}
	msgid = make_message_id(m, date, domain);
	g_mime_message_set_message_id(msg, msgid);
	if (id)
		snprintf(id, idlen, "%s", msgid);
	body = fill_id(m->body, msgid);
	g_free(msgid);
	internet_address_list_append(
		g_mime_message_get_addresses(msg, GMIME_ADDRESS_TYPE_FROM), list);
	g_object_unref(list);

	if (!m->to) {
		/* Reply-all: To the sender and the announcement's To, Cc the
		 * rest, each address once (the maintainer Cc's himself on
		 * announcements). */
		if (!*a->from) {
			errf(err, errlen, "announcement From has no usable"
			     " address");
			goto fail_body;
		}
		if (add_addresses(msg, GMIME_ADDRESS_TYPE_TO, a->from,
				  "announcement From", NULL, err, errlen) < 0 ||
		    add_addresses(msg, GMIME_ADDRESS_TYPE_TO, a->to,
				  "announcement To", NULL, err, errlen) < 0)
			goto fail_body;
	} else if (add_addresses(msg, GMIME_ADDRESS_TYPE_TO, m->to, "to", NULL,
				 err, errlen) < 0) {
		goto fail_body;
	}
	list = g_mime_message_get_addresses(msg, GMIME_ADDRESS_TYPE_TO);
	if (add_addresses(msg, GMIME_ADDRESS_TYPE_CC, m->cc, "cc", list, err,
			  errlen) < 0 ||
	    (m->to && m->reply_all &&
	     (add_addresses(msg, GMIME_ADDRESS_TYPE_CC, a->from,
			    "announcement From", list, err, errlen) < 0 ||
	      add_addresses(msg, GMIME_ADDRESS_TYPE_CC, a->to,
			    "announcement To", list, err, errlen) < 0)) ||
	    ((!m->to || m->reply_all) &&
	     add_addresses(msg, GMIME_ADDRESS_TYPE_CC, a->cc, "announcement Cc",
			   list, err, errlen) < 0))
		goto fail_body;

	clean = clean_dup(m->subject ? m->subject : a->subject);
	if (!clean) {
		errf(err, errlen, "out of memory");
		goto fail_body;
	}
	s = g_string_new(NULL);
	if (!m->subject && g_ascii_strncasecmp(g_strchug(clean), "re:", 3) != 0)
		g_string_append(s, "Re: ");
	g_string_append(s, m->subject ? g_strchug(clean) : clean);
	free(clean);
	g_mime_message_set_subject(msg, s->str, "utf-8");
	g_string_free(s, TRUE);

	/* Threaded under the announcement, or under rcgate's own mail in
	 * that thread: References names the whole chain. */
	s = g_string_new("<");
	g_string_append(s, m->parent_id ? m->parent_id : a->message_id);
	g_string_append_c(s, '>');
	g_mime_object_set_header(GMIME_OBJECT(msg), "In-Reply-To", s->str,
				 NULL);
	g_string_assign(s, "<");
	g_string_append(s, a->message_id);
	g_string_append_c(s, '>');
	if (m->parent_id)
		g_string_append_printf(s, " <%s>", m->parent_id);
	g_mime_object_set_header(GMIME_OBJECT(msg), "References", s->str,
				 NULL);
	g_string_free(s, TRUE);

	/*
	 * Not g_mime_text_part_set_text(): it converts the text to the
	 * smallest charset that fits (iso-8859-1 for "D\u00edaz"), and the
	 * body is promised as UTF-8. The 7bit constraint keeps the mail
	 * valid for SMTP servers without 8BITMIME: an ASCII report (the
	 * usual case) stays plain, anything else becomes quoted-printable.
	 */
	part = g_mime_text_part_new_with_subtype("plain");
	g_mime_text_part_set_charset(part, "utf-8");
	stream = g_mime_stream_mem_new_with_buffer(body, strlen(body));
	content = g_mime_data_wrapper_new_with_stream(
		stream, GMIME_CONTENT_ENCODING_DEFAULT);
	g_object_unref(stream);
	g_mime_part_set_content(GMIME_PART(part), content);
	g_object_unref(content);
	g_mime_part_set_content_encoding(
		GMIME_PART(part),
		g_mime_part_get_best_content_encoding(
			GMIME_PART(part), GMIME_ENCODING_CONSTRAINT_7BIT));
	g_mime_message_set_mime_part(msg, GMIME_OBJECT(part));
	g_object_unref(part);
	g_free(body);
	g_date_time_unref(date);
	return msg;
fail_body:
	g_free(body);
fail:
	g_date_time_unref(date);
	g_object_unref(msg);
	return NULL;
}

char *report_mail_compose(const struct report_mail *m, char *id, size_t idlen,
			  char *err, size_t errlen)
{
	GMimeMessage *msg;
	gchar *text;
	char *ret;

	errf(err, errlen, "%s", "");
	if (!m || !m->ann || !m->farm || !m->version || !m->from || !m->date ||
	    !m->body) {
		errf(err, errlen, "a mail needs its announcement, farm,"
		     " version, from, date and body");
		return NULL;
	}
	if (!announce_valid_message_id(m->ann->message_id) ||
	    (m->parent_id && !announce_valid_message_id(m->parent_id))) {
		errf(err, errlen, "%s Message-ID is empty or has spaces, <>"
		     " or control characters",
		     announce_valid_message_id(m->ann->message_id) ?
			     "parent" : "announcement");
		return NULL;
	}
	announce_init();
	/* Whatever a body quotes (a commit subject, a build's error line),
	 * no control character but newline and tab reaches a mail: an ESC
	 * would drive the reader's terminal. */
	{
		struct report_mail clean_m = *m;
		char *clean = strdup(m->body);

		if (clean == NULL) {
			errf(err, errlen, "out of memory");
			return NULL;
		}
		for (char *p = clean; *p; p++)
			if (((unsigned char)*p < 0x20 && *p != '\n' &&
			     *p != '\t') || *p == 0x7f)
				*p = ' ';
		clean_m.body = clean;
		msg = build(&clean_m, id, idlen, err, errlen);
		free(clean);
	}
	if (!msg)
		return NULL;
	text = g_mime_object_to_string(GMIME_OBJECT(msg), NULL);
	g_object_unref(msg);
	if (!text) {
		errf(err, errlen, "GMime could not write the message");
		return NULL;
	}
	ret = strdup(text);
	g_free(text);
	if (!ret)
		errf(err, errlen, "out of memory");
	return ret;
}

int report_message_id(const char *email, char *buf, size_t len)
{
	const char *p = email;

	while (p && *p && *p != '\n') {
		if (g_ascii_strncasecmp(p, "Message-Id: <", 13) == 0) {
			size_t n = strcspn(p + 13, ">\n");

			if (p[13 + n] != '>' || n == 0 || n >= len)
				return -1;
			memcpy(buf, p + 13, n);
			buf[n] = '\0';
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
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
