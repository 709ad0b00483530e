/* SPDX-License-Identifier: GPL-2.0-only */
/* prereq.c: what a diff touches, how a commit relates to a culprit, and
 * the search itself on two small real git trees (an upstream with a base
 * tag and six commits, a stable branch with three backports: one named by its "commit X
 * upstream." line but changed on the way, one cherry-picked as is). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "build/build.h"
#include "review/review.h"

static int has(char set[][PREREQ_NAME], size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(set[i], s) == 0)
			return 1;
	return 0;
}

#define HAS(sig, field, s) has((sig)->field, (sig)->n##field, s)

/* As git show -W prints it: each hunk holds whole functions, and its
 * header names the function before it (here "previous", not changed). */
static const char culprit_diff[] =
	"diff --git a/fs/iomap/direct-io.c b/fs/iomap/direct-io.c\n"
	"index 1111111..2222222 100644\n"
	"--- a/fs/iomap/direct-io.c\n"
	"+++ b/fs/iomap/direct-io.c\n"
	"@@ -80,20 +80,19 @@ int previous(void)\n"
	" ssize_t iomap_dio_complete(struct iomap_dio *dio)\n"
	" {\n"
	" \tif (dops && dops->end_io)\n"
	" \t\tret = dops->end_io(iocb, dio->size, ret, dio->flags);\n"
	"-\tif (ret > 0) {\n"
	"-\t\tiocb->ki_pos += ret;\n"
	"+\t/* a comment naming fake_call(x) and ->fake_member */\n"
	"+\tif (ret > 0 && (dio->flags & IOMAP_DIO_NEED_SYNC))\n"
	"+\t\tret = generic_write_sync(iocb, ret);\n"
	"+\tpr_err(\"not_a_call(%d)\", ret);\n"
	"+\tiocb->ki_pos += ret;\n"
	"+\tkfree(dio);\n"
	" \treturn ret;\n"
	" }\n"
	"@@ -200,2 +199,3 @@ static int other(void)\n"
	"+static void iomap_dio_new_helper(struct kiocb *iocb, long n)\n";

static void test_scan(void **state)
{
	struct prereq_sig *s = malloc(sizeof(*s)), *t = malloc(sizeof(*t));
	/* The same change at other lines, with other whitespace and
	 * another context. */
	static const char moved[] =
		"diff --git a/fs/iomap/direct-io.c b/fs/iomap/direct-io.c\n"
		"@@ -180,9 +180,8 @@ int previous(void)\n"
		" ssize_t iomap_dio_complete(struct iomap_dio *dio)\n"
		"-    if (ret > 0) {\n"
		"-\t\tiocb->ki_pos  +=  ret;\n"
		"+\t/* a comment naming fake_call(x) and ->fake_member */\n"
		"+\tif (ret > 0 && (dio->flags & IOMAP_DIO_NEED_SYNC))\n"
		"+\t\tret = generic_write_sync(iocb, ret);\n"
		"+\tpr_err(\"not_a_call(%d)\", ret);\n"
		"+\tiocb->ki_pos += ret;\n"
		"+\tkfree(dio);\n"
		"@@ -300,2 +299,3 @@ static int other(void)\n"
		"+static void iomap_dio_new_helper(struct kiocb *iocb, long n)\n";

	(void)state;
	prereq_scan(culprit_diff, strlen(culprit_diff), s);
	assert_int_equal(s->nfiles, 1);
	assert_string_equal(s->files[0], "fs/iomap/direct-io.c");
	/* the functions its hunks hold, and the one whose definition it
	 * adds; not the hunk headers' */
	assert_true(HAS(s, funcs, "iomap_dio_complete"));
	assert_true(HAS(s, funcs, "iomap_dio_new_helper"));
	assert_false(HAS(s, funcs, "previous"));
	assert_false(HAS(s, funcs, "other"));
	assert_true(HAS(s, calls, "generic_write_sync"));
	assert_true(HAS(s, members, "ki_pos"));
	/* what the code calls through a member, context included */
	assert_true(HAS(s, indirect, "end_io"));
	assert_false(HAS(s, members, "end_io"));	/* context: not changed */
	/* not from comments or strings, not the commonest helpers */
	assert_false(HAS(s, calls, "fake_call"));
	assert_false(HAS(s, members, "fake_member"));
	assert_false(HAS(s, calls, "not_a_call"));
	assert_false(HAS(s, calls, "kfree"));
	assert_false(HAS(s, calls, "pr_err"));
	assert_false(HAS(s, members, "flags"));
	assert_false(HAS(s, calls, "iomap_dio_new_helper"));
	assert_int_equal(strlen(s->fingerprint), 64);
	/* a patch-id: line numbers, whitespace and context do not count ... */
	prereq_scan(moved, strlen(moved), t);
	assert_string_equal(s->fingerprint, t->fingerprint);
	/* ... the code does */
	{
		char other[sizeof(moved)];

		memcpy(other, moved, sizeof(moved));
		*strstr(other, "+= ret") = '-';
		prereq_scan(other, strlen(other), t);
		assert_string_not_equal(s->fingerprint, t->fingerprint);
	}
	/* no changed line: no fingerprint */
	prereq_scan("diff --git a/x b/x\n", 19, t);
	assert_string_equal(t->fingerprint, "");
	assert_int_equal(t->nfiles, 1);
	/* truncated input does not crash, and keeps what it read */
	prereq_scan(culprit_diff, 200, t);
	assert_int_equal(t->nfiles, 1);
	free(s);
	free(t);
}

static void test_score(void **state)
{
	struct prereq_sig *k = malloc(sizeof(*k)), *c = malloc(sizeof(*c));
	char why[600];
	static const char changes_callee[] =
		"diff --git a/include/linux/fs.h b/include/linux/fs.h\n"
		"@@ -2970,8 +2970,8 @@ extern int vfs_fsync(struct file *file, int datasync);\n"
		" static inline ssize_t generic_write_sync(struct kiocb *iocb, ssize_t count)\n"
		" {\n"
		"-\t\tint ret = vfs_fsync_range(iocb->ki_filp,\n"
		"+\t\tint ret = vfs_fsync_range(iocb->ki_filp, /* x */\n"
		" }\n";
	static const char same_function[] =
		"diff --git a/fs/iomap/direct-io.c b/fs/iomap/direct-io.c\n"
		"@@ -80,5 +80,5 @@\n"
		" ssize_t iomap_dio_complete(struct iomap_dio *dio)\n"
		" {\n"
		"-\tloff_t offset = iocb->ki_pos;\n"
		"+\tloff_t offset = iocb->ki_pos; /* where it began */\n"
		" }\n";
	static const char caller[] =
		"diff --git a/fs/xfs/xfs_file.c b/fs/xfs/xfs_file.c\n"
		"@@ -10,4 +10,4 @@\n"
		" static int xfs_dio_write(struct kiocb *iocb)\n"
		" {\n"
		"-\treturn 0;\n"
		"+\treturn iomap_dio_complete(dio);\n"
		" }\n";
	static const char calls_the_operation[] =
		"diff --git a/fs/direct-io.c b/fs/direct-io.c\n"
		"@@ -10,5 +10,5 @@\n"
		" static ssize_t dio_complete(struct dio *dio, ssize_t ret)\n"
		" {\n"
		" \t\terr = dio->end_io(dio->iocb, offset, ret, dio->private);\n"
		"-\tret = 0;\n"
		"+\tret = 1;\n"
		" }\n";
	static const char unrelated[] =
		"diff --git a/fs/ext4/super.c b/fs/ext4/super.c\n"
		"@@ -10,4 +10,4 @@\n"
		" static int ext4_fill_super(struct super_block *sb)\n"
		"-\tsb->s_flags = 0;\n"
		"+\tsb->s_flags = 1;\n";

	(void)state;
	prereq_scan(culprit_diff, strlen(culprit_diff), k);
	prereq_scan(changes_callee, strlen(changes_callee), c);
	assert_int_equal(prereq_score(k, c, why, sizeof(why)), 4);
	assert_string_equal(why, "changes generic_write_sync(), which the culprit calls");
	prereq_scan(same_function, strlen(same_function), c);
	assert_int_equal(prereq_score(k, c, why, sizeof(why)), 3 + 3 + 1);
	assert_non_null(strstr(why, "changes iomap_dio_complete(), as the culprit does"));
	assert_non_null(strstr(why, "touches fs/iomap/direct-io.c"));
	assert_non_null(strstr(why, "uses ->ki_pos as the culprit does"));
	prereq_scan(caller, strlen(caller), c);
	assert_int_equal(prereq_score(k, c, why, sizeof(why)), 2);
	assert_string_equal(why, "calls iomap_dio_complete(), which the culprit changes");
	/* the culprit implements ->end_io (the search fills that in) */
	prereq_scan(calls_the_operation, strlen(calls_the_operation), c);
	assert_int_equal(prereq_score(k, c, why, sizeof(why)), 0);
	snprintf(k->impl_member[0], PREREQ_NAME, "end_io");
	snprintf(k->impl_func[0], PREREQ_NAME, "ext4_dio_write_end_io");
	k->nimpl = 1;
	assert_int_equal(prereq_score(k, c, why, sizeof(why)), 4);
	assert_string_equal(why, "changes code that calls ->end_io(), which the"
			    " culprit's ext4_dio_write_end_io() implements");
	prereq_scan(unrelated, strlen(unrelated), c);
	assert_int_equal(prereq_score(k, c, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	/* a tiny buffer truncates the words, not the score */
	prereq_scan(same_function, strlen(same_function), c);
	assert_int_equal(prereq_score(k, c, why, 8), 7);
	free(k);
	free(c);
}

/* ---- the search on real git trees ---- */

static char dir[64];

static void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static char *out(const char *fmt, ...)
{
	static char buf[128];
	char cmd[1024];
	va_list ap;
	FILE *p;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	assert_non_null(p);
	buf[0] = '\0';
	assert_non_null(fgets(buf, sizeof(buf), p));
	pclose(p);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void put(const char *repo, const char *path, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s/%s", dir, repo, path);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Replaces old by new in repo/path and commits with message. */
static void edit(const char *repo, const char *path, const char *old,
		 const char *new, const char *message, char id[41])
{
	char p[256], buf[4096], res[4096], *at;
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "%s/%s/%s", dir, repo, path);
	f = fopen(p, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	at = strstr(buf, old);
	assert_non_null(at);
	snprintf(res, sizeof(res), "%.*s%s%s", (int)(at - buf), buf, new,
		 at + strlen(old));
	put(repo, path, res);
	f = fopen("/tmp/.prereq-msg", "w");
	fputs(message, f);
	fclose(f);
	sh("git -C %s/%s commit -qa -F /tmp/.prereq-msg", dir, repo);
	snprintf(id, 41, "%s", out("git -C %s/%s rev-parse HEAD", dir, repo));
}

static const char dio_c[] =
	"#include \"fs.h\"\n"
	"\n"
	"/*\n"
	" * Private flags.\n"
	" */\n"
	"#define DIO_SYNC 1\n"
	"\n"
	"ssize_t dio_complete(struct dio *dio)\n"
	"{\n"
	"\tstruct kiocb *iocb = dio->iocb;\n"
	"\tloff_t offset = iocb->ki_pos;\n"
	"\tssize_t ret = dio->error;\n"
	"\n"
	"\tif (dio->dops && dio->dops->end_io)\n"
	"\t\tret = dio->dops->end_io(iocb, ret);\n"
	"\tif (ret > 0) {\n"
	"\t\tiocb->ki_pos += ret;\n"
	"\t\tif (dio->flags & DIO_SYNC)\n"
	"\t\t\tret = write_sync(iocb, ret);\n"
	"\t}\n"
	"\treturn ret;\n"
	"}\n";

static const char fs_h[] =
	"static inline long write_sync(struct kiocb *iocb, long count)\n"
	"{\n"
	"\tif (iocb->ki_flags)\n"
	"\t\treturn sync_range(iocb->ki_filp, count);\n"
	"\treturn count;\n"
	"}\n";

static void test_search(void **state)
{
	char m1[41], m2[41], m3[41], m4[41], m5[41], u[41], u2[41], h[41],
		bad[41], bad2[41],
		msg[600], root[128], updir[128], stdir[128], body[200];
	struct build_options o = { 0 };
	json_t *list = NULL;
	const char *fix_old = "\tif (ret > 0) {\n\t\tiocb->ki_pos += ret;\n"
			      "\t\tif (dio->flags & DIO_SYNC)\n"
			      "\t\t\tret = write_sync(iocb, ret);\n\t}\n";
	const char *fix_new = "\tif (ret > 0 && (dio->flags & DIO_SYNC))\n"
			      "\t\tret = write_sync(iocb, ret);\n"
			      "\tif (ret > 0)\n\t\tiocb->ki_pos += ret;\n";

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/rcgate-prereq.XXXXXX");
	assert_non_null(mkdtemp(dir));
	setenv("GIT_AUTHOR_NAME", "T", 1);
	setenv("GIT_AUTHOR_EMAIL", "t@example.org", 1);
	setenv("GIT_COMMITTER_NAME", "T", 1);
	setenv("GIT_COMMITTER_EMAIL", "t@example.org", 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
	/* upstream: v6.1, then m1..m5 and the culprit's upstream u */
	sh("git init -q -b master %s/up && mkdir -p %s/up/fs/iomap %s/up/fs/ext4"
	   " %s/up/include", dir, dir, dir, dir);
	put("up", "fs/iomap/dio.c", dio_c);
	put("up", "include/fs.h", fs_h);
	put("up", "fs/ext4/super.c", "int ext4_fill_super(void)\n{\n\treturn 0;\n}\n");
	put("up", "fs/ext4/file.c", "static int ext4_end_io(struct kiocb *iocb, long size)\n"
	    "{\n\treturn 0;\n}\n\nstatic const struct dio_ops ext4_dio_ops = {\n"
	    "\t.end_io = ext4_end_io,\n};\n");
	sh("git -C %s/up add -A && git -C %s/up commit -qm 'Linux 6.1' &&"
	   " git -C %s/up tag v6.1", dir, dir, dir);
	edit("up", "fs/iomap/dio.c", "offset = iocb->ki_pos;",
	     "offset = iocb->ki_pos;\t/* where it began */",
	     "iomap: say where the I/O began", m1);
	edit("up", "fs/ext4/super.c", "return 0;", "return 1;", "ext4: unrelated", m2);
	edit("up", "fs/iomap/dio.c", " * Private flags.", " * Private flags (m3).",
	     "iomap: name the flags", m3);
	edit("up", "include/fs.h", "count);\n\treturn count;",
	     "count);\t/* m4 */\n\treturn count;", "fs: comment write_sync", m4);
	edit("up", "fs/iomap/dio.c", "#define DIO_SYNC 1", "#define DIO_SYNC 1\t/* m5 */",
	     "iomap: comment DIO_SYNC", m5);
	edit("up", "fs/iomap/dio.c", fix_old, fix_new, "iomap: sync before ki_pos", u);
	edit("up", "fs/ext4/file.c", "return 0;", "return size;", "ext4: end_io says the size", u2);
	/* stable: the base, m3 backported with its line, m5 cherry-picked
	 * without one, and the culprit (u's change) */
	sh("git clone -q %s/up %s/st && git -C %s/st reset -q --hard v6.1 &&"
	   " git -C %s/st remote remove origin", dir, dir, dir, dir);
	snprintf(body, sizeof(body), "iomap: name the flags\n\ncommit %s upstream.\n", m3);
	/* (adapted on the way: not the same patch-id, but it says so) */
	edit("st", "fs/iomap/dio.c", " * Private flags.", " * Private flags (m3'').",
	     body, h);
	edit("st", "fs/iomap/dio.c", "#define DIO_SYNC 1", "#define DIO_SYNC 1\t/* m5 */",
	     "iomap: comment DIO_SYNC", h);
	snprintf(body, sizeof(body), "iomap: sync before ki_pos\n\ncommit %s upstream.\n", u);
	edit("st", "fs/iomap/dio.c", fix_old, fix_new, body, bad);
	snprintf(body, sizeof(body), "ext4: end_io says the size\n\ncommit %s upstream.\n", u2);
	edit("st", "fs/ext4/file.c", "return 0;", "return size;", body, bad2);

	snprintf(root, sizeof(root), "%s", dir);
	snprintf(updir, sizeof(updir), "%s/up/.git", dir);
	snprintf(stdir, sizeof(stdir), "%s/st/.git", dir);
	o.root = root;
	assert_int_equal(prereq_search(updir, stdir, bad, u, "6.1", bad, &o, &list,
				       msg, sizeof(msg)), 0);
	/* m1 (same function, same file) before m4 (changes what the
	 * culprit calls); m2 unrelated; m3 and m5 the branch has */
	assert_int_equal(json_array_size(list), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0),
			    "commit")), m1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 0),
			 "score")), 6);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0),
			    "why")), "changes dio_complete(), as the culprit does;"
			    " touches fs/iomap/dio.c");
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 1),
			    "commit")), m4);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 1),
			    "why")), "changes write_sync(), which the culprit calls");
	assert_non_null(strstr(msg, "2 the branch already has; 2 listed"));
	json_decref(list);
	(void)m2;

	/* A culprit that implements an operation (.end_io = ext4_end_io):
	 * m1 changes code that calls ->end_io(); u does too, but the
	 * branch has it (by its line); m3 and m5 touch that file elsewhere. */
	assert_int_equal(prereq_search(updir, stdir, bad2, u2, "6.1", bad2, &o, &list,
				       msg, sizeof(msg)), 0);
	assert_int_equal(json_array_size(list), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0),
			    "commit")), m1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0),
			    "why")), "changes code that calls ->end_io(), which the"
			    " culprit's ext4_end_io() implements");
	json_decref(list);

	/* the culprit's upstream commit is not in the tree */
	assert_int_equal(prereq_search(updir, stdir, bad, bad, "6.1", bad, &o, &list,
				       msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "has no commit"));
	/* the branch's base release is not tagged upstream */
	assert_int_equal(prereq_search(updir, stdir, bad, u, "6.6", bad, &o, &list,
				       msg, sizeof(msg)), -1);
	assert_string_equal(msg, "the upstream tree has no tag v6.6 (the branch's"
			    " base release)");
	sh("rm -rf %s /tmp/.prereq-msg", dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan),
		cmocka_unit_test(test_score),
		cmocka_unit_test(test_search),
	};
	return cmocka_run_group_tests_name("prereq", tests, NULL, NULL);
}
