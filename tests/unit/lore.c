/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/intake/lore.c: the series' patch mails read from
 * lore's thread mbox (a real announcement and a real patch mail of the
 * 6.1.64-rc1 series, gzipped as lore serves them) are recorded only when
 * they come from the announcement's sender; a hostile or malformed mbox
 * (not gzip, truncated, a gzip bomb, not an mbox) is refused with a clear
 * error; and the thread is fetched over HTTP from a local server (a real
 * socket, fetch.c's checks with 127.0.0.1 allowed), a 404 being an error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <gio/gio.h>

#include "base/base.h"
#include "store/store.h"
#include "artifact/artifact.h"
#include "intake/intake.h"
#include "testutil.h"

#define ANN_ID "20231124172024.664207345@linuxfoundation.org"
#define GREG "gregkh@linuxfoundation.org"
#define MBOX_FROM "From mboxrd@z Thu Jan  1 00:00:00 1970\n"

static GBytes *gzip(const char *data, size_t len)
{
	GConverter *z = G_CONVERTER(g_zlib_compressor_new(
		G_ZLIB_COMPRESSOR_FORMAT_GZIP, 1));
	GByteArray *out = g_byte_array_new();
	char chunk[65536];
	size_t at = 0;

	for (;;) {
		gsize r = 0, w = 0;
		GConverterResult res = g_converter_convert(z, data + at, len - at,
			chunk, sizeof(chunk), G_CONVERTER_INPUT_AT_END, &r, &w, NULL);

		assert_true(res != G_CONVERTER_ERROR);
		at += r;
		g_byte_array_append(out, (const guint8 *)chunk, (guint)w);
		if (res == G_CONVERTER_FINISHED)
			break;
	}
	g_object_unref(z);
	return g_byte_array_free_to_bytes(out);
}

/* The thread as lore has it: the announcement, its first patch from
 * Greg, and the same patch forged by someone else under number 2. */
static char *thread_mbox(size_t *len)
{
	size_t alen, plen;
	char *ann = test_data_read("mail", "announce-6.1.64-rc1.eml", &alen);
	char *patch = test_data_read("mail", "patch-6.1-001-ext4-full.eml", &plen);
	GString *s = g_string_new(MBOX_FROM);
	gchar *forged;

	g_string_append_len(s, ann, (gssize)alen);
	g_string_append(s, "\n" MBOX_FROM);
	g_string_append_len(s, patch, (gssize)plen);
	g_string_append(s, "\n" MBOX_FROM);
	forged = g_strndup(patch, plen);
	g_string_append(s, "From: Mallory <mallory@evil.example>\n");
	/* its own headers after the first line, renumbered and re-ided */
	{
		char *p = strchr(forged, '\n') + 1;
		char *num = strstr(p, "001/372]"), *mid = strstr(p, "Message-I");

		assert_non_null(num);
		assert_non_null(mid);
		num[2] = '2';
		mid = strchr(mid, '<') + 1;
		mid[0] = mid[0] == '9' ? '8' : '9';
		g_string_append(s, p);
	}
	g_free(forged);
	free(ann);
	free(patch);
	*len = s->len;
	return g_string_free(s, FALSE);
}

struct lore_fixture {
	char dir[64], db[128];
	struct store *st;
};

static int setup(void **state)
{
	struct lore_fixture *f = calloc(1, sizeof(*f));
	char err[256], version[48];
	size_t len;
	char *raw;
	int created;

	if (f == NULL)
		return -1;
	f->st = test_store_new(f->dir, sizeof(f->dir), f->db, sizeof(f->db));
	if (f->st == NULL)
		return -1;
	raw = test_data_read("mail", "announce-6.1.64-rc1.eml", &len);
	if (trigger_announcement(f->st, GREG, raw, len, version, sizeof(version),
				 &created, err, sizeof(err)) < 0 || !created)
		return -1;
	free(raw);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct lore_fixture *f = *state;

	test_store_free(f->st, f->dir);
	free(f);
	return 0;
}

static void assert_patch1(struct lore_fixture *f, int want)
{
	char id[512], err[256];

	assert_int_equal(store_series_patch_id(f->st, 1, 1, id, sizeof(id), err,
					       sizeof(err)), want);
	if (want)
		assert_string_equal(id, "20231124172024.712357781@linuxfoundation.org");
	assert_int_equal(store_series_patch_id(f->st, 1, 2, id, sizeof(id), err,
					       sizeof(err)), 0);	/* forged */
}

static void test_record(void **state)
{
	struct lore_fixture *f = *state;
	size_t len;
	char *mbox = thread_mbox(&len), err[512];
	GBytes *gz = gzip(mbox, len);
	long n = -1;

	assert_patch1(f, 0);
	assert_int_equal(lore_series_record(f->st, GREG, g_bytes_get_data(gz, NULL),
					    g_bytes_get_size(gz), &n, err,
					    sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_patch1(f, 1);
	/* again, not gzipped: the same patch, the first record kept */
	assert_int_equal(lore_series_record(f->st, GREG, mbox, len, &n, err,
					    sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_patch1(f, 1);
	g_bytes_unref(gz);
	g_free(mbox);
}

static void test_hostile(void **state)
{
	struct lore_fixture *f = *state;
	size_t len, zlen = 80u << 20;
	char *mbox = thread_mbox(&len), err[512], *zeros;
	GBytes *gz = gzip(mbox, len), *bomb;
	const char *g = g_bytes_get_data(gz, NULL);
	long n;
	static const struct {
		const char *data, *want;
	} plain[] = {
		{ "garbage\n", "not an mbox" },
		{ "Subject: [PATCH 6.1 001/372] x\n\nbody\n", "not an mbox" },
		{ "\x1f\x8b\x63garbage and more garbage", "not a whole gzip stream" },
	};

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		assert_int_equal(lore_series_record(f->st, GREG, plain[i].data,
			strlen(plain[i].data), &n, err, sizeof(err)), -1);
		if (strstr(err, plain[i].want) == NULL)
			fail_msg("%s: %s", plain[i].want, err);
	}
	/* cut short */
	assert_int_equal(lore_series_record(f->st, GREG, g, g_bytes_get_size(gz) / 2,
					    &n, err, sizeof(err)), -1);
	if (strstr(err, "truncated") == NULL)
		fail_msg("truncated: %s", err);
	/* 80 MiB of "F"s: a gzip bomb of a few hundred KiB */
	zeros = malloc(zlen);
	assert_non_null(zeros);
	memset(zeros, 'F', zlen);
	memcpy(zeros, MBOX_FROM, strlen(MBOX_FROM));
	bomb = gzip(zeros, zlen);
	free(zeros);
	assert_true(g_bytes_get_size(bomb) < (2u << 20));
	assert_int_equal(lore_series_record(f->st, GREG, g_bytes_get_data(bomb, NULL),
					    g_bytes_get_size(bomb), &n, err,
					    sizeof(err)), -1);
	assert_non_null(strstr(err, "inflates to more than 64 MiB"));
	g_bytes_unref(bomb);
	/* Greg not among the senders: nothing */
	assert_int_equal(lore_series_record(f->st, "sashal@kernel.org", mbox, len,
					    &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	assert_patch1(f, 0);
	g_bytes_unref(gz);
	g_free(mbox);
}

static void test_thread_url(void **state)
{
	char url[1024], err[256];

	(void)state;
	assert_int_equal(lore_thread_url("https://lore.kernel.org/stable/", ANN_ID,
					 url, sizeof(url), err, sizeof(err)), 0);
	assert_string_equal(url, "https://lore.kernel.org/stable/" ANN_ID "/t.mbox.gz");
	assert_int_equal(lore_thread_url("https://lore.kernel.org/stable",
					 "../../x@y", url, sizeof(url), err,
					 sizeof(err)), -1);
	assert_int_equal(lore_thread_url("https://lore.kernel.org/stable",
					 "a?b@c", url, sizeof(url), err,
					 sizeof(err)), -1);
}

/* One HTTP answer on a loopback socket: the gzipped thread for its path,
 * a 404 for any other. */
struct server {
	int fd, port;
	GBytes *body;
	char path[512];		/* what was asked */
};

static void *serve(void *arg)
{
	struct server *s = arg;
	char req[4096], head[256];
	size_t got = 0;
	int c = accept(s->fd, NULL, NULL);
	int ok;

	if (c < 0)
		return NULL;
	while (got < sizeof(req) - 1) {
		ssize_t r = read(c, req + got, sizeof(req) - 1 - got);

		if (r <= 0)
			break;
		got += (size_t)r;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n") != NULL)
			break;
	}
	req[got] = '\0';
	sscanf(req, "GET %511s", s->path);
	ok = strcmp(s->path, "/stable/" ANN_ID "/t.mbox.gz") == 0 && s->body != NULL;
	snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Length: %zu\r\n"
		 "Connection: close\r\n\r\n", ok ? "200 OK" : "404 Not Found",
		 ok ? g_bytes_get_size(s->body) : (size_t)0);
	if (write(c, head, strlen(head)) < 0 ||
	    (ok && write(c, g_bytes_get_data(s->body, NULL),
			 g_bytes_get_size(s->body)) < 0))
		fprintf(stderr, "server: write failed\n");
	close(c);
	return NULL;
}

static void server_start(struct server *s, pthread_t *t)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s->fd >= 0);
	assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->fd, 1), 0);
	assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &alen), 0);
	s->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(t, NULL, serve, s), 0);
}

static void test_fetch(void **state)
{
	struct lore_fixture *f = *state;
	struct config cfg;
	struct server s = { 0 };
	pthread_t t;
	size_t len;
	char *mbox = thread_mbox(&len), err[512], text[256];
	long n = -1;

	assert_int_equal(fetch_init("", "127.0.0.1/32", err, sizeof(err)), 0);
	config_defaults(&cfg);
	/* A 404 first: a clear error, nothing recorded. */
	server_start(&s, &t);
	snprintf(text, sizeof(text), "[report]\nlore_url = http://127.0.0.1:%d"
		 "/stable/\n", s.port);
	assert_int_equal(config_parse(&cfg, text, "t", err, sizeof(err)), 0);
	assert_int_equal(lore_series_fetch(f->st, &cfg, f->dir, 1, &n, err,
					   sizeof(err)), -1);
	pthread_join(t, NULL);
	close(s.fd);
	assert_string_equal(s.path, "/stable/" ANN_ID "/t.mbox.gz");
	assert_non_null(strstr(err, "404"));
	assert_patch1(f, 0);
	/* Then the thread. */
	s.body = gzip(mbox, len);
	server_start(&s, &t);
	snprintf(text, sizeof(text), "[report]\nlore_url = http://127.0.0.1:%d"
		 "/stable\n", s.port);
	assert_int_equal(config_parse(&cfg, text, "t", err, sizeof(err)), 0);
	assert_int_equal(lore_series_fetch(f->st, &cfg, f->dir, 1, &n, err,
					   sizeof(err)), 0);
	pthread_join(t, NULL);
	close(s.fd);
	assert_int_equal(n, 1);
	assert_patch1(f, 1);
	g_bytes_unref(s.body);
	g_free(mbox);
	config_free(&cfg);
	fetch_free();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile, setup, teardown),
		cmocka_unit_test(test_thread_url),
		cmocka_unit_test_setup_teardown(test_fetch, setup, teardown),
	};

	log_init("/dev/null", LOG_ERR, NULL, 0);
	return cmocka_run_group_tests_name("lore", tests, NULL, NULL);
}
