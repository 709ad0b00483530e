/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * guests/guests.h - the hypervisors: one guest through libvirt
 * (guest_conn.c, guest.c, guest_xml.c, guest_pool.c) and the hosts guests
 * run on (hosts.c).
 *
 * The public header of daemon/guests/: a section per file. A .c file includes
 * its own folder's headers and those of lower floors only (docs/design.md,
 * tests/layers.sh).
 */
#ifndef RCGATE_GUESTS_H
#define RCGATE_GUESTS_H

#include <stddef.h>
#include <stdio.h>

#include "base/base.h"

/* ==== guest_conn.c and guest.c ==== */
/*
 * Running one test guest through libvirt (connections: guest_conn.c; the
 * domain: guest.c), the domain XML that describes it (guest_xml.c), and
 * storage volumes on hosts that share no filesystem with the daemon
 * (guest_pool.c). Nothing outside those files includes libvirt headers;
 * callers see only these types.
 */


/* XML namespace of our <metadata> element; guests without it are not ours. */
#define GUEST_METADATA_NS "https://rcgate.invalid/xmlns/guest/1"
#define GUEST_METADATA_PREFIX "rcgate"

/* One disk per filesystem under test; the agent takes at most this many. */
#define GUEST_MAX_DISKS 20
/* disks[i] carries the virtio serial RCGATE_DISK_SERIAL_PREFIX "vd<'a'+i>"
 * (agent/protocol.h, guest_xml.c). */

struct guest_spec {
	const char *name;	/* "rcgate-<job>-<attempt>" */
	const char *arch;	/* libvirt arch: x86_64, i686, aarch64, armv7l */
	const char *emulator;	/* /usr/bin/qemu-system-x86_64 */
	const char *machine;	/* q35, pc, virt */
	/* NULL: machine default; "max": mode='maximum'; "host":
	 * host-passthrough; otherwise a model name such as cortex-a57. */
	const char *cpu;
	int use_kvm;
	unsigned memory_mib, vcpus;
	const char *kernel, *initrd, *cmdline;	/* initrd, cmdline may be NULL */
	/* Raw images attached as virtio disks vda, vdb, ... in this order
	 * (disks[i] is vd<'a'+i>); only the first ndisks entries are used. */
	const char *disks[GUEST_MAX_DISKS];
	unsigned ndisks;
	/* Put the disks and the virtio-serial controller on virtio-mmio
	 * (armv7 virt: the non-LPAE kernel cannot reach the PCIe ECAM). */
	int virtio_mmio;
	const char *console_log;	/* serial console -> file; NULL = none */
	const char *channel_log;	/* virtio-serial named port -> file */
	const char *channel_name;	/* e.g. org.rcgate.results */
	const char *job_tag;	/* free text kept in <metadata> */
	/* Destroy the domain on a thread of its own once the outcome is
	 * known, instead of before guest_run returns (a completed or timed
	 * out run only). Its qemu may hold the disks for a moment after
	 * return: guest_wait_destroyed before another guest opens them. */
	int destroy_later;
	/* The console and the results come back over the libvirt connection
	 * (a pty serial and a unix channel, read through streams opened
	 * before the CPUs start) into console_log and channel_log on this
	 * machine, instead of files the hypervisor host writes: for hosts
	 * that share no filesystem with the daemon (hosts.c). */
	int streams;
};

enum guest_outcome {
	GUEST_COMPLETED,	/* marker line seen in channel_log */
	GUEST_TIMEOUT,
	GUEST_STOPPED,		/* domain ended (poweroff/crash) without marker */
	GUEST_CANCELLED,
};

const char *guest_outcome_name(enum guest_outcome);

/* Levels match enum log_level in base/base.h. */
enum { GUEST_LOG_ERR, GUEST_LOG_WARN, GUEST_LOG_INFO, GUEST_LOG_DEBUG };

/*
 * Route libvirt's error reports (and our own progress lines) to fn; NULL
 * drops them. libvirt never prints to stderr by itself once a guest_host
 * has been opened. Call before the first guest_host_open.
 */
void guest_set_log(void (*fn)(int level, const char *msg));

struct guest_host;

/*
 * One libvirt connection. For qemu:///embed?root=DIR, DIR (absolute) is
 * created and DIR/etc/qemu.conf written first, and a process-wide libvirt
 * event loop thread is started (it stops when the last host is closed).
 * libvirt allows one embed root per process at a time.
 * Returns NULL with err set on failure; free with guest_host_close.
 */
struct guest_host *guest_host_open(const char *uri, char *err, size_t errlen);
void guest_host_close(struct guest_host *);

/*
 * Boot spec as a transient domain and wait until a line starting with
 * marker (at column 0) appears in spec->channel_log, the domain stops by
 * itself, timeout_s seconds pass since its CPUs started, or *cancel (may
 * be NULL) becomes non-zero. channel_log and console_log are truncated
 * first. The domain is destroyed before return, or handed to a thread
 * that destroys it (spec->destroy_later). Returns 0 with *outcome and
 * *times (may be NULL) set, or -1 on libvirt/setup errors with err naming
 * the failed call and libvirt's message (times as far as it got).
 * Safe to call from several threads on one host.
 * guest_run is guest_create and guest_start_wait in one.
 */
struct guest_times {
	double define_s;	/* libvirt set the domain up and started its
				 * qemu with the CPUs paused */
	double start_s;		/* starting the CPUs */
	double create_s;	/* define_s + start_s */
	double run_s;		/* from then until the outcome was known */
	double decided_s;	/* create_s + run_s: boot-to-result (a wait
				 * between create and start not counted) */
	double destroy_s;	/* tearing the domain down on the caller's
				 * path (0 when it went to a thread) */
	double cpu_s;		/* the qemu process's CPU time at the outcome
				 * (-1: the driver does not say) */
	double started_at;	/* Unix time: the create call, */
	double running_at;	/* the CPUs started, */
	double decided_at;	/* the outcome known */
};
int guest_run(struct guest_host *, const struct guest_spec *,
	      const char *marker, int timeout_s, const atomic_int *cancel,
	      enum guest_outcome *outcome, struct guest_times *times,
	      char *err, size_t errlen);

/* A guest created but not run yet. */
struct guest;

/*
 * The first half of guest_run: the domain created with its CPUs paused
 * (libvirt's part, which needs little CPU: a caller may do it before its
 * turn to run a guest). *out is then guest_start_wait's or
 * guest_discard's to free. times (may be NULL) gets define_s and
 * started_at. spec's strings need not outlive the call.
 */
int guest_create(struct guest_host *, const struct guest_spec *,
		 struct guest **out, struct guest_times *times, char *err,
		 size_t errlen);
/* The second half: starts the CPUs, waits as guest_run, frees g. */
int guest_start_wait(struct guest *g, const char *marker, int timeout_s,
		     const atomic_int *cancel, enum guest_outcome *outcome,
		     struct guest_times *times, char *err, size_t errlen);
/* Destroys (in the background) a created guest that is not to run, and
 * frees it; NULL is ignored. */
void guest_discard(struct guest *g);

/*
 * Waits until no background destroy of a domain called name is pending
 * (at once when none is). Returns the seconds it waited.
 * guest_host_close waits for every pending one.
 */
double guest_wait_destroyed(struct guest_host *, const char *name);

/*
 * After a daemon crash: destroy running domains whose name starts with
 * name_prefix and whose metadata carries our namespace. Call before any
 * guest_run on this host. *ndestroyed (may be NULL) counts them.
 */
int guest_destroy_orphans(struct guest_host *, const char *name_prefix,
			  int *ndestroyed, char *err, size_t errlen);

/*
 * Whether the connection still answers: 0 once libvirt closed it (a
 * keepalive timeout, the daemon gone, a broken socket); why (may be NULL)
 * then says why. Remote URIs get keepalive probes (guest_host_open), so a
 * hung host is noticed within about GUEST_KEEPALIVE_S seconds.
 */
#define GUEST_KEEPALIVE_INTERVAL 2
#define GUEST_KEEPALIVE_COUNT 3
#define GUEST_KEEPALIVE_S (GUEST_KEEPALIVE_INTERVAL * (GUEST_KEEPALIVE_COUNT + 1))
int guest_host_alive(struct guest_host *, char *why, size_t len);
/* why when libvirt says the connection is dead before its close callback
 * has said why: a caller that wants the reason asks again shortly. */
#define GUEST_WHY_NOT_ALIVE "connection not alive"

/* 1 if uri names another machine (a transport such as qemu+ssh, or a
 * host name), 0 for this machine's drivers. */
int guest_uri_remote(const char *uri);

/*
 * Storage volumes on the host (guest_pool.c), for hosts that share no
 * filesystem with the daemon. Volume names are ours: letters, digits,
 * '.', '_' and '-' only.
 *
 * guest_pool_ensure: the pool called pool exists and is running, or is
 * created as a transient directory pool at path (NULL: not created, an
 * error). 0, or -1 with err; also -1 when the pool has less than
 * min_free_mb MiB available (a full pool takes no more jobs).
 */
int guest_pool_ensure(struct guest_host *, const char *pool, const char *path,
		      long min_free_mb, char *err, size_t errlen);
/* Creates volume name (replacing a stale one) with the local file's size
 * and sends the file over a sparse stream; path gets the volume's path on
 * the host. *cancel (may be NULL) stops it. */
int guest_vol_upload(struct guest_host *, const char *pool, const char *name,
		     const char *local, char *path, size_t pathlen,
		     const atomic_int *cancel, char *err, size_t errlen);
/* Deletes volume name; one that is not there is success. */
int guest_vol_delete(struct guest_host *, const char *pool, const char *name,
		     char *err, size_t errlen);
/* Deletes every volume of pool whose name starts with prefix (a crash
 * left them); *ndeleted (may be NULL) counts them. */
int guest_vol_delete_prefix(struct guest_host *, const char *pool,
			    const char *prefix, int *ndeleted, char *err,
			    size_t errlen);

/*
 * Domain XML for spec, every string escaped here. Returns NULL with err
 * set on a missing or invalid field; the caller frees the result with
 * free().
 */
char *guest_xml(const struct guest_spec *, char *err, size_t errlen);

/* ==== hosts.c ==== */
/*
 * hosts.c - the hypervisor hosts guests run on (hosts.c): their
 * configuration ([host NAME] sections), their connections and health,
 * and where a job goes. Without [host] sections there is one host, the
 * daemon's own libvirt connection ([libvirt] uri), exactly as before.
 * The [host] sections themselves are config.c's (struct host_conf).
 */


/* ---- placement (pure, tests/unit/hosts.c) ---- */
enum host_runs { HOST_RUNS_NOT, HOST_RUNS_TCG, HOST_RUNS_KVM };
struct host_choice {
	int up;
	enum host_runs runs;	/* for the job's target */
	long capacity, load;	/* load: jobs placed there now */
};
/*
 * The host a job goes to: one that is up and runs its target; among
 * those with free capacity KVM first, then the most free capacity; when
 * all are full, the least loaded (KVM breaking ties). Equal hosts: the
 * first listed. -1 when no host qualifies.
 */
int hosts_choose(const struct host_choice *, size_t n);

/* ---- the hosts at run time ---- */
struct guest_host;
/* Starts the hosts of cfg (or the implicit one): local ones use the
 * daemon's connection local to local_uri (config_libvirt_uri; local may
 * be NULL when no host is local); remote
 * ones connect on threads of their own, so a host that is down or hangs
 * delays nothing else. prefix ("rcgate-<instance>-") names this
 * daemon's guests and volumes: a host's leftovers with it are removed
 * whenever it (re)connects. */
int hosts_start(const struct config *, struct guest_host *local,
		const char *local_uri, const char *prefix, char *err,
		size_t errlen);
void hosts_stop(void);
size_t hosts_count(void);
/* Whether the configuration needs the daemon's own connection. */
int hosts_need_local(const struct config *);

/* Where a job runs. Holds the host's connection until hosts_release. */
struct host_placement {
	int index;		/* -1: none */
	struct guest_host *gh;
	const char *name, *uri, *pool;
	int local;		/* guests read the daemon's files directly */
	int accel;		/* 1 KVM, 0 TCG, -1 the [jobs] accel rule */
};
/* 1 placed, 0 no host for target is up now (try again later), -1 no
 * configured host runs target (err says so). */
int hosts_place(const char *target, struct host_placement *out, char *err,
		size_t errlen);
void hosts_release(struct host_placement *);
/* A guest of the placement starts or ends (load shown by the API). */
void hosts_guest_delta(const struct host_placement *, int delta);
/* The host failed (not the guest): connection lost, upload refused, pool
 * full. It is marked down and reconnected when it answers again; a local
 * host only counts the failure. */
void hosts_failed(const struct host_placement *, const char *why);
/* Whether the placement's host is still usable (its connection alive and
 * not marked down); why gets the reason when not. */
int hosts_usable(const struct host_placement *, char *why, size_t len);

/* A host as the API shows it. */
struct host_status {
	char name[HOST_NAME_MAX_LEN + 1];
	char uri[512];
	char state[16];		/* up, down, connecting */
	char since[32];		/* ISO 8601: the state's start */
	char error[512];	/* why it is down (or was last) */
	char kvm[128], tcg[128];
	int local;
	int auto_accel;		/* the implicit host: [jobs] accel decides */
	long capacity, jobs, guests;
	unsigned long placed, failures;
};
size_t hosts_status(struct host_status *out, size_t max);

#endif /* RCGATE_GUESTS_H */
