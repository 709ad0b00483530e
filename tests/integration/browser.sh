#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The dashboard in a real browser: a daemon filled with a regression shared
# by two rcs (known-good/bad kernels), announcements (one rc without any
# kernel) and hostile strings, then tests/browser/run.sh (Debian's chromium
# + playwright-core, node's TAP). Screenshots land in tests/browser/output/.
. "$(dirname "$0")/lib.sh"
KDIR=${RCGATE_KERNELS:-/var/cache/rcgate/kernels}
if [ ! -f "$KDIR/good/bzImage" ] || [ ! -f "$KDIR/bad/bzImage" ]; then
	echo "1..0 # SKIP known-good/bad kernels not built (tests/kernels/build-kernels)"
	exit 0
fi
GOOD="{\"target\":\"x86_64\",\"kind\":\"image\",\"url\":\"file://$KDIR/good/bzImage\",\"sha256\":\"$(cat "$KDIR/good/bzImage.sha256")\",\"custom\":true}"
BAD="{\"target\":\"x86_64\",\"kind\":\"image\",\"url\":\"file://$KDIR/bad/bzImage\",\"sha256\":\"$(cat "$KDIR/bad/bzImage.sha256")\",\"custom\":true}"
MAIL=$SRC/tests/data/mail
start_daemon "workers = 2" "attempts = 1" "filesystems = ext4" "crash_test = 0" \
	"[regressions]" "reruns = 0"
submit() { req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$1\",\"artifacts\":[$2]}"; }
submit 6.1.63 "$GOOD"
submit 5.15.139 "$GOOD"
wait_release 6.1.63 300; wait_release 5.15.139 300
for m in announce-6.1.64-rc1.eml announce-5.15.140-rc1.eml; do
	req POST /api/v1/announcements -H "$(auth)" --data-binary "@$MAIL/$m"
done
# An rc nobody submits a kernel for: its deadline passed long ago, so the
# dashboard must say it expired (and offer no report, there is none).
req POST /api/v1/announcements -H "$(auth)" --data-binary "@$MAIL/announce-5.10.202-rc1.eml"
submit 6.1.64-rc1 "$BAD"
submit 5.15.140-rc1 "$BAD"
submit 6.1.99-rc1 '{"target":"x86_64","url":"http://evil.invalid/<script>window.__pwned=1</script><img/src=x/onerror=window.__pwned=2>.deb","sha256":"'"$(printf 'ab%.0s' $(seq 32))"'"}'
for v in 6.1.64-rc1 5.15.140-rc1 6.1.99-rc1; do wait_release "$v" 300; done
sleep 2
req GET "/api/v1/regressions?limit=1"
rid=$(jqb '.regressions[0].id')
[ "$rid" != null ] && req POST "/api/v1/regressions/$rid" -H "$(auth)" \
	-d '{"state":"confirmed","reason":"<script>window.__pwned=3</script><b>bold?</b>"}'
RCGATE_URL=$BASE sh "$SRC/tests/browser/run.sh"
