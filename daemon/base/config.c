/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * config.c - owns the configuration file. Format: "[section]" headers and
 * "key = value" lines, '#' comments (a line of its own, or after a blank;
 * "double-quoted" values keep every character). Every directive is one row of
 * directives[] with its type, bounds and default; nothing else in the
 * daemon knows the file's syntax.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

enum dtype { D_STRING, D_LONG, D_ENUM };

struct directive {
	const char *section;
	const char *key;
	enum dtype type;
	size_t offset;
	const char *def;
	long min, max;			/* D_LONG */
	const char *const *choices;	/* D_ENUM */
	const char *help;
};

#define OFF(f) offsetof(struct config, f)

static const char *const accel_choices[] = { "auto", "tcg", "kvm", NULL };
static const char *const source_choices[] = { "patch", "git", NULL };
static const char *const sandbox_choices[] = { "bwrap", "none", NULL };
static const char *const suite_choices[] = { "all", "smoke", "deep", "exer",
					      NULL };
static const char *const dkim_choices[] = { "require", "prefer", "off", NULL };
static const char *const level_choices[] = { "error", "warn", "info", "debug", NULL };

static const struct directive directives[] = {
	{ "daemon", "user", D_STRING, OFF(user), "", 0, 0, NULL,
	  "started as root, become this user (state and cache dirs become theirs); empty: stay" },
	{ "daemon", "allow_root", D_LONG, OFF(allow_root), "0", 0, 1, NULL,
	  "1: build and start guests even when running as root (0: rcgated refuses to run as root)" },
	{ "daemon", "state_dir", D_STRING, OFF(state_dir), "/var/lib/rcgate", 0, 0, NULL,
	  "database, caches, job logs, libvirt embed root" },
	{ "daemon", "cache_dir", D_STRING, OFF(cache_dir), "", 0, 0, NULL,
	  "kernel and initramfs cache (content-addressed, shareable); empty: <state_dir>/cache" },
	{ "daemon", "listen", D_STRING, OFF(listen), "127.0.0.1", 0, 0, NULL,
	  "IPv4 address the HTTP server binds" },
	{ "daemon", "port", D_LONG, OFF(port), "8080", 0, 65535, NULL,
	  "HTTP port (0 picks a free one; the port is logged)" },
	{ "daemon", "log_file", D_STRING, OFF(log_file), "-", 0, 0, NULL,
	  "log file, '-' for stderr" },
	{ "daemon", "log_level", D_ENUM, OFF(log_level), "info", 0, 0, level_choices,
	  "error, warn, info or debug" },
	{ "daemon", "agent_dir", D_STRING, OFF(agent_dir), AGENT_DIR_DEFAULT, 0, 0, NULL,
	  "directory holding rcgate-agent-<target> binaries" },
	{ "daemon", "web_dir", D_STRING, OFF(web_dir), WEB_DIR_DEFAULT, 0, 0, NULL,
	  "the dashboard's static files, served at /" },
	{ "daemon", "max_body_kb", D_LONG, OFF(max_body_kb), "1024", 1, 65536, NULL,
	  "largest request body accepted" },
	{ "daemon", "max_connections", D_LONG, OFF(max_connections), "512", 8, 4096, NULL,
	  "HTTP connections at once (one thread each)" },
	{ "daemon", "max_connections_per_ip", D_LONG, OFF(max_connections_per_ip), "64", 1, 4096, NULL,
	  "HTTP connections at once from one client address" },
	{ "daemon", "header_timeout", D_LONG, OFF(header_timeout), "10", 1, 600, NULL,
	  "seconds a client has to send complete request headers, however slowly it trickles" },
	{ "daemon", "request_timeout", D_LONG, OFF(request_timeout), "60", 1, 3600, NULL,
	  "seconds a client has to send a request's body once its headers are in" },
	{ "libvirt", "uri", D_STRING, OFF(libvirt_uri), "", 0, 0, NULL,
	  "libvirt URI; empty: qemu:///embed?root=<state_dir>/libvirt" },
	{ "jobs", "workers", D_LONG, OFF(workers), "2", 1, 64, NULL,
	  "guests run at once on this host" },
	{ "jobs", "timeout", D_LONG, OFF(job_timeout), "300", 10, 86400, NULL,
	  "seconds a guest may run before it is destroyed (infra error)" },
	{ "jobs", "attempts", D_LONG, OFF(attempts), "2", 1, 10, NULL,
	  "tries per job when infrastructure fails" },
	{ "jobs", "accel", D_ENUM, OFF(accel), "auto", 0, 0, accel_choices,
	  "auto probes KVM once per target and falls back to TCG" },
	{ "jobs", "kvm_probe_timeout", D_LONG, OFF(kvm_probe_timeout), "30", 5, 600, NULL,
	  "seconds the KVM probe boot may take" },
	{ "jobs", "vcpus", D_LONG, OFF(guest_vcpus), "1", 1, 8, NULL,
	  "virtual CPUs per guest; 2 lets the suite's race tests race for real (an SMP kernel: Debian's are, configs/ builds UP kernels)" },
	{ "jobs", "memory", D_LONG, OFF(guest_memory), "512", 128, 65536, NULL,
	  "guest memory in MiB" },
	{ "jobs", "disk_size", D_LONG, OFF(disk_size), "256", 16, 65536, NULL,
	  "scratch disk size in MiB" },
	{ "regressions", "reruns", D_LONG, OFF(reruns), "1", 0, 5, NULL,
	  "extra runs of a target whose test failed, before deciding" },
	{ "regressions", "link_window_days", D_LONG, OFF(link_window_days), "14", 1, 365, NULL,
	  "a failure links to a regression with its signature seen this recently" },
	{ "report", "farm", D_STRING, OFF(farm), "rcgate", 0, 0, NULL,
	  "name of this test farm in reports" },
	{ "report", "lore_url", D_STRING, OFF(lore_url), "", 0, 0, NULL,
	  "a lore archive of the stable list (https://lore.kernel.org/stable): when a bisection's culprit is a patch of the series whose mail never reached intake, the announcement's thread mbox is fetched from there to name it \"[PATCH 6.1 123/372]\" with its lore link; empty: never fetched" },
	{ "report", "public_url", D_STRING, OFF(public_url), "", 0, 0, NULL,
	  "base URL for links in reports; empty: http://<listen>:<port>" },
	{ "report", "feed_tag", D_STRING, OFF(feed_tag), "rcgate.invalid,2026", 0, 0, NULL,
	  "tagging entity of Atom ids (RFC 4151 'domain,date'; e.g. ci.example.org,2026): ids stay when the address changes" },
	{ "report", "mail_from", D_STRING, OFF(mail_from), "rcgate <rcgate@localhost>", 0, 0, NULL,
	  "From: of report mails" },
	{ "report", "regressions_list", D_STRING, OFF(regressions_list), "regressions@lists.linux.dev", 0, 0, NULL,
	  "where a regression that shipped in a stable release is reported, with regzbot's commands" },
	{ "notify", "smtp_url", D_STRING, OFF(smtp_url), "", 0, 0, NULL,
	  "smtp://host:port to send report mails to the rc's thread; empty: none" },
	{ "notify", "webhook_url", D_STRING, OFF(webhook_url), "", 0, 0, NULL,
	  "URL that receives each report as JSON; empty: none" },
	{ "notify", "webhook_secret", D_STRING, OFF(webhook_secret), "", 0, 0, NULL,
	  "HMAC-SHA256 key for the X-Rcgate-Signature header" },
	{ "notify", "attempts", D_LONG, OFF(notify_attempts), "10", 1, 100, NULL,
	  "deliveries are retried with backoff this many times" },
	{ "announce", "maildir", D_STRING, OFF(maildir), "", 0, 0, NULL,
	  "Maildir watched for rc announcements (new/ -> cur/); empty: none" },
	{ "announce", "max_per_hour", D_LONG, OFF(announce_max_per_hour), "10", 1, 10000, NULL,
	  "new rcs one sender may announce on one branch in an hour; more are refused (a flood of forged mails makes no releases)" },
	{ "announce", "senders", D_STRING, OFF(announce_senders),
	  "gregkh@linuxfoundation.org sashal@kernel.org", 0, 0, NULL,
	  "addresses whose rc announcements count (the stable maintainers); '*': anyone" },
	{ "announce", "dkim", D_ENUM, OFF(announce_dkim), "require", 0, 0, dkim_choices,
	  "require: an announcement without a valid DKIM signature of its From: domain (or of dkim_signers) is refused, with the reason in the log and the API; prefer: it is accepted, marked unverified in the API, on the status page and in reports, and its replies go to lists alone; off: not checked (every announcement is unverified)" },
	{ "announce", "dkim_keys", D_STRING, OFF(announce_dkim_keys), "", 0, 0, NULL,
	  "a file of pinned DKIM keys, one 'selector._domainkey.domain TXT-record' line each (korg._domainkey.linuxfoundation.org v=DKIM1; k=rsa; p=...): only these are used; empty: the keys are looked up in DNS" },
	{ "announce", "dkim_signers", D_STRING, OFF(announce_dkim_signers), "", 0, 0, NULL,
	  "domains whose DKIM signature (d=) counts besides the From: address's own domain (space-separated); empty: the From: domain only" },
	{ "announce", "max_recipients", D_LONG, OFF(announce_max_recipients), "30", 1, 1000, NULL,
	  "a reply to a verified announcement goes to its From, To and Cc in that order, each once, and to at most this many (real announcements carry about 20)" },
	{ "announce", "lists", D_STRING, OFF(announce_lists), "stable@vger.kernel.org, linux-kernel@vger.kernel.org", 0, 0, NULL,
	  "where replies to an announcement that is not DKIM-verified go, instead of its sender and recipients (comma-separated addresses)" },
	{ "jobs", "filesystems", D_STRING, OFF(filesystems), "ext4 xfs btrfs bdev", 0, 0, NULL,
	  "filesystems tested, one scratch disk each (ext4, xfs, btrfs, and bdev: a raw disk for the block-device suite; up to 4)" },
	{ "jobs", "kernel_args", D_STRING, OFF(kernel_args), "cryptomgr.notests", 0, 0, NULL,
	  "added to every guest's kernel command line; the default skips the kernel's crypto self-tests at boot (0.7-2 s of a TCG boot; rcgate does not read their result); empty: none" },
	{ "jobs", "crash_test", D_LONG, OFF(crash_test), "1", 0, 1, NULL,
	  "1: after the suite, the power-cut test (two more boots)" },
	{ "jobs", "suite", D_ENUM, OFF(suite), "all", 0, 0, suite_choices,
	  "all: the whole in-guest suite; smoke: its quick subset (agent/protocol.h RCGATE_SMOKE_TESTS, rcgate.only=smoke), for farms and tests whose point is the boot, not the suite; deep: the whole suite with the exerciser's seeds times five (rcgate.exer=deep), for nights and idle hosts; exer: the exerciser's rows alone" },
	{ "fetch", "local_dirs", D_STRING, OFF(local_dirs), "", 0, 0, NULL,
	  "directories whose files file:// artifact URLs may name (space-separated); empty: none" },
	{ "fetch", "allow_networks", D_STRING, OFF(allow_networks), "", 0, 0, NULL,
	  "loopback, private or link-local addresses/prefixes downloads may reach, e.g. 127.0.0.0/8" },
	{ "jobs", "max_artifact_mb", D_LONG, OFF(max_artifact_mb), "1024", 1, 65536, NULL,
	  "largest kernel artifact fetched" },
	{ "build", "config_dir", D_STRING, OFF(build_config_dir), CONFIG_DIR_DEFAULT, 0, 0, NULL,
	  "kernel config fragments, <target>.config, merged on tinyconfig for releases built from source" },
	{ "build", "ccache_dir", D_STRING, OFF(build_ccache_dir), "", 0, 0, NULL,
	  "compiler cache shared by builds; empty: <cache_dir>/ccache; 'none': no ccache" },
	{ "build", "jobs", D_LONG, OFF(build_jobs), "2", 1, 256, NULL,
	  "cores the kernel builds share, beside the guests: up to this many builds at once, with as many make jobs in all (one make jobserver)" },
	{ "build", "timeout", D_LONG, OFF(build_timeout), "3600", 60, 86400, NULL,
	  "seconds a kernel build may take (then it is an infra error)" },
	{ "build", "from_announcements", D_LONG, OFF(build_from_announcements), "0", 0, 1, NULL,
	  "1: an announced rc is built from its stable-review patch and the release tarball beside it (kernel.org's layout)" },
	{ "build", "targets", D_STRING, OFF(build_targets), "x86_64 i386 arm64 armv7", 0, 0, NULL,
	  "the targets an announced rc is built and tested on" },
	{ "build", "announced_source", D_ENUM, OFF(build_announced_source), "patch", 0, 0, source_choices,
	  "what an announced rc is built from: patch (the stable-review patch on the release tarball) or git (the announcement's tree and branch; its head must be the rc); the other one when the announcement lacks it" },
	{ "build", "keyring", D_STRING, OFF(build_keyring), "", 0, 0, NULL,
	  "OpenPGP keyring (gpgv's --keyring) that signs sha256sums.asc beside the release tarballs; empty: the file's hashes are used unverified" },
	{ "build", "git_config", D_STRING, OFF(build_git_config), "", 0, 0, NULL,
	  "a git configuration file for fetches (e.g. url.<mirror>.insteadOf rules); empty: none" },
	{ "build", "tree_origins", D_STRING, OFF(build_tree_origins),
	  "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git", 0, 0, NULL,
	  "URL prefixes of the git trees rcgated builds from, whatever a mail or a POST names (space-separated); http:// and git:// URLs are upgraded to an https:// one here, or refused" },
	{ "build", "file_origins", D_STRING, OFF(build_file_origins),
	  "https://cdn.kernel.org/pub/linux/kernel/ https://www.kernel.org/pub/linux/kernel/", 0, 0, NULL,
	  "URL prefixes of release tarballs, sha256sums.asc and stable-review patches builds use (space-separated); http:// is upgraded to an https:// URL here, or refused" },
	{ "build", "cache_max_gb", D_LONG, OFF(build_cache_max_gb), "50", 0, 1048576, NULL,
	  "what unpacked release trees, cached clones and worktrees may hold together (GiB): the least recently used ones not in use are evicted before each build; 0: no limit" },
	{ "build", "sandbox", D_ENUM, OFF(build_sandbox), "bwrap", 0, 0, sandbox_choices,
	  "bwrap: make, patch, git and gpgv run in a bubblewrap sandbox (no network but git's fetch, only their own tree writable, rcgated's files invisible); none: as rcgated itself (only for a machine that builds nothing untrusted)" },
	{ "build", "memory_mb", D_LONG, OFF(build_memory_mb), "4096", 256, 1048576, NULL,
	  "address space each process of a build may use (MiB)" },
	{ "build", "cgroup_pids_max", D_LONG, OFF(build_cgroup_pids_max), "4096", 0, 4194304, NULL,
	  "processes and threads one build may have at once, its whole cgroup (pids.max; where rcgated has a delegated cgroup v2, e.g. systemd's Delegate=yes); 0: no limit" },
	{ "build", "cgroup_memory_mb", D_LONG, OFF(build_cgroup_memory_mb), "8192", 0, 1048576, NULL,
	  "memory one build may use in all, page cache included, no swap (MiB; its cgroup's memory.max, where delegated); 0: no limit" },
	{ "build", "cgroup_cpu_weight", D_LONG, OFF(build_cgroup_cpu_weight), "100", 1, 10000, NULL,
	  "one build's CPU weight against the other builds and rcgated with its guests (cpu.weight, 100 each by default), whatever it forks" },
	{ "build", "file_mb", D_LONG, OFF(build_file_mb), "4096", 16, 1048576, NULL,
	  "largest file a build, fetch or unpacking may write (MiB), the build log included" },
	{ "build", "tree_max_mb", D_LONG, OFF(build_tree_max_mb), "8192", 64, 10485760, NULL,
	  "what an unpacked tarball, a git worktree or a build directory may hold (MiB), checked while it is written" },
	{ "build", "fetch_max_mb", D_LONG, OFF(build_fetch_max_mb), "16384", 16, 10485760, NULL,
	  "what one git fetch may add to a cached clone (MiB): git is stopped as its pack reaches it (a file size limit), and the whole clone is checked while it writes" },
	{ "bisect", "upstream_git", D_STRING, OFF(bisect_upstream_git), "", 0, 0, NULL,
	  "the upstream (mainline) tree searched for the prerequisites a bisected backport may lack, e.g. https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git; empty: no search" },
	{ "bisect", "parallel", D_LONG, OFF(bisect_parallel), "2", 1, 8, NULL,
	  "steps of a bisection that run at once: each round tests this many commits, splitting what is left in this many parts plus one (2: at most 6 rounds for 372 commits instead of 9, for the wall of one round when two builds share the cores); 1: one step at a time" },
};

#define NDIRECTIVES (sizeof(directives) / sizeof(directives[0]))

static int directive_set(struct config *c, const struct directive *d,
			 const char *value, char *err, size_t errlen)
{
	char *base = (char *)c;

	switch (d->type) {
	case D_LONG: {
		long v;

		if (parse_long(value, d->min, d->max, &v) < 0) {
			errf(err, errlen, "%s: '%s' is not a number in %ld..%ld",
			     d->key, value, d->min, d->max);
			return -1;
		}
		*(long *)(base + d->offset) = v;
		return 0;
	}
	case D_ENUM: {
		size_t i;

		for (i = 0; d->choices[i] != NULL; i++) {
			if (strcmp(d->choices[i], value) == 0)
				break;
		}
		if (d->choices[i] == NULL) {
			errf(err, errlen, "%s: '%s' is not one of the allowed values",
			     d->key, value);
			return -1;
		}
	}
		/* FALLTHROUGH */
	case D_STRING: {
		char **slot = (char **)(base + d->offset);
		char *copy = strdup(value);

		if (copy == NULL) {
			errf(err, errlen, "out of memory");
			return -1;
		}
		free(*slot);
		*slot = copy;
		return 0;
	}
	}
	return -1;
}

void config_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < NDIRECTIVES; i++) {
		/* Defaults are checked by the unit test; they cannot fail. */
		directive_set(c, &directives[i], directives[i].def, NULL, 0);
	}
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* Whether pos lies inside a "..." that starts after '=' on line s. */
static int inside_quotes(const char *s, const char *pos)
{
	const char *eq = strchr(s, '=');
	int in = 0;

	if (eq == NULL || eq > pos)
		return 0;
	for (const char *c = eq + 1; c < pos; c++) {
		if (in && *c == '\\' && c + 1 < pos)
			c++;
		else if (*c == '"')
			in = !in;
	}
	return in;
}

/* "a \"b\" #c" -> a "b" #c, in place. -1 if the closing quote is missing
 * or anything but blanks follows it. */
static int unquote(char *v)
{
	char *out = v;
	const char *c = v + 1;

	for (; *c != '\0' && *c != '"'; c++) {
		if (*c == '\\' && (c[1] == '"' || c[1] == '\\'))
			c++;
		*out++ = *c;
	}
	if (*c != '"')
		return -1;
	for (c++; *c == ' ' || *c == '\t'; c++)
		;
	if (*c != '\0')
		return -1;
	*out = '\0';
	return 0;
}

/*
 * [jobs] kernel_args goes into the domain XML's <cmdline> (escaped there) and
 * from there to the guest kernel: printable words only, not rcgate's own
 * keys (the agent's port and disks), and no "--", after which the kernel
 * hands everything to init as arguments.
 */
#define KERNEL_ARGS_MAX 256

static int kernel_args_check(const char *v, char *err, size_t errlen)
{
	const char *w = v;

	if (strlen(v) > KERNEL_ARGS_MAX) {
		errf(err, errlen, "kernel_args: longer than %d bytes",
		     KERNEL_ARGS_MAX);
		return -1;
	}
	for (const char *p = v; *p != '\0'; p++) {
		if (*p != ' ' && (*p < 0x21 || *p > 0x7e || *p == '"')) {
			errf(err, errlen, "kernel_args: byte 0x%02x is not"
			     " allowed (printable ASCII words without '\"')",
			     (unsigned char)*p);
			return -1;
		}
	}
	while (*w != '\0') {
		size_t n;

		w += strspn(w, " ");
		n = strcspn(w, " ");
		if (n == 0)
			break;
		if (strncmp(w, "rcgate.", 7) == 0 || (n == 2 && w[0] == '-' &&
						      w[1] == '-')) {
			errf(err, errlen, "kernel_args: '%.*s' is not allowed"
			     " (rcgate.* keys are rcgate's own; after '--' the"
			     " kernel hands the words to init)",
			     (int)(n < 64 ? n : 64), w);
			return -1;
		}
		w += n;
	}
	return 0;
}

/* ---- [host NAME] sections: a second table, one row per key ---- */

struct host_directive {
	const char *key;
	enum dtype type;	/* D_STRING into a fixed field, or D_LONG */
	size_t offset, size;	/* in struct host_conf */
	long min, max;
	const char *help;
};

#define HOFF(f) offsetof(struct host_conf, f), sizeof(((struct host_conf *)0)->f)

static const struct host_directive host_directives[] = {
	{ "uri", D_STRING, HOFF(uri), 0, 0,
	  "libvirt URI (e.g. qemu+ssh://user@host/system), or 'local'" },
	{ "capacity", D_LONG, HOFF(capacity), 1, 64, "guests at once" },
	{ "kvm", D_STRING, HOFF(kvm), 0, 0, "targets run under KVM" },
	{ "tcg", D_STRING, HOFF(tcg), 0, 0, "targets run under TCG" },
	{ "pool", D_STRING, HOFF(pool), 0, 0, "storage pool rcgate owns there" },
	{ "pool_path", D_STRING, HOFF(pool_path), 0, 0,
	  "creates the pool there if it is missing" },
	{ "min_free_mb", D_LONG, HOFF(min_free_mb), 0, 1L << 30,
	  "less free in the pool: the host is full" },
	{ "build_slots", D_LONG, HOFF(build_slots), 0, 256,
	  "compiles a build sends to its distccd at once; 0: none" },
	{ "distcc", D_STRING, HOFF(distcc), 0, 0,
	  "its distccd as HOST:PORT (a name or IPv4 address)" },
	{ "compilers", D_STRING, HOFF(compilers), 0, 0,
	  "targets whose compilers it has, as the local host's" },
};
#define NHOST_DIRECTIVES (sizeof(host_directives) / sizeof(host_directives[0]))

static struct host_conf *host_find(struct config *c, const char *name)
{
	for (size_t i = 0; i < c->nhosts; i++) {
		if (strcmp(c->hosts[i].name, name) == 0)
			return &c->hosts[i];
	}
	return NULL;
}

static int host_name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > HOST_NAME_MAX_LEN)
		return 0;
	for (const char *p = s; *p != '\0'; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
		      *p == '.'))
			return 0;
	}
	return 1;
}

/* The host called name, made with its defaults at its first key. Not
 * inlined: GCC 12 with -fsanitize=undefined, inlining it into
 * config_parse, loses that realloc's result was checked and warns of a
 * null destination (-Werror in CI). */
static __attribute__((noinline)) struct host_conf *host_get(struct config *c, const char *name,
				  char *err, size_t errlen)
{
	struct host_conf *h = host_find(c, name), *n;

	if (h != NULL)
		return h;
	if (c->nhosts >= HOSTS_MAX) {
		errf(err, errlen, "more than %d [host] sections", HOSTS_MAX);
		return NULL;
	}
	n = realloc(c->hosts, (c->nhosts + 1) * sizeof(*n));
	if (n == NULL) {
		errf(err, errlen, "out of memory");
		return NULL;
	}
	c->hosts = n;
	h = n + c->nhosts++;
	memset(h, 0, sizeof(*h));
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->capacity = 2;
	snprintf(h->pool, sizeof(h->pool), "rcgate");
	h->min_free_mb = 1024;
	return h;
}

/* key = value of section [host name]. A string too long for its field is
 * an error, never a cut. */
static int host_set(struct config *c, const char *name, const char *key,
		    const char *value, char *err, size_t errlen)
{
	const struct host_directive *d = NULL;
	struct host_conf *h;
	long v;

	if (!host_name_valid(name)) {
		errf(err, errlen, "host name '%s': 1-%d letters, digits, '-',"
		     " '_' or '.'", name, HOST_NAME_MAX_LEN);
		return -1;
	}
	for (size_t i = 0; i < NHOST_DIRECTIVES; i++) {
		if (strcmp(host_directives[i].key, key) == 0)
			d = &host_directives[i];
	}
	if (d == NULL) {
		errf(err, errlen, "unknown directive '%s' in [host %s] (uri,"
		     " capacity, kvm, tcg, pool, pool_path, min_free_mb,"
		     " build_slots, distcc, compilers)", key, name);
		return -1;
	}
	if ((h = host_get(c, name, err, errlen)) == NULL)
		return -1;
	if (d->type == D_LONG) {
		if (parse_long(value, d->min, d->max, &v) < 0) {
			errf(err, errlen, "%s: '%s' is not a number in %ld..%ld",
			     key, value, d->min, d->max);
			return -1;
		}
		*(long *)((char *)h + d->offset) = v;
		return 0;
	}
	if (strlen(value) >= d->size) {
		errf(err, errlen, "%s: value longer than %zu bytes", key,
		     d->size - 1);
		return -1;
	}
	memcpy((char *)h + d->offset, value, strlen(value) + 1);
	return 0;
}

/* A target list of a host: known targets, none under both kvm and tcg. */
static int host_check_list(const struct host_conf *h, const char *what,
			   const char *list, const char *other, char *err,
			   size_t errlen)
{
	char word[32];

	for (const char *p = list; *p != '\0';) {
		size_t n;

		p += strspn(p, " ,");
		n = strcspn(p, " ,");
		if (n == 0)
			break;
		if (n >= sizeof(word)) {
			errf(err, errlen, "[host %s] %s: target name too long",
			     h->name, what);
			return -1;
		}
		memcpy(word, p, n);
		word[n] = '\0';
		if (target_find(word) == NULL) {
			errf(err, errlen, "[host %s] %s: unknown target '%s'",
			     h->name, what, word);
			return -1;
		}
		if (other != NULL && word_list_has(other, word)) {
			errf(err, errlen, "[host %s]: target '%s' is under both"
			     " kvm and tcg", h->name, word);
			return -1;
		}
		p += n;
	}
	return 0;
}

/* distcc = HOST:PORT: a name or IPv4 address of letters, digits, '.'
 * and '-' (it goes into a socat address: nothing else may), a port. */
static int host_check_distcc(const struct host_conf *h, char *err,
			     size_t errlen)
{
	const char *colon = strrchr(h->distcc, ':');
	size_t n = colon != NULL ? (size_t)(colon - h->distcc) : 0;
	long port;

	for (size_t i = 0; i < n; i++) {
		char ch = h->distcc[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '-'))
			n = 0;
	}
	if (n == 0 || h->distcc[0] == '-' ||
	    parse_long(colon + 1, 1, 65535, &port) < 0) {
		errf(err, errlen, "[host %s] distcc: '%s' is not HOST:PORT",
		     h->name, h->distcc);
		return -1;
	}
	return 0;
}

/* A build host: distcc and the compilers it has, if it has slots. */
static int host_check_build(const struct host_conf *h, char *err,
			    size_t errlen)
{
	if (h->build_slots == 0) {
		if (h->distcc[0] != '\0' || h->compilers[0] != '\0') {
			errf(err, errlen, "[host %s]: distcc or compilers"
			     " without build_slots", h->name);
			return -1;
		}
		return 0;
	}
	if (h->distcc[0] == '\0' || h->compilers[0] == '\0') {
		errf(err, errlen, "[host %s]: build_slots needs distcc ="
		     " HOST:PORT and compilers = <targets>", h->name);
		return -1;
	}
	if (host_check_distcc(h, err, errlen) < 0)
		return -1;
	return host_check_list(h, "compilers", h->compilers, NULL, err,
			       errlen);
}

int config_hosts_check(const struct config *c, char *err, size_t errlen)
{
	int locals = 0;

	for (size_t i = 0; i < c->nhosts; i++) {
		const struct host_conf *h = &c->hosts[i];

		if (host_check_build(h, err, errlen) < 0)
			return -1;
		if (h->build_slots > 0 && h->uri[0] == '\0' &&
		    h->kvm[0] == '\0' && h->tcg[0] == '\0')
			continue;	/* a build host only */
		if (h->uri[0] == '\0') {
			errf(err, errlen, "[host %s]: uri missing (a libvirt URI"
			     " such as qemu+ssh://user@host/system, or 'local')",
			     h->name);
			return -1;
		}
		if (strcmp(h->uri, HOST_URI_LOCAL) == 0 && ++locals > 1) {
			errf(err, errlen, "[host %s]: only one host can be the"
			     " local one", h->name);
			return -1;
		}
		for (size_t k = 0; k < i; k++) {
			if (strcmp(c->hosts[k].uri, h->uri) == 0) {
				errf(err, errlen, "[host %s]: same uri as [host"
				     " %s]", h->name, c->hosts[k].name);
				return -1;
			}
		}
		if (h->kvm[0] == '\0' && h->tcg[0] == '\0') {
			errf(err, errlen, "[host %s]: no targets (kvm = ... and/or"
			     " tcg = ...)", h->name);
			return -1;
		}
		if (host_check_list(h, "kvm", h->kvm, h->tcg, err, errlen) < 0 ||
		    host_check_list(h, "tcg", h->tcg, NULL, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int config_hosts_split(struct config *c, char *err, size_t errlen)
{
	size_t nb = 0, kept = 0;

	for (size_t i = 0; i < c->nhosts; i++)
		nb += c->hosts[i].build_slots > 0;
	free(c->build_hosts);
	c->build_hosts = NULL;
	c->nbuild_hosts = 0;
	if (nb > 0 && (c->build_hosts = calloc(nb, sizeof(*c->build_hosts))) == NULL) {
		errf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < c->nhosts; i++) {
		if (c->hosts[i].build_slots > 0)
			c->build_hosts[c->nbuild_hosts++] = c->hosts[i];
		if (c->hosts[i].uri[0] != '\0')
			c->hosts[kept++] = c->hosts[i];
	}
	c->nhosts = kept;
	return 0;
}

static void host_dump(const struct host_conf *h, FILE *out)
{
	const char *base = (const char *)h;

	fprintf(out, "\n[host %s]\n", h->name);
	for (size_t k = 0; k < NHOST_DIRECTIVES; k++) {
		const struct host_directive *d = &host_directives[k];

		if (d->type == D_LONG)
			fprintf(out, "%s = %ld\n", d->key,
				*(const long *)(base + d->offset));
		else
			fprintf(out, "%s = %s\n", d->key, base + d->offset);
	}
}

/* Each [host] once: a guests' host (with its build keys), then the build
 * hosts only (config_hosts_split took them out of hosts). */
static void hosts_dump(const struct config *c, FILE *out)
{
	for (size_t i = 0; i < c->nhosts; i++)
		host_dump(&c->hosts[i], out);
	for (size_t i = 0; i < c->nbuild_hosts; i++) {
		if (c->build_hosts[i].uri[0] == '\0')
			host_dump(&c->build_hosts[i], out);
	}
}


int config_parse(struct config *c, const char *text, const char *name,
		 char *err, size_t errlen)
{
	char section[64] = "";
	const char *p = text;
	int lineno = 0;

	while (*p != '\0') {
		const char *nl = strchr(p, '\n');
		size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
		char line[1024], *s, *eq, *key, *value, *hash;
		const struct directive *d = NULL;
		char sub[512];

		lineno++;
		if (len >= sizeof(line)) {
			errf(err, errlen, "%s:%d: line too long", name, lineno);
			return -1;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		p = nl != NULL ? nl + 1 : p + len;
		s = trim(line);
		if (*s == '#')
			continue;
		/* A '#' starts a comment only after a blank: a secret or URL
		 * such as "a#b" keeps its '#'. A value in double quotes is
		 * taken as it is between them (\" and \\ escape). */
		for (hash = s; (hash = strchr(hash, '#')) != NULL; hash++) {
			if (hash > s && (hash[-1] == ' ' || hash[-1] == '\t') &&
			    !inside_quotes(s, hash)) {
				*hash = '\0';
				break;
			}
		}
		s = trim(s);
		if (*s == '\0')
			continue;
		if (*s == '[') {
			char *close = strchr(s, ']');

			if (close == NULL || close[1] != '\0' ||
			    (size_t)(close - s - 1) >= sizeof(section)) {
				errf(err, errlen, "%s:%d: bad section header", name,
				     lineno);
				return -1;
			}
			*close = '\0';
			snprintf(section, sizeof(section), "%s", trim(s + 1));
			continue;
		}
		eq = strchr(s, '=');
		if (eq == NULL) {
			errf(err, errlen, "%s:%d: expected 'key = value'", name,
			     lineno);
			return -1;
		}
		*eq = '\0';
		key = trim(s);
		value = trim(eq + 1);
		if (*value == '"' && unquote(value) < 0) {
			errf(err, errlen, "%s:%d: unterminated quoted value", name,
			     lineno);
			return -1;
		}
		/* [host NAME]: one section per hypervisor host (hosts.c). */
		if (strncmp(section, "host ", 5) == 0) {
			if (host_set(c, trim(section + 5), key, value, sub,
				     sizeof(sub)) < 0) {
				errf(err, errlen, "%s:%d: %s", name, lineno, sub);
				return -1;
			}
			continue;
		}
		for (size_t i = 0; i < NDIRECTIVES; i++) {
			if (strcmp(directives[i].section, section) == 0 &&
			    strcmp(directives[i].key, key) == 0)
				d = &directives[i];
		}
		if (d == NULL) {
			errf(err, errlen, "%s:%d: unknown directive '%s' in [%s]",
			     name, lineno, key, section);
			return -1;
		}
		/* config_dump() prints "key = value", which must parse too
		 * (found by tests/fuzz/config_fuzz.c). */
		if (strlen(d->key) + 3 + strlen(value) >= sizeof(line)) {
			errf(err, errlen, "%s:%d: value too long", name, lineno);
			return -1;
		}
		if (directive_set(c, d, value, sub, sizeof(sub)) < 0 ||
		    (d->offset == OFF(kernel_args) &&
		     kernel_args_check(value, sub, sizeof(sub)) < 0)) {
			errf(err, errlen, "%s:%d: %s", name, lineno, sub);
			return -1;
		}
	}
	return 0;
}

int config_load(struct config *c, const char *path, char *err, size_t errlen)
{
	char *text = file_read(path, 1 << 20, NULL, err, errlen);
	int rc;

	if (text == NULL)
		return -1;
	rc = config_parse(c, text, path, err, errlen);
	free(text);
	if (rc == 0)
		rc = config_hosts_check(c, err, errlen);
	if (rc == 0)
		rc = config_hosts_split(c, err, errlen);
	return rc;
}

void config_free(struct config *c)
{
	free(c->hosts);
	c->hosts = NULL;
	c->nhosts = 0;
	free(c->build_hosts);
	c->build_hosts = NULL;
	c->nbuild_hosts = 0;
	for (size_t i = 0; i < NDIRECTIVES; i++) {
		if (directives[i].type != D_LONG) {
			char **slot = (char **)((char *)c + directives[i].offset);

			free(*slot);
			*slot = NULL;
		}
	}
}

/* A value that would not read back as itself is written quoted. */
static void dump_string(FILE *out, const char *key, const char *v)
{
	size_t n = strlen(v);

	if (n > 0 && (strchr(v, '#') != NULL || v[0] == '"' || v[0] == ' ' ||
		      v[0] == '\t' || v[n - 1] == ' ' || v[n - 1] == '\t')) {
		fprintf(out, "%s = \"", key);
		for (const char *c = v; *c != '\0'; c++) {
			if (*c == '"' || *c == '\\')
				fputc('\\', out);
			fputc(*c, out);
		}
		fputs("\"\n", out);
		return;
	}
	fprintf(out, "%s = %s\n", key, v);
}

void config_dump(const struct config *c, FILE *out)
{
	const char *base = (const char *)c;
	int first = 1;

	/* A section at a time, in the order sections first appear in the
	 * table, though its rows need not be next to each other there. */
	for (size_t s = 0; s < NDIRECTIVES; s++) {
		const char *section = directives[s].section;
		size_t k;

		for (k = 0; k < s && strcmp(directives[k].section, section); k++)
			;
		if (k < s)
			continue;	/* printed with its first row */
		fprintf(out, "%s[%s]\n", first ? "" : "\n", section);
		first = 0;
		for (size_t i = s; i < NDIRECTIVES; i++) {
			const struct directive *d = &directives[i];

			if (strcmp(d->section, section) != 0)
				continue;
			fprintf(out, "# %s\n", d->help);
			if (d->type == D_LONG)
				fprintf(out, "%s = %ld\n", d->key,
					*(const long *)(base + d->offset));
			else
				dump_string(out, d->key,
					    *(char *const *)(base + d->offset));
		}
	}
	hosts_dump(c, out);
}

char *config_libvirt_uri(const struct config *c)
{
	char *uri;

	if (c->libvirt_uri[0] != '\0')
		return strdup(c->libvirt_uri);
	if (asprintf(&uri, "qemu:///embed?root=%s/libvirt", c->state_dir) < 0)
		return NULL;
	return uri;
}
