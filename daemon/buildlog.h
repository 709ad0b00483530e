/* SPDX-License-Identifier: GPL-2.0-only */
/* buildlog.c: the first error of a kbuild log, and whose failure it is. */
#ifndef RCGATE_BUILDLOG_H
#define RCGATE_BUILDLOG_H

#include <stddef.h>

enum build_failure {
	BUILD_FAIL_SOURCE,	/* the tree does not build: a result */
	BUILD_FAIL_INFRA,	/* no disk, memory or toolchain: infra error */
};

struct build_diag {
	enum build_failure kind;
	char file[256];		/* relative to the source tree; "" if none */
	char message[512];	/* "error: ..." without positions or addresses */
	char line[1024];	/* the line as the log has it, for reports */
	char signature_text[800];	/* "file: message": equal for the same
					 * breakage in any tree or build dir */
};

/* Reads len bytes of a build log; srcdir (may be NULL) is the source
 * tree's absolute path, cut from the paths the log prints. Returns 1 with
 * out filled if it found an error or an infra failure (an infra failure
 * anywhere wins), 0 if it recognised none (out zeroed). */
int buildlog_first_error(const char *log, size_t len, const char *srcdir,
			 struct build_diag *out);

#endif
