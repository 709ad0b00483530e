/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgroup.c - owns the kernel's ceiling on a whole build: a cgroup v2
 * subtree per build (build-<slot>, the build token's slot) under the
 * cgroup rcgated runs in, with pids.max, memory.max and cpu.weight
 * ([build] cgroup_pids_max, cgroup_memory_mb, cgroup_cpu_weight), and
 * the spawn that starts a build's programs inside it (clone3 with
 * CLONE_INTO_CGROUP: no window in which a process is outside).
 *
 * rcgated can do this only where its cgroup is delegated to it (systemd's
 * Delegate=yes, as contrib/rcgated.service sets): the directory writable
 * by rcgated. It then moves itself into a leaf of its own (daemon/), as
 * cgroup v2 lets a cgroup with controllers for its children hold no
 * process, and enables for the children the controllers it has. Without
 * a writable cgroup, or without one of the three controllers, the log
 * says so once and builds keep the per-process rlimits alone (sandbox.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/base.h"
#include "build/build.h"

static struct {
	pthread_mutex_t mu;
	int tried;
	char dir[PATH_MAX];	/* ours, delegated; "" none */
	int ok;			/* pids, memory and cpu for the builds */
} cg = { PTHREAD_MUTEX_INITIALIZER, 0, "", 0 };

int cgroup_parse(const char *proc_cgroup, const char *mountinfo, char *out,
		 size_t len)
{
	const char *p = proc_cgroup, *line, *path = NULL, *rest;
	size_t plen = 0, rlen;

	for (; p != NULL && *p != '\0'; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, "0::", 3) == 0) {
			path = p + 3;
			plen = strcspn(path, "\n");
			break;
		}
	if (path == NULL || plen == 0 || path[0] != '/')
		return -1;
	/* mountinfo: id parent major:minor root mountpoint opts... - fstype */
	for (line = mountinfo; line != NULL && *line != '\0';
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char root[PATH_MAX], mnt[PATH_MAX], fstype[32];
		const char *dash = strstr(line, " - ");
		const char *eol = line + strcspn(line, "\n");

		if (dash == NULL || dash > eol ||
		    sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2 ||
		    sscanf(dash + 3, "%31s", fstype) != 1 ||
		    strcmp(fstype, "cgroup2") != 0)
			continue;
		/* A cgroup namespace's root: the path is under it. */
		if (strcmp(root, "/") == 0)
			root[0] = '\0';
		rest = path + strlen(root);
		rlen = plen - strlen(root);
		if (strlen(root) > plen || strncmp(path, root, strlen(root)) != 0 ||
		    (rlen > 0 && rest[0] != '/'))
			continue;
		if (rlen == 1)	/* "/": the mount itself */
			rlen = 0;
		if (snprintf(out, len, "%s%.*s", mnt, (int)rlen, rest) >= (int)len)
			return -1;
		return rlen == 0;
	}
	return -1;
}

/* Writes s into dir/name: 0, or -1 with errno. */
static int put(const char *dir, const char *name, const char *s)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (pathf(path, sizeof(path), "%s/%s", dir, name) < 0)
		return -1;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Finds our cgroup and takes it over for builds, once (under cg.mu). */
static void discover(void)
{
	static const char *const want[] = { "pids", "memory", "cpu" };
	char *self = file_read("/proc/self/cgroup", 1 << 16, NULL, NULL, 0);
	char *mi = file_read("/proc/self/mountinfo", 1 << 20, NULL, NULL, 0);
	char path[PATH_MAX + 16], *ctl = NULL, missing[64] = "", pid[32];

	int top;

	cg.tried = 1;
	top = self == NULL || mi == NULL ? -1
	      : cgroup_parse(self, mi, cg.dir, sizeof(cg.dir));
	if (top < 0) {
		log_warn("cgroup: no cgroup v2 hierarchy of ours; builds keep"
			 " their per-process rlimits only");
		cg.dir[0] = '\0';
		goto out;
	}
	pathf(path, sizeof(path), "%s/cgroup.subtree_control", cg.dir);
	/* The hierarchy's root is the machine's, even to root. */
	if (top || access(cg.dir, W_OK) != 0 || access(path, W_OK) != 0) {
		log_warn("cgroup: %s is not delegated to rcgated (not writable;"
			 " systemd's Delegate=yes does it); builds keep their"
			 " per-process rlimits only", cg.dir);
		cg.dir[0] = '\0';
		goto out;
	}
	pathf(path, sizeof(path), "%s/cgroup.controllers", cg.dir);
	ctl = file_read(path, 4096, NULL, NULL, 0);
	for (size_t i = 0; i < 3; i++) {
		const char *c = ctl;
		size_t n = strlen(want[i]);

		while (c != NULL && (c = strstr(c, want[i])) != NULL &&
		       ((c != ctl && c[-1] != ' ') || (c[n] != ' ' && c[n] != '\n' &&
							c[n] != '\0')))
			c += n;
		if (c == NULL)
			snprintf(missing + strlen(missing), sizeof(missing) -
				 strlen(missing), " %s", want[i]);
	}
	if (missing[0] != '\0') {
		log_warn("cgroup: %s lacks the controllers%s; builds keep their"
			 " per-process rlimits only", cg.dir, missing);
		cg.dir[0] = '\0';
		goto out;
	}
	/* No process in a cgroup whose children have controllers. */
	pathf(path, sizeof(path), "%s/daemon", cg.dir);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	if ((mkdir(path, 0755) < 0 && errno != EEXIST) ||
	    put(path, "cgroup.procs", pid) < 0 ||
	    put(cg.dir, "cgroup.subtree_control", "+pids +memory +cpu") < 0) {
		log_warn("cgroup: cannot take %s over for builds (%s); builds"
			 " keep their per-process rlimits only", cg.dir,
			 strerror(errno));
		cg.dir[0] = '\0';
		goto out;
	}
	cg.ok = 1;
	log_info("cgroup: builds in %s/build-<slot>", cg.dir);
out:
	free(self);
	free(mi);
	free(ctl);
}

/* Kills what is in the build cgroup dir and removes it (its processes
 * gone within a second, as cgroup.kill's SIGKILL takes them). */
static void remove_build(const char *dir)
{
	if (access(dir, F_OK) != 0)
		return;
	put(dir, "cgroup.kill", "1");
	for (int i = 0; i < 100 && rmdir(dir) < 0 && errno == EBUSY; i++)
		sleep_ms(10);
}

int cgroup_build_open(int slot, const struct cgroup_limits *l,
		      struct build_cgroup *out)
{
	char dir[PATH_MAX], v[32];
	const char *what = NULL;

	out->fd = -1;
	pthread_mutex_lock(&cg.mu);
	if (!cg.tried)
		discover();
	if (!cg.ok) {
		pthread_mutex_unlock(&cg.mu);
		return -1;
	}
	pathf(dir, sizeof(dir), "%s/build-%d", cg.dir, slot);
	pthread_mutex_unlock(&cg.mu);
	remove_build(dir);	/* left by a build of a crashed rcgated */
	if (mkdir(dir, 0755) < 0)
		what = "mkdir";
	snprintf(v, sizeof(v), l->pids_max > 0 ? "%ld" : "max", l->pids_max);
	if (what == NULL && put(dir, "pids.max", v) < 0)
		what = "pids.max";
	if (l->memory_mb > 0)
		snprintf(v, sizeof(v), "%lld", (long long)l->memory_mb << 20);
	else
		snprintf(v, sizeof(v), "max");
	if (what == NULL && (put(dir, "memory.max", v) < 0 ||
			     put(dir, "memory.swap.max", "0") < 0))
		what = "memory.max";
	snprintf(v, sizeof(v), "%ld", l->cpu_weight > 0 ? l->cpu_weight : 100);
	if (what == NULL && put(dir, "cpu.weight", v) < 0)
		what = "cpu.weight";
	if (what == NULL &&
	    (out->fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		what = "open";
	if (what != NULL) {
		log_warn("cgroup: %s: %s: %s; this build keeps its per-process"
			 " rlimits only", dir, what, strerror(errno));
		rmdir(dir);
		return -1;
	}
	out->slot = slot;
	snprintf(out->dir, sizeof(out->dir), "%s", dir);
	return 0;
}

void cgroup_build_close(struct build_cgroup *c)
{
	if (c->fd < 0)
		return;
	close(c->fd);
	c->fd = -1;
	remove_build(c->dir);
}

/* The file PATH finds for name (one with a slash as it is): 0, or -1. */
static int which(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/') != NULL)
		return snprintf(out, len, "%s", name) < (int)len ? 0 : -1;
	for (const char *p = path != NULL ? path : "/usr/bin:/bin"; *p != '\0';) {
		size_t n = strcspn(p, ":");

		if (n > 0 && snprintf(out, len, "%.*s/%s", (int)n, p, name) < (int)len &&
		    access(out, X_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	return -1;
}

pid_t cgroup_spawn(const struct build_cgroup *c, const char *const argv[],
		   char *const env[], const int dups[][2], size_t ndups,
		   const char *cwd, int *errp)
{
	struct clone_args ca;
	char exe[PATH_MAX];
	long pid;
	int null;

	if (which(argv[0], exe, sizeof(exe)) < 0) {
		*errp = ENOENT;
		return -1;
	}
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = (unsigned long long)c->fd;
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0) {
		*errp = errno;
		return -1;
	}
	if (pid > 0)
		return (pid_t)pid;
	/* The child, a copy of this thread only: system calls alone, as
	 * posix_spawn's file actions would do them. */
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (setpgid(0, 0) < 0 || null < 0 || dup2(null, 0) < 0)
		_exit(127);
	for (size_t i = 0; i < ndups; i++)
		if (dup2(dups[i][0], dups[i][1]) < 0)
			_exit(127);
	/* The build sees only what it was given, as build_run's
	 * posix_spawn child does (build.c child_close_rest). */
	{
		int top = 2;

		for (size_t i = 0; i < ndups; i++)
			if (dups[i][1] > top)
				top = dups[i][1];
		for (int fd = 3; fd <= top; fd++) {
			int kept = 0;

			for (size_t i = 0; i < ndups; i++)
				kept |= dups[i][1] == fd;
			if (!kept)
				close(fd);
		}
		if (syscall(SYS_close_range, top + 1, ~0U, 0) < 0)
			_exit(127);
	}
	if (cwd != NULL && chdir(cwd) < 0)
		_exit(127);
	execve(exe, (char *const *)argv, env);
	_exit(127);
}
