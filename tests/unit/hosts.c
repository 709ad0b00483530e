/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for hosts.c (the [host NAME] sections and the choice of a
 * host) and for the host side of the libvirt layer that runs without
 * guests: remote URIs, the streams variant of the domain XML, and
 * storage pools and volumes against libvirt's test:///default driver.
 * Guests on a second real libvirtd are tests/integration/hosts.sh's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "guests/guests.h"

/* ---- placement ---- */

struct choose_case {
	const char *what;
	struct host_choice c[4];
	size_t n;
	int want;
};

static void test_choose(void **state)
{
	const enum host_runs K = HOST_RUNS_KVM, T = HOST_RUNS_TCG,
		N = HOST_RUNS_NOT;
	static const struct choose_case cases[] = {
		{ "none", { { 0 } }, 0, -1 },
		{ "the only host", { { 1, T, 2, 0 } }, 1, 0 },
		{ "a host that is down is never chosen", { { 0, K, 4, 0 }, { 1, T, 1, 0 } }, 2, 1 },
		{ "all down", { { 0, K, 4, 0 }, { 0, T, 1, 0 } }, 2, -1 },
		{ "a host that does not run the target", { { 1, N, 8, 0 }, { 1, T, 1, 0 } }, 2, 1 },
		{ "nobody runs it", { { 1, N, 8, 0 } }, 1, -1 },
		{ "KVM before more free TCG", { { 1, T, 8, 0 }, { 1, K, 1, 0 } }, 2, 1 },
		{ "a full KVM host loses to a free TCG one", { { 1, K, 2, 2 }, { 1, T, 1, 0 } }, 2, 1 },
		{ "most free among equals", { { 1, T, 2, 1 }, { 1, T, 4, 1 } }, 2, 1 },
		{ "ties: the first listed", { { 1, T, 2, 0 }, { 1, T, 2, 0 } }, 2, 0 },
		{ "all full: the least loaded", { { 1, T, 1, 3 }, { 1, K, 2, 3 } }, 2, 1 },
		{ "all full, equal: KVM", { { 1, T, 1, 2 }, { 1, K, 1, 2 } }, 2, 1 },
		{ "free KVM among several", { { 1, K, 1, 1 }, { 1, T, 4, 0 }, { 1, K, 2, 1 }, { 0, K, 9, 0 } }, 4, 2 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = hosts_choose(cases[i].c, cases[i].n);

		if (got != cases[i].want)
			fail_msg("%s: chose %d, want %d", cases[i].what, got,
				 cases[i].want);
	}
}

/* ---- configuration ---- */

static int parse(const char *text, struct config *c, char *err, size_t len)
{
	config_defaults(c);
	if (config_parse(c, text, "test.conf", err, len) < 0)
		return -1;
	return config_hosts_check(c, err, len);
}

static void test_conf(void **state)
{
	struct config c;
	char err[512];

	(void)state;
	assert_int_equal(parse("[jobs]\nworkers = 3\n"
			       "[host arm1]\nuri = qemu+ssh://ci@arm1/system\n"
			       "capacity = 4\nkvm = arm64 armv7\n"
			       "pool_path = /srv/rcgate/pool\n"
			       "[host here]\nuri = local\ntcg = x86_64, i386\n",
			       &c, err, sizeof(err)), 0);
	assert_int_equal(c.nhosts, 2);
	assert_string_equal(c.hosts[0].name, "arm1");
	assert_string_equal(c.hosts[0].uri, "qemu+ssh://ci@arm1/system");
	assert_int_equal(c.hosts[0].capacity, 4);
	assert_string_equal(c.hosts[0].kvm, "arm64 armv7");
	assert_string_equal(c.hosts[0].pool, "rcgate");
	assert_string_equal(c.hosts[0].pool_path, "/srv/rcgate/pool");
	assert_int_equal(c.hosts[1].capacity, 2);
	assert_int_equal(hosts_need_local(&c), 1);
	config_free(&c);
	assert_null(c.hosts);

	assert_int_equal(parse("[host b]\nuri = qemu+tls://b/system\ntcg = x86_64\n",
			       &c, err, sizeof(err)), 0);
	assert_int_equal(hosts_need_local(&c), 0);
	config_free(&c);
	config_defaults(&c);
	assert_int_equal(hosts_need_local(&c), 1);	/* no hosts: as before */
	config_free(&c);
}

static void test_conf_dump_round_trip(void **state)
{
	struct config a, b;
	char err[512], *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(parse("[host x]\nuri = qemu+tcp://127.0.0.1:1/session\n"
			       "capacity = 3\nkvm = x86_64\ntcg = arm64\n"
			       "pool = p1\nmin_free_mb = 10\n", &a, err,
			       sizeof(err)), 0);
	f = open_memstream(&text, &len);
	config_dump(&a, f);
	fclose(f);
	assert_int_equal(parse(text, &b, err, sizeof(err)), 0);
	assert_int_equal(b.nhosts, 1);
	assert_memory_equal(&a.hosts[0], &b.hosts[0], sizeof(a.hosts[0]));
	free(text);
	config_free(&a);
	config_free(&b);
}

static void test_conf_errors(void **state)
{
	static const struct {
		const char *text, *error;
	} cases[] = {
		{ "[host a]\nuri = local\ntcg = x86_64\ncolour = red\n", "test.conf:4: unknown directive 'colour' in [host a]" },
		{ "[host a]\nuri = local\ncapacity = 0\n", "test.conf:3: capacity: '0' is not a number in 1..64" },
		{ "[host a]\nuri = local\ncapacity = many\n", "capacity: 'many'" },
		{ "[host a b]\nuri = local\n", "host name 'a b'" },
		{ "[host a]\ntcg = x86_64\n", "[host a]: uri missing" },
		{ "[host a]\nuri = local\n", "[host a]: no targets" },
		{ "[host a]\nuri = local\ntcg = x86_64 sparc\n", "[host a] tcg: unknown target 'sparc'" },
		{ "[host a]\nuri = local\nkvm = x86_64\ntcg = x86_64\n", "target 'x86_64' is under both" },
		{ "[host a]\nuri = local\ntcg = i386\n[host b]\nuri = local\ntcg = i386\n", "only one host can be the local one" },
		{ "[host a]\nuri = qemu+tcp://h/system\ntcg = i386\n[host b]\nuri = qemu+tcp://h/system\ntcg = i386\n", "[host b]: same uri as [host a]" },
	};
	struct config c;
	char err[512], big[4096];
	struct strbuf b;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		if (parse(cases[i].text, &c, err, sizeof(err)) == 0)
			fail_msg("accepted: %s", cases[i].text);
		if (strstr(err, cases[i].error) == NULL)
			fail_msg("error '%s' lacks '%s'", err, cases[i].error);
		config_free(&c);
	}
	/* A cap on the number of hosts, and on a value's length. */
	strbuf_init(&b, big, sizeof(big));
	for (int i = 0; i <= HOSTS_MAX; i++)
		strbuf_printf(&b, "[host h%d]\nuri = qemu+tcp://h%d/system\n", i, i);
	assert_int_equal(parse(big, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 16 [host] sections"));
	config_free(&c);
	memset(big, 'x', 600);
	memcpy(big, "[host a]\nuri = ", 15);
	big[600] = '\0';
	assert_int_equal(parse(big, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "uri: value longer than 511 bytes"));
	config_free(&c);
}

/* ---- the libvirt layer's host side ---- */

static void test_uri_remote(void **state)
{
	(void)state;
	assert_int_equal(guest_uri_remote("qemu+ssh://ci@arm1/system"), 1);
	assert_int_equal(guest_uri_remote("qemu+tcp://127.0.0.1:16509/session"), 1);
	assert_int_equal(guest_uri_remote("qemu://arm1.example/system"), 1);
	assert_int_equal(guest_uri_remote("qemu:///system"), 0);
	assert_int_equal(guest_uri_remote("qemu:///embed?root=/var/lib/rcgate/libvirt"), 0);
	assert_int_equal(guest_uri_remote("test:///default"), 0);
}

static void test_xml_streams(void **state)
{
	struct guest_spec s = {
		.name = "rcgate-1-1", .arch = "x86_64",
		.emulator = "/usr/bin/qemu-system-x86_64", .machine = "q35",
		.memory_mib = 512, .vcpus = 1, .kernel = "/pool/k",
		.channel_log = "/local/results.ktap", .channel_name = "org.rcgate.results",
		.console_log = "/local/console.log", .streams = 1,
	};
	char err[256], *xml = guest_xml(&s, err, sizeof(err));

	(void)state;
	assert_non_null(xml);
	assert_non_null(strstr(xml, "<serial type='pty'>"));
	assert_non_null(strstr(xml, "<channel type='unix'>\n      <source mode='bind'/>\n"
			       "      <target type='virtio' name='org.rcgate.results'/>"));
	/* The local files are the daemon's, never named to the host. */
	assert_null(strstr(xml, "/local/"));
	free(xml);
}

static void test_pool_test_driver(void **state)
{
	char err[512], path[4096], tmp[] = "/tmp/hosts-unit-XXXXXX";
	struct guest_host *h = guest_host_open("test:///default", err, sizeof(err));
	int n = -1, fd;

	(void)state;
	assert_non_null(h);
	assert_int_equal(guest_host_alive(h, err, sizeof(err)), 1);
	/* test:///default has a pool "default-pool". */
	assert_int_equal(guest_pool_ensure(h, "default-pool", NULL, 0, err,
					   sizeof(err)), 0);
	assert_int_equal(guest_pool_ensure(h, "default-pool", NULL, 1L << 30,
					   err, sizeof(err)), -1);
	assert_non_null(strstr(err, "storage pool default-pool is full"));
	assert_int_equal(guest_pool_ensure(h, "nopool", NULL, 0, err,
					   sizeof(err)), -1);
	assert_non_null(strstr(err, "no pool_path is configured"));
	assert_int_equal(guest_pool_ensure(h, "bad'name", "/x", 0, err,
					   sizeof(err)), -1);
	assert_int_equal(guest_pool_ensure(h, "mine", "/x'y", 0, err,
					   sizeof(err)), -1);
	assert_non_null(strstr(err, "without markup"));
	/* Made when missing and a path is given. */
	if (guest_pool_ensure(h, "mine", "/rcgate-test-pool", 0, err,
			      sizeof(err)) < 0)
		fail_msg("%s", err);
	/* A name with markup is refused before libvirt sees it. */
	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "kernel", 6), 6);
	close(fd);
	assert_int_equal(guest_vol_upload(h, "mine", "a<b", tmp, path,
					  sizeof(path), NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is not a plain name"));
	/* The test driver takes no uploads: the error names the call, and
	 * no volume is left behind. */
	if (guest_vol_upload(h, "mine", "rcgate-ab-1-1-kernel", tmp, path,
			     sizeof(path), NULL, err, sizeof(err)) < 0)
		assert_non_null(strstr(err, "rcgate-ab-1-1-kernel"));
	assert_int_equal(guest_vol_delete_prefix(h, "mine", "rcgate-ab-", &n,
						 err, sizeof(err)), 0);
	assert_true(n == 0 || n == 1);
	assert_int_equal(guest_vol_delete(h, "mine", "rcgate-ab-1-1-kernel",
					  err, sizeof(err)), 0);
	assert_int_equal(guest_vol_delete_prefix(h, "mine", "", &n, err,
						 sizeof(err)), -1);
	unlink(tmp);
	guest_host_close(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choose),
		cmocka_unit_test(test_conf),
		cmocka_unit_test(test_conf_dump_round_trip),
		cmocka_unit_test(test_conf_errors),
		cmocka_unit_test(test_uri_remote),
		cmocka_unit_test(test_xml_streams),
		cmocka_unit_test(test_pool_test_driver),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
