#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Reads rcgate's outputs with the parsers their consumers use.

  formats.py metrics FILE      Prometheus text through prometheus_client's
                               parser: prints "family samples" per family
  formats.py feed FILE         Atom through feedparser: prints one entry or
                               feed id per line, fails if feedparser is bozo
  formats.py reply FILE        a report mail through Python's email package
                               (policy.default, strict): fails if an address
                               is named twice across To and Cc, if a body
                               line other than a URL passes 78 columns, or
                               if a target goes by two names
  formats.py regzbot FILE      prints its regzbot commands; fails unless
                               each is alone in its paragraph
Exit 1 (with the reason on stderr) when the parser refuses the input."""
import sys


def metrics(path):
    from prometheus_client.parser import text_string_to_metric_families
    with open(path) as f:
        text = f.read()
    for fam in text_string_to_metric_families(text):
        print(fam.name, fam.type, len(fam.samples))


def feed(path):
    import feedparser
    d = feedparser.parse(path)
    if d.bozo:
        print("feedparser: %s" % d.bozo_exception, file=sys.stderr)
        sys.exit(1)
    if d.version != "atom10":
        print("feedparser: version %r, not atom10" % d.version, file=sys.stderr)
        sys.exit(1)
    print(d.feed.id)
    for e in d.entries:
        print(e.id)


def regzbot(path):
    """Prints each regzbot command of a mail; fails if one shares its
    paragraph with other text (regzbot reads them alone)."""
    import email
    import email.policy
    with open(path, "rb") as f:
        msg = email.message_from_binary_file(f, policy=email.policy.default)
    body = msg.get_body(("plain",)).get_content()
    bad = 0
    for para in body.split("\n\n"):
        if "#regzbot" not in para:
            continue
        lines = para.strip().splitlines()
        if len(lines) != 1 or not lines[0].startswith("#regzbot "):
            print("not alone: %r" % para, file=sys.stderr)
            bad = 1
        print(para.strip())
    sys.exit(bad)


def reply(path):
    import email
    import email.policy
    import email.utils
    import re
    with open(path, "rb") as f:
        msg = email.message_from_binary_file(f, policy=email.policy.default)
    problems = []
    for d in msg.defects:
        problems.append("defect: %s" % d)
    seen = []
    for field in ("To", "Cc"):
        for _, addr in email.utils.getaddresses(msg.get_all(field, [])):
            if addr.lower() in seen:
                problems.append("%s names %s again" % (field, addr))
            seen.append(addr.lower())
    body = msg.get_body(("plain",)).get_content()
    for line in body.splitlines():
        if len(line) > 78 and "://" not in line:
            problems.append("line of %d columns: %s" % (len(line), line))
    if re.search(r"\barm\b", body) and "armv7" in body:
        problems.append("armv7 is also called arm")
    for p in problems:
        print(p, file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    {"metrics": metrics, "feed": feed, "reply": reply,
     "regzbot": regzbot}[sys.argv[1]](sys.argv[2])
