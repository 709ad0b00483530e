/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * testutil.c - the golden-file reader and the command runner the unit
 * tests used to copy; see testutil.h.
 */
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

void test_data_path(char *path, size_t size, const char *dir,
		    const char *name)
{
	const char *src = getenv("RCGATE_SRCDIR");
	int n = snprintf(path, size, "%s/tests/data/%s/%s",
			 src != NULL && src[0] != '\0' ? src : ".", dir, name);

	if (n < 0 || (size_t)n >= size)
		fail_msg("path of tests/data/%s/%s too long", dir, name);
}

char *test_file_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (f == NULL)
		fail_msg("cannot open %s (set RCGATE_SRCDIR)", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len != NULL)
		*len = (size_t)n;
	return buf;
}

char *test_data_read(const char *dir, const char *name, size_t *len)
{
	char path[4096];

	test_data_path(path, sizeof(path), dir, name);
	return test_file_read(path, len);
}

void test_run(const char *const argv[])
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

void test_git_rev(const char *gitdir, const char *ref, char out[41])
{
	char cmd[PATH_MAX + 128];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "git --git-dir=%s rev-parse %s", gitdir, ref);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(out, 41, p));
	pclose(p);
}
