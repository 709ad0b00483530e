/* SPDX-License-Identifier: GPL-2.0-only
 *
 * recipients.c - owns the cap on who a reply to an announcement reaches:
 * its sender, To and Cc, each address once, at most [announce]
 * max_recipients. A mail with 300 addresses in Cc makes a reply to the
 * first few, not a mail to 300 people. GMime parses the lists.
 */
#include <stdlib.h>
#include <string.h>

#include <gmime/gmime.h>

#include "base/base.h"
#include "intake/intake.h"

/* The plain mailbox address of a, or NULL (a group, or an address with
 * blanks, controls or brackets, which no reply should be sent to). */
static const char *mailbox_addr(InternetAddress *a)
{
	const char *addr;

	if (!INTERNET_ADDRESS_IS_MAILBOX(a))
		return NULL;
	addr = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a));
	if (addr == NULL || strchr(addr, '@') == NULL)
		return NULL;
	for (const char *p = addr; *p != '\0'; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f ||
		    strchr("<>\"(),;:\\[]", *p) != NULL)
			return NULL;
	return addr;
}

/* Whether list has a mailbox with addr, case aside. */
static int has_addr(InternetAddressList *list, const char *addr)
{
	int n = internet_address_list_length(list);

	for (int i = 0; i < n; i++) {
		const char *have = mailbox_addr(
			internet_address_list_get_address(list, i));

		if (have != NULL && g_ascii_strcasecmp(have, addr) == 0)
			return 1;
	}
	return 0;
}

/* Moves src's new mailboxes into dst while seen has fewer than max;
 * the number left out for the cap. */
static long take(InternetAddressList *dst, InternetAddressList *seen,
		 const char *src, long max)
{
	InternetAddressList *list;
	long dropped = 0;
	int n;

	if (src == NULL || *src == '\0')
		return 0;
	list = internet_address_list_parse(NULL, src);
	if (list == NULL)
		return 0;
	n = internet_address_list_length(list);
	for (int i = 0; i < n; i++) {
		InternetAddress *a = internet_address_list_get_address(list, i);
		const char *addr = mailbox_addr(a);

		if (addr == NULL || has_addr(seen, addr))
			continue;
		if (internet_address_list_length(seen) >= max) {
			dropped++;
			continue;
		}
		internet_address_list_add(seen, a);
		internet_address_list_add(dst, a);
	}
	g_object_unref(list);
	return dropped;
}

/* list as a malloc'd string, NULL when empty. */
static char *list_string(InternetAddressList *list)
{
	char *s, *copy;

	if (internet_address_list_length(list) == 0)
		return NULL;
	s = internet_address_list_to_string(list, NULL, FALSE);
	copy = s != NULL ? strdup(s) : NULL;
	g_free(s);
	return copy;
}

long announce_recipients(const char *from, const char *to, const char *cc,
			 long max, char **to_out, char **cc_out)
{
	InternetAddressList *seen, *tl, *cl, *fl;
	long dropped;

	announce_init();
	seen = internet_address_list_new();
	tl = internet_address_list_new();
	cl = internet_address_list_new();
	fl = internet_address_list_new();
	dropped = take(fl, seen, from, max);
	dropped += take(tl, seen, to, max);
	dropped += take(cl, seen, cc, max);
	*to_out = list_string(tl);
	*cc_out = list_string(cl);
	g_object_unref(seen);
	g_object_unref(tl);
	g_object_unref(cl);
	g_object_unref(fl);
	return dropped;
}
