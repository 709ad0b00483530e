#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Replays every fuzz corpus, tests/fuzz/corpus/<target>/, through that
# target's replay program (tests/fuzz/<target>_replay, built with gcc, no
# libFuzzer needed), so every make check runs what a corpus keeps: real
# inputs, what libFuzzer found that reaches new code (found-*), and the
# minimised input of each fixed bug (crash-*; tests/fuzz/README.md). Some
# targets also replay the golden files of their parser (tests/data/ktap,
# mail, config). One TAP line per file; a target whose program was not
# built is a failure, not a skip.
set -u
src=${RCGATE_SRCDIR:-.}
build=${RCGATE_BUILDDIR:-.}
# Undefined behaviour fails the replay as it fails the fuzzer.
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export UBSAN_OPTIONS

golden() {
	case $1 in
	ktap) echo "$src/tests/data/ktap" ;;
	announce) echo "$src/tests/data/mail" ;;
	config) echo "$src/tests/data/config" ;;
	esac
}

# "target file" pairs, one a line; corpus names have no blanks.
list=$(for dir in "$src"/tests/fuzz/corpus/*/; do
	t=$(basename "$dir")
	for f in "$dir"* $(g=$(golden "$t"); [ -n "$g" ] && ls "$g"/* 2>/dev/null); do
		[ -f "$f" ] && echo "$t $f"
	done
done)
n=$(printf '%s\n' "$list" | grep -c .)
echo "1..$n"
i=0
printf '%s\n' "$list" | while read -r t f; do
	[ -n "$t" ] || continue
	i=$((i + 1))
	if "$build/tests/fuzz/${t}_replay" "$f" >/dev/null 2>&1; then
		echo "ok $i - $t/$(basename "$f")"
	else
		echo "not ok $i - $t/$(basename "$f")"
	fi
done
