/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * build.c - owns kernel builds: the rc's source made into a tree (the
 * release tarball unpacked once per tarball and shared, then, per build, a
 * hard-link copy with the rc's patch applied), and kbuild out of tree for
 * one target with Debian's cross compiler, ccache and the target's
 * fragment merged on tinyconfig (configs/<target>.config, or the
 * operator's in [build] config_dir). Every command runs from an argv with
 * a fixed environment, never through a shell, in its own process group
 * so a cancel or a timeout stops all of make's children. A build that
 * fails is read by buildlog.c: the source's failure is a result, the
 * machine's an infra error. This is the one interface a remote builder
 * would implement too (build_kernel).
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "build/build.h"

#define MIN_FREE_BYTES (3ULL << 30)	/* a tree, its objects and slack */
#define LOG_TAIL_BYTES (1 << 20)	/* read for the first error */

extern char **environ;

static int free_space_ok(const char *dir, char *err, size_t errlen)
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

int build_run(const char *const argv[], const char *cwd, char *const env[],
	      int logfd, const struct build_options *o, double deadline,
	      char *err, size_t errlen)
{
	double next_poll = now_monotonic() + 1, next_disk = now_monotonic() + 2;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	const char *sargv[160];
	char store[256];
	pid_t pid;
	int status, rc;

	if (sandbox_argv(o, cwd, argv, sargv, sizeof(sargv) / sizeof(sargv[0]),
			 store, sizeof(store), err, errlen) < 0)
		return -1;

	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, logfd, 1);
	posix_spawn_file_actions_adddup2(&fa, logfd, 2);
	if (cwd != NULL)
		posix_spawn_file_actions_addchdir_np(&fa, cwd);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	rc = posix_spawnp(&pid, sargv[0], &fa, &attr, (char *const *)sargv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		errf(err, errlen, "cannot run %s: %s", sargv[0], strerror(rc));
		return -1;
	}
	for (;;) {
		char toobig[96] = "";

		pid_t w = waitpid(pid, &status, WNOHANG);
		const char *why = NULL;

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			errf(err, errlen, "waiting for %s: %s", argv[0], strerror(errno));
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
				sleep_ms(100);
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			errf(err, errlen, "build %s (%s)", why, argv[0]);
			return -1;
		}
		if (o->poll != NULL && now_monotonic() >= next_poll) {
			o->poll(o->pollcls);
			next_poll = now_monotonic() + 1;
		}
		sleep_ms(200);
	}
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
	struct sandbox sb = { { keyring, signed_path }, { dir }, 0, 0 };
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

/* ---- the shared, pristine tree of a tarball ---- */

/* Extracts the tarball under dir, dropping its top directory
 * (linux-6.1.63/ or linux-source-6.1/). Refuses absolute or .. paths and
 * anything but files, directories and symlinks (libarchive refuses to
 * write through a symlink), and stops as soon as what it wrote passes
 * max_bytes or MAX_ENTRIES entries (a small tarball can unpack to
 * gigabytes). */
#define MAX_ENTRIES 400000L	/* 6.1 has about 80 000 */
static int unpack(const char *tarball, const char *dir, long long max_bytes,
		  char *err, size_t errlen)
{
	struct archive *a = archive_read_new(), *w = archive_write_disk_new();
	struct archive_entry *e;
	long long written = 0;
	long entries = 0;
	int rc = -1, r;

	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	archive_write_disk_set_options(w, ARCHIVE_EXTRACT_TIME |
				       ARCHIVE_EXTRACT_PERM |
				       ARCHIVE_EXTRACT_SECURE_SYMLINKS |
				       ARCHIVE_EXTRACT_SECURE_NODOTDOT);
	if (archive_read_open_filename(a, tarball, 1 << 16) != ARCHIVE_OK) {
		errf(err, errlen, "open %s: %s", tarball, archive_error_string(a));
		goto out;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e), *slash;
		char path[PATH_MAX];
		mode_t type = archive_entry_filetype(e);

		slash = name != NULL ? strchr(name, '/') : NULL;
		if (slash == NULL || slash[1] == '\0')
			continue;	/* the top directory itself, or pax headers */
		if (++entries > MAX_ENTRIES) {
			errf(err, errlen, "%s: more than %ld entries", tarball,
			     MAX_ENTRIES);
			goto out;
		}
		/* The entry goes under dir (absolute), so the archive's own
		 * path must be relative and stay inside it. */
		if (name[0] == '/' || strstr(name, "../") != NULL) {
			errf(err, errlen, "%s: path leaves the tree", name);
			goto out;
		}
		if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) {
			errf(err, errlen, "%s: unexpected entry type in %s", name,
			     tarball);
			goto out;
		}
		if (pathf(path, sizeof(path), "%s/%s", dir, slash + 1) < 0) {
			errf(err, errlen, "%s: path too long", name);
			goto out;
		}
		archive_entry_set_pathname(e, path);
		if (archive_entry_hardlink(e) != NULL) {
			errf(err, errlen, "%s: hard links are not expected", name);
			goto out;
		}
		if (archive_write_header(w, e) != ARCHIVE_OK) {
			errf(err, errlen, "unpack %s: %s", name, archive_error_string(w));
			goto out;
		}
		if (archive_entry_size(e) > 0) {
			const void *buf;
			size_t len;
			la_int64_t off;

			while ((r = archive_read_data_block(a, &buf, &len, &off)) ==
			       ARCHIVE_OK) {
				written += (long long)len;
				if (max_bytes > 0 && written > max_bytes) {
					errf(err, errlen, "%s unpacks to more than"
					     " %lld MiB ([build] tree_max_mb)",
					     tarball, max_bytes >> 20);
					goto out;
				}
				if (archive_write_data_block(w, buf, len, off) != ARCHIVE_OK) {
					errf(err, errlen, "unpack %s: %s", name,
					     archive_error_string(w));
					goto out;
				}
			}
			if (r != ARCHIVE_EOF) {
				errf(err, errlen, "read %s: %s", tarball,
				     archive_error_string(a));
				goto out;
			}
		}
		archive_write_finish_entry(w);
	}
	if (r != ARCHIVE_EOF) {
		errf(err, errlen, "read %s: %s", tarball, archive_error_string(a));
		goto out;
	}
	rc = 0;
out:
	archive_read_free(a);
	archive_write_free(w);
	return rc;
}

/* root/src/<sha> holds the tarball's tree once (a stamp file says it is
 * complete); one unpacking at a time per tarball. */
static int pristine_tree(const struct build_source *src, const char *root,
			 long long max_bytes, char *dir, size_t dirlen, FILE *log,
			 char *err, size_t errlen)
{
	char srcdir[PATH_MAX], lock[PATH_MAX], stamp[PATH_MAX], tmp[PATH_MAX];
	int fd, rc = -1;

	if (pathf(srcdir, sizeof(srcdir), "%s/src", root) < 0 ||
	    pathf(dir, dirlen, "%s/%.16s", srcdir, src->tarball_sha256) < 0 ||
	    pathf(lock, sizeof(lock), "%s.lock", dir) < 0 ||
	    pathf(stamp, sizeof(stamp), "%s/.rcgate-unpacked", dir) < 0 ||
	    pathf(tmp, sizeof(tmp), "%s.tmp", dir) < 0) {
		errf(err, errlen, "build root path too long");
		return -1;
	}
	if (mkdir_p(srcdir, 0755, err, errlen) < 0)
		return -1;
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		errf(err, errlen, "lock %s: %s", lock, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	futimens(fd, NULL);	/* used now: buildcache.c's LRU */
	if (access(stamp, F_OK) == 0) {
		rc = 0;
		goto out;
	}
	if (free_space_ok(root, err, errlen) < 0)
		goto out;
	fprintf(log, "build: unpacking %s\n", src->tarball);
	fflush(log);
	rm_rf(tmp);
	rm_rf(dir);
	if (mkdir(tmp, 0755) < 0) {
		errf(err, errlen, "mkdir %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (unpack(src->tarball, tmp, max_bytes, err, errlen) < 0) {
		rm_rf(tmp);
		goto out;
	}
	if (rename(tmp, dir) < 0) {
		errf(err, errlen, "rename %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (close(open(stamp, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		errf(err, errlen, "stamp %s: %s", stamp, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

/* ---- the build's own tree: hard links to the pristine one ---- */

static const char *link_from, *link_to;
static int link_err;

static int link_one(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	char dst[PATH_MAX];

	(void)ftw;
	if (pathf(dst, sizeof(dst), "%s%s", link_to, path + strlen(link_from)) < 0) {
		link_err = ENAMETOOLONG;
		return 1;
	}
	if (flag == FTW_D) {
		if (mkdir(dst, st->st_mode & 07777) < 0 && errno != EEXIST)
			goto fail;
	} else if (flag == FTW_SL) {
		char target[PATH_MAX];
		ssize_t n = readlink(path, target, sizeof(target) - 1);

		if (n < 0)
			goto fail;
		target[n] = '\0';
		if (symlink(target, dst) < 0)
			goto fail;
	} else if (flag == FTW_F) {
		if (link(path, dst) < 0)
			goto fail;
	}
	return 0;
fail:
	link_err = errno;
	return 1;
}

static pthread_mutex_t link_lock = PTHREAD_MUTEX_INITIALIZER;

static int copy_tree(const char *from, const char *to, char *err, size_t errlen)
{
	int rc;

	pthread_mutex_lock(&link_lock);	/* nftw has no user pointer */
	link_from = from;
	link_to = to;
	link_err = 0;
	rc = nftw(from, link_one, 64, FTW_PHYS);
	pthread_mutex_unlock(&link_lock);
	if (rc != 0) {
		errf(err, errlen, "copying the source tree: %s",
		     strerror(link_err != 0 ? link_err : errno));
		return -1;
	}
	return 0;
}

/* The patch as plain text in dst (a stable-review patch is gzip'ed). */
static int patch_plain(const char *patch, const char *dst, char *err,
		       size_t errlen)
{
	struct archive *a = archive_read_new();
	FILE *out = fopen(dst, "we");
	struct archive_entry *e;
	char buf[65536];
	ssize_t n;
	int rc = -1;

	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	if (out == NULL) {
		errf(err, errlen, "create %s: %s", dst, strerror(errno));
		goto done;
	}
	if (archive_read_open_filename(a, patch, 1 << 16) != ARCHIVE_OK ||
	    archive_read_next_header(a, &e) != ARCHIVE_OK) {
		errf(err, errlen, "read patch %s: %s", patch, archive_error_string(a));
		goto done;
	}
	while ((n = archive_read_data(a, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, out);
	if (n < 0) {
		errf(err, errlen, "read patch %s: %s", patch, archive_error_string(a));
		goto done;
	}
	rc = fflush(out) == 0 ? 0 : -1;
	if (rc < 0)
		errf(err, errlen, "write %s: %s", dst, strerror(errno));
done:
	if (out != NULL)
		fclose(out);
	archive_read_free(a);
	return rc;
}

/* 1 if path's directory, symbolic links resolved, is tree or below it,
 * and path itself is not a symbolic link (or does not exist). */
static int inside_tree(const char *tree, const char *path)
{
	char dir[PATH_MAX], real_tree[PATH_MAX], real_dir[PATH_MAX];
	char *slash;
	struct stat sb;
	size_t n;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL || realpath(tree, real_tree) == NULL)
		return 0;
	*slash = '\0';
	if (realpath(dir, real_dir) == NULL)
		return errno == ENOENT;	/* a new directory: patch makes it */
	n = strlen(real_tree);
	if (strncmp(real_dir, real_tree, n) != 0 ||
	    (real_dir[n] != '/' && real_dir[n] != '\0'))
		return 0;
	return lstat(path, &sb) != 0 || !S_ISLNK(sb.st_mode);
}

/* Gives every file the patch touches ("+++ b/path") its own copy, so
 * patching never writes through a hard link into the pristine tree. A path
 * that leaves the tree makes the patch unusable (-1). */
static int unshare_patched(const char *plain, const char *tree, char *err,
			   size_t errlen)
{
	FILE *f = fopen(plain, "re");
	char line[4096];
	int rc = 0;

	if (f == NULL) {
		errf(err, errlen, "open %s: %s", plain, strerror(errno));
		return -1;
	}
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		char rel[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX + 8];
		size_t n;
		char *data;

		if (strncmp(line, "+++ b/", 6) != 0)
			continue;
		n = strcspn(line + 6, " \t\r\n");
		snprintf(rel, sizeof(rel), "%.*s", (int)n, line + 6);
		if (rel[0] == '/' || strstr(rel, "..") != NULL) {
			errf(err, errlen, "patch touches %s, outside the tree", rel);
			rc = -1;
			break;
		}
		pathf(path, sizeof(path), "%s/%s", tree, rel);
		pathf(tmp, sizeof(tmp), "%s.unlink", path);
		/* rcgated itself writes here: never through a symlink of
		 * the tarball's, to a file outside the tree. */
		if (!inside_tree(tree, path)) {
			errf(err, errlen, "patch touches %s, which a symbolic link"
			     " takes out of the tree", rel);
			rc = -1;
			break;
		}
		data = file_read(path, 64u << 20, &n, NULL, 0);
		if (data == NULL)
			continue;	/* a new file: nothing to unshare */
		if (file_write_atomic(tmp, data, n, NULL, 0) < 0 ||
		    rename(tmp, path) < 0) {
			errf(err, errlen, "unshare %s: %s", rel, strerror(errno));
			rc = -1;
		}
		free(data);
	}
	fclose(f);
	return rc;
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

int build_kernel(const struct build_source *src, const struct target *t,
		 const struct build_options *o, const char *logpath,
		 struct build_result *res, char *err, size_t errlen)
{
	char pristine[PATH_MAX], work[PATH_MAX], tree[PATH_MAX] = "", bdir[PATH_MAX],
		fragment[PATH_MAX], config[PATH_MAX], plain[PATH_MAX],
		image[PATH_MAX], outdir[PATH_MAX], missing[1024];
	char a_arch[64], a_cross[128], a_cc[192], a_jobs[32];
	char envbuf[4][PATH_MAX + 32];
	char *env[16 + DISTCC_ENV], dstate[PATH_MAX];
	struct distcc dc = { .nrelay = 0 };
	double start = now_monotonic(), deadline;
	struct steps steps = { .fd = -1, .total = -1 };
	struct sandbox sbx;
	struct build_options mo;
	FILE *log;
	int rc = -1, st, logfd, incremental = 0;

	memset(res, 0, sizeof(*res));
	deadline = start + (double)(o->timeout > 0 ? o->timeout : 3600);
	if (t->kbuild_arch == NULL) {
		errf(err, errlen, "no kbuild settings for target %s", t->name);
		return -1;
	}
	log = fopen(logpath, "ae");
	if (log == NULL) {
		errf(err, errlen, "build log %s: %s", logpath, strerror(errno));
		return -1;
	}
	setvbuf(log, NULL, _IOLBF, 0);
	logfd = fileno(log);
	pathf(fragment, sizeof(fragment), "%s/%s.config", o->config_dir, t->name);
	if (strlen(o->root) > PATH_MAX / 2 || strlen(o->config_dir) > PATH_MAX / 2) {
		errf(err, errlen, "build paths too long");
		goto out;
	}
	if (access(fragment, R_OK) != 0) {
		errf(err, errlen, "no kernel config fragment %s", fragment);
		goto out;
	}
	build_env(env, envbuf, o);	/* patch and make run in the same one */
	if (src->tree != NULL) {
		/* A git worktree: built in place, build/ kept. */
		snprintf(tree, sizeof(tree), "%s", src->tree);
		pathf(bdir, sizeof(bdir), "%s/build", tree);
		incremental = access(bdir, F_OK) == 0;
		if (free_space_ok(o->root, err, errlen) < 0)
			goto out;
		fprintf(log, "build: tree %s (%s)\n", tree, incremental
			? "incremental: kbuild's objects of the last build kept"
			: "first build here");
		goto configure;
	}
	progress(o, "unpacking", -1, -1);
	if (pristine_tree(src, o->root, (long long)o->disk_mb << 20, pristine,
			  sizeof(pristine), log, err, errlen) < 0)
		goto out;
	pathf(work, sizeof(work), "%s/work", o->root);
	if (mkdir_p(work, 0755, err, errlen) < 0 ||
	    free_space_ok(o->root, err, errlen) < 0)
		goto out;
	/* One tree per target and process: a build of the same target is
	 * serialised by the caller's build budget, and another rcgated
	 * sharing the cache builds in a tree of its own. The build directory is a
	 * child of the tree, so kbuild uses srctree=.. and the compiler's
	 * command lines do not name the tree: ccache hits across rcs. */
	pathf(tree, sizeof(tree), "%s/%s.%ld", work, t->name, (long)getpid());
	pathf(bdir, sizeof(bdir), "%s/build", tree);
	rm_rf(tree);
	fprintf(log, "build: tree %s from %s\n", tree, pristine);
	fflush(log);
	if (copy_tree(pristine, tree, err, errlen) < 0)
		goto out;
	if (src->patch != NULL) {
		const char *pargv[] = { "patch", "-p1", "--no-backup-if-mismatch",
					"--batch", "-i", plain, NULL };

		pathf(plain, sizeof(plain), "%s/%s.%ld.patch", work, t->name, (long)getpid());
		if (patch_plain(src->patch, plain, err, errlen) < 0 ||
		    unshare_patched(plain, tree, err, errlen) < 0)
			goto out;
		fprintf(log, "build: applying %s\n", src->patch);
		fflush(log);
		progress(o, "patching", -1, -1);
		{
			/* patch writes the tree (the files it touches were
			 * unshared above) and reads its input, nothing else. */
			struct sandbox sb = { { plain }, { tree }, 0, 0 };
			struct build_options po = *o;

			po.sandbox = &sb;
			st = build_run(pargv, tree, env, logfd, &po, deadline,
				       err, errlen);
		}
		if (st < 0)
			goto out;
		if (st != 0) {
			/* An rc patch that does not apply is the rc's fault. */
			snprintf(res->diag.message, sizeof(res->diag.message),
				 "the patch does not apply to %s",
				 src->tarball_sha256);
			snprintf(res->diag.signature_text,
				 sizeof(res->diag.signature_text),
				 "-: the patch does not apply");
			snprintf(res->diag.line, sizeof(res->diag.line),
				 "patch -p1 exited with %d", st);
			rc = 1;
			goto out;
		}
	}
configure:
	progress(o, "configuring", -1, -1);
	/* From here on, the tree is read-only to the build: kbuild writes
	 * only in O=build (and ccache in its own directory), so nothing can
	 * write through a hard link into the pristine tree, or plant in the
	 * tree what the next build of it would run. */
	if (mkdir(bdir, 0755) < 0 && errno != EEXIST) {
		errf(err, errlen, "mkdir %s: %s", bdir, strerror(errno));
		goto out;
	}
	sbx = (struct sandbox){ { tree }, { bdir, o->ccache_dir != NULL &&
		o->ccache_dir[0] != '\0' ? o->ccache_dir : NULL }, 0, 1 };
	if (sbx.writable[1] != NULL &&
	    mkdir_p(sbx.writable[1], 0755, err, errlen) < 0)
		goto out;
	mo = *o;
	mo.sandbox = &sbx;
	/* The build hosts' compiles: through relays the sandbox reaches by
	 * their sockets only (distcc.c); the same compiler name and
	 * environment as a local build, so the same objects and cache. */
	pathf(dstate, sizeof(dstate), "%s/.distcc", bdir);
	if (distcc_start(o, t->name, dstate, &dc, log) > 0) {
		size_t ne = 0;

		while (env[ne] != NULL)
			ne++;
		distcc_env(&dc, env, ne, sizeof(env) / sizeof(env[0]));
		sbx.readable[1] = dc.dir;
	}
	snprintf(a_arch, sizeof(a_arch), "ARCH=%s", t->kbuild_arch);
	snprintf(a_cross, sizeof(a_cross), "CROSS_COMPILE=%s",
		 t->cross_compile != NULL ? t->cross_compile : "");
	snprintf(a_cc, sizeof(a_cc), "CC=%s%sgcc",
		 o->ccache_dir != NULL && o->ccache_dir[0] != '\0' ? "ccache " :
		 dc.nrelay > 0 ? "distcc " : "",
		 t->cross_compile != NULL ? t->cross_compile : "");
	snprintf(a_jobs, sizeof(a_jobs), "-j%ld",
		 (o->jobs > 0 ? o->jobs : 1) + dc.slots);
	{
		const char *mk_tiny[] = { "make", "O=build", a_arch, a_cross, a_cc,
					  "LOCALVERSION=", "tinyconfig", NULL };
		const char *mk_old[] = { "make", "O=build", a_arch, a_cross, a_cc,
					 "LOCALVERSION=", "olddefconfig", NULL };
		const char *mk_img[] = { "make", "O=build", a_arch, a_cross, a_cc,
					 "LOCALVERSION=", a_jobs, t->image_target,
					 NULL };
		char *frag;
		size_t flen;
		FILE *cf;

		fprintf(log, "build: %s tinyconfig + %s\n", t->name, fragment);
		fflush(log);
		st = build_run(mk_tiny, tree, env, logfd, &mo, deadline, err, errlen);
		if (st != 0)
			goto made;
		pathf(config, sizeof(config), "%s/.config", bdir);
		frag = file_read(fragment, 1u << 20, &flen, err, errlen);
		cf = frag != NULL ? fopen(config, "ae") : NULL;
		if (cf == NULL) {
			free(frag);
			if (frag != NULL)
				errf(err, errlen, "open %s: %s", config, strerror(errno));
			goto out;
		}
		fwrite(frag, 1, flen, cf);
		fclose(cf);
		free(frag);
		st = build_run(mk_old, tree, env, logfd, &mo, deadline, err, errlen);
		if (st != 0)
			goto made;
		if (build_config_missing(fragment, config, missing,
					 sizeof(missing)) < 0) {
			errf(err, errlen, "cannot compare %s with the final .config",
			     fragment);
			goto out;
		}
		if (missing[0] != '\0') {
			/* The fragment is rcgate's or the operator's, not the
			 * rc's: a kernel without its console or disk would
			 * fail in confusing ways later. */
			errf(err, errlen, "%s: options dropped from the final"
			     " .config: %s", fragment, missing);
			goto out;
		}
		fprintf(log, "build: %s %s\n", t->name, t->image_target);
		fflush(log);
		steps_open(&steps, o, logpath, t->name);
		progress(o, "compiling", 0, steps.total);
		{
			struct build_options po = mo;

			po.poll = steps_poll;
			po.pollcls = &steps;
			st = build_run(mk_img, tree, env, logfd, &po, deadline,
				       err, errlen);
		}
		steps_poll(&steps);
	}
made:
	if (st < 0)
		goto out;
	if (st != 0) {
		fflush(log);
		if (log_tail_diag(logpath, tree, &res->diag) &&
		    res->diag.kind == BUILD_FAIL_INFRA) {
			errf(err, errlen, "build failed for lack of resources: %s",
			     res->diag.message);
			goto out;
		}
		if (res->diag.message[0] == '\0') {
			snprintf(res->diag.message, sizeof(res->diag.message),
				 "make exited with %d and no error line was"
				 " recognised", st);
			snprintf(res->diag.signature_text,
				 sizeof(res->diag.signature_text), "-: %s",
				 res->diag.message);
		}
		rc = 1;
		goto out;
	}
	pathf(image, sizeof(image), "%s/%s", bdir, t->image_path);
	pathf(outdir, sizeof(outdir), "%s/out", o->root);
	if (mkdir_p(outdir, 0755, err, errlen) < 0 ||
	    sha256_file(image, res->image_sha256, err, errlen) < 0)
		goto out;
	pathf(res->image, sizeof(res->image), "%s/%s-%.16s", outdir, t->name,
		 res->image_sha256);
	if (rename(image, res->image) < 0) {
		errf(err, errlen, "keep %s: %s", image, strerror(errno));
		goto out;
	}
	{
		char relpath[PATH_MAX];
		size_t n;
		char *kr;

		pathf(relpath, sizeof(relpath), "%s/include/config/kernel.release",
			 bdir);
		kr = file_read(relpath, 256, &n, NULL, 0);
		if (kr != NULL) {
			snprintf(res->kernelrelease, sizeof(res->kernelrelease), "%.*s",
				 (int)strcspn(kr, "\n"), kr);
			free(kr);
		}
	}
	/* A whole build's count is the next one's estimate; an incremental
	 * build's says only what changed. */
	if (!incremental)
		steps_keep(&steps);
	rc = 0;
out:
	if (dc.nrelay > 0) {
		distcc_account(&dc, log);
		distcc_stop_relays(&dc);
	}
	if (steps.fd >= 0)
		close(steps.fd);
	progress(o, rc == 0 ? "done" : "failed", steps.done, steps.total);
	res->seconds = now_monotonic() - start;
	fprintf(log, "build: %s %s in %.0f s%s%s\n", t->name,
		rc == 0 ? "built" : rc == 1 ? "failed (the source)" : "failed (infra)",
		res->seconds, rc < 0 ? ": " : "", rc < 0 ? err : "");
	fclose(log);
	/* ccache keeps the objects; a 1.5 GB tree is not worth keeping. A
	 * git worktree is, with its objects: the next commit builds only
	 * what differs. */
	if (src->tree == NULL && tree[0] != '\0')
		rm_rf(tree);
	return rc;
}
