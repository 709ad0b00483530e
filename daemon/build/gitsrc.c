/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gitsrc.c - rcs built from a git tree (the stable-rc tree's branch at the
 * rc, or a commit): one cached bare clone per tree under
 * <build root>/git/<hash of the URL>.git, fetched incrementally (only the
 * objects the clone lacks cross the wire), and one worktree per target
 * kept between builds, so that the next commit (the next rc, a bisection
 * step) rewrites only the files that differ and kbuild rebuilds only what
 * they touch. Every git command is the real git, run from an argv by
 * build.c's build_run (no shell, own process group, cancellable, timed),
 * with a fixed environment: no system or user configuration, no prompt,
 * and only the git, http and https transports.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "artifact/artifact.h"
#include "build/build.h"
#include "build_internal.h"

#define GIT_OUT_MAX (32u << 20)	/* what one git command may print to us */

int gitsrc_is_commit(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!isdigit((unsigned char)s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
			return 0;
	return i == 40;
}

int gitsrc_url_check(const char *url, char *err, size_t errlen)
{
	const char *p, *host;
	size_t n = strlen(url);

	if (n > 2000) {
		errf(err, errlen, "git URL longer than 2000 characters");
		return -1;
	}
	if (strncmp(url, "git://", 6) == 0)
		host = url + 6;
	else if (strncmp(url, "http://", 7) == 0)
		host = url + 7;
	else if (strncmp(url, "https://", 8) == 0)
		host = url + 8;
	else {
		errf(err, errlen, "git URL '%.80s' must be git://, http:// or"
		     " https:// (no file, ssh or ext transports)", url);
		return -1;
	}
	for (p = url; *p != '\0'; p++) {
		if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '\\' ||
		    *p == '"' || *p == '\'') {
			errf(err, errlen, "git URL has a space, quote or control"
			     " character");
			return -1;
		}
	}
	p = strchr(host, '/');
	if (p == NULL || p == host || p[1] == '\0' || *host == '-' ||
	    memchr(host, '@', (size_t)(p - host)) != NULL) {
		errf(err, errlen, "git URL '%.80s' needs a host (without user"
		     " information) and a path", url);
		return -1;
	}
	return 0;
}

int gitsrc_branch_check(const char *b, char *err, size_t errlen)
{
	size_t n = strlen(b);

	if (n == 0 || n > 100 || !isalnum((unsigned char)b[0]) ||
	    strstr(b, "..") != NULL || strstr(b, "//") != NULL ||
	    strstr(b, "@{") != NULL || b[n - 1] == '/' || b[n - 1] == '.' ||
	    (n >= 5 && strcmp(b + n - 5, ".lock") == 0))
		goto bad;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)b[i]) && strchr("._/-", b[i]) == NULL)
			goto bad;
	return 0;
bad:
	errf(err, errlen, "branch '%.100s' is not a plain branch name (letters,"
	     " digits, . _ / -; no '..', no leading '-')", b);
	return -1;
}

/* git's environment: nothing from the machine's or a user's git
 * configuration, no credential prompt, only network transports. */
static void git_env(char *env[], char storage[][PATH_MAX + 32],
		    const struct build_options *o)
{
	const char *path = getenv("PATH");
	size_t i = 0;

	snprintf(storage[0], sizeof(storage[0]), "PATH=%s",
		 path != NULL ? path : "/usr/bin:/bin");
	env[i++] = storage[0];
	snprintf(storage[1], sizeof(storage[1]), "HOME=%s", o->root);
	env[i++] = storage[1];
	env[i++] = "GIT_CONFIG_NOSYSTEM=1";
	snprintf(storage[2], sizeof(storage[2]), "GIT_CONFIG_GLOBAL=%s",
		 o->git_config != NULL && o->git_config[0] != '\0'
		 ? o->git_config : "/dev/null");
	env[i++] = storage[2];
	env[i++] = "GIT_TERMINAL_PROMPT=0";
	env[i++] = "GIT_ASKPASS=/bin/false";
	env[i++] = "GIT_ALLOW_PROTOCOL=git:http:https";
	env[i++] = "LC_ALL=C";
	env[i++] = "TZ=UTC";
	env[i] = NULL;
}

/* What every git command is told first: no hooks, no fsmonitor or other
 * program a repository's configuration could name, no redirects (they
 * could leave the allowed origins), no protocol but the allowed ones. */
static const char *const git_safe[] = {
	"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
	"-c", "core.sshCommand=false", "-c", "http.followRedirects=false",
	"-c", "protocol.allow=never", "-c", "protocol.https.allow=always",
	"-c", "protocol.http.allow=always", "-c", "protocol.git.allow=always",
	"-c", "credential.helper=", "-c", "uploadpack.packObjectsHook=",
	NULL };

/* Runs git with argv (argv[0] is "git") in sb (git_config readable too),
 * its output into logfd; 0 if it exited 0, the exit status if not, -1
 * with err if it could not run. */
static int git_in(const char *const argv[], const struct sandbox *sb,
		  int logfd, const struct build_options *o, double deadline,
		  char *err, size_t errlen)
{
	char store[3][PATH_MAX + 32];
	char *env[12];
	const char *full[128];
	struct sandbox s = { { NULL }, { NULL }, 0, 0, NULL };
	struct build_options go = *o;
	size_t n = 0, k;

	if (sb != NULL)
		s = *sb;
	full[n++] = argv[0];
	for (k = 0; git_safe[k] != NULL; k++)
		full[n++] = git_safe[k];
	for (k = 1; argv[k] != NULL && n < 127; k++)
		full[n++] = argv[k];
	full[n] = NULL;
	if (o->git_config != NULL && o->git_config[0] != '\0') {
		for (k = 0; k + 1 < SANDBOX_PATHS && s.readable[k] != NULL; k++)
			;
		s.readable[k] = o->git_config;
	}
	go.sandbox = &s;
	if (s.network)	/* a clone's first pack is one big file */
		go.file_mb = o->fetch_mb > 0 ? o->fetch_mb : -1;
	if (s.measured == 0)
		go.disk_mb = 0;		/* only a worktree is measured */
	git_env(env, store, o);
	return build_run(full, NULL, env, logfd, &go, deadline, err, errlen);
}

/* git reading gitdir, nothing else. */
static int git(const char *const argv[], const char *gitdir, int logfd,
	       const struct build_options *o, double deadline, char *err,
	       size_t errlen)
{
	struct sandbox sb = { { gitdir }, { NULL }, 0, 0, NULL };

	return git_in(argv, &sb, logfd, o, deadline, err, errlen);
}

/* http.curloptResolve for url: git's own connections obey [fetch]
 * allow_networks like libcurl's in rcgated (the address is checked here
 * and pinned). git:// URLs (only if an allowlist names them) are checked,
 * not pinned. 0, or -1 with err. */
static int git_pin(const char *url, char *opt, size_t len, char *err,
		   size_t errlen)
{
	char host[256], pin[400];
	const char *h = strstr(url, "://") + 3, *colon;
	int port = strncmp(url, "https:", 6) == 0 ? 443
		 : strncmp(url, "http:", 5) == 0 ? 80 : 9418;

	if (url_origin_host(url, host, sizeof(host)) < 0) {
		errf(err, errlen, "no host in %.100s", url);
		return -1;
	}
	colon = h + strlen(host);
	if (*colon == ':') {
		char *end;
		long p = strtol(colon + 1, &end, 10);

		if (p <= 0 || p > 65535 || (*end != '/' && *end != '\0')) {
			errf(err, errlen, "bad port in %.100s", url);
			return -1;
		}
		port = (int)p;
	}
	if (fetch_pin_host(host, port, pin, sizeof(pin), err, errlen) < 0)
		return -1;
	snprintf(opt, len, "http.curloptResolve=%s", pin);
	return 0;
}

int gitsrc_pin_check(const char *url, char *err, size_t errlen)
{
	char pin[400];

	if (gitsrc_url_check(url, err, errlen) < 0)
		return -1;
	return git_pin(url, pin, sizeof(pin), err, errlen);
}

/* Runs git and returns what it printed (NUL-terminated, caller frees), or
 * NULL with err (exit status in *status when it ran). */
static char *git_out(const char *const argv[], const char *gitdir,
		     const struct build_options *o,
		     double deadline, int *status, char *err, size_t errlen)
{
	char *buf = NULL;
	struct stat sb;
	int fd = open(o->root, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	int st;

	*status = -1;
	if (fd < 0) {
		errf(err, errlen, "temporary file in %s: %s", o->root, strerror(errno));
		return NULL;
	}
	{
		/* The cap holds while git writes (SIGXFSZ stops it), not
		 * after it has filled the disk. */
		struct build_options capped = *o;

		capped.file_mb = GIT_OUT_MAX >> 20;
		st = git(argv, gitdir, fd, &capped, deadline, err, errlen);
	}
	*status = st;
	if (st != 0) {
		if (st > 0)
			errf(err, errlen, "git %s exited with %d", argv[1], st);
		goto out;
	}
	if (fstat(fd, &sb) < 0 || (size_t)sb.st_size > GIT_OUT_MAX) {
		errf(err, errlen, "git %s printed too much", argv[1]);
		goto out;
	}
	buf = malloc((size_t)sb.st_size + 1);
	if (buf == NULL ||
	    pread(fd, buf, (size_t)sb.st_size, 0) != (ssize_t)sb.st_size) {
		errf(err, errlen, "reading git %s's output", argv[1]);
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[sb.st_size] = '\0';
out:
	close(fd);
	return buf;
}

char *gitsrc_git_out(const char *gitdir, const char *const args[],
		     const struct build_options *o, char *err, size_t errlen)
{
	const char *argv[96];
	char gd[PATH_MAX + 16];
	size_t n = 0;
	int status;

	snprintf(gd, sizeof(gd), "--git-dir=%s", gitdir);
	argv[n++] = "git";
	argv[n++] = gd;
	for (size_t i = 0; args[i] != NULL && n < 95; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return git_out(argv, gitdir, o, now_monotonic() + 600, &status, err,
		       errlen);
}

/* Resolves rev in gitdir to a commit id; 0, 1 if it is not there, -1. */
static int resolve(const char *gitdir, const char *rev,
		   const struct build_options *o, char commit[41], char *err,
		   size_t errlen)
{
	char gd[PATH_MAX + 16], spec[300];
	const char *argv[] = { "git", gd, "rev-parse", "--quiet", "--verify",
			       spec, NULL };
	char *out;
	int status;

	snprintf(gd, sizeof(gd), "--git-dir=%s", gitdir);
	snprintf(spec, sizeof(spec), "%s^{commit}", rev);
	out = git_out(argv, gitdir, o, now_monotonic() + 60, &status, err,
		      errlen);
	if (out == NULL)
		return status > 0 ? 1 : -1;
	snprintf(commit, 41, "%.40s", out);
	free(out);
	if (!gitsrc_is_commit(commit)) {
		errf(err, errlen, "git rev-parse %s gave no commit id", rev);
		return -1;
	}
	return 0;
}

/* The bytes of the clone's packs: what a fetch adds (git keeps what it
 * fetches packed). */
static long long pack_bytes(const char *gitdir)
{
	char path[PATH_MAX];
	long long sum = 0;
	struct dirent *e;
	DIR *d;

	if (pathf(path, sizeof(path), "%s/objects/pack", gitdir) < 0 ||
	    (d = opendir(path)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		struct stat sb;

		if (e->d_name[0] != '.' && fstatat(dirfd(d), e->d_name, &sb, 0) == 0)
			sum += sb.st_size;
	}
	closedir(d);
	return sum;
}

/* After a fetch that failed: the packs it left half-written go, and when
 * one had reached [build] fetch_max_mb that is what err says. */
static void fetch_failed(const char *gitdir, const struct build_options *o,
			 const char *url, char *err, size_t errlen)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	long long biggest = 0;
	struct dirent *e;
	DIR *d;

	if (pathf(path, sizeof(path), "%s/objects/pack", gitdir) < 0 ||
	    (d = opendir(path)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		struct stat sb;

		if (strncmp(e->d_name, "tmp_", 4) != 0 ||
		    fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
		    pathf(tmp, sizeof(tmp), "%s/%s", path, e->d_name) < 0)
			continue;
		if (sb.st_size > biggest)
			biggest = sb.st_size;
		unlink(tmp);
	}
	closedir(d);
	if (o->fetch_mb > 0 && (biggest >= (long long)o->fetch_mb << 20 ||
				strstr(err, "files passed") != NULL))
		errf(err, errlen, "git fetch %s stopped: it wrote more than"
		     " [build] fetch_max_mb (%ld MiB)", url, o->fetch_mb);
}

int gitsrc_clone_dir(const char *root, const char *url, char *out, size_t len)
{
	char key[65];

	sha256_hex(url, strlen(url), key);
	return pathf(out, len, "%s/git/%.16s.git", root, key);
}

/* The cached clone of url (made empty if there is none), locked: one
 * fetch at a time per tree, in this process and any other rcgated
 * sharing the cache. The lock's fd, or -1 with err. */
static int clone_open(const char *url, int logfd, FILE *log,
		      const struct build_options *o, double deadline,
		      char *gitdir, size_t gdlen, char *err, size_t errlen)
{
	char dir[PATH_MAX], lock[PATH_MAX];
	int fd;

	if (pathf(dir, sizeof(dir), "%s/git", o->root) < 0 ||
	    mkdir_p(dir, 0755, err, errlen) < 0 ||
	    gitsrc_clone_dir(o->root, url, gitdir, gdlen) < 0 ||
	    pathf(lock, sizeof(lock), "%s.lock", gitdir) < 0) {
		if (err[0] == '\0')
			errf(err, errlen, "build root path too long");
		return -1;
	}
	fd = lock_file(lock, err, errlen);
	if (fd < 0)
		return -1;
	futimens(fd, NULL);	/* used now: buildcache.c's LRU */
	if (access(gitdir, F_OK) != 0) {
		const char *init[] = { "git", "init", "--quiet", "--bare", gitdir,
				       NULL };
		struct sandbox sb = { { NULL }, { dir }, 0, 0, NULL };

		fprintf(log, "git: new cached clone of %s in %s\n", url, gitdir);
		if (git_in(init, &sb, logfd, o, deadline, err, errlen) != 0) {
			if (err[0] == '\0')
				errf(err, errlen, "git init %s failed", gitdir);
			rm_rf(gitdir);
			close(fd);
			return -1;
		}
	}
	return fd;
}

int gitsrc_fetch(const char *url, const char *ref, int logfd,
		 const struct build_options *o, char *gitdir, size_t gdlen,
		 char commit[41], char *err, size_t errlen)
{
	char gd[PATH_MAX + 16], remote[300], pin[450];
	struct sandbox net = { { NULL }, { gitdir }, 1, 0, NULL };
	struct build_options fo = *o;
	double deadline = now_monotonic() +
			  (double)(o->timeout > 0 ? o->timeout : 3600);
	long long before, after;
	int fd, rc = -1, st;
	FILE *log = fdopen(dup(logfd), "a");

	if (log == NULL) {
		errf(err, errlen, "log: %s", strerror(errno));
		return -1;
	}
	setvbuf(log, NULL, _IONBF, 0);
	if (gitsrc_url_check(url, err, errlen) < 0 ||
	    (!gitsrc_is_commit(ref) && gitsrc_branch_check(ref, err, errlen) < 0))
		goto out_log;
	fd = clone_open(url, logfd, log, o, deadline, gitdir, gdlen, err,
			errlen);
	if (fd < 0)
		goto out_log;
	snprintf(gd, sizeof(gd), "--git-dir=%s", gitdir);
	/* A commit id names its content: one the clone has is what any
	 * fetch would bring (a bisection's steps and its revert check, the
	 * upstream commit of a second branch's culprit). Nothing is fetched
	 * and no connection is made. */
	if (gitsrc_is_commit(ref) &&
	    resolve(gitdir, ref, o, commit, err, errlen) == 0) {
		fprintf(log, "git: %s is in the cached clone already: nothing"
			" fetched\n", ref);
		rc = 1;
		goto out;
	}
	err[0] = '\0';
	before = pack_bytes(gitdir);
	if (o->fetch_mb > 0) {
		/* The cap on what the fetch adds: git's pack cannot pass it
		 * (git_in's file size limit), and the clone as a whole is
		 * checked while git writes (build_run). */
		net.measured = 1;
		fo.disk_mb = (long)(sandbox_disk_usage(&net) >> 20) + o->fetch_mb;
	}
	/* Checked and pinned now, after the lock: the fetch connects to
	 * this address only. */
	if (git_pin(url, pin, sizeof(pin), err, errlen) < 0)
		goto out;
	if (strncmp(url, "git://", 6) == 0)
		snprintf(pin, sizeof(pin), "http.curloptResolve=");
	{
		/* Every branch and tag: the next rc of any branch, and a
		 * bisection's baseline, are then already here. */
		/* unpackLimit=1: what arrives stays one pack, never loose
		 * objects, so its size is what the fetch added. */
		const char *fetch[] = { "git", gd, "-c", "fetch.unpackLimit=1",
			"-c", pin, "fetch", "--quiet", "--prune", "--no-auto-gc",
			url, "+refs/heads/*:refs/remotes/origin/*",
			"+refs/tags/*:refs/tags/*", NULL };

		fprintf(log, "git: fetching %s\n", url);
		st = git_in(fetch, &net, logfd, &fo, deadline, err, errlen);
		if (st != 0) {
			if (st > 0)
				errf(err, errlen, "git fetch %s exited with %d (its"
				     " message is in the build log)", url, st);
			fetch_failed(gitdir, o, url, err, errlen);
			goto out;
		}
	}
	if (gitsrc_is_commit(ref)) {
		st = resolve(gitdir, ref, o, commit, err, errlen);
		if (st == 1) {
			/* Not on any branch or tag: ask for it by id. */
			const char *byid[] = { "git", gd, "-c", "fetch.unpackLimit=1",
					       "-c", pin, "fetch", "--quiet",
					       "--no-auto-gc", url, ref, NULL };

			if (git_in(byid, &net, logfd, &fo, deadline, err,
				   errlen) < 0) {
				fetch_failed(gitdir, o, url, err, errlen);
				goto out;
			}
			st = resolve(gitdir, ref, o, commit, err, errlen);
		}
		if (st == 1)
			errf(err, errlen, "commit %s is not in %s", ref, url);
	} else {
		snprintf(remote, sizeof(remote), "refs/remotes/origin/%s", ref);
		st = resolve(gitdir, remote, o, commit, err, errlen);
		if (st == 1)
			errf(err, errlen, "%s has no branch %s", url, ref);
	}
	if (st != 0)
		goto out;
	after = pack_bytes(gitdir);
	fprintf(log, "git: %s at %s: the fetch added %lld KiB to the cached"
		" clone (now %lld KiB)\n", ref, commit, (after - before) >> 10,
		after >> 10);
	rc = 0;
out:
	close(fd);
out_log:
	fclose(log);
	return rc;
}

/* Worktree i of a target: its path, and its lock's fd if it is free
 * (flocked), else -1. */
static int wt_try(const char *wt, const char *name, int i, char *tree,
		  size_t tlen)
{
	char lock[PATH_MAX];
	int fd;

	if (pathf(tree, tlen, "%s/%s.%d", wt, name, i) < 0 ||
	    pathf(lock, sizeof(lock), "%s.lock", tree) < 0)
		return -1;
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* 1 if tree's last checkout was for branch ("<tree>.ref"). */
static int wt_was(const char *tree, const char *branch)
{
	char path[PATH_MAX], *text;
	size_t n;
	int same;

	if (branch == NULL || branch[0] == '\0' ||
	    pathf(path, sizeof(path), "%s.ref", tree) < 0 ||
	    (text = file_read(path, 512, &n, NULL, 0)) == NULL)
		return 0;
	same = strcmp(text, branch) == 0;
	free(text);
	return same;
}

const char *gitsrc_branch_key(const char *version, const char *ref,
			      char *out, size_t len)
{
	struct kversion v;

	if (kversion_parse(version, &v, NULL, 0) == 0)
		snprintf(out, len, "linux-%s", v.branch);
	else
		snprintf(out, len, "%s", ref != NULL ? ref : "");
	return out;
}

/* Worktree i of a target if it last built branch and is free: locked
 * (its fd; tree set), else -1. */
static int wt_try_warm(const char *wt, const char *name, const char *branch,
		       int i, char *tree, size_t tlen)
{
	char dotgit[PATH_MAX + 8];

	if (pathf(tree, tlen, "%s/%s.%d", wt, name, i) < 0)
		return -1;
	snprintf(dotgit, sizeof(dotgit), "%s/.git", tree);
	if (access(dotgit, F_OK) != 0 || !wt_was(tree, branch))
		return -1;
	return wt_try(wt, name, i, tree, tlen);
}

int gitsrc_worktrees_warm(const char *gitdir, const char *name,
			  const char *branch)
{
	char wt[PATH_MAX], tree[PATH_MAX];
	int n = 0;

	if (pathf(wt, sizeof(wt), "%s.wt", gitdir) < 0)
		return 0;
	for (int i = 0; i < GITSRC_WORKTREES; i++) {
		int fd = wt_try_warm(wt, name, branch, i, tree, sizeof(tree));

		if (fd >= 0) {
			n++;
			close(fd);
		}
	}
	return n;
}

/* The worktree a build of branch takes, locked (its fd; tree set), or
 * -1: the free one that last built branch (an incremental build of
 * what changed since); else a new one (another branch's objects stay for
 * its next rc); else the free one used longest ago. warm 0: never one
 * that last built branch (a slot for a copy of it). */
static int wt_pick(const char *wt, const char *name, const char *branch,
		   int warm, char *tree, size_t tlen)
{
	char path[PATH_MAX + 8];
	int best = -1, bestfd = -1, rank = 0;
	time_t bestused = 0;

	for (int i = 0; i < GITSRC_WORKTREES; i++) {
		struct stat sb;
		int fd = wt_try(wt, name, i, tree, tlen), r;

		if (fd < 0)
			continue;
		snprintf(path, sizeof(path), "%s/.git", tree);
		r = access(path, F_OK) != 0 ? 2
		  : wt_was(tree, branch) ? 3 * warm : 1;
		if (fstat(fd, &sb) < 0)
			sb.st_mtime = 0;
		if (r > rank || (r == 1 && rank == 1 && sb.st_mtime < bestused)) {
			if (bestfd >= 0)
				close(bestfd);
			best = i;
			bestfd = fd;
			rank = r;
			bestused = sb.st_mtime;
		} else {
			close(fd);
		}
		if (rank == 3)
			break;
	}
	if (best >= 0)
		pathf(tree, tlen, "%s/%s.%d", wt, name, best);
	return bestfd;
}

/* git worktree prune, then add (argv), under the clone's lock, the one
 * gitsrc_fetch holds: a fetch checks every worktree's HEAD, and the one
 * add is making is not valid yet (a fetch beside it failed with "bad
 * object worktrees/x86_64.0/HEAD" when two baselines started at once).
 * add's status (git_in's convention). */
static int wt_add(const char *gitdir, const char *const add[],
		  const struct sandbox *sb, int logfd,
		  const struct build_options *o, double deadline, char *err,
		  size_t errlen)
{
	char lock[PATH_MAX], gd[PATH_MAX + 16];
	const char *prune[] = { "git", gd, "worktree", "prune", NULL };
	int fd, st;

	snprintf(gd, sizeof(gd), "--git-dir=%s", gitdir);
	if (pathf(lock, sizeof(lock), "%s.lock", gitdir) < 0) {
		errf(err, errlen, "clone path too long");
		return -1;
	}
	fd = lock_file(lock, err, errlen);
	if (fd < 0)
		return -1;
	git_in(prune, sb, logfd, o, deadline, err, errlen);
	st = git_in(add, sb, logfd, o, deadline, err, errlen);
	close(fd);
	return st;
}

int gitsrc_checkout(const char *gitdir, const char *commit, const char *name,
		    const char *branch, int logfd,
		    const struct build_options *o, char *tree, size_t tlen,
		    int *lockfd, char *err, size_t errlen)
{
	char wt[PATH_MAX], gd[PATH_MAX + 16], dotgit[PATH_MAX + 8],
	     refp[PATH_MAX + 8];
	struct sandbox sb;
	double deadline = now_monotonic() +
			  (double)(o->timeout > 0 ? o->timeout : 3600);
	int fd = -1, st;

	*lockfd = -1;
	snprintf(gd, sizeof(gd), "--git-dir=%s", gitdir);
	if (pathf(wt, sizeof(wt), "%s.wt", gitdir) < 0 ||
	    mkdir_p(wt, 0755, err, errlen) < 0)
		return -1;
	if (pathf(tree, tlen, "%s/%s.%d", wt, name, GITSRC_WORKTREES) < 0) {
		errf(err, errlen, "worktree path too long");
		return -1;
	}
	/* Another rcgated sharing the cache, or a second build of the
	 * target at once, takes another. */
	fd = wt_pick(wt, name, branch, 1, tree, tlen);
	if (fd < 0) {
		errf(err, errlen, "no free worktree for %s in %s", name, wt);
		return -1;
	}
	futimens(fd, NULL);	/* used now: buildcache.c's LRU */
	/* Whose objects build/ holds, from here on: a checkout that fails
	 * half-way leaves it said, and the next build of the branch only
	 * rebuilds more. */
	snprintf(refp, sizeof(refp), "%s.ref", tree);
	if (branch != NULL && branch[0] != '\0')
		file_write_atomic(refp, branch, strlen(branch), NULL, 0);
	else
		unlink(refp);
	snprintf(dotgit, sizeof(dotgit), "%s/.git", tree);
	/* The worktree (measured against [build] tree_max_mb) and the
	 * clone's index and worktree records; the other worktrees visible,
	 * read-only: git worktree prune drops the records of those it
	 * cannot see. */
	sb = (struct sandbox){ { wt }, { tree, gitdir }, 0, 1, NULL };
	if (access(dotgit, F_OK) != 0) {
		const char *add[] = { "git", gd, "worktree", "add", "--quiet",
				      "--detach", "--force", tree, commit, NULL };

		rm_rf(tree);
		/* An empty directory to bind; git worktree add fills it. */
		if (mkdir(tree, 0755) < 0) {
			errf(err, errlen, "mkdir %s: %s", tree, strerror(errno));
			close(fd);
			return -1;
		}
		st = wt_add(gitdir, add, &sb, logfd, o, deadline, err, errlen);
	} else {
		const char *co[] = { "git", "-C", tree, "checkout", "--quiet",
				     "--detach", "--force", commit, NULL };
		/* Untracked files go, except kbuild's output directory:
		 * its objects make the next build incremental. */
		const char *clean[] = { "git", "-C", tree, "clean", "-ffdxq",
					"-e", "/build/", NULL };

		st = git_in(co, &sb, logfd, o, deadline, err, errlen);
		if (st == 0)
			st = git_in(clean, &sb, logfd, o, deadline, err, errlen);
	}
	if (st != 0) {
		if (st > 0)
			errf(err, errlen, "git could not check out %s in %s (exit"
			     " %d)", commit, tree, st);
		close(fd);
		return -1;
	}
	*lockfd = fd;
	return 0;
}

/* The commit a worktree has checked out: its .git file names its record
 * in the clone (gitdir/worktrees/<id>), whose HEAD is detached. 0 or -1. */
static int wt_head(const char *gitdir, const char *tree, char commit[41])
{
	char path[PATH_MAX], rec[PATH_MAX], *text, *nl;
	size_t n, gl = strlen(gitdir);
	int rc = -1;

	if (pathf(path, sizeof(path), "%s/.git", tree) < 0 ||
	    (text = file_read(path, 4096, &n, NULL, 0)) == NULL)
		return -1;
	nl = strchr(text, '\n');
	if (nl != NULL)
		*nl = '\0';
	/* "gitdir: <gitdir>/worktrees/<id>", nothing else, no way out. */
	if (strncmp(text, "gitdir: ", 8) == 0 &&
	    strncmp(text + 8, gitdir, gl) == 0 &&
	    strncmp(text + 8 + gl, "/worktrees/", 11) == 0 &&
	    strstr(text + 8 + gl, "/..") == NULL &&
	    pathf(rec, sizeof(rec), "%s/HEAD", text + 8) == 0) {
		char *head = file_read(rec, 128, &n, NULL, 0);

		if (head != NULL && n >= 40) {
			snprintf(commit, 41, "%.40s", head);
			rc = gitsrc_is_commit(commit) ? 0 : -1;
		}
		free(head);
	}
	free(text);
	return rc;
}

int gitsrc_worktree_seed(const char *gitdir, const char *name,
			 const char *branch, const struct build_options *o,
			 char *err, size_t errlen)
{
	char wt[PATH_MAX], from[PATH_MAX], to[PATH_MAX], gd[PATH_MAX + 16],
	     refp[PATH_MAX + 8], commit[41];
	double deadline = now_monotonic() +
			  (double)(o->timeout > 0 ? o->timeout : 3600);
	struct sandbox sb;
	int src = -1, dst = -1, devnull = -1, rc = -1;

	if (branch == NULL || branch[0] == '\0' ||
	    pathf(wt, sizeof(wt), "%s.wt", gitdir) < 0)
		return 0;
	for (int i = 0; i < GITSRC_WORKTREES && src < 0; i++)
		src = wt_try_warm(wt, name, branch, i, from, sizeof(from));
	if (src < 0)
		return 0;		/* none warm and free to copy */
	dst = wt_pick(wt, name, branch, 0, to, sizeof(to));
	if (dst < 0 || wt_head(gitdir, from, commit) < 0) {
		rc = 0;
		goto out;
	}
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	futimens(dst, NULL);
	snprintf(refp, sizeof(refp), "%s.ref", to);
	unlink(refp);		/* warm only once the copy is whole */
	rm_rf(to);
	if (devnull < 0 || mkdir(to, 0755) < 0) {
		errf(err, errlen, "mkdir %s: %s", to, strerror(errno));
		goto out;
	}
	snprintf(gd, sizeof(gd), "--git-dir=%s", gitdir);
	sb = (struct sandbox){ { wt }, { to, gitdir }, 0, 1, NULL };
	{
		const char *add[] = { "git", gd, "worktree", "add", "--quiet",
				      "--no-checkout", "--detach", "--force", to,
				      commit, NULL };
		/* The index from HEAD, then refreshed from the copied files
		 * (hashed once): the next checkout rewrites only what differs. */
		const char *reset[] = { "git", "-C", to, "reset", "--quiet", NULL };
		int st;

		st = wt_add(gitdir, add, &sb, devnull, o, deadline, err, errlen);
		if (st == 0)
			st = tree_copy_bytes(from, to, ".git", deadline, o, err,
					    errlen);
		if (st == 0)
			st = git_in(reset, &sb, devnull, o, deadline, err, errlen);
		if (st != 0) {
			if (st > 0)
				errf(err, errlen, "git could not make %s a worktree"
				     " of %.12s (exit %d)", to, commit, st);
			rm_rf(to);
			goto out;
		}
	}
	if (file_write_atomic(refp, branch, strlen(branch), err, errlen) < 0)
		goto out;
	rc = 1;
out:
	if (devnull >= 0)
		close(devnull);
	if (dst >= 0)
		close(dst);
	close(src);
	return rc;
}

int gitsrc_revert(const char *gitdir, const char *tree, const char *commit,
		  int logfd, const struct build_options *o, char *err,
		  size_t errlen)
{
	struct sandbox sb = { { NULL }, { tree, gitdir }, 0, 1, NULL };
	double deadline = now_monotonic() +
			  (double)(o->timeout > 0 ? o->timeout : 3600);
	const char *rv[] = { "git", "-C", tree, "revert", "--no-commit",
			     commit, NULL };
	const char *abort_[] = { "git", "-C", tree, "revert", "--abort", NULL };
	const char *reset[] = { "git", "-C", tree, "reset", "--quiet", "--hard",
				NULL };
	int st;

	if (!gitsrc_is_commit(commit)) {
		errf(err, errlen, "not a commit id: %.50s", commit);
		return -1;
	}
	st = git_in(rv, &sb, logfd, o, deadline, err, errlen);
	if (st <= 0)
		return st;
	/* Nothing of the attempt is left for the next checkout. */
	git_in(abort_, &sb, logfd, o, deadline, err, errlen);
	if (git_in(reset, &sb, logfd, o, deadline, err, errlen) < 0)
		return -1;
	return 1;
}

int gitsrc_commit_version(const char *gitdir, const char *commit,
			  const struct build_options *o, char *out,
			  size_t outlen, char *err, size_t errlen)
{
	char spec[64];
	const char *args[] = { "show", spec, NULL };
	char *text;
	int rc;

	out[0] = '\0';
	snprintf(spec, sizeof(spec), "%.40s:Makefile", commit);
	text = gitsrc_git_out(gitdir, args, o, err, errlen);
	if (text == NULL)
		return -1;
	rc = gitsrc_makefile_version_text(text, out, outlen);
	free(text);
	if (rc < 0)
		errf(err, errlen, "its Makefile has no VERSION and PATCHLEVEL");
	return rc;
}

int gitsrc_makefile_version_text(const char *text, char *out, size_t outlen)
{
	char v[4][32] = { "", "", "", "" };
	static const char *const keys[] = { "VERSION", "PATCHLEVEL", "SUBLEVEL",
					    "EXTRAVERSION" };
	const char *p;

	out[0] = '\0';
	/* The first lines: "VERSION = 6", ..., "EXTRAVERSION = -rc1". */
	for (p = text; p != NULL && *p != '\0';) {
		const char *eol = strchr(p, '\n');

		for (int k = 0; k < 4; k++) {
			size_t kl = strlen(keys[k]);

			if (strncmp(p, keys[k], kl) == 0 && p[kl] == ' ' &&
			    strncmp(p + kl, " = ", 3) == 0 && v[k][0] == '\0') {
				const char *val = p + kl + 3;
				size_t n = eol != NULL ? (size_t)(eol - val) : strlen(val);

				snprintf(v[k], sizeof(v[k]), "%.*s", (int)n, val);
			}
		}
		p = eol != NULL ? eol + 1 : NULL;
	}
	if (v[0][0] == '\0' || v[1][0] == '\0')
		return -1;
	if (v[2][0] != '\0' && strcmp(v[2], "0") != 0)
		snprintf(out, outlen, "%s.%s.%s%s", v[0], v[1], v[2], v[3]);
	else
		snprintf(out, outlen, "%s.%s%s", v[0], v[1], v[3]);
	return 0;
}

/* A 40-hex id at p (lowercase), or 0. */
static int hex40(const char *p)
{
	for (int i = 0; i < 40; i++)
		if (!isxdigit((unsigned char)p[i]) || isupper((unsigned char)p[i]))
			return 0;
	return !isxdigit((unsigned char)p[40]);
}

int gitsrc_upstream_id(const char *message, char id[41])
{
	static const char *const forms[] = {
		"commit ",		/* "commit X upstream." (stable's own) */
		"[ Upstream commit ",	/* "[ Upstream commit X ]" */
		"(cherry picked from commit ",
	};

	for (const char *line = message; line != NULL && *line != '\0';) {
		const char *eol = strchr(line, '\n'), *p = line;

		while (*p == ' ' || *p == '\t')
			p++;
		for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
			size_t fl = strlen(forms[f]);

			if (strncasecmp(p, forms[f], fl) != 0 || !hex40(p + fl))
				continue;
			/* The first form only with "upstream" after the id. */
			if (f == 0 && strncmp(p + fl + 40, " upstream", 9) != 0)
				continue;
			memcpy(id, p + fl, 40);
			id[40] = '\0';
			return 0;
		}
		line = eol != NULL ? eol + 1 : NULL;
	}
	id[0] = '\0';
	return -1;
}
