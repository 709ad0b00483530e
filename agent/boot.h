/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * boot.c: PID 1's early setup: pseudo filesystems, the console, modules,
 * the port and the disks, mounting them. Internal to the agent.
 */
#ifndef RCGATE_AGENT_BOOT_H
#define RCGATE_AGENT_BOOT_H

#include <stddef.h>

#include "suite.h"
#include "cmdline.h"

#define DEVICE_WAIT_MS 10000
#define FAILED_MODULES_MAX 16

/* Module files whose finit_module failed, to tell "not supported by this
 * kernel" apart from "our initramfs is broken". */
struct failed_modules {
	unsigned int count;
	char name[FAILED_MODULES_MAX][64];
};

/* DISK_RAW: the "bdev" disk, no filesystem; its suite runs on the device. */
enum disk_state { DISK_MOUNTED, DISK_UNSUPPORTED, DISK_RAW };

/* mkdir dir and mount src of type there; a failure is a note. */
void mount_one(const char *src, const char *dir, const char *type,
	       unsigned long flags, struct notes *notes);
/* Makes fds 0-2 the console (/dev/null without one): 1 with a console. */
int console_open(void);
/* finit_module for each line of the initramfs's load.list; failures are
 * notes and listed in failed. */
void modules_load(struct notes *notes, struct failed_modules *failed);
/* Waits up to DEVICE_WAIT_MS for the port (port_dev, *have_port) and every
 * disk of cfg (node[i]): -1 when all are there, else the index of a disk
 * missing. */
int devices_wait(const struct agent_config *cfg, char *port_dev,
		 size_t port_len, int *have_port, char node[][64]);
/* Mounts disk d (the nth of its filesystem: /mnt/<fs>, then /mnt/<fs>-1,
 * ...) with options opts (NULL for none); path receives the mount point.
 * 0 with *state set (a filesystem the kernel lacks is DISK_UNSUPPORTED),
 * or -1 with an infrastructure problem in err. */
int disk_mount(const struct disk_spec *d, const char *node, unsigned int nth,
	       const char *opts, const struct failed_modules *failed,
	       char *path, size_t pathlen, enum disk_state *state, char *err,
	       size_t errlen);

#endif
