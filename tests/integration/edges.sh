#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The sandbox's edges under attack (issue 49), against a real daemon and no
# guest: a root-only file the launching shell left open on fd 7 reaches
# neither rcgated nor a build; a redirect out of [build] file_origins is
# refused with both URLs in the job log, one that stays inside is followed
# with each hop logged; whatever the umask rcgated starts with, its state
# dir is 0700 and its database, WAL, shared memory and logs are 0600, and
# a state dir left open to others is closed at the next start.
. "$(dirname "$0")/lib.sh"
echo "1..9"
if ! command -v bwrap >/dev/null; then
	for i in $(seq 1 9); do skip_test "edges $i" "no bwrap (scripts/setup)"; done
	exit 0
fi
MARK=rcgate-edges-$$-$RANDOM
# The secret: root's alone when the test runs as root (as the issue's
# attacker found it), in a directory the daemon user cannot enter.
SECRET=$(mktemp -d)
printf 'TOPSECRET-%s\n' "$MARK" > "$SECRET/secret"
chmod 600 "$SECRET/secret"
# The loopback "kernel.org": /pub/ is the only file origin.
WWW=$(mktemp -d); chmod 755 "$WWW"; mkdir -p "$WWW/pub/in"
start_httpd "$WWW"
umask 022
exec 7<"$SECRET/secret"
start_daemon "workers = 1" "filesystems = ext4" "crash_test = 0" "attempts = 1" \
	"[build]" "timeout = 120" "file_origins = $HTTPD_URL/pub/"
exec 7<&-

# hostile DIR VERSION BODY: DIR/linux-VERSION.tar.xz whose Makefile runs
# BODY on any target; prints its sha256.
hostile() {
	local d
	d=$(mktemp -d)
	mkdir "$d/linux-$2"
	printf '%%:\n\t@sh ./payload.sh\n' > "$d/linux-$2/Makefile"
	printf '%s\n' "$3" > "$d/linux-$2/payload.sh"
	tar -C "$d" -cJf "$1/linux-$2.tar.xz" "linux-$2"
	chmod 644 "$1/linux-$2.tar.xz"
	rm -rf "$d"
	sha256sum "$1/linux-$2.tar.xz" | cut -c1-64
}
post_source() {	# VERSION URL SHA
	req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$1\",\"targets\":[\"x86_64\"],\"source\":{\"tarball\":\"$2\",\"tarball_sha256\":\"$3\"}}"
}
job_files() {	# VERSION: the job into BODY, its job.log and build.log into $STATE
	req GET "/api/v1/releases/$1"
	JOB=$(jqb '.jobs[0].id')
	cat "$STATE"/jobs/"$JOB"/*/job.log > "$STATE/job.log" 2>/dev/null
	cat "$STATE"/jobs/"$JOB"/*/build.log > "$STATE/build.log" 2>/dev/null
	req GET "/api/v1/jobs/$JOB"
}

# --- Descriptors the launching shell left open ----------------------------
leaked=$(ls -l "/proc/$DAEMON_PID/fd" 2>/dev/null | grep -c "$SECRET")
check "rcgated keeps no descriptor of the shell that started it (fd 7: $leaked)" [ "$leaked" = 0 ]
PAYLOAD="echo payload-ran-$MARK
echo \"fds: \$(ls /proc/self/fd | tr '\n' ' ')\"
cat <&7 2>/dev/null
for p in /proc/[0-9]*; do ls -l \$p/fd 2>/dev/null; done | grep -q secret && echo PWNED-fd-visible
exit 1"
sha=$(hostile "$WWW/pub/in" 6.1.260 "$PAYLOAD")
post_source 6.1.260 "$HTTPD_URL/pub/in/linux-6.1.260.tar.xz" "$sha"
wait_release 6.1.260 120
job_files 6.1.260
if grep -q "payload-ran-$MARK" "$STATE/build.log" && ! grep -q "TOPSECRET\|PWNED" "$STATE/build.log"; then
	ok "a build sees no descriptor rcgated inherited: fd 7 is unreadable ($(grep -a '^fds:' "$STATE/build.log"))"
else
	not_ok "a build cannot read the launching shell's fd 7"; diag "$(tail -n 8 "$STATE/build.log")"
fi

# --- Redirects are held to the origins, hop by hop --------------------------
sha=$(hostile "$WWW" 6.1.261 "echo payload-ran-$MARK; exit 1")
FIRST=$HTTPD_URL/pub/r/linux-6.1.261.tar.xz OUTSIDE=$HTTPD_URL/outside/linux-6.1.261.tar.xz
post_source 6.1.261 "$FIRST" "$sha"
wait_release 6.1.261 120
job_files 6.1.261
if [ "$(jqb .state)" = infra_error ] && jqb .error | grep -q 'file_origins' &&
	! grep -q "GET /outside/" "$HTTPD_LOG" && ! grep -q "payload-ran-$MARK" "$STATE/build.log"; then
	ok "a 302 out of file_origins is refused before any request to it: infra_error, nothing built"
else
	not_ok "a 302 out of file_origins is refused"; diag "$(jqb .state) $(jqb .error)" "$(cat "$HTTPD_LOG")"
fi
both_urls() { grep -qF "$FIRST" "$STATE/job.log" && grep -qF "$OUTSIDE" "$STATE/job.log"; }
check "the job log names both URLs of the refused redirect" both_urls
sha=$(hostile "$WWW/pub/in" 6.1.262 "echo payload-ran-$MARK; exit 1")
post_source 6.1.262 "$HTTPD_URL/pub/rr/linux-6.1.262.tar.xz" "$sha"
wait_release 6.1.262 120
job_files 6.1.262
if [ "$(jqb .state)" != infra_error ] && grep -q "payload-ran-$MARK" "$STATE/build.log" &&
	grep -qF "$HTTPD_URL/pub/in/linux-6.1.262.tar.xz" "$STATE/job.log"; then
	ok "a 302 that stays inside file_origins is followed, its hop in the job log"
else
	not_ok "a redirect inside file_origins is followed"; diag "$(jqb .state) $(jqb .error)" "$(cat "$STATE/job.log")"
fi

# --- File modes (started with umask 022) -------------------------------------
private() {	# the state's modes: dirs 0700, files 0600? MODES says what they are
	local f got want n=0 bad=0
	MODES=
	for f in "$STATE" "$STATE/jobs" "$STATE/jobs/$JOB" "$STATE/jobs/$JOB/1" \
		"$STATE/rcgate.db" "$STATE/rcgate.db-wal" "$STATE/rcgate.db-shm" \
		"$STATE/rcgated.log" "$STATE/jobs/$JOB/1/job.log" "$STATE/jobs/$JOB/1/build.log"; do
		[ -e "$f" ] || continue
		got=$(stat -c %a "$f")
		want=600; [ -d "$f" ] && want=700
		MODES+="${f#"$STATE"}=$got "
		n=$((n + 1)); [ "$got" = "$want" ] || bad=1
	done
	[ $n -ge 8 ] && [ $bad = 0 ]
}
private; rc=$?
check "umask 022: state dir 0700, database, WAL, SHM and logs 0600 ($MODES)" [ $rc = 0 ]
stop_daemon
chmod 755 "$STATE" "$STATE/jobs" "$STATE"/jobs/"$JOB" "$STATE"/jobs/"$JOB"/1
chmod 644 "$STATE/rcgate.db" "$STATE/rcgated.log" "$STATE"/jobs/"$JOB"/1/*.log
restart_daemon
private; rc=$?
check "a state dir left 0755/0644 is made 0700/0600 at the next start ($MODES)" [ $rc = 0 ]
req GET "/api/v1/jobs/$JOB/log"
check "the API still serves the job log (public through the API, not through file modes)" \
	[ "$CODE" = 200 -a -n "$(printf '%s' "$BODY" | grep "payload\|fetch")" ]
if [ -n "$DAEMON_USER" ]; then
	nobody_reads() { runuser -u nobody -- cat "$STATE/rcgate.db" >/dev/null 2>&1; }
	check "another user (nobody) cannot read the database" [ "$(nobody_reads; echo $?)" != 0 ]
else
	skip_test "another user cannot read the database" "not run as root"
fi
stop_daemon
stop_httpd
rm -rf "$SECRET" "$WWW"
exit 0
