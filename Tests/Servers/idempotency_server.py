#!/usr/bin/env python3
"""A server for the outbox tests: records every request by its Idempotency-Key, as a server that
honours the key would, and answers a repeated key with the first answer. Prints its port (and a
0) on the first line. Standard library only; one thread per connection, keep-alive.

  POST|PUT|DELETE /submit[?delay=MS]  201 "created KEY" the first time a key is seen (after
                                      waiting MS milliseconds: a window for kill -9), 200
                                      "replayed KEY" after; 400 without a key
  GET /keys                           {"KEY": {"count": N, "body": "..."}, ...}
  GET /reset                          forgets every key

  idempotency_server.py [PORT [ADDRESS]]   (default: an ephemeral port on 127.0.0.1)
"""
import json
import sys
import threading
import time
import urllib.parse

from keepalive_server import send, serve
import parent_guard

KEYS = {}
LOCK = threading.Lock()


def answer(conn, method, target, headers, body):
    url = urllib.parse.urlsplit(target)
    query = urllib.parse.parse_qs(url.query)
    if url.path == "/submit":
        key = headers.get("idempotency-key")
        if not key:
            send(conn, "400 Bad Request", b"no Idempotency-Key")
            return True
        with LOCK:
            seen = KEYS.setdefault(key, {"count": 0, "body": body.decode("latin-1"), "method": method})
            seen["count"] += 1
            first = seen["count"] == 1
        if first and "delay" in query:
            time.sleep(int(query["delay"][0]) / 1000.0)
        send(conn, "201 Created" if first else "200 OK", ("created " if first else "replayed ").encode() + key.encode())
    elif url.path == "/keys":
        with LOCK:
            payload = json.dumps(KEYS).encode()
        send(conn, "200 OK", payload, ["Content-Type: application/json"])
    elif url.path == "/reset":
        with LOCK:
            KEYS.clear()
        send(conn, "200 OK", b"reset")
    else:
        send(conn, "404 Not Found", b"")
    return True


if __name__ == "__main__":
    parent_guard.start()
    serve(answer, int(sys.argv[1]) if len(sys.argv) > 1 else 0, sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1")
