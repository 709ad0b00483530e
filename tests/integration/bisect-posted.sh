#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Bisecting an rc whose kernels CI posted (issue 28, issue 29's "bisect
# every confirmed regression, whoever built the kernels"), for real. In
# make check-slow: it adds a first build from the tag and two to three
# incremental ones to what bisect.sh already builds.
#
# 6.1.192 is posted as the known-good kernel (tests/kernels/build-kernels)
# and 6.1.193-rc1 as the known-bad one (936e114a245b reverted), attached
# to its announcement, whose X-KernelTest-Tree and -Branch name the
# gitlib.sh fixture's linux-6.1.y: v6.1.192, a harmless backport, the
# culprit (the same 936e114a245b revert), another harmless one and
# "Linux 6.1.193-rc1". rcgated fetches that branch, takes its head
# because its Makefile says 6.1.193-rc1, checks the tag v6.1.192 first
# (no release of the branch passed at a known commit) and bisects the
# 4 commits after it with its own builds to the fixture's culprit, then
# the revert check and the follow-up in the rc's thread, as for an rc it
# built from git.
#
# Two more posted rcs say why they are not bisected, with no fetch:
# 6.1.194-rc1's announcement names a tree outside [build] tree_origins
# (a forged header), and 6.1.195-rc1's names the fixture's branch, whose
# head is still 6.1.193-rc1 (the branch is not the rc that was tested).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/gitlib.sh"
N=13
KDIR=${RCGATE_KERNELS:-/var/cache/rcgate/kernels}
if [ ! -f "$KDIR/good/bzImage" ] || [ ! -f "$KDIR/bad/bzImage" ]; then
	echo "1..$N"
	for i in $(seq 1 $N); do skip_test "bisect-posted $i" "known-good/bad kernels not built (tests/kernels/build-kernels)"; done
	exit 0
fi
git_test_begin $N "bisect-posted"
good=$(GIT_DIR=$REPO git rev-parse "refs/heads/$B")
GOOD="{\"target\":\"x86_64\",\"kind\":\"image\",\"url\":\"file://$KDIR/good/bzImage\",\"sha256\":\"$(cat "$KDIR/good/bzImage.sha256")\",\"custom\":true}"
BAD="{\"target\":\"x86_64\",\"kind\":\"image\",\"url\":\"file://$KDIR/bad/bzImage\",\"sha256\":\"$(cat "$KDIR/bad/bzImage.sha256")\",\"custom\":true}"

h1=$(git_commit "$REPO" $B "CREDITS: a harmless backport" "commit 2222222222222222222222222222222222222222 upstream." \
	'sed:CREDITS:1s/^/ /')
culprit=$(git_culprit "$REPO" $B 91562895f8030cb9a0470b1db49de79346a69f91)
h3=$(git_commit "$REPO" $B "ext4: a comment" "commit 4444444444444444444444444444444444444444 upstream." \
	'sed:fs/ext4/file.c:1s|$| /* h3 */|')
rc1=$(git_version "$REPO" $B 193 -rc1)
[ -n "$h1" ] && [ -n "$culprit" ] && [ -n "$h3" ] && [ -n "$rc1" ] ||
	{ echo "Bail out! cannot commit to the fixture"; exit 1; }
git_daemon "$SRV" || { echo "Bail out! git daemon"; exit 1; }
URL=$GIT_URL/linux-stable-rc.git

start_smtpd
start_daemon "workers = 2" "attempts = 2" "filesystems = ext4" "crash_test = 0" \
	"timeout = 600" "[regressions]" "reruns = 1" "[report]" "public_url = https://rcgate.ci.test" \
	"mail_from = rcgate <rcgate@ci.test>" "[notify]" "smtp_url = $SMTPD_URL"

submit() { req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"$1\",\"artifacts\":[$2]}"; }
# bisection VERSION: waits for VERSION's bisection to end (its revert
# check too); BODY is the regression's page.
bisection() {
	local deadline=$((SECONDS + 3600)) reg
	while [ $SECONDS -lt $deadline ]; do
		req GET "/api/v1/releases/$1"
		reg=$(jqb '[.regressions[] | select(.test | startswith("ext4."))][0].id // empty')
		if [ -n "$reg" ]; then
			req GET "/api/v1/regressions/$reg"
			case "$(jqb --arg v "$1" '[.bisections[] | select(.version == $v)][0] | (.state // "none") + "/" + (.revert_state // "none")')" in
			found/pending|none/*|running/*) ;;
			*) return 0 ;;
			esac
		fi
		sleep 5
	done
	return 1
}

submit 6.1.192 "$GOOD"
settled 6.1.192 1800 || diag "6.1.192 did not settle"
req GET /api/v1/releases/6.1.192/gate
[ "$(jqb .verdict)" = pass ] || diag "6.1.192's gate: $(jqb -c '{verdict, reasons}')"
check "6.1.192 (the good kernel, posted) passes" [ "$(jqb .verdict)" = pass ]

msgid=$(git_announce 6.1.193-rc1 6.1 linux-6.1.y 345 "$work")
submit 6.1.193-rc1 "$BAD"
settled 6.1.193-rc1 2400 || diag "6.1.193-rc1 did not settle"
req GET /api/v1/releases/6.1.193-rc1
check "6.1.193-rc1 (the bad kernel, posted) blocks on confirmed ext4 regressions; its announcement names the tree" \
	[ "$(jqb .gate.verdict)" = block -a "$(jqb .git_tree)" = "$URL" -a "$(jqb '.jobs[0].kind')" = image ]

# Two posted rcs that are not bisected, submitted now so their guests run
# beside the bisection's builds.
URL=https://evil.example/linux-stable-rc.git git_announce 6.1.194-rc1 6.1 linux-6.1.y 346 "$work" >/dev/null
submit 6.1.194-rc1 "$BAD"
git_announce 6.1.195-rc1 6.1 linux-6.1.y 347 "$work" >/dev/null
submit 6.1.195-rc1 "$BAD"

bisection 6.1.193-rc1 || diag "no answer in time"
printf '%s' "$BODY" > "$work/regression.json"
b='[.bisections[] | select(.version == "6.1.193-rc1")][0]'
diag "bisection: $(jqb -c "$b | {state, culprit, steps, jobs, message, revert_state, revert_message, revert_job}")"
first=$(jqb "$b.jobs[0]")
revjob=$(jqb "$b.revert_job")
req GET "/api/v1/jobs/$first"
good_step=$(jqb .git_commit)
req GET "/api/v1/jobs/$revjob"
check "the posted rc is bisected from the branch head that says 6.1.193-rc1 (the revert check builds it), the tag v6.1.192 checked first" \
	[ "$good_step" = "$good" -a "$(jqb .git_commit)" = "$rc1" -a "$(jqb .revert_commit)" = "$culprit" -a \
	  "$(jqb .kind)" = git -a "$(jqb .url)" = "$URL" ]
BODY=$(cat "$work/regression.json")
check "it names the fixture's culprit" \
	[ "$(jqb "$b.state")" = found -a "$(jqb "$b.culprit")" = "$culprit" -a \
	  "$(jqb "$b.culprit_subject")" = "ext4: properly sync file size update after O_DIRECT write" ]
steps=$(jqb "$b.steps")
check "within the tag v6.1.192 checked first + ceil(log2(4)) = 3 builds ($steps)" [ "$steps" -ge 2 -a "$steps" -le 3 ]
step=$(jqb "$b.jobs[0]")
req GET "/api/v1/jobs/$step"
check "a step is a git job of the announcement's tree, built here (not the CI kernel)" \
	[ "$(jqb .kind)" = git -a "$(jqb .url)" = "$URL" -a "$(jqb '.built_commit | length')" = 40 -a \
	  "$(jqb .bisection_id)" != null ]
req GET "/api/v1/regressions/$(jq -r '.id' "$work/regression.json")"
check "revert: pass: the branch head with the culprit reverted passes ($(jqb "$b.revert_message"))" \
	[ "$(jqb "$b.revert_state")" = pass ]
req GET /api/v1/releases/6.1.193-rc1
check "the rc's own jobs are still CI's kernel, and its regressions name the culprit" \
	[ "$(jqb '.jobs | length')" = 2 -a "$(jqb '[.jobs[].kind] | unique | join(" ")')" = image -a \
	  "$(jqb "[.regressions[] | select(.test | startswith(\"ext4.\")) | .culprit] | unique | join(\" \")")" = "$culprit" ]
sent=$(thread_mail "$msgid" "commit $culprit")
check "the follow-up in the rc's thread names the culprit as git show does, with revert: PASS" \
	sh -c "[ -n '$sent' ] && grep -q '^commit $culprit.\\?\$' '$sent' &&
		grep -q '^revert: PASS (reverting ${culprit:0:12} on top of 6.1.193-rc1 makes' '$sent'"
check "the follow-up reads cleanly (Python's email package, 78 columns)" \
	/usr/bin/python3 "$SRC/tests/integration/formats.py" reply "${sent:-/dev/null}"

# The two that are not bisected, and why.
why() {	# why VERSION: the message of its bisection once it has one
	local deadline=$((SECONDS + 2400)) reg m
	while [ $SECONDS -lt $deadline ]; do
		req GET "/api/v1/releases/$1"
		reg=$(jqb '[.regressions[] | select(.test | startswith("ext4."))][0].id // empty')
		if [ -n "$reg" ]; then
			req GET "/api/v1/regressions/$reg"
			m=$(jqb --arg v "$1" '[.bisections[] | select(.version == $v)][0] | select(.state == "failed") | .message // empty')
			[ -n "$m" ] && { printf '%s' "$m"; return 0; }
		fi
		sleep 5
	done
	return 1
}
has() { printf '%s' "$1" | grep -qF -- "$2"; }	# has TEXT STRING
m194=$(why 6.1.194-rc1)
diag "6.1.194-rc1: $m194"
check "a forged tree (outside [build] tree_origins) is refused with its reason" \
	has "$m194" "refused, nothing was fetched: tree URL 'https://evil.example/linux-stable-rc.git' is not under an allowed origin"
check "and nothing was fetched: no clone of it in the cache" \
	[ ! -e "${RCGATE_TEST_CACHE:-/var/cache/rcgate/test-cache}/build/git/$(printf '%s' https://evil.example/linux-stable-rc.git | sha256sum | cut -c1-16).git" ]
m195=$(why 6.1.195-rc1)
diag "6.1.195-rc1: $m195"
check "a branch whose head is another rc is not bisected: its head says 6.1.193-rc1" \
	has "$m195" "has moved on: its head ${rc1:0:12} says 6.1.193-rc1 in its Makefile, not 6.1.195-rc1"
stop_smtpd
git_test_end
exit 0
