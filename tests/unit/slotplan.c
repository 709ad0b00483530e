/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/slotplan.c: longest chain first stays the choice
 * unless another waiter ends the release sooner by more than the margin;
 * slots freeing at different times (the case bench/matrix.sh measured),
 * the follow-up of a crash chain, running or waiting, and the limits.
 * And the order slots.c hands slots out in: the rc due first, then the
 * longest chain, then claim order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "job/job.h"
#include "job/job_internal.h"

/* bench/matrix.sh, 2026-12-04: one slot free at 22.08 s, the other's guest
 * ending at 22.55 s, three crash-verify boots left. Longest first runs
 * 4.66 now and 3.41 + 2.20 on the other slot (ends 6.08 s from now);
 * 3.41 now, then 2.20, with 4.66 on the other ends at 5.61 s. */
static void test_slots_freeing_apart(void **state)
{
	const struct plan_slot s[2] = { { 0, 0, 0 }, { 0.47, 0, 0 } };
	const struct plan_task w[3] = { { 4.66, 0, 0, 0 }, { 3.41, 0, 0, 0 },
					{ 2.20, 0, 0, 0 } };

	(void)state;
	assert_int_equal(slotplan_pick(s, 2, w, 3, 0, 0.2), 1);
	/* Half a second is not worth it at a margin of a second. */
	assert_int_equal(slotplan_pick(s, 2, w, 3, 0, 1.0), 0);
}

/* Nothing to gain: two slots free, two boots: longest first. */
static void test_longest_when_equal(void **state)
{
	const struct plan_slot s[2] = { { 0, 0, 0 }, { 0, 0, 0 } };
	const struct plan_task w[2] = { { 5, 0, 0, 0 }, { 3, 0, 0, 0 } };

	(void)state;
	assert_int_equal(slotplan_pick(s, 2, w, 2, 0, 0.2), 0);
	/* Which index is "longest" is the caller's: it is kept. */
	assert_int_equal(slotplan_pick(s, 2, w, 2, 1, 0.2), 1);
}

/* A waiting crash chain's second boot counts: a crash-write of 2 s whose
 * verify (3 s) is ready 0.5 s after it must start before a lone 4 s suite,
 * or the verify ends the release alone. (sched.c's longest first sorts by
 * the whole chain and would pick it too; here "longest" is the suite.) */
static void test_follow_up_of_a_waiter(void **state)
{
	const struct plan_slot s[2] = { { 0, 0, 0 }, { 4, 0, 0 } };
	const struct plan_task w[2] = { { 4, 0, 0, 0 }, { 2, 0.5, 3, 0 } };

	(void)state;
	/* Suite first: 4 on slot 0, the crash-write at 4 (6), its verify
	 * at 6.5 (9.5). Chain first: 2 on slot 0, the suite at 2 (6), the
	 * verify on slot 1 at 4 (7). */
	assert_int_equal(slotplan_pick(s, 2, w, 2, 0, 0.2), 1);
}

/* A running crash-write's verify is work to come: with it, the longer
 * waiter first is right; without it, the shorter one would be. */
static void test_follow_up_of_a_running_slot(void **state)
{
	const struct plan_slot busy[2] = { { 0, 0, 0 }, { 1, 1.3, 4 } };
	const struct plan_slot plain[2] = { { 0, 0, 0 }, { 1, 0, 0 } };
	const struct plan_task w[2] = { { 3, 0, 0, 0 }, { 2.2, 0, 0, 0 } };

	(void)state;
	/* With the verify (4 s, ready at 1.3): 3 now, 2.2 at 1 (3.2), the
	 * verify at 3 (7). 2.2 now, 3 at 1 (4), the verify at 2.2 (6.2). */
	assert_int_equal(slotplan_pick(busy, 2, w, 2, 0, 0.2), 1);
	/* Without it: 3 now, 2.2 at 1 (3.2) ends 3.2; 2.2 now, 3 at 1 ends
	 * 4: longest first. */
	assert_int_equal(slotplan_pick(plain, 2, w, 2, 0, 0.2), 0);
}

/* Boots not ready yet (a domain being made, a crash-verify after its
 * power cut) are played out but never started now. Slot 0 free, slot 1
 * busy for 1 s; waiting now: 3 and 2; a 4 s crash-verify due at 1.5 s.
 * 3 now: 2 at 1 (3), the verify at 3 (7). 2 now: 3 at 1 (4), the verify
 * at 2 (6): better. And the verify itself is never the pick. */
static void test_not_ready_tasks(void **state)
{
	const struct plan_slot s[2] = { { 0, 0, 0 }, { 1, 0, 0 } };
	const struct plan_task t[3] = { { 3, 0, 0, 0 }, { 2, 0, 0, 0 },
					{ 4, 0, 0, 1.5 } };
	const struct plan_task only_later[2] = { { 3, 0, 0, 0 },
						 { 9, 0, 0, 0.5 } };

	(void)state;
	assert_int_equal(slotplan_pick(s, 2, t, 3, 0, 0.2), 1);
	assert_int_equal(slotplan_pick(s, 2, only_later, 2, 0, 0.2), 0);
	/* A "longest" that is not ready now is a caller's mistake: kept. */
	assert_int_equal(slotplan_pick(s, 2, t, 3, 2, 0.2), 2);
}

/* No slot free, nothing to choose, or too much to play out: longest. */
static void test_limits(void **state)
{
	const struct plan_slot busy[1] = { { 2, 0, 0 } };
	const struct plan_slot free1[1] = { { 0, 0, 0 } };
	struct plan_task many[20];

	(void)state;
	for (unsigned i = 0; i < 20; i++)
		many[i] = (struct plan_task){ 1 + i % 3, 0, 0, 0 };
	assert_int_equal(slotplan_pick(busy, 1, many, 2, 1, 0.2), 1);
	assert_int_equal(slotplan_pick(free1, 0, many, 2, 0, 0.2), 0);
	assert_int_equal(slotplan_pick(free1, 1, many, 20, 3, 0.2), 3);
	/* One slot: the order does not change when it all ends. */
	assert_int_equal(slotplan_pick(free1, 1, many, 3, 2, 0.2), 2);
}

static struct slot_waiter waiter(const char *due, double length,
				 uint64_t seq)
{
	struct slot_waiter w = { .length = length, .seq = seq };

	snprintf(w.due, sizeof(w.due), "%s", due);
	return w;
}

/* Two rcs in flight (issue 29): 6.1.64-rc1 due Thursday 03:15, 6.6.5-rc1
 * due Thursday 03:40. 6.6's long crash chain waits behind 6.1's short
 * crash-verify; a release with no deadline (a baseline) after both. */
static void test_waiter_order(void **state)
{
	const struct slot_waiter due61 = waiter("2023-11-30T03:15:00Z", 3, 9),
		due66 = waiter("2023-11-30T03:40:00Z", 20, 2),
		due61_long = waiter("2023-11-30T03:15:00Z", 20, 11),
		due61_again = waiter("2023-11-30T03:15:00Z", 20, 13),
		baseline = waiter("", 50, 1);

	(void)state;
	assert_true(slot_waiter_before(&due61, &due66));
	assert_false(slot_waiter_before(&due66, &due61));
	assert_true(slot_waiter_before(&due66, &baseline));
	assert_false(slot_waiter_before(&baseline, &due66));
	assert_true(slot_waiter_before(&due61, &baseline));
	/* The same rc: the longest chain first, then claim order. */
	assert_true(slot_waiter_before(&due61_long, &due61));
	assert_false(slot_waiter_before(&due61, &due61_long));
	assert_true(slot_waiter_before(&due61_long, &due61_again));
	assert_false(slot_waiter_before(&due61_again, &due61_long));
	assert_false(slot_waiter_before(&due61_long, &due61_long));
	/* A rerun of 6.6 (a suspected regression to confirm) before
	 * 6.1's first runs, though 6.6 is due later; a rerun of a
	 * release without a deadline stays with those. */
	{
		struct job rerun = { .rerun_of = 7 }, first = { 0 },
			base = { .rerun_of = 7 };
		struct slot_waiter a = waiter("", 3, 20), b = waiter("", 3, 1);

		snprintf(rerun.deadline, sizeof(rerun.deadline), "%s", due66.due);
		snprintf(first.deadline, sizeof(first.deadline), "%s", due61.due);
		snprintf(a.due, sizeof(a.due), "%s", slot_due(&rerun));
		snprintf(b.due, sizeof(b.due), "%s", slot_due(&first));
		assert_string_equal(b.due, due61.due);
		assert_true(slot_waiter_before(&a, &b));
		assert_false(slot_waiter_before(&b, &a));
		assert_string_equal(slot_due(&base), "");
	}
	/* Two without a deadline: length, as before deadlines counted. */
	{
		const struct slot_waiter a = waiter("", 5, 1),
			b = waiter("", 7, 2);

		assert_true(slot_waiter_before(&b, &a));
		assert_false(slot_waiter_before(&a, &b));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slots_freeing_apart),
		cmocka_unit_test(test_longest_when_equal),
		cmocka_unit_test(test_follow_up_of_a_waiter),
		cmocka_unit_test(test_follow_up_of_a_running_slot),
		cmocka_unit_test(test_not_ready_tasks),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_waiter_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
