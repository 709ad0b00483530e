/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tests/unit/kmod.c - .modinfo parsing from generated ELF images and the
 * load-order closure, as tables of cases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "artifact/artifact.h"

/* ---- a minimal ELF relocatable: header, .modinfo, .shstrtab, 3 shdrs ---- */

struct elf_buf {
	unsigned char *p;
	size_t len;
};

static void put(unsigned char *p, size_t off, uint64_t v, size_t width, int big)
{
	for (size_t i = 0; i < width; i++) {
		size_t k = big ? width - 1 - i : i;

		p[off + k] = (unsigned char)(v >> (8 * i));
	}
}

/*
 * modinfo uses '\n' between strings so tables stay readable; they become NULs.
 * section_name lets a test hide the section under another name.
 */
static struct elf_buf make_elf(int is64, int big, const char *modinfo,
			       const char *section_name)
{
	char shstr[64];
	size_t mlen = strlen(modinfo) + 1;
	size_t ehsize = is64 ? 64 : 52, shentsize = is64 ? 64 : 40;
	size_t shstrlen, modoff, stroff, shoff, total;
	struct elf_buf b;
	int n;

	n = snprintf(shstr + 1, sizeof(shstr) - 1, "%s", section_name);
	assert_true(n > 0 && (size_t)n + 12 < sizeof(shstr));
	shstr[0] = '\0';
	memcpy(shstr + 1 + n + 1, ".shstrtab", 10);
	shstrlen = 1 + (size_t)n + 1 + 10;
	modoff = ehsize;
	stroff = modoff + mlen;
	shoff = (stroff + shstrlen + 7) & ~(size_t)7;
	total = shoff + 3 * shentsize;
	b.p = calloc(1, total);
	assert_non_null(b.p);
	b.len = total;
	memcpy(b.p, "\x7f" "ELF", 4);
	b.p[4] = is64 ? 2 : 1;
	b.p[5] = big ? 2 : 1;
	b.p[6] = 1;
	put(b.p, 16, 1, 2, big); /* ET_REL */
	put(b.p, 18, is64 ? 62 : 3, 2, big);
	put(b.p, 20, 1, 4, big);
	if (is64) {
		put(b.p, 40, shoff, 8, big);
		put(b.p, 52, ehsize, 2, big);
		put(b.p, 58, shentsize, 2, big);
		put(b.p, 60, 3, 2, big);
		put(b.p, 62, 2, 2, big);
	} else {
		put(b.p, 32, shoff, 4, big);
		put(b.p, 40, ehsize, 2, big);
		put(b.p, 46, shentsize, 2, big);
		put(b.p, 48, 3, 2, big);
		put(b.p, 50, 2, 2, big);
	}
	memcpy(b.p + modoff, modinfo, mlen);
	for (size_t i = 0; i < mlen; i++)
		if (b.p[modoff + i] == '\n')
			b.p[modoff + i] = '\0';
	memcpy(b.p + stroff, shstr, shstrlen);
	for (int s = 1; s <= 2; s++) {
		size_t at = shoff + (size_t)s * shentsize;
		uint64_t name = s == 1 ? 1 : 1 + (uint64_t)n + 1;
		uint64_t off = s == 1 ? modoff : stroff;
		uint64_t size = s == 1 ? mlen : shstrlen;
		uint64_t type = s == 1 ? 1 /* PROGBITS */ : 3 /* STRTAB */;

		put(b.p, at, name, 4, big);
		put(b.p, at + 4, type, 4, big);
		if (is64) {
			put(b.p, at + 24, off, 8, big);
			put(b.p, at + 32, size, 8, big);
		} else {
			put(b.p, at + 16, off, 4, big);
			put(b.p, at + 20, size, 4, big);
		}
	}
	return b;
}

static void assert_strv(char **v, size_t n, const char *want)
{
	char buf[512] = "";
	size_t used = 0;

	for (size_t i = 0; i < n; i++) {
		int k = snprintf(buf + used, sizeof(buf) - used, "%s%s",
				 i != 0 ? " " : "", v[i]);

		assert_true(k >= 0 && (size_t)k < sizeof(buf) - used);
		used += (size_t)k;
	}
	assert_string_equal(buf, want);
}

/* ---- parsing ---- */

struct parse_case {
	int is64, big;
	const char *modinfo;
	const char *path;
	const char *name, *depends, *pre, *post, *aliases;
};

static const struct parse_case parse_cases[] = {
	{ 1, 0, "license=GPL\nname=virtio_pci\ndepends=virtio_pci_modern_dev,virtio,virtio_ring\nalias=pci:v00001AF4d*\nvermagic=6.1.0 SMP",
	  "kernel/drivers/virtio/virtio_pci.ko", "virtio_pci",
	  "virtio_pci_modern_dev virtio virtio_ring", "", "", "pci:v00001AF4d*" },
	/* armhf and i386 kernels are 32-bit */
	{ 0, 0, "depends=jbd2,mbcache,crc16\nsoftdep=pre: crc32c\nname=ext4\nalias=fs-ext4\nalias=ext3",
	  "kernel/fs/ext4/ext4.ko", "ext4", "jbd2 mbcache crc16", "crc32c", "",
	  "fs-ext4 ext3" },
	{ 0, 1, "name=crc32c-intel\nalias=crc32c\nalias=crypto-crc32c\ndepends=",
	  "x/crc32c-intel.ko", "crc32c_intel", "", "", "", "crc32c crypto-crc32c" },
	/* no name=: fall back to the file name, normalised */
	{ 1, 1, "softdep=pre: a b post: c\nsoftdep=post:d", "x/some-mod.ko",
	  "some_mod", "", "a b", "c d", "" },
	/* padding NULs, empty depends entries, strings without '=' */
	{ 1, 0, "\n\nname=x\n\nnoequals\ndepends=,a,,b-c,\n\n", NULL, "x",
	  "a b_c", "", "", "" },
	{ 1, 0, "softdep=a pre:\tb  post: c", NULL, "m", "", "b", "c", "" },
};

static void test_parse_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *c = &parse_cases[i];
		struct elf_buf b = make_elf(c->is64, c->big, c->modinfo, ".modinfo");
		struct kmod_info info;
		char err[256] = "";
		const char *path = c->path != NULL ? c->path : "dir/m.ko";

		print_message("# case %zu\n", i);
		assert_int_equal(kmod_info_from_elf(b.p, b.len, path, &info,
						    err, sizeof(err)), 0);
		assert_string_equal(info.name, c->name);
		assert_string_equal(info.path, path);
		assert_false(info.builtin);
		assert_strv(info.depends, info.ndepends, c->depends);
		assert_strv(info.pre, info.npre, c->pre);
		assert_strv(info.post, info.npost, c->post);
		assert_strv(info.aliases, info.naliases, c->aliases);
		kmod_info_clear(&info);
		free(b.p);
	}
}

/* Every prefix of a valid image must fail cleanly, never read past it. */
static void test_parse_truncated(void **state)
{
	(void)state;
	for (int is64 = 0; is64 <= 1; is64++) {
		struct elf_buf b = make_elf(is64, 0, "name=t\ndepends=a", ".modinfo");

		for (size_t n = 0; n < b.len; n++) {
			unsigned char *copy = malloc(n != 0 ? n : 1);
			struct kmod_info info;
			char err[256] = "";

			assert_non_null(copy);
			memcpy(copy, b.p, n);
			assert_int_equal(kmod_info_from_elf(copy, n, "t.ko", &info,
							    err, sizeof(err)), -1);
			assert_true(err[0] != '\0');
			assert_null(info.name);
			free(copy);
		}
		free(b.p);
	}
}

static void corrupt(unsigned char *p, size_t off, uint64_t v, size_t width)
{
	put(p, off, v, width, 0);
}

static void test_parse_malformed(void **state)
{
	struct kmod_info info;
	char err[256];
	struct elf_buf b;

	(void)state;
	assert_int_equal(kmod_info_from_elf("hello", 5, "x.ko", &info, err,
					    sizeof(err)), -1);
	assert_non_null(strstr(err, "not an ELF"));

	b = make_elf(1, 0, "name=x", ".notinfo");
	assert_int_equal(kmod_info_from_elf(b.p, b.len, "x.ko", &info, err,
					    sizeof(err)), -1);
	assert_non_null(strstr(err, "no .modinfo"));
	free(b.p);

	struct {
		int is64;
		size_t off, width;
		uint64_t value;
		const char *msg;
	} bad[] = {
		{ 1, 4, 1, 7, "class" },
		{ 1, 5, 1, 9, "byte order" },
		{ 1, 62, 2, 3, "name table index" },	/* shstrndx == shnum */
		{ 0, 50, 2, 0xffff, "no .modinfo" },	/* XINDEX: names from null shdr */
		{ 1, 60, 2, 0xffff, "truncated" },	/* shnum too large */
		{ 0, 46, 2, 8, "no usable" },		/* shentsize too small */
		{ 1, 40, 8, UINT64_MAX - 4, "no usable" },/* shoff wraps */
		{ 0, 32, 4, 0, "no usable" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = make_elf(bad[i].is64, 0, "name=x", ".modinfo");
		corrupt(b.p, bad[i].off, bad[i].value, bad[i].width);
		err[0] = '\0';
		print_message("# bad %zu\n", i);
		assert_int_equal(kmod_info_from_elf(b.p, b.len, "x.ko", &info,
						    err, sizeof(err)), -1);
		assert_non_null(strstr(err, bad[i].msg));
		free(b.p);
	}

	/* .modinfo section whose size runs past the end of the file */
	b = make_elf(1, 0, "name=x", ".modinfo");
	{
		size_t shoff = (size_t)b.p[40] | (size_t)b.p[41] << 8;

		corrupt(b.p, shoff + 64 + 32, 1u << 20, 8);
	}
	assert_int_equal(kmod_info_from_elf(b.p, b.len, "x.ko", &info, err,
					    sizeof(err)), -1);
	assert_non_null(strstr(err, "out of bounds"));
	free(b.p);

	/* section name offset outside .shstrtab: skipped, so no .modinfo */
	b = make_elf(0, 0, "name=x", ".modinfo");
	{
		size_t shoff = (size_t)b.p[32] | (size_t)b.p[33] << 8;

		corrupt(b.p, shoff + 40, 5000, 4);
	}
	assert_int_equal(kmod_info_from_elf(b.p, b.len, "x.ko", &info, err,
					    sizeof(err)), -1);
	assert_non_null(strstr(err, "no .modinfo"));
	free(b.p);

	/* no name= and a path that names nothing */
	assert_int_equal(kmod_info_from_modinfo("depends=a", 9, NULL, &info,
						err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no name="));
}

/* ---- closure ---- */

struct closure_case {
	const char *title;
	const char *const *mods;	/* modinfo strings, '\n'-separated */
	const char *builtin_list;	/* modules.builtin text */
	const char *builtin_modinfo;	/* '\n' for NUL */
	const char *wanted;		/* space-separated */
	const char *order;		/* expected load order, or NULL on error */
	const char *builtin;
	const char *missing;
	const char *error;		/* substring of the error */
};

static const char *const diamond[] = {
	"name=top\ndepends=left,right",
	"name=left\ndepends=base",
	"name=right\ndepends=base",
	"name=base",
	"name=unrelated\ndepends=base",
	NULL,
};

static const char *const virtio[] = {
	"name=virtio_blk\ndepends=virtio,virtio_ring",
	"name=virtio_pci\ndepends=virtio_pci_modern_dev,virtio_pci_legacy_dev,virtio,virtio_ring",
	"name=virtio_console\ndepends=virtio,virtio_ring",
	"name=virtio_ring\ndepends=",
	"name=virtio_pci_legacy_dev\ndepends=",
	"name=virtio_pci_modern_dev\ndepends=",
	"name=virtio\ndepends=",
	"name=crc32c-intel\nalias=crc32c\nalias=crypto-crc32c",
	"name=crc32c_aaa\nalias=crc32c-x",
	"name=crc32c_zzz\nalias=crc32c-x",
	"name=ext4\ndepends=jbd2,mbcache,crc16\nsoftdep=pre: crc32c post: notthere",
	"name=jbd2\ndepends=crc16",
	"name=mbcache",
	"name=crc16",
	NULL,
};

static const char *const cyclic[] = {
	"name=a\ndepends=b",
	"name=b\ndepends=c",
	"name=c\ndepends=a",
	"name=selfsoft\nsoftdep=pre: selfsoft",
	"name=d\nsoftdep=post: e",
	"name=e\ndepends=d",
	NULL,
};

static const char *const exact[] = {
	"name=aliasing\nalias=thing",
	"name=thing_impl\nalias=thing2",
	"name=thing",
	"name=needs_builtin\ndepends=crc32,thing",
	"name=needs_ghost\ndepends=ghost",
	"name=soft_builtin\nsoftdep=pre: crc32c",
	NULL,
};

static const struct closure_case closure_cases[] = {
	{ "diamond", diamond, "", "", "top", "base left right top", "", "", NULL },
	{ "diamond twice", diamond, "", "", "top base unrelated top",
	  "base left right top unrelated", "", "", NULL },
	{ "virtio stack", virtio, "", "", "virtio_pci virtio_blk virtio_console",
	  "virtio_pci_modern_dev virtio_pci_legacy_dev virtio virtio_ring virtio_pci virtio_blk virtio_console",
	  "", "", NULL },
	{ "dash and underscore are one", virtio, "", "", "virtio-blk crc32c_intel",
	  "virtio virtio_ring virtio_blk crc32c_intel", "", "", NULL },
	{ "alias resolves", virtio, "", "", "crc32c", "crc32c_intel", "", "", NULL },
	{ "alias tie takes the smallest name", virtio, "", "", "crc32c-x",
	  "crc32c_aaa", "", "", NULL },
	{ "pre softdep loads first, missing post ignored", virtio, "", "", "ext4",
	  "crc16 jbd2 mbcache crc32c_intel ext4", "", "", NULL },
	{ "builtin by name and by builtin alias", virtio,
	  "kernel/fs/ext4/ext5.ko\nkernel/lib/crc-t10dif.ko\n",
	  "ext5.alias=fs-ext5\next5.license=GPL\n",
	  "ext5 fs-ext5 crc_t10dif crc-t10dif", "", "ext5 fs-ext5 crc_t10dif crc-t10dif",
	  "", NULL },
	{ "missing wanted is recorded", virtio, "", "", "nope virtio_blk nope2",
	  "virtio virtio_ring virtio_blk", "", "nope nope2", NULL },
	{ "exact name beats alias", exact, "kernel/lib/crc32.ko\n",
	  "crc32c_generic.alias=crc32c\n", "thing", "thing", "", "", NULL },
	{ "module alias beats builtin alias", virtio, "kernel/crypto/crc32c_generic.ko\n",
	  "crc32c_generic.alias=crc32c\n", "crc32c", "crc32c_intel", "", "", NULL },
	{ "builtin dependency needs nothing", exact, "kernel/lib/crc32.ko\n", "",
	  "needs_builtin", "thing needs_builtin", "", "", NULL },
	{ "softdep on a builtin alias", exact, "",
	  "crc32c_generic.alias=crc32c\n", "soft_builtin", "soft_builtin", "", "",
	  NULL },
	{ "missing dependency is an error", exact, "", "", "thing needs_ghost",
	  NULL, NULL, NULL, "needs_ghost needs ghost" },
	{ "hard cycle", cyclic, "", "", "a", NULL, NULL, NULL,
	  "cycle: a -> b -> c -> a" },
	{ "softdep self cycle", cyclic, "", "", "selfsoft", NULL, NULL, NULL,
	  "cycle: selfsoft -> selfsoft" },
	{ "post softdep depending back is fine", cyclic, "", "", "d", "d e", "", "",
	  NULL },
	{ "empty wanted", virtio, "", "", "", "", "", "", NULL },
};

static char **split_words(const char *s, size_t *n)
{
	char **v = calloc(strlen(s) + 2, sizeof(*v));
	size_t k = 0;

	assert_non_null(v);
	while (*s != '\0') {
		size_t len = strcspn(s, " ");

		if (len != 0) {
			v[k] = strndup(s, len);
			assert_non_null(v[k]);
			k++;
		}
		s += len;
		s += strspn(s, " ");
	}
	*n = k;
	return v;
}

static void test_closure_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(closure_cases) / sizeof(closure_cases[0]); i++) {
		const struct closure_case *c = &closure_cases[i];
		struct kmod_table t = { 0 };
		struct kmod_closure cl;
		char err[256] = "";
		char *bm = strdup(c->builtin_modinfo);
		size_t nwanted, bmlen = strlen(bm);
		char **wanted = split_words(c->wanted, &nwanted);
		int rc;

		print_message("# closure case: %s\n", c->title);
		for (size_t m = 0; c->mods[m] != NULL; m++) {
			/* alternate 32/64-bit images to mix both parsers in */
			struct elf_buf b = make_elf((int)(m & 1), 0, c->mods[m],
						    ".modinfo");
			struct kmod_info info;

			assert_int_equal(kmod_info_from_elf(b.p, b.len, "x.ko",
							    &info, err,
							    sizeof(err)), 0);
			assert_int_equal(kmod_table_add(&t, &info, err,
							sizeof(err)), 0);
			assert_null(info.name);
			free(b.p);
		}
		assert_int_equal(kmod_table_add_builtin_list(&t, c->builtin_list,
							     strlen(c->builtin_list),
							     err, sizeof(err)), 0);
		for (size_t k = 0; k < bmlen; k++)
			if (bm[k] == '\n')
				bm[k] = '\0';
		assert_int_equal(kmod_table_add_builtin_modinfo(&t, bm, bmlen, err,
								sizeof(err)), 0);
		rc = kmod_closure_compute(&t, (const char *const *)wanted, &cl,
					  err, sizeof(err));
		if (c->order == NULL) {
			assert_int_equal(rc, -1);
			print_message("# error: %s\n", err);
			assert_non_null(strstr(err, c->error));
			assert_null(cl.order);
		} else {
			char *names[64];

			assert_int_equal(rc, 0);
			assert_true(cl.norder <= 64);
			for (size_t k = 0; k < cl.norder; k++)
				names[k] = t.mods[cl.order[k]].name;
			assert_strv(names, cl.norder, c->order);
			assert_strv(cl.builtin, cl.nbuiltin, c->builtin);
			assert_strv(cl.missing, cl.nmissing, c->missing);
			kmod_closure_free(&cl);
		}
		for (size_t k = 0; k < nwanted; k++)
			free(wanted[k]);
		free(wanted);
		free(bm);
		kmod_table_free(&t);
	}
}

static void test_builtin_list_parsing(void **state)
{
	static const char list[] =
		"kernel/fs/ext4/ext4.ko\n\nnot-a-module.txt\n.ko\n"
		"kernel/lib/crc-t10dif.ko\nkernel/fs/ext4/ext4.ko\nlast.ko";
	static const char modinfo[] = "ext4.alias=fs-ext4\0ext4.alias=ext3\0"
		"new.alias=x\0bad\0.alias=y\0ext4.license=GPL";
	struct kmod_table t = { 0 };
	char err[128];

	(void)state;
	assert_int_equal(kmod_table_add_builtin_list(&t, list, sizeof(list) - 1,
						     err, sizeof(err)), 0);
	assert_int_equal(t.nmods, 3);
	assert_string_equal(t.mods[0].name, "ext4");
	assert_string_equal(t.mods[1].name, "crc_t10dif");
	assert_string_equal(t.mods[2].name, "last");
	assert_true(t.mods[0].builtin);
	assert_null(t.mods[0].path);
	assert_int_equal(kmod_table_add_builtin_modinfo(&t, modinfo, sizeof(modinfo),
							err, sizeof(err)), 0);
	assert_int_equal(t.nmods, 4);
	assert_strv(t.mods[0].aliases, t.mods[0].naliases, "fs-ext4 ext3");
	assert_string_equal(t.mods[3].name, "new");
	assert_strv(t.mods[3].aliases, t.mods[3].naliases, "x");
	kmod_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_truncated),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_closure_table),
		cmocka_unit_test(test_builtin_list_parsing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
