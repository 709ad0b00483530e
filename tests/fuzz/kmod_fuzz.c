/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libFuzzer target for the kernel-module reader (daemon/kmod.c). One input
 * is read three ways, as the initramfs builder meets such bytes: as a .ko
 * (an ELF relocatable whose .modinfo section is parsed), as a bare
 * .modinfo section, and as modules.builtin plus modules.builtin.modinfo.
 * Each result then goes through kmod_closure_compute().
 *
 * Beyond "no crash, no leak, no read past the image": an error leaves the
 * output cleared and says why; an accepted module has a normalised name,
 * no empty dependency or alias, counts within KMOD_MAX_*; a closure lists
 * each module once, after its hard dependencies.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "artifact/artifact.h"

#define FUZZ_PATH "kernel/drivers/fuzz/fuzz-mod.ko"

static void check_strv(char **v, size_t n, size_t cap, bool normalised)
{
	check(n <= cap);
	check((n == 0) == (v == NULL));
	for (size_t i = 0; i < n; i++) {
		check(v[i] != NULL && v[i][0] != '\0');
		if (normalised)
			check(strchr(v[i], '-') == NULL);
	}
}

static void check_cleared(const struct kmod_info *m)
{
	check(m->name == NULL && m->path == NULL && !m->builtin);
	check(m->depends == NULL && m->ndepends == 0);
	check(m->pre == NULL && m->npre == 0);
	check(m->post == NULL && m->npost == 0);
	check(m->aliases == NULL && m->naliases == 0);
}

static void check_module(const struct kmod_info *m, const char *path)
{
	check(m->name != NULL && m->name[0] != '\0');
	check(strchr(m->name, '-') == NULL);
	check(!m->builtin);
	check(path == NULL ? m->path == NULL
			   : m->path != NULL && strcmp(m->path, path) == 0);
	check_strv(m->depends, m->ndepends, KMOD_MAX_DEPS, true);
	check_strv(m->pre, m->npre, KMOD_MAX_DEPS, false);
	check_strv(m->post, m->npost, KMOD_MAX_DEPS, false);
	check_strv(m->aliases, m->naliases, KMOD_MAX_ALIASES, false);
}

/* The closure of wanted: each module once, hard dependencies first. */
static void check_closure(const struct kmod_table *t, const char *wanted)
{
	const char *const list[] = { wanted, NULL };
	struct kmod_closure c;
	char err[512];
	bool *placed;
	int rc;

	err[0] = '\0';
	rc = kmod_closure_compute(t, list, &c, err, sizeof(err));
	check(rc == 0 || rc == -1);
	if (rc < 0) {
		check(err[0] != '\0');
		check(c.order == NULL && c.norder == 0);
		return;
	}
	check(c.norder + c.nbuiltin + c.nmissing >= 1);
	check(c.norder <= t->nmods);
	placed = calloc(t->nmods + 1, sizeof(*placed));
	if (placed == NULL) {
		kmod_closure_free(&c);
		return;
	}
	for (size_t i = 0; i < c.norder; i++) {
		const struct kmod_info *m;

		check(c.order[i] < t->nmods && !placed[c.order[i]]);
		m = &t->mods[c.order[i]];
		check(!m->builtin);
		for (size_t k = 0; k < m->ndepends; k++) {
			for (size_t j = 0; j < t->nmods; j++) {
				if (!t->mods[j].builtin &&
				    strcmp(t->mods[j].name, m->depends[k]) == 0) {
					check(placed[j]);
					break;
				}
			}
		}
		placed[c.order[i]] = true;
	}
	free(placed);
	kmod_closure_free(&c);
	check(c.order == NULL && c.builtin == NULL && c.missing == NULL);
}

/* The image as a .ko: the module alone in a table, wanted by name. */
static void fuzz_elf(const uint8_t *data, size_t size)
{
	struct kmod_table table = { 0 };
	struct kmod_info info;
	char err[512], *name;

	err[0] = '\0';
	if (kmod_info_from_elf(data, size, FUZZ_PATH, &info, err,
			       sizeof(err)) < 0) {
		check(err[0] != '\0');
		check_cleared(&info);
		return;
	}
	check_module(&info, FUZZ_PATH);
	name = strdup(info.name);
	if (name == NULL || kmod_table_add(&table, &info, err, sizeof(err)) < 0) {
		free(name);
		kmod_info_clear(&info);
		return;
	}
	check_cleared(&info);
	check_closure(&table, name);
	free(name);
	kmod_table_free(&table);
}

/* The bytes as a bare .modinfo section, with and without a path. */
static void fuzz_modinfo(const uint8_t *data, size_t size, const char *path)
{
	struct kmod_info info;
	char err[512];

	err[0] = '\0';
	if (kmod_info_from_modinfo((const char *)data, size, path, &info, err,
				   sizeof(err)) < 0) {
		check(err[0] != '\0');
		check_cleared(&info);
		return;
	}
	check_module(&info, path);
	kmod_info_clear(&info);
	check_cleared(&info);
}

/* The bytes as modules.builtin and as modules.builtin.modinfo. */
static void fuzz_builtin(const uint8_t *data, size_t size)
{
	struct kmod_table table = { 0 };
	char err[512];

	if (kmod_table_add_builtin_list(&table, (const char *)data, size, err,
					sizeof(err)) == 0 &&
	    kmod_table_add_builtin_modinfo(&table, (const char *)data, size,
					   err, sizeof(err)) == 0) {
		for (size_t i = 0; i < table.nmods; i++) {
			const struct kmod_info *m = &table.mods[i];

			check(m->builtin && m->path == NULL);
			check(m->name != NULL && m->name[0] != '\0');
			check(strchr(m->name, '-') == NULL);
			check(m->ndepends == 0 && m->npre == 0 && m->npost == 0);
			check(m->naliases <= KMOD_MAX_ALIASES);
			/* Built-ins are found by name, once. */
			for (size_t k = 0; k < i; k++)
				check(strcmp(table.mods[k].name, m->name) != 0);
		}
		if (table.nmods > 0) {
			const char *const list[] = { table.mods[0].name, NULL };
			struct kmod_closure c;

			check(kmod_closure_compute(&table, list, &c, err,
						   sizeof(err)) == 0);
			check(c.norder == 0 && c.nbuiltin == 1 && c.nmissing == 0);
			kmod_closure_free(&c);
		}
	}
	kmod_table_free(&table);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_elf(data, size);
	fuzz_modinfo(data, size, FUZZ_PATH);
	fuzz_modinfo(data, size, NULL);
	fuzz_builtin(data, size);
	return 0;
}
