#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The API with years of history, against its peer: nginx serving the very
# same response bytes as static files, in the same run. A store of 10,000
# releases, 40,000 jobs and 1,000,000 results is made by bench/mkstore
# through the daemon's own write code (cached under /var/cache/rcgate/bench
# by the source's hash), one announced rc with no kernels is added through
# POST /api/v1/announcements, and then per endpoint:
#   - made: a read right after a commit (so made from the store, not the
#     cache), on this store and on a store of 100 releases: the cost of a
#     read must follow the size of its answer, not the history (ratio ~1);
#   - wrk, 2 threads, 32 connections, BENCH_SECONDS (10) s: rcgated's and
#     nginx's req/s and p99, and the ratio of req/s.
# Then rcgated's RSS idle and while 300 clients hold connections, and its
# peer for the idle figure: bench/rssfloor, a process that only loads
# libvirt and opens its embedded QEMU driver, as rcgated does at start.
# Goals (issue 13): p99 < 5 ms, ratio >= 0.5, idle < 20 MiB, 300 < 64 MiB.
set -uo pipefail
# Benches measure the whole suite (lib.sh defaults tests to its smoke group).
RCGATE_SUITE=${RCGATE_SUITE:-all}
. "$(dirname "$0")/../tests/integration/lib.sh" >/dev/null
trap - EXIT
RCGATED=${BENCH_RCGATED:-$RCGATED}
secs=${BENCH_SECONDS:-10}
releases=${BENCH_RELEASES:-10000}
mkstore=$BUILD/bench/mkstore
for tool in wrk nginx "$mkstore" "$BUILD/bench/rssfloor"; do
	command -v "$tool" >/dev/null || { echo "bench: $tool missing (scripts/setup, make bench)"; exit 1; }
done
cache=/var/cache/rcgate/bench
mkdir -p "$cache"
key=$(cat "$SRC/bench/mkstore.c" "$SRC"/schemas/sql/*.sql "$SRC/daemon/store.c" "$SRC/daemon/engine.c" |
	sha256sum | cut -c1-16)

# make_store N: a store of N releases in the cache (tmpfs while writing:
# every commit of the daemon's write code is synchronous = FULL).
make_store() {
	local out=$cache/store-$1-$key.db tmp
	if [ ! -s "$out" ]; then
		tmp=$(mktemp -d /dev/shm/rcgate-mkstore.XXXXXX)
		echo "bench: making a store of $1 releases (minutes for 10,000)" >&2
		"$mkstore" "$tmp/rcgate.db" "$1" >&2 || { rm -rf "$tmp"; return 1; }
		sqlite3 "$tmp/rcgate.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
		cp "$tmp/rcgate.db" "$out.tmp" && mv "$out.tmp" "$out"
		rm -rf "$tmp"
	fi
	echo "$out"
}

# with_store DB: a daemon on a copy of DB (info logging, as deployed).
with_store() {
	start_daemon_on "$1" "log_level = info"
}
start_daemon_on() {
	local db=$1; shift
	STATE=$(mktemp -d "${TMPDIR:-/var/tmp}/rcgate-bench.XXXXXX")
	cp "$db" "$STATE/rcgate.db"
	{
		echo "[daemon]"
		echo "state_dir = $STATE"
		echo "port = 0"
		echo "log_file = $STATE/rcgated.log"
		echo "agent_dir = $BUILD/agent"
		echo "web_dir = $SRC/web"
		echo "max_connections_per_ip = 512"
		printf '%s\n' "$@"
	} > "$STATE/rcgated.conf"
	TOKEN=$("$RCGATED" -f "$STATE/rcgated.conf" -T bench -s write) || return 1
	ADMIN=$("$RCGATED" -f "$STATE/rcgated.conf" -T admin -s admin) || return 1
	"$RCGATED" -d -f "$STATE/rcgated.conf" &
	DAEMON_PID=$!
	for _ in $(seq 1 300); do
		[ -s "$STATE/rcgated.port" ] && break
		sleep 0.1
	done
	[ -s "$STATE/rcgated.port" ] || { echo "bench: rcgated did not start"; return 1; }
	BASE="http://127.0.0.1:$(cat "$STATE/rcgated.port")"
}
stop_bench_daemon() {
	stop_daemon
	rm -rf "$STATE"
}

# The announced rc with no kernels: a real announcement, renumbered.
announce_small() {
	sed 's/6\.1\.64/6.1.900/g; s/6\.1\.63/6.1.899/g' "$SRC/tests/data/mail/announce-6.1.64-rc1.eml" |
		curl -sf -o /dev/null -H "$(auth)" -H 'Content-Type: message/rfc822' \
			--data-binary @- "$BASE/api/v1/announcements"
}

# The endpoints, named, with the same paths on both stores.
endpoints() {
	local newest reg regrel
	newest=$(curl -sf "$BASE/api/v1/releases?limit=5" |
		jq -r '[.releases[] | select(.jobs > 0)][0].version')
	reg=$(curl -sf "$BASE/api/v1/regressions?limit=1" | jq -r '.regressions[0].id')
	regrel=$(curl -sf "$BASE/api/v1/regressions/$reg" | jq -r '.occurrences[0].version')
	cat <<-EOF
	release_small /api/v1/releases/6.1.900-rc1
	release_100_results /api/v1/releases/$newest
	release_regressed /api/v1/releases/$regrel
	releases_list_50 /api/v1/releases?limit=50
	gate /api/v1/releases/$regrel/gate
	regressions_list /api/v1/regressions
	regression /api/v1/regressions/$reg
	kcidb /api/v1/releases/$regrel/kcidb.json
	feed /feed.atom
	metrics /metrics
	EOF
}

# uncached PATH: the median of 5 reads, each made right after a commit (a
# token created), so each is made from the store, with warm statements.
uncached() {
	curl -s -o /dev/null "$BASE$1"
	for _ in 1 2 3 4 5; do
		curl -s -o /dev/null -H "Authorization: Bearer $ADMIN" \
			-d '{"name":"bench","scope":"read"}' "$BASE/api/v1/tokens"
		curl -s -o /dev/null -w '%{time_total}\n' "$BASE$1"
	done | sort -n | sed -n 3p | awk '{ printf "%.2f", $1 * 1000 }'
}

# wrk_run URL -> "req/s p99_ms"
wrk_run() {
	wrk -t2 -c32 -d"${secs}s" --latency "$1" 2>/dev/null | awk '
		/Requests\/sec/ { rps = $2 }
		$1 == "99%" { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
			p = u == "us" ? v / 1000 : u == "s" ? v * 1000 : u == "m" ? v * 60000 : v }
		END { printf "%.0f %.2f\n", rps, p }'
}

rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$DAEMON_PID/status"; }

# BENCH_STORE, BENCH_STORE_SMALL: bench existing stores instead.
big=${BENCH_STORE:-$(make_store "$releases")} || exit 1
small=${BENCH_STORE_SMALL:-$(make_store 100)} || exit 1

# Uncached reads: the small store first, then the big one.
declare -A cold_small
with_store "$small" || exit 1
announce_small
while read -r name path; do cold_small[$name]=$(uncached "$path"); done < <(endpoints)
stop_bench_daemon

with_store "$big" || exit 1
announce_small
eps=$(endpoints)
declare -A cold_big
while read -r name path; do cold_big[$name]=$(uncached "$path"); done <<< "$eps"

# nginx with the same bytes, one file per endpoint.
www=$(mktemp -d /var/tmp/rcgate-nginx.XXXXXX)
chmod 755 "$www"
mkdir -p "$www/root"
while read -r name path; do
	curl -sf -o "$www/root/$name" "$BASE$path"
done <<< "$eps"
chmod -R a+rX "$www"
nport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$www/nginx.conf" <<-EOF
	worker_processes auto;
	pid $www/nginx.pid;
	error_log $www/error.log;
	events { worker_connections 1024; }
	http {
		access_log off;
		client_body_temp_path $www/tmp; proxy_temp_path $www/tmp;
		fastcgi_temp_path $www/tmp; uwsgi_temp_path $www/tmp; scgi_temp_path $www/tmp;
		server {
			listen 127.0.0.1:$nport;
			root $www/root;
			default_type application/json;
		}
	}
EOF
nginx -c "$www/nginx.conf" -p "$www" || { echo "bench: nginx did not start"; exit 1; }

printf '%-20s %8s %8s %6s %10s %8s %10s %8s %6s\n' endpoint bytes made_ms \
	m_ratio rcgated_rs p99_ms nginx_rs p99_ms ratio
worst_p99=0 worst_ratio=999
while read -r name path; do
	bytes=$(stat -c %s "$www/root/$name")
	read -r drps dp99 < <(wrk_run "$BASE$path")
	read -r nrps np99 < <(wrk_run "http://127.0.0.1:$nport/$name")
	ratio=$(awk -v a="$drps" -v b="$nrps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
	cratio=$(awk -v a="${cold_big[$name]}" -v b="${cold_small[$name]}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
	printf '%-20s %8s %8s %6s %10s %8s %10s %8s %6s\n' "$name" "$bytes" \
		"${cold_big[$name]}" "$cratio" "$drps" "$dp99" "$nrps" "$np99" "$ratio"
	worst_p99=$(awk -v a="$worst_p99" -v b="$dp99" 'BEGIN { print (b > a ? b : a) }')
	worst_ratio=$(awk -v a="$worst_ratio" -v b="$ratio" 'BEGIN { print (b < a ? b : a) }')
done <<< "$eps"
nginx -c "$www/nginx.conf" -p "$www" -s stop
echo "worst p99 ${worst_p99} ms (goal < 5), worst req/s ratio ${worst_ratio} (goal >= 0.5)"
echo "made_ms: a read right after a commit (not cached), median of 5, on $releases releases; m_ratio: that ÷ the same on 100 releases"
stop_bench_daemon
rm -rf "$www"

# Memory: a fresh daemon on the big store, idle, then 300 clients that
# each made a request and keep their connection (from 127.0.0.1-5).
with_store "$big" "max_connections = 512" || exit 1
sleep 2
idle=$(rss_kib)
idle_file=$(awk '/^RssFile/ { print $2 }' "/proc/$DAEMON_PID/status")
python3 - "$(cat "$STATE/rcgated.port")" > "$STATE/holder.out" <<-'EOF' &
	import socket, sys, time
	port = int(sys.argv[1])
	conns = []
	for i in range(300):
	    s = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.%d" % (1 + i % 5), 0))
	    s.sendall(b"GET /api/v1/releases?limit=50 HTTP/1.1\r\nHost: x\r\n\r\n")
	    conns.append(s)
	for s in conns:
	    s.settimeout(10)
	    s.recv(65536)
	print("holding", flush=True)
	time.sleep(8)
EOF
holder=$!
for _ in $(seq 1 100); do grep -q holding "$STATE/holder.out" 2>/dev/null && break; sleep 0.2; done
held=$(rss_kib)
wait "$holder"
stop_bench_daemon
# The peer: libvirt loaded and its embedded driver open, nothing else.
floor_dir=$(mktemp -d)
read -r floor floor_file loaded loaded_file < <("$BUILD/bench/rssfloor" "$floor_dir")
rm -rf "$floor_dir"
mib() { echo "$1 / 1024" | bc -l; }
printf 'rss idle %.1f MiB (goal < 20; %.1f MiB file-backed), with 300 connections held %.1f MiB (goal < 64)\n' \
	"$(mib "$idle")" "$(mib "$idle_file")" "$(mib "$held")"
printf 'rss of a process that only opens libvirt'"'"'s embedded driver: %.1f MiB (%.1f MiB file-backed); rcgated idle beyond it: %.1f MiB\n' \
	"$(mib "$floor")" "$(mib "$floor_file")" "$(mib $((idle - floor)))"
printf 'rss of a process that only loads and initialises libvirt: %.1f MiB (%.1f MiB file-backed)\n' \
	"$(mib "$loaded")" "$(mib "$loaded_file")"
