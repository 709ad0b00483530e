/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jobstate.c - the job state table: every state a job can be in, whether
 * it is final (the job will not change again unless retried) and whether
 * a worker holds it (active). The store's SQL uses the JOB_*_SQL lists
 * base.h derives from it (tests/unit/jobstate.c checks they agree, and
 * the schema's CHECK constraint refuses any other name); the API
 * publishes it at /api/v1/states and the dashboard reads it from there.
 */
#include <string.h>

#include "base/base.h"

static const struct job_state states[] = {
	{ JS_QUEUED, 0, 0, "waiting for a worker" },
	{ JS_FETCHING, 0, 1, "downloading the kernel (or its source)" },
	{ JS_BUILDING, 0, 1, "building the kernel from the rc's source" },
	{ JS_BOOTING, 0, 1, "building the initramfs and scratch disks" },
	{ JS_RUNNING, 0, 1, "the guest runs the suite" },
	{ JS_DONE, 1, 0, "results stored" },
	{ JS_INFRA_ERROR, 1, 0, "could not be tested (never a test result)" },
	{ JS_CANCELLED, 1, 0, "stopped by request" },
};

size_t job_state_count(void)
{
	return sizeof(states) / sizeof(states[0]);
}

const struct job_state *job_state_at(size_t i)
{
	return i < job_state_count() ? &states[i] : NULL;
}

const struct job_state *job_state_find(const char *name)
{
	for (size_t i = 0; name != NULL && i < job_state_count(); i++) {
		if (strcmp(states[i].name, name) == 0)
			return &states[i];
	}
	return NULL;
}

int job_state_final(const char *name)
{
	const struct job_state *s = job_state_find(name);

	return s != NULL && s->final;
}

void result_counts_add(struct result_counts *c, const char *status)
{
	if (status == NULL)
		return;
	if (strcmp(status, "pass") == 0)
		c->pass++;
	else if (strcmp(status, "fail") == 0)
		c->fail++;
	else if (strcmp(status, "skip") == 0)
		c->skip++;
	/* xfail: expected to fail, counted nowhere */
}
