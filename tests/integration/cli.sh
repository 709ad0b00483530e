#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The command lines of rcgated and rcgatectl as scripts see them: --help on
# stdout with status 0, --version, usage errors on stderr with a status of
# their own, and every rcgatectl command failing the same way against a
# real daemon: nothing on stdout, one line "rcgatectl: MESSAGE" on stderr
# where MESSAGE is the API's error.message, exit status 65.
. "$(dirname "$0")/lib.sh"
echo "1..28"
start_daemon "filesystems = ext4" "crash_test = 0"
CTL=$BUILD/rcgatectl
VERSION=$("$BUILD/config.status" --version | sed -n '1s/^rcgate config.status //p')
SHA=4fdd0172a8c3f41a97e92465b2ac1867e1c10d82d7aeed3d26ee7a5d14df1754

# run COMMAND...: sets RC, OUT (stdout) and ERR (stderr); stdin is
# $RUN_STDIN, /dev/null by default.
run() {
	"$@" >"$STATE/out" 2>"$STATE/err" <"${RUN_STDIN:-/dev/null}"
	RC=$?
	OUT=$(cat "$STATE/out")
	ERR=$(cat "$STATE/err")
}
show() { diag "exit $RC" "stdout: $OUT" "stderr: $ERR"; }
expect() {	# expect "description" test...
	local d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d"; show; fi
}

run "$RCGATED" --help
expect "rcgated --help prints its usage on stdout and exits 0" \
	[ "$RC" = 0 -a -z "$ERR" -a "${OUT#usage: rcgated }" != "$OUT" ]
# The default path is $(sysconfdir)'s, as the installed example names it.
conf=$(sed -n '1s/^# rcgated(8) reads \([^ ,]*\).*/\1/p' "$BUILD/contrib/rcgated.conf.example")
expect "rcgated --help names the default configuration file ($conf)" \
	sh -c 'test -n "$1" && printf "%s\n" "$2" | grep -qF -- "$1"' - "$conf" "$OUT"
run "$RCGATED" --version
expect "rcgated --version prints 'rcgated $VERSION' and exits 0" \
	[ "$RC" = 0 -a -z "$ERR" -a "$OUT" = "rcgated $VERSION" ]
run "$RCGATED" -x
expect "rcgated with a bad option prints its usage on stderr and exits 2" \
	[ "$RC" = 2 -a -z "$OUT" -a "${ERR#*usage: rcgated }" != "$ERR" ]
run "$RCGATED" extra-argument
expect "rcgated with an operand prints its usage on stderr and exits 2" \
	[ "$RC" = 2 -a -z "$OUT" -a "${ERR#usage: rcgated }" != "$ERR" ]

run "$CTL" --help
missing=
for c in status gate regressions report submit announce retry cancel triage token; do
	printf '%s\n' "$OUT" | grep -q "rcgatectl $c" || missing="$missing $c"
done
expect "rcgatectl --help prints every command on stdout and exits 0" \
	[ "$RC" = 0 -a -z "$ERR" -a "${OUT#usage: rcgatectl }" != "$OUT" -a -z "$missing" ]
run "$CTL" --version
expect "rcgatectl --version prints 'rcgatectl $VERSION' and exits 0" \
	[ "$RC" = 0 -a -z "$ERR" -a "$OUT" = "rcgatectl $VERSION" ]
run "$CTL" gate --help
expect "rcgatectl gate --help prints the command's usage on stdout and exits 0" \
	[ "$RC" = 0 -a -z "$ERR" -a "${OUT#usage: rcgatectl gate VERSION}" != "$OUT" ]
run "$CTL" --bogus
expect "rcgatectl with a bad option prints its usage on stderr and exits 64" \
	[ "$RC" = 64 -a -z "$OUT" -a "${ERR#*usage: rcgatectl }" != "$ERR" ]
run "$CTL"
expect "rcgatectl without a command prints its usage on stderr and exits 64" \
	[ "$RC" = 64 -a -z "$OUT" -a "${ERR#usage: rcgatectl }" != "$ERR" ]
run "$CTL" frobnicate
expect "rcgatectl with an unknown command says so on stderr and exits 64" \
	[ "$RC" = 64 -a -z "$OUT" -a "$(printf '%s\n' "$ERR" | head -n 1)" = "rcgatectl: unknown command 'frobnicate'" ]
run "$CTL" --server "$BASE" gate
expect "rcgatectl gate without a version prints the command's usage and exits 64" \
	[ "$RC" = 64 -a -z "$OUT" -a "${ERR#usage: rcgatectl gate VERSION}" != "$ERR" ]

# api_error "description" METHOD PATH [curl args] -- rcgatectl args: the
# same request made with curl gives the message rcgatectl must print.
api_error() {
	local d=$1 method=$2 path=$3 code msg
	shift 3
	local curl_args=()
	while [ "$1" != -- ]; do curl_args+=("$1"); shift; done
	shift
	req "$method" "$path" "${curl_args[@]}"
	code=$CODE
	msg=$(jqb .error.message)
	run "$CTL" --server "$BASE" "$@"
	if [ "$code" -ge 400 ] && [ -n "$msg" ] && [ "$msg" != null ] &&
	   [ "$RC" = 65 ] && [ -z "$OUT" ] && [ "$ERR" = "rcgatectl: $msg" ]; then
		ok "$d: rcgatectl: $msg"
	else
		not_ok "$d"; diag "API: $code $BODY"; show
	fi
}
A="Authorization: Bearer $TOKEN"
J="Content-Type: application/json"
api_error "status of an unknown release" GET /api/v1/releases/9.9.9-rc1 -- \
	status 9.9.9-rc1
api_error "gate of an unknown release" GET /api/v1/releases/9.9.9-rc1/gate -- \
	gate 9.9.9-rc1
api_error "report of an unknown release" GET /api/v1/releases/9.9.9-rc1/report.txt -- \
	report 9.9.9-rc1
api_error "report --eml of an unknown release" GET /api/v1/releases/9.9.9-rc1/report.eml -- \
	report 9.9.9-rc1 --eml
api_error "regressions with a bad state" GET "/api/v1/regressions?limit=200&state=bogus" -- \
	regressions state=bogus
api_error "submit without a token" POST /api/v1/releases -H "$J" -d '{}' -- \
	submit 6.1.64-rc1 "x86_64=https://kernels.example/k.deb#$SHA"
api_error "submit of an unknown target" POST /api/v1/releases -H "$A" -H "$J" \
	-d '{"version":"6.1.64-rc1","artifacts":[{"target":"sparc","url":"https://kernels.example/k.deb","sha256":"'$SHA'"}]}' -- \
	--token "$TOKEN" submit 6.1.64-rc1 "sparc=https://kernels.example/k.deb#$SHA"
mail=$SRC/tests/data/mail/unrelated-list-mail.eml
RUN_STDIN=$mail api_error "announce of a mail that is no announcement" POST /api/v1/announcements \
	-H "$A" -H "Content-Type: message/rfc822" --data-binary "@$mail" -- \
	--token "$TOKEN" announce
api_error "retry of an unknown job" POST /api/v1/jobs/999999/retry -H "$A" -- \
	--token "$TOKEN" retry 999999
api_error "cancel of an unknown release" POST /api/v1/releases/9.9.9-rc1/cancel -H "$A" -- \
	--token "$TOKEN" cancel 9.9.9-rc1
api_error "triage of an unknown regression" POST /api/v1/regressions/999999 -H "$A" -H "$J" \
	-d '{"state":"invalid","reason":"test"}' -- \
	--token "$TOKEN" triage 999999 invalid test
api_error "token create with a write token" POST /api/v1/tokens -H "$A" -H "$J" \
	-d '{"name":"ci","scope":"read"}' -- \
	--token "$TOKEN" token create ci read
run "$CTL" --server "$BASE" --token "$TOKEN" announce
expect "announce of an empty mail is a usage error (64) with one message" \
	[ "$RC" = 64 -a -z "$OUT" -a "$(printf '%s\n' "$ERR" | head -n 1)" = "rcgatectl: announce reads the raw e-mail on stdin" ]

# Not the API: nobody listening, and a server whose errors are not JSON.
run "$CTL" --server http://127.0.0.1:1 gate 6.1.64-rc1
expect "an unreachable server is one line on stderr and exit 65" \
	[ "$RC" = 65 -a -z "$OUT" -a "$(printf '%s\n' "$ERR" | wc -l)" = 1 -a "${ERR#rcgatectl: http://127.0.0.1:1/api/v1/releases/6.1.64-rc1/gate: }" != "$ERR" ]
mkdir -p "$STATE/www"
start_httpd "$STATE/www"
not_api() {	# not_api "description" path-suffix rcgatectl args...
	local d=$1 suffix=$2
	shift 2
	run "$CTL" --server "$HTTPD_URL" "$@"
	if [ "$RC" = 65 ] && [ -z "$OUT" ] &&
	   printf '%s\n' "$ERR" | grep -Eqx "rcgatectl: $HTTPD_URL/api/v1/$suffix: HTTP 4[0-9][0-9]"; then
		ok "$d"
	else
		not_ok "$d"; show
	fi
}
not_api "gate, when the error is not the API's JSON: one line with the URL and status, exit 65" \
	'releases/6\.1\.64-rc1/gate' gate 6.1.64-rc1
not_api "report --eml, when the error is not the API's JSON: the same" \
	'releases/6\.1\.64-rc1/report\.eml' report 6.1.64-rc1 --eml
stop_httpd
exit 0
