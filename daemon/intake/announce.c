/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * announce.c - turns a raw rc review announcement into struct announcement.
 * Owns the use of GMime for parsing (report.c uses it for writing); every
 * header, address, encoded word and body encoding goes through GMime, this
 * file only interprets decoded text. See intake.h's announce.c section
 * for the rules.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmime/gmime.h>

#include "base/base.h"
#include "intake/intake.h"
#include "intake_internal.h"

#define MAX_MIME_DEPTH 8	/* deeper nesting is not an announcement body */

static pthread_once_t gmime_once = PTHREAD_ONCE_INIT;

static void gmime_init_once(void)
{
	g_mime_init();
}

void announce_init(void)
{
	pthread_once(&gmime_once, gmime_init_once);
}

/* Control characters become spaces: decoded encoded-words can carry CR/LF. */
void intake_blank_controls(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

/* Copies src into dst[size]; a value that does not fit is an error, not cut. */
static int copy_field(char *dst, size_t size, const char *src,
		      const char *name, char *err, size_t errlen)
{
	size_t n = strlen(src);

	if (n >= size) {
		errf(err, errlen, "%s too long (%zu bytes, max %zu)", name,
			n, size - 1);
		return -1;
	}
	memcpy(dst, src, n + 1);
	intake_blank_controls(dst);
	return 0;
}

/* Parses exactly the digits in s[0..n) (1..9 of them) into *v. */
static int parse_digits(const char *s, size_t n, long *v)
{
	char buf[16], *end;

	if (n == 0 || n > 9)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*v = strtol(buf, &end, 10);
	return *end ? -1 : 0;
}

/*
 * Checks that s[0..n) is "X.Y.Z-rcR" and writes "X.Y" to branch[bsize].
 */
static int parse_version(const char *s, size_t n, char *branch, size_t bsize)
{
	const char *p = s, *end = s + n, *dot2 = NULL;
	long v;
	int field;

	for (field = 0; field < 3; field++) {
		const char *q = p;

		while (q < end && isdigit((unsigned char)*q))
			q++;
		if (parse_digits(p, (size_t)(q - p), &v) < 0 || q - p > 5)
			return -1;
		if (field < 2) {
			if (q >= end || *q != '.')
				return -1;
			if (field == 1)
				dot2 = q;
			p = q + 1;
		} else {
			p = q;
		}
	}
	if (end - p < 4 || memcmp(p, "-rc", 3) != 0)
		return -1;
	if (parse_digits(p + 3, (size_t)(end - p - 3), &v) < 0 || v < 1 ||
	    end - p - 3 > 3)
		return -1;
	if ((size_t)(dot2 - s) >= bsize)
		return -1;
	memcpy(branch, s, (size_t)(dot2 - s));
	branch[dot2 - s] = '\0';
	return 0;
}

/* "X.Y", small numbers only. */
int intake_is_branch(const char *s, size_t n)
{
	const char *dot = memchr(s, '.', n);
	long v;

	return dot && parse_digits(s, (size_t)(dot - s), &v) == 0 &&
	       dot - s <= 3 &&
	       parse_digits(dot + 1, (size_t)(s + n - dot - 1), &v) == 0 &&
	       s + n - dot - 1 <= 3;
}

struct subject_parts {
	char bracket_branch[16];
	long num, total;
	char version[48];
	char version_branch[16];
};

/* Splits s into whitespace-separated tokens (pointers into s), at most max. */
static size_t tokenize(const char *s, const char *end, const char **tok,
		       size_t *toklen, size_t max)
{
	size_t n = 0;

	while (s < end) {
		const char *t;

		while (s < end && isspace((unsigned char)*s))
			s++;
		if (s >= end)
			break;
		t = s;
		while (s < end && !isspace((unsigned char)*s))
			s++;
		if (n == max)
			return max + 1;
		tok[n] = t;
		toklen[n] = (size_t)(s - t);
		n++;
	}
	return n;
}

/*
 * "[PATCH 6.1 000/372] 6.1.64-rc1 review". Returns 0 and fills *sp if the
 * subject has that shape (any patch number: the caller tells the cover
 * letter from the patches), 1 if only the bracket has it (a patch of a
 * series: *sp has branch, num and total), -1 otherwise.
 */
static int parse_subject(const char *subject, struct subject_parts *sp)
{
	const char *p = subject, *close, *slash, *tok[4];
	size_t toklen[4], n;

	while (isspace((unsigned char)*p))
		p++;
	if (*p != '[' || !(close = strchr(p, ']')))
		return -1;
	n = tokenize(p + 1, close, tok, toklen, 3);
	if (n != 3 || toklen[0] != 5 || strncasecmp(tok[0], "PATCH", 5) != 0)
		return -1;
	if (!intake_is_branch(tok[1], toklen[1]) ||
	    toklen[1] >= sizeof(sp->bracket_branch))
		return -1;
	memcpy(sp->bracket_branch, tok[1], toklen[1]);
	sp->bracket_branch[toklen[1]] = '\0';
	slash = memchr(tok[2], '/', toklen[2]);
	if (!slash ||
	    parse_digits(tok[2], (size_t)(slash - tok[2]), &sp->num) < 0 ||
	    parse_digits(slash + 1, (size_t)(tok[2] + toklen[2] - slash - 1),
			 &sp->total) < 0 ||
	    sp->total < 1)
		return -1;

	sp->version[0] = '\0';
	n = tokenize(close + 1, close + 1 + strlen(close + 1), tok, toklen, 2);
	if (n != 2 || toklen[1] != 6 || strncmp(tok[1], "review", 6) != 0)
		return 1;
	if (toklen[0] >= sizeof(sp->version) ||
	    parse_version(tok[0], toklen[0], sp->version_branch,
			  sizeof(sp->version_branch)) < 0)
		return 1;
	memcpy(sp->version, tok[0], toklen[0]);
	sp->version[toklen[0]] = '\0';
	return 0;
}

/* Whether a URL the mail names may be stored: http(s), and git:// for a
 * tree. Anything else (javascript:, file:, ssh:) is an error naming it. */
static int url_scheme_ok(const char *url, int git, const char *what,
			 char *err, size_t errlen)
{
	if (url[0] == '\0' || g_ascii_strncasecmp(url, "https://", 8) == 0 ||
	    g_ascii_strncasecmp(url, "http://", 7) == 0 ||
	    (git && g_ascii_strncasecmp(url, "git://", 6) == 0))
		return 0;
	errf(err, errlen, "%s \"%.60s\" has a scheme other than http(s)%s",
	     what, url, git ? " or git" : "");
	return -1;
}

/* "Re:", "RE:", "Fwd:", "Fw:", "AW:" at the start: someone else's mail. */
static const char *reply_prefix(const char *subject)
{
	static const char *const prefixes[] = { "re:", "fwd:", "fw:", "aw:" };
	const char *p = subject;

	while (isspace((unsigned char)*p))
		p++;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncasecmp(p, prefixes[i], strlen(prefixes[i])) == 0)
			return i == 0 || i == 3 ? "reply (Re:)" : "forward (Fwd:)";
	return NULL;
}

/* "Re:" as a word anywhere ("... (was Re: [PATCH ...])"), not "Failure:". */
static int has_re_word(const char *subject)
{
	for (const char *p = subject; (p = strcasestr(p, "re:")); p++)
		if (p == subject || !isalpha((unsigned char)p[-1]))
			return 1;
	return 0;
}

/* Formats d in UTC as "2023-11-26T17:19:17Z" into out[32]. */
static int format_utc(GDateTime *d, char out[32])
{
	GDateTime *utc = g_date_time_to_utc(d);
	gchar *s;
	int rc = -1;

	if (!utc)
		return -1;
	s = g_date_time_format(utc, "%Y-%m-%dT%H:%M:%SZ");
	if (s && strlen(s) < 32) {
		memcpy(out, s, strlen(s) + 1);
		rc = 0;
	}
	g_free(s);
	g_date_time_unref(utc);
	return rc;
}

/* An RFC 2822 date ("Sun, 26 Nov 2023 17:19:17 +0000") to UTC ISO 8601. */
static int rfc2822_to_utc(const char *s, char out[32])
{
	GDateTime *d = g_mime_utils_header_decode_date(s);
	int rc;

	if (!d)
		return -1;
	rc = format_utc(d, out);
	g_date_time_unref(d);
	return rc;
}

/*
 * X-KernelTest-Deadline is ISO 8601 without seconds ("2023-11-26T17:19+00:00"),
 * which GLib's g_date_time_new_from_iso8601 rejects, so the fields are taken
 * here: YYYY-MM-DD[T ]HH:MM[:SS](Z|+HH:MM|-HH:MM|+HHMM|-HHMM).
 */
static int iso_to_utc(const char *s, char out[32])
{
	long year, mon, day, hour, min, sec = 0, tzh = 0, tzm = 0;
	const char *p = s;
	GTimeZone *tz;
	GDateTime *d;
	int sign = 1, rc;

	if (strlen(s) < 16 || parse_digits(p, 4, &year) < 0 || p[4] != '-' ||
	    parse_digits(p + 5, 2, &mon) < 0 || p[7] != '-' ||
	    parse_digits(p + 8, 2, &day) < 0 || (p[10] != 'T' && p[10] != ' ') ||
	    parse_digits(p + 11, 2, &hour) < 0 || p[13] != ':' ||
	    parse_digits(p + 14, 2, &min) < 0)
		return -1;
	p += 16;
	if (*p == ':') {
		if (parse_digits(p + 1, 2, &sec) < 0)
			return -1;
		p += 3;
	}
	if (*p == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		if (parse_digits(p + 1, 2, &tzh) < 0)
			return -1;
		p += 3;
		if (*p == ':')
			p++;
		if (parse_digits(p, 2, &tzm) < 0)
			return -1;
		p += 2;
	} else {
		return -1;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p || tzh > 14 || tzm > 59)
		return -1;
	tz = g_time_zone_new_offset(sign * (int)(tzh * 3600 + tzm * 60));
	if (!tz)
		return -1;
	d = g_date_time_new(tz, (gint)year, (gint)mon, (gint)day, (gint)hour,
			    (gint)min, (gdouble)sec);
	g_time_zone_unref(tz);
	if (!d)
		return -1;
	rc = format_utc(d, out);
	g_date_time_unref(d);
	return rc;
}

static void warning_cb(gint64 offset, GMimeParserWarning code,
		       const gchar *item, gpointer user_data)
{
	unsigned *seen = user_data;

	(void)offset;
	(void)item;
	if (code == GMIME_WARN_TRUNCATED_MESSAGE)
		*seen |= 1u;
}

/* Depth-first, the first text/plain leaf; forwarded messages are not entered. */
static GMimeTextPart *first_text_plain(GMimeObject *obj, int depth)
{
	if (!obj || depth > MAX_MIME_DEPTH)
		return NULL;
	if (GMIME_IS_MULTIPART(obj)) {
		GMimeMultipart *mp = GMIME_MULTIPART(obj);
		int n = g_mime_multipart_get_count(mp);

		for (int i = 0; i < n; i++) {
			GMimeTextPart *t =
				first_text_plain(g_mime_multipart_get_part(mp, i),
						 depth + 1);
			if (t)
				return t;
		}
		return NULL;
	}
	if (GMIME_IS_TEXT_PART(obj) &&
	    g_mime_content_type_is_type(g_mime_object_get_content_type(obj),
					"text", "plain"))
		return GMIME_TEXT_PART(obj);
	return NULL;
}

static int has_prefix(const char *s, size_t n, const char *prefix)
{
	size_t pn = strlen(prefix);

	return n >= pn && strncasecmp(s, prefix, pn) == 0;
}

static int has_suffix(const char *s, size_t n, const char *suffix)
{
	size_t sn = strlen(suffix);

	return n >= sn && memcmp(s + n - sn, suffix, sn) == 0;
}

static int is_url(const char *s, size_t n)
{
	return has_prefix(s, n, "http://") || has_prefix(s, n, "https://") ||
	       has_prefix(s, n, "git://");
}

/* Body facts; each points into the body text (not NUL-terminated). */
struct body_facts {
	char deadline[32];
	const char *patch;
	size_t patch_len;
	const char *tree, *gbranch;
	size_t tree_len, gbranch_len;
};

#define BODY_TOKENS 16

static void scan_line(const char *line, size_t len, int after_patch_intro,
		      struct body_facts *bf)
{
	static const char deadline_intro[] = "Responses should be made by ";
	const char *tok[BODY_TOKENS], *hit;
	size_t toklen[BODY_TOKENS], n;

	if (!bf->deadline[0] && len < 256 &&
	    (hit = memmem(line, len, deadline_intro,
			  sizeof(deadline_intro) - 1))) {
		char date[256];
		size_t dn = len - (size_t)(hit - line) -
			    (sizeof(deadline_intro) - 1);

		memcpy(date, hit + sizeof(deadline_intro) - 1, dn);
		while (dn > 0 && (isspace((unsigned char)date[dn - 1]) ||
				  date[dn - 1] == '.'))
			dn--;
		date[dn] = '\0';
		/* An unparseable date leaves the deadline unknown, as if absent. */
		if (rfc2822_to_utc(date, bf->deadline) < 0)
			bf->deadline[0] = '\0';
	}

	n = tokenize(line, line + len, tok, toklen, BODY_TOKENS);
	if (n > BODY_TOKENS)
		n = BODY_TOKENS;
	for (size_t i = 0; i < n; i++) {
		if (!bf->patch && is_url(tok[i], toklen[i]) &&
		    (memmem(tok[i], toklen[i], "/stable-review/patch-", 21) ||
		     after_patch_intro)) {
			bf->patch = tok[i];
			bf->patch_len = toklen[i];
		}
		if (!bf->tree && i + 1 < n && is_url(tok[i], toklen[i]) &&
		    has_suffix(tok[i], toklen[i], ".git") &&
		    has_prefix(tok[i + 1], toklen[i + 1], "linux-") &&
		    has_suffix(tok[i + 1], toklen[i + 1], ".y")) {
			bf->tree = tok[i];
			bf->tree_len = toklen[i];
			bf->gbranch = tok[i + 1];
			bf->gbranch_len = toklen[i + 1];
		}
	}
}

static void scan_body(const char *text, struct body_facts *bf)
{
	const char *p = text;
	int patch_intro = 0;	/* the previous non-empty line introduced it */

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		int blank = 1;

		for (size_t i = 0; i < len; i++)
			if (!isspace((unsigned char)p[i]))
				blank = 0;
		if (!blank) {
			scan_line(p, len, patch_intro, bf);
			patch_intro = memmem(p, len, "in one patch at:", 16) != NULL;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
}

/*
 * The head replies quote (struct announcement.head): the body's lines from
 * the first non-blank one down to the line after "Responses should be made
 * by", when that comes within ANNOUNCE_HEAD_LINES lines and the head fits
 * in out; else "" (a body of another shape is not quoted in part).
 */
static void body_head(const char *text, char *out, size_t len)
{
	static const char deadline_intro[] = "Responses should be made by ";
	const char *p = text, *end = NULL;
	int lines = 0;

	out[0] = '\0';
	while (*p == '\n' || *p == '\r' || *p == ' ' || *p == '\t')
		p++;
	for (const char *q = p; *q != '\0' && lines < ANNOUNCE_HEAD_LINES; ) {
		size_t n = strcspn(q, "\n");

		lines++;
		if (memmem(q, n, deadline_intro, sizeof(deadline_intro) - 1)) {
			const char *next = q[n] != '\0' ? q + n + 1 : q + n;
			size_t nn = strcspn(next, "\n");
			int blank = 1;

			for (size_t i = 0; i < nn; i++)
				if (!isspace((unsigned char)next[i]))
					blank = 0;
			end = blank ? q + n : next + nn;
			break;
		}
		q += n;
		if (*q != '\0')
			q++;
	}
	if (end == NULL || (size_t)(end - p) >= len)
		return;
	for (size_t i = 0, o = 0; p + i < end; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '\r')
			continue;
		if (c == '\n') {
			while (o > 0 && out[o - 1] == ' ')
				o--;	/* trailing blanks of the line */
			out[o++] = '\n';
		} else {
			out[o++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
		}
		out[o] = '\0';
	}
	g_strchomp(out);
}

/* Copies s[0..n) (not NUL-terminated) into dst[size]; too long is an error. */
static int copy_token(char *dst, size_t size, const char *s, size_t n,
		      const char *name, char *err, size_t errlen)
{
	if (n >= size) {
		errf(err, errlen, "%s too long (%zu bytes, max %zu)", name, n,
			size - 1);
		return -1;
	}
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

/* A header value that must be one token of printable ASCII; NULL if absent. */
static int header_token(GMimeMessage *msg, const char *name, const char **out,
			size_t *outlen, char *err, size_t errlen)
{
	const char *v = g_mime_object_get_header(GMIME_OBJECT(msg), name);
	const char *end;

	*out = NULL;
	*outlen = 0;
	if (!v)
		return 0;
	while (isspace((unsigned char)*v))
		v++;
	end = v + strlen(v);
	while (end > v && isspace((unsigned char)end[-1]))
		end--;
	if (end == v) {
		errf(err, errlen, "%s is empty", name);
		return -1;
	}
	for (const char *p = v; p < end; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f) {
			errf(err, errlen, "%s is not a single token", name);
			return -1;
		}
	*out = v;
	*outlen = (size_t)(end - v);
	return 0;
}

/* s is word, ignoring case and surrounding white space; NULL is not. */
static int is_word(const char *s, const char *word)
{
	size_t n = strlen(word);

	if (!s)
		return 0;
	while (isspace((unsigned char)*s))
		s++;
	if (strncasecmp(s, word, n) != 0)
		return 0;
	for (s += n; *s; s++)
		if (!isspace((unsigned char)*s))
			return 0;
	return 1;
}

/* The one check: what parsing accepts, the report's reply can use. */
int announce_valid_message_id(const char *id)
{
	if (!id || !*id)
		return 0;
	for (const unsigned char *p = (const unsigned char *)id; *p; p++)
		if (*p <= 0x20 || *p >= 0x7f || *p == '<' || *p == '>')
			return 0;
	return 1;
}

/* A decoded address list as a malloc'd string, NULL if empty. */
static char *address_list(InternetAddressList *list)
{
	char *s, *copy;

	if (!list || internet_address_list_length(list) == 0)
		return NULL;
	s = internet_address_list_to_string(list, NULL, FALSE);
	if (!s)
		return NULL;
	copy = strdup(s);
	g_free(s);
	if (copy)
		intake_blank_controls(copy);
	return copy;
}

/*
 * The sender's address when From is exactly one plain mailbox: one From
 * header, one mailbox (no group), a display name with no address-like
 * text in it ('@', '<', '>'), an address without blanks, controls, quotes
 * or brackets. Otherwise out stays "" and the mail has no sender.
 */
void intake_single_sender(GMimeMessage *msg, InternetAddressList *from,
			  char *out, size_t outlen)
{
	GMimeHeaderList *headers = g_mime_object_get_header_list(GMIME_OBJECT(msg));
	InternetAddress *a;
	const char *name, *addr;
	int n = g_mime_header_list_get_count(headers), nfrom = 0;

	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		GMimeHeader *h = g_mime_header_list_get_header_at(headers, i);

		if (g_ascii_strcasecmp(g_mime_header_get_name(h), "From") == 0)
			nfrom++;
	}
	if (nfrom != 1 || internet_address_list_length(from) != 1)
		return;
	a = internet_address_list_get_address(from, 0);
	if (!INTERNET_ADDRESS_IS_MAILBOX(a))
		return;		/* a group: "list: a@x, b@y;" */
	name = internet_address_get_name(a);
	addr = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a));
	if (name != NULL && strpbrk(name, "@<>") != NULL)
		return;
	if (addr == NULL || strlen(addr) >= outlen || strchr(addr, '@') == NULL)
		return;
	for (const char *p = addr; *p != '\0'; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f ||
		    strchr("<>\"'(),;:\\[]", *p) != NULL)
			return;
	snprintf(out, outlen, "%s", addr);
}

/* The X-KernelTest-* headers Greg's announcements carry (each NULL when
 * absent). */
struct kerneltest_headers {
	const char *ver, *branch, *tree, *patch, *deadline;
	size_t ver_len, branch_len, tree_len, patch_len, deadline_len;
};

static int read_kerneltest(GMimeMessage *msg, struct kerneltest_headers *x,
			   char *err, size_t errlen)
{
	if (header_token(msg, "X-KernelTest-Version", &x->ver, &x->ver_len, err,
			 errlen) < 0 ||
	    header_token(msg, "X-KernelTest-Branch", &x->branch, &x->branch_len,
			 err, errlen) < 0 ||
	    header_token(msg, "X-KernelTest-Tree", &x->tree, &x->tree_len, err,
			 errlen) < 0 ||
	    header_token(msg, "X-KernelTest-Patch", &x->patch, &x->patch_len,
			 err, errlen) < 0 ||
	    header_token(msg, "X-KernelTest-Deadline", &x->deadline,
			 &x->deadline_len, err, errlen) < 0)
		return -1;
	return 0;
}

/* Replies and mails without a subject are not announcements (1). */
static int not_a_reply(GMimeMessage *msg, const char *subject, char *err,
		       size_t errlen)
{
	const char *why;

	if (!subject) {
		errf(err, errlen, "no Subject");
		return 1;
	}
	if ((why = reply_prefix(subject))) {
		errf(err, errlen, "%s", why);
		return 1;
	}
	if (g_mime_object_get_header(GMIME_OBJECT(msg), "In-Reply-To") &&
	    has_re_word(subject)) {
		errf(err, errlen, "reply (In-Reply-To and Re: in the subject)");
		return 1;
	}
	return 0;
}

/* The rc's version and branch, from X-KernelTest-Version or the subject,
 * checked against the subject's bracket and X-KernelTest-Branch. */
static int take_version(GMimeMessage *msg, const char *subject,
			const struct kerneltest_headers *x,
			struct announcement *out, char *err, size_t errlen)
{
	const char *xstable = g_mime_object_get_header(GMIME_OBJECT(msg),
						       "X-stable");
	struct subject_parts sp;
	char version_branch[16];
	int subject_rc = parse_subject(subject, &sp), subject_ok;

	subject_ok = subject_rc == 0;
	if (subject_rc >= 0 && sp.num != 0) {
		errf(err, errlen,
			"patch %ld/%ld of a series, not the cover letter",
			sp.num, sp.total);
		return 1;
	}
	if (!subject_ok && !(x->ver && is_word(xstable, "review"))) {
		errf(err, errlen, "subject is not an rc review");
		return 1;
	}
	if (x->ver) {
		if (copy_token(out->version, sizeof(out->version), x->ver,
			       x->ver_len, "X-KernelTest-Version", err,
			       errlen) < 0)
			return -1;
		if (parse_version(out->version, strlen(out->version),
				  version_branch, sizeof(version_branch)) < 0) {
			errf(err, errlen,
				"X-KernelTest-Version \"%s\" is not an rc version",
				out->version);
			return -1;
		}
	} else {
		memcpy(out->version, sp.version, sizeof(out->version));
		memcpy(version_branch, sp.version_branch,
		       sizeof(version_branch));
	}
	if (subject_ok && strcmp(sp.bracket_branch, version_branch) != 0) {
		errf(err, errlen,
			"subject branch %s does not match version %s",
			sp.bracket_branch, out->version);
		return 1;
	}
	if (x->branch) {
		char want[40];

		snprintf(want, sizeof(want), "linux-%s.y", version_branch);
		if (strlen(want) != x->branch_len ||
		    memcmp(want, x->branch, x->branch_len) != 0) {
			errf(err, errlen,
				"X-KernelTest-Branch %.*s does not match version %s",
				(int)(x->branch_len > 64 ? 64 : x->branch_len),
				x->branch, out->version);
			return 1;
		}
	}
	if (copy_field(out->branch, sizeof(out->branch), version_branch,
		       "branch", err, errlen) < 0)
		return -1;
	out->npatches = subject_ok ? sp.total : -1;
	return 0;
}

/* Message-ID, Subject, From (and its one sender, if it names exactly
 * one mailbox) and Date. */
static int take_identity(GMimeMessage *msg, const char *subject,
			 InternetAddressList *from, struct announcement *out,
			 char *err, size_t errlen)
{
	const char *mid = g_mime_message_get_message_id(msg);
	GDateTime *date;
	char *s;

	if (!mid || !*mid) {
		errf(err, errlen, "no Message-ID");
		return 1;
	}
	if (!announce_valid_message_id(mid)) {
		errf(err, errlen, "Message-ID has spaces, <> or control characters");
		return -1;
	}
	if (copy_field(out->message_id, sizeof(out->message_id), mid,
		       "Message-ID", err, errlen) < 0 ||
	    copy_field(out->subject, sizeof(out->subject), subject, "Subject",
		       err, errlen) < 0)
		return -1;
	s = internet_address_list_to_string(from, NULL, FALSE);
	if (!s || copy_field(out->from, sizeof(out->from), s, "From", err,
			     errlen) < 0) {
		if (!s)
			errf(err, errlen, "From: cannot be formatted");
		g_free(s);
		return -1;
	}
	g_free(s);
	intake_single_sender(msg, from, out->from_addr, sizeof(out->from_addr));
	date = g_mime_message_get_date(msg);
	if (date && format_utc(date, out->date) < 0)
		out->date[0] = '\0';
	return 0;
}

/* A header's value, else the body's (either may be absent). */
static int header_or_body(char *dst, size_t dstlen, const char *hv,
			  size_t hlen, const char *hname, const char *bv,
			  size_t blen, const char *bname, char *err,
			  size_t errlen)
{
	if (hv)
		return copy_token(dst, dstlen, hv, hlen, hname, err, errlen);
	if (bv)
		return copy_token(dst, dstlen, bv, blen, bname, err, errlen);
	return 0;
}

/* The deadline and the sources (patch URL, git tree and branch): header
 * values win, the body's facts are the fallback. */
static int take_sources(const struct kerneltest_headers *x,
			const struct body_facts *bf, struct announcement *out,
			char *err, size_t errlen)
{
	if (x->deadline) {
		char buf[64];

		if (copy_token(buf, sizeof(buf), x->deadline, x->deadline_len,
			       "X-KernelTest-Deadline", err, errlen) < 0 ||
		    iso_to_utc(buf, out->deadline) < 0) {
			if (x->deadline_len < sizeof(buf))
				errf(err, errlen,
					"X-KernelTest-Deadline \"%s\" is not an ISO 8601 date",
					buf);
			return -1;
		}
	} else {
		memcpy(out->deadline, bf->deadline, sizeof(out->deadline));
	}
	if (header_or_body(out->patch_url, sizeof(out->patch_url), x->patch,
			   x->patch_len, "X-KernelTest-Patch", bf->patch,
			   bf->patch_len, "patch URL", err, errlen) < 0 ||
	    header_or_body(out->git_tree, sizeof(out->git_tree), x->tree,
			   x->tree_len, "X-KernelTest-Tree", bf->tree,
			   bf->tree_len, "git tree", err, errlen) < 0 ||
	    header_or_body(out->git_branch, sizeof(out->git_branch), x->branch,
			   x->branch_len, "X-KernelTest-Branch", bf->gbranch,
			   bf->gbranch_len, "git branch", err, errlen) < 0)
		return -1;
	return 0;
}

/*
 * The decisions after GMime has parsed the message: returns as
 * announce_parse() does.
 */
static int interpret(GMimeMessage *msg, struct announcement *out, char *err,
		     size_t errlen)
{
	GMimeObject *obj = GMIME_OBJECT(msg);
	InternetAddressList *from = g_mime_message_get_from(msg);
	const char *subject = g_mime_message_get_subject(msg);
	struct kerneltest_headers x = { 0 };
	struct body_facts bf;
	GMimeTextPart *text;
	char *s;
	int rc;

	if (!from || internet_address_list_length(from) == 0) {
		errf(err, errlen, "no From: address");
		return -1;
	}
	if ((rc = not_a_reply(msg, subject, err, errlen)) != 0 ||
	    (rc = read_kerneltest(msg, &x, err, errlen)) != 0 ||
	    (rc = take_version(msg, subject, &x, out, err, errlen)) != 0 ||
	    (rc = take_identity(msg, subject, from, out, err, errlen)) != 0)
		return rc;

	memset(&bf, 0, sizeof(bf));
	text = first_text_plain(g_mime_message_get_mime_part(msg), 0);
	s = text ? g_mime_text_part_get_text(text) : NULL;
	if (s) {
		scan_body(s, &bf);
		body_head(s, out->head, sizeof(out->head));
	}
	rc = take_sources(&x, &bf, out, err, errlen);
	g_free(s);
	if (rc < 0)
		return -1;
	if (url_scheme_ok(out->patch_url, 0, "patch URL", err, errlen) < 0 ||
	    url_scheme_ok(out->git_tree, 1, "git tree", err, errlen) < 0)
		return -1;
	/* An announcement starts a thread: a reply whose subject lost its
	 * "Re:" must not become one. */
	if (g_mime_object_get_header(obj, "In-Reply-To") ||
	    g_mime_object_get_header(obj, "References")) {
		errf(err, errlen, "reply (In-Reply-To or References): an"
		     " announcement starts a thread");
		return 1;
	}

	out->to = address_list(g_mime_message_get_to(msg));
	out->cc = address_list(g_mime_message_get_cc(msg));
	return 0;
}

int announce_parse(const char *raw, size_t len, struct announcement *out,
		   char *err, size_t errlen)
{
	GMimeParserOptions *opts;
	GMimeStream *stream;
	GMimeParser *parser;
	GMimeMessage *msg;
	unsigned warnings = 0;
	gint64 headers_end;
	int rc;

	errf(err, errlen, "%s", "");
	if (!out) {
		errf(err, errlen, "no output structure");
		return -1;
	}
	memset(out, 0, sizeof(*out));
	out->npatches = -1;
	if (!raw || len == 0) {
		errf(err, errlen, "empty input");
		return -1;
	}
	if (len > ANNOUNCE_MAX_INPUT) {
		errf(err, errlen, "input is %zu bytes, more than %u", len,
			ANNOUNCE_MAX_INPUT);
		return -1;
	}
	announce_init();

	stream = g_mime_stream_mem_new_with_buffer(raw, len);
	parser = g_mime_parser_new_with_stream(stream);
	g_object_unref(stream);
	opts = g_mime_parser_options_new();
	g_mime_parser_options_set_warning_callback(opts, warning_cb, &warnings);
	msg = g_mime_parser_construct_message(parser, opts);
	headers_end = g_mime_parser_get_headers_end(parser);
	g_mime_parser_options_free(opts);
	g_object_unref(parser);

	if (!msg) {
		errf(err, errlen, "not an RFC 822 message (no header block)");
		return -1;
	}
	/*
	 * A header block that runs to the end of the input is fine (a mail
	 * may have no body), but one that stops mid-line was cut off.
	 */
	if ((warnings & 1u) && headers_end < 0 && raw[len - 1] != '\n') {
		g_object_unref(msg);
		errf(err, errlen, "header block is truncated");
		return -1;
	}
	rc = interpret(msg, out, err, errlen);
	g_object_unref(msg);
	if (rc != 0)
		announce_free(out);
	return rc;
}

void announce_free(struct announcement *out)
{
	if (!out)
		return;
	free(out->to);
	free(out->cc);
	out->to = NULL;
	out->cc = NULL;
}
