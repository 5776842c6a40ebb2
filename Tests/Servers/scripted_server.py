#!/usr/bin/env python3
"""A raw-socket HTTP/1.1 server whose misbehaviour is chosen by the request path.

Courier's integration tests start one per test run (`python3 scripted_server.py`); it binds
127.0.0.1 on an ephemeral port and prints that port as its first line. Each path below is one
scripted behaviour: well-formed answers for the baseline, and every way a server can go wrong
(truncation, resets, silence, garbage, smuggling-shaped framing, oversized heads, stale keep-alive,
redirect loops). Standard library only.
"""
import gzip
import json
import os
import socket
import struct
import sys
import threading
import time
import urllib.parse
import zlib
import parent_guard

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "codings")

STATS_LOCK = threading.Lock()
ACTIVE = {}      # group -> requests in progress
PEAK = {}        # group -> highest concurrent requests seen
SEEN = {}        # group -> total requests
CONNECTIONS = {}  # group -> connections accepted that carried a request of the group
RESOURCES = {}    # name -> how /res/<name> answers (set with POST /res-config?name=<name>)
GATES = {}        # name -> threading.Event a "hold" resource waits on (opened by POST /res-release)


def read_request(conn, buffer):
    """Returns (method, target, headers(dict, lower-case), body, rest) or None at EOF."""
    while b"\r\n\r\n" not in buffer:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        buffer += chunk
    head, _, rest = buffer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = lines[0].split(" ", 2)
    # The request line's version, under a key no field name can have.
    headers = {":version": version}
    raw_headers = []
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
        raw_headers.append([name.strip(), value.strip()])
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        rest += chunk
    body, rest = rest[:length], rest[length:]
    return method, target, headers, raw_headers, body, rest


def response(status, body=b"", headers=(), reason="OK"):
    out = [f"HTTP/1.1 {status} {reason}"]
    names = {h[0].lower() for h in headers}
    for name, value in headers:
        out.append(f"{name}: {value}")
    if "content-length" not in names and "transfer-encoding" not in names:
        out.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body


def reset(conn):
    """Close with RST instead of FIN (SO_LINGER with a zero timeout)."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


def handle(conn, port):
    buffer = b""
    counted_groups = set()
    drop_next = False
    try:
        while True:
            request = read_request(conn, buffer)
            if request is None:
                return
            method, target, headers, raw_headers, body, buffer = request
            if drop_next:
                # The stale keep-alive race made certain: the request arrived on a connection the
                # server had decided to drop; it is closed unanswered.
                return
            url = urllib.parse.urlsplit(target)
            headers[":target"] = target
            query = dict(urllib.parse.parse_qsl(url.query))
            path = url.path
            group = query.get("group", "")
            if path.startswith("/res/"):
                group = "res-" + path[len("/res/"):]
            with STATS_LOCK:
                ACTIVE[group] = ACTIVE.get(group, 0) + 1
                PEAK[group] = max(PEAK.get(group, 0), ACTIVE[group])
                SEEN[group] = SEEN.get(group, 0) + 1
                if group not in counted_groups:
                    counted_groups.add(group)
                    CONNECTIONS[group] = CONNECTIONS.get(group, 0) + 1
            try:
                keep = serve(conn, port, method, path, query, headers, raw_headers, body)
                if path == "/drop-next":
                    drop_next = True
            finally:
                with STATS_LOCK:
                    ACTIVE[group] -= 1
            if not keep:
                return
    except (ConnectionError, OSError):
        return
    finally:
        try:
            conn.close()
        except OSError:
            pass


def serve_resource(conn, method, name, headers):
    """A cacheable resource whose answer a test chose (POST /res-config): its status, header
    fields, body, Date offset, and validation. If-None-Match matching its ETag, or
    If-Modified-Since equal to its Last-Modified, gets a 304 with the validators and any
    "headers_304". "echo" names a request header whose value is appended to the body (Vary tests);
    "fail" makes it reset the connection or close without answering (the origin is down);
    "delay_ms" holds the answer back; "hold" holds it until POST /res-release?name=<name> (at
    most 60 s), so a test decides when it arrives instead of racing a delay. "ranges" answers a
    single byte Range with a 206 (multiple ranges and other units get the whole 200); "cut" sends
    the whole body's Content-Length and only that many bytes before closing."""
    config = RESOURCES.get(name)
    if config is None:
        conn.sendall(response(404, b"no such resource", reason="Not Found"))
        return True
    if "delay_ms" in config:
        time.sleep(config["delay_ms"] / 1000)
    if config.get("hold"):
        with STATS_LOCK:
            gate = GATES.setdefault(name, threading.Event())
        gate.wait(60)
    fail = config.get("fail")
    if fail == "reset":
        reset(conn)
        return False
    if fail == "close":
        return False
    fields = [list(h) for h in config.get("headers", [])]
    if "date_offset" in config:
        stamp = time.time() + config["date_offset"]
        fields.append(["Date", time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(stamp))])
    body = config.get("body", "").encode()
    echo = config.get("echo")
    if echo:
        body += b" " + headers.get(echo.lower(), "-").encode()
    etag = next((v for n, v in fields if n.lower() == "etag"), None)
    modified = next((v for n, v in fields if n.lower() == "last-modified"), None)
    inm = headers.get("if-none-match")
    ims = headers.get("if-modified-since")
    if config.get("status", 200) == 200 and ((inm is not None and etag is not None and inm == etag)
                                              or (inm is None and ims is not None and modified is not None and ims == modified)):
        keep = {"etag", "cache-control", "date", "expires", "vary", "last-modified"}
        update = [f for f in fields if f[0].lower() in keep] + [list(h) for h in config.get("headers_304", [])]
        out = ["HTTP/1.1 304 Not Modified"] + [f"{n}: {v}" for n, v in update]
        conn.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))
        return True
    status = config.get("status", 200)
    if method == "HEAD":
        fields.append(["Content-Length", str(len(body))])
        out = [f"HTTP/1.1 {status} Resource"] + [f"{n}: {v}" for n, v in fields]
        conn.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))
        return True
    if config.get("ranges") and status == 200 and "range" in headers:
        part = byte_range(headers["range"], len(body))
        if part == "unsatisfiable":
            conn.sendall(response(416, b"", fields + [["Content-Range", f"bytes */{len(body)}"]], reason="Range Not Satisfiable"))
            return True
        if part is not None:
            first, last = part
            fields.append(["Content-Range", f"bytes {first}-{last}/{len(body)}"])
            conn.sendall(response(206, body[first:last + 1], fields, reason="Partial Content"))
            return True
    if "cut" in config:
        fields.append(["Content-Length", str(len(body))])
        conn.sendall(response(status, b"", fields, reason="Resource") + body[:config["cut"]])
        return False
    conn.sendall(response(status, body, fields, reason="Resource"))
    return True


def byte_range(value, length):
    """(first, last) of a single "bytes=" range, "unsatisfiable", or None (not one: serve all)."""
    unit, _, spec = value.strip().partition("=")
    if unit.strip().lower() != "bytes" or "," in spec or "-" not in spec:
        return None
    first, _, last = (p.strip() for p in spec.partition("-"))
    if not first:
        if not last.isdigit() or int(last) == 0:
            return None
        return (max(0, length - int(last)), length - 1) if length else "unsatisfiable"
    if not first.isdigit() or (last and not last.isdigit()):
        return None
    if int(first) >= length:
        return "unsatisfiable"
    return int(first), min(int(last) if last else length - 1, length - 1)


def serve(conn, port, method, path, query, headers, raw_headers, body):
    """Answers one request; returns whether to keep the connection for another."""
    if path.startswith("/res/"):
        return serve_resource(conn, method, path[len("/res/"):], headers)
    if path == "/res-config":
        name = query["name"]
        with STATS_LOCK:
            RESOURCES[name] = json.loads(body.decode() or "{}")
            SEEN["res-" + name] = 0
            GATES[name] = threading.Event()
        conn.sendall(response(200, b"configured"))
        return True
    if path == "/res-release":
        with STATS_LOCK:
            gate = GATES.setdefault(query["name"], threading.Event())
        gate.set()
        conn.sendall(response(200, b"released"))
        return True
    if path == "/echo":
        payload = json.dumps({"method": method, "version": headers[":version"], "target": headers[":target"], "peer": list(conn.getpeername()[:2]), "path": path, "query": query, "headers": raw_headers,
                              "body": body.decode("latin-1")}).encode()
        conn.sendall(response(200, payload, [("Content-Type", "application/json")]))
        return True
    if path == "/status":
        code = int(query.get("code", "200"))
        conn.sendall(response(code, query.get("body", "").encode(), reason="Status"))
        return True
    if path == "/bytes":
        # Raw bytes (hex) under a given Content-Type: bodies that are not valid text.
        conn.sendall(response(200, bytes.fromhex(query.get("hex", "")), [("Content-Type", query.get("type", "text/plain"))]))
        return True
    if path == "/slow":
        time.sleep(int(query.get("ms", "100")) / 1000)
        conn.sendall(response(200, b"slow"))
        return True
    if path == "/stats":
        group = query.get("of", "")
        with STATS_LOCK:
            payload = json.dumps({"peak": PEAK.get(group, 0), "seen": SEEN.get(group, 0),
                                  "connections": CONNECTIONS.get(group, 0)}).encode()
        conn.sendall(response(200, payload, [("Content-Type", "application/json")]))
        return True
    if path == "/truncated":
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 50)
        return False
    if path == "/truncated-chunked":
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nonly eight")
        return False
    if path == "/reset-mid-body":
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 1000)
        time.sleep(0.05)
        reset(conn)
        return False
    if path == "/reset-with-data":
        # Data and the RST back to back: the client sees both in one wakeup (libuv then reports a
        # hang-up as EOF, and only SO_ERROR still says "reset").
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 1000)
        reset(conn)
        return False
    if path == "/reset-before-response":
        reset(conn)
        return False
    if path == "/empty":
        return False
    if path == "/silence":
        time.sleep(float(query.get("s", "5")))
        return False
    if path == "/silence-mid-body":
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 10)
        time.sleep(float(query.get("s", "5")))
        return False
    if path == "/trickle":
        # Well-formed but slow: one byte every 50 ms for 1 s. Only the total deadline should fire.
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n")
        for _ in range(20):
            time.sleep(0.05)
            conn.sendall(b"x")
        return True
    if path == "/garbage-status":
        conn.sendall(b"GARBAGE NONSENSE\r\n\r\n")
        return False
    if path == "/bad-chunk":
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")
        return False
    if path == "/huge-headers":
        # Beyond curl's (and Courier's default) 300 KiB bound.
        conn.sendall(b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 400_000 + b"\r\nContent-Length: 0\r\n\r\n")
        return False
    if path == "/many-headers":
        fields = b"".join(b"X-H%d: v\r\n" % i for i in range(12_000))
        conn.sendall(b"HTTP/1.1 200 OK\r\n" + fields + b"Content-Length: 0\r\n\r\n")
        return False
    if path == "/big-head":
        # A head of about ?kib= KiB in fields of 1 KiB (large but legitimate: curl accepts 300 KiB).
        kib = int(query.get("kib", "128"))
        fields = b"".join(b"X-Fill-%04d: %s\r\n" % (i, b"f" * 1000) for i in range(kib))
        conn.sendall(b"HTTP/1.1 200 OK\r\n" + fields + b"Content-Length: 2\r\n\r\nok")
        return True
    if path == "/cl-te":
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        return False
    if path == "/two-lengths":
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello!!")
        return False
    if path == "/upgrade":
        conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
        return False
    if path == "/interim":
        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n")
        conn.sendall(response(200, b"final"))
        return True
    if path == "/unsolicited":
        conn.sendall(response(200, b"ok") + b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        return True
    if path == "/drop-next":
        conn.sendall(response(200, b"first"))
        return True
    if path == "/close-after":
        # Answers with keep-alive, then closes without saying so: the next request on this
        # connection meets a dead socket (the stale keep-alive race, made certain).
        conn.sendall(response(200, b"first"))
        time.sleep(0.05)
        return False
    if path == "/close-delimited":
        conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nread until the end")
        return False
    if path == "/chunk-ext":
        # Chunk extensions in every valid form: whitespace around ";" and "=" (BWS), quoted
        # values holding ";" and escaped quotes (RFC 9112 section 7.1.1).
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"6 ; ws = 1\r\nchunk \r\n7;q=\"a;b \\\"c\\\"\"\r\nencoded\r\n0 ; last\r\nX-Check: ok\r\n\r\n")
        return True
    if path == "/chunked":
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Check\r\n\r\n"
                     b"6\r\nchunk \r\n7\r\nencoded\r\n0\r\nX-Check: yes\r\n\r\n")
        return True
    if path == "/gzip":
        text = ("gzip line\n" * 1000).encode()
        conn.sendall(response(200, gzip.compress(text), [("Content-Encoding", "gzip")]))
        return True
    if path == "/deflate-raw":
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
        data = compressor.compress(b"raw deflate body") + compressor.flush()
        conn.sendall(response(200, data, [("Content-Encoding", "deflate")]))
        return True
    if path == "/bomb":
        conn.sendall(response(200, gzip_bomb(), [("Content-Encoding", "gzip")]))
        return True
    if path in ("/br", "/zstd", "/br-bomb", "/zstd-bomb", "/corrupt-br", "/zstd-wide"):
        # br and zstd bodies from the reference encoders (Tests/Fixtures/codings).
        name = {"/br": "hello.br", "/zstd": "hello.zst", "/br-bomb": "bomb.br", "/zstd-bomb": "bomb.zst",
                "/corrupt-br": "hello.br", "/zstd-wide": "wide-window.zst"}[path]
        with open(os.path.join(FIXTURES, name), "rb") as fixture:
            data = bytearray(fixture.read())
        if path == "/corrupt-br":
            data[len(data) // 2] ^= 0xFF
        coding = "br" if "br" in path else "zstd"
        conn.sendall(response(200, bytes(data), [("Content-Encoding", coding)]))
        return True
    if path == "/unknown-coding":
        conn.sendall(response(200, b"\x1f\x9d\x90compressed", [("Content-Encoding", "compress")]))
        return True
    if path == "/corrupt-gzip":
        data = bytearray(gzip.compress(b"hello world" * 100))
        data[15] ^= 0xFF
        data[16] ^= 0xFF
        conn.sendall(response(200, bytes(data), [("Content-Encoding", "gzip")]))
        return True
    if path == "/redirect":
        code = int(query.get("code", "302"))
        conn.sendall(response(code, b"", [("Location", query.get("to", "/echo"))], reason="Redirect"))
        return True
    if path == "/disposition":
        # -J and -R: a file name from Content-Disposition, a fixed Last-Modified.
        conn.sendall(response(200, b"named body", [("Content-Disposition", 'attachment; filename="%s"' % query.get("name", "named.txt")),
                                                   ("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")]))
        return True
    if path == "/redirect-loop":
        conn.sendall(response(302, b"", [("Location", "/redirect-loop")], reason="Found"))
        return True
    if path == "/no-content-with-length":
        conn.sendall(b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n")
        return True
    if path == "/latin1":
        conn.sendall(response(200, "café".encode("latin-1"), [("Content-Type", "text/plain; charset=ISO-8859-1")]))
        return True
    if path == "/bad-utf8":
        conn.sendall(response(200, b"\xff\xfe bad", [("Content-Type", "text/plain; charset=utf-8")]))
        return True
    conn.sendall(response(404, b"no such scenario", reason="Not Found"))
    return True


def hang(address, port, keep):
    """Listens on address:port (0: any) without ever accepting, its backlog filled by four
    connects: a further connect hangs. The sockets go into `keep`; returns the port."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind((address, port))
    listener.listen(0)
    keep.append(listener)
    port = listener.getsockname()[1]
    for _ in range(4):
        filler = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        filler.setblocking(False)
        try:
            filler.connect((address, port))
        except BlockingIOError:
            pass
        keep.append(filler)
    return port


_BOMB = []
_BOMB_LOCK = threading.Lock()


def gzip_bomb():
    """64 MiB of zeros, gzip-compressed, made once, from a thread `main` starts: compressing them
    takes this server a second or more on a loaded machine, which the time limit of the client
    asking for it must not pay for."""
    with _BOMB_LOCK:
        if not _BOMB:
            _BOMB.append(gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9))
        return _BOMB[0]


def main():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1024)
    port = listener.getsockname()[1]
    # A listener that never accepts, with its tiny backlog already full: connecting to it hangs in
    # SYN-SENT, which is how a connect timeout is tested without a real unreachable network.
    keep = []
    blackhole_port = hang("127.0.0.1", 0, keep)
    # The same hang on 127.0.0.2 at the server's own port: a name given both addresses
    # (127.0.0.2 first) is reached only if the second attempt starts while the first hangs.
    try:
        hang("127.0.0.2", port, keep)
    except OSError:
        pass
    time.sleep(0.2)
    threading.Thread(target=gzip_bomb, daemon=True).start()
    print(port, blackhole_port, flush=True)
    while True:
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=handle, args=(conn, port), daemon=True).start()


if __name__ == "__main__":
    parent_guard.start()
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
