/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trigger.c - owns how rcs arrive by mail: an announcement ("[PATCH 6.1
 * 000/372] 6.1.64-rc1 review") posted to the API or dropped into a watched
 * Maildir becomes a release with its deadline, Message-ID and recipients,
 * so reports can reply in its thread. Anything else (replies, patches,
 * other list traffic, garbage) is ignored with a logged reason.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "store/store.h"
#include "build/build.h"
#include "job/job.h"
#include "intake/intake.h"

#define MAX_MAIL (4u << 20)

static const struct config *tcfg;
static struct consumer trigger_consumer;

/* The releases each sender created on each branch in the last hour:
 * a flood of announcements (forged or not) makes at most
 * [announce] max_per_hour new releases per sender and branch. */
#define RATE_SLOTS 64
#define RATE_KEEP 64		/* times kept per sender and branch */
static struct rate {
	char key[360];		/* "addr branch" */
	time_t at[RATE_KEEP];	/* creation times, a ring */
	unsigned next;
	time_t last;
} rates[RATE_SLOTS];
static pthread_mutex_t rate_lock = PTHREAD_MUTEX_INITIALIZER;

/* The slot of key (the least recently used one taken over). */
static struct rate *rate_slot(const char *key)
{
	struct rate *lru = &rates[0];

	for (size_t i = 0; i < RATE_SLOTS; i++) {
		if (strcmp(rates[i].key, key) == 0)
			return &rates[i];
		if (rates[i].last < lru->last)
			lru = &rates[i];
	}
	memset(lru, 0, sizeof(*lru));
	snprintf(lru->key, sizeof(lru->key), "%s", key);
	return lru;
}

/* 1 if key may create another release now; with record, counts one. */
static int rate_check(const char *key, long per_hour, int record)
{
	time_t now = time(NULL);
	struct rate *r;
	long n = 0;

	pthread_mutex_lock(&rate_lock);
	r = rate_slot(key);
	r->last = now;
	if (record) {
		r->at[r->next++ % RATE_KEEP] = now;
	} else {
		for (size_t i = 0; i < RATE_KEEP; i++)
			n += r->at[i] != 0 && now - r->at[i] < 3600;
	}
	pthread_mutex_unlock(&rate_lock);
	return n < per_hour && n < RATE_KEEP;
}

int trigger_sender_accepted(const char *senders, const char *addr)
{
	size_t alen = strlen(addr), n;
	const char *p = senders;

	/* No address (From was not exactly one plain mailbox): nobody, not
	 * even '*', sends it. */
	if (alen == 0 || strpbrk(addr, " \t<>,") != NULL)
		return 0;
	while (*p != '\0') {
		p += strspn(p, " \t,");
		n = strcspn(p, " \t,");
		if (n == 1 && *p == '*')
			return 1;
		if (n > 0 && n == alen && strncasecmp(p, addr, n) == 0)
			return 1;
		p += n;
	}
	return 0;
}

/* A mail that is no announcement may be a patch of an announced series
 * from its sender: recorded for the culprit's lore link, and err says
 * so (the mail is still "not an announcement"). */
static void series_patch(struct store *st, const char *senders,
			 const char *raw, size_t len, char *err, size_t errlen)
{
	struct series_patch p;
	char e2[256], version[48] = "";
	int rc;

	if (announce_parse_patch(raw, len, &p, e2, sizeof(e2)) != 0 ||
	    !trigger_sender_accepted(senders, p.from_addr))
		return;
	rc = store_series_patch_add(st, p.parent_id, p.from_addr, p.number,
				    p.total, p.subject, p.message_id, version,
				    sizeof(version), e2, sizeof(e2));
	if (rc < 0)
		log_err("series patch <%s>: %s", p.message_id, e2);
	else if (rc > 0)
		errf(err, errlen, "a patch of the series, recorded as %s's"
		     " %ld/%ld", version, p.number, p.total);
}

/*
 * [announce] dkim applied to the announcement a parsed from raw: 0 with
 * *v filled (verified or not: prefer and off accept both, off without
 * looking), 1 refused under require (err says why; logged), -2 under
 * require when a key lookup failed for now (the mail is kept and read
 * again), or when libopendkim cannot run at all.
 */
static int dkim_policy(const char *raw, size_t len, const struct announcement *a,
		       struct announce_dkim *v, char *err, size_t errlen)
{
	/* Without trigger_start (unit tests driving intake alone) nothing
	 * is configured, so nothing is checked. */
	const char *mode = tcfg != NULL ? tcfg->announce_dkim : "off";

	memset(v, 0, sizeof(*v));
	if (strcmp(mode, "off") == 0) {
		snprintf(v->detail, sizeof(v->detail),
			 "not checked ([announce] dkim = off)");
		return 0;
	}
	if (announce_dkim_check(raw, len, a,
				tcfg != NULL ? tcfg->announce_dkim_signers : "",
				tcfg != NULL ? tcfg->announce_dkim_keys : "", v,
				err, errlen) < 0) {
		log_err("announcement message_id=<%s> dkim=error: %s",
			a->message_id, err);
		return -2;
	}
	if (v->verified || strcmp(mode, "prefer") == 0)
		return 0;
	errf(err, errlen, "DKIM: %s ([announce] dkim = require)%s", v->detail,
	     v->tempfail ? "; kept to try again" : "");
	log_warn("announcement refused version=%s message_id=<%s> from=%s"
		 " dkim=\"%s\"%s", a->version, a->message_id, a->from_addr,
		 v->detail, v->tempfail ? " retry=1" : "");
	return v->tempfail ? -2 : 1;
}

int trigger_announcement(struct store *st, const char *senders,
			 const char *raw, size_t len, char *version,
			 size_t vlen, int *created, char *err, size_t errlen)
{
	struct announcement a;
	struct announce_dkim dkim;
	struct announce_in in;
	struct kversion kv;
	char key[360];
	long per_hour;
	int64_t id;
	int rc;

	*created = 0;
	rc = announce_parse(raw, len, &a, err, errlen);
	if (rc == 1)
		series_patch(st, senders, raw, len, err, errlen);
	if (rc != 0)
		return rc;
	if (kversion_parse(a.version, &kv, err, errlen) < 0) {
		announce_free(&a);
		return 1;
	}
	/* Anyone can send a mail that looks like an announcement; only the
	 * configured senders' decide a release's thread, recipients and
	 * deadline. */
	if (!trigger_sender_accepted(senders, a.from_addr)) {
		if (a.from_addr[0] == '\0')
			errf(err, errlen, "From: is not exactly one plain mailbox"
			     " (%.200s)", a.from);
		else
			errf(err, errlen, "sender %.200s is not in [announce]"
			     " senders", a.from_addr);
		announce_free(&a);
		return 1;
	}
	if ((rc = dkim_policy(raw, len, &a, &dkim, err, errlen)) != 0) {
		announce_free(&a);
		return rc;
	}
	snprintf(key, sizeof(key), "%s %s", a.from_addr, kv.branch);
	per_hour = tcfg != NULL ? tcfg->announce_max_per_hour : 10;
	if (!rate_check(key, per_hour, 0)) {
		errf(err, errlen, "sender %.200s announced %ld new rcs of %s in"
		     " the last hour ([announce] max_per_hour): refused",
		     a.from_addr, per_hour, kv.branch);
		announce_free(&a);
		return 1;
	}
	memset(&in, 0, sizeof(in));
	in.version = a.version;
	in.branch = kv.branch;
	in.rc = kv.rc;
	in.patch = kv.patch;
	in.subject = a.subject;
	in.message_id = a.message_id;
	in.from = a.from;
	in.to = a.to;
	in.cc = a.cc;
	in.date = a.date;
	in.deadline = a.deadline;
	in.patch_url = a.patch_url;
	in.git_tree = a.git_tree;
	in.git_branch = a.git_branch;
	in.head = a.head[0] != '\0' ? a.head : NULL;
	in.verified = dkim.verified;
	in.dkim = dkim.detail;
	rc = store_release_announce(st, &in, &id, err, errlen);
	if (rc >= 0) {
		static const char *const what[] = { "created", "attached",
						    "already known", "corrected" };

		snprintf(version, vlen, "%s", a.version);
		*created = rc == 0;
		if (rc == 0)
			rate_check(key, per_hour, 1);
		source_kick();	/* builds it, with [build] from_announcements */
		log_info("announcement version=%s message_id=<%s> from=\"%s\""
			 " deadline=%s dkim=%s (%s) %s", a.version, a.message_id,
			 a.from, a.deadline[0] ? a.deadline : "-",
			 dkim.verified ? "verified" : "unverified", dkim.detail,
			 what[rc]);
		rc = 0;
	} else {
		/* The mail was fine; the store was not (a full disk, a lock):
		 * the caller keeps the mail and tries again. */
		rc = -2;
	}
	announce_free(&a);
	return rc;
}

/* Moves dir/new/name to dir/<to>/name. */
static void move_mail(const char *dir, const char *name, const char *to)
{
	char from[PATH_MAX], dest[PATH_MAX], sub[PATH_MAX];

	snprintf(sub, sizeof(sub), "%s/%s", dir, to);
	mkdir_p(sub, 0700, NULL, 0);
	snprintf(from, sizeof(from), "%s/new/%s", dir, name);
	snprintf(dest, sizeof(dest), "%s/%s/%s", dir, to, name);
	if (rename(from, dest) < 0)
		log_err("maildir: move %s: %s", from, strerror(errno));
}

/* Reads new/ once; 1 if a mail had to stay there for a storage error. */
static int scan(struct store *st)
{
	char newdir[PATH_MAX];
	DIR *d;
	struct dirent *de;
	int transient = 0;

	snprintf(newdir, sizeof(newdir), "%s/new", tcfg->maildir);
	d = opendir(newdir);
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL &&
	       !consumer_stopping(&trigger_consumer)) {
		char path[PATH_MAX], err[512], version[48];
		size_t len = 0;
		char *raw;
		int created = 0, rc;

		if (de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", newdir,
				     de->d_name) >= sizeof(path))
			continue;
		/* file_read refuses a FIFO, a device or an oversize mail at
		 * once instead of blocking on it or cutting it. */
		raw = file_read(path, MAX_MAIL, &len, err, sizeof(err));
		if (raw == NULL) {
			log_warn("maildir: %s: %s", de->d_name, err);
			move_mail(tcfg->maildir, de->d_name, ".rcgate-rejected");
			continue;
		}
		rc = trigger_announcement(st, tcfg->announce_senders, raw, len,
					  version, sizeof(version), &created,
					  err, sizeof(err));
		free(raw);
		if (rc == 0) {
			move_mail(tcfg->maildir, de->d_name, "cur");
			sched_kick();
		} else if (rc == -2) {
			/* Stays in new/ and is read again after a pause. */
			log_err("maildir: %s kept for a retry: %s", de->d_name, err);
			transient = 1;
			break;
		} else {
			log_info("maildir: %s ignored: %s", de->d_name, err);
			move_mail(tcfg->maildir, de->d_name,
				  rc > 0 ? "cur" : ".rcgate-rejected");
		}
	}
	closedir(d);
	return transient;
}

/* One scan of new/: after a transient failure (the store was busy), the
 * next in 30 s, else in 1 s. */
static int trigger_pass(struct store *st, void *arg)
{
	(void)arg;
	return scan(st) ? 30 : 1;
}

static struct consumer trigger_consumer = {
	.name = "maildir", .pass = trigger_pass, .period = 1,
};

int trigger_start(const struct config *cfg, const char *db_path, char *err,
		  size_t errlen)
{
	char sub[PATH_MAX];

	tcfg = cfg;
	if (cfg->maildir[0] == '\0')
		return 0;
	for (const char *const *d = (const char *const[]){ "new", "cur", "tmp", NULL };
	     *d != NULL; d++) {
		snprintf(sub, sizeof(sub), "%s/%s", cfg->maildir, *d);
		if (mkdir_p(sub, 0700, err, errlen) < 0)
			return -1;
	}
	if (consumer_start(&trigger_consumer, db_path, err, errlen) < 0)
		return -1;
	log_info("watching maildir %s for announcements", cfg->maildir);
	return 0;
}

void trigger_stop(void)
{
	consumer_stop(&trigger_consumer);
}
