#!/usr/bin/env python3
"""A SOCKS5 proxy for the proxy tests (RFC 1928, with RFC 1929's user/password login). Prints its
port (and a 0) on the first line. Standard library only; one thread per connection.

  python3 socks_proxy.py [USER:PASSWORD]   with credentials, only the user/password method is
                                           accepted, and only with them

  CONNECT to a name or an address: relayed to it (names resolved here); special names:
    refused.test   reply 5 (connection refused)
    garbage.test   an answer that is not SOCKS5 (an HTTP status line)
    close.test     closes before replying
    extra.test     a success reply with bytes after it
    only.proxy     the test server at 127.0.0.1 whose port the request names: a name only the
                   proxy's side knows (a lookup on the client's side fails)
  An HTTP request instead of a SOCKS5 greeting (GET /log): the JSON list of every CONNECT seen,
  each {"type": "name"|"ipv4"|"ipv6", "host": ..., "port": ..., "user": ...}; ?clear=1 empties it.
"""
import ipaddress
import socket
import sys
import threading

from keepalive_server import Record, pipe
import parent_guard

CREDENTIALS = sys.argv[1].split(":", 1) if len(sys.argv) > 1 else None
RECORD = Record()


def read_exactly(conn, count):
    data = b""
    while len(data) < count:
        chunk = conn.recv(count - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def reply(conn, code):
    conn.sendall(bytes([5, code, 0, 1, 0, 0, 0, 0, 0, 0]))


def log_listing(conn, first):
    request = first
    while b"\r\n\r\n" not in request:
        chunk = conn.recv(4096)
        if not chunk:
            return
        request += chunk
    body = RECORD.listing(request.split(b" ", 2)[1].decode())
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n"
                 % len(body) + body)


def login(conn, methods):
    """The method choice and, with credentials, the login; the user name, or False to stop."""
    if CREDENTIALS is None:
        conn.sendall(b"\x05\x00" if 0 in methods else b"\x05\xff")
        return None if 0 in methods else False
    if 2 not in methods:
        conn.sendall(b"\x05\xff")
        return False
    conn.sendall(b"\x05\x02")
    version, length = read_exactly(conn, 2)
    user = read_exactly(conn, length).decode()
    password = read_exactly(conn, read_exactly(conn, 1)[0]).decode()
    if version != 1 or [user, password] != CREDENTIALS:
        conn.sendall(b"\x01\x01")
        return False
    conn.sendall(b"\x01\x00")
    return user


def connection(conn):
    try:
        first = conn.recv(2)
        if first[:1] != b"\x05":
            log_listing(conn, first)
            return
        methods = read_exactly(conn, first[1])
        user = login(conn, methods)
        if user is False:
            return
        version, command, _, kind = read_exactly(conn, 4)
        if kind == 1:
            host, kind_name = str(ipaddress.IPv4Address(read_exactly(conn, 4))), "ipv4"
        elif kind == 4:
            host, kind_name = str(ipaddress.IPv6Address(read_exactly(conn, 16))), "ipv6"
        else:
            host, kind_name = read_exactly(conn, read_exactly(conn, 1)[0]).decode(), "name"
        port = int.from_bytes(read_exactly(conn, 2), "big")
        RECORD.add({"type": kind_name, "host": host, "port": port, "user": user})
        if version != 5 or command != 1:
            reply(conn, 7)
            return
        if host == "refused.test":
            reply(conn, 5)
            return
        if host == "garbage.test":
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            return
        if host == "close.test":
            return
        if host == "extra.test":
            conn.sendall(bytes([5, 0, 0, 1, 127, 0, 0, 1, 0, 80]) + b"unasked")
            return
        try:
            upstream = socket.create_connection(("127.0.0.1" if host == "only.proxy" else host, port), timeout=5)
            upstream.settimeout(None)
        except OSError:
            reply(conn, 4)
            return
        reply(conn, 0)
        other = threading.Thread(target=pipe, args=(upstream, conn), daemon=True)
        other.start()
        pipe(conn, upstream)
        other.join()
    except (EOFError, OSError):
        pass
    finally:
        conn.close()


def main():
    parent_guard.start()
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(256)
    print(listener.getsockname()[1], 0, flush=True)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=connection, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
