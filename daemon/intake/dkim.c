/* SPDX-License-Identifier: GPL-2.0-only
 *
 * dkim.c - owns the DKIM check of an announcement: the raw mail as it
 * arrived, verified by libopendkim (the only file that includes it)
 * against keys from DNS or a pinned key file, and the rules on top that
 * make a valid signature mean "this is the sender's mail": its d= is the
 * From: address's domain or a configured signer, it covers From, Subject,
 * To and Cc, it covers the whole body (no l= shorter than the body), and
 * no header a reply is built from appears twice. See intake.h.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <opendkim/dkim.h>

#include "base/base.h"
#include "intake/intake.h"

#define DKIM_MAX_SIGNATURES 4		/* more is a mail made to cost lookups */
#define DKIM_MAX_SIG_HEADER 4096	/* bytes of one DKIM-Signature header */
#define DKIM_LOOKUP_TIMEOUT 5		/* seconds for one key lookup in DNS */

/* The DKIM-Signature headers of the header block of raw[0..len): how
 * many, and the longest (with its folded lines). */
static void count_signatures(const char *raw, size_t len, unsigned *count,
			     size_t *longest)
{
	static const char name[] = "DKIM-Signature:";
	const char *p = raw, *end = raw + len, *start = NULL;

	*count = 0;
	*longest = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next = nl != NULL ? nl + 1 : end;
		int folded = *p == ' ' || *p == '\t';

		if (!folded && start != NULL) {
			if ((size_t)(p - start) > *longest)
				*longest = (size_t)(p - start);
			start = NULL;
		}
		if (*p == '\n' || (*p == '\r' && p + 1 < end && p[1] == '\n'))
			break;		/* the end of the header block */
		if (!folded && (size_t)(end - p) >= sizeof(name) - 1 &&
		    strncasecmp(p, name, sizeof(name) - 1) == 0) {
			(*count)++;
			start = p;
		}
		p = next;
	}
	if (start != NULL && (size_t)(p - start) > *longest)
		*longest = (size_t)(p - start);
}

/* Whether the colon-separated header list h (a signature's h=) names
 * header, case aside. */
static int signed_header(const char *h, const char *header)
{
	size_t n = strlen(header);

	while (h != NULL && *h != '\0') {
		size_t k;

		h += strspn(h, " \t\r\n:");
		k = strcspn(h, ":");
		while (k > 0 && isspace((unsigned char)h[k - 1]))
			k--;
		if (k == n && strncasecmp(h, header, n) == 0)
			return 1;
		h += strcspn(h, ":");
	}
	return 0;
}

/* Whether domain is the From: address's domain or one of signers. */
int announce_dkim_domain_ok(const char *domain, const char *from_addr,
			    const char *signers)
{
	const char *at = from_addr != NULL ? strrchr(from_addr, '@') : NULL;
	size_t n = domain != NULL ? strlen(domain) : 0;

	if (n == 0)
		return 0;
	if (at != NULL && strcasecmp(at + 1, domain) == 0)
		return 1;
	for (const char *p = signers != NULL ? signers : ""; *p != '\0';) {
		size_t k;

		p += strspn(p, " \t,");
		k = strcspn(p, " \t,");
		if (k == n && strncasecmp(p, domain, n) == 0)
			return 1;
		p += k;
	}
	return 0;
}

/*
 * Why the signature sig does not vouch for a (NULL when it does): it did
 * not verify, its domain is not the sender's, it leaves out a header
 * replies are built from, or it covers only part of the body.
 */
static const char *signature_problem(DKIM *d, DKIM_SIGINFO *sig,
				     const struct announcement *a,
				     const char *signers, char *buf,
				     size_t buflen)
{
	const char *domain = (const char *)dkim_sig_getdomain(sig);
	const char *h = (const char *)dkim_sig_gettagvalue(sig, 0,
							   (u_char *)"h");
	ssize_t msglen = 0, canonlen = 0, signlen = 0;
	int sigerr = dkim_sig_geterror(sig);

	if (!DKIM_SIG_CHECK(sig)) {
		snprintf(buf, buflen, "d=%.100s: %s", domain ? domain : "?",
			 dkim_sig_getbh(sig) == DKIM_SIGBH_MISMATCH
				 ? "body hash mismatch (the body changed after signing)"
				 : sigerr != DKIM_SIGERROR_OK
					   ? dkim_sig_geterrorstr(sigerr)
					   : "signature did not verify");
		return buf;
	}
	if (!announce_dkim_domain_ok(domain, a->from_addr, signers)) {
		snprintf(buf, buflen, "d=%.100s is neither the From: domain"
			 " nor in [announce] dkim_signers", domain ? domain : "");
		return buf;
	}
	if (!signed_header(h, "From") || !signed_header(h, "Subject") ||
	    (a->to != NULL && !signed_header(h, "To")) ||
	    (a->cc != NULL && !signed_header(h, "Cc"))) {
		snprintf(buf, buflen, "d=%.100s signs h=%.100s: From, Subject,"
			 " To and Cc must all be signed", domain, h ? h : "");
		return buf;
	}
	/* l= signs a prefix of the body and lets anyone append the rest;
	 * real announcements sign it whole, so any l= is refused. */
	if (dkim_sig_getcanonlen(d, sig, &msglen, &canonlen, &signlen) !=
		    DKIM_STAT_OK || signlen != (ssize_t)-1) {
		snprintf(buf, buflen, "d=%.100s signs only %zd bytes of the"
			 " body (l=): the rest could be anyone's", domain,
			 signlen);
		return buf;
	}
	return NULL;
}

/* The library with its options: the pinned key file or DNS, strict
 * headers (a second From, To, Cc or Subject is a syntax error, since
 * the signature covers only one of them), bare LFs as CRLFs. NULL with
 * err. */
static DKIM_LIB *library(const char *keyfile, char *err, size_t errlen)
{
	DKIM_LIB *lib = dkim_init(NULL, NULL);
	unsigned int flags = DKIM_LIBFLAGS_FIXCRLF | DKIM_LIBFLAGS_STRICTHDRS;
	unsigned int timeout = DKIM_LOOKUP_TIMEOUT;
	dkim_query_t method = DKIM_QUERY_FILE;

	if (lib == NULL) {
		errf(err, errlen, "libopendkim cannot be initialised");
		return NULL;
	}
	if (dkim_options(lib, DKIM_OP_SETOPT, DKIM_OPTS_FLAGS, &flags,
			 sizeof(flags)) != DKIM_STAT_OK ||
	    dkim_options(lib, DKIM_OP_SETOPT, DKIM_OPTS_TIMEOUT, &timeout,
			 sizeof(timeout)) != DKIM_STAT_OK ||
	    (keyfile != NULL && *keyfile != '\0' &&
	     (dkim_options(lib, DKIM_OP_SETOPT, DKIM_OPTS_QUERYMETHOD, &method,
			   sizeof(method)) != DKIM_STAT_OK ||
	      dkim_options(lib, DKIM_OP_SETOPT, DKIM_OPTS_QUERYINFO,
			   (void *)keyfile, strlen(keyfile)) != DKIM_STAT_OK))) {
		dkim_close(lib);
		errf(err, errlen, "libopendkim refuses its options");
		return NULL;
	}
	return lib;
}

/* Runs the verification of raw over d; the library's status. */
static DKIM_STAT run(DKIM *d, const char *raw, size_t len)
{
	DKIM_STAT st = dkim_chunk(d, (u_char *)raw, len);

	if (st == DKIM_STAT_OK)
		st = dkim_chunk(d, NULL, 0);
	if (st == DKIM_STAT_OK)
		st = dkim_eom(d, NULL);
	return st;
}

/* The verdict from the signatures libopendkim saw: the first that
 * vouches for a verifies the mail; else the first one's problem. */
static void judge(DKIM *d, const struct announcement *a, const char *signers,
		  struct announce_dkim *out)
{
	DKIM_SIGINFO **sigs = NULL;
	char why[256] = "", buf[256];
	int nsigs = 0;

	if (dkim_getsiglist(d, &sigs, &nsigs) != DKIM_STAT_OK || nsigs == 0) {
		snprintf(out->detail, sizeof(out->detail), "no DKIM-Signature");
		return;
	}
	for (int i = 0; i < nsigs; i++) {
		const char *p = signature_problem(d, sigs[i], a, signers, buf,
						  sizeof(buf));
		int e = dkim_sig_geterror(sigs[i]);

		if (p == NULL) {
			out->verified = 1;
			snprintf(out->detail, sizeof(out->detail),
				 "d=%.100s s=%.100s",
				 (const char *)dkim_sig_getdomain(sigs[i]),
				 (const char *)dkim_sig_getselector(sigs[i]));
			return;
		}
		if (e == DKIM_SIGERROR_KEYFAIL)
			out->tempfail = 1;
		if (why[0] == '\0')
			snprintf(why, sizeof(why), "%s", p);
	}
	snprintf(out->detail, sizeof(out->detail), "%s", why);
}

int announce_dkim_check(const char *raw, size_t len,
			const struct announcement *a, const char *signers,
			const char *keyfile, struct announce_dkim *out,
			char *err, size_t errlen)
{
	DKIM_STAT st = DKIM_STAT_OK;
	DKIM_LIB *lib;
	DKIM *d;
	unsigned nsig;
	size_t longest;

	memset(out, 0, sizeof(*out));
	count_signatures(raw, len, &nsig, &longest);
	if (nsig > DKIM_MAX_SIGNATURES || longest > DKIM_MAX_SIG_HEADER) {
		snprintf(out->detail, sizeof(out->detail),
			 "%u DKIM-Signature headers, the longest %zu bytes"
			 " (at most %d of %d bytes are read)", nsig, longest,
			 DKIM_MAX_SIGNATURES, DKIM_MAX_SIG_HEADER);
		return 0;
	}
	if (nsig == 0) {
		snprintf(out->detail, sizeof(out->detail), "no DKIM-Signature");
		return 0;
	}
	if ((lib = library(keyfile, err, errlen)) == NULL)
		return -1;
	d = dkim_verify(lib, (const u_char *)"rcgate", NULL, &st);
	if (d == NULL) {
		dkim_close(lib);
		errf(err, errlen, "libopendkim: %s", dkim_getresultstr(st));
		return -1;
	}
	st = run(d, raw, len);
	if (st == DKIM_STAT_SYNTAX || st == DKIM_STAT_NORESOURCE ||
	    st == DKIM_STAT_INTERNAL) {
		const char *e = dkim_geterror(d);

		snprintf(out->detail, sizeof(out->detail), "%s%s%.160s",
			 dkim_getresultstr(st), e != NULL ? ": " : "",
			 e != NULL ? e : "");
	} else {
		judge(d, a, signers, out);
	}
	dkim_free(d);
	dkim_close(lib);
	return 0;
}
