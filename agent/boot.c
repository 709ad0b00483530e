/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PID 1's early setup (boot.h): the pseudo filesystems and the console,
 * the initramfs's modules, the results port and the disks, each disk
 * mounted.
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
#include "cmdline.h"
#include "boot.h"

#define MODULE_DIR "/" RCGATE_INITRAMFS_MODULE_DIR
#define MODULE_LIST "/" RCGATE_INITRAMFS_MODULE_LIST
#define MODULE_LIST_MAX (64 * 1024)
#define MOUNT_POINT "/mnt"

/* ---- early setup ---- */

void mount_one(const char *src, const char *dir, const char *type,
	       unsigned long flags, struct notes *notes)
{
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		note_add(notes, "# rcgate-agent: mkdir %s: %s", dir, strerror(errno));
	if (mount(src, dir, type, flags, NULL) != 0 && errno != EBUSY)
		note_add(notes, "# rcgate-agent: mount %s on %s: %s", type, dir,
			 strerror(errno));
}

/*
 * Make fds 0-2 the console. The kernel opens them for init only when the
 * initramfs has a /dev/console node, so usually they are closed here. Without
 * a console they become /dev/null, so that no later open() lands on 0-2 and
 * gets mistaken for the console. Returns 1 with a console, 0 without.
 */
int console_open(void)
{
	int fd = open("/dev/console", O_RDWR | O_NOCTTY | O_CLOEXEC);
	int ret = 1;

	if (fd < 0) {
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		ret = 0;
	}
	if (fd < 0)
		return 0;
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
	return ret;
}

/* ---- modules ---- */

static void module_failed(struct failed_modules *failed, const char *name)
{
	if (failed->count < FAILED_MODULES_MAX)
		snprintf(failed->name[failed->count++], sizeof(failed->name[0]),
			 "%s", name);
}

static void module_load(const char *name, struct notes *notes,
			struct failed_modules *failed)
{
	char path[512];
	int n, fd;

	if (name[0] == '/' || strstr(name, "..") != NULL) {
		note_add(notes, "# module %.100s: refusing path outside " MODULE_DIR,
			 name);
		return;
	}
	n = snprintf(path, sizeof(path), MODULE_DIR "/%s", name);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		note_add(notes, "# module %.100s: name too long", name);
		return;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		note_add(notes, "# module %.100s: open %s: %s", name, path,
			 strerror(errno));
		module_failed(failed, name);
		return;
	}
	if (syscall(SYS_finit_module, fd, "", 0) != 0 && errno != EEXIST) {
		int e = errno;

		/* The kernel says ENOENT for unresolved symbols, not a file. */
		note_add(notes, "# module %.100s: finit_module: %s%s", name,
			 strerror(e),
			 e == ENOENT ? " (unresolved symbols: a dependency missing or listed later?)" : "");
		module_failed(failed, name);
	}
	close(fd);
}

/*
 * Load every module named in load.list, in order (the daemon wrote it in
 * dependency order). Failures are notes, not fatal: what matters is whether
 * the disk and the port show up, which is checked afterwards.
 */
void modules_load(struct notes *notes, struct failed_modules *failed)
{
	static char list[MODULE_LIST_MAX];
	ssize_t n;
	size_t used = 0;
	char *line, *nl;
	int fd = open(MODULE_LIST, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		if (errno != ENOENT)
			note_add(notes, "# rcgate-agent: " MODULE_LIST ": %s",
				 strerror(errno));
		return;
	}
	while (used < sizeof(list) - 1 &&
	       (n = read(fd, list + used, sizeof(list) - 1 - used)) > 0)
		used += (size_t)n;
	close(fd);
	list[used] = '\0';
	for (line = list; *line != '\0'; line = nl) {
		char *end;

		nl = strchr(line, '\n');
		if (nl != NULL)
			*nl++ = '\0';
		else
			nl = line + strlen(line);
		while (*line == ' ' || *line == '\t')
			line++;
		end = line + strlen(line);
		while (end > line && (end[-1] == ' ' || end[-1] == '\t' ||
				      end[-1] == '\r'))
			*--end = '\0';
		if (*line == '\0' || *line == '#')
			continue;
		module_load(line, notes, failed);
	}
}

/* ---- devices ---- */

/*
 * Find the virtio-serial port called name: its /dev node is named after its
 * sysfs directory (vportNpM, N depending on the bus). Returns 0 with the path
 * in dev, -1 when not (yet) present.
 */
static int port_find(const char *name, char *dev, size_t devlen)
{
	DIR *dir = opendir("/sys/class/virtio-ports");
	struct dirent *de;
	int found = -1;

	if (dir == NULL)
		return -1;
	while (found != 0 && (de = readdir(dir)) != NULL) {
		char path[512], buf[256];
		ssize_t n;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		n = snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name",
			     de->d_name);
		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		if (buf[n - 1] == '\n')
			buf[n - 1] = '\0';
		if (strcmp(buf, name) != 0)
			continue;
		n = snprintf(dev, devlen, "/dev/%s", de->d_name);
		if (n > 0 && (size_t)n < devlen && access(dev, W_OK) == 0)
			found = 0;
	}
	closedir(dir);
	return found;
}

static int is_block_device(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISBLK(st.st_mode);
}

/*
 * Read /sys/block/<name>/serial. Returns 1 with the text in buf, 0 when the
 * device has no serial attribute, -1 when it cannot be read (yet).
 */
static int block_serial(const char *name, char *buf, size_t len)
{
	char path[300];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/block/%s/serial", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 1;
}

/*
 * The host names disks by their virtio serial, "rcgate-vda" and so on,
 * because the kernel's vda, vdb, ... follow probe order, which is reversed
 * on virtio-mmio. One scan of /sys/block: for each wanted disk the node
 * whose serial names it. A host that sets no such serials (bare qemu) gets
 * the names as they are, but only once the name's own serial says it is
 * not someone else's disk.
 */
static void disks_find(const struct agent_config *cfg,
		       char node[][64], int *found)
{
	static const char prefix[] = RCGATE_DISK_SERIAL_PREFIX;
	DIR *dir = opendir("/sys/block");
	struct dirent *de;
	int host_serials = 0;
	unsigned int i;

	while (dir != NULL && (de = readdir(dir)) != NULL) {
		char serial[64];

		if (de->d_name[0] == '.' ||
		    block_serial(de->d_name, serial, sizeof(serial)) != 1 ||
		    strncmp(serial, prefix, sizeof(prefix) - 1) != 0)
			continue;
		host_serials = 1;
		for (i = 0; i < cfg->ndisks; i++) {
			char path[300];

			if (found[i] ||
			    strcmp(serial + sizeof(prefix) - 1,
				   cfg->disks[i].dev + 5) != 0)
				continue;
			snprintf(path, sizeof(path), "/dev/%s", de->d_name);
			if (strlen(path) < 64 && is_block_device(path)) {
				memcpy(node[i], path, strlen(path) + 1);
				found[i] = 1;
			}
		}
	}
	if (dir != NULL)
		closedir(dir);
	if (host_serials)
		return;
	for (i = 0; i < cfg->ndisks; i++) {
		char serial[64];

		if (found[i] || !is_block_device(cfg->disks[i].dev) ||
		    block_serial(cfg->disks[i].dev + 5, serial,
				 sizeof(serial)) < 0 ||
		    strncmp(serial, prefix, sizeof(prefix) - 1) == 0)
			continue;
		snprintf(node[i], 64, "%s", cfg->disks[i].dev);
		found[i] = 1;
	}
}

/*
 * Devices appear asynchronously after module load: poll for the port and
 * every disk (node[i] receives disk i's device node). Returns the index of
 * the first disk still missing at the deadline, or -1 when all are there.
 */
int devices_wait(const struct agent_config *cfg, char *port_dev,
		 size_t port_len, int *have_port, char node[][64])
{
	long long deadline = now_ms() + DEVICE_WAIT_MS;
	int found[SUITE_MAX_DISKS] = { 0 };

	*have_port = 0;
	for (;;) {
		int missing = -1;
		unsigned int i;

		if (!*have_port)
			*have_port = port_find(cfg->port, port_dev, port_len) == 0;
		disks_find(cfg, node, found);
		for (i = 0; i < cfg->ndisks && missing < 0; i++)
			if (!found[i])
				missing = (int)i;
		if ((*have_port && missing < 0) || now_ms() >= deadline)
			return missing;
		sleep_ms(20);
	}
}

/* ---- mounting the disks ---- */

static int fs_in_kernel(const char *fs)
{
	static char text[8192];
	ssize_t n;
	int fd = open("/proc/filesystems", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	return fs_listed(text, fs);
}

static int module_did_fail(const struct failed_modules *failed,
			   const char *fs)
{
	char file[64];
	unsigned int i;

	snprintf(file, sizeof(file), "%s.ko", fs);
	for (i = 0; i < failed->count; i++)
		if (strcmp(failed->name[i], file) == 0 ||
		    strcmp(failed->name[i], fs) == 0)
			return 1;
	return 0;
}

/*
 * Mount disk d (found at node) on /mnt/<fs> (path receives it). Returns 0 with *state set,
 * or -1 with an infrastructure problem in err. A filesystem this kernel does
 * not have is DISK_UNSUPPORTED (a SKIP), unless its module was in the
 * initramfs and failed to load: that is our problem, not the kernel's.
 */
/*
 * Mounts disk d (the nth of its filesystem: /mnt/<fs>, then /mnt/<fs>-1,
 * ...) with options opts (NULL for none). A filesystem the kernel lacks is
 * DISK_UNSUPPORTED, not an error: every phase reports it as a SKIP.
 */
int disk_mount(const struct disk_spec *d, const char *node,
	       unsigned int nth, const char *opts,
	       const struct failed_modules *failed,
	       char *path, size_t pathlen, enum disk_state *state,
	       char *err, size_t errlen)
{
	int n, e, listed;

	if (strcmp(d->fs, RCGATE_FS_BDEV) == 0) {
		n = snprintf(path, pathlen, "%s", node);
		if (n < 0 || (size_t)n >= pathlen) {
			snprintf(err, errlen, "device name %.64s too long", node);
			return -1;
		}
		*state = DISK_RAW;
		return 0;
	}
	n = nth == 0 ? snprintf(path, pathlen, MOUNT_POINT "/%s", d->fs) :
		       snprintf(path, pathlen, MOUNT_POINT "/%s-%u", d->fs, nth);
	if (n < 0 || (size_t)n >= pathlen) {
		snprintf(err, errlen, "mount point for %s too long", d->fs);
		return -1;
	}
	if ((mkdir(MOUNT_POINT, 0755) != 0 && errno != EEXIST) ||
	    (mkdir(path, 0755) != 0 && errno != EEXIST)) {
		snprintf(err, errlen, "mkdir %.64s: %s", path, strerror(errno));
		return -1;
	}
	if (mount(node, path, d->fs, 0, opts) == 0) {
		*state = DISK_MOUNTED;
		return 0;
	}
	e = errno;
	listed = fs_in_kernel(d->fs);
	if (mount_error_unsupported(e, listed) && !module_did_fail(failed, d->fs)) {
		*state = DISK_UNSUPPORTED;
		return 0;
	}
	/* Mount points are short ("/mnt/btrfs-4"): the bounds only tell the
	 * compiler so. */
	snprintf(err, errlen, "mount %.64s on %.64s (%s): %s%s", node, path, d->fs,
		 strerror(e),
		 module_did_fail(failed, d->fs) ? " (its module failed to load)" :
		 !listed ? " (not in /proc/filesystems)" : "");
	return -1;
}
