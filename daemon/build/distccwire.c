/* SPDX-License-Identifier: GPL-2.0-only
 *
 * distccwire.c - owns what a build may ask of a build host: the request
 * of distcc's protocol version 1 as the relay (distccrelay.c) reads it
 * from the sandbox, and the command lines it lets through.
 *
 * A request is packets of a 4-letter token and 8 hex digits: DIST 1,
 * ARGC n, n times ARGV len + bytes, then DOTI len + the preprocessed
 * source (distcc's doc/protocol-1.txt). Every length is capped where it
 * is read. Versions 2 (lzo) and 3 (pump mode: the host preprocesses,
 * reading headers the client sends) are refused: rcgate's DISTCC_HOSTS
 * asks for neither.
 *
 * The command line must be a compile as kbuild makes one once distcc
 * stripped the preprocessor's options: the target's gcc (by its name or
 * as /usr/bin/NAME, as ccache names it), then only
 * options of the families a compile of C or assembly to an object uses
 * (-f -m -W -O -g -std= --param, -c, -o X.o), one input file, printable
 * ASCII only. What runs a program, loads code, reads options or files on
 * the host, or writes files there (-wrapper, -fplugin, -B, -specs,
 * @file, --sysroot, -fdump-*, -Wl, -Xassembler, -save-temps, ...) does
 * not match and is refused with the reason. Pure logic:
 * tests/unit/distcc.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "build/build.h"

/* The host's own gcc under the name distcc gives it: distcc rewrites a
 * bare "gcc" to the machine's triplet ("gcc -dumpmachine"). */
#define NATIVE_GCC "x86_64-linux-gnu-gcc"

/* Token and parameter at p (12 bytes): 0, or -1 unless it is tok
 * followed by 8 hex digits. */
static int token_read(const char *p, const char *tok, uint32_t *value)
{
	uint32_t v = 0;

	if (memcmp(p, tok, 4) != 0)
		return -1;
	for (int i = 4; i < DCC_TOKEN_LEN; i++) {
		char c = p[i];
		int d = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			return -1;
		v = v << 4 | (uint32_t)d;
	}
	*value = v;
	return 0;
}

void dcc_request_free(struct dcc_request *r)
{
	for (size_t i = 0; i < r->argc; i++)
		free(r->argv[i]);
	memset(r, 0, sizeof(*r));
}

int dcc_request_parse(const char *buf, size_t len, struct dcc_request *r,
		      size_t *used, char *why, size_t whylen)
{
	size_t at = 0, total = 0;
	uint32_t v;

	memset(r, 0, sizeof(*r));
#define NEED(n) do { if (len - at < (n)) goto more; } while (0)
	NEED(DCC_TOKEN_LEN);
	if (token_read(buf, "DIST", &v) < 0) {
		errf(why, whylen, "not a distcc request (no DIST token)");
		return -1;
	}
	if (v != 1) {
		errf(why, whylen, "protocol version %u (lzo or pump mode): only"
		     " version 1 is relayed", (unsigned)v);
		return -1;
	}
	at += DCC_TOKEN_LEN;
	NEED(DCC_TOKEN_LEN);
	if (token_read(buf + at, "ARGC", &v) < 0) {
		errf(why, whylen, "malformed request: no ARGC after DIST");
		return -1;
	}
	if (v < 2 || v > DCC_ARGC_MAX) {
		errf(why, whylen, "ARGC %u outside 2..%d", (unsigned)v,
		     DCC_ARGC_MAX);
		return -1;
	}
	at += DCC_TOKEN_LEN;
	for (uint32_t i = 0, argc = v; i < argc; i++) {
		NEED(DCC_TOKEN_LEN);
		if (token_read(buf + at, "ARGV", &v) < 0) {
			errf(why, whylen, "malformed request: argument %u is"
			     " not an ARGV", (unsigned)i);
			goto bad;
		}
		if (v > DCC_ARG_MAX || total + v > DCC_ARGV_BYTES_MAX) {
			errf(why, whylen, "argument %u of %u bytes: over the"
			     " caps (%d, %d in all)", (unsigned)i, (unsigned)v,
			     DCC_ARG_MAX, DCC_ARGV_BYTES_MAX);
			goto bad;
		}
		NEED(DCC_TOKEN_LEN + (size_t)v);
		r->argv[i] = malloc((size_t)v + 1);
		if (r->argv[i] == NULL) {
			errf(why, whylen, "out of memory");
			goto bad;
		}
		memcpy(r->argv[i], buf + at + DCC_TOKEN_LEN, v);
		r->argv[i][v] = '\0';
		r->arglen[i] = v;
		r->argc = (size_t)i + 1;
		total += v;
		at += DCC_TOKEN_LEN + (size_t)v;
	}
	NEED(DCC_TOKEN_LEN);
	if (token_read(buf + at, "DOTI", &v) < 0) {
		errf(why, whylen, "malformed request: no DOTI after the"
		     " arguments");
		goto bad;
	}
	if (v > DCC_DOTI_MAX) {
		errf(why, whylen, "source of %u bytes: over the cap of %u",
		     (unsigned)v, (unsigned)DCC_DOTI_MAX);
		goto bad;
	}
	r->doti_len = v;
	*used = at + DCC_TOKEN_LEN;
	return 1;
#undef NEED
more:
	dcc_request_free(r);
	return 0;
bad:
	dcc_request_free(r);
	return -1;
}

size_t dcc_request_header(const struct dcc_request *r, char *out,
			  size_t outlen)
{
	size_t at = 0;
	int n = snprintf(out, outlen, "DIST%08xARGC%08x", 1u,
			 (unsigned)r->argc);

	if (n < 0 || (size_t)n >= outlen)
		return 0;
	at = (size_t)n;
	for (size_t i = 0; i < r->argc; i++) {
		if (outlen - at <= DCC_TOKEN_LEN + r->arglen[i])
			return 0;
		snprintf(out + at, outlen - at, "ARGV%08x",
			 (unsigned)r->arglen[i]);
		memcpy(out + at + DCC_TOKEN_LEN, r->argv[i], r->arglen[i]);
		at += DCC_TOKEN_LEN + r->arglen[i];
	}
	if (outlen - at <= DCC_TOKEN_LEN)
		return 0;
	snprintf(out + at, outlen - at, "DOTI%08x", (unsigned)r->doti_len);
	return at + DCC_TOKEN_LEN;
}

size_t dcc_refusal_reply(const char *why, char *out, size_t outlen)
{
	char msg[320];
	int m = snprintf(msg, sizeof(msg), "rcgate: the build host's relay"
			 " refused this compile: %.200s\n", why);
	int n = m > 0 ? snprintf(out, outlen, "DONE%08xSTAT%08xSERR%08x%s"
				 "SOUT%08xDOTO%08x", 1u, 1u << 8, (unsigned)m,
				 msg, 0u, 0u) : -1;

	return n > 0 && (size_t)n < outlen ? (size_t)n : 0;
}

/* ---- the command line ---- */

enum arg_kind {
	ARG_REFUSE,	/* why says what it would do on the host */
	ARG_FLAG,	/* an option of its own, nothing after it */
	ARG_COMPILE,	/* -c */
	ARG_OUTPUT,	/* -o, the object's name next */
	ARG_PARAM,	/* --param, NAME=VALUE next */
	ARG_ASM,	/* -Wa,LIST: the assembler's options, each checked */
};

struct arg_rule {
	const char *name;
	int prefix;		/* 1: every argument starting with name */
	enum arg_kind kind;
	const char *why;
};

/* First match wins: a family's dangerous members come before the family.
 * An argument matching no row is refused too. */
static const struct arg_rule arg_rules[] = {
	{ "-fplugin", 1, ARG_REFUSE, "loads a plugin on the host" },
	{ "-fdump-", 1, ARG_REFUSE, "writes dump files on the host" },
	{ "-fprofile", 1, ARG_REFUSE, "reads or writes profiles on the host" },
	{ "-fauto-profile", 1, ARG_REFUSE, "reads a profile on the host" },
	{ "-fbranch-probabilities", 1, ARG_REFUSE, "reads profiles on the host" },
	{ "-fcallgraph-info", 1, ARG_REFUSE, "writes files on the host" },
	{ "-fstack-usage", 1, ARG_REFUSE, "writes files on the host" },
	{ "-fsave-optimization-record", 1, ARG_REFUSE, "writes files on the host" },
	{ "-fopt-info", 1, ARG_REFUSE, "writes files on the host" },
	{ "-freport-bug", 1, ARG_REFUSE, "writes files on the host" },
	{ "-fself-test", 1, ARG_REFUSE, "reads files on the host" },
	{ "-fcompare-debug", 1, ARG_REFUSE, "runs the compiler again" },
	{ "-fmodule", 1, ARG_REFUSE, "a module mapper runs programs" },
	{ "-fdeps", 1, ARG_REFUSE, "writes files on the host" },
	{ "-flto", 1, ARG_REFUSE, "not a kernel compile (LTO)" },
	{ "-fexec-charset", 1, ARG_REFUSE, "loads a converter on the host" },
	{ "-finput-charset", 1, ARG_REFUSE, "loads a converter on the host" },
	{ "-fwide-exec-charset", 1, ARG_REFUSE, "loads a converter on the host" },
	{ "-f", 1, ARG_FLAG, NULL },
	{ "-m", 1, ARG_FLAG, NULL },
	{ "-Wa,", 1, ARG_ASM, NULL },
	{ "-Wl,", 1, ARG_REFUSE, "passes options to the linker" },
	{ "-Wp,", 1, ARG_REFUSE, "passes options to the preprocessor" },
	{ "-W", 1, ARG_FLAG, NULL },
	{ "-O", 1, ARG_FLAG, NULL },
	{ "-g", 1, ARG_FLAG, NULL },
	{ "-std=", 1, ARG_FLAG, NULL },
	{ "--param=", 1, ARG_FLAG, NULL },
	{ "--param", 0, ARG_PARAM, NULL },
	{ "-c", 0, ARG_COMPILE, NULL },
	{ "-o", 0, ARG_OUTPUT, NULL },
	{ "-pg", 0, ARG_FLAG, NULL },
	{ "-w", 0, ARG_FLAG, NULL },
	{ "-pipe", 0, ARG_FLAG, NULL },
	{ "-ansi", 0, ARG_FLAG, NULL },
	{ "-pedantic", 0, ARG_FLAG, NULL },
	{ "-nostdinc", 0, ARG_FLAG, NULL },
	{ "-wrapper", 0, ARG_REFUSE, "runs a program on the host" },
	{ "-B", 1, ARG_REFUSE, "runs programs from a directory on the host" },
	{ "-specs", 1, ARG_REFUSE, "reads a specs file (commands) on the host" },
	{ "--specs", 1, ARG_REFUSE, "reads a specs file (commands) on the host" },
	{ "--sysroot", 1, ARG_REFUSE, "names a directory on the host" },
	{ "-isysroot", 1, ARG_REFUSE, "names a directory on the host" },
	{ "-iplugindir", 1, ARG_REFUSE, "loads plugins on the host" },
	{ "-save-temps", 1, ARG_REFUSE, "writes files on the host" },
	{ "-X", 1, ARG_REFUSE, "passes options to another program" },
	{ "-x", 1, ARG_REFUSE, "names the language: not a kbuild compile" },
	{ "-E", 0, ARG_REFUSE, "preprocesses: the host only compiles" },
	{ "-S", 0, ARG_REFUSE, "not a compile to an object" },
	{ "-M", 1, ARG_REFUSE, "writes dependency files" },
	{ "-dump", 1, ARG_REFUSE, "names files on the host" },
	{ "-print", 1, ARG_REFUSE, "not a compile" },
	{ "-v", 0, ARG_REFUSE, "not a compile" },
};

/* The assembler options kbuild passes through -Wa,: -m and -g ones and
 * -W; nothing naming a file (listings, dependency files, includes). */
static int asm_option_ok(const char *opt, size_t n)
{
	if (n == 2 && memcmp(opt, "-W", 2) == 0)
		return 1;
	if (n < 2 || memchr(opt, '/', n) != NULL)
		return 0;
	return memcmp(opt, "-m", 2) == 0 || memcmp(opt, "-g", 2) == 0 ||
	       (n > 8 && memcmp(opt, "--gdwarf", 8) == 0);
}

static const struct arg_rule *arg_rule_find(const char *a)
{
	for (size_t i = 0; i < sizeof(arg_rules) / sizeof(arg_rules[0]); i++) {
		const struct arg_rule *rule = &arg_rules[i];
		size_t n = strlen(rule->name);

		if (rule->prefix ? strncmp(a, rule->name, n) == 0 :
				   strcmp(a, rule->name) == 0)
			return rule;
	}
	return NULL;
}

/* Does name end with one of the (NULL-terminated) suffixes? */
static int has_suffix(const char *name, const char *const suffixes[])
{
	size_t n = strlen(name);

	for (size_t i = 0; suffixes[i] != NULL; i++) {
		size_t s = strlen(suffixes[i]);

		if (n > s && strcmp(name + n - s, suffixes[i]) == 0)
			return 1;
	}
	return 0;
}

/* Printable ASCII, not empty, as long as the protocol said: an argument
 * the host's gcc reads as the relay did. */
static int arg_plain(const char *a, size_t len)
{
	if (len == 0 || strlen(a) != len)
		return 0;
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)a[i] < 0x20 || (unsigned char)a[i] > 0x7e)
			return 0;
	}
	return 1;
}

/* One option a (rule matched): 0, or -1 with why. */
static int option_check(const char *a, const struct arg_rule *rule,
			char *why, size_t whylen)
{
	const char *eq = strchr(a, '=');

	if (rule->kind == ARG_ASM) {
		for (const char *p = a + 4, *end; ; p = end + 1) {
			end = strchr(p, ',');
			if (end == NULL)
				end = p + strlen(p);
			if (!asm_option_ok(p, (size_t)(end - p))) {
				errf(why, whylen, "'%.80s': an assembler"
				     " option rcgate does not relay", a);
				return -1;
			}
			if (*end == '\0')
				return 0;
		}
	}
	/* A value naming a path is a file on the host, but for the
	 * prefix maps, which only rewrite names in the object. */
	if (eq != NULL && strchr(eq, '/') != NULL &&
	    !((size_t)(eq - a) > 11 && memcmp(eq - 11, "-prefix-map", 11) == 0)) {
		errf(why, whylen, "'%.80s': names a path on the host", a);
		return -1;
	}
	return 0;
}

int dcc_argv_check(char *const argv[], const size_t arglen[], size_t argc,
		   const char *const compilers[], char *why, size_t whylen)
{
	static const char *const inputs[] = { ".c", ".i", ".S", ".s", NULL };
	static const char *const objects[] = { ".o", NULL };
	int compile = 0, output = 0, input = 0, known = 0;

	for (size_t i = 0; i < argc; i++) {
		if (!arg_plain(argv[i], arglen[i])) {
			errf(why, whylen, "argument %zu is empty or has control,"
			     " NUL or non-ASCII bytes", i);
			return -1;
		}
	}
	if (argc < 2) {
		errf(why, whylen, "no command line");
		return -1;
	}
	/* ccache runs distcc with the compiler's full path. */
	for (size_t i = 0; compilers[i] != NULL; i++)
		known |= strcmp(argv[0], compilers[i]) == 0 ||
			 (strncmp(argv[0], "/usr/bin/", 9) == 0 &&
			  strcmp(argv[0] + 9, compilers[i]) == 0);
	if (!known) {
		errf(why, whylen, "compiler '%.80s' is not this target's", argv[0]);
		return -1;
	}
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct arg_rule *rule;

		if (a[0] == '@') {
			errf(why, whylen, "'%.80s' reads options from a file on"
			     " the host", a);
			return -1;
		}
		if (a[0] != '-') {
			if (input++ > 0 || !has_suffix(a, inputs)) {
				errf(why, whylen, "'%.80s': not the one source"
				     " file of a compile", a);
				return -1;
			}
			continue;
		}
		rule = arg_rule_find(a);
		if (rule == NULL) {
			errf(why, whylen, "'%.80s': not an option of a kernel"
			     " compile", a);
			return -1;
		}
		switch (rule->kind) {
		case ARG_REFUSE:
			errf(why, whylen, "'%.80s' %s", a, rule->why);
			return -1;
		case ARG_COMPILE:
			compile++;
			break;
		case ARG_OUTPUT:
		case ARG_PARAM:
			if (i + 1 == argc || argv[i + 1][0] == '-' ||
			    argv[i + 1][0] == '@' ||
			    (rule->kind == ARG_OUTPUT &&
			     (output++ > 0 || !has_suffix(argv[i + 1], objects))) ||
			    (rule->kind == ARG_PARAM &&
			     strpbrk(argv[i + 1], "/") != NULL)) {
				errf(why, whylen, "'%.80s %.80s': not one"
				     " object or parameter", a,
				     i + 1 < argc ? argv[i + 1] : "");
				return -1;
			}
			i++;
			break;
		case ARG_FLAG:
		case ARG_ASM:
			if (option_check(a, rule, why, whylen) < 0)
				return -1;
			break;
		}
	}
	if (compile != 1 || output != 1 || input != 1) {
		errf(why, whylen, "not one -c, one -o X.o and one source file"
		     " (%d, %d, %d)", compile, output, input);
		return -1;
	}
	return 0;
}

size_t dcc_target_compilers(const char *cross_compile, char names[][64],
			    const char *out[], size_t max)
{
	size_t n = 0;

	if (max < 3)
		return 0;
	if (cross_compile == NULL || cross_compile[0] == '\0') {
		out[n++] = "gcc";
		out[n++] = NATIVE_GCC;
	} else {
		snprintf(names[0], 64, "%sgcc", cross_compile);
		out[n++] = names[0];
	}
	out[n] = NULL;
	return n;
}
