/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the agent is told (cmdline.h): the rcgate.* keys of the kernel
 * command line (or the host's options) as an agent_config, and the notes
 * gathered before the output channel exists.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "protocol.h"
#include "suite.h"
#include "exer.h"
#include "cmdline.h"

void note_add(struct notes *n, const char *fmt, ...)
{
	va_list ap;

	if (n->count >= NOTES_MAX) {
		n->dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(n->line[n->count], NOTE_LEN, fmt, ap);
	va_end(ap);
	n->count++;
}

/* ---- kernel command line ---- */

static int parse_port(const char *v, struct agent_config *cfg, char *err,
		      size_t errlen)
{
	if (!suite_valid_name(v, sizeof(cfg->port))) {
		snprintf(err, errlen, "bad port name");
		return -1;
	}
	snprintf(cfg->port, sizeof(cfg->port), "%s", v);
	return 0;
}

static int parse_disk(const char *v, struct agent_config *cfg, char *err,
		      size_t errlen)
{
	if (strncmp(v, "/dev/", 5) != 0 || strstr(v, "..") != NULL ||
	    !suite_valid_name(v + 5, sizeof(cfg->disk) - 5)) {
		snprintf(err, errlen, "disk must be /dev/<name>");
		return -1;
	}
	snprintf(cfg->disk, sizeof(cfg->disk), "%s", v);
	return 0;
}

int parse_fs(const char *v, struct agent_config *cfg, char *err,
	     size_t errlen)
{
	/* Also the KTAP suite name, so it must be a valid test name. */
	if (!suite_valid_name(v, sizeof(cfg->fs))) {
		snprintf(err, errlen, "bad filesystem type");
		return -1;
	}
	snprintf(cfg->fs, sizeof(cfg->fs), "%s", v);
	return 0;
}

static int parse_disks(const char *v, struct agent_config *cfg, char *err,
		       size_t errlen)
{
	unsigned int n;

	if (disks_parse(v, cfg->disks, &n, err, errlen) != 0) {
		cfg->ndisks = 0;
		snprintf(cfg->disks_error, sizeof(cfg->disks_error),
			 RCGATE_KEY_DISKS "=%.60s: %s", v, err);
		return 0; /* reported as an infra error, not as a note */
	}
	cfg->ndisks = n;
	cfg->disks_error[0] = '\0';
	return 0;
}

static const struct phase_name {
	const char *name;
	enum phase phase;
} phase_names[] = {
	{ RCGATE_PHASE_CRASH_WRITE, PHASE_CRASH_WRITE },
	{ RCGATE_PHASE_CRASH_VERIFY, PHASE_CRASH_VERIFY },
};

int parse_phase(const char *v, struct agent_config *cfg, char *err,
		size_t errlen)
{
	size_t i;

	(void)err;
	(void)errlen;
	snprintf(cfg->phase_value, sizeof(cfg->phase_value), "%s", v);
	cfg->phase = PHASE_INVALID;
	for (i = 0; i < sizeof(phase_names) / sizeof(phase_names[0]); i++)
		if (strcmp(v, phase_names[i].name) == 0)
			cfg->phase = phase_names[i].phase;
	return 0;
}

int parse_expect(const char *v, struct agent_config *cfg, char *err,
		 size_t errlen)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || n < 0 ||
	    n > (1LL << 40)) {
		snprintf(err, errlen, "expect must be 0..2^40 bytes");
		return -1;
	}
	cfg->expect = n;
	return 0;
}

int parse_timeout(const char *v, struct agent_config *cfg, char *err,
		  size_t errlen)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || n < 1 || n > 86400) {
		snprintf(err, errlen, "timeout must be 1..86400 seconds");
		return -1;
	}
	cfg->timeout_s = (unsigned int)n;
	return 0;
}

/* rcgate.only=write_seq,append_4096: names as the suite's table has them. */
int parse_only(const char *v, struct agent_config *cfg, char *err,
	       size_t errlen)
{
	char name[64];

	if (strlen(v) >= sizeof(cfg->only)) {
		snprintf(err, errlen, "only: list too long");
		return -1;
	}
	for (const char *p = v; *p != '\0';) {
		size_t n = strcspn(p, ",");

		if (n == 0 || n >= sizeof(name)) {
			snprintf(err, errlen, "only: empty or long name");
			return -1;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		if (!suite_valid_name(name, sizeof(name))) {
			snprintf(err, errlen, "only: bad test name");
			return -1;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	snprintf(cfg->only, sizeof(cfg->only), "%s", v);
	return 0;
}

/* rcgate.exer=deep: the exerciser's rows run EXER_DEEP_FACTOR times
 * their seeds. */
static int parse_exer(const char *v, struct agent_config *cfg, char *err,
		      size_t errlen)
{
	(void)cfg;
	if (strcmp(v, RCGATE_EXER_DEEP) == 0)
		exer_seed_factor = EXER_DEEP_FACTOR;
	else if (strcmp(v, "default") == 0)
		exer_seed_factor = 1;
	else {
		snprintf(err, errlen, "exer: deep or default");
		return -1;
	}
	return 0;
}

static const struct cmdline_key {
	const char *key;
	int (*parse)(const char *v, struct agent_config *cfg, char *err,
		     size_t errlen);
} cmdline_keys[] = {
	{ RCGATE_KEY_PORT, parse_port },
	{ RCGATE_KEY_DISK, parse_disk },
	{ RCGATE_KEY_FS, parse_fs },
	{ RCGATE_KEY_DISKS, parse_disks },
	{ RCGATE_KEY_PHASE, parse_phase },
	{ RCGATE_KEY_EXPECT, parse_expect },
	{ RCGATE_KEY_TIMEOUT, parse_timeout },
	{ RCGATE_KEY_ONLY, parse_only },
	{ RCGATE_KEY_EXER, parse_exer },
};

void config_defaults(struct agent_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->port, sizeof(cfg->port), RCGATE_CHANNEL_NAME);
	snprintf(cfg->disk, sizeof(cfg->disk), "/dev/vda");
	snprintf(cfg->fs, sizeof(cfg->fs), "ext4");
	cfg->phase = PHASE_SUITE;
	cfg->expect = -1;
	cfg->timeout_s = 60;
}

/* Without rcgate.disks, the one disk of rcgate.disk and rcgate.fs. */
void config_finish(struct agent_config *cfg)
{
	if (cfg->ndisks > 0 || cfg->disks_error[0] != '\0')
		return;
	snprintf(cfg->disks[0].dev, sizeof(cfg->disks[0].dev), "%s", cfg->disk);
	snprintf(cfg->disks[0].fs, sizeof(cfg->disks[0].fs), "%s", cfg->fs);
	cfg->ndisks = 1;
}

/*
 * Apply the rcgate.* keys of a command line. Bad values keep the default and
 * leave a note; unknown words belong to the kernel and are ignored.
 */
static void cmdline_apply(const char *line, struct agent_config *cfg,
			  struct notes *notes)
{
	const char *p = line;

	while (*p != '\0') {
		char word[1100], err[128];
		size_t len = 0, i;
		const char *eq;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		while (p[len] != '\0' && p[len] != ' ' && p[len] != '\t' &&
		       p[len] != '\n')
			len++;
		if (len == 0)
			break;
		if (len >= sizeof(word)) {
			p += len;
			continue;
		}
		memcpy(word, p, len);
		word[len] = '\0';
		p += len;
		eq = strchr(word, '=');
		if (eq == NULL)
			continue;
		for (i = 0; i < sizeof(cmdline_keys) / sizeof(cmdline_keys[0]); i++) {
			size_t klen = strlen(cmdline_keys[i].key);

			if ((size_t)(eq - word) != klen ||
			    strncmp(word, cmdline_keys[i].key, klen) != 0)
				continue;
			if (cmdline_keys[i].parse(eq + 1, cfg, err, sizeof(err)) != 0)
				note_add(notes, "# rcgate-agent: ignoring %.100s: %s",
					 word, err);
		}
	}
}

void cmdline_read(struct agent_config *cfg, struct notes *notes)
{
	char buf[4096];
	ssize_t n;
	int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		note_add(notes, "# rcgate-agent: /proc/cmdline: %s", strerror(errno));
		return;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		note_add(notes, "# rcgate-agent: /proc/cmdline: %s", strerror(errno));
		return;
	}
	buf[n] = '\0';
	cmdline_apply(buf, cfg, notes);
}
