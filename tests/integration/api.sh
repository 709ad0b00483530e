#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The REST API over a real socket: status codes, error bodies, tokens,
# size caps, and jobs whose artifacts cannot be had ending as infra errors.
. "$(dirname "$0")/lib.sh"
echo "1..44"
start_daemon "filesystems = ext4" "crash_test = 0" "attempts = 2"
SHA=4fdd0172a8c3f41a97e92465b2ac1867e1c10d82d7aeed3d26ee7a5d14df1754

req GET /healthz
check "healthz answers 200 ok" [ "$CODE" = 200 -a "$(jqb .status)" = ok ]
req GET /api/v1/targets
check "targets lists the four targets" [ "$(jqb '[.targets[].name] | join(",")')" = "x86_64,i386,arm64,armv7" ]

# The cache is content-addressed: a hash nobody has fetched yet.
NOSHA=$(printf 'ab%.0s' $(seq 32))
body='{"version":"6.1.64-rc1","artifacts":[{"target":"x86_64","url":"file://'"$STATE"'/files/missing.deb","sha256":"'$NOSHA'"}]}'
req POST /api/v1/releases -d "$body"
check "POST without a token is 401" [ "$CODE" = 401 ]
req POST /api/v1/releases -H "Authorization: Bearer rcg_wrong" -d "$body"
check "POST with a wrong token is 401 with a JSON error" [ "$CODE" = 401 -a "$(jqb .error.status)" = 401 ]

post() { req POST /api/v1/releases -H "$(auth)" -H 'Content-Type: application/json' -d "$1"; }
bad() {	# bad "description" body "message substring"
	post "$2"
	if [ "$CODE" = 400 ] && jqb .error.message | grep -qF -- "$3"; then ok "$1"
	else not_ok "$1"; diag "got $CODE $BODY"; fi
}
bad "malformed JSON is 400 naming the position" '{"version":' "malformed JSON at line 1"
bad "empty body is 400" '' "request body is empty"
bad "non-object body is 400" '[1,2]' "body must be a JSON object"
bad "missing version is 400" '{"artifacts":[]}' "version is missing"
bad "bad version is 400" '{"version":"6.1.64-rc","artifacts":[]}' "is not like 6.1.64"
bad "empty artifacts is 400" '{"version":"6.1.64-rc1","artifacts":[]}' "artifacts must be an array"
bad "unknown target is 400" '{"version":"6.1.64-rc1","artifacts":[{"target":"sparc","url":"https://kernels.example/k.deb","sha256":"'$SHA'"}]}' "target must be one of"
bad "ftp URL is 400" '{"version":"6.1.64-rc1","artifacts":[{"target":"x86_64","url":"ftp://h/k.deb","sha256":"'$SHA'"}]}' "scheme must be http, https or file"
bad "short sha256 is 400" '{"version":"6.1.64-rc1","artifacts":[{"target":"x86_64","url":"https://kernels.example/k.deb","sha256":"abc"}]}' "sha256 must be 64"
bad "unknown key is 400" '{"version":"6.1.64-rc1","artifcts":[]}' "unknown key 'artifcts'"
bad "duplicate target is 400" '{"version":"6.1.64-rc1","artifacts":[{"target":"x86_64","url":"https://kernels.example/k.deb","sha256":"'$SHA'"},{"target":"x86_64","url":"https://kernels.example/k.deb","sha256":"'$SHA'"}]}' "given twice"

big=$(head -c 70000 /dev/zero | tr '\0' 'a')
post "{\"version\":\"$big\"}"
check "a body over max_body_kb is 413" [ "$CODE" = 413 ]

req GET /api/v1/releases/9.9.9
check "unknown release is 404" [ "$CODE" = 404 -a "$(jqb .error.status)" = 404 ]
req DELETE /api/v1/releases
check "wrong method is 405 with Allow" [ "$CODE" = 405 ]
req GET /api/v1/jobs/abc
check "non-numeric job id is 400" [ "$CODE" = 400 ]

post "$body"
check "a valid release is 201 with one queued job" [ "$CODE" = 201 -a "$(jqb '.jobs | length')" = 1 ]
post "$body"
check "the same version again is 409" [ "$CODE" = 409 ]

# The artifact does not exist: an infra error (fetch), tried twice, never a
# test failure.
if wait_release 6.1.64-rc1 60; then
	check "missing artifact ends as infra_error/fetch" [ "$(jqb '.jobs[0].state')" = infra_error -a "$(jqb '.jobs[0].error_kind')" = fetch ]
	check "it was tried twice and stored no results" [ "$(jqb '.jobs[0].attempt')" = 2 -a "$(jqb '.totals.fail')" = 0 ]
else
	not_ok "missing artifact ends as infra_error/fetch"; not_ok "tried twice"
fi
# A wrong sha256 for a real file is refused after download.
deb=$(kernel_deb x86_64 | head -1)
if [ -f "$deb" ]; then
	post '{"version":"6.1.65-rc1","artifacts":[{"target":"x86_64","url":"file://'"$deb"'","sha256":"'"$(printf '0%.0s' $(seq 64))"'"}]}'
	wait_release 6.1.65-rc1 120
	req GET "/api/v1/jobs/$(jqb '.jobs[0].id')"
	if jqb .error | grep -q 'sha256 mismatch' && [ "$(jqb .state)" = infra_error ]; then
		ok "a hash mismatch is infra_error naming sha256"
	else
		not_ok "a hash mismatch is infra_error naming sha256"; diag "$BODY"
	fi
else
	skip_test "a hash mismatch is infra_error" "no kernel package (run scripts/setup)"
fi

# HTTP conventions: ETag/If-None-Match, CORS on reads, Range on logs,
# metrics, the Atom feed, token scopes.
etag=$(curl -sS -D - -o /dev/null "$BASE/api/v1/releases" | tr -d '\r' | awk -F': ' 'tolower($1) == "etag" { print $2 }')
code=$(curl -sS -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$BASE/api/v1/releases")
check "GET answers an ETag and 304 for If-None-Match" [ -n "$etag" -a "$code" = 304 ]
check "reads allow any origin (CORS)" sh -c "curl -sS -D - -o /dev/null '$BASE/api/v1/releases' | grep -qi '^Access-Control-Allow-Origin: \*'"
req GET /api/v1/jobs/1/log
full=$(wc -c < "$STATE/body")
code=$(curl -sS -o "$STATE/part" -w '%{http_code}' -H 'Range: bytes=10-' "$BASE/api/v1/jobs/1/log")
check "the job log honours Range (206, the tail from byte 10)" [ "$code" = 206 -a "$(wc -c < "$STATE/part")" = $((full - 10)) ]
req GET /metrics
check "/metrics is Prometheus text with job states and request counts" sh -c "grep -q '^rcgate_jobs{state=\"infra_error\"} 2' '$STATE/body' && grep -q '^rcgate_http_requests_total{code=\"4xx\"}' '$STATE/body' && grep -q '^rcgate_queue_depth ' '$STATE/body'"
FORMATS="/usr/bin/python3 $SRC/tests/integration/formats.py"
cp "$STATE/body" "$STATE/metrics.txt"
if command -v promtool >/dev/null; then
	check "promtool check metrics accepts /metrics" sh -c "promtool check metrics < '$STATE/metrics.txt'"
else
	skip_test "promtool check metrics accepts /metrics" "no promtool (Debian package prometheus)"
fi
fams=$($FORMATS metrics "$STATE/metrics.txt" 2>&1)
req GET /api/v1/states
nstates=$(jqb '.job_states | length')
every_state_sampled() {
	echo "$fams" | grep -qx 'rcgate_regressions gauge 4' &&
		echo "$fams" | grep -qx 'rcgate_outbox gauge 3' &&
		[ "$nstates" -ge 8 ] && echo "$fams" | grep -qx "rcgate_jobs gauge $nstates" &&
		echo "$fams" | grep -qx 'rcgate_build_info gauge 1' &&
		grep -q '^rcgate_regressions{state="open"} 0$' "$STATE/metrics.txt"
}
check "prometheus_client parses /metrics; every state has a sample, zero included, and rcgate_build_info" every_state_sampled
req GET /feed.atom
cp "$STATE/body" "$STATE/feed1.xml"
if xmllint --noout "$STATE/feed1.xml" && $FORMATS feed "$STATE/feed1.xml" > "$STATE/ids1"; then
	ok "/feed.atom is Atom 1.0 for xmllint and feedparser"
else
	not_ok "/feed.atom is Atom 1.0 for xmllint and feedparser"
fi
req POST /api/v1/tokens -H "$(auth)" -d '{"name":"x","scope":"write"}'
check "a write token cannot create tokens (403 insufficient_scope)" [ "$CODE" = 403 ]
ADMIN=$("$RCGATED" -f "$STATE/rcgated.conf" -T admin -s admin 2>/dev/null)
req POST /api/v1/tokens -H "Authorization: Bearer $ADMIN" -d '{"name":"bot","scope":"read"}'
check "an admin token creates a scoped token" [ "$CODE" = 201 -a "$(jqb .scope)" = read ]
RO=$(jqb .token)
req POST /api/v1/releases -H "Authorization: Bearer $RO" -d "$body"
check "a read token cannot write (403)" [ "$CODE" = 403 ]
"$BUILD/rcgatectl" --server "$BASE" gate 6.1.64-rc1 >/dev/null 2>&1; rc=$?
check "rcgatectl gate exits 3 for a release whose target could not be tested" [ $rc = 3 ]
# Atom ids are permanent (RFC 4287 4.2.6): a restart on another port keeps
# them; only links change.
stop_daemon
"$RCGATED" -d -f "$STATE/rcgated.conf" & DAEMON_PID=$!
rm -f "$STATE/rcgated.port"
for _ in $(seq 1 100); do [ -s "$STATE/rcgated.port" ] && break; sleep 0.1; done
BASE="http://127.0.0.1:$(cat "$STATE/rcgated.port")"
req GET /feed.atom
$FORMATS feed "$STATE/body" > "$STATE/ids2" 2>/dev/null
same_ids() { [ -s "$STATE/ids1" ] && cmp -s "$STATE/ids1" "$STATE/ids2" && grep -q '^tag:' "$STATE/ids1"; }
check "Atom ids are tag: URIs that stay the same across a restart on another port" same_ids
# The response cache (issue 13): reads are kept until the next commit, so
# a read right after a write shows the write, every time; the answer of
# one query is never the answer of another; repeated reads are hits.
fresh=0
for i in $(seq 70 89); do
	curl -sS -o /dev/null "$BASE/api/v1/releases?limit=1"	# cached now
	post '{"version":"6.1.'$i'-rc1","artifacts":[{"target":"x86_64","url":"file://'"$STATE"'/files/missing.deb","sha256":"'$NOSHA'"}]}'
	req GET "/api/v1/releases?limit=1"
	[ "$(jqb '.releases[0].version')" = "6.1.$i-rc1" ] && fresh=$((fresh + 1))
done
check "a cached list shows each of 20 new releases in the first read after its POST" [ $fresh = 20 ]
req GET "/api/v1/releases?limit=2"; two=$(jqb '[.releases[].version] | join(" ")')
req GET "/api/v1/releases?limit=1&offset=1"; second=$(jqb '.releases[0].version')
req GET "/api/v1/releases?limit=1"; first=$(jqb '.releases[0].version')
check "each query has its own answer (limit=2 is limit=1 and offset=1)" [ "$two" = "$first $second" -a "$first" != "$second" ]
hits() { curl -sS "$BASE/metrics" | awk '/^rcgate_http_cache_requests_total\{result="hit"\}/ { print $2 }'; }
h0=$(hits)
for _ in 1 2 3 4 5; do curl -sS -o /dev/null "$BASE/api/v1/releases/6.1.64-rc1"; done
h1=$(hits)
check "repeated reads are answered from the cache (/metrics counts the hits)" [ -n "$h0" -a $((h1 - h0)) -ge 4 ]
code=$(curl -sS -o /dev/null -w '%{http_code}' -I "$BASE/api/v1/releases/6.1.64-rc1")
etag=$(curl -sS -D - -o /dev/null "$BASE/api/v1/releases/6.1.64-rc1" | tr -d '\r' | awk -F': ' 'tolower($1) == "etag" { print $2 }')
code2=$(curl -sS -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$BASE/api/v1/releases/6.1.64-rc1")
check "a cached answer serves HEAD and 304 for its ETag" [ "$code" = 200 -a "$code2" = 304 ]
# The state is derived from the jobs, yet the filter pages over the
# matching releases (it used to filter only the page it had read).
for i in $(seq 70 89); do wait_release "6.1.$i-rc1" 60; done
req GET "/api/v1/releases?state=infra_error&limit=100"; all=$(jqb '[.releases[].version] | join(" ")')
req GET "/api/v1/releases?state=infra_error&limit=2&offset=3"; page=$(jqb '[.releases[].version] | join(" ")')
check "?state= pages over the releases in that state (offset 3, limit 2)" \
	[ -n "$page" -a "$page" = "$(echo "$all" | cut -d' ' -f4-5)" ]
req GET "/api/v1/releases?state=bogus"
check "an unknown ?state= is 400" [ "$CODE" = 400 ]
code=$(curl -sS -o /dev/null -w '%{http_code}' -H "X-Big: $(head -c 40000 /dev/zero | tr '\0' a)" "$BASE/healthz")
code2=$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/healthz")
check "request headers over 32 KiB are 431, and the daemon goes on" [ "$code" = 431 -a "$code2" = 200 ]
# An idle daemon sleeps: its threads wake each other only for work (two
# that kicked each other on every pass once kept a core busy).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat"; }
t0=$(cpu_ticks); sleep 5; t1=$(cpu_ticks)
diag "rcgated's CPU over 5 idle seconds: $((t1 - t0)) ticks of $(getconf CLK_TCK)/s"
check "an idle rcgated uses under a tenth of a core" [ $((t1 - t0)) -lt $(( $(getconf CLK_TCK) / 2 )) ]
exit 0
