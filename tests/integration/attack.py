#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Hostile HTTP clients for tests/integration/trust.sh, each bounded in
count and time and aimed only at the daemon on loopback.

  trickle PORT N SECONDS   N sockets from 127.0.0.2 each sending a header
                           line every second for SECONDS; prints how many
                           the server closed before the end and the worst
                           /healthz latency seen from 127.0.0.1 meanwhile
  early401 PORT            headers of a 1 MiB POST without a token, no body:
                           prints the status and how fast it came
  bodies PORT N            N anonymous 1 MiB POSTs at once; prints statuses"""
import socket
import sys
import threading
import time


def healthz(port):
    t = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    ok = data.startswith(b"HTTP/1.1 200")
    return time.monotonic() - t, ok


def trickle(port, n, seconds):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.2", 0))
        s.settimeout(5)
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /api/v1/releases HTTP/1.1\r\nHost: x\r\n")
            socks.append(s)
        except OSError:
            s.close()
    closed = set()
    worst, failures = 0.0, 0
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        for k, s in enumerate(socks):
            if k in closed:
                continue
            try:
                s.sendall(b"X-Trickle-%d: %d\r\n" % (i, k))
            except OSError:
                closed.add(k)
        lat, ok = healthz(port)
        worst = max(worst, lat)
        failures += 0 if ok else 1
        i += 1
        time.sleep(max(0.0, 1.0 - lat))
    # A closed socket shows as EOF or an error on read.
    for k, s in enumerate(socks):
        if k in closed:
            continue
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                closed.add(k)
        except BlockingIOError:
            pass
        except OSError:
            closed.add(k)
    for s in socks:
        s.close()
    print("connected=%d closed=%d worst_healthz=%.2f healthz_failures=%d" %
          (len(socks), len(closed), worst, failures))


def early401(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    t = time.monotonic()
    s.sendall(b"POST /api/v1/releases HTTP/1.1\r\nHost: x\r\n"
              b"Content-Type: application/json\r\n"
              b"Content-Length: 1048576\r\n\r\n")
    data = s.recv(4096)
    print("status=%s seconds=%.2f" % (data.split(b" ")[1].decode() if data else "none",
                                      time.monotonic() - t))
    s.close()


def bodies(port, n):
    results = []
    lock = threading.Lock()
    payload = b"a" * (1 << 20)

    def one():
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=20)
            s.sendall(b"POST /api/v1/releases HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(payload))
            try:
                s.sendall(payload)
            except OSError:
                pass
            data = s.recv(4096)
            status = data.split(b" ")[1].decode() if data else "none"
            s.close()
        except OSError as e:
            status = "error:%s" % e.__class__.__name__
        with lock:
            results.append(status)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    print(" ".join(sorted(set(results))))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "trickle":
        trickle(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
    elif cmd == "early401":
        early401(int(sys.argv[2]))
    elif cmd == "bodies":
        bodies(int(sys.argv[2]), int(sys.argv[3]))
