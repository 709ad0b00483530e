#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Naming the culprit (issue 15), for real: a stable-rc-like tree
# (gitlib.sh) whose branch linux-6.1.y goes from v6.1.192 through two
# harmless backports, then "ext4: properly sync file size update after
# O_DIRECT write" (commit 91562895f803 upstream; here its effect is the
# 936e114a245b revert, the prerequisite the 2023 backport lacked), one
# more harmless backport and "Linux 6.1.193-rc1": 5 commits after the good
# end. 6.1.192 is built from the tag's commit and passes; 6.1.193-rc1 is
# announced by mail, built, its ext4 regressions confirmed by a rerun; then
# rcgated bisects them to the culprit within ceil(log2(5)) + 1 = 4 builds,
# each step building one commit incrementally and running only the
# failing tests, and says so in the rc's thread.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/gitlib.sh"
git_test_begin 12 "bisect"
UPSTREAM=91562895f8030cb9a0470b1db49de79346a69f91
good=$(GIT_DIR=$REPO git rev-parse "refs/heads/$B")
h1=$(git_commit "$REPO" $B "README: a harmless backport" "commit 1111111111111111111111111111111111111111 upstream." \
	'sed:README:s/^Linux kernel$/Linux kernel (stable)/')
h2=$(git_commit "$REPO" $B "CREDITS: a harmless backport" "commit 2222222222222222222222222222222222222222 upstream." \
	'sed:CREDITS:1s/^/ /')
culprit=$(git_commit "$REPO" $B "ext4: properly sync file size update after O_DIRECT write" \
	"commit $UPSTREAM upstream.

(rcgate's test tree: reverting 936e114a245b stands in for the iomap
prerequisite the 2023 backport lacked.)" \
	"patch:$SRC/tests/kernels/936e114a245b-revert.patch")
h4=$(git_commit "$REPO" $B "ext4: a comment" "commit 4444444444444444444444444444444444444444 upstream." \
	'sed:fs/ext4/file.c:1s|$| /* h4 */|')
rc1=$(git_version "$REPO" $B 193 -rc1)
[ -n "$h1" ] && [ -n "$h2" ] && [ -n "$culprit" ] && [ -n "$h4" ] && [ -n "$rc1" ] ||
	{ echo "Bail out! cannot commit to the fixture"; exit 1; }
git_daemon "$SRV" || { echo "Bail out! git daemon"; exit 1; }
URL=$GIT_URL/linux-stable-rc.git

start_smtpd
start_daemon "workers = 2" "attempts = 1" "filesystems = ext4" "crash_test = 0" \
	"timeout = 600" "[regressions]" "reruns = 1" "[notify]" "smtp_url = $SMTPD_URL" \
	"[build]" "from_announcements = 1" "announced_source = git" "targets = x86_64"


# The good end: 6.1.192, built from the tag's commit.
req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"6.1.192\",\"targets\":[\"x86_64\"],\"source\":{\"git\":\"$URL\",\"commit\":\"$good\"}}"
settled 6.1.192 1800 || diag "6.1.192 did not settle"
req GET /api/v1/releases/6.1.192
check "6.1.192 built from its commit passes every test" \
	[ "$(jqb '.jobs[0].state')" = done -a "$(jqb '.jobs[0].built_commit')" = "$good" -a \
	  "$(jqb '[.jobs[0].results[] | select(.status == "fail")] | length')" = 0 ]

# The rc, announced by mail.
sed -e 's/6\.1\.64-rc1/6.1.193-rc1/g' -e 's/6\.1\.64/6.1.193/g' -e 's/6\.1\.63/6.1.192/g' \
	-e "s|git://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git|$URL|" \
	"$SRC/tests/data/mail/announce-6.1.64-rc1.eml" > "$work/rc1.eml"
msgid=$(sed -n 's/^Message-I[Dd]: *//p' "$work/rc1.eml" | head -1 | tr -d '\r<>')
req POST /api/v1/announcements -H "$(auth)" -H 'Content-Type: message/rfc822' --data-binary "@$work/rc1.eml"
settled 6.1.193-rc1 2400 || diag "6.1.193-rc1 did not settle"
req GET /api/v1/releases/6.1.193-rc1
check "the rc blocks on confirmed ext4 regressions (its job and its rerun failed)" \
	[ "$(jqb .gate.verdict)" = block -a "$(jqb '.jobs | length')" = 2 ]
reg=$(jqb '[.regressions[] | select(.test | startswith("ext4."))][0].id')
nreg=$(jqb '[.regressions[] | select(.test | startswith("ext4."))] | length')
diag "rc1: $nreg ext4 regressions, the first #$reg"

# The bisection: steps until an answer.
deadline=$((SECONDS + 2400))
while [ $SECONDS -lt $deadline ]; do
	req GET "/api/v1/regressions/$reg"
	case "$(jqb '.bisections[0].state // "none"')" in found|ambiguous|failed) break ;; esac
	sleep 5
done
printf '%s' "$BODY" > "$work/regression.json"
diag "bisection: $(jqb -c '.bisections[0] | {state, culprit, culprit_upstream, steps, jobs, message}')"
check "one bisection of the rc, and it found the culprit" \
	[ "$(jqb '.bisections | length')" = 1 -a "$(jqb '.bisections[0].state')" = found -a \
	  "$(jqb '.bisections[0].culprit')" = "$culprit" ]
check "the culprit's subject and its upstream commit (from 'commit X upstream.')" \
	[ "$(jqb '.bisections[0].culprit_subject')" = "ext4: properly sync file size update after O_DIRECT write" -a \
	  "$(jqb '.bisections[0].culprit_upstream')" = "$UPSTREAM" ]
steps=$(jqb '.bisections[0].steps')
check "within ceil(log2(5)) + 1 = 4 builds ($steps)" [ "$steps" -ge 1 -a "$steps" -le 4 ]
check "the regression is valid for schemas/regression.json (jsonschema)" \
	sh -c "/usr/bin/python3 '$SRC/tests/integration/validate.py' '$SRC/schemas' regression < '$work/regression.json'"
step=$(jqb '.bisections[0].jobs[0]')
req GET "/api/v1/jobs/$step"
printf '%s' "$BODY" > "$work/step.json"
check "a step is a job: one commit, only the failing tests, not the rc's version" \
	[ "$(jqb .bisection_id)" != null -a "$(jqb '.git_commit | length')" = 40 -a \
	  "$(jqb '.only_tests | length > 0')" = true -a "$(jqb '[.results[] | select(.test != "build.kernel")] | length')" -le "$nreg" ]
check "the step job is valid for schemas/job.json (jsonschema)" \
	sh -c "/usr/bin/python3 '$SRC/tests/integration/validate.py' '$SRC/schemas' job < '$work/step.json'"
req GET /api/v1/releases/6.1.193-rc1
check "steps are not the rc's own jobs: its jobs and gate are as before" \
	[ "$(jqb '.jobs | length')" = 2 -a "$(jqb .gate.verdict)" = block ]
req GET "/api/v1/regressions/$(jqb '[.regressions[] | select(.test | startswith("ext4."))][-1].id')"
check "every ext4 regression of the rc shows the same bisection" \
	[ "$(jqb '.bisections[0].culprit')" = "$culprit" ]
sent=""
for _ in $(seq 1 30); do
	sent=$(grep -l "^In-Reply-To: <$msgid>" "$SMTPD_DIR"/*.eml 2>/dev/null | xargs -r grep -l "First bad commit: $culprit" 2>/dev/null | head -1)
	[ -n "$sent" ] && break
	sleep 1
done
check "the culprit is a follow-up in the rc's thread" [ -n "$sent" ]
check "the follow-up names the upstream commit" sh -c "[ -n '$sent' ] && grep -q '$UPSTREAM' '$sent'"
stop_smtpd
git_test_end
exit 0
