#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# rcgate's mails read by the ecosystem's own tools. b4 (the tool stable
# maintainers and submitters collect trailers with) reads a thread mbox
# made of the real 6.1.64-rc1 announcement, a patch of its series and one
# of rcgate's replies (the golden files tests/unit/reply writes, with
# their placeholder ids made real), applying cover-letter trailers to the
# series as a maintainer does (b4 am -t):
#   - a clean rc's reply gives the series exactly one Tested-by, in
#     rcgate's own name (b4 drops a trailer whose address is not the
#     sender's);
#   - a regressed rc's reply gives it nothing: its 0-day form "| Reported-
#     by:" / "| Closes:" lines stay out; with the bars removed (a control
#     that shows the check can fail) b4 would have applied them; nor
#     does a partial report, sent while a target still runs.
# Then Python's email package and a 78-column check read every kind of
# mail rcgate sends (formats.py reply). No daemon, no guest: seconds.
. "$(dirname "$0")/lib.sh"
echo "1..7"
if ! command -v b4 >/dev/null; then
	for i in 1 2 3 4 5 6 7; do skip_test "b4 $i" "b4 is not installed (scripts/setup installs it)"; done
	exit 0
fi
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
D=$SRC/tests/data
ANN=20231124172024.664207345@linuxfoundation.org
FROM='rcgate <rcgate@ci.test>'

# real MIME mail from a golden file: a date, ids of rcgate's own shape;
# a reply written to another rc's thread is moved into this one.
real() {
	sed -e 's/^Date: <date>/Date: Sat, 25 Nov 2023 09:30:00 +0000/' \
	    -e 's/ID-\([0-9]*\)/rcgate.golden-\1@ci.test/g' \
	    -e "s/20231204192935.163661217@linuxfoundation.org/$ANN/g" "$1"
}
# mbox NAME REPLY-FILTER: the thread with the reply; b4 am -t into NAME/.
thread() {
	local name=$1
	shift
	{
		for f in "$D/mail/announce-6.1.64-rc1.eml" "$D/mail/patch-6.1-001-ext4-full.eml"; do
			echo "From mboxrd@z Thu Jan  1 00:00:00 1970"
			cat "$f"
			echo
		done
		echo "From mboxrd@z Thu Jan  1 00:00:00 1970"
		"$@"
		echo
	} > "$work/$name.mbox"
	mkdir -p "$work/$name"
	b4 --offline-mode am -t -m "$work/$name.mbox" -o "$work/$name" "$ANN" \
		> "$work/$name.log" 2>&1
	cat "$work/$name"/*.mbx 2>/dev/null
}
count() { grep -c "$1" || true; }

clean=$(thread clean real "$D/report/thread/06-report-6.1.66-rc1.eml")
check "b4 reads the thread and the patch of the series" \
	sh -c "printf '%s' \"\$1\" | grep -q '^Subject: \[PATCH 1/372\] ext4: properly sync file size'" _ "$clean"
n=$(printf '%s\n' "$clean" | count "^Tested-by: $FROM\$")
all=$(printf '%s\n' "$clean" | count '^Tested-by:')
check "a clean rc's reply gives the series exactly one Tested-by, rcgate's own ($n, $all in all)" \
	[ "$n" = 1 -a "$all" = 1 ]

bad=$(thread regressed real "$D/report/thread/01-report-6.1.64-rc1.eml")
none=$(thread none true)
check "a regressed rc's reply changes nothing b4 applies: the series as without the reply" \
	sh -c "[ -n \"\$1\" ] && [ \"\$1\" = \"\$2\" ]" _ "$bad" "$none"
[ "$bad" = "$none" ] || diag "$(diff <(printf '%s\n' "$none") <(printf '%s\n' "$bad") | head -5)"
partial=$(thread partial real "$D/report/thread/11-partial-6.1.64-rc1.eml")
check "a partial report (a regression confirmed while a target still runs) gives the series nothing" \
	sh -c "[ -n \"\$1\" ] && [ \"\$1\" = \"\$2\" ]" _ "$partial" "$none"
unbarred() { real "$D/report/thread/01-report-6.1.64-rc1.eml" | sed 's/^| //'; }
ctl=$(thread control unbarred)
# (b4 0.12 takes Reported-by; Closes only from b4 0.13 on, which knows
# the trailer: the bars keep both out either way.)
check "control: without the bars b4 would have applied rcgate's Reported-by" \
	[ "$(printf '%s\n' "$ctl" | count "^Reported-by: $FROM\$")" = 1 ]

# Every kind of mail, through Python's email package.
bad_files=""
for f in "$D"/report/thread/*.eml "$D"/report/regression-6.1.64-rc1.eml; do
	real "$f" > "$work/one.eml"
	/usr/bin/python3 "$SRC/tests/integration/formats.py" reply "$work/one.eml" 2> "$work/one.err" ||
		bad_files="$bad_files $(basename "$f"): $(head -1 "$work/one.err")"
done
check "Python's email package reads every mail kind: no defects, no repeated recipient, 78 columns" \
	[ -z "$bad_files" ]
[ -n "$bad_files" ] && diag "$bad_files"
# regzbot's commands: only in mails to the regressions list, alone in
# their paragraph.
regz() {
	local f ok=0
	for f in "$D"/report/thread/*.eml; do
		if grep -q '^#regzbot' "$f"; then
			grep -q '^To: regressions@lists.linux.dev$' "$f" || return 1
			/usr/bin/python3 - "$f" <<'EOF' || return 1
import re, sys
body = open(sys.argv[1]).read().split("\n\n", 1)[1]
paras = body.split("\n\n")
cmds = [p for p in paras if "#regzbot" in p]
sys.exit(0 if cmds and all(re.fullmatch(r"#regzbot \w+: [^\n]+", p.strip()) for p in cmds) else 1)
EOF
			ok=$((ok + 1))
		fi
	done
	[ $ok -ge 3 ]
}
check "regzbot commands appear only in mails to regressions@lists.linux.dev, each a paragraph of its own" regz
exit 0
