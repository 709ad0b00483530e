# SPDX-License-Identifier: GPL-2.0-only
# Sourced by the tests of rcs built from git (gitbuild.sh, bisect.sh): a
# stable-rc-like tree made from Debian's linux-source-6.1 as the release
# 6.1.192, served by a real `git daemon` on loopback.
#
# git_base prints a bare repository with one commit, "Linux 6.1.192"
# (tag v6.1.192): the tarball's tree, committed once per machine under
# /var/cache/rcgate/git-fixture (deterministic dates, so the same commit
# id every time) and packed without deltas, so that serving it costs no
# compression. git_serve_repo makes a test's own tree on top of it
# (objects shared through alternates), and the helpers below commit to a
# branch through a temporary index: no checkout of 80,000 files.

GIT_FIXTURE=${RCGATE_GIT_FIXTURE:-/var/cache/rcgate/git-fixture}
export GIT_AUTHOR_NAME="Stable Tester" GIT_AUTHOR_EMAIL="stable@example.org"
export GIT_COMMITTER_NAME="Stable Tester" GIT_COMMITTER_EMAIL="stable@example.org"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
GIT_CLOCK=1700000000

git_base() {
	local tarball=/usr/src/linux-source-6.1.tar.xz key base tmp
	key=$(stat -c '%s-%Y' "$tarball")
	base=$GIT_FIXTURE/linux-6.1.192-$key.git
	mkdir -p "$GIT_FIXTURE"
	(
		flock 9
		[ -f "$base/rcgate-complete" ] && exit 0
		# Debian's linux-source ships a .gitignore that ignores "/*":
		# hence add -f.
		rm -rf "$base" "$GIT_FIXTURE"/tmp.*
		tmp=$(mktemp -d "$GIT_FIXTURE/tmp.XXXXXX")
		tar -xf "$tarball" -C "$tmp" --strip-components=1
		git init -q --bare "$base"
		export GIT_DIR=$base GIT_WORK_TREE=$tmp GIT_INDEX_FILE=$tmp.index
		cd "$tmp" && git add -A -f . &&
		c=$(GIT_AUTHOR_DATE="@$GIT_CLOCK +0000" GIT_COMMITTER_DATE="@$GIT_CLOCK +0000" \
			git commit-tree "$(git write-tree)" -m "Linux 6.1.192") &&
		git update-ref refs/heads/linux-6.1.y "$c" &&
		git tag v6.1.192 "$c" &&
		git -c pack.window=0 -c pack.compression=1 repack -adq &&
		git prune-packed &&
		touch "$base/rcgate-complete"
		rc=$?
		cd / && rm -rf "$tmp" "$tmp.index"
		exit $rc
	) 9>"$GIT_FIXTURE/.lock" >&2 || return 1
	echo "$base"
}

# git_serve_repo DIR NAME: DIR/NAME.git, the base's branch and tag, its
# objects borrowed from the base.
git_serve_repo() {
	local base
	base=$(git_base) || return 1
	git init -q --bare "$1/$2.git"
	echo "$base/objects" > "$1/$2.git/objects/info/alternates"
	GIT_DIR=$1/$2.git git fetch -q "$base" 'refs/heads/*:refs/heads/*' 'refs/tags/*:refs/tags/*'
}

# git_commit REPO BRANCH SUBJECT BODY CHANGE...: one commit on BRANCH's
# head. A CHANGE is "patch:FILE" (git apply) or "sed:PATH:EXPR" (PATH's
# blob edited). Prints the new commit id.
git_commit() {
	local repo=$1 branch=$2 subject=$3 body=$4 idx tree c
	shift 4
	idx=$(mktemp)
	(
		export GIT_DIR=$repo GIT_INDEX_FILE=$idx
		git read-tree "refs/heads/$branch" || exit 1
		for ch in "$@"; do
			case "$ch" in
			patch:*) git apply --cached "${ch#patch:}" || exit 1 ;;
			sed:*)
				local rest=${ch#sed:} path expr blob
				path=${rest%%:*}; expr=${rest#*:}
				blob=$(git cat-file blob "refs/heads/$branch:$path" | sed -e "$expr" |
					git hash-object -w --stdin) || exit 1
				git update-index --cacheinfo "100644,$blob,$path" || exit 1 ;;
			*) exit 1 ;;
			esac
		done
		tree=$(git write-tree) || exit 1
		GIT_CLOCK=$((GIT_CLOCK + 3600 * $(git rev-list --count "refs/heads/$branch")))
		c=$(printf '%s\n\n%s\n' "$subject" "$body" |
			GIT_AUTHOR_DATE="@$GIT_CLOCK +0000" GIT_COMMITTER_DATE="@$GIT_CLOCK +0000" \
			git commit-tree "$tree" -p "refs/heads/$branch") || exit 1
		git update-ref "refs/heads/$branch" "$c" || exit 1
		echo "$c"
	)
	local rc=$?
	rm -f "$idx"
	return $rc
}

# git_culprit REPO BRANCH UPSTREAM: the fixture's culprit on BRANCH's head,
# "commit UPSTREAM upstream.": its change is the 936e114a245b revert (the
# known-bad kernel's), standing in for the 2023 backport that lacked it.
# Prints its id.
git_culprit() {
	git_commit "$1" "$2" "ext4: properly sync file size update after O_DIRECT write" \
		"commit $3 upstream.

(rcgate's test tree: reverting 936e114a245b stands in for the iomap
prerequisite the 2023 backport lacked.)" \
		"patch:$SRC/tests/kernels/936e114a245b-revert.patch"
}

# git_version REPO BRANCH SUBLEVEL EXTRAVERSION: stable's "Linux X.Y.Z-rcN"
# commit at the top of a branch.
git_version() {
	git_commit "$1" "$2" "Linux 6.1.$3$4" "" \
		"sed:Makefile:s/^SUBLEVEL = .*/SUBLEVEL = $3/;s/^EXTRAVERSION =.*/EXTRAVERSION = $4/"
}

# git_announce VERSION SERIES BRANCH ID DIR: the 6.1.64-rc1 mail made
# into VERSION's (series "6.6", its tree $URL and BRANCH, a Message-ID of
# its own by ID), kept as DIR/VERSION.eml and posted to rcgated; prints
# its Message-ID.
git_announce() {
	local v=$1 base=${1%-rc*} series=$2 branch=$3 prev
	prev=${base%.*}.$((${base##*.} - 1))
	sed -e "s/6\\.1\\.64-rc1/$v/g" -e "s/6\\.1\\.64/$base/g" -e "s/6\\.1\\.63/$prev/g" \
		-e "s/\\[PATCH 6\\.1 /[PATCH $series /" -e "s/linux-6\\.1\\.y/$branch/g" \
		-e "s/664207345@/664207$4@/" \
		-e "s|git://git.kernel.org/pub/scm/linux/kernel/git/stable/linux-stable-rc.git|$URL|" \
		"$SRC/tests/data/mail/announce-6.1.64-rc1.eml" > "$5/$v.eml"
	req POST /api/v1/announcements -H "$(auth)" -H 'Content-Type: message/rfc822' --data-binary "@$5/$v.eml"
	[ "$CODE" = 201 ] || echo "announcing $v: $CODE $BODY" >&2
	sed -n 's/^Message-I[Dd]: *//p' "$5/$v.eml" | head -1 | tr -d '\r<>'
}

# git_daemon DIR: serves DIR's repositories on a free loopback port
# (git's own protocol); GIT_URL is git://127.0.0.1:PORT.
git_daemon() {
	local port
	for _ in 1 2 3 4 5; do
		port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		git daemon --reuseaddr --listen=127.0.0.1 --port="$port" --base-path="$1" \
			--export-all --informative-errors "$1" 2>>"$1/.git-daemon.log" &
		GIT_DAEMON_PID=$!
		for _ in $(seq 1 30); do
			git ls-remote "git://127.0.0.1:$port/" >/dev/null 2>&1
			# Any answer (even "no such repository") means it listens.
			grep -q . "$1/.git-daemon.log" 2>/dev/null && break
			(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
			sleep 0.2
		done
		if kill -0 "$GIT_DAEMON_PID" 2>/dev/null; then
			GIT_URL=git://127.0.0.1:$port
			return 0
		fi
	done
	return 1
}
stop_git_daemon() {
	[ -n "${GIT_DAEMON_PID:-}" ] && kill "$GIT_DAEMON_PID" 2>/dev/null
	wait "$GIT_DAEMON_PID" 2>/dev/null
	GIT_DAEMON_PID=
}

# git_test_begin N WHAT: a git test's start: its TAP plan (every check
# skipped, and the script ends, without linux-source-6.1 or git); SRV and
# work, temporary; REPO, the served stable-rc-like tree, and B, its branch.
git_test_begin() {
	echo "1..$1"
	if [ ! -r /usr/src/linux-source-6.1.tar.xz ] || ! command -v git >/dev/null; then
		for i in $(seq 1 "$1"); do skip_test "$2 $i" "no linux-source-6.1 or git (scripts/setup)"; done
		exit 0
	fi
	SRV=$(mktemp -d)
	work=$(mktemp -d)
	git_serve_repo "$SRV" linux-stable-rc || { echo "Bail out! cannot make the git fixture"; exit 1; }
	REPO=$SRV/linux-stable-rc.git
	B=linux-6.1.y
}

# git_test_end: the git daemon, the temporary directories and what rcgated
# cached of the trees at URL and at EXTRA_URLS (clones, worktrees, locks).
git_test_end() {
	local key u cache=${RCGATE_TEST_CACHE:-/var/cache/rcgate/test-cache}/build/git
	stop_git_daemon
	rm -rf "$SRV" "$work"
	for u in "$URL" ${EXTRA_URLS:-}; do
		key=$(printf '%s' "$u" | sha256sum | cut -c1-16)
		rm -rf "$cache/$key.git" "$cache/$key.git.wt" "$cache/$key.git.lock"
	done
}
