#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The corpus: real upstream direct-I/O fixes, each reverted in Debian's
# 6.1.192 (tests/kernels/corpus/<name>/revert.patch) and the tests that must
# catch the bug it fixed (<name>/expect: one "fs.test" a line, "#" lines
# are comments, the "# fix:" line names the fix). A test is believed once it
# has failed on a kernel that really had the bug.
#
# Builds the good kernel and one kernel per entry with build-kernels' recipe
# (tinyconfig + configs/x86_64.config, shared ccache), boots each through a
# real rcgated with the full suite on ext4, xfs and btrfs (a custom x86_64
# image release each), and checks: the good kernel fails nothing, every
# entry's expected tests fail on its bad kernel and pass on the good one.
# Prints a table (also written to $CORPUS_OUT, default corpus.md here) and
# exits non-zero when an entry is not caught or the good kernel fails.
#
#   bench/corpus.sh [NAME...]        (default: every entry)
#   CORPUS_NO_BUILD=1 bench/corpus.sh NAME...   boots kernels already built
#
# Not part of CI (make bench): a bad kernel takes 1-3 min to build with a
# warm ccache (a cold good build 10-15 min), each boot about a minute of TCG.
set -uo pipefail
# Benches measure the whole suite (lib.sh defaults tests to its smoke group).
RCGATE_SUITE=${RCGATE_SUITE:-all}
. "$(dirname "$0")/../tests/integration/lib.sh" >/dev/null
# CORPUS_DIR: another directory of entries (tests/kernels/candidates/).
CORPUS=${CORPUS_DIR:-$SRC/tests/kernels/corpus}
KDIR=${RCGATE_KERNELS:-/var/cache/rcgate/kernels}
OUT=${CORPUS_OUT:-corpus.md}

names=()
if [ $# -gt 0 ]; then
	names=("$@")
else
	for d in "$CORPUS"/*/; do names+=("$(basename "$d")"); done
fi
args=(--out "$KDIR" --kernel good)
for n in "${names[@]}"; do
	[ -r "$CORPUS/$n/revert.patch" ] && [ -r "$CORPUS/$n/expect" ] ||
		{ echo "corpus: no entry $n in $CORPUS" >&2; exit 2; }
	args+=(--kernel "c-$n=$CORPUS/$n/revert.patch")
done
t0=$SECONDS
if [ -n "${CORPUS_NO_BUILD:-}" ]; then
	for k in good "${names[@]/#/c-}"; do
		[ -s "$KDIR/$k/bzImage" ] || { echo "corpus: $KDIR/$k/bzImage not built" >&2; exit 1; }
	done
else
	"$SRC/tests/kernels/build-kernels" "${args[@]}" || { echo "corpus: build failed" >&2; exit 1; }
fi
echo "corpus: kernels ready in $((SECONDS - t0)) s"

start_daemon "workers = 2" "attempts = 2" "timeout = 600" "filesystems = ext4 xfs btrfs bdev"
image() {	# image KERNEL -> a custom x86_64 image artifact
	printf '{"target":"x86_64","kind":"image","url":"file://%s","sha256":"%s","custom":true}' \
		"$KDIR/$1/bzImage" "$(cat "$KDIR/$1/bzImage.sha256")"
}
# One release per kernel; versions are only labels here.
kernels=(good)
for n in "${names[@]}"; do kernels+=("c-$n"); done
declare -A version
i=0
for k in "${kernels[@]}"; do
	version[$k]=6.1.$((900 + i)); i=$((i + 1))
	req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"${version[$k]}\",\"artifacts\":[$(image "$k")]}"
	[ "$CODE" = 201 ] || { echo "corpus: release for $k refused ($CODE): $BODY" >&2; exit 1; }
done
# results KERNEL -> "fs.test status" lines, or "infra <error>"
results() {
	wait_release "${version[$1]}" 1800 || { echo "infra timeout"; return; }
	if [ "$(jqb '.jobs[0].state')" != done ]; then
		echo "infra $(jqb '.jobs[0].error_kind // "?"'): $(jqb '.jobs[0].error // ""' | head -c 120)"
		return
	fi
	jqb -r '.jobs[0].results[] | "\(.test) \(.status)"'
	# Every failure's diagnostic, of every run (reruns too), for whoever
	# reads the table: expected vs found.
	jqb -r --arg k "$1" '.jobs[] | .id as $j | .results[] | select(.status == "fail") |
		"\($k) job \($j) \(.test): \(.diagnostic // "")"' >>"$OUT.fails"
}
: >"$OUT.fails"
good=$(results good)
good_fail=$(awk '$2 == "fail" { print $1 }' <<<"$good" | tr '\n' ' ')
status=0
{
	echo "| entry | fix | expected to fail | bad kernel | good kernel | caught |"
	echo "|---|---|---|---|---|---|"
	for n in "${names[@]}"; do
		fix=$(sed -n 's/^# fix: //p' "$CORPUS/$n/expect" | head -1)
		mapfile -t want < <(grep -v '^#' "$CORPUS/$n/expect" | grep .)
		bad=$(results "c-$n")
		bad_cells= good_cells= caught=yes
		if grep -q '^infra' <<<"$bad"; then
			bad_cells=$bad caught="no (infra)"
		else
			for t in "${want[@]}"; do
				b=$(awk -v t="$t" '$1 == t { print $2 }' <<<"$bad")
				g=$(awk -v t="$t" '$1 == t { print $2 }' <<<"$good")
				bad_cells="$bad_cells ${t}=${b:-missing}"
				good_cells="$good_cells ${t}=${g:-missing}"
				[ "$b" = fail ] && [ "$g" = pass ] || caught=no
			done
			others=$(awk '$2 == "fail" { print $1 }' <<<"$bad" | grep -vxF -f <(printf '%s\n' "${want[@]}") | tr '\n' ' ')
			[ -z "$others" ] || bad_cells="$bad_cells; also failing: $others"
		fi
		[ "$caught" = yes ] || status=1
		echo "| $n | $fix | ${want[*]} | $bad_cells | $good_cells | $caught |"
	done
	echo
	echo "good kernel: $(grep -c ' pass$' <<<"$good") pass, $(grep -c ' fail$' <<<"$good") fail, $(grep -c ' skip$' <<<"$good") skip${good_fail:+; failing: $good_fail}"
	good_skip=$(awk '$2 == "skip" { print $1 }' <<<"$good" | tr '\n' ' ')
	[ -z "$good_skip" ] || echo "good kernel skips: $good_skip"
} | tee "$OUT"
[ -z "$good_fail" ] || status=1
if grep -q '^infra' <<<"$good"; then status=1; fi
exit $status
