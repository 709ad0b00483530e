/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for the build hosts: the [host] keys build_slots, distcc and
 * compilers (config.c, what config_load accepts and how it splits the
 * guests' hosts from the build hosts), and distcc.c's count of where a
 * build's compiles went. Real compiles through a distccd are
 * tests/integration/distcc.sh's.
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
#include "build/build.h"

static int load(const char *text, struct config *c, char *err, size_t len)
{
	config_defaults(c);
	if (config_parse(c, text, "test.conf", err, len) < 0 ||
	    config_hosts_check(c, err, len) < 0)
		return -1;
	return config_hosts_split(c, err, len);
}

static void test_build_hosts(void **state)
{
	struct config c;
	char err[512];

	(void)state;
	assert_int_equal(load("[host arm1]\nuri = qemu+ssh://ci@arm1/system\n"
			      "kvm = arm64\nbuild_slots = 8\n"
			      "distcc = arm1.lab:3632\ncompilers = arm64 armv7\n"
			      "[host big]\nbuild_slots = 32\n"
			      "distcc = 10.0.0.7:3632\n"
			      "compilers = x86_64 i386 arm64 armv7\n"
			      "[host x86]\nuri = qemu+ssh://ci@x86/system\n"
			      "kvm = x86_64\n", &c, err, sizeof(err)), 0);
	/* Guests see the hosts with a uri; builds those with slots. */
	assert_int_equal(c.nhosts, 2);
	assert_string_equal(c.hosts[0].name, "arm1");
	assert_string_equal(c.hosts[1].name, "x86");
	assert_int_equal(c.nbuild_hosts, 2);
	assert_string_equal(c.build_hosts[0].name, "arm1");
	assert_int_equal(c.build_hosts[0].build_slots, 8);
	assert_string_equal(c.build_hosts[1].name, "big");
	assert_string_equal(c.build_hosts[1].distcc, "10.0.0.7:3632");
	assert_string_equal(c.build_hosts[1].compilers, "x86_64 i386 arm64 armv7");
	/* The dump reads back as the same hosts. */
	{
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		struct config d;

		config_dump(&c, f);
		fclose(f);
		assert_int_equal(load(text, &d, err, sizeof(err)), 0);
		assert_int_equal(d.nhosts, 2);
		assert_int_equal(d.nbuild_hosts, 2);
		assert_string_equal(d.build_hosts[1].distcc, "10.0.0.7:3632");
		config_free(&d);
		free(text);
	}
	config_free(&c);
}

static void test_build_hosts_bad(void **state)
{
	static const struct {
		const char *text, *says;
	} cases[] = {
		{ "[host b]\nbuild_slots = 4\ncompilers = x86_64\n", "needs distcc" },
		{ "[host b]\nbuild_slots = 4\ndistcc = b:3632\n", "needs distcc" },
		{ "[host b]\nbuild_slots = 4\ndistcc = b\ncompilers = x86_64\n",
		  "not HOST:PORT" },
		{ "[host b]\nbuild_slots = 4\ndistcc = b:0\ncompilers = x86_64\n",
		  "not HOST:PORT" },
		{ "[host b]\nbuild_slots = 4\ndistcc = b,fork:1\ncompilers = x86_64\n",
		  "not HOST:PORT" },
		{ "[host b]\nbuild_slots = 4\ndistcc = -b:1\ncompilers = x86_64\n",
		  "not HOST:PORT" },
		{ "[host b]\nbuild_slots = 4\ndistcc = b:1\ncompilers = sparc\n",
		  "unknown target 'sparc'" },
		{ "[host b]\ndistcc = b:1\ncompilers = x86_64\n",
		  "without build_slots" },
		{ "[host b]\nbuild_slots = 257\n", "not a number" },
		/* No slots and no uri: neither a build nor a guests' host. */
		{ "[host b]\ncapacity = 2\n", "uri missing" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config c;
		char err[512] = "";

		if (load(cases[i].text, &c, err, sizeof(err)) == 0)
			fail_msg("accepted: %s", cases[i].text);
		if (strstr(err, cases[i].says) == NULL)
			fail_msg("%s: said '%s', want '%s'", cases[i].text, err,
				 cases[i].says);
		config_free(&c);
	}
}

static void test_count(void **state)
{
	static const char log[] =
		"distcc[9] compile (null) on localhost completed ok\n"
		"distcc[10] compile from fork.c to fork.o\n"
		"distcc[10] exec on @lab1/2: gcc -c fork.c\n"
		"distcc[10] cpp fork.c on localhost completed ok\n"
		"distcc[10] compile fork.c on @lab1/2 completed ok\n"
		"distcc[11] compile exit.c on @lab1/2 completed ok\n"
		"distcc[12] compile mmap.c on localhost completed ok\n"
		"distcc[13] (dcc_build_somewhere) Warning: failed to distribute,"
		" running locally instead\n"
		"distcc[13] compile a.c on localhost completed ok\n"
		/* The host took it and gave no answer: rerun here. */
		"distcc[15] exec on @lab1/2: gcc -c c.c\n"
		"distcc[16] exec on @lab1/2: gcc -c d.c\n"
		"distcc[15] (dcc_r_result_header) ERROR: server provided no answer.\n"
		"distcc[16] compile d.c on @lab1/2 completed ok\n"
		"distcc[15] compile c.c on localhost completed ok\n"
		"distcc[14] compile b.c on @big/32 completed ok";	/* no \n */
	struct distcc_counts c;

	(void)state;
	assert_int_equal(distcc_count(log, sizeof(log) - 1, &c), 0);
	assert_int_equal(c.total, 7);
	assert_int_equal(c.fallbacks, 2);
	assert_int_equal(c.nhosts, 3);
	assert_string_equal(c.host[0].name, "lab1");
	assert_int_equal(c.host[0].compiles, 3);
	assert_string_equal(c.host[1].name, "localhost");
	assert_int_equal(c.host[1].compiles, 3);
	assert_string_equal(c.host[2].name, "big");
	assert_int_equal(c.host[2].compiles, 1);
	/* Nothing, and garbage, count nothing. */
	assert_int_equal(distcc_count("", 0, &c), 0);
	assert_int_equal(c.total, 0);
	assert_int_equal(distcc_count("] compile  on  completed ok\n", 28, &c), 0);
	assert_int_equal(c.nhosts, 0);
}

/* No build host compiles the target: distcc_start leaves the build local
 * and starts nothing. */
static void test_start_none(void **state)
{
	struct host_conf h = { .name = "arm1", .build_slots = 4,
			       .distcc = "127.0.0.1:1", .compilers = "arm64" };
	struct build_options o = { .jobs = 2, .build_hosts = &h,
				   .nbuild_hosts = 1 };
	struct distcc d;
	char *env[4] = { "A=1", NULL };
	FILE *log = fopen("/dev/null", "w");

	(void)state;
	assert_non_null(log);
	assert_int_equal(distcc_start(&o, "x86_64", "/nonexistent", &d, log), 0);
	assert_int_equal(d.nrelay, 0);
	assert_int_equal(d.slots, 0);
	assert_int_equal(distcc_env(&d, env, 1, 4), 1);
	assert_null(env[1]);
	fclose(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_hosts),
		cmocka_unit_test(test_build_hosts_bad),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_start_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
