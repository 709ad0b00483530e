#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# What does a kernel build through rcgated cost over kbuild alone? For each
# target (BENCH_TARGETS, default all four) the rc 6.1.193-rc1 (Debian's
# linux-source-6.1 as the release 6.1.192, plus a harmless patch) is built:
#
#   1. bare kbuild in a plain unpacked tree (tinyconfig + configs/<t>.config,
#      olddefconfig, the image target), the compiler cache warmed by it;
#   2. rcgated: POST /api/v1/releases with the tarball and patch, the job's
#      build_seconds (its tree, the patch, kbuild, the image into the cache);
#   3. bare kbuild again, the peer: same cache state as rcgated had.
#
#   ratio = rcgated build_seconds / bare seconds (run 3)
#
# Both use the same ccache directory, environment (LANG, CCACHE_* as
# build.c sets them) and make -j. Also printed: the cold bare build (run 1)
# where the cache was empty for that target, which is what an operator's
# first rc costs. Needs linux-source-6.1 and the cross compilers
# (scripts/setup); takes 10-60 minutes depending on the cache.
set -uo pipefail
# Benches measure the whole suite (lib.sh defaults tests to its smoke group).
RCGATE_SUITE=${RCGATE_SUITE:-all}
. "$(dirname "$0")/../tests/integration/lib.sh" >/dev/null
trap - EXIT
TARBALL=/usr/src/linux-source-6.1.tar.xz
TARGETS=${BENCH_TARGETS:-x86_64 i386 arm64 armv7}
JOBS=${BENCH_JOBS:-$(nproc)}
[ -r "$TARBALL" ] || { echo "bench: no $TARBALL (scripts/setup)"; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/rcgate-bench-build.XXXXXX")
CCACHE=$WORK/ccache
FILES=$WORK/files
mkdir -p "$FILES" "$CCACHE"
ln -s "$TARBALL" "$FILES/linux-6.1.192.tar.xz"
tar -xOf "$TARBALL" linux-source-6.1/README > "$WORK/README.a"
sed 's/^Linux kernel$/Linux kernel (bench)/' "$WORK/README.a" > "$WORK/README.b"
tar -xOf "$TARBALL" linux-source-6.1/Makefile > "$WORK/Makefile.a"
sed -e 's/^SUBLEVEL = .*/SUBLEVEL = 193/' -e 's/^EXTRAVERSION =.*/EXTRAVERSION = -rc1/' "$WORK/Makefile.a" > "$WORK/Makefile.b"
{
	diff -u --label a/Makefile --label b/Makefile "$WORK/Makefile.a" "$WORK/Makefile.b"
	diff -u --label a/README --label b/README "$WORK/README.a" "$WORK/README.b"
} | gzip -9n > "$FILES/patch-6.1.193-rc1.gz"
sha() { sha256sum "$1" | cut -d' ' -f1; }
# The cache's direct+preprocessed hits and misses since the last call:
# a ratio far from 1 with misses in one column is the cache, not rcgated.
cc_zero() { CCACHE_DIR=$CCACHE ccache -z >/dev/null; }
cc_delta() {
	CCACHE_DIR=$CCACHE ccache --print-stats | awk '
		$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { h += $2 }
		$1 == "cache_miss" { m += $2 }
		END { printf "%d/%d", h, m }'
}

# Bare kbuild: what build.c runs, by hand, in a plain tree.
bare() {	# target -> seconds on stdout
	local t=$1 arch cross img tree=$WORK/bare/src
	case $t in
	x86_64) arch=x86_64 cross= img=bzImage ;;
	i386) arch=i386 cross= img=bzImage ;;	# host gcc -m32, as targets.c
	arm64) arch=arm64 cross=aarch64-linux-gnu- img=Image ;;
	armv7) arch=arm cross=arm-linux-gnueabihf- img=zImage ;;
	esac
	if [ ! -d "$tree" ]; then
		mkdir -p "$tree"
		tar -xf "$TARBALL" -C "$tree" --strip-components=1
		(cd "$tree" && zcat "$FILES/patch-6.1.193-rc1.gz" | patch -p1 -s)
	fi
	rm -rf "$tree/build"
	local t0 t1
	t0=$(date +%s.%N)
	(
		cd "$tree" || exit 1
		export LANG=C.UTF-8 LC_ALL=C CCACHE_DIR=$CCACHE CCACHE_BASEDIR=$WORK \
			CCACHE_NOHASHDIR=1 CCACHE_SLOPPINESS=include_file_mtime,include_file_ctime \
			TZ=UTC KBUILD_BUILD_TIMESTAMP="Tue Nov 28 00:00:00 UTC 2023" \
			KBUILD_BUILD_USER=rcgate KBUILD_BUILD_HOST=rcgate KBUILD_BUILD_VERSION=1
		set -- O=build ARCH=$arch CROSS_COMPILE=$cross "CC=ccache ${cross}gcc" LOCALVERSION=
		make "$@" tinyconfig >/dev/null 2>&1 &&
		cat "$SRC/configs/$t.config" >> build/.config &&
		make "$@" olddefconfig >/dev/null 2>&1 &&
		make "$@" -j"$JOBS" $img >/dev/null 2>"$WORK/bare-$t.err"
	) || { echo "bench: bare build of $t failed" >&2; return 1; }
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }'
}

start_httpd "$FILES" >/dev/null
start_daemon "workers = 1" "attempts = 1" "filesystems = ext4" "crash_test = 0" \
	"[build]" "ccache_dir = $CCACHE" "jobs = $JOBS" >/dev/null 2>"$WORK/daemon.err"
trap 'stop_daemon; stop_httpd; rm -rf "$STATE" "$WORK"' EXIT
TSHA=$(sha "$TARBALL")
PSHA=$(sha "$FILES/patch-6.1.193-rc1.gz")

printf '%-7s %10s %10s %10s %7s  %s\n' target cold_bare rcgated bare ratio "rcgated steps; ccache hit/miss cold, rcgated, bare"
n=0
for t in $TARGETS; do
	n=$((n + 1))
	cc_zero
	cold=$(bare "$t") || continue
	cc_cold=$(cc_delta); cc_zero
	v=6.1.193-rc$n
	req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$v\",\"targets\":[\"$t\"],\"source\":{\"tarball\":\"$HTTPD_URL/files/linux-6.1.192.tar.xz\",\"tarball_sha256\":\"$TSHA\",\"patch\":\"$HTTPD_URL/files/patch-6.1.193-rc1.gz\",\"patch_sha256\":\"$PSHA\"}}"
	[ "$CODE" = 201 ] || { echo "bench: POST $v: $CODE $BODY" >&2; continue; }
	job=$(jqb '.jobs[0].id')
	# Only the build is measured: the job is cancelled once it boots.
	for _ in $(seq 1 1800); do
		req GET "/api/v1/jobs/$job"
		case "$(jqb .state)" in booting|running|done|infra_error|cancelled) break ;; esac
		sleep 1
	done
	secs=$(jqb .build_seconds)
	steps=$(jqb '"\(.build_done) kbuild steps, \(.build_step)"')
	req POST "/api/v1/releases/$v/cancel" -H "$(auth)" >/dev/null
	cc_rcg=$(cc_delta); cc_zero
	warm=$(bare "$t") || continue
	printf '%-7s %10s %10.1f %10s %7.3f  %s; %s, %s, %s\n' "$t" "$cold" "$secs" "$warm" \
		"$(awk -v a="$secs" -v b="$warm" 'BEGIN { print a / b }')" "$steps" \
		"$cc_cold" "$cc_rcg" "$(cc_delta)"
done
