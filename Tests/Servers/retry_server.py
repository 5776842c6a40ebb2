#!/usr/bin/env python3
"""A server that fails on purpose a given number of times, for the retry tests.

Prints its port (and a 0) on the first line. Standard library only; one thread per connection.

  ANY /flaky/KEY?fail=N&mode=M[&retry_after=V][&close=1]
        The first N requests for KEY fail, the next ones answer 200 with the body "ok N+1"
        (the attempt that succeeded). M is a status (503, 429, 408, 502, 500...) answered with
        the body "failed" (and Retry-After: V when given), or "reset" (the connection is reset
        before any response byte), or "close" (closed without a byte), or "cut" (a 200 head
        announcing 100 bytes, then a reset after 10). Keep-alive unless close=1.
  GET /log/KEY  JSON: {"count": n, "times": [monotonic seconds of each request], "methods":
        [...], "keys": [Idempotency-Key of each, or null]} — what the retry schedule really was.
  ANY /ok       200 "ok".
"""
import json
import socket
import struct
import threading
import time
import urllib.parse

from keepalive_server import send, serve
import parent_guard

LOCK = threading.Lock()
LOG = {}  # key -> list of (time, method, idempotency key)



def reset(conn):
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


def answer(conn, method, target, headers, body):
    url = urllib.parse.urlsplit(target)
    query = dict(urllib.parse.parse_qsl(url.query))
    if url.path.startswith("/log/"):
        with LOCK:
            entries = list(LOG.get(url.path[5:], []))
        body = json.dumps({"count": len(entries), "times": [e[0] for e in entries],
                           "methods": [e[1] for e in entries], "keys": [e[2] for e in entries]}).encode()
        send(conn, 200, body, [("Content-Type", "application/json")])
        return True
    if url.path == "/ok":
        send(conn, 200, b"ok")
        return True
    if not url.path.startswith("/flaky/"):
        send(conn, 404, b"no such path")
        return True
    key = url.path[7:]
    with LOCK:
        LOG.setdefault(key, []).append((time.monotonic(), method, headers.get("idempotency-key")))
        attempt = len(LOG[key])
    if attempt > int(query.get("fail", "0")):
        send(conn, 200, ("ok %d" % attempt).encode())
        return True
    mode = query.get("mode", "503")
    if mode == "reset":
        reset(conn)
        return False
    if mode == "close":
        return False
    if mode == "cut":
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
        time.sleep(0.05)
        reset(conn)
        return False
    extra = [("Retry-After", query["retry_after"])] if "retry_after" in query else []
    if query.get("close"):
        extra.append(("Connection", "close"))
    send(conn, int(mode), b"failed", extra)
    return not query.get("close")


if __name__ == "__main__":
    parent_guard.start()
    serve(answer)
