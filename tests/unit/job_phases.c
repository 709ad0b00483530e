/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/job/phases.c (the runner, with stub phases) and
 * the pure parts of daemon/job/collect.c: KTAP into result rows, what a
 * boot that did not complete is, and the kernel named by the agent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "job/job_internal.h"
#include "testutil.h"

/* ---- the runner ---- */

/* What the stub phases did, in order: "exec:<name>" and "state:<from>><to>". */
static char trace[1024];
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static int refuse_to;		/* advance into this state is refused */
static const char *refused_state;

static void note(const char *what, const char *a, const char *b)
{
	size_t len;

	pthread_mutex_lock(&trace_lock);
	len = strlen(trace);
	snprintf(trace + len, sizeof(trace) - len, "%s:%s%s%s ", what, a,
		 b[0] != '\0' ? ">" : "", b);
	pthread_mutex_unlock(&trace_lock);
}

static int stub_advance(struct jobrun *r, const char *from, const char *to)
{
	(void)r;
	note("state", from, to);
	return !(refuse_to && strcmp(to, refused_state) == 0);
}

/* Stub rows: their behaviour is their name's. */
static int exec_next(struct jobrun *r)
{
	(void)r;
	note("exec", "next", "");
	return PHASE_NEXT;
}

static int exec_end(struct jobrun *r)
{
	(void)r;
	note("exec", "end", "");
	return PHASE_END;
}

static int exec_fail(struct jobrun *r)
{
	note("exec", "fail", "");
	*r->cancel = 1;		/* as infra() does */
	return PHASE_STOP;
}

static int exec_cancel(struct jobrun *r)
{
	note("exec", "cancel", "");
	*r->cancel = 1;		/* the monitor saw the API's cancel */
	return PHASE_NEXT;
}

static int exec_slow(struct jobrun *r)
{
	usleep(50 * 1000);
	note("exec", "slow", "");
	return r->step ? PHASE_STOP : PHASE_NEXT;
}

static int exec_timed(struct jobrun *r)
{
	(void)r;
	usleep(20 * 1000);
	note("exec", "timed", "");
	return PHASE_NEXT;
}

static int never(const struct jobrun *r)
{
	(void)r;
	return 0;
}

static const struct phase p_fetch = { "fetch", JS_FETCHING, NULL, exec_next,
				      PHASE_STEP_NONE, 0 };
static const struct phase p_skip = { "skip", JS_BUILDING, never, exec_fail,
				     PHASE_STEP_NONE, 0 };
static const struct phase p_boot = { "boot", JS_BOOTING, NULL, exec_timed,
				     offsetof(struct job_steps, disks), 0 };
static const struct phase p_run = { "run", JS_RUNNING, NULL, exec_next,
				    PHASE_STEP_NONE, 0 };
static const struct phase p_beside = { "beside", JS_RUNNING, NULL, exec_slow,
				       PHASE_STEP_NONE, PHASE_BESIDE };
static const struct phase p_join = { "join", JS_RUNNING, NULL, exec_end,
				     PHASE_STEP_NONE, PHASE_JOIN };
static const struct phase p_end = { "end", JS_BUILDING, NULL, exec_end,
				    PHASE_STEP_NONE, 0 };
static const struct phase p_fail = { "fail", JS_BOOTING, NULL, exec_fail,
				     PHASE_STEP_NONE, 0 };
static const struct phase p_cancel = { "cancel", JS_BOOTING, NULL,
				       exec_cancel, PHASE_STEP_NONE, 0 };

static atomic_int cancel_flag;

static void run_setup(struct jobrun *r)
{
	memset(r, 0, sizeof(*r));
	cancel_flag = 0;
	r->cancel = &cancel_flag;
	pthread_mutex_init(&r->lock, NULL);
	trace[0] = '\0';
	refuse_to = 0;
}

static int run_table(struct jobrun *r, const struct phase *const *t, size_t n)
{
	int rc = phases_run(t, n, r, stub_advance);

	pthread_mutex_destroy(&r->lock);
	return rc;
}

/* Every row runs in its state; each change is recorded once; unwanted
 * rows are skipped without a state change of their own. */
static void test_runner_order_and_states(void **state)
{
	const struct phase *const t[] = { &p_fetch, &p_skip, &p_boot, &p_run,
					  &p_join };
	struct jobrun r;

	(void)state;
	run_setup(&r);
	assert_int_equal(run_table(&r, t, 5), PHASE_END);
	assert_string_equal(trace, "exec:next state:fetching>booting "
			    "exec:timed state:booting>running exec:next "
			    "exec:end ");
	/* The boot row's time went to its step, the others' nowhere. */
	assert_true(r.steps.disks >= 0.015);
	assert_true(r.steps.fetch == 0 && r.steps.build == 0);
}

/* A row that ends the job (a build that failed: its result) stops the
 * walk as a success. */
static void test_runner_end_finishes_job(void **state)
{
	const struct phase *const t[] = { &p_fetch, &p_end, &p_boot, &p_run };
	struct jobrun r;

	(void)state;
	run_setup(&r);
	assert_int_equal(run_table(&r, t, 4), PHASE_END);
	assert_string_equal(trace, "exec:next state:fetching>building exec:end ");
}

/* A failure stops the rest: no later row, no later state. */
static void test_runner_failure_stops(void **state)
{
	const struct phase *const t[] = { &p_fetch, &p_fail, &p_run, &p_join };
	struct jobrun r;

	(void)state;
	run_setup(&r);
	assert_int_equal(run_table(&r, t, 4), PHASE_STOP);
	assert_string_equal(trace, "exec:next state:fetching>booting exec:fail ");
}

/* A cancel between rows (the API's, or a stop) runs nothing more. */
static void test_runner_cancel_between_rows(void **state)
{
	const struct phase *const t[] = { &p_fetch, &p_cancel, &p_boot, &p_run };
	struct jobrun r;

	(void)state;
	run_setup(&r);
	assert_int_equal(run_table(&r, t, 4), PHASE_STOP);
	assert_string_equal(trace,
			    "exec:next state:fetching>booting exec:cancel ");
}

/* A refused state change (the job was cancelled in the store) stops. */
static void test_runner_refused_transition(void **state)
{
	const struct phase *const t[] = { &p_fetch, &p_boot, &p_run };
	struct jobrun r;

	(void)state;
	run_setup(&r);
	refuse_to = 1;
	refused_state = JS_RUNNING;
	assert_int_equal(run_table(&r, t, 3), PHASE_STOP);
	assert_string_equal(trace, "exec:next state:fetching>booting "
			    "exec:timed state:booting>running ");
}

/* A beside row runs while the next rows do and is joined before the join
 * row; the slow beside row finishes after the row that followed it. */
static void test_runner_beside_and_join(void **state)
{
	const struct phase *const t[] = { &p_fetch, &p_beside, &p_run, &p_join };
	struct jobrun r;

	(void)state;
	run_setup(&r);
	assert_int_equal(run_table(&r, t, 4), PHASE_END);
	assert_string_equal(trace, "exec:next state:fetching>running "
			    "exec:next exec:slow exec:end ");
}

/* A failed beside row stops the join row; one beside a failing row is
 * still joined before the runner returns. */
static void test_runner_beside_failure(void **state)
{
	const struct phase *const t[] = { &p_fetch, &p_beside, &p_run, &p_join };
	const struct phase *const t2[] = { &p_beside, &p_fail, &p_join };
	struct jobrun r;

	(void)state;
	run_setup(&r);
	r.step = 1;		/* exec_slow fails */
	assert_int_equal(run_table(&r, t, 4), PHASE_STOP);
	assert_string_equal(trace, "exec:next state:fetching>running "
			    "exec:next exec:slow ");
	run_setup(&r);
	assert_int_equal(run_table(&r, t2, 3), PHASE_STOP);
	/* The beside row (running state) ran and was joined; the failing
	 * row's own state change came after. */
	assert_non_null(strstr(trace, "exec:slow"));
	assert_non_null(strstr(trace, "exec:fail"));
	assert_null(strstr(trace, "exec:end"));
}

/* The daemon's own table: states in order, every row with an exec, the
 * crash test beside the suite and joined by the results. */
static void test_job_table(void **state)
{
	int order_ok = 1, beside = -1, join = -1, suite = -1;
	size_t last = 0;

	(void)state;
	assert_true(job_nphases >= 8);
	for (size_t i = 0; i < job_nphases; i++) {
		const struct phase *p = job_phases[i];
		size_t at = 0;

		assert_non_null(p->exec);
		assert_non_null(job_state_find(p->state));
		assert_true(job_state_find(p->state)->active);
		for (size_t k = 0; k < job_state_count(); k++) {
			if (strcmp(job_state_at(k)->name, p->state) == 0)
				at = k;
		}
		if (at < last)
			order_ok = 0;
		last = at;
		if (p->flags & PHASE_BESIDE)
			beside = (int)i;
		if (p->flags & PHASE_JOIN)
			join = (int)i;
		if (strcmp(p->name, "suite") == 0)
			suite = (int)i;
	}
	assert_true(order_ok);
	assert_true(beside >= 0 && beside < suite && suite < join);
	assert_string_equal(job_phases[beside]->name, "crash");
	assert_string_equal(job_phases[join]->name, "results");
}

/* ---- collect ---- */

/* A complete report (the 6.1.64 bug on ext4, xfs passing) into rows. */
static void test_results_from_report(void **state)
{
	struct phase_results p = { 0 };
	const char *kind = NULL;
	char msg[256];
	size_t len, nfail = 0, npass = 0;
	int found = 0;
	char *text = test_data_read("ktap", "bad_kernel.ktap", &len);

	(void)state;
	ktap_parse(text, len, &p.report);
	free(text);
	p.parsed = 1;
	assert_true(p.report.complete);
	assert_int_equal(results_from_report(&p, &kind, msg, sizeof(msg)), 0);
	/* Suites are not rows; every test is, by its path. */
	assert_int_equal(p.n, 7);
	for (size_t i = 0; i < p.n; i++) {
		assert_non_null(strchr(p.rows[i].test, '.'));
		if (strcmp(p.rows[i].status, "fail") == 0) {
			nfail++;
			assert_non_null(p.rows[i].diagnostic);
		} else if (strcmp(p.rows[i].status, "pass") == 0) {
			npass++;
		}
		if (strcmp(p.rows[i].test, "ext4.write_seq_512") == 0) {
			found = 1;
			assert_non_null(strstr(p.rows[i].diagnostic,
					       "st_size 512, expected 4096"));
		}
	}
	assert_int_equal(nfail, 3);
	assert_int_equal(npass, 4);
	assert_true(found);
	phase_results_free(&p);
}

static void test_results_incomplete_is_infra(void **state)
{
	static const char truncated[] = "KTAP version 1\n1..1\nok 1 a\n";
	struct phase_results p = { 0 };
	const char *kind = NULL;
	char msg[256];

	(void)state;
	ktap_parse(truncated, strlen(truncated), &p.report);
	p.parsed = 1;
	assert_int_equal(results_from_report(&p, &kind, msg, sizeof(msg)), -1);
	assert_string_equal(kind, "agent_output");
	assert_non_null(strstr(msg, "agent output incomplete"));
	assert_int_equal(p.n, 0);
	phase_results_free(&p);
}

static void test_boot_failure_kinds(void **state)
{
	const char *kind, *msg;

	(void)state;
	boot_failure_kind(GUEST_STOPPED, "no disk /dev/vda", 1, &kind, &msg);
	assert_string_equal(kind, "agent");
	assert_string_equal(msg, "no disk /dev/vda");
	boot_failure_kind(GUEST_TIMEOUT, NULL, 1, &kind, &msg);
	assert_string_equal(kind, "kernel_panic");
	assert_non_null(strstr(msg, "at the timeout"));
	boot_failure_kind(GUEST_STOPPED, NULL, 1, &kind, &msg);
	assert_string_equal(kind, "kernel_panic");
	assert_null(strstr(msg, "timeout"));
	boot_failure_kind(GUEST_TIMEOUT, NULL, 0, &kind, &msg);
	assert_string_equal(kind, "boot_timeout");
	boot_failure_kind(GUEST_STOPPED, NULL, 0, &kind, &msg);
	assert_string_equal(kind, "agent_output");
}

static void test_agent_kernel(void **state)
{
	char k[64];

	(void)state;
	agent_kernel("rcgate-agent 1 kernel=6.1.0-57-cloud-amd64 fs=ext4", k,
		     sizeof(k));
	assert_string_equal(k, "6.1.0-57-cloud-amd64");
	agent_kernel("rcgate-agent 1", k, sizeof(k));
	assert_string_equal(k, "");
	agent_kernel(NULL, k, sizeof(k));
	assert_string_equal(k, "");
}

/* The durable lines of boot 1: what the agent prints, and what a
 * garbled or hostile channel may hold instead. */
static void test_crash_durable_parse(void **state)
{
	struct durable d[4];
	const char *good =
		"KTAP version 1\n"
		"# crash-write: ext4 /dev/vda crash_osync_extend: ...\n"
		"# rcgate-durable: fs=ext4 dev=/dev/vda test=crash_osync_extend "
		"file=crash.dat size=65536 block=4096\n"
		"# rcgate-durable: fs=xfs dev=/dev/vdg test=crash_aio_dsync "
		"file=crash-aio.dat size=0 block=4096\n"
		"# rcgate-crash-ready\n";

	(void)state;
	assert_int_equal(crash_durable_parse(good, d, 4), 2);
	assert_string_equal(d[0].fs, "ext4");
	assert_string_equal(d[0].test, "crash_osync_extend");
	assert_int_equal(d[0].size, 65536);
	assert_string_equal(d[1].fs, "xfs");
	assert_int_equal(d[1].size, 0);
	/* Counted past max, stored up to it. */
	assert_int_equal(crash_durable_parse(good, d, 1), 2);
	assert_int_equal(crash_durable_parse("", d, 4), 0);
	assert_int_equal(crash_durable_parse("# rcgate-crash-ready\n", d, 4), 0);
	/* Sizes out of range, not numbers, or trailing junk: ignored. */
	assert_int_equal(crash_durable_parse(
		"# rcgate-durable: fs=ext4 size=65537 block=4096\n"
		"# rcgate-durable: fs=ext4 size=-1\n"
		"# rcgate-durable: fs=ext4 size=99999999999999999999999\n"
		"# rcgate-durable: fs=ext4 size=12x\n"
		"# rcgate-durable: fs=ext4 size=\n"
		"# rcgate-durable: fs=ext4\n", d, 4), 0);
	/* A quote inside another line is not a durable line; the size of
	 * the next line is not borrowed. */
	assert_int_equal(crash_durable_parse(
		"x # rcgate-durable: size=4096\n"
		"# rcgate-durable: fs=ext4 test=t\n size=4096\n", d, 4), 0);
	/* Odd words become "?", never escape the line or their buffer. */
	assert_int_equal(crash_durable_parse(
		"# rcgate-durable: fs=<b>ext4 test=crash_osync_extend_and_a_very_"
		"long_name_indeed_more_than_forty size=4096", d, 4), 1);
	assert_string_equal(d[0].fs, "?");
	assert_string_equal(d[0].test, "?");
	assert_int_equal(d[0].size, 4096);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runner_order_and_states),
		cmocka_unit_test(test_crash_durable_parse),
		cmocka_unit_test(test_runner_end_finishes_job),
		cmocka_unit_test(test_runner_failure_stops),
		cmocka_unit_test(test_runner_cancel_between_rows),
		cmocka_unit_test(test_runner_refused_transition),
		cmocka_unit_test(test_runner_beside_and_join),
		cmocka_unit_test(test_runner_beside_failure),
		cmocka_unit_test(test_job_table),
		cmocka_unit_test(test_results_from_report),
		cmocka_unit_test(test_results_incomplete_is_infra),
		cmocka_unit_test(test_boot_failure_kinds),
		cmocka_unit_test(test_agent_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
