/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * guest_xml.c - the libvirt domain XML for a test guest. Every string that
 * comes from outside goes through xml_text() here, the only escaping point.
 * No libvirt calls: the XML is plain text, checked by tests/unit/guest_xml.c
 * against libvirt's test driver.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "guests/guests.h"
#include "../../agent/protocol.h"

/* A domain XML is a few KiB; a cap turns a runaway cmdline into an error. */
#define XML_CAP (256 * 1024)

struct xbuf {
	char *data;
	size_t len, size;
	int failed;		/* sticky: out of memory or over XML_CAP */
};

static void xbuf_append(struct xbuf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > XML_CAP) {
		b->failed = 1;
		return;
	}
	if (b->len + n + 1 > b->size) {
		size_t nsize = b->size ? b->size : 4096;
		char *ndata;

		while (nsize < b->len + n + 1)
			nsize *= 2;
		ndata = realloc(b->data, nsize);
		if (ndata == NULL) {
			b->failed = 1;
			return;
		}
		b->data = ndata;
		b->size = nsize;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

/* Literal markup only: never pass outside strings through the format. */
static void xbuf_printf(struct xbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void xbuf_printf(struct xbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		b->failed = 1;
		return;
	}
	xbuf_append(b, tmp, (size_t)n);
}

/*
 * Escape s for element text and for attribute values in either quote
 * style. XML 1.0 cannot carry most control characters at all, so those
 * are rejected instead of encoded.
 */
static int xml_text(struct xbuf *b, const char *what, const char *s,
		    char *err, size_t errlen)
{
	const char *p, *run = s;

	for (p = s; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;
		const char *ent = NULL;

		switch (c) {
		case '&': ent = "&amp;"; break;
		case '<': ent = "&lt;"; break;
		case '>': ent = "&gt;"; break;
		case '\'': ent = "&apos;"; break;
		case '"': ent = "&quot;"; break;
		default:
			if (c < 0x20 || c == 0x7f) {
				snprintf(err, errlen,
					 "guest xml: %s contains control "
					 "character 0x%02x", what, c);
				return -1;
			}
			continue;
		}
		xbuf_append(b, run, (size_t)(p - run));
		xbuf_append(b, ent, strlen(ent));
		run = p + 1;
	}
	xbuf_append(b, run, (size_t)(p - run));
	return 0;
}

/* <tag>escaped value</tag> on its own line. */
static int xml_element(struct xbuf *b, const char *indent, const char *tag,
		       const char *value, char *err, size_t errlen)
{
	xbuf_printf(b, "%s<%s>", indent, tag);
	if (xml_text(b, tag, value, err, errlen) < 0)
		return -1;
	xbuf_printf(b, "</%s>\n", tag);
	return 0;
}

static int need(const char *value, const char *field, char *err,
		size_t errlen)
{
	if (value == NULL || value[0] == '\0') {
		snprintf(err, errlen, "guest xml: %s missing", field);
		return -1;
	}
	return 0;
}

/* qemu runs with another working directory: relative paths would break. */
static int need_path(const char *value, const char *field, char *err,
		     size_t errlen)
{
	if (need(value, field, err, errlen) < 0)
		return -1;
	if (value[0] != '/') {
		snprintf(err, errlen, "guest xml: %s must be an absolute path",
			 field);
		return -1;
	}
	return 0;
}

static int is_x86(const char *arch)
{
	return strcmp(arch, "x86_64") == 0 || strcmp(arch, "i686") == 0;
}

static int validate(const struct guest_spec *s, char *err, size_t errlen)
{
	unsigned i;

	if (need(s->name, "name", err, errlen) < 0 ||
	    need(s->arch, "arch", err, errlen) < 0 ||
	    need_path(s->emulator, "emulator", err, errlen) < 0 ||
	    need(s->machine, "machine", err, errlen) < 0 ||
	    need_path(s->kernel, "kernel", err, errlen) < 0 ||
	    need_path(s->channel_log, "channel_log", err, errlen) < 0 ||
	    need(s->channel_name, "channel_name", err, errlen) < 0)
		return -1;
	if (s->initrd != NULL && need_path(s->initrd, "initrd", err,
					   errlen) < 0)
		return -1;
	if (s->ndisks > GUEST_MAX_DISKS) {
		snprintf(err, errlen, "guest xml: ndisks %u exceeds %d",
			 s->ndisks, GUEST_MAX_DISKS);
		return -1;
	}
	for (i = 0; i < s->ndisks; i++) {
		char field[24];

		snprintf(field, sizeof(field), "disks[%u]", i);
		if (need_path(s->disks[i], field, err, errlen) < 0)
			return -1;
	}
	if (s->console_log != NULL &&
	    need_path(s->console_log, "console_log", err, errlen) < 0)
		return -1;
	/* libvirt refuses '/' in names (they become file names). */
	if (strchr(s->name, '/') != NULL) {
		snprintf(err, errlen, "guest xml: name contains '/'");
		return -1;
	}
	if (s->memory_mib == 0 || s->memory_mib > 1024 * 1024) {
		snprintf(err, errlen, "guest xml: memory_mib %u out of range",
			 s->memory_mib);
		return -1;
	}
	if (s->vcpus == 0 || s->vcpus > 256) {
		snprintf(err, errlen, "guest xml: vcpus %u out of range",
			 s->vcpus);
		return -1;
	}
	return 0;
}

static int xml_cpu(struct xbuf *b, const struct guest_spec *s, char *err,
		   size_t errlen)
{
	if (s->cpu == NULL || s->cpu[0] == '\0')
		return 0;
	if (strcmp(s->cpu, "host") == 0) {
		xbuf_printf(b, "  <cpu mode='host-passthrough'/>\n");
		return 0;
	}
	if (strcmp(s->cpu, "max") == 0) {
		xbuf_printf(b, "  <cpu mode='maximum'/>\n");
		return 0;
	}
	xbuf_printf(b, "  <cpu mode='custom' match='exact'>\n");
	if (xml_element(b, "    ", "model", s->cpu, err, errlen) < 0)
		return -1;
	xbuf_printf(b, "  </cpu>\n");
	return 0;
}

static int xml_devices(struct xbuf *b, const struct guest_spec *s,
		       char *err, size_t errlen)
{
	const char *mmio = s->virtio_mmio ?
		"      <address type='virtio-mmio'/>\n" : "";
	unsigned i;

	xbuf_printf(b, "  <devices>\n");
	if (xml_element(b, "    ", "emulator", s->emulator, err, errlen) < 0)
		return -1;
	/*
	 * The target name is only a hint: the guest names virtio disks in
	 * probe order, which is this order on PCI but the reverse on arm's
	 * virtio-mmio (the last device gets the first transport). So each
	 * disk also carries the name it should have as its serial, and the
	 * agent finds "vda" by that (/sys/block/<dev>/serial).
	 *
	 * cache='unsafe': the guest's flushes do not reach the host's disk.
	 * The scratch disks are thrown away after the job, and the crash
	 * test cuts the guest's power, not the host's: every write the guest
	 * saw complete is in the host's page cache either way, so only the
	 * guest waiting for the host's fdatasync (some 150 per filesystem
	 * tested) goes.
	 */
	for (i = 0; i < s->ndisks; i++) {
		xbuf_printf(b, "    <disk type='file' device='disk'>\n"
			    "      <driver name='qemu' type='raw' cache='unsafe'/>\n"
			    "      <source file='");
		if (xml_text(b, "disk", s->disks[i], err, errlen) < 0)
			return -1;
		xbuf_printf(b, "'/>\n"
			    "      <target dev='vd%c' bus='virtio'/>\n"
			    "      <serial>" RCGATE_DISK_SERIAL_PREFIX "vd%c</serial>\n%s"
			    "    </disk>\n", 'a' + (int)i, 'a' + (int)i, mmio);
	}
	/* Without model='none' libvirt adds a USB controller on q35/pc. */
	xbuf_printf(b, "    <controller type='usb' model='none'/>\n"
		    "    <controller type='virtio-serial' index='0'>\n%s"
		    "    </controller>\n", mmio);
	if (s->streams) {
		/* Read through virDomainOpenConsole and virDomainOpenChannel
		 * (guest.c): libvirt opens a pty for the console and a socket
		 * of its own choosing for the channel. */
		xbuf_printf(b, "    <serial type='pty'>\n"
			    "      <target port='0'/>\n"
			    "    </serial>\n"
			    "    <channel type='unix'>\n"
			    "      <source mode='bind'/>\n");
	} else {
		if (s->console_log != NULL) {
			xbuf_printf(b, "    <serial type='file'>\n"
				    "      <source path='");
			if (xml_text(b, "console_log", s->console_log, err,
				     errlen) < 0)
				return -1;
			xbuf_printf(b, "' append='off'/>\n"
				    "      <target port='0'/>\n"
				    "    </serial>\n");
		}
		xbuf_printf(b, "    <channel type='file'>\n"
			    "      <source path='");
		if (xml_text(b, "channel_log", s->channel_log, err, errlen) < 0)
			return -1;
		xbuf_printf(b, "' append='off'/>\n");
	}
	xbuf_printf(b, "      <target type='virtio' name='");
	if (xml_text(b, "channel_name", s->channel_name, err, errlen) < 0)
		return -1;
	xbuf_printf(b, "'/>\n"
		    "      <address type='virtio-serial' controller='0' "
		    "bus='0' port='1'/>\n"
		    "    </channel>\n"
		    "    <memballoon model='none'/>\n"
		    "  </devices>\n");
	return 0;
}

char *guest_xml(const struct guest_spec *s, char *err, size_t errlen)
{
	struct xbuf b = { 0 };
	int aarch64_virt;

	if (s == NULL) {
		snprintf(err, errlen, "guest xml: no spec");
		return NULL;
	}
	if (validate(s, err, errlen) < 0)
		return NULL;
	aarch64_virt = strcmp(s->arch, "aarch64") == 0 &&
		strncmp(s->machine, "virt", 4) == 0;

	xbuf_printf(&b, "<domain type='%s'>\n", s->use_kvm ? "kvm" : "qemu");
	if (xml_element(&b, "  ", "name", s->name, err, errlen) < 0)
		goto fail;
	xbuf_printf(&b, "  <metadata>\n"
		    "    <" GUEST_METADATA_PREFIX ":guest xmlns:"
		    GUEST_METADATA_PREFIX "='" GUEST_METADATA_NS "'>\n");
	if (s->job_tag != NULL &&
	    xml_element(&b, "      ", "job", s->job_tag, err, errlen) < 0)
		goto fail;
	xbuf_printf(&b, "    </" GUEST_METADATA_PREFIX ":guest>\n"
		    "  </metadata>\n"
		    "  <memory unit='MiB'>%u</memory>\n"
		    "  <vcpu>%u</vcpu>\n"
		    "  <os>\n"
		    "    <type arch='", s->memory_mib, s->vcpus);
	if (xml_text(&b, "arch", s->arch, err, errlen) < 0)
		goto fail;
	xbuf_printf(&b, "' machine='");
	if (xml_text(&b, "machine", s->machine, err, errlen) < 0)
		goto fail;
	xbuf_printf(&b, "'>hvm</type>\n");
	if (xml_element(&b, "    ", "kernel", s->kernel, err, errlen) < 0)
		goto fail;
	if (s->initrd != NULL &&
	    xml_element(&b, "    ", "initrd", s->initrd, err, errlen) < 0)
		goto fail;
	if (s->cmdline != NULL &&
	    xml_element(&b, "    ", "cmdline", s->cmdline, err, errlen) < 0)
		goto fail;
	xbuf_printf(&b, "  </os>\n");
	/*
	 * x86 kernels power off through ACPI; on arm, libvirt ties ACPI to
	 * UEFI, and direct kernel boot uses the device tree instead.
	 */
	if (is_x86(s->arch))
		xbuf_printf(&b, "  <features>\n    <acpi/>\n  </features>\n");
	else if (aarch64_virt)
		xbuf_printf(&b, "  <features>\n    <gic version='3'/>\n"
			    "  </features>\n");
	if (xml_cpu(&b, s, err, errlen) < 0)
		goto fail;
	/* A guest that reboots or crashes is finished as far as we care. */
	xbuf_printf(&b, "  <clock offset='utc'/>\n"
		    "  <on_poweroff>destroy</on_poweroff>\n"
		    "  <on_reboot>destroy</on_reboot>\n"
		    "  <on_crash>destroy</on_crash>\n");
	if (xml_devices(&b, s, err, errlen) < 0)
		goto fail;
	xbuf_printf(&b, "</domain>\n");
	if (b.failed) {
		snprintf(err, errlen, "guest xml: out of memory or larger "
			 "than %d bytes", XML_CAP);
		goto fail;
	}
	return b.data;
fail:
	free(b.data);
	return NULL;
}
