/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * buildcache.c - owns the disk budget of the build root ([build]
 * cache_max_gb): the unpacked release trees (src/<sha>), the cached clones
 * (git/<hash>.git) and their worktrees (git/<hash>.git.wt/<target>.<n>)
 * are evicted least recently used first until what they hold fits. Each
 * is in use while its lock file is locked (build.c, gitsrc.c lock them
 * and touch the lock at each use, which is what "recently" means here);
 * one in use is never evicted. A clone goes only with all its worktrees.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "build/build.h"

#define MAX_ENTRIES 512

struct entry {
	char path[PATH_MAX];	/* what goes */
	char lock[PATH_MAX];	/* held while in use */
	time_t used;		/* the lock file's mtime */
	long long bytes;
	int clone;		/* a clone: its worktrees go with it */
};

static __thread long long walk_bytes;

static int walk_add(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	(void)path;
	(void)flag;
	(void)ftw;
	walk_bytes += (long long)sb->st_blocks * 512;
	return 0;
}

static long long du(const char *path)
{
	walk_bytes = 0;
	nftw(path, walk_add, 32, FTW_PHYS | FTW_MOUNT);
	return walk_bytes;
}

static void add_entry(struct entry *v, size_t *n, const char *path,
		      const char *lock, int clone)
{
	struct stat sb;

	if (*n >= MAX_ENTRIES || stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return;
	snprintf(v[*n].path, sizeof(v[*n].path), "%s", path);
	snprintf(v[*n].lock, sizeof(v[*n].lock), "%s", lock);
	v[*n].used = stat(lock, &sb) == 0 ? sb.st_mtime : 0;
	v[*n].bytes = du(path);
	v[*n].clone = clone;
	(*n)++;
}

/* Every "<dir>/<name>" directory with a "<dir>/<name>.lock" beside it. */
static void scan(struct entry *v, size_t *n, const char *dir, int clones)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[PATH_MAX], lock[PATH_MAX], wt[PATH_MAX];
		size_t len = strlen(e->d_name);

		if (e->d_name[0] == '.' || (len > 5 &&
		    strcmp(e->d_name + len - 5, ".lock") == 0) ||
		    (len > 3 && strcmp(e->d_name + len - 3, ".wt") == 0) ||
		    (len > 4 && strcmp(e->d_name + len - 4, ".tmp") == 0))
			continue;
		if (pathf(path, sizeof(path), "%s/%s", dir, e->d_name) < 0 ||
		    pathf(lock, sizeof(lock), "%s.lock", path) < 0)
			continue;
		add_entry(v, n, path, lock, clones);
		if (clones && pathf(wt, sizeof(wt), "%s.wt", path) == 0)
			scan(v, n, wt, 0);
	}
	closedir(d);
}

static int by_use(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->used < y->used ? -1 : x->used > y->used;
}

/* Takes path's lock without waiting: its fd, or -1 if it is in use. */
static int try_lock(const char *lock)
{
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A clone goes only when none of its worktrees is in use: their locks,
 * all taken, into fds (closed by the caller). -1 if one is busy. */
static int lock_worktrees(const char *clone, int *fds, size_t max, size_t *nfds)
{
	char wt[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int rc = 0;

	*nfds = 0;
	if (pathf(wt, sizeof(wt), "%s.wt", clone) < 0)
		return -1;
	d = opendir(wt);
	if (d == NULL)
		return 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char lock[PATH_MAX];
		size_t len = strlen(e->d_name);

		if (len <= 5 || strcmp(e->d_name + len - 5, ".lock") != 0)
			continue;
		if (*nfds >= max || pathf(lock, sizeof(lock), "%s/%s", wt,
					  e->d_name) < 0 ||
		    (fds[*nfds] = try_lock(lock)) < 0)
			rc = -1;
		else
			(*nfds)++;
	}
	closedir(d);
	return rc;
}

long long build_cache_evict(const char *root, long long max_bytes, FILE *log)
{
	struct entry *v = calloc(MAX_ENTRIES, sizeof(*v));
	char dir[PATH_MAX];
	long long total = 0, freed = 0;
	size_t n = 0;

	if (v == NULL || max_bytes <= 0) {
		free(v);
		return 0;
	}
	if (pathf(dir, sizeof(dir), "%s/src", root) == 0)
		scan(v, &n, dir, 0);
	if (pathf(dir, sizeof(dir), "%s/git", root) == 0)
		scan(v, &n, dir, 1);
	for (size_t i = 0; i < n; i++)
		total += v[i].bytes;
	qsort(v, n, sizeof(*v), by_use);
	for (size_t i = 0; i < n && total > max_bytes; i++) {
		int fds[64], fd;
		size_t nfds = 0;

		if (access(v[i].path, F_OK) != 0)
			continue;	/* went with its clone */
		fd = try_lock(v[i].lock);
		if (fd < 0)
			continue;	/* in use */
		if (v[i].clone && lock_worktrees(v[i].path, fds, 64, &nfds) < 0) {
			for (size_t k = 0; k < nfds; k++)
				close(fds[k]);
			close(fd);
			continue;
		}
		if (log != NULL)
			fprintf(log, "build: evicting %s (%lld MiB, least recently"
				" used; [build] cache_max_gb)\n", v[i].path,
				v[i].bytes >> 20);
		rm_rf(v[i].path);
		if (v[i].clone) {
			char wt[PATH_MAX];

			/* Its worktrees' sizes are entries of their own. */
			for (size_t k = 0; k < n; k++) {
				size_t pl = strlen(v[i].path);

				if (strncmp(v[k].path, v[i].path, pl) == 0 &&
				    strncmp(v[k].path + pl, ".wt/", 4) == 0) {
					total -= v[k].bytes;
					freed += v[k].bytes;
					v[k].bytes = 0;
				}
			}
			if (pathf(wt, sizeof(wt), "%s.wt", v[i].path) == 0)
				rm_rf(wt);
		}
		total -= v[i].bytes;
		freed += v[i].bytes;
		for (size_t k = 0; k < nfds; k++)
			close(fds[k]);
		close(fd);
	}
	free(v);
	return freed;
}
