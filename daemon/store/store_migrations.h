/* SPDX-License-Identifier: GPL-2.0-only */
/* The schema migrations compiled in from schemas/sql/ (scripts/sql2c). */
#ifndef STORE_MIGRATIONS_H
#define STORE_MIGRATIONS_H
struct migration {
	int version;
	const char *name;
	const char *sql;
};
extern const struct migration migrations[];
extern const unsigned migration_count;
#endif
