#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# rcgated's memory, idle and as releases accumulate (issue 29): the goal
# is its own part <= 5 MiB beyond libvirt's embedded driver when idle, and
# <= 64 MiB resident after a week of releases.
#
# One daemon, as a lab runs it: its idle RSS against bench/rssfloor (a
# process that only opens libvirt's embedded driver), then BENCH_RELEASES
# (default 8) releases of the four Debian 6.1 kernels (ext4 suite, no
# crash test: the guests' work is not what is measured), and after each
# one: RSS (anonymous and file-backed), threads, the main heap and glibc's
# thread arenas (64 MiB-aligned anonymous heaps), and the largest
# anonymous mappings. At the end, with gdb if it is installed, what
# malloc_trim(0) gives back: memory malloc holds free, not data rcgated
# keeps. BENCH_ARENAS sets MALLOC_ARENA_MAX for the daemon (rcgated sets
# M_ARENA_MAX 2 itself unless told otherwise by that variable).
set -uo pipefail
# Benches measure the whole suite (lib.sh defaults tests to its smoke group;
# this bench lacked the line until 2026-12-06, so its earlier rounds ran
# the smoke group: bench/README.md).
RCGATE_SUITE=${RCGATE_SUITE:-all}
. "$(dirname "$0")/../tests/integration/lib.sh" >/dev/null
trap - EXIT
N=${BENCH_RELEASES:-8}
have_all_kernels || { echo "bench: kernel packages missing (scripts/setup)"; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/rcgate-bench-memory.XXXXXX")
chmod 755 "$WORK"	# the daemon's user keeps its cache there
export RCGATE_TEST_CACHE=$WORK/cache
[ -n "${BENCH_ARENAS:-}" ] && export MALLOC_ARENA_MAX=$BENCH_ARENAS
start_httpd "$KERNEL_CACHE" >/dev/null
# The clients all come from 127.0.0.1: the per-address limit (64) would
# turn most of them away, as it should one real client.
start_daemon "workers = 2" "attempts = 1" "filesystems = ext4" "crash_test = 0" \
	"timeout = 600" "[daemon]" "max_connections_per_ip = 512" >"$WORK/daemon.out" 2>&1
unset MALLOC_ARENA_MAX
trap 'stop_daemon; stop_httpd; rm -rf "$STATE" "$WORK"' EXIT

memory() {	# WHEN
	python3 "$SRC/bench/memory.py" "$DAEMON_PID" "$1"
}

sleep 5
memory "idle, fresh"
floor_dir=$(mktemp -d)
[ -x "$BUILD/bench/rssfloor" ] || make -C "$BUILD" bench/rssfloor >/dev/null 2>&1
if [ -x "$BUILD/bench/rssfloor" ] &&
   read -r floor _ _ _ < <("$BUILD/bench/rssfloor" "$floor_dir") && [ -n "$floor" ]; then
	idle=$(awk '/^VmRSS/ { print $2 }' "/proc/$DAEMON_PID/status")
	printf 'libvirt embedded floor (bench/rssfloor) %.1f MiB; rcgated idle beyond it %.1f MiB (goal <= 5)\n' \
		"$(echo "$floor / 1024" | bc -l)" "$(echo "($idle - $floor) / 1024" | bc -l)"
fi
rm -rf "$floor_dir"
arts=$(artifacts_json "$HTTPD_URL/files" | jq -c 'map(. + {custom: true})')
t0=$SECONDS
for i in $(seq 1 "$N"); do
	v=6.1.192-rc$i
	req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$v\",\"artifacts\":$arts}"
	[ "$CODE" = 201 ] || { echo "bench: POST $v: $CODE $BODY"; continue; }
	wait_release "$v" 1800 || echo "bench: $v did not finish"
	req GET "/api/v1/releases/$v"
	memory "after $i ($(jqb '[.jobs[] | select(.state == "done")] | length')/4 done)"
	jqb -r '.jobs[] | select(.state != "done") | "  job \(.id) \(.target) \(.state): \(.error // "")"' | head -n 4
done
echo "($N releases in $((SECONDS - t0)) s; load average $(cut -d' ' -f1-3 /proc/loadavg))"
sleep 10
memory "idle after $N"
# BENCH_CLIENTS (default 300) keep-alive connections held at once: two
# thirds idle between requests, a third slow readers of a large answer
# (the last release's KCIDB JSON, BENCH_SLOW_PATH), each with rcgated's response unsent (bench/clients.py).
C=${BENCH_CLIENTS:-300}
if [ "$C" -gt 0 ]; then
	slow=$((C / 3))
	coproc CLIENTS { exec python3 "$SRC/bench/clients.py" "$PORT" "$((C - slow))" "$slow" \
		"${BENCH_SLOW_PATH:-/api/v1/releases/$v/kcidb.json}" 25 2>&1; }
	while read -r -t 120 line <&"${CLIENTS[0]}"; do
		echo "clients: $line"
		case $line in ready*) break ;; esac
	done
	sleep 5
	memory "with $C clients"
	read -r -t 60 line <&"${CLIENTS[0]}" && echo "clients: $line"
	wait "$CLIENTS_PID" 2>/dev/null
	sleep 5
	memory "after the $C clients left"
fi
if command -v gdb >/dev/null; then
	gdb -p "$DAEMON_PID" -batch -ex 'call (int) malloc_trim(0)' >/dev/null 2>&1
	memory "after malloc_trim(0)"
fi
