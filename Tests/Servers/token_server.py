#!/usr/bin/env python3
"""A server for the authentication tests: bearer tokens that expire. Prints its port (and a 0)
on the first line. Standard library only; one thread per connection, keep-alive.

  GET /token            issues a new token ("t1", "t2", ...), which becomes the only valid one
  GET|POST /protected   200 "ok" with the right `Authorization: Bearer <token>`, else 401 with a
                        WWW-Authenticate: Bearer challenge
  GET /expire           no token is valid until the next /token
  GET /stats            {"issued": N, "refused": N, "served": N}
"""
import json
import threading

from keepalive_server import send, serve
import parent_guard

STATE = {"token": None, "issued": 0, "refused": 0, "served": 0}
LOCK = threading.Lock()


def answer(conn, method, target, headers, body):
    extra = []
    with LOCK:
        if target.startswith("/token"):
            STATE["issued"] += 1
            STATE["token"] = "t%d" % STATE["issued"]
            status, payload = "200 OK", STATE["token"].encode()
        elif target.startswith("/protected"):
            if STATE["token"] is not None and headers.get("authorization") == "Bearer " + STATE["token"]:
                STATE["served"] += 1
                status, payload = "200 OK", b"ok %d" % len(body)
            else:
                STATE["refused"] += 1
                status, payload = "401 Unauthorized", b"expired"
                extra.append('WWW-Authenticate: Bearer realm="test", error="invalid_token"')
        elif target.startswith("/expire"):
            STATE["token"] = None
            status, payload = "200 OK", b"expired"
        elif target.startswith("/stats"):
            status, payload = "200 OK", json.dumps({k: STATE[k] for k in ("issued", "refused", "served")}).encode()
        else:
            status, payload = "404 Not Found", b""
    send(conn, status, payload, extra)
    return True


if __name__ == "__main__":
    parent_guard.start()
    serve(answer)
