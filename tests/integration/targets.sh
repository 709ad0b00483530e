#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# One release with the four Debian 6.1 kernels, fetched over HTTP from a
# local server into an empty cache: every target boots under TCG, the agent
# reports on each, results are stored per target.
. "$(dirname "$0")/lib.sh"
# The whole suite must pass on every Debian kernel (not only the smoke group).
RCGATE_SUITE=all
echo "1..9"
if ! have_all_kernels; then
	for i in $(seq 1 9); do skip_test "target test $i" "kernel packages missing: run scripts/setup"; done
	exit 0
fi
export RCGATE_TEST_CACHE=$(mktemp -d)
start_httpd "$KERNEL_CACHE"
start_daemon "workers = 2" "attempts = 1" "timeout = 300"
req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"6.1.192\",\"artifacts\":$(artifacts_json "$HTTPD_URL/files")}"
check "a four-target release is accepted" [ "$CODE" = 201 -a "$(jqb '.jobs | length')" = 4 ]
t0=$SECONDS
wait_release 6.1.192 900
diag "matrix finished in $((SECONDS - t0)) s"
printf '%s' "$BODY" | jq -r '.jobs[] | "\(.target) \(.state) \(.accel) \(.boot_seconds) s \(.kernel_version) \(.error // "")"' | sed 's/^/# /'
check "every target is done" [ "$(jqb '[.jobs[] | select(.state == "done")] | length')" = 4 ]
check "every target reported results" [ "$(jqb '[.jobs[] | select((.results | length) >= 10)] | length')" = 4 ]
check "no test fails on Debian's 6.1.192 kernels" [ "$(jqb '.totals.fail')" = 0 ]
check "the block-device suite (the exerciser's row too) ran on a raw disk of every target and passed" \
	[ "$(jqb '[.jobs[].results[] | select((.test | startswith("bdev.")) and .status == "pass")] | length')" = 36 ]
check "every power-cut promise was kept on ext4, xfs and btrfs of every target (4 x 18)" \
	[ "$(jqb '[.jobs[].results[] | select((.test | test("^(ext4|xfs|btrfs)\\.crash_")) and .status == "pass")] | length')" = 72 ]
check "each job ran its own flavour" [ "$(jqb '[.jobs[].kernel_version] | join(" ")')" = "6.1.0-57-cloud-amd64 6.1.0-57-686-pae 6.1.0-57-cloud-arm64 6.1.0-57-armmp" ]
check "the kernels came over HTTP" [ "$(grep -c '^GET /files/.*\.deb - 200' "$HTTPD_LOG")" = 4 ]
req GET "/api/v1/jobs/$(jqb '.jobs[3].id')/log"
check "the job log reports download progress" grep -q 'fetch: done in' "$STATE/body"
stop_httpd
rm -rf "$RCGATE_TEST_CACHE"
exit 0
