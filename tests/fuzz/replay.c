/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Runs each file named on the command line through LLVMFuzzerTestOneInput
 * once, so `make check` replays the fuzz corpora with gcc and sanitizers
 * but without clang's libFuzzer.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Larger than any parser cap, so oversized inputs still reach the target. */
#define REPLAY_MAX (32u << 20)

int main(int argc, char **argv)
{
	int failed = 0;

	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf;
		size_t len;

		if (f == NULL) {
			fprintf(stderr, "replay: %s: %s\n", argv[i],
				strerror(errno));
			failed = 1;
			continue;
		}
		buf = malloc(REPLAY_MAX);
		if (buf == NULL) {
			fprintf(stderr, "replay: out of memory\n");
			fclose(f);
			return 1;
		}
		len = fread(buf, 1, REPLAY_MAX, f);
		if (ferror(f)) {
			fprintf(stderr, "replay: %s: read error\n", argv[i]);
			failed = 1;
		} else {
			/* Shrink so ASan catches reads past len. */
			uint8_t *exact = realloc(buf, len ? len : 1);

			if (exact != NULL)
				buf = exact;
			LLVMFuzzerTestOneInput(buf, len);
		}
		free(buf);
		fclose(f);
	}
	printf("replay: %d file(s)\n", argc - 1);
	return failed;
}
