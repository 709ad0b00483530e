/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmod.c - module metadata from .modinfo and the ordered dependency closure.
 *
 * Owns no state and does no I/O; see kmod.h for the contract.
 */
#include "base/base.h"
#include "artifact/artifact.h"

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kmod_name_normalise(char *name)
{
	for (; *name != '\0'; name++)
		if (*name == '-')
			*name = '_';
}

/* Compare as the kernel and modprobe do: '-' and '_' are the same. */
static bool name_eq(const char *a, const char *b)
{
	for (;; a++, b++) {
		char ca = *a == '-' ? '_' : *a;
		char cb = *b == '-' ? '_' : *b;

		if (ca != cb)
			return false;
		if (ca == '\0')
			return true;
	}
}

static char *dup_range(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (p == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Append a copy of s[0..n) to *v; cap bounds hostile input. */
static int strv_push(char ***v, size_t *n, size_t cap, const char *s, size_t len,
		     bool normalise, char *err, size_t errlen)
{
	char **nv;
	char *copy;

	if (*n >= cap) {
		errf(err, errlen, "more than %zu entries", cap);
		return -1;
	}
	copy = dup_range(s, len);
	if (copy == NULL)
		goto oom;
	if (normalise)
		kmod_name_normalise(copy);
	nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (nv == NULL) {
		free(copy);
		goto oom;
	}
	nv[(*n)++] = copy;
	*v = nv;
	return 0;
oom:
	errf(err, errlen, "out of memory");
	return -1;
}

void kmod_info_clear(struct kmod_info *info)
{
	free(info->name);
	free(info->path);
	strv_free(info->depends, info->ndepends);
	strv_free(info->pre, info->npre);
	strv_free(info->post, info->npost);
	strv_free(info->aliases, info->naliases);
	memset(info, 0, sizeof(*info));
}

static int parse_depends(struct kmod_info *info, const char *v, size_t len,
			 char *err, size_t errlen)
{
	size_t i = 0;

	while (i < len) {
		size_t start = i;

		while (i < len && v[i] != ',')
			i++;
		if (i > start && strv_push(&info->depends, &info->ndepends,
					   KMOD_MAX_DEPS, v + start, i - start,
					   true, err, errlen) < 0)
			return -1;
		i++;
	}
	return 0;
}

/* softdep=pre: a b post: c -- tokens before any "pre:"/"post:" are ignored. */
static int parse_softdep(struct kmod_info *info, const char *v, size_t len,
			 char *err, size_t errlen)
{
	int mode = 0; /* 0 none, 1 pre, 2 post */
	size_t i = 0;

	while (i < len) {
		size_t start, tlen;
		const char *tok;

		while (i < len && (v[i] == ' ' || v[i] == '\t'))
			i++;
		start = i;
		while (i < len && v[i] != ' ' && v[i] != '\t')
			i++;
		tok = v + start;
		tlen = i - start;
		if (tlen == 0)
			break;
		if (tlen >= 4 && memcmp(tok, "pre:", 4) == 0) {
			mode = 1;
			tok += 4;
			tlen -= 4;
		} else if (tlen >= 5 && memcmp(tok, "post:", 5) == 0) {
			mode = 2;
			tok += 5;
			tlen -= 5;
		}
		if (tlen == 0 || mode == 0)
			continue;
		if (mode == 1 && strv_push(&info->pre, &info->npre, KMOD_MAX_DEPS,
					   tok, tlen, false, err, errlen) < 0)
			return -1;
		if (mode == 2 && strv_push(&info->post, &info->npost,
					   KMOD_MAX_DEPS, tok, tlen, false, err,
					   errlen) < 0)
			return -1;
	}
	return 0;
}

/* "dir/crc32c-intel.ko" -> "crc32c_intel"; NULL when path says nothing. */
static char *name_from_path(const char *path)
{
	const char *base, *dot;
	char *name;

	if (path == NULL)
		return NULL;
	base = strrchr(path, '/');
	base = base != NULL ? base + 1 : path;
	dot = strstr(base, ".ko");
	if (dot == NULL || dot == base)
		return NULL;
	name = dup_range(base, (size_t)(dot - base));
	if (name != NULL)
		kmod_name_normalise(name);
	return name;
}

int kmod_info_from_modinfo(const char *data, size_t len, const char *path,
			   struct kmod_info *out, char *err, size_t errlen)
{
	char sub[256];
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	if (path != NULL && (out->path = strdup(path)) == NULL) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	while (i < len) {
		const char *s = data + i;
		const char *nul = memchr(s, '\0', len - i);
		size_t slen = nul != NULL ? (size_t)(nul - s) : len - i;
		const char *eq = memchr(s, '=', slen);
		size_t klen, vlen;
		const char *v;
		int rc = 0;

		i += slen + 1;
		if (eq == NULL)
			continue;
		klen = (size_t)(eq - s);
		v = eq + 1;
		vlen = slen - klen - 1;
		sub[0] = '\0';
		if (klen == 4 && memcmp(s, "name", 4) == 0) {
			if (vlen == 0)
				continue;
			free(out->name);
			out->name = dup_range(v, vlen);
			if (out->name == NULL) {
				errf(err, errlen, "out of memory");
				rc = -1;
			} else {
				kmod_name_normalise(out->name);
			}
		} else if (klen == 7 && memcmp(s, "depends", 7) == 0) {
			rc = parse_depends(out, v, vlen, sub, sizeof(sub));
		} else if (klen == 7 && memcmp(s, "softdep", 7) == 0) {
			rc = parse_softdep(out, v, vlen, sub, sizeof(sub));
		} else if (klen == 5 && memcmp(s, "alias", 5) == 0 && vlen > 0) {
			rc = strv_push(&out->aliases, &out->naliases,
				       KMOD_MAX_ALIASES, v, vlen, false, sub,
				       sizeof(sub));
		}
		if (rc < 0) {
			if (sub[0] != '\0')
				errf(err, errlen, "%s: modinfo %.*s: %s",
					  path != NULL ? path : "module",
					  (int)klen, s, sub);
			kmod_info_clear(out);
			return -1;
		}
	}
	if (out->name == NULL && (out->name = name_from_path(path)) == NULL) {
		errf(err, errlen, "%s: modinfo has no name=",
			  path != NULL ? path : "module");
		kmod_info_clear(out);
		return -1;
	}
	return 0;
}

/* ---- ELF: just enough to find one section, with every read checked ---- */

struct elf_view {
	const unsigned char *p;
	size_t len;
	bool is64;
	bool big;
};

static uint64_t rd(const struct elf_view *e, size_t off, size_t width)
{
	uint64_t v = 0;

	for (size_t i = 0; i < width; i++) {
		size_t k = e->big ? i : width - 1 - i;

		v = (v << 8) | e->p[off + k];
	}
	return v;
}

/* Does [off, off + n) lie inside the image? */
static bool in_bounds(const struct elf_view *e, uint64_t off, uint64_t n)
{
	return off <= e->len && n <= e->len - off;
}

struct elf_shdr {
	uint32_t name;
	uint32_t type;
	uint64_t offset;
	uint64_t size;
	uint32_t link;
};

static void read_shdr(const struct elf_view *e, size_t at, struct elf_shdr *sh)
{
	sh->name = (uint32_t)rd(e, at, 4);
	sh->type = (uint32_t)rd(e, at + 4, 4);
	if (e->is64) {
		sh->offset = rd(e, at + 24, 8);
		sh->size = rd(e, at + 32, 8);
		sh->link = (uint32_t)rd(e, at + 40, 4);
	} else {
		sh->offset = rd(e, at + 16, 4);
		sh->size = rd(e, at + 20, 4);
		sh->link = (uint32_t)rd(e, at + 24, 4);
	}
}

int kmod_info_from_elf(const void *image, size_t len, const char *path,
		       struct kmod_info *out, char *err, size_t errlen)
{
	struct elf_view e = { .p = image, .len = len };
	const char *what = path != NULL ? path : "module";
	uint64_t shoff, shnum, shstrndx, shentsize, need;
	struct elf_shdr sh, strtab;

	memset(out, 0, sizeof(*out));
	if (len < EI_NIDENT || memcmp(e.p, ELFMAG, SELFMAG) != 0) {
		errf(err, errlen, "%s: not an ELF file", what);
		return -1;
	}
	if (e.p[EI_CLASS] != ELFCLASS32 && e.p[EI_CLASS] != ELFCLASS64) {
		errf(err, errlen, "%s: bad ELF class %u", what,
			  e.p[EI_CLASS]);
		return -1;
	}
	if (e.p[EI_DATA] != ELFDATA2LSB && e.p[EI_DATA] != ELFDATA2MSB) {
		errf(err, errlen, "%s: bad ELF byte order %u", what,
			  e.p[EI_DATA]);
		return -1;
	}
	e.is64 = e.p[EI_CLASS] == ELFCLASS64;
	e.big = e.p[EI_DATA] == ELFDATA2MSB;
	if (len < (e.is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr))) {
		errf(err, errlen, "%s: truncated ELF header", what);
		return -1;
	}
	if (e.is64) {
		shoff = rd(&e, 40, 8);
		shentsize = rd(&e, 58, 2);
		shnum = rd(&e, 60, 2);
		shstrndx = rd(&e, 62, 2);
	} else {
		shoff = rd(&e, 32, 4);
		shentsize = rd(&e, 46, 2);
		shnum = rd(&e, 48, 2);
		shstrndx = rd(&e, 50, 2);
	}
	need = e.is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	if (shoff == 0 || shentsize < need || !in_bounds(&e, shoff, need)) {
		errf(err, errlen, "%s: no usable section header table",
			  what);
		return -1;
	}
	/* Extended numbering keeps the real counts in section 0. */
	read_shdr(&e, (size_t)shoff, &sh);
	if (shnum == 0)
		shnum = sh.size;
	if (shstrndx == SHN_XINDEX)
		shstrndx = sh.link;
	if (shnum == 0 || shnum > (e.len - shoff) / shentsize) {
		errf(err, errlen, "%s: section header table truncated",
			  what);
		return -1;
	}
	if (shstrndx >= shnum) {
		errf(err, errlen, "%s: bad section name table index", what);
		return -1;
	}
	read_shdr(&e, (size_t)(shoff + shstrndx * shentsize), &strtab);
	if (strtab.type == SHT_NOBITS ||
	    !in_bounds(&e, strtab.offset, strtab.size)) {
		errf(err, errlen, "%s: section name table out of bounds",
			  what);
		return -1;
	}
	for (uint64_t i = 1; i < shnum; i++) {
		static const char want[] = ".modinfo";

		read_shdr(&e, (size_t)(shoff + i * shentsize), &sh);
		if (sh.name >= strtab.size ||
		    strtab.size - sh.name < sizeof(want) ||
		    memcmp(e.p + strtab.offset + sh.name, want, sizeof(want)))
			continue;
		if (sh.type == SHT_NOBITS || !in_bounds(&e, sh.offset, sh.size)) {
			errf(err, errlen, "%s: .modinfo out of bounds",
				  what);
			return -1;
		}
		return kmod_info_from_modinfo((const char *)e.p + sh.offset,
					      (size_t)sh.size, path, out, err,
					      errlen);
	}
	errf(err, errlen, "%s: no .modinfo section", what);
	return -1;
}

/* ---- the table ---- */

int kmod_table_add(struct kmod_table *table, struct kmod_info *info,
		   char *err, size_t errlen)
{
	if (table->nmods == table->cap) {
		size_t ncap = table->cap != 0 ? table->cap * 2 : 256;
		struct kmod_info *n = realloc(table->mods, ncap * sizeof(*n));

		if (n == NULL) {
			errf(err, errlen, "out of memory");
			return -1;
		}
		table->mods = n;
		table->cap = ncap;
	}
	table->mods[table->nmods++] = *info;
	memset(info, 0, sizeof(*info));
	return 0;
}

static struct kmod_info *find_builtin(const struct kmod_table *table,
				      const char *name, size_t nlen)
{
	for (size_t i = 0; i < table->nmods; i++) {
		struct kmod_info *m = &table->mods[i];

		if (m->builtin && strlen(m->name) == nlen &&
		    memcmp(m->name, name, nlen) == 0)
			return m;
	}
	return NULL;
}

/* Find or create the built-in entry for name[0..nlen) (already normalised). */
static struct kmod_info *builtin_entry(struct kmod_table *table,
				       const char *name, size_t nlen,
				       char *err, size_t errlen)
{
	struct kmod_info *m = find_builtin(table, name, nlen);
	struct kmod_info info = { .builtin = true };

	if (m != NULL)
		return m;
	info.name = dup_range(name, nlen);
	if (info.name == NULL) {
		errf(err, errlen, "out of memory");
		return NULL;
	}
	kmod_name_normalise(info.name);
	if (kmod_table_add(table, &info, err, errlen) < 0) {
		kmod_info_clear(&info);
		return NULL;
	}
	return &table->mods[table->nmods - 1];
}

int kmod_table_add_builtin_list(struct kmod_table *table, const char *text,
				size_t len, char *err, size_t errlen)
{
	size_t i = 0;

	while (i < len) {
		const char *line = text + i;
		const char *nl = memchr(line, '\n', len - i);
		size_t llen = nl != NULL ? (size_t)(nl - line) : len - i;
		char name[256];
		const char *base, *dot;
		size_t blen;

		i += llen + 1;
		base = line;
		for (size_t k = 0; k < llen; k++)
			if (line[k] == '/')
				base = line + k + 1;
		blen = llen - (size_t)(base - line);
		dot = blen >= 3 ? base + blen - 3 : NULL;
		if (dot == NULL || memcmp(dot, ".ko", 3) != 0 || dot == base)
			continue;
		blen = (size_t)(dot - base);
		/* A NUL would cut the name short (found by tests/fuzz/kmod_fuzz.c:
		 * "\0x.ko" made a built-in with an empty name): no module. */
		if (blen >= sizeof(name) || memchr(base, '\0', blen) != NULL)
			continue;
		memcpy(name, base, blen);
		name[blen] = '\0';
		kmod_name_normalise(name);
		if (builtin_entry(table, name, blen, err, errlen) == NULL)
			return -1;
	}
	return 0;
}

int kmod_table_add_builtin_modinfo(struct kmod_table *table, const char *data,
				   size_t len, char *err, size_t errlen)
{
	size_t i = 0, last = SIZE_MAX;

	while (i < len) {
		const char *s = data + i;
		const char *nul = memchr(s, '\0', len - i);
		size_t slen = nul != NULL ? (size_t)(nul - s) : len - i;
		const char *dot = memchr(s, '.', slen);
		char name[256];
		size_t nlen;
		struct kmod_info *m;

		i += slen + 1;
		if (dot == NULL || slen - (size_t)(dot - s) <= 6 ||
		    memcmp(dot + 1, "alias=", 6) != 0)
			continue;
		nlen = (size_t)(dot - s);
		if (nlen == 0 || nlen >= sizeof(name))
			continue;
		memcpy(name, s, nlen);
		name[nlen] = '\0';
		kmod_name_normalise(name);
		/* Lines come grouped by module: skip the search when we can. */
		if (last < table->nmods && strcmp(table->mods[last].name, name) == 0)
			m = &table->mods[last];
		else if ((m = builtin_entry(table, name, nlen, err, errlen)) == NULL)
			return -1;
		last = (size_t)(m - table->mods);
		if (strv_push(&m->aliases, &m->naliases, KMOD_MAX_ALIASES,
			      dot + 7, slen - nlen - 7, false, err, errlen) < 0)
			return -1;
	}
	return 0;
}

void kmod_table_free(struct kmod_table *table)
{
	for (size_t i = 0; i < table->nmods; i++)
		kmod_info_clear(&table->mods[i]);
	free(table->mods);
	memset(table, 0, sizeof(*table));
}

/* ---- the closure ---- */

enum { WHITE, GREY, BLACK };

#define NOT_FOUND SIZE_MAX

struct walk {
	const struct kmod_table *table;
	unsigned char *colour;
	size_t *stack;		/* modules being visited, for the cycle message */
	size_t depth;
	struct kmod_closure *out;
	char *err;
	size_t errlen;
};

static size_t find_module(const struct kmod_table *t, const char *name)
{
	for (size_t i = 0; i < t->nmods; i++)
		if (!t->mods[i].builtin && name_eq(t->mods[i].name, name))
			return i;
	return NOT_FOUND;
}

static bool is_builtin(const struct kmod_table *t, const char *name)
{
	for (size_t i = 0; i < t->nmods; i++)
		if (t->mods[i].builtin && name_eq(t->mods[i].name, name))
			return true;
	return false;
}

static size_t find_alias(const struct kmod_table *t, const char *alias,
			 bool builtin)
{
	size_t best = NOT_FOUND;

	for (size_t i = 0; i < t->nmods; i++) {
		const struct kmod_info *m = &t->mods[i];

		if (m->builtin != builtin)
			continue;
		for (size_t k = 0; k < m->naliases; k++) {
			if (!name_eq(m->aliases[k], alias))
				continue;
			if (best == NOT_FOUND ||
			    strcmp(m->name, t->mods[best].name) < 0)
				best = i;
			break;
		}
	}
	return best;
}

enum resolved { R_MODULE, R_BUILTIN, R_MISSING };

static enum resolved resolve(const struct kmod_table *t, const char *name,
			     size_t *idx)
{
	if ((*idx = find_module(t, name)) != NOT_FOUND)
		return R_MODULE;
	if (is_builtin(t, name))
		return R_BUILTIN;
	if ((*idx = find_alias(t, name, false)) != NOT_FOUND)
		return R_MODULE;
	if (find_alias(t, name, true) != NOT_FOUND)
		return R_BUILTIN;
	return R_MISSING;
}

static void cycle_message(struct walk *w, size_t back_to)
{
	char buf[512];
	size_t used = 0;
	size_t start = 0;

	for (size_t i = 0; i < w->depth; i++)
		if (w->stack[i] == back_to)
			start = i;
	buf[0] = '\0';
	for (size_t i = start; i < w->depth && used < sizeof(buf); i++) {
		int n = snprintf(buf + used, sizeof(buf) - used, "%s -> ",
				 w->table->mods[w->stack[i]].name);

		if (n < 0)
			break;
		used += (size_t)n;
	}
	errf(w->err, w->errlen, "module dependency cycle: %s%s", buf,
		  w->table->mods[back_to].name);
}

static int visit(struct walk *w, size_t idx);

static int visit_soft(struct walk *w, char **names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t dep;

		if (resolve(w->table, names[i], &dep) == R_MODULE &&
		    visit(w, dep) < 0)
			return -1;
	}
	return 0;
}

static int visit(struct walk *w, size_t idx)
{
	const struct kmod_info *m = &w->table->mods[idx];

	if (w->colour[idx] == BLACK)
		return 0;
	if (w->colour[idx] == GREY) {
		cycle_message(w, idx);
		return -1;
	}
	w->colour[idx] = GREY;
	w->stack[w->depth++] = idx;
	for (size_t i = 0; i < m->ndepends; i++) {
		size_t dep = find_module(w->table, m->depends[i]);

		if (dep == NOT_FOUND) {
			if (is_builtin(w->table, m->depends[i]))
				continue;
			errf(w->err, w->errlen,
				  "module %s needs %s, which is neither a module nor built in",
				  m->name, m->depends[i]);
			return -1;
		}
		if (visit(w, dep) < 0)
			return -1;
	}
	if (visit_soft(w, m->pre, m->npre) < 0)
		return -1;
	w->depth--;
	w->colour[idx] = BLACK;
	w->out->order[w->out->norder++] = idx;
	/* Post softdeps load after m; they may depend on m, which is done. */
	return visit_soft(w, m->post, m->npost);
}

void kmod_closure_free(struct kmod_closure *c)
{
	free(c->order);
	strv_free(c->builtin, c->nbuiltin);
	strv_free(c->missing, c->nmissing);
	memset(c, 0, sizeof(*c));
}

int kmod_closure_compute(const struct kmod_table *table,
			 const char *const *wanted, struct kmod_closure *out,
			 char *err, size_t errlen)
{
	struct walk w = { .table = table, .out = out, .err = err,
			  .errlen = errlen };
	size_t n = table->nmods != 0 ? table->nmods : 1;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	w.colour = calloc(n, 1);
	w.stack = calloc(n, sizeof(*w.stack));
	out->order = calloc(n, sizeof(*out->order));
	if (w.colour == NULL || w.stack == NULL || out->order == NULL) {
		errf(err, errlen, "out of memory");
		goto done;
	}
	for (size_t i = 0; wanted != NULL && wanted[i] != NULL; i++) {
		size_t idx;
		enum resolved r = resolve(table, wanted[i], &idx);

		if (r == R_MODULE) {
			w.depth = 0;
			if (visit(&w, idx) < 0)
				goto done;
		} else if (r == R_BUILTIN) {
			if (strv_push(&out->builtin, &out->nbuiltin, SIZE_MAX,
				      wanted[i], strlen(wanted[i]), false, err,
				      errlen) < 0)
				goto done;
		} else if (strv_push(&out->missing, &out->nmissing, SIZE_MAX,
				     wanted[i], strlen(wanted[i]), false, err,
				     errlen) < 0) {
			goto done;
		}
	}
	rc = 0;
done:
	free(w.colour);
	free(w.stack);
	if (rc < 0)
		kmod_closure_free(out);
	return rc;
}
