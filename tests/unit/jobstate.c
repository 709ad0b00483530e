/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/jobstate.c: the SQL lists the store uses are the
 * table's own sets, the schema's CHECK constraint names exactly the
 * table's states, and results are counted one way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "store/store_migrations.h"

/* "('a','b')" of the states for which pick() holds, in table order. */
static void sql_list(char *out, size_t len, int (*pick)(const struct job_state *))
{
	struct strbuf sb;
	int first = 1;

	strbuf_init(&sb, out, len);
	strbuf_printf(&sb, "(");
	for (size_t i = 0; i < job_state_count(); i++) {
		const struct job_state *s = job_state_at(i);

		if (!pick(s))
			continue;
		strbuf_printf(&sb, "%s'%s'", first ? "" : ",", s->name);
		first = 0;
	}
	strbuf_printf(&sb, ")");
	assert_false(sb.overflow);
}

static int is_active(const struct job_state *s) { return s->active; }
static int is_final(const struct job_state *s) { return s->final; }
static int is_unfinished(const struct job_state *s) { return !s->final; }

static void test_sql_lists(void **state)
{
	char buf[256];

	(void)state;
	sql_list(buf, sizeof(buf), is_active);
	assert_string_equal(buf, JOB_ACTIVE_SQL);
	sql_list(buf, sizeof(buf), is_final);
	assert_string_equal(buf, JOB_FINAL_SQL);
	sql_list(buf, sizeof(buf), is_unfinished);
	assert_string_equal(buf, JOB_UNFINISHED_SQL);
	/* An active state is never final; queued is neither. */
	for (size_t i = 0; i < job_state_count(); i++)
		assert_false(job_state_at(i)->active && job_state_at(i)->final);
	assert_true(job_state_final(JS_DONE));
	assert_false(job_state_final(JS_QUEUED));
	assert_null(job_state_find("finished"));
}

/* The job table's CHECK lists every state of the table, and no other: the
 * newest migration that makes the table (010 made it again as job_new). */
static void test_schema_check(void **state)
{
	const char *sql = NULL, *check;
	size_t n = 0;

	(void)state;
	for (unsigned i = 0; i < migration_count; i++) {
		if (strstr(migrations[i].sql, "CREATE TABLE job (") != NULL ||
		    strstr(migrations[i].sql, "CREATE TABLE job_new (") != NULL)
			sql = migrations[i].sql;
	}
	assert_non_null(sql);
	check = strstr(sql, "CHECK (state IN");
	assert_non_null(check);
	for (size_t i = 0; i < job_state_count(); i++) {
		char quoted[40];
		const char *end = strchr(check, ')');

		snprintf(quoted, sizeof(quoted), "'%s'", job_state_at(i)->name);
		assert_non_null(end);
		end = strchr(end + 1, ')');	/* the IN list's own ")" */
		if (strstr(check, quoted) == NULL || strstr(check, quoted) > end)
			fail_msg("state %s is not in the schema's CHECK", quoted);
		n++;
	}
	{
		/* As many quoted names in the list as states in the table. */
		const char *p = strchr(check, '(') + 1;
		const char *end = strstr(p, "))");
		size_t quotes = 0;

		assert_non_null(end);
		for (; p < end; p++)
			quotes += *p == '\'';
		assert_int_equal(quotes, 2 * n);
	}
}

static void test_counts(void **state)
{
	static const char *const statuses[] = { "pass", "pass", "fail", "skip",
						"xfail", NULL, "bogus" };
	struct result_counts c = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		result_counts_add(&c, statuses[i]);
	assert_int_equal(c.pass, 2);
	assert_int_equal(c.fail, 1);
	assert_int_equal(c.skip, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sql_lists),
		cmocka_unit_test(test_schema_check),
		cmocka_unit_test(test_counts),
	};
	return cmocka_run_group_tests_name("jobstate", tests, NULL, NULL);
}
