/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The runner of the suites and what every test shares: the check helpers
 * that word the diagnostics, the probe of a directory, each test isolated
 * in a child process, its result line and the nested KTAP block's head,
 * and the parsing of the disks of one boot.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "suite.h"

/* After SIGKILL, how long to wait for a child stuck in the kernel. */
#define KILL_GRACE_MS 3000

const int suite_fatal_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE,
				    SIGABRT, SIGSYS, SIGALRM };
const size_t suite_nfatal_signals =
	sizeof(suite_fatal_signals) / sizeof(suite_fatal_signals[0]);

long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void diag_reset(struct diag *d)
{
	memset(d, 0, sizeof(*d));
}

void diag_add(struct diag *d, const char *fmt, ...)
{
	va_list ap;
	char *p;

	if (d == NULL)
		return;
	if (d->count >= DIAG_MAX) {
		d->dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(d->line[d->count], DIAG_LEN, fmt, ap);
	va_end(ap);
	/* A newline would end the KTAP diagnostic line early. */
	for (p = d->line[d->count]; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	d->count++;
}

size_t check_fill(const unsigned char *buf, size_t len, long long file_off,
		  unsigned char want, struct diag *d)
{
	size_t i, bad = 0;

	for (i = 0; i < len; i++) {
		if (buf[i] == want)
			continue;
		if (bad == 0)
			diag_add(d, "buffer wrong at %lld have %02x expected %02x",
				 file_off + (long long)i, buf[i], want);
		bad++;
	}
	return bad;
}

size_t check_bytes(const unsigned char *have, const unsigned char *want,
		   size_t len, long long file_off, struct diag *d)
{
	size_t i, bad = 0;

	for (i = 0; i < len; i++) {
		if (have[i] == want[i])
			continue;
		if (bad == 0)
			diag_add(d, "buffer wrong at %lld have %02x expected %02x",
				 file_off + (long long)i, have[i], want[i]);
		bad++;
	}
	return bad;
}

int check_position(long long have, long long want, const char *op,
		   unsigned int idx, unsigned int total, size_t len,
		   struct diag *d)
{
	if (have == want)
		return 0;
	if (idx == 0)
		diag_add(d, "%s (%zu bytes): position %lld, expected %lld", op,
			 len, have, want);
	else
		diag_add(d, "%s %u of %u (%zu bytes): position %lld, expected %lld",
			 op, idx, total, len, have, want);
	return 1;
}

int check_size(long long have, long long want, const char *op,
	       unsigned int idx, unsigned int total, struct diag *d)
{
	if (have == want)
		return 0;
	if (idx == 0)
		diag_add(d, "%s: st_size %lld, expected %lld", op, have, want);
	else
		diag_add(d, "%s %u of %u: st_size %lld, expected %lld", op, idx,
			 total, have, want);
	return 1;
}

int check_io_len(long long have, size_t want, const char *op,
		 long long file_off, struct diag *d)
{
	if (have >= 0 && (size_t)have == want)
		return 0;
	diag_add(d, "%s at %lld read %lld bytes, expected %zu", op, file_off,
		 have, want);
	return 1;
}

static const struct suite_io libc_io = {
	.write = write,
	.writev = writev,
};
static struct suite_io io = {
	.write = write,
	.writev = writev,
};

void suite_set_io(const struct suite_io *ops)
{
	io = ops != NULL ? *ops : libc_io;
}

ssize_t suite_write(int fd, const void *buf, size_t len)
{
	return io.write(fd, buf, len);
}

ssize_t suite_writev(int fd, const struct iovec *iov, int iovcnt)
{
	return io.writev(fd, iov, iovcnt);
}

int suite_probe(const char *dir, struct suite_env *env, char *err,
		size_t errlen)
{
	struct statx stx;
	int fd, n;

	memset(env, 0, sizeof(*env));
	n = snprintf(env->path, sizeof(env->path), "%s/.rcgate-probe", dir);
	if (n < 0 || (size_t)n >= sizeof(env->path)) {
		snprintf(err, errlen, "directory name too long: %s", dir);
		return -1;
	}
	fd = open(env->path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC,
		  0600);
	if (fd < 0 && errno == EINVAL) {
		/* Tell "no O_DIRECT" apart from "cannot create files". */
		fd = open(env->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0) {
			snprintf(err, errlen, "create %s: %s", env->path,
				 strerror(errno));
			return -1;
		}
		close(fd);
		unlink(env->path);
		env->odirect = 0;
		return 0;
	}
	if (fd < 0) {
		snprintf(err, errlen, "create %s: %s", env->path, strerror(errno));
		return -1;
	}
	env->odirect = 1;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN)) {
		if (stx.stx_dio_offset_align == 0)
			env->odirect = 0;
		env->dio_offset_align = stx.stx_dio_offset_align;
		env->dio_mem_align = stx.stx_dio_mem_align;
	}
	close(fd);
	unlink(env->path);
	return 0;
}

enum test_status suite_test_exec(const struct suite_test *t, const char *dir,
				 const struct suite_env *probed, struct diag *d)
{
	struct suite_env env = *probed;
	enum test_status st;
	int n;

	diag_reset(d);
	if (!env.odirect) {
		snprintf(d->skip_reason, sizeof(d->skip_reason), NO_ODIRECT);
		return TEST_SKIP;
	}
	/*
	 * A 512-byte test on a 4Kn device would fail with EINVAL by design;
	 * that is not a regression.
	 */
	if (t->misalign == MIS_NONE && env.dio_offset_align > 0 &&
	    t->block_size % env.dio_offset_align != 0) {
		snprintf(d->skip_reason, sizeof(d->skip_reason),
			 "block size %zu below the O_DIRECT alignment %u",
			 t->block_size, env.dio_offset_align);
		return TEST_SKIP;
	}
	if (t->blocks_per_call == 0 || t->blocks_per_call > MAX_IOV ||
	    t->nblocks % t->blocks_per_call != 0) {
		diag_add(d, "bad table row: %u blocks, %u per call", t->nblocks,
			 t->blocks_per_call);
		return TEST_FAIL;
	}
	if (env.bdev)
		return t->run(t, &env, d);
	n = snprintf(env.path, sizeof(env.path), "%s/%s.dat", dir, t->name);
	if (n < 0 || (size_t)n >= sizeof(env.path)) {
		diag_add(d, "path too long for %s", t->name);
		return TEST_FAIL;
	}
	unlink(env.path);
	st = t->run(t, &env, d);
	unlink(env.path);
	return st;
}

void suite_print_result(FILE *out, int indent, unsigned int number,
			long long duration_ms, const char *name,
			enum test_status st, const struct diag *d)
{
	unsigned int i;

	for (i = 0; i < d->count && i < DIAG_MAX; i++)
		fprintf(out, "%*s# %s: %s\n", indent, "", name, d->line[i]);
	if (d->dropped > 0)
		fprintf(out, "%*s# %s: (%u more diagnostics not shown)\n",
			indent, "", name, d->dropped);
	/* daemon/ktap.c reads this as the result's duration. */
	if (duration_ms >= 0)
		fprintf(out, "%*s" RCGATE_TIME_MS " %lld\n", indent, "",
			duration_ms);
	if (st == TEST_SKIP)
		fprintf(out, "%*sok %u %s # SKIP %s\n", indent, "", number, name,
			d->skip_reason[0] != '\0' ? d->skip_reason : "skipped");
	else
		fprintf(out, "%*s%s %u %s\n", indent, "",
			st == TEST_PASS ? "ok" : "not ok", number, name);
	fflush(out);
}

/* The head of a nested suite: header, "# Subtest: <name>", plan. */
void print_subtest_head(FILE *out, const char *name, size_t ntests)
{
	fprintf(out, "    KTAP version 1\n");
	fprintf(out, "    # Subtest: %s\n", name);
	fprintf(out, "    1..%zu\n", ntests);
	fflush(out);
}

void counts_add_status(struct suite_counts *c, enum test_status st)
{
	if (st == TEST_PASS)
		c->pass++;
	else if (st == TEST_FAIL)
		c->fail++;
	else
		c->skip++;
}

/* Shared with the child: it writes, the parent reads after waitpid. */
struct child_result {
	int done;
	enum test_status status;
	struct diag diag;
	char progress[SUITE_PROGRESS_LEN];
};

char *suite_progress;

/* The first line of a /proc file of pid's task tid, without its newline. */
static void proc_line(pid_t pid, const char *tid, const char *file, char *buf,
		      size_t len)
{
	char path[96];
	ssize_t n;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/task/%s/%s", (int)pid, tid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
}

/*
 * A test that did not return in time: what the agent's watchdog can tell
 * of it before the kill. Each task of the test process: its state (D: in
 * the kernel, uninterruptible), the kernel function it waits in, and the
 * top of its kernel stack where the kernel shows it (CONFIG_STACKTRACE).
 */
static void describe_stuck(pid_t pid, const char *progress, struct diag *d)
{
	char path[64], stat[512], wchan[64], stack[512], frames[96];
	struct dirent *e;
	DIR *dir;

	if (progress[0] != '\0')
		diag_add(d, "it was at %s", progress);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (dir == NULL)
		return;
	while ((e = readdir(dir)) != NULL && d->count < DIAG_MAX) {
		const char *st, *p;
		size_t f = 0;

		if (e->d_name[0] == '.')
			continue;
		proc_line(pid, e->d_name, "stat", stat, sizeof(stat));
		proc_line(pid, e->d_name, "wchan", wchan, sizeof(wchan));
		proc_line(pid, e->d_name, "stack", stack, sizeof(stack));
		st = strrchr(stat, ')');
		/* "[<0>] func+0x1/0x2\n" lines: the function names, top first. */
		frames[0] = '\0';
		for (p = stack; (p = strstr(p, "] ")) != NULL && f < 3; f++) {
			size_t n = strcspn(p + 2, "+\n");

			snprintf(frames + strlen(frames), sizeof(frames) - strlen(frames),
				 "%s%.*s", f ? " < " : "", (int)n, p + 2);
			p += 2 + n;
		}
		diag_add(d, "task %s state %c wchan %s%s%s", e->d_name,
			 st != NULL && st[1] == ' ' ? st[2] : '?',
			 wchan[0] != '\0' ? wchan : "?", frames[0] ? " stack " : "",
			 frames);
	}
	closedir(dir);
}

/*
 * Wait for pid until deadline_ms. Returns 1 when reaped (*status set), 0 on
 * timeout, -1 on a waitpid error. SIGCHLD (the set chld) must be blocked
 * since before the fork: a blocked signal is kept pending even for init,
 * whose unhandled signals are otherwise dropped, so sigtimedwait wakes the
 * moment the test ends. Polling with a sleep left the guest's only CPU idle for up to the
 * sleep after every test (0.6-1.5 s of a suite boot under TCG).
 */
static int wait_until(pid_t pid, const sigset_t *chld, long long deadline_ms,
		      int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);
		long long left;
		struct timespec ts;

		if (r == pid)
			return 1;
		if (r < 0 && errno != EINTR)
			return -1;
		left = deadline_ms - now_ms();
		if (left <= 0)
			return 0;
		ts.tv_sec = (time_t)(left / 1000);
		ts.tv_nsec = (long)(left % 1000) * 1000000L;
		/* Another child's SIGCHLD, EINTR or EAGAIN: look again. */
		(void)sigtimedwait(chld, NULL, &ts);
	}
}

enum test_status suite_test_isolated(const struct suite_test *t,
				     const char *dir,
				     const struct suite_env *env,
				     unsigned int timeout_s, struct diag *d)
{
	struct child_result *res;
	enum test_status st;
	sigset_t chld, old_mask;
	pid_t pid;
	int status = 0, w;

	diag_reset(d);
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		diag_add(d, "mmap for the result: %s", strerror(errno));
		return TEST_FAIL;
	}
	memset(res, 0, sizeof(*res));
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old_mask);
	pid = fork();
	if (pid < 0) {
		diag_add(d, "fork: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		munmap(res, sizeof(*res));
		return TEST_FAIL;
	}
	if (pid == 0) {
		size_t i;

		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		/*
		 * The agent's fatal-signal handlers power the guest off; in a
		 * test process a crash must only end the test.
		 */
		for (i = 0; i < suite_nfatal_signals; i++)
			signal(suite_fatal_signals[i], SIG_DFL);
		suite_progress = res->progress;
		res->status = suite_test_exec(t, dir, env, &res->diag);
		__atomic_store_n(&res->done, 1, __ATOMIC_SEQ_CST);
		_exit(0);
	}
	w = wait_until(pid, &chld, now_ms() + (long long)timeout_s * 1000,
		       &status);
	if (w == 0) {
		char progress[SUITE_PROGRESS_LEN];

		memcpy(progress, res->progress, sizeof(progress));
		progress[sizeof(progress) - 1] = '\0';
		diag_add(d, "timed out after %u s: the agent's watchdog killed it",
			 timeout_s);
		describe_stuck(pid, progress, d);
		kill(pid, SIGKILL);
		w = wait_until(pid, &chld, now_ms() + KILL_GRACE_MS, &status);
		if (w != 1)
			diag_add(d, "process stuck in the kernel, not reaped");
		st = TEST_FAIL;
	} else if (w < 0) {
		diag_add(d, "waitpid: %s", strerror(errno));
		st = TEST_FAIL;
	} else if (__atomic_load_n(&res->done, __ATOMIC_SEQ_CST)) {
		*d = res->diag;
		st = res->status;
	} else if (WIFSIGNALED(status)) {
		*d = res->diag;
		diag_add(d, "test process killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
		st = TEST_FAIL;
	} else {
		*d = res->diag;
		diag_add(d, "test process exited with status %d without a result",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		st = TEST_FAIL;
	}
	/* Unblocked: a SIGCHLD still pending goes to its default, ignored. */
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	munmap(res, sizeof(*res));
	/* The child may have died before its own cleanup. */
	if (!env->bdev) {
		char path[4096];
		int n = snprintf(path, sizeof(path), "%s/%s.dat", dir, t->name);

		if (n > 0 && (size_t)n < sizeof(path))
			unlink(path);
	}
	return st;
}

int suite_selected(const char *only, const char *name)
{
	size_t nl = strlen(name);
	size_t gl = strlen(RCGATE_ONLY_SMOKE);

	if (only == NULL)
		return 1;
	for (const char *p = only; *p != '\0';) {
		size_t n = strcspn(p, ",");

		if (n == nl && strncmp(p, name, n) == 0)
			return 1;
		if (n == gl && strncmp(p, RCGATE_ONLY_SMOKE, n) == 0 &&
		    suite_selected(RCGATE_SMOKE_TESTS, name))
			return 1;
		if (n == strlen(RCGATE_ONLY_EXER) &&
		    strncmp(p, RCGATE_ONLY_EXER, n) == 0 &&
		    strncmp(name, RCGATE_ONLY_EXER "_", n + 1) == 0)
			return 1;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* ---- several filesystems in one boot ---- */

int suite_valid_name(const char *s, size_t max)
{
	size_t i, len = strlen(s);

	if (len == 0 || len >= max)
		return 0;
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

/* One "/dev/<name>:<fs>" entry of len bytes at p. */
static int disk_entry_parse(const char *p, size_t len, struct disk_spec *out,
			    char *err, size_t errlen)
{
	const char *colon = memchr(p, ':', len);
	size_t dlen, flen;

	if (colon == NULL) {
		snprintf(err, errlen, "entry '%.*s' is not device:fstype",
			 (int)(len > 60 ? 60 : len), p);
		return -1;
	}
	dlen = (size_t)(colon - p);
	flen = len - dlen - 1;
	if (dlen >= sizeof(out->dev) || flen >= sizeof(out->fs)) {
		snprintf(err, errlen, "entry '%.*s' too long",
			 (int)(len > 60 ? 60 : len), p);
		return -1;
	}
	memcpy(out->dev, p, dlen);
	out->dev[dlen] = '\0';
	memcpy(out->fs, colon + 1, flen);
	out->fs[flen] = '\0';
	/* The device name comes from the host but is opened as root here. */
	if (strncmp(out->dev, "/dev/", 5) != 0 || strstr(out->dev, "..") != NULL ||
	    !suite_valid_name(out->dev + 5, sizeof(out->dev) - 5)) {
		snprintf(err, errlen, "device '%s' is not /dev/<name>", out->dev);
		return -1;
	}
	if (!suite_valid_name(out->fs, sizeof(out->fs))) {
		snprintf(err, errlen, "bad filesystem type '%s'", out->fs);
		return -1;
	}
	return 0;
}

int disks_parse(const char *value, struct disk_spec *out, unsigned int *n,
		char *err, size_t errlen)
{
	const char *p = value;
	unsigned int count = 0, i;

	*n = 0;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);

		if (count == SUITE_MAX_DISKS) {
			snprintf(err, errlen, "more than %d disks", SUITE_MAX_DISKS);
			return -1;
		}
		if (disk_entry_parse(p, len, &out[count], err, errlen) != 0)
			return -1;
		for (i = 0; i < count; i++) {
			if (strcmp(out[i].dev, out[count].dev) == 0) {
				snprintf(err, errlen, "device %s listed twice",
					 out[i].dev);
				return -1;
			}
		}
		count++;
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	*n = count;
	return 0;
}

int fs_listed(const char *text, const char *fs)
{
	size_t flen = strlen(fs);
	const char *line = text;

	while (line != NULL && *line != '\0') {
		const char *end = strchr(line, '\n');
		const char *name = line;
		size_t len;

		if (end == NULL)
			end = line + strlen(line);
		/* "nodev\tproc" or "\text4": the name follows the last tab. */
		for (const char *q = line; q < end; q++)
			if (*q == '\t' || *q == ' ')
				name = q + 1;
		len = (size_t)(end - name);
		if (len == flen && memcmp(name, fs, flen) == 0)
			return 1;
		line = *end == '\n' ? end + 1 : NULL;
	}
	return 0;
}

int mount_error_unsupported(int e, int listed)
{
	return e == ENODEV || !listed;
}
