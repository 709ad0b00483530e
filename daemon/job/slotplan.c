/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * slotplan.c - owns the choice of which waiting boot takes a free guest
 * slot at the end of a release. Longest chain first (job/slots.c) is the rule;
 * when every boot still to run is known, with its expected length, this
 * plays the rest of the release out both ways (longest first, and each
 * other waiter first, the rest longest first) and takes the waiter whose
 * schedule ends soonest, if that beats longest first by a margin worth the
 * estimates' noise. Slots that free at different times are where longest
 * first loses: with the slots free at 0 and 0.47 s and boots of 4.66, 3.41
 * and 2.20 s left, it ends at 6.08 s; 3.41 first ends at 5.61 s (measured
 * in bench/matrix.sh, bench/README.md). Pure arithmetic, no locks
 * (tests/unit/slotplan.c).
 */
#include <stddef.h>

#include "base/base.h"
#include "job/job.h"

struct sim_task {
	double ready, own, gap, follow;
};

/* How long a task's chain is: what longest first sorts by. */
static double chain(const struct sim_task *t)
{
	return t->own + (t->follow > 0 ? t->gap + t->follow : 0);
}

/* Runs tasks[] on the slots (free times in free_at[], changed) by longest
 * chain among the ready ones; returns when the last slot is done. */
static double play(double *free_at, unsigned ns, struct sim_task *tasks,
		   unsigned nt)
{
	int done[SLOTPLAN_TASKS_MAX] = { 0 };
	unsigned left = nt;
	double end = 0;

	while (left > 0) {
		unsigned k = 0, best = nt;
		double t, earliest = -1;

		for (unsigned i = 1; i < ns; i++)
			if (free_at[i] < free_at[k])
				k = i;
		t = free_at[k];
		/* Nothing ready when slot k frees: it waits for the first. */
		for (unsigned j = 0; j < nt; j++)
			if (!done[j] && (earliest < 0 || tasks[j].ready < earliest))
				earliest = tasks[j].ready;
		if (earliest > t)
			t = earliest;
		for (unsigned j = 0; j < nt; j++) {
			if (done[j] || tasks[j].ready > t)
				continue;
			if (best == nt || chain(&tasks[j]) > chain(&tasks[best]))
				best = j;
		}
		done[best] = 1;
		left--;
		free_at[k] = t + tasks[best].own;
		if (tasks[best].follow > 0 && nt < SLOTPLAN_TASKS_MAX) {
			tasks[nt] = (struct sim_task){
				free_at[k] + tasks[best].gap,
				tasks[best].follow, 0, 0 };
			done[nt] = 0;
			nt++;
			left++;
		}
	}
	for (unsigned i = 0; i < ns; i++)
		if (free_at[i] > end)
			end = free_at[i];
	return end;
}

/* The end of the release if task first takes the free slot now. */
static double ends_at(const struct plan_slot *slots, unsigned ns,
		      const struct plan_task *w, unsigned nw, unsigned first)
{
	double free_at[SLOTPLAN_SLOTS_MAX];
	struct sim_task tasks[SLOTPLAN_TASKS_MAX];
	unsigned nt = 0, now = ns;

	for (unsigned i = 0; i < ns; i++) {
		free_at[i] = slots[i].free_at > 0 ? slots[i].free_at : 0;
		if (now == ns && free_at[i] == 0)
			now = i;
		if (slots[i].follow > 0)
			tasks[nt++] = (struct sim_task){ slots[i].follow_at,
							 slots[i].follow, 0, 0 };
	}
	free_at[now] = w[first].own;
	if (w[first].follow > 0)
		tasks[nt++] = (struct sim_task){ w[first].own + w[first].gap,
						 w[first].follow, 0, 0 };
	for (unsigned j = 0; j < nw; j++)
		if (j != first)
			tasks[nt++] = (struct sim_task){
				w[j].ready > 0 ? w[j].ready : 0, w[j].own,
				w[j].gap, w[j].follow };
	return play(free_at, ns, tasks, nt);
}

unsigned slotplan_pick(const struct plan_slot *slots, unsigned nslots,
		       const struct plan_task *tasks, unsigned ntasks,
		       unsigned longest, double margin)
{
	unsigned best = longest, free_now = 0;
	double best_end;

	if (nslots == 0 || nslots > SLOTPLAN_SLOTS_MAX || longest >= ntasks ||
	    tasks[longest].ready > 0 ||
	    nslots + 2 * ntasks + 1 > SLOTPLAN_TASKS_MAX)
		return longest;
	for (unsigned i = 0; i < nslots; i++)
		free_now += slots[i].free_at <= 0;
	if (free_now == 0)
		return longest;
	best_end = ends_at(slots, nslots, tasks, ntasks, longest) - margin;
	for (unsigned j = 0; j < ntasks; j++) {
		double e;

		if (j == longest || tasks[j].ready > 0)
			continue;
		e = ends_at(slots, nslots, tasks, ntasks, j);
		if (e < best_end) {
			best_end = e;
			best = j;
		}
	}
	return best;
}
