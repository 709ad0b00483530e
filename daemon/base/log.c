/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * log.c - owns the log destination. One record per line:
 * "2026-12-03T07:00:00Z level=info msg..." so logs grep well. Thread-safe;
 * SIGHUP makes main call log_reopen() for logrotate.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_fp;
static char *log_path;
static enum log_level log_threshold = LOG_INFO;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

int log_level_parse(const char *s, enum log_level *out)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -1;
}

static FILE *log_open_file(const char *path, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "ae");
	struct stat sb;

	if (fp == NULL) {
		errf(err, errlen, "open log %s: %s", path, strerror(errno));
		return NULL;
	}
	setvbuf(fp, NULL, _IOLBF, 0);
	/* The log names jobs, hosts and mail addresses: its user's alone,
	 * also when it was made earlier or by someone else's umask (a
	 * log that is not ours, or not a file, keeps its mode). */
	if (fstat(fileno(fp), &sb) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_uid == geteuid() && (sb.st_mode & 077) != 0)
		(void)fchmod(fileno(fp), sb.st_mode & 0700);
	return fp;
}

int log_init(const char *path, enum log_level level, char *err, size_t errlen)
{
	FILE *fp = NULL;

	if (path != NULL && strcmp(path, "-") != 0) {
		fp = log_open_file(path, err, errlen);
		if (fp == NULL)
			return -1;
	}
	pthread_mutex_lock(&log_lock);
	if (log_fp != NULL)
		fclose(log_fp);
	free(log_path);
	log_fp = fp;
	log_path = fp != NULL ? strdup(path) : NULL;
	log_threshold = level;
	pthread_mutex_unlock(&log_lock);
	return 0;
}

int log_reopen(void)
{
	int rc = 0;

	pthread_mutex_lock(&log_lock);
	if (log_path != NULL) {
		FILE *fp = log_open_file(log_path, NULL, 0);

		if (fp != NULL) {
			fclose(log_fp);
			log_fp = fp;
		} else {
			rc = -1;
		}
	}
	pthread_mutex_unlock(&log_lock);
	return rc;
}

void log_free(void)
{
	pthread_mutex_lock(&log_lock);
	if (log_fp != NULL)
		fclose(log_fp);
	log_fp = NULL;
	free(log_path);
	log_path = NULL;
	pthread_mutex_unlock(&log_lock);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char line[2048], ts[32];
	va_list ap;

	if (level > log_threshold)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* A record is one line whatever the message carried, and no
	 * control character (an ESC from a commit subject or a mail) reaches
	 * a terminal or a log reader. */
	for (char *p = line; *p != '\0'; p++) {
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
		else if ((unsigned char)*p < ' ' || *p == 0x7f)
			*p = '?';
	}
	now_iso8601(ts);
	pthread_mutex_lock(&log_lock);
	fprintf(log_fp != NULL ? log_fp : stderr, "%s level=%s %s\n", ts,
		level_names[level], line);
	pthread_mutex_unlock(&log_lock);
}

void joblog_vwrite(FILE *f, const char *fmt, va_list ap)
{
	struct timespec now;
	char ts[32];

	if (f == NULL)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	time_iso8601_ms(&now, ts);
	/* stdio's own lock (recursive) keeps the line whole against the
	 * job's other writers. */
	flockfile(f);
	fprintf(f, "%s ", ts);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fflush(f);
	funlockfile(f);
}

void joblog_write(FILE *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	joblog_vwrite(f, fmt, ap);
	va_end(ap);
}
