#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The daemon's layering, checked on its sources (curl's checksrc is the
# spirit): daemon/ is folders on floors, lowest first,
#   base store artifact guests build job intake report review http
# and main.c above them all. A file includes its own folder's headers and
# the public header (<folder>/<folder>.h) of a lower floor only; a
# *_internal.h is included only from its own folder; no .c file of the
# daemon is over MAX_LINES lines, and no function over MAX_FN lines (a
# function is a body from a "{" to a "}" at column 0, named by the
# identifier before the first "(" of its signature). One TAP line per
# rule, the offenders in
# its diagnostics. No build needed; a second or less.
set -u
SRC=${RCGATE_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$SRC/daemon" || exit 1
FLOORS="base store artifact guests build job intake report review http"
MAX_LINES=${MAX_LINES:-1000}
MAX_FN=${MAX_FN:-120}
floor() {	# floor FOLDER -> its index, or 99 for main.c's level
	local i=0
	for f in $FLOORS; do
		[ "$f" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo 99
}
echo "1..5"

# 1. Every folder has its public header and nothing sits loose beside main.c.
bad=""
for f in $FLOORS; do
	[ -f "$f/$f.h" ] || bad="$bad missing:$f/$f.h"
done
for x in *.c *.h; do
	[ -e "$x" ] || continue
	[ "$x" = main.c ] || bad="$bad loose:$x"
done
if [ -z "$bad" ]; then
	echo "ok 1 - every floor has its public header; only main.c is outside a folder"
else
	echo "not ok 1 - the folder map is broken"; echo "#$bad"
fi

# 2. Includes go down (or sideways within a folder), never up.
up=""
internal=""
for file in */*.c */*.h; do
	dir=${file%%/*}
	me=$(floor "$dir")
	while IFS= read -r inc; do
		case $inc in
		*/*_internal.h|*_internal.h)
			# an internal header: only its own folder's
			case $inc in
			*/*) owner=${inc%%/*} ;;
			*) owner=$dir ;;
			esac
			[ "$owner" = "$dir" ] || internal="$internal $file:$inc"
			;;
		../../agent/protocol.h|../agent/protocol.h|../../agent/catalogue.h|*/store_migrations.h|store_migrations.h) ;;
		*/*.h)
			other=${inc%%/*}
			[ "$(floor "$other")" -le "$me" ] || up="$up $file:$inc"
			;;
		esac
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
done
if [ -z "$up" ]; then
	echo "ok 2 - no file includes a higher floor's header"
else
	echo "not ok 2 - includes that go up a floor"; echo "#$up"
fi
if [ -z "$internal" ]; then
	echo "ok 3 - internal headers stay inside their folders"
else
	echo "not ok 3 - another folder's internal header included"; echo "#$internal"
fi

# 4. No .c file of the daemon over MAX_LINES lines, but those still
# listed in OVER (a ratchet: the list only shrinks; a file that grows past
# the limit fails, and so does one listed that is now under it).
OVER=${OVER-""}
# The ratchet of rules 4 and 5: reads "name size" lines; prints each name
# over the limit $1 that the list $2 (named $3) lacks, and each it lists
# that is now under.
ratchet() {
	awk -v m="$1" -v over=" $2 " -v list="$3" '
	$2 > m && index(over, " " $1 " ") == 0 { printf " %s:%d", $1, $2 }
	$2 <= m && index(over, " " $1 " ") != 0 { printf " %s:%d(under: drop it from %s)", $1, $2, list }'
}
long=$(wc -l */*.c main.c | awk '$2 != "total" { print $2, $1 }' |
	ratchet "$MAX_LINES" "$OVER" OVER)
if [ -z "$long" ]; then
	echo "ok 4 - no daemon .c file is over $MAX_LINES lines${OVER:+ (still over: $OVER)}"
else
	echo "not ok 4 - files over $MAX_LINES lines"; echo "#$long"
fi

# 5. No function over MAX_FN lines but those in OVER_FN (file:function, a
# ratchet like rule 4's).
OVER_FN=${OVER_FN-""}
longfn=$(for f in */*.c main.c; do
	awk -v f="$f" '
	/^[A-Za-z_].*\(/ && !/;[ \t]*$/ { sig = $0 }
	/^\{/ { start = NR; name = sig; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name) }
	/^\}/ && start { printf "%s:%s %d\n", f, name, NR - start - 1; start = 0 }' "$f"
done | ratchet "$MAX_FN" "$OVER_FN" OVER_FN)
if [ -z "$longfn" ]; then
	echo "ok 5 - no daemon function is over $MAX_FN lines${OVER_FN:+ (still over: $OVER_FN)}"
else
	echo "not ok 5 - functions over $MAX_FN lines"; echo "#$longfn"
fi
