/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/guest.c against libvirt's test:///default driver:
 * the run loop (marker detection, timeout, cancel, stale logs), concurrent
 * runs on one host, orphan cleanup, and error routing. Real QEMU guests are
 * the integration tests' business.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "guests/guests.h"

#define MARKER "# rcgate-complete"

static char tmpdir[] = "/tmp/guest-unit-XXXXXX";
static struct guest_host *host;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_errors;
static char last_log[512];

static void capture_log(int level, const char *msg)
{
	pthread_mutex_lock(&log_lock);
	if (level == GUEST_LOG_ERR)
		log_errors++;
	snprintf(last_log, sizeof(last_log), "%s", msg);
	pthread_mutex_unlock(&log_lock);
}

static int setup(void **state)
{
	char err[256] = "";

	(void)state;
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	guest_set_log(capture_log);
	host = guest_host_open("test:///default", err, sizeof(err));
	if (host == NULL) {
		fprintf(stderr, "guest_host_open: %s\n", err);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	guest_host_close(host);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

struct run_case {
	char name[64], channel[256];
	struct guest_spec spec;
};

static void run_case_init(struct run_case *c, const char *name)
{
	snprintf(c->name, sizeof(c->name), "rcgate-%s", name);
	snprintf(c->channel, sizeof(c->channel), "%s/%s.ktap", tmpdir, name);
	memset(&c->spec, 0, sizeof(c->spec));
	c->spec.name = c->name;
	c->spec.arch = "x86_64";
	c->spec.emulator = "/usr/bin/qemu-system-x86_64";
	c->spec.machine = "q35";
	c->spec.memory_mib = 128;
	c->spec.vcpus = 1;
	c->spec.kernel = "/nonexistent/vmlinuz";
	c->spec.channel_log = c->channel;
	c->spec.channel_name = "org.rcgate.results";
	c->spec.job_tag = name;
}

/* test:///default keeps one state per process, shared by connections. */
static int domain_active(const char *name)
{
	virConnectPtr conn = virConnectOpen("test:///default");
	virDomainPtr dom;
	int active = 0;

	assert_non_null(conn);
	dom = virDomainLookupByName(conn, name);
	if (dom != NULL) {
		active = virDomainIsActive(dom) == 1;
		virDomainFree(dom);
	}
	assert_int_equal(virConnectClose(conn), 0);
	return active;
}

/* Stands in for qemu: appends chunks to the channel file with pauses. */
struct writer {
	const char *path;
	const char *const *chunks;
	pthread_t thread;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct timespec pause = { 0, 150 * 1000 * 1000L };
	size_t i;

	nanosleep(&pause, NULL);
	for (i = 0; w->chunks[i] != NULL; i++) {
		FILE *f = fopen(w->path, "a");

		if (f == NULL)
			return NULL;
		fputs(w->chunks[i], f);
		fclose(f);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

static enum guest_outcome run_until(struct run_case *c, const char *marker,
				    int timeout_s, const atomic_int *cancel,
				    const char *const *chunks, double *elapsed)
{
	struct writer w = { .path = c->channel, .chunks = chunks };
	enum guest_outcome outcome = GUEST_STOPPED;
	struct guest_times times;
	char err[512] = "";
	int rc;

	if (chunks != NULL)
		assert_int_equal(pthread_create(&w.thread, NULL, writer_main,
						&w), 0);
	rc = guest_run(host, &c->spec, marker, timeout_s, cancel, &outcome,
		       &times, err, sizeof(err));
	if (elapsed != NULL)
		*elapsed = times.decided_s;
	if (chunks != NULL)
		pthread_join(w.thread, NULL);
	if (rc != 0)
		fail_msg("guest_run: %s", err);
	return outcome;
}

static enum guest_outcome run(struct run_case *c, int timeout_s,
			      const atomic_int *cancel,
			      const char *const *chunks, double *elapsed)
{
	return run_until(c, MARKER, timeout_s, cancel, chunks, elapsed);
}

static void test_marker_completes(void **state)
{
	/* Nested and look-alike lines must not count; a marker split
	 * across writes must. */
	static const char *const chunks[] = {
		"KTAP version 1\n1..1\n",
		"    # rcgate-complete pass=9 (nested, not ours)\n",
		"# rcgate-completeness is not the marker\n",
		"ok 1 ext4\n# rcgate-",
		"complete pass=1 fail=0 skip=0 duration_ms=5\n",
		NULL
	};
	struct run_case c;
	double elapsed = -1;

	(void)state;
	run_case_init(&c, "marker");
	assert_int_equal(run(&c, 10, NULL, chunks, &elapsed),
			 GUEST_COMPLETED);
	/* Five chunks 150 ms apart, seen within a poll interval or two. */
	assert_true(elapsed > 0.7 && elapsed < 3.0);
}

static void test_nested_marker_only_times_out(void **state)
{
	static const char *const chunks[] = {
		"KTAP version 1\n", "    # rcgate-complete pass=1\n", NULL
	};
	struct run_case c;
	double elapsed = -1;

	(void)state;
	run_case_init(&c, "nested");
	assert_int_equal(run(&c, 1, NULL, chunks, &elapsed), GUEST_TIMEOUT);
	assert_true(elapsed >= 1.0 && elapsed < 3.0);
}

static void test_stale_log_ignored(void **state)
{
	struct run_case c;
	FILE *f;

	(void)state;
	run_case_init(&c, "stale");
	f = fopen(c.channel, "w");
	assert_non_null(f);
	fputs(MARKER " pass=1 fail=0 skip=0 duration_ms=1\n", f);
	fclose(f);
	/* An earlier attempt's marker is not this attempt's result. */
	assert_int_equal(run(&c, 1, NULL, NULL, NULL), GUEST_TIMEOUT);
	assert_int_not_equal(access(c.channel, F_OK), 0);
}

static void test_cancel(void **state)
{
	static atomic_int cancel = 1;
	struct run_case c;
	double elapsed = -1;

	(void)state;
	run_case_init(&c, "cancel");
	assert_int_equal(run(&c, 30, &cancel, NULL, &elapsed),
			 GUEST_CANCELLED);
	assert_true(elapsed < 2.0);
}

/* The same name can run again at once: the domain is really gone. */
static void test_domain_destroyed(void **state)
{
	struct run_case c;

	(void)state;
	run_case_init(&c, "again");
	assert_int_equal(run(&c, 1, NULL, NULL, NULL), GUEST_TIMEOUT);
	assert_int_equal(run(&c, 1, NULL, NULL, NULL), GUEST_TIMEOUT);
	assert_false(domain_active(c.name));
}

/*
 * Crash phase 1 (docs/agent.md): a guest with several disks prints the
 * durable size and the ready line, then idles forever; the run must end on
 * the ready line and the domain must be gone (the power cut), not waited for.
 */
static void test_crash_ready_cuts_power(void **state)
{
	static const char *const chunks[] = {
		"KTAP version 1\n",
		"# rcgate-durable: file=crash.dat size=65536 block=4096\n",
		"# rcgate-crash-ready\n",
		NULL
	};
	struct run_case c;
	double elapsed = -1;

	(void)state;
	run_case_init(&c, "crash");
	c.spec.disks[0] = "/var/lib/rcgate/d/crash-ext4.img";
	c.spec.disks[1] = "/var/lib/rcgate/d/crash-xfs.img";
	c.spec.ndisks = 2;
	assert_int_equal(run_until(&c, "# rcgate-crash-ready", 10, NULL,
				   chunks, &elapsed), GUEST_COMPLETED);
	assert_true(elapsed < 3.0);
	assert_false(domain_active(c.name));
}

/*
 * destroy_later: the run returns at the outcome and a thread destroys the
 * domain; guest_wait_destroyed returns once it is gone, and the same name
 * can run again (the crash test's second boot waits like this).
 */
static void test_destroy_later(void **state)
{
	static const char *const chunks[] = {
		"# rcgate-complete pass=1 fail=0 skip=0 duration_ms=1\n", NULL
	};
	struct run_case c;
	double elapsed = -1;

	(void)state;
	run_case_init(&c, "later");
	c.spec.destroy_later = 1;
	assert_int_equal(run(&c, 10, NULL, chunks, &elapsed), GUEST_COMPLETED);
	assert_true(guest_wait_destroyed(host, c.name) >= 0);
	assert_false(domain_active(c.name));
	/* Nothing pending under another name: no wait at all. */
	assert_true(guest_wait_destroyed(host, "rcgate-none") < 0.1);
	assert_int_equal(run(&c, 1, NULL, NULL, NULL), GUEST_TIMEOUT);
	guest_wait_destroyed(host, c.name);
	assert_false(domain_active(c.name));
}

/*
 * A boot right after another of the same name, whose domain is still being
 * torn down on its thread (a KVM probe that timed out, then the TCG boot
 * of the same attempt 7 ms later, issue 50): the create waits for that
 * teardown, never answered "domain already exists". Each round gives the
 * teardown thread no chance to run first.
 */
static void test_same_name_after_destroy_later(void **state)
{
	struct run_case c;
	enum guest_outcome outcome;
	char err[512];

	(void)state;
	run_case_init(&c, "reuse");
	c.spec.destroy_later = 1;
	for (int i = 0; i < 20; i++) {
		err[0] = '\0';
		if (guest_run(host, &c.spec, MARKER, 0, NULL, &outcome, NULL,
			      err, sizeof(err)) < 0)
			fail_msg("round %d: %s", i, err);
		assert_int_equal(outcome, GUEST_TIMEOUT);
	}
	guest_wait_destroyed(host, c.name);
	assert_false(domain_active(c.name));
}

/* A guest a crashed daemon left running, as libvirt would show it. */
static virDomainPtr start_leftover(virConnectPtr conn, const char *name,
				   int ours)
{
	struct run_case c;
	char err[256], *xml, *meta;
	virDomainPtr dom;

	run_case_init(&c, name);
	c.spec.name = name;
	xml = guest_xml(&c.spec, err, sizeof(err));
	assert_non_null(xml);
	if (!ours) {
		/* Same XML minus our metadata: someone else's guest. */
		meta = strstr(xml, "  <metadata>");
		assert_non_null(meta);
		memset(meta, ' ', (size_t)(strstr(meta, "</metadata>") -
					   meta) + strlen("</metadata>"));
	}
	dom = virDomainCreateXML(conn, xml, 0);
	free(xml);
	assert_non_null(dom);
	return dom;
}

static void test_orphans(void **state)
{
	virConnectPtr conn = virConnectOpen("test:///default");
	virDomainPtr doms[3];
	char err[256] = "";
	int n = -1;
	size_t i;

	(void)state;
	assert_non_null(conn);
	doms[0] = start_leftover(conn, "rcgate-orphan-1", 1);
	doms[1] = start_leftover(conn, "rcgate-foreign-1", 0);
	doms[2] = start_leftover(conn, "other-ours-1", 1);
	assert_int_equal(guest_destroy_orphans(host, "rcgate-", &n, err,
					       sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_false(domain_active("rcgate-orphan-1"));
	assert_true(domain_active("rcgate-foreign-1"));
	assert_true(domain_active("other-ours-1"));
	/* The test driver's own "test" domain is untouched too. */
	assert_true(domain_active("test"));
	assert_int_equal(guest_destroy_orphans(host, "rcgate-", &n, err,
					       sizeof(err)), 0);
	assert_int_equal(n, 0);
	for (i = 1; i < 3; i++) {
		assert_int_equal(virDomainDestroy(doms[i]), 0);
		virDomainFree(doms[i]);
	}
	virDomainFree(doms[0]);
	assert_int_equal(guest_destroy_orphans(host, "", &n, err,
					       sizeof(err)), -1);
	assert_int_equal(virConnectClose(conn), 0);
}

struct concurrent {
	struct run_case c;
	enum guest_outcome outcome;
	pthread_t thread;
};

static void *concurrent_main(void *arg)
{
	struct concurrent *k = arg;
	char err[256];

	if (guest_run(host, &k->c.spec, MARKER, 1, NULL, &k->outcome, NULL,
		      err, sizeof(err)) < 0)
		k->outcome = (enum guest_outcome)-1;
	return NULL;
}

static void test_concurrent_runs(void **state)
{
	struct concurrent k[4];
	char name[16];
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "conc%zu", i);
		run_case_init(&k[i].c, name);
		assert_int_equal(pthread_create(&k[i].thread, NULL,
						concurrent_main, &k[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(k[i].thread, NULL);
		assert_int_equal(k[i].outcome, GUEST_TIMEOUT);
	}
}

static void test_bad_spec_is_error(void **state)
{
	struct run_case c;
	enum guest_outcome outcome;
	char err[256] = "";

	(void)state;
	run_case_init(&c, "bad");
	c.spec.kernel = "relative/vmlinuz";
	assert_int_equal(guest_run(host, &c.spec, MARKER, 1, NULL, &outcome,
				   NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "kernel"));
	assert_int_equal(guest_run(host, &c.spec, "", 1, NULL, &outcome,
				   NULL, err, sizeof(err)), -1);
}

static void test_bad_uri(void **state)
{
	char err[512] = "";
	int before;

	(void)state;
	pthread_mutex_lock(&log_lock);
	before = log_errors;
	pthread_mutex_unlock(&log_lock);
	assert_null(guest_host_open("nosuchdriver:///x", err, sizeof(err)));
	assert_non_null(strstr(err, "virConnectOpen(nosuchdriver:///x)"));
	/* libvirt's message reached our log function, not stderr. */
	pthread_mutex_lock(&log_lock);
	assert_true(log_errors > before);
	assert_non_null(strstr(last_log, "libvirt:"));
	pthread_mutex_unlock(&log_lock);
	assert_null(guest_host_open("qemu:///embed", err, sizeof(err)));
	assert_non_null(strstr(err, "root="));
	assert_null(guest_host_open("qemu:///embed?root=relative/dir", err,
				    sizeof(err)));
	assert_non_null(strstr(err, "absolute"));
	assert_null(guest_host_open("", err, sizeof(err)));
}

static void test_outcome_names(void **state)
{
	(void)state;
	assert_string_equal(guest_outcome_name(GUEST_COMPLETED), "completed");
	assert_string_equal(guest_outcome_name(GUEST_TIMEOUT), "timeout");
	assert_string_equal(guest_outcome_name(GUEST_STOPPED), "stopped");
	assert_string_equal(guest_outcome_name(GUEST_CANCELLED), "cancelled");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_marker_completes),
		cmocka_unit_test(test_nested_marker_only_times_out),
		cmocka_unit_test(test_stale_log_ignored),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_domain_destroyed),
		cmocka_unit_test(test_crash_ready_cuts_power),
		cmocka_unit_test(test_destroy_later),
		cmocka_unit_test(test_same_name_after_destroy_later),
		cmocka_unit_test(test_concurrent_runs),
		cmocka_unit_test(test_orphans),
		cmocka_unit_test(test_bad_spec_is_error),
		cmocka_unit_test(test_bad_uri),
		cmocka_unit_test(test_outcome_names),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
