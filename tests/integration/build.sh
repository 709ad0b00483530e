#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Releases built from source (issue 14), for real: a local HTTP server
# plays kernel.org with Debian's linux-source-6.1 as the release 6.1.192.
#   6.1.193-rc1 = 936e114a245b reverted (the 6.1.64 bug) + a harmless
#   patch, announced by mail, its source posted: rcgated builds x86_64,
#   boots it, finds the ext4 regression and replies in the thread.
#   6.1.193-rc2 = a patch that breaks only arm64's build, on x86_64 and
#   arm64: one build regression on arm64 (the compiler's first error as
#   its diagnostic), none on x86_64, and the gate blocks.
# Builds share tests/kernels/build-kernels' compiler cache, so x86_64
# takes a minute or two; arm64 fails within its first minute.
. "$(dirname "$0")/lib.sh"
echo "1..18"
TARBALL=/usr/src/linux-source-6.1.tar.xz
KDIR=${RCGATE_KERNELS:-/var/cache/rcgate/kernels}
if [ ! -r "$TARBALL" ] || ! command -v aarch64-linux-gnu-gcc >/dev/null; then
	for i in $(seq 1 18); do skip_test "build $i" "no linux-source-6.1 or cross compiler (scripts/setup)"; done
	exit 0
fi

# kernel.org: the release tarball, its sha256sums.asc (clear-signed by a
# key made here, as kernel.org's is by its signing key) and two rc patches
# made here, in kernel.org's layout.
FILES=$(mktemp -d)
PUB=$FILES/pub/linux/kernel/v6.x
mkdir -p "$PUB/stable-review"
ln -s "$TARBALL" "$FILES/linux-6.1.192.tar.xz"
ln -s "$TARBALL" "$PUB/linux-6.1.192.tar.xz"
work=$(mktemp -d)
pristine=$KDIR/src-6.1.192
getfile() {	# the pristine tree's file $1 into $2
	if [ -f "$pristine/$1" ]; then cp "$pristine/$1" "$2"
	else tar -xOf "$TARBALL" "linux-source-6.1/$1" > "$2"; fi
}
# rcpatch NAME EXTRAVERSION [FILE SED-EXPR]...: a unified diff, gzip'ed,
# that makes 6.1.192 say 6.1.193<EXTRAVERSION> and edits FILE by SED-EXPR.
rcpatch() {
	local name=$1 extra=$2 out=$work/$1
	shift 2
	getfile Makefile "$work/Makefile.a"
	sed -e 's/^SUBLEVEL = 192$/SUBLEVEL = 193/' -e "s/^EXTRAVERSION =.*/EXTRAVERSION = $extra/" \
		"$work/Makefile.a" > "$work/Makefile.b"
	diff -u --label a/Makefile --label b/Makefile "$work/Makefile.a" "$work/Makefile.b" > "$out"
	while [ $# -ge 2 ]; do
		getfile "$1" "$work/f.a"
		sed -e "$2" "$work/f.a" > "$work/f.b"
		diff -u --label "a/$1" --label "b/$1" "$work/f.a" "$work/f.b" >> "$out"
		shift 2
	done
	gzip -9n < "$out" > "$FILES/$name.gz"
}
rcpatch patch-6.1.193-rc1 -rc1 README 's/^Linux kernel$/Linux kernel (6.1.193-rc1)/'
zcat "$FILES/patch-6.1.193-rc1.gz" > "$work/rc1"
cat "$SRC/tests/kernels/936e114a245b-revert.patch" >> "$work/rc1"
gzip -9n < "$work/rc1" > "$FILES/patch-6.1.193-rc1.gz"
rcpatch patch-6.1.193-rc2 -rc2 arch/arm64/kernel/asm-offsets.c \
	's/^int main(void)$/int main(void) rcgate_broken_here/'
sha() { sha256sum "$1" | cut -d' ' -f1; }
TSHA=$(sha "$TARBALL")
cp "$FILES/patch-6.1.193-rc1.gz" "$PUB/stable-review/"
printf '%s  linux-6.1.191.tar.xz\n%s  linux-6.1.192.tar.xz\n' "$(printf '0%.0s' $(seq 64))" "$TSHA" > "$work/sums"
export GNUPGHOME=$work/gnupg
mkdir -m 700 "$GNUPGHOME"
gpg -q --batch --passphrase '' --quick-gen-key 'Stable Signing Test <stable@example.org>' ed25519 sign never 2>/dev/null
gpg -q --batch --yes --clearsign --output "$PUB/sha256sums.asc" "$work/sums"
gpg -q --batch --export > "$work/keyring.gpg"
# A second tree, pub2, whose sha256sums.asc was altered after signing.
PUB2=$FILES/pub2/linux/kernel/v6.x
mkdir -p "$PUB2/stable-review"
ln -s "$TARBALL" "$PUB2/linux-6.1.192.tar.xz"
cp "$FILES/patch-6.1.193-rc1.gz" "$PUB2/stable-review/patch-6.1.193-rc7.gz"
sed "s/^0000000000/1111111111/" "$PUB/sha256sums.asc" > "$PUB2/sha256sums.asc"
gpgconf --kill gpg-agent 2>/dev/null
daemon_owns "$work"	# the keyring, read by rcgated as its own user

start_smtpd
start_httpd "$FILES"
start_daemon "workers = 2" "attempts = 1" "filesystems = ext4" "crash_test = 0" \
	"timeout = 600" "[regressions]" "reruns = 0" "[report]" "public_url = https://rcgate.ci.test" "mail_from = rcgate <rcgate@ci.test>" "[notify]" "smtp_url = $SMTPD_URL" \
	"[build]" "from_announcements = 1" "targets = x86_64" "keyring = $work/keyring.gpg"

source_body() {	# VERSION PATCH TARGETS-JSON
	echo "{\"version\":\"$1\",\"targets\":$3,\"source\":{\"tarball\":\"$HTTPD_URL/files/linux-6.1.192.tar.xz\",\"tarball_sha256\":\"$TSHA\",\"patch\":\"$HTTPD_URL/files/$2.gz\",\"patch_sha256\":\"$(sha "$FILES/$2.gz")\"}}"
}

# Malformed sources are refused before anything is stored.
req POST /api/v1/releases -H "$(auth)" -d '{"version":"6.1.193-rc9","source":{"tarball":"'"$HTTPD_URL"'/files/x.tar.xz"}}'
check "a source without its tarball's sha256 is 400" [ "$CODE" = 400 ]
req POST /api/v1/releases -H "$(auth)" -d "$(source_body 6.1.193-rc9 patch-6.1.193-rc1 '["x86_64","sparc"]')"
check "an unknown target is 400" [ "$CODE" = 400 ]

# rc1: announced by mail, and nothing else: rcgated finds its source.
sed -e 's/6\.1\.64/6.1.193/g' -e 's/6\.1\.63/6.1.192/g' -e "s|https://www.kernel.org/pub|$HTTPD_URL/pub|g" \
	"$SRC/tests/data/mail/announce-6.1.64-rc1.eml" > "$work/announce.eml"
req POST /api/v1/announcements -H "$(auth)" -H 'Content-Type: message/rfc822' --data-binary "@$work/announce.eml"
check "the rc is announced by mail" [ "$CODE" = 201 ]
msgid=$(sed -n 's/^Message-I[Dd]: *//p' "$work/announce.eml" | head -1 | tr -d '\r')
for _ in $(seq 1 60); do
	req GET /api/v1/releases/6.1.193-rc1
	[ "$(jqb '.jobs | length')" -gt 0 ] 2>/dev/null && break
	sleep 1
done
check "the daemon read the tarball's hash from sha256sums.asc's verified signature" \
	grep -q "builds from linux-6.1.192.tar.xz.*from a verified signature" "$STATE/rcgated.log"
check "the announcement alone makes an x86_64 job that builds from its patch and tarball" \
	[ "$(jqb '.jobs | length')" = 1 -a "$(jqb '.jobs[0].kind')" = source -a \
	  "$(jqb '.jobs[0].sha256')" = "$TSHA" -a "$(jqb '.jobs[0].patch_sha256')" = "$(sha "$PUB/stable-review/patch-6.1.193-rc1.gz")" ]
settled 6.1.193-rc1 1500 || diag "6.1.193-rc1 did not settle"
req GET /api/v1/releases/6.1.193-rc1
job=$(jqb '.jobs[0].id')
check "the kernel was built (image sha256 and build time recorded)" \
	[ "$(jqb '.jobs[0].built_sha256 | length')" = 64 -a "$(jqb '.jobs[0].build_seconds > 0')" = true ]
check "the built kernel ran as 6.1.193-rc1" [ "$(jqb '.jobs[0].kernel_version')" = 6.1.193-rc1 ]
check "its build is a passing result" [ "$(jqb '[.jobs[0].results[] | select(.test == "build.kernel")][0].status')" = pass ]
check "the ext4 O_DIRECT regression is found and blocks the gate" \
	[ "$(jqb '.gate.verdict')" = block -a "$(jqb '[.regressions[] | select(.test | startswith("ext4."))] | length > 0')" = true ]
req GET "/api/v1/jobs/$job/log"
check "the job log serves make's output" sh -c "printf '%s' \"\$1\" | grep -q '^==== build' && printf '%s' \"\$1\" | grep -q 'bzImage'" _ "$BODY"
replied=0
for _ in $(seq 1 30); do
	grep -lq "^In-Reply-To: $msgid" "$SMTPD_DIR"/*.eml 2>/dev/null && { replied=1; break; }
	sleep 1
done
check "the report is a reply in the announcement's thread" [ $replied = 1 ]

# rc7: the same patch, but its directory's sha256sums.asc does not verify.
sed -e 's/6\.1\.64-rc1/6.1.193-rc7/g' -e 's/6\.1\.64/6.1.193/g' -e 's/6\.1\.63/6.1.192/g' \
	-e "s|https://www.kernel.org/pub|$HTTPD_URL/pub2|g" -e 's/^\(Message-I[Dd]: *<\)/\1rc7./' \
	"$SRC/tests/data/mail/announce-6.1.64-rc1.eml" > "$work/rc7.eml"
req POST /api/v1/announcements -H "$(auth)" -H 'Content-Type: message/rfc822' --data-binary "@$work/rc7.eml"
for _ in $(seq 1 60); do
	req GET /api/v1/releases/6.1.193-rc7
	[ "$(jqb '.source_error')" != null ] && break
	sleep 1
done
diag "rc7: $(jqb .source_error)"
check "a sha256sums.asc altered after signing makes no jobs; the release says why" \
	[ "$(jqb '.jobs | length')" = 0 ] && printf '%s' "$(jqb .source_error)" | grep -q "BAD signature"

# rc2: breaks arm64's build only.
req POST /api/v1/releases -H "$(auth)" -d "$(source_body 6.1.193-rc2 patch-6.1.193-rc2 '["x86_64","arm64"]')"
check "rc2's source is accepted for x86_64 and arm64" [ "$CODE" = 201 -a "$(jqb '.jobs | length')" = 2 ]
settled 6.1.193-rc2 1500 || diag "6.1.193-rc2 did not settle"
req GET /api/v1/releases/6.1.193-rc2
arm=$(jqb '[.jobs[] | select(.target == "arm64")][0]')
x86=$(jqb '[.jobs[] | select(.target == "x86_64")][0]')
check "arm64 does not build: a result (done, build.kernel fail), not an infra error" \
	[ "$(echo "$arm" | jq -r .state)" = done -a "$(echo "$arm" | jq -r '[.results[] | select(.test == "build.kernel")][0].status')" = fail ]
diagnostic=$(echo "$arm" | jq -r '[.results[] | select(.test == "build.kernel")][0].diagnostic')
diag "arm64 build diagnostic: $diagnostic"
check "the diagnostic is the compiler's first error, path relative, no line number" \
	sh -c "printf '%s' \"\$1\" | grep -q '^arch/arm64/kernel/asm-offsets.c: error: ' && ! printf '%s' \"\$1\" | grep -q ':[0-9]'" _ "$diagnostic"
armid=$(echo "$arm" | jq -r .id)
req GET "/api/v1/jobs/$armid/config"
armcfg=$BODY
req GET "/api/v1/jobs/$armid"
check "a build that fails still says what it was: its compiler and its .config (GET /api/v1/jobs/$armid/config)" \
	sh -c "[ \"\$(printf '%s' \"\$1\" | jq -r .compiler)\" != null ] && printf '%s' \"\$2\" | grep -q '^CONFIG_CC_VERSION_TEXT=\"' && printf '%s' \"\$2\" | grep -q '^CONFIG_ARM64=y'" _ "$BODY" "$armcfg"
req GET /api/v1/releases/6.1.193-rc2
check "x86_64 builds and boots" [ "$(echo "$x86" | jq -r .state)" = done -a "$(echo "$x86" | jq -r '[.results[] | select(.test == "build.kernel")][0].status')" = pass ]
check "one build regression, on arm64 only; the gate blocks" \
	[ "$(jqb '[.regressions[] | select(.test == "build.kernel")] | map(.target) | join(",")')" = arm64 -a "$(jqb .gate.verdict)" = block ]
stop_smtpd
rm -rf "$FILES" "$work"
exit 0
