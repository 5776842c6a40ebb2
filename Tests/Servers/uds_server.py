#!/usr/bin/env python3
"""A Docker-Engine-shaped server on a Unix domain socket, for the Unix socket tests: the API's
own habits (GET /_ping answers "OK" with an Api-Version field, GET /v1.43/containers/json a JSON
list). Prints "ready" once it listens. Standard library only; one
thread per connection, keep-alive.

  GET /_ping                  "OK", Api-Version: 1.43
  GET /v1.43/containers/json  [{"Id": "c0ffee", "Names": ["/courier"], "State": "running"}]
  GET /host                   the request's Host field
  POST /echo                  the body back

  uds_server.py PATH          PATH, or @NAME for Linux's abstract namespace
"""
import json
import sys

from keepalive_server import send, serve_unix
import parent_guard

CONTAINERS = [{"Id": "c0ffee", "Names": ["/courier"], "State": "running"}]


def answer(conn, method, target, headers, body):
    target = target.split("?", 1)[0]
    if target == "/_ping":
        send(conn, "200 OK", b"OK", ["Api-Version: 1.43", "Content-Type: text/plain"])
    elif target == "/v1.43/containers/json":
        send(conn, "200 OK", json.dumps(CONTAINERS).encode(), ["Content-Type: application/json"])
    elif target == "/host":
        send(conn, "200 OK", headers.get("host", "").encode())
    elif method == "POST" and target == "/echo":
        send(conn, "200 OK", body)
    else:
        send(conn, "404 Not Found", b"")
    return True


if __name__ == "__main__":
    parent_guard.start()
    serve_unix(answer, sys.argv[1])
