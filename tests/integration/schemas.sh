#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The JSON Schemas in schemas/ against a real rcgated: every response body
# (success and error) the API gives while a real release is tested, the
# request bodies this test sends, and invalid request bodies that both the
# schema and the daemon must refuse. With the known-good/bad kernels
# (tests/kernels/build-kernels) the regression endpoints are checked with
# real regressions; without them, only their empty forms.
. "$(dirname "$0")/lib.sh"
echo "1..97"
PY=/usr/bin/python3
SCHEMAS=$SRC/schemas
VALIDATE="$PY $SRC/tests/integration/validate.py $SCHEMAS"
KDIR=${RCGATE_KERNELS:-/var/cache/rcgate/kernels}
MAIL=$SRC/tests/data/mail

skip_all() { for i in $(seq 1 92); do skip_test "schema check $i" "$1"; done; exit 0; }
$PY -c 'import jsonschema' 2>/dev/null || skip_all "no python3-jsonschema in $PY"
[ -f "$(kernel_deb x86_64 | head -1)" ] || skip_all "no Debian x86_64 kernel package (run scripts/setup)"

# A known daemon bug: TAP TODO, so it is reported without failing the run
# (and turns into an unexpected pass once fixed).
todo() {	# todo "description" "bug" command...
	local d=$1 why=$2; shift 2
	TESTNUM=$((TESTNUM + 1))
	if "$@"; then echo "ok $TESTNUM - $d # TODO $why"
	else echo "not ok $TESTNUM - $d # TODO $why"; fi
}

# valid STATUS SCHEMA "description": the last response has this status and
# its body validates against the schema.
valid() {
	local want=$1 schema=$2 d="$3 [$2]" errs
	if [ "$CODE" != "$want" ]; then
		not_ok "$d"; diag "HTTP $CODE, expected $want: $(printf '%.400s' "$BODY")"
		return
	fi
	if errs=$(printf '%s' "$BODY" | $VALIDATE "$schema" 2>&1); then
		ok "$d"
	else
		not_ok "$d"; diag "$errs"
	fi
}
validates() { printf '%s' "$BODY" | $VALIDATE "$1" >/dev/null 2>&1; }
# is_error STATUS: the body is a valid error object naming that status.
is_error() {
	[ "$CODE" = "$1" ] && [ "$(jqb .error.status 2>/dev/null)" = "$1" ] &&
		printf '%s' "$BODY" | $VALIDATE error >/dev/null 2>&1
}
error_case() {	# error_case STATUS "description" (after a req)
	if is_error "$1"; then ok "$2 [error]"
	else not_ok "$2 [error]"; diag "HTTP $CODE: $(printf '%.400s' "$BODY")"; fi
}
# request SCHEMA BODY: the body this test is about to send is valid.
request() {
	local errs
	if errs=$(printf '%s' "$2" | $VALIDATE "$1" 2>&1); then return 0; fi
	diag "request body invalid against $1: $errs" "$2"
	return 1
}
# refused SCHEMA "description" METHOD PATH BODY: the schema rejects the body
# and so does the daemon, with a 400 error object.
refused() {
	local schema=$1 d=$2 method=$3 path=$4 body=$5 hdr
	hdr=$(auth)
	[ "$path" = /api/v1/tokens ] && hdr="Authorization: Bearer $ADMIN"
	if printf '%s' "$body" | $VALIDATE "$schema" >/dev/null 2>&1; then
		not_ok "$d [$schema]"; diag "the schema accepts: $body"; return
	fi
	req "$method" "$path" -H "$hdr" -H 'Content-Type: application/json' -d "$body"
	if is_error 400; then ok "$d [$schema, daemon 400]"
	else not_ok "$d [$schema, daemon 400]"; diag "daemon: HTTP $CODE $BODY"; fi
}
# submit VERSION ARTIFACTS [BASELINE]: POST /api/v1/releases with a body
# that is checked against release-request.json first.
submit() {
	local body="{\"version\":\"$1\"${3:+,\"baseline\":\"$3\"},\"artifacts\":[$2]}"
	request release-request "$body" || { CODE=000; BODY=; return; }
	req POST /api/v1/releases -H "$(auth)" -H 'Content-Type: application/json' -d "$body"
}
announce() {
	req POST /api/v1/announcements -H "$(auth)" -H 'Content-Type: message/rfc822' \
		--data-binary "@$MAIL/$1"
}
gate_final() {	# gate_final VERSION SECONDS: until the verdict is final
	local deadline=$((SECONDS + $2))
	while [ $SECONDS -lt $deadline ]; do
		req GET "/api/v1/releases/$1/gate"
		case "$(jqb .verdict)" in pass|block|incomplete) return 0 ;; esac
		sleep 1
	done
	return 1
}

start_daemon "workers = 2" "attempts = 2" "timeout = 240" "[regressions]" "reruns = 1"
ADMIN=$("$RCGATED" -f "$STATE/rcgated.conf" -T schema-admin -s admin) ||
	{ echo "Bail out! admin token"; exit 1; }

# --- The schemas themselves ---------------------------------------------
if errs=$($PY "$SRC/tests/integration/validate.py" --check "$SCHEMAS" 2>&1); then
	ok "every schema is valid against its meta-schema and its \$id names its file"
else
	not_ok "every schema is valid against its meta-schema"; diag "$errs"
fi
# Every JSON route in the route table has a row in schemas/README.md.
missing=$(sed -n 's/^[[:space:]]*{ "\([A-Z]*\)", "\([^"]*\)".*/\1 \2/p' "$SRC/daemon/http/api.c" |
	while read -r m p; do
		case "$p" in /api/v1/*|/healthz) ;; *) continue ;; esac
		grep -qF "\`$m $p\`" "$SCHEMAS/README.md" || echo "$m $p"
	done)
# (an empty table would list nothing: the route table must be read)
nroutes=$(grep -c '^[[:space:]]*{ "[A-Z]*", "/api/v1/' "$SRC/daemon/http/api.c")
check "schemas/README.md lists every /api/v1 route ($nroutes read)" [ -z "$missing" -a "${nroutes:-0}" -gt 20 ]
[ -n "$missing" ] && diag "missing: $missing"

# --- An empty daemon ----------------------------------------------------
req GET /healthz
valid 200 healthz "GET /healthz"
req GET /api/v1/targets
valid 200 targets "GET /api/v1/targets"
req GET /api/v1/hosts
valid 200 hosts "GET /api/v1/hosts (the implicit local host)"
req GET /api/v1/states
valid 200 states "GET /api/v1/states"
req GET /api/v1/tests
valid 200 tests "GET /api/v1/tests"
# The catalogue says what the 2023 bug's test models, and splits an
# entry's two fixes into two.
check "the catalogue names write_seq's fix (936e114a245b) and splits two fixes into two" \
	[ "$(jqb '[.tests[] | select(.name == "write_seq") | .fixes[].commit] | join(" ")')" = 936e114a245b -a \
	  "$(jqb '[.tests[] | select(.fixes | length == 2)] | length')" -ge 1 -a \
	  "$(jqb '[.tests[].fixes[] | select(.subject | test("; [0-9a-f]{12} "))] | length')" = 0 ]
req GET /api/v1/releases
valid 200 releases "GET /api/v1/releases (empty)"
req GET /api/v1/regressions
valid 200 regressions "GET /api/v1/regressions (empty)"

# --- Error responses ----------------------------------------------------
SHA=$(kernel_deb x86_64 | tail -1)
DEB=$(kernel_deb x86_64 | head -1)
DEB_ART="{\"target\":\"x86_64\",\"url\":\"file://$DEB\",\"sha256\":\"$SHA\",\"custom\":true}"
req POST /api/v1/releases -d "{\"version\":\"6.1.90\",\"artifacts\":[$DEB_ART]}"
error_case 401 "POST /api/v1/releases without a token is 401"
req POST /api/v1/releases -H "Authorization: Bearer rcg_wrong" -d '{}'
error_case 401 "a wrong token is 401"
req POST /api/v1/tokens -H "$(auth)" -d '{"name":"x"}'
error_case 403 "a write token cannot create tokens (403)"
req GET /api/v1/releases/9.9.9
error_case 404 "an unknown release is 404"
req GET /api/v1/releases/9.9.9/gate
error_case 404 "the gate of an unknown release is 404"
req GET /api/v1/releases/9.9.9/kcidb.json
error_case 404 "the KCIDB export of an unknown release is 404"
req GET /api/v1/nothing/here
error_case 404 "an unknown path is 404"
req DELETE /api/v1/releases
error_case 405 "DELETE /api/v1/releases is 405"
req POST /api/v1/releases -H "$(auth)" -d '{"version":'
error_case 400 "malformed JSON is 400"
req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$(head -c 70000 /dev/zero | tr '\0' a)\"}"
error_case 413 "a body over max_body_kb is 413"
req GET /api/v1/jobs/abc
error_case 400 "a non-numeric job id is 400"
req GET /api/v1/jobs/999
error_case 404 "an unknown job is 404"
req POST /api/v1/jobs/999/retry -H "$(auth)"
error_case 409 "retrying an unknown job is 409"
req GET /api/v1/regressions/999
error_case 404 "an unknown regression is 404"
req GET '/api/v1/regressions?state=bogus'
error_case 400 "an unknown regression state filter is 400"
req GET '/api/v1/releases?limit=999'
error_case 400 "limit over 200 is 400"
# limit and offset are echoed as the 64-bit numbers they are.
req GET '/api/v1/releases?offset=2147483648'
check "an offset over INT_MAX is echoed as given" validates releases
# Error messages quote client input: cut mid-character or not UTF-8, the
# body must still be a proper 404 error.
req GET "/api/v1/releases/$(printf 'a%.0s' $(seq 59))%C3%A9"
check "a 404 for a 61-byte UTF-8 version has a 404 error body" is_error 404

# --- Request bodies: invalid ones are refused by schema and daemon ------
NOSHA=$(printf 'ab%.0s' $(seq 32))
A="\"target\":\"x86_64\",\"url\":\"https://kernels.example/k.deb\",\"sha256\":\"$NOSHA\""
R=/api/v1/releases
refused release-request "missing version" POST $R "{\"artifacts\":[{$A}]}"
refused release-request "version 6.1.64-rc (no rc number)" POST $R "{\"version\":\"6.1.64-rc\",\"artifacts\":[{$A}]}"
refused release-request "version with a leading zero" POST $R "{\"version\":\"6.01.3\",\"artifacts\":[{$A}]}"
refused release-request "empty artifacts" POST $R '{"version":"6.1.90","artifacts":[]}'
refused release-request "five artifacts" POST $R "{\"version\":\"6.1.90\",\"artifacts\":[{$A},{$A},{$A},{$A},{$A}]}"
refused release-request "unknown target" POST $R "{\"version\":\"6.1.90\",\"artifacts\":[{\"target\":\"sparc\",\"url\":\"https://kernels.example/k.deb\",\"sha256\":\"$NOSHA\"}]}"
refused release-request "ftp URL" POST $R "{\"version\":\"6.1.90\",\"artifacts\":[{\"target\":\"x86_64\",\"url\":\"ftp://h/k\",\"sha256\":\"$NOSHA\"}]}"
refused release-request "upper-case sha256" POST $R "{\"version\":\"6.1.90\",\"artifacts\":[{\"target\":\"x86_64\",\"url\":\"https://kernels.example/k.deb\",\"sha256\":\"$(printf 'AB%.0s' $(seq 32))\"}]}"
refused release-request "unknown top-level key" POST $R "{\"version\":\"6.1.90\",\"artifcts\":[{$A}]}"
refused release-request "unknown artifact key" POST $R "{\"version\":\"6.1.90\",\"artifacts\":[{$A,\"arch\":\"x86_64\"}]}"
refused release-request "kind other than deb/image" POST $R "{\"version\":\"6.1.90\",\"artifacts\":[{$A,\"kind\":\"rpm\"}]}"
refused release-request "modules_url without modules_sha256" POST $R "{\"version\":\"6.1.90\",\"artifacts\":[{$A,\"kind\":\"image\",\"modules_url\":\"https://kernels.example/m.tar.xz\"}]}"
refused release-request "modules with kind deb" POST $R "{\"version\":\"6.1.90\",\"artifacts\":[{$A,\"kind\":\"deb\",\"modules_url\":\"https://kernels.example/m.tar.xz\",\"modules_sha256\":\"$NOSHA\"}]}"
refused release-request "baseline null" POST $R "{\"version\":\"6.1.90\",\"baseline\":null,\"artifacts\":[{$A}]}"
refused release-request "a body that is an array" POST $R "[{$A}]"
refused regression-triage-request "triage to fixed" POST /api/v1/regressions/999 '{"state":"fixed","reason":"r"}'
refused regression-triage-request "triage without reason" POST /api/v1/regressions/999 '{"state":"invalid"}'
refused regression-triage-request "triage with an empty reason" POST /api/v1/regressions/999 '{"state":"invalid","reason":""}'
refused regression-triage-request "triage with an extra key" POST /api/v1/regressions/999 '{"state":"invalid","reason":"r","by":"me"}'
refused token-request "token without a name" POST /api/v1/tokens '{"scope":"read"}'
refused token-request "token name over 64 characters" POST /api/v1/tokens "{\"name\":\"$(printf 'n%.0s' $(seq 65))\"}"
refused token-request "token scope root" POST /api/v1/tokens '{"name":"x","scope":"root"}'

# --- Tokens -------------------------------------------------------------
body='{"name":"schema-reader","scope":"read"}'
if request token-request "$body"; then ok "the token request is valid [token-request]"
else not_ok "the token request is valid [token-request]"; fi
req POST /api/v1/tokens -H "Authorization: Bearer $ADMIN" -d "$body"
valid 201 token "POST /api/v1/tokens"
READER=$(jqb .token)
req POST /api/v1/releases -H "Authorization: Bearer $READER" -d '{}'
error_case 403 "a read token cannot submit releases (403)"

# --- An announced release, then kernels ---------------------------------
announce announce-6.1.64-rc1.eml
valid 201 release "POST /api/v1/announcements creates the release"
announce announce-6.1.64-rc1.eml
valid 200 release "the same announcement again is 200"
announce reply-preadv03.eml
error_case 422 "a tester's reply is not an announcement (422)"
req GET /api/v1/releases/6.1.64-rc1/gate
valid 200 gate "the gate of an rc without kernels"
check "it is pending with a deadline" [ "$(jqb .verdict)" = pending -a "$(jqb .deadline)" != null ]

HAVE_KERNELS=0
if [ -f "$KDIR/good/bzImage" ] && [ -f "$KDIR/bad/bzImage" ] &&
   [ -f "$KDIR/good/bzImage.sha256" ] && [ -f "$KDIR/bad/bzImage.sha256" ]; then
	HAVE_KERNELS=1
	GOOD="{\"target\":\"x86_64\",\"kind\":\"image\",\"url\":\"file://$KDIR/good/bzImage\",\"sha256\":\"$(cat "$KDIR/good/bzImage.sha256")\",\"custom\":true}"
	BAD="{\"target\":\"x86_64\",\"kind\":\"image\",\"url\":\"file://$KDIR/bad/bzImage\",\"sha256\":\"$(cat "$KDIR/bad/bzImage.sha256")\",\"custom\":true}"
	NOKERNELS=
else
	GOOD=$DEB_ART
	BAD=$DEB_ART
	NOKERNELS="no known-good/bad kernels in $KDIR (tests/kernels/build-kernels)"
fi
diag "kernels: $([ $HAVE_KERNELS = 1 ] && echo "good/bad from $KDIR" || echo "Debian .deb only: $NOKERNELS")"

# Debian's kernel as a .deb (kind deb) and the baseline, side by side.
submit 6.1.192 "$DEB_ART"
valid 201 release "POST /api/v1/releases (a .deb artifact)"
DEB_JOB=$(jqb '.jobs[0].id')
submit 6.1.63 "$GOOD"
valid 201 release "POST /api/v1/releases (the baseline)"
submit 6.1.63 "$GOOD"
error_case 409 "the same version again is 409"
# Snapshots while the jobs are queued or running.
req GET "/api/v1/jobs/$DEB_JOB"
valid 200 job "GET /api/v1/jobs/{id} while it is $(jqb .state)"
req GET "/api/v1/jobs/$DEB_JOB/config"
error_case 404 "the config of a posted kernel (not built here) is 404"
req GET /api/v1/releases/6.1.192
valid 200 release "GET /api/v1/releases/{version} while it is $(jqb .state)"
req GET /api/v1/releases/6.1.192/gate
valid 200 gate "the gate while jobs are $(jqb .reasons[0] | sed 's/^x86_64 //')"
req GET /api/v1/releases
valid 200 releases "GET /api/v1/releases while jobs run"

gate_final 6.1.63 300 || diag "6.1.63 did not settle"
check "the baseline's gate is pass" [ "$(jqb .verdict)" = pass ]
# 6.1.192 passes the tests the rc will fail: were it analysed after the rc,
# it would mark the rc's regressions fixed on 6.1. Let it finish first.
gate_final 6.1.192 300 || diag "6.1.192 did not settle"
# The announced rc gets its kernel; with the bad kernel it fails.
submit 6.1.64-rc1 "$BAD" 6.1.63
valid 201 release "POST /api/v1/releases for the announced rc (with baseline)"
gate_final 6.1.64-rc1 300 || diag "6.1.64-rc1 did not settle"

# --- Finished releases --------------------------------------------------
req GET /api/v1/releases/6.1.192
valid 200 release "GET /api/v1/releases/{version} (.deb, done)"
check "the .deb release passed every test" [ "$(jqb .state)" = done -a "$(jqb .totals.fail)" = 0 -a "$(jqb .totals.pass)" -gt 0 ]
req GET /api/v1/releases/6.1.63
valid 200 release "GET /api/v1/releases/{version} (baseline, done)"
req GET /api/v1/releases/6.1.64-rc1
valid 200 release "GET /api/v1/releases/{version} (announced rc, done)"
RC_JOB=$(jqb '.jobs[0].id')
req GET /api/v1/releases/6.1.64-rc1/gate
valid 200 gate "GET /api/v1/releases/{version}/gate (final)"
VERDICT=$(jqb .verdict)
req GET /api/v1/releases/6.1.64-rc1/regressions
valid 200 release-regressions "GET /api/v1/releases/{version}/regressions"
NREG=$(jqb '.regressions | length')
req GET "/api/v1/jobs/$RC_JOB"
valid 200 job "GET /api/v1/jobs/{id} (done)"
req GET '/api/v1/releases?limit=2&offset=1'
valid 200 releases "GET /api/v1/releases?limit=2&offset=1"
check "limit and offset page the list" [ "$(jqb '.releases | length')" = 2 -a "$(jqb .offset)" = 1 ]
req GET /api/v1/regressions
valid 200 regressions "GET /api/v1/regressions"
req GET "/api/v1/jobs/$RC_JOB/log" -H 'Range: bytes=999999999-'
error_case 416 "a Range past the end of a job log is 416"

# --- Regressions (needs the bad kernel) ---------------------------------
if [ $HAVE_KERNELS = 1 ]; then
	check "the bad kernel's rc blocks with regressions" [ "$VERDICT" = block -a "${NREG:-0}" -ge 1 ]
	req GET /api/v1/releases/6.1.64-rc1
	RID=$(jqb '.regressions[0].id')
	req GET '/api/v1/regressions?state=open&branch=6.1'
	valid 200 regressions "GET /api/v1/regressions?state=open&branch=6.1"
	req GET "/api/v1/regressions/$RID"
	valid 200 regression "GET /api/v1/regressions/{id}"
	check "it lists the rc as an occurrence and 6.1 as a branch" \
		[ "$(jqb '[.occurrences[].version] | index("6.1.64-rc1") != null')" = true \
		  -a "$(jqb '[.branches[].branch] | join(",")')" = 6.1 ]
	body='{"state":"invalid","reason":"schema test: triage round trip"}'
	if request regression-triage-request "$body"; then ok "the triage request is valid [regression-triage-request]"
	else not_ok "the triage request is valid [regression-triage-request]"; fi
	req POST "/api/v1/regressions/$RID" -H "$(auth)" -d "$body"
	valid 200 regression "POST /api/v1/regressions/{id} (triage to invalid)"
	check "the triage is stored with its reason and an event" \
		[ "$(jqb .state)" = invalid -a "$(jqb .reason)" = "schema test: triage round trip" \
		  -a "$(jqb '.events[-1].state')" = invalid ]
	body='{"state":"confirmed","reason":"schema test: reproduced"}'
	request regression-triage-request "$body"
	req POST "/api/v1/regressions/$RID" -H "$(auth)" -d "$body"
	valid 200 regression "POST /api/v1/regressions/{id} (triage back to confirmed)"
	req GET '/api/v1/regressions?state=confirmed'
	valid 200 regressions "GET /api/v1/regressions?state=confirmed"
	req GET /api/v1/releases/6.1.64-rc1/regressions
	valid 200 release-regressions "GET /api/v1/releases/{version}/regressions (after triage)"
	check "release regressions carry per-branch state" [ "$(jqb '.regressions[0].branch_state')" = open ]
else
	for d in "the bad kernel's rc blocks" "GET /api/v1/regressions?state=open&branch=6.1" \
		"GET /api/v1/regressions/{id}" "occurrences and branches" \
		"the triage request is valid" "triage to invalid" "triage stored" \
		"triage back to confirmed" "GET /api/v1/regressions?state=confirmed" \
		"release regressions after triage" "per-branch state"; do
		skip_test "$d" "$NOKERNELS"
	done
fi

# --- Retry and cancel ---------------------------------------------------
req POST "/api/v1/jobs/$DEB_JOB/retry" -H "$(auth)"
valid 200 job "POST /api/v1/jobs/{id}/retry"
req POST /api/v1/releases/6.1.192/cancel -H "$(auth)"
valid 200 release-cancel "POST /api/v1/releases/{version}/cancel"
check "the retried job was cancelled" [ "$(jqb .cancelled)" = 1 ]
for _ in $(seq 1 30); do
	req GET "/api/v1/jobs/$DEB_JOB"
	[ "$(jqb .state)" = cancelled ] && break
	sleep 1
done
valid 200 job "GET /api/v1/jobs/{id} (cancelled)"
req GET /api/v1/releases/6.1.192
valid 200 release "GET /api/v1/releases/{version} (cancelled)"
req GET /api/v1/releases
valid 200 releases "GET /api/v1/releases (final)"
req GET /healthz
valid 200 healthz "GET /healthz after the run"
exit 0
