/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmod.h - kernel module metadata and load-order closure, as pure data.
 *
 * Debian's linux-image packages ship no modules.dep, so the dependency graph
 * is rebuilt from each module's own .modinfo ELF section. Nothing here does
 * I/O: callers hand in buffers (a .ko image, modules.builtin, ...) and get
 * plain data back, which keeps this table-testable.
 */
#ifndef RCGATE_KMOD_H
#define RCGATE_KMOD_H

#include <stdbool.h>
#include <stddef.h>

/* Upper bounds on what one module may declare; real modules stay far below. */
#define KMOD_MAX_DEPS 1024
#define KMOD_MAX_ALIASES 65536

struct kmod_info {
	char *name;		/* normalised ('-' becomes '_') */
	char *path;		/* path of the .ko in its archive; NULL if built in */
	bool builtin;
	char **depends;		/* hard dependencies, normalised module names */
	size_t ndepends;
	char **pre;		/* softdep "pre:" names (may be aliases) */
	size_t npre;
	char **post;		/* softdep "post:" names */
	size_t npost;
	char **aliases;		/* verbatim alias= values */
	size_t naliases;
};

/* Replace every '-' with '_' in place: the kernel treats them as equal. */
void kmod_name_normalise(char *name);

/*
 * Parse the NUL-separated key=value strings of a .modinfo section. path is
 * stored (copied) in out->path and, when there is no name= key, supplies the
 * name from its base name. On success out owns its strings: release them with
 * kmod_info_clear(). On error out is left cleared.
 */
int kmod_info_from_modinfo(const char *data, size_t len, const char *path,
			   struct kmod_info *out, char *err, size_t errlen);

/*
 * Find the .modinfo section of an in-memory ELF relocatable (32- or 64-bit,
 * either byte order) and parse it as above. Every offset is bounds-checked, so
 * truncated or hostile input gives an error, never a read past image + len.
 */
int kmod_info_from_elf(const void *image, size_t len, const char *path,
		       struct kmod_info *out, char *err, size_t errlen);

void kmod_info_clear(struct kmod_info *info);

/* Every module and built-in the kernel knows about. */
struct kmod_table {
	struct kmod_info *mods;
	size_t nmods;
	size_t cap;
};

/* Append info, taking ownership of its strings (info is cleared). */
int kmod_table_add(struct kmod_table *table, struct kmod_info *info,
		   char *err, size_t errlen);

/* Add the built-ins named by modules.builtin ("kernel/fs/ext4/ext4.ko" lines). */
int kmod_table_add_builtin_list(struct kmod_table *table, const char *text,
				size_t len, char *err, size_t errlen);

/*
 * Add the aliases of built-ins from modules.builtin.modinfo ("ext4.alias=fs-ext4"
 * NUL-separated), so a wanted alias can be found to be built in.
 */
int kmod_table_add_builtin_modinfo(struct kmod_table *table, const char *data,
				   size_t len, char *err, size_t errlen);

void kmod_table_free(struct kmod_table *table);

struct kmod_closure {
	size_t *order;		/* indices into table->mods, dependencies first */
	size_t norder;
	char **builtin;		/* wanted names satisfied by the kernel itself */
	size_t nbuiltin;
	char **missing;		/* wanted names found nowhere (not an error) */
	size_t nmissing;
};

/*
 * Compute the modules to load for the NULL-terminated list wanted, in an
 * order where every module follows its depends= and softdep "pre:" modules
 * and precedes its softdep "post:" modules.
 *
 * A wanted name resolves, in this order, to a module of that name, a built-in
 * of that name, a module with that exact alias (the smallest name if several),
 * a built-in with that alias; otherwise it is listed in out->missing. This is
 * modprobe's order, so an arch-optimised crc32c module wins over the built-in
 * generic one. Softdeps that resolve nowhere are ignored, as modprobe does. A
 * depends= name that is neither a module nor a built-in, and any cycle, are
 * errors. out is owned by the caller: kmod_closure_free().
 */
int kmod_closure_compute(const struct kmod_table *table,
			 const char *const *wanted, struct kmod_closure *out,
			 char *err, size_t errlen);

void kmod_closure_free(struct kmod_closure *closure);

#endif
