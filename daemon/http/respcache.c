/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * respcache.c - owns the cache of read responses: the bytes a GET answered
 * with (200 only), keyed by path and query, valid while the store's
 * generation (store_generation: bumped after every commit) is the one they
 * were made at, and for at most a TTL (a few answers are derived from the
 * clock: a deadline passing). A read then costs a lookup and a reference,
 * whatever the history behind it; the first read after a write makes the
 * answer again, once: concurrent readers of a key whose answer is being
 * made wait for it (single flight), so a write followed by a read always
 * shows the write. An answer that is only past its TTL is served while one
 * reader makes it again. Bounded in bytes and entries. Pure data and a
 * lock: no HTTP, no store (tests/unit/respcache.c).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "http/http.h"

#define BUCKETS 1024
#define WAIT_SECONDS 5		/* then the waiter makes the answer itself */

struct entry {
	struct entry *next;
	char *key;
	uint64_t hash;
	struct cached_body *body;	/* NULL while first being made */
	uint64_t generation;
	double made;			/* now_monotonic() when put */
	int filling;			/* a reader is making it */
};

struct respcache {
	pthread_mutex_t lock;
	pthread_cond_t filled;
	struct entry *buckets[BUCKETS];
	size_t entries, bytes, max_entries, max_bytes;
	double ttl;
	unsigned long hits, misses;
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

struct respcache *respcache_new(size_t max_bytes, size_t max_entries,
				double ttl)
{
	struct respcache *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->filled, NULL);
	c->max_bytes = max_bytes;
	c->max_entries = max_entries;
	c->ttl = ttl;
	return c;
}

void cached_body_release(struct cached_body *b)
{
	if (b != NULL && atomic_fetch_sub(&b->refs, 1) == 1)
		free(b);
}

static void entry_free(struct respcache *c, struct entry *e)
{
	if (e->body != NULL)
		c->bytes -= e->body->len;
	cached_body_release(e->body);
	free(e->key);
	free(e);
	c->entries--;
}

void respcache_free(struct respcache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < BUCKETS; i++) {
		while (c->buckets[i] != NULL) {
			struct entry *e = c->buckets[i];

			c->buckets[i] = e->next;
			entry_free(c, e);
		}
	}
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->filled);
	free(c);
}

static struct entry **find(struct respcache *c, const char *key, uint64_t h)
{
	struct entry **p = &c->buckets[h % BUCKETS];

	while (*p != NULL && ((*p)->hash != h || strcmp((*p)->key, key) != 0))
		p = &(*p)->next;
	return p;
}

static struct cached_body *ref(struct cached_body *b)
{
	atomic_fetch_add(&b->refs, 1);
	return b;
}

struct cached_body *respcache_get(struct respcache *c, const char *key,
				  uint64_t generation, int *fill)
{
	uint64_t h = fnv1a(key);
	struct cached_body *out = NULL;
	struct timespec until;
	int waited = 0;

	*fill = 0;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WAIT_SECONDS;
	pthread_mutex_lock(&c->lock);
	for (;;) {
		struct entry **p = find(c, key, h), *e = *p;

		if (e == NULL) {
			if (c->entries >= c->max_entries * 2)
				break;	/* every slot is being filled: no caching */
			e = calloc(1, sizeof(*e));
			if (e == NULL || (e->key = strdup(key)) == NULL) {
				free(e);
				break;
			}
			e->hash = h;
			e->filling = 1;
			*p = e;
			c->entries++;
			c->misses++;
			*fill = 1;
			break;
		}
		if (e->body != NULL && e->generation == generation) {
			if (now_monotonic() - e->made < c->ttl || e->filling) {
				/* Fresh, or past its TTL only while a reader
				 * makes it again: serve what there is. */
				out = ref(e->body);
				c->hits++;
				break;
			}
			e->filling = 1;
			c->misses++;
			*fill = 1;
			break;
		}
		if (!e->filling || waited) {
			/* Older than the last commit: nobody may see it. The
			 * one reader that found it so makes it again. */
			e->filling = 1;
			c->misses++;
			*fill = 1;
			break;
		}
		if (pthread_cond_timedwait(&c->filled, &c->lock, &until) != 0)
			waited = 1;
	}
	pthread_mutex_unlock(&c->lock);
	return out;
}

/* Back within the caps: drops the entries made at an older generation
 * first, then any that is not being made. Called with the lock held. */
static void make_room(struct respcache *c, uint64_t generation)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < BUCKETS; i++) {
			struct entry **p = &c->buckets[i];

			while (*p != NULL && (c->bytes > c->max_bytes ||
					      c->entries > c->max_entries)) {
				struct entry *e = *p;

				if (!e->filling && (pass == 1 ||
						    e->generation != generation)) {
					*p = e->next;
					entry_free(c, e);
				} else {
					p = &e->next;
				}
			}
		}
	}
}

void respcache_put(struct respcache *c, const char *key, uint64_t generation,
		   const char *type, const char *etag, const char *data,
		   size_t len)
{
	uint64_t h = fnv1a(key);
	struct cached_body *b = NULL;
	struct entry *e;

	if (len <= c->max_bytes / 4 && (b = malloc(sizeof(*b) + len + 1)) != NULL) {
		atomic_init(&b->refs, 1);
		b->len = len;
		b->type = type;
		snprintf(b->etag, sizeof(b->etag), "%s", etag);
		memcpy(b->data, data, len);
		b->data[len] = '\0';
	}
	pthread_mutex_lock(&c->lock);
	e = *find(c, key, h);
	if (e != NULL) {
		e->filling = 0;
		if (b != NULL && (e->body == NULL || e->generation <= generation)) {
			if (e->body != NULL)
				c->bytes -= e->body->len;
			cached_body_release(e->body);
			e->body = b;
			e->generation = generation;
			e->made = now_monotonic();
			c->bytes += len;
			b = NULL;
			make_room(c, generation);
		}
	}
	pthread_cond_broadcast(&c->filled);
	pthread_mutex_unlock(&c->lock);
	cached_body_release(b);
}

void respcache_abandon(struct respcache *c, const char *key)
{
	uint64_t h = fnv1a(key);
	struct entry **p, *e;

	pthread_mutex_lock(&c->lock);
	p = find(c, key, h);
	e = *p;
	if (e != NULL) {
		e->filling = 0;
		if (e->body == NULL) {
			*p = e->next;
			entry_free(c, e);
		}
	}
	pthread_cond_broadcast(&c->filled);
	pthread_mutex_unlock(&c->lock);
}

void respcache_stats(struct respcache *c, struct respcache_stats *out)
{
	pthread_mutex_lock(&c->lock);
	out->entries = c->entries;
	out->bytes = c->bytes;
	out->hits = c->hits;
	out->misses = c->misses;
	pthread_mutex_unlock(&c->lock);
}
