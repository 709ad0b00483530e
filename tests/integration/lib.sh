# SPDX-License-Identifier: GPL-2.0-only
# Shared by the integration tests: a real rcgated on a free loopback port
# with its own state dir, a token, curl helpers and TAP output.
set -u
SRC=${RCGATE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${RCGATE_BUILDDIR:-$SRC}
RCGATED=$BUILD/rcgated
KERNEL_CACHE=${RCGATE_KERNEL_CACHE:-/var/cache/rcgate/debs}
TESTNUM=0
FAILED=0
DAEMON_PID=
# Every state dir start_daemon made: a test that starts rcgated again (a
# second config) gets a fresh STATE, and the earlier ones go too at the end.
STATES=()

ok() { TESTNUM=$((TESTNUM + 1)); echo "ok $TESTNUM - $*"; }
not_ok() { TESTNUM=$((TESTNUM + 1)); FAILED=$((FAILED + 1)); echo "not ok $TESTNUM - $*"; }
skip_test() { TESTNUM=$((TESTNUM + 1)); echo "ok $TESTNUM - $1 # SKIP $2"; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
check() {	# check "description" command...
	local d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}

# The x86_64 Debian kernel from tests/kernels/debian-6.1.lock.
kernel_deb() {	# kernel_deb target -> path and sha256 on two lines
	awk -v t="$1" '$1 == t { print $2, $3, $4 }' "$SRC/tests/kernels/debian-6.1.lock" |
	while read -r pkg version sha; do
		arch=$(case "$1" in x86_64) echo amd64 ;; i386) echo i386 ;;
			arm64) echo arm64 ;; armv7) echo armhf ;; esac)
		echo "$KERNEL_CACHE/${pkg}_${version}_${arch}.deb"
		echo "$sha"
	done
}

# rcgated refuses to run as root; a test started as root runs it as the
# unprivileged user a deployment uses (scripts/setup creates rcgate).
DAEMON_USER=
if [ "$(id -u)" = 0 ] && id "${RCGATE_TEST_USER:-rcgate}" >/dev/null 2>&1; then
	DAEMON_USER=${RCGATE_TEST_USER:-rcgate}
fi
# What the daemon user reads from the tree: the agents, the kernel config
# fragments and the dashboard. A tree it cannot reach (a checkout under a
# 0700 directory, as CI's sanitizer copy is) is staged in a readable copy
# for this test.
AGENT_SRC_DIR=$BUILD/agent CONFIG_SRC_DIR=$SRC/configs WEB_SRC_DIR=$SRC/web
DKIM_KEYS=$SRC/tests/data/dkim/keys
STAGED=
if [ -n "$DAEMON_USER" ] &&
   ! runuser -u "$DAEMON_USER" -- test -r "$SRC/configs/x86_64.config" 2>/dev/null; then
	STAGED=$(mktemp -d /var/tmp/rcgate-tree.XXXXXX)
	mkdir -p "$STAGED/agent"
	cp -r "$SRC/configs" "$SRC/web" "$STAGED/"
	cp "$DKIM_KEYS" "$STAGED/dkim-keys"; DKIM_KEYS=$STAGED/dkim-keys
	cp "$BUILD"/agent/rcgate-agent-* "$STAGED/agent/" 2>/dev/null
	chmod -R a+rX "$STAGED"
	AGENT_SRC_DIR=$STAGED/agent CONFIG_SRC_DIR=$STAGED/configs
	WEB_SRC_DIR=$STAGED/web
fi
# daemon_owns DIR...: directories the test made for rcgated (a Maildir, a
# cache) become the daemon user's.
daemon_owns() {
	[ -z "$DAEMON_USER" ] && return 0
	local d
	for d in "$@"; do
		[ -e "$d" ] && find "$d" ! -user "$DAEMON_USER" -exec chown -h "$DAEMON_USER:" {} + 2>/dev/null
	done
	return 0
}

# start_daemon [extra config lines...]: fresh state dir, port 0.
start_daemon() {
	local cache=${RCGATE_TEST_CACHE:-/var/cache/rcgate/test-cache}
	STATE=$(mktemp -d "${TMPDIR:-/var/tmp}/rcgate-test.XXXXXX")
	STATES+=("$STATE")
	mkdir -p "$STATE/files" "$cache"
	# Test-only: the loopback origin's compiler cache starts as a copy
	# of tests/kernels/build-kernels' (the same Debian source, built by
	# the test machine itself), so the build tests stay warm although
	# rcgated keeps one cache per origin.
	local seed=${RCGATE_KERNELS:-/var/cache/rcgate/kernels}/ccache
	if [ -d "$seed" ] && [ ! -d "$cache/ccache/origin-127.0.0.1" ]; then
		mkdir -p "$cache/ccache" && cp -a "$seed" "$cache/ccache/origin-127.0.0.1"
	fi
	daemon_owns "$cache"
	{
		echo "[daemon]"
		if [ -n "$DAEMON_USER" ]; then echo "user = $DAEMON_USER"
		elif [ "$(id -u)" = 0 ]; then echo "allow_root = 1"; fi
		echo "state_dir = $STATE"
		echo "cache_dir = $cache"
		echo "port = 0"
		echo "log_file = $STATE/rcgated.log"
		echo "log_level = debug"
		echo "agent_dir = ${AGENT_DIR:-$AGENT_SRC_DIR}"
		echo "max_body_kb = 64"
		echo "web_dir = $WEB_SRC_DIR"
		# file:// only from the kernel caches and the test's own files/;
		# the fault-injecting file server runs on 127.0.0.1.
		echo "[fetch]"
		echo "local_dirs = $KERNEL_CACHE ${RCGATE_KERNELS:-/var/cache/rcgate/kernels} $STATE/files"
		echo "allow_networks = 127.0.0.1/32"
		# Builds keep a compiler cache per source origin, in the test
		# cache (the first build of an origin is a cold one).
		echo "[build]"
		echo "config_dir = $CONFIG_SRC_DIR"
		echo "ccache_dir = $cache/ccache"
		# Test-only opt-in: the loopback servers that play kernel.org,
		# over plain http and git (a deployment lists https:// prefixes).
		echo "tree_origins = git://127.0.0.1: http://127.0.0.1: https://127.0.0.1:"
		echo "file_origins = http://127.0.0.1: https://127.0.0.1: file://$STATE/files/"
		# Test-only: tests/data's announcements lost their DKIM
		# signatures, so they are taken unverified (replies to the lists
		# alone); a mail signed with tests/data/dkim/test.key (dkim_sign)
		# verifies against its pinned key. dkim.sh sets require.
		echo "[announce]"
		echo "dkim = prefer"
		echo "dkim_keys = $DKIM_KEYS"
		# (callers' first lines without a section go to [jobs])
		echo "[jobs]"
		echo "accel = tcg"
		# Most tests need a guest to boot, not the whole suite: the
		# smoke group keeps their time flat as the suite grows. The
		# suite's own tests and the benches set RCGATE_SUITE=all.
		echo "suite = ${RCGATE_SUITE:-smoke}"
		printf '%s\n' "$@"
	} > "$STATE/rcgated.conf"
	"$RCGATED" -n -f "$STATE/rcgated.conf" 2>/dev/null || { echo "Bail out! bad test config"; exit 1; }
	TOKEN=$("$RCGATED" -f "$STATE/rcgated.conf" -T test -s write) || { echo "Bail out! token"; exit 1; }
	launch_daemon "did not start"
}

# This daemon's guest name prefix, "rcgate-<instance>-": another rcgated on
# the machine has its own, so a test never mistakes its guests for ours.
guest_prefix() {
	echo "rcgate-$(sqlite3 "$STATE/rcgate.db" "SELECT value FROM meta WHERE key = 'instance'")-"
}

stop_daemon() {
	if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
		kill -TERM "$DAEMON_PID"
		wait "$DAEMON_PID" 2>/dev/null
	fi
	DAEMON_PID=
	sanitizer_check
}
# launch_daemon WHAT: rcgated on $STATE's configuration, waiting for its
# port (sets DAEMON_PID, PORT, BASE); "Bail out! rcgated WHAT" if it never
# listens. Built with --enable-sanitizers, a report lands in the state dir
# and stop_daemon turns it into a failure.
launch_daemon() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$STATE/sanitizer" \
	UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:log_path=$STATE/sanitizer" \
		"$RCGATED" -d -f "$STATE/rcgated.conf" &
	DAEMON_PID=$!
	for _ in $(seq 1 100); do
		[ -s "$STATE/rcgated.port" ] && break
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		sleep 0.1
	done
	if [ ! -s "$STATE/rcgated.port" ]; then
		echo "Bail out! rcgated $1"; tail -n 50 "$STATE/rcgated.log" >&2; exit 1
	fi
	PORT=$(cat "$STATE/rcgated.port")
	BASE="http://127.0.0.1:$PORT"
}
# restart_daemon: rcgated again on the same state dir and configuration
# (after stop_daemon), as a restart of the service is; sets PORT and BASE.
restart_daemon() {
	rm -f "$STATE/rcgated.port"
	launch_daemon "did not start again"
}
# A sanitizer report from any rcgated of this test is a failure of its own.
sanitizer_check() {
	local f
	for f in "${STATE:-/nonexistent}"/sanitizer.*; do
		[ -f "$f" ] || continue
		not_ok "rcgated ran without sanitizer reports ($(basename "$f"))"
		head -n 40 "$f" | sed 's/^/# /'
		mv "$f" "$f.seen"
	done
}

cleanup() {
	stop_daemon
	stop_httpd
	if [ "$FAILED" -gt 0 ] && [ -n "${STATE:-}" ]; then
		diag "state kept in $STATE; daemon log tail:"
		tail -n 30 "$STATE/rcgated.log" 2>/dev/null | sed 's/^/# /'
	elif [ -n "${STATE:-}" ]; then
		rm -rf "$STATE" "${STATES[@]}"
	fi
	[ -n "$STAGED" ] && rm -rf "$STAGED"
	return 0
}
trap cleanup EXIT

# req METHOD PATH [curl args...]: sets CODE and BODY.
req() {
	local method=$1 path=$2; shift 2
	local out
	out=$(curl -sS -o "$STATE/body" -w '%{http_code}' -X "$method" "$@" "$BASE$path") || out=000
	CODE=$out
	BODY=$(cat "$STATE/body" 2>/dev/null)
}
auth() { echo "Authorization: Bearer $TOKEN"; }

# wait_release VERSION SECONDS: until no job is queued or active.
wait_release() {
	local deadline=$((SECONDS + $2)) state
	while [ $SECONDS -lt $deadline ]; do
		req GET "/api/v1/releases/$1"
		state=$(printf '%s' "$BODY" | jq -r .state 2>/dev/null)
		case "$state" in done|infra_error|cancelled) return 0 ;; esac
		sleep 1
	done
	return 1
}

# settled VERSION SECONDS: waits until the release's gate has a final
# verdict (pass, block, incomplete); 1 if it has none by then.
settled() {
	local deadline=$((SECONDS + $2))
	while [ $SECONDS -lt $deadline ]; do
		req GET "/api/v1/releases/$1/gate"
		case "$(jqb .verdict)" in pass|block|incomplete) return 0 ;; esac
		sleep 3
	done
	return 1
}
# thread_mail MSGID TEXT: the mail (of the test smtpd) in MSGID's thread
# that contains TEXT, waiting up to 30 s for it; "" if none.
thread_mail() {
	local f=""
	for _ in $(seq 1 30); do
		f=$(grep -l "^References: <$1>" "$SMTPD_DIR"/*.eml 2>/dev/null | xargs -r grep -l -F "$2" 2>/dev/null | head -1)
		[ -n "$f" ] && break
		sleep 1
	done
	printf '%s' "$f"
}
jqb() { printf '%s' "$BODY" | jq -r "$@"; }
# dkim_sign DOMAIN [dkimsign.py options] < mail: the mail signed with the
# test-only key (selector "test") that lib.sh's dkim_keys pins.
dkim_sign() {
	/usr/bin/python3 "$SRC/tests/integration/dkimsign.py" \
		"$SRC/tests/data/dkim/test.key" test "$@"
}

# start_httpd DIR: a fault-injecting file server (httpd.py); sets HTTPD_URL.
start_httpd() {
	stop_httpd
	HTTPD_DIR=$1
	HTTPD_LOG=$(mktemp)
	rm -f "$HTTPD_DIR/.port"
	/usr/bin/python3 "$SRC/tests/integration/httpd.py" "$HTTPD_DIR" "$HTTPD_DIR/.port" 2>"$HTTPD_LOG" &
	HTTPD_PID=$!
	for _ in $(seq 1 50); do [ -s "$HTTPD_DIR/.port" ] && break; sleep 0.1; done
	HTTPD_URL="http://127.0.0.1:$(cat "$HTTPD_DIR/.port")"
}
stop_httpd() {
	if [ -n "${HTTPD_PID:-}" ]; then
		kill "$HTTPD_PID" 2>/dev/null; wait "$HTTPD_PID" 2>/dev/null
	fi
	HTTPD_PID=
}

# The lock file's kernels as an artifacts JSON list; $1 = URL prefix per
# file name (default file:// of the package cache).
artifacts_json() {
	local prefix=${1:-file://$KERNEL_CACHE} out= target pkg version sha arch
	while read -r target pkg version sha; do
		case "$target" in ''|'#'*) continue ;; esac
		arch=$(case "$target" in x86_64) echo amd64 ;; i386) echo i386 ;;
			arm64) echo arm64 ;; armv7) echo armhf ;; esac)
		out+="${out:+,}{\"target\":\"$target\",\"url\":\"$prefix/${pkg}_${version}_${arch}.deb\",\"sha256\":\"$sha\"}"
	done < "$SRC/tests/kernels/debian-6.1.lock"
	echo "[$out]"
}
have_all_kernels() {
	local f
	for t in x86_64 i386 arm64 armv7; do
		f=$(kernel_deb $t | head -1)
		[ -n "$f" ] && [ -f "$f" ] || return 1
	done
}

# start_smtpd: a real SMTP server (aiosmtpd); sets SMTPD_DIR and SMTPD_URL.
start_smtpd() {	# [port]
	SMTPD_DIR=$(mktemp -d)
	/usr/bin/python3 "$SRC/tests/integration/smtpd.py" "$SMTPD_DIR" ${1:-} 2>"$SMTPD_DIR/log" &
	SMTPD_PID=$!
	for _ in $(seq 1 50); do [ -s "$SMTPD_DIR/.port" ] && break; sleep 0.1; done
	SMTPD_URL="smtp://127.0.0.1:$(cat "$SMTPD_DIR/.port")"
}
stop_smtpd() { [ -n "${SMTPD_PID:-}" ] && kill "$SMTPD_PID" 2>/dev/null; wait "$SMTPD_PID" 2>/dev/null; SMTPD_PID=; }
