/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * guest_conn.c - libvirt connections: the library's one-time set-up and
 * error callback, the event loop thread every connection needs (the
 * embedded QEMU driver's and keepalive probes), the embed root's
 * qemu.conf, opening and closing a host, and whether it is still alive.
 * guest.c runs domains on the connections made here.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "base/base.h"
#include "guests/guests.h"
#include "guest_internal.h"

#define POLL_INTERVAL_NS (100 * 1000 * 1000L)
#define EMBED_PREFIX "qemu:///embed"

/*
 * What the embedded QEMU driver needs to run guests as root without
 * libvirtd/virtlogd (docs/libvirt.md has the failures behind each line):
 * stdio_handler "file" keeps qemu's log and file chardevs away from
 * virtlogd's socket; user/group root let qemu read the embed root's
 * 0700 state files; no dynamic ownership or remembered owners (xattrs),
 * because the daemon owns every file it hands to a guest; no security
 * driver, so hosts with AppArmor behave like those without; no cgroups of
 * libvirt's own, so a guest stays in the daemon's cgroup: the service's
 * CPU weight and limits cover its guests, and a guest competes for the CPU
 * as the daemon does (libvirt's cgroup under "machine" would count as one
 * nice-0 process beside everything else on the host); the capability
 * cpu-unavailable-features filtered out, so libvirt checks an x86_64
 * guest's CPU with 3 QMP queries instead of one per CPU property (~400,
 * half a second of every start with QEMU 7.2).
 */
#define EMBED_CONF_HEAD \
	"# Written by rcgated for the embedded QEMU driver; edits are lost.\n" \
	"stdio_handler = \"file\"\n"
#define EMBED_CONF_TAIL \
	"dynamic_ownership = 0\n" \
	"remember_owner = 0\n" \
	"security_driver = \"none\"\n" \
	"cgroup_controllers = [ ]\n" \
	"capability_filters = [ \"cpu-unavailable-features\" ]\n"
static const char embed_qemu_conf[] =
	EMBED_CONF_HEAD
	"user = \"root\"\n"
	"group = \"root\"\n"
	EMBED_CONF_TAIL;
/* Unprivileged (rcgated's [daemon] user): qemu runs as the daemon's own
 * user, which owns the embed root; naming root there would make libvirt
 * try to chown its state directories and fail. */
static const char embed_qemu_conf_user[] = EMBED_CONF_HEAD EMBED_CONF_TAIL;

/* Everything below is process-wide because libvirt's event loop is. */
static void (*log_fn)(int level, const char *msg);
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_result;
static char embed_log[4200];	/* LIBVIRT_LOG_OUTPUTS for the first open */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t loop_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned loop_users;
static pthread_t loop_thread;
static int loop_stop;		/* __atomic: asks the loop thread to exit */

/* Set around calls whose failure we expect, so the callback stays quiet. */
static __thread int errors_expected;

void guest_glog(int level, const char *fmt, ...)
{
	void (*fn)(int, const char *) = __atomic_load_n(&log_fn,
							 __ATOMIC_ACQUIRE);
	char msg[1024];
	va_list ap;

	if (fn == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fn(level, msg);
}

void guest_set_log(void (*fn)(int level, const char *msg))
{
	__atomic_store_n(&log_fn, fn, __ATOMIC_RELEASE);
}

/* libvirt calls this instead of printing "libvirt: error : ..." itself. */
static void on_libvirt_error(void *opaque, virErrorPtr e)
{
	int level;

	(void)opaque;
	if (e == NULL)
		return;
	if (errors_expected)
		level = GUEST_LOG_DEBUG;
	else if (e->level == VIR_ERR_WARNING)
		level = GUEST_LOG_WARN;
	else
		level = GUEST_LOG_ERR;
	guest_glog(level, "libvirt: code=%d domain=%d: %s", e->code, e->domain,
	     e->message ? e->message : "(no message)");
}

const char *guest_last_error(void)
{
	return virGetLastErrorMessage();
}

virConnectPtr guest_host_conn(struct guest_host *h)
{
	return h->conn;
}

/*
 * libvirt's RPC client before 10.3 (Debian 12 has 9.0.0-4+deb12u2) has a
 * use-after-return, CVE-2024-4418: each wait in virNetClientIOEventLoop
 * adds a GLib watch on the socket whose data is on the waiting thread's
 * stack, and a wait that somebody else ends (another thread's call, a
 * keepalive probe, a close) leaves that watch behind. The next thread
 * that waits on the client runs it on the dead frame: rcgated crashed
 * that way in hosts.sh, in virNetClientIOEventFD, after a hung host came
 * back. With our threads in libvirt one at a time per connection, only
 * libvirt's own event loop ends a wait: a keepalive probe leaves the
 * watch on a live frame, which the next readable event removes before
 * the call can complete; a close leaves it on a client nobody waits on
 * again, as no thread of ours is queued inside libvirt to take over.
 * The embedded driver has no RPC client and keeps its parallel calls.
 */
void guest_rpc_enter(struct guest_host *h)
{
	if (h != NULL && h->rpc_serial)
		pthread_mutex_lock(&h->rpc);
}

void guest_rpc_leave(struct guest_host *h)
{
	if (h != NULL && h->rpc_serial)
		pthread_mutex_unlock(&h->rpc);
}

void guest_errors_expected(int on)
{
	errors_expected = on;
}

static void init_once_fn(void)
{
	/*
	 * libvirt's own log (warnings from the in-process QEMU driver that
	 * no API call returns) goes to stderr unless told otherwise, and
	 * only the environment can tell it. An explicit setting wins.
	 */
	if (embed_log[0] != '\0' && getenv("LIBVIRT_LOG_OUTPUTS") == NULL)
		setenv("LIBVIRT_LOG_OUTPUTS", embed_log, 0);
	if (virInitialize() < 0) {
		init_result = -1;
		return;
	}
	virSetErrorFunc(NULL, on_libvirt_error);
	/* Must precede the first virConnectOpen, or embed URIs fail. */
	if (virEventRegisterDefaultImpl() < 0)
		init_result = -1;
}

static void *loop_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&loop_stop, __ATOMIC_ACQUIRE)) {
		if (virEventRunDefaultImpl() < 0) {
			struct timespec ts = { 0, POLL_INTERVAL_NS };

			guest_glog(GUEST_LOG_ERR, "libvirt event loop: %s",
			     guest_last_error());
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

/* A zero-period timer makes virEventRunDefaultImpl return once. */
static void wake_cb(int timer, void *opaque)
{
	(void)opaque;
	virEventRemoveTimeout(timer);
}

static int loop_get(char *err, size_t errlen)
{
	int rc = 0;

	pthread_mutex_lock(&loop_lock);
	if (loop_users == 0) {
		__atomic_store_n(&loop_stop, 0, __ATOMIC_RELEASE);
		rc = pthread_create(&loop_thread, NULL, loop_main, NULL);
		if (rc != 0) {
			snprintf(err, errlen, "libvirt event loop thread: %s",
				 strerror(rc));
			rc = -1;
		}
	}
	if (rc == 0)
		loop_users++;
	pthread_mutex_unlock(&loop_lock);
	return rc;
}

static void loop_put(void)
{
	pthread_mutex_lock(&loop_lock);
	if (loop_users > 0 && --loop_users == 0) {
		__atomic_store_n(&loop_stop, 1, __ATOMIC_RELEASE);
		if (virEventAddTimeout(0, wake_cb, NULL, NULL) < 0)
			guest_glog(GUEST_LOG_ERR, "virEventAddTimeout: %s",
			     guest_last_error());
		else
			pthread_join(loop_thread, NULL);
	}
	pthread_mutex_unlock(&loop_lock);
}

/*
 * qemu:///embed?root=DIR: make DIR and DIR/etc/qemu.conf. We do not
 * percent-decode, so a root with '%' is refused rather than misread.
 */
static int embed_prepare(const char *uri, char *err, size_t errlen)
{
	const char *q = strchr(uri, '?'), *p, *end, *conf;
	char root[4000], path[4100];
	size_t len;

	for (p = q; p != NULL; p = strchr(p + 1, '&')) {
		if (strncmp(p + 1, "root=", 5) == 0)
			break;
	}
	if (p == NULL) {
		snprintf(err, errlen, "%s: embed URI without root=", uri);
		return -1;
	}
	p += 6;
	end = strchr(p, '&');
	len = end ? (size_t)(end - p) : strlen(p);
	if (len == 0 || len >= sizeof(root) || p[0] != '/' ||
	    memchr(p, '%', len) != NULL) {
		snprintf(err, errlen, "%s: root must be an absolute path "
			 "without %%-escapes", uri);
		return -1;
	}
	memcpy(root, p, len);
	root[len] = '\0';
	/* Monitor sockets live at ROOT/lib/qemu/domain-N-<name cut to 20>/
	 * monitor.sock, and sun_path holds 108 bytes. */
	if (len > 48)
		guest_glog(GUEST_LOG_WARN, "embed root %s is longer than 48 bytes: "
		     "guests may fail to start (UNIX socket path limit)", root);
	snprintf(path, sizeof(path), "%s/etc", root);
	if (mkdir_p(path, 0700, err, errlen) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/log", root);
	if (mkdir_p(path, 0700, err, errlen) < 0)
		return -1;
	if (embed_log[0] == '\0')
		snprintf(embed_log, sizeof(embed_log),
			 "3:file:%s/log/libvirt.log", root);
	snprintf(path, sizeof(path), "%s/etc/qemu.conf", root);
	conf = geteuid() == 0 ? embed_qemu_conf : embed_qemu_conf_user;
	return file_write_if_changed(path, conf, strlen(conf), 0600, err,
				     errlen);
}

int guest_uri_remote(const char *uri)
{
	const char *p = strstr(uri, "://");
	size_t scheme = p != NULL ? (size_t)(p - uri) : 0;

	if (p == NULL)
		return 0;
	/* qemu+ssh://, qemu+tls:// ...; or qemu://host/system. */
	return memchr(uri, '+', scheme) != NULL || (p[3] != '/' && p[3] != '\0');
}

static void on_close(virConnectPtr conn, int reason, void *opaque)
{
	struct guest_host *h = opaque;
	const char *why;

	(void)conn;
	switch (reason) {
	case VIR_CONNECT_CLOSE_REASON_ERROR: why = "connection error"; break;
	case VIR_CONNECT_CLOSE_REASON_EOF: why = "the daemon closed the connection"; break;
	case VIR_CONNECT_CLOSE_REASON_KEEPALIVE: why = "no answer to keepalive probes"; break;
	default: why = "connection closed"; break;
	}
	pthread_mutex_lock(&h->closed_lock);
	snprintf(h->closed, sizeof(h->closed), "%s", why);
	pthread_mutex_unlock(&h->closed_lock);
	guest_glog(GUEST_LOG_WARN, "libvirt connection closed: %s", why);
}

int guest_host_alive(struct guest_host *h, char *why, size_t len)
{
	int alive;

	if (h == NULL || h->conn == NULL) {
		if (why != NULL)
			snprintf(why, len, "not connected");
		return 0;
	}
	pthread_mutex_lock(&h->closed_lock);
	alive = h->closed[0] == '\0';
	if (!alive && why != NULL)
		snprintf(why, len, "%s", h->closed);
	pthread_mutex_unlock(&h->closed_lock);
	if (alive && virConnectIsAlive(h->conn) != 1) {
		alive = 0;
		if (why != NULL)
			snprintf(why, len, GUEST_WHY_NOT_ALIVE);
	}
	return alive;
}

static void host_free(struct guest_host *h)
{
	pthread_mutex_destroy(&h->rpc);
	pthread_cond_destroy(&h->gone);
	pthread_mutex_destroy(&h->closed_lock);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

struct guest_host *guest_host_open(const char *uri, char *err, size_t errlen)
{
	struct guest_host *h;

	if (uri == NULL || uri[0] == '\0') {
		snprintf(err, errlen, "guest_host_open: empty URI");
		return NULL;
	}
	/* The embed root decides where libvirt's log goes, and that is
	 * fixed by the first initialisation: prepare first. */
	pthread_mutex_lock(&open_lock);
	if (strncmp(uri, EMBED_PREFIX, strlen(EMBED_PREFIX)) == 0 &&
	    embed_prepare(uri, err, errlen) < 0) {
		pthread_mutex_unlock(&open_lock);
		return NULL;
	}
	pthread_once(&init_once, init_once_fn);
	pthread_mutex_unlock(&open_lock);
	if (init_result < 0) {
		snprintf(err, errlen, "libvirt initialisation failed: %s",
			 guest_last_error());
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		snprintf(err, errlen, "guest_host_open: out of memory");
		return NULL;
	}
	pthread_mutex_init(&h->lock, NULL);
	pthread_mutex_init(&h->closed_lock, NULL);
	pthread_cond_init(&h->gone, NULL);
	{
		pthread_mutexattr_t ma;

		pthread_mutexattr_init(&ma);
		pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_init(&h->rpc, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	h->rpc_serial = strncmp(uri, EMBED_PREFIX, strlen(EMBED_PREFIX)) != 0;
	/* Remote URIs need the loop too (keepalive), so every host uses it. */
	if (loop_get(err, errlen) < 0) {
		free(h);
		return NULL;
	}
	h->uses_loop = 1;
	/* AUTODESTROY: if a libvirtd-backed connection drops, so does the
	 * guest. The embedded driver refuses the flag ("not supported for
	 * embedded drivers yet"), the test driver too; for those,
	 * guest_destroy_orphans is the safety net. */
	if (strncmp(uri, "qemu", 4) == 0 &&
	    strncmp(uri, EMBED_PREFIX, strlen(EMBED_PREFIX)) != 0)
		h->create_flags = VIR_DOMAIN_START_AUTODESTROY;
	h->start_paused = strncmp(uri, "qemu", 4) == 0;
	h->conn = virConnectOpen(uri);
	if (h->conn == NULL) {
		const char *msg = guest_last_error();

		/* Debian's driver resolves its built-in account before it
		 * reads qemu.conf, so "user = root" does not help here. */
		snprintf(err, errlen, "virConnectOpen(%s): %s%s", uri, msg,
			 strstr(msg, "Failed to parse user") == NULL &&
			 strstr(msg, "Failed to parse group") == NULL ? "" :
			 " (the QEMU driver needs its system account even "
			 "as root: see docs/libvirt.md)");
		loop_put();
		host_free(h);
		return NULL;
	}
	/* A remote host that stops answering is noticed by keepalive
	 * probes (the event loop sends them), and a closed connection by
	 * the callback: either makes guest_host_alive false. */
	if (virConnectRegisterCloseCallback(h->conn, on_close, h, NULL) == 0)
		h->close_cb = 1;
	if (guest_uri_remote(uri) &&
	    virConnectSetKeepAlive(h->conn, GUEST_KEEPALIVE_INTERVAL,
				   GUEST_KEEPALIVE_COUNT) < 0)
		guest_glog(GUEST_LOG_WARN, "virConnectSetKeepAlive(%s): %s", uri,
		     guest_last_error());
	guest_glog(GUEST_LOG_DEBUG, "libvirt connected uri=%s", uri);
	return h;
}

void guest_host_close(struct guest_host *h)
{
	int refs;

	if (h == NULL)
		return;
	/* Every domain handed to a teardown thread is gone before the
	 * connection it uses closes. */
	pthread_mutex_lock(&h->lock);
	while (h->teardowns != NULL)
		pthread_cond_wait(&h->gone, &h->lock);
	pthread_mutex_unlock(&h->lock);
	if (h->conn != NULL) {
		guest_rpc_enter(h);
		if (h->close_cb) {
			errors_expected = 1;
			virConnectUnregisterCloseCallback(h->conn, on_close);
			errors_expected = 0;
		}
		refs = virConnectClose(h->conn);
		if (refs > 0)
			guest_glog(GUEST_LOG_WARN, "virConnectClose: %d references "
			     "leaked", refs);
		else if (refs < 0)
			guest_glog(GUEST_LOG_WARN, "virConnectClose: %s",
			     guest_last_error());
		guest_rpc_leave(h);
	}
	/* The embedded driver shuts down inside virConnectClose, which
	 * still needs the loop: stop it only afterwards. */
	if (h->uses_loop)
		loop_put();
	host_free(h);
}
