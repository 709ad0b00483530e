/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * buildlog.c - reads a kbuild log the way a stable reviewer does: the first
 * error the compiler, assembler, linker, modpost or make reported, and
 * whether the build broke because of the source (a result: the rc does not
 * build) or because of the machine (no disk, no memory, no toolchain: an
 * infra error, never a regression). The error is normalised so the same
 * breakage in two trees is one signature: paths relative to the source
 * tree, no line or column numbers, no addresses or offsets, so
 * "fs/ext4/file.c:310:9: error: ..." in 6.1 and ":298:9:" in 5.15 match.
 * Pure: text in, a struct out (tests/unit/buildlog.c).
 */
#include <ctype.h>
#include <string.h>

#include "base/base.h"
#include "build/build.h"

/* What says the machine failed, not the source: checked on every line
 * before any error is taken, since an out-of-memory kill also makes the
 * compiler's caller report an error. */
static const char *const infra_markers[] = {
	"No space left on device",
	"Disk quota exceeded",
	"Cannot allocate memory",
	"virtual memory exhausted",
	"out of memory allocating",
	"Killed signal terminated program",
	"internal compiler error: Killed",
	"cannot create temporary file",
	"Read-only file system",
	"Too many open files",
	"gcc: not found",
	"gcc: command not found",
	"ld: not found",
	"cannot execute binary file",
	"ccache: error:",
	NULL,
};

/* One error line's shape: a marker after "path:line[:col]: " (compiler,
 * assembler, linker with a source position) or a whole-line prefix. */
static const char *const error_markers[] = {
	"fatal error: ", "error: ", "Error: ", "undefined reference to ",
	NULL,
};

static const char *find_infra(const char *line, size_t len)
{
	for (const char *const *m = infra_markers; *m != NULL; m++) {
		if (memmem(line, len, *m, strlen(*m)) != NULL)
			return *m;
	}
	return NULL;
}

/* "path:123:45: error: msg" or "path:(.text+0x1c): undefined reference":
 * the path's end (the first ':' followed by a digit or '('), else NULL. */
static const char *position_end(const char *line, const char *marker)
{
	for (const char *p = line; p < marker; p++) {
		if (*p == ':' && (isdigit((unsigned char)p[1]) || p[1] == '('))
			return p;
		if (*p == ' ')
			return NULL;
	}
	return NULL;
}

/* Copies path relative to the source tree: srcdir/ and any leading ./
 * and ../ go (out-of-tree builds print ../fs/..., others absolute). */
static void relative_path(char *out, size_t outlen, const char *p, size_t n,
			  const char *srcdir)
{
	size_t sl = srcdir != NULL ? strlen(srcdir) : 0;

	if (sl > 0 && n > sl && strncmp(p, srcdir, sl) == 0 && p[sl] == '/') {
		p += sl + 1;
		n -= sl + 1;
	}
	for (;;) {
		if (n >= 3 && strncmp(p, "../", 3) == 0) {
			p += 3;
			n -= 3;
		} else if (n >= 2 && strncmp(p, "./", 2) == 0) {
			p += 2;
			n -= 2;
		} else {
			break;
		}
	}
	snprintf(out, outlen, "%.*s", (int)n, p);
}

/* The message without what differs between two builds of the same
 * breakage: hex addresses and offsets ("+0x1c"), and trailing blanks. */
static void normalise_message(char *out, size_t outlen, const char *m, size_t n)
{
	struct strbuf sb;

	strbuf_init(&sb, out, outlen);
	for (size_t i = 0; i < n; i++) {
		if (m[i] == '0' && i + 1 < n && m[i + 1] == 'x') {
			size_t j = i + 2;

			while (j < n && isxdigit((unsigned char)m[j]))
				j++;
			strbuf_printf(&sb, "0x?");
			i = j - 1;
			continue;
		}
		strbuf_printf(&sb, "%c", m[i]);
	}
	while (strlen(out) > 0 && isspace((unsigned char)out[strlen(out) - 1]))
		out[strlen(out) - 1] = '\0';
}

static void take_line(struct build_diag *out, const char *line, size_t len)
{
	snprintf(out->line, sizeof(out->line), "%.*s", (int)len, line);
}

/* A linker error names the object in the line before ("ld: fs/x.o: in
 * function `f':"); that object is the error's file. */
static void linker_file(struct build_diag *out, const char *prev, size_t plen,
			const char *srcdir)
{
	const char *in = memmem(prev, plen, ": in function", 13);
	const char *start;

	if (in == NULL)
		return;
	start = memmem(prev, (size_t)(in - prev), ": ", 2);
	start = start != NULL ? start + 2 : prev;
	relative_path(out->file, sizeof(out->file), start, (size_t)(in - start),
		      srcdir);
}

static int parse_error_line(struct build_diag *out, const char *line,
			    size_t len, const char *prev, size_t plen,
			    const char *srcdir)
{
	char copy[1024];
	const char *marker = NULL, *pend;
	size_t n = len < sizeof(copy) - 1 ? len : sizeof(copy) - 1;

	memcpy(copy, line, n);
	copy[n] = '\0';
	/* modpost: ERROR: modpost: "sym" [fs/ext4/ext4.ko] undefined! */
	if (strncmp(copy, "ERROR: modpost: ", 16) == 0) {
		const char *br = strchr(copy, '['), *end = br ? strchr(br, ']') : NULL;

		if (br != NULL && end != NULL)
			relative_path(out->file, sizeof(out->file), br + 1,
				      (size_t)(end - br - 1), srcdir);
		normalise_message(out->message, sizeof(out->message), copy + 7,
				  n - 7);
		return 1;
	}
	/* make: "No rule to make target" is the source's (a file the
	 * patch removed or misnamed). */
	if (strstr(copy, "*** No rule to make target") != NULL) {
		const char *m = strstr(copy, "No rule");

		normalise_message(out->message, sizeof(out->message), m, strlen(m));
		return 1;
	}
	for (const char *const *m = error_markers; *m != NULL && marker == NULL; m++)
		marker = strstr(copy, *m);
	if (marker == NULL)
		return 0;
	pend = position_end(copy, marker);
	if (strncmp(marker, "undefined reference", 19) == 0)
		linker_file(out, prev, plen, srcdir);
	if (out->file[0] == '\0' && pend != NULL)
		relative_path(out->file, sizeof(out->file), copy,
			      (size_t)(pend - copy), srcdir);
	else if (pend == NULL && (strncmp(copy, "make", 4) == 0 ||
				  strstr(copy, "*** [") != NULL))
		return 0;	/* make's echo of a failure seen before */
	normalise_message(out->message, sizeof(out->message), marker,
			  strlen(marker));
	return 1;
}

int buildlog_first_error(const char *log, size_t len, const char *srcdir,
			 struct build_diag *out)
{
	const char *p = log, *end = log + len, *prev = "";
	size_t plen = 0;
	int found = 0;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		const char *infra = find_infra(p, n);

		if (infra != NULL) {
			/* The machine failed: that is the answer, whatever
			 * error a starved compiler printed before. */
			memset(out, 0, sizeof(*out));
			out->kind = BUILD_FAIL_INFRA;
			take_line(out, p, n);
			snprintf(out->message, sizeof(out->message), "%s", infra);
			return 1;
		}
		if (!found && parse_error_line(out, p, n, prev, plen, srcdir)) {
			out->kind = BUILD_FAIL_SOURCE;
			take_line(out, p, n);
			found = 1;
		}
		prev = p;
		plen = n;
		p = nl != NULL ? nl + 1 : end;
	}
	if (!found)
		memset(out, 0, sizeof(*out));
	else
		snprintf(out->signature_text, sizeof(out->signature_text), "%s: %s",
			 out->file[0] != '\0' ? out->file : "-", out->message);
	return found;
}
