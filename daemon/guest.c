/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * guest.c - the daemon's libvirt user: connections (including the embedded
 * QEMU driver and the event loop thread it needs), running one transient
 * test domain to completion, and cleaning up domains a crashed daemon left
 * behind. The only file besides guest_xml.c that knows libvirt exists, and
 * the only one that calls it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "rcgate.h"
#include "guest.h"

#define POLL_INTERVAL_NS (100 * 1000 * 1000L)
#define EMBED_PREFIX "qemu:///embed"

/*
 * What the embedded QEMU driver needs to run guests as root without
 * libvirtd/virtlogd (docs/libvirt.md has the failures behind each line):
 * stdio_handler "file" keeps qemu's log and file chardevs away from
 * virtlogd's socket; user/group root let qemu read the embed root's
 * 0700 state files; no dynamic ownership or remembered owners (xattrs),
 * because the daemon owns every file it hands to a guest; no security
 * driver, so hosts with AppArmor behave like those without.
 */
static const char embed_qemu_conf[] =
	"# Written by rcgated for the embedded QEMU driver; edits are lost.\n"
	"stdio_handler = \"file\"\n"
	"user = \"root\"\n"
	"group = \"root\"\n"
	"dynamic_ownership = 0\n"
	"remember_owner = 0\n"
	"security_driver = \"none\"\n";
/* Unprivileged (rcgated's [daemon] user): qemu runs as the daemon's own
 * user, which owns the embed root; naming root there would make libvirt
 * try to chown its state directories and fail. */
static const char embed_qemu_conf_user[] =
	"# Written by rcgated for the embedded QEMU driver; edits are lost.\n"
	"stdio_handler = \"file\"\n"
	"dynamic_ownership = 0\n"
	"remember_owner = 0\n"
	"security_driver = \"none\"\n";

struct guest_host {
	virConnectPtr conn;
	int uses_loop;
	unsigned create_flags;	/* for virDomainCreateXML */
};

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

static void glog(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void glog(int level, const char *fmt, ...)
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

const char *guest_outcome_name(enum guest_outcome o)
{
	switch (o) {
	case GUEST_COMPLETED: return "completed";
	case GUEST_TIMEOUT: return "timeout";
	case GUEST_STOPPED: return "stopped";
	case GUEST_CANCELLED: return "cancelled";
	}
	return "unknown";
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
	glog(level, "libvirt: code=%d domain=%d: %s", e->code, e->domain,
	     e->message ? e->message : "(no message)");
}

static const char *last_error(void)
{
	return virGetLastErrorMessage();
}

static int last_error_code(void)
{
	virErrorPtr e = virGetLastError();

	return e ? e->code : VIR_ERR_OK;
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

			glog(GUEST_LOG_ERR, "libvirt event loop: %s",
			     last_error());
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
			glog(GUEST_LOG_ERR, "virEventAddTimeout: %s",
			     last_error());
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
		glog(GUEST_LOG_WARN, "embed root %s is longer than 48 bytes: "
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
			 last_error());
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		snprintf(err, errlen, "guest_host_open: out of memory");
		return NULL;
	}
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
	h->conn = virConnectOpen(uri);
	if (h->conn == NULL) {
		const char *msg = last_error();

		/* Debian's driver resolves its built-in account before it
		 * reads qemu.conf, so "user = root" does not help here. */
		snprintf(err, errlen, "virConnectOpen(%s): %s%s", uri, msg,
			 strstr(msg, "Failed to parse user") == NULL &&
			 strstr(msg, "Failed to parse group") == NULL ? "" :
			 " (the QEMU driver needs its system account even "
			 "as root: see docs/libvirt.md)");
		loop_put();
		free(h);
		return NULL;
	}
	glog(GUEST_LOG_DEBUG, "libvirt connected uri=%s", uri);
	return h;
}

void guest_host_close(struct guest_host *h)
{
	int refs;

	if (h == NULL)
		return;
	if (h->conn != NULL) {
		refs = virConnectClose(h->conn);
		if (refs > 0)
			glog(GUEST_LOG_WARN, "virConnectClose: %d references "
			     "leaked", refs);
		else if (refs < 0)
			glog(GUEST_LOG_WARN, "virConnectClose: %s",
			     last_error());
	}
	/* The embedded driver shuts down inside virConnectClose, which
	 * still needs the loop: stop it only afterwards. */
	if (h->uses_loop)
		loop_put();
	free(h);
}

/* Incremental scan of a growing file for a line beginning with marker. */
struct marker_scan {
	int fd;
	char head[128];		/* first bytes of the current line */
	size_t headlen;
	int found;
};

static int line_has_marker(const struct marker_scan *s, const char *marker,
			   size_t mlen)
{
	char next;

	if (s->headlen < mlen || memcmp(s->head, marker, mlen) != 0)
		return 0;
	next = s->headlen > mlen ? s->head[mlen] : '\0';
	return next == '\0' || next == ' ' || next == '\t' || next == '\r';
}

/*
 * Read what was appended since the last call. final: the writer has gone,
 * so an unterminated last line counts too. Returns -1 on read errors.
 */
static int marker_poll(struct marker_scan *s, const char *path,
		       const char *marker, int final, char *err,
		       size_t errlen)
{
	size_t mlen = strlen(marker);
	char buf[8192];
	ssize_t n, i;

	if (s->fd < 0) {
		s->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (s->fd < 0) {
			if (errno == ENOENT)
				return 0;	/* qemu has not opened it yet */
			snprintf(err, errlen, "open %s: %s", path,
				 strerror(errno));
			return -1;
		}
	}
	while (!s->found && (n = read(s->fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "read %s: %s", path,
				 strerror(errno));
			return -1;
		}
		for (i = 0; i < n && !s->found; i++) {
			if (buf[i] == '\n') {
				s->found = line_has_marker(s, marker, mlen);
				s->headlen = 0;
			} else if (s->headlen < sizeof(s->head)) {
				s->head[s->headlen++] = buf[i];
			}
		}
	}
	if (final && !s->found)
		s->found = line_has_marker(s, marker, mlen);
	return 0;
}

/* 1: still running, 0: stopped or gone. */
static int domain_running(virDomainPtr dom)
{
	int state, reason, rc;

	errors_expected = 1;
	rc = virDomainGetState(dom, &state, &reason, 0);
	errors_expected = 0;
	if (rc < 0)
		return 0;	/* a transient domain vanishes when it stops */
	return state == VIR_DOMAIN_RUNNING || state == VIR_DOMAIN_BLOCKED ||
		state == VIR_DOMAIN_PAUSED || state == VIR_DOMAIN_NOSTATE;
}

/* Destroy; "already gone" is success. */
static int domain_destroy(virDomainPtr dom, const char *name, char *err,
			  size_t errlen)
{
	int code;

	errors_expected = 1;
	if (virDomainDestroy(dom) == 0) {
		errors_expected = 0;
		return 0;
	}
	errors_expected = 0;
	code = last_error_code();
	if (code == VIR_ERR_NO_DOMAIN || code == VIR_ERR_OPERATION_INVALID)
		return 0;
	snprintf(err, errlen, "virDomainDestroy(%s): %s", name, last_error());
	glog(GUEST_LOG_ERR, "%s", err);
	return -1;
}

static int unlink_stale(const char *path, char *err, size_t errlen)
{
	if (path != NULL && unlink(path) < 0 && errno != ENOENT) {
		snprintf(err, errlen, "unlink %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int guest_run(struct guest_host *h, const struct guest_spec *spec,
	      const char *marker, int timeout_s, const volatile int *cancel,
	      enum guest_outcome *outcome, struct guest_times *times,
	      char *err, size_t errlen)
{
	struct marker_scan scan = { .fd = -1 };
	struct timespec pause = { 0, POLL_INTERVAL_NS };
	struct guest_times t = { 0 };
	double start = now_monotonic(), now, decided, created;
	virDomainPtr dom;
	char *xml;
	int rc = -1, stopped = 0;

	if (h == NULL || spec == NULL || marker == NULL || marker[0] == '\0' ||
	    outcome == NULL) {
		snprintf(err, errlen, "guest_run: missing argument");
		return -1;
	}
	if (strlen(marker) >= sizeof(scan.head)) {
		snprintf(err, errlen, "guest_run: marker longer than %zu bytes",
			 sizeof(scan.head) - 1);
		return -1;
	}
	if (times != NULL)
		*times = t;
	xml = guest_xml(spec, err, errlen);
	if (xml == NULL)
		return -1;
	/* A stale log from an earlier attempt must not look like a result. */
	if (unlink_stale(spec->channel_log, err, errlen) < 0 ||
	    unlink_stale(spec->console_log, err, errlen) < 0) {
		free(xml);
		return -1;
	}
	dom = virDomainCreateXML(h->conn, xml, h->create_flags);
	free(xml);
	if (dom == NULL) {
		snprintf(err, errlen, "virDomainCreateXML(%s): %s", spec->name,
			 last_error());
		if (times != NULL)
			times->create_s = times->decided_s = now_monotonic() - start;
		return -1;
	}
	created = now_monotonic();
	glog(GUEST_LOG_DEBUG, "guest started name=%s after=%.2fs", spec->name,
	     created - start);

	for (;;) {
		if (marker_poll(&scan, spec->channel_log, marker, stopped, err,
				errlen) < 0)
			goto out;
		if (scan.found) {
			*outcome = GUEST_COMPLETED;
			break;
		}
		if (stopped) {
			*outcome = GUEST_STOPPED;
			break;
		}
		if (cancel != NULL && *cancel) {
			*outcome = GUEST_CANCELLED;
			break;
		}
		now = now_monotonic();
		if (now - start >= (double)timeout_s) {
			*outcome = GUEST_TIMEOUT;
			break;
		}
		if (!domain_running(dom)) {
			/* One more read: qemu may have written the last
			 * bytes just before it went away. */
			stopped = 1;
			continue;
		}
		nanosleep(&pause, NULL);
	}
	rc = 0;
out:
	decided = now_monotonic();
	/* -no-shutdown keeps a powered-off guest around; do not wait. */
	if (domain_destroy(dom, spec->name, rc < 0 ? NULL : err,
			   rc < 0 ? 0 : errlen) < 0)
		rc = -1;
	virDomainFree(dom);
	if (scan.fd >= 0)
		close(scan.fd);
	/* Boot-to-result: the destroy that follows is cleanup, and on hosts
	 * whose init reaps slowly it costs seconds that say nothing about
	 * the kernel under test, so it is counted apart. */
	t.create_s = created - start;
	t.run_s = decided - created;
	t.decided_s = decided - start;
	t.destroy_s = now_monotonic() - decided;
	if (times != NULL)
		*times = t;
	if (rc == 0)
		glog(GUEST_LOG_DEBUG, "guest finished name=%s outcome=%s "
		     "decided=%.2fs destroy=%.2fs", spec->name,
		     guest_outcome_name(*outcome), decided - start,
		     now_monotonic() - decided);
	return rc;
}

int guest_destroy_orphans(struct guest_host *h, const char *name_prefix,
			  int *ndestroyed, char *err, size_t errlen)
{
	virDomainPtr *doms = NULL;
	size_t plen = name_prefix ? strlen(name_prefix) : 0;
	int n, i, count = 0, rc = 0;

	if (ndestroyed != NULL)
		*ndestroyed = 0;
	if (h == NULL || plen == 0) {
		snprintf(err, errlen, "guest_destroy_orphans: missing argument");
		return -1;
	}
	n = virConnectListAllDomains(h->conn, &doms,
				     VIR_CONNECT_LIST_DOMAINS_ACTIVE);
	if (n < 0) {
		snprintf(err, errlen, "virConnectListAllDomains: %s",
			 last_error());
		return -1;
	}
	for (i = 0; i < n; i++) {
		const char *name = virDomainGetName(doms[i]);
		char *meta = NULL;

		if (name != NULL && strncmp(name, name_prefix, plen) == 0) {
			/* No element in our namespace: someone else's. */
			errors_expected = 1;
			meta = virDomainGetMetadata(doms[i],
						    VIR_DOMAIN_METADATA_ELEMENT,
						    GUEST_METADATA_NS,
						    VIR_DOMAIN_AFFECT_LIVE);
			errors_expected = 0;
		}
		if (meta != NULL) {
			if (domain_destroy(doms[i], name, err, errlen) < 0) {
				rc = -1;
			} else {
				count++;
				glog(GUEST_LOG_INFO, "destroyed orphan guest "
				     "name=%s", name);
			}
			free(meta);
		}
		virDomainFree(doms[i]);
	}
	free(doms);
	if (ndestroyed != NULL)
		*ndestroyed = count;
	return rc;
}
