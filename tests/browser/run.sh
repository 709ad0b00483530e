#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Browser tests of the dashboard against a running, populated rcgated.
# Usage: RCGATE_URL=http://127.0.0.1:PORT tests/browser/run.sh
# Prints TAP. Needs Debian's chromium (CHROMIUM overrides /usr/bin/chromium)
# and node >= 20; installs playwright-core with `npm ci` on first use.
set -eu
cd "$(dirname "$0")"
if [ -z "${RCGATE_URL:-}" ]; then
	echo "Bail out! RCGATE_URL is not set (base URL of a running rcgated with data)"
	exit 1
fi
export RCGATE_URL
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
export CHROMIUM
if [ ! -x "$CHROMIUM" ]; then
	echo "1..0 # SKIP no chromium at $CHROMIUM (apt-get install chromium)"
	exit 0
fi
if ! command -v node >/dev/null 2>&1; then
	echo "1..0 # SKIP node is not installed"
	exit 0
fi
if ! curl -fsS -o /dev/null "$RCGATE_URL/healthz" 2>/dev/null; then
	echo "Bail out! rcgated does not answer at $RCGATE_URL/healthz"
	exit 1
fi
mkdir -p output
if [ ! -d node_modules/playwright-core ]; then
	# playwright-core never downloads a browser; the env var says so twice.
	if ! PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund \
		--ignore-scripts > output/npm-ci.log 2>&1; then
		echo "Bail out! npm ci failed, see tests/browser/output/npm-ci.log"
		exit 1
	fi
fi
exec node --test --test-reporter=tap dashboard.test.mjs
