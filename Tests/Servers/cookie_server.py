#!/usr/bin/env python3
"""A server for the cookie tests. Prints its port (and a 0) on the first line. Standard library
only; one thread per connection, keep-alive.

  GET /set?c=COOKIE[&c=...][&to=URL]   answers with one Set-Cookie field per c (sent as given),
                                       as a 302 to URL when `to` is given, else 200 "set"
  GET /echo[/...]                      200 with the request's Cookie field as the body (empty: none)
"""
import urllib.parse

from keepalive_server import send, serve
import parent_guard


def answer(conn, method, target, headers, body):
    url = urllib.parse.urlsplit(target)
    query = urllib.parse.parse_qs(url.query)
    extra = []
    if url.path == "/set":
        extra = ["Set-Cookie: %s" % c for c in query.get("c", [])]
        if "to" in query:
            status, body = "302 Found", b""
            extra.append("Location: %s" % query["to"][0])
        else:
            status, body = "200 OK", b"set"
    elif url.path.startswith("/echo"):
        status, body = "200 OK", headers.get("cookie", "").encode("latin-1")
    else:
        status, body = "404 Not Found", b""
    send(conn, status, body, extra)
    return True


if __name__ == "__main__":
    parent_guard.start()
    serve(answer)
