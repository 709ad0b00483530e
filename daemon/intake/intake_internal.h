/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * intake_internal.h - what announce.c lends series.c (the patch mails of
 * a series are read with the announcement's rules). Nobody outside
 * daemon/intake/ includes it.
 */
#ifndef RCGATE_INTAKE_INTERNAL_H
#define RCGATE_INTAKE_INTERNAL_H

#include <stddef.h>

#include <gmime/gmime.h>

/* Control characters become spaces: decoded encoded-words can carry
 * CR/LF. */
void intake_blank_controls(char *s);
/* "X.Y", small numbers only. */
int intake_is_branch(const char *s, size_t n);
/* The sender's address when From is exactly one plain mailbox, else "". */
void intake_single_sender(GMimeMessage *msg, InternetAddressList *from,
			  char *out, size_t outlen);

/* series.c: msg read as a patch of a series (announce_parse_patch's
 * rules): 0 with out filled, 1 if it is not one (err says why). */
struct series_patch;
int series_patch_of(GMimeMessage *msg, struct series_patch *out, char *err,
		    size_t errlen);

#endif
