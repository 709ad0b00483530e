/* SPDX-License-Identifier: GPL-2.0-only
 *
 * bisect_tree.c - owns where a bisection of an rc whose kernels CI posted
 * builds its steps from: the tree and branch its announcement names
 * (X-KernelTest-Tree / X-KernelTest-Branch, release.git_tree and
 * git_branch). That text came in a mail, so it is untrusted: the URL must
 * pass what every git fetch of rcgated passes (git://, http:// or https://
 * only, a plain URL under [build] tree_origins, an allowed address once
 * resolved) and the branch must be a plain branch name, all checked before
 * anything is fetched. The fetch is gitsrc_fetch's (the sandbox, the size
 * cap), and the branch head is taken as the rc's commit only if its
 * Makefile says the rc's version: a branch that moved on to the next rc
 * is not the kernel that failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "store/store.h"
#include "build/build.h"
#include "review/review.h"

int bisect_tree_split(const char *tree, char *url, size_t ulen, char *branch,
		      size_t blen, char *why, size_t wlen)
{
	size_t n = strcspn(tree, " ");

	if (n == 0) {
		errf(why, wlen, "its announcement names no git tree");
		return -1;
	}
	if (n >= ulen) {
		errf(why, wlen, "its announcement's tree URL is longer than %zu"
		     " characters", ulen - 1);
		return -1;
	}
	snprintf(url, ulen, "%.*s", (int)n, tree);
	tree += n + (tree[n] == ' ');
	if (tree[0] == '\0') {
		errf(why, wlen, "its announcement names the tree %.200s but no"
		     " branch (X-KernelTest-Branch)", url);
		return -1;
	}
	if (strlen(tree) >= blen) {
		errf(why, wlen, "its announcement's branch is longer than %zu"
		     " characters", blen - 1);
		return -1;
	}
	snprintf(branch, blen, "%s", tree);
	return 0;
}

int bisect_tree_check(const struct config *cfg, const char *tree, char *url,
		      size_t ulen, char *branch, size_t blen, char *why,
		      size_t wlen)
{
	char raw[2100], e[512];

	if (bisect_tree_split(tree, raw, sizeof(raw), branch, blen, why,
			      wlen) < 0)
		return -1;
	if (gitsrc_url_check(raw, e, sizeof(e)) < 0 ||
	    origin_pin(cfg->build_tree_origins, "tree", raw, url, ulen, e,
		       sizeof(e)) < 0 ||
	    gitsrc_branch_check(branch, e, sizeof(e)) < 0) {
		errf(why, wlen, "its announcement's tree is refused, nothing was"
		     " fetched: %s", e);
		return -1;
	}
	return 0;
}

/* The build options of the fetch and of the git commands after it, as a
 * job's build has them ([build] sandbox, limits, fetch cap). */
static void fetch_opts(struct build_options *o, const struct config *cfg,
		       const char *root)
{
	memset(o, 0, sizeof(*o));
	o->root = root;
	o->timeout = cfg->build_timeout > 0 ? cfg->build_timeout : 3600;
	o->git_config = cfg->build_git_config;
	o->no_sandbox = strcmp(cfg->build_sandbox, "none") == 0;
	o->mem_mb = cfg->build_memory_mb;
	o->file_mb = cfg->build_file_mb;
	o->disk_mb = cfg->build_tree_max_mb;
	o->fetch_mb = cfg->build_fetch_max_mb;
}

/* The branch head's version, from its Makefile in the clone. */
int bisect_tree_fetch(const struct config *cfg, const char *cache_dir,
		      const char *tree, const char *version, char *url,
		      size_t ulen, char commit[41], int (*cancelled)(void *),
		      char *why, size_t wlen)
{
	char branch[128], root[PATH_MAX], logpath[PATH_MAX], gitdir[PATH_MAX],
		said[64], e[1024] = "";
	struct build_options o;
	int fd, rc;

	if (bisect_tree_check(cfg, tree, url, ulen, branch, sizeof(branch), why,
			      wlen) < 0)
		return -1;
	/* Its address, before anything is made or fetched. */
	if (gitsrc_pin_check(url, e, sizeof(e)) < 0) {
		errf(why, wlen, "its announcement's tree is refused, nothing was"
		     " fetched: %s", e);
		return -1;
	}
	if (pathf(root, sizeof(root), "%s/build", cache_dir) < 0 ||
	    pathf(logpath, sizeof(logpath), "%s/bisect-fetch.log", root) < 0 ||
	    mkdir_p(root, 0755, e, sizeof(e)) < 0) {
		errf(why, wlen, "the build cache: %s", e[0] ? e : "path too long");
		return -1;
	}
	fetch_opts(&o, cfg, root);
	o.cancelled = cancelled;
	/* git's own output goes to one log beside the clones. */
	fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		errf(why, wlen, "%s: %s", logpath, strerror(errno));
		return -1;
	}
	rc = gitsrc_fetch(url, branch, fd, &o, gitdir, sizeof(gitdir), commit,
			  e, sizeof(e));
	close(fd);
	if (rc < 0) {
		errf(why, wlen, "fetching the branch %s of %.200s failed: %s",
		     branch, url, e);
		return -1;
	}
	if (gitsrc_commit_version(gitdir, commit, &o, said, sizeof(said), e,
				  sizeof(e)) < 0) {
		errf(why, wlen, "the head %.12s of %s in %.200s: %s", commit,
		     branch, url, e);
		return -1;
	}
	if (strcmp(said, version) != 0) {
		errf(why, wlen, "the branch %s of %.200s has moved on: its head"
		     " %.12s says %s in its Makefile, not %s, so it is not the"
		     " kernel that was tested", branch, url, commit, said,
		     version);
		return -1;
	}
	return 0;
}
