/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests for daemon/guest_xml.c: the domain XML for each target kind
 * says what it must (checked by parsing it back with libxml2), outside
 * strings are escaped, bad specs are refused, and libvirt's test driver
 * accepts every variant.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include "guests/guests.h"

static const char hostile[] = "a<b>&c'd\"e";

/* One spec per target kind, like the daemon's target table. */
static struct guest_spec spec_for(const char *kind)
{
	struct guest_spec s = {
		.name = "rcgate-7-1",
		.arch = "x86_64",
		.emulator = "/usr/bin/qemu-system-x86_64",
		.machine = "q35",
		.memory_mib = 512,
		.vcpus = 1,
		.kernel = "/var/lib/rcgate/k/vmlinuz",
		.initrd = "/var/lib/rcgate/k/initrd.gz",
		.cmdline = "console=ttyS0 panic=-1",
		.disks = { "/var/lib/rcgate/d/7.img" },
		.ndisks = 1,
		.console_log = "/var/lib/rcgate/log/7-1.console",
		.channel_log = "/var/lib/rcgate/log/7-1.ktap",
		.channel_name = "org.rcgate.results",
		.job_tag = "job=7 attempt=1",
	};

	if (strcmp(kind, "i686") == 0) {
		s.arch = "i686";
		s.emulator = "/usr/bin/qemu-system-i386";
		s.machine = "pc";
		s.use_kvm = 1;
	} else if (strcmp(kind, "aarch64") == 0) {
		s.arch = "aarch64";
		s.emulator = "/usr/bin/qemu-system-aarch64";
		s.machine = "virt";
		s.cpu = "cortex-a57";
		s.cmdline = "console=ttyAMA0";
	} else if (strcmp(kind, "armv7l") == 0) {
		s.arch = "armv7l";
		s.emulator = "/usr/bin/qemu-system-arm";
		s.machine = "virt";
		s.cpu = "cortex-a15";
		s.cmdline = "console=ttyAMA0";
		s.virtio_mmio = 1;
	}
	return s;
}

struct parsed {
	char *text;
	xmlDocPtr doc;
	xmlXPathContextPtr ctx;
};

static void parse(const struct guest_spec *s, struct parsed *p)
{
	char err[256] = "";

	p->text = guest_xml(s, err, sizeof(err));
	if (p->text == NULL)
		fail_msg("guest_xml: %s", err);
	p->doc = xmlReadMemory(p->text, (int)strlen(p->text), "domain.xml",
			       NULL, XML_PARSE_NONET);
	assert_non_null(p->doc);
	p->ctx = xmlXPathNewContext(p->doc);
	assert_non_null(p->ctx);
}

static void parsed_free(struct parsed *p)
{
	xmlXPathFreeContext(p->ctx);
	xmlFreeDoc(p->doc);
	free(p->text);
}

static int count(struct parsed *p, const char *xpath)
{
	xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST xpath, p->ctx);
	int n;

	assert_non_null(o);
	n = o->nodesetval ? o->nodesetval->nodeNr : 0;
	xmlXPathFreeObject(o);
	return n;
}

/* String value of an XPath expression ("" when nothing matches). */
static void want_value(struct parsed *p, const char *xpath,
			 const char *want)
{
	char expr[512];
	xmlXPathObjectPtr o;

	snprintf(expr, sizeof(expr), "string(%s)", xpath);
	o = xmlXPathEvalExpression(BAD_CAST expr, p->ctx);
	assert_non_null(o);
	if (strcmp((const char *)o->stringval, want) != 0)
		fail_msg("%s: got '%s', want '%s'", xpath,
			 (const char *)o->stringval, want);
	xmlXPathFreeObject(o);
}

/* What every guest must have and must not have, whatever the arch. */
static void expect_common(struct parsed *p, const struct guest_spec *s)
{
	want_value(p, "/domain/name", s->name);
	want_value(p, "/domain/memory[@unit='MiB']", "512");
	want_value(p, "/domain/vcpu", "1");
	want_value(p, "/domain/os/type", "hvm");
	want_value(p, "/domain/os/type/@arch", s->arch);
	want_value(p, "/domain/os/type/@machine", s->machine);
	want_value(p, "/domain/os/kernel", s->kernel);
	want_value(p, "/domain/os/initrd", s->initrd);
	want_value(p, "/domain/os/cmdline", s->cmdline);
	want_value(p, "/domain/devices/emulator", s->emulator);
	want_value(p, "/domain/devices/disk[@device='disk']/source/@file",
		     s->disks[0]);
	want_value(p, "/domain/devices/disk/driver/@type", "raw");
	want_value(p, "/domain/devices/disk/target/@dev", "vda");
	want_value(p, "/domain/devices/disk/target/@bus", "virtio");
	want_value(p, "/domain/devices/serial[@type='file']/source/@path",
		     s->console_log);
	want_value(p, "/domain/devices/channel[@type='file']/source/@path",
		     s->channel_log);
	want_value(p, "/domain/devices/channel/target[@type='virtio']/@name",
		     s->channel_name);
	assert_int_equal(count(p, "/domain/devices/controller"
			       "[@type='virtio-serial']"), 1);
	want_value(p, "/domain/devices/memballoon/@model", "none");
	want_value(p, "/domain/devices/controller[@type='usb']/@model",
		     "none");
	want_value(p, "/domain/on_poweroff", "destroy");
	want_value(p, "/domain/on_crash", "destroy");
	assert_int_equal(count(p, "//interface | //graphics | //video | "
			       "//sound | //hostdev"), 0);
	/* Our namespace marks the guest as ours for orphan cleanup. */
	xmlXPathRegisterNs(p->ctx, BAD_CAST "r", BAD_CAST GUEST_METADATA_NS);
	want_value(p, "/domain/metadata/r:guest/job", s->job_tag);
}

static void test_x86_64(void **state)
{
	struct guest_spec s = spec_for("x86_64");
	struct parsed p;

	(void)state;
	parse(&s, &p);
	expect_common(&p, &s);
	want_value(&p, "/domain/@type", "qemu");
	assert_int_equal(count(&p, "/domain/features/acpi"), 1);
	assert_int_equal(count(&p, "/domain/cpu"), 0);
	assert_int_equal(count(&p, "//address[@type='virtio-mmio']"), 0);
	parsed_free(&p);
}

static void test_i686_kvm(void **state)
{
	struct guest_spec s = spec_for("i686");
	struct parsed p;

	(void)state;
	parse(&s, &p);
	expect_common(&p, &s);
	want_value(&p, "/domain/@type", "kvm");
	assert_int_equal(count(&p, "/domain/features/acpi"), 1);
	parsed_free(&p);
}

static void test_aarch64(void **state)
{
	struct guest_spec s = spec_for("aarch64");
	struct parsed p;

	(void)state;
	parse(&s, &p);
	expect_common(&p, &s);
	want_value(&p, "/domain/features/gic/@version", "3");
	assert_int_equal(count(&p, "/domain/features/acpi"), 0);
	want_value(&p, "/domain/cpu/@mode", "custom");
	want_value(&p, "/domain/cpu/model", "cortex-a57");
	assert_int_equal(count(&p, "//address[@type='virtio-mmio']"), 0);
	parsed_free(&p);
}

static void test_armv7(void **state)
{
	struct guest_spec s = spec_for("armv7l");
	struct parsed p;

	(void)state;
	parse(&s, &p);
	expect_common(&p, &s);
	want_value(&p, "/domain/cpu/model", "cortex-a15");
	assert_int_equal(count(&p, "/domain/features/gic"), 0);
	assert_int_equal(count(&p, "/domain/devices/disk/address"
			       "[@type='virtio-mmio']"), 1);
	assert_int_equal(count(&p, "/domain/devices/controller"
			       "[@type='virtio-serial']/address"
			       "[@type='virtio-mmio']"), 1);
	parsed_free(&p);
}

/* One <disk> per image, in order, named vda, vdb, ...; mmio on each. */
static void test_several_disks(void **state)
{
	static const char *const kinds[] = { "x86_64", "armv7l" };
	static const char *const images[] = {
		"/d/ext4.img", "/d/xfs.img", "/d/btrfs.img", "/d/f2fs.img",
		"/d/c0.img", "/d/c1.img", "/d/c2.img", "/d/c3.img",
		"/d/c4.img", "/d/c5.img", "/d/c6.img", "/d/c7.img",
		"/d/c8.img", "/d/c9.img", "/d/c10.img", "/d/c11.img",
		"/d/c12.img", "/d/c13.img", "/d/c14.img", "/d/c15.img",
	};
	size_t k;
	unsigned i;

	(void)state;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct guest_spec s = spec_for(kinds[k]);
		struct parsed p;

		for (i = 0; i < GUEST_MAX_DISKS; i++)
			s.disks[i] = images[i];
		s.ndisks = GUEST_MAX_DISKS;
		parse(&s, &p);
		assert_int_equal(count(&p, "/domain/devices/disk"),
				 GUEST_MAX_DISKS);
		for (i = 0; i < GUEST_MAX_DISKS; i++) {
			char xp[128], dev[16];

			snprintf(xp, sizeof(xp), "/domain/devices/disk[%u]"
				 "/source/@file", i + 1);
			want_value(&p, xp, images[i]);
			snprintf(xp, sizeof(xp), "/domain/devices/disk[%u]"
				 "/target/@dev", i + 1);
			snprintf(dev, sizeof(dev), "vd%c", 'a' + i);
			want_value(&p, xp, dev);
			/* The agent finds the disk by this, not by order. */
			snprintf(xp, sizeof(xp), "/domain/devices/disk[%u]"
				 "/serial", i + 1);
			snprintf(dev, sizeof(dev), "rcgate-vd%c", 'a' + i);
			want_value(&p, xp, dev);
		}
		assert_int_equal(count(&p, "/domain/devices/disk/address"
				       "[@type='virtio-mmio']"),
				 s.virtio_mmio ? GUEST_MAX_DISKS : 0);
		parsed_free(&p);
		/* Only the first ndisks entries count. */
		s.ndisks = 2;
		parse(&s, &p);
		assert_int_equal(count(&p, "/domain/devices/disk"), 2);
		want_value(&p, "/domain/devices/disk[2]/target/@dev", "vdb");
		parsed_free(&p);
	}
}

static void test_cpu_modes(void **state)
{
	struct guest_spec s = spec_for("aarch64");
	struct parsed p;

	(void)state;
	s.cpu = "max";
	parse(&s, &p);
	want_value(&p, "/domain/cpu/@mode", "maximum");
	assert_int_equal(count(&p, "/domain/cpu/model"), 0);
	parsed_free(&p);
	s = spec_for("x86_64");
	s.cpu = "host";
	s.use_kvm = 1;
	parse(&s, &p);
	want_value(&p, "/domain/cpu/@mode", "host-passthrough");
	parsed_free(&p);
}

static void test_optional_parts(void **state)
{
	struct guest_spec s = spec_for("x86_64");
	struct parsed p;

	(void)state;
	s.ndisks = 0;
	s.initrd = NULL;
	s.console_log = NULL;
	s.job_tag = NULL;
	parse(&s, &p);
	assert_int_equal(count(&p, "//disk | //os/initrd | //serial"), 0);
	assert_int_equal(count(&p, "//channel"), 1);
	parsed_free(&p);
}

static void test_escaping(void **state)
{
	struct guest_spec s = spec_for("x86_64");
	char kernel[64], name[64], clog[64];
	struct parsed p;

	(void)state;
	snprintf(name, sizeof(name), "rcgate-%s", hostile);
	snprintf(kernel, sizeof(kernel), "/k/%s/vmlinuz", hostile);
	snprintf(clog, sizeof(clog), "/l/%s.log", hostile);
	s.name = name;
	s.kernel = kernel;
	s.initrd = kernel;
	s.cmdline = hostile;
	s.disks[0] = kernel;
	s.console_log = clog;
	s.channel_log = clog;
	s.channel_name = hostile;
	s.job_tag = hostile;
	s.cpu = hostile;
	s.machine = hostile;
	parse(&s, &p);
	/* The raw string must never appear; parsing must give it back. */
	assert_null(strstr(p.text, hostile));
	assert_null(strstr(p.text, "<b>"));
	expect_common(&p, &s);
	want_value(&p, "/domain/cpu/model", hostile);
	parsed_free(&p);
}

static void expect_refused(const struct guest_spec *s, const char *needle)
{
	char err[256] = "";
	char *xml = guest_xml(s, err, sizeof(err));

	assert_null(xml);
	if (strstr(err, needle) == NULL)
		fail_msg("error '%s' does not mention '%s'", err, needle);
}

static void test_refused(void **state)
{
	struct guest_spec s;
	char err[64];

	(void)state;
	assert_null(guest_xml(NULL, err, sizeof(err)));
	s = spec_for("x86_64");
	s.name = NULL;
	expect_refused(&s, "name");
	s = spec_for("x86_64");
	s.name = "rcgate/1";
	expect_refused(&s, "name");
	s = spec_for("x86_64");
	s.kernel = "vmlinuz";
	expect_refused(&s, "kernel must be an absolute path");
	s = spec_for("x86_64");
	s.channel_log = NULL;
	expect_refused(&s, "channel_log");
	s = spec_for("x86_64");
	s.disks[0] = "disk.img";
	expect_refused(&s, "disks[0] must be an absolute path");
	s = spec_for("x86_64");
	s.ndisks = 2;
	expect_refused(&s, "disks[1] missing");
	s = spec_for("x86_64");
	s.ndisks = GUEST_MAX_DISKS + 1;
	expect_refused(&s, "ndisks 21 exceeds 20");
	s = spec_for("x86_64");
	s.disks[0] = "/d/a\tb.img";
	expect_refused(&s, "disk contains control character 0x09");
	s = spec_for("x86_64");
	s.cmdline = "console=ttyS0\ninit=/bin/sh";
	expect_refused(&s, "cmdline contains control character 0x0a");
	s = spec_for("x86_64");
	s.memory_mib = 0;
	expect_refused(&s, "memory_mib");
	s = spec_for("x86_64");
	s.vcpus = 0;
	expect_refused(&s, "vcpus");
}

/* libvirt's own parser (test driver) accepts every variant. */
static void test_libvirt_accepts(void **state)
{
	static const char *const kinds[] = {
		"x86_64", "i686", "aarch64", "armv7l"
	};
	virConnectPtr conn = virConnectOpen("test:///default");
	size_t i;

	(void)state;
	assert_non_null(conn);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct guest_spec s = spec_for(kinds[i]);
		char err[256], name[64], *xml, *meta;
		virDomainPtr dom;

		/* Hostile names survive libvirt's round trip too. */
		snprintf(name, sizeof(name), "rcgate-%zu-%s", i, hostile);
		s.name = name;
		s.cmdline = hostile;
		s.disks[1] = "/var/lib/rcgate/d/7-xfs.img";
		s.disks[2] = "/var/lib/rcgate/d/7-btrfs.img";
		s.ndisks = 3;
		xml = guest_xml(&s, err, sizeof(err));
		assert_non_null(xml);
		dom = virDomainCreateXML(conn, xml, 0);
		if (dom == NULL)
			fail_msg("%s: %s", kinds[i], virGetLastErrorMessage());
		assert_string_equal(virDomainGetName(dom), name);
		{
			/* libvirt kept all three disks under our names. */
			char *live = virDomainGetXMLDesc(dom, 0);

			assert_non_null(live);
			assert_non_null(strstr(live, "dev='vdc'"));
			assert_non_null(strstr(live, "<serial>rcgate-vdc</serial>"));
			assert_non_null(strstr(live, "7-btrfs.img"));
			free(live);
		}
		meta = virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT,
					    GUEST_METADATA_NS, 0);
		assert_non_null(meta);
		assert_non_null(strstr(meta, "job=7 attempt=1"));
		free(meta);
		assert_int_equal(virDomainDestroy(dom), 0);
		virDomainFree(dom);
		free(xml);
	}
	assert_int_equal(virConnectClose(conn), 0);
}

static void quiet(void *opaque, virErrorPtr e)
{
	(void)opaque;
	(void)e;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x86_64),
		cmocka_unit_test(test_i686_kvm),
		cmocka_unit_test(test_aarch64),
		cmocka_unit_test(test_armv7),
		cmocka_unit_test(test_several_disks),
		cmocka_unit_test(test_cpu_modes),
		cmocka_unit_test(test_optional_parts),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_libvirt_accepts),
	};

	virSetErrorFunc(NULL, quiet);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
