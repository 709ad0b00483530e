/* SPDX-License-Identifier: GPL-2.0-only
 *
 * bisect_revert.c - a culprit checked by reverting it: the revert check's
 * verdict once its job ends (bisect_revert_verdict, bisect_revert_settle),
 * and the targets of an rc that do not bisect again but take another
 * target's culprit and check it there the same way (bisect_follow). The
 * revert check itself is a job of the rc like a bisection's steps
 * (store_bisect_step_add with the culprit to revert; buildjob.c reverts
 * it on the rc's commit).
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "store/store.h"
#include "build/build.h"
#include "job/job.h"
#include "report/report.h"
#include "review/review.h"

/*
 * One bisection per cause (017-bisect-lead.sql): the same tests failing
 * in one rc on several targets are one backport's doing, and bisecting
 * it on each target built and booted every step four times (the
 * eleventh week round: 12 builds, the follow-up 6.5 minutes after the
 * first answer). So the first target of an rc to be confirmed leads (of
 * several at once, the quickest: BISECT_GROUP), and cd of another target
 * waits for it; when it finds the culprit, cd takes that answer and
 * checks it on its own target by its revert check (the rc's commit with
 * the culprit reverted, cd's failing tests): a failure there that the
 * culprit does not explain says "revert: FAIL" for that target, and that
 * target then bisects on its own (store_review.c, BISECT_REFOLLOW). 1 when
 * cd is dealt with (a row of its own written), 0 while it waits, -1 when
 * it bisects on its own (no lead, or each ended without a culprit).
 */
int bisect_follow(struct store *st, const struct bisect_candidate *cd)
{
	struct bisect_lead l;
	char err[512], msg[300], only[1024];
	const char *bad;
	int64_t id;
	int rc = store_bisect_lead(st, cd, &l, err, sizeof(err));

	if (rc < 0)
		log_err("bisection of %s on %s: %s", cd->version, cd->target, err);
	if (rc <= 1)
		return rc == 0 ? -1 : 0;	/* an error: again next pass */
	/* Its own commit when it was built from git (every target of an
	 * rc builds the same one), else the one the lead bisected to. */
	bad = gitsrc_is_commit(cd->bad) ? cd->bad : l.bad;
	snprintf(msg, sizeof(msg), "not bisected again: the culprit of"
		 " bisection %lld on %s, checked on %s by reverting it",
		 (long long)l.id, l.target, cd->target);
	rc = store_bisection_follow(st, cd, l.id, bad, msg, &id, err,
				    sizeof(err));
	if (rc <= 0) {
		if (rc < 0)
			log_err("bisection of %s on %s: %s", cd->version,
				cd->target, err);
		return rc < 0 ? 0 : 1;
	}
	bisect_step_only(strcmp(cd->test, BUILD_TEST) == 0 ? "-" : cd->tests,
			 only, sizeof(only));
	if (store_bisect_step_add(st, id, cd->job_id, bad, only, l.culprit, err,
				  sizeof(err)) < 0)
		log_warn("bisection %lld: no revert check: %s", (long long)id, err);
	log_info("bisection %lld: regression %lld (%s on %s) in %s: %s; revert"
		 " check queued: %.12s reverted on %.12s", (long long)id,
		 (long long)cd->regression_id, cd->test, cd->target, cd->version,
		 msg, l.culprit, bad);
	return 1;
}

const char *bisect_revert_verdict(const struct revert_todo *t, char *msg,
				  size_t len)
{
	const char *culprit = t->culprit != NULL ? t->culprit : "";
	int build = t->test != NULL && strcmp(t->test, BUILD_TEST) == 0;

	if (!job_state_final(t->state))
		return NULL;
	if (strcmp(t->state, JS_DONE) != 0) {
		snprintf(msg, len, "the farm could not build or boot %s with"
			 " %.12s reverted: %s", t->version, culprit,
			 strcmp(t->state, JS_CANCELLED) == 0 ? "the job was"
			 " cancelled" : t->error != NULL ? t->error : t->state);
		return "infra";
	}
	if (t->build_sign != NULL &&
	    strcmp(t->build_sign, BUILD_REVERT_CONFLICT) == 0) {
		snprintf(msg, len, "%.12s does not revert cleanly on top of %s",
			 culprit, t->version);
		return "conflict";
	}
	if (!build && t->build != NULL && strcmp(t->build, "fail") == 0) {
		snprintf(msg, len, "with %.12s reverted on top of %s, the kernel"
			 " does not build: %s", culprit, t->version,
			 t->build_sign != NULL ? t->build_sign : "no error line");
		return "fail";
	}
	if (t->status == NULL) {
		snprintf(msg, len, "the tests did not run on %s with %.12s"
			 " reverted", t->version, culprit);
		return "infra";
	}
	if (strcmp(t->status, "pass") == 0) {
		snprintf(msg, len, "reverting %.12s on top of %s makes %s%s",
			 culprit, t->version, build ? "the kernel build" : t->test,
			 build ? "" : " pass");
		return "pass";
	}
	if (build)
		snprintf(msg, len, "with %.12s reverted on top of %s, the kernel"
			 " still does not build: %s", culprit, t->version,
			 t->build_sign != NULL ? t->build_sign : "no error line");
	else
		snprintf(msg, len, "with %.12s reverted on top of %s, still"
			 " failing: %s", culprit, t->version,
			 t->failing != NULL ? t->failing : t->test);
	return "fail";
}

int bisect_revert_settle(struct store *st, const struct engine_context *c,
			 char *err, size_t errlen)
{
	struct rowset todo = { 0 };

	if (store_revert_pending(st, &todo, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < todo.n; i++) {
		const struct revert_todo *t = &((const struct revert_todo *)todo.v)[i];
		char msg[1024];
		const char *state = bisect_revert_verdict(t, msg, sizeof(msg));

		if (state == NULL)
			continue;
		log_info("bisection %lld: revert check (job %lld): %s: %s",
			 (long long)t->id, (long long)t->job_id, state, msg);
		if (store_revert_finish(st, t->id, state, msg, err, errlen) == 0)
			reply_bisection(st, c->cfg, t->id);
		else
			log_err("bisection %lld: %s", (long long)t->id, err);
	}
	rowset_free(&todo);
	return 0;
}
