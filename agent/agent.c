/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rcgate-agent: the guest's /init. Owns the guest side of a job: mounting
 * the pseudo filesystems, the kernel command line keys (rcgate.*), module
 * loading, finding the results port and the disk, the top level of the KTAP
 * output with its completeness marker, and powering the guest off whatever
 * happens. The tests themselves live in suite.c.
 *
 * Host use (debugging): rcgate-agent --dir <path> [--fs name] [--timeout s]
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

#include "suite.h"

#ifndef AGENT_VERSION
#define AGENT_VERSION "0.1"
#endif

#define DEVICE_WAIT_MS 10000
#define MODULE_DIR "/modules"
#define MODULE_LIST MODULE_DIR "/load.list"
#define MODULE_LIST_MAX (64 * 1024)
#define NOTES_MAX 32
#define NOTE_LEN 200
#define MOUNT_POINT "/mnt"

struct agent_config {
	char port[128];
	char disk[256];
	char fs[32];
	unsigned int timeout_s;
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

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
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
	char msg[96] = "# rcgate-infra: agent killed by signal ";
	size_t len;
	char digits[12];
	int nd = 0, i;
	unsigned int v = (unsigned int)sig;

	if (sig == SIGALRM)
		memcpy(msg, "# rcgate-infra: agent watchdog expired, signal ",
		       sizeof("# rcgate-infra: agent watchdog expired, signal "));
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
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE,
				    SIGABRT, SIGSYS, SIGALRM };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fatal_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	/*
	 * Last resort against anything that hangs PID 1 itself (each test is
	 * already bounded in suite.c): SIGALRM reports and powers off.
	 */
	alarm(watchdog_s);
}

/* ---- kernel command line ---- */

static int valid_name(const char *v, size_t max)
{
	size_t i, len = strlen(v);

	if (len == 0 || len >= max)
		return 0;
	for (i = 0; i < len; i++) {
		char c = v[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

static int parse_port(const char *v, struct agent_config *cfg, char *err,
		      size_t errlen)
{
	if (!valid_name(v, sizeof(cfg->port))) {
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
	    !valid_name(v + 5, sizeof(cfg->disk) - 5)) {
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
	if (!valid_name(v, sizeof(cfg->fs))) {
		snprintf(err, errlen, "bad filesystem type");
		return -1;
	}
	snprintf(cfg->fs, sizeof(cfg->fs), "%s", v);
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

static const struct cmdline_key {
	const char *key;
	int (*parse)(const char *v, struct agent_config *cfg, char *err,
		     size_t errlen);
} cmdline_keys[] = {
	{ "rcgate.port", parse_port },
	{ "rcgate.disk", parse_disk },
	{ "rcgate.fs", parse_fs },
	{ "rcgate.timeout", parse_timeout },
};

static void config_defaults(struct agent_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->port, sizeof(cfg->port), "org.rcgate.results");
	snprintf(cfg->disk, sizeof(cfg->disk), "/dev/vda");
	snprintf(cfg->fs, sizeof(cfg->fs), "ext4");
	cfg->timeout_s = 60;
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
		char word[512], err[128];
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

static void module_load(const char *name, struct notes *notes)
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
		return;
	}
	if (syscall(SYS_finit_module, fd, "", 0) != 0 && errno != EEXIST) {
		int e = errno;

		/* The kernel says ENOENT for unresolved symbols, not a file. */
		note_add(notes, "# module %.100s: finit_module: %s%s", name,
			 strerror(e),
			 e == ENOENT ? " (unresolved symbols: a dependency missing or listed later?)" : "");
	}
	close(fd);
}

/*
 * Load every module named in load.list, in order (the daemon wrote it in
 * dependency order). Failures are notes, not fatal: what matters is whether
 * the disk and the port show up, which is checked afterwards.
 */
static void modules_load(struct notes *notes)
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
		module_load(line, notes);
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

/* Devices appear asynchronously after module load: poll for both. */
static void devices_wait(const struct agent_config *cfg, char *port_dev,
			 size_t port_len, int *have_port, int *have_disk)
{
	long long deadline = now_ms() + DEVICE_WAIT_MS;

	*have_port = 0;
	*have_disk = 0;
	for (;;) {
		if (!*have_port)
			*have_port = port_find(cfg->port, port_dev, port_len) == 0;
		if (!*have_disk)
			*have_disk = is_block_device(cfg->disk);
		if ((*have_port && *have_disk) || now_ms() >= deadline)
			return;
		sleep_ms(20);
	}
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
		snprintf(u.machine, sizeof(u.machine), "unknown");
	}
	fprintf(out, "KTAP version 1\n");
	fprintf(out, "# rcgate-agent version=%s kernel=%s machine=%s\n",
		AGENT_VERSION, u.release, u.machine);
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

/*
 * The top level: plan, one suite, its result. Returns 0 with counts, or -1
 * after printing an rcgate-infra line.
 */
static int run_suite(FILE *out, const char *dir, const struct agent_config *cfg,
		     struct suite_counts *counts)
{
	struct suite_options opt = { .timeout_s = cfg->timeout_s };
	char err[256];

	fprintf(out, "1..1\n");
	fflush(out);
	if (suite_run(dir, cfg->fs, out, &opt, counts, err, sizeof(err)) != 0) {
		fprintf(out, "# rcgate-infra: %s\n", err);
		fflush(out);
		return -1;
	}
	fprintf(out, "%s 1 %s\n", counts->fail > 0 ? "not ok" : "ok", cfg->fs);
	fflush(out);
	return 0;
}

static void print_marker(FILE *out, const struct suite_counts *c)
{
	fprintf(out, "# rcgate-complete pass=%u fail=%u skip=%u duration_ms=%lld\n",
		c->pass, c->fail, c->skip, now_ms() - agent_start_ms);
	fflush(out);
}

static void __attribute__((noreturn)) init_main(void)
{
	struct agent_config cfg;
	struct suite_counts counts;
	static struct notes notes;
	struct mirror m = { .fd = { -1, -1 }, .n = 0 };
	char port_dev[300] = "";
	int have_port, have_disk, have_console, port_fd = -1;
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
	suite_tests(&ntests);
	/* Generous: every test may time out, plus boot-time waits. */
	alarm(cfg.timeout_s * (unsigned int)(ntests + 2) + 120);
	modules_load(&notes);
	devices_wait(&cfg, port_dev, sizeof(port_dev), &have_port, &have_disk);

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
		fprintf(out, "# rcgate-infra: results port %s not found\n", cfg.port);
	print_notes(out, &notes);
	if (!have_disk) {
		fprintf(out, "# rcgate-infra: disk %s not found after %d s\n",
			cfg.disk, DEVICE_WAIT_MS / 1000);
		fflush(out);
		power_off();
	}
	if (mkdir(MOUNT_POINT, 0755) != 0 && errno != EEXIST) {
		fprintf(out, "# rcgate-infra: mkdir " MOUNT_POINT ": %s\n",
			strerror(errno));
		fflush(out);
		power_off();
	}
	if (mount(cfg.disk, MOUNT_POINT, cfg.fs, 0, NULL) != 0) {
		int e = errno;

		fprintf(out, "# rcgate-infra: mount %s on " MOUNT_POINT " (%s): %s%s\n",
			cfg.disk, cfg.fs, strerror(e),
			e == ENODEV ? " (filesystem not built in and its module not loaded)" : "");
		fflush(out);
		power_off();
	}
	if (run_suite(out, MOUNT_POINT, &cfg, &counts) == 0 && have_port)
		print_marker(out, &counts);
	/* Without the port the results above are for humans only: no marker. */
	fflush(out);
	if (port_fd >= 0) {
		fsync(port_fd);
		crash_fds[1] = -1;
		close(port_fd);
	}
	sync();
	umount2(MOUNT_POINT, 0);
	power_off();
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rcgate-agent --dir <path> [--fs name] [--timeout seconds]\n"
		   "As PID 1 (the guest's /init) it takes no arguments and reads\n"
		   "rcgate.port, rcgate.disk, rcgate.fs, rcgate.timeout from\n"
		   "/proc/cmdline.\n");
}

static int host_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "fs", required_argument, NULL, 'f' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct agent_config cfg;
	struct suite_counts counts;
	const char *dir = NULL;
	char err[128];
	int c;

	config_defaults(&cfg);
	while ((c = getopt_long(argc, argv, "d:f:t:h", opts, NULL)) != -1) {
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
	signal(SIGPIPE, SIG_IGN);
	print_header(stdout);
	if (run_suite(stdout, dir, &cfg, &counts) != 0)
		return 2;
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
