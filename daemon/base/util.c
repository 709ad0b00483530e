/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * util.c - small helpers every module needs: error strings, whole-file I/O
 * with size caps, directory trees, SHA-256 (GLib's GChecksum), and running a
 * program without a shell.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/random.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "base/base.h"

void errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int pathf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

char *file_read(const char *path, size_t cap, size_t *len, char *err,
		size_t errlen)
{
	int fd;
	char *buf = NULL;
	size_t used = 0, size = 0;
	struct stat st;

	/* Non-blocking open and a regular-file check: a FIFO or a device
	 * dropped where a file is expected must not block the caller. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		errf(err, errlen, "open %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		errf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (size - used < 4096) {
			size_t nsize = size ? size * 2 : 8192;
			char *nbuf;

			/* Room for one byte past the cap, so a larger file
			 * is an error and never silently cut. */
			if (nsize > cap + 2)
				nsize = cap + 2;
			if (nsize <= used) {
				errf(err, errlen, "%s: larger than %zu bytes",
				     path, cap);
				goto fail;
			}
			nbuf = realloc(buf, nsize);
			if (nbuf == NULL) {
				errf(err, errlen, "%s: out of memory", path);
				goto fail;
			}
			buf = nbuf;
			size = nsize;
		}
		n = read(fd, buf + used, size - used - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			errf(err, errlen, "read %s: %s", path, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		if (used > cap) {
			errf(err, errlen, "%s: larger than %zu bytes", path, cap);
			goto fail;
		}
	}
	close(fd);
	if (buf == NULL) {
		buf = malloc(1);
		if (buf == NULL) {
			errf(err, errlen, "%s: out of memory", path);
			return NULL;
		}
	}
	buf[used] = '\0';
	if (len != NULL)
		*len = used;
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

/* Write path through a temporary file in its directory, created with mode,
 * synced and renamed over it: a reader sees the old or the new content. */
static int write_atomic(const char *path, const void *buf, size_t len,
			mode_t mode, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	const char *p = buf;
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >=
	    (int)sizeof(tmp)) {
		errf(err, errlen, "%s: path too long", path);
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0) {
		errf(err, errlen, "create %s: %s", tmp, strerror(errno));
		return -1;
	}
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			errf(err, errlen, "write %s: %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) < 0) {
		errf(err, errlen, "sync %s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (close(fd) < 0) {
		errf(err, errlen, "close %s: %s", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) < 0) {
		errf(err, errlen, "rename %s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

int lock_file(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		errf(err, errlen, "lock %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int file_write_atomic(const char *path, const void *buf, size_t len,
		      char *err, size_t errlen)
{
	return write_atomic(path, buf, len, 0644, err, errlen);
}

int file_write_if_changed(const char *path, const void *buf, size_t len,
			  mode_t mode, char *err, size_t errlen)
{
	size_t have_len = 0;
	char *have = file_read(path, len, &have_len, NULL, 0);
	int same = have != NULL && have_len == len &&
		   memcmp(have, buf, len) == 0;

	free(have);
	if (same)
		return 0;
	return write_atomic(path, buf, len, mode, err, errlen);
}

int mkdir_p(const char *path, mode_t mode, char *err, size_t errlen)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(buf)) {
		errf(err, errlen, "mkdir: bad path '%s'", path);
		return -1;
	}
	memcpy(buf, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST) {
			errf(err, errlen, "mkdir %s: %s", buf, strerror(errno));
			return -1;
		}
		if (i < len)
			buf[i] = '/';
	}
	return 0;
}

int rm_rf(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		char sub[PATH_MAX];

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >=
		    (int)sizeof(sub)) {
			rc = -1;
			continue;
		}
		if (rm_rf(sub) < 0)
			rc = -1;
	}
	closedir(d);
	if (rmdir(path) < 0)
		rc = -1;
	return rc;
}

void sha256_hex(const void *buf, size_t len, char out[65])
{
	GChecksum *ck = g_checksum_new(G_CHECKSUM_SHA256);

	g_checksum_update(ck, buf, (gssize)len);
	memcpy(out, g_checksum_get_string(ck), 64);
	out[64] = '\0';
	g_checksum_free(ck);
}

/* Hashes the open fd from its start into out. */
static int sha256_fd(int fd, const char *path, char out[65], char *err,
		     size_t errlen)
{
	unsigned char buf[65536];
	GChecksum *ck = g_checksum_new(G_CHECKSUM_SHA256);
	off_t off = 0;

	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			errf(err, errlen, "read %s: %s", path, strerror(errno));
			g_checksum_free(ck);
			return -1;
		}
		if (n == 0)
			break;
		g_checksum_update(ck, buf, n);
		off += n;
	}
	memcpy(out, g_checksum_get_string(ck), 64);
	out[64] = '\0';
	g_checksum_free(ck);
	return 0;
}

int sha256_file(const char *path, char out[65], char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0) {
		errf(err, errlen, "open %s: %s", path, strerror(errno));
		return -1;
	}
	rc = sha256_fd(fd, path, out, err, errlen);
	close(fd);
	return rc;
}

/*
 * The files this process hashed, by identity: a file whose device, inode,
 * size, mtime and ctime are those it had when it was hashed has not been
 * written since (every write, truncate, chmod or rename over it moves the
 * ctime, which no unprivileged caller can set back), so its hash is
 * known without reading it again. Kept in memory only: a restarted daemon
 * hashes each file once more.
 */
#define HASH_MEMO_SLOTS 64
struct hash_memo {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	char sha256[65];
};
static struct hash_memo hash_memo[HASH_MEMO_SLOTS];
static unsigned hash_memo_next;
static pthread_mutex_t hash_memo_lock = PTHREAD_MUTEX_INITIALIZER;

static int same_file(const struct hash_memo *m, const struct stat *st)
{
	return m->sha256[0] != '\0' && m->dev == st->st_dev &&
	       m->ino == st->st_ino && m->size == st->st_size &&
	       m->mtime.tv_sec == st->st_mtim.tv_sec &&
	       m->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       m->ctime.tv_sec == st->st_ctim.tv_sec &&
	       m->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

int sha256_file_memo(const char *path, char out[65], int *memo, char *err,
		     size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
	struct stat before, after;
	struct timespec now;

	*memo = 0;
	if (fd < 0 || fstat(fd, &before) < 0) {
		errf(err, errlen, "open %s: %s", path, strerror(errno));
		goto out;
	}
	pthread_mutex_lock(&hash_memo_lock);
	for (unsigned i = 0; i < HASH_MEMO_SLOTS && !*memo; i++) {
		if (same_file(&hash_memo[i], &before)) {
			memcpy(out, hash_memo[i].sha256, 65);
			*memo = 1;
		}
	}
	pthread_mutex_unlock(&hash_memo_lock);
	if (*memo) {
		rc = 0;
		goto out;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	if (sha256_fd(fd, path, out, err, errlen) < 0)
		goto out;
	rc = 0;
	/* Remembered only if nothing wrote the file while it was read, and
	 * only once its last change is a second old: timestamps move in
	 * clock ticks, so a write in the same tick as the one before would
	 * leave the ctime as it was (git's "racily clean" entries). */
	if (before.st_ctim.tv_sec + 1 < now.tv_sec &&
	    fstat(fd, &after) == 0 && after.st_ctim.tv_sec ==
	    before.st_ctim.tv_sec && after.st_ctim.tv_nsec ==
	    before.st_ctim.tv_nsec && after.st_size == before.st_size) {
		struct hash_memo m = {
			.dev = before.st_dev, .ino = before.st_ino,
			.size = before.st_size, .mtime = before.st_mtim,
			.ctime = before.st_ctim,
		};

		memcpy(m.sha256, out, 65);
		pthread_mutex_lock(&hash_memo_lock);
		hash_memo[hash_memo_next++ % HASH_MEMO_SLOTS] = m;
		pthread_mutex_unlock(&hash_memo_lock);
	}
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

int is_sha256_hex(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	}
	return i == 64;
}

double now_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cond_wait_ms(pthread_cond_t *cond, pthread_mutex_t *mu, long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(cond, mu, &ts);
}

void time_iso8601(time_t t, char buf[32])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void time_iso8601_ms(const struct timespec *ts, char buf[32])
{
	struct tm tm;
	size_t n;

	gmtime_r(&ts->tv_sec, &tm);
	n = strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, 32 - n, ".%03ldZ", ts->tv_nsec / 1000000L);
}

void time_rfc2822(time_t t, char buf[40])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, 40, "%a, %d %b %Y %H:%M:%S +0000", &tm);
}

void now_iso8601(char buf[32])
{
	time_iso8601(time(NULL), buf);
}

void strbuf_init(struct strbuf *sb, char *buf, size_t cap)
{
	sb->buf = buf;
	sb->cap = cap;
	sb->len = 0;
	sb->overflow = cap == 0;
	if (cap > 0)
		buf[0] = '\0';
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sb->cap - sb->len) {
		sb->overflow = 1;
		sb->len = strlen(sb->buf);
		return;
	}
	sb->len += (size_t)n;
}

int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	/* Digits only (a '-' first where negatives are allowed): strtol alone
	 * would also take leading blanks and '+', so "%201" named job 1. */
	if (s == NULL || !(isdigit((unsigned char)s[0]) ||
			   (s[0] == '-' && min < 0 && isdigit((unsigned char)s[1]))))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int token_generate(char out[48], char hash[65])
{
	unsigned char raw[20];
	struct strbuf sb;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return -1;
	strbuf_init(&sb, out, 48);
	strbuf_printf(&sb, "rcg_");
	for (size_t i = 0; i < sizeof(raw); i++)
		strbuf_printf(&sb, "%02x", raw[i]);
	if (sb.overflow)
		return -1;
	sha256_hex(out, sb.len, hash);
	return 0;
}

int word_list_has(const char *list, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = list; *p != '\0';) {
		size_t n;

		p += strspn(p, " ,");
		n = strcspn(p, " ,");
		if (n == wl && strncmp(p, word, n) == 0)
			return 1;
		p += n;
	}
	return 0;
}
