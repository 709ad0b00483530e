#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Fetching over HTTP: a connection dropped halfway is resumed with a Range
# request, a 503 is retried, a 404 and a wrong hash are infra errors with a
# clear message, never test failures.
. "$(dirname "$0")/lib.sh"
echo "1..6"
mapfile -t k < <(kernel_deb x86_64)
DEB=${k[0]:-}; SHA=${k[1]:-}
if [ ! -f "$DEB" ]; then
	for i in $(seq 1 6); do skip_test "fetch test $i" "no kernel package: run scripts/setup"; done
	exit 0
fi
NAME=$(basename "$DEB")
export RCGATE_TEST_CACHE=$(mktemp -d)
start_httpd "$(dirname "$DEB")"
start_daemon "filesystems = ext4" "crash_test = 0" "workers = 2" "attempts = 1"
submit() {	# submit VERSION URL SHA
	req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$1\",\"artifacts\":[{\"target\":\"x86_64\",\"url\":\"$2\",\"sha256\":\"$3\"}]}"
}
submit 6.1.192-rc1 "$HTTPD_URL/drop/$NAME" "$SHA"
wait_release 6.1.192-rc1 300
check "a download cut halfway completes and the job is done" [ "$(jqb '.jobs[0].state')" = done ]
check "the second request resumed with a Range header" grep -q "^GET /drop/$NAME bytes=[1-9][0-9]*- 206" "$HTTPD_LOG"

rm -rf "$RCGATE_TEST_CACHE"/*
submit 6.1.192-rc2 "$HTTPD_URL/flaky/$NAME" "$SHA"
wait_release 6.1.192-rc2 300
check "a 503 is retried and the job is done" [ "$(jqb '.jobs[0].state')" = done -a "$(grep -c "^GET /flaky/$NAME - 503" "$HTTPD_LOG")" = 1 ]

submit 6.1.192-rc3 "$HTTPD_URL/files/nosuch.deb" "$(printf 'cd%.0s' $(seq 32))"
wait_release 6.1.192-rc3 120
req GET "/api/v1/jobs/$(jqb '.jobs[0].id')"
check "a 404 is infra_error/fetch naming the status" [ "$(jqb .state)" = infra_error -a "$(jqb .error_kind)" = fetch ] 
if jqb .error | grep -q 404; then ok "the message names 404"; else not_ok "the message names 404"; diag "$(jqb .error)"; fi

rm -rf "$RCGATE_TEST_CACHE"/*
submit 6.1.192-rc4 "$HTTPD_URL/files/$NAME" "$(printf 'ef%.0s' $(seq 32))"
wait_release 6.1.192-rc4 120
req GET "/api/v1/jobs/$(jqb '.jobs[0].id')"
if [ "$(jqb .state)" = infra_error ] && jqb .error | grep -q 'sha256 mismatch'; then
	ok "a wrong hash over HTTP is infra_error/fetch (sha256 mismatch)"
else
	not_ok "a wrong hash over HTTP is infra_error/fetch"; diag "$BODY"
fi
stop_httpd
rm -rf "$RCGATE_TEST_CACHE"
exit 0
