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

/*
 * Who the replies to rel's announcement reach is decided here, once for
 * every mail: a verified announcement's sender, To and Cc, capped at
 * [announce] max_recipients; an unverified one's [announce] lists alone
 * (its From, however it reads, may be forged).
 */
int reply_announcement(const struct config *cfg, const struct release_row *rel,
		       struct announcement *ann)
{
	long dropped;

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
	ann->npatches = -1;
	snprintf(ann->head, sizeof(ann->head), "%s",
		 rel->announce_head != NULL ? rel->announce_head : "");
	snprintf(ann->dkim, sizeof(ann->dkim), "%s",
		 rel->mail_dkim != NULL ? rel->mail_dkim : "not checked");
	if (!rel->mail_verified) {
		ann->unverified = 1;
		ann->to = strdup(cfg->announce_lists);
		return 1;
	}
	dropped = announce_recipients(ann->from, rel->mail_to, rel->mail_cc,
				      cfg->announce_max_recipients, &ann->to,
				      &ann->cc);
	if (dropped > 0)
		log_warn("release %s: a reply reaches %ld of its announcement's"
			 " recipients, %ld left out ([announce] max_recipients)",
			 rel->version, cfg->announce_max_recipients, dropped);
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

	/* A mail that does not go out now is recorded as refused: it never
	 * goes out later (a config that changes does not send old news), and
	 * nothing threads under it or links to it. */
	m->refused = "no mail composed";
	if (m->email != NULL && cfg->smtp_url[0] == '\0')
		m->refused = "[report] smtp_url is not set";
	if (m->email != NULL && cfg->smtp_url[0] != '\0') {
		if (reply_mail_allowed(cfg->public_url, cfg->mail_from, why,
				       sizeof(why))) {
			out[n++] = (struct outbox_in){ "smtp", cfg->smtp_url,
						       m->email };
			m->refused = NULL;
		} else {
			m->refused = why;
			log_warn("mail kind=%s release=%lld regression=%lld not"
				 " sent: %s", m->kind, (long long)m->release_id,
				 (long long)m->regression_id, why);
		}
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
	    rels.n != 1 || !reply_announcement(cfg, rels.v, &ann)) {
		rowset_free(&rels);
		return;
	}
	body = g_string_new(NULL);
	line = g_strdup_printf("These failures reported above also affect %s:",
			       rel->version);
	report_wrap(body, line, "", WRAP_DROP_LEAD);
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
	announce_free(&ann);
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

/* What a report's input points to: the rows' arrays and the links made
 * for them, owned here and freed by parts_free. */
struct report_parts {
	struct report_regression *rr;
	struct report_target *rt;
	struct report_fix *rf;
	struct report_lost *rl;
	char **also, **urls, **fix_urls, **job_urls, **config_urls;
	char ***alinks;
	size_t nr, nf, nt;
};

static int parts_alloc(struct report_parts *p, size_t nregs, size_t njobs,
		       size_t nfixes)
{
	p->rr = calloc(nregs + 1, sizeof(*p->rr));
	p->also = calloc(nregs + 1, sizeof(*p->also));
	p->urls = calloc(nregs + 1, sizeof(*p->urls));
	p->alinks = calloc(nregs + 1, sizeof(*p->alinks));
	p->rt = calloc(njobs + 1, sizeof(*p->rt));
	p->job_urls = calloc(2 * njobs + 1, sizeof(*p->job_urls));
	p->config_urls = calloc(njobs + 1, sizeof(*p->config_urls));
	p->rf = calloc(nfixes + 1, sizeof(*p->rf));
	p->fix_urls = calloc(nfixes + 1, sizeof(*p->fix_urls));
	p->nt = njobs;
	return p->rr && p->also && p->urls && p->alinks && p->rt &&
	       p->job_urls && p->config_urls && p->rf && p->fix_urls ? 0 : -1;
}

static void parts_free(struct report_parts *p)
{
	for (size_t i = 0; p->rr != NULL && i < p->nr; i++) {
		links_free(p->alinks[i], p->rr[i].nalso);
		free((void *)p->rr[i].also_in);
		free(p->also[i]);
		free(p->urls[i]);
	}
	for (size_t i = 0; p->fix_urls != NULL && i < p->nf; i++)
		free(p->fix_urls[i]);
	for (size_t i = 0; p->job_urls != NULL && i < 2 * p->nt; i++)
		free(p->job_urls[i]);
	for (size_t i = 0; p->config_urls != NULL && i < p->nt; i++)
		free(p->config_urls[i]);
	free(p->job_urls);
	free(p->config_urls);
	free(p->rr);
	free(p->alinks);
	free(p->rt);
	free(p->rf);
	free(p->also);
	free(p->urls);
	free(p->fix_urls);
	free(p->rl);
}

/* The regressions the mail names (flaky ones are on the status page),
 * each with its page and the other threads it was reported in. */
static void add_regressions(struct store *st, const char *base,
			    const struct rowset *regs, struct report_parts *p)
{
	const struct regression_row *g = regs->v;

	for (size_t i = 0; i < regs->n; i++) {
		struct report_regression *r = &p->rr[p->nr];

		if (g[i].flaky)
			continue;
		r->id = (long)g[i].id;
		r->test = g[i].test;
		r->target = g[i].target;
		r->diagnostic = g[i].diagnostic;
		r->state = g[i].state;
		r->culprit = g[i].culprit;
		r->culprit_subject = g[i].culprit_subject;
		r->culprit_in = g[i].culprit_in;
		r->also_in = split_versions(g[i].also_in, &p->also[p->nr],
					    &r->nalso);
		if (r->also_in != NULL) {
			p->alinks[p->nr] = report_links(st, r->also_in, r->nalso);
			r->also_links = (const char *const *)p->alinks[p->nr];
		}
		if (asprintf(&p->urls[p->nr], "%s/#/regression/%ld", base,
			     r->id) >= 0)
			r->url = p->urls[p->nr];
		p->nr++;
	}
}

/* Regressions of earlier rcs this one fixes. */
static void add_fixes(const char *base, json_t *fixes, struct report_parts *p)
{
	size_t i;
	json_t *f;

	json_array_foreach(fixes, i, f) {
		struct report_fix *x = &p->rf[p->nf];

		x->test = json_string_value(json_object_get(f, "test"));
		x->target = json_string_value(json_object_get(f, "target"));
		x->seen_in = json_string_value(json_object_get(f, "seen_in"));
		if (asprintf(&p->fix_urls[p->nf], "%s/#/regression/%lld", base,
			     (long long)json_integer_value(json_object_get(f, "id"))) >= 0)
			x->url = p->fix_urls[p->nf];
		p->nf++;
	}
}

/* One line per target: its job's page, log and counts. */
static void add_targets(const char *base, const struct rowset *jobs,
			struct report_parts *p)
{
	const struct job_row *j = jobs->v;

	for (size_t i = 0; i < jobs->n; i++) {
		struct report_target *t = &p->rt[i];

		t->job_id = (long)j[i].id;
		t->rerun_of = (long)j[i].rerun_of;
		if (asprintf(&p->job_urls[2 * i], "%s/#/job/%lld", base,
			     (long long)j[i].id) >= 0)
			t->job_url = p->job_urls[2 * i];
		if (asprintf(&p->job_urls[2 * i + 1], "%s/api/v1/jobs/%lld/log",
			     base, (long long)j[i].id) >= 0)
			t->log_url = p->job_urls[2 * i + 1];
		t->target = j[i].target;
		t->state = j[i].state;
		t->kernel = j[i].kernel_version;
		t->seconds = j[i].boot_seconds;
		t->error = j[i].error;
		t->pass = j[i].counts.pass;
		t->fail = j[i].counts.fail;
		t->skip = j[i].counts.skip;
	}
}

/* What was built: each job's accelerator, compiler and config link; the
 * exact commit and git describe when every job built the same one. built
 * (Q_RELEASE_JOBS rows) owns the strings. */
static void add_built(const char *base, json_t *built, struct report_parts *p,
		      struct report_input *in)
{
	int same = 1, describe_same = 1;
	size_t i;
	json_t *jr;

	json_array_foreach(built, i, jr) {
		int64_t jid = json_integer_value(json_object_get(jr, "id"));
		const char *d = json_string_value(json_object_get(jr, "git_describe"));
		const char *c = json_string_value(json_object_get(jr, "built_commit"));

		for (size_t k = 0; k < p->nt; k++) {
			if (p->rt[k].job_id != (long)jid)
				continue;
			p->rt[k].accel = json_string_value(json_object_get(jr, "accel"));
			p->rt[k].compiler = json_string_value(
				json_object_get(jr, "compiler"));
			/* a build that failed kept its .config too (its
			 * compiler comes from it) */
			if ((json_string_value(json_object_get(jr, "built_sha256")) ||
			     p->rt[k].compiler != NULL) &&
			    asprintf(&p->config_urls[k], "%s/api/v1/jobs/%lld/config",
				     base, (long long)jid) >= 0)
				p->rt[k].config_url = p->config_urls[k];
		}
		if (d == NULL || (in->describe != NULL && strcmp(d, in->describe) != 0))
			describe_same = 0;
		else if (in->describe == NULL)
			in->describe = d;
		if (c == NULL || (in->commit != NULL && strcmp(c, in->commit) != 0))
			same = 0;
		else if (in->commit == NULL)
			in->commit = c;
	}
	if (!same)
		in->commit = NULL;
	if (!describe_same)
		in->describe = NULL;
}

/* Tests the rc only skipped where its baseline passed them (lost
 * coverage): 0, or -1 with err. */
static int add_lost(struct store *st, const struct release_row *rel,
		    const struct release_row *baseline, struct rowset *lost,
		    struct report_parts *p, struct report_input *in, char *err,
		    size_t errlen)
{
	const struct lost_coverage_row *l;

	if (baseline == NULL)
		return 0;
	if (store_release_lost_coverage(st, rel->id, baseline->id, lost, err,
					errlen) < 0)
		return -1;
	if (lost->n == 0)
		return 0;
	p->rl = calloc(lost->n, sizeof(*p->rl));
	if (p->rl == NULL) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	l = lost->v;
	for (size_t i = 0; i < lost->n; i++)
		p->rl[i] = (struct report_lost){ l[i].target, l[i].test,
						 l[i].reason };
	in->lost = p->rl;
	in->nlost = lost->n;
	return 0;
}

/* The webhook's report event (NULL without a webhook). */
static char *report_hook(const struct config *cfg, const struct release_row *rel,
			 const struct report_input *in, const char *text)
{
	json_t *payload;
	char *hook;

	if (cfg->webhook_url[0] == '\0')
		return NULL;
	payload = json_pack("{s:s,s:s,s:s,s:s,s:s?,s:s?,s:i,s:i}",
		"event", "report", "version", in->version, "gate", in->gate,
		"status_url", in->status_url, "baseline", in->baseline,
		"message_id", rel->message_id, "regressions", (int)in->nregressions,
		"fixes", (int)in->nfixes);
	if (payload == NULL)
		return NULL;
	json_object_set_new(payload, "report", json_string(text));
	hook = json_dumps(payload, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(payload);
	return hook;
}

int reply_report(struct store *st, const struct config *cfg,
		 const char *base_url, const struct release_row *rel,
		 const struct release_row *baseline, const char *gate,
		 char *err, size_t errlen)
{
	struct rowset regs = { 0 }, jobs = { 0 }, gates = { 0 }, lost = { 0 };
	struct report_parts p = { 0 };
	struct report_input in = { 0 };
	struct announcement ann = { 0 };
	struct mail_in m = { 0 };
	char status_url[1024], tests_url[1024], date[64], id[512] = "";
	char *text = NULL, *email = NULL, *hook = NULL, *sig = NULL;
	const char *base = reply_link_base(cfg, base_url);
	json_t *fixes = NULL, *built = NULL;
	int rc = -1;

	if (store_release_regressions(st, rel->id, &regs, err, errlen) < 0 ||
	    store_release_jobs(st, rel->id, 1, &jobs, err, errlen) < 0 ||
	    (fixes = store_rows(st, Q_RELEASE_FIXES, err, errlen, "i",
				rel->id)) == NULL)
		goto out;
	if (parts_alloc(&p, regs.n, jobs.n, json_array_size(fixes)) < 0) {
		errf(err, errlen, "out of memory");
		goto out;
	}
	add_regressions(st, base, &regs, &p);
	add_fixes(base, fixes, &p);
	add_targets(base, &jobs, &p);
	snprintf(status_url, sizeof(status_url), "%s/#/release/%s", base,
		 rel->version);
	snprintf(tests_url, sizeof(tests_url), "%s/tests", base);
	sig = reply_signature(cfg, base);
	in = (struct report_input){
		.tests_url = tests_url, .farm = cfg->farm,
		.tested_by = cfg->mail_from, .version = rel->version,
		.baseline = baseline != NULL ? baseline->version : NULL,
		.gate = gate, .status_url = status_url,
		.regressions = p.rr, .nregressions = p.nr,
		.targets = p.rt, .ntargets = jobs.n,
		.fixes = p.rf, .nfixes = p.nf, .signature = sig,
	};
	if (add_lost(st, rel, baseline, &lost, &p, &in, err, errlen) < 0)
		goto out;
	built = store_rows(st, Q_RELEASE_JOBS, err, errlen, "i", rel->id);
	add_built(base, built, &p, &in);
	if (store_release_gate(st, rel->id, &gates, err, errlen) == 0 &&
	    gates.n == 1)
		in.late = ((const struct gate_row *)gates.v)->deadline_passed;
	if (reply_announcement(cfg, rel, &ann))
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
	hook = report_hook(cfg, rel, &in, text);
	m.kind = "report";
	m.release_id = rel->id;
	/* Every report of the release is kept and sent: keyed by its id. */
	m.about = (int64_t)g_str_hash(id[0] ? id : text);
	m.message_id = id[0] ? id : "";
	m.email = email;
	m.gate = gate;
	m.report_text = text;
	rc = reply_send_mail(st, cfg, &m, hook, err, errlen) < 0 ? -1 : 0;
	/* The earlier rcs' threads hear that it reached this one too; not
	 * from an rc whose announcement is unverified (a forged mail would
	 * speak in a genuine rc's thread). */
	if (rc == 0 && id[0] != '\0' && rel->mail_verified)
		tell_earlier_threads(st, cfg, rel, id, p.rr, p.nr);
out:
	announce_free(&ann);
	parts_free(&p);
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
