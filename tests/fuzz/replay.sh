#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Replays the KTAP fuzz corpus through the fuzz target (built with gcc, no
# libFuzzer needed), so every make check exercises the inputs that once
# found bugs. One TAP line per corpus file.
set -u
src=${RCGATE_SRCDIR:-.}
bin=${RCGATE_BUILDDIR:-.}/tests/fuzz/ktap_replay
n=0; i=0
files=$(ls "$src"/tests/fuzz/corpus/ktap/* "$src"/tests/data/ktap/* 2>/dev/null)
for f in $files; do n=$((n + 1)); done
echo "1..$n"
for f in $files; do
	i=$((i + 1))
	if "$bin" "$f" >/dev/null 2>&1; then echo "ok $i - $(basename "$f")"
	else echo "not ok $i - $(basename "$f")"; fi
done
