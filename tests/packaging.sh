#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# What make install ships, checked by the tools that read it: mandoc for the
# man pages, systemd-analyze for the unit, systemd-sysusers for its account,
# rcgated itself for the example configuration. No daemon, a few seconds.
# By default it checks the build tree; make installcheck points it at the
# installed files (RCGATE_MANDIR, RCGATE_UNIT, RCGATE_SYSUSERS,
# RCGATE_EXAMPLE, RCGATED, RCGATE_DESTDIR), where systemd-analyze also
# finds the man pages the unit's Documentation= names.
set -u
SRC=${RCGATE_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${RCGATE_BUILDDIR:-$SRC}
RCGATED=${RCGATED:-$BUILD/rcgated}
UNIT=${RCGATE_UNIT-$BUILD/contrib/rcgated.service}
SYSUSERS=${RCGATE_SYSUSERS-$SRC/contrib/sysusers.d/rcgate.conf}
EXAMPLE=${RCGATE_EXAMPLE:-$BUILD/contrib/rcgated.conf.example}
if [ -n "${RCGATE_MANDIR:-}" ]; then
	MANS="$RCGATE_MANDIR/man8/rcgated.8 $RCGATE_MANDIR/man1/rcgatectl.1"
else
	MANS="$BUILD/man/rcgated.8 $SRC/man/rcgatectl.1"
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
diag() { sed 's/^/# /' "$@"; }

echo "1..6"

# mandoc -T lint: errors and warnings down to style (mandoc's default for
# lint), the check Debian's lintian runs on every man page it ships.
if command -v mandoc >/dev/null 2>&1; then
	for m in $MANS; do
		if mandoc -T lint "$m" >"$TMP/lint" 2>&1 && [ ! -s "$TMP/lint" ]; then
			ok "mandoc -T lint $(basename "$m") is clean"
		else
			not_ok "mandoc -T lint $(basename "$m") is clean"; diag "$TMP/lint"
		fi
	done
else
	for m in $MANS; do
		skip "mandoc -T lint $(basename "$m")" "mandoc is not installed (apt-get install mandoc)"
	done
fi

# systemd-analyze verify loads the unit as systemd would and checks every
# setting, that ExecStart= is executable and (installed) that the pages of
# Documentation= exist. Before make install, ExecStart= names a binary not
# there yet: the copy checked runs the built one instead.
if [ -z "$UNIT" ] || [ ! -f "$UNIT" ]; then
	skip "systemd-analyze verify rcgated.service" "no unit built (--without-systemdsystemunitdir)"
elif ! command -v systemd-analyze >/dev/null 2>&1; then
	skip "systemd-analyze verify rcgated.service" "systemd-analyze is not installed (apt-get install systemd)"
elif ! printf '[Service]\nExecStart=/bin/true\n' >"$TMP/probe.service" ||
	! systemd-analyze verify --man=no "$TMP/probe.service" >/dev/null 2>&1; then
	skip "systemd-analyze verify rcgated.service" "systemd-analyze cannot verify even a trivial unit here"
else
	exec_path=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$UNIT")
	if [ -n "${RCGATE_MANDIR:-}" ]; then
		# Installed (maybe under DESTDIR): ExecStart= must be the
		# installed rcgated.
		run=${RCGATE_DESTDIR:-}$exec_path
		man=yes
		export MANPATH=$RCGATE_MANDIR
	else
		run=$RCGATED
		man=no
	fi
	sed "s|^ExecStart=[^ ]*|ExecStart=$run|" "$UNIT" >"$TMP/rcgated.service"
	if systemd-analyze verify --man=$man "$TMP/rcgated.service" >"$TMP/verify" 2>&1 &&
	   [ ! -s "$TMP/verify" ] && [ "$run" -ef "$RCGATED" ]; then
		ok "systemd-analyze verify rcgated.service is clean (ExecStart=$exec_path)"
	else
		not_ok "systemd-analyze verify rcgated.service is clean (ExecStart=$exec_path)"
		diag "$TMP/verify"
	fi
fi

# systemd-sysusers, in dry-run on an empty root, reads the file as a real
# boot would and says (on stderr) what it would create; a bad line is only
# a message naming the file and line, not an exit status.
if [ -z "$SYSUSERS" ] || [ ! -f "$SYSUSERS" ]; then
	skip "systemd-sysusers accepts sysusers.d/rcgate.conf" "not installed (--without-sysusersdir)"
elif ! command -v systemd-sysusers >/dev/null 2>&1; then
	skip "systemd-sysusers accepts sysusers.d/rcgate.conf" "systemd-sysusers is not installed (apt-get install systemd)"
else
	mkdir -p "$TMP/root/etc" "$TMP/root/usr/lib/sysusers.d"
	cp "$SYSUSERS" "$TMP/root/usr/lib/sysusers.d/rcgate.conf"
	if systemd-sysusers --dry-run --root="$TMP/root" >"$TMP/sysusers" 2>&1 &&
	   ! grep -q 'rcgate\.conf:[0-9]' "$TMP/sysusers" &&
	   grep -q "Creating user 'rcgate'" "$TMP/sysusers"; then
		ok "systemd-sysusers accepts sysusers.d/rcgate.conf and creates rcgate"
	else
		not_ok "systemd-sysusers accepts sysusers.d/rcgate.conf and creates rcgate"
		diag "$TMP/sysusers"
	fi
fi

# The example configuration: as shipped (everything commented out) it is a
# valid file, and with the "#key = value" lines uncommented it is exactly
# what this rcgated prints for an empty file: every directive, no drift.
: >"$TMP/empty.conf"
if "$RCGATED" -n -f "$EXAMPLE" >/dev/null 2>"$TMP/check"; then
	ok "rcgated -n accepts rcgated.conf.example"
else
	not_ok "rcgated -n accepts rcgated.conf.example"; diag "$TMP/check"
fi
"$RCGATED" -n -v -f "$TMP/empty.conf" 2>/dev/null | sed 's/ *$//' >"$TMP/defaults"
sed -n '/^\[/,$p' "$EXAMPLE" | sed 's/^#\([a-z_][a-z_]* =\)/\1/' >"$TMP/uncommented"
if [ -s "$TMP/defaults" ] && diff -u "$TMP/defaults" "$TMP/uncommented" >"$TMP/diff"; then
	ok "rcgated.conf.example is rcgated -n -v's output, commented out"
else
	not_ok "rcgated.conf.example is rcgated -n -v's output, commented out"; diag "$TMP/diff"
fi

[ "$failed" = 0 ]
