#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Reads rcgate's outputs with the parsers their consumers use.

  formats.py metrics FILE      Prometheus text through prometheus_client's
                               parser: prints "family samples" per family
  formats.py feed FILE         Atom through feedparser: prints one entry or
                               feed id per line, fails if feedparser is bozo
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


if __name__ == "__main__":
    {"metrics": metrics, "feed": feed}[sys.argv[1]](sys.argv[2])
