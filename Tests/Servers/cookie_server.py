#!/usr/bin/env python3
"""A server for the cookie tests. Prints its port (and a 0) on the first line. Standard library
only; one thread per connection, keep-alive.

  GET /set?c=COOKIE[&c=...][&to=URL]   answers with one Set-Cookie field per c (sent as given),
                                       as a 302 to URL when `to` is given, else 200 "set"
  GET /echo[/...]                      200 with the request's Cookie field as the body (empty: none)
"""
import socket
import sys
import threading
import urllib.parse


def handle(conn):
    buffer = b""
    try:
        while True:
            while b"\r\n\r\n" not in buffer:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                buffer += chunk
            head, _, buffer = buffer.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            _, target, _ = lines[0].split(" ", 2)
            cookie = ""
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "cookie":
                    cookie = value.strip()
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
                status, body = "200 OK", cookie.encode("latin-1")
            else:
                status, body = "404 Not Found", b""
            response = ["HTTP/1.1 " + status, "Content-Length: %d" % len(body)] + extra
            conn.sendall(("\r\n".join(response) + "\r\n\r\n").encode("latin-1") + body)
    except OSError:
        pass
    finally:
        conn.close()


def main():
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], 0, flush=True)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
