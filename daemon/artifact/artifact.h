/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * artifact/artifact.h - what a kernel arrives as: downloads into the
 * content-addressed cache (fetch.c, libcurl), kernel module trees (kmod.c),
 * the initramfs (initramfs.c), and the KTAP the agent sends back (ktap.c).
 *
 * The public header of daemon/artifact/: a section per file. A .c file includes
 * its own folder's headers and those of lower floors only (docs/design.md,
 * tests/layers.sh).
 */
#ifndef RCGATE_ARTIFACT_H
#define RCGATE_ARTIFACT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/base.h"

/* ==== ktap.c ==== */
/*
 * ktap.c - the KTAP v1 parser: agent output in, plain result data out.
 *
 * Pure (no I/O, no globals), so it is unit-tested on golden logs and fuzzed.
 * The producer side of the contract is agent/, and agent/protocol.h spells
 * the rcgate lines for both sides; the format is KTAP v1 as in the kernel's
 * Documentation/dev-tools/ktap.rst plus two rcgate lines:
 *
 *   # rcgate-complete pass=P fail=F skip=S duration_ms=D
 *	the completeness marker: once, at indentation 0, after the last
 *	top-level result, terminated by a newline. Without it the output is
 *	incomplete (guest hung, panicked or was cut off): an infra error for
 *	the daemon, never a test failure. P counts PASS and XFAIL leaves, F
 *	FAIL leaves, S SKIP leaves; all must match what was parsed.
 *   # rcgate-infra: <reason>
 *	the agent could not run the suite; any indentation, anywhere.
 *
 * What the parser accepts beyond the strict contract, and why:
 *   - lines that are not KTAP (kernel log noise on a shared console, blank
 *     lines, wrongly indented text) are ignored and counted, as kunit_tool
 *     does; lines before the top-level header are always noise;
 *   - NUL bytes are dropped (serial ports emit them at reset), CR before LF
 *     is dropped, the last line needs no newline (except the marker);
 *   - nested levels may lack "KTAP version 1", "# Subtest:" or the plan
 *     (older kunit output); the top level needs both header and plan;
 *   - "TAP version 13/14" is accepted as a header, "ok 1 - name" as a result.
 * Everything stored (diagnostics, reasons) is printable ASCII: other bytes
 * become '?', so results can go into JSON, SQL and e-mail unescaped.
 */


#define KTAP_MAX_INPUT (16u << 20)	/* bytes; more is an error */
#define KTAP_MAX_LINE 4096		/* bytes; longer lines are truncated */
#define KTAP_MAX_DEPTH 8		/* deepest indentation level allowed */
#define KTAP_MAX_RESULTS 100000		/* leaves and suites together */
#define KTAP_MAX_DIAG_LINES 64		/* per result; more are dropped */
#define KTAP_MAX_DIAG_BYTES 8192	/* per result; more are dropped */

enum ktap_status { KTAP_PASS, KTAP_FAIL, KTAP_SKIP, KTAP_XFAIL };

struct ktap_result {
	char *path;		/* "ext4.write_seq_512": suite names + name */
	enum ktap_status status;
	/*
	 * The "# " lines at this result's indentation since the previous
	 * result or plan there, without "# ", joined by '\n'; NULL if none.
	 */
	char *diagnostic;
	char *directive_reason;	/* text after "# SKIP" / "# TODO", or NULL */
	int is_suite;		/* closes a nested block */
	int depth;		/* indentation level, 0 = top */
	long number;		/* the test number on the line */
	long duration_ms;	/* "# rcgate-time-ms: N" before it; -1 if none */
	size_t line;		/* 1-based line number in the input */
};

struct ktap_report {
	struct ktap_result *results;	/* in input order: children first */
	size_t nresults;
	int complete;		/* marker seen, every plan satisfied, no error */
	/* Why not complete, with a line number; NULL iff complete. */
	char *error;
	char *infra_reason;	/* from "# rcgate-infra:", or NULL */
	char *agent_info;	/* text after "# rcgate-agent ", or NULL */
	char *uts_version;	/* text after "# rcgate-uts: " (uname -v), or NULL */
	long marker_pass, marker_fail, marker_skip, marker_duration_ms;
	size_t lines;		/* lines in the input */
	size_t ignored_lines;	/* noise, blank and unattached lines */
	size_t truncated_lines;	/* longer than KTAP_MAX_LINE */
	size_t nul_bytes;	/* dropped NUL bytes */
	size_t dropped_diag_lines;	/* over the per-result caps */
};

/*
 * Parse len bytes of agent output into out (which need not be initialised).
 * Returns 0 when the output is complete and well-formed, -1 otherwise: then
 * out->error says why (the first problem, with its line number), and out
 * still holds the results parsed up to that point, plus infra_reason if the
 * agent reported one anywhere. Parsing stops at the first error. A -1 never
 * means a test failed; failures are results with KTAP_FAIL. Either way the
 * caller releases out with ktap_report_free().
 */
int ktap_parse(const char *buf, size_t len, struct ktap_report *out);

/* Free everything out owns and clear it; safe on a cleared report. */
void ktap_report_free(struct ktap_report *out);

/* "PASS", "FAIL", "SKIP", "XFAIL"; "?" for an out-of-range value. */
const char *ktap_status_name(enum ktap_status status);

/* Leaves (is_suite == 0) with the given status. */
int ktap_count(const struct ktap_report *report, enum ktap_status status);

/* The first result whose path equals path, or NULL. */
const struct ktap_result *ktap_find(const struct ktap_report *report,
				    const char *path);

/* ==== kmod.c ==== */
/*
 * kmod.c - kernel module metadata and load-order closure, as pure data.
 *
 * Debian's linux-image packages ship no modules.dep, so the dependency graph
 * is rebuilt from each module's own .modinfo ELF section. Nothing here does
 * I/O: callers hand in buffers (a .ko image, modules.builtin, ...) and get
 * plain data back, which keeps this table-testable.
 */


/* Upper bounds on what one module may declare; real modules stay far below. */
#define KMOD_MAX_DEPS 1024
#define KMOD_MAX_ALIASES 65536

struct kmod_info {
	char *name;		/* normalised ('-' becomes '_') */
	char *path;		/* path of the .ko in its archive; NULL if built in */
	bool builtin;
	char **depends;		/* hard dependencies, normalised module names */
	size_t ndepends;
	char **pre;		/* softdep "pre:" names (may be aliases) */
	size_t npre;
	char **post;		/* softdep "post:" names */
	size_t npost;
	char **aliases;		/* verbatim alias= values */
	size_t naliases;
};

/* Replace every '-' with '_' in place: the kernel treats them as equal. */
void kmod_name_normalise(char *name);

/*
 * Parse the NUL-separated key=value strings of a .modinfo section. path is
 * stored (copied) in out->path and, when there is no name= key, supplies the
 * name from its base name. On success out owns its strings: release them with
 * kmod_info_clear(). On error out is left cleared.
 */
int kmod_info_from_modinfo(const char *data, size_t len, const char *path,
			   struct kmod_info *out, char *err, size_t errlen);

/*
 * Find the .modinfo section of an in-memory ELF relocatable (32- or 64-bit,
 * either byte order) and parse it as above. Every offset is bounds-checked, so
 * truncated or hostile input gives an error, never a read past image + len.
 */
int kmod_info_from_elf(const void *image, size_t len, const char *path,
		       struct kmod_info *out, char *err, size_t errlen);

void kmod_info_clear(struct kmod_info *info);

/* Every module and built-in the kernel knows about. */
struct kmod_table {
	struct kmod_info *mods;
	size_t nmods;
	size_t cap;
};

/* Append info, taking ownership of its strings (info is cleared). */
int kmod_table_add(struct kmod_table *table, struct kmod_info *info,
		   char *err, size_t errlen);

/* Add the built-ins named by modules.builtin ("kernel/fs/ext4/ext4.ko" lines). */
int kmod_table_add_builtin_list(struct kmod_table *table, const char *text,
				size_t len, char *err, size_t errlen);

/*
 * Add the aliases of built-ins from modules.builtin.modinfo ("ext4.alias=fs-ext4"
 * NUL-separated), so a wanted alias can be found to be built in.
 */
int kmod_table_add_builtin_modinfo(struct kmod_table *table, const char *data,
				   size_t len, char *err, size_t errlen);

void kmod_table_free(struct kmod_table *table);

struct kmod_closure {
	size_t *order;		/* indices into table->mods, dependencies first */
	size_t norder;
	char **builtin;		/* wanted names satisfied by the kernel itself */
	size_t nbuiltin;
	char **missing;		/* wanted names found nowhere (not an error) */
	size_t nmissing;
};

/*
 * Compute the modules to load for the NULL-terminated list wanted, in an
 * order where every module follows its depends= and softdep "pre:" modules
 * and precedes its softdep "post:" modules.
 *
 * A wanted name resolves, in this order, to a module of that name, a built-in
 * of that name, a module with that exact alias (the smallest name if several),
 * a built-in with that alias; otherwise it is listed in out->missing. This is
 * modprobe's order, so an arch-optimised crc32c module wins over the built-in
 * generic one. Softdeps that resolve nowhere are ignored, as modprobe does. A
 * depends= name that is neither a module nor a built-in, and any cycle, are
 * errors. out is owned by the caller: kmod_closure_free().
 */
int kmod_closure_compute(const struct kmod_table *table,
			 const char *const *wanted, struct kmod_closure *out,
			 char *err, size_t errlen);

void kmod_closure_free(struct kmod_closure *closure);

/* ==== initramfs.c ==== */
/*
 * initramfs.c - build the guest's kernel image and initramfs from a kernel
 * artifact (a Debian linux-image .deb, or an image + modules.tar.xz).
 */


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
	const atomic_int *cancel;
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

/* ---- fetch.c: libcurl downloads into a content-addressed cache ---- */
/* local_dirs: space-separated directories whose files file:// URLs may
 * name (none: no file:// at all); allow_networks: addresses or CIDR
 * prefixes that downloads may reach although they are loopback,
 * link-local, private or otherwise special. */
int fetch_init(const char *local_dirs, const char *allow_networks, char *err,
	       size_t errlen);
void fetch_free(void);
/* The address of host (a URL's host) that connections may reach under
 * allow_networks, as "host:port:address" (curl's CURLOPT_RESOLVE form, for
 * git's http.curloptResolve): 0, or -1 with err (none allowed). */
int fetch_pin_host(const char *host, int port, char *out, size_t outlen,
		   char *err, size_t errlen);
/* Accepts http and https URLs that libcurl can parse, and file URLs of
 * files under local_dirs. */
int fetch_url_check(const char *url, char *err, size_t errlen);
/* Where a download's redirects may lead beyond what fetch_url_check and
 * allow_networks allow (a NULL scope or pin: anywhere they do). pin is
 * called with every hop's absolute URL before it is requested and puts
 * the URL to request in out (the same, or what the caller's rules make
 * of it), or returns -1 with err: the first URL's rules, hop by hop. */
struct fetch_scope {
	int (*pin)(void *arg, const char *url, char *out, size_t outlen,
		   char *err, size_t errlen);
	void *arg;
};
/* One redirect from from to to (hop counts from 1): an http(s) URL that
 * scope allows, at most 5 hops. out gets the URL to request; -1 with err
 * naming both URLs when refused. */
int fetch_redirect_check(const char *from, const char *to, int hop,
			 const struct fetch_scope *scope, char *out,
			 size_t outlen, char *err, size_t errlen);
/* Makes sure <cache_dir>/<sha256> holds the artifact, downloading url if it
 * is not cached; verifies the hash before the file appears there. One
 * fetch per hash at a time; a set *cancel (may be NULL) stops it within a
 * fraction of a second, even a stalled one. Redirects are followed within
 * scope (may be NULL), each hop in the job log. Progress and errors are
 * written to joblog (may be NULL). path gets the cached file's path. */
int fetch_artifact(const char *url, const char *sha256, const char *cache_dir,
		   long max_bytes, const struct fetch_scope *scope, char *path,
		   size_t pathlen, FILE *joblog, const atomic_int *cancel,
		   char *err, size_t errlen);

/* For a file whose hash nobody published (an rc's stable-review patch):
 * downloads url with the same checks, learns its sha256 and keeps it in
 * the cache under it. Concurrent calls for one URL download twice. */
int fetch_learn(const char *url, const char *cache_dir, long max_bytes,
		const struct fetch_scope *scope, char *path, size_t pathlen,
		char sha256[65], FILE *joblog, const atomic_int *cancel,
		char *err, size_t errlen);

#endif /* RCGATE_ARTIFACT_H */
