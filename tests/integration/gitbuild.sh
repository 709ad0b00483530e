#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# rcs built from a git tree (issue 14), for real: a stable-rc-like tree
# (tests/integration/gitlib.sh: Debian's linux-source-6.1 as v6.1.192, then
# backports, one of them the 936e114a245b revert, then "Linux
# 6.1.193-rc1") served by git daemon on loopback.
#   rc1: POSTed as {git, branch}: fetched into a new cached clone, checked
#   out, built (state 'building', its step and progress in the API), the
#   ext4 regression found.
#   rc2: two more commits, announced by mail (the tree and branch of the
#   announcement): the fetch brings only the new objects, the worktree
#   keeps kbuild's objects, so the build is incremental.
#   rc3 while the branch's head still says rc2, and an unknown branch:
#   infra errors that say why, never results.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/gitlib.sh"
git_test_begin 23 "git build"
c1=$(git_commit "$REPO" $B "README: a harmless backport" "commit 1111111111111111111111111111111111111111 upstream." \
	'sed:README:s/^Linux kernel$/Linux kernel (stable)/')
c2=$(git_commit "$REPO" $B "Revert \"iomap: update ki_pos a little later in iomap_dio_complete\"" \
	"This reverts commit 936e114a245b6e38e0dbf706a67e7611fc993da1." \
	"patch:$SRC/tests/kernels/936e114a245b-revert.patch")
rc1=$(git_version "$REPO" $B 193 -rc1)
[ -n "$c1" ] && [ -n "$c2" ] && [ -n "$rc1" ] || { echo "Bail out! cannot commit to the fixture"; exit 1; }
git_daemon "$SRV" || { echo "Bail out! git daemon"; exit 1; }
URL=$GIT_URL/linux-stable-rc.git

start_smtpd
start_daemon "workers = 2" "attempts = 1" "filesystems = ext4" "crash_test = 0" \
	"timeout = 600" "[regressions]" "reruns = 0" "[report]" "public_url = https://rcgate.ci.test" "mail_from = rcgate <rcgate@ci.test>" "[notify]" "smtp_url = $SMTPD_URL" \
	"[build]" "from_announcements = 1" "announced_source = git" "targets = x86_64"

git_body() {	# VERSION KEY VALUE
	echo "{\"version\":\"$1\",\"targets\":[\"x86_64\"],\"source\":{\"git\":\"$URL\",\"$2\":\"$3\"}}"
}

req POST /api/v1/releases -H "$(auth)" -d '{"version":"6.1.193-rc9","source":{"git":"file:///srv/linux.git","branch":"x"}}'
c400a=$CODE
req POST /api/v1/releases -H "$(auth)" -d "$(git_body 6.1.193-rc9 branch ../../etc)"
c400b=$CODE
req POST /api/v1/releases -H "$(auth)" -d '{"version":"6.1.193-rc9","source":{"git":"'"$URL"'","branch":"'$B'","commit":"'"$rc1"'"}}'
check "malformed git sources are 400 (file://, a branch with '..', commit and branch both)" \
	[ "$c400a" = 400 -a "$c400b" = 400 -a "$CODE" = 400 ]

# rc1, POSTed with the branch.
req POST /api/v1/releases -H "$(auth)" -d "$(git_body 6.1.193-rc1 branch $B)"
check "rc1 from {git, branch} is accepted: one job of kind git" \
	[ "$CODE" = 201 -a "$(jqb '.jobs[0].kind')" = git -a "$(jqb '.jobs[0].git_ref')" = $B ]
job1=$(jqb '.jobs[0].id')
seen=""
deadline=$((SECONDS + 1500))
while [ $SECONDS -lt $deadline ]; do
	req GET "/api/v1/jobs/$job1"
	st=$(jqb .state)
	[ "$st" = building ] && seen="$seen $(jqb .build_step)"
	case "$st" in done|infra_error|cancelled) break ;; esac
	sleep 2
done
diag "build steps seen: $(echo $seen | tr ' ' '\n' | uniq | tr '\n' ' ')"
check "the job was 'building' with its step in the API (checkout, configuring, compiling)" \
	sh -c "echo '$seen' | grep -q compiling"
settled 6.1.193-rc1 600 || diag "6.1.193-rc1 did not settle"
req GET /api/v1/releases/6.1.193-rc1
check "the branch's head was built: built_commit is the 'Linux 6.1.193-rc1' commit" \
	[ "$(jqb '.jobs[0].built_commit')" = "$rc1" -a "$(jqb '.jobs[0].built_sha256 | length')" = 64 ]
check "the built kernel ran as 6.1.193-rc1 and its build is a passing result" \
	[ "$(jqb '.jobs[0].kernel_version')" = 6.1.193-rc1 -a \
	  "$(jqb '[.jobs[0].results[] | select(.test == "build.kernel")][0].status')" = pass ]
check "the ext4 O_DIRECT regression is found and blocks the gate" \
	[ "$(jqb '.gate.verdict')" = block -a "$(jqb '[.regressions[] | select(.test | startswith("ext4."))] | length > 0')" = true ]
printf '%s' "$BODY" > "$work/release.json"
req GET "/api/v1/jobs/$job1"
printf '%s' "$BODY" > "$work/job.json"
V="/usr/bin/python3 $SRC/tests/integration/validate.py $SRC/schemas"
check "the release of a git build is valid for schemas/release.json (jsonschema)" sh -c "$V release < '$work/release.json'"
check "its job is valid for schemas/job.json (jsonschema)" sh -c "$V job < '$work/job.json'"
# What the report gives a reader who rebuilds it (issue 28): the compiler,
# git describe of the commit, and the .config as a job artifact.
check "the job names its compiler (the .config's) and git describe of the commit" \
	[ "$(jq -r .compiler "$work/job.json")" = "$(gcc --version | head -1)" -a \
	  "$(jq -r .git_describe "$work/job.json")" = "v6.1.192-3-g${rc1:0:12}" ]
req GET "/api/v1/jobs/$job1/config"
check "GET /api/v1/jobs/{id}/config is the .config it was built with" \
	sh -c "printf '%s' \"\$1\" | grep -q '^CONFIG_EXT4_FS=y\$' && printf '%s' \"\$1\" | grep -q '^CONFIG_CC_VERSION_TEXT='" _ "$BODY"
req GET /api/v1/releases/6.1.193-rc1/report.txt
check "the report says git describe, and per built target its compiler and config link" \
	sh -c "printf '%s' \"\$1\" | grep -qx '\\* git describe: v6.1.192-3-g${rc1:0:12}' &&
	       printf '%s' \"\$1\" | grep -A1 -x '## Build Summary' | grep -qx '\\* x86_64: gcc.*' &&
	       printf '%s' \"\$1\" | grep -qx '  config: https://rcgate.ci.test/api/v1/jobs/$job1/config'" _ "$BODY"
req GET /api/v1/releases/6.1.193-rc1
secs1=$(jqb '.jobs[0].build_seconds')
req GET "/api/v1/jobs/$job1/log"
added1=$(printf '%s' "$BODY" | sed -n 's/.*the fetch added \([0-9]*\) KiB.*/\1/p' | head -1)
diag "rc1: first fetch added ${added1:-?} KiB, build ${secs1} s"
check "the first fetch makes the cached clone (the whole tree: > 50 MiB)" [ "${added1:-0}" -gt 51200 ]

# rc2: two commits more, one in fs/ext4, announced by mail.
c3=$(git_commit "$REPO" $B "ext4: a comment" "commit 2222222222222222222222222222222222222222 upstream." \
	'sed:fs/ext4/file.c:1s|$| /* rc2 */|')
rc2=$(git_version "$REPO" $B 193 -rc2)
sed -e 's/6\.1\.64-rc1/6.1.193-rc2/g' -e 's/6\.1\.64/6.1.193/g' -e 's/6\.1\.63/6.1.192/g' \
	-e "s|git://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git|$URL|" \
	-e 's/^Message-I[Dd]: *<\(.*\)>/Message-ID: <rc2.\1>/' \
	"$SRC/tests/data/mail/announce-6.1.64-rc1.eml" > "$work/rc2.eml"
req POST /api/v1/announcements -H "$(auth)" -H 'Content-Type: message/rfc822' --data-binary "@$work/rc2.eml"
check "rc2 is announced by mail" [ "$CODE" = 201 ]
for _ in $(seq 1 60); do
	req GET /api/v1/releases/6.1.193-rc2
	[ "$(jqb '.jobs | length')" -gt 0 ] 2>/dev/null && break
	sleep 1
done
check "the announcement's tree and branch make a job of kind git" \
	[ "$(jqb '.jobs[0].kind')" = git -a "$(jqb '.jobs[0].url')" = "$URL" -a "$(jqb '.jobs[0].git_ref')" = $B ]
settled 6.1.193-rc2 1500 || diag "6.1.193-rc2 did not settle"
req GET /api/v1/releases/6.1.193-rc2
job2=$(jqb '.jobs[0].id')
secs2=$(jqb '.jobs[0].build_seconds')
check "rc2's head was built and ran as 6.1.193-rc2" \
	[ "$(jqb '.jobs[0].built_commit')" = "$rc2" -a "$(jqb '.jobs[0].kernel_version')" = 6.1.193-rc2 ]
check "rc2's build knew how many steps to expect (rc1's)" [ "$(jqb '.jobs[0].build_total > 0')" = true ]
req GET "/api/v1/jobs/$job2/log"
added2=$(printf '%s' "$BODY" | sed -n 's/.*the fetch added \([0-9]*\) KiB.*/\1/p' | head -1)
diag "rc2: fetch added ${added2:-?} KiB, build $secs2 s (rc1: $secs1 s)"
check "the second fetch is incremental (the new commits only: < 1 MiB)" [ "${added2:-1024}" -lt 1024 ]
check "the second build is incremental (kbuild's objects kept in the worktree)" \
	sh -c "printf '%s' \"\$1\" | grep -q 'incremental: kbuild' && printf '%s' \"\$1\" | grep -q 'fs/ext4/file.o'" _ "$BODY"
check "make took its jobs from rcgated's build jobserver, and had it" \
	sh -c "printf '%s' \"\$1\" | grep -q 'jobs from the build jobserver' && ! printf '%s' \"\$1\" | grep -qi 'jobserver unavailable\|disabling jobserver'" _ "$BODY"
check "and faster than the first" awk -v a="$secs2" -v b="$secs1" 'BEGIN { exit !(a < b) }'

# rc3 while the branch still says rc2; a branch that does not exist.
req POST /api/v1/releases -H "$(auth)" -d "$(git_body 6.1.193-rc3 branch $B)"
settled 6.1.193-rc3 900
req GET /api/v1/releases/6.1.193-rc3
infra_saying() {	# KIND TEXT: the release's job is an infra error of KIND saying TEXT, no results
	[ "$(jqb '.jobs[0].state')" = infra_error -a "$(jqb '.jobs[0].results | length')" = 0 -a \
	  "$(jqb '.jobs[0].error_kind')" = "$1" ] && printf '%s' "$(jqb '.jobs[0].error')" | grep -q "$2"
}
rc3_refused() {	# ... and the head it refused is not recorded as the commit built
	infra_saying fetch "is 6.1.193-rc2, not 6.1.193-rc3 (its Makefile)" &&
		[ "$(jqb '.jobs[0].built_commit')" = null ]
}
check "a branch whose head is another rc is an infra error saying so, not a result, and not the commit the rc was built from" \
	rc3_refused
req POST /api/v1/releases -H "$(auth)" -d "$(git_body 6.1.194-rc1 branch linux-9.9.y)"
settled 6.1.194-rc1 300
req GET /api/v1/releases/6.1.194-rc1
check "an unknown branch is an infra error (fetch) naming it" \
	infra_saying fetch "no branch linux-9.9.y"
r94=$(jqb '.regressions | length')
req GET /api/v1/releases/6.1.193-rc3
check "neither has a regression; their gates are incomplete" \
	[ "$r94" = 0 -a "$(jqb '.regressions | length')" = 0 -a "$(jqb .gate.verdict)" = incomplete ]
stop_smtpd
git_test_end
exit 0
