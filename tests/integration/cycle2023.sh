#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The November 2023 review cycle as a test. 5.10.202-rc1, 5.15.140-rc1 and
# 6.1.64-rc1 are announced by mail (fixtures in the real format) and tested
# with the known-bad kernel (936e114a245b reverted: the 6.1.64 state); their
# baselines 5.10.201, 5.15.139 and 6.1.63 with the good kernel. Expected:
# each failing test is one regression with three occurrences, three reply
# mails reach a real SMTP server each threaded to its own announcement,
# three gates block. 6.1.64 ships anyway: one report to the regressions
# list with "#regzbot introduced: v6.1.63..v6.1.64", threaded under
# rcgate's own report. Then 6.1.66-rc1 with the good kernel fixes the
# regressions on 6.1 only (they stay open on 5.10 and 5.15): its reply has
# LKFT's "## Test Fixes" and one Tested-by, regzbot hears "resolve". A
# regression triaged invalid gets a follow-up in each thread that had it.
# Each thread's mails are listed in order.
. "$(dirname "$0")/lib.sh"
echo "1..32"
KDIR=${RCGATE_KERNELS:-/var/cache/rcgate/kernels}
if [ ! -f "$KDIR/good/bzImage" ] || [ ! -f "$KDIR/bad/bzImage" ]; then
	for i in $(seq 1 31); do skip_test "2023 cycle $i" "known-good/bad kernels not built (tests/kernels/build-kernels)"; done
	exit 0
fi
GOOD="{\"target\":\"x86_64\",\"kind\":\"image\",\"url\":\"file://$KDIR/good/bzImage\",\"sha256\":\"$(cat "$KDIR/good/bzImage.sha256")\",\"custom\":true}"
BAD="{\"target\":\"x86_64\",\"kind\":\"image\",\"url\":\"file://$KDIR/bad/bzImage\",\"sha256\":\"$(cat "$KDIR/bad/bzImage.sha256")\",\"custom\":true}"
MAIL=$SRC/tests/data/mail
start_smtpd
WEBHOOK_DIR=$(mktemp -d)
start_httpd "$WEBHOOK_DIR"
start_daemon "workers = 2" "attempts = 2" "timeout = 300" \
	"[regressions]" "reruns = 1" \
	"[report]" "public_url = https://rcgate.ci.test" "mail_from = rcgate <rcgate@ci.test>" "[notify]" "smtp_url = $SMTPD_URL" "webhook_url = $HTTPD_URL/hook" "webhook_secret = s3cret"

submit() { req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$1\",\"artifacts\":[$2]}"; }
announce() { req POST /api/v1/announcements -H "$(auth)" -H 'Content-Type: message/rfc822' --data-binary "@$MAIL/$1"; }
settled() {	# settled VERSION...: wait until each has a final gate verdict
	local v deadline=$((SECONDS + 900))
	for v in "$@"; do
		while [ $SECONDS -lt $deadline ]; do
			req GET "/api/v1/releases/$v/gate"
			case "$(jqb .verdict)" in pass|block|incomplete) break ;; esac
			sleep 2
		done
	done
}

for v in 5.10.201 5.15.139 6.1.63; do submit "$v" "$GOOD"; done
settled 5.10.201 5.15.139 6.1.63
check "the baselines (good kernel) pass their gates" [ "$(for v in 5.10.201 5.15.139 6.1.63; do req GET /api/v1/releases/$v/gate; jqb .verdict; done | sort -u)" = pass ]

ok_ann=0
for m in announce-5.10.202-rc1.eml announce-5.15.140-rc1.eml announce-6.1.64-rc1.eml; do
	announce "$m"; [ "$CODE" = 201 ] && ok_ann=$((ok_ann + 1))
done
check "three announcements create three releases" [ $ok_ann = 3 ]
announce reply-preadv03.eml
check "a tester's reply is not an announcement (422)" [ "$CODE" = 422 ]
req GET /api/v1/releases/6.1.64-rc1
check "the 6.1.64-rc1 release carries its Message-ID and deadline" [ "$(jqb .message_id)" != null -a "$(jqb .deadline)" != null ]
for v in 5.10.202-rc1 5.15.140-rc1 6.1.64-rc1; do submit "$v" "$BAD"; done
check "the bad kernel is attached to the announced rc" [ "$CODE" = 201 ]
settled 5.10.202-rc1 5.15.140-rc1 6.1.64-rc1

req GET "/api/v1/regressions?limit=200"
nreg=$(jqb '.regressions | length')
diag "regressions: $nreg"; printf '%s' "$BODY" | jq -r '.regressions[] | "\(.id) \(.test) \(.target) \(.state) [\(.releases)]"' | sed 's/^/# /'
check "the bad kernel's failures are regressions" [ "${nreg:-0}" -ge 1 ]
check "every regression has the three rcs as occurrences" [ "$(jqb '[.regressions[] | select(.occurrences == 3)] | length')" = "$nreg" ]
rid=$(jqb '[.regressions[] | select(.test == "ext4.write_seq_512")][0].id')
req GET "/api/v1/regressions/$rid"
check "ext4.write_seq_512 is one regression across 5.10, 5.15 and 6.1" [ "$(jqb '[.occurrences[].version] | sort | join(" ")')" = "5.10.202-rc1 5.15.140-rc1 6.1.64-rc1" ]
check "it was reproduced by the rerun (confirmed)" [ "$(jqb .state)" = confirmed ]
if jqb .diagnostic | grep -q 'buffer wrong at 0 have'; then ok "its diagnostic says what was read back"; else not_ok "diagnostic"; diag "$(jqb .diagnostic)"; fi
# The rcs' kernels were posted, and the announcements name kernel.org's
# stable-rc tree, which this daemon's [build] tree_origins does not allow:
# the bisect-trees thread refuses it before any fetch and says so.
refused61=
for _ in $(seq 1 30); do
	req GET "/api/v1/regressions/$rid"
	refused61=$(jqb '[.bisections[]? | select(.version == "6.1.64-rc1" and .state == "failed")][0].message // empty')
	[ -n "$refused61" ] && break
	sleep 1
done
diag "6.1.64-rc1's bisection: $refused61"
check "a posted rc whose announcement names a tree outside the allowed origins is not bisected, and says why (nothing fetched)" \
	grep -q "refused, nothing was fetched: .*not under an allowed origin" <<<"$refused61"
check "pwritev is not a regression (the bug only hits write/writev)" [ "$(jqb '[.regressions[]? | select(.test | startswith("ext4.pwrite"))] | length' <<<"$(curl -s "$BASE/api/v1/regressions?limit=200")")" = 0 ]

"$BUILD/rcgatectl" --server "$BASE" gate 6.1.64-rc1 >/dev/null; gate_rc=$?
check "all three gates block; rcgatectl gate exits 1" [ "$(for v in 5.10.202-rc1 5.15.140-rc1 6.1.64-rc1; do req GET /api/v1/releases/$v/gate; jqb .verdict; done | sort -u)" = block -a $gate_rc = 1 ]

req GET /api/v1/releases/6.1.64-rc1/kcidb.json
check "kcidb.json: v5 with the announcement's Message-ID, issues and incidents" [ "$(jqb '.version.major')" = 5 -a "$(jqb '.checkouts[0].message_id')" = 20231124172024.664207345@linuxfoundation.org -a "$(jqb '.issues | length')" = "$(jqb '[.incidents[].issue_id] | unique | length')" -a "$(jqb '.incidents | length')" -ge 1 ]
# The same export against the rules of kcidb-io's v5.3 schema, with an
# independent validator (python3-jsonschema) and the rules it states in
# words: the git:// tree of the announcement as its https:// form.
if /usr/bin/python3 "$SRC/tests/integration/kcidb_check.py" "$SRC/tests/data/kcidb/v5.3-rules.json" \
	--version 6.1.64-rc1 --suite odirect \
	--tree-url https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git \
	< "$STATE/body" 2> "$STATE/kcidb.err"; then
	ok "kcidb.json of an announced, regressed rc keeps KCIDB v5.3's rules"
else
	not_ok "kcidb.json keeps KCIDB v5.3's rules"; diag "$(head -20 "$STATE/kcidb.err")"
fi

# Three replies, each in its own thread.
for _ in $(seq 1 60); do [ "$(ls "$SMTPD_DIR"/*.eml 2>/dev/null | wc -l)" -ge 6 ] && break; sleep 1; done
threads=0
for v in 5.10.202-rc1 5.15.140-rc1 6.1.64-rc1; do
	mid=$(grep -m1 -i '^Message-ID:' "$MAIL/announce-$v.eml" | sed 's/^[^<]*//; s/[[:space:]]*$//')
	f=$(grep -l -i "^Subject: Re: \[PATCH.*$v review" "$SMTPD_DIR"/*.eml 2>/dev/null | xargs -r grep -l '^Results from' | head -1)
	if [ -n "$f" ] && grep -qi "^In-Reply-To: $mid" "$f" && grep -q 'Regressions on' "$f"; then
		threads=$((threads + 1))
	else
		diag "no threaded reply for $v (Message-ID $mid)"
	fi
done
check "three reply mails, each In-Reply-To its own announcement" [ $threads = 3 ]
# Each reply quotes the head of its own announcement (its version, its
# deadline line), under the sender's name, as Roeck's replies do.
quoted=0
for v in 5.10.202-rc1 5.15.140-rc1 6.1.64-rc1; do
	f=$(grep -l -i "^Subject: Re: \[PATCH.*$v review" "$SMTPD_DIR"/*.eml 2>/dev/null | xargs -r grep -l '^Results from' | head -1)
	dl=$(grep -m1 '^Responses should be made by' "$MAIL/announce-$v.eml" | tr -d '\r')
	[ -n "$f" ] && grep -q "^Greg Kroah-Hartman <gregkh@linuxfoundation.org> wrote:.\?$" "$f" &&
		grep -q "^> This is the start of the stable review cycle for the ${v%-rc*} release\..\?$" "$f" &&
		grep -qF "> $dl" "$f" && quoted=$((quoted + 1))
done
check "each reply quotes the head of its announcement (the review cycle and its deadline)" [ $quoted = 3 ]
reply_ok() {	# every reply reads cleanly with Python's email package
	local f
	for f in "$SMTPD_DIR"/*.eml; do
		/usr/bin/python3 "$SRC/tests/integration/formats.py" reply "$f" || return 1
	done
}
check "each reply names every recipient once, keeps lines to 78 columns and one name per target" reply_ok
hook=$(ls "$WEBHOOK_DIR"/hooks/*.json 2>/dev/null | head -1)
if [ -n "$hook" ] && [ "$(cat "${hook%.json}.sig")" = "sha256=$(openssl dgst -sha256 -hmac s3cret -r "$hook" | cut -d' ' -f1)" ]; then
	ok "webhooks carry a valid HMAC-SHA256 signature"
else
	not_ok "webhooks carry a valid HMAC-SHA256 signature"
fi

# 6.1.64 ships anyway (as it did in 2023): its rc is shown as released with
# known regressions; the list filters by branch.
submit 6.1.64 "$BAD"
req GET /api/v1/releases/6.1.64-rc1/gate
check "6.1.64 shipped past the deadline: 6.1.64-rc1 is released with known regressions" [ "$(jqb .released_with_known_regressions)" = true -a "$(jqb .released_as)" = 6.1.64 ]
req GET "/api/v1/releases?branch=5.15"
check "releases filter by branch" [ "$(jqb '[.releases[].version] | sort | join(" ")')" = "5.15.139 5.15.140-rc1" ]
req POST /api/v1/releases/6.1.64/cancel -H "$(auth)"

# mail_with PATTERN [SECONDS]: the first mail whose text has PATTERN.
mail_with() {
	local f="" i
	for i in $(seq 1 "${2:-60}"); do
		f=$(grep -l -e "$1" "$SMTPD_DIR"/*.eml 2>/dev/null | head -1)
		[ -n "$f" ] && break
		sleep 1
	done
	printf '%s' "$f"
}
msgid_of() { sed -n 's/^Message-I[Dd]: *//Ip' "$1" | head -1 | tr -d '\r'; }
report_61=$(grep -l -i '^Subject: Re: \[PATCH.*6.1.64-rc1 review' "$SMTPD_DIR"/*.eml | xargs -r grep -l '^Results from' | head -1)
report_515=$(grep -l -i '^Subject: Re: \[PATCH.*5.15.140-rc1 review' "$SMTPD_DIR"/*.eml | xargs -r grep -l '^Results from' | head -1)
id61=$(msgid_of "${report_61:-/dev/null}")
regz=$(mail_with '^Subject: \[REGRESSION\] 6.1.64: ')
one_regz() {
	[ -n "$regz" ] && [ -n "$id61" ] &&
	grep -q '^To: regressions@lists.linux.dev.\?$' "$regz" &&
	grep -q "^In-Reply-To: $id61" "$regz" &&
	[ "$(grep -l '^Subject: \[REGRESSION\]' "$SMTPD_DIR"/*.eml | wc -l)" = 1 ]
}
check "6.1.64 shipped with them: one report to regressions@lists.linux.dev, under rcgate's 6.1.64-rc1 report" one_regz
check "it says #regzbot introduced: v6.1.63..v6.1.64, a paragraph of its own (release tags, no stable-rc ids)" \
	[ "$(/usr/bin/python3 "$SRC/tests/integration/formats.py" regzbot "${regz:-/dev/null}")" = "#regzbot introduced: v6.1.63..v6.1.64" ]
zero_day() {
	local f
	grep -q '^| Reported-by: rcgate <rcgate@ci.test>.\?$' "$report_61" || return 1
	grep -q -F "| Closes: https://lore.kernel.org/r/$(printf '%s' "$id61" | tr -d '<>')/" "$report_61" || return 1
	for f in "$report_61" "$report_515"; do
		grep -q -e '^Tested-by:' -e '^Reported-by:' -e '^Closes:' "$f" && return 1
	done
	return 0
}
check "the rc replies carry the 0-day robot's | Reported-by and a | Closes link to the reply itself, no bare trailer" \
	zero_day

# 6.1.66-rc1 with the good kernel: fixed on 6.1, still open elsewhere.
announce announce-6.1.66-rc1.eml
submit 6.1.66-rc1 "$GOOD"
settled 6.1.66-rc1
req GET "/api/v1/regressions/$rid"
check "6.1.66-rc1 fixes it on 6.1 only" [ "$(jqb '[.branches[] | "\(.branch)=\(.state)"] | join(" ")')" = "5.10=open 5.15=open 6.1=fixed" -a "$(jqb .state)" != fixed ]
req GET /api/v1/releases/6.1.66-rc1/gate
check "6.1.66-rc1's gate passes" [ "$(jqb .verdict)" = pass ]
r66=$(mail_with '^Subject: Re: \[PATCH 6.1 000/107\] 6.1.66-rc1 review')
fixes66() {
	[ -n "$r66" ] && grep -q '^## Test Fixes (compared to 6.1.6[34]).\?$' "$r66" &&
	grep -q '^Following regressions from the previous round have been fixed now:.\?$' "$r66" &&
	[ "$(grep -c '^Tested-by: ' "$r66")" = 1 ] &&
	grep -q '^Tested-by: rcgate <rcgate@ci.test>.\?$' "$r66" && ! grep -q '#regzbot' "$r66"
}
check "6.1.66-rc1's reply lists the fixes (## Test Fixes) and gives exactly one Tested-by" fixes66
resolved=$(mail_with '^#regzbot resolve: fixed in 6.1.66-rc1.\?$')
check "regzbot hears it is resolved, in the regzbot thread" \
	sh -c '[ -n "$1" ] && grep -q "^In-Reply-To: $2" "$1" && grep -q "^To: regressions@lists.linux.dev.\\?\$" "$1"' _ "$resolved" "$(msgid_of "${regz:-/dev/null}")"
# A regression triaged invalid: a follow-up under each rcgate report
# that named it, in the three threads.
req POST "/api/v1/regressions/$rid" -H "$(auth)" -d '{"state":"invalid","reason":"the test read back the wrong offset"}'
check "triage is accepted" [ "$CODE" = 200 ]
for _ in $(seq 1 30); do [ "$(grep -l 'It was triaged as not a regression' "$SMTPD_DIR"/*.eml 2>/dev/null | wc -l)" -ge 3 ] && break; sleep 1; done
under_reports=0
for f in $(grep -l 'It was triaged as not a regression' "$SMTPD_DIR"/*.eml 2>/dev/null); do
	parent=$(sed -n 's/^In-Reply-To: *//Ip' "$f" | head -1 | tr -d '\r')
	grep -l -F "$parent" "$SMTPD_DIR"/*.eml 2>/dev/null | xargs -r grep -l '^Results from' | xargs -r grep -q -i "^Message-ID: $parent" &&
		under_reports=$((under_reports + 1))
done
check "an invalid regression gets one follow-up in each of the three threads, under rcgate's report ($under_reports)" \
	[ "$under_reports" = 3 ]
check "every mail rcgate sent reads cleanly (Python's email package, 78 columns, each recipient once)" reply_ok
regz_only() {
	local f
	for f in $(grep -l '^#regzbot' "$SMTPD_DIR"/*.eml); do
		grep -q '^To: regressions@lists.linux.dev.\?$' "$f" || return 1
		/usr/bin/python3 "$SRC/tests/integration/formats.py" regzbot "$f" > /dev/null || return 1
	done
}
check "regzbot commands only in mails to the regressions list, each alone in its paragraph" regz_only
# The conversation, thread by thread (the first Reference is the rc's
# announcement), in the order it was sent.
for f in $(ls -tr "$SMTPD_DIR"/*.eml); do
	printf '%s | %s | %s\n' "$(sed -n 's/^References: *//Ip' "$f" | head -1 | cut -c1-48)" \
		"$(sed -n 's/^Subject: *//p' "$f" | head -1)" \
		"$(grep -m1 -e '^#regzbot' -e '^## Test Fixes' -e '^Tested-by:' -e '^| Reported-by' -e 'triaged as not' -e '^commit ' "$f")"
done | sort -s -t'|' -k1,1 | sed 's/^/# /'
stop_smtpd
stop_httpd
rm -rf "$WEBHOOK_DIR"
exit 0
