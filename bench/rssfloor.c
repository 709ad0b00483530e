/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rssfloor - the peer of rcgated's idle RSS in bench/api.sh: a process
 * that does only what rcgated must do with libvirt before any job (load
 * it, initialise it with an event loop thread, open the embedded QEMU
 * driver and list domains for orphans) and then idles, printing its RSS
 * and how much of it is file-backed (shared library pages), then the same
 * two figures as they were before the driver was opened (libvirt loaded
 * and initialised only). rcgated's own cost is its RSS minus the first.
 *
 *   rssfloor STATE_DIR
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libvirt/libvirt.h>

static void *event_loop(void *arg)
{
	(void)arg;
	for (;;)
		virEventRunDefaultImpl();
	return NULL;
}

static long status_kib(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, key, strlen(key)) == 0)
			v = strtol(line + strlen(key) + 1, NULL, 10);
	}
	if (f != NULL)
		fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	char uri[4096];
	virConnectPtr conn;
	virDomainPtr *doms = NULL;
	pthread_t t;
	long loaded, loaded_file;
	int n;

	if (argc != 2) {
		fprintf(stderr, "usage: rssfloor STATE_DIR\n");
		return 2;
	}
	snprintf(uri, sizeof(uri), "qemu:///embed?root=%s/libvirt", argv[1]);
	if (virInitialize() < 0 || virEventRegisterDefaultImpl() < 0 ||
	    pthread_create(&t, NULL, event_loop, NULL) != 0)
		return 1;
	sleep(1);
	loaded = status_kib("VmRSS:");
	loaded_file = status_kib("RssFile:");
	conn = virConnectOpen(uri);
	if (conn == NULL) {
		fprintf(stderr, "rssfloor: cannot open %s\n", uri);
		return 1;
	}
	n = virConnectListAllDomains(conn, &doms, 0);
	for (int i = 0; i < n; i++)
		virDomainFree(doms[i]);
	free(doms);
	sleep(2);
	printf("%ld %ld %ld %ld\n", status_kib("VmRSS:"),
	       status_kib("RssFile:"), loaded, loaded_file);
	return 0;
}
