/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * collect.c - owns what a boot's output means: a complete KTAP report
 * becomes result rows (row results stores them, with the build's and the
 * crash test's, in one transaction); anything else is an infra error of
 * the right kind; the kernel that ran must be the one the release names.
 */
#include <stdlib.h>
#include <string.h>

#include "job_internal.h"

#include "base/base.h"
#include "store/store.h"
#include "artifact/artifact.h"
#include "guests/guests.h"
#include "job/job.h"

/* The agent's own RCGATE_INFRA reason, if its output has one. */
char *agent_infra_reason(const char *ktap_path)
{
	size_t len = 0;
	char *text = file_read(ktap_path, 16u << 20, &len, NULL, 0);
	struct ktap_report rep;
	char *reason = NULL;

	if (text == NULL)
		return NULL;
	ktap_parse(text, len, &rep);
	free(text);
	if (rep.infra_reason != NULL)
		reason = strdup(rep.infra_reason);
	ktap_report_free(&rep);
	return reason;
}

int console_has(const char *path, const char *needle)
{
	char *text = file_read(path, 32u << 20, NULL, NULL, 0);
	int found;

	if (text == NULL)
		return 0;
	found = strstr(text, needle) != NULL;
	free(text);
	return found;
}

static const char *status_word(enum ktap_status s)
{
	switch (s) {
	case KTAP_PASS:
		return "pass";
	case KTAP_FAIL:
		return "fail";
	case KTAP_SKIP:
		return "skip";
	case KTAP_XFAIL:
		return "xfail";
	}
	return "fail";
}

void phase_results_free(struct phase_results *p)
{
	if (p->parsed)
		ktap_report_free(&p->report);
	free(p->rows);
	memset(p, 0, sizeof(*p));
}

int results_from_report(struct phase_results *p, const char **kind,
			char *msg, size_t msglen)
{
	const struct ktap_report *rep = &p->report;

	if (rep->infra_reason != NULL) {
		*kind = "agent";
		snprintf(msg, msglen, "%s", rep->infra_reason);
		return -1;
	}
	if (!rep->complete) {
		*kind = "agent_output";
		snprintf(msg, msglen, "agent output incomplete: %s",
			 rep->error != NULL ? rep->error
					    : "no completeness marker");
		return -1;
	}
	p->rows = calloc(rep->nresults + 1, sizeof(*p->rows));
	if (p->rows == NULL) {
		*kind = "internal";
		snprintf(msg, msglen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < rep->nresults; i++) {
		const struct ktap_result *res = &rep->results[i];

		if (res->is_suite)
			continue;
		p->rows[p->n].test = res->path;
		p->rows[p->n].status = status_word(res->status);
		p->rows[p->n].diagnostic = res->diagnostic != NULL
			? res->diagnostic : res->directive_reason;
		p->rows[p->n].duration_ms = res->duration_ms;
		p->rows[p->n].timed = res->duration_ms >= 0;
		p->n++;
	}
	return 0;
}

int collect(struct jobrun *r, const char *ktap_path, struct phase_results *p)
{
	char err[512];
	const char *kind;
	size_t len = 0;
	char *text = file_read(ktap_path, 16u << 20, &len, err, sizeof(err));
	int rc;

	if (text == NULL) {
		infra(r, "agent_output", err);
		return -1;
	}
	rc = ktap_parse(text, len, &p->report);
	p->parsed = 1;
	free(text);
	if (rc < 0 && p->report.infra_reason == NULL)
		p->report.complete = 0;
	if (results_from_report(p, &kind, err, sizeof(err)) < 0) {
		infra(r, kind, err);
		return -1;
	}
	return 0;
}

void store_results(struct jobrun *r, struct phase_results *phases,
		   size_t nphases, double seconds)
{
	struct result_row *all;
	size_t n = 0, total = 0;
	struct result_counts c = { 0 };
	char err[512];

	for (size_t i = 0; i < nphases; i++)
		total += phases[i].n;
	all = calloc(total + 1, sizeof(*all));
	if (all == NULL) {
		infra(r, "internal", "out of memory");
		return;
	}
	for (size_t i = 0; i < nphases; i++) {
		for (size_t k = 0; k < phases[i].n; k++) {
			all[n] = phases[i].rows[k];
			result_counts_add(&c, all[n].status);
			n++;
		}
	}
	if (store_job_done(r->st, r->job->id, all, n, seconds, err,
			   sizeof(err)) < 0)
		log_err("job=%lld store results: %s", (long long)r->job->id, err);
	free(all);
	jlog(r, "done: %ld pass, %ld fail, %ld skip; suite boot %.1f s", c.pass,
	     c.fail, c.skip, seconds);
	log_info("job=%lld target=%s version=%s done pass=%ld fail=%ld skip=%ld"
		 " seconds=%.1f", (long long)r->job->id, r->job->target,
		 r->job->version, c.pass, c.fail, c.skip, seconds);
}

void agent_kernel(const char *info, char *out, size_t len)
{
	const char *k = info != NULL ? strstr(info, "kernel=") : NULL;

	out[0] = '\0';
	if (k != NULL)
		snprintf(out, len, "%.*s", (int)strcspn(k + 7, " "), k + 7);
}

/* The kernel that ran must be the release's version (6.1.64 for
 * 6.1.64-rc1), as it says itself, unless the artifact is marked custom:
 * Debian's 6.1.192 tested as 6.1.64-rc1 would be a wrong answer to the
 * review. A mismatch is kept on the job either way; without custom it
 * ends the job (no retry: the same kernel would say the same). */
int kernel_identity(struct jobrun *r, const struct ktap_report *rep)
{
	char release[128], running[32], msg[512], err[256];
	struct kversion want;
	struct strbuf mb;

	agent_kernel(rep->agent_info, release, sizeof(release));
	if (kversion_running(release, rep->uts_version, running,
			     sizeof(running)) < 0) {
		jlog(r, "kernel identity unknown (uname -r '%s'): not checked",
		     release);
		return 0;
	}
	if (kversion_parse(r->job->version, &want, err, sizeof(err)) < 0 ||
	    kversion_matches(&want, running))
		return 0;
	strbuf_init(&mb, msg, sizeof(msg));
	strbuf_printf(&mb, "the kernel that ran says it is %s (uname -r %s),"
		      " not %s", running, release, r->job->version);
	pthread_mutex_lock(&r->lock);
	store_job_mismatch(r->st, r->job->id, msg, NULL, 0);
	pthread_mutex_unlock(&r->lock);
	if (r->job->custom) {
		jlog(r, "%s: a custom build, results kept", msg);
		return 0;
	}
	strbuf_printf(&mb, "; submit the artifact with \"custom\": true if"
		      " this build is meant");
	infra_as(r, "kernel_mismatch", msg, 1);
	return -1;
}

void boot_failure_kind(enum guest_outcome outcome, const char *agent_reason,
		       int console_panicked, const char **kind,
		       const char **message)
{
	if (agent_reason != NULL) {
		*kind = "agent";
		*message = agent_reason;
	} else if (console_panicked) {
		*kind = "kernel_panic";
		*message = outcome == GUEST_TIMEOUT
			? "kernel panicked (see console log); guest destroyed"
			  " at the timeout"
			: "kernel panicked (see console log)";
	} else if (outcome == GUEST_TIMEOUT) {
		*kind = "boot_timeout";
		*message = "no complete result before the timeout; guest"
			   " destroyed";
	} else {
		*kind = "agent_output";
		*message = "guest stopped before the agent reported completion";
	}
}

static int results_exec(struct jobrun *r)
{
	if (r->failed)
		return PHASE_STOP;
	store_results(r, r->results, RESULTS_SETS, r->suite_seconds);
	return PHASE_END;
}

const struct phase phase_results = {
	.name = "results", .state = JS_RUNNING, .exec = results_exec,
	.step = offsetof(struct job_steps, results), .flags = PHASE_JOIN,
};
