/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * build.c - owns kernel builds: the rc's source made into a tree
 * (srctree.c: the release tarball unpacked once per tarball and shared,
 * then, per build, a hard-link copy with the rc's patch applied), the
 * one program runner (build_run) and kbuild out of tree for
 * one target with Debian's cross compiler, ccache and the target's
 * fragment merged on tinyconfig (configs/<target>.config, or the
 * operator's in [build] config_dir). Every command runs from an argv with
 * a fixed environment, never through a shell, in its own process group
 * so a cancel or a timeout stops all of make's children. A build that
 * fails is read by buildlog.c: the source's failure is a result, the
 * machine's an infra error. This is the one interface a remote builder
 * would implement too (build_kernel).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "build/build.h"
#include "build_internal.h"

#define MIN_FREE_BYTES (3ULL << 30)	/* a tree, its objects and slack */
#define LOG_TAIL_BYTES (1 << 20)	/* read for the first error */

extern char **environ;

int build_free_space_ok(const char *dir, char *err, size_t errlen)
{
	struct statvfs vfs;

	if (statvfs(dir, &vfs) == 0 &&
	    (unsigned long long)vfs.f_bavail * vfs.f_frsize < MIN_FREE_BYTES) {
		errf(err, errlen, "no space for a kernel build in %s (%llu MiB"
		     " free, %llu needed)", dir,
		     (unsigned long long)vfs.f_bavail * vfs.f_frsize >> 20,
		     MIN_FREE_BYTES >> 20);
		return -1;
	}
	return 0;
}

/* Up to ms for the child behind pidfd to end (at once when it does); a
 * plain sleep without a pidfd (kernels before 5.3). */
static void child_wait(int pidfd, int ms)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	if (pidfd < 0 || poll(&p, 1, ms) < 0)
		sleep_ms(ms);
}

/* Until pid ends (0 with its status), or is stopped for a cancel, its
 * deadline or its disk use (-1 with err). */
static int build_wait(pid_t pid, int pidfd, const char *name,
		      const struct build_options *o, double deadline,
		      int *statusp, char *err, size_t errlen)
{
	double next_poll = now_monotonic() + 1, next_disk = now_monotonic() + 2;
	int status;

	for (;;) {
		char toobig[96] = "";

		pid_t w = waitpid(pid, &status, WNOHANG);
		const char *why = NULL;

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			errf(err, errlen, "waiting for %s: %s", name, strerror(errno));
			return -1;
		}
		if (o->cancelled != NULL && o->cancelled(o->cls))
			why = "cancelled";
		else if (now_monotonic() > deadline)
			why = "timed out";
		else if (o->disk_mb > 0 && now_monotonic() >= next_disk) {
			/* Checked while it writes, not after: a bomb stops
			 * within seconds of crossing the cap. */
			long long used = sandbox_disk_usage(o->sandbox);

			if (used > (long long)o->disk_mb << 20) {
				snprintf(toobig, sizeof(toobig), "stopped: its"
					 " files passed %ld MiB", o->disk_mb);
				why = toobig;
			}
			next_disk = now_monotonic() + 3;
		}
		if (why != NULL) {
			kill(-pid, SIGTERM);
			for (int i = 0; i < 50 && waitpid(pid, &status, WNOHANG) == 0; i++)
				child_wait(pidfd, 100);
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			errf(err, errlen, "build %s (%s)", why, name);
			return -1;
		}
		if (o->poll != NULL && now_monotonic() >= next_poll) {
			o->poll(o->pollcls);
			next_poll = now_monotonic() + 1;
		}
		child_wait(pidfd, 200);
	}
	*statusp = status;
	return 0;
}

/* The child keeps only what the sandbox gives it: stdin, the log, the
 * seccomp filter and make's jobserver where they were placed. Every other
 * descriptor of rcgated (a socket, the database, another job's log, one
 * opened without O_CLOEXEC by a library) is closed in the child after
 * those are in place. */
static void child_close_rest(posix_spawn_file_actions_t *fa, int seccomp,
			     int jobserver)
{
	const struct {
		int fd, kept;
	} given[] = {
		{ SANDBOX_SECCOMP_FD, seccomp },
		{ JOBSERVER_FD_R, jobserver },
		{ JOBSERVER_FD_W, jobserver },
	};
	int top = 2;

	for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++)
		if (given[i].fd > top)
			top = given[i].fd;
	/* A place left empty is closed too (closing what is not open is
	 * no error for posix_spawn). */
	for (int fd = 3; fd <= top; fd++) {
		int kept = 0;

		for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++)
			if (given[i].fd == fd && given[i].kept)
				kept = 1;
		if (!kept)
			posix_spawn_file_actions_addclose(fa, fd);
	}
	posix_spawn_file_actions_addclosefrom_np(fa, top + 1);
}

/* build_run's spawn into the build's cgroup (cgroup.c), with the same
 * descriptors as its posix_spawn: 0 with *pid, or an errno. */
static int spawn_in_cgroup(const struct build_options *o, const char **sargv,
			   char *const env[], int logfd, int sfd,
			   const char *cwd, pid_t *pid)
{
	int dups[5][2] = { { logfd, 1 }, { logfd, 2 } }, e = 0;
	size_t n = 2;

	if (sfd >= 0)
		dups[n][0] = sfd, dups[n++][1] = SANDBOX_SECCOMP_FD;
	if (o->jobserver != NULL && o->jobserver->held) {
		dups[n][0] = o->jobserver->fds[0], dups[n++][1] = JOBSERVER_FD_R;
		dups[n][0] = o->jobserver->fds[1], dups[n++][1] = JOBSERVER_FD_W;
	}
	*pid = cgroup_spawn(o->cgroup, sargv, env, (const int (*)[2])dups, n,
			    cwd, &e);
	return *pid < 0 ? e : 0;
}

int build_run(const char *const argv[], const char *cwd, char *const env[],
	      int logfd, const struct build_options *o, double deadline,
	      char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	const char *sargv[160];
	char store[1024];
	pid_t pid;
	int status, rc, sfd = -1, pidfd;

	if (sandbox_argv(o, cwd, argv, sargv, sizeof(sargv) / sizeof(sargv[0]),
			 store, sizeof(store), err, errlen) < 0)
		return -1;
	if (!o->no_sandbox && (sfd = sandbox_seccomp_fd(err, errlen)) < 0)
		return -1;

	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, logfd, 1);
	posix_spawn_file_actions_adddup2(&fa, logfd, 2);
	if (sfd >= 0)
		posix_spawn_file_actions_adddup2(&fa, sfd, SANDBOX_SECCOMP_FD);
	/* make's jobserver (jobserver.c keeps the pipe above these). */
	if (o->jobserver != NULL && o->jobserver->held) {
		posix_spawn_file_actions_adddup2(&fa, o->jobserver->fds[0],
						 JOBSERVER_FD_R);
		posix_spawn_file_actions_adddup2(&fa, o->jobserver->fds[1],
						 JOBSERVER_FD_W);
	}
	child_close_rest(&fa, sfd >= 0,
			 o->jobserver != NULL && o->jobserver->held);
	if (cwd != NULL)
		posix_spawn_file_actions_addchdir_np(&fa, cwd);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	if (o->cgroup != NULL && o->cgroup->fd >= 0)
		rc = spawn_in_cgroup(o, sargv, env, logfd, sfd, cwd, &pid);
	else
		rc = posix_spawnp(&pid, sargv[0], &fa, &attr,
				  (char *const *)sargv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (sfd >= 0)
		close(sfd);	/* bwrap has its copy */
	if (rc != 0) {
		errf(err, errlen, "cannot run %s: %s", sargv[0], strerror(rc));
		return -1;
	}
	/* The child's end wakes the wait below at once: a short command
	 * (mkfs, git rev-parse) costs no polling interval. */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	rc = build_wait(pid, pidfd, argv[0], o, deadline, &status, err, errlen);
	if (pidfd >= 0)
		close(pidfd);
	if (rc < 0)
		return -1;
	if (WIFSIGNALED(status)) {
		errf(err, errlen, "%s killed by signal %d", argv[0], WTERMSIG(status));
		return -1;
	}
	return WEXITSTATUS(status);
}


int build_verify_signed(const char *signed_path, const char *keyring,
			const char *out, const char *home, char *err,
			size_t errlen)
{
	char dir[PATH_MAX], text[PATH_MAX], logp[PATH_MAX];
	const char *argv[] = { "gpgv", "--quiet", "--keyring", keyring,
			       "--output", text, signed_path, NULL };
	/* gpgv parses what a server sent: it sees the keyring and that
	 * file, and writes only in a directory of its own. */
	struct sandbox sb = { { keyring, signed_path }, { dir }, 0, 0, NULL };
	struct build_options o = { .root = home, .timeout = 60, .sandbox = &sb };
	char e_path[PATH_MAX + 8], e_home[PATH_MAX + 8];
	char *env[] = { e_path, e_home, "LC_ALL=C", NULL };
	const char *path = getenv("PATH");
	int fd, st;

	if (access(keyring, R_OK) != 0) {
		errf(err, errlen, "keyring %s: %s", keyring, strerror(errno));
		return -1;
	}
	if (pathf(dir, sizeof(dir), "%s/gpgv.XXXXXX", home) < 0 ||
	    mkdtemp(dir) == NULL) {
		errf(err, errlen, "temporary directory in %s: %s", home,
		     strerror(errno));
		return -1;
	}
	pathf(text, sizeof(text), "%s/signed", dir);
	pathf(logp, sizeof(logp), "%s/gpgv.log", dir);
	snprintf(e_path, sizeof(e_path), "PATH=%s", path != NULL ? path : "/usr/bin:/bin");
	snprintf(e_home, sizeof(e_home), "HOME=%s", dir);
	unlink(out);
	fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		errf(err, errlen, "%s: %s", logp, strerror(errno));
		rm_rf(dir);
		return -1;
	}
	st = build_run(argv, NULL, env, fd, &o, now_monotonic() + 60, err, errlen);
	close(fd);
	if (st > 0) {
		size_t n;
		char *msg = file_read(logp, 4096, &n, NULL, 0);

		/* gpgv's own words: "BAD signature", "No public key". */
		for (size_t i = 0; msg != NULL && i < n; i++)
			if (msg[i] == '\n' || (unsigned char)msg[i] < ' ' ||
			    (unsigned char)msg[i] == 0x7f)
				msg[i] = ' ';
		errf(err, errlen, "%s: signature not verified with %s (gpgv: %.200s)",
		     signed_path, keyring, msg != NULL ? msg : "exit status");
		free(msg);
	} else if (st == 0 && rename(text, out) < 0) {
		errf(err, errlen, "keep %s: %s", out, strerror(errno));
		st = -1;
	}
	rm_rf(dir);
	return st == 0 ? 0 : -1;
}

/* ---- kbuild ---- */

int build_config_missing(const char *fragment, const char *config, char *out,
			 size_t outlen)
{
	size_t flen, clen;
	char *frag = file_read(fragment, 1u << 20, &flen, NULL, 0);
	char *conf = file_read(config, 16u << 20, &clen, NULL, 0);
	struct strbuf sb;

	strbuf_init(&sb, out, outlen);
	if (frag == NULL || conf == NULL) {
		free(frag);
		free(conf);
		return -1;
	}
	for (char *line = frag, *next; line != NULL && *line != '\0'; line = next) {
		size_t n = strcspn(line, "\n");
		char want[256];

		next = line[n] == '\n' ? line + n + 1 : NULL;
		if (strncmp(line, "CONFIG_", 7) != 0 || n < 3 || n >= sizeof(want) ||
		    strncmp(line + n - 2, "=y", 2) != 0)
			continue;
		snprintf(want, sizeof(want), "\n%.*s\n", (int)n, line);
		/* Whole lines only: CONFIG_X=y must not match CONFIG_X=yy. */
		if (strstr(conf, want) == NULL &&
		    !(strncmp(conf, want + 1, n) == 0 && conf[n] == '\n'))
			strbuf_printf(&sb, "%s%.*s", sb.len ? " " : "", (int)n - 2, line);
	}
	free(frag);
	free(conf);
	return 0;
}

/* make's environment: fixed, so the same source gives the same image
 * (uname -v, "#1" and the banner do not depend on when or where). */
static void build_env(char *env[], char storage[][PATH_MAX + 32],
		      const struct build_options *o)
{
	const char *path = getenv("PATH");
	size_t i = 0;

	snprintf(storage[i], sizeof(storage[0]), "PATH=%s",
		 path != NULL ? path : "/usr/bin:/bin");
	env[i] = storage[i]; i++;
	snprintf(storage[i], sizeof(storage[0]), "HOME=%s", o->root);
	env[i] = storage[i]; i++;
	snprintf(storage[i], sizeof(storage[0]), "CCACHE_DIR=%s",
		 o->ccache_dir != NULL ? o->ccache_dir : "");
	env[i] = storage[i]; i++;
	snprintf(storage[i], sizeof(storage[0]), "CCACHE_BASEDIR=%s", o->root);
	env[i] = storage[i]; i++;
	env[i++] = "CCACHE_NOHASHDIR=1";
	/* A fresh build directory makes its generated headers (autoconf.h)
	 * newer than the compile: without this, ccache refuses its direct
	 * mode for every file and preprocesses each one. */
	env[i++] = "CCACHE_SLOPPINESS=include_file_mtime,include_file_ctime";
	/* ccache hashes LANG and LC_*: the same values as
	 * tests/kernels/build-kernels, so its objects serve us too. */
	env[i++] = "LANG=C.UTF-8";
	env[i++] = "LC_ALL=C";
	env[i++] = "TZ=UTC";
	env[i++] = "KBUILD_BUILD_TIMESTAMP=Tue Nov 28 00:00:00 UTC 2023";
	env[i++] = "KBUILD_BUILD_USER=rcgate";
	env[i++] = "KBUILD_BUILD_HOST=rcgate";
	env[i++] = "KBUILD_BUILD_VERSION=1";
	env[i] = NULL;
}

static int log_tail_diag(const char *logpath, const char *srcdir,
			 struct build_diag *d)
{
	size_t len;
	char *text = file_read(logpath, 256u << 20, &len, NULL, 0);
	int found;

	if (text == NULL)
		return 0;
	found = buildlog_first_error(text, len, srcdir, d);
	free(text);
	return found;
}

static void progress(const struct build_options *o, const char *step,
		     long done, long total)
{
	if (o->progress != NULL)
		o->progress(o->pcls, step, done, total);
}

/* kbuild's quiet output has one line per step ("  CC      fs/ext4/inode.o",
 * "  LD      vmlinux"): counted as make writes them, against the count of
 * the target's last whole build (<root>/steps/<target>). */
struct steps {
	const struct build_options *o;
	int fd;			/* the build log, read from off */
	off_t off;
	int at_bol;		/* the next byte starts a line */
	int spaces;		/* leading spaces seen on this line */
	long done, total;
	char keep[PATH_MAX];
};

static void steps_open(struct steps *s, const struct build_options *o,
		       const char *logpath, const char *target)
{
	struct stat sb;
	size_t n;
	char *text;

	s->o = o;
	s->fd = open(logpath, O_RDONLY | O_CLOEXEC);
	s->off = s->fd >= 0 && fstat(s->fd, &sb) == 0 ? sb.st_size : 0;
	s->at_bol = 1;
	if (pathf(s->keep, sizeof(s->keep), "%s/steps/%s", o->root, target) < 0)
		s->keep[0] = '\0';
	text = s->keep[0] ? file_read(s->keep, 64, &n, NULL, 0) : NULL;
	if (text != NULL) {
		s->total = strtol(text, NULL, 10);
		free(text);
	}
}

static void steps_poll(void *cls)
{
	struct steps *s = cls;
	char buf[65536];
	ssize_t n;

	if (s->fd < 0)
		return;
	while ((n = pread(s->fd, buf, sizeof(buf), s->off)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];

			if (c == '\n') {
				s->at_bol = 1;
				s->spaces = 0;
			} else if (s->at_bol && c == ' ' && s->spaces < 2) {
				s->spaces++;
			} else {
				if (s->at_bol && s->spaces == 2 && c >= 'A' && c <= 'Z')
					s->done++;
				s->at_bol = 0;
			}
		}
		s->off += n;
	}
	progress(s->o, "compiling", s->done, s->total);
}

static void steps_keep(const struct steps *s)
{
	char dir[PATH_MAX], text[32];
	int n = snprintf(text, sizeof(text), "%ld\n", s->done);

	if (s->keep[0] == '\0' || s->done <= 0 ||
	    pathf(dir, sizeof(dir), "%s/steps", s->o->root) < 0 ||
	    mkdir_p(dir, 0755, NULL, 0) < 0)
		return;
	file_write_atomic(s->keep, text, (size_t)n, NULL, 0);
}

void build_config_compiler(const char *config, char *out, size_t len)
{
	static const char key[] = "CONFIG_CC_VERSION_TEXT=\"";
	const char *p = config;
	size_t o = 0;

	if (len == 0)
		return;
	out[0] = '\0';
	while (p != NULL && strncmp(p, key, sizeof(key) - 1) != 0) {
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	if (p == NULL)
		return;
	for (p += sizeof(key) - 1; *p && *p != '"' && *p != '\n' && o + 1 < len;
	     p++)
		if ((unsigned char)*p >= 0x20 && *p != 0x7f && *p != '\\')
			out[o++] = *p;
	out[o] = '\0';
}

/* The final .config beside the image (base + ".config": res->image, or a
 * name of its own for a build that failed): the tree it is in may go;
 * what it says of the compiler into res. */
static void keep_config(const char *bdir, const char *base,
			struct build_result *res)
{
	char path[PATH_MAX];
	size_t n;
	char *text;

	res->config[0] = res->compiler[0] = '\0';
	if (pathf(path, sizeof(path), "%s/.config", bdir) < 0)
		return;
	text = file_read(path, 16 << 20, &n, NULL, 0);
	if (text == NULL)
		return;
	build_config_compiler(text, res->compiler, sizeof(res->compiler));
	if (pathf(res->config, sizeof(res->config), "%s.config", base) < 0 ||
	    file_write_atomic(res->config, text, n, NULL, 0) < 0)
		res->config[0] = '\0';
	free(text);
}

/* The build's token slot (jobserver.c): builds at once in one process
 * name their scratch files apart with it. */
static int build_slot(const struct build_options *o)
{
	return o->jobserver != NULL && o->jobserver->slot >= 0
	       ? o->jobserver->slot : 0;
}

/* One build_kernel call: what its steps hand each other. */
struct kbuild {
	const struct build_source *src;
	const struct target *t;
	const struct build_options *o;
	const char *logpath;
	struct build_result *res;
	char *err;
	size_t errlen;
	FILE *log;
	int logfd;
	double deadline;
	char *env[16 + DISTCC_ENV], dstate[PATH_MAX];
	struct distcc dc;		/* the build hosts' relays (distcc.c) */
	char envbuf[4][PATH_MAX + 32];
	char tree[PATH_MAX], bdir[PATH_MAX], fragment[PATH_MAX];
	int incremental;
	/* make's sandbox and options, from configuring on. */
	struct sandbox sbx;
	struct build_options mo;
	char a_arch[64], a_cross[128], a_cc[192], a_jobs[32], a_makeflags[96];
	struct steps steps;
};

/* A git worktree: built in place, build/ kept. 0 or -1. */
static int kbuild_git_tree(struct kbuild *k)
{
	snprintf(k->tree, sizeof(k->tree), "%s", k->src->tree);
	pathf(k->bdir, sizeof(k->bdir), "%s/build", k->tree);
	k->incremental = access(k->bdir, F_OK) == 0;
	if (build_free_space_ok(k->o->root, k->err, k->errlen) < 0)
		return -1;
	fprintf(k->log, "build: tree %s (%s)\n", k->tree, k->incremental
		? "incremental: kbuild's objects of the last build kept"
		: "first build here");
	return 0;
}

/* The rc's patch into the tree. 0, 1 when it does not apply (the rc's
 * failure, in res->diag), -1. */
static int kbuild_patch(struct kbuild *k, const char *work)
{
	char plain[PATH_MAX];
	const char *pargv[] = { "patch", "-p1", "--no-backup-if-mismatch",
				"--batch", "-i", plain, NULL };
	/* patch writes the tree (the files it touches are unshared first)
	 * and reads its input, nothing else. */
	struct sandbox sb = { { plain }, { k->tree }, 0, 0, NULL };
	struct build_options po = *k->o;
	struct build_diag *d = &k->res->diag;
	int st;

	pathf(plain, sizeof(plain), "%s/%s.%ld.%d.patch", work, k->t->name,
	      (long)getpid(), build_slot(k->o));
	if (tree_patch_plain(k->src->patch, plain, k->err, k->errlen) < 0 ||
	    tree_unshare_patched(plain, k->tree, k->err, k->errlen) < 0)
		return -1;
	fprintf(k->log, "build: applying %s\n", k->src->patch);
	fflush(k->log);
	progress(k->o, "patching", -1, -1);
	po.sandbox = &sb;
	st = build_run(pargv, k->tree, k->env, k->logfd, &po, k->deadline,
		       k->err, k->errlen);
	if (st < 0)
		return -1;
	if (st == 0)
		return 0;
	/* An rc patch that does not apply is the rc's fault. */
	snprintf(d->message, sizeof(d->message), "the patch does not apply to %s",
		 k->src->tarball_sha256);
	snprintf(d->signature_text, sizeof(d->signature_text),
		 "-: the patch does not apply");
	snprintf(d->line, sizeof(d->line), "patch -p1 exited with %d", st);
	return 1;
}

/* A tarball's tree (and patch): the pristine tree unpacked once, copied
 * into a tree of this target and process. 0, 1 (the patch does not
 * apply), -1. */
static int kbuild_tarball_tree(struct kbuild *k)
{
	char pristine[PATH_MAX], work[PATH_MAX];
	const struct build_options *o = k->o;

	progress(o, "unpacking", -1, -1);
	if (tree_pristine(k->src, o->root, (long long)o->disk_mb << 20, pristine,
			  sizeof(pristine), k->log, k->err, k->errlen) < 0)
		return -1;
	pathf(work, sizeof(work), "%s/work", o->root);
	if (mkdir_p(work, 0755, k->err, k->errlen) < 0 ||
	    build_free_space_ok(o->root, k->err, k->errlen) < 0)
		return -1;
	/* One tree per target, process and build token (jobserver.c's
	 * slot): two builds at once of the same target each have theirs,
	 * and another rcgated sharing the cache builds in a tree of its own.
	 * The build directory is a
	 * child of the tree, so kbuild uses srctree=.. and the compiler's
	 * command lines do not name the tree: ccache hits across rcs. */
	pathf(k->tree, sizeof(k->tree), "%s/%s.%ld.%d", work, k->t->name,
	      (long)getpid(), build_slot(o));
	pathf(k->bdir, sizeof(k->bdir), "%s/build", k->tree);
	rm_rf(k->tree);
	fprintf(k->log, "build: tree %s from %s\n", k->tree, pristine);
	fflush(k->log);
	if (tree_copy(pristine, k->tree, k->err, k->errlen) < 0)
		return -1;
	return k->src->patch != NULL ? kbuild_patch(k, work) : 0;
}

/* The entries of a NULL-terminated environment. */
static size_t env_count(char *const env[])
{
	size_t n = 0;

	while (env[n] != NULL)
		n++;
	return n;
}

/* make's sandbox and command line. 0 or -1. */
static int kbuild_sandbox(struct kbuild *k)
{
	const struct build_options *o = k->o;
	const struct target *t = k->t;
	int ccache = o->ccache_dir != NULL && o->ccache_dir[0] != '\0';

	progress(o, "configuring", -1, -1);
	/* From here on, the tree is read-only to the build: kbuild writes
	 * only in O=build (and ccache in its own directory), so nothing can
	 * write through a hard link into the pristine tree, or plant in the
	 * tree what the next build of it would run. */
	if (mkdir(k->bdir, 0755) < 0 && errno != EEXIST) {
		errf(k->err, k->errlen, "mkdir %s: %s", k->bdir, strerror(errno));
		return -1;
	}
	k->sbx = (struct sandbox){ { k->tree },
		{ k->bdir, ccache ? o->ccache_dir : NULL }, 0, 1, SANDBOX_TREE };
	if (k->sbx.writable[1] != NULL &&
	    mkdir_p(k->sbx.writable[1], 0755, k->err, k->errlen) < 0)
		return -1;
	k->mo = *o;
	k->mo.sandbox = &k->sbx;
	/* The build hosts' compiles: through relays the sandbox reaches by
	 * their sockets only (distcc.c); the same compiler name and
	 * environment as a local build, so the same objects and cache. */
	pathf(k->dstate, sizeof(k->dstate), "%s/.distcc", k->bdir);
	if (distcc_start(o, t->name, k->dstate, &k->dc, k->log) > 0) {
		distcc_env(&k->dc, k->env, env_count(k->env),
			   sizeof(k->env) / sizeof(k->env[0]));
		k->sbx.readable[1] = k->dc.dir;
	}
	snprintf(k->a_arch, sizeof(k->a_arch), "ARCH=%s", t->kbuild_arch);
	snprintf(k->a_cross, sizeof(k->a_cross), "CROSS_COMPILE=%s",
		 t->cross_compile != NULL ? t->cross_compile : "");
	snprintf(k->a_cc, sizeof(k->a_cc), "CC=%s%sgcc", ccache ? "ccache " :
		 k->dc.nrelay > 0 ? "distcc " : "",
		 t->cross_compile != NULL ? t->cross_compile : "");
	/* The process's build tokens (jobserver.c): make's jobs come from
	 * the pipe every build shares. With build hosts, their slots too:
	 * make counts its own -j then (the compiles run there). */
	k->a_jobs[0] = '\0';
	k->a_makeflags[0] = '\0';
	if (o->jobserver != NULL && k->dc.nrelay == 0 &&
	    jobserver_makeflags(o->jobserver, k->a_makeflags,
				sizeof(k->a_makeflags)) == 0) {
		size_t ne = env_count(k->env);

		if (ne + 1 < sizeof(k->env) / sizeof(k->env[0])) {
			k->env[ne] = k->a_makeflags;
			k->env[ne + 1] = NULL;
		} else {
			k->a_makeflags[0] = '\0';
		}
	}
	if (k->a_makeflags[0] == '\0') {
		k->mo.jobserver = NULL;
		snprintf(k->a_jobs, sizeof(k->a_jobs), "-j%ld",
			 (o->jobs > 0 ? o->jobs : 1) + k->dc.slots);
	}
	return 0;
}

/* tinyconfig, the target's fragment, olddefconfig, and every option of
 * the fragment still there. build_run's convention: <0 infra (err set),
 * 0, or make's failing status. */
static int kbuild_configure(struct kbuild *k)
{
	const char *mk_tiny[] = { "make", "O=build", k->a_arch, k->a_cross,
				  k->a_cc, "LOCALVERSION=", "tinyconfig", NULL };
	const char *mk_old[] = { "make", "O=build", k->a_arch, k->a_cross,
				 k->a_cc, "LOCALVERSION=", "olddefconfig", NULL };
	char config[PATH_MAX], missing[1024];
	char *frag;
	size_t flen;
	FILE *cf;
	int st;

	fprintf(k->log, "build: %s tinyconfig + %s\n", k->t->name, k->fragment);
	fflush(k->log);
	st = build_run(mk_tiny, k->tree, k->env, k->logfd, &k->mo, k->deadline,
		       k->err, k->errlen);
	if (st != 0)
		return st;
	pathf(config, sizeof(config), "%s/.config", k->bdir);
	frag = file_read(k->fragment, 1u << 20, &flen, k->err, k->errlen);
	cf = frag != NULL ? fopen(config, "ae") : NULL;
	if (cf == NULL) {
		free(frag);
		if (frag != NULL)
			errf(k->err, k->errlen, "open %s: %s", config,
			     strerror(errno));
		return -1;
	}
	fwrite(frag, 1, flen, cf);
	fclose(cf);
	free(frag);
	st = build_run(mk_old, k->tree, k->env, k->logfd, &k->mo, k->deadline,
		       k->err, k->errlen);
	if (st != 0)
		return st;
	if (build_config_missing(k->fragment, config, missing,
				 sizeof(missing)) < 0) {
		errf(k->err, k->errlen, "cannot compare %s with the final .config",
		     k->fragment);
		return -1;
	}
	if (missing[0] != '\0') {
		/* The fragment is rcgate's or the operator's, not the rc's: a
		 * kernel without its console or disk would fail in confusing
		 * ways later. */
		errf(k->err, k->errlen, "%s: options dropped from the final"
		     " .config: %s", k->fragment, missing);
		return -1;
	}
	return 0;
}

/* The image, its kbuild steps counted as progress. build_run's
 * convention. */
static int kbuild_compile(struct kbuild *k)
{
	const char *mk_img[] = { "make", "O=build", k->a_arch, k->a_cross,
				 k->a_cc, "LOCALVERSION=", k->a_jobs,
				 k->t->image_target, NULL };
	struct build_options po = k->mo;
	int st;

	if (k->a_jobs[0] == '\0') {	/* the jobserver's -j, in MAKEFLAGS */
		mk_img[6] = k->t->image_target;
		mk_img[7] = NULL;
		fprintf(k->log, "build: %s %s, its jobs from the build jobserver"
			" (%ld shared by rcgated's builds)\n", k->t->name,
			k->t->image_target, k->o->jobserver->tokens);
	} else {
		fprintf(k->log, "build: %s %s, make %s\n", k->t->name,
			k->t->image_target, k->a_jobs);
	}
	fflush(k->log);
	steps_open(&k->steps, k->o, k->logpath, k->t->name);
	progress(k->o, "compiling", 0, k->steps.total);
	po.poll = steps_poll;
	po.pollcls = &k->steps;
	st = build_run(mk_img, k->tree, k->env, k->logfd, &po, k->deadline,
		       k->err, k->errlen);
	steps_poll(&k->steps);
	return st;
}

/* make exited with st: the source's failure (1, its first error line in
 * res->diag), or -1 when the log says the machine ran out of something. */
static int kbuild_failed(struct kbuild *k, int st)
{
	struct build_diag *d = &k->res->diag;

	fflush(k->log);
	/* kbuild printed the tree's paths as its sandbox sees them. */
	if (log_tail_diag(k->logpath, k->mo.no_sandbox ? k->tree
			  : SANDBOX_TREE, d) &&
	    d->kind == BUILD_FAIL_INFRA) {
		errf(k->err, k->errlen, "build failed for lack of resources: %s",
		     d->message);
		return -1;
	}
	if (d->message[0] == '\0') {
		snprintf(d->message, sizeof(d->message), "make exited with %d and"
			 " no error line was recognised", st);
		snprintf(d->signature_text, sizeof(d->signature_text), "-: %s",
			 d->message);
	}
	return 1;
}

/* The image out of the tree under its hash, with its kernel release. */
static int kbuild_keep(struct kbuild *k)
{
	char image[PATH_MAX], outdir[PATH_MAX], relpath[PATH_MAX];
	struct build_result *res = k->res;
	size_t n;
	char *kr;

	pathf(image, sizeof(image), "%s/%s", k->bdir, k->t->image_path);
	pathf(outdir, sizeof(outdir), "%s/out", k->o->root);
	if (mkdir_p(outdir, 0755, k->err, k->errlen) < 0 ||
	    sha256_file(image, res->image_sha256, k->err, k->errlen) < 0)
		return -1;
	pathf(res->image, sizeof(res->image), "%s/%s-%.16s", outdir, k->t->name,
	      res->image_sha256);
	if (rename(image, res->image) < 0) {
		errf(k->err, k->errlen, "keep %s: %s", image, strerror(errno));
		return -1;
	}
	pathf(relpath, sizeof(relpath), "%s/include/config/kernel.release",
	      k->bdir);
	kr = file_read(relpath, 256, &n, NULL, 0);
	if (kr != NULL) {
		snprintf(res->kernelrelease, sizeof(res->kernelrelease), "%.*s",
			 (int)strcspn(kr, "\n"), kr);
		free(kr);
	}
	keep_config(k->bdir, res->image, res);
	/* A whole build's count is the next one's estimate; an incremental
	 * build's says only what changed. */
	if (!k->incremental)
		steps_keep(&k->steps);
	return 0;
}

int build_kernel(const struct build_source *src, const struct target *t,
		 const struct build_options *o, const char *logpath,
		 struct build_result *res, char *err, size_t errlen)
{
	struct kbuild *k;
	double start = now_monotonic();
	int rc = -1, st;

	memset(res, 0, sizeof(*res));
	if (t->kbuild_arch == NULL) {
		errf(err, errlen, "no kbuild settings for target %s", t->name);
		return -1;
	}
	k = calloc(1, sizeof(*k));
	if (k == NULL) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	*k = (struct kbuild){ .src = src, .t = t, .o = o, .logpath = logpath,
		.res = res, .err = err, .errlen = errlen,
		.deadline = start + (double)(o->timeout > 0 ? o->timeout : 3600),
		.steps = { .fd = -1, .total = -1 } };
	k->log = fopen(logpath, "ae");
	if (k->log == NULL) {
		errf(err, errlen, "build log %s: %s", logpath, strerror(errno));
		free(k);
		return -1;
	}
	setvbuf(k->log, NULL, _IOLBF, 0);
	k->logfd = fileno(k->log);
	pathf(k->fragment, sizeof(k->fragment), "%s/%s.config", o->config_dir,
	      t->name);
	if (strlen(o->root) > PATH_MAX / 2 || strlen(o->config_dir) > PATH_MAX / 2) {
		errf(err, errlen, "build paths too long");
		goto out;
	}
	if (access(k->fragment, R_OK) != 0) {
		errf(err, errlen, "no kernel config fragment %s", k->fragment);
		goto out;
	}
	build_env(k->env, k->envbuf, o);	/* patch and make run in the same one */
	rc = src->tree != NULL ? kbuild_git_tree(k) : kbuild_tarball_tree(k);
	if (rc != 0)
		goto out;
	rc = -1;
	if (kbuild_sandbox(k) < 0)
		goto out;
	st = kbuild_configure(k);
	if (st == 0)
		st = kbuild_compile(k);
	if (st < 0)
		goto out;
	if (st != 0) {
		char base[PATH_MAX];

		rc = kbuild_failed(k, st);
		/* What it was still says: its .config and compiler, once
		 * make olddefconfig wrote them. */
		if (rc == 1 &&
		    pathf(base, sizeof(base), "%s/out", o->root) == 0 &&
		    mkdir_p(base, 0755, NULL, 0) == 0 &&
		    pathf(base, sizeof(base), "%s/out/%s-failed.%ld.%d", o->root,
			  t->name, (long)getpid(), build_slot(o)) == 0)
			keep_config(k->bdir, base, res);
	} else if (kbuild_keep(k) == 0)
		rc = 0;
out:
	if (k->dc.nrelay > 0) {
		distcc_account(&k->dc, k->log);
		distcc_stop_relays(&k->dc);
	}
	if (k->steps.fd >= 0)
		close(k->steps.fd);
	progress(o, rc == 0 ? "done" : "failed", k->steps.done, k->steps.total);
	res->seconds = now_monotonic() - start;
	fprintf(k->log, "build: %s %s in %.0f s%s%s\n", t->name,
		rc == 0 ? "built" : rc == 1 ? "failed (the source)" : "failed (infra)",
		res->seconds, rc < 0 ? ": " : "", rc < 0 ? err : "");
	fclose(k->log);
	/* ccache keeps the objects; a 1.5 GB tree is not worth keeping. A
	 * git worktree is, with its objects: the next commit builds only
	 * what differs. */
	if (src->tree == NULL && k->tree[0] != '\0')
		rm_rf(k->tree);
	free(k);
	return rc;
}
