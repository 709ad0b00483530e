/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sandbox.c - owns the confinement of the programs rcgated runs on
 * somebody else's input (make and everything a kernel tree's Makefile
 * starts, patch, git, gpgv): the command line of bubblewrap (bwrap) that
 * runs one of them in fresh user, mount, PID, IPC, UTS, cgroup and
 * (unless it fetches) network namespaces, with the system read-only, a
 * private /tmp, only the paths the call names visible beside it (those
 * of struct sandbox), no capabilities, killed with its whole PID
 * namespace when rcgated or bwrap dies, and prlimit(1) inside setting
 * hard limits no child can raise: address space, file size, no core
 * files; seccomp.c's system call filter on top. rcgated's state dir,
 * database, tokens, configuration, other trees and the clones' .git are
 * not in that view at all. The caller,
 * build_run, adds the time, cancel and disk checks.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "build/build.h"

#define DEFAULT_MEM_MB 4096	/* per process: cc1 of a big file, ld */
#define DEFAULT_FILE_MB 4096	/* per file: vmlinux with its symbols */
#define TMP_BYTES "1073741824"	/* the sandbox's /tmp (in memory) */

/* An argv being built: entries point into the caller's strings or into
 * store. */
struct argv_buf {
	const char **v;
	size_t n, max;
	char *store;
	size_t used, storelen;
	int full;
};

static void add(struct argv_buf *a, const char *s)
{
	if (a->n + 1 >= a->max) {
		a->full = 1;
		return;
	}
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

/* "<option><number>", copied into the store. */
static void add_num(struct argv_buf *a, const char *option, long long v)
{
	int n = snprintf(a->store + a->used, a->storelen - a->used, "%s%lld",
			 option, v);

	if (n < 0 || (size_t)n >= a->storelen - a->used) {
		a->full = 1;
		return;
	}
	add(a, a->store + a->used);
	a->used += (size_t)n + 1;
}

/* /bin, /lib...: Debian 12's merged /usr makes them symlinks into /usr,
 * recreated as such; a real directory is bound read-only. Read once. */
static const char *const root_dirs[] = { "/bin", "/sbin", "/lib", "/lib32",
					 "/lib64", "/libx32", NULL };
static struct {
	char target[PATH_MAX];	/* "" and not dir: absent */
	int dir;
} roots[6];
static pthread_once_t roots_once = PTHREAD_ONCE_INIT;

static void roots_read(void)
{
	for (size_t i = 0; root_dirs[i] != NULL; i++) {
		struct stat sb;
		ssize_t n;

		if (lstat(root_dirs[i], &sb) != 0)
			continue;
		if (S_ISDIR(sb.st_mode)) {
			roots[i].dir = 1;
		} else if (S_ISLNK(sb.st_mode)) {
			n = readlink(root_dirs[i], roots[i].target, PATH_MAX - 1);
			roots[i].target[n > 0 ? n : 0] = '\0';
		}
	}
}

static void add_root_dirs(struct argv_buf *a)
{
	pthread_once(&roots_once, roots_read);
	for (size_t i = 0; root_dirs[i] != NULL; i++) {
		if (roots[i].dir) {
			add(a, "--ro-bind");
			add(a, root_dirs[i]);
			add(a, root_dirs[i]);
		} else if (roots[i].target[0] != '\0') {
			add(a, "--symlink");
			add(a, roots[i].target);
			add(a, root_dirs[i]);
		}
	}
}

/* "<a><b>", copied into the store; NULL when it is full. */
static const char *add_cat(struct argv_buf *a, const char *x, const char *y)
{
	int n = snprintf(a->store + a->used, a->storelen - a->used, "%s%s", x,
			 y);
	const char *s = a->store + a->used;

	if (n < 0 || (size_t)n >= a->storelen - a->used) {
		a->full = 1;
		return NULL;
	}
	add(a, s);
	a->used += (size_t)n + 1;
	return s;
}

/* The tree again at sb->tree_at, its writable paths in their places
 * there (each bound twice: what names the real path still works), and
 * *cwd moved there when it is in the tree. */
static void add_tree_at(struct argv_buf *a, const struct sandbox *sb,
			const char **cwd)
{
	const char *tree = sb->readable[0];
	size_t tl = strlen(tree);

	add(a, "--ro-bind");
	add(a, tree);
	add(a, sb->tree_at);
	for (size_t i = 0; i < SANDBOX_PATHS && sb->writable[i] != NULL; i++) {
		const char *w = sb->writable[i];

		if (strncmp(w, tree, tl) != 0 || w[tl] != '/')
			continue;
		add(a, "--bind");
		add(a, w);
		add_cat(a, sb->tree_at, w + tl);
	}
	if (*cwd != NULL && strncmp(*cwd, tree, tl) == 0 &&
	    ((*cwd)[tl] == '\0' || (*cwd)[tl] == '/')) {
		add(a, "--chdir");
		add_cat(a, sb->tree_at, *cwd + tl);
		*cwd = NULL;
	}
}

int sandbox_argv(const struct build_options *o, const char *cwd,
		 const char *const argv[], const char **out, size_t max,
		 char *store, size_t storelen, char *err, size_t errlen)
{
	/* What of the system a build may not see even read-only:
	 * rcgated's own configuration (webhook secret, SMTP URL). */
	static const char *const hidden[] = { "/etc/rcgate",
		"/usr/local/etc/rcgate", NULL };
	const struct sandbox *sb = o->sandbox;
	struct argv_buf a = { out, 0, max, store, 0, storelen, 0 };
	long mem = o->mem_mb > 0 ? o->mem_mb : DEFAULT_MEM_MB;
	long file = o->file_mb > 0 ? o->file_mb : DEFAULT_FILE_MB;

	out[0] = NULL;
	if (!o->no_sandbox) {
		add(&a, "bwrap");
		add(&a, "--unshare-all");
		if (sb != NULL && sb->network)
			add(&a, "--share-net");
		add(&a, "--die-with-parent");
		add(&a, "--new-session");
		/* seccomp.c's filter, on the descriptor build_run gives. */
		add(&a, "--seccomp");
		add(&a, SANDBOX_SECCOMP_FD_STR);
		add(&a, "--hostname");
		add(&a, "rcgate-build");
		/* As root (only with [daemon] allow_root): no capability
		 * survives into the sandbox. */
		if (geteuid() == 0) {
			add(&a, "--cap-drop");
			add(&a, "ALL");
		}
		add(&a, "--ro-bind");
		add(&a, "/usr");
		add(&a, "/usr");
		add_root_dirs(&a);
		add(&a, "--ro-bind");
		add(&a, "/etc");
		add(&a, "/etc");
		for (size_t i = 0; hidden[i] != NULL; i++) {
			if (access(hidden[i], F_OK) == 0) {
				add(&a, "--tmpfs");
				add(&a, hidden[i]);
			}
		}
		add(&a, "--proc");
		add(&a, "/proc");
		add(&a, "--dev");
		add(&a, "/dev");
		add(&a, "--size");
		add(&a, TMP_BYTES);
		add(&a, "--tmpfs");
		add(&a, "/tmp");
		for (size_t i = 0; sb != NULL && i < SANDBOX_PATHS &&
		     sb->readable[i] != NULL; i++) {
			add(&a, "--ro-bind");
			add(&a, sb->readable[i]);
			add(&a, sb->readable[i]);
		}
		/* In order: a writable path inside a read-only one (a
		 * tree's build/) is mounted over it. */
		for (size_t i = 0; sb != NULL && i < SANDBOX_PATHS &&
		     sb->writable[i] != NULL; i++) {
			add(&a, "--bind");
			add(&a, sb->writable[i]);
			add(&a, sb->writable[i]);
		}
		if (sb != NULL && sb->tree_at != NULL && sb->readable[0] != NULL)
			add_tree_at(&a, sb, &cwd);
		if (cwd != NULL) {
			add(&a, "--chdir");
			add(&a, cwd);
		}
		add(&a, "--");
	}
	/* Hard limits: a process can lower them, never raise them. */
	add(&a, "prlimit");
	add_num(&a, "--as=", (long long)mem << 20);
	if (o->file_mb < 0)
		add(&a, "--fsize=unlimited");	/* a clone's first pack */
	else
		add_num(&a, "--fsize=", (long long)file << 20);
	add(&a, "--core=0");
	add(&a, "--");
	for (size_t i = 0; argv[i] != NULL; i++)
		add(&a, argv[i]);
	if (a.full) {
		errf(err, errlen, "sandbox command line too long (%s)", argv[0]);
		return -1;
	}
	return 0;
}

/* ---- disk use of the writable paths, while a program writes ---- */

static __thread long long walk_sum;

static int walk_add(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	(void)path;
	(void)flag;
	(void)ftw;
	walk_sum += (long long)sb->st_blocks * 512;
	return 0;
}

long long sandbox_disk_usage(const struct sandbox *sb)
{
	long long total = 0;
	size_t n = sb != NULL && sb->measured > 0 ? (size_t)sb->measured
						   : SANDBOX_PATHS;

	for (size_t i = 0; sb != NULL && i < n && i < SANDBOX_PATHS &&
	     sb->writable[i] != NULL; i++) {
		walk_sum = 0;
		/* FTW_PHYS: a symlink is counted, not followed; FTW_MOUNT:
		 * nothing mounted below is. */
		nftw(sb->writable[i], walk_add, 32, FTW_PHYS | FTW_MOUNT);
		total += walk_sum;
	}
	return total;
}
