#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Signs the mail on stdin with DKIM (Debian's python3-dkim) for the tests:
dkimsign.py KEY SELECTOR DOMAIN [--length] [--headers From:Subject:...]
writes the mail with its DKIM-Signature header first to stdout. --length
adds l= (the signed body length), --headers chooses h= (default: what
korg signs, Date:From:To:Cc:Subject:References:In-Reply-To:From)."""
import sys

import dkim

args = sys.argv[1:]
length = "--length" in args
headers = b"Date:From:To:Cc:Subject:References:In-Reply-To:From"
if "--headers" in args:
    headers = args[args.index("--headers") + 1].encode()
key, selector, domain = args[0], args[1], args[2]
msg = sys.stdin.buffer.read()
with open(key, "rb") as f:
    priv = f.read()
sig = dkim.sign(msg, selector.encode(), domain.encode(), priv,
                include_headers=[h for h in headers.split(b":") if h],
                length=length, linesep=b"\n")
sys.stdout.buffer.write(sig + msg)
