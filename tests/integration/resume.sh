#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A restart costs no attempt (issue 49): rcgated stopped with SIGTERM while
# one job's download stalls and another job's build runs. It exits in
# seconds; at the next start both jobs resume as the same attempt (with
# attempts = 1 there is no other), the download where it stopped, and both
# end done: neither rc is reported incomplete because rcgated restarted.
# Boots one x86_64 guest.
. "$(dirname "$0")/lib.sh"
echo "1..8"
mapfile -t k < <(kernel_deb x86_64)
DEB=${k[0]:-}; SHA=${k[1]:-}
if [ ! -f "$DEB" ] || ! command -v bwrap >/dev/null; then
	for i in $(seq 1 8); do skip_test "resume $i" "no kernel package or bwrap: run scripts/setup"; done
	exit 0
fi
export RCGATE_TEST_CACHE=$(mktemp -d)
WWW=$(mktemp -d); chmod 755 "$WWW"
cp "$DEB" "$WWW/k.deb"; chmod 644 "$WWW/k.deb"
start_httpd "$WWW"
start_daemon "filesystems = ext4" "crash_test = 0" "workers = 1" "attempts = 1" \
	"[build]" "timeout = 120"
MARK=rcgate-resume-$$-$RANDOM

# The posted kernel: its first GET sends 4 KiB and stalls (httpd.py
# /stallonce/), later ones send the rest.
req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"6.1.192\",\"artifacts\":[{\"target\":\"x86_64\",\"url\":\"$HTTPD_URL/stallonce/k.deb\",\"sha256\":\"$SHA\"}]}"
FETCH_JOB=$(jqb '.jobs[0].id')
# The built one: its Makefile sleeps, then fails (a result, not infra).
d=$(mktemp -d); mkdir "$d/linux-6.1.270"
printf '%%:\n\t@sh ./payload.sh\n' > "$d/linux-6.1.270/Makefile"
printf 'echo build-started-%s\nsleep 8.0%s\necho build-ended-%s\nexit 1\n' "$MARK" "$$" "$MARK" > "$d/linux-6.1.270/payload.sh"
tar -C "$d" -cJf "$STATE/files/linux-6.1.270.tar.xz" linux-6.1.270; rm -rf "$d"
bsha=$(sha256sum "$STATE/files/linux-6.1.270.tar.xz" | cut -c1-64)
req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"6.1.270\",\"targets\":[\"x86_64\"],\"source\":{\"tarball\":\"file://$STATE/files/linux-6.1.270.tar.xz\",\"tarball_sha256\":\"$bsha\"}}"
BUILD_JOB=$(jqb '.jobs[0].id')
for _ in $(seq 1 120); do
	grep -q "GET /stallonce/k.deb" "$HTTPD_LOG" && pgrep -f "sleep 8.0$$" >/dev/null && break
	sleep 0.5
done
sleep 1
t0=$(date +%s.%N)
stop_daemon
dt=$(echo "$(date +%s.%N) - $t0" | bc)
check "SIGTERM with a download stalled and a build running exits in seconds (${dt}s)" \
	awk -v d="$dt" 'BEGIN { exit !(d < 10) }'
row() { sqlite3 "$STATE/rcgate.db" "SELECT state || ' ' || attempt FROM job WHERE id = $1"; }
fetch_row=$(row "$FETCH_JOB") build_row=$(row "$BUILD_JOB")
check "both jobs wait in the queue as attempt 1, nothing recorded against them (fetch: $fetch_row, build: $build_row)" \
	[ "$fetch_row" = "queued 1" -a "$build_row" = "queued 1" ]
partial=$(cat "$RCGATE_TEST_CACHE/artifacts/partial/$SHA".* 2>/dev/null | wc -c)
check "the partial download is kept ($partial bytes)" [ "$partial" -ge 4096 ]

restart_daemon
wait_release 6.1.192 600
wait_release 6.1.270 300
req GET "/api/v1/jobs/$FETCH_JOB"
fetch_events=$(jqb '[.events[].state] | join(",")')
if [ "$(jqb .state)" = done ] && [ "$(jqb .attempt)" = 1 ] &&
	! jqb '.events[].state' | grep -q infra_error; then
	ok "the stalled download's job resumed and ended done as attempt 1 ($fetch_events)"
else
	not_ok "the stalled download's job ended done as attempt 1"; diag "$(jqb '{state, attempt, error}')" "$fetch_events"
fi
check "the download resumed with a Range request" grep -q "^GET /stallonce/k.deb bytes=[1-9][0-9]*- 206" "$HTTPD_LOG"
req GET "/api/v1/jobs/$BUILD_JOB"
build_events=$(jqb '[.events[].state] | join(",")')
check "the interrupted build ran again as attempt 1 and its failure is the result ($(jqb .state), $build_events)" \
	[ "$(jqb .state)" = done -a "$(jqb .attempt)" = 1 -a -z "$(jqb '.events[].state' | grep infra_error)" ]
check "the job log says why the attempt stopped and that it resumes" \
	grep -q "stopped: daemon shutting down (job resumes as attempt 1" "$STATE"/jobs/"$FETCH_JOB"/1/job.log
settled 6.1.192 120
v1=$(jqb .verdict)
settled 6.1.270 120
v2=$(jqb .verdict)
check "neither rc is incomplete: the kernel passes as it would have without the restart ($v1, build $v2)" \
	[ "$v1" = pass -a -n "$v2" -a "$v2" != incomplete -a "$v2" != null ]
stop_daemon
stop_httpd
rm -rf "$RCGATE_TEST_CACHE" "$WWW"
exit 0
