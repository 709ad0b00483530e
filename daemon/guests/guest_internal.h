/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * guest_internal.h - what guest.c shares with guest_pool.c, the other
 * file that calls libvirt. Nobody else includes it.
 */
#ifndef RCGATE_GUEST_INTERNAL_H
#define RCGATE_GUEST_INTERNAL_H

#include <libvirt/libvirt.h>

#include "base/base.h"
#include "guests/guests.h"

virConnectPtr guest_host_conn(struct guest_host *);
/* Around every call that may go over libvirt's RPC client: one thread at
 * a time per connection (CVE-2024-4418, see guest.c). No-ops for the
 * embedded driver. */
void guest_rpc_enter(struct guest_host *);
void guest_rpc_leave(struct guest_host *);
/* Around calls whose failure is expected: libvirt's report is logged at
 * debug level only (this thread). */
void guest_errors_expected(int on);

#endif
