#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Does the matrix keep the host busy? One release on the four targets with
# the full suite (every default filesystem and the crash test) and the
# daemon's default number of guests at once, timed from the POST to the
# last job's results stored, against the guests' own CPU time (each qemu
# process's, read by rcgated as it decides the boot's outcome):
#
#   ratio = wall / (sum of guest CPU seconds / cores)
#
# 1.00 means the cores did nothing but run guests. It lists the idle gaps:
# the times when fewer guests than cores were running, from the boots'
# spans in the job logs, and who else had the CPU: the host's busy time
# split into guests, rcgated (with its mkfs and libvirt helpers) and the
# rest of the machine.
#
# The same release shape runs twice: the first pays libvirt's capability
# probe per qemu binary (cached in the embed root of a long-running rcgated)
# and builds any initramfs not cached; the second is the one measured.
# BENCH_WORKERS overrides [jobs] workers (default: the daemon's default).
set -uo pipefail
# Benches measure the whole suite (lib.sh defaults tests to its smoke group).
RCGATE_SUITE=${RCGATE_SUITE:-all}
. "$(dirname "$0")/../tests/integration/lib.sh" >/dev/null
trap - EXIT
CORES=$(nproc)
have_all_kernels || { echo "bench: kernel packages missing (scripts/setup)"; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/rcgate-bench.XXXXXX")
start_daemon "attempts = 1" ${BENCH_WORKERS:+"workers = $BENCH_WORKERS"} >/dev/null 2>"$WORK/daemon.err"
trap 'stop_daemon; rm -rf "$STATE" "$WORK"' EXIT
WORKERS=$("$RCGATED" -n -v -f "$STATE/rcgated.conf" 2>/dev/null | sed -n 's/^workers = //p')
FILESYSTEMS=$("$RCGATED" -n -v -f "$STATE/rcgated.conf" 2>/dev/null | sed -n 's/^filesystems = //p')

# CPU seconds so far: rcgated's own, its reaped children's (mkfs, libvirt's
# helpers; qemu is daemonized and not among them), and the whole host's
# busy time from /proc/stat (every state but idle and iowait).
cpu_sample() {
	local hz
	hz=$(getconf CLK_TCK)
	awk -v hz="$hz" '{ sub(/^.*\) /, ""); printf "%.2f %.2f ", ($12 + $13) / hz, ($14 + $15) / hz }' "/proc/$DAEMON_PID/stat"
	awk -v hz="$hz" '$1 == "cpu" { printf "%.2f %.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / hz, ($7 + $8) / hz }' /proc/stat
}
# Every process's CPU ticks so far (pid, name, ticks): who "the rest" is.
procs_sample() {
	for f in /proc/[0-9]*/stat; do
		read -r line < "$f" 2>/dev/null || continue
		pid=${line%% *}; rest=${line#*) }; name=${line#*(}; name=${name%%)*}
		set -- $rest
		echo "$pid ${name// /_} $((${12} + ${13}))"
	done
}

release() {	# release version: submit on every target, wait; prints submit time
	local t0
	cpu_sample > "$WORK/cpu.$1.before"
	procs_sample > "$WORK/procs.$1.before"
	t0=$(date +%s.%N)
	req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$1\",\"artifacts\":$(artifacts_json)}"
	[ "$CODE" = 201 ] || { echo "bench: POST $1: $CODE $BODY" >&2; return 1; }
	python3 "$WORK/wait.py" "$BASE/api/v1/releases/$1" 1800 ||
		{ echo "bench: release $1 did not finish" >&2; return 1; }
	req GET "/api/v1/releases/$1"
	[ "$(jqb '[.jobs[] | select(.state != "done")] | length')" = 0 ] ||
		{ echo "bench: $1: $(jqb '[.jobs[] | "\(.target) \(.state) \(.error)"] | join("; ")')" >&2; return 1; }
	cpu_sample > "$WORK/cpu.$1.after"
	procs_sample > "$WORK/procs.$1.after"
	echo "$t0"
}

# The wait itself must not take the guests' CPU: lib.sh's wait_release
# runs curl and jq every second, about 60 ms of CPU each time, 2 core-s
# of a 34 s release. One process on one kept-alive connection instead.
cat > "$WORK/wait.py" <<'EOF'
import http.client, json, sys, time, urllib.parse
url, limit = urllib.parse.urlsplit(sys.argv[1]), float(sys.argv[2])
conn, deadline = http.client.HTTPConnection(url.hostname, url.port), time.monotonic() + limit
while time.monotonic() < deadline:
    conn.request("GET", url.path)
    r = conn.getresponse()
    body = r.read()
    if r.status == 200 and json.loads(body).get("state") in ("done", "infra_error", "cancelled"):
        sys.exit(0)
    time.sleep(0.5)
sys.exit(1)
EOF

cat > "$WORK/matrix.py" <<'EOF'
# The boots of a release on one time line: argv = submit time, cores,
# label, detail (0/1), then the job logs.
import os, re, sys
from datetime import datetime, timezone
t0, cores, label, detail = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
before, after = ([float(x) for x in open(f).read().split()] for f in sys.argv[5:7])
own, children, host, irq = (a - b for a, b in zip(after, before))
stamp = re.compile(r"^(\S+Z) ")
guest = re.compile(r" guest (\S+): \w+ after [0-9.]+ s \(.*define ([0-9.]+) s.*cpu (-?[0-9.]+) s; span ([0-9.]+) ([0-9.]+)\)")
def unix(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
planned_re = re.compile(r" guest (\S+) starts before the longest waiting chain")
boots, end, planned = [], t0, set()
for path in sys.argv[7:]:
    target = "?"
    for line in open(path):
        m = planned_re.search(line)
        if m:
            planned.add(m.group(1))
        m = stamp.match(line)
        if m and " time: " in line:
            end = max(end, unix(m.group(1)))
        m = re.search(r"job \d+ attempt \d+: \S+ on (\S+) ", line)
        if m:
            target = m.group(1)
        m = guest.search(line)
        if m:
            phase = "suite"
            for p in ("crash-write", "crash-verify"):
                if m.group(1).endswith(p):
                    phase = p
            boots.append((float(m.group(4)), float(m.group(5)), float(m.group(3)), float(m.group(2)), target, phase,
                          m.group(1) in planned))
wall = end - t0
cpu = sum(b[2] for b in boots)
ideal = cpu / cores
# Sweep: the number of guests running between consecutive events.
events = sorted([(b[0], 1) for b in boots] + [(b[1], -1) for b in boots])
gaps, idle, running, prev = [], 0.0, 0, t0
for t, d in events + [(end, 0)]:
    if t > prev and running < cores:
        idle += (cores - running) * (t - prev)
        if gaps and abs(gaps[-1][1] - prev) < 1e-6 and gaps[-1][2] == running:
            gaps[-1][1] = t
        else:
            gaps.append([prev, t, running])
    running += d
    prev = max(prev, t)
print("%s: wall %.2f s (submit to the last results stored), %d boots, guest CPU %.2f s,"
      " ideal wall at %d cores %.2f s; ratio wall / (guest CPU / cores) = %.3f"
      % (label, wall, len(boots), cpu, cores, ideal, wall / ideal if ideal > 0 else 0))
print("  idle core-seconds %.2f (%.1f%% of wall x cores); guest CPU / guest span %.3f"
      % (idle, 100 * idle / (wall * cores), cpu / sum(b[1] - b[0] for b in boots)))
print("  host CPU busy %.2f s: guests %.2f, rcgated %.2f (its children, mkfs and libvirt's helpers, %.2f), the rest %.2f"
      % (host, cpu, own, children, host - cpu - own - children))
# The rest: interrupt time (no process's), then the processes that
# lived through the release, biggest first (guests and rcgated aside).
def procs(path):
    out = {}
    for line in open(path):
        pid, name, ticks = line.split()
        out[(pid, name)] = int(ticks)
    return out
pb, pa = procs(sys.argv[5].replace("cpu.", "procs.")), procs(sys.argv[6].replace("cpu.", "procs."))
hz = float(os.sysconf("SC_CLK_TCK"))
others = sorted(((pa[k] - pb[k]) / hz, k[1]) for k in pa if k in pb and not k[1].startswith("qemu-system")
                and k[1] != "rcgated" and pa[k] > pb[k])[::-1]
print("  of the rest: interrupts %.2f, %s" % (irq, ", ".join("%s %.2f" % (n, t) for t, n in others[:5]) or "no process"))
if not detail:
    sys.exit(0)
print("  boots (seconds from submit; planned: started before the longest waiting chain by the plan of the end):")
print("    %-7s %-13s %7s %7s %7s %7s %7s" % ("target", "phase", "start", "end", "span", "define", "cpu"))
for b in sorted(boots):
    print("    %-7s %-13s %7.2f %7.2f %7.2f %7.2f %7.2f%s" % (b[4], b[5], b[0] - t0, b[1] - t0, b[1] - b[0], b[3], b[2],
                                                      "  planned" if b[6] else ""))
print("  idle gaps (fewer than %d guests running) of 0.05 s or more:" % cores)
print("    %7s %7s %7s %7s" % ("from", "to", "length", "guests"))
for g in gaps:
    if g[1] - g[0] >= 0.05:
        print("    %7.2f %7.2f %7.2f %7d" % (g[0] - t0, g[1] - t0, g[1] - g[0], g[2]))
EOF

analyse() {	# analyse version submit-time label detail
	local files=()
	req GET "/api/v1/releases/$1"
	for j in $(jqb '.jobs[].id'); do files+=("$STATE/jobs/$j/1/job.log"); done
	python3 "$WORK/matrix.py" "$2" "$CORES" "$3" "$4" "$WORK/cpu.$1.before" \
		"$WORK/cpu.$1.after" "${files[@]}"
}

echo "matrix: one release on four targets, filesystems $FILESYSTEMS + crash test, workers $WORKERS, $CORES cores"
t=$(release 6.1.192-rc1) || exit 1
analyse 6.1.192-rc1 "$t" "first release (fresh daemon)" 0
t=$(release 6.1.192-rc2) || exit 1
analyse 6.1.192-rc2 "$t" "second release" 1
