/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for cgroup.c's reading of where rcgated's cgroup v2 is: the
 * "0::" line of /proc/self/cgroup under the cgroup2 mount of
 * /proc/self/mountinfo, on a systemd service (pure v2), a hybrid host (v2
 * beside v1, as this test machine), inside a cgroup namespace, and the
 * root or no v2 at all (never taken over). Where this test may make a
 * cgroup (root, a cgroup v2 of its own), build_run's programs start in
 * the build's cgroup (clone3), sandboxed or not, and closing it kills
 * what a build left running there; else that test is skipped. The limits
 * and rcgated's own cgroup are tests/integration/jobserver.sh's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "store/store.h"
#include "build/build.h"

#define MI_V2 "24 1 0:22 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"
#define MI_HYBRID \
	"30 25 0:26 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" \
	"31 30 0:27 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n" \
	"32 30 0:28 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
#define MI_NS "40 39 0:22 /system.slice/rcgated.service /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n"

static void test_where(void **state)
{
	static const struct {
		const char *self, *mountinfo, *want;
		int rc;
	} cases[] = {
		{ "0::/system.slice/rcgated.service\n", MI_V2,
		  "/sys/fs/cgroup/system.slice/rcgated.service", 0 },
		{ "4:pids:/\n1:name=systemd:/user.slice\n0::/user.slice/t\n",
		  MI_HYBRID, "/sys/fs/cgroup/unified/user.slice/t", 0 },
		{ "0::/system.slice/rcgated.service/daemon\n", MI_NS,
		  "/sys/fs/cgroup/daemon", 0 },
		{ "0::/\n", MI_V2, "/sys/fs/cgroup", 1 },
		{ "0::/system.slice/rcgated.service\n", MI_NS, "/sys/fs/cgroup", 1 },
		{ "0::/x\n", MI_HYBRID "33 30 0:29 / /mnt rw - ext4 /dev/sda rw\n",
		  "/sys/fs/cgroup/unified/x", 0 },
		{ "4:pids:/\n", MI_HYBRID, NULL, -1 },		/* no v2 line */
		{ "0::/x\n", "32 30 0:28 / /sys/fs/cgroup/pids rw - cgroup cgroup rw\n",
		  NULL, -1 },					/* no v2 mount */
		{ "0::/elsewhere\n", MI_NS, NULL, -1 },		/* outside its ns */
		{ "0::\n", MI_V2, NULL, -1 },
		{ "", "", NULL, -1 },
	};
	char out[PATH_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = cgroup_parse(cases[i].self, cases[i].mountinfo, out,
				      sizeof(out));

		if (rc != cases[i].rc)
			print_error("case %zu: %d\n", i, rc);
		assert_int_equal(rc, cases[i].rc);
		if (cases[i].want != NULL)
			assert_string_equal(out, cases[i].want);
	}
	/* Too long for out: refused, not cut. */
	assert_int_equal(cgroup_parse("0::/system.slice/rcgated.service\n",
				      MI_V2, out, 20), -1);
}

/* This machine's own files: some answer, never a crash. */
static void test_this_machine(void **state)
{
	char *self = file_read("/proc/self/cgroup", 1 << 16, NULL, NULL, 0);
	char *mi = file_read("/proc/self/mountinfo", 1 << 20, NULL, NULL, 0);
	char out[PATH_MAX];
	int rc;

	(void)state;
	assert_non_null(self);
	assert_non_null(mi);
	rc = cgroup_parse(self, mi, out, sizeof(out));
	assert_true(rc >= -1 && rc <= 1);
	if (rc >= 0)
		assert_true(out[0] == '/');
	free(self);
	free(mi);
}

/* What cmd (sh -c) printed, run by build_run in c's cgroup. */
static int run_in(struct build_cgroup *c, const char *cmd, int sandboxed,
		  const char *dir, char *out, size_t len)
{
	struct sandbox sb = { { NULL }, { dir }, 0, 0, NULL };
	struct build_options o = { .root = dir, .timeout = 30, .sandbox = &sb,
				   .no_sandbox = !sandboxed, .cgroup = c };
	const char *argv[] = { "sh", "-c", cmd, NULL };
	char path[PATH_MAX + 8], logp[PATH_MAX], err[256];
	char *env[] = { path, NULL }, *text;
	int fd, st;

	snprintf(path, sizeof(path), "PATH=%s", getenv("PATH"));
	snprintf(logp, sizeof(logp), "%s/log", dir);
	fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	st = build_run(argv, NULL, env, fd, &o, now_monotonic() + 30, err,
		       sizeof(err));
	close(fd);
	if (st != 0)
		print_error("%s: %d %s\n", cmd, st, err);
	text = file_read(logp, 65536, NULL, NULL, 0);
	snprintf(out, len, "%s", text != NULL ? text : "");
	free(text);
	return st;
}

static void test_programs_start_in_the_build_cgroup(void **state)
{
	char *self = file_read("/proc/self/cgroup", 1 << 16, NULL, NULL, 0);
	char *mi = file_read("/proc/self/mountinfo", 1 << 20, NULL, NULL, 0);
	char own[PATH_MAX], tmp[] = "/tmp/rcgate-cgroup.XXXXXX", out[4096];
	char want[PATH_MAX + 64];
	struct build_cgroup c = { -1, 0, "" };
	int rc = self != NULL && mi != NULL
		 ? cgroup_parse(self, mi, own, sizeof(own)) : -1;

	(void)state;
	free(self);
	free(mi);
	if (rc < 0 || geteuid() != 0 || access(own, W_OK) != 0) {
		print_message("SKIP: needs root and a writable cgroup v2"
			      " directory of its own\n");
		skip();
	}
	if (pathf(c.dir, sizeof(c.dir), "%s/rcgate-unit.%ld", own,
		  (long)getpid()) < 0)
		fail();
	assert_int_equal(mkdir(c.dir, 0755), 0);
	c.fd = open(c.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(c.fd >= 0);
	assert_non_null(mkdtemp(tmp));
	chmod(tmp, 0755);
	/* Unsandboxed, /proc/self/cgroup names it from the top. */
	assert_int_equal(run_in(&c, "cat /proc/self/cgroup", 0, tmp, out,
				sizeof(out)), 0);
	snprintf(want, sizeof(want), "/rcgate-unit.%ld\n", (long)getpid());
	assert_non_null(strstr(out, "0::/"));
	assert_non_null(strstr(out, want));
	/* In bubblewrap (its own cgroup namespace, rooted there; the
	 * seccomp descriptor where bwrap reads it). */
	assert_int_equal(run_in(&c, "cat /proc/self/cgroup", 1, tmp, out,
				sizeof(out)), 0);
	assert_non_null(strstr(out, "0::/\n"));
	/* A process left behind is killed with the cgroup. */
	assert_int_equal(run_in(&c, "setsid sleep 60 </dev/null >/dev/null 2>&1 &",
				0, tmp, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/cgroup.procs", c.dir);
	{
		char *procs = file_read(want, 4096, NULL, NULL, 0);

		assert_non_null(procs);
		assert_true(procs[0] != '\0');	/* the sleep */
		free(procs);
	}
	cgroup_build_close(&c);
	assert_int_equal(c.fd, -1);
	assert_int_equal(access(c.dir, F_OK), -1);
	rm_rf(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_where),
		cmocka_unit_test(test_this_machine),
		cmocka_unit_test(test_programs_start_in_the_build_cgroup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
