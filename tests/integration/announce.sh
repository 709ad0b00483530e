#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Announcements as triggers: through the API, through rcgatectl, and from a
# watched Maildir. Replies, patches, other list mail and garbage are
# ignored with a reason and never create a release.
. "$(dirname "$0")/lib.sh"
echo "1..10"
MAIL=$SRC/tests/data/mail
MAILDIR=$(mktemp -d); daemon_owns "$MAILDIR"
start_daemon "[announce]" "maildir = $MAILDIR"
ctl() { "$BUILD/rcgatectl" --server "$BASE" --token "$TOKEN" "$@"; }

req POST /api/v1/announcements -H "$(auth)" --data-binary "@$MAIL/announce-6.1.64-rc1.eml"
check "POST announcement: 201 with version, deadline and Message-ID" [ "$CODE" = 201 -a "$(jqb .version)" = 6.1.64-rc1 -a "$(jqb .deadline)" = 2023-11-26T17:19:17Z -a "$(jqb .message_id)" = 20231124172024.664207345@linuxfoundation.org ]
check "it has no jobs until kernels are submitted (gate pending)" [ "$(jqb '.jobs | length')" = 0 -a "$(jqb .gate.verdict)" = pending ]
req POST /api/v1/announcements -H "$(auth)" --data-binary "@$MAIL/announce-6.1.64-rc1.eml"
check "the same announcement again is 200 and changes nothing" [ "$CODE" = 200 ]
req POST /api/v1/announcements -H "$(auth)" --data-binary "@$MAIL/patch-6.1-001-ext4.eml"
check "a patch mail is 422 (not an announcement)" [ "$CODE" = 422 ]
req POST /api/v1/announcements -H "$(auth)" --data-binary "@$MAIL/garbage.eml"
check "garbage is 400 or 422, never a release" [ "$CODE" = 400 -o "$CODE" = 422 ]
out=$(ctl announce < "$MAIL/announce-5.15.140-rc1.eml")
check "rcgatectl announce < mail creates the release" sh -c "echo '$out' | grep -q '^5.15.140-rc1'"

for f in announce-5.10.202-rc1.eml reply-preadv03.eml unrelated-list-mail.eml no-message-id.eml announce-6.6.3-rc1-xkerneltest.eml; do
	cp "$MAIL/$f" "$MAILDIR/tmp/$f" && mv "$MAILDIR/tmp/$f" "$MAILDIR/new/$f"
done
for _ in $(seq 1 50); do [ -z "$(ls "$MAILDIR/new")" ] && break; sleep 0.2; done
check "the Maildir watcher took every new mail" [ -z "$(ls "$MAILDIR/new")" ]
req GET /api/v1/releases/5.10.202-rc1
check "an announcement from the Maildir became a release" [ "$CODE" = 200 ]
req GET /api/v1/releases/6.6.3-rc1
check "X-KernelTest headers are honoured" [ "$CODE" = 200 -a "$(jqb .branch)" = 6.6 ]
req GET "/api/v1/releases?limit=50"
check "replies and other mail created nothing (4 releases)" [ "$(jqb '.releases | length')" = 4 ]
rm -rf "$MAILDIR"
exit 0
