#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A small HTTP file server for the integration tests: serves DIR on
127.0.0.1 (port written to PORTFILE), honours Range, and injects faults by
path prefix:
  /files/NAME      plain
  /drop/NAME       the first GET closes the connection halfway through
  /slow/NAME       sends at about 1 MiB/s
  /flaky/NAME      the first GET answers 503
  /stall/NAME      sends the headers and 4 KiB, then nothing for 10 minutes
  /stallonce/NAME  the first GET stalls as /stall/ does, later ones are plain
  /away/NAME       302 to the same file on 127.0.0.2 (another loopback
                   address, which a daemon allowing only 127.0.0.1 refuses)
  /pub/r/NAME      302 to http://127.0.0.1:PORT/outside/NAME (out of /pub/)
  /pub/rr/NAME     302 to /pub/in/NAME (relative, staying in /pub/)
  /outside/NAME    DIR/NAME, plain (a file outside kernel.org's /pub/)
  /pub/...         DIR/pub/..., plain (kernel.org's layout, for builds)
  /stallpub/...    DIR/pub/..., stalled like /stall/
Every request is logged to stderr as: METHOD PATH RANGE STATUS."""
import http.server
import os
import sys
import threading
import time

ROOT = sys.argv[1]
PORTFILE = sys.argv[2]
seen = set()
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def note(self, status):
        sys.stderr.write("%s %s %s %d\n" % (self.command, self.path,
                         self.headers.get("Range", "-"), status))
        sys.stderr.flush()

    def do_GET(self):
        parts = self.path.split("/")
        hop = {"r": "http://127.0.0.1:%d/outside/" % self.server.server_address[1],
               "rr": "/pub/in/"}
        if len(parts) == 4 and parts[1] == "pub" and parts[2] in hop and \
                parts[3] not in ("", ".", ".."):
            self.send_response(302)
            self.send_header("Location", hop[parts[2]] + parts[3])
            self.send_header("Content-Length", "0")
            self.end_headers()
            self.note(302)
            return
        if len(parts) > 3 and parts[1] in ("pub", "stallpub") and \
                ".." not in parts and "" not in parts[1:]:
            # kernel.org's tree: /pub/linux/kernel/v6.x/... from DIR/pub/
            # (/stallpub/...: the same files, stalled after 4 KiB)
            mode = "files" if parts[1] == "pub" else "stall"
            name = self.path
            path = os.path.join(ROOT, "pub", *parts[2:])
        elif len(parts) != 3 or parts[1] not in ("files", "drop", "slow",
                                                   "flaky", "stall", "away",
                                                   "stallonce", "outside"):
            return self.fail(404)
        else:
            mode, name = parts[1], parts[2]
            path = os.path.join(ROOT, os.path.basename(name))
        if not os.path.isfile(path):
            return self.fail(404)
        with lock:
            first = (mode, name) not in seen
            seen.add((mode, name))
        if mode == "flaky" and first:
            return self.fail(503)
        if mode == "outside":
            mode = "files"
        if mode == "stallonce":
            mode = "stall" if first else "files"
        if mode == "away":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.2:%d/files/%s" %
                             (self.server.server_address[1], name))
            self.send_header("Content-Length", "0")
            self.end_headers()
            self.note(302)
            return
        size = os.path.getsize(path)
        start = 0
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
            if start >= size:
                return self.fail(416)
        length = size - start
        self.send_response(206 if start else 200)
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        if start:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, size - 1, size))
        self.end_headers()
        self.note(206 if start else 200)
        limit = length // 2 if mode == "drop" and first else length
        with open(path, "rb") as f:
            f.seek(start)
            sent = 0
            while sent < limit:
                chunk = f.read(min(4096 if mode == "stall" else 65536,
                                   limit - sent))
                if not chunk:
                    break
                try:
                    self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    return
                sent += len(chunk)
                if mode == "slow":
                    time.sleep(0.0625)
                if mode == "stall" and sent >= 4096:
                    time.sleep(600)
                    return
        if limit < length:
            self.close_connection = True
            self.connection.shutdown(2)

    def do_POST(self):
        # /hook: a webhook receiver; each delivery is kept as N.json with
        # its signature header in N.sig.
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.path != "/hook":
            return self.fail(404)
        hooks = os.path.join(ROOT, "hooks")
        os.makedirs(hooks, exist_ok=True)
        with lock:
            n = len([f for f in os.listdir(hooks) if f.endswith(".json")]) + 1
            with open(os.path.join(hooks, "%d.sig" % n), "w") as f:
                f.write(self.headers.get("X-Rcgate-Signature", ""))
            with open(os.path.join(hooks, "%d.json" % n), "wb") as f:
                f.write(body)
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.note(204)

    def fail(self, status):
        body = b"error\n"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.note(status)


http.server.ThreadingHTTPServer.daemon_threads = True
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
server.serve_forever()
