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

#include "rcgate.h"
#include "announce.h"
#include "report.h"
#include "reply.h"

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

static void rfc2822_now(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, len, "%a, %d %b %Y %H:%M:%S +0000", &tm);
}

/* The base of dashboard links: the public URL, else what the daemon
 * serves on (never in a mail: reply_mail_allowed refuses that). */
static const char *link_base(const struct config *cfg, const char *base_url)
{
	if (cfg->public_url[0] != '\0')
		return cfg->public_url;
	return base_url != NULL ? base_url : "";
}

/* "-- " lines: the farm, where its results are, whom to write to. */
static char *signature(const struct config *cfg, const char *base)
{
	char *s = NULL;

	if (asprintf(&s, "%s test farm, %s\nContact: %s", cfg->farm, base,
		     cfg->mail_from) < 0)
		return NULL;
	return s;
}

/* The kernel's ARCH names where the ecosystem uses them. */
static const char *kernel_arch(const char *target)
{
	if (target == NULL)
		return "?";
	if (strcmp(target, "armv7") == 0)
		return "arm";
	return target;
}

/* Records the mail and queues it (SMTP, if mail may go out) and hook
 * (may be NULL). 1 queued, 0 already sent or not allowed, -1 error. */
static int send_mail(struct store *st, const struct config *cfg,
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
static const struct release_row *release_of(struct store *st, int64_t id,
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

static int report_id_of(struct store *st, int64_t release_id, char *id,
			size_t len);
static void add_wrapped(GString *out, const char *text, const char *indent);
static char *signature(const struct config *cfg, const char *base);

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
	if (other <= 0 || !report_id_of(st, other, parent, sizeof(parent)) ||
	    store_release_get(st, other, &rels, err, sizeof(err)) < 0 ||
	    rels.n != 1 || !reply_announcement(rels.v, &ann)) {
		rowset_free(&rels);
		return;
	}
	body = g_string_new(NULL);
	line = g_strdup_printf("These failures reported above also affect %s:",
			       rel->version);
	add_wrapped(body, line, "");
	g_free(line);
	for (size_t i = 0; i < nr; i++)
		for (size_t k = 0; k < rr[i].nalso; k++)
			if (strcmp(rr[i].also_in[k], version) == 0)
				g_string_append_printf(body, "* %s, %s\n",
						       kernel_arch(rr[i].target),
						       rr[i].test);
	g_string_append_printf(body, "\nThe report for %s:\n"
			       "  https://lore.kernel.org/r/%s/\n", rel->version,
			       id);
	sig = signature(cfg, link_base(cfg, NULL));
	if (sig != NULL)
		g_string_append_printf(body, "\n-- \n%s\n", sig);
	free(sig);
	rfc2822_now(date, sizeof(date));
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
		if (send_mail(st, cfg, &m, NULL, err, sizeof(err)) < 0)
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
	struct rowset regs = { 0 }, jobs = { 0 }, gates = { 0 };
	struct report_regression *rr = NULL;
	struct report_target *rt = NULL;
	struct report_fix *rf = NULL;
	struct report_input in = { 0 };
	struct announcement ann;
	struct mail_in m = { 0 };
	char status_url[1024], date[64], id[512] = "", **also = NULL,
		**urls = NULL, **fix_urls = NULL, **job_urls = NULL;
	char ***alinks = NULL;
	char *text = NULL, *email = NULL, *hook = NULL, *sig = NULL;
	const char *base = link_base(cfg, base_url);
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
	sig = signature(cfg, base);
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
		rfc2822_now(date, sizeof(date));
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
	rc = send_mail(st, cfg, &m, hook, err, errlen) < 0 ? -1 : 0;
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
	return rc;
}

/* The Message-ID of rcgate's first report in rel's thread into id; 0 if
 * none was sent (a follow-up then replies to the announcement). */
static int report_id_of(struct store *st, int64_t release_id, char *id,
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
static void add_wrapped(GString *out, const char *text, const char *indent)
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

/* The follow-up's text for a finished bisection row (Q_BISECTION): the
 * culprit as the series names it and as git show heads it, how it was
 * found, its possible dependencies in Greg's idiom, the page; or why the
 * bisection gave no answer. Caller g_free's. */
static char *bisection_text(const json_t *b, const struct config *cfg,
			    const char *base, json_t *steps,
			    const char *ann_subject)
{
#define F(k) json_string_value(json_object_get(b, k))
	const char *state = F("state"), *upstream = F("culprit_upstream"),
		*others = F("same_cause_in"), *prereqs = F("prerequisites"),
		*pmsg = F("prereq_message"), *pstate = F("prereq_state");
	long long reg = (long long)json_integer_value(json_object_get(b, "regression_id"));
	GString *s = g_string_new(NULL);
	gchar *line;

	if (state != NULL && strcmp(state, "found") == 0) {
		line = g_strdup_printf("%s bisected the failure of %s on %s in"
				       " %s to this commit:", cfg->farm,
				       F("test"), kernel_arch(F("target")),
				       F("version"));
		add_wrapped(s, line, "");
		g_free(line);
		{
			char patch[512];

			series_name(ann_subject,
				    json_integer_value(json_object_get(b, "commits")),
				    json_integer_value(json_object_get(b, "culprit_index")),
				    F("culprit_subject"), patch, sizeof(patch));
			if (patch[0] != '\0') {
				g_string_append_c(s, '\n');
				add_wrapped(s, patch, "    ");
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
		add_wrapped(s, line, "");
		g_free(line);
		bisection_log(s, steps, F("good"), F("bad"));
		if (upstream != NULL && others != NULL) {
			line = g_strdup_printf("The same upstream commit was found"
					       " by bisection in %s: one cause, in"
					       " every branch that carries it.",
					       others);
			g_string_append_c(s, '\n');
			add_wrapped(s, line, "");
			g_free(line);
		}
	} else {
		/* bisect.c's words, one paragraph a line, wrapped here */
		for (const char *p = F("message"); p != NULL && *p; ) {
			size_t n = strcspn(p, "\n");
			gchar *para = g_strndup(p, n);

			add_wrapped(s, para, "");
			g_free(para);
			p += n;
			if (*p)
				p++;
		}
	}
	if (pstate != NULL && strcmp(pstate, "pending") != 0) {
		json_t *list = prereqs != NULL ? json_loads(prereqs, 0, NULL) : NULL;
		size_t i;
		json_t *c;

		if (json_array_size(list) > 0) {
			g_string_append(s, "\nPossible dependencies (a hint, not a"
					" finding: upstream commits this branch\n"
					"lacks that touch what the culprit touches,"
					" best match first):\n\n");
			json_array_foreach(list, i, c) {
				const char *why = json_string_value(json_object_get(c, "why"));

				g_string_append_printf(s, "    %.12s (\"%s\")\n",
					json_string_value(json_object_get(c, "commit")),
					json_string_value(json_object_get(c, "subject")));
				while (why != NULL && *why != '\0') {
					size_t n = strcspn(why, ";");

					g_string_append_printf(s, "        %.*s\n",
							       (int)n, why);
					why += n;
					while (*why == ';' || *why == ' ')
						why++;
				}
			}
		} else {
			line = g_strdup_printf("No possible dependencies found: %s.",
					       pmsg != NULL ? pmsg : "none");
			g_string_append_c(s, '\n');
			add_wrapped(s, line, "");
			g_free(line);
		}
		json_decref(list);
	}
	g_string_append_printf(s, "\nDetails and logs:\n  %s/#/regression/%lld\n",
			       base, reg);
	g_string_append_printf(s, "\n-- \n%s test farm, %s\nContact: %s\n",
			       cfg->farm, base, cfg->mail_from);
#undef F
	return g_string_free(s, FALSE);
}

void reply_bisection(struct store *st, const struct config *cfg, int64_t id)
{
	struct rowset rels = { 0 };
	const struct release_row *rel;
	char err[512], date[64], parent[512];
	struct announcement ann;
	struct report_mail rm = { 0 };
	struct mail_in m = { 0 };
	const char *base = link_base(cfg, NULL), *culprit;
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
	m.release_id = json_integer_value(json_object_get(b, "release_id"));
	rel = release_of(st, m.release_id, &rels);
	steps = store_rows(st, Q_BISECT_STEPS, err, sizeof(err), "i", id);
	text = bisection_text(b, cfg, base, steps,
			      rel != NULL ? rel->subject : NULL);
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
	if (rel != NULL && reply_announcement(rel, &ann)) {
		rfc2822_now(date, sizeof(date));
		rm.ann = &ann;
		rm.farm = cfg->farm;
		rm.version = rel->version;
		rm.kind = "bisection";
		rm.from = cfg->mail_from;
		rm.date = date;
		rm.parent_id = report_id_of(st, rel->id, parent, sizeof(parent)) ?
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
	}
	m.message_id = msgid;
	m.email = email;
	if (send_mail(st, cfg, &m, hook, err, sizeof(err)) < 0)
		log_err("bisection %lld: %s", (long long)id, err);
	free(email);
	free(hook);
	g_free(text);
	g_free(cc);
	rowset_free(&rels);
	json_decref(rows);
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
			      test, kernel_arch(target));
	else
		rc = asprintf(&s, "[REGRESSION] %s: %s and %zu other test%s fail",
			      released, test, n - 1, n > 2 ? "s" : "");
	return rc < 0 ? NULL : s;
}

/* The stable maintainer and list of the rc's announcement, for Cc. */
static char *maintainer_cc(const struct announcement *ann)
{
	char *s = NULL;

	if (asprintf(&s, "%s%s%s", ann->from, ann->to && *ann->to ? ", " : "",
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
	const struct release_row *rel = release_of(st, release_id, &rels);
	struct announcement ann;
	struct report_mail rm = { 0 };
	struct mail_in m = { 0 };
	char date[64], err[512], msgid[512] = "";
	char *email = NULL, *cc = NULL;
	int rc = -1;

	if (rel == NULL || !reply_announcement(rel, &ann)) {
		log_warn("mail kind=%s release=%lld: no announcement to point at",
			 kind, (long long)release_id);
		goto out;
	}
	rfc2822_now(date, sizeof(date));
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
	rc = send_mail(st, cfg, &m, NULL, err, sizeof(err));
	if (rc < 0)
		log_err("mail kind=%s release=%lld: %s", kind,
			(long long)release_id, err);
out:
	free(email);
	free(cc);
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
	const char *base = link_base(cfg, NULL);
	char released[64], range[96], parent[512];
	int64_t *rids = calloc(to - from + 1, sizeof(*rids));
	GString *body = g_string_new(NULL);
	char *subject = NULL, *sig = signature(cfg, base);
	gchar *line;
	int have_report, rc = 0;

	snprintf(released, sizeof(released), "%s",
		 json_string_value(json_object_get(first, "released_as")));
	if (rids == NULL || reply_regzbot_range(released, range, sizeof(range)) < 0)
		goto out;
	have_report = report_id_of(st, relid, parent, sizeof(parent));
	line = g_strdup_printf("%s was released with %s that %s found in %s,"
			       " during its review, and that %s still open on"
			       " the branch:", released, to - from > 1 ?
			       "regressions" : "a regression", cfg->farm, version,
			       to - from > 1 ? "are" : "is");
	add_wrapped(body, line, "");
	g_free(line);
	g_string_append_c(body, '\n');
	for (size_t i = from; i < to; i++) {
		json_t *r = json_array_get(rows, i);
		const char *diag = json_string_value(json_object_get(r, "diagnostic"));
		int lines = 0;

		rids[i - from] = json_integer_value(json_object_get(r, "regression_id"));
		g_string_append_printf(body, "* %s, %s\n",
			kernel_arch(json_string_value(json_object_get(r, "target"))),
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
	add_wrapped(body, line, "");
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
	const char *base = link_base(cfg, NULL), *kind;
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
		add_wrapped(body, line, "");
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
		add_wrapped(body, line, "");
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
	sig = signature(cfg, base);
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
	const char *base = link_base(cfg, NULL);
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
	rfc2822_now(date, sizeof(date));
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
		rel = release_of(st, relid, &rels);
		if (rel == NULL || !reply_announcement(rel, &ann)) {
			rowset_free(&rels);
			continue;
		}
		body = g_string_new(NULL);
		line = g_strdup_printf("About the regression %s reported above for"
				       " %s:", cfg->farm, rel->version);
		add_wrapped(body, line, "");
		g_free(line);
		g_string_append_printf(body, "\n* %s, %s\n\n", kernel_arch(target),
				       test);
		line = g_strdup_printf("It was triaged as not a regression of the"
				       " rc (%s). Please disregard it: it no longer"
				       " counts against %s.", why, rel->version);
		add_wrapped(body, line, "");
		g_free(line);
		g_string_append_printf(body, "\nDetails:\n  %s/#/regression/%lld\n",
				       base, (long long)regression_id);
		sig = signature(cfg, base);
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
			if (send_mail(st, cfg, &m, NULL, err, sizeof(err)) < 0)
				log_err("regression %lld: %s",
					(long long)regression_id, err);
		} else {
			log_warn("regression %lld: no follow-up: %s",
				 (long long)regression_id, err);
		}
		free(email);
		g_string_free(body, TRUE);
		rowset_free(&rels);
	}
	json_decref(rows);
	regzbot_settle(st, cfg, regression_id, NULL, why);
}
