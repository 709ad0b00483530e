#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The build budget under attack (issue 49), against a real daemon with
# [build] jobs = 2 and real makes in the sandbox: "kernel" tarballs whose
# Makefile is the attacker's, as in sandbox.sh (no kernel is built and no
# guest boots). A recipe marked + gets its build's jobserver descriptors:
# one writes 100 tokens into fd 5 while an honest build runs beside it,
# one takes a token from fd 4 and sits on it. Neither changes another
# build's parallelism nor the daemon's count; the cgroup part checks each
# build's cgroup v2 subtree and its limits where the machine has one to
# delegate, and the log line without one.
. "$(dirname "$0")/lib.sh"
echo "1..9"
if ! command -v bwrap >/dev/null; then
	for i in $(seq 1 9); do skip_test "jobserver $i" "no bwrap (scripts/setup)"; done
	exit 0
fi
start_daemon "workers = 1" "filesystems = ext4" "crash_test = 0" "attempts = 1" \
	"[build]" "timeout = 120" "jobs = 2"
MARK=rcgate-jobserver-$$-$RANDOM
all() { check "$1" sh -c "$2"; }	# all DESCRIPTION CONDITIONS (sh)

# tarball VERSION MAKEFILE [PAYLOAD]: linux-VERSION with that Makefile
# (and payload.sh); prints its sha256.
tarball() {
	local d
	d=$(mktemp -d)
	mkdir "$d/linux-$1"
	printf '%b' "$2" > "$d/linux-$1/Makefile"
	printf '%s\n' "${3:-}" > "$d/linux-$1/payload.sh"
	tar -C "$d" -cJf "$STATE/files/linux-$1.tar.xz" "linux-$1"
	rm -rf "$d"
	sha256sum "$STATE/files/linux-$1.tar.xz" | cut -c1-64
}
post_source() {	# VERSION SHA
	req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$1\",\"targets\":[\"x86_64\"],\"source\":{\"tarball\":\"file://$STATE/files/linux-$1.tar.xz\",\"tarball_sha256\":\"$2\"}}"
}
build_log() {	# VERSION -> its jobs' build.logs on stdout (a failed
	local id	# build is run again to confirm it: one after the other)
	req GET "/api/v1/releases/$1"
	for id in $(jqb '.jobs[].id'); do
		cat "$STATE"/jobs/"$id"/*/build.log 2>/dev/null
	done
}
until_logged() {	# VERSION TEXT SECONDS
	local deadline=$((SECONDS + $3))
	while [ $SECONDS -lt $deadline ]; do
		build_log "$1" | grep -q "$2" && return 0
		sleep 0.5
	done
	return 1
}
# The most traced recipes at once in a build log ("+ ns" / "- ns"
# lines; an end sorts before a start at the same instant; sort compares
# the digits, awk only counts), then how many.
at_once() {
	grep -a '^[+-] [0-9]\{19\}$' | awk '{ print $2, ($1 == "+") }' |
		sort -k1,1n -k2,2n | awk '{ c += $2 ? 1 : -1; if (c > m) m = c; n += $2 }
			END { print m + 0, n + 0 }'
}
# An honest tree: six recipes of 0.4 s in parallel, each tracing its
# start and end into the build log; then it fails (no kernel).
TRACED='tinyconfig: r1 r2 r3 r4 r5 r6\n\t@exit 1\nr1 r2 r3 r4 r5 r6:\n\t@echo "+ $$(date +%s%N)"; sleep 0.4; echo "- $$(date +%s%N)"\n%:\n\t@exit 1\n'
HOSTILE='%:\n\t+@sh ./payload.sh\n'

# 1. 100 tokens written into the jobserver, an honest build beside it.
forge=$(tarball 6.1.240 "$HOSTILE" "head -c 100 /dev/zero | tr '\\0' + >&5 && echo forged-$MARK
sleep 4
exit 1")
honest=$(tarball 6.1.241 "$TRACED")
post_source 6.1.240 "$forge"
check "the forging tree is accepted (201)" [ "$CODE" = 201 ]
until_logged 6.1.240 "forged-$MARK" 60 || diag "the forging payload did not say it ran"
post_source 6.1.241 "$honest"
wait_release 6.1.241 90
read -r most n < <(build_log 6.1.241 | at_once)
all "an honest build beside one that wrote 100 tokens runs at most its 2 jobs at once ($most of $n recipes)" \
	"[ $n -ge 6 ] && [ $((n % 6)) = 0 ] && [ $most -ge 1 ] && [ $most -le 2 ]"
wait_release 6.1.240 60
check "the daemon discarded the 100 tokens and said so (slot=N forged=100)" \
	grep -q 'jobserver: slot=[0-9]* forged=100 ' "$STATE/rcgated.log"
check "with every build out, the budget counts its 2 tokens (free=2 of 2)" \
	[ "$(grep -o 'jobserver: slot=[0-9]* out, builds=0 free=[0-9-]* of [0-9]*' "$STATE/rcgated.log" |
		tail -1 | sed 's/.*builds=0 //')" = "free=2 of 2" ]
# A build after them has the 2 jobs, no more and no fewer.
post_source 6.1.242 "$(tarball 6.1.242 "$TRACED")"
wait_release 6.1.242 90
read -r most n < <(build_log 6.1.242 | at_once)
all "the next build alone runs exactly 2 jobs at once ($most of $n recipes)" \
	"[ $n -ge 6 ] && [ $((n % 6)) = 0 ] && [ $most = 2 ]"

# 2. A token taken from fd 4 and held: another build still runs.
hold=$(tarball 6.1.243 "$HOSTILE" "head -c 1 <&4 >/dev/null && echo holding-$MARK
sleep 25
exit 1")
post_source 6.1.243 "$hold"
until_logged 6.1.243 "holding-$MARK" 60 || diag "the holding payload did not say it ran"
t0=$SECONDS
post_source 6.1.244 "$(tarball 6.1.244 "$TRACED")"
wait_release 6.1.244 20
took=$((SECONDS - t0))
read -r most n < <(build_log 6.1.244 | at_once)
req GET /api/v1/releases/6.1.243
all "a build beside one holding its tokens runs and ends in ${took}s, the holder still building" \
	"[ $n -ge 6 ] && [ $took -lt 20 ] && [ $(jqb .state) != done ]"
req POST /api/v1/releases/6.1.243/cancel -H "$(auth)"
wait_release 6.1.243 60

# 3. Each build's cgroup. This daemon runs in the test's own cgroup,
# which is not delegated to it: the log says so once, whatever it built.
nlines=$(grep -c 'cgroup: ' "$STATE/rcgated.log")
if grep -q 'cgroup: builds in' "$STATE/rcgated.log"; then
	skip_test "without a delegated cgroup the log says so once" \
		"this machine delegates the test's cgroup to rcgated"
else
	all "without a delegated cgroup the log says so once, builds keeping their rlimits ($nlines line)" \
		"[ $nlines = 1 ] && grep -q 'cgroup: .*rlimits only' $STATE/rcgated.log"
	diag "$(grep 'cgroup: ' "$STATE/rcgated.log" | head -1 | cut -d' ' -f3-)"
fi
stop_daemon

# A cgroup delegated as systemd's Delegate=yes does: a directory of the
# cgroup v2 hierarchy the daemon's user owns, with rcgated moved into it.
CGMNT=$(sed -n 's/^[^ ]* [^ ]* [^ ]* \/ \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -1)
CGSELF=$(sed -n 's/^0:://p' /proc/self/cgroup)
CG=$CGMNT${CGSELF%/}/rcgate-test.$$
if [ "$(id -u)" != 0 ] || [ -z "$DAEMON_USER" ] || [ -z "$CGMNT" ] ||
	! mkdir "$CG" 2>/dev/null; then
	why="needs root, the $DAEMON_USER user and a writable cgroup v2 hierarchy"
	skip_test "rcgated takes a delegated cgroup over for its builds" "$why"
	skip_test "a build's cgroup has the configured limits" "$why"
	exit 0
fi
trap 'cleanup; rmdir "$CG"/build-* "$CG/daemon" "$CG" 2>/dev/null' EXIT
chown "$DAEMON_USER:" "$CG" "$CG/cgroup.procs" "$CG/cgroup.subtree_control" "$CG/cgroup.threads"
start_daemon "workers = 1" "filesystems = ext4" "crash_test = 0" "attempts = 1" \
	"[build]" "timeout = 120" "jobs = 2" "cgroup_pids_max = 64" \
	"cgroup_memory_mb = 256" "cgroup_cpu_weight = 50"
echo "$DAEMON_PID" > "$CG/cgroup.procs"
post_source 6.1.245 "$(tarball 6.1.245 "$HOSTILE" "echo cg-$MARK
i=0; while [ \$i -lt 200 ]; do sleep 8 & i=\$((i + 1)); done 2>&1 | tail -1
echo forks-done-$MARK
sleep 3
exit 1")"
until_logged 6.1.245 "forks-done-$MARK" 60
limits=$(cat "$CG"/build-*/pids.max "$CG"/build-*/memory.max "$CG"/build-*/cpu.weight 2>/dev/null | tr '\n' ' ')
wait_release 6.1.245 90
if grep -q "cgroup: $CG lacks the controllers" "$STATE/rcgated.log"; then
	ok "rcgated finds its delegated cgroup ($CG) and says which controllers it lacks"
	skip_test "a build's cgroup has the configured limits" \
		"this machine's cgroup v2 has no$(grep -o 'lacks the controllers[a-z ]*' "$STATE/rcgated.log" | head -1 | sed 's/lacks the controllers//') controller (bound to cgroup v1 here)"
else
	check "rcgated takes its delegated cgroup over for builds ($CG)" \
		grep -q "cgroup: builds in $CG/build-<slot>" "$STATE/rcgated.log"
	forks=$(build_log 6.1.245 | grep -ci 'fork\|resource temporarily')
	all "a build's cgroup has the limits of [build] (pids.max memory.max cpu.weight: $limits) and a fork bomb meets them" \
		"[ '$limits' = '64 268435456 50 ' ] && [ $forks -gt 0 ]"
fi
stop_daemon
