/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kcidb.c - builds a release's KCIDB v5.3 submission from typed rows
 * (report.h's kcidb.c section says which rules of the schema it keeps, and why).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "store/store.h"
#include "build/build.h"
#include "report/report.h"

void kcidb_origin(const char *farm, char *out, size_t len)
{
	size_t n = 0;

	if (len == 0)
		return;
	for (const char *c = farm; *c != '\0' && n + 1 < len; c++) {
		unsigned char u = (unsigned char)*c;

		out[n++] = isalnum(u) && u < 0x80 ? (char)tolower(u) : '_';
	}
	if (n == 0 && len > 6)
		n = (size_t)snprintf(out, len, "rcgate");
	out[n] = '\0';
}

int kcidb_repository_url(const char *tree, char *out, size_t len)
{
	static const char *const kernel_org[] = {
		"git://git.kernel.org/", "http://git.kernel.org/",
	};
	int n;

	if (tree == NULL || tree[0] == '\0')
		return -1;
	if (strncmp(tree, "https://", 8) == 0) {
		n = snprintf(out, len, "%s", tree);
		return n >= 0 && (size_t)n < len ? 0 : -1;
	}
	/* kernel.org serves every tree it has over https too; other hosts'
	 * git:// trees may have no https:// form at all. */
	for (size_t i = 0; i < sizeof(kernel_org) / sizeof(kernel_org[0]); i++) {
		size_t p = strlen(kernel_org[i]);

		if (strncmp(tree, kernel_org[i], p) == 0) {
			n = snprintf(out, len, "https://git.kernel.org/%s", tree + p);
			return n >= 0 && (size_t)n < len ? 0 : -1;
		}
	}
	return -1;
}

static const char *test_status(const char *status)
{
	if (strcmp(status, "pass") == 0 || strcmp(status, "xfail") == 0)
		return "PASS";
	if (strcmp(status, "fail") == 0)
		return "FAIL";
	return "SKIP";
}

/* A job's state as its build's status: the kernel was had and booted
 * (PASS), the infrastructure failed (ERROR), or it never ran (MISS). */
static const char *build_status(const char *state)
{
	if (strcmp(state, JS_DONE) == 0)
		return "PASS";
	if (strcmp(state, JS_INFRA_ERROR) == 0)
		return "ERROR";
	return "MISS";
}

/* A dot path element keeps [a-zA-Z0-9_-]; anything else becomes '_'. */
static void path_append(char *out, size_t len, const char *part)
{
	size_t n = strlen(out);

	if (n > 0 && n + 1 < len)
		out[n++] = '.';
	for (const char *c = part; *c != '\0' && n + 1 < len; c++) {
		unsigned char u = (unsigned char)*c;

		out[n++] = u == '.' || u == '-' || u == '_' || (isalnum(u) && u < 0x80)
			? (char)u : '_';
	}
	out[n] = '\0';
}

/* An issue gains a version when its culprit is known. */
static int issue_version(const struct kcidb_regression *g)
{
	return g->culprit != NULL ? 2 : 1;
}

static void set_string(json_t *o, const char *key, const char *value)
{
	if (value != NULL && value[0] != '\0')
		json_object_set_new(o, key, json_string(value));
}

/* One submission being written: its ids and the arrays it fills. */
struct submission {
	const struct kcidb_release *rel;
	const struct kcidb_regression *regs;
	size_t nregs;
	char origin[64], checkout_id[160];
	int public;		/* rel has a public URL to link */
	json_t *builds, *tests, *issues, *incidents;
};

/* A regression as a KCIDB issue (its version counts its culprit). */
static json_t *issue_of(const struct submission *sub,
			const struct kcidb_regression *g)
{
	char issue_id[96], comment[1024], report[1200];
	json_t *issue;

	snprintf(issue_id, sizeof(issue_id), "%s:regression%lld", sub->origin,
		 (long long)g->id);
	if (g->culprit != NULL)
		snprintf(comment, sizeof(comment), "%s fails on %s (regression"
			 " %lld): first bad commit %s (\"%s\")%s%s", g->test,
			 g->target, (long long)g->id, g->culprit,
			 g->culprit_subject != NULL ? g->culprit_subject : "",
			 g->culprit_upstream != NULL ? ", backport of upstream " : "",
			 g->culprit_upstream != NULL ? g->culprit_upstream : "");
	else
		snprintf(comment, sizeof(comment), "%s fails on %s (regression"
			 " %lld)", g->test, g->target, (long long)g->id);
	issue = json_pack("{s:s,s:i,s:s,s:s}", "id", issue_id, "version",
			  issue_version(g), "origin", sub->origin, "comment",
			  comment);
	if (g->culprit != NULL) {
		json_t *misc = json_pack("{s:s}", "culprit_commit", g->culprit);

		if (g->culprit_upstream != NULL)
			json_object_set_new(misc, "culprit_upstream",
					    json_string(g->culprit_upstream));
		json_object_set_new(issue, "culprit", json_pack("{s:b,s:b,s:b}",
			"code", 1, "tool", 0, "harness", 0));
		json_object_set_new(issue, "misc", misc);
	}
	if (sub->public) {
		snprintf(report, sizeof(report), "%s/api/v1/regressions/%lld",
			 sub->rel->public_url, (long long)g->id);
		json_object_set_new(issue, "report_url", json_string(report));
	}
	return issue;
}

/* A failing build or test is an incident of each regression of that test
 * on that target: id_key is "build_id" or "test_id", suffix ends the
 * incident's id ("build" or the test's name). */
static void add_incidents(struct submission *sub, const char *test,
			  const char *target, long long job_id,
			  const char *id_key, const char *id,
			  const char *suffix)
{
	for (size_t r = 0; r < sub->nregs; r++) {
		const struct kcidb_regression *g = &sub->regs[r];
		char issue_id[96], incident_id[360];

		if (g->flaky || strcmp(g->test, test) != 0 ||
		    strcmp(g->target, target) != 0)
			continue;
		snprintf(issue_id, sizeof(issue_id), "%s:regression%lld",
			 sub->origin, (long long)g->id);
		snprintf(incident_id, sizeof(incident_id), "%s:%lld-job%lld-%s",
			 sub->origin, (long long)g->id, job_id, suffix);
		json_array_append_new(sub->incidents, json_pack(
			"{s:s,s:s,s:s,s:i,s:s,s:b}", "id", incident_id,
			"origin", sub->origin, "issue_id", issue_id,
			"issue_version", issue_version(g), id_key, id,
			"present", 1));
	}
}

/* The job's tests under its build, each failure an incident. */
static void add_tests(struct submission *sub, const struct kcidb_job *job,
		      const char *build_id, const char *log_url)
{
	char env[96];

	snprintf(env, sizeof(env), "qemu-%s (%s)", job->target,
		 job->accel != NULL ? job->accel : "not booted");
	for (size_t k = 0; k < job->nresults; k++) {
		const struct kcidb_result *res = &job->results[k];
		const char *status = test_status(res->status);
		char test_id[300], path[256] = "";
		json_t *t;

		if (strcmp(res->test, BUILD_TEST) == 0)
			continue;
		snprintf(test_id, sizeof(test_id), "%s:job%lld-%s", sub->origin,
			 (long long)job->id, res->test);
		path_append(path, sizeof(path), job->suite);
		path_append(path, sizeof(path), res->test);
		t = json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:s}}", "id", test_id,
			      "build_id", build_id, "origin", sub->origin, "path",
			      path, "status", status, "environment",
			      "comment", env);
		set_string(t, "start_time", job->started);
		if (res->duration_ms >= 0)
			json_object_set_new(t, "duration",
				json_real((double)res->duration_ms / 1000.0));
		set_string(t, "log_url", log_url);
		json_array_append_new(sub->tests, t);
		if (strcmp(status, "FAIL") == 0)
			add_incidents(sub, res->test, job->target,
				      (long long)job->id, "test_id", test_id,
				      res->test);
	}
}

/* A job is a build (of the kernel it booted) with its tests. */
static void add_job(struct submission *sub, const struct kcidb_job *job)
{
	char build_id[200], log_url[1200] = "";
	const char *bstatus = build_status(job->state);
	json_t *build;

	snprintf(build_id, sizeof(build_id), "%s:%s-job%lld", sub->origin,
		 sub->rel->version, (long long)job->id);
	/* Only a configured public URL: the daemon's own address may be
	 * loopback, which means nothing to KernelCI. */
	if (sub->public)
		snprintf(log_url, sizeof(log_url), "%s/api/v1/jobs/%lld/log",
			 sub->rel->public_url, (long long)job->id);
	/* A kernel rcgate built has its build's own result: that is the
	 * build's status (FAIL: the source does not build), not a test, and
	 * its regression's incidents name the build. */
	for (size_t k = 0; k < job->nresults; k++) {
		if (strcmp(job->results[k].test, BUILD_TEST) == 0)
			bstatus = test_status(job->results[k].status);
	}
	build = json_pack("{s:s,s:s,s:s,s:s,s:s}", "id", build_id,
			  "checkout_id", sub->checkout_id, "origin", sub->origin,
			  "architecture", job->target, "status", bstatus);
	set_string(build, "log_url", log_url);
	json_array_append_new(sub->builds, build);
	if (strcmp(bstatus, "FAIL") == 0)
		add_incidents(sub, BUILD_TEST, job->target, (long long)job->id,
			      "build_id", build_id, "build");
	add_tests(sub, job, build_id, log_url);
}

json_t *kcidb_submission(const char *farm, const struct kcidb_release *rel,
			 const struct kcidb_job *jobs, size_t njobs,
			 const struct kcidb_regression *regs, size_t nregs)
{
	struct submission sub = {
		.rel = rel, .regs = regs, .nregs = nregs,
		.public = rel->public_url != NULL && rel->public_url[0] != '\0',
		.builds = json_array(), .tests = json_array(),
		.issues = json_array(), .incidents = json_array(),
	};
	char url[1100];
	json_t *co;

	kcidb_origin(farm, sub.origin, sizeof(sub.origin));
	snprintf(sub.checkout_id, sizeof(sub.checkout_id), "%s:%s", sub.origin,
		 rel->version);
	co = json_pack("{s:s,s:s,s:s,s:s}", "id", sub.checkout_id, "origin",
		       sub.origin, "tree_name", rel->rc > 0 ? "stable-rc" : "stable",
		       "comment", rel->version);
	if (kcidb_repository_url(rel->git_tree, url, sizeof(url)) == 0)
		json_object_set_new(co, "git_repository_url", json_string(url));
	set_string(co, "git_repository_branch", rel->git_branch);
	set_string(co, "message_id", rel->message_id);
	for (size_t i = 0; i < nregs; i++) {
		if (!regs[i].flaky)
			json_array_append_new(sub.issues, issue_of(&sub, &regs[i]));
	}
	for (size_t j = 0; j < njobs; j++)
		add_job(&sub, &jobs[j]);
	return json_pack("{s:{s:i,s:i},s:[o],s:o,s:o,s:o,s:o}", "version",
			 "major", 5, "minor", 3, "checkouts", co, "builds",
			 sub.builds, "tests", sub.tests, "issues", sub.issues,
			 "incidents", sub.incidents);
}
