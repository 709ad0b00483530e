/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rcgate-agent: the guest's /init. Owns the guest side of a job: mounting
 * the pseudo filesystems, the kernel command line keys (rcgate.*), module
 * loading, finding the results port and the disks, mounting each disk, the
 * phase of a crash-consistency run, the top level of the KTAP output with its
 * completeness marker, and powering the guest off whatever happens. The
 * tests themselves live in suite.c.
 *
 * Host use (debugging): rcgate-agent --dir <path> [--fs name] [--timeout s]
 *                       [--phase crash-write|crash-verify --expect bytes]
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
#include "table.h"
#include "tests.h"

#ifndef AGENT_VERSION
#define AGENT_VERSION "0.1"
#endif

#define DEVICE_WAIT_MS 10000
#define MODULE_DIR "/" RCGATE_INITRAMFS_MODULE_DIR
#define MODULE_LIST "/" RCGATE_INITRAMFS_MODULE_LIST
#define MODULE_LIST_MAX (64 * 1024)
#define NOTES_MAX 32
#define NOTE_LEN 200
#define MOUNT_POINT "/mnt"
#define FAILED_MODULES_MAX 16

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

/* Module files whose finit_module failed, to tell "not supported by this
 * kernel" apart from "our initramfs is broken". */
struct failed_modules {
	unsigned int count;
	char name[FAILED_MODULES_MAX][64];
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

/* Where the fatal-signal handler can still write: console and port. */
static volatile int crash_fds[2] = { -1, -1 };
static long long agent_start_ms;

static void note_add(struct notes *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note_add(struct notes *n, const char *fmt, ...)
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

static void write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		len -= (size_t)w;
	}
}

/*
 * The end of every guest run. As PID 1 we must never exit (the kernel would
 * panic and, without panic=, hang), so if power-off does not happen (a kernel
 * without ACPI only halts) we wait here for the host to destroy us.
 */
static void __attribute__((noreturn)) power_off(void)
{
	sync();
	reboot(RB_POWER_OFF);
	reboot(RB_HALT_SYSTEM);
	for (;;)
		pause();
}

/* Async-signal-safe: raw write(2) of a fixed message plus the number. */
static void fatal_signal(int sig)
{
	char msg[96] = RCGATE_INFRA " agent killed by signal ";
	size_t len;
	char digits[12];
	int nd = 0, i;
	unsigned int v = (unsigned int)sig;

	if (sig == SIGALRM)
		memcpy(msg, RCGATE_INFRA " agent watchdog expired, signal ",
		       sizeof(RCGATE_INFRA " agent watchdog expired, signal "));
	len = strlen(msg);
	do {
		digits[nd++] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0 && nd < (int)sizeof(digits));
	while (nd > 0 && len + 2 < sizeof(msg))
		msg[len++] = digits[--nd];
	msg[len++] = '\n';
	for (i = 0; i < 2; i++)
		if (crash_fds[i] >= 0)
			write_all(crash_fds[i], msg, len);
	power_off();
}

static void install_fatal_handlers(unsigned int watchdog_s)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fatal_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < suite_nfatal_signals; i++)
		sigaction(suite_fatal_signals[i], &sa, NULL);
	/*
	 * Last resort against anything that hangs PID 1 itself (each test is
	 * already bounded in suite.c): SIGALRM reports and powers off.
	 */
	alarm(watchdog_s);
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

static int parse_fs(const char *v, struct agent_config *cfg, char *err,
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

static int parse_phase(const char *v, struct agent_config *cfg, char *err,
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

static int parse_expect(const char *v, struct agent_config *cfg, char *err,
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

static int parse_timeout(const char *v, struct agent_config *cfg, char *err,
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
static int parse_only(const char *v, struct agent_config *cfg, char *err,
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
};

static void config_defaults(struct agent_config *cfg)
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
static void config_finish(struct agent_config *cfg)
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

static void cmdline_read(struct agent_config *cfg, struct notes *notes)
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

/* ---- early setup ---- */

static void mount_one(const char *src, const char *dir, const char *type,
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
static int console_open(void)
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
static void modules_load(struct notes *notes, struct failed_modules *failed)
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
static int devices_wait(const struct agent_config *cfg, char *port_dev,
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

/* DISK_RAW: the "bdev" disk, no filesystem; its suite runs on the device. */
enum disk_state { DISK_MOUNTED, DISK_UNSUPPORTED, DISK_RAW };

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
static int disk_mount(const struct disk_spec *d, const char *node,
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

/* ---- output ---- */

/* KTAP goes to the port and, mirrored, to the console log. */
struct mirror {
	int fd[2];
	int n;
};

static ssize_t mirror_write(void *cookie, const char *buf, size_t len)
{
	struct mirror *m = cookie;
	int i;

	for (i = 0; i < m->n; i++)
		write_all(m->fd[i], buf, len);
	return (ssize_t)len;
}

static int mirror_close(void *cookie)
{
	(void)cookie;
	return 0;
}

/* Returns a stream owned by the caller (fclose), or stdout on failure. */
static FILE *mirror_open(struct mirror *m)
{
	cookie_io_functions_t io = {
		.write = mirror_write,
		.close = mirror_close,
	};
	FILE *f = fopencookie(m, "w", io);

	if (f == NULL)
		return stdout;
	setvbuf(f, NULL, _IOLBF, 0);
	return f;
}

static void print_header(FILE *out)
{
	struct utsname u;

	if (uname(&u) != 0) {
		snprintf(u.release, sizeof(u.release), "unknown");
		snprintf(u.version, sizeof(u.version), "unknown");
		snprintf(u.machine, sizeof(u.machine), "unknown");
	}
	fprintf(out, "KTAP version 1\n");
	fprintf(out, RCGATE_AGENT_INFO "version=%s kernel=%s machine=%s\n",
		AGENT_VERSION, u.release, u.machine);
	/* The daemon tells from it which version really runs (Debian names
	 * the upstream version only here). */
	fprintf(out, RCGATE_UTS "%s\n", u.version);
}

static void print_notes(FILE *out, const struct notes *notes)
{
	unsigned int i;

	for (i = 0; i < notes->count; i++)
		fprintf(out, "%s\n", notes->line[i]);
	if (notes->dropped > 0)
		fprintf(out, "# rcgate-agent: %u more notes not shown\n",
			notes->dropped);
}

static void counts_add(struct suite_counts *total, const struct suite_counts *c)
{
	total->pass += c->pass;
	total->fail += c->fail;
	total->skip += c->skip;
}

static void print_marker(FILE *out, const struct suite_counts *c)
{
	fprintf(out, RCGATE_MARKER " " RCGATE_MARKER_PASS "=%u "
		RCGATE_MARKER_FAIL "=%u " RCGATE_MARKER_SKIP "=%u "
		RCGATE_MARKER_DURATION "=%lld\n",
		c->pass, c->fail, c->skip, now_ms() - agent_start_ms);
	fflush(out);
}

static void infra(FILE *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void infra(FILE *out, const char *fmt, ...)
{
	va_list ap;

	fprintf(out, RCGATE_INFRA " ");
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fprintf(out, "\n");
	fflush(out);
}

/*
 * The top level of a normal run: the plan (one suite per disk), then per
 * disk either the nested suite and its result, or a SKIP line when the
 * kernel lacks the filesystem. dirs[i] is where disk i is mounted. Returns
 * 0 with the leaf counts in total, or -1 after printing an rcgate-infra
 * line.
 */
static int run_suites(FILE *out, const struct agent_config *cfg,
		      const char *const *dirs, const enum disk_state *state,
		      struct suite_counts *total)
{
	struct suite_options opt = { .timeout_s = cfg->timeout_s,
				     .only = cfg->only[0] ? cfg->only : NULL };
	unsigned int i;

	memset(total, 0, sizeof(*total));
	fprintf(out, "1..%u\n", cfg->ndisks);
	fflush(out);
	for (i = 0; i < cfg->ndisks; i++) {
		const char *fs = cfg->disks[i].fs;
		struct suite_counts c;
		char err[256];

		if (state[i] == DISK_UNSUPPORTED) {
			/* A leaf at the top level: counted as one skip. */
			fprintf(out, "ok %u %s # SKIP %s not supported by this kernel\n",
				i + 1, fs, fs);
			fflush(out);
			total->skip++;
			continue;
		}
		if (suite_run(dirs[i], fs, out, &opt, &c, err, sizeof(err)) != 0) {
			infra(out, "%s", err);
			return -1;
		}
		fprintf(out, "%s %u %s\n", c.fail > 0 ? "not ok" : "ok", i + 1, fs);
		fflush(out);
		counts_add(total, &c);
	}
	return 0;
}

/*
 * Boot 1 of the crash test must not be rescued by a timer: ext4 commits
 * its journal every 5 s, btrfs its transaction every 30 s and xfs forces
 * its log from a 30 s worker, and each would make durable what a promise
 * failed to. The power cut comes within seconds, but a loaded host under
 * TCG is slow: the intervals go to 10 minutes (xfs: its sysctl's maximum,
 * 2 hours). Only longer, never shorter: a kept promise stays kept.
 */
static const char *crash_mount_options(const char *fs)
{
	if (strcmp(fs, "ext4") == 0 || strcmp(fs, "btrfs") == 0)
		return "commit=600";
	return NULL;
}

static void crash_quiet_timers(void)
{
	int fd = open("/proc/sys/fs/xfs/xfssyncd_centisecs",
		      O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		write_all(fd, "720000\n", 7);
		close(fd);
	}
}

/* How many disks of disk i's filesystem come before it: its promise
 * (mod CRASH_PROMISES) in the crash phases, its mount point's number. */
static unsigned int disk_nth(const struct agent_config *cfg, unsigned int i)
{
	unsigned int k = 0;

	for (unsigned int j = 0; j < i; j++)
		k += strcmp(cfg->disks[j].fs, cfg->disks[i].fs) == 0;
	return k;
}

/* One promise of the crash test: where, and which. */
struct crash_slot {
	const char *fs, *dev;
	struct crash_disk disk;
};

/*
 * The promises of a crash phase: in the guest one per disk, the k-th disk
 * of a filesystem holding promise k; on the host (host != 0) every promise
 * in the one directory. Returns how many.
 */
static unsigned int crash_slots(const struct agent_config *cfg,
				const char *const *dirs,
				const enum disk_state *state, int host,
				struct crash_slot *s)
{
	unsigned int i, n = host ? CRASH_PROMISES : cfg->ndisks;

	for (i = 0; i < n; i++) {
		unsigned int disk = host ? 0 : i;

		s[i].fs = cfg->disks[disk].fs;
		s[i].dev = host ? dirs[0] : cfg->disks[disk].dev;
		s[i].disk.dir = dirs[disk];
		s[i].disk.promise = host ? i : disk_nth(cfg, i) % CRASH_PROMISES;
		s[i].disk.unsupported = state[disk] != DISK_MOUNTED;
	}
	return n;
}

/*
 * Boot 1 of the crash test: every promise, each one's durable line, the
 * ready line, then nothing: no close, no sync, no unmount, until the host
 * cuts the power. A promise this kernel cannot make (no AIO, no io_uring,
 * no such filesystem) is a comment here and a SKIP in boot 2. Returns -1
 * after an infra line when a file could not even be created.
 */
static int crash_write_phase(FILE *out, const struct crash_slot *s,
			     unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		const char *test = crash_test_name(s[i].disk.promise);
		struct diag d;
		char err[256];
		long long written;
		int fd;

		if (s[i].disk.unsupported) {
			fprintf(out, "# crash-write: %s %s %s: %s not supported "
				"by this kernel\n", s[i].fs, s[i].dev, test,
				s[i].fs);
			continue;
		}
		if (crash_unsupported(s[i].disk.promise, err, sizeof(err))) {
			fprintf(out, "# crash-write: %s %s %s: skipped, %s\n",
				s[i].fs, s[i].dev, test, err);
			continue;
		}
		written = crash_write(s[i].disk.dir, s[i].disk.promise, &fd, &d,
				      err, sizeof(err));
		if (written < 0) {
			infra(out, "%s", err);
			return -1;
		}
		for (unsigned int k = 0; k < d.count; k++)
			fprintf(out, "# crash-write: %s %s %s: %s\n", s[i].fs,
				s[i].dev, test, d.line[k]);
		fprintf(out, RCGATE_DURABLE " fs=%s dev=%s test=%s file=%s"
			RCGATE_DURABLE_SIZE "%lld block=%d\n", s[i].fs, s[i].dev,
			test, crash_file_name(s[i].disk.promise), written,
			CRASH_BLOCK);
		fflush(out);
		/* Kept open on purpose: closing could write back what the
		 * promise owes. */
		(void)fd;
	}
	fprintf(out, RCGATE_CRASH_READY "\n");
	fflush(out);
	return 0;
}

/* Whether slot i is the first of its filesystem. */
static int crash_slot_first(const struct crash_slot *s, unsigned int i)
{
	for (unsigned int j = 0; j < i; j++)
		if (strcmp(s[j].fs, s[i].fs) == 0)
			return 0;
	return 1;
}

/* Boot 2: one nested block per filesystem, in the order of rcgate.disks,
 * each followed by its parent's result. */
static void crash_verify_phase(FILE *out, const struct crash_slot *s,
			       unsigned int n, long long expect,
			       struct suite_counts *total)
{
	unsigned int groups = 0, number = 0;

	memset(total, 0, sizeof(*total));
	for (unsigned int i = 0; i < n; i++)
		groups += (unsigned int)crash_slot_first(s, i);
	fprintf(out, "1..%u\n", groups);
	fflush(out);
	for (unsigned int i = 0; i < n; i++) {
		struct crash_disk disks[SUITE_MAX_DISKS];
		struct suite_counts c;
		unsigned int k = 0;

		if (!crash_slot_first(s, i))
			continue;	/* its filesystem's block is printed */
		for (unsigned int j = i; j < n && k < SUITE_MAX_DISKS; j++)
			if (strcmp(s[j].fs, s[i].fs) == 0)
				disks[k++] = s[j].disk;
		crash_verify_run(disks, k, s[i].fs, expect, out, &c);
		fprintf(out, "%s %u %s\n", c.fail > 0 ? "not ok" : "ok", ++number,
			s[i].fs);
		fflush(out);
		counts_add(total, &c);
	}
}

/* Checks of the phase keys that do not need any device. */
static int phase_check(const struct agent_config *cfg, char *err,
		       size_t errlen)
{
	if (cfg->phase == PHASE_INVALID) {
		snprintf(err, errlen, "unknown " RCGATE_KEY_PHASE "=%s ("
			 RCGATE_PHASE_CRASH_WRITE ", " RCGATE_PHASE_CRASH_VERIFY
			 " or none)", cfg->phase_value);
		return -1;
	}
	if (cfg->phase != PHASE_SUITE && cfg->ndisks == 0) {
		snprintf(err, errlen, RCGATE_KEY_PHASE "=%s needs a disk",
			 cfg->phase_value);
		return -1;
	}
	/* The crash phases hold one promise per disk, several disks of one
	 * filesystem; the suite's results are named by filesystem. */
	for (unsigned int i = 0; cfg->phase == PHASE_SUITE && i < cfg->ndisks;
	     i++) {
		if (disk_nth(cfg, i) > 0) {
			snprintf(err, errlen, "filesystem %s listed twice in "
				 RCGATE_KEY_DISKS, cfg->disks[i].fs);
			return -1;
		}
	}
	if (cfg->phase == PHASE_CRASH_VERIFY && cfg->expect < 0) {
		snprintf(err, errlen, RCGATE_KEY_PHASE "=" RCGATE_PHASE_CRASH_VERIFY
			 " without a valid " RCGATE_KEY_EXPECT);
		return -1;
	}
	return 0;
}

static void __attribute__((noreturn)) init_main(void)
{
	static struct agent_config cfg;
	static struct notes notes;
	static struct failed_modules failed;
	/* "/mnt/" and a filesystem name (< 32 bytes, checked on parsing). */
	static char dirs[SUITE_MAX_DISKS][48];
	static char node[SUITE_MAX_DISKS][64];
	const char *dirp[SUITE_MAX_DISKS];
	enum disk_state state[SUITE_MAX_DISKS];
	static struct crash_slot slots[SUITE_MAX_DISKS];
	unsigned int nslots;
	struct suite_counts counts;
	struct mirror m = { .fd = { -1, -1 }, .n = 0 };
	char port_dev[300] = "", err[512];
	int have_port, have_console, missing, port_fd = -1;
	unsigned int i, mounted = 0;
	size_t ntests;
	FILE *out;

	/* Before anything can fault: a crash must power off, not hang. */
	install_fatal_handlers(0);
	mount_one("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, &notes);
	have_console = console_open();
	if (have_console)
		crash_fds[0] = 1;
	mount_one("proc", "/proc", "proc", MS_NOSUID | MS_NOEXEC | MS_NODEV,
		  &notes);
	mount_one("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NOEXEC | MS_NODEV,
		  &notes);
	config_defaults(&cfg);
	cmdline_read(&cfg, &notes);
	config_finish(&cfg);
	suite_tests(&ntests);
	/* Generous: every test on every disk may time out, plus boot waits. */
	alarm(cfg.timeout_s * (unsigned int)(ntests + 2) *
	      (cfg.ndisks > 0 ? cfg.ndisks : 1) + 120);
	modules_load(&notes, &failed);
	missing = devices_wait(&cfg, port_dev, sizeof(port_dev), &have_port,
			       node);

	if (have_port) {
		port_fd = open(port_dev, O_WRONLY | O_CLOEXEC);
		if (port_fd < 0) {
			note_add(&notes, "# rcgate-agent: open %s: %s", port_dev,
				 strerror(errno));
			have_port = 0;
		}
	}
	if (have_port) {
		m.fd[m.n++] = port_fd;
		crash_fds[1] = port_fd;
	}
	if (have_console)
		m.fd[m.n++] = 1;
	out = mirror_open(&m);

	print_header(out);
	if (!have_port)
		infra(out, "results port %s not found", cfg.port);
	print_notes(out, &notes);
	if (cfg.disks_error[0] != '\0') {
		infra(out, "%s", cfg.disks_error);
		power_off();
	}
	if (phase_check(&cfg, err, sizeof(err)) != 0) {
		infra(out, "%s", err);
		power_off();
	}
	if (missing >= 0) {
		infra(out, "disk %s not found after %d s", cfg.disks[missing].dev,
		      DEVICE_WAIT_MS / 1000);
		power_off();
	}
	/* Before the mounts: xfs queues its log worker as it mounts. */
	if (cfg.phase == PHASE_CRASH_WRITE)
		crash_quiet_timers();
	/* Mount everything first: an infra problem should not cost a suite. */
	for (i = 0; i < cfg.ndisks; i++, mounted++) {
		dirp[i] = dirs[i];
		if (disk_mount(&cfg.disks[i], node[i], disk_nth(&cfg, i),
			       cfg.phase == PHASE_CRASH_WRITE ?
			       crash_mount_options(cfg.disks[i].fs) : NULL,
			       &failed, dirs[i], sizeof(dirs[i]), &state[i],
			       err, sizeof(err)) != 0) {
			infra(out, "%s", err);
			power_off();
		}
	}
	nslots = crash_slots(&cfg, dirp, state, 0, slots);

	switch (cfg.phase) {
	case PHASE_CRASH_WRITE:
		if (crash_write_phase(out, slots, nslots) != 0)
			power_off();
		/*
		 * Wait for the power cut without touching the disk. If it
		 * never comes, the watchdog reports an infra error.
		 */
		alarm(cfg.timeout_s + 300);
		for (;;)
			pause();
	case PHASE_CRASH_VERIFY:
		crash_verify_phase(out, slots, nslots, cfg.expect, &counts);
		if (have_port)
			print_marker(out, &counts);
		break;
	case PHASE_SUITE:
		if (run_suites(out, &cfg, dirp, state, &counts) == 0 && have_port)
			print_marker(out, &counts);
		break;
	case PHASE_INVALID:
		break;
	}
	/* Without the port the results above are for humans only: no marker. */
	fflush(out);
	if (port_fd >= 0) {
		fsync(port_fd);
		crash_fds[1] = -1;
		close(port_fd);
	}
	sync();
	for (i = 0; i < mounted; i++)
		if (state[i] == DISK_MOUNTED)
			umount2(dirs[i], 0);
	power_off();
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rcgate-agent --dir <path> [--fs name] [--timeout seconds] [--only test,...]\n"
		   "       rcgate-agent --dir <path> [--fs name] --phase "
		   RCGATE_PHASE_CRASH_WRITE "\n"
		   "       rcgate-agent --dir <path> [--fs name] --phase "
		   RCGATE_PHASE_CRASH_VERIFY " --expect bytes\n"
		   "As PID 1 (the guest's /init) it takes no arguments and reads\n"
		   RCGATE_KEY_PORT ", " RCGATE_KEY_DISKS " (or " RCGATE_KEY_DISK
		   " and " RCGATE_KEY_FS "),\n"
		   RCGATE_KEY_PHASE ", " RCGATE_KEY_EXPECT " and " RCGATE_KEY_TIMEOUT
		   " from /proc/cmdline.\n");
}

static int host_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "fs", required_argument, NULL, 'f' },
		{ "timeout", required_argument, NULL, 't' },
		{ "phase", required_argument, NULL, 'p' },
		{ "expect", required_argument, NULL, 'e' },
		{ "only", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct agent_config cfg;
	struct suite_counts counts;
	const char *dir = NULL;
	const char *dirp[1];
	enum disk_state state[1] = { DISK_MOUNTED };
	struct crash_slot slots[CRASH_PROMISES];
	unsigned int nslots;
	char err[256];
	int c;

	config_defaults(&cfg);
	while ((c = getopt_long(argc, argv, "d:f:t:p:e:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'f':
			if (parse_fs(optarg, &cfg, err, sizeof(err)) != 0) {
				fprintf(stderr, "rcgate-agent: --fs: %s\n", err);
				return 2;
			}
			break;
		case 't':
			if (parse_timeout(optarg, &cfg, err, sizeof(err)) != 0) {
				fprintf(stderr, "rcgate-agent: --timeout: %s\n", err);
				return 2;
			}
			break;
		case 'p':
			parse_phase(optarg, &cfg, err, sizeof(err));
			break;
		case 'e':
			if (parse_expect(optarg, &cfg, err, sizeof(err)) != 0) {
				fprintf(stderr, "rcgate-agent: --expect: %s\n", err);
				return 2;
			}
			break;
		case 'o':
			if (parse_only(optarg, &cfg, err, sizeof(err)) != 0) {
				fprintf(stderr, "rcgate-agent: --only: %s\n", err);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (dir == NULL || optind != argc) {
		usage(stderr);
		return 2;
	}
	config_finish(&cfg);
	if (phase_check(&cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "rcgate-agent: %s\n", err);
		return 2;
	}
	dirp[0] = dir;
	nslots = crash_slots(&cfg, dirp, state, 1, slots);
	signal(SIGPIPE, SIG_IGN);
	print_header(stdout);
	switch (cfg.phase) {
	case PHASE_CRASH_WRITE:
		/* No power cut on the host: the files are closed at exit. */
		return crash_write_phase(stdout, slots, nslots) == 0 ? 0 : 2;
	case PHASE_CRASH_VERIFY:
		crash_verify_phase(stdout, slots, nslots, cfg.expect, &counts);
		break;
	case PHASE_SUITE:
	case PHASE_INVALID:
		if (run_suites(stdout, &cfg, dirp, state, &counts) != 0)
			return 2;
		break;
	}
	print_marker(stdout, &counts);
	return counts.fail > 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	agent_start_ms = now_ms();
	if (getpid() == 1)
		init_main();
	return host_main(argc, argv);
}
