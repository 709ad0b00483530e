/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/review/bisect_tree.c and the posted rc's side of
 * bisect.c: the tree an announcement names is untrusted text, so a forged
 * X-KernelTest-Tree (a file:// URL, a host outside [build] tree_origins,
 * an address outside [fetch] allow_networks, a branch that is an option)
 * is refused with its reason in the bisection row, and nothing is fetched
 * (no clone, no log, not even the build directory). A step of a posted
 * rc's bisection is claimed as a git job of the bisection's tree, with
 * nothing of the CI artifact (a real store).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "base/base.h"
#include "build/build.h"
#include "store/store.h"
#include "review/review.h"
#include "testutil_store.h"

#define STABLE_RC "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git"

static void test_check(void **state)
{
	struct config cfg;
	char url[2100], branch[128], why[1024], big[2600];
	static const struct {
		const char *tree, *refused;	/* NULL: accepted */
	} cases[] = {
		{ STABLE_RC " linux-6.1.y", NULL },
		{ "file:///srv/git/linux-stable-rc.git linux-6.1.y",
		  "must be git://, http:// or https://" },
		{ "https://evil.example/linux-stable-rc.git linux-6.1.y",
		  "is not under an allowed origin" },
		{ "https://git.kernel.org.evil.example/pub/scm/linux/kernel/git/"
		  "stable/linux-stable-rc.git linux-6.1.y",
		  "is not under an allowed origin" },
		{ "https://git.kernel.org/pub/scm/linux/kernel/git/stable/"
		  "linux-stable-rc.git/../../../x.git linux-6.1.y",
		  "is not a plain URL" },
		{ "https://me@git.kernel.org/pub/scm/linux/kernel/git/stable/"
		  "linux-stable-rc.git linux-6.1.y", "host (without user" },
		{ STABLE_RC " --upload-pack=touch", "is not a plain branch name" },
		{ STABLE_RC " linux-6.1.y/../../x", "is not a plain branch name" },
		{ STABLE_RC " linux-6.1.y;id", "is not a plain branch name" },
		{ STABLE_RC, "but no branch" },
		{ "", "names no git tree" },
	};

	(void)state;
	config_defaults(&cfg);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = bisect_tree_check(&cfg, cases[i].tree, url, sizeof(url),
					   branch, sizeof(branch), why,
					   sizeof(why));

		if (cases[i].refused == NULL) {
			assert_int_equal(rc, 0);
			assert_string_equal(url, STABLE_RC);
			assert_string_equal(branch, "linux-6.1.y");
			continue;
		}
		assert_int_equal(rc, -1);
		if (strstr(why, cases[i].refused) == NULL)
			fail_msg("%s: %s (wanted '%s')", cases[i].tree, why,
				 cases[i].refused);
	}
	/* git:// is the https:// twin's, when that is allowed. */
	assert_int_equal(bisect_tree_check(&cfg, "git://git.kernel.org/pub/scm/"
		"linux/kernel/git/stable/linux-stable-rc.git linux-6.6.y", url,
		sizeof(url), branch, sizeof(branch), why, sizeof(why)), 0);
	assert_string_equal(url, STABLE_RC);
	/* Capped: a URL longer than any git URL rcgated takes. */
	memset(big, 'a', sizeof(big));
	memcpy(big, STABLE_RC, strlen(STABLE_RC));
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(bisect_tree_check(&cfg, big, url, sizeof(url), branch,
					   sizeof(branch), why, sizeof(why)), -1);
	config_free(&cfg);
}

/* The bisection row of release version: its state and message. */
static void bisection_of(struct test_engine *f, const char *version,
			 char *state, size_t slen, char *msg, size_t mlen)
{
	sqlite3 *raw;
	sqlite3_stmt *q;

	assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(raw, "SELECT b.state, b.message FROM"
		" bisection b JOIN release r ON r.id = b.release_id WHERE"
		" r.version = ?", -1, &q, NULL), SQLITE_OK);
	sqlite3_bind_text(q, 1, version, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	snprintf(state, slen, "%s", (const char *)sqlite3_column_text(q, 0));
	snprintf(msg, mlen, "%s", (const char *)sqlite3_column_text(q, 1));
	sqlite3_finalize(q);
	sqlite3_close(raw);
}

/* A posted rc with a confirmed regression whose announcement named tree
 * and branch: its job is done, regression id reg. */
static void posted_rc(struct test_engine *f, const char *version,
		      const char *tree, const char *branch, int reg)
{
	static const struct result_row fail = { "ext4.write_seq_4096", "fail",
						"data mismatch", 10, 1 };
	char text[1024];

	test_engine_add_release(f, version);
	test_engine_finish_next(f, version, &fail, 1);
	snprintf(text, sizeof(text),
		 "UPDATE release SET git_tree = '%s', git_branch = '%s'"
		 " WHERE version = '%s';"
		 "INSERT INTO regression (id, signature, test, target, fs, state,"
		 " first_seen, updated) VALUES (%d, 's%d', 'ext4.write_seq_4096',"
		 " 'x86_64', 'ext4', 'confirmed', 'x', 'x');"
		 "INSERT INTO occurrence (regression_id, release_id, job_id, runs,"
		 " fails, seen) SELECT %d, j.release_id, j.id, 2, 2, 'x' FROM job j"
		 " JOIN release r ON r.id = j.release_id WHERE r.version = '%s';",
		 tree, branch, version, reg, reg, reg, version);
	test_engine_sql(f, text);
}

static void test_forged_tree_is_refused_unfetched(void **state)
{
	struct test_engine *f = test_engine_new("https://rcgate.example");
	static const struct {
		const char *version, *tree, *branch, *refused;
	} cases[] = {
		{ "6.1.64-rc1", "file:///srv/git/linux-stable-rc.git",
		  "linux-6.1.y", "must be git://, http:// or https://" },
		{ "6.1.65-rc1", "https://evil.example/linux-stable-rc.git",
		  "linux-6.1.y", "is not under an allowed origin ([build]"
		  " tree_origins)" },
		/* The operator allowed the origin, but not its network. */
		{ "6.1.66-rc1", "git://127.0.0.1:9418/linux-stable-rc.git",
		  "linux-6.1.y", "127.0.0.1 (loopback) is not in [fetch]"
		  " allow_networks" },
		{ "6.1.67-rc1", STABLE_RC, "--upload-pack=touch",
		  "is not a plain branch name" },
	};
	char err[512], st[32], msg[1400], path[256];
	struct stat sb;

	(void)state;
	assert_non_null(f);
	assert_int_equal(config_parse(&f->cfg, "[build]\ntree_origins = "
		STABLE_RC " git://127.0.0.1:\n", "test", err, sizeof(err)), 0);
	f->ectx.cache_dir = f->dir;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		posted_rc(f, cases[i].version, cases[i].tree, cases[i].branch,
			  (int)i + 5);
		assert_true(bisect_run_once(f->st, &f->ectx, err, sizeof(err)) >= 0);
		bisection_of(f, cases[i].version, st, sizeof(st), msg, sizeof(msg));
		assert_string_equal(st, "failed");
		if (strstr(msg, cases[i].refused) == NULL ||
		    strstr(msg, "refused, nothing was fetched") == NULL ||
		    strstr(msg, "posted by CI") == NULL)
			fail_msg("%s: %s", cases[i].version, msg);
	}
	/* Nothing of any fetch: not even the build directory. */
	snprintf(path, sizeof(path), "%s/build", f->dir);
	assert_int_equal(stat(path, &sb), -1);
	test_engine_free(f);
}

static void test_step_builds_from_the_tree(void **state)
{
	struct test_engine *f = test_engine_new("https://rcgate.example");
	const char *tree = "git://127.0.0.1:9418/linux-stable-rc.git",
		*bad = "c97d13d25d29b3b73348e209d928bb7b98c50fff";
	struct bisect_candidate c = { 5, 1, 1, 1, "6.1.64-rc1", "6.1", "x86_64",
				      "ext4.write_seq_4096", tree, bad,
				      ",write_seq_4096," };
	char err[512];
	struct job job;
	int64_t bid;
	json_t *rows;

	(void)state;
	assert_non_null(f);
	posted_rc(f, "6.1.64-rc1", tree, "linux-6.1.y", 5);
	assert_int_equal(store_bisection_create(f->st, &c,
		"677341a7c35e42f60cb22f7eba28f3c42a76cc50", 0, bad, "running",
		NULL, &bid, err, sizeof(err)), 0);
	assert_int_equal(store_bisect_step_add(f->st, bid, 1, bad,
		"write_seq_4096", NULL, err, sizeof(err)), 0);
	assert_int_equal(store_job_claim(f->st, "w0", &job, err, sizeof(err)), 1);
	assert_int_equal(job.bisection_id, bid);
	assert_string_equal(job.kind, "git");
	assert_string_equal(job.url, tree);
	assert_string_equal(job.sha256, "");
	assert_string_equal(job.modules_url, "");
	assert_string_equal(job.git_commit, bad);
	/* The job's page says the same. */
	rows = store_rows(f->st, Q_JOB, err, sizeof(err), "i", job.id);
	assert_non_null(rows);
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(rows, 0), "kind")), "git");
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(rows, 0), "url")), tree);
	json_decref(rows);
	/* The rc's own job is still the CI's kernel. */
	rows = store_rows(f->st, Q_JOB, err, sizeof(err), "i", (int64_t)1);
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(rows, 0), "kind")), "deb");
	json_decref(rows);
	test_engine_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_forged_tree_is_refused_unfetched),
		cmocka_unit_test(test_step_builds_from_the_tree),
	};
	return cmocka_run_group_tests_name("bisect_tree", tests, NULL, NULL);
}
