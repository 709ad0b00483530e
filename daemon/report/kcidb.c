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

json_t *kcidb_submission(const char *farm, const struct kcidb_release *rel,
			 const struct kcidb_job *jobs, size_t njobs,
			 const struct kcidb_regression *regs, size_t nregs)
{
	char origin[64], checkout_id[160], url[1100];
	int public = rel->public_url != NULL && rel->public_url[0] != '\0';
	json_t *co, *builds = json_array(), *tests = json_array(),
		*issues = json_array(), *incidents = json_array(), *out;

	kcidb_origin(farm, origin, sizeof(origin));
	snprintf(checkout_id, sizeof(checkout_id), "%s:%s", origin, rel->version);
	co = json_pack("{s:s,s:s,s:s,s:s}", "id", checkout_id, "origin", origin,
		       "tree_name", rel->rc > 0 ? "stable-rc" : "stable",
		       "comment", rel->version);
	if (kcidb_repository_url(rel->git_tree, url, sizeof(url)) == 0)
		json_object_set_new(co, "git_repository_url", json_string(url));
	set_string(co, "git_repository_branch", rel->git_branch);
	set_string(co, "message_id", rel->message_id);
	for (size_t i = 0; i < nregs; i++) {
		char issue_id[96], comment[1024], report[1200];
		const struct kcidb_regression *g = &regs[i];
		json_t *issue;

		if (g->flaky)
			continue;
		snprintf(issue_id, sizeof(issue_id), "%s:regression%lld", origin,
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
				  issue_version(g), "origin", origin, "comment",
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
		if (public) {
			snprintf(report, sizeof(report), "%s/api/v1/regressions/%lld",
				 rel->public_url, (long long)g->id);
			json_object_set_new(issue, "report_url", json_string(report));
		}
		json_array_append_new(issues, issue);
	}
	for (size_t j = 0; j < njobs; j++) {
		const struct kcidb_job *job = &jobs[j];
		char build_id[200], env[96], log_url[1200];
		json_t *build;

		snprintf(build_id, sizeof(build_id), "%s:%s-job%lld", origin,
			 rel->version, (long long)job->id);
		snprintf(env, sizeof(env), "qemu-%s (%s)", job->target,
			 job->accel != NULL ? job->accel : "not booted");
		/* Only a configured public URL: the daemon's own address may be
		 * loopback, which means nothing to KernelCI. */
		log_url[0] = '\0';
		if (public)
			snprintf(log_url, sizeof(log_url), "%s/api/v1/jobs/%lld/log",
				 rel->public_url, (long long)job->id);
		/* A kernel rcgate built has its build's own result: that is
		 * the build's status (FAIL: the source does not build), not
		 * a test, and its regression's incidents name the build. */
		const char *bstatus = build_status(job->state);

		for (size_t k = 0; k < job->nresults; k++) {
			if (strcmp(job->results[k].test, BUILD_TEST) == 0)
				bstatus = test_status(job->results[k].status);
		}
		build = json_pack("{s:s,s:s,s:s,s:s,s:s}", "id", build_id,
				  "checkout_id", checkout_id, "origin", origin,
				  "architecture", job->target, "status", bstatus);
		set_string(build, "log_url", log_url);
		json_array_append_new(builds, build);
		for (size_t r = 0; r < nregs && strcmp(bstatus, "FAIL") == 0; r++) {
			char issue_id[96], incident_id[360];

			if (regs[r].flaky || strcmp(regs[r].test, BUILD_TEST) != 0 ||
			    strcmp(regs[r].target, job->target) != 0)
				continue;
			snprintf(issue_id, sizeof(issue_id), "%s:regression%lld",
				 origin, (long long)regs[r].id);
			snprintf(incident_id, sizeof(incident_id), "%s:%lld-job%lld-build",
				 origin, (long long)regs[r].id, (long long)job->id);
			json_array_append_new(incidents, json_pack(
				"{s:s,s:s,s:s,s:i,s:s,s:b}", "id", incident_id,
				"origin", origin, "issue_id", issue_id,
				"issue_version", issue_version(&regs[r]), "build_id",
				build_id, "present", 1));
		}
		for (size_t k = 0; k < job->nresults; k++) {
			const struct kcidb_result *res = &job->results[k];
			const char *status = test_status(res->status);
			char test_id[300], path[256] = "";
			json_t *t;

			if (strcmp(res->test, BUILD_TEST) == 0)
				continue;

			snprintf(test_id, sizeof(test_id), "%s:job%lld-%s", origin,
				 (long long)job->id, res->test);
			path_append(path, sizeof(path), job->suite);
			path_append(path, sizeof(path), res->test);
			t = json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:s}}", "id", test_id,
				      "build_id", build_id, "origin", origin, "path",
				      path, "status", status, "environment",
				      "comment", env);
			set_string(t, "start_time", job->started);
			if (res->duration_ms >= 0)
				json_object_set_new(t, "duration",
					json_real((double)res->duration_ms / 1000.0));
			set_string(t, "log_url", log_url);
			json_array_append_new(tests, t);
			if (strcmp(status, "FAIL") != 0)
				continue;
			/* This failing run is an incident of its regression. */
			for (size_t r = 0; r < nregs; r++) {
				char issue_id[96], incident_id[360];

				if (regs[r].flaky || strcmp(regs[r].test, res->test) != 0 ||
				    strcmp(regs[r].target, job->target) != 0)
					continue;
				snprintf(issue_id, sizeof(issue_id), "%s:regression%lld",
					 origin, (long long)regs[r].id);
				snprintf(incident_id, sizeof(incident_id),
					 "%s:%lld-job%lld-%s", origin,
					 (long long)regs[r].id, (long long)job->id,
					 res->test);
				json_array_append_new(incidents, json_pack(
					"{s:s,s:s,s:s,s:i,s:s,s:b}", "id", incident_id,
					"origin", origin, "issue_id", issue_id,
					"issue_version", issue_version(&regs[r]),
					"test_id", test_id, "present", 1));
			}
		}
	}
	out = json_pack("{s:{s:i,s:i},s:[o],s:o,s:o,s:o,s:o}", "version",
			"major", 5, "minor", 3, "checkouts", co, "builds", builds,
			"tests", tests, "issues", issues, "incidents", incidents);
	return out;
}
