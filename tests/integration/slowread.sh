#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Slow readers of a large answer (issue 29): a job's log is made for each
# request and held until sent, so rcgated caps the bytes of such answers
# held at once (8 MiB, http.c UNSENT_CAP). 20 readers of a 1 MiB log that
# read nothing: some are answered, the rest get 503 with Retry-After, the
# daemon's memory stays bounded, and once they are gone the log is
# answered again.
. "$(dirname "$0")/lib.sh"
echo "1..5"
start_daemon "filesystems = ext4" "crash_test = 0" "attempts = 1"
NOSHA=$(printf '0%.0s' $(seq 64))
req POST /api/v1/releases -H "$(auth)" -d '{"version":"6.1.64-rc1","artifacts":[{"target":"x86_64","url":"file://'"$STATE"'/files/missing.deb","sha256":"'$NOSHA'"}]}'
wait_release 6.1.64-rc1 60
req GET /api/v1/jobs/1
dir=$STATE/jobs/1/$(jqb .attempt)
mkdir -p "$dir"
# A build log of 1 MiB (make's output of a large build).
head -c $((1024 * 1024)) /dev/zero | tr '\0' 'x' | fold -w 99 > "$dir/build.log"
daemon_owns "$dir"
req GET /api/v1/jobs/1/log
full=$(wc -c < "$STATE/body")
check "the job log is answered whole at first ($full bytes)" [ "$CODE" = 200 -a "$full" -gt 1000000 ]
rss0=$(awk '/^VmRSS/ { print $2 }' "/proc/$DAEMON_PID/status")
# 20 readers with a 4 KiB receive buffer that read only the status line.
python3 - "$PORT" 20 > "$STATE/readers" <<'EOF' &
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
socks, codes = [], []
for _ in range(n):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    # A network's segment size, not loopback's 64 KiB: the sender's
    # socket buffer then grows as over a network, not to megabytes.
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 1400)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /api/v1/jobs/1/log HTTP/1.1\r\nHost: x\r\n\r\n")
    codes.append(s.recv(64).split(b" ")[1].decode())
    socks.append(s)
print(" ".join(codes), flush=True)
time.sleep(6)
EOF
READERS=$!
for _ in $(seq 1 50); do [ -s "$STATE/readers" ] && break; sleep 0.2; done
rss1=$(awk '/^VmRSS/ { print $2 }' "/proc/$DAEMON_PID/status")
req GET /metrics
held=$(sed -n 's/^rcgate_http_unsent_bytes //p' "$STATE/body")
refused=$(sed -n 's/^rcgate_http_unsent_refused_total //p' "$STATE/body")
codes=$(cat "$STATE/readers")
n200=$(printf '%s\n' $codes | grep -c '^200$')
n503=$(printf '%s\n' $codes | grep -c '^503$')
diag "readers: $n200 answered, $n503 refused; held ${held:-?} bytes; RSS ${rss0} -> ${rss1} KiB"
check "some slow readers are answered, the rest get 503" \
	[ "$n200" -ge 1 -a "$n503" -ge 1 -a $((n200 + n503)) = 20 ]
check "the held answers stay under the cap (8 MiB) and /metrics counts the refusals" \
	[ "${held:-0}" -ge $((1 << 20)) -a "${held:-0}" -le $((8 << 20)) -a "${refused:-0}" = "$n503" ]
check "the daemon grew by less than the 20 logs (RSS +$(( (rss1 - rss0) / 1024 )) MiB)" \
	[ $((rss1 - rss0)) -lt $((12 * 1024)) ]
wait "$READERS"
for _ in $(seq 1 50); do
	req GET /metrics
	[ "$(sed -n 's/^rcgate_http_unsent_bytes //p' "$STATE/body")" = 0 ] && break
	sleep 0.2
done
req GET /api/v1/jobs/1/log
check "once they are gone, nothing is held and the log is answered again" \
	[ "$CODE" = 200 -a "$(wc -c < "$STATE/body")" = "$full" ]
