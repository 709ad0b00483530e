/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * initramfs.h - build the guest's kernel image and initramfs from a kernel
 * artifact (a Debian linux-image .deb, or an image + modules.tar.xz).
 */
#ifndef RCGATE_INITRAMFS_H
#define RCGATE_INITRAMFS_H

#include <stddef.h>

struct initramfs_request {
	/*
	 * Exactly one artifact form:
	 *  - package: a Debian linux-image .deb (ar with data.tar.*); the image
	 *    is taken from it;
	 *  - kernel_image (+ modules_tar, which may be NULL for a kernel with
	 *    everything built in): as kernel CI builders publish them;
	 *    modules_tar holds lib/modules/<kver>/..., any compression
	 *    libarchive reads.
	 */
	const char *package;
	const char *kernel_image;
	const char *modules_tar;
	const char *agent;		/* static binary, becomes /init */
	const char *const *modules;	/* wanted names, NULL-terminated */
	const char *kernel_out;		/* replaced atomically */
	const char *initrd_out;		/* gzip newc cpio, replaced atomically */
	/* Image inside the .deb: a path ("boot/vmlinuz-6.1.0-1-arm64") or a
	 * base name; NULL takes the first boot/vmlinuz-*. */
	const char *image_name;
	/* Polled between the archive's members (may be NULL): a set flag
	 * stops the build with an error, so a cancelled job or a stopping
	 * daemon does not wait for a whole package to be read. */
	const volatile int *cancel;
};

struct initramfs_result {
	char kver[128];		/* from lib/modules/<kver>/ or vmlinuz-<kver> */
	char **loaded;		/* module names in /modules/load.list order */
	size_t nloaded;
	char **builtin;		/* wanted names the kernel has built in */
	size_t nbuiltin;
	char **missing;		/* wanted names found nowhere: caller decides */
	size_t nmissing;
};

/*
 * Read the artifact (streamed twice, never unpacked to disk), write the kernel
 * image to kernel_out and an initramfs to initrd_out holding /init (the agent),
 * /dev/console, /dev /proc /sys /mnt /tmp, /modules/<file>.ko for the closure
 * of the wanted modules and /modules/load.list (file names, dependencies
 * first). Returns 0, or -1 with a message in err; on error neither output is
 * touched. result is owned by the caller: initramfs_result_free(), also after
 * an error (it is then empty).
 */
int initramfs_build(const struct initramfs_request *req,
		    struct initramfs_result *result, char *err, size_t errlen);

void initramfs_result_free(struct initramfs_result *result);

#endif
