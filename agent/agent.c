/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rcgate-agent: the guest's /init, the top of the agent. Owns the run of a
 * job in the guest: what the agent was told (cmdline.c) and its early setup
 * (boot.c), the phase of a crash-consistency run, the top level of the KTAP
 * output with its completeness marker, and powering the guest off whatever
 * happens. The suites are table.c's (and the files below it), the
 * power-cut promises crash.c's.
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
#include "cmdline.h"
#include "boot.h"
#include "exer.h"

#ifndef AGENT_VERSION
#define AGENT_VERSION "0.1"
#endif

/* Where the fatal-signal handler can still write: console and port. The
 * handler reads them, so they are of the one type C lets a handler share
 * with the code it interrupts. */
static volatile sig_atomic_t crash_fds[2] = { -1, -1 };
static long long agent_start_ms;

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

/*
 * The output: the port (port_dev, when *have_port; a port that does not
 * open is a note and no port) and the console, mirrored; the fatal-signal
 * handler learns the port's fd. *port_fd receives it, or -1.
 */
static FILE *output_open(struct mirror *m, const char *port_dev,
			 int *have_port, int have_console, int *port_fd,
			 struct notes *notes)
{
	if (*have_port) {
		*port_fd = open(port_dev, O_WRONLY | O_CLOEXEC);
		if (*port_fd < 0) {
			note_add(notes, "# rcgate-agent: open %s: %s", port_dev,
				 strerror(errno));
			*have_port = 0;
		}
	}
	if (*have_port) {
		m->fd[m->n++] = *port_fd;
		crash_fds[1] = *port_fd;
	}
	if (have_console)
		m->fd[m->n++] = 1;
	return mirror_open(m);
}

/*
 * Mounts every disk of cfg (found at node[i]) on dirs[i] (dirp[i] points
 * there), its state in state[i]: everything first, so that an infra
 * problem does not cost a suite. A disk that cannot be mounted is an infra
 * line and the power off. Returns the number mounted (all of them).
 */
static unsigned int disks_mount_all(FILE *out, const struct agent_config *cfg,
				    char node[][64],
				    const struct failed_modules *failed,
				    char dirs[][48], const char **dirp,
				    enum disk_state *state)
{
	char err[512];
	unsigned int i;

	for (i = 0; i < cfg->ndisks; i++) {
		dirp[i] = dirs[i];
		if (disk_mount(&cfg->disks[i], node[i], disk_nth(cfg, i),
			       cfg->phase == PHASE_CRASH_WRITE ?
			       crash_mount_options(cfg->disks[i].fs) : NULL,
			       failed, dirs[i], sizeof(dirs[i]), &state[i],
			       err, sizeof(err)) != 0) {
			infra(out, "%s", err);
			power_off();
		}
	}
	return i;
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

	out = output_open(&m, port_dev, &have_port, have_console, &port_fd,
			  &notes);

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
	mounted = disks_mount_all(out, &cfg, node, &failed, dirs, dirp, state);
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
	fprintf(f, "usage: rcgate-agent --dir <path> [--fs name] [--timeout seconds] [--only test,...] [--deep]\n"
		   "       rcgate-agent --dir <path> [--fs name] --phase "
		   RCGATE_PHASE_CRASH_WRITE "\n"
		   "       rcgate-agent --dir <path> [--fs name] --phase "
		   RCGATE_PHASE_CRASH_VERIFY " --expect bytes\n"
		   "       rcgate-agent --dir <path|device> --replay SEED [--ops N,N,...] [--nops N]\n"
		   "As PID 1 (the guest's /init) it takes no arguments and reads\n"
		   RCGATE_KEY_PORT ", " RCGATE_KEY_DISKS " (or " RCGATE_KEY_DISK
		   " and " RCGATE_KEY_FS "),\n"
		   RCGATE_KEY_PHASE ", " RCGATE_KEY_EXPECT ", " RCGATE_KEY_TIMEOUT
		   ", " RCGATE_KEY_ONLY " and " RCGATE_KEY_EXER
		   " from /proc/cmdline.\n");
}

/* A decimal in [lo, hi], or -1. */
static long number_arg(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		return -1;
	return v;
}

/* What the command line asks on the host beyond cfg. */
struct host_options {
	const char *dir;
	long replay;            /* -1: no replay */
	const char *replay_ops; /* NULL: every op */
	long nops;
};

/* One option into cfg or h: 0, or -1 with a message in err. */
static int host_option(int c, const char *arg, struct agent_config *cfg,
		       struct host_options *h, char *err, size_t errlen)
{
	switch (c) {
	case 'd':
		h->dir = arg;
		return 0;
	case 'f':
		return parse_fs(arg, cfg, err, errlen);
	case 't':
		return parse_timeout(arg, cfg, err, errlen);
	case 'p':
		parse_phase(arg, cfg, err, errlen);
		return 0;
	case 'e':
		return parse_expect(arg, cfg, err, errlen);
	case 'o':
		return parse_only(arg, cfg, err, errlen);
	case 'r':
		h->replay = number_arg(arg, 1, 0x7fffffffL);
		snprintf(err, errlen, "a seed number");
		return h->replay < 0 ? -1 : 0;
	case 'O':
		h->replay_ops = arg;
		return 0;
	case 'N':
		h->nops = number_arg(arg, 1, EXER_MAX_OPS);
		snprintf(err, errlen, "1-%d", EXER_MAX_OPS);
		return h->nops < 0 ? -1 : 0;
	case 'D':
		exer_seed_factor = EXER_DEEP_FACTOR;
		return 0;
	default:
		snprintf(err, errlen, "unknown option");
		return -1;
	}
}

/* 0 to go on, or the exit status (--help: 0 after printing it). */
static int host_options(int argc, char **argv, struct agent_config *cfg,
			struct host_options *h, int *exit_status)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "fs", required_argument, NULL, 'f' },
		{ "timeout", required_argument, NULL, 't' },
		{ "phase", required_argument, NULL, 'p' },
		{ "expect", required_argument, NULL, 'e' },
		{ "only", required_argument, NULL, 'o' },
		{ "replay", required_argument, NULL, 'r' },
		{ "ops", required_argument, NULL, 'O' },
		{ "nops", required_argument, NULL, 'N' },
		{ "deep", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[256];
	int c;

	while ((c = getopt_long(argc, argv, "d:f:t:p:e:o:h", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			*exit_status = 0;
			return 1;
		}
		if (c == '?' || c == ':') {
			usage(stderr);
			*exit_status = 2;
			return 1;
		}
		if (host_option(c, optarg, cfg, h, err, sizeof(err)) != 0) {
			const struct option *o = opts;

			while (o->name != NULL && o->val != c)
				o++;
			fprintf(stderr, "rcgate-agent: --%s: %s\n",
				o->name != NULL ? o->name : "?", err);
			*exit_status = 2;
			return 1;
		}
	}
	if (h->dir == NULL || optind != argc) {
		usage(stderr);
		*exit_status = 2;
		return 1;
	}
	return 0;
}

static int host_main(int argc, char **argv)
{
	static struct agent_config cfg;
	struct host_options h = { .replay = -1 };
	struct suite_counts counts;
	const char *dirp[1];
	enum disk_state state[1] = { DISK_MOUNTED };
	struct crash_slot slots[CRASH_PROMISES];
	unsigned int nslots;
	char err[256];
	int status;

	config_defaults(&cfg);
	if (host_options(argc, argv, &cfg, &h, &status) != 0)
		return status;
	if (h.replay >= 0)
		return exer_replay(h.dir, (unsigned int)h.replay, h.replay_ops,
				   h.nops > 0 ? (unsigned int)h.nops : EXER_DEFAULT_OPS,
				   stdout);
	config_finish(&cfg);
	if (phase_check(&cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "rcgate-agent: %s\n", err);
		return 2;
	}
	dirp[0] = h.dir;
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
