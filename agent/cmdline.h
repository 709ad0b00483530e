/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmdline.c: the agent's configuration from the kernel command line's
 * rcgate.* keys (or the host's options), and the notes gathered before
 * the output channel exists. Internal to the agent.
 */
#ifndef RCGATE_AGENT_CMDLINE_H
#define RCGATE_AGENT_CMDLINE_H

#include <stddef.h>

#include "suite.h"

#define NOTES_MAX 32
#define NOTE_LEN 200

enum phase {
	PHASE_SUITE,        /* rcgate.phase absent: the test table per disk */
	PHASE_CRASH_WRITE,  /* boot 1 of the crash test: write, then wait */
	PHASE_CRASH_VERIFY, /* boot 2: check what survived the power cut */
	PHASE_INVALID,      /* an infrastructure error, not a default */
};

struct agent_config {
	char port[128];
	char disk[64]; /* rcgate.disk + rcgate.fs: used without rcgate.disks */
	char fs[32];
	struct disk_spec disks[SUITE_MAX_DISKS];
	unsigned int ndisks; /* from rcgate.disks; 0: not given */
	/*
	 * A bad rcgate.disks must not fall back to one default disk: the
	 * host would take a smaller run for a complete one.
	 */
	char disks_error[160];
	enum phase phase;
	char phase_value[64]; /* for the infra line of an unknown phase */
	long long expect;     /* rcgate.expect, -1 when not given */
	unsigned int timeout_s;
	char only[1024];      /* rcgate.only: test names, "" for all */
};

/*
 * Lines gathered before the output channel exists (module loading happens
 * before virtio_console is loaded); printed once KTAP output has started.
 */
struct notes {
	unsigned int count;
	unsigned int dropped;
	char line[NOTES_MAX][NOTE_LEN];
};

void note_add(struct notes *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The keys' parsers the host's options share: 0, or -1 with a message in
 * err (the value is then not taken). */
int parse_fs(const char *v, struct agent_config *cfg, char *err,
	     size_t errlen);
int parse_phase(const char *v, struct agent_config *cfg, char *err,
		size_t errlen);
int parse_expect(const char *v, struct agent_config *cfg, char *err,
		 size_t errlen);
int parse_timeout(const char *v, struct agent_config *cfg, char *err,
		  size_t errlen);
int parse_only(const char *v, struct agent_config *cfg, char *err,
	       size_t errlen);

void config_defaults(struct agent_config *cfg);
/* Without rcgate.disks, the one disk of rcgate.disk and rcgate.fs. */
void config_finish(struct agent_config *cfg);
/* Applies /proc/cmdline's rcgate.* keys; bad values leave a note. */
void cmdline_read(struct agent_config *cfg, struct notes *notes);

#endif
