# SPDX-License-Identifier: GPL-2.0-only
# clients.py PORT IDLE SLOW SLOW_PATH SECONDS: holds IDLE + SLOW HTTP/1.1
# keep-alive connections to 127.0.0.1:PORT for bench/memory.sh, as a lab's
# dashboards and scripts would: the IDLE ones each GET /api/v1/releases,
# read the answer and keep the connection, asking again every 5 s (rcgated
# closes a connection that sends no request for header_timeout, 10 s); the
# SLOW ones GET SLOW_PATH (a large
# answer) with a 4 KiB receive buffer and read 1 KiB a second, so rcgated
# holds the answer unsent. Prints "ready N" once every connection has its
# first bytes, then after SECONDS "still N" (connections still open) and
# exits, closing them all.
import select
import socket
import sys
import time

port, n_idle, n_slow = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
slow_path, hold = sys.argv[4], float(sys.argv[5])


def request(s, path):
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path).encode())


def read_answer(s):
    """Reads one whole answer (Content-Length framed) or fails."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise OSError("closed before the headers")
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    while len(body) < length:
        chunk = s.recv(65536)
        if not chunk:
            raise OSError("closed in the body")
        body += chunk
    return head.split(b"\r\n")[0].decode(), len(body)


probe = socket.create_connection(("127.0.0.1", port))
request(probe, slow_path)
status, size = read_answer(probe)
probe.close()
print("slow path %s: %s, %d bytes" % (slow_path, status, size), flush=True)

idle, slow = [], []
for _ in range(n_idle):
    s = socket.create_connection(("127.0.0.1", port))
    request(s, "/api/v1/releases")
    read_answer(s)
    idle.append(s)
for _ in range(n_slow):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    request(s, slow_path)
    s.recv(1024)
    slow.append(s)
print("ready %d" % (len(idle) + len(slow)), flush=True)

open_ = set(idle + slow)
end, next_ask = time.monotonic() + hold, time.monotonic() + 5
while time.monotonic() < end:
    if time.monotonic() >= next_ask:
        for s in idle:
            if s in open_:
                try:
                    request(s, "/api/v1/releases")
                    read_answer(s)
                except OSError:
                    open_.discard(s)
        next_ask = time.monotonic() + 5
    for s in slow:
        if s in open_:
            r, _, _ = select.select([s], [], [], 0)
            if r:
                try:
                    if not s.recv(1024):
                        open_.discard(s)
                except OSError:
                    open_.discard(s)
    time.sleep(1)
print("still %d" % len(open_), flush=True)
for s in idle + slow:
    s.close()
