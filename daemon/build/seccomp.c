/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * seccomp.c - owns the system call filter of the sandbox (sandbox.c):
 * what a compiler, make, patch, git or gpgv never needs is refused with
 * EPERM before the kernel looks at it. The filter is made once with
 * libseccomp (Debian's libseccomp-dev), kept as BPF, and handed to each
 * bwrap on a pipe (bwrap --seccomp FD), which loads it just before it
 * runs the program: nothing inside can lift it.
 *
 * Refused: debugging other processes (ptrace, process_vm_*), the key
 * store, bpf, perf_event_open, every way to mount or make a namespace
 * (mount family, unshare, setns, clone with a CLONE_NEW* flag; clone3's
 * flags are out of reach, so it is ENOSYS and libc falls back to clone),
 * kexec and modules, userfaultfd, io_uring, and personality flags that
 * change the address space layout or make data executable. System calls
 * of another architecture (x32, i386 through int 0x80) are refused too:
 * the filter only speaks the native one.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

#include <seccomp.h>

#include "base/base.h"
#include "build/build.h"

/* Refused whatever their arguments. A name this libseccomp does not know
 * is skipped (an older kernel's table). */
static const char *const denied[] = {
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
	"keyctl", "add_key", "request_key",
	"bpf", "perf_event_open", "userfaultfd",
	"mount", "umount", "umount2", "pivot_root", "chroot", "open_tree",
	"move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
	"mount_setattr", "unshare", "setns",
	"kexec_load", "kexec_file_load", "init_module", "finit_module",
	"delete_module", "reboot", "swapon", "swapoff", "acct", "quotactl",
	"syslog", "iopl", "ioperm", "lookup_dcookie",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	NULL
};

/* clone's flags that would make a namespace. */
static const unsigned long clone_new[] = {
	CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWUTS,
	CLONE_NEWIPC, CLONE_NEWCGROUP, 0x00000080 /* CLONE_NEWTIME */
};

/* personality flags refused: the address space made predictable or data
 * executable. Bit 31 (never a flag) is part of each mask so that the
 * query personality(0xffffffff) still answers. */
static const unsigned long persona_bad[] = {
	ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO,
	ADDR_COMPAT_LAYOUT, ADDR_LIMIT_3GB, ADDR_LIMIT_32BIT
};

static struct {
	pthread_once_t once;
	unsigned char *bpf;
	size_t len;
	char err[256];
} filter = { .once = PTHREAD_ONCE_INIT };

static int rules_add(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	int rc = 0;

	for (size_t i = 0; denied[i] != NULL && rc == 0; i++) {
		int nr = seccomp_syscall_resolve_name(denied[i]);

		if (nr != __NR_SCMP_ERROR)
			rc = seccomp_rule_add(ctx, eperm, nr, 0);
	}
	for (size_t i = 0; i < sizeof(clone_new) / sizeof(clone_new[0]) &&
	     rc == 0; i++)
		rc = seccomp_rule_add(ctx, eperm, SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, clone_new[i],
					      clone_new[i]));
	if (rc == 0 && seccomp_syscall_resolve_name("clone3") != __NR_SCMP_ERROR)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
				      SCMP_SYS(clone3), 0);
	for (size_t i = 0; i < sizeof(persona_bad) / sizeof(persona_bad[0]) &&
	     rc == 0; i++)
		rc = seccomp_rule_add(ctx, eperm, SCMP_SYS(personality), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ,
					      0x80000000UL | persona_bad[i],
					      persona_bad[i]));
	if (rc != 0)
		errf(err, errlen, "seccomp rule: %s", strerror(-rc));
	return rc == 0 ? 0 : -1;
}

/* The BPF of the filter into memory (seccomp_export_bpf writes to an fd:
 * a pipe read back whole). */
static void filter_make(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int p[2] = { -1, -1 }, rc;
	unsigned char buf[65536];
	ssize_t n;

	if (ctx == NULL) {
		errf(filter.err, sizeof(filter.err), "seccomp_init failed");
		return;
	}
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
			     SCMP_ACT_ERRNO(EPERM)) != 0 ||
	    rules_add(ctx, filter.err, sizeof(filter.err)) < 0)
		goto out;
	if (pipe2(p, O_CLOEXEC) < 0) {
		errf(filter.err, sizeof(filter.err), "pipe: %s", strerror(errno));
		goto out;
	}
	/* A filter of this size fits in the pipe's buffer. */
	rc = seccomp_export_bpf(ctx, p[1]);
	close(p[1]);
	p[1] = -1;
	n = rc == 0 ? read(p[0], buf, sizeof(buf)) : -1;
	if (n <= 0 || (size_t)n >= sizeof(buf) ||
	    (filter.bpf = malloc((size_t)n)) == NULL) {
		errf(filter.err, sizeof(filter.err), "seccomp filter export failed");
		goto out;
	}
	memcpy(filter.bpf, buf, (size_t)n);
	filter.len = (size_t)n;
out:
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	seccomp_release(ctx);
}

int sandbox_seccomp_fd(char *err, size_t errlen)
{
	int p[2], fd;

	pthread_once(&filter.once, filter_make);
	if (filter.bpf == NULL) {
		errf(err, errlen, "%s", filter.err);
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		errf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	if (write(p[1], filter.bpf, filter.len) != (ssize_t)filter.len) {
		errf(err, errlen, "seccomp filter into its pipe: %s",
		     strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	/* Above the numbers a child is given (0-2, SANDBOX_SECCOMP_FD), so
	 * that dup2 onto SANDBOX_SECCOMP_FD always makes a new descriptor
	 * without close-on-exec. */
	fd = fcntl(p[0], F_DUPFD_CLOEXEC, 10);
	close(p[0]);
	if (fd < 0)
		errf(err, errlen, "fcntl: %s", strerror(errno));
	return fd;
}
