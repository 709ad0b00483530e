/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz.h - what every libFuzzer target in tests/fuzz/ shares: the entry
 * point libFuzzer (or replay.c, under gcc) calls, and check(), which turns a
 * broken invariant into a crash the fuzzer notices and minimises.
 */
#ifndef RCGATE_FUZZ_H
#define RCGATE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

/* A fixed-size char field holds a C string: a NUL within its size. */
#define check_terminated(field) \
	check(memchr((field), '\0', sizeof(field)) != NULL)

#endif
