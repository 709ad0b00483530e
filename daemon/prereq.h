/* SPDX-License-Identifier: GPL-2.0-only */
/* prereq.c: the upstream commits a culprit backport may need (a hint). */
#ifndef RCGATE_PREREQ_H
#define RCGATE_PREREQ_H

#include <stddef.h>

#define PREREQ_NAME 64		/* longest identifier kept */
#define PREREQ_PATH 256
#define PREREQ_FILES 32
#define PREREQ_FUNCS 48
#define PREREQ_CALLS 96
#define PREREQ_MEMBERS 48
#define PREREQ_MAX 10		/* candidates listed */

/* What a change touches, read from its unified diff with function
 * context (git -W): the files, the functions it changes (each hunk holds
 * whole functions: their definition lines at column 0), the functions
 * its changed lines call, the struct members they use (->x, .x), and
 * what any line of its hunks calls through a member (->x(): "indirect").
 * Comments and string literals are not read; the
 * commonest helpers (kfree, IS_ERR, spin_lock, ...) are left out. The
 * fingerprint is a patch-id: SHA-256 of the files and changed lines
 * without whitespace or line numbers, so the same change applied at
 * another offset (a backport) has the same one. */
struct prereq_sig {
	char files[PREREQ_FILES][PREREQ_PATH];
	char funcs[PREREQ_FUNCS][PREREQ_NAME];
	char calls[PREREQ_CALLS][PREREQ_NAME];
	char members[PREREQ_MEMBERS][PREREQ_NAME];
	char indirect[PREREQ_MEMBERS][PREREQ_NAME];	/* ->x( in its hunks */
	/* Filled by the search, not the scan: the struct members the
	 * culprit's functions are assigned to (".end_io = ext4_dio_write_end_io"
	 * makes ext4_dio_write_end_io an implementation of ->end_io). */
	char impl_member[8][PREREQ_NAME], impl_func[8][PREREQ_NAME];
	size_t nfiles, nfuncs, ncalls, nmembers, nindirect, nimpl;
	char fingerprint[65];	/* "" for a diff with no changed line */
};
void prereq_scan(const char *diff, size_t len, struct prereq_sig *sig);
/* How strongly cand relates to the culprit: shared files (3 each), a
 * function the culprit calls that cand changes (4), code that calls an
 * operation the culprit implements (4), a function both change (3), one
 * the culprit changes that cand calls (2), members both use (1 each, at
 * most 3). 0: unrelated. why gets the reasons in words
 * ("changes generic_write_sync(), which the culprit calls; ..."). */
int prereq_score(const struct prereq_sig *culprit, const struct prereq_sig *cand,
		 char *why, size_t whylen);

/* The search in the cached clones updir (upstream) and stdir (stable):
 * the commits of v<base>..upstream in updir that relate to culprit (a
 * commit of stdir) and that stdir's v<base>..bad lacks, as a JSON array
 * ([{commit, subject, score, why}], best first, at most PREREQ_MAX) in
 * *list; msg says what was searched. 0, or -1 with msg saying why
 * nothing could be (no such commit or tag, git failed). */
struct build_options;
struct json_t;
int prereq_search(const char *updir, const char *stdir, const char *culprit,
		  const char *upstream, const char *base, const char *bad,
		  const struct build_options *o, struct json_t **list,
		  char *msg, size_t msglen);

/* The search (prereq_run_once: the prerequisite thread's pass) and the
 * thread itself: started only with [bisect] upstream_git. */
struct config;
struct store;
int prereq_run_once(struct store *, const struct config *, const char *cache_dir);
int prereq_start(const struct config *, const char *db_path,
		 const char *cache_dir, char *err, size_t errlen);
void prereq_kick(void);
void prereq_stop(void);

#endif /* RCGATE_PREREQ_H */
