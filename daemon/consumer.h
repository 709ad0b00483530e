/* SPDX-License-Identifier: GPL-2.0-only */
/* consumer.c: a thread that runs one pass over the store now and then. */
#ifndef RCGATE_CONSUMER_H
#define RCGATE_CONSUMER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

struct store;

/* The shape source.c and prereq.c share: its own store connection, a
 * pass when kicked or every `period` seconds, and a stop that waits for
 * the pass under way (which polls consumer_stopping to end early). */
struct consumer {
	const char *name;		/* "source": thread and log name */
	int (*pass)(struct store *, void *arg);
	void *arg;
	int period;			/* seconds between passes unkicked */
	/* its own */
	char *db;
	pthread_t thread;
	int running, pending;
	atomic_int stopping;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};
int consumer_start(struct consumer *, const char *db_path, char *err,
		   size_t errlen);
void consumer_kick(struct consumer *);
int consumer_stopping(struct consumer *);
void consumer_stop(struct consumer *);

#endif /* RCGATE_CONSUMER_H */
