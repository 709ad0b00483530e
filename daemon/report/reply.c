/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * reply.c - the one file that composes what rcgate sends: the rc's report
 * (reply and webhook), the bisection follow-up, the follow-up of a
 * regression triaged invalid, and the mails to the regressions list with
 * regzbot's commands when a regression shipped in a stable release. It
 * owns the conversation's rules: who is written to, under which mail a
 * follow-up threads, which mail goes out once (the store's mail table),
 * and that nothing goes out while the farm's own address or links would
 * be unusable in the list's archive. report.c renders; the store keeps.
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

int reply_announcement(const struct release_row *rel, struct announcement *ann)
{
	memset(ann, 0, sizeof(*ann));
	if (rel->message_id == NULL)
		return 0;
	snprintf(ann->version, sizeof(ann->version), "%s", rel->version);
	snprintf(ann->branch, sizeof(ann->branch), "%s", rel->branch);
	snprintf(ann->subject, sizeof(ann->subject), "%s",
		 rel->subject != NULL ? rel->subject : "");
	snprintf(ann->message_id, sizeof(ann->message_id), "%s", rel->message_id);
	snprintf(ann->from, sizeof(ann->from), "%s",
		 rel->mail_from != NULL ? rel->mail_from : "");
	ann->to = (char *)rel->mail_to;
	ann->cc = (char *)rel->mail_cc;
	ann->npatches = -1;
	return 1;
}

/* ---- where mail may go ---- */

/* Whether host (lower case, no port) names no public machine. */
static int host_is_private(const char *host)
{
	static const char *const suffixes[] = { ".invalid", ".localhost",
						".local", ".example" };
	size_t n = strlen(host);

	if (n == 0 || strcmp(host, "localhost") == 0 ||
	    strcmp(host, "invalid") == 0 || strncmp(host, "127.", 4) == 0 ||
	    strcmp(host, "[::1]") == 0 || strcmp(host, "::1") == 0 ||
	    strcmp(host, "0.0.0.0") == 0 || strchr(host, '.') == NULL)
		return 1;
	/* RFC 1918 and link-local: nobody reading the archive gets there. */
	{
		unsigned a, b;

		if (sscanf(host, "%u.%u.", &a, &b) == 2 &&
		    (a == 10 || (a == 192 && b == 168) || (a == 169 && b == 254) ||
		     (a == 172 && b >= 16 && b <= 31)))
			return 1;
	}
	/* example.com, rcgate.example.org, example.co.uk: the label
	 * "example" with one or two labels after it. */
	for (const char *p = host; (p = strstr(p, "example.")) != NULL; p++) {
		const char *rest = p + 8, *dot = strchr(rest, '.');

		if ((p == host || p[-1] == '.') && *rest != '\0' &&
		    (dot == NULL || strchr(dot + 1, '.') == NULL))
			return 1;
	}
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t k = strlen(suffixes[i]);

		if (n > k && strcmp(host + n - k, suffixes[i]) == 0)
			return 1;
	}
	return 0;
}

/* The host of an http(s) URL, lower case, without port, into out. */
static int url_host(const char *url, char *out, size_t len)
{
	const char *p = strstr(url, "://");
	size_t n;

	if (p == NULL)
		return -1;
	p += 3;
	if (*p == '[')
		n = strcspn(p, "]") + 1;
	else
		n = strcspn(p, ":/?#");
	if (n == 0 || n >= len)
		return -1;
	for (size_t i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)p[i]);
	out[n] = '\0';
	return 0;
}

/* The domain of the address in "Name <user@domain>" or "user@domain". */
static int mail_domain(const char *from, char *out, size_t len)
{
	const char *at = strrchr(from, '@');
	size_t n;

	if (at == NULL)
		return -1;
	n = strcspn(at + 1, "> \t");
	if (n == 0 || n >= len)
		return -1;
	for (size_t i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)at[1 + i]);
	out[n] = '\0';
	return 0;
}

int reply_mail_allowed(const char *public_url, const char *mail_from,
		       char *why, size_t whylen)
{
	char host[256];

	if (public_url == NULL || *public_url == '\0') {
		errf(why, whylen, "[report] public_url is not set: the links in"
		     " the mail would lead nowhere");
		return 0;
	}
	if (url_host(public_url, host, sizeof(host)) < 0 ||
	    host_is_private(host)) {
		errf(why, whylen, "[report] public_url %.200s is not a public"
		     " address (loopback, localhost, .invalid or example.*)",
		     public_url);
		return 0;
	}
	if (mail_from == NULL || mail_domain(mail_from, host, sizeof(host)) < 0 ||
	    host_is_private(host)) {
		errf(why, whylen, "[report] mail_from %.200s is not a public"
		     " address (localhost, .invalid or example.*): it would"
		     " end up in Tested-by trailers", mail_from ? mail_from : "");
		return 0;
	}
	return 1;
}

/* ---- helpers ---- */

/* The base of dashboard links: the public URL, else what the daemon
 * serves on (never in a mail: reply_mail_allowed refuses that). */
const char *reply_link_base(const struct config *cfg, const char *base_url)
{
	if (cfg->public_url[0] != '\0')
		return cfg->public_url;
	return base_url != NULL ? base_url : "";
}

/* "-- " lines: the farm, where its results are, whom to write to. */
char *reply_signature(const struct config *cfg, const char *base)
{
	char *s = NULL;

	if (asprintf(&s, "%s test farm, %s\nContact: %s", cfg->farm, base,
		     cfg->mail_from) < 0)
		return NULL;
	return s;
}

/* The kernel's ARCH names where the ecosystem uses them. */
const char *reply_kernel_arch(const char *target)
{
	if (target == NULL)
		return "?";
	if (strcmp(target, "armv7") == 0)
		return "arm";
	return target;
}

/* Records the mail and queues it (SMTP, if mail may go out) and hook
 * (may be NULL). 1 queued, 0 already sent or not allowed, -1 error. */
int reply_send_mail(struct store *st, const struct config *cfg,
		     struct mail_in *m, const char *hook, char *err,
		     size_t errlen)
{
	struct outbox_in out[2];
	size_t n = 0;
	char why[512];
	int rc;

	if (m->email != NULL && cfg->smtp_url[0] != '\0') {
		if (reply_mail_allowed(cfg->public_url, cfg->mail_from, why,
				       sizeof(why)))
			out[n++] = (struct outbox_in){ "smtp", cfg->smtp_url,
						       m->email };
		else
			log_warn("mail kind=%s release=%lld regression=%lld not"
				 " sent: %s", m->kind, (long long)m->release_id,
				 (long long)m->regression_id, why);
	}
	if (hook != NULL && cfg->webhook_url[0] != '\0')
		out[n++] = (struct outbox_in){ "webhook", cfg->webhook_url, hook };
	rc = store_mail_add(st, m, out, n, err, errlen);
	if (rc > 0 && n > 0)
		log_info("mail kind=%s release=%lld regression=%lld queued"
			 " message_id=%s", m->kind, (long long)m->release_id,
			 (long long)m->regression_id, m->message_id);
	return rc;
}

/* The release row of id into rows (caller frees); NULL if none. */
const struct release_row *reply_release_of(struct store *st, int64_t id,
					    struct rowset *rows)
{
	char err[256];

	if (store_release_get(st, id, rows, err, sizeof(err)) < 0) {
		log_err("release %lld: %s", (long long)id, err);
		return NULL;
	}
	return rows->n == 1 ? rows->v : NULL;
}

/* "a b c" -> pointers into a copy, cut at the spaces; *copy owns them. */
static const char **split_versions(const char *list, char **copy, size_t *n)
{
	size_t cap = 16, k = 0;
	const char **v;
	char *p;

	*n = 0;
	*copy = list != NULL ? strdup(list) : NULL;
	if (*copy == NULL)
		return NULL;
	v = calloc(cap, sizeof(*v));
	for (p = *copy; v != NULL && p != NULL && *p != '\0' && k < cap; ) {
		char *sp = strchr(p, ' ');

		v[k++] = p;
		if (sp != NULL)
			*sp++ = '\0';
		p = sp;
	}
	*n = k;
	return v;
}

/* ---- the report ---- */

/*
 * A short follow-up under rcgate's report in the thread of an earlier rc
 * (version) that had some of this release's regressions: they also
 * affect rel, with the link to this report (id). Once per thread and rc.
 */
static void tell_earlier_thread(struct store *st, const struct config *cfg,
				const struct release_row *rel, const char *id,
				const char *version,
				const struct report_regression *rr, size_t nr)
{
	char err[256], parent[512], date[64], msgid[512] = "";
	json_t *rows = store_rows(st, Q_RELEASE, err, sizeof(err), "s", version);
	int64_t other = json_integer_value(json_object_get(json_array_get(rows, 0),
							   "id"));
	struct rowset rels = { 0 };
	struct announcement ann;
	struct report_mail rm = { 0 };
	struct mail_in m = { 0 };
	GString *body;
	gchar *line;
	char *email, *sig;

	json_decref(rows);
	if (other <= 0 || !reply_report_id(st, other, parent, sizeof(parent)) ||
	    store_release_get(st, other, &rels, err, sizeof(err)) < 0 ||
	    rels.n != 1 || !reply_announcement(rels.v, &ann)) {
		rowset_free(&rels);
		return;
	}
	body = g_string_new(NULL);
	line = g_strdup_printf("These failures reported above also affect %s:",
			       rel->version);
	reply_add_wrapped(body, line, "");
	g_free(line);
	for (size_t i = 0; i < nr; i++)
		for (size_t k = 0; k < rr[i].nalso; k++)
			if (strcmp(rr[i].also_in[k], version) == 0)
				g_string_append_printf(body, "* %s, %s\n",
						       reply_kernel_arch(rr[i].target),
						       rr[i].test);
	g_string_append_printf(body, "\nThe report for %s:\n"
			       "  https://lore.kernel.org/r/%s/\n", rel->version,
			       id);
	sig = reply_signature(cfg, reply_link_base(cfg, NULL));
	if (sig != NULL)
		g_string_append_printf(body, "\n-- \n%s\n", sig);
	free(sig);
	time_rfc2822(time(NULL), date);
	rm.ann = &ann;
	rm.farm = cfg->farm;
	rm.version = version;
	rm.kind = "also";
	rm.from = cfg->mail_from;
	rm.date = date;
	rm.parent_id = parent;
	rm.body = body->str;
	email = report_mail_compose(&rm, msgid, sizeof(msgid), err, sizeof(err));
	if (email != NULL) {
		m.kind = "also";
		m.release_id = other;
		m.about = rel->id;
		m.message_id = msgid;
		m.email = email;
		if (reply_send_mail(st, cfg, &m, NULL, err, sizeof(err)) < 0)
			log_err("release %s: %s", rel->version, err);
	} else {
		log_warn("release %s: no follow-up in %s: %s", rel->version,
			 version, err);
	}
	free(email);
	g_string_free(body, TRUE);
	rowset_free(&rels);
}

/* Each earlier rc named by the regressions' also_in, once. */
static void tell_earlier_threads(struct store *st, const struct config *cfg,
				 const struct release_row *rel, const char *id,
				 const struct report_regression *rr, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		for (size_t k = 0; k < rr[i].nalso; k++) {
			int seen = 0;

			for (size_t j = 0; j <= i && !seen; j++)
				for (size_t l = 0; l < rr[j].nalso &&
				     (j < i || l < k); l++)
					seen |= strcmp(rr[j].also_in[l],
						       rr[i].also_in[k]) == 0;
			if (!seen)
				tell_earlier_thread(st, cfg, rel, id,
						    rr[i].also_in[k], rr, nr);
		}
}

/* For each rc in versions, the lore link to rcgate's report in its thread
 * (NULL where none went out); a malloc'd array of malloc'd strings. */
static char **report_links(struct store *st, const char *const *versions,
			   size_t n)
{
	char **links = calloc(n + 1, sizeof(*links));

	for (size_t i = 0; links != NULL && i < n; i++) {
		char err[256], id[512];
		json_t *rows = store_rows(st, Q_RELEASE, err, sizeof(err), "s",
					  versions[i]);
		int64_t relid = json_integer_value(json_object_get(
			json_array_get(rows, 0), "id"));

		json_decref(rows);
		if (relid > 0 && store_mail_id(st, "report", relid, 0, -1, id,
					       sizeof(id), err, sizeof(err)) > 0 &&
		    id[0] != '\0' &&
		    asprintf(&links[i], "https://lore.kernel.org/r/%s/", id) < 0)
			links[i] = NULL;
	}
	return links;
}

static void links_free(char **links, size_t n)
{
	for (size_t i = 0; links != NULL && i < n; i++)
		free(links[i]);
	free(links);
}

int reply_report(struct store *st, const struct config *cfg,
		 const char *base_url, const struct release_row *rel,
		 const struct release_row *baseline, const char *gate,
		 char *err, size_t errlen)
{
	struct rowset regs = { 0 }, jobs = { 0 }, gates = { 0 }, lost = { 0 };
	struct report_regression *rr = NULL;
	struct report_lost *rl = NULL;
	struct report_target *rt = NULL;
	struct report_fix *rf = NULL;
	struct report_input in = { 0 };
	struct announcement ann;
	struct mail_in m = { 0 };
	char status_url[1024], date[64], id[512] = "", **also = NULL,
		**urls = NULL, **fix_urls = NULL, **job_urls = NULL;
	char ***alinks = NULL;
	char *text = NULL, *email = NULL, *hook = NULL, *sig = NULL;
	const char *base = reply_link_base(cfg, base_url);
	json_t *fixes = NULL, *f, *built = NULL;
	size_t nr = 0, nf = 0, i;
	const struct regression_row *g;
	const struct job_row *j;
	int rc = -1;

	if (store_release_regressions(st, rel->id, &regs, err, errlen) < 0 ||
	    store_release_jobs(st, rel->id, 1, &jobs, err, errlen) < 0 ||
	    (fixes = store_rows(st, Q_RELEASE_FIXES, err, errlen, "i",
				rel->id)) == NULL)
		goto out;
	g = regs.v;
	j = jobs.v;
	rr = calloc(regs.n + 1, sizeof(*rr));
	also = calloc(regs.n + 1, sizeof(*also));
	urls = calloc(regs.n + 1, sizeof(*urls));
	alinks = calloc(regs.n + 1, sizeof(*alinks));
	rt = calloc(jobs.n + 1, sizeof(*rt));
	rf = calloc(json_array_size(fixes) + 1, sizeof(*rf));
	job_urls = calloc(2 * jobs.n + 1, sizeof(*job_urls));
	fix_urls = calloc(json_array_size(fixes) + 1, sizeof(*fix_urls));
	if (rr == NULL || rt == NULL || also == NULL || urls == NULL ||
	    alinks == NULL ||
	    rf == NULL || fix_urls == NULL || job_urls == NULL) {
		errf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < regs.n; i++) {
		if (g[i].flaky)
			continue;	/* flaky results are on the status page */
		rr[nr].id = (long)g[i].id;
		rr[nr].test = g[i].test;
		rr[nr].target = g[i].target;
		rr[nr].diagnostic = g[i].diagnostic;
		rr[nr].state = g[i].state;
		rr[nr].also_in = split_versions(g[i].also_in, &also[nr],
						&rr[nr].nalso);
		if (rr[nr].also_in != NULL) {
			alinks[nr] = report_links(st, rr[nr].also_in, rr[nr].nalso);
			rr[nr].also_links = (const char *const *)alinks[nr];
		}
		if (asprintf(&urls[nr], "%s/#/regression/%ld", base,
			     rr[nr].id) >= 0)
			rr[nr].url = urls[nr];
		nr++;
	}
	json_array_foreach(fixes, i, f) {
		rf[nf].test = json_string_value(json_object_get(f, "test"));
		rf[nf].target = json_string_value(json_object_get(f, "target"));
		rf[nf].seen_in = json_string_value(json_object_get(f, "seen_in"));
		if (asprintf(&fix_urls[nf], "%s/#/regression/%lld", base,
			     (long long)json_integer_value(json_object_get(f, "id"))) >= 0)
			rf[nf].url = fix_urls[nf];
		nf++;
	}
	for (i = 0; i < jobs.n; i++) {
		rt[i].job_id = (long)j[i].id;
		if (asprintf(&job_urls[2 * i], "%s/#/job/%lld", base,
			     (long long)j[i].id) >= 0)
			rt[i].job_url = job_urls[2 * i];
		if (asprintf(&job_urls[2 * i + 1], "%s/api/v1/jobs/%lld/log", base,
			     (long long)j[i].id) >= 0)
			rt[i].log_url = job_urls[2 * i + 1];
		rt[i].target = j[i].target;
		rt[i].state = j[i].state;
		rt[i].kernel = j[i].kernel_version;
		rt[i].seconds = j[i].boot_seconds;
		rt[i].error = j[i].error;
		rt[i].pass = j[i].counts.pass;
		rt[i].fail = j[i].counts.fail;
		rt[i].skip = j[i].counts.skip;
	}
	snprintf(status_url, sizeof(status_url), "%s/#/release/%s", base,
		 rel->version);
	sig = reply_signature(cfg, base);
	in.farm = cfg->farm;
	in.tested_by = cfg->mail_from;
	in.version = rel->version;
	in.baseline = baseline != NULL ? baseline->version : NULL;
	in.gate = gate;
	in.status_url = status_url;
	in.regressions = rr;
	in.nregressions = nr;
	in.targets = rt;
	in.ntargets = jobs.n;
	in.fixes = rf;
	in.nfixes = nf;
	in.signature = sig;
	if (baseline != NULL &&
	    store_release_lost_coverage(st, rel->id, baseline->id, &lost, err,
					errlen) < 0)
		goto out;
	if (lost.n > 0 && (rl = calloc(lost.n, sizeof(*rl))) == NULL) {
		errf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < lost.n; i++) {
		const struct lost_coverage_row *l = lost.v;

		rl[i] = (struct report_lost){ l[i].target, l[i].test, l[i].reason };
	}
	in.lost = rl;
	in.nlost = lost.n;
	/* The exact commit, when every job built the same one. */
	built = store_rows(st, Q_RELEASE_JOBS, err, errlen, "i", rel->id);
	{
		json_t *jr;
		int same = 1;

		json_array_foreach(built, i, jr) {
			const char *c = json_string_value(json_object_get(jr, "built_commit"));

			if (c == NULL || (in.commit != NULL && strcmp(c, in.commit) != 0))
				same = 0;
			else if (in.commit == NULL)
				in.commit = c;
		}
		if (!same)
			in.commit = NULL;
	}
	if (store_release_gate(st, rel->id, &gates, err, errlen) == 0 &&
	    gates.n == 1)
		in.late = ((const struct gate_row *)gates.v)->deadline_passed;
	if (reply_announcement(rel, &ann))
		in.ann = &ann;
	text = report_text(&in);
	if (text == NULL) {
		errf(err, errlen, "cannot render the report");
		goto out;
	}
	/* Never a reply when nothing ran: the page says so, the list not. */
	if (in.ann != NULL && jobs.n > 0) {
		time_rfc2822(time(NULL), date);
		email = report_email(&in, cfg->mail_from, date, err, errlen);
		if (email == NULL)
			log_warn("report for %s: no e-mail: %s", in.version, err);
		else
			report_message_id(email, id, sizeof(id));
	}
	if (cfg->webhook_url[0] != '\0') {
		json_t *payload = json_pack("{s:s,s:s,s:s,s:s,s:s?,s:s?,s:i,s:i}",
			"event", "report", "version", in.version, "gate", gate,
			"status_url", status_url, "baseline", in.baseline,
			"message_id", rel->message_id, "regressions", (int)nr,
			"fixes", (int)nf);

		if (payload != NULL) {
			json_object_set_new(payload, "report", json_string(text));
			hook = json_dumps(payload, JSON_COMPACT | JSON_SORT_KEYS);
			json_decref(payload);
		}
	}
	m.kind = "report";
	m.release_id = rel->id;
	/* Every report of the release is kept and sent: keyed by its id. */
	m.about = (int64_t)g_str_hash(id[0] ? id : text);
	m.message_id = id[0] ? id : "";
	m.email = email;
	m.gate = gate;
	m.report_text = text;
	rc = reply_send_mail(st, cfg, &m, hook, err, errlen) < 0 ? -1 : 0;
	/* The earlier rcs' threads hear that it reached this one too. */
	if (rc == 0 && id[0] != '\0')
		tell_earlier_threads(st, cfg, rel, id, rr, nr);
out:
	for (i = 0; rr != NULL && i < nr; i++) {
		links_free(alinks[i], rr[i].nalso);
		free((void *)rr[i].also_in);
		free(also[i]);
		free(urls[i]);
	}
	for (i = 0; fix_urls != NULL && i < nf; i++)
		free(fix_urls[i]);
	for (i = 0; job_urls != NULL && i < 2 * jobs.n; i++)
		free(job_urls[i]);
	free(job_urls);
	free(rr);
	free(alinks);
	free(rt);
	free(rf);
	free(rl);
	free(also);
	free(urls);
	free(fix_urls);
	free(text);
	free(email);
	free(hook);
	free(sig);
	json_decref(fixes);
	json_decref(built);
	rowset_free(&regs);
	rowset_free(&jobs);
	rowset_free(&gates);
	rowset_free(&lost);
	return rc;
}

/* The Message-ID of rcgate's first report in rel's thread into id; 0 if
 * none was sent (a follow-up then replies to the announcement). */
int reply_report_id(struct store *st, int64_t release_id, char *id,
			size_t len)
{
	char err[256];
	int rc = store_mail_id(st, "report", release_id, 0, -1, id, len, err,
			       sizeof(err));

	if (rc < 0)
		log_err("mail of release %lld: %s", (long long)release_id, err);
	if (rc > 0 && id[0] == '\0')
		rc = 0;		/* stored without a mail */
	return rc > 0;
}

/* ---- the bisection follow-up ---- */

/* Whether addr ("Name <a@b>" or "a@b") is safe to hand to the mail
 * composer: one @, no control characters, quotes or commas. */
static int plausible_address(const char *addr, size_t n)
{
	size_t at = 0;

	if (n == 0 || n > 200)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)addr[i];

		if (c < 0x20 || c == 0x7f || c == '"' || c == ',' || c == ';' ||
		    c == '\\')
			return 0;
		at += c == '@';
	}
	return at == 1;
}

void reply_commit_people(const char *message, char *out, size_t len)
{
	static const char *const keys[] = { "Signed-off-by:", "Reviewed-by:",
					    "Acked-by:" };
	size_t used = 0;
	int count = 0;

	if (len == 0)
		return;
	out[0] = '\0';
	for (const char *line = message; line != NULL && *line; ) {
		size_t n = strcspn(line, "\n");

		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]) && count < 20; k++) {
			size_t kl = strlen(keys[k]);
			const char *v = line + kl;
			size_t vn;
			char one[256];

			if (n <= kl || strncasecmp(line, keys[k], kl) != 0)
				continue;
			while (*v == ' ' || *v == '\t')
				v++;
			vn = n - (size_t)(v - line);
			while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\r'))
				vn--;
			/* "Name <a@b> # 6.1" comments and stable's [ ] notes go. */
			if (memchr(v, '>', vn) != NULL)
				vn = (size_t)((const char *)memchr(v, '>', vn) - v) + 1;
			if (!plausible_address(v, vn))
				continue;
			snprintf(one, sizeof(one), "%.*s", (int)vn, v);
			{
				const char *lt = strchr(one, '<');
				char key[256];

				/* once per address, whatever the name */
				snprintf(key, sizeof(key), "%s", lt ? lt + 1 : one);
				key[strcspn(key, ">")] = '\0';
				if (strcasestr(out, key) != NULL)
					continue;
			}
			if (used + strlen(one) + 3 > len)
				return;
			used += (size_t)snprintf(out + used, len - used, "%s%s",
						 used ? ", " : "", one);
			count++;
		}
		line += n;
		if (*line)
			line++;
	}
}

/* Adds text wrapped at 78 columns, continuation lines indented. */
void reply_add_wrapped(GString *out, const char *text, const char *indent)
{
	size_t col = 0;
	int first = 1;

	for (const char *p = text; *p; ) {
		size_t w;

		while (*p == ' ')
			p++;
		w = strcspn(p, " ");
		if (w == 0)
			break;
		if (!first && col + 1 + w > 78) {
			g_string_append_c(out, '\n');
			g_string_append(out, indent);
			col = strlen(indent);
		} else if (!first) {
			g_string_append_c(out, ' ');
			col++;
		}
		g_string_append_len(out, p, (gssize)w);
		col += w;
		first = 0;
		p += w;
	}
	g_string_append_c(out, '\n');
}
