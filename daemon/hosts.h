/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hosts.h - the hypervisor hosts guests run on (hosts.c): their
 * configuration ([host NAME] sections), their connections and health,
 * and where a job goes. Without [host] sections there is one host, the
 * daemon's own libvirt connection ([libvirt] uri), exactly as before.
 * The [host] sections themselves are config.c's (struct host_conf).
 */
#ifndef RCGATE_HOSTS_H
#define RCGATE_HOSTS_H

#include <stddef.h>
#include <stdio.h>

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

#endif
