/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * targets.c - the guest targets as a table of data. Settings follow what
 * kernel test farms use (kunit_tool's qemu_configs, DESIGN.md): arm64 virt
 * with cortex-a57 (cpu max is ~4x slower under TCG), armv7 virt with
 * cortex-a15 and virtio-mmio placement (the non-LPAE armmp kernel cannot
 * reach the PCIe ECAM window), i386 pc, x86_64 q35.
 */
#include <string.h>

#include "base/base.h"

/* Every module the guest may need; names absent from a kernel or built into
 * it are skipped by the initramfs builder (and logged on the job). ext4
 * needs crc32c only as a softdep, and the alias "crc32c" may resolve to an
 * accelerated module the emulated CPU lacks (crc32-arm-ce on cortex-a15,
 * crc32c-intel without SSE4.2): name the generic one explicitly. */
static const char *const pci_modules[] = {
	"virtio_pci", "virtio_blk", "virtio_console", "crc32c_generic", "crc32c",
	"ext4", "xfs", "btrfs", NULL
};
static const char *const mmio_modules[] = {
	"virtio_mmio", "virtio_blk", "virtio_console", "crc32c_generic", "crc32c",
	"ext4", "xfs", "btrfs", NULL
};

static const struct target targets[] = {
	{ "x86_64", "x86_64", "/usr/bin/qemu-system-x86_64", "q35", NULL,
	  "ttyS0", 0, pci_modules, 1.0,
	  "x86_64", NULL, "bzImage", "arch/x86/boot/bzImage",
	  /* The boot's check that the IO-APIC timer ticks is timed: a TCG
	   * guest starved of CPU (a loaded host) misses it and panics
	   * ("IO-APIC + timer doesn't work!"), an infra error for nothing. */
	  "no_timer_check" },
	{ "i386", "i686", "/usr/bin/qemu-system-i386", "pc", NULL,
	  "ttyS0", 0, pci_modules, 1.0,
	  "i386", NULL, "bzImage", "arch/x86/boot/bzImage",
	  /* ISA Plug and Play probing: 0.36 s of a TCG boot, no ISA cards;
	   * the timer check as for x86_64. */
	  "noisapnp no_timer_check" },
	{ "arm64", "aarch64", "/usr/bin/qemu-system-aarch64", "virt",
	  "cortex-a57", "ttyAMA0", 0, pci_modules, 1.5,
	  "arm64", "aarch64-linux-gnu-", "Image", "arch/arm64/boot/Image", NULL },
	{ "armv7", "armv7l", "/usr/bin/qemu-system-arm", "virt", "cortex-a15",
	  "ttyAMA0", 1, mmio_modules, 1.5,
	  "arm", "arm-linux-gnueabihf-", "zImage", "arch/arm/boot/zImage", NULL },
};

size_t target_count(void)
{
	return sizeof(targets) / sizeof(targets[0]);
}

const struct target *target_at(size_t i)
{
	return i < target_count() ? &targets[i] : NULL;
}

const struct target *target_find(const char *name)
{
	for (size_t i = 0; i < target_count(); i++) {
		if (strcmp(targets[i].name, name) == 0)
			return &targets[i];
	}
	return NULL;
}

/* The artifact kinds a release may name. */
static const struct artifact_kind kinds[] = {
	/* name     posted built bare_image */
	{ "deb",    1,     0,    0 },
	{ "image",  1,     0,    1 },
	{ "source", 0,     1,    0 },
	{ "git",    0,     1,    0 },
};

const struct artifact_kind *artifact_kind_find(const char *name)
{
	for (size_t i = 0; name != NULL && i < sizeof(kinds) / sizeof(kinds[0]);
	     i++) {
		if (strcmp(kinds[i].name, name) == 0)
			return &kinds[i];
	}
	return NULL;
}
