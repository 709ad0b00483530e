/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libFuzzer target for config_parse() (daemon/config.c): one input is one
 * configuration file. Besides "no crash, no leak" it checks that an error
 * names the file and line, that an accepted file leaves every string
 * directive set, and that the configuration survives a round trip through
 * config_dump(), the text `rcgated -n -v` prints: parsing that text again
 * gives the same configuration.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "base/base.h"

/* config_dump() into a malloc'd string; NULL only when out of memory. */
static char *dump(const struct config *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return NULL;
	config_dump(c, f);
	fclose(f);
	return text;
}

static void check_strings_set(const struct config *c)
{
	const char *const strings[] = {
		c->state_dir, c->cache_dir, c->listen, c->log_file,
		c->log_level, c->agent_dir, c->libvirt_uri, c->accel,
		c->filesystems, c->farm, c->public_url, c->mail_from,
		c->smtp_url, c->webhook_url, c->webhook_secret, c->maildir,
		c->web_dir,
	};

	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
		check(strings[i] != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c, again;
	char err[512], *text, *first, *second, *uri;
	int rc;

	/* config_load() hands config_parse a NUL-terminated file. */
	text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	config_defaults(&c);
	err[0] = '\0';
	rc = config_parse(&c, text, "fuzz.conf", err, sizeof(err));
	free(text);
	check(rc == 0 || rc == -1);
	check_terminated(err);
	if (rc < 0) {
		check(strncmp(err, "fuzz.conf:", 10) == 0);
		config_free(&c);
		return 0;
	}
	check_strings_set(&c);
	check(c.port >= 0 && c.port <= 65535);
	check(c.workers >= 1 && c.attempts >= 1 && c.max_body_kb >= 1);
	check(strcmp(c.accel, "auto") == 0 || strcmp(c.accel, "tcg") == 0 ||
	      strcmp(c.accel, "kvm") == 0);
	uri = config_libvirt_uri(&c);
	check(uri != NULL);
	free(uri);

	first = dump(&c);
	check(first != NULL);
	config_defaults(&again);
	err[0] = '\0';
	rc = config_parse(&again, first, "dump", err, sizeof(err));
	check(rc == 0);
	second = dump(&again);
	check(second != NULL && strcmp(first, second) == 0);
	free(first);
	free(second);
	config_free(&again);
	config_free(&c);
	return 0;
}
