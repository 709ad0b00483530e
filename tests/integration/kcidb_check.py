#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks a KCIDB submission (stdin) the way KCIDB's own tools would:
against tests/data/kcidb/v5.3-rules.json (the v5.3 schema's rules) with
python3-jsonschema and strict format checks, then the rules that the
schema states only in words: ids unique and every *_id pointing at an
object of the submission, tree_name telling an rc from a release, test
paths starting with the suite, every executed test with a start_time and
a duration, log URLs absolute and not on a loopback address.

usage: kcidb_check.py RULES.json --version V [--suite S] [--tree-url URL]
Exit 0 if valid, 1 with one line per problem on stderr."""
import argparse
import datetime
import ipaddress
import json
import sys
import urllib.parse

import jsonschema

checker = jsonschema.FormatChecker(formats=())


@checker.checks("date-time", raises=ValueError)
def date_time(value):
    # RFC 3339: a date, a time and an offset ("Z" or +hh:mm).
    if "T" not in value or not (value.endswith("Z") or value[-6] in "+-"):
        raise ValueError("no 'T' or no offset")
    datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return True


@checker.checks("uri", raises=ValueError)
def uri(value):
    u = urllib.parse.urlsplit(value)
    if not u.scheme or not (u.netloc or u.path):
        raise ValueError("not an absolute URI")
    return True


@checker.checks("email", raises=ValueError)
def email(value):
    local, at, domain = value.rpartition("@")
    if not at or not local or not domain or " " in value:
        raise ValueError("not an address")
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rules")
    ap.add_argument("--version", required=True)
    ap.add_argument("--suite", default="odirect")
    ap.add_argument("--tree-url")
    a = ap.parse_args()
    with open(a.rules) as f:
        rules = json.load(f)
    doc = json.load(sys.stdin)
    problems = []
    v = jsonschema.Draft202012Validator(rules, format_checker=checker)
    for e in sorted(v.iter_errors(doc), key=lambda e: list(e.path)):
        problems.append("schema: %s: %s" % ("/".join(map(str, e.path)), e.message))

    def ids(kind):
        seen = [o.get("id") for o in doc.get(kind, [])]
        if len(seen) != len(set(seen)):
            problems.append("%s: duplicate ids" % kind)
        return set(seen)

    checkouts, builds, tests, issues = (ids(k) for k in
                                        ("checkouts", "builds", "tests", "issues"))
    issue_version = {o.get("id"): o.get("version") for o in doc.get("issues", [])}
    for b in doc.get("builds", []):
        if b.get("checkout_id") not in checkouts:
            problems.append("build %s: unknown checkout_id" % b.get("id"))
    for t in doc.get("tests", []):
        if t.get("build_id") not in builds:
            problems.append("test %s: unknown build_id" % t.get("id"))
        path = t.get("path", "")
        if path.split(".")[0] != a.suite:
            problems.append("test %s: path %r does not start with the suite %r" %
                            (t.get("id"), path, a.suite))
        if t.get("status") in ("PASS", "FAIL") and \
                ("start_time" not in t or "duration" not in t):
            problems.append("test %s: no start_time or duration" % t.get("id"))
    for i in doc.get("incidents", []):
        if i.get("issue_id") not in issues:
            problems.append("incident %s: unknown issue_id" % i.get("id"))
        if "test_id" in i and i["test_id"] not in tests:
            problems.append("incident %s: unknown test_id" % i.get("id"))
        elif i.get("issue_id") in issues and \
                i.get("issue_version") != issue_version.get(i["issue_id"]):
            problems.append("incident %s: issue_version %r, the issue is at %r" %
                            (i.get("id"), i.get("issue_version"),
                             issue_version.get(i["issue_id"])))
    for i in doc.get("issues", []):
        if "culprit" in i and not any(i["culprit"].values()):
            problems.append("issue %s: every culprit layer false (invalid)" % i.get("id"))
    for kind in ("checkouts", "builds", "tests"):
        for o in doc.get(kind, []):
            url = o.get("log_url")
            if url is None:
                continue
            host = urllib.parse.urlsplit(url).hostname or ""
            try:
                loop = ipaddress.ip_address(host).is_loopback
            except ValueError:
                loop = host == "localhost"
            if loop:
                problems.append("%s %s: log_url %s is on loopback" % (kind, o.get("id"), url))
    want = "stable-rc" if "-rc" in a.version else "stable"
    for c in doc.get("checkouts", []):
        if c.get("tree_name") != want:
            problems.append("checkout %s: tree_name %r, not %r" % (c.get("id"), c.get("tree_name"), want))
        if a.tree_url and c.get("git_repository_url") != a.tree_url:
            problems.append("checkout %s: git_repository_url %r, not %r" %
                            (c.get("id"), c.get("git_repository_url"), a.tree_url))
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
