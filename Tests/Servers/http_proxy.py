#!/usr/bin/env python3
"""An HTTP proxy for the proxy tests. Prints its port (and a 0) on the first line. Standard
library only; one thread per connection, keep-alive towards the client.

  python3 http_proxy.py [USER:PASSWORD]   with credentials, every request without the matching
                                          Proxy-Authorization gets a 407

  CONNECT host:port      a tunnel to host:port (2xx, then bytes both ways until either side
                         closes); special hosts: refused.test (403), garbage.test (an answer that
                         is not HTTP), close.test (closes without answering), extra.test (200 and
                         bytes after it)
  GET http://host:port/path   forwarded to the origin (Proxy-* fields removed), its answer relayed
  GET /log                    (a request to the proxy itself) the JSON list of every request line
                              seen, each with the Proxy-Authorization it carried; ?clear=1 empties it
"""
import base64
import socket
import sys
import threading
import urllib.parse

from keepalive_server import Record, pipe, send, serve
import parent_guard

CREDENTIALS = sys.argv[1] if len(sys.argv) > 1 else None
RECORD = Record()


def authorized(headers):
    if CREDENTIALS is None:
        return True
    expected = "Basic " + base64.b64encode(CREDENTIALS.encode()).decode()
    return headers.get("proxy-authorization") == expected


def tunnel(conn, target):
    host, _, port = target.rpartition(":")
    host = host.strip("[]")
    if host == "refused.test":
        send(conn, "403 Forbidden", b"no tunnels there")
        return True
    if host == "garbage.test":
        conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n\r\n")
        return False
    if host == "close.test":
        return False
    if host == "extra.test":
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\nunasked")
        return False
    try:
        upstream = socket.create_connection((host, int(port)), timeout=5)
        upstream.settimeout(None)
    except (OSError, ValueError):
        send(conn, "502 Bad Gateway", b"cannot reach " + target.encode())
        return True
    conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    other = threading.Thread(target=pipe, args=(upstream, conn), daemon=True)
    other.start()
    pipe(conn, upstream)
    other.join()
    return False


def forward(conn, method, target, headers, body):
    url = urllib.parse.urlsplit(target)
    try:
        upstream = socket.create_connection((url.hostname, url.port or 80), timeout=10)
    except OSError:
        send(conn, "502 Bad Gateway", b"cannot reach " + target.encode())
        return True
    path = (url.path or "/") + ("?" + url.query if url.query else "")
    lines = ["%s %s HTTP/1.1" % (method, path)]
    for name, value in headers.items():
        if name.startswith("proxy-") or name == "connection":
            continue
        lines.append("%s: %s" % (name, value))
    lines.append("Connection: close")
    upstream.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
    answer = b""
    while True:
        chunk = upstream.recv(65536)
        if not chunk:
            break
        answer += chunk
    upstream.close()
    head, _, rest = answer.partition(b"\r\n\r\n")
    kept = [l for l in head.split(b"\r\n") if not l.lower().startswith(b"connection:")]
    conn.sendall(b"\r\n".join(kept) + b"\r\n\r\n" + rest)
    return True


def answer(conn, method, target, headers, body):
    if RECORD.answer_log(conn, target):
        return True
    RECORD.add({"line": "%s %s" % (method, target), "auth": headers.get("proxy-authorization"), "host": headers.get("host")})
    if not authorized(headers):
        send(conn, "407 Proxy Authentication Required", b"credentials, please",
             ['Proxy-Authenticate: Basic realm="test"'])
        return True
    if method == "CONNECT":
        return tunnel(conn, target)
    if target.startswith("http://"):
        return forward(conn, method, target, headers, body)
    send(conn, "400 Bad Request", b"not a proxy request")
    return True


if __name__ == "__main__":
    parent_guard.start()
    serve(answer)
