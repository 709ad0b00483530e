/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * build_internal.h - what build.c, srctree.c, wtcopy.c and gitsrc.c
 * share. Nobody outside daemon/build/ includes it.
 */
#ifndef RCGATE_BUILD_INTERNAL_H
#define RCGATE_BUILD_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "build/build.h"

/* 0 when dir's filesystem has room for a tree and its objects, else -1
 * with err. */
int build_free_space_ok(const char *dir, char *err, size_t errlen);

/* ---- srctree.c ---- */
/* The tarball's tree, unpacked once under root/src (at most max_bytes)
 * and shared read-only: its path into dir. */
int tree_pristine(const struct build_source *src, const char *root,
		  long long max_bytes, char *dir, size_t dirlen, FILE *log,
		  char *err, size_t errlen);
/* A hard-link copy of from at to. */
int tree_copy(const char *from, const char *to, char *err, size_t errlen);
/* The patch as plain text at dst (decompressed if it is compressed). */
int tree_patch_plain(const char *patch, const char *dst, char *err,
		     size_t errlen);
/* Every file the plain patch touches in tree becomes a copy of its own,
 * so patch never writes through a hard link into the shared tree. */
int tree_unshare_patched(const char *plain, const char *tree, char *err,
			 size_t errlen);

/* ---- wtcopy.c ---- */
/* from copied into the directory to (which exists), with bytes of its
 * own: files, directories and symbolic links (never followed), their
 * modes and times; skip, a name at from's top left out (NULL: none);
 * o->cancelled polled at each directory. 0, or -1 with err (what was
 * copied stays, for the caller to remove). */
int tree_copy_bytes(const char *from, const char *to, const char *skip,
		    double deadline, const struct build_options *o, char *err,
		    size_t errlen);

#endif
