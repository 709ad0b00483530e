/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * followup.c - the mails after the rc's report, composed with reply.c's
 * helpers (report_internal.h): the bisection follow-up (the culprit as the
 * series' patch and as git show, the bisection log, its prerequisites),
 * the follow-up of a regression triaged invalid, and the regzbot mails of
 * a regression that shipped in a stable release.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <glib.h>
#include <jansson.h>

#include "base/base.h"
#include "store/store.h"
#include "intake/intake.h"
#include "report/report.h"
#include "report_internal.h"

/* git bisect log's shape: each step's commit and verdict, in order. */
static void bisection_log(GString *s, json_t *steps, const char *good,
			  const char *bad)
{
	size_t i;
	json_t *st;

	if (json_array_size(steps) == 0)
		return;
	g_string_append(s, "\nBisection log:\n");
	g_string_append_printf(s, "  git bisect start %.12s %.12s\n", bad, good);
	json_array_foreach(steps, i, st) {
		const char *commit = json_string_value(json_object_get(st, "git_commit")),
			*status = json_string_value(json_object_get(st, "status")),
			*state = json_string_value(json_object_get(st, "state"));
		const char *verdict = status == NULL ? "skip" :
			strcmp(status, "fail") == 0 ? "bad" :
			strcmp(status, "pass") == 0 ? "good" : "skip";

		if (commit == NULL || state == NULL || strcmp(state, "done") != 0)
			continue;
		g_string_append_printf(s, "  git bisect %-4s %.12s\n", verdict,
				       commit);
	}
}

/* The revert check in KernelCI's form: "revert: PASS (reverting ... on
 * top of 6.1.64-rc1 makes ... pass)"; "revert on arm64: ..." for each
 * target (arch) when several bisected to the same commit. */
static void revert_line(GString *s, const char *arch, const char *state,
			const char *msg)
{
	const char *word = state == NULL ? NULL
		: strcmp(state, "pass") == 0 ? "PASS"
		: strcmp(state, "fail") == 0 ? "FAIL"
		: strcmp(state, "conflict") == 0 ? "does not apply"
		: strcmp(state, "infra") == 0 ? "not checked" : NULL;
	gchar *line;

	if (word == NULL)
		return;
	line = g_strdup_printf("revert%s%s: %s%s%s%s", arch != NULL ? " on " : "",
			       arch != NULL ? arch : "", word,
			       msg != NULL ? " (" : "", msg != NULL ? msg : "",
			       msg != NULL ? ")" : "");
	report_wrap(s, line, "  ", WRAP_DROP_LEAD);
	g_free(line);
}

/* Which of a group's rows an arch list names (group_arches, unexplained). */
enum pick { PICK_BISECTED, PICK_FOLLOWERS, PICK_UNEXPLAINED };

static int picked(const json_t *g, enum pick pick)
{
	int follower = json_is_integer(json_object_get(g, "lead"));
	const char *rs = json_string_value(json_object_get(g, "revert_state"));

	switch (pick) {
	case PICK_BISECTED:
		return !follower;
	case PICK_FOLLOWERS:
		return follower;
	case PICK_UNEXPLAINED:
		return follower && rs != NULL && strcmp(rs, "fail") == 0;
	}
	return 0;
}

/* "x86_64", or "x86_64 and arm64", "x86_64, arm64 and arm": the kernel
 * arches of the picked rows of group (the rc's that found one culprit).
 * Caller g_free's ("" none). */
static gchar *arch_list(const json_t *group, enum pick pick)
{
	GString *a = g_string_new(NULL);
	size_t i, n = 0, k = 0;
	json_t *g;

	json_array_foreach(group, i, g)
		n += picked(g, pick);
	json_array_foreach(group, i, g) {
		if (!picked(g, pick))
			continue;
		if (k++ > 0)
			g_string_append(a, k == n ? " and " : ", ");
		g_string_append(a, reply_kernel_arch(json_string_value(
				json_object_get(g, "target"))));
	}
	return g_string_free(a, FALSE);
}

/* The arches of the targets in group's rows that bisected to the culprit
 * (followers 0) or that took it from another target's bisection and only
 * reverted it (followers 1, rows with a lead: 017-bisect-lead.sql);
 * target alone when there is no group. Caller g_free's ("" none). */
static gchar *group_arches(const json_t *group, const char *target,
			   int followers)
{
	if (json_array_size(group) < 2)
		return g_strdup(followers ? "" : reply_kernel_arch(target));
	return arch_list(group, followers ? PICK_FOLLOWERS : PICK_BISECTED);
}

/* The arches of group's followers whose revert check failed: the culprit
 * does not explain their failure, so they bisect on their own next
 * (store_review.c). Caller g_free's ("" none). */
static gchar *unexplained(const json_t *group)
{
	return arch_list(group, PICK_UNEXPLAINED);
}

/* bisect.c's words, one paragraph a line, wrapped here. */
static void paragraphs(GString *s, const char *text)
{
	for (const char *p = text; p != NULL && *p; ) {
		size_t n = strcspn(p, "\n");
		gchar *para = g_strndup(p, n);

		report_wrap(s, para, "", WRAP_DROP_LEAD);
		g_free(para);
		p += n;
		if (*p)
			p++;
	}
}

/*
 * The culprit as the series under review names it: when the bisected
 * range is exactly the series ("[PATCH 6.1 000/372]": 372 commits from
 * the previous release's tag to the rc's "Linux 6.1.64-rc1"), the k-th
 * commit is patch k. Into out, or "" when that cannot be said.
 */
static void series_name(const char *ann_subject, long long ncommits,
			long long index, const char *subject, char *out,
			size_t len)
{
	const char *p = ann_subject != NULL ? strstr(ann_subject, "[PATCH ") : NULL;
	const char *slash;
	long total;
	char *end;

	out[0] = '\0';
	if (p == NULL || subject == NULL || index <= 0)
		return;
	slash = strstr(p, " 000/");
	if (slash == NULL)
		return;
	total = strtol(slash + 5, &end, 10);
	if (*end != ']' || total != ncommits || index > total)
		return;
	snprintf(out, len, "%.*s %0*lld/%ld] %s", (int)(slash - p), p,
		 (int)(end - (slash + 5)), index, total, subject);
}

/* The prerequisite search's answer in Greg's idiom ("Possible
 * dependencies:", then "<12-hex> ("subject")" and why), or why none; nothing
 * while it is pending or was never asked. */
static void possible_dependencies(GString *s, const char *pstate,
				  const char *prereqs, const char *pmsg)
{
	json_t *list, *c;
	gchar *line;
	size_t i;

	if (pstate == NULL || strcmp(pstate, "pending") == 0)
		return;
	list = prereqs != NULL ? json_loads(prereqs, 0, NULL) : NULL;
	if (json_array_size(list) == 0) {
		line = g_strdup_printf("No possible dependencies found: %s.",
				       pmsg != NULL ? pmsg : "none");
		g_string_append_c(s, '\n');
		report_wrap(s, line, "", WRAP_DROP_LEAD);
		g_free(line);
		json_decref(list);
		return;
	}
	g_string_append(s, "\nPossible dependencies (a hint, not a finding:"
			" upstream commits this branch\nlacks that touch what the"
			" culprit touches, best match first):\n\n");
	json_array_foreach(list, i, c) {
		const char *why = json_string_value(json_object_get(c, "why"));

		g_string_append_printf(s, "    %.12s (\"%s\")\n",
			json_string_value(json_object_get(c, "commit")),
			json_string_value(json_object_get(c, "subject")));
		while (why != NULL && *why != '\0') {
			size_t n = strcspn(why, ";");

			g_string_append_printf(s, "        %.*s\n", (int)n, why);
			why += n;
			while (*why == ';' || *why == ' ')
				why++;
		}
	}
	json_decref(list);
}

/* The follow-up's text for a finished bisection row (Q_BISECTION): the
 * culprit as the series names it and as git show heads it, how it was
 * found, its possible dependencies in Greg's idiom, the page; or why the
 * bisection gave no answer. Caller g_free's. */
static char *bisection_text(const json_t *b, const struct config *cfg,
			    const char *base, json_t *steps,
			    const char *ann_subject, const char *patch_id,
			    const json_t *group)
{
#define F(k) json_string_value(json_object_get(b, k))
	const char *state = F("state"), *upstream = F("culprit_upstream"),
		*others = F("same_cause_in"), *prereqs = F("prerequisites"),
		*pmsg = F("prereq_message"), *pstate = F("prereq_state");
	long long reg = (long long)json_integer_value(json_object_get(b, "regression_id"));
	GString *s = g_string_new(NULL);
	gchar *line;

	if (state != NULL && strcmp(state, "found") == 0) {
		gchar *arches = group_arches(group, F("target"), 0);

		line = g_strdup_printf("%s bisected the failure of %s on %s in"
				       " %s to this commit:", cfg->farm,
				       F("test"), arches, F("version"));
		g_free(arches);
		report_wrap(s, line, "", WRAP_DROP_LEAD);
		g_free(line);
		{
			char patch[512];

			series_name(ann_subject,
				    json_integer_value(json_object_get(b, "commits")),
				    json_integer_value(json_object_get(b, "culprit_index")),
				    F("culprit_subject"), patch, sizeof(patch));
			if (patch[0] != '\0') {
				g_string_append_c(s, '\n');
				report_wrap(s, patch, "    ", WRAP_DROP_LEAD);
				/* the patch as the list has it, when it
				 * reached intake; nothing is guessed */
				if (patch_id != NULL)
					g_string_append_printf(s, "    https://"
						"lore.kernel.org/r/%s/\n", patch_id);
			}
		}
		g_string_append_printf(s, "\ncommit %s\n", F("culprit"));
		if (F("culprit_author") != NULL)
			g_string_append_printf(s, "Author: %s\n", F("culprit_author"));
		if (F("culprit_date") != NULL)
			g_string_append_printf(s, "Date:   %s\n", F("culprit_date"));
		g_string_append_printf(s, "\n    %s\n", F("culprit_subject") ?
				       F("culprit_subject") : "");
		if (upstream != NULL)
			g_string_append_printf(s, "\n    commit %s upstream.\n",
					       upstream);
		line = g_strdup_printf("Bisected between %.12s (good) and %.12s"
				       " (the rc): %lld commit%s, %lld build%s.",
				       F("good"), F("bad"),
				       (long long)json_integer_value(json_object_get(b, "commits")),
				       json_integer_value(json_object_get(b, "commits")) == 1 ? "" : "s",
				       (long long)json_integer_value(json_object_get(b, "steps")),
				       json_integer_value(json_object_get(b, "steps")) == 1 ? "" : "s");
		g_string_append_c(s, '\n');
		report_wrap(s, line, "", WRAP_DROP_LEAD);
		g_free(line);
		bisection_log(s, steps, F("good"), F("bad"));
		g_string_append_c(s, '\n');
		/* Found after another target's culprit did not explain the
		 * failure here: the message says which (store_review.c). */
		if (F("message") != NULL) {
			paragraphs(s, F("message"));
			g_string_append_c(s, '\n');
		}
		arches = group_arches(group, F("target"), 1);
		if (arches[0] != '\0') {
			line = g_strdup_printf("The same failure on %s was not"
					       " bisected again: the culprit was"
					       " reverted there too.", arches);
			report_wrap(s, line, "", WRAP_DROP_LEAD);
			g_free(line);
			g_string_append_c(s, '\n');
		}
		g_free(arches);
		if (json_array_size(group) > 1) {
			size_t i;
			json_t *g;

			json_array_foreach(group, i, g)
				revert_line(s, reply_kernel_arch(json_string_value(
						json_object_get(g, "target"))),
					    json_string_value(json_object_get(g, "revert_state")),
					    json_string_value(json_object_get(g, "revert_message")));
			arches = unexplained(group);
			if (arches[0] != '\0') {
				line = g_strdup_printf("On %s reverting it does not"
						       " fix the failure: it has a"
						       " cause of its own there, bisected"
						       " next, with a follow-up of its"
						       " own.", arches);
				g_string_append_c(s, '\n');
				report_wrap(s, line, "", WRAP_DROP_LEAD);
				g_free(line);
			}
			g_free(arches);
		} else
			revert_line(s, NULL, F("revert_state"), F("revert_message"));
		if (upstream != NULL && others != NULL) {
			line = g_strdup_printf("The same upstream commit was found"
					       " by bisection in %s: one cause, in"
					       " every branch that carries it.",
					       others);
			g_string_append_c(s, '\n');
			report_wrap(s, line, "", WRAP_DROP_LEAD);
			g_free(line);
		}
	} else
		paragraphs(s, F("message"));
	possible_dependencies(s, pstate, prereqs, pmsg);
	g_string_append_printf(s, "\nDetails and logs:\n  %s/#/regression/%lld\n",
			       base, reg);
	g_string_append_printf(s, "\n-- \n%s test farm, %s\nContact: %s\n",
			       cfg->farm, base, cfg->mail_from);
#undef F
	return g_string_free(s, FALSE);
}

/* The follow-up of bisection id (group: the rows of the rc's bisections
 * that found the same culprit, NULL for one without a culprit). */
static void followup_one(struct store *st, const struct config *cfg,
			 int64_t id, const json_t *group)
{
	struct rowset rels = { 0 };
	const struct release_row *rel;
	char err[512], date[64], parent[512], patch_id[512];
	struct announcement ann;
	struct report_mail rm = { 0 };
	struct mail_in m = { 0 };
	const char *base = reply_link_base(cfg, NULL), *culprit;
	json_t *rows, *b, *p, *steps;
	char *text, *email = NULL, *hook = NULL, msgid[512] = "";
	gchar *cc = NULL;

	rows = store_rows(st, Q_BISECTION, err, sizeof(err), "i", id);
	b = json_array_get(rows, 0);
	if (b == NULL) {
		log_err("bisection %lld: no follow-up: %s", (long long)id,
			rows == NULL ? err : "no such bisection");
		json_decref(rows);
		return;
	}
	/* Said once, with everything: the follow-up waits for the revert
	 * check and the prerequisite search (each calls here when done). */
	{
		const char *rs = json_string_value(json_object_get(b, "revert_state")),
			*ps = json_string_value(json_object_get(b, "prereq_state"));

		if ((rs != NULL && strcmp(rs, "pending") == 0) ||
		    (ps != NULL && strcmp(ps, "pending") == 0)) {
			json_decref(rows);
			return;
		}
	}
	m.release_id = json_integer_value(json_object_get(b, "release_id"));
	rel = reply_release_of(st, m.release_id, &rels);
	steps = store_rows(st, Q_BISECT_STEPS, err, sizeof(err), "i", id);
	{
		long k = (long)json_integer_value(json_object_get(b, "culprit_index"));

		if (rel == NULL || k <= 0 ||
		    store_series_patch_id(st, rel->id, k, patch_id,
					  sizeof(patch_id), err, sizeof(err)) <= 0)
			patch_id[0] = '\0';
	}
	text = bisection_text(b, cfg, base, steps,
			      rel != NULL ? rel->subject : NULL,
			      patch_id[0] != '\0' ? patch_id : NULL, group);
	json_decref(steps);
	p = json_pack("{s:s,s:s,s:O,s:s}", "event", "bisection", "version",
		      json_string_value(json_object_get(b, "version")),
		      "regression", json_object_get(b, "regression_id"), "text",
		      text);
	hook = p != NULL ? json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(p);
	m.kind = "bisection";
	/* One follow-up per culprit and rc: two targets that bisect to the
	 * same commit say it once. Without a culprit, one per bisection. */
	culprit = json_string_value(json_object_get(b, "culprit"));
	m.about = -id;
	if (culprit != NULL && strlen(culprit) >= 12) {
		char abbrev[13];

		snprintf(abbrev, sizeof(abbrev), "%.12s", culprit);
		m.about = (int64_t)strtoll(abbrev, NULL, 16);
	}
	if (rel != NULL && reply_announcement(cfg, rel, &ann)) {
		time_rfc2822(time(NULL), date);
		rm.ann = &ann;
		rm.farm = cfg->farm;
		rm.version = rel->version;
		rm.kind = "bisection";
		rm.from = cfg->mail_from;
		rm.date = date;
		rm.parent_id = reply_report_id(st, rel->id, parent, sizeof(parent)) ?
				       parent : NULL;
		/* Those who can fix it: the culprit's author and the people
		 * who signed it off or reviewed it. */
		cc = g_strdup_printf("%s%s%s",
			json_string_value(json_object_get(b, "culprit_author")) ?
			json_string_value(json_object_get(b, "culprit_author")) : "",
			json_string_value(json_object_get(b, "culprit_author")) &&
			json_string_value(json_object_get(b, "culprit_people")) ? ", " : "",
			json_string_value(json_object_get(b, "culprit_people")) ?
			json_string_value(json_object_get(b, "culprit_people")) : "");
		rm.cc = cc;
		rm.body = text;
		email = report_mail_compose(&rm, msgid, sizeof(msgid), err,
					    sizeof(err));
		if (email == NULL)
			log_warn("bisection %lld: no mail: %s", (long long)id, err);
		announce_free(&ann);
	}
	m.message_id = msgid;
	m.email = email;
	if (reply_send_mail(st, cfg, &m, hook, err, sizeof(err)) < 0)
		log_err("bisection %lld: %s", (long long)id, err);
	free(email);
	free(hook);
	g_free(text);
	g_free(cc);
	rowset_free(&rels);
	json_decref(rows);
}

static int same(const json_t *row, const char *key, const char *value)
{
	const char *v = json_string_value(json_object_get(row, key));

	return v != NULL && value != NULL && strcmp(v, value) == 0;
}

/*
 * One follow-up per culprit and rc: it waits until every bisection of the
 * rc has its answer (and every one that found the culprit its revert
 * check and prerequisite search), then names the culprit once with each
 * target that bisected to it and each one's revert check. Whichever
 * bisection ends last sends it; the mail table's key (kind and culprit)
 * keeps it to one. A bisection without a culprit says why on its own.
 */
void reply_bisection(struct store *st, const struct config *cfg, int64_t id)
{
	char err[512];
	json_t *all = store_rows(st, Q_BISECTION_SIBLINGS, err, sizeof(err), "i",
				 id), *r;
	size_t i;
	int running = 0;

	if (all == NULL) {
		log_err("bisection %lld: no follow-up: %s", (long long)id, err);
		return;
	}
	json_array_foreach(all, i, r) {
		if (json_integer_value(json_object_get(r, "id")) == id &&
		    json_string_value(json_object_get(r, "culprit")) == NULL)
			followup_one(st, cfg, id, NULL);	/* why none */
		running |= same(r, "state", "running");
	}
	if (running) {
		json_decref(all);	/* its answer may be the same culprit */
		return;
	}
	json_array_foreach(all, i, r) {
		const char *culprit = json_string_value(json_object_get(r, "culprit"));
		json_t *group, *g;
		size_t k;
		int first = 1, pending = 0;

		if (culprit == NULL)
			continue;
		group = json_array();
		json_array_foreach(all, k, g) {
			if (!same(g, "culprit", culprit))
				continue;
			if (k < i)
				first = 0;	/* said with its first */
			pending |= same(g, "revert_state", "pending") ||
				   same(g, "prereq_state", "pending");
			json_array_append(group, g);
		}
		if (first && !pending)
			followup_one(st, cfg, json_integer_value(json_object_get(r,
				     "id")), group);
		json_decref(group);
	}
	json_decref(all);
}

/* ---- regzbot ---- */

int reply_regzbot_range(const char *released_as, char *out, size_t len)
{
	unsigned major, minor, patch;
	char tail;

	if (released_as == NULL ||
	    sscanf(released_as, "%u.%u.%u%c", &major, &minor, &patch, &tail) != 3 ||
	    patch == 0)
		return -1;
	if (patch == 1)
		snprintf(out, len, "v%u.%u..v%u.%u.1", major, minor, major, minor);
	else
		snprintf(out, len, "v%u.%u.%u..v%u.%u.%u", major, minor,
			 patch - 1, major, minor, patch);
	return 0;
}

/* "6.1.64-rc1" -> "6.1.64" */
static void release_of_rc(const char *rc, char *out, size_t len)
{
	snprintf(out, len, "%.*s", (int)strcspn(rc, "-"), rc);
}

/* The regzbot thread's subject: the first regression by name, how many
 * more; caller frees. */
static char *regzbot_subject(const char *released, const char *test,
			     const char *target, size_t n)
{
	char *s = NULL;
	int rc;

	if (n <= 1)
		rc = asprintf(&s, "[REGRESSION] %s: %s fails on %s", released,
			      test, reply_kernel_arch(target));
	else
		rc = asprintf(&s, "[REGRESSION] %s: %s and %zu other test%s fail",
			      released, test, n - 1, n > 2 ? "s" : "");
	return rc < 0 ? NULL : s;
}

/* The stable maintainer and list of the rc's announcement, for Cc (the
 * lists alone when the announcement is unverified). */
static char *maintainer_cc(const struct announcement *ann)
{
	const char *from = ann->unverified ? "" : ann->from;
	char *s = NULL;

	if (asprintf(&s, "%s%s%s", from, *from && ann->to && *ann->to ? ", " : "",
		     ann->to ? ann->to : "") < 0)
		return NULL;
	return s;
}

/* Composes and sends one regzbot mail about the regressions rids of
 * release_id's rc, in its thread, under parent (may be NULL); kind's
 * mail goes out once per rc. */
static int regzbot_mail(struct store *st, const struct config *cfg,
			const char *kind, int64_t release_id,
			const int64_t *rids, size_t nrids, const char *subject,
			const char *parent, const char *body)
{
	struct rowset rels = { 0 };
	const struct release_row *rel = reply_release_of(st, release_id, &rels);
	struct announcement ann = { 0 };
	struct report_mail rm = { 0 };
	struct mail_in m = { 0 };
	char date[64], err[512], msgid[512] = "";
	char *email = NULL, *cc = NULL;
	int rc = -1;

	if (rel == NULL || !reply_announcement(cfg, rel, &ann)) {
		log_warn("mail kind=%s release=%lld: no announcement to point at",
			 kind, (long long)release_id);
		goto out;
	}
	time_rfc2822(time(NULL), date);
	cc = maintainer_cc(&ann);
	rm.ann = &ann;
	rm.farm = cfg->farm;
	rm.version = rel->version;
	rm.kind = kind;
	rm.from = cfg->mail_from;
	rm.date = date;
	rm.parent_id = parent;
	rm.to = cfg->regressions_list;
	rm.cc = cc;
	rm.subject = subject;
	rm.body = body;
	email = report_mail_compose(&rm, msgid, sizeof(msgid), err, sizeof(err));
	if (email == NULL) {
		log_warn("mail kind=%s release=%lld: %s", kind,
			 (long long)release_id, err);
		goto out;
	}
	m.kind = kind;
	m.release_id = release_id;
	m.message_id = msgid;
	m.email = email;
	m.also_regressions = rids;
	m.nalso = nrids;
	rc = reply_send_mail(st, cfg, &m, NULL, err, sizeof(err));
	if (rc < 0)
		log_err("mail kind=%s release=%lld: %s", kind,
			(long long)release_id, err);
out:
	free(email);
	free(cc);
	announce_free(&ann);
	rowset_free(&rels);
	return rc;
}

/* The regzbot report of the rows [from, to) of one rc (Q_SHIPPED_
 * REGRESSIONS); 1 if queued. */
static int regzbot_report(struct store *st, const struct config *cfg,
			  json_t *rows, size_t from, size_t to)
{
	json_t *first = json_array_get(rows, from);
	const char *version = json_string_value(json_object_get(first, "version"));
	int64_t relid = json_integer_value(json_object_get(first, "release_id"));
	const char *base = reply_link_base(cfg, NULL);
	char released[64], range[96], parent[512];
	int64_t *rids = calloc(to - from + 1, sizeof(*rids));
	GString *body = g_string_new(NULL);
	char *subject = NULL, *sig = reply_signature(cfg, base);
	gchar *line;
	int have_report, rc = 0;

	snprintf(released, sizeof(released), "%s",
		 json_string_value(json_object_get(first, "released_as")));
	if (rids == NULL || reply_regzbot_range(released, range, sizeof(range)) < 0)
		goto out;
	have_report = reply_report_id(st, relid, parent, sizeof(parent));
	line = g_strdup_printf("%s was released with %s that %s found in %s,"
			       " during its review, and that %s still open on"
			       " the branch:", released, to - from > 1 ?
			       "regressions" : "a regression", cfg->farm, version,
			       to - from > 1 ? "are" : "is");
	report_wrap(body, line, "", WRAP_DROP_LEAD);
	g_free(line);
	g_string_append_c(body, '\n');
	for (size_t i = from; i < to; i++) {
		json_t *r = json_array_get(rows, i);
		const char *diag = json_string_value(json_object_get(r, "diagnostic"));
		int lines = 0;

		rids[i - from] = json_integer_value(json_object_get(r, "regression_id"));
		g_string_append_printf(body, "* %s, %s\n",
			reply_kernel_arch(json_string_value(json_object_get(r, "target"))),
			json_string_value(json_object_get(r, "test")));
		/* The first lines of the diagnostic; the page has the rest. */
		for (const char *p = diag; p != NULL && *p && lines < 3; ) {
			size_t k = strcspn(p, "\n");

			if (k > 0) {
				g_string_append_printf(body, "    %.*s\n",
						       (int)(k > 74 ? 74 : k), p);
				lines++;
			}
			p += k;
			if (*p)
				p++;
		}
	}
	line = g_strdup_printf("The %s on the release before it and %s from %s"
			       " on.", to - from > 1 ? "tests pass" : "test passes",
			       to - from > 1 ? "fail" : "fails", version);
	g_string_append_c(body, '\n');
	report_wrap(body, line, "", WRAP_DROP_LEAD);
	g_free(line);
	if (have_report)
		g_string_append_printf(body, "The report in the review thread:\n"
				       "  https://lore.kernel.org/r/%s/\n", parent);
	g_string_append_printf(body, "Details and logs:\n  %s/#/release/%s\n",
			       base, version);
	/* regzbot reads a command from a paragraph of its own, and release
	 * tags stay valid where stable-rc commit ids are rewritten. */
	g_string_append_printf(body, "\n#regzbot introduced: %s\n", range);
	if (sig != NULL)
		g_string_append_printf(body, "\n-- \n%s\n", sig);
	subject = regzbot_subject(released,
				  json_string_value(json_object_get(first, "test")),
				  json_string_value(json_object_get(first, "target")),
				  to - from);
	if (subject != NULL)
		rc = regzbot_mail(st, cfg, "regzbot", relid, rids, to - from,
				  subject, have_report ? parent : NULL,
				  body->str) > 0;
out:
	free(rids);
	free(subject);
	free(sig);
	g_string_free(body, TRUE);
	return rc;
}

int reply_shipped(struct store *st, const struct config *cfg)
{
	char err[512];
	json_t *rows = store_rows(st, Q_SHIPPED_REGRESSIONS, err, sizeof(err), "");
	size_t i = 0, n;
	int sent = 0;

	if (rows == NULL) {
		log_err("shipped regressions: %s", err);
		return -1;
	}
	/* One report per rc that shipped, with all its open regressions:
	 * one cause usually fails several tests. */
	n = json_array_size(rows);
	while (i < n) {
		int64_t relid = json_integer_value(json_object_get(
			json_array_get(rows, i), "release_id"));
		size_t j = i + 1;

		while (j < n && json_integer_value(json_object_get(
			json_array_get(rows, j), "release_id")) == relid)
			j++;
		sent += regzbot_report(st, cfg, rows, i, j);
		i = j;
	}
	json_decref(rows);
	return sent;
}

/* The Message-ID of the regzbot report rcgate sent about rid; 1 found. */
static int regzbot_report_of(struct store *st, int64_t rid, char *id,
			     size_t idlen)
{
	char err[256];
	json_t *rows = store_rows(st, Q_REGRESSION_MAILS, err, sizeof(err),
				  "i", rid), *r;
	size_t i;
	int found = 0;

	json_array_foreach(rows, i, r) {
		if (strcmp(json_string_value(json_object_get(r, "kind")),
			   "regzbot") != 0)
			continue;
		snprintf(id, idlen, "%s",
			 json_string_value(json_object_get(r, "message_id")));
		found = id[0] != '\0';
		break;
	}
	json_decref(rows);
	return found;
}

/*
 * After rid was fixed (fixed_in set) or triaged invalid (why set): once no
 * regression of its regzbot report is open on the rc's branch, regzbot is
 * told in that thread, once: "#regzbot invalid:" if all were invalid,
 * else "#regzbot resolve:". (regzbot's "fix:" wants the fixing commit,
 * which a passing rc does not name.)
 */
static void regzbot_settle(struct store *st, const struct config *cfg,
			   int64_t rid, const char *fixed_in, const char *why)
{
	char id[512], err[256], released[64];
	const char *base = reply_link_base(cfg, NULL), *kind;
	json_t *rows, *r, *first;
	size_t i, invalid = 0, n;
	GString *body;
	char *subject = NULL, *re = NULL, *sig;
	gchar *line;

	if (!regzbot_report_of(st, rid, id, sizeof(id)))
		return;
	rows = store_rows(st, Q_REGZBOT_GROUP, err, sizeof(err), "s", id);
	n = json_array_size(rows);
	json_array_foreach(rows, i, r) {
		const char *state = json_string_value(json_object_get(r, "state")),
			*bstate = json_string_value(json_object_get(r, "branch_state"));

		if (strcmp(state, "invalid") == 0)
			invalid++;
		else if (strcmp(state, "fixed") != 0 &&
			 (bstate == NULL || strcmp(bstate, "fixed") != 0)) {
			json_decref(rows);
			return;		/* one is still open */
		}
	}
	if (n == 0) {
		json_decref(rows);
		return;
	}
	first = json_array_get(rows, 0);
	release_of_rc(json_string_value(json_object_get(first, "version")),
		      released, sizeof(released));
	subject = regzbot_subject(released,
				  json_string_value(json_object_get(first, "test")),
				  json_string_value(json_object_get(first, "target")),
				  n);
	body = g_string_new(NULL);
	if (invalid == n) {
		kind = "regzbot-invalid";
		line = g_strdup_printf("%s not a regression after all: %s.",
				       n > 1 ? "These are" : "This is",
				       why != NULL ? why : "triaged invalid");
		report_wrap(body, line, "", WRAP_DROP_LEAD);
		g_string_append_printf(body, "\n#regzbot invalid: %s\n",
				       why != NULL ? why : "triaged invalid");
	} else {
		kind = "regzbot-fix";
		if (fixed_in != NULL)
			line = g_strdup_printf("Fixed in %s: the %s there again.",
					       fixed_in, n > 1 ? "tests pass" :
					       "test passes");
		else
			line = g_strdup_printf("The last open one was triaged as"
					       " not a regression (%s); the rest"
					       " are fixed.", why ? why : "invalid");
		report_wrap(body, line, "", WRAP_DROP_LEAD);
		if (fixed_in != NULL)
			g_string_append_printf(body, "\n#regzbot resolve: fixed in"
					       " %s\n", fixed_in);
		else
			g_string_append(body, "\n#regzbot resolve: fixed, the"
					" rest not a regression\n");
	}
	g_free(line);
	g_string_append_printf(body, "\nDetails:\n  %s/#/regression/%lld\n", base,
			       (long long)rid);
	sig = reply_signature(cfg, base);
	if (sig != NULL)
		g_string_append_printf(body, "\n-- \n%s\n", sig);
	free(sig);
	if (subject != NULL && asprintf(&re, "Re: %s", subject) >= 0)
		regzbot_mail(st, cfg, kind,
			     json_integer_value(json_object_get(first, "release_id")),
			     NULL, 0, re, id, body->str);
	free(re);
	free(subject);
	g_string_free(body, TRUE);
	json_decref(rows);
}

void reply_fixed(struct store *st, const struct config *cfg,
		 int64_t regression_id, const char *version)
{
	regzbot_settle(st, cfg, regression_id, version, NULL);
}

/* ---- triage ---- */

/* Row fields of regression rid (test, target) into the buffers. */
static int regression_names(struct store *st, int64_t rid, char *test,
			    size_t tlen, char *target, size_t glen)
{
	char err[256];
	json_t *rows = store_rows(st, Q_REGRESSION, err, sizeof(err), "i", rid),
		*r = json_array_get(rows, 0);
	int ok = r != NULL;

	if (ok) {
		snprintf(test, tlen, "%s", json_string_value(json_object_get(r, "test")));
		snprintf(target, glen, "%s",
			 json_string_value(json_object_get(r, "target")));
	}
	json_decref(rows);
	return ok;
}

/* "reason" cut to one line of at most 200 bytes, for a command. */
static void one_line(const char *in, char *out, size_t len)
{
	size_t k = 0;

	for (; in != NULL && *in && k + 1 < len && k < 200; in++)
		out[k++] = (unsigned char)*in < 0x20 ? ' ' : *in;
	out[k] = '\0';
}

void reply_triage(struct store *st, const struct config *cfg,
		  int64_t regression_id, const char *state, const char *reason)
{
	char err[512], test[256], target[64], why[256], date[64];
	const char *base = reply_link_base(cfg, NULL);
	json_t *rows, *r;
	size_t i;

	if (state == NULL || strcmp(state, "invalid") != 0)
		return;
	if (!regression_names(st, regression_id, test, sizeof(test), target,
			      sizeof(target)))
		return;
	one_line(reason != NULL && *reason ? reason : "not a regression", why,
		 sizeof(why));
	rows = store_rows(st, Q_REGRESSION_MAILS, err, sizeof(err), "i",
			  regression_id);
	time_rfc2822(time(NULL), date);
	json_array_foreach(rows, i, r) {
		const char *kind = json_string_value(json_object_get(r, "kind")),
			*parent = json_string_value(json_object_get(r, "message_id"));
		int64_t relid = json_integer_value(json_object_get(r, "release_id"));
		struct rowset rels = { 0 };
		const struct release_row *rel;
		struct announcement ann;
		struct report_mail rm = { 0 };
		struct mail_in m = { 0 };
		GString *body;
		gchar *line;
		char *email, *sig, msgid[512] = "";

		if (strcmp(kind, "report") != 0 || parent == NULL || !*parent)
			continue;
		rel = reply_release_of(st, relid, &rels);
		if (rel == NULL || !reply_announcement(cfg, rel, &ann)) {
			rowset_free(&rels);
			continue;
		}
		body = g_string_new(NULL);
		line = g_strdup_printf("About the regression %s reported above for"
				       " %s:", cfg->farm, rel->version);
		report_wrap(body, line, "", WRAP_DROP_LEAD);
		g_free(line);
		g_string_append_printf(body, "\n* %s, %s\n\n", reply_kernel_arch(target),
				       test);
		line = g_strdup_printf("It was triaged as not a regression of the"
				       " rc (%s). Please disregard it: it no longer"
				       " counts against %s.", why, rel->version);
		report_wrap(body, line, "", WRAP_DROP_LEAD);
		g_free(line);
		g_string_append_printf(body, "\nDetails:\n  %s/#/regression/%lld\n",
				       base, (long long)regression_id);
		sig = reply_signature(cfg, base);
		if (sig != NULL)
			g_string_append_printf(body, "\n-- \n%s\n", sig);
		free(sig);
		rm.ann = &ann;
		rm.farm = cfg->farm;
		rm.version = rel->version;
		rm.kind = "invalid";
		rm.from = cfg->mail_from;
		rm.date = date;
		rm.parent_id = parent;
		rm.body = body->str;
		email = report_mail_compose(&rm, msgid, sizeof(msgid), err,
					    sizeof(err));
		if (email != NULL) {
			m.kind = "invalid";
			m.release_id = relid;
			m.regression_id = regression_id;
			m.message_id = msgid;
			m.email = email;
			if (reply_send_mail(st, cfg, &m, NULL, err, sizeof(err)) < 0)
				log_err("regression %lld: %s",
					(long long)regression_id, err);
		} else {
			log_warn("regression %lld: no follow-up: %s",
				 (long long)regression_id, err);
		}
		free(email);
		g_string_free(body, TRUE);
		announce_free(&ann);
		rowset_free(&rels);
	}
	json_decref(rows);
	regzbot_settle(st, cfg, regression_id, NULL, why);
}
