#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Naming the culprit (issue 15), for real, in two branches.
#
# A stable-rc-like tree (gitlib.sh) whose branch linux-6.1.y goes from
# v6.1.192 through two iomap backports (one named by its "commit X
# upstream." line but adapted on the way, one cherry-picked as is), then
# "ext4: properly sync file size update after O_DIRECT write" (its effect
# here is the 936e114a245b revert: the prerequisite the 2023 backport
# lacked), one more harmless backport and "Linux 6.1.193-rc1": 5 commits
# after the good end. 6.1.192 is built from the tag's commit and passes;
# 6.1.193-rc1 is announced by mail, built, its ext4 regressions confirmed
# by a rerun; then rcgated bisects them to the culprit within
# ceil(log2(5)) + 1 = 4 builds, each step building one commit
# incrementally and running only the failing tests (two at a time: the
# branch has one warm worktree, and with 5 commits two at once save a
# round, so rcgated copies it, objects and all, into a second one while
# the rerun that confirms the regression runs; bisect_seeds and
# bisect_width in tests/unit/bisect.c, the copy in tests/unit/worktree.c,
# when it is made in tests/unit/bisect_seed.c, rounds of two in
# tests/unit/bisect_drive.c), and
# says so in the
# rc's thread with the culprit's upstream commit, and KCIDB's export of
# the rc carries the culprit.
#
# An upstream tree ([bisect] upstream_git, a second repository) holds
# v6.1 (= v6.6 here: the fixture's one base), five commits m1..m5 and the
# culprit's upstream commit U. m1 changes the function the culprit
# changes, m4 the function it calls (generic_write_sync), m2 an unrelated
# file, m3 and m5 the culprit's file: the branch has m3 (by its line) and
# m5 (by patch-id), so the prerequisite candidates are m1 then m4.
#
# A second branch, linux-6.6.y (the same sources, versioned 6.6.63), has
# the same backport of U: 6.6.64-rc1 announced by mail is bisected from
# the tag v6.6.63 (no 6.6 release was tested: the tag is checked first)
# to its own culprit, whose follow-up says the same upstream commit was
# found in 6.1.193-rc1; its branch lacks m3 and m5, so they are listed too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/gitlib.sh"
git_test_begin 31 "bisect"
good=$(GIT_DIR=$REPO git rev-parse "refs/heads/$B")
IOMAP=fs/iomap/direct-io.c
T=$(printf '\t')

# The upstream tree.
git_serve_repo "$SRV" linux || { echo "Bail out! cannot make the upstream fixture"; exit 1; }
UP=$SRV/linux.git
GIT_DIR=$UP git update-ref refs/heads/master "$good" && GIT_DIR=$UP git tag v6.1 "$good" &&
	GIT_DIR=$UP git tag v6.6 "$good" || { echo "Bail out! upstream tags"; exit 1; }
m1=$(git_commit "$UP" master "iomap: say where the I/O began" "" \
	"sed:$IOMAP:s|^${T}loff_t offset = iocb->ki_pos;\$|${T}loff_t offset = iocb->ki_pos;${T}/* where the I/O began */|")
m2=$(git_commit "$UP" master "ext4: a comment in super.c" "" 'sed:fs/ext4/super.c:1s|$| /* m2 */|')
m3=$(git_commit "$UP" master "iomap: name the private flags" "" \
	"sed:$IOMAP:s|^ \\* iomap.h:\$| * iomap.h (m3):|")
m4=$(git_commit "$UP" master "fs: a comment in generic_write_sync" "" \
	"sed:include/linux/fs.h:s|^${T}${T}int ret = vfs_fsync_range(iocb->ki_filp,\$|${T}${T}int ret = vfs_fsync_range(iocb->ki_filp, /* m4 */|")
m5=$(git_commit "$UP" master "iomap: a comment on IOMAP_DIO_WRITE_FUA" "" \
	"sed:$IOMAP:s|^#define IOMAP_DIO_WRITE_FUA${T}(1 << 28)\$|#define IOMAP_DIO_WRITE_FUA${T}(1 << 28)${T}/* m5 */|")
UPSTREAM=$(git_commit "$UP" master "ext4: properly sync file size update after O_DIRECT write" \
	"(rcgate's test tree: reverting 936e114a245b stands in for the change.)" \
	"patch:$SRC/tests/kernels/936e114a245b-revert.patch")
[ -n "$m1" ] && [ -n "$m2" ] && [ -n "$m3" ] && [ -n "$m4" ] && [ -n "$m5" ] && [ -n "$UPSTREAM" ] ||
	{ echo "Bail out! cannot commit to the upstream fixture"; exit 1; }

# linux-6.1.y
h1=$(git_commit "$REPO" $B "iomap: name the private flags" "commit $m3 upstream." \
	"sed:$IOMAP:s|^ \\* iomap.h:\$| * iomap.h (m3, as backported):|")
h2=$(git_commit "$REPO" $B "iomap: a comment on IOMAP_DIO_WRITE_FUA" "" \
	"sed:$IOMAP:s|^#define IOMAP_DIO_WRITE_FUA${T}(1 << 28)\$|#define IOMAP_DIO_WRITE_FUA${T}(1 << 28)${T}/* m5 */|")
culprit=$(git_culprit "$REPO" $B "$UPSTREAM")
h4=$(git_commit "$REPO" $B "ext4: a comment" "commit 4444444444444444444444444444444444444444 upstream." \
	'sed:fs/ext4/file.c:1s|$| /* h4 */|')
rc1=$(git_version "$REPO" $B 193 -rc1)
# linux-6.6.y: v6.6.63, a harmless backport, the same culprit, 6.6.64-rc1.
GIT_DIR=$REPO git update-ref refs/heads/linux-6.6.y "$good"
v663=$(git_commit "$REPO" linux-6.6.y "Linux 6.6.63" "" \
	"sed:Makefile:s/^PATCHLEVEL = .*/PATCHLEVEL = 6/;s/^SUBLEVEL = .*/SUBLEVEL = 63/;s/^EXTRAVERSION =.*/EXTRAVERSION =/")
GIT_DIR=$REPO git tag v6.6.63 "$v663"
a1=$(git_commit "$REPO" linux-6.6.y "CREDITS: a harmless backport" "commit 2222222222222222222222222222222222222222 upstream." \
	'sed:CREDITS:1s/^/ /')
culprit6=$(git_commit "$REPO" linux-6.6.y "ext4: properly sync file size update after O_DIRECT write" \
	"commit $UPSTREAM upstream." "patch:$SRC/tests/kernels/936e114a245b-revert.patch")
rc6=$(git_commit "$REPO" linux-6.6.y "Linux 6.6.64-rc1" "" \
	"sed:Makefile:s/^SUBLEVEL = .*/SUBLEVEL = 64/;s/^EXTRAVERSION =.*/EXTRAVERSION = -rc1/")
[ -n "$h1" ] && [ -n "$h2" ] && [ -n "$culprit" ] && [ -n "$h4" ] && [ -n "$rc1" ] &&
	[ -n "$v663" ] && [ -n "$a1" ] && [ -n "$culprit6" ] && [ -n "$rc6" ] ||
	{ echo "Bail out! cannot commit to the fixture"; exit 1; }
git_daemon "$SRV" || { echo "Bail out! git daemon"; exit 1; }
URL=$GIT_URL/linux-stable-rc.git
EXTRA_URLS=$GIT_URL/linux.git

start_smtpd
start_daemon "workers = 2" "attempts = 1" "filesystems = ext4" "crash_test = 0" \
	"timeout = 600" "[regressions]" "reruns = 1" "[report]" "public_url = https://rcgate.ci.test" "mail_from = rcgate <rcgate@ci.test>" "[notify]" "smtp_url = $SMTPD_URL" \
	"[build]" "from_announcements = 1" "announced_source = git" "targets = x86_64" \
	"[bisect]" "upstream_git = $GIT_URL/linux.git"

# announce VERSION SERIES BRANCH MSGID-SUFFIX: prints its Message-ID.
announce() { git_announce "$1" "$2" "$3" "$4" "$work"; }
# bisected REGRESSION VERSION: waits for the regression's bisection in
# VERSION to end (and its prerequisite search and revert check); BODY is
# the regression.
bisected() {
	local deadline=$((SECONDS + 2400))
	while [ $SECONDS -lt $deadline ]; do
		req GET "/api/v1/regressions/$1"
		case "$(jqb --arg v "$2" '[.bisections[] | select(.version == $v)][0] | (.state // "none") + "/" + (.prereq_state // "none") + "/" + (.revert_state // "none")')" in
		found/pending/*|found/*/pending) ;;
		found/*|ambiguous/*|failed/*) return 0 ;;
		esac
		sleep 5
	done
	return 1
}
# at_once REG BISECTION-JQ: two of the steps of a bisection of
# regression REG ran side by side (one was queued before the one before
# it ended).
at_once() {
	local jobs prev=
	req GET "/api/v1/regressions/$1"
	jobs=$(jqb "[$2.jobs[]] | sort | .[]")
	for j in $jobs; do
		req GET "/api/v1/jobs/$j"
		[ -n "$prev" ] && [[ "$(jqb .created)" < "$prev" ]] && return 0
		prev=$(jqb .finished)
	done
	diag "no two steps of $2 ran at once"
	return 1
}
# incremental REG BISECTION-JQ FULL: every step of the bisection built
# incrementally: fewer kbuild steps than a third of FULL (a whole
# build's), in the copied worktree as in the first.
incremental() {
	local j n
	req GET "/api/v1/regressions/$1"
	for j in $(jqb "[$2.jobs[]] | .[]"); do
		req GET "/api/v1/jobs/$j"
		n=$(jqb .build_done)
		if [ "$n" = null ] || [ "$n" -ge $(($3 / 3)) ]; then
			diag "step job $j: $n kbuild steps, a whole build is $3"
			return 1
		fi
	done
}
# under_report MSGID FILE: FILE replies to rcgate's own report in MSGID's
# thread (the reply to the announcement itself), not to the announcement.
under_report() {
	local r id
	r=$(grep -l "^In-Reply-To: <$1>" "$SMTPD_DIR"/*.eml 2>/dev/null | xargs -r grep -l '^Results from ' | head -1)
	id=$(sed -n 's/^Message-I[Dd]: *//p' "${r:-/dev/null}" | head -1)
	[ -n "$id" ] && grep -q "^In-Reply-To: $id" "$2"
}

# The good end: 6.1.192, built from the tag's commit.
req POST /api/v1/releases -H "$(auth)" -d "{\"version\":\"6.1.192\",\"targets\":[\"x86_64\"],\"source\":{\"git\":\"$URL\",\"commit\":\"$good\"}}"
settled 6.1.192 1800 || diag "6.1.192 did not settle"
req GET /api/v1/releases/6.1.192
check "6.1.192 built from its commit passes every test" \
	[ "$(jqb '.jobs[0].state')" = done -a "$(jqb '.jobs[0].built_commit')" = "$good" -a \
	  "$(jqb '[.jobs[0].results[] | select(.status == "fail")] | length')" = 0 ]
full=$(jqb '.jobs[0].build_done')

# The rc, announced by mail.
msgid=$(announce 6.1.193-rc1 6.1 linux-6.1.y 345)
settled 6.1.193-rc1 2400 || diag "6.1.193-rc1 did not settle"
req GET /api/v1/releases/6.1.193-rc1
check "the rc blocks on confirmed ext4 regressions (its job and its rerun failed)" \
	[ "$(jqb .gate.verdict)" = block -a "$(jqb '.jobs | length')" = 2 ]
reg=$(jqb '[.regressions[] | select(.test | startswith("ext4."))][0].id')
nreg=$(jqb '[.regressions[] | select(.test | startswith("ext4."))] | length')
diag "rc1: $nreg ext4 regressions, the first #$reg"
# The rerun boots the kernel its job built: same commit, same image, no
# second build on the way to the confirmation.
j1=$(jqb '[.jobs[] | select(.rerun_of == null)][0]')
j2=$(jqb '[.jobs[] | select(.rerun_of != null)][0]')
rerun_reused() {
	local id
	id=$(printf '%s' "$j2" | jq -r .id)
	[ -n "$id" ] && [ "$id" != null ] || return 1
	[ "$(printf '%s' "$j2" | jq -r .built_sha256)" = "$(printf '%s' "$j1" | jq -r .built_sha256)" ] &&
	[ "$(printf '%s' "$j2" | jq -r .built_commit)" = "$(printf '%s' "$j1" | jq -r .built_commit)" ] &&
	[ "$(printf '%s' "$j2" | jq -r .build_seconds)" = 0 ] || return 1
	req GET "/api/v1/jobs/$id/log"
	printf '%s' "$BODY" | grep -q "boots the kernel it built .* again, no rebuild"
}
check "the rerun boots the kernel its job built (same image and commit), no rebuild" rerun_reused
# It repeats only the failures it confirms (engine.c rerun_only): the
# agent's names of the tests that failed, not the whole suite again.
rerun_only_failures() {
	local names='[.results[] | select(.test != "build.kernel")'
	local want only extra
	want=$(printf '%s' "$j1" | jq -r "$names"' | select(.status == "fail") | .test | sub("^[^.]*[.]"; "")] | unique | join(",")')
	req GET "/api/v1/jobs/$(printf '%s' "$j2" | jq -r .id)"
	only=$(jqb '.only_tests // "" | split(",") | sort | join(",")')
	extra=$(jqb --arg o ",$only," "$names"' | .test | sub("^[^.]*[.]"; "") | select(. as $t | $o | contains("," + $t + ",") | not)] | length')
	diag "rerun: only_tests $only (the job's failures: $want), $extra results outside it"
	[ -n "$want" ] && [ "$only" = "$want" ] && [ "$extra" = 0 ] &&
	[ "$(jqb "$names]"' | length')" -ge 1 ]
}
check "the rerun runs only the tests that failed" rerun_only_failures

# The bisection: steps until an answer, then the prerequisite search.
bisected "$reg" 6.1.193-rc1 || diag "no answer in time"
printf '%s' "$BODY" > "$work/regression.json"
diag "bisection: $(jqb -c '.bisections[0] | {state, culprit, culprit_upstream, steps, jobs, message, prereq_state, prereq_message}')"
check "one bisection of the rc, and it found the culprit" \
	[ "$(jqb '.bisections | length')" = 1 -a "$(jqb '.bisections[0].state')" = found -a \
	  "$(jqb '.bisections[0].culprit')" = "$culprit" ]
check "the culprit's subject and its upstream commit (from 'commit X upstream.')" \
	[ "$(jqb '.bisections[0].culprit_subject')" = "ext4: properly sync file size update after O_DIRECT write" -a \
	  "$(jqb '.bisections[0].culprit_upstream')" = "$UPSTREAM" ]
steps=$(jqb '.bisections[0].steps')
check "within ceil(log2(5)) + 1 = 4 builds ($steps)" [ "$steps" -ge 1 -a "$steps" -le 4 ]
check "two steps at once (5 commits: 2 rounds instead of 3), the branch's warm worktree copied for the second while the rerun that confirmed the regression ran (bisect_seed.c: off the critical path)" \
	sh -c "grep -q 'bisect-seeds: a warm worktree of linux-6.1 for x86_64 copied in [0-9]* s while 6.1.193-rc1.s rerun runs' '$STATE/rcgated.log'"
check "... and they ran side by side" at_once "$reg" '.bisections[0]'
check "every step built incrementally, in the copy as in the first (a whole build: $full kbuild steps)" \
	incremental "$reg" '.bisections[0]' "$full"
req GET "/api/v1/regressions/$reg"
diag "prerequisites: $(jqb -c '[.bisections[0].prerequisites[]? | {commit: .commit[0:12], score, why}]')"
check "prerequisite candidates: m1 (changes iomap_dio_complete) then m4 (changes generic_write_sync); not m2 (unrelated), m3 or m5 (the branch has them)" \
	[ "$(jqb -c '[.bisections[0].prerequisites[]?.commit]')" = "[\"$m1\",\"$m4\"]" -a \
	  "$(jqb '.bisections[0].prereq_state')" = done ]
check "the regression is valid for schemas/regression.json (jsonschema)" \
	sh -c "/usr/bin/python3 '$SRC/tests/integration/validate.py' '$SRC/schemas' regression < '$work/regression.json'"
revjob=$(jqb '.bisections[0].revert_job')
check "revert: pass: the rc with the culprit reverted passes the failing tests ($(jqb '.bisections[0].revert_message'))" \
	[ "$(jqb '.bisections[0].revert_state')" = pass -a "$revjob" != null -a \
	  "$(jqb '.bisections[0].jobs | index('"$revjob"')')" = null ]
req GET "/api/v1/jobs/$revjob"
check "the revert check is a job of the rc: its commit with the culprit reverted, the failing tests, all pass" \
	[ "$(jqb .git_commit)" = "$rc1" -a "$(jqb .revert_commit)" = "$culprit" -a \
	  "$(jqb .state)" = done -a "$(jqb '[.results[] | select(.test | startswith("ext4."))] | length')" -ge 1 -a \
	  "$(jqb '[.results[] | select(.status == "fail")] | length')" = 0 ]
step=$(jq -r '.bisections[0].jobs[0]' "$work/regression.json")
req GET "/api/v1/jobs/$step"
printf '%s' "$BODY" > "$work/step.json"
check "a step is a job: one commit, only the failing tests, not the rc's version" \
	[ "$(jqb .bisection_id)" != null -a "$(jqb '.git_commit | length')" = 40 -a \
	  "$(jqb '.only_tests | length > 0')" = true -a "$(jqb '[.results[] | select(.test != "build.kernel")] | length')" -le "$nreg" ]
check "the step job is valid for schemas/job.json (jsonschema)" \
	sh -c "/usr/bin/python3 '$SRC/tests/integration/validate.py' '$SRC/schemas' job < '$work/step.json'"
no_fetch() {	# JOB...: each one's commit was in the cached clone, no connection made
	local j
	for j in "$@"; do
		req GET "/api/v1/jobs/$j/log"
		printf '%s' "$BODY" | grep -q "git: [0-9a-f]\{12\} is in the cached clone already: nothing fetched" &&
			! printf '%s' "$BODY" | grep -q "git: fetching" || return 1
	done
}
check "the step and the revert check fetch nothing: their commits are in the cached clone" \
	no_fetch "$step" "$revjob"
req GET /api/v1/releases/6.1.193-rc1
check "steps are not the rc's own jobs: its jobs and gate are as before; its regressions name the culprit" \
	[ "$(jqb '.jobs | length')" = 2 -a "$(jqb .gate.verdict)" = block -a \
	  "$(jqb "[.regressions[] | select(.test | startswith(\"ext4.\")) | .culprit] | unique | join(\" \")")" = "$culprit" ]
req GET "/api/v1/regressions/$(jqb '[.regressions[] | select(.test | startswith("ext4."))][-1].id')"
check "every ext4 regression of the rc shows the same bisection" \
	[ "$(jqb '.bisections[0].culprit')" = "$culprit" ]
sent=$(thread_mail "$msgid" "commit $culprit")
check "the culprit is a follow-up in the rc's thread, under rcgate's own report" \
	under_report "$msgid" "${sent:-/dev/null}"
check "the follow-up names the culprit as git show does, its upstream commit and the possible dependencies" \
	sh -c "[ -n '$sent' ] && grep -q '^commit $culprit.\\?\$' '$sent' && grep -q '^    commit $UPSTREAM upstream..\\?\$' '$sent' &&
		grep -q '^Possible dependencies' '$sent' &&
		grep -q '^    ${m1:0:12} (\"iomap: say where the I/O began\")' '$sent' &&
		grep -q '^        changes iomap_dio_complete(), as the culprit does' '$sent' &&
		grep -q '^revert: PASS (reverting ${culprit:0:12} on top of 6.1.193-rc1 makes' '$sent' &&
		/usr/bin/python3 '$SRC/tests/integration/formats.py' reply '$sent' &&
		! grep -q '${m3:0:12}' '$sent' && ! grep -q 'regression #' '$sent'"
# KCIDB: the issue says the code is the culprit and names the commit.
req GET /api/v1/releases/6.1.193-rc1/kcidb.json
printf '%s' "$BODY" > "$work/kcidb.json"
check "kcidb.json: each ext4 regression's issue has culprit.code and the first bad commit (version 2)" \
	[ "$(jqb "[.issues[] | select(.comment | test(\"^ext4\")) | select(.culprit.code == true and .version == 2 and (.comment | contains(\"$culprit\")) and .misc.culprit_upstream == \"$UPSTREAM\")] | length")" = "$nreg" ]
if /usr/bin/python3 "$SRC/tests/integration/kcidb_check.py" "$SRC/tests/data/kcidb/v5.3-rules.json" \
	--version 6.1.193-rc1 --suite odirect < "$work/kcidb.json" 2> "$work/kcidb.err"; then
	ok "kcidb.json with culprits keeps KCIDB v5.3's rules (incidents at their issue's version)"
else
	not_ok "kcidb.json with culprits keeps KCIDB v5.3's rules"; diag "$(head -20 "$work/kcidb.err")"
fi

# The second branch.
msgid6=$(announce 6.6.64-rc1 6.6 linux-6.6.y 346)
settled 6.6.64-rc1 2400 || diag "6.6.64-rc1 did not settle"
req GET /api/v1/releases/6.6.64-rc1
check "6.6.64-rc1 (linux-6.6.y, built from its head) blocks on ext4 regressions" \
	[ "$(jqb .gate.verdict)" = block -a "$(jqb '.jobs[0].built_commit')" = "$rc6" -a \
	  "$(jqb '[.regressions[] | select(.test | startswith("ext4."))] | length')" -ge 1 ]
reg6=$(jqb '[.regressions[] | select(.test | startswith("ext4."))][0].id')
report6=$(thread_mail "$msgid6" "Results from")
check "6.6.64-rc1's report, before its own bisection, names 6.1.193-rc1's culprit for the regressions they share" \
	sh -c "[ -n '$report6' ] && tr -s '\r\n' '  ' < '$report6' | grep -q 'The same regressions on x86_64 were bisected in 6.1.193-rc1 to ${culprit:0:12} '"
diag "6.6.64-rc1: ext4 regressions $(jqb -c '[.regressions[] | select(.test | startswith("ext4.")) | .id]') (6.1.193-rc1's first: #$reg)"
bisected "$reg6" 6.6.64-rc1 || diag "no answer in time for 6.6.64-rc1"
printf '%s' "$BODY" > "$work/regression6.json"
diag "bisection: $(jqb -c '[.bisections[] | select(.version == "6.6.64-rc1")][0] | {state, culprit, steps, message, prereq_state}')"
b6='[.bisections[] | select(.version == "6.6.64-rc1")][0]'
check "linux-6.6.y's own culprit found, the same upstream commit" \
	[ "$(jqb "$b6.state")" = found -a "$(jqb "$b6.culprit")" = "$culprit6" -a \
	  "$(jqb "$b6.culprit_upstream")" = "$UPSTREAM" -a "$(jqb "$b6.revert_state")" = pass ]
steps6=$(jqb "$b6.steps")
check "within ceil(log2(3)) + 1 = 3 builds, the tag v6.6.63 checked first ($steps6)" \
	[ "$steps6" -ge 2 -a "$steps6" -le 3 ]
six_side_by_side() {
	grep -q "bisect-seeds: a warm worktree of linux-6.6 for x86_64 copied in [0-9]* s while 6.6.64-rc1's rerun runs" "$STATE/rcgated.log" &&
		at_once "$reg6" "$b6" && incremental "$reg6" "$b6" "$full"
}
check "the tag's check beside the first step, in a copy of linux-6.6.y's warm worktree (3 commits: 1 round instead of 2), each built incrementally" \
	six_side_by_side
req GET "/api/v1/regressions/$reg6"
check "its prerequisite candidates include m3 and m5, which linux-6.6.y lacks; m1 first" \
	[ "$(jqb -c "[$b6.prerequisites[]?.commit] | (.[0] == \"$m1\") and any(.[]; . == \"$m3\") and any(.[]; . == \"$m5\") and (any(.[]; . == \"$m2\") | not)")" = true ]
# One cause across branches: the same regression (one signature) shows
# both rcs' bisections; a regression of another signature is linked to
# it by the upstream commit (same_cause).
joined() {
	req GET "/api/v1/regressions/$reg"
	if [ "$reg6" = "$reg" ]; then
		[ "$(jqb '[.bisections[] | select(.state == "found")] | length')" = 2 -a \
		  "$(jqb '[.bisections[] | select(.state == "found") | .culprit_upstream] | unique | join(" ")')" = "$UPSTREAM" ]
	else
		[ "$(jqb --argjson r "$reg6" '[.bisections[].same_cause[]] | any(.[]; . == $r)')" = true ]
	fi
}
check "one cause in both branches: regression #$reg and 6.6.64-rc1's #$reg6 joined by the upstream commit" joined
sent6=$(thread_mail "$msgid6" "commit $culprit6")
check "6.6.64-rc1's thread gets its culprit, and that 6.1.193-rc1's bisection found the same upstream commit" \
	sh -c "[ -n '$sent6' ] && grep -q 'found by bisection in 6.1.193-rc1' '$sent6' && grep -q '$UPSTREAM' '$sent6'"
stop_smtpd
git_test_end
exit 0
