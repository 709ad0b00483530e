/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * main.c - rcgated's process: options, start and stop order, signals.
 *
 *   rcgated [-d] [-n [-v]] [-f config] [-T name [-s scope]]
 *   rcgated --help | --version
 *
 * -d stays in the foreground, -n checks the configuration and exits (-v
 * prints every directive), -T creates an API token, prints it once and
 * stores only its hash.
 */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "store/store.h"
#include "artifact/artifact.h"
#include "guests/guests.h"
#include "build/build.h"
#include "job/job.h"
#include "intake/intake.h"
#include "report/report.h"
#include "review/review.h"
#include "http/http.h"

/* $(sysconfdir)/rcgate/rcgated.conf, from the Makefile. */
#define DEFAULT_CONFIG CONFIG_FILE_DEFAULT

/* --help: the options on stdout, exit 0; a usage error: stderr, exit 2. */
static void usage(FILE *out, int status)
{
	fprintf(out, "usage: rcgated [-d] [-n [-v]] [-f config]"
		" [-T name [-s read|write|admin]]\n"
		"       rcgated --help | --version\n");
	if (status == 0)
		fprintf(out, "\n"
			"  -d         stay in the foreground\n"
			"  -f config  the configuration file; default, if it exists:\n"
			"             %s\n"
			"  -n         check the configuration and exit; -v prints every directive\n"
			"  -T name    create an API token and print it once; -s scope: read,\n"
			"             write (default) or admin\n", DEFAULT_CONFIG);
	exit(status);
}

static void guest_log(int level, const char *msg)
{
	log_msg((enum log_level)level, "libvirt: %s", msg);
}

static int create_token(const char *db, const char *name, const char *scope)
{
	char token[48], hash[65], err[256];
	struct store *st;

	if (strcmp(scope, "read") != 0 && strcmp(scope, "write") != 0 &&
	    strcmp(scope, "admin") != 0) {
		fprintf(stderr, "rcgated: scope must be read, write or admin\n");
		return 1;
	}
	if (token_generate(token, hash) < 0) {
		fprintf(stderr, "rcgated: getrandom: %s\n", strerror(errno));
		return 1;
	}
	st = store_open(db, err, sizeof(err));
	if (st == NULL || store_token_add(st, name, hash, scope, err,
					  sizeof(err)) < 0) {
		fprintf(stderr, "rcgated: %s\n", err);
		store_close(st);
		return 1;
	}
	store_close(st);
	printf("%s\n", token);
	return 0;
}

static int running_as_root;	/* warned about once the log is open */
static uid_t chown_uid;
static gid_t chown_gid;

static int chown_entry(const char *path, const struct stat *sb, int flag,
		       struct FTW *ftw)
{
	(void)flag;
	(void)ftw;
	if (sb->st_uid != chown_uid && lchown(path, chown_uid, chown_gid) < 0)
		return -1;
	return 0;
}

/* Started as root with [daemon] user set: the state and cache directories
 * become the user's (once: a tree already theirs is left alone), then the
 * process becomes the user for good, before any thread, database or guest.
 * QEMU runs as whoever rcgated is, so guests are confined with it. */
static int drop_privileges(const struct config *cfg, const char *cache,
			   char *err, size_t errlen)
{
	const struct passwd *pw;
	struct stat sb;
	const char *const dirs[] = { cfg->state_dir, cache };

	if (cfg->user[0] == '\0') {
		running_as_root = geteuid() == 0;
		return 0;
	}
	pw = getpwnam(cfg->user);
	if (pw == NULL) {
		errf(err, errlen, "user '%s' does not exist (scripts/setup creates"
		     " it)", cfg->user);
		return -1;
	}
	if (geteuid() != 0) {
		if (geteuid() == pw->pw_uid)
			return 0;
		errf(err, errlen, "[daemon] user is %s, but rcgated was started"
		     " as uid %d (start it as root or as %s)", cfg->user,
		     (int)geteuid(), cfg->user);
		return -1;
	}
	chown_uid = pw->pw_uid;
	chown_gid = pw->pw_gid;
	for (size_t i = 0; i < 2; i++) {
		if (stat(dirs[i], &sb) == 0 && sb.st_uid != pw->pw_uid &&
		    nftw(dirs[i], chown_entry, 32, FTW_PHYS) != 0) {
			errf(err, errlen, "chown %s to %s: %s", dirs[i], cfg->user,
			     strerror(errno));
			return -1;
		}
	}
	if (initgroups(pw->pw_name, pw->pw_gid) < 0 ||
	    setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0) {
		errf(err, errlen, "cannot become %s: %s", cfg->user, strerror(errno));
		return -1;
	}
	if (setuid(0) == 0) {
		errf(err, errlen, "still able to regain root after becoming %s",
		     cfg->user);
		return -1;
	}
	/* libvirt's embedded driver and GLib look at these. */
	setenv("HOME", cfg->state_dir, 1);
	setenv("USER", pw->pw_name, 1);
	setenv("LOGNAME", pw->pw_name, 1);
	unsetenv("XDG_RUNTIME_DIR");
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("XDG_CACHE_HOME");
	return 0;
}

static void write_runfile(const char *dir, const char *name, long value)
{
	char path[PATH_MAX], text[32], err[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(text, sizeof(text), "%ld\n", value);
	if (file_write_atomic(path, text, strlen(text), err, sizeof(err)) < 0)
		log_warn("%s", err);
}

/* "rcgate-<instance>-": the names of this daemon's guests and volumes,
 * the instance id made once and kept in the database. */
static int guest_prefix(const char *db, char *out, size_t len, char *err,
			size_t errlen)
{
	struct store *st = store_open(db, err, errlen);
	char instance[16];
	int rc;

	if (st == NULL)
		return -1;
	rc = store_instance_id(st, instance, sizeof(instance), err, errlen);
	store_close(st);
	if (rc == 0)
		snprintf(out, len, "rcgate-%s-", instance);
	return rc;
}

/* What the command line asks for. */
struct options {
	const char *config_path, *token_name, *scope;
	int foreground, check_only, verbose;
};

static void parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_HELP = 256, OPT_VERSION };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	*o = (struct options){ .scope = "write" };
	while ((opt = getopt_long(argc, argv, "df:nvT:s:", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_HELP: usage(stdout, 0); break;
		case OPT_VERSION: printf("rcgated %s\n", RCGATE_VERSION); exit(0);
		case 'd': o->foreground = 1; break;
		case 'f': o->config_path = optarg; break;
		case 'n': o->check_only = 1; break;
		case 'v': o->verbose = 1; break;
		case 'T': o->token_name = optarg; break;
		case 's': o->scope = optarg; break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc)
		usage(stderr, 2);
}

/* The configuration file, with the checks that belong to a higher floor
 * than config.c's: 0, or -1 after saying why on stderr. */
static int load_config(struct config *cfg, const struct options *o)
{
	const char *path = o->config_path;
	char err[1024];

	config_defaults(cfg);
	if (path == NULL && access(DEFAULT_CONFIG, R_OK) == 0)
		path = DEFAULT_CONFIG;
	if (path != NULL && config_load(cfg, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "rcgated: %s\n", err);
		return -1;
	}
	if (cfg->bisect_upstream_git[0] != '\0' &&
	    gitsrc_url_check(cfg->bisect_upstream_git, err, sizeof(err)) < 0) {
		fprintf(stderr, "rcgated: %s: [bisect] upstream_git: %s\n",
			path != NULL ? path : "defaults", err);
		return -1;
	}
	return 0;
}

/* -n: the configuration as rcgated would run it (-v prints it). */
static int check_config(const struct config *cfg, int verbose)
{
	char err[1024];

	if (fetch_init(cfg->local_dirs, cfg->allow_networks, err,
		       sizeof(err)) < 0) {
		fprintf(stderr, "rcgated: %s\n", err);
		return 1;
	}
	fetch_free();
	if (verbose)
		config_dump(cfg, stdout);
	fprintf(stderr, "rcgated: configuration OK\n");
	return 0;
}

/* The running daemon: what main() starts and stops. */
struct daemon {
	struct config cfg;
	char db[PATH_MAX], cache[PATH_MAX], base_url[512], prefix[32];
	char *uri;
	struct guest_host *host;
	struct http_server *http;
	unsigned port;
	int hosts_started;
	struct api_context ac;
	struct sched_context sctx;
	struct engine_context ectx;
};

/* Directories, privileges, the database, the log, the root check and the
 * fork into the background: 0, 1 when -T made its token (done), or -1
 * after saying why. */
static int prepare(struct daemon *d, const struct options *o)
{
	struct config *cfg = &d->cfg;
	enum log_level level;
	char err[1024];

	snprintf(d->db, sizeof(d->db), "%s/rcgate.db", cfg->state_dir);
	if (cfg->cache_dir[0] != '\0')
		snprintf(d->cache, sizeof(d->cache), "%s", cfg->cache_dir);
	else
		snprintf(d->cache, sizeof(d->cache), "%s/cache", cfg->state_dir);
	/* The state dir holds the token hashes and every log: its user's
	 * alone (the API serves what is public). The cache holds only what
	 * anyone may download or build, and may be shared: its modes are the
	 * operator's, and what rcgated adds follows the umask (077). */
	if (mkdir_p(cfg->state_dir, 0700, err, sizeof(err)) < 0 ||
	    mkdir_p(d->cache, 0755, err, sizeof(err)) < 0 ||
	    drop_privileges(cfg, d->cache, err, sizeof(err)) < 0 ||
	    state_dir_private(cfg->state_dir, d->cache, err, sizeof(err)) < 0 ||
	    store_check(d->db, err, sizeof(err)) < 0) {
		fprintf(stderr, "rcgated: %s\n", err);
		return -1;
	}
	if (o->token_name != NULL)
		return create_token(d->db, o->token_name, o->scope) == 0 ? 1 : -1;
	log_level_parse(cfg->log_level, &level);
	if (log_init(cfg->log_file, level, err, sizeof(err)) < 0) {
		fprintf(stderr, "rcgated: %s\n", err);
		return -1;
	}
	/* A kernel tree's Makefile, patch and git run in a sandbox, and
	 * QEMU runs as whoever rcgated is: as root, one escape is the
	 * machine. Only an explicit allow_root runs so. */
	if (running_as_root && !cfg->allow_root) {
		log_err("refusing to run as root: set [daemon] user (scripts/setup"
			" creates rcgate), or allow_root = 1 to build and boot"
			" guests as root anyway");
		fprintf(stderr, "rcgated: refusing to run as root: set [daemon]"
			" user, or [daemon] allow_root = 1\n");
		log_free();
		return -1;
	}
	if (running_as_root)
		log_warn("running as root ([daemon] allow_root = 1): set [daemon]"
			 " user to run rcgated and its guests unprivileged");
	if (!o->foreground && daemon(0, strcmp(cfg->log_file, "-") == 0) < 0) {
		log_err("daemon: %s", strerror(errno));
		log_free();
		return -1;
	}
	return 0;
}

/* Every thread, in the order each needs the ones before it. */
static int start(struct daemon *d, char *err, size_t errlen)
{
	struct config *cfg = &d->cfg;
	struct http_options ho = {
		.listen = cfg->listen,
		.port = cfg->port,
		.max_body = (size_t)cfg->max_body_kb << 10,
		.max_connections = (unsigned)cfg->max_connections,
		.max_per_ip = (unsigned)cfg->max_connections_per_ip,
		.header_timeout = (unsigned)cfg->header_timeout,
		.request_timeout = (unsigned)cfg->request_timeout,
		.idle_timeout = 30,
		.generation = store_generation,
	};
	const struct http_route *routes;
	size_t nroutes;

	if (fetch_init(cfg->local_dirs, cfg->allow_networks, err, errlen) < 0)
		return -1;
	announce_init();	/* GMime, before any thread uses it */
	guest_set_log(guest_log);
	d->uri = config_libvirt_uri(cfg);
	if (d->uri == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* Only hosts.c's remote hosts: no local connection (nor embed root). */
	if (hosts_need_local(cfg) &&
	    (d->host = guest_host_open(d->uri, err, errlen)) == NULL)
		return -1;
	d->ac = (struct api_context){ cfg, d->db, (unsigned)cfg->workers,
				      d->base_url };
	d->sctx = (struct sched_context){ cfg, d->db, d->cache, engine_kick,
					  d->prefix };
	d->ectx = (struct engine_context){ cfg, d->db, d->base_url, sched_kick,
					   d->cache, prereq_kick };
	if (api_init(&d->ac, err, errlen) < 0)
		return -1;
	routes = api_routes(&nroutes);
	d->http = http_start(&ho, routes, nroutes, api_authorize, &d->port,
			     err, errlen);
	if (d->http == NULL)
		return -1;
	if (cfg->public_url[0] != '\0')
		snprintf(d->base_url, sizeof(d->base_url), "%s", cfg->public_url);
	else
		snprintf(d->base_url, sizeof(d->base_url), "http://%s:%u",
			 cfg->listen, d->port);
	if (guest_prefix(d->db, d->prefix, sizeof(d->prefix), err, errlen) < 0 ||
	    hosts_start(cfg, d->host, d->uri, d->prefix, err, errlen) < 0)
		return -1;
	d->hosts_started = 1;
	if (sched_start(&d->sctx, err, errlen) < 0 ||
	    engine_start(&d->ectx, err, errlen) < 0 ||
	    notify_start(cfg, d->db, err, errlen) < 0 ||
	    trigger_start(cfg, d->db, err, errlen) < 0 ||
	    source_start(cfg, d->db, d->cache, sched_kick, err, errlen) < 0 ||
	    prereq_start(cfg, d->db, d->cache, err, errlen) < 0 ||
	    bisect_posted_start(&d->ectx, err, errlen) < 0 ||
	    bisect_seed_start(&d->ectx, err, errlen) < 0)
		return -1;
	return 0;
}

/* Every thread start() may have started, in reverse; each stop is a
 * no-op for what never started. */
static void stop(struct daemon *d)
{
	http_stop(d->http);
	bisect_seed_stop();
	bisect_posted_stop();
	prereq_stop();
	source_stop();
	trigger_stop();
	notify_stop();
	sched_stop();
	if (d->hosts_started)
		hosts_stop();
	engine_stop();
	api_free();
	guest_host_close(d->host);
	fetch_free();
	free(d->uri);
}

/* Until SIGTERM or SIGINT; SIGHUP reopens the log. */
static void wait_for_signal(const sigset_t *sigs)
{
	int sig;

	for (;;) {
		if (sigwait(sigs, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			log_reopen();
			log_info("log reopened");
			continue;
		}
		log_info("signal %d: shutting down", sig);
		return;
	}
}

int main(int argc, char **argv)
{
	static struct daemon d;
	struct options o;
	char err[1024];
	sigset_t sigs;
	int rc;

	/* Before anything opens a descriptor or creates a file. */
	inherit_reset();
	parse_args(argc, argv, &o);
	/* Before any thread: glibc gives each thread that allocates an arena
	 * of its own, up to 8 per core, each kept once touched; the HTTP
	 * threads (one per connection) allocate little, so two will do
	 * (bench/api.sh measures RSS idle and with 300 connections). */
	mallopt(M_ARENA_MAX, 2);
	/* A fixed mmap threshold: blocks of 256 KiB and more (a job's kernel,
	 * modules and initramfs pass through such buffers) are mapped and
	 * unmapped on free. glibc's default raises the threshold after the
	 * first large free, and then serves them from the heaps, which kept
	 * 32 MiB free after one four-target release (bench/memory.sh). */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	if (load_config(&d.cfg, &o) < 0) {
		config_free(&d.cfg);
		return 1;
	}
	if (o.check_only) {
		rc = check_config(&d.cfg, o.verbose);
		config_free(&d.cfg);
		return rc;
	}
	rc = prepare(&d, &o);
	if (rc != 0) {
		config_free(&d.cfg);
		return rc < 0;
	}
	/* Signals are taken by sigwait() below, never by another thread. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	rc = start(&d, err, sizeof(err));
	if (rc == 0) {
		write_runfile(d.cfg.state_dir, "rcgated.pid", (long)getpid());
		write_runfile(d.cfg.state_dir, "rcgated.port", (long)d.port);
		log_info("rcgated %s started listen=%s:%u libvirt=%s workers=%ld"
			 " state=%s", RCGATE_VERSION, d.cfg.listen, d.port, d.uri,
			 d.cfg.workers, d.cfg.state_dir);
		wait_for_signal(&sigs);
	} else {
		log_err("%s", err);
	}
	stop(&d);
	log_info("rcgated stopped");
	log_free();
	config_free(&d.cfg);
	return rc < 0;
}
