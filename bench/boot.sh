#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Boot-to-result per target, rcgated against its peer: bare qemu with the
# same kernel, initramfs, command line, machine, cpu and devices, run in
# alternating pairs (rcgated then bare, bare then rcgated, ...), so that a
# change of the machine's speed during the run hits both sides alike.
#
# Compared like with like: rcgated's boot_seconds is from the guest_run
# call (domain XML, libvirt's start of qemu) to the moment it has read the
# completion marker; bare qemu's is from its exec to the same marker read
# from the same kind of file. The whole job (fetch, initramfs, disks, the
# boot, storing results) is reported beside it, and where its time goes,
# step by step, from the job logs.
#
# BENCH_PAIRS (default 5) pairs per target; BENCH_TARGETS (default all
# four). Needs the Debian kernels (scripts/setup) and a build.
set -uo pipefail
# Benches measure the whole suite (lib.sh defaults tests to its smoke group).
RCGATE_SUITE=${RCGATE_SUITE:-all}
. "$(dirname "$0")/../tests/integration/lib.sh" >/dev/null
trap - EXIT
PAIRS=${BENCH_PAIRS:-5}
TARGETS=${BENCH_TARGETS:-x86_64 i386 arm64 armv7}
CACHE=${RCGATE_TEST_CACHE:-/var/cache/rcgate/test-cache}
have_all_kernels || { echo "bench: kernel packages missing (scripts/setup)"; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/rcgate-bench.XXXXXX")
start_daemon "workers = 1" "attempts = 1" "filesystems = ext4" "crash_test = 0" >/dev/null 2>"$WORK/daemon.err"
trap 'stop_daemon; rm -rf "$STATE" "$WORK"' EXIT

# Bare qemu, timed from exec to the marker line in the results file (read
# every 5 ms), then killed; prints seconds and qemu's CPU seconds.
cat > "$WORK/bare.py" <<'EOF'
import os, signal, subprocess, sys, time
out, argv = sys.argv[1], sys.argv[2:]
tick = os.sysconf("SC_CLK_TCK")
t0 = time.monotonic()
q = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
buf, f, found = b"", None, False
while time.monotonic() - t0 < 600 and q.poll() is None:
    if f is None and os.path.exists(out):
        f = open(out, "rb")
    if f is not None:
        buf += f.read()
        if buf.startswith(b"# rcgate-complete") or b"\n# rcgate-complete" in buf:
            found = True
            break
    time.sleep(0.005)
t1 = time.monotonic()
try:
    st = open("/proc/%d/stat" % q.pid).read().rsplit(")", 1)[1].split()
    cpu = (int(st[11]) + int(st[12])) / tick
except OSError:
    cpu = -1
q.send_signal(signal.SIGKILL)
q.wait()
print("%.3f %.2f" % (t1 - t0, cpu) if found else "fail")
EOF

# What the job log says: the boot's command line, the initramfs key, and
# the steps of the "time:" line as "name value" pairs.
job_log() { cat "$STATE/jobs/$1/1/job.log"; }
steps_of() {
	job_log "$1" | sed -n 's/.* time: //p' | tail -1 |
		sed 's/; /, /g; s/ s\(,\|$\)/\1/g; s/guest cpu/cpu/' | tr ',' '\n' | sed 's/^ *//'
}

bare() {	# bare target job -> "seconds cpu" or "fail"
	local target=$1 job=$2 key cmdline dir q con
	key=$(job_log "$job" | grep -o 'initramfs [0-9a-f]\{64\}' | head -1 | cut -d' ' -f2)
	cmdline=$(job_log "$job" | sed -n 's/.* boot .* cmdline="\(.*\)"$/\1/p' | head -1)
	dir=$CACHE/initramfs/$key
	rm -f "$WORK/disk.img" "$WORK/out.ktap"
	truncate -s 256M "$WORK/disk.img"
	mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 "$WORK/disk.img"
	case $target in
	x86_64) q=(qemu-system-x86_64 -M q35) ;;
	i386) q=(qemu-system-i386 -M pc) ;;
	arm64) q=(qemu-system-aarch64 -M virt,gic-version=3 -cpu cortex-a57) ;;
	armv7) q=(qemu-system-arm -M virt,highmem=off -cpu cortex-a15) ;;
	esac
	# As guest_xml.c has libvirt run it: -nodefaults, virtio on PCI (on
	# virtio-mmio for armv7), the disk's serial, cache=unsafe. libvirt
	# puts the PCI devices behind PCIe root ports; here they sit on the
	# root bus, as one would start it by hand.
	if [ "$target" = armv7 ]; then bus=device; else bus=pci; fi
	python3 "$WORK/bare.py" "$WORK/out.ktap" "${q[@]}" -accel tcg -m 512 -smp 1 \
		-nodefaults -no-user-config -display none -no-reboot \
		-serial "file:$WORK/console.log" \
		-kernel "$dir/kernel" -initrd "$dir/initrd.gz" -append "$cmdline" \
		-drive "file=$WORK/disk.img,format=raw,if=none,id=d0,cache=unsafe" \
		-device "virtio-blk-$bus,drive=d0,serial=rcgate-vda" \
		-device "virtio-serial-$bus" -chardev "file,id=res,path=$WORK/out.ktap" \
		-device virtserialport,chardev=res,name=org.rcgate.results
}

daemon_run() {	# daemon_run version target -> job id
	local arts
	arts=$(artifacts_json | jq -c --arg t "$2" '[.[] | select(.target == $t)]')
	req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$1\",\"artifacts\":$arts}"
	[ "$CODE" = 201 ] || { echo "bench: POST $1: $CODE $BODY" >&2; return 1; }
	wait_release "$1" 900 || { echo "bench: release $1 did not finish" >&2; return 1; }
	[ "$(jqb '.jobs[0].state')" = done ] ||
		{ echo "bench: $1 $2: $(jqb '.jobs[0] | "\(.state) \(.error)"')" >&2; return 1; }
	jqb '.jobs[0].id'
}

# The first domain start per qemu binary pays libvirt's capability probe
# (cached in the embed root, as in a long-running rcgated), and the first
# job per kernel builds its initramfs: a release of all four first, not
# counted.
req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"6.1.192-rc1\",\"artifacts\":$(artifacts_json)}"
wait_release 6.1.192-rc1 900 || { echo "bench: warm-up release did not finish"; exit 1; }

printf 'boot: %s pairs per target, ext4 suite, TCG, one guest at a time\n' "$PAIRS"
printf '%-7s %4s %9s %9s %7s %9s %7s %8s %8s\n' target pair rcgated_s bare_s ratio job_s job_rt \
	cpu_rcg cpu_bare > "$WORK/pairs"
rc=2
for pair in $(seq 1 "$PAIRS"); do
	for target in $TARGETS; do
		rc=$((rc + 1)); v=6.1.192-rc$rc
		order="daemon bare"; [ $((pair % 2)) = 0 ] && order="bare daemon"
		b=; job=
		for side in $order; do
			if [ $side = daemon ]; then
				job=$(daemon_run "$v" "$target") || exit 1
			elif [ -n "$job" ]; then
				b=$(bare "$target" "$job")
			else
				# Bare first: it takes the command line and the
				# initramfs of the target's job of the last pair.
				b=$(bare "$target" "$(cat "$WORK/last-$target")")
			fi
		done
		echo "$job" > "$WORK/last-$target"
		[ "${b:-fail}" != fail ] || { echo "bench: bare qemu $target did not complete"; exit 1; }
		req GET "/api/v1/jobs/$job"
		d=$(jqb .boot_seconds)
		total=$(steps_of "$job" | awk '$1 == "total" { print $2 }')
		cpu=$(steps_of "$job" | awk '$1 == "cpu" { print $2 }'); cpu=${cpu:--1}
		set -- $b
		printf '%-7s %4d %9.2f %9.2f %7.3f %9.2f %7.3f %8.2f %8.2f\n' "$target" "$pair" "$d" "$1" \
			"$(echo "$d / $1" | bc -l)" "$total" "$(echo "$total / $1" | bc -l)" "$cpu" "$2" >> "$WORK/pairs"
		steps_of "$job" | sed "s/^/$target /" >> "$WORK/steps"
	done
done
cat "$WORK/pairs"
echo
echo "per target: ratio = rcgated boot_seconds / bare qemu (exec to marker); job = the whole job / bare"
awk 'NR > 1 { r[$1] = r[$1] " " $5; j[$1] = j[$1] " " $7; d[$1] = d[$1] " " $3; b[$1] = b[$1] " " $4; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
function sorted(s, a,   k, i, j, t) { k = split(s, a, " "); for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } return k }
function median(s,   a, k) { k = sorted(s, a); return k % 2 ? a[(k+1)/2] : (a[k/2] + a[k/2+1]) / 2 }
function min(s,   a) { sorted(s, a); return a[1] }
END {
	printf "%-7s %3s %9s %12s %10s %10s %11s\n", "target", "n", "ratio_min", "ratio_median", "rcgated_s", "bare_s", "job_median"
	for (i = 1; i <= n; i++) { t = order[i]; k = split(r[t], x, " ")
		printf "%-7s %3d %9.3f %12.3f %10.2f %10.2f %11.3f\n", t, k, min(r[t]), median(r[t]), median(d[t]), median(b[t]), median(j[t]) }
}' "$WORK/pairs"
echo
echo "where a job's time goes (median per target, seconds): define = libvirt sets the domain up and starts"
echo "qemu with its CPUs paused, start = the CPUs started, guest = from then to the marker read, destroy ="
echo "what the job waited for it, total = the job from its fetch to its results stored, cpu = qemu's"
awk '{ v[$1, $2] = v[$1, $2] " " $3; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
function median(s,   a, k, i, j, t) { k = split(s, a, " "); for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } return k % 2 ? a[(k+1)/2] : (a[k/2] + a[k/2+1]) / 2 }
END {
	k = split("fetch initramfs disks create define start guest results destroy total cpu", all, " ")
	for (c = 1; c <= k; c++) if ((order[1], all[c]) in v) names[++m] = all[c]
	printf "%-7s", "target"; for (c = 1; c <= m; c++) printf " %9s", names[c]; printf "\n"
	for (i = 1; i <= n; i++) { t = order[i]; printf "%-7s", t
		for (c = 1; c <= m; c++) printf " %9.2f", median(v[t, names[c]]); printf "\n" }
}' "$WORK/steps"
