#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A hostile tree against the build hosts (issue 49), with a real distccd on
# a loopback port as [host lab1] and a real daemon: the "kernel" tarball's
# Makefile is the attacker's, and inside the sandbox it has distcc, the
# relay's socket and DISTCC_HOSTS. With DISTCC_FALLBACK=0 (no local
# compile to hide behind) it tries to make lab1 run a command of its own
# (gcc -wrapper, also in distcc's lzo and pump modes) and to read a file
# only lab1 has (gcc @file); none of it reaches lab1's distccd, the
# build log names each refusal and why, and a kbuild-shaped compile still
# goes through lab1. Then the compiler cache: an object a build of one
# origin stored is not served to a build of another.
# Seconds: the tree is a Makefile and a C function.
. "$(dirname "$0")/lib.sh"
echo "1..10"
if ! command -v bwrap >/dev/null || ! command -v distccd >/dev/null ||
   ! command -v ccache >/dev/null; then
	for i in $(seq 1 10); do skip_test "buildhosts $i" "no bwrap, distcc or ccache (scripts/setup)"; done
	exit 0
fi
MARK=rcgate-bh-$$-$RANDOM
W=$(mktemp -d "${TMPDIR:-/var/tmp}/rcgate-buildhosts.XXXXXX")
chmod 755 "$W"
# What only lab1 (distccd, outside the sandbox) can write and read.
HOSTDIR=$W/host
mkdir -p "$HOSTDIR" "$W/cc/origin-elsewhere"
# gcc @FILE: the sandbox's /tmp/$MARK-args is empty, lab1's is not.
echo "host-secret-$MARK" > "/tmp/$MARK-args"
daemon_owns "$W"

DPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_user() { if [ -n "$DAEMON_USER" ]; then runuser -u "$DAEMON_USER" -- "$@"; else "$@"; fi; }
as_user distccd --daemon --no-detach --listen 127.0.0.1 --port "$DPORT" --allow 127.0.0.1 \
	--jobs 2 --log-file "$W/distccd.log" --log-level info &
DISTCCD_PID=$!
stop_distccd() {
	[ -n "${DISTCCD_PID:-}" ] || return 0
	pkill -TERM -P "$DISTCCD_PID" 2>/dev/null
	kill "$DISTCCD_PID" 2>/dev/null
	wait "$DISTCCD_PID" 2>/dev/null
	DISTCCD_PID=
}
trap 'stop_distccd; cleanup; rm -rf "$W" "/tmp/$MARK-args"' EXIT
for _ in $(seq 1 50); do
	(exec 3<>"/dev/tcp/127.0.0.1/$DPORT") 2>/dev/null && break
	sleep 0.1
done

start_daemon "workers = 1" "filesystems = ext4" "crash_test = 0" "attempts = 1" \
	"[build]" "timeout = 120" "ccache_dir = $W/cc" \
	"[host lab1]" "build_slots = 2" "distcc = 127.0.0.1:$DPORT" "compilers = x86_64"

# hostile VERSION BODY: a linux-VERSION tarball whose Makefile runs BODY;
# prints its sha256.
hostile() {
	local d
	d=$(mktemp -d)
	mkdir "$d/linux-$1"
	printf '%%:\n\t@sh ./payload.sh\n' > "$d/linux-$1/Makefile"
	printf '%s\n' "$2" > "$d/linux-$1/payload.sh"
	tar -C "$d" -cJf "$STATE/files/linux-$1.tar.xz" "linux-$1"
	rm -rf "$d"
	sha256sum "$STATE/files/linux-$1.tar.xz" | cut -c1-64
}
post_source() {	# VERSION SHA URL
	req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$1\",\"targets\":[\"x86_64\"],\"source\":{\"tarball\":\"$3\",\"tarball_sha256\":\"$2\"}}"
}
build_log() {	# VERSION -> the job's build.log into $STATE/build.log
	req GET "/api/v1/releases/$1"
	cat "$STATE"/jobs/"$(jqb '.jobs[0].id')"/*/build.log > "$STATE/build.log" 2>/dev/null
}

# The flags kbuild gives gcc for an x86_64 object (6.1, tinyconfig), as
# distcc sees them through ccache.
KFLAGS="-Wp,-MMD,p.o.d -nostdinc -I./include -include ./include/linux/compiler-version.h -D__KERNEL__ -fmacro-prefix-map=./= -Wall -Wundef -Werror=strict-prototypes -Wno-trigraphs -fno-strict-aliasing -fno-common -fshort-wchar -fno-PIE -Werror=implicit-function-declaration -Werror=implicit-int -Werror=return-type -Wno-format-security -std=gnu11 -mno-sse -mno-mmx -mno-sse2 -mno-3dnow -mno-avx -fcf-protection=none -m64 -falign-jumps=1 -falign-loops=1 -mno-80387 -mno-fp-ret-in-387 -mpreferred-stack-boundary=3 -mskip-rax-setup -mtune=generic -mno-red-zone -mcmodel=kernel -Wno-sign-compare -fno-asynchronous-unwind-tables -mindirect-branch=thunk-extern -mindirect-branch-register -mindirect-branch-cs-prefix -mfunction-return=thunk-extern -fno-jump-tables -fno-delete-null-pointer-checks -Wno-frame-address -Wno-format-truncation -Wno-format-overflow -Wno-address-of-packed-member -O2 -fno-allow-store-data-races -Wframe-larger-than=2048 -fstack-protector-strong -Wno-main -Wno-unused-but-set-variable -Wno-unused-const-variable -Wno-dangling-pointer -fno-omit-frame-pointer -fno-optimize-sibling-calls -ftrivial-auto-var-init=zero -fno-stack-clash-protection -pg -mrecord-mcount -mfentry -DCC_USING_FENTRY -Wdeclaration-after-statement -Wvla -Wno-pointer-sign -Wcast-function-type -Wno-stringop-truncation -Wno-stringop-overflow -Wno-restrict -Wno-maybe-uninitialized -Wno-array-bounds -Wno-alloc-size-larger-than -Wimplicit-fallthrough=5 -fno-strict-overflow -fno-stack-check -fconserve-stack -Werror=date-time -Werror=incompatible-pointer-types -Werror=designated-init -Wno-packed-not-aligned -g -gdwarf-5 -DKBUILD_MODFILE='"p"' -DKBUILD_BASENAME='"p"' -DKBUILD_MODNAME='"p"' -D__KBUILD_MODNAME=kmod_p"
# The payload, placeholders @...@ filled in below. The wrapper is the
# issue's: a shell on the host, then the compiler as if nothing happened.
PAYLOAD=$(cat <<'EOF'
echo payload-ran-@MARK@
echo "DISTCC_HOSTS=$DISTCC_HOSTS"
cd "$(mktemp -d)" || exit 1
mkdir include include/linux && : > include/linux/compiler-version.h
printf 'int f(void) { return 42; }\n' > p.c
# No local compile to fall back to, and no backing off from lab1 after
# it refused one: each compile below is lab1's.
export DISTCC_FALLBACK=0 DISTCC_BACKOFF_PERIOD=0 DISTCC_HOSTS=@lab1/2
wrap='/bin/sh,-c,touch @HOSTDIR@/pwned-$$;exec "$0" "$@"'
distcc gcc -wrapper "$wrap" -c p.c -o w1.o && echo PWNED-wrapper-ran
: > /tmp/@MARK@-args
python3 - <<'PY'
# distcc's own client reads an @FILE where it runs: a forged request
# through the relay's socket sends it to lab1 as it is. Then requests
# that are no requests: each is closed unanswered.
import os, socket
sock = os.path.join(os.path.dirname(os.environ["DISTCC_SSH"]), "lab1.sock")
def ask(req, done_sending):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(60)
    s.connect(sock)
    reply = b""
    try:
        s.sendall(req)
        if done_sending:
            s.shutdown(socket.SHUT_WR)
        while True:
            d = s.recv(65536)
            if not d:
                break
            reply += d
    except OSError:
        pass
    return reply
argv = [b"x86_64-linux-gnu-gcc", b"@/tmp/@MARK@-args", b"-c", b"p.c", b"-o", b"a.o"]
src = b"int f(void) { return 1; }\n"
req = b"DIST%08xARGC%08x" % (1, len(argv))
for a in argv:
    req += b"ARGV%08x" % len(a) + a
# (distccd kills a job whose client half-closes: this one does not.)
reply = ask(req + b"DOTI%08x" % len(src) + src, False)
print("forged @FILE request: %d bytes back: %r" % (len(reply), reply[:200]))
for name, req in (("ARGC huge", b"DIST00000001ARGCffffffff"),
                  ("ARGV huge", b"DIST00000001ARGC00000002ARGV7fffffff" + b"x" * 70000),
                  ("truncated", b"DIST00000001ARGC00000003ARGV00000003gc"),
                  ("not distcc", b"GET / HTTP/1.0\r\n\r\n")):
    print("forged %s: %d bytes back" % (name, len(ask(req, True))))
PY
distcc gcc @KFLAGS@ -c -o p.o p.c && [ -s p.o ] && echo kbuild-shaped-compile-ok-@MARK@
# lzo and pump mode: a closed connection, so lab1 backs off (else distcc
# retries it for ever without fallback), each in a state dir of its own.
unset DISTCC_BACKOFF_PERIOD
DISTCC_DIR=$(mktemp -d) DISTCC_HOSTS=@lab1/2,lzo distcc gcc -wrapper "$wrap" -c p.c -o w2.o && echo PWNED-wrapper-lzo-ran
DISTCC_DIR=$(mktemp -d) DISTCC_HOSTS=@lab1/2,lzo,cpp distcc gcc -wrapper "$wrap" -c p.c -o w3.o && echo PWNED-wrapper-pump-ran
exit 1
EOF
)
PAYLOAD=${PAYLOAD//@MARK@/$MARK}
PAYLOAD=${PAYLOAD//@HOSTDIR@/$HOSTDIR}
PAYLOAD=${PAYLOAD//@KFLAGS@/$KFLAGS}
sha=$(hostile 6.1.250 "$PAYLOAD")
post_source 6.1.250 "$sha" "file://$STATE/files/linux-6.1.250.tar.xz"
check "the hostile source is accepted from an allowed origin (201)" [ "$CODE" = 201 ]
wait_release 6.1.250 120
build_log 6.1.250
check "the attacker's Makefile ran with lab1 as its build host" \
	grep -q "DISTCC_HOSTS=@lab1/2 localhost" "$STATE/build.log"
if [ -z "$(ls "$HOSTDIR" | grep pwned)" ] && ! grep -q PWNED "$STATE/build.log"; then
	ok "gcc -wrapper (plain, lzo and pump mode) ran nothing on lab1"
else
	not_ok "gcc -wrapper ran nothing on lab1"
	diag "$(ls "$HOSTDIR")" "$(grep PWNED "$STATE/build.log")"
fi
check "a forged request's @FILE read no file of lab1's" \
	sh -c "! grep -q 'host-secret-$MARK' '$STATE/build.log'"
check "the build log names the refusals and why" \
	sh -c "grep -q 'refused.*-wrapper' '$STATE/build.log' &&
		[ \$(grep -c 'refused.*protocol version [23]' '$STATE/build.log') = 2 ] &&
		grep -q 'refused.*@' '$STATE/build.log'"
check "forged, huge and truncated requests are closed unanswered" \
	sh -c "[ \$(grep -c '^forged .*: 0 bytes back' '$STATE/build.log') = 4 ] &&
		grep -q 'refused.*ARGC 4294967295 outside' '$STATE/build.log' &&
		grep -q 'refused.*over the caps' '$STATE/build.log'"
check "a kbuild-shaped compile went through lab1 (no fallback allowed)" \
	grep -q "kbuild-shaped-compile-ok-$MARK" "$STATE/build.log"
# (The engine may build the failed rc again: the same compiles.)
check "lab1's distccd compiled it and nothing else" \
	sh -c "grep -q COMPILE_OK '$W/distccd.log' &&
		! grep 'compile from' '$W/distccd.log' | grep -qv 'compile from p.c to p.o'"
if [ "$FAILED" -gt 0 ]; then
	diag "$(grep -a 'distcc' "$STATE/build.log" | tail -20)" "$(tail -20 "$W/distccd.log")"
fi

# The compiler cache is per origin: what a build from file:// (origin
# "local") stored, compiled by lab1, is not served to a build of the same
# source from http://127.0.0.1 (origin "127.0.0.1"), which compiles it
# again; each origin's second compile is its own cache's hit.
CPAYLOAD="cd \"\$(mktemp -d)\" || exit 1
printf 'int f_$$(void) { return 42; }\n' > q.c
ls -d \"\$CCACHE_DIR\"/../origin-elsewhere 2>/dev/null && echo PWNED-sees-other-origin
for i in 1 2; do
	ccache -z >/dev/null
	DISTCC_FALLBACK=0 CCACHE_PREFIX=distcc ccache gcc -O2 -c -o q.o q.c || echo compile-failed
	echo \"compile-\$i: \$(ccache --print-stats | awk '\$1 ~ /_cache_hit\$/ { h += \$2 } END { print h ? \"hit\" : \"miss\" }')\"
done
exit 1"
sha=$(hostile 6.1.251 "$CPAYLOAD")
post_source 6.1.251 "$sha" "file://$STATE/files/linux-6.1.251.tar.xz"
wait_release 6.1.251 120
build_log 6.1.251
A=$(grep -a '^compile-' "$STATE/build.log" | tr '\n' ' ')
start_httpd "$STATE/files"
sha=$(hostile 6.1.252 "$CPAYLOAD")
post_source 6.1.252 "$sha" "$HTTPD_URL/files/linux-6.1.252.tar.xz"
wait_release 6.1.252 120
build_log 6.1.252
B=$(grep -a '^compile-' "$STATE/build.log" | tr '\n' ' ')
diag "origin local: $A" "origin 127.0.0.1: $B"
check "each origin misses what the other cached, then hits its own" \
	[ "$A" = "compile-1: miss compile-2: hit " -a "$B" = "compile-1: miss compile-2: hit " ]
check "no origin's build sees another's cache; origin-elsewhere is untouched" \
	sh -c "! grep -q PWNED '$STATE/build.log' && [ -z \"\$(ls -A '$W/cc/origin-elsewhere')\" ] &&
		[ -d '$W/cc/origin-local' ] && [ -d '$W/cc/origin-127.0.0.1' ]"
stop_daemon
exit $((FAILED > 0))
