/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * consumer.c - one consumer thread: opens its own store connection, runs
 * c->pass when kicked, at once when the pass had more to do, or after
 * the seconds it says (c->period by default), and stops between passes
 * (a pass polls consumer_stopping to end early). Every background loop
 * of the daemon is one: engine, notify, trigger, source, prereq,
 * bisect-trees, bisect-seeds.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "store/store.h"

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	struct store *st;
	char err[512];

	st = store_open(c->db, err, sizeof(err));
	if (st == NULL) {
		log_err("%s: %s", c->name, err);
		return NULL;
	}
	while (!atomic_load(&c->stopping)) {
		struct timespec ts;
		int next = c->pass(st, c->arg);

		pthread_mutex_lock(&c->mu);
		if (next == CONSUMER_NOW) {
			c->pending = 0;
			pthread_mutex_unlock(&c->mu);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += next > 0 ? next : c->period;
		while (!c->pending && !atomic_load(&c->stopping) &&
		       pthread_cond_timedwait(&c->cv, &c->mu, &ts) == 0)
			;
		c->pending = 0;
		pthread_mutex_unlock(&c->mu);
	}
	store_close(st);
	return NULL;
}

int consumer_start(struct consumer *c, const char *db_path, char *err,
		   size_t errlen)
{
	c->db = strdup(db_path);
	if (c->db == NULL) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	c->pending = 0;
	atomic_store(&c->stopping, 0);
	if (pthread_create(&c->thread, NULL, consumer_main, c) != 0) {
		errf(err, errlen, "cannot start the %s thread", c->name);
		free(c->db);
		c->db = NULL;
		return -1;
	}
	c->running = 1;
	return 0;
}

void consumer_kick(struct consumer *c)
{
	if (!c->running)
		return;
	pthread_mutex_lock(&c->mu);
	c->pending = 1;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

int consumer_stopping(struct consumer *c)
{
	return atomic_load(&c->stopping);
}

void consumer_stop(struct consumer *c)
{
	if (c->running) {
		atomic_store(&c->stopping, 1);
		pthread_mutex_lock(&c->mu);
		pthread_cond_signal(&c->cv);
		pthread_mutex_unlock(&c->mu);
		pthread_join(c->thread, NULL);
		c->running = 0;
		pthread_mutex_destroy(&c->mu);
		pthread_cond_destroy(&c->cv);
	}
	free(c->db);
	c->db = NULL;
}
