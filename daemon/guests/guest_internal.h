/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * guest_internal.h - what the files that call libvirt share: guest_conn.c
 * (connections), guest.c (domains) and guest_pool.c (volumes). Nobody
 * else includes it.
 */
#ifndef RCGATE_GUEST_INTERNAL_H
#define RCGATE_GUEST_INTERNAL_H

#include <pthread.h>

#include <libvirt/libvirt.h>

#include "base/base.h"
#include "guests/guests.h"

struct teardown;	/* guest.c's */
struct guest_host {
	virConnectPtr conn;
	int uses_loop;
	unsigned create_flags;	/* for virDomainCreateXML */
	/* qemu: start paused, then resume (define and start timed apart);
	 * the test driver refuses the flag. */
	int start_paused;
	/* Background destroys not finished yet; their threads are detached
	 * and close waits for the list to empty. */
	pthread_mutex_t lock;
	pthread_cond_t gone;
	struct teardown *teardowns;
	/* libvirt closed the connection (close callback, event loop thread):
	 * why, or "" while it is open. */
	pthread_mutex_t closed_lock;
	char closed[160];
	int close_cb;		/* the callback is registered */
	/* Calls on a connection through libvirt's RPC client go one thread
	 * at a time: see guest_rpc_enter. Recursive, so that a helper that
	 * takes it may be called with it held. */
	pthread_mutex_t rpc;
	int rpc_serial;
};

virConnectPtr guest_host_conn(struct guest_host *);
/* Around every call that may go over libvirt's RPC client: one thread at
 * a time per connection (CVE-2024-4418, see guest_conn.c). No-ops for the
 * embedded driver. */
void guest_rpc_enter(struct guest_host *);
void guest_rpc_leave(struct guest_host *);
/* Around calls whose failure is expected: libvirt's report is logged at
 * debug level only (this thread). */
void guest_errors_expected(int on);
/* The daemon's log (guest_set_log), and libvirt's last error text. */
void guest_glog(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *guest_last_error(void);

#endif
