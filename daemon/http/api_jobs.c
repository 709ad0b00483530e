/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * api_jobs.c - the job resource: one job with its results and events, its
 * log (the daemon's, the consoles and the KTAP output of every boot, in
 * one text that a client can follow with Range) and its retry.
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "store/store.h"
#include "build/build.h"
#include "job/job.h"
#include "http/http.h"
#include "api_internal.h"

/* How much of the end of each file the job log shows. */
#define LOG_PART_BYTES (2u << 20)

/* The job row for {id} (its id in *id), or NULL with the error response
 * set. */
static json_t *job_or_error(struct http_request *req,
			    struct http_response *resp, int64_t *id)
{
	json_t *job, *j;

	if (parse_id(req->params[0], id) < 0) {
		http_error(resp, 400, "job id must be a positive integer");
		return NULL;
	}
	job = rows(Q_JOB, "i", *id);
	if (job == NULL) {
		http_error(resp, 500, "database error");
		return NULL;
	}
	if (json_array_size(job) == 0) {
		json_decref(job);
		http_error(resp, 404, "no job %lld", (long long)*id);
		return NULL;
	}
	j = json_incref(json_array_get(job, 0));
	job_booleans(j);
	json_decref(job);
	return j;
}

int h_job(struct http_request *req, struct http_response *resp)
{
	int64_t id;
	json_t *j = job_or_error(req, resp, &id);

	if (j == NULL)
		return 0;
	json_object_set_new(j, "results", rows(Q_JOB_RESULTS, "i", (int64_t)id));
	json_object_set_new(j, "events", rows(Q_JOB_EVENTS, "i", (int64_t)id));
	return http_json(resp, 200, j);
}

/* Appends "==== title ====" and the file's tail (at most cap bytes) to
 * *buf; a missing file adds nothing. */
static int append_file(char **buf, size_t *len, const char *title,
		       const char *path, size_t cap)
{
	char err[256];
	size_t flen = 0;
	char *text = file_read(path, 64u << 20, &flen, err, sizeof(err));
	const char *start;
	char *nb;
	size_t hlen, take;
	char head[256];

	if (text == NULL)
		return 0;
	start = text;
	take = flen;
	if (take > cap) {
		start = text + (flen - cap);
		take = cap;
	}
	hlen = (size_t)snprintf(head, sizeof(head), "==== %s%s ====\n", title,
				take < flen ? " (tail)" : "");
	nb = realloc(*buf, *len + hlen + take + 2);
	if (nb == NULL) {
		free(text);
		return -1;
	}
	*buf = nb;
	memcpy(*buf + *len, head, hlen);
	memcpy(*buf + *len + hlen, start, take);
	*len += hlen + take;
	if (take > 0 && start[take - 1] != '\n')
		(*buf)[(*len)++] = '\n';
	(*buf)[*len] = '\0';
	free(text);
	return 0;
}

int h_job_log(struct http_request *req, struct http_response *resp)
{
	int64_t id;
	json_t *job;
	long attempt;
	char dir[PATH_MAX], path[PATH_MAX + 32];
	char *buf = NULL;
	size_t len = 0;
	static const char *const parts[][2] = {
		{ "rcgate", RCGATE_JOB_LOG },
		/* A release built from source: make's output (build.c). */
		{ "build", BUILD_LOG },
		{ "console", RCGATE_CONSOLE_LOG },
		{ "results (KTAP)", RCGATE_RESULTS_KTAP },
		/* The power-cut test's two boots (job/boot.c phase_paths). */
		{ RCGATE_PHASE_CRASH_WRITE " console",
		  RCGATE_PHASE_CONSOLE_LOG(RCGATE_PHASE_CRASH_WRITE) },
		{ RCGATE_PHASE_CRASH_WRITE " output",
		  RCGATE_PHASE_KTAP(RCGATE_PHASE_CRASH_WRITE) },
		{ RCGATE_PHASE_CRASH_VERIFY " console",
		  RCGATE_PHASE_CONSOLE_LOG(RCGATE_PHASE_CRASH_VERIFY) },
		{ RCGATE_PHASE_CRASH_VERIFY " results (KTAP)",
		  RCGATE_PHASE_KTAP(RCGATE_PHASE_CRASH_VERIFY) },
	};

	job = job_or_error(req, resp, &id);
	if (job == NULL)
		return 0;
	attempt = (long)json_integer_value(json_object_get(job, "attempt"));
	json_decref(job);
	snprintf(dir, sizeof(dir), "%s/jobs/%lld/%ld", api_ctx.cfg->state_dir,
		 (long long)id, attempt);
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, parts[i][1]);
		if (append_file(&buf, &len, parts[i][0], path,
				LOG_PART_BYTES) < 0) {
			free(buf);
			return http_error(resp, 500, "out of memory");
		}
	}
	if (buf == NULL) {
		buf = strdup("");
		if (buf == NULL)
			return http_error(resp, 500, "out of memory");
	}
	resp->ranges = 1;	/* follow a running job: Range: bytes=N- */
	return http_text(resp, 200, "text/plain; charset=utf-8", buf, len);
}

/* The .config the job's kernel was built with (a build from source or
 * git): what the report's "config:" link gives a reader who rebuilds it. */
int h_job_config(struct http_request *req, struct http_response *resp)
{
	int64_t id;
	json_t *job;
	long attempt;
	char path[PATH_MAX];
	char *text;
	size_t len;

	job = job_or_error(req, resp, &id);
	if (job == NULL)
		return 0;
	attempt = (long)json_integer_value(json_object_get(job, "attempt"));
	json_decref(job);
	if (pathf(path, sizeof(path), "%s/jobs/%lld/%ld/%s",
		  api_ctx.cfg->state_dir, (long long)id, attempt,
		  BUILD_CONFIG) < 0)
		return http_error(resp, 404, "job %lld has no kernel config",
				  (long long)id);
	text = file_read(path, 16 << 20, &len, NULL, 0);
	if (text == NULL)
		return http_error(resp, 404, "job %lld built no kernel here: no"
				  " config", (long long)id);
	return http_text(resp, 200, "text/plain; charset=utf-8", text, len);
}

int h_job_retry(struct http_request *req, struct http_response *resp)
{
	int64_t id;
	char err[256];
	int rc;

	if (parse_id(req->params[0], &id) < 0)
		return http_error(resp, 400, "job id must be a positive integer");
	pthread_mutex_lock(&api_lock);
	rc = store_job_retry(api_store, id, err, sizeof(err));
	pthread_mutex_unlock(&api_lock);
	if (rc < 0)
		return http_error(resp, 500, "%s", err);
	if (rc == 0)
		return http_error(resp, 409, "job %lld is unknown or not finished",
				  (long long)id);
	sched_kick();
	return h_job(req, resp);
}
