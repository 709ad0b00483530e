#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""A real SMTP server on loopback for the tests (Debian's python3-aiosmtpd):
every message is stored as DIR/N.eml, its envelope as DIR/N.env
("from" line, then one "rcpt" line per recipient). The port (argv[2], or a
free one) goes to DIR/.port."""
import os
import socket
import sys
import threading
import time

from aiosmtpd.controller import Controller

DIR = sys.argv[1]
lock = threading.Lock()


class Store:
    async def handle_DATA(self, server, session, envelope):
        with lock:
            n = len([f for f in os.listdir(DIR) if f.endswith(".eml")]) + 1
            with open(os.path.join(DIR, "%d.env" % n), "w") as f:
                f.write("from %s\n" % envelope.mail_from)
                for r in envelope.rcpt_tos:
                    f.write("rcpt %s\n" % r)
            with open(os.path.join(DIR, "%d.eml" % n), "wb") as f:
                f.write(envelope.original_content)
        return "250 OK"


if len(sys.argv) > 2:
    port = int(sys.argv[2])	# a port the caller reserved
else:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
c = Controller(Store(), hostname="127.0.0.1", port=port)
c.start()
with open(os.path.join(DIR, ".port.tmp"), "w") as f:
    f.write(str(port))
os.rename(os.path.join(DIR, ".port.tmp"), os.path.join(DIR, ".port"))
try:
    while True:
        time.sleep(3600)
finally:
    c.stop()
