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
#
# agent/ (the guest's static /init) is checked by the same rules from
# rule 6 on: its files are on floors, lowest first (AGENT_FLOORS below),
# and a file uses a function or object of another agent file only when
# that file is on a lower floor, so no two agent files call each other;
# the same size limits hold.
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
echo "1..9"

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
# fn_sizes FILE... -> "file:function lines" per function (an attribute
# before the name, as in "void __attribute__((noreturn)) f(void)", is not
# its name).
fn_sizes() {
	for f in "$@"; do
		awk -v f="$f" '
		/^[A-Za-z_].*\(/ && !/;[ \t]*$/ { sig = $0 }
		/^\{/ { start = NR; name = sig; gsub(/__attribute__\(\([^)]*\)\)/, "", name)
			sub(/\(.*/, "", name); sub(/.*[ *]/, "", name) }
		/^\}/ && start { printf "%s:%s %d\n", f, name, NR - start - 1; start = 0 }' "$f"
	done
}
longfn=$(fn_sizes */*.c main.c | ratchet "$MAX_FN" "$OVER_FN" OVER_FN)
if [ -z "$longfn" ]; then
	echo "ok 5 - no daemon function is over $MAX_FN lines${OVER_FN:+ (still over: $OVER_FN)}"
else
	echo "not ok 5 - functions over $MAX_FN lines"; echo "#$longfn"
fi

# ---- agent/ ----
cd "$SRC/agent" || exit 1
# The floors, lowest first: the runner and check helpers, the tests'
# shared I/O, the block device's, the exerciser's hands (exer_ops.c), its
# generator and model (exer_gen.c), its engine (exer.c), the test families
# (exer_suite.c is the exerciser's), the tables and suite_run, what the
# agent is told, its early setup, and agent.c on top. protocol.h and
# catalogue.h are contracts with the daemon that include nothing: any file
# may include them.
AGENT_FLOORS="suite.c,suite.h testio.c,testio.h bdevio.c,bdevio.h
exer_ops.c,exer.h exer_gen.c,exer_internal.h exer.c
t_*.c,bdev.c,crash.c,exer_suite.c,tests.h table.c,table.h
cmdline.c,cmdline.h boot.c,boot.h agent.c"
AGENT_CONTRACTS="protocol.h catalogue.h"
AGENT_OVER_FN=${AGENT_OVER_FN-""}
agent_floor() {	# agent_floor FILE -> its floor's index, "c" for a contract, "" for none
	local i=0 fl pat
	case " $AGENT_CONTRACTS " in *" $1 "*) echo c; return ;; esac
	for fl in $AGENT_FLOORS; do
		for pat in ${fl//,/ }; do
			# shellcheck disable=SC2254
			case $1 in $pat) echo $i; return ;; esac
		done
		i=$((i + 1))
	done
}

# 6. Every agent file is on a floor, and includes go down (or stay on
# its floor).
bad=""
for x in *.c *.h; do
	me=$(agent_floor "$x")
	if [ -z "$me" ]; then
		bad="$bad nofloor:$x"
		continue
	fi
	while IFS= read -r inc; do
		other=$(agent_floor "$inc")
		[ "$other" = c ] && continue
		if [ -z "$other" ] || [ "$me" = c ] || [ "$other" -gt "$me" ]; then
			bad="$bad $x:$inc"
		fi
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$x")
done
if [ -z "$bad" ]; then
	echo "ok 6 - every agent file is on a floor and includes no higher floor's header"
else
	echo "not ok 6 - agent files off the floors or including up"; echo "#$bad"
fi

# 7. A file uses another's functions and objects only from a lower floor:
# no agent file calls up or sideways, so no two call each other. The
# definitions are the non-static functions and objects at column 0 of the
# .c files; the uses every identifier outside comments and strings that
# is not a member (after "." or "->").
# catalogue.h's agent columns name test functions for table.c, which
# alone expands them: its uses count as table.c's.
defs=$(for f in *.c; do
	awk -v f="$f" '
	/^[A-Za-z_].*\(/ && !/;[ \t]*$/ { sig = $0 }
	/^\{/ && sig !~ /^static/ { name = sig; gsub(/__attribute__\(\([^)]*\)\)/, "", name)
		sub(/\(.*/, "", name); sub(/.*[ *]/, "", name); print name, f }
	/^[a-z][a-z_ ]* [*]?[a-z_][a-z0-9_]*(\[[^]]*\])? =/ && !/^static/ && !/\(/ {
		name = $0; sub(/(\[[^]]*\])? =.*/, "", name); sub(/.*[ *]/, "", name); print name, f }' "$f"
done)
floors=$(for x in *.c *.h; do echo "$x $(agent_floor "$x")"; done)
up=$(awk -v defs="$defs" -v floors="$floors" '
BEGIN {
	n = split(defs, d, "\n")
	for (i = 1; i <= n; i++) { split(d[i], p, " "); owner[p[1]] = p[2] }
	n = split(floors, d, "\n")
	for (i = 1; i <= n; i++) { split(d[i], p, " "); fl[p[1]] = p[2] }
}
FNR == 1 { user = FILENAME; sub(/^\.\//, "", user); if (user == "catalogue.h") user = "table.c"; incomment = 0 }
{
	line = $0
	if (incomment) {
		if (index(line, "*/") == 0) next
		line = substr(line, index(line, "*/") + 2); incomment = 0
	}
	gsub(/\/\*([^*]|\*[^\/])*\*\//, " ", line)
	if (index(line, "/*")) { line = substr(line, 1, index(line, "/*") - 1); incomment = 1 }
	gsub(/"([^"\\]|\\.)*"/, " ", line)
	gsub(/\x27([^\x27\\]|\\.)*\x27/, " ", line)
	if (line ~ /^[ \t]*#[ \t]*include/) next
	while (match(line, /[A-Za-z_][A-Za-z0-9_]*/)) {
		id = substr(line, RSTART, RLENGTH); pre = substr(line, 1, RSTART - 1)
		line = substr(line, RSTART + RLENGTH)
		if (pre ~ /(\.|->)[ \t]*$/) continue	# a member, not a global
		o = owner[id]
		if (o == "" || o == user || seen[user, id]++) continue
		if (fl[o] + 0 >= fl[user] + 0) printf " %s->%s(%s)", user, id, o
	}
}' ./*.c catalogue.h)
if [ -z "$up" ]; then
	echo "ok 7 - no agent file uses a function of its own floor or a higher one"
else
	echo "not ok 7 - agent files calling up or sideways"; echo "#$up"
fi

# 8. No agent .c file over MAX_LINES lines.
long=$(wc -l ./*.c | awk '$2 != "total" { sub(/^\.\//, "", $2); print $2, $1 }' |
	ratchet "$MAX_LINES" "" OVER)
if [ -z "$long" ]; then
	echo "ok 8 - no agent .c file is over $MAX_LINES lines"
else
	echo "not ok 8 - agent files over $MAX_LINES lines"; echo "#$long"
fi

# 9. No agent function over MAX_FN lines but those in AGENT_OVER_FN.
longfn=$(fn_sizes ./*.c | sed 's|^\./||' |
	ratchet "$MAX_FN" "$AGENT_OVER_FN" AGENT_OVER_FN)
if [ -z "$longfn" ]; then
	echo "ok 9 - no agent function is over $MAX_FN lines${AGENT_OVER_FN:+ (still over: $AGENT_OVER_FN)}"
else
	echo "not ok 9 - agent functions over $MAX_FN lines"; echo "#$longfn"
fi
