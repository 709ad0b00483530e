/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for the build hosts: the [host] keys build_slots, distcc and
 * compilers (config.c, what config_load accepts and how it splits the
 * guests' hosts from the build hosts), distcc.c's count of where a
 * build's compiles went, and distccwire.c's reading of a request and
 * check of its command line: forged, huge and malformed ones. Real
 * compiles through a distccd are tests/integration/distcc.sh's and
 * buildhosts.sh's.
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

/* ---- distccwire.c: requests and command lines ---- */

/* A request as distcc sends it: the argc arguments, then DOTI with the
 * source's length (its bytes are not part of the header). Into out; its
 * length. */
static size_t request(char *out, size_t outlen, unsigned version,
		      const char *const argv[], size_t argc, unsigned doti)
{
	size_t at = (size_t)snprintf(out, outlen, "DIST%08xARGC%08x", version,
				     (unsigned)argc);

	for (size_t i = 0; i < argc; i++)
		at += (size_t)snprintf(out + at, outlen - at, "ARGV%08x%s",
				       (unsigned)strlen(argv[i]), argv[i]);
	at += (size_t)snprintf(out + at, outlen - at, "DOTI%08x", doti);
	return at;
}

static const char *const kbuild_argv[] = {
	"/usr/bin/gcc", "-fmacro-prefix-map=./=", "-Wall", "-Wundef",
	"-Werror=strict-prototypes", "-fno-strict-aliasing", "-fno-PIE",
	"-std=gnu11", "-mno-sse", "-m64", "-falign-jumps=1",
	"-mpreferred-stack-boundary=3", "-mcmodel=kernel",
	"-mindirect-branch=thunk-extern", "-O2", "--param=min-pagesize=0",
	"--param", "allow-store-data-races=0", "-Wframe-larger-than=2048",
	"-fstack-protector-strong", "-ftrivial-auto-var-init=zero", "-pg",
	"-mrecord-mcount", "-mfentry", "-Wimplicit-fallthrough=5", "-g",
	"-gdwarf-5", "-Wa,-gdwarf-5", "-Wa,-mrelax-relocations=no,-W", "-c",
	"-o", "kernel/fork.o", "kernel/fork.c",
};
#define KBUILD_ARGC (sizeof(kbuild_argv) / sizeof(kbuild_argv[0]))

static const char *const x86_compilers[] = { "gcc", "x86_64-linux-gnu-gcc",
					     NULL };

/* dcc_argv_check of argv with lengths from strlen. */
static int check_argv(const char *const argv[], size_t argc,
		      const char *const compilers[], char *why, size_t whylen)
{
	size_t len[DCC_ARGC_MAX];

	for (size_t i = 0; i < argc; i++)
		len[i] = strlen(argv[i]);
	return dcc_argv_check((char *const *)argv, len, argc, compilers, why,
			      whylen);
}

static void test_request_parse(void **state)
{
	char buf[8192], out[8192], why[256];
	struct dcc_request r;
	size_t len, used;

	(void)state;
	len = request(buf, sizeof(buf), 1, kbuild_argv, KBUILD_ARGC, 1234);
	/* Each prefix is "more", the whole is complete, the source's bytes
	 * after it are not the header's. */
	for (size_t n = 0; n < len; n++)
		assert_int_equal(dcc_request_parse(buf, n, &r, &used, why,
						   sizeof(why)), 0);
	memcpy(buf + len, "int x;", 6);
	assert_int_equal(dcc_request_parse(buf, len + 6, &r, &used, why,
					   sizeof(why)), 1);
	assert_int_equal(used, len);
	assert_int_equal(r.argc, KBUILD_ARGC);
	assert_int_equal(r.doti_len, 1234);
	assert_string_equal(r.argv[0], "/usr/bin/gcc");
	assert_string_equal(r.argv[KBUILD_ARGC - 1], "kernel/fork.c");
	assert_null(r.argv[KBUILD_ARGC]);
	/* What the relay sends on is what it read (canonical already). */
	assert_int_equal(dcc_request_header(&r, out, sizeof(out)), len);
	assert_memory_equal(out, buf, len);
	assert_int_equal(dcc_request_header(&r, out, len), 0);	/* no room */
	dcc_request_free(&r);
	/* Upper-case hex is hex too. */
	{
		static const char upper[] = "DIST00000001ARGC00000002"
			"ARGV00000003gccARGV00000002-cDOTI0000000A";

		assert_int_equal(dcc_request_parse(upper, sizeof(upper) - 1,
						   &r, &used, why, sizeof(why)),
				 1);
	}
	assert_int_equal(r.doti_len, 10);
	dcc_request_free(&r);
}

static void test_request_malformed(void **state)
{
	static const struct {
		const char *text;
		const char *says;
	} cases[] = {
		{ "GET / HTTP/1.1\r\n\r\n", "no DIST" },
		{ "DIST00000002ARGC00000002", "version 2" },	/* lzo */
		{ "DIST00000003ARGC00000002", "version 3" },	/* pump */
		{ "DIST00000000ARGC00000002", "version 0" },
		{ "DISTffffffffARGC00000002", "version 4294967295" },
		{ "DIST0000001gARGC00000002", "no DIST" },	/* not hex */
		{ "DIST 0000001ARGC00000002", "no DIST" },
		{ "DIST-0000001ARGC00000002", "no DIST" },
		{ "DIST00000001ARGV00000002", "no ARGC" },
		{ "DIST00000001ARGC00000000", "ARGC 0" },
		{ "DIST00000001ARGC00000001", "ARGC 1" },
		{ "DIST00000001ARGCffffffff", "ARGC 4294967295" },
		{ "DIST00000001ARGC00000201", "ARGC 513" },
		{ "DIST00000001ARGC00000002DOTI00000001", "not an ARGV" },
		{ "DIST00000001ARGC00000002ARGV7fffffff", "over the caps" },
		{ "DIST00000001ARGC00000002ARGV00001001", "over the caps" },
		{ "DIST00000001ARGC00000002ARGV00000003gccARGV00000002-c"
		  "ARGV00000001x", "no DOTI" },
		{ "DIST00000001ARGC00000002ARGV00000003gccARGV00000002-c"
		  "DOTIffffffff", "over the cap" },
		{ "DIST00000001ARGC00000002ARGV00000003gccARGV00000002-c"
		  "DOTI08000001", "over the cap" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dcc_request r;
		char why[256] = "";
		size_t used = 0;

		if (dcc_request_parse(cases[i].text, strlen(cases[i].text), &r,
				      &used, why, sizeof(why)) != -1)
			fail_msg("accepted: %s", cases[i].text);
		if (strstr(why, cases[i].says) == NULL)
			fail_msg("%s: said '%s', want '%s'", cases[i].text, why,
				 cases[i].says);
		assert_int_equal(r.argc, 0);	/* nothing left to free */
	}
}

/* Arguments that add up over the total cap, each under its own; and
 * NUL bytes inside an argument, which the host would cut short. */
static void test_request_huge(void **state)
{
	size_t cap = DCC_HEADER_MAX + 64, at, used;
	char *buf = malloc(cap), why[256];
	struct dcc_request r;

	(void)state;
	assert_non_null(buf);
	at = (size_t)snprintf(buf, cap, "DIST00000001ARGC%08x", DCC_ARGC_MAX);
	for (int i = 0; i < DCC_ARGC_MAX && at + 12 + DCC_ARG_MAX < cap; i++) {
		at += (size_t)snprintf(buf + at, cap - at, "ARGV%08x",
				       DCC_ARG_MAX);
		memset(buf + at, 'a', DCC_ARG_MAX);
		at += DCC_ARG_MAX;
	}
	assert_int_equal(dcc_request_parse(buf, at, &r, &used, why,
					   sizeof(why)), -1);
	assert_non_null(strstr(why, "in all"));
	/* A NUL inside: parsed (the length says so), then refused. */
	{
		static const char nul[] = "DIST00000001ARGC00000004"
			"ARGV00000003gccARGV00000002-c"
			"ARGV00000007-wra\0erARGV00000003p.cDOTI00000000";

		assert_int_equal(dcc_request_parse(nul, sizeof(nul) - 1, &r,
						   &used, why, sizeof(why)), 1);
	}
	assert_int_equal(r.arglen[2], 7);
	assert_int_equal(dcc_argv_check(r.argv, r.arglen, r.argc,
					x86_compilers, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "NUL"));
	dcc_request_free(&r);
	free(buf);
}

static void test_argv_kbuild(void **state)
{
	static const char *const arm64[] = { "aarch64-linux-gnu-gcc", NULL };
	const char *cross[] = { "aarch64-linux-gnu-gcc", "-mabi=lp64",
		"-mgeneral-regs-only", "-Wa,-march=armv8.5-a", "-O2", "-c",
		"-o", "a.o", "a.c" };
	const char *asm_file[] = { "x86_64-linux-gnu-gcc", "-Wa,--gdwarf-5",
		"-c", "-o", "entry_64.o", "arch/x86/entry/entry_64.S" };
	const char *names[3];
	char store[1][64], why[256] = "";

	(void)state;
	if (check_argv(kbuild_argv, KBUILD_ARGC, x86_compilers, why,
		       sizeof(why)) < 0)
		fail_msg("kbuild's compile refused: %s", why);
	assert_int_equal(check_argv(cross, 9, arm64, why, sizeof(why)), 0);
	assert_int_equal(check_argv(asm_file, 6, x86_compilers, why,
				    sizeof(why)), 0);
	/* Another target's compiler is not this one's. */
	assert_int_equal(check_argv(cross, 9, x86_compilers, why,
				    sizeof(why)), -1);
	assert_non_null(strstr(why, "not this target's"));
	/* The targets' names. */
	assert_int_equal(dcc_target_compilers(NULL, store, names, 3), 2);
	assert_string_equal(names[0], "gcc");
	assert_string_equal(names[1], "x86_64-linux-gnu-gcc");
	assert_null(names[2]);
	assert_int_equal(dcc_target_compilers("arm-linux-gnueabihf-", store,
					      names, 3), 1);
	assert_string_equal(names[0], "arm-linux-gnueabihf-gcc");
	assert_null(names[1]);
}

/* Each forged command line, in place of one argument of a plain compile
 * ("gcc -O2 X -c -o p.o p.c"), or as the whole line. */
static void test_argv_refused(void **state)
{
	static const struct {
		const char *arg, *arg2, *says;
	} cases[] = {
		{ "-wrapper", "/bin/sh,-c,id>/tmp/x", "runs a program" },
		{ "-fplugin=/tmp/evil.so", NULL, "loads a plugin" },
		{ "-fplugin-arg-evil-x=1", NULL, "loads a plugin" },
		{ "-B/tmp/evil/", NULL, "runs programs" },
		{ "-B", "/tmp/evil/", "runs programs" },
		{ "-specs=/tmp/evil.specs", NULL, "specs" },
		{ "--specs=/tmp/evil.specs", NULL, "specs" },
		{ "@/etc/passwd", NULL, "reads options from a file" },
		{ "--sysroot=/", NULL, "directory on the host" },
		{ "-iplugindir=/tmp", NULL, "plugins" },
		{ "-fdump-tree-all", NULL, "dump files" },
		{ "-fdump-rtl-final=/tmp/x", NULL, "dump files" },
		{ "-fprofile-use=/etc/shadow", NULL, "profiles" },
		{ "-fprofile-generate", NULL, "profiles" },
		{ "-fstack-usage", NULL, "writes files" },
		{ "-fcompare-debug=-wrapper", NULL, "compiler again" },
		{ "-fmodule-mapper=|sh", NULL, "module mapper" },
		{ "-fexec-charset=/tmp/x", NULL, "converter" },
		{ "-save-temps=obj", NULL, "writes files" },
		{ "-Wl,-rpath,/tmp", NULL, "linker" },
		{ "-Wp,-MD,/tmp/x", NULL, "preprocessor" },
		{ "-Wa,-a=/tmp/listing", NULL, "assembler option" },
		{ "-Wa,--MD,x.d", NULL, "assembler option" },
		{ "-Wa,-I,/etc", NULL, "assembler option" },
		{ "-Wa,-mx,-Ifoo", NULL, "assembler option" },
		{ "-Xlinker", "-rpath", "another program" },
		{ "-Xassembler", "-a=/tmp/x", "another program" },
		{ "-x", "c", "language" },
		{ "-E", NULL, "preprocesses" },
		{ "-S", NULL, "not a compile to an object" },
		{ "-MD", NULL, "dependency" },
		{ "-MF", "/tmp/x.d", "dependency" },
		{ "-I/etc", NULL, "not an option" },
		{ "-include", "/etc/passwd", "not an option" },
		{ "-dumpbase", "x", "names files" },
		{ "-print-prog-name=cc1", NULL, "not a compile" },
		{ "-v", NULL, "not a compile" },
		{ "-oevil.o", NULL, "not an option" },
		{ "-finstrument-functions-exclude-file-list=/a-prefix-map=",
		  NULL, "names a path" },
		{ "-fsanitize-coverage-allowlist=/etc/x", NULL, "names a path" },
		{ "--param", "x=/tmp/y", "parameter" },
		{ "--param", NULL, "parameter" },
		{ "-c", NULL, "one -c" },			/* two */
		{ "-o", "q.o", "object" },			/* two */
		{ "q.c", NULL, "one source file" },		/* two */
		{ "-", NULL, "not an option" },
		{ "-Wall\n-wrapper", NULL, "control" },
		{ "-Wall\x1b[2J", NULL, "control" },
		{ "-Wall\x7f", NULL, "control" },
		{ "-W\xc3\xa9", NULL, "non-ASCII" },
		{ "", NULL, "empty" },
	};
	static const char *const whole[][8] = {
		{ "/tmp/gcc", "-c", "-o", "p.o", "p.c" },
		{ "/usr/local/bin/gcc", "-c", "-o", "p.o", "p.c" },
		{ "/bin/sh", "-c", "-o", "p.o", "p.c" },
		{ "cc1", "-c", "-o", "p.o", "p.c" },
		{ "gcc", "-o", "p.o", "p.c" },			/* no -c */
		{ "gcc", "-c", "p.c" },				/* no -o */
		{ "gcc", "-c", "-o", "p.o" },			/* no source */
		{ "gcc", "-c", "-o", "p.so", "p.c" },
		{ "gcc", "-c", "-o", "p.o", "p.py" },
		{ "gcc", "-c", "-o", "p.o", "p.c", "-o" },
		{ "gcc", "-c", "-o", "-o", "p.c" },
		{ "gcc" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[8] = { "gcc", "-O2", cases[i].arg };
		size_t argc = 3;
		char why[256] = "";

		if (cases[i].arg2 != NULL)
			argv[argc++] = cases[i].arg2;
		argv[argc++] = "-c";
		argv[argc++] = "-o";
		argv[argc++] = "p.o";
		argv[argc++] = "p.c";
		if (check_argv(argv, argc, x86_compilers, why, sizeof(why)) == 0)
			fail_msg("accepted: %s %s", cases[i].arg,
				 cases[i].arg2 != NULL ? cases[i].arg2 : "");
		if (strstr(why, cases[i].says) == NULL)
			fail_msg("%s: said '%s', want '%s'", cases[i].arg, why,
				 cases[i].says);
	}
	for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++) {
		size_t argc = 0;
		char why[256] = "";

		while (argc < 8 && whole[i][argc] != NULL)
			argc++;
		if (check_argv(whole[i], argc, x86_compilers, why,
			       sizeof(why)) == 0)
			fail_msg("accepted: %s ... (%zu)", whole[i][0], argc);
	}
}

/* The answer to a refused compile parses as distccd's would: DONE 1,
 * STAT of exit 1, SERR of the length it says, empty SOUT and DOTO. */
static void test_refusal_reply(void **state)
{
	char out[1024], text[600];
	unsigned done, stat, serr, sout, doto;
	size_t n;

	(void)state;
	n = dcc_refusal_reply("'-wrapper' runs a program on the host", out,
			      sizeof(out));
	assert_true(n > 0);
	assert_int_equal(sscanf(out, "DONE%8xSTAT%8xSERR%8x", &done, &stat,
				&serr), 3);
	assert_int_equal(done, 1);
	assert_int_equal(stat, 256);
	assert_true(36 + serr + 24 == n);
	memcpy(text, out + 36, serr);
	text[serr] = '\0';
	assert_non_null(strstr(text, "'-wrapper' runs a program"));
	assert_int_equal(sscanf(out + 36 + serr, "SOUT%8xDOTO%8x", &sout,
				&doto), 2);
	assert_int_equal(sout + doto, 0);
	assert_int_equal(dcc_refusal_reply("x", out, 40), 0);	/* no room */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_hosts),
		cmocka_unit_test(test_build_hosts_bad),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_start_none),
		cmocka_unit_test(test_request_parse),
		cmocka_unit_test(test_request_malformed),
		cmocka_unit_test(test_request_huge),
		cmocka_unit_test(test_argv_kbuild),
		cmocka_unit_test(test_argv_refused),
		cmocka_unit_test(test_refusal_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
