#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Remakes the DKIM fixtures of tests/unit/dkim.c from test.key, a key made
# for these tests only (openssl genrsa 2048; it signs nothing real): keys
# pins its public half for linuxfoundation.org and example.org under the
# selector "test" ([announce] dkim_keys' format), and each signed-*.eml is
# tests/data/mail/announce-6.1.64-rc1.eml signed by Debian's python3-dkim.
set -euo pipefail
cd "$(dirname "$0")"
SIGN="/usr/bin/python3 ../../integration/dkimsign.py test.key test"
MAIL=../mail/announce-6.1.64-rc1.eml
pub=$(openssl rsa -in test.key -pubout 2>/dev/null | grep -v '^-----' | tr -d '\n')
{
	echo "test._domainkey.linuxfoundation.org v=DKIM1; k=rsa; p=$pub"
	echo "test._domainkey.example.org v=DKIM1; k=rsa; p=$pub"
} > keys
$SIGN linuxfoundation.org < $MAIL > signed.eml
$SIGN linuxfoundation.org --length < $MAIL > signed-l.eml
$SIGN example.org < $MAIL > signed-example-org.eml
$SIGN linuxfoundation.org --headers From:To:Subject:Date < $MAIL > signed-no-cc.eml
