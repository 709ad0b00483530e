/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/respcache.c: an answer is served while the store's
 * generation is the one it was made at and never after a commit; the first
 * reader after a commit makes it and the others wait for it (single
 * flight), so a read after a write always shows the write; an answer only
 * past its TTL is served while one reader makes it again; an abandoned
 * answer wakes its waiters; the byte cap holds.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "http/http.h"

/* The ETag is the caller's (http.c makes it from the body); the cache
 * must hand back exactly the one it was given. */
static void put_text(struct respcache *c, const char *key, uint64_t gen,
		     const char *text)
{
	char etag[40];

	snprintf(etag, sizeof(etag), "\"%.32s\"", text);
	respcache_put(c, key, gen, "application/json", etag, text, strlen(text));
}

static void test_generation(void **state)
{
	struct respcache *c = respcache_new(1 << 20, 64, 60.0);
	struct cached_body *b;
	int fill;

	(void)state;
	assert_null(respcache_get(c, "/a", 1, &fill));
	assert_int_equal(fill, 1);
	put_text(c, "/a", 1, "one");
	b = respcache_get(c, "/a", 1, &fill);
	assert_non_null(b);
	assert_int_equal(fill, 0);
	assert_string_equal(b->data, "one");
	assert_int_equal(b->len, 3);
	assert_string_equal(b->etag, "\"one\"");
	/* A commit: the old answer is not served, whoever asks. */
	assert_null(respcache_get(c, "/a", 2, &fill));
	assert_int_equal(fill, 1);
	put_text(c, "/a", 2, "two");
	/* The body a response still holds outlives its replacement. */
	assert_string_equal(b->data, "one");
	cached_body_release(b);
	b = respcache_get(c, "/a", 2, &fill);
	assert_string_equal(b->data, "two");
	cached_body_release(b);
	/* Another key, another answer. */
	assert_null(respcache_get(c, "/a?x", 2, &fill));
	assert_int_equal(fill, 1);
	respcache_abandon(c, "/a?x");
	respcache_free(c);
}

static void test_older_put_loses(void **state)
{
	struct respcache *c = respcache_new(1 << 20, 64, 60.0);
	struct cached_body *b;
	int fill;

	(void)state;
	assert_null(respcache_get(c, "/k", 5, &fill));
	put_text(c, "/k", 5, "new");
	/* A slow reader that began before the commit puts what it read. */
	assert_null(respcache_get(c, "/k", 4, &fill));
	put_text(c, "/k", 4, "old");
	b = respcache_get(c, "/k", 5, &fill);
	assert_non_null(b);
	assert_string_equal(b->data, "new");
	cached_body_release(b);
	respcache_free(c);
}

struct reader {
	struct respcache *c;
	uint64_t gen;
	int fill;
	char got[16];
};

static void *read_thread(void *arg)
{
	struct reader *r = arg;
	struct cached_body *b = respcache_get(r->c, "/list", r->gen, &r->fill);

	if (b != NULL) {
		snprintf(r->got, sizeof(r->got), "%s", b->data);
		cached_body_release(b);
	}
	return NULL;
}

static void test_single_flight(void **state)
{
	struct respcache *c = respcache_new(1 << 20, 64, 60.0);
	struct reader r[4];
	pthread_t t[4];
	int fill;

	(void)state;
	assert_null(respcache_get(c, "/list", 7, &fill));
	assert_int_equal(fill, 1);
	for (int i = 0; i < 4; i++) {
		r[i] = (struct reader){ c, 7, -1, "" };
		assert_int_equal(pthread_create(&t[i], NULL, read_thread, &r[i]), 0);
	}
	usleep(100 * 1000);
	/* They wait for the answer being made, not for one of their own. */
	for (int i = 0; i < 4; i++)
		assert_string_equal(r[i].got, "");
	put_text(c, "/list", 7, "made");
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(r[i].fill, 0);
		assert_string_equal(r[i].got, "made");
	}
	/* An abandoned answer (an error) wakes its waiter, who makes it. */
	assert_null(respcache_get(c, "/list", 8, &fill));
	r[0] = (struct reader){ c, 8, -1, "" };
	pthread_create(&t[0], NULL, read_thread, &r[0]);
	usleep(50 * 1000);
	respcache_abandon(c, "/list");
	pthread_join(t[0], NULL);
	assert_int_equal(r[0].fill, 1);
	assert_string_equal(r[0].got, "");
	respcache_free(c);
}

static void test_ttl(void **state)
{
	struct respcache *c = respcache_new(1 << 20, 64, 0.05);
	struct cached_body *b;
	int fill;

	(void)state;
	assert_null(respcache_get(c, "/gate", 3, &fill));
	put_text(c, "/gate", 3, "before");
	usleep(80 * 1000);
	/* Past its TTL: the first reader makes it again... */
	assert_null(respcache_get(c, "/gate", 3, &fill));
	assert_int_equal(fill, 1);
	/* ...while the others are served what there is. */
	b = respcache_get(c, "/gate", 3, &fill);
	assert_non_null(b);
	assert_int_equal(fill, 0);
	assert_string_equal(b->data, "before");
	cached_body_release(b);
	put_text(c, "/gate", 3, "after");
	b = respcache_get(c, "/gate", 3, &fill);
	assert_string_equal(b->data, "after");
	cached_body_release(b);
	respcache_free(c);
}

static void test_caps(void **state)
{
	struct respcache *c = respcache_new(4000, 8, 60.0);
	struct respcache_stats st;
	char key[16], body[900];
	int fill;

	(void)state;
	memset(body, 'x', sizeof(body) - 1);
	body[sizeof(body) - 1] = '\0';
	for (int i = 0; i < 40; i++) {
		snprintf(key, sizeof(key), "/r/%d", i);
		assert_null(respcache_get(c, key, 1, &fill));
		assert_int_equal(fill, 1);
		put_text(c, key, 1, body);
		respcache_stats(c, &st);
		assert_true(st.bytes <= 4000);
		assert_true(st.entries <= 8);
	}
	/* One body over a quarter of the cap is served, never kept. */
	{
		char big[1200];

		memset(big, 'y', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		assert_null(respcache_get(c, "/big", 1, &fill));
		put_text(c, "/big", 1, big);
		assert_null(respcache_get(c, "/big", 1, &fill));
		assert_int_equal(fill, 1);
		respcache_abandon(c, "/big");
	}
	respcache_stats(c, &st);
	assert_true(st.hits == 0 && st.misses == 42);
	respcache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generation),
		cmocka_unit_test(test_older_put_loses),
		cmocka_unit_test(test_single_flight),
		cmocka_unit_test(test_ttl),
		cmocka_unit_test(test_caps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
