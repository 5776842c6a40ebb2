#!/usr/bin/env python3
"""Scenario C's server (flaky_run.py): cacheable items and keyed POSTs, counted. Prints its port
on the first line. Standard library only; one thread per connection, keep-alive.

  GET /item/N[?max_age=S]
                     item N's bytes (`item_body`, 1 to 16 KiB), fresh for MAX_AGE (or S) seconds, with an
                     ETag; 304 to a matching If-None-Match. Four items in five (`allows_stale`)
                     may be used STALE_IF_ERROR seconds past that when the origin cannot be
                     reached (RFC 5861); every fifth must not
  GET /counts        {"items": full answers, "not_modified": 304s} as JSON
  POST /submit, GET /keys
                     as Tests/Servers/idempotency_server.py: each Idempotency-Key counted, a
                     repeated key answered as a replay

The client (flaky.py) imports `item_body` to check every body it gets.
"""
import hashlib
import json
import os
import sys
import threading
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Servers"))

MAX_AGE, STALE_IF_ERROR = 10, 600
COUNTS = {"items": 0, "not_modified": 0}
LOCK = threading.Lock()


def item_body(n):
    """Item `n`'s bytes: a size from 1 to 16 KiB, filled from a hash chain seeded by `n`."""
    size = 1024 + (n * 7919) % (15 * 1024)
    block, out = hashlib.sha256(b"item %d" % n).digest(), bytearray()
    while len(out) < size:
        out += block
        block = hashlib.sha256(block).digest()
    return bytes(out[:size])


def allows_stale(n):
    """Whether item `n` carries stale-if-error (the others must never be served stale)."""
    return n % 5 != 0


def answer(conn, method, target, headers, body):
    from keepalive_server import send
    import idempotency_server
    url = urllib.parse.urlsplit(target)
    path = url.path
    if method == "GET" and path.startswith("/item/"):
        n = int(path[len("/item/"):])
        tag = '"item-%d"' % n
        max_age = int(urllib.parse.parse_qs(url.query).get("max_age", [MAX_AGE])[0])
        control = "max-age=%d" % max_age + (", stale-if-error=%d" % STALE_IF_ERROR if allows_stale(n) else "")
        fields = ["Cache-Control: " + control, "ETag: " + tag]
        matched = headers.get("if-none-match") == tag
        with LOCK:
            COUNTS["not_modified" if matched else "items"] += 1
        if matched:
            send(conn, "304 Not Modified", b"", fields)
        else:
            send(conn, "200 OK", item_body(n), fields + ["Content-Type: application/octet-stream"])
    elif path == "/counts":
        with LOCK:
            payload = json.dumps(COUNTS).encode()
        send(conn, "200 OK", payload, ["Content-Type: application/json", "Cache-Control: no-store"])
    else:
        return idempotency_server.answer(conn, method, target, headers, body)
    return True


if __name__ == "__main__":
    from keepalive_server import serve
    import parent_guard
    parent_guard.start()
    serve(answer, 0, "127.0.0.1")
