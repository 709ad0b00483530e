#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Boot-to-result per target, rcgated vs. its peer: bare qemu with the same
# kernel, initramfs, machine, cpu and devices, in the same run. Prints one
# line per target and the ratio (rcgated / bare). The ratio is the goal
# that matters: libvirt's and the daemon's overhead, not the machine's
# speed. Needs the Debian kernels (scripts/setup) and a build.
set -uo pipefail
. "$(dirname "$0")/../tests/integration/lib.sh" >/dev/null
trap - EXIT
have_all_kernels || { echo "bench: kernel packages missing (scripts/setup)"; exit 1; }
start_daemon "workers = 1" "attempts = 1" "filesystems = ext4" "crash_test = 0" >/dev/null
# Twice: the first domain start per qemu binary pays libvirt's one-time
# capability probe (cached in the embed root); the second run is what a
# long-running rcgated sees.
for v in 6.1.192-rc1 6.1.192; do
	req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$v\",\"artifacts\":$(artifacts_json)}"
	wait_release $v 900 || { echo "bench: release $v did not finish"; stop_daemon; exit 1; }
done
cache=${RCGATE_TEST_CACHE:-/var/cache/rcgate/test-cache}
printf '%-7s %12s %12s %7s\n' target rcgated_s bare_qemu_s ratio
for i in 0 1 2 3; do
	target=$(jqb ".jobs[$i].target"); job=$(jqb ".jobs[$i].id")
	daemon_s=$(jqb ".jobs[$i].boot_seconds")
	key=$(grep -o 'initramfs [0-9a-f]\{64\}' "$STATE/jobs/$job/1/job.log" | head -1 | cut -d' ' -f2)
	dir=$cache/initramfs/$key
	work=$(mktemp -d)
	truncate -s 256M "$work/disk.img"; mkfs.ext4 -q -F "$work/disk.img"
	case $target in
	x86_64) q=(qemu-system-x86_64 -M q35); con=ttyS0; pci=1 ;;
	i386) q=(qemu-system-i386 -M pc); con=ttyS0; pci=1 ;;
	arm64) q=(qemu-system-aarch64 -M virt,gic-version=3 -cpu cortex-a57); con=ttyAMA0; pci=1 ;;
	armv7) q=(qemu-system-arm -M virt,highmem=off -cpu cortex-a15); con=ttyAMA0; pci=0 ;;
	esac
	if [ $pci = 1 ]; then
		dev=(-drive "file=$work/disk.img,format=raw,if=none,id=d0" -device virtio-blk-pci,drive=d0 -device virtio-serial-pci)
	else
		dev=(-drive "file=$work/disk.img,format=raw,if=none,id=d0" -device virtio-blk-device,drive=d0 -device virtio-serial-device)
	fi
	t0=$(date +%s.%N)
	"${q[@]}" -accel tcg -m 512 -display none -no-reboot -serial "file:$work/console.log" \
		-kernel "$dir/kernel" -initrd "$dir/initrd.gz" \
		-append "console=$con panic=-1 rcgate.port=org.rcgate.results rcgate.disk=/dev/vda rcgate.fs=ext4" \
		"${dev[@]}" -chardev "file,id=res,path=$work/out.ktap" \
		-device virtserialport,chardev=res,name=org.rcgate.results 2>/dev/null &
	qpid=$!
	for _ in $(seq 1 6000); do grep -q '^# rcgate-complete' "$work/out.ktap" 2>/dev/null && break; sleep 0.05; done
	t1=$(date +%s.%N)
	kill "$qpid" 2>/dev/null; wait "$qpid" 2>/dev/null
	bare=$(echo "$t1 - $t0" | bc)
	printf '%-7s %12.2f %12.2f %7.2f\n' "$target" "$daemon_s" "$bare" "$(echo "$daemon_s / $bare" | bc -l)"
	rm -rf "$work"
done
stop_daemon
rm -rf "$STATE"
