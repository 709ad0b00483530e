/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rcgatectl - the command-line client of rcgated's REST API (libcurl +
 * jansson). What CI and mailing-list bots script against: human tables by
 * default, --json for the raw API answer, and exit codes that mean
 * something (gate: 0 pass, 1 block, 2 pending, 3 incomplete).
 *
 * Server and token come from --server/--token, then RCGATE_SERVER and
 * RCGATE_TOKEN, then ~/.config/rcgate/rcgatectl.conf ("server = ...",
 * "token = ..."), then http://127.0.0.1:8080. Failures of every command are
 * shown by fail(): one line on stderr, exit status 65.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#define EXIT_USAGE 64
#define EXIT_FAILURE_HTTP 65
#define MAX_RESPONSE (16u << 20)

static char server[512] = "http://127.0.0.1:8080";
static char token[128];
static int json_output;

struct buffer {
	char *data;
	size_t len;
	int too_big;
};

static size_t collect(char *p, size_t size, size_t nmemb, void *userdata)
{
	struct buffer *b = userdata;
	size_t n = size * nmemb;
	char *nd;

	if (b->len + n > MAX_RESPONSE) {
		b->too_big = 1;
		return 0;
	}
	nd = realloc(b->data, b->len + n + 1);
	if (nd == NULL)
		return 0;
	b->data = nd;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

/* The one way a failed request is shown, whatever the command: nothing on
 * stdout, one line "rcgatectl: MESSAGE" on stderr, and the command exits
 * EXIT_FAILURE_HTTP. MESSAGE is the API's {"error":{"message"}} when the
 * answer has one; otherwise (transport errors, answers that are not the
 * API's) it is the URL and what went wrong. Control characters become '?',
 * so a message echoing hostile input stays one harmless line. */
static void fail(const char *url, const char *what, const char *body)
{
	json_t *j = body != NULL ? json_loads(body, 0, NULL) : NULL;
	const char *msg = json_string_value(json_object_get(
		json_object_get(j, "error"), "message"));
	char line[1024];

	if (msg != NULL && msg[0] != '\0')
		snprintf(line, sizeof(line), "%s", msg);
	else
		snprintf(line, sizeof(line), "%s: %s", url, what);
	for (char *c = line; *c != '\0'; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	}
	fprintf(stderr, "rcgatectl: %s\n", line);
	json_decref(j);
}

/* Performs one request. Returns the body of a 2xx answer, malloc'ed (the
 * caller frees); anything else is shown by fail() and returns NULL. */
static char *request(const char *method, const char *path, const char *type,
		     const char *data, size_t len)
{
	char url[2048], auth[200], ct[128], curlerr[CURL_ERROR_SIZE] = "";
	char what[64];
	struct buffer b = { NULL, 0, 0 };
	struct curl_slist *h = NULL;
	CURL *c = curl_easy_init();
	CURLcode cc;
	long code = 0;

	snprintf(url, sizeof(url), "%s%s", server, path);
	if (c == NULL) {
		fail(url, "cannot initialise libcurl", NULL);
		return NULL;
	}
	if (token[0] != '\0') {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		h = curl_slist_append(h, auth);
	}
	if (type != NULL) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", type);
		h = curl_slist_append(h, ct);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (data != NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, data);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curlerr);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "rcgatectl/" PACKAGE_VERSION);
	cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	if (cc != CURLE_OK) {
		fail(url, b.too_big ? "response too large"
		     : curlerr[0] ? curlerr : curl_easy_strerror(cc), NULL);
		free(b.data);
		return NULL;
	}
	if (code < 200 || code > 299) {
		snprintf(what, sizeof(what), "HTTP %ld", code);
		fail(url, what, b.data);
		free(b.data);
		return NULL;
	}
	return b.data != NULL ? b.data : strdup("");
}

/* A request whose 2xx answer is JSON: returns it parsed (the caller
 * decrefs), or NULL after fail(). */
static json_t *call(const char *method, const char *path, const char *type,
		    const char *data, size_t len)
{
	char *body = request(method, path, type, data, len), what[256], url[2048];
	json_error_t jerr;
	json_t *j;

	if (body == NULL)
		return NULL;
	j = json_loads(body, 0, &jerr);
	free(body);
	if (j == NULL) {
		snprintf(url, sizeof(url), "%s%s", server, path);
		snprintf(what, sizeof(what), "answer is not JSON: %s", jerr.text);
		fail(url, what, NULL);
	}
	return j;
}

static void print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (s != NULL)
		printf("%s\n", s);
	free(s);
}

static const char *js(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "-";
}

/* Path segments come from the command line: keep them to what the API's
 * identifiers can hold. */
static int safe_segment(const char *s)
{
	if (*s == '\0' || strlen(s) > 64)
		return 0;
	for (; *s != '\0'; s++) {
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= 'A' && *s <= 'Z') || *s == '.' || *s == '-' || *s == '_'))
			return 0;
	}
	return 1;
}

static int need_segment(const char *what, const char *s)
{
	if (safe_segment(s))
		return 0;
	fprintf(stderr, "rcgatectl: bad %s '%.64s'\n", what, s);
	return -1;
}

static int cmd_status(int argc, char **argv)
{
	char path[256];
	json_t *r, *job;
	size_t i;

	if (argc != 1 || need_segment("version", argv[0]) < 0)
		return EXIT_USAGE;
	snprintf(path, sizeof(path), "/api/v1/releases/%s", argv[0]);
	r = call("GET", path, NULL, NULL, 0);
	if (r == NULL)
		return EXIT_FAILURE_HTTP;
	if (json_output) {
		print_json(r);
		json_decref(r);
		return 0;
	}
	printf("release %s (branch %s): %s, gate %s\n", js(r, "version"),
	       js(r, "branch"), js(r, "state"),
	       js(json_object_get(r, "gate"), "verdict"));
	printf("%-8s %-12s %-6s %8s  %-24s %5s %5s %5s\n", "TARGET", "STATE",
	       "ACCEL", "SECONDS", "KERNEL", "PASS", "FAIL", "SKIP");
	json_array_foreach(json_object_get(r, "jobs"), i, job) {
		size_t k;
		json_t *res;
		int p = 0, f = 0, s = 0;

		json_array_foreach(json_object_get(job, "results"), k, res) {
			const char *st = js(res, "status");

			p += strcmp(st, "pass") == 0;
			f += strcmp(st, "fail") == 0;
			s += strcmp(st, "skip") == 0;
		}
		printf("%-8s %-12s %-6s %8.1f  %-24s %5d %5d %5d%s%s\n",
		       js(job, "target"), js(job, "state"), js(job, "accel"),
		       json_number_value(json_object_get(job, "boot_seconds")),
		       js(job, "kernel_version"), p, f, s,
		       json_is_string(json_object_get(job, "error")) ? "  " : "",
		       json_is_string(json_object_get(job, "error"))
			       ? js(job, "error") : "");
	}
	json_array_foreach(json_object_get(r, "regressions"), i, job)
		printf("regression %lld: %s on %s (%s)%s\n",
		       (long long)json_integer_value(json_object_get(job, "id")),
		       js(job, "test"), js(job, "target"), js(job, "state"),
		       json_is_true(json_object_get(job, "flaky")) ? " flaky" : "");
	json_decref(r);
	return 0;
}

static int cmd_gate(int argc, char **argv)
{
	char path[256];
	json_t *g, *reason;
	const char *v;
	size_t i;
	int rc;

	if (argc != 1 || need_segment("version", argv[0]) < 0)
		return EXIT_USAGE;
	snprintf(path, sizeof(path), "/api/v1/releases/%s/gate", argv[0]);
	g = call("GET", path, NULL, NULL, 0);
	if (g == NULL)
		return EXIT_FAILURE_HTTP;
	v = js(g, "verdict");
	if (json_output) {
		print_json(g);
	} else {
		printf("%s: %s\n", argv[0], v);
		json_array_foreach(json_object_get(g, "reasons"), i, reason)
			printf("  %s\n", json_string_value(reason));
	}
	rc = strcmp(v, "pass") == 0 ? 0 : strcmp(v, "block") == 0 ? 1
		: strcmp(v, "pending") == 0 ? 2 : 3;
	json_decref(g);
	return rc;
}

static int cmd_regressions(int argc, char **argv)
{
	char path[256] = "/api/v1/regressions?limit=200";
	json_t *r, *g;
	size_t i;

	for (int a = 0; a < argc; a++) {
		const char *eq = strchr(argv[a], '=');

		if (eq == NULL || (strncmp(argv[a], "state=", 6) != 0 &&
				   strncmp(argv[a], "branch=", 7) != 0) ||
		    need_segment("filter", eq + 1) < 0)
			return EXIT_USAGE;
		strncat(path, "&", sizeof(path) - strlen(path) - 1);
		strncat(path, argv[a], sizeof(path) - strlen(path) - 1);
	}
	r = call("GET", path, NULL, NULL, 0);
	if (r == NULL)
		return EXIT_FAILURE_HTTP;
	if (json_output) {
		print_json(r);
	} else {
		printf("%-5s %-10s %-28s %-7s %s\n", "ID", "STATE", "TEST", "TARGET",
		       "RELEASES");
		json_array_foreach(json_object_get(r, "regressions"), i, g)
			printf("%-5lld %-10s %-28s %-7s %s\n",
			       (long long)json_integer_value(json_object_get(g, "id")),
			       js(g, "state"), js(g, "test"), js(g, "target"),
			       js(g, "releases"));
	}
	json_decref(r);
	return 0;
}

static int cmd_report(int argc, char **argv)
{
	char path[256], *body;
	int eml = argc == 2 && strcmp(argv[1], "--eml") == 0;

	if ((argc != 1 && !eml) || need_segment("version", argv[0]) < 0)
		return EXIT_USAGE;
	snprintf(path, sizeof(path), "/api/v1/releases/%s/report.%s", argv[0],
		 eml ? "eml" : "txt");
	body = request("GET", path, NULL, NULL, 0);
	if (body == NULL)
		return EXIT_FAILURE_HTTP;
	fputs(body, stdout);
	free(body);
	return 0;
}

static char *read_stdin(size_t *len)
{
	struct buffer b = { NULL, 0, 0 };
	char chunk[65536];
	size_t n;

	while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0) {
		if (collect(chunk, 1, n, &b) != n) {
			free(b.data);
			return NULL;
		}
	}
	*len = b.len;
	return b.data;
}

static int post_and_show(const char *path, const char *type, const char *data,
			 size_t len)
{
	json_t *r = call("POST", path, type, data, len);

	if (r == NULL)
		return EXIT_FAILURE_HTTP;
	if (json_output) {
		print_json(r);
	} else if (json_object_get(r, "version") != NULL &&
		   json_object_get(r, "jobs") != NULL) {
		printf("%s: %s (%zu jobs)\n", js(r, "version"), js(r, "state"),
		       json_array_size(json_object_get(r, "jobs")));
	} else {
		print_json(r);
	}
	json_decref(r);
	return 0;
}

static int cmd_announce(int argc, char **argv)
{
	size_t len = 0;
	char *mail;
	int rc;

	(void)argv;
	if (argc != 0)
		return EXIT_USAGE;
	mail = read_stdin(&len);
	if (mail == NULL || len == 0) {
		fprintf(stderr, "rcgatectl: announce reads the raw e-mail on stdin\n");
		free(mail);
		return EXIT_USAGE;
	}
	rc = post_and_show("/api/v1/announcements", "message/rfc822", mail, len);
	free(mail);
	return rc;
}

/* submit VERSION TARGET=URL#SHA256 ... [baseline=VERSION] */
static int cmd_submit(int argc, char **argv)
{
	json_t *body, *arts;
	char *text;
	int rc;

	if (argc < 2)
		return EXIT_USAGE;
	body = json_pack("{s:s}", "version", argv[0]);
	arts = json_array();
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '='), *hash;
		json_t *a;

		if (eq == NULL)
			goto usage;
		if (strncmp(argv[i], "baseline=", 9) == 0) {
			json_object_set_new(body, "baseline", json_string(eq + 1));
			continue;
		}
		hash = strrchr(eq + 1, '#');
		if (hash == NULL)
			goto usage;
		a = json_pack("{s:s%,s:s%,s:s}", "target", argv[i],
			      (size_t)(eq - argv[i]), "url", eq + 1,
			      (size_t)(hash - eq - 1), "sha256", hash + 1);
		if (a == NULL)
			goto usage;
		json_array_append_new(arts, a);
	}
	json_object_set_new(body, "artifacts", arts);
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	rc = post_and_show("/api/v1/releases", "application/json", text,
			   strlen(text));
	free(text);
	return rc;
usage:
	json_decref(body);
	json_decref(arts);
	fprintf(stderr, "rcgatectl: artifacts are TARGET=URL#SHA256\n");
	return EXIT_USAGE;
}

static int cmd_retry(int argc, char **argv)
{
	char path[128];

	if (argc != 1 || need_segment("job id", argv[0]) < 0)
		return EXIT_USAGE;
	snprintf(path, sizeof(path), "/api/v1/jobs/%s/retry", argv[0]);
	return post_and_show(path, NULL, "", 0);
}

static int cmd_cancel(int argc, char **argv)
{
	char path[128];

	if (argc != 1 || need_segment("version", argv[0]) < 0)
		return EXIT_USAGE;
	snprintf(path, sizeof(path), "/api/v1/releases/%s/cancel", argv[0]);
	return post_and_show(path, NULL, "", 0);
}

static int cmd_triage(int argc, char **argv)
{
	char path[128], *text;
	json_t *body;
	int rc;

	if (argc != 3 || need_segment("regression id", argv[0]) < 0)
		return EXIT_USAGE;
	snprintf(path, sizeof(path), "/api/v1/regressions/%s", argv[0]);
	body = json_pack("{s:s,s:s}", "state", argv[1], "reason", argv[2]);
	text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (text == NULL)
		return EXIT_USAGE;
	rc = post_and_show(path, "application/json", text, strlen(text));
	free(text);
	return rc;
}

static int cmd_token(int argc, char **argv)
{
	json_t *body;
	char *text;
	json_t *r;

	if (argc < 2 || argc > 3 || strcmp(argv[0], "create") != 0)
		return EXIT_USAGE;
	body = json_pack("{s:s,s:s}", "name", argv[1], "scope",
			 argc == 3 ? argv[2] : "write");
	text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (text == NULL)
		return EXIT_USAGE;
	r = call("POST", "/api/v1/tokens", "application/json", text, strlen(text));
	free(text);
	if (r == NULL)
		return EXIT_FAILURE_HTTP;
	if (json_output)
		print_json(r);
	else
		printf("%s\n", js(r, "token"));
	json_decref(r);
	return 0;
}

struct command {
	const char *name;
	const char *usage;
	int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
	{ "status", "status VERSION", cmd_status },
	{ "gate", "gate VERSION            (exit 0 pass, 1 block, 2 pending, 3 incomplete)", cmd_gate },
	{ "regressions", "regressions [state=S] [branch=B]", cmd_regressions },
	{ "report", "report VERSION [--eml]", cmd_report },
	{ "submit", "submit VERSION TARGET=URL#SHA256... [baseline=VERSION]", cmd_submit },
	{ "announce", "announce < MAIL", cmd_announce },
	{ "retry", "retry JOB", cmd_retry },
	{ "cancel", "cancel VERSION", cmd_cancel },
	{ "triage", "triage ID invalid|open|confirmed REASON", cmd_triage },
	{ "token", "token create NAME [read|write|admin]   (needs an admin token)", cmd_token },
};

/* --help: stdout and 0; a usage error: stderr and EXIT_USAGE. */
static void usage(FILE *out, int status)
{
	fprintf(out, "usage: rcgatectl [--server URL] [--token T] [--json] COMMAND ...\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  rcgatectl %s\n", commands[i].usage);
	fprintf(out, "       rcgatectl --help | --version | COMMAND --help\n");
	exit(status);
}

static void load_config(void)
{
	const char *home = getenv("HOME");
	char path[1024], line[1024];
	FILE *fp;

	if (home == NULL)
		return;
	snprintf(path, sizeof(path), "%s/.config/rcgate/rcgatectl.conf", home);
	fp = fopen(path, "r");
	if (fp == NULL)
		return;
	while (fgets(line, sizeof(line), fp) != NULL) {
		char key[32], value[600];

		if (sscanf(line, " %31[a-z] = %599s", key, value) != 2)
			continue;
		if (strcmp(key, "server") == 0 && strlen(value) < sizeof(server))
			memcpy(server, value, strlen(value) + 1);
		else if (strcmp(key, "token") == 0 && strlen(value) < sizeof(token))
			memcpy(token, value, strlen(value) + 1);
	}
	fclose(fp);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "server", required_argument, NULL, 's' },
		{ "token", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, rc = EXIT_USAGE;

	load_config();
	if (getenv("RCGATE_SERVER") != NULL)
		snprintf(server, sizeof(server), "%s", getenv("RCGATE_SERVER"));
	if (getenv("RCGATE_TOKEN") != NULL)
		snprintf(token, sizeof(token), "%s", getenv("RCGATE_TOKEN"));
	while ((opt = getopt_long(argc, argv, "+s:t:jh", opts, NULL)) != -1) {
		switch (opt) {
		case 's': snprintf(server, sizeof(server), "%s", optarg); break;
		case 't': snprintf(token, sizeof(token), "%s", optarg); break;
		case 'j': json_output = 1; break;
		case 'h': usage(stdout, 0); break;
		case 'V': printf("rcgatectl %s\n", PACKAGE_VERSION); return 0;
		default: usage(stderr, EXIT_USAGE);
		}
	}
	if (optind >= argc)
		usage(stderr, EXIT_USAGE);
	/* A trailing slash would double up with the API paths. */
	while (strlen(server) > 0 && server[strlen(server) - 1] == '/')
		server[strlen(server) - 1] = '\0';
	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, argv[optind]) == 0) {
			for (int a = optind + 1; a < argc; a++) {
				if (strcmp(argv[a], "--help") == 0) {
					printf("usage: rcgatectl %s\n", commands[i].usage);
					curl_global_cleanup();
					return 0;
				}
			}
			rc = commands[i].run(argc - optind - 1, argv + optind + 1);
			if (rc == EXIT_USAGE)
				fprintf(stderr, "usage: rcgatectl %s\n", commands[i].usage);
			curl_global_cleanup();
			return rc;
		}
	}
	curl_global_cleanup();
	fprintf(stderr, "rcgatectl: unknown command '%s'\n", argv[optind]);
	usage(stderr, EXIT_USAGE);
	return rc;
}
