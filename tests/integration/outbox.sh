#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# At-least-once delivery: the report of an announced rc is queued while the
# SMTP server is down, the daemon is killed with SIGKILL, and after a restart
# the mail still arrives, once, threaded to the announcement.
. "$(dirname "$0")/lib.sh"
echo "1..4"
KDIR=${RCGATE_KERNELS:-/var/cache/rcgate/kernels}
if [ ! -f "$KDIR/good/bzImage" ]; then
	for i in 1 2 3 4; do skip_test "outbox $i" "known-good kernel not built (tests/kernels/build-kernels)"; done
	exit 0
fi
GOOD="{\"target\":\"x86_64\",\"kind\":\"image\",\"url\":\"file://$KDIR/good/bzImage\",\"sha256\":\"$(cat "$KDIR/good/bzImage.sha256")\",\"custom\":true}"
# Reserve a port nobody listens on yet.
SMTP_PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start_daemon "workers = 1" "filesystems = ext4" "crash_test = 0" \
	"[report]" "public_url = https://rcgate.ci.test" "mail_from = rcgate <rcgate@ci.test>" "[notify]" "smtp_url = smtp://127.0.0.1:$SMTP_PORT"
req POST /api/v1/announcements -H "$(auth)" --data-binary "@$SRC/tests/data/mail/announce-6.1.64-rc1.eml"
req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"6.1.64-rc1\",\"artifacts\":[$GOOD]}"
wait_release 6.1.64-rc1 300
for _ in $(seq 1 100); do grep -q 'kind=smtp attempt=1 failed' "$STATE/rcgated.log" && break; sleep 0.2; done
check "with the SMTP server down the delivery fails and stays queued" grep -q 'kind=smtp attempt=1 failed' "$STATE/rcgated.log"
kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null
rm -f "$STATE/rcgated.port"
start_smtpd "$SMTP_PORT"
"$RCGATED" -d -f "$STATE/rcgated.conf" & DAEMON_PID=$!
for _ in $(seq 1 300); do ls "$SMTPD_DIR"/*.eml >/dev/null 2>&1 && break; sleep 0.2; done
f=$(ls "$SMTPD_DIR"/*.eml 2>/dev/null | head -1)
check "after SIGKILL and a restart the report is delivered" [ -n "$f" ]
check "it replies in the announcement's thread" grep -qi '^In-Reply-To: <20231124172024.664207345@linuxfoundation.org>' "${f:-/dev/null}"
sleep 3
check "exactly once" [ "$(ls "$SMTPD_DIR"/*.eml | wc -l)" = 1 ]
stop_smtpd
exit 0
