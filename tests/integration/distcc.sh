#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Builds spread with distcc (issue 29), for real: a distccd on a loopback
# port, started here as the daemon's user, is [host lab1]'s compiler.
# 6.1.193-rc1 (Debian's linux-source-6.1 as 6.1.192 plus changes to three
# files) is built for x86_64 three times, each daemon with its own copy of
# the test machine's compiler cache (tests/kernels/build-kernels', local
# compiles of 6.1.192): what the rc changed misses it and is compiled.
#   1. with lab1's two slots: the misses go through the sandbox's relay
#      to lab1 (the job log and distccd's own log say so);
#   2. without build hosts: compiled locally; the image is byte-identical;
#   3. lab1's distccd killed: the build still succeeds, its compiles fall
#      back to local ones, and the image is the same again.
# A few minutes of warm builds: make check-slow, not CI's make check.
. "$(dirname "$0")/lib.sh"
echo "1..9"
TARBALL=/usr/src/linux-source-6.1.tar.xz
if [ ! -r "$TARBALL" ] || ! command -v distccd >/dev/null || ! command -v socat >/dev/null; then
	for i in $(seq 1 9); do skip_test "distcc $i" "no linux-source-6.1, distcc or socat (scripts/setup)"; done
	exit 0
fi
W=$(mktemp -d "${TMPDIR:-/var/tmp}/rcgate-distcc.XXXXXX")
chmod 755 "$W"
FILES=$W/files
mkdir -p "$FILES"
# ccache_for N: a copy of the machine's cache for daemon N (as lib.sh
# seeds the shared test cache), under the origin rcgated will use.
SEED=${RCGATE_KERNELS:-/var/cache/rcgate/kernels}/ccache
ccache_for() {
	mkdir -p "$W/cc$1"
	[ -d "$SEED" ] && cp -a "$SEED" "$W/cc$1/origin-127.0.0.1"
	daemon_owns "$W/cc$1"
	echo "$W/cc$1"
}
ln -s "$TARBALL" "$FILES/linux-6.1.192.tar.xz"
# rcpatch NAME EXTRA [FILE SED]...: 6.1.192 made 6.1.193<EXTRA>, gzip'ed.
rcpatch() {
	local name=$1 extra=$2
	shift 2
	tar -xOf "$TARBALL" linux-source-6.1/Makefile > "$W/a"
	sed -e 's/^SUBLEVEL = .*/SUBLEVEL = 193/' -e "s/^EXTRAVERSION =.*/EXTRAVERSION = $extra/" "$W/a" > "$W/b"
	diff -u --label a/Makefile --label b/Makefile "$W/a" "$W/b" > "$W/$name"
	while [ $# -ge 2 ]; do
		tar -xOf "$TARBALL" "linux-source-6.1/$1" > "$W/a"
		sed -e "$2" "$W/a" > "$W/b"
		diff -u --label "a/$1" --label "b/$1" "$W/a" "$W/b" >> "$W/$name"
		shift 2
	done
	gzip -9n < "$W/$name" > "$FILES/$name.gz"
}
# Code, not comments: ccache's preprocessed mode would serve a comment.
rcpatch patch-6.1.193-rc1 -rc1 \
	kernel/fork.c '$a static int rcgate_rc1_fork __attribute__((used)) = 1;' \
	kernel/exit.c '$a static int rcgate_rc1_exit __attribute__((used)) = 1;' \
	mm/mmap.c '$a static int rcgate_rc1_mmap __attribute__((used)) = 1;'
sha() { sha256sum "$1" | cut -d' ' -f1; }
TSHA=$(sha "$TARBALL")
daemon_owns "$W"

# lab1: distccd on a free loopback port, as the daemon's user.
DPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_user() { if [ -n "$DAEMON_USER" ]; then runuser -u "$DAEMON_USER" -- "$@"; else "$@"; fi; }
as_user distccd --daemon --no-detach --listen 127.0.0.1 --port "$DPORT" --allow 127.0.0.1 \
	--jobs 2 --log-file "$W/distccd.log" --log-level info &
DISTCCD_PID=$!
stop_distccd() {
	[ -n "${DISTCCD_PID:-}" ] || return 0
	# runuser's child: distccd and its workers are its process group.
	pkill -TERM -P "$DISTCCD_PID" 2>/dev/null
	kill "$DISTCCD_PID" 2>/dev/null
	wait "$DISTCCD_PID" 2>/dev/null
	DISTCCD_PID=
}
trap 'stop_distccd; cleanup; rm -rf "$W"' EXIT
for _ in $(seq 1 50); do
	(exec 3<>"/dev/tcp/127.0.0.1/$DPORT") 2>/dev/null && break
	sleep 0.1
done
LAB1=("[host lab1]" "build_slots = 2" "distcc = 127.0.0.1:$DPORT" "compilers = x86_64")

# build VERSION PATCH: posts the rc for x86_64 and waits for its build
# (the job is cancelled once it boots: only the build is under test);
# sets JOB, BUILT (the image's sha256) and SECS.
build() {
	req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$1\",\"targets\":[\"x86_64\"],\"source\":{\"tarball\":\"$HTTPD_URL/files/linux-6.1.192.tar.xz\",\"tarball_sha256\":\"$TSHA\",\"patch\":\"$HTTPD_URL/files/$2.gz\",\"patch_sha256\":\"$(sha "$FILES/$2.gz")\"}}"
	[ "$CODE" = 201 ] || { diag "POST $1: $CODE $BODY"; BUILT=; return 1; }
	JOB=$(jqb '.jobs[0].id')
	for _ in $(seq 1 2400); do
		req GET "/api/v1/jobs/$JOB"
		case "$(jqb .state)" in booting|running|done|infra_error|cancelled|failed) break ;; esac
		sleep 1
	done
	BUILT=$(jqb '.built_sha256 // empty')
	SECS=$(jqb '.build_seconds // empty')
	req POST "/api/v1/releases/$1/cancel" -H "$(auth)" >/dev/null
	req GET "/api/v1/jobs/$JOB/log"
	JOBLOG=$BODY
	diag "$1: image ${BUILT:-none} in ${SECS:-?} s; $(printf '%s\n' "$JOBLOG" | grep 'build: distcc: [0-9]' | head -1)"
}

start_httpd "$FILES"
# 1: through lab1.
start_daemon "workers = 1" "attempts = 1" "filesystems = ext4" "crash_test = 0" \
	"[build]" "ccache_dir = $(ccache_for 1)" "jobs = 1" "${LAB1[@]}"
build 6.1.193-rc1 patch-6.1.193-rc1
D1=$BUILT
check "the kernel is built with lab1 configured" [ ${#D1} = 64 ]
lab1=$(printf '%s\n' "$JOBLOG" | sed -n 's/.*build: distcc: [0-9]* compiles:.* lab1 \([0-9]*\).*/\1/p' | head -1)
local_n=$(printf '%s\n' "$JOBLOG" | sed -n 's/.*build: distcc: [0-9]* compiles:.* localhost \([0-9]*\).*/\1/p' | head -1)
check "the job log says where the compiles went: lab1 compiled the rc's changes" [ "${lab1:-0}" -ge 3 ]
diag "lab1 compiled ${lab1:-0}, localhost ${local_n:-0}"
ok_remote=$(grep -c 'COMPILE_OK' "$W/distccd.log" 2>/dev/null)
diag "distccd's log: ${ok_remote:-0} COMPILE_OK"
check "distccd's own log has those compiles" [ "${ok_remote:-0}" -ge "${lab1:-1}" ]
check "the sandbox reached lab1 through its relay only (make had no network)" \
	sh -c "printf '%s\n' \"\$1\" | grep -q 'build: distcc: host lab1 (127.0.0.1:$DPORT), 2 slots, through /tmp/rcgate-distcc'" _ "$JOBLOG"
stop_daemon

# 2: the same rc, local compiles only, on the machine's 2 cores (at -j1,
# what the builds with lab1 keep locally, it would be the slowest).
start_daemon "workers = 1" "attempts = 1" "filesystems = ext4" "crash_test = 0" \
	"[build]" "ccache_dir = $(ccache_for 2)" "jobs = 2"
build 6.1.193-rc1 patch-6.1.193-rc1
D2=$BUILT
check "the local build makes an image" [ ${#D2} = 64 ]
check "the kernel built through distcc is byte-identical to the local build" [ -n "$D1" -a "$D1" = "$D2" ]
check "a build without build hosts does not use distcc" \
	sh -c "! printf '%s\n' \"\$1\" | grep -q 'build: distcc'" _ "$JOBLOG"
stop_daemon

# 3: lab1's distccd is gone; the same compiles still build.
stop_distccd
start_daemon "workers = 1" "attempts = 1" "filesystems = ext4" "crash_test = 0" \
	"[build]" "ccache_dir = $(ccache_for 3)" "jobs = 1" "${LAB1[@]}"
build 6.1.193-rc1 patch-6.1.193-rc1
check "with lab1's distccd killed the build still succeeds, the same image" [ ${#BUILT} = 64 -a "$BUILT" = "$D2" ]
fell=$(printf '%s\n' "$JOBLOG" | sed -n 's/.*; \([0-9]*\) fell back to local compiles.*/\1/p' | head -1)
check "its compiles fell back to local ones" [ "${fell:-0}" -gt 0 ]
stop_daemon
