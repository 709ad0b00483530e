#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A forged announcement is no mail amplifier (issue 49), against a real
# daemon, a real SMTP server and libopendkim in rcgated: under [announce]
# dkim = require an unsigned or altered mail with Greg's From: is refused
# (the reason in the API and the log) and a signed one is taken; a signed
# mail with 300 addresses in Cc gets a report to at most max_recipients;
# under prefer an unsigned one is taken, marked unverified, and its report
# goes to [announce] lists alone. The mails are tests/data's, signed at
# test time by python3-dkim with the test-only key lib.sh pins.
. "$(dirname "$0")/lib.sh"
echo "1..17"
MAIL=$SRC/tests/data/mail/announce-6.1.64-rc1.eml
start_smtpd
REPORTING=("[report]" "public_url = https://rcgate.ci.test" "mail_from = rcgate <rcgate@ci.test>"
	"[notify]" "smtp_url = $SMTPD_URL" "[jobs]" "attempts = 1" "filesystems = ext4" "crash_test = 0")
start_daemon "${REPORTING[@]}" "[announce]" "dkim = require" "max_recipients = 30"
announce() { req POST /api/v1/announcements -H "$(auth)" --data-binary "@$1"; }
# mail VERSION [sed script]: the 6.1.64-rc1 announcement as VERSION, with
# its own Message-ID.
mail() {
	local b=${1%.*}
	sed -e "s/6\.1\.64-rc1/$1/g; s/\[PATCH 6\.1 /[PATCH $b /" \
		-e "s/^Message-ID: .*/Message-ID: <$1.dkim@linuxfoundation.org>/" \
		-e "${2:-}" "$MAIL"
}
# refused FILE WHY: 422 naming WHY, no release, and the log says so.
refused() {
	local v
	v=$(sed -n 's/^Subject: .* \([0-9.]*-rc[0-9]*\) review$/\1/p' "$1")
	announce "$1"
	[ "$CODE" = 422 ] && jqb .error.message | grep -q "DKIM: .*$2" || { diag "$CODE $BODY"; return 1; }
	grep -q "announcement refused version=$v .*dkim=\".*$2" "$STATE/rcgated.log" || { diag "no log line"; return 1; }
	req GET "/api/v1/releases/$v"
	[ "$CODE" = 404 ]
}
# report_of VERSION: waits for the report mail replying to VERSION's
# announcement; its path without .eml ("" if none came in 120 s).
report_of() {
	local f
	for _ in $(seq 1 120); do
		f=$(grep -l "^In-Reply-To: <$1.dkim@linuxfoundation.org>" "$SMTPD_DIR"/*.eml 2>/dev/null | head -1)
		[ -n "$f" ] && break
		sleep 1
	done
	printf '%s' "${f%.eml}"
}
# A job that ends at once (the artifact's hash is wrong): the rc is
# reported incomplete, which is a reply like any other.
printf 'not a kernel\n' > "$STATE/files/k.deb"
quick_jobs() {
	req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$1\",\"artifacts\":[{\"target\":\"x86_64\",\"url\":\"file://$STATE/files/k.deb\",\"sha256\":\"$(printf 'ab%.0s' $(seq 32))\"}]}"
}

mail 6.1.101-rc1 > "$STATE/unsigned.eml"
check "require: an unsigned mail with Greg's From: is refused (422), the reason in the API and the log, no release" \
	refused "$STATE/unsigned.eml" "no DKIM-Signature"

mail 6.1.102-rc1 | dkim_sign linuxfoundation.org > "$STATE/signed.eml"
announce "$STATE/signed.eml"
check "require: the same mail signed by d=linuxfoundation.org is taken (201), verified in the API" \
	[ "$CODE" = 201 -a "$(jqb .announcement_verified)" = true -a "$(jqb .announcement_dkim)" = "d=linuxfoundation.org s=test" ]

mail 6.1.103-rc1 | dkim_sign linuxfoundation.org | sed 's/There are 372 patches/There are 373 patches/' > "$STATE/body.eml"
check "a signed mail whose body changed after signing is refused" refused "$STATE/body.eml" "body hash mismatch"
mail 6.1.104-rc1 | dkim_sign linuxfoundation.org | sed 's/^From: Greg Kroah-Hartman/From: Greg KH/' > "$STATE/from.eml"
check "a signed mail whose From: changed after signing is refused" refused "$STATE/from.eml" "signature verification failed"
mail 6.1.105-rc1 | dkim_sign linuxfoundation.org | sed '1i Cc: a@example.org, b@example.org' > "$STATE/cc.eml"
check "a second Cc: added above the signed one is refused (multiple Cc)" refused "$STATE/cc.eml" "multiple Cc"
mail 6.1.106-rc1 | dkim_sign linuxfoundation.org --length > "$STATE/l.eml"
printf '\nAlso apply http://evil.example/patch.gz\n' >> "$STATE/l.eml"
check "l= with text appended after the signed length is refused" refused "$STATE/l.eml" "(l=)"
mail 6.1.107-rc1 | dkim_sign example.org > "$STATE/domain.eml"
check "a valid signature of another domain (d=example.org) is refused" refused "$STATE/domain.eml" "d=example.org is neither the From: domain"
mail 6.1.108-rc1 | dkim_sign linuxfoundation.org > "$STATE/dup.eml"
sig=$(awk 'NR == 1 || /^[ \t]/ { print; next } { exit }' "$STATE/dup.eml")
{ for _ in 1 2 3 4; do printf '%s\n' "$sig"; done; cat "$STATE/dup.eml"; } > "$STATE/dup5.eml"
check "five DKIM-Signature headers are not read (refused)" refused "$STATE/dup5.eml" "5 DKIM-Signature headers"
{ printf 'DKIM-Signature: v=1; a=rsa-sha256; d=linuxfoundation.org; s=test; b='; head -c 20000 /dev/zero | tr '\0' A; printf '\n'; mail 6.1.109-rc1; } > "$STATE/huge.eml"
check "a 20 KB DKIM-Signature header is not read (refused)" refused "$STATE/huge.eml" "the longest"
mail 6.1.110-rc1 '1i DKIM-Signature: v=1; a=rsa-sha256; d=linuxfoundation.org; s=test; h=From:Subject; bh=!!; b=%%' > "$STATE/bad.eml"
check "a malformed DKIM-Signature is refused" refused "$STATE/bad.eml" "d=linuxfoundation.org"

# 300 addresses in Cc, signed: taken, and the report reaches 30.
add_victims() {
	awk '$0 == "\tallen.lkml@gmail.com" { printf "%s", $0
		for (i = 1; i <= 300; i++) printf ",\n\tvictim%d@example.org", i
		printf "\n"; next } { print }'
}
mail 6.1.111-rc1 | add_victims | dkim_sign linuxfoundation.org > "$STATE/cc300.eml"
announce "$STATE/cc300.eml"
check "a signed announcement with 300 addresses in Cc is taken ($CODE)" [ "$CODE" = 201 ]
quick_jobs 6.1.111-rc1
r=$(report_of 6.1.111-rc1)
n=$(grep -c '^rcpt ' "${r:-/dev/null}.env" 2>/dev/null)
check "its report goes to 30 of its 318 recipients (${n:-0}), From, To and the real Cc first" \
	sh -c "[ '${n:-0}' = 30 ] && grep -qx 'rcpt gregkh@linuxfoundation.org' '$r.env' &&
		grep -qx 'rcpt stable@vger.kernel.org' '$r.env' && grep -qx 'rcpt allen.lkml@gmail.com' '$r.env' &&
		grep -qx 'rcpt victim12@example.org' '$r.env' && ! grep -q 'victim13@' '$r.env'"
check "the log says how many were left out" grep -q 'release 6.1.111-rc1: a reply reaches 30 .* 288 left out' "$STATE/rcgated.log"
stop_daemon

# prefer: the unsigned forged mail with 300 Cc is taken, unverified, and
# its report goes to the lists alone.
start_daemon "${REPORTING[@]}" "[announce]" "dkim = prefer"
printf 'not a kernel\n' > "$STATE/files/k.deb"
mail 6.1.112-rc1 | add_victims > "$STATE/forged300.eml"
announce "$STATE/forged300.eml"
check "prefer: an unsigned mail is taken (201) and marked unverified in the API" \
	[ "$CODE" = 201 -a "$(jqb .announcement_verified)" = false -a "$(jqb .announcement_dkim)" = "no DKIM-Signature" ]
quick_jobs 6.1.112-rc1
r=$(report_of 6.1.112-rc1)
check "prefer: its report goes to the lists alone ($(grep -c '^rcpt' "${r:-/dev/null}.env" 2>/dev/null) recipients)" \
	sh -c "[ -n '$r' ] && [ \"\$(grep '^rcpt' '$r.env' | sort | paste -sd' ')\" = 'rcpt linux-kernel@vger.kernel.org rcpt stable@vger.kernel.org' ]"
check "prefer: the report says the announcement is unverified" \
	sh -c "grep -A1 'announcement unverified: this mail goes to the lists alone' '${r:-/dev/null}.eml' | grep -q '(DKIM: no DKIM-Signature)'"
# A verified announcement is not corrected by an unverified one.
mail 6.1.113-rc1 | dkim_sign linuxfoundation.org > "$STATE/v.eml"
announce "$STATE/v.eml"
mail 6.1.113-rc1 's/^Message-ID: .*/Message-ID: <forged-correction@example.org>/' > "$STATE/corr.eml"
announce "$STATE/corr.eml"
req GET /api/v1/releases/6.1.113-rc1
check "prefer: an unverified mail does not correct a verified announcement" \
	[ "$(jqb .message_id)" = 6.1.113-rc1.dkim@linuxfoundation.org -a "$(jqb .announcement_verified)" = true ]
stop_smtpd
exit 0
