/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * protocol.h - the contract between rcgated and rcgate-agent, written once:
 * what the daemon puts on the kernel command line and in the initramfs,
 * what the agent prints on the results port, and the files the daemon keeps
 * each boot's output in. Both sides include this file: agent/ (agent.c,
 * cmdline.c, boot.c, and the suite's files through suite.h);
 * daemon/ktap.c (the parser of the output) directly, and the
 * daemon's other modules (sched.c boots the guest, initramfs.c builds its
 * /, api.c serves the job log) through daemon/rcgate.h.
 *
 * The agent is a static program built without any daemon header, so this
 * one holds string literals and numbers only and includes nothing. The KTAP
 * grammar and what the parser tolerates are in daemon/ktap.h; docs/agent.md
 * tells the agent's side in prose. Shell scripts that boot the agent by hand
 * (bench/boot.sh, tests/integration/) spell the same words again.
 */
#ifndef RCGATE_AGENT_PROTOCOL_H
#define RCGATE_AGENT_PROTOCOL_H

/* ---- daemon -> agent: the kernel command line ---- */

/*
 * Each key is given as "<key>=<value>". The daemon sets port and disks, and
 * phase and expect for the crash test; disk, fs and timeout serve boots made
 * by hand (bare qemu, bench/boot.sh).
 */
#define RCGATE_KEY_PORT "rcgate.port"
#define RCGATE_KEY_DISKS "rcgate.disks"	/* /dev/vda:ext4,/dev/vdb:xfs */
#define RCGATE_KEY_DISK "rcgate.disk"
#define RCGATE_KEY_FS "rcgate.fs"
#define RCGATE_KEY_PHASE "rcgate.phase"
#define RCGATE_KEY_EXPECT "rcgate.expect"	/* bytes crash-write made durable */
#define RCGATE_KEY_TIMEOUT "rcgate.timeout"
/* Only these tests of the suite, by name (write_seq,append_4096): a
 * bisection step runs the failing tests alone. */
#define RCGATE_KEY_ONLY "rcgate.only"
/* The name "exer" in rcgate.only stands for the exerciser's rows (every
 * test whose name starts with "exer_"): the suite without the
 * hand-written tests ([jobs] suite = exer). */
#define RCGATE_ONLY_EXER "exer"
/* "deep": the exerciser's rows run EXER_DEEP_FACTOR times their seeds
 * ([jobs] suite = deep); "default" or absent: the fixed seed set. */
#define RCGATE_KEY_EXER "rcgate.exer"
#define RCGATE_EXER_DEEP "deep"
/*
 * The name "smoke" in rcgate.only stands for these tests: a quick subset
 * (the 6.1.64 pair, each submission path, one layout) for boots whose
 * point is not the suite, so that CI time stays flat as the suite grows.
 */
#define RCGATE_ONLY_SMOKE "smoke"
#define RCGATE_SMOKE_TESTS                                                     \
	"write_seq_512,write_seq_4096,writev_seq_4096,pwrite_seq_4096,"        \
	"pwritev_seq_4096,write_osync_4096,aio_rw,uring_rw,nowait,mixed_extents"

/* The "filesystem" of a disk given raw, without one, in rcgate.disks
 * ("/dev/vdd:bdev"): the agent runs the block-device suite on it, the
 * daemon makes it an empty disk ([jobs] filesystems). */
#define RCGATE_FS_BDEV "bdev"

/* The virtio-serial port the results go to; rcgate.port's default. */
#define RCGATE_CHANNEL_NAME "org.rcgate.results"

/* Values of rcgate.phase (absent: the normal suite); they also name the
 * phase's files below. */
#define RCGATE_PHASE_CRASH_WRITE "crash-write"
#define RCGATE_PHASE_CRASH_VERIFY "crash-verify"

/* Disk i carries the virtio serial "rcgate-vd<'a'+i>": the agent finds the
 * disk that rcgate.disks calls /dev/vdb by it, whatever the kernel named it. */
#define RCGATE_DISK_SERIAL_PREFIX "rcgate-"

/* ---- daemon -> agent: the initramfs (paths from its root) ---- */

/* The agent itself is /init. The module files the kernel needs are in
 * modules/, and the list names them, one per line, in load order. */
#define RCGATE_INITRAMFS_MODULE_DIR "modules"
#define RCGATE_INITRAMFS_MODULE_LIST RCGATE_INITRAMFS_MODULE_DIR "/load.list"

/* ---- agent -> daemon: the results port (KTAP v1 and these lines) ---- */

/* Before the plan: "# rcgate-agent version=V kernel=<uname -r> machine=M"
 * and "# rcgate-uts: <uname -v>". */
#define RCGATE_AGENT_INFO "# rcgate-agent "
#define RCGATE_UTS "# rcgate-uts: "
/* " <milliseconds>" follows, just before the result it times. */
#define RCGATE_TIME_MS "# rcgate-time-ms:"
/* " <reason>" follows: the agent could not run the suite (an infra error). */
#define RCGATE_INFRA "# rcgate-infra:"

/*
 * The completeness marker, the last line of a complete run:
 * "# rcgate-complete pass=P fail=F skip=S duration_ms=D" (leaf counts over
 * every suite; milliseconds since the agent started). The daemon skips
 * fields it does not know, so a newer agent may add some.
 */
#define RCGATE_MARKER "# rcgate-complete"
#define RCGATE_MARKER_PASS "pass"
#define RCGATE_MARKER_FAIL "fail"
#define RCGATE_MARKER_SKIP "skip"
#define RCGATE_MARKER_DURATION "duration_ms"

/*
 * The crash-write phase makes RCGATE_CRASH_PROMISES promises, one per disk:
 * the k-th disk of a filesystem in rcgate.disks holds promise k (mod
 * RCGATE_CRASH_PROMISES; agent/tests.h lists them, 0 being O_SYNC), so the
 * daemon attaches RCGATE_CRASH_PROMISES disks of each filesystem. Each
 * writes RCGATE_CRASH_BLOCKS blocks of RCGATE_CRASH_BLOCK bytes and prints
 * "# rcgate-durable: fs=ext4 dev=/dev/vda test=crash_osync_extend
 * file=crash.dat size=<bytes promised durable> block=4096"; then the ready
 * line, at which the daemon cuts the power. There is no marker in that
 * phase. The daemon has crash-verify check all RCGATE_CRASH_BYTES of every
 * promise (rcgate.expect).
 */
#define RCGATE_DURABLE "# rcgate-durable:"
#define RCGATE_DURABLE_SIZE " size="
#define RCGATE_CRASH_READY "# rcgate-crash-ready"
#define RCGATE_CRASH_BLOCK 4096
#define RCGATE_CRASH_BLOCKS 16
#define RCGATE_CRASH_PROMISES 6
#define RCGATE_CRASH_BYTES (RCGATE_CRASH_BLOCKS * RCGATE_CRASH_BLOCK)
/* Every crash test's name starts so, and no other test's: the daemon runs
 * them only beside the whole suite, so a rerun of one reruns everything
 * (engine.c); tests/unit/agent_suite.c checks the names. */
#define RCGATE_CRASH_PREFIX "crash_"

/* ---- the daemon's files of one job attempt (sched.c writes, api.c serves) ---- */

#define RCGATE_JOB_LOG "job.log"		/* the daemon's own lines */
#define RCGATE_CONSOLE_LOG "console.log"	/* the suite boot's console */
#define RCGATE_RESULTS_KTAP "results.ktap"	/* and its results port */
/* Those of a phase's boot, from a string literal: ("crash-write") gives
 * "console-crash-write.log", ("%s") a format. */
#define RCGATE_PHASE_CONSOLE_LOG(phase) "console-" phase ".log"
#define RCGATE_PHASE_KTAP(phase) phase ".ktap"

#endif
