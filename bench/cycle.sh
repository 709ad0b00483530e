#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A stable week on this machine (issue 29): how long after the announcement
# mails do rcgated's replies arrive, against the CPU the week needs?
#
# The stable-rc-like tree of tests/integration/gitlib.sh (Debian's
# linux-source-6.1 as 6.1.192) grown to three branches, served by a real
# git daemon: linux-6.1.y, linux-6.6.y and linux-6.12.y (the same sources,
# versioned v6.6.63 and v6.12.3), and an upstream tree ([bisect]
# upstream_git) holding the culprit's upstream commit. Before the weeks,
# untimed, the three releases are tested (the baselines a lab has).
#
#   week 1, cold: the compiler cache, clones and worktrees emptied (the
#     store kept). Announced by mail at once: 6.1.193-rc1 (the 936e114a245b
#     revert backported: the ext4 regression, bisected to its culprit with
#     the prerequisite search), 6.6.64-rc1 and 6.12.4-rc1 (harmless).
#   week 2, warm: the previous week's caches kept. 6.1.193-rc2 (the
#     culprit reverted, a harmless backport), 6.6.64-rc2 (the same culprit
#     backported: bisected on linux-6.6.y) and 6.12.4-rc2.
#
# Each rc is built from git for CYCLE_TARGETS (default x86_64; "x86_64
# i386 arm64 armv7" for the four) and tested with the whole suite
# (CYCLE_FILESYSTEMS, default all; crash test on). Printed per week:
#   - minutes from the first mail to each reply (the report, each
#     follow-up naming a culprit) and to the last one;
#   - the CPU-bound limit: CPU seconds of rcgated and everything it ran
#     (builds, git, mkfs) and of its guests (qemu), divided by the cores;
#     read every second from a cgroup of its own (cpuacct.usage, or
#     cpu.stat's usage_usec with cgroup v2) when the bench may make one,
#     else summed over its process tree from /proc; wall / limit,
#     and the idle gaps (fewer cores busy with our work than there are);
#     the CPU that was not ours split into the machine's idle cores and
#     others' use (/proc/stat), with wall / ((ours + others') / cores),
#     and others' use into steal, the bench's own processes (its shell,
#     git daemon, smtpd, sampler) and the rest (kernel threads, others);
#   - bytes the week's fetches added to the cached clone.
# CYCLE_KEEP=DIR keeps rcgated's log, the CPU samples and the store there
# (the work dir is removed at the end).
# The machine's other load is printed too: the limit counts our CPU only,
# the wall is what the shared machine gave us.
#
# Needs linux-source-6.1, git, the Debian kernels and agents of
# scripts/setup. x86_64 alone: about an hour on 2 cores; the four targets
# several hours (CYCLE_WEEKS=cold or warm runs one week only, after the
# baselines).
set -uo pipefail
# Benches measure the whole suite (lib.sh defaults tests to its smoke group;
# this bench lacked the line until 2026-12-06, so its earlier rounds ran
# the smoke group: bench/README.md).
RCGATE_SUITE=${RCGATE_SUITE:-all}
. "$(dirname "$0")/../tests/integration/lib.sh" >/dev/null
. "$(dirname "$0")/../tests/integration/gitlib.sh"
trap - EXIT
TARGETS=${CYCLE_TARGETS:-x86_64}
WEEKS=${CYCLE_WEEKS:-cold warm}
FILESYSTEMS=${CYCLE_FILESYSTEMS:-}
CORES=$(nproc)
[ -r /usr/src/linux-source-6.1.tar.xz ] || { echo "bench: no linux-source-6.1 (scripts/setup)"; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/rcgate-bench-cycle.XXXXXX")
chmod 755 "$WORK"
SRV=$WORK/srv
mkdir -p "$SRV"
# A cache of its own: "cold" means empty, and other tests keep theirs.
export RCGATE_TEST_CACHE=$WORK/cache
CACHE=$RCGATE_TEST_CACHE
T=$(printf '\t')
IOMAP=fs/iomap/direct-io.c
targets_json=$(printf '%s\n' $TARGETS | jq -R . | jq -sc .)

git_serve_repo "$SRV" linux-stable-rc || { echo "bench: no git fixture"; exit 1; }
git_serve_repo "$SRV" linux || { echo "bench: no upstream fixture"; exit 1; }
REPO=$SRV/linux-stable-rc.git UP=$SRV/linux.git
good=$(GIT_DIR=$REPO git rev-parse refs/heads/linux-6.1.y)
GIT_DIR=$UP git update-ref refs/heads/master "$good"
GIT_DIR=$UP git tag v6.1 "$good"
git_commit "$UP" master "iomap: say where the I/O began" "" \
	"sed:$IOMAP:s|^${T}loff_t offset = iocb->ki_pos;\$|${T}loff_t offset = iocb->ki_pos;${T}/* where the I/O began */|" >/dev/null
UPSTREAM=$(git_commit "$UP" master "ext4: properly sync file size update after O_DIRECT write" \
	"(rcgate's bench tree: reverting 936e114a245b stands in for the change.)" \
	"patch:$SRC/tests/kernels/936e114a245b-revert.patch")
branch_from() {	# BRANCH PATCHLEVEL SUBLEVEL: a branch at "Linux 6.P.S", tagged
	GIT_DIR=$REPO git update-ref "refs/heads/$1" "$good"
	local c
	c=$(git_commit "$REPO" "$1" "Linux 6.$2.$3" "" \
		"sed:Makefile:s/^PATCHLEVEL = .*/PATCHLEVEL = $2/;s/^SUBLEVEL = .*/SUBLEVEL = $3/;s/^EXTRAVERSION =.*/EXTRAVERSION =/") || return 1
	GIT_DIR=$REPO git tag "v6.$2.$3" "$c"
	echo "$c"
}
v6163=$good
v6663=$(branch_from linux-6.6.y 6 63)
v6123=$(branch_from linux-6.12.y 12 3)
harmless() {	# BRANCH N: a harmless backport (a comment in a built file)
	git_commit "$REPO" "$1" "mm: a comment ($1 #$2)" \
		"commit $(printf '%040d' "$2") upstream." "sed:mm/mmap.c:1s|\$| /* $1 $2 */|" >/dev/null
}
culprit_on() {	# BRANCH: the backport of UPSTREAM that regresses ext4
	git_commit "$REPO" "$1" "ext4: properly sync file size update after O_DIRECT write" \
		"commit $UPSTREAM upstream." "patch:$SRC/tests/kernels/936e114a245b-revert.patch"
}
rc_on() {	# BRANCH PATCHLEVEL SUBLEVEL RC
	git_commit "$REPO" "$1" "Linux 6.$2.$3-rc$4" "" \
		"sed:Makefile:s/^SUBLEVEL = .*/SUBLEVEL = $3/;s/^EXTRAVERSION =.*/EXTRAVERSION = -rc$4/" >/dev/null
}
git_daemon "$SRV" || { echo "bench: git daemon"; exit 1; }
URL=$GIT_URL/linux-stable-rc.git

start_smtpd
cleanup_bench() {
	stop_sampler
	stop_daemon
	stop_smtpd
	stop_git_daemon
	# What a round's timings can be read from afterwards (the job rows,
	# rcgated's log, the CPU samples), kept when CYCLE_KEEP names a dir.
	if [ -n "${CYCLE_KEEP:-}" ] && mkdir -p "$CYCLE_KEEP"; then
		if cp -p "$WORK"/daemon.out "$WORK"/cpu.* "$WORK"/jobs.json \
			"$STATE"/rcgate.db "$CYCLE_KEEP"/ 2>/dev/null; then
			echo "bench: logs, samples and the store kept in $CYCLE_KEEP"
		else
			echo "bench: some of the logs, samples and store missing; what there was is in $CYCLE_KEEP"
		fi
	fi
	rm -rf "$STATE" "$WORK"
	[ -n "$CG" ] && rmdir "$CG" 2>/dev/null
}
trap cleanup_bench EXIT
conf=("workers = $CORES" "attempts = 1" "crash_test = 1" "timeout = 1200"
	"[regressions]" "reruns = 1" "[report]" "public_url = https://rcgate.bench.test"
	"mail_from = rcgate <rcgate@bench.test>" "[notify]" "smtp_url = $SMTPD_URL"
	"[build]" "from_announcements = 1" "announced_source = git" "targets = $TARGETS"
	"jobs = $CORES" "[bisect]" "upstream_git = $GIT_URL/linux.git")
[ -n "$FILESYSTEMS" ] && conf=("filesystems = $FILESYSTEMS" "${conf[@]}")
# The same daemon state across the weeks (store, tokens): stopped and
# started again on its configuration, as an operator restarts it.
restart_daemon() {
	stop_daemon
	rm -f "$STATE/rcgated.port"
	"$RCGATED" -d -f "$STATE/rcgated.conf" >>"$WORK/daemon.out" 2>&1 &
	DAEMON_PID=$!
	cg_join "$DAEMON_PID"
	for _ in $(seq 1 100); do
		[ -s "$STATE/rcgated.port" ] && break
		sleep 0.1
	done
	PORT=$(cat "$STATE/rcgated.port") || { echo "bench: rcgated did not restart"; exit 1; }
	BASE="http://127.0.0.1:$PORT"
}

# ---- the CPU of rcgated, its descendants and its guests, every second ----
# A cgroup of the daemon's own counts every process it starts, and its
# guests (the embedded driver's qemu is its child), exactly: the sum over
# its process tree in /proc loses the time of a process that left the
# tree (an orphan reaped by init) and sees a short-lived one only once it
# is reaped. Made when this is root with a cgroup hierarchy to write.
CG='' CG_FILE=''
if [ -w /sys/fs/cgroup/cpuacct ] && [ -e /sys/fs/cgroup/cpuacct/cpuacct.usage ]; then
	CG=/sys/fs/cgroup/cpuacct/rcgate-cycle.$$ CG_FILE=cpuacct.usage
elif [ -w /sys/fs/cgroup ] && [ -e /sys/fs/cgroup/cgroup.controllers ]; then
	CG=/sys/fs/cgroup/rcgate-cycle.$$ CG_FILE=cpu.stat
fi
if [ -n "$CG" ] && ! mkdir "$CG" 2>/dev/null; then
	CG='' CG_FILE=''
fi
cg_join() {	# PID: the daemon (its children follow it)
	[ -n "$CG" ] && { echo "$1" > "$CG/cgroup.procs"; } 2>/dev/null
	return 0
}
SAMPLER_PID=
start_sampler() {	# OUT
	python3 - "$DAEMON_PID" "$1" "${CG:+$CG/$CG_FILE}" \
		"$$ ${GIT_DAEMON_PID:-0} ${SMTPD_PID:-0}" <<'EOF' &
import os, sys, time
root, out = int(sys.argv[1]), open(sys.argv[2], "w", buffering=1)
cgfile = sys.argv[3]
# The bench's own processes (this shell with what it ran and reaped: curl,
# jq, sqlite3; the git daemon serving the fetches; the smtpd; this
# sampler), rcgated's tree excluded: the harness's share of "others".
# Its parts are written apart too: the sampler itself, the git daemon,
# the smtpd (the shell's polls are the rest).
harness = [int(p) for p in sys.argv[4].split()]
def cg_cpu():
    with open(cgfile) as f:
        text = f.read()
    if cgfile.endswith("cpuacct.usage"):
        return int(text) / 1e9
    for line in text.splitlines():
        if line.startswith("usage_usec "):
            return int(line.split()[1]) / 1e6
    raise ValueError("no usage_usec in " + cgfile)
hz = os.sysconf("SC_CLK_TCK")
seen_qemu = {}	# pid -> last CPU seconds: qemu is daemonised away from us
def stat(pid):
    with open("/proc/%d/stat" % pid) as f:
        s = f.read()
    rest = s[s.rindex(")") + 2:].split()
    return int(rest[1]), [int(x) for x in rest[11:15]], s[s.index("(") + 1:s.rindex(")")]
def sample():
    procs = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                procs[int(d)] = stat(int(d))
            except (OSError, ValueError, IndexError):
                pass
    kids = {}
    for pid, (ppid, _, _) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    def subtree(roots, outside=frozenset()):
        seen, todo = set(), list(roots)
        while todo:
            p = todo.pop()
            if p in seen or p in outside or p not in procs:
                continue
            seen.add(p)
            todo.extend(kids.get(p, []))
        return seen
    tree = subtree([root])
    ours = sum(sum(procs[p][1]) for p in tree) / hz
    def cpu_of(pids):
        return sum(sum(procs[p][1]) for p in pids) / hz
    bench = cpu_of(subtree(harness, tree))
    parts = (sum(os.times()[:2]), cpu_of(subtree(harness[1:2], tree)),
             cpu_of(subtree(harness[2:3], tree)))
    builds = sum(1 for p in tree if procs[p][2] in ("cc1", "cc1plus", "as", "ld"))
    guests = 0
    for pid, (_, t, comm) in procs.items():
        if comm.startswith("qemu-system") and pid not in tree:
            try:
                with open("/proc/%d/cmdline" % pid) as f:
                    cmd = f.read()
            except OSError:
                continue
            if "rcgate-" in cmd and os.environ.get("RCGATE_PREFIX", "rcgate-") in cmd:
                seen_qemu[pid] = (t[0] + t[1]) / hz
                guests += 1
    if cgfile:
        return cg_cpu(), builds, guests, bench, parts
    return ours + sum(seen_qemu.values()), builds, guests, bench, parts
try:
    while os.path.exists("/proc/%d" % root):
        cpu, b, g, bench, parts = sample()
        # The machine's own account (/proc/stat, all CPUs): idle (idle
        # and iowait) and busy (everything else, steal too), so the CPU
        # that was not ours splits into cores nobody used and cores
        # others used; of the busy, steal (the hypervisor ran another
        # machine) and the bench's own processes apart, the rest kernel
        # threads and other users.
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
        out.write("%.2f %.2f %d %d %.2f %.2f %.2f %.2f %.2f %.2f %.2f %.2f\n"
                  % (time.time(), cpu, b, g, os.getloadavg()[0],
                     (v[3] + v[4]) / hz, (sum(v) - v[3] - v[4]) / hz,
                     v[7] / hz, bench, *parts))
        time.sleep(1)
except KeyboardInterrupt:
    pass
EOF
	SAMPLER_PID=$!
}
stop_sampler() {
	[ -n "${SAMPLER_PID:-}" ] && kill "$SAMPLER_PID" 2>/dev/null
	wait "$SAMPLER_PID" 2>/dev/null
	SAMPLER_PID=
}

# announce VERSION SERIES BRANCH ID: prints its Message-ID.
announce() { git_announce "$1" "$2" "$3" "$4" "$WORK"; }
clone_bytes() {
	local key
	key=$(printf '%s' "$URL" | sha256sum | cut -c1-16)
	du -sb "$CACHE/build/git/$key.git" 2>/dev/null | cut -f1 || echo 0
}
# busy VERSIONS...: one poll, one process (curl with every URL; the
# answers parsed by bash itself): BUSY=0 when every rc has a final
# verdict and no job is queued or active and no report unsent (/metrics).
# Until the sixteenth round each poll was three curl | jq and a curl |
# awk, 18 processes every 2 s: most of the bench's own CPU (bench/README).
busy() {
	local urls=() v out part n=0 final=0 re_v='"verdict": *"(pass|block|incomplete)"'
	local re_m='^rcgate_(jobs\{state="(queued|fetching|building|booting|running)"\}|outbox\{state="pending"\}) ([0-9]+)'
	BUSY=1
	for v in "$@"; do urls+=("$BASE/api/v1/releases/$v/gate"); done
	out=$(curl -s -w '\n@@@\n' "${urls[@]}" "$BASE/metrics") || return 0
	while IFS= read -r part; do
		if [ "$part" = @@@ ]; then
			n=$((n + 1))
		elif [ $n -lt $# ] && [[ $part =~ $re_v ]]; then
			final=$((final + 1))
		elif [ $n = $# ] && [[ $part =~ $re_m ]] && [ "${BASH_REMATCH[3]}" != 0 ]; then
			return 0
		fi
	done <<<"$out"
	# Every answer came (the metrics' too), each gate final.
	[ $n = $(($# + 1)) ] && [ $final = $# ] && BUSY=0
	return 0
}
# quiet VERSIONS...: every rc has a final verdict, and nothing is left to
# do (bisection steps and follow-ups come after the verdict) for 20 s,
# polled every ${CYCLE_POLL:-5} s. QUIET_AT is when that calm was first
# seen; a week's end is read afterwards from what happened (week_end),
# so the poll's period does not lengthen the measured wall.
quiet() {
	local deadline=$((SECONDS + ${CYCLE_TIMEOUT:-10800})) since=
	QUIET_AT=
	while [ $SECONDS -lt $deadline ]; do
		local now=$EPOCHREALTIME
		busy "$@"
		if [ $BUSY = 0 ]; then
			[ -n "$since" ] || since=$now
			if [ $(( ${now%.*} - ${since%.*} )) -ge 20 ]; then
				QUIET_AT=$since
				return 0
			fi
		else
			since=
		fi
		sleep "${CYCLE_POLL:-5}"
	done
	echo "bench: the week did not settle within ${CYCLE_TIMEOUT:-10800} s" >&2
	return 1
}

# jobs_fetch: every job of the store, with its events, into jobs.json.
jobs_fetch() {
	local id=1 misses=0
	: >"$WORK/jobs.json"
	while [ $misses -lt 3 ]; do
		req GET "/api/v1/jobs/$id"
		if [ "$CODE" = 200 ]; then
			printf '%s\n' "$BODY" | jq -c --argjson id "$id" '. + {id: $id}' >>"$WORK/jobs.json"
			misses=0
		else
			misses=$((misses + 1))
		fi
		id=$((id + 1))
	done
}
# week_jobs WHAT T0 [TLAST]: the week's jobs (their first event at T0 or
# later, the API's event times to the second) read once from jobs.json for
# both uses. WHAT end: when the week's last thing happened, the last event
# of a job of the week or the last reply's arrival TLAST, whichever is
# later. WHAT timeline: every job of the week in the order they were
# queued, with the minute each state began: where the critical path went.
week_jobs() {
	python3 - "$WORK/jobs.json" "$@" <<'EOF2'
import json, sys, calendar, time
what, t0 = sys.argv[2], float(sys.argv[3])
def at(s):
    return calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))
week = []
for line in open(sys.argv[1]):
    j = json.loads(line)
    ts = [at(e["at"]) for e in j.get("events") or []]
    if ts and ts[0] >= t0 - 1:
        week.append((j, ts))
if what == "end":
    end = max([float(sys.argv[4] or 0)] + [max(ts) for j, ts in week])
    print("%.3f" % max(end, t0))
    sys.exit(0)
print("  jobs (minutes from the first mail; q queued, f fetching, b building, o booting, r running, end):")
for j, ts in week:
    what = "%s %s" % (j.get("version", "?"), j.get("target") or "")
    if j.get("bisection_id"):
        what += " bisect#%s %s" % (j["bisection_id"], (j.get("git_commit") or "")[:12])
        if j.get("revert_commit"):
            what += " revert"
    elif j.get("rerun_of"):
        what += " rerun of #%s" % j["rerun_of"]
    marks = []
    for e, t in zip(j["events"], ts):
        tag = {"queued": "q", "fetching": "f", "building": "b", "booting": "o",
               "running": "r"}.get(e["state"], "end")
        marks.append("%s %.1f" % (tag, (t - t0) / 60))
    if j.get("build_seconds") is not None:
        marks.append("(build %.0f s)" % j["build_seconds"])
    print("    #%-4d %-52s %s" % (j["id"], what[:52], "  ".join(marks)))
EOF2
}

# memory WHEN: rcgated's resident memory, its threads and glibc's malloc
# arenas (heaps of the threads' arenas are 64 MiB-aligned anonymous
# mappings), so growth with history shows where it is held.
memory() {
	python3 "$SRC/bench/memory.py" "$DAEMON_PID" "  rcgated $1:"
}

# week NAME "VERSION SERIES BRANCH ID"...: announces them at once, waits,
# and prints the week's account.
week() {
	local name=$1 t0 bytes0 bytes1 line v series branch id msgids=() versions=()
	shift
	bytes0=$(clone_bytes)
	start_sampler "$WORK/cpu.$name"
	sleep 2
	t0=$(date +%s.%N)
	for line in "$@"; do
		read -r v series branch id <<<"$line"
		msgids+=("$(announce "$v" "$series" "$branch" "$id")")
		versions+=("$v")
	done
	quiet "${versions[@]}"
	local seen=${QUIET_AT:-$(date +%s.%N)} t1
	stop_sampler
	bytes1=$(clone_bytes)
	echo
	echo "== week $name: ${versions[*]} ($TARGETS; filesystems ${FILESYSTEMS:-all})"
	# Replies: mails in each thread, by their arrival (the smtpd's file).
	local replies tlast
	replies=$(for i in "${!msgids[@]}"; do
		local f
		for f in $(grep -l "^\(In-Reply-To\|References\):.*${msgids[$i]}" "$SMTPD_DIR"/*.eml 2>/dev/null); do
			printf '%s %s %s\n' "$(stat -c %.3Y "$f")" "${versions[$i]}" \
				"$(sed -n 's/^Subject: *//p' "$f" | head -1 | tr -d '\r' | cut -c1-60)$(grep -q '^commit [0-9a-f]\{40\}' "$f" && echo ' [culprit]')"
		done
	done | sort -n)
	printf '%s\n' "$replies" | awk -v t0="$t0" 'NF { t = $1; $1 = ""; printf "  reply after %6.1f min:%s\n", (t - t0) / 60, $0; last = t; n++ }
		END { if (n) printf "  last reply after %.1f min (%d replies)\n", (last - t0) / 60, n; else print "  no replies" }'
	tlast=$(printf '%s\n' "$replies" | awk 'NF { t = $1 } END { printf "%.3f\n", t }')
	jobs_fetch
	t1=$(week_jobs end "$t0" "$tlast")
	awk -v t0="$t0" -v t1="$t1" -v s="$seen" 'BEGIN { printf "  the week ended after %.1f min (its last job event or reply; the polls saw the calm %.0f s later)\n", (t1 - t0) / 60, s - t1 }'
	for v in "${versions[@]}"; do
		req GET "/api/v1/releases/$v"
		printf '  %s: gate %s, %s jobs, regressions %s\n' "$v" "$(jqb .gate.verdict)" "$(jqb '.jobs | length')" \
			"$(jqb -c '[.regressions[]? | .test] | unique | length')"
	done
	python3 - "$WORK/cpu.$name" "$t0" "$t1" "$CORES" "$bytes0" "$bytes1" "$tlast" <<'EOF'
import sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
t0, t1, cores = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
b0, b1 = int(sys.argv[5] or 0), int(sys.argv[6] or 0)
tlast = float(sys.argv[7] or 0)
rows = [r for r in rows if t0 - 1 <= r[0] <= t1 + 1]
if len(rows) < 2:
    print("  no CPU samples"); sys.exit(0)
cpu = rows[-1][1] - rows[0][1]
wall = t1 - t0
limit = cpu / cores
print("  wall %.1f min; our CPU %.0f s on %d cores: limit %.1f min; wall / limit %.2f"
      % (wall / 60, cpu, cores, limit / 60, wall / limit if limit > 0 else 0))
# The same up to the last reply: the wall above ends when the week went
# quiet (its last job event or reply, read from the jobs and the mails).
upto = [r for r in rows if r[0] <= tlast + 1]
if tlast > t0 and len(upto) >= 2:
    cpu_l = upto[-1][1] - upto[0][1]
    print("  to the last reply: wall %.1f min; our CPU %.0f s: wall / limit %.2f"
          % ((tlast - t0) / 60, cpu_l, (tlast - t0) / (cpu_l / cores) if cpu_l > 0 else 0))
idle, gaps, cur = 0.0, [], None
for a, b in zip(rows, rows[1:]):
    dt = b[0] - a[0]
    used = max(0.0, b[1] - a[1])
    free = max(0.0, cores * dt - used)
    idle += free
    quiet = used < 0.5 * dt * cores
    if quiet:
        if cur is None:
            cur = [a[0], b[0], 0.0, b[2], b[3]]
        cur[1], cur[2] = b[0], cur[2] + used
    elif cur is not None:
        gaps.append(cur); cur = None
if cur is not None:
    gaps.append(cur)
print("  idle core-seconds %.0f (%.0f%% of wall x cores); mean load average %.1f (the machine's, all users)"
      % (idle, 100 * idle / (wall * cores), sum(r[4] for r in rows) / len(rows)))
if len(rows[0]) >= 7:
    m_idle = rows[-1][5] - rows[0][5]
    others = max(0.0, (rows[-1][6] - rows[0][6]) - cpu)
    print("    of them the machine idle %.0f core-s (%.0f%%), used by others %.0f"
          " core-s (%.0f%%: kernel threads, this bench, other users); wall /"
          " (our CPU + others') / cores %.2f"
          % (m_idle, 100 * m_idle / (wall * cores), others,
             100 * others / (wall * cores),
             wall / ((cpu + others) / cores) if cpu + others > 0 else 0))
if len(rows[0]) >= 9:
    steal = rows[-1][7] - rows[0][7]
    bench = rows[-1][8] - rows[0][8]
    print("    of the others' %.0f core-s: steal %.0f (the hypervisor ran another"
          " machine), the bench's own processes %.0f (git daemon, smtpd, polls,"
          " sampler), the rest %.0f (kernel threads, other users)"
          % (others, steal, bench, max(0.0, others - steal - bench)))
if len(rows[0]) >= 12:
    d = [rows[-1][i] - rows[0][i] for i in (9, 10, 11)]
    print("    of the bench's %.0f core-s: its sampler %.1f, git daemon %.1f,"
          " smtpd %.1f, its shell's polls and the rest %.1f"
          % (bench, d[0], d[1], d[2], max(0.0, bench - sum(d))))
long_gaps = [g for g in gaps if g[1] - g[0] >= 10]
print("  gaps of 10 s or more with under half the cores busy: %d, %.0f s in all"
      % (len(long_gaps), sum(g[1] - g[0] for g in long_gaps)))
for g in long_gaps[:12]:
    print("    %6.1f-%6.1f min: %.0f s, %.2f cores busy (compilers %d, guests %d at its end)"
          % ((g[0] - t0) / 60, (g[1] - t0) / 60, g[1] - g[0], g[2] / (g[1] - g[0]), g[3], g[4]))
# Where the idle cores were: ours in each 30 s of the week (the sixteenth
# round's were all at its end, one guest alone).
win, t = [], t0
while t < t1 - 1:
    w = [r for r in rows if t - 0.5 <= r[0] <= min(t + 30, t1) + 0.5]
    if len(w) >= 2 and w[-1][0] > w[0][0]:
        win.append("%.2f" % ((w[-1][1] - w[0][1]) / (w[-1][0] - w[0][0])))
    t += 30
print("  our cores in each 30 s from the first mail: " + " ".join(win))
print("  bytes the fetches added to the cached clone: %d (%.1f MiB)" % (b1 - b0, (b1 - b0) / 1048576))
EOF
	week_jobs timeline "$t0"
	memory "after week $name"
	printf '%s\n' "$name" >> "$WORK/weeks.done"
}

# The baselines, untimed: the releases the rcs are compared with.
start_daemon "${conf[@]}" >"$WORK/daemon.out" 2>&1
cg_join "$DAEMON_PID"
if [ -n "$CG" ]; then
	echo "bench: our CPU from the cgroup $CG"
else
	echo "bench: our CPU from the process tree in /proc (no cgroup could be made)"
fi
sleep 3
memory "idle, fresh"
export RCGATE_PREFIX
RCGATE_PREFIX=$(guest_prefix)
echo "bench: baselines 6.1.192, 6.6.63, 6.12.3 ($TARGETS) ..."
for b in "6.1.192 $v6163" "6.6.63 $v6663" "6.12.3 $v6123"; do
	read -r v c <<<"$b"
	req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$v\",\"targets\":$targets_json,\"source\":{\"git\":\"$URL\",\"commit\":\"$c\"}}"
	[ "$CODE" = 201 ] || echo "bench: baseline $v: $CODE $BODY" >&2
done
quiet 6.1.192 6.6.63 6.12.3
for v in 6.1.192 6.6.63 6.12.3; do
	req GET "/api/v1/releases/$v/gate"
	echo "  baseline $v: $(jqb .verdict)"
done
memory "after the baselines"

# Week 1's rcs; week 2's are committed after it (its branches move on).
harmless linux-6.1.y 1; culprit61=$(culprit_on linux-6.1.y); rc_on linux-6.1.y 1 193 1
harmless linux-6.6.y 2; rc_on linux-6.6.y 6 64 1
harmless linux-6.12.y 3; rc_on linux-6.12.y 12 4 1
echo "bench: 6.1.193-rc1's culprit ${culprit61:0:12} (upstream ${UPSTREAM:0:12})"

if [[ " $WEEKS " == *" cold "* ]]; then
	# Cold: no compiler cache, clone or worktree; the store and the
	# kernels' artifacts of the baselines kept.
	stop_daemon
	rm -rf "$CACHE/ccache" "$CACHE/build"
	restart_daemon
	week cold "6.1.193-rc1 6.1 linux-6.1.y 401" "6.6.64-rc1 6.6 linux-6.6.y 402" \
		"6.12.4-rc1 6.12 linux-6.12.y 403"
	WEEK1=1
fi
if [[ " $WEEKS " == *" warm "* ]]; then
	if [ -z "${WEEK1:-}" ]; then
		# Week 1's rcs tested untimed: week 2 starts from their caches.
		announce 6.1.193-rc1 6.1 linux-6.1.y 401 >/dev/null
		announce 6.6.64-rc1 6.6 linux-6.6.y 402 >/dev/null
		announce 6.12.4-rc1 6.12 linux-6.12.y 403 >/dev/null
		quiet 6.1.193-rc1 6.6.64-rc1 6.12.4-rc1
	fi
	# Week 2: 6.1.y reverts its culprit, 6.6.y gets it.
	GIT_DIR=$REPO git diff "$culprit61" "$culprit61^" > "$WORK/revert.patch"
	git_commit "$REPO" linux-6.1.y "Revert \"ext4: properly sync file size update after O_DIRECT write\"" \
		"This reverts commit $culprit61." "patch:$WORK/revert.patch" >/dev/null
	harmless linux-6.1.y 4; rc_on linux-6.1.y 1 193 2
	culprit66=$(culprit_on linux-6.6.y); harmless linux-6.6.y 5; rc_on linux-6.6.y 6 64 2
	harmless linux-6.12.y 6; rc_on linux-6.12.y 12 4 2
	echo "bench: 6.6.64-rc2's culprit ${culprit66:0:12}"
	week warm "6.1.193-rc2 6.1 linux-6.1.y 404" "6.6.64-rc2 6.6 linux-6.6.y 405" \
		"6.12.4-rc2 6.12 linux-6.12.y 406"
fi
