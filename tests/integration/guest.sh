#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Real guests through libvirt: the Debian 6.1 x86_64 kernel boots with the
# agent as /init, runs the O_DIRECT suite on ext4, and the results come back
# through the API; a guest that never finishes is destroyed at the timeout
# and ends as an infra error with its console log kept.
. "$(dirname "$0")/lib.sh"
echo "1..23"
mapfile -t k < <(kernel_deb x86_64)
DEB=${k[0]:-}; SHA=${k[1]:-}
if [ ! -f "$DEB" ]; then
	for i in $(seq 1 22); do skip_test "guest test $i" "no kernel package: run scripts/setup"; done
	exit 0
fi
# This test is the suite's own: the whole of it ([jobs] suite = all).
RCGATE_SUITE=all start_daemon "timeout = 240" "attempts = 1"
req POST /api/v1/releases -H "$(auth)" \
	-d '{"version":"6.1.192","artifacts":[{"target":"x86_64","url":"file://'"$DEB"'","sha256":"'"$SHA"'"}]}'
check "release 6.1.192 accepted" [ "$CODE" = 201 ]
t0=$SECONDS
if wait_release 6.1.192 600; then ok "the job finished within 600 s ($((SECONDS - t0)) s)"; else not_ok "the job finished"; fi
job=$(jqb '.jobs[0].id')
check "the x86_64 job is done (not an infra error)" [ "$(jqb '.jobs[0].state')" = done ]
diag "job: $(printf '%s' "$BODY" | jq -c '.jobs[0] | {state, accel, error_kind, error, boot_seconds, kernel_version}')"
npass=$(jqb '[.jobs[0].results[] | select(.status == "pass")] | length')
nfail=$(jqb '[.jobs[0].results[] | select(.status == "fail")] | length')
check "the suite reported at least 10 results ($npass pass)" [ "${npass:-0}" -ge 10 ]
check "no test fails on Debian's 6.1.192 (fail=$nfail)" [ "${nfail:-1}" = 0 ]
check "suite = all ran the whole suite, beyond the smoke group ($npass pass)" \
	[ "$(jqb '[.jobs[0].results[].test | select(. == "ext4.efault_buffer" or . == "ext4.punch_zero_collapse")] | length')" = 2 ]
check "position tests ran on ext4" [ "$(jqb '[.jobs[0].results[].test | select(startswith("ext4.write_seq_"))] | length')" -ge 2 ]
check "the suite also ran on xfs and btrfs (one disk each)" [ "$(jqb '[.jobs[0].results[] | select(.test == "xfs.write_seq_512" or .test == "btrfs.write_seq_512") | .status] | join(" ")')" = "pass pass" ]
check "the block-device suite ran on a raw disk and passed (bdev.*, the exerciser's row too)" \
	[ "$(jqb '[.jobs[0].results[] | select(.test | startswith("bdev.")) | .status] | join(" ")')" = "pass pass pass pass pass pass pass pass pass" ]
check "the exerciser's rows (4 per filesystem, 1 on the raw disk) ran and passed" \
	[ "$(jqb '[.jobs[0].results[] | select(.test | test("^[a-z0-9]+\\.exer_")) | .status] | join(" ")')" = "$(printf 'pass %.0s' $(seq 13) | sed 's/ $//')" ]
check "the power-cut test passed: O_SYNC|O_DIRECT extension is durable" [ "$(jqb '[.jobs[0].results[] | select(.test == "ext4.crash_osync_extend") | .status] | join("")')" = pass ]
promises=$(jqb '[.jobs[0].results[] | select(.test | test("^(ext4|xfs|btrfs)\\.crash_")) | "\(.test)=\(.status)"] | sort | join(" ")')
want=$(for fs in btrfs ext4 xfs; do for t in aio_dsync fdatasync_extend fsync_append odsync_extend osync_extend uring_dsync; do printf '%s.crash_%s=pass ' $fs $t; done; done)
check "every power-cut promise (6 per filesystem, one disk each) was kept on ext4, xfs and btrfs" [ "$promises" = "${want% }" ]
check "kernel version and boot time are recorded" [ "$(jqb '.jobs[0].kernel_version')" = 6.1.0-57-cloud-amd64 -a "$(jqb '.jobs[0].boot_seconds > 0')" = true ]
req GET "/api/v1/jobs/$job/log"
if grep -q 'Linux version 6.1' "$STATE/body" && grep -q '^# rcgate-complete' "$STATE/body" &&
	grep -q '^# rcgate-durable:' "$STATE/body" && grep -q 'crash_osync_extend' "$STATE/body"; then
	ok "the job log has the console and the KTAP of every boot"
else
	not_ok "the job log has the console and the KTAP of every boot"
fi
steps_named() {	# every step of the job's time has a name and a figure
	grep -Eq '^.*time: fetch [0-9.]+ s, initramfs [0-9.]+ s, disks [0-9.]+ s, define [0-9.]+ s, wait [0-9.]+ s, start [0-9.]+ s, guest [0-9.]+ s, results [0-9.]+ s, destroy [0-9.]+ s; total [0-9.]+ s; guest cpu [0-9.]+ s' "$STATE/body" &&
	grep -Eq '^.*guest [^ ]+: completed after [0-9.]+ s \(define [0-9.]+ s, wait [0-9.]+ s, start [0-9.]+ s, run [0-9.]+ s, destroy [0-9.]+ s; cpu [0-9.]+ s; span [0-9.]+ [0-9.]+\)' "$STATE/body"
}
check "the job log says where the job's time went, step by step" steps_named
# [jobs] kernel_args reaches the guest kernel (the default skips the crypto
# self-tests, 0.7-2 s of a TCG boot); the second daemon below sets it empty.
check "the guest kernel's command line has the default kernel_args" \
	grep -Eq 'Kernel command line: console=ttyS0 panic=-1 .* cryptomgr\.notests' "$STATE/body"
diag "$(grep 'time: fetch' "$STATE/body")"
stop_daemon
rm -rf "$STATE"

# The kernel that ran must be the release's version: Debian's 6.1.192
# submitted as 6.1.64-rc1 is refused once it says what it is, unless the
# artifact is marked custom (then it is tested and the mismatch shown).
start_daemon "attempts = 2" "filesystems = ext4" "crash_test = 0" "kernel_args ="
req POST /api/v1/releases -H "$(auth)" \
	-d '{"version":"6.1.64-rc1","artifacts":[{"target":"x86_64","url":"file://'"$DEB"'","sha256":"'"$SHA"'"}]}'
req POST /api/v1/releases -H "$(auth)" \
	-d '{"version":"6.1.65-rc1","artifacts":[{"target":"x86_64","url":"file://'"$DEB"'","sha256":"'"$SHA"'","custom":true}]}'
wait_release 6.1.64-rc1 600
if [ "$(jqb '.jobs[0].state')" = infra_error ] && [ "$(jqb '.jobs[0].error_kind')" = kernel_mismatch ] &&
	[ "$(jqb '.jobs[0].attempt')" = 1 ] && jqb '.jobs[0].kernel_mismatch' | grep -q 'says it is 6.1.192 (uname -r 6.1.0-57-cloud-amd64), not 6.1.64-rc1'; then
	ok "a kernel that is not the rc ends its job as kernel_mismatch, not retried, naming both versions"
else
	not_ok "a kernel that is not the rc is refused"; diag "$(printf '%s' "$BODY" | jq -c '.jobs[0] | {state, error_kind, error, attempt, kernel_mismatch}')"
fi
wait_release 6.1.65-rc1 600
check "marked custom, the same kernel is tested and the mismatch is shown" \
	[ "$(jqb '.jobs[0].state')" = done -a "$(jqb '.jobs[0].custom')" = true -a "$(jqb '.jobs[0].kernel_mismatch | test("not 6.1.65-rc1")')" = true ]
# lib.sh's default, [jobs] suite = smoke: the agent's smoke group and no
# other test (agent/protocol.h RCGATE_SMOKE_TESTS, ext4 only here).
smoke=$(sed -n '/^#define RCGATE_SMOKE_TESTS/,/[^\\]$/p' "$SRC/agent/protocol.h" 2>/dev/null |
	grep -o '"[^"]*"' | tr -d '"\n' | tr ',' '\n' | sed 's/^/ext4./' | LC_ALL=C sort | tr '\n' ' ')
ran=$(jqb '[.jobs[0].results[].test] | sort | join(" ")')
check "suite = smoke runs exactly the smoke group (${ran:-none})" [ -n "$ran" -a "$ran " = "$smoke" ]
req GET "/api/v1/jobs/$(jqb '.jobs[0].id')/log"
check "suite = smoke reaches the agent as rcgate.only=smoke" \
	grep -q 'Kernel command line: .*rcgate\.only=smoke' "$STATE/body"
if grep -q 'Kernel command line: console=ttyS0 panic=-1 ' "$STATE/body" &&
	! grep -q 'cryptomgr' "$STATE/body"; then
	ok "with kernel_args empty the guest's command line has none"
else
	not_ok "with kernel_args empty the guest's command line has none"; diag "$(grep 'Kernel command line' "$STATE/body")"
fi
stop_daemon
rm -rf "$STATE"

# A guest whose /init never reports: an "agent" that just sleeps.
SLEEPDIR=$(mktemp -d)
cp "$BUILD/tests/integration/sleeper" "$SLEEPDIR/rcgate-agent-x86_64"
daemon_owns "$SLEEPDIR"
AGENT_DIR=$SLEEPDIR start_daemon "timeout = 20" "attempts = 1"
req POST /api/v1/releases -H "$(auth)" \
	-d '{"version":"6.1.193-rc1","artifacts":[{"target":"x86_64","url":"file://'"$DEB"'","sha256":"'"$SHA"'"}]}'
wait_release 6.1.193-rc1 180
check "a hanging guest ends as infra_error/boot_timeout" [ "$(jqb '.jobs[0].state')" = infra_error -a "$(jqb '.jobs[0].error_kind')" = boot_timeout ]
job=$(jqb '.jobs[0].id')
req GET "/api/v1/jobs/$job/log"
if grep -q 'Linux version' "$STATE/body" && ! pgrep -f "guest=$(guest_prefix)$job-" >/dev/null; then
	ok "its console log is kept and no guest is left running"
else
	not_ok "its console log is kept and no guest is left running"
fi
rm -rf "$SLEEPDIR"
exit 0
