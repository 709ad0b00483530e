/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/origin.c and sandbox.c's pure parts: which URLs a
 * build may read from ([build] tree_origins and file_origins, with
 * kernel.org's defaults), plain http:// and git:// upgraded to an allowed
 * https:// twin or refused, URLs that could mean more than their prefix
 * refused; a download's redirects held to the same origins hop by hop
 * (fetch_redirect_check with origin_pin_file); and the sandbox's command line (no network unless asked, the
 * paths it binds, the hard limits before the program).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "artifact/artifact.h"
#include "build/build.h"

#define TREES "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git " \
	"https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git"
#define FILES "https://cdn.kernel.org/pub/linux/kernel/ https://www.kernel.org/pub/linux/kernel/"

static void test_pin_table(void **state)
{
	static const struct {
		const char *allow, *what, *url;
		const char *want;	/* NULL: refused */
	} cases[] = {
		/* kernel.org as it is, and as mails name it */
		{ TREES, "tree", "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git",
		  "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git" },
		{ TREES, "tree", "git://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git",
		  "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git" },
		{ TREES, "tree", "http://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git",
		  "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git" },
		{ FILES, "file", "http://www.kernel.org/pub/linux/kernel/v6.x/stable-review/patch-6.1.64-rc1.gz",
		  "https://www.kernel.org/pub/linux/kernel/v6.x/stable-review/patch-6.1.64-rc1.gz" },
		{ FILES, "file", "https://cdn.kernel.org/pub/linux/kernel/v6.x/linux-6.1.63.tar.xz",
		  "https://cdn.kernel.org/pub/linux/kernel/v6.x/linux-6.1.63.tar.xz" },
		/* elsewhere, or only looking like kernel.org */
		{ TREES, "tree", "https://evil.example/linux-stable-rc.git", NULL },
		{ TREES, "tree", "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git.evil", NULL },
		{ TREES, "tree", "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.gitx", NULL },
		{ FILES, "file", "https://www.kernel.org.evil.example/pub/linux/kernel/x.gz", NULL },
		{ FILES, "file", "https://www.kernel.org@evil.example/pub/linux/kernel/x.gz", NULL },
		{ FILES, "file", "https://www.kernel.org/pub/linux/kernel/../../../evil/x.gz", NULL },
		{ FILES, "file", "https://www.kernel.org/pub/linux/kernel/%2e%2e/x.gz", NULL },
		{ FILES, "file", "https://www.kernel.org/pub/linux/kernel/x.gz?u=1", NULL },
		{ FILES, "file", "https://www.kernel.org/pub/linux/kernel/x\x1b.gz", NULL },
		{ FILES, "file", "ftp://www.kernel.org/pub/linux/kernel/x.gz", NULL },
		{ FILES, "file", "file:///pub/linux/kernel/x.gz", NULL },
		/* a plain-text prefix is the operator's explicit opt-in */
		{ "http://127.0.0.1:", "file", "http://127.0.0.1:8000/pub/x.gz", "http://127.0.0.1:8000/pub/x.gz" },
		{ "http://127.0.0.1:", "file", "http://127.0.0.10:8000/pub/x.gz", NULL },
		{ "git://127.0.0.1:", "tree", "git://127.0.0.1:9418/linux.git", "git://127.0.0.1:9418/linux.git" },
		{ "", "tree", "https://git.kernel.org/x.git", NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[2048] = "", err[512] = "";
		int rc = origin_pin(cases[i].allow, cases[i].what, cases[i].url,
				    out, sizeof(out), err, sizeof(err));

		if (cases[i].want == NULL ? rc != -1 || err[0] == '\0'
		    : rc != 0 || strcmp(out, cases[i].want) != 0)
			fail_msg("case %zu (%s): rc %d out '%s' err '%s'", i,
				 cases[i].url, rc, out, err);
	}
}

static void test_origin_host(void **state)
{
	char h[64];

	(void)state;
	assert_int_equal(url_origin_host("https://Git.Kernel.org/pub/x.git", h, sizeof(h)), 0);
	assert_string_equal(h, "git.kernel.org");
	assert_int_equal(url_origin_host("http://127.0.0.1:8000/x", h, sizeof(h)), 0);
	assert_string_equal(h, "127.0.0.1");
	assert_int_equal(url_origin_host("http://[::1]:80/x", h, sizeof(h)), 0);
	assert_string_equal(h, "[::1]");
	assert_int_equal(url_origin_host("file:///var/x.tar.xz", h, sizeof(h)), 0);
	assert_string_equal(h, "local");
	assert_int_equal(url_origin_host("no-scheme", h, sizeof(h)), -1);
	assert_int_equal(url_origin_host("https:///x", h, sizeof(h)), -1);
}

/* The index of s in argv, or -1. */
static int find(const char **argv, const char *s)
{
	for (int i = 0; argv[i] != NULL; i++)
		if (strcmp(argv[i], s) == 0)
			return i;
	return -1;
}

static void test_sandbox_argv(void **state)
{
	const char *prog[] = { "make", "O=build", "tinyconfig", NULL };
	struct sandbox sb = { { "/t/tree" }, { "/t/tree/build", "/t/ccache" }, 0, 1, NULL };
	struct build_options o = { .sandbox = &sb, .mem_mb = 100, .file_mb = 7 };
	const char *argv[160];
	char store[256], err[256];
	int dash;

	(void)state;
	assert_int_equal(sandbox_argv(&o, "/t/tree", prog, argv, 160, store,
				      sizeof(store), err, sizeof(err)), 0);
	assert_string_equal(argv[0], "bwrap");
	assert_true(find(argv, "--unshare-all") > 0);
	assert_int_equal(find(argv, "--share-net"), -1);
	assert_true(find(argv, "--die-with-parent") > 0);
	assert_true(find(argv, "--new-session") > 0);
	/* The system call filter, on the descriptor build_run gives it. */
	assert_true(find(argv, "--seccomp") > 0);
	assert_string_equal(argv[find(argv, "--seccomp") + 1],
			    SANDBOX_SECCOMP_FD_STR);
	/* The tree read-only, and its build/ writable over it. */
	assert_true(find(argv, "/t/tree") > 0 &&
		    strcmp(argv[find(argv, "/t/tree") - 1], "--ro-bind") == 0);
	assert_true(find(argv, "/t/tree/build") > find(argv, "/t/tree"));
	assert_string_equal(argv[find(argv, "/t/tree/build") - 1], "--bind");
	/* Then the limits, then the program as given. */
	dash = find(argv, "prlimit");
	assert_true(dash > 0);
	assert_true(find(argv, "--as=104857600") > dash);
	assert_true(find(argv, "--fsize=7340032") > dash);
	assert_true(find(argv, "--core=0") > dash);
	assert_string_equal(argv[find(argv, "make") + 2], "tinyconfig");
	assert_null(argv[find(argv, "make") + 3]);

	/* git's fetch: the network, nothing else changes. */
	sb.network = 1;
	assert_int_equal(sandbox_argv(&o, NULL, prog, argv, 160, store,
				      sizeof(store), err, sizeof(err)), 0);
	assert_true(find(argv, "--share-net") > 0);
	assert_int_equal(find(argv, "--chdir"), -1);

	/* [build] sandbox = none: only the limits. */
	o.no_sandbox = 1;
	assert_int_equal(sandbox_argv(&o, NULL, prog, argv, 160, store,
				      sizeof(store), err, sizeof(err)), 0);
	assert_string_equal(argv[0], "prlimit");
	assert_int_equal(find(argv, "--seccomp"), -1);

	/* Too long a command line is an error, not a truncated sandbox. */
	assert_int_equal(sandbox_argv(&o, NULL, prog, argv, 6, store,
				      sizeof(store), err, sizeof(err)), -1);
	assert_true(strstr(err, "too long") != NULL);
}

/* The filter bwrap loads: BPF instructions (8 bytes each), the same for
 * every call, each on a descriptor of its own above 9. */
static void test_seccomp_filter(void **state)
{
	char err[256], a[65536], b[65536];
	int fd1 = sandbox_seccomp_fd(err, sizeof(err));
	int fd2 = sandbox_seccomp_fd(err, sizeof(err));
	ssize_t n1, n2;

	(void)state;
	assert_true(fd1 > 9);
	assert_true(fd2 > 9 && fd2 != fd1);
	n1 = read(fd1, a, sizeof(a));
	n2 = read(fd2, b, sizeof(b));
	assert_true(n1 >= 8 * 40);	/* a rule per refused call at least */
	assert_int_equal(n1 % 8, 0);
	assert_int_equal(n1, n2);
	assert_memory_equal(a, b, (size_t)n1);
	close(fd1);
	close(fd2);
}

/* Every hop of a redirect chain is judged as the first URL was: the
 * refusal names both URLs; an http:// hop whose https:// twin is allowed
 * is upgraded as a first URL would be; not http(s), no Location, a sixth
 * hop and a huge Location are refused whatever the origins. */
static void test_redirect_hops(void **state)
{
	static const struct {
		const char *from, *to;
		int hop;
		const char *want;	/* the URL requested next, or NULL */
		const char *in_err;
	} cases[] = {
		{ "https://cdn.kernel.org/pub/linux/kernel/v6.x/linux-6.1.tar.xz",
		  "https://www.kernel.org/pub/linux/kernel/v6.x/linux-6.1.tar.xz", 1,
		  "https://www.kernel.org/pub/linux/kernel/v6.x/linux-6.1.tar.xz", NULL },
		{ "https://cdn.kernel.org/pub/linux/kernel/v6.x/linux-6.1.tar.xz",
		  "http://www.kernel.org/pub/linux/kernel/v6.x/linux-6.1.tar.xz", 2,
		  "https://www.kernel.org/pub/linux/kernel/v6.x/linux-6.1.tar.xz", NULL },
		{ "https://cdn.kernel.org/pub/linux/kernel/r/X",
		  "https://cdn.kernel.org/outside/X", 1, NULL,
		  "redirect from https://cdn.kernel.org/pub/linux/kernel/r/X to"
		  " https://cdn.kernel.org/outside/X refused" },
		{ "https://cdn.kernel.org/pub/linux/kernel/X",
		  "https://cdn.kernel.org.evil.example/pub/linux/kernel/X", 1, NULL,
		  "not under an allowed origin" },
		{ "https://cdn.kernel.org/pub/linux/kernel/X",
		  "https://cdn.kernel.org/pub/linux/kernel/../../../etc/X", 1, NULL,
		  "not a plain URL" },
		{ "https://cdn.kernel.org/pub/linux/kernel/X",
		  "file:///var/lib/rcgate/rcgate.db", 1, NULL,
		  "not an http or https URL" },
		{ "https://cdn.kernel.org/pub/linux/kernel/X",
		  "ftp://cdn.kernel.org/pub/linux/kernel/X", 1, NULL,
		  "not an http or https URL" },
		{ "https://cdn.kernel.org/pub/linux/kernel/X", NULL, 1, NULL,
		  "without a Location" },
		{ "https://cdn.kernel.org/pub/linux/kernel/X",
		  "https://cdn.kernel.org/pub/linux/kernel/Y", 6, NULL,
		  "more than 5 redirects" },
	};
	const struct fetch_scope scope = { origin_pin_file, (void *)FILES };
	char out[2048], err[1024], huge[3000];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		err[0] = '\0';
		rc = fetch_redirect_check(cases[i].from, cases[i].to,
					  cases[i].hop, &scope, out,
					  sizeof(out), err, sizeof(err));
		if (cases[i].want != NULL) {
			assert_int_equal(rc, 0);
			assert_string_equal(out, cases[i].want);
		} else {
			assert_int_equal(rc, -1);
			if (strstr(err, cases[i].in_err) == NULL)
				fail_msg("case %zu: '%s' lacks '%s'", i, err,
					 cases[i].in_err);
		}
	}
	/* No scope: any http(s) hop (allow_networks still judges the
	 * connection), never another scheme. */
	assert_int_equal(fetch_redirect_check("https://a.example/x",
		"http://b.example/y", 1, NULL, out, sizeof(out), err,
		sizeof(err)), 0);
	assert_string_equal(out, "http://b.example/y");
	assert_int_equal(fetch_redirect_check("https://a.example/x",
		"file:///etc/shadow", 1, NULL, out, sizeof(out), err,
		sizeof(err)), -1);
	memset(huge, 'a', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	memcpy(huge, "https://cdn.kernel.org/pub/linux/kernel/", 40);
	assert_int_equal(fetch_redirect_check("https://a.example/x", huge, 1,
		&scope, out, sizeof(out), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "refused"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pin_table),
		cmocka_unit_test(test_origin_host),
		cmocka_unit_test(test_redirect_hops),
		cmocka_unit_test(test_sandbox_argv),
		cmocka_unit_test(test_seccomp_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
