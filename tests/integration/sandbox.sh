#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A hostile build from an allowed origin (issue 27), against a real daemon:
# the "kernel" tarball's Makefile is the attacker's. It runs (the build log
# shows it), in the bubblewrap sandbox: it cannot read the database or the
# state dir, reach the network, write the shared pristine tree or anything
# outside its build directory, or leave a process behind; a build that
# never ends is stopped by cancel, and rcgated's SIGTERM during such a
# build exits within seconds and leaves nothing running.
. "$(dirname "$0")/lib.sh"
echo "1..13"
if ! command -v bwrap >/dev/null; then
	for i in $(seq 1 13); do skip_test "sandbox $i" "no bwrap (scripts/setup)"; done
	exit 0
fi
start_daemon "workers = 1" "filesystems = ext4" "crash_test = 0" "attempts = 1" \
	"[build]" "timeout = 120" "fetch_max_mb = 16" ${RCGATE_SANDBOX_TEST_EXTRA:-}
CACHE=${RCGATE_TEST_CACHE:-/var/cache/rcgate/test-cache}
MARK=rcgate-sandbox-$$-$RANDOM

# hostile VERSION BODY: a linux-VERSION tarball whose Makefile runs BODY
# (a shell script) on any target; prints its sha256.
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
post_source() {	# VERSION SHA
	req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$1\",\"targets\":[\"x86_64\"],\"source\":{\"tarball\":\"file://$STATE/files/linux-$1.tar.xz\",\"tarball_sha256\":\"$2\"}}"
}
build_log() {	# VERSION -> the job's build.log into $STATE/build.log
	req GET "/api/v1/releases/$1"
	cat "$STATE"/jobs/"$(jqb '.jobs[0].id')"/*/build.log > "$STATE/build.log" 2>/dev/null
}

PAYLOAD="echo payload-ran-$MARK
cat '$STATE/rcgate.db' >/dev/null 2>&1 && echo PWNED-read-db
ls '$STATE' >/dev/null 2>&1 && echo PWNED-list-state
touch '$STATE/pwned-$MARK' 2>/dev/null && echo PWNED-write-state
{ echo evil >> Makefile; } 2>/dev/null && echo PWNED-write-tree
ls '$CACHE/artifacts' >/dev/null 2>&1 && echo PWNED-see-cache
ls '$CACHE/ccache' 2>/dev/null | grep -vqx origin-local && echo PWNED-see-other-origins-ccache
ls '$CACHE/build/src' >/dev/null 2>&1 && echo PWNED-see-other-trees
[ -w \"\$CCACHE_DIR\" ] || echo no-ccache-of-its-own
git -C . status >/dev/null 2>&1 && echo PWNED-git-repository
(echo x > /dev/tcp/127.0.0.1/$PORT) 2>/dev/null && echo PWNED-network
(setsid sleep 4$$ </dev/null >/dev/null 2>&1 &)
python3 - <<'PY' 2>&1
# x86_64 numbers: ptrace(TRACEME), keyctl(GET_KEYRING_ID, session),
# unshare(CLONE_NEWUSER), io_uring_setup, personality(ADDR_NO_RANDOMIZE).
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *a):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) for x in a])
    return ctypes.get_errno() if r == -1 else 0
got = [call(101, 0, 0, 0, 0), call(250, 0, -3, 0), call(272, 0x10000000),
       call(425, 1, 0), call(135, 0x0040000)]
print('syscalls-refused' if got == [1] * 5 else 'PWNED-seccomp %s' % got)
PY
echo made-it-to-the-end-$MARK
exit 1"
# Another origin's compiler cache, which this build must not see.
mkdir -p "$CACHE/ccache/origin-elsewhere"; daemon_owns "$CACHE/ccache"
sha=$(hostile 6.1.250 "$PAYLOAD")
post_source 6.1.250 "$sha"
check "the hostile source is accepted from an allowed origin (201)" [ "$CODE" = 201 ]
wait_release 6.1.250 120
build_log 6.1.250
if grep -q "payload-ran-$MARK" "$STATE/build.log" &&
	grep -q "made-it-to-the-end-$MARK" "$STATE/build.log" &&
	! grep -q no-ccache-of-its-own "$STATE/build.log"; then
	ok "the attacker's Makefile ran (inside the sandbox, its origin's compiler cache writable)"
else
	not_ok "the attacker's Makefile ran"; diag "$(tail -20 "$STATE/build.log")"
fi
if grep -q syscalls-refused "$STATE/build.log" && ! grep -q PWNED-seccomp "$STATE/build.log"; then
	ok "ptrace, keyctl, unshare, io_uring_setup and personality(ADDR_NO_RANDOMIZE) get EPERM (seccomp)"
else
	not_ok "the build's forbidden system calls get EPERM (seccomp)"; diag "$(grep -a 'PWNED-seccomp\|Traceback\|Error' "$STATE/build.log")"
fi
if grep -q PWNED "$STATE/build.log" || [ -e "$STATE/pwned-$MARK" ]; then
	not_ok "the build could not read or write rcgated's files, the tree or the network"
	diag "$(grep PWNED "$STATE/build.log")"
else
	ok "the build could not read or write rcgated's files, the tree or the network"
fi
req GET "/api/v1/releases/6.1.250"
req GET "/api/v1/jobs/$(jqb '.jobs[0].id')"
check "the failing hostile build is the source's failure, not infra" \
	[ "$(jqb .state)" != infra_error ]
sleep 1
check "no process the build started is left (PID namespace)" \
	[ -z "$(pgrep -f "sleep 4$$")" ]
pristine=$CACHE/build/src/${sha:0:16}
check "the shared pristine tree is unchanged" \
	[ "$(cat "$pristine/Makefile" 2>/dev/null)" = "$(printf '%%:\n\t@sh ./payload.sh')" ]

# A git source (a tiny tree served by git daemon on loopback): fetched,
# checked out and built in the sandbox; its Makefile sees no repository.
GSRV=$(mktemp -d)
git init -q -b linux-6.1.y "$GSRV/w"
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 253\nEXTRAVERSION =\n%%:\n\t@sh ./payload.sh\n' > "$GSRV/w/Makefile"
printf '%s\n' "echo git-payload-ran-$MARK" \
	"git status >/dev/null 2>&1 && echo PWNED-git-repository" \
	"ls -d '$CACHE'/build/git/*.git/objects >/dev/null 2>&1 && echo PWNED-see-clones" \
	"cat ../*.git/HEAD ../../*.git/HEAD 2>/dev/null | grep -q . && echo PWNED-read-clone" \
	"exit 1" > "$GSRV/w/payload.sh"
git -C "$GSRV/w" add -A && git -C "$GSRV/w" -c user.name=t -c user.email=t@t commit -qm tiny
git clone -q --bare "$GSRV/w" "$GSRV/tiny.git"
GPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
git daemon --reuseaddr --listen=127.0.0.1 --port="$GPORT" --base-path="$GSRV" --export-all "$GSRV" 2>/dev/null &
GDPID=$!
sleep 1
req POST /api/v1/releases -H "$(auth)" -d '{"version":"6.1.253","targets":["x86_64"],"source":{"git":"git://127.0.0.1:'"$GPORT"'/tiny.git","branch":"linux-6.1.y"}}'
wait_release 6.1.253 120
build_log 6.1.253
if grep -q "git-payload-ran-$MARK" "$STATE/build.log" && ! grep -q PWNED "$STATE/build.log"; then
	ok "a git tree is fetched, checked out and built in the sandbox; its Makefile sees no repository or clone"
else
	not_ok "a git tree is built in the sandbox"; diag "$(tail -20 "$STATE/build.log")" "$(jqb .)"
fi

# A hostile origin whose branch is 40 MB of incompressible blob: git's
# fetch is stopped at [build] fetch_max_mb (16 here) as it writes, the job
# log says so, and no half-written pack is kept.
git init -q -b linux-6.1.y "$GSRV/b"
head -c 40M /dev/urandom > "$GSRV/b/blob"
cp "$GSRV/w/Makefile" "$GSRV/w/payload.sh" "$GSRV/b/"
git -C "$GSRV/b" add -A && git -C "$GSRV/b" -c user.name=t -c user.email=t@t commit -qm big
git clone -q --bare "$GSRV/b" "$GSRV/big.git"
req POST /api/v1/releases -H "$(auth)" -d '{"version":"6.1.256","targets":["x86_64"],"source":{"git":"git://127.0.0.1:'"$GPORT"'/big.git","branch":"linux-6.1.y"}}'
wait_release 6.1.256 120
req GET "/api/v1/releases/6.1.256"
jid=$(jqb '.jobs[0].id')
req GET "/api/v1/jobs/$jid"
if [ "$(jqb .state)" = infra_error ] &&
	grep -q 'fetch_max_mb (16 MiB)' "$STATE"/jobs/"$jid"/*/job.log &&
	[ -z "$(find "$CACHE/build/git" -name 'tmp_*' -size +1M 2>/dev/null)" ]; then
	ok "a git fetch past [build] fetch_max_mb is stopped while it writes, with a clear job-log error"
else
	not_ok "a git fetch past [build] fetch_max_mb is stopped"
	diag "state $(jqb .state)" "$(cat "$STATE"/jobs/"$jid"/*/job.log 2>/dev/null | tail -5)"
fi
kill "$GDPID" 2>/dev/null; wait "$GDPID" 2>/dev/null
rm -rf "$GSRV"

# A build that never ends: cancel stops it, with everything it started.
sha=$(hostile 6.1.251 "(setsid sleep 5$$ </dev/null >/dev/null 2>&1 &); exec sleep 6$$")
post_source 6.1.251 "$sha"
for _ in $(seq 1 60); do pgrep -f "sleep 6$$" >/dev/null && break; sleep 1; done

# Builds never starve tests: with that build hung and a second one waiting
# for the build budget, a kernel CI posts still boots and finishes (before
# issue 27's build workers, the two builds held both guest workers).
mapfile -t k < <(kernel_deb x86_64)
if [ -f "${k[0]:-}" ]; then
	sha=$(hostile 6.1.254 "exec sleep 9$$")
	post_source 6.1.254 "$sha"
	sleep 2
	req POST /api/v1/releases -H "$(auth)" -d '{"version":"6.1.66-rc1","artifacts":[{"target":"x86_64","url":"file://'"${k[0]}"'","sha256":"'"${k[1]}"'","custom":true}]}'
	t0=$SECONDS
	wait_release 6.1.66-rc1 400
	req GET "/api/v1/releases/6.1.66-rc1"
	ci=$(jqb .state)
	req GET "/api/v1/releases/6.1.254"
	check "a CI kernel finishes ($ci, $((SECONDS - t0)) s) while one build hangs and another waits for the build budget" \
		[ "$ci" = done -a -n "$(pgrep -f "sleep 6$$")" -a "$(jqb '.jobs[0].state')" = building ]
	req POST "/api/v1/releases/6.1.254/cancel" -H "$(auth)"
else
	skip_test "a CI kernel finishes while builds hang" "no kernel package: run scripts/setup"
fi
req GET "/api/v1/releases/6.1.251"
rid=$(jqb .id)
t0=$SECONDS
req POST "/api/v1/releases/6.1.251/cancel" -H "$(auth)"
for _ in $(seq 1 30); do pgrep -f "sleep [56]$$" >/dev/null || break; sleep 0.5; done
check "cancel ends a hung build and its children within seconds ($((SECONDS - t0)) s)" \
	[ -z "$(pgrep -f "sleep [56]$$")" -a $((SECONDS - t0)) -le 15 ]

# SIGTERM during a hung build: rcgated exits in seconds, nothing is left.
sha=$(hostile 6.1.252 "(setsid sleep 7$$ </dev/null >/dev/null 2>&1 &); exec sleep 8$$")
post_source 6.1.252 "$sha"
for _ in $(seq 1 60); do pgrep -f "sleep 8$$" >/dev/null && break; sleep 1; done
check "the second hung build is running" [ -n "$(pgrep -f "sleep 8$$")" ]
t0=$SECONDS
kill -TERM "$DAEMON_PID"
for _ in $(seq 1 100); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.2; done
sleep 1
check "SIGTERM during a hung build exits within seconds ($((SECONDS - t0)) s) and leaves no process" \
	[ $((SECONDS - t0)) -le 15 -a -z "$(pgrep -f "sleep [78]$$")" ]
DAEMON_PID=
stop_daemon
exit $((FAILED > 0))
