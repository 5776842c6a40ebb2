"""What the small test servers share (retry_server.py, cookie_server.py, the proxies): reading a
request from a keep-alive connection, a listener that prints its port and serves each connection
on a thread of its own, a record of what a server saw listed at GET /log, and a byte relay for
tunnels. Standard library only."""
import json
import socket
import sys
import threading


class Record:
    """What a test server saw, one JSON-able entry per event, listed by `answer_log` for a test
    to read (GET /log; ?clear=1 empties it first)."""

    def __init__(self):
        self.entries = []
        self.lock = threading.Lock()

    def add(self, entry):
        with self.lock:
            self.entries.append(entry)

    def listing(self, target):
        """The record as JSON bytes, emptied first when `target` asks (?clear=1)."""
        with self.lock:
            if "clear=1" in target:
                self.entries.clear()
            return json.dumps(self.entries).encode()

    def answer_log(self, conn, target):
        """Answers GET /log on a keep-alive connection; False when `target` is something else."""
        if not target.startswith("/log"):
            return False
        send(conn, "200 OK", self.listing(target), ["Content-Type: application/json"])
        return True


def pipe(source, sink):
    """Copies `source` to `sink` until either side ends, then shuts both down (a tunnel's half)."""
    try:
        while True:
            chunk = source.recv(65536)
            if not chunk:
                break
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def read_request(conn, buffer):
    """(method, target, headers (lower-case names), body, rest) of the next request, or None at
    end of stream. `buffer` holds what was read beyond the previous request."""
    while b"\r\n\r\n" not in buffer:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        buffer += chunk
    head, _, rest = buffer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        rest += chunk
    return method, target, headers, rest[:length], rest[length:]


def send(conn, status, body=b"", extra=()):
    """Writes a response with a Content-Length: `status` as "200 OK" (or a bare number), `extra`
    fields as "Name: value" strings or (name, value) pairs."""
    line = status if isinstance(status, str) else "%d X" % status
    fields = [f if isinstance(f, str) else "%s: %s" % f for f in extra]
    head = ["HTTP/1.1 " + line, "Content-Length: %d" % len(body)] + fields
    conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)


# Sockets held for the life of the process (the IPv4 twin of an IPv6-only listener's port).
HELD = []


def serve(answer, port=0, host="127.0.0.1"):
    """Listens on `host` (127.0.0.1; an IPv6 address such as ::1 listens there only) at `port`
    (by default an ephemeral one, printed with a 0 as the other scripted servers print theirs),
    and for each request of each connection calls answer(conn, method, target, headers, body),
    which writes the response and returns False when the connection is done."""
    for _ in range(100):
        listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if port:
            # The test reserved the port with a bound, never listening SO_REUSEPORT socket (refused
            # until this server listens, and taken by nothing else meanwhile).
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        listener.bind((host, port))
        if host != "::1":
            break
        # IPv6 loopback only: the same port on 127.0.0.1 is held too (bound, never listening), so
        # a test may count on nothing answering there, whatever other servers the run starts.
        ipv4 = socket.socket(socket.AF_INET)
        try:
            ipv4.bind(("127.0.0.1", listener.getsockname()[1]))
            HELD.append(ipv4)
            break
        except OSError:
            ipv4.close()
            listener.close()
    listener.listen(256)
    print(listener.getsockname()[1], 0, flush=True)
    accept_forever(answer, listener)


def serve_unix(answer, path):
    """As `serve`, on a Unix domain socket at `path` (a leading "@" names one in Linux's abstract
    namespace); prints "ready" once it listens."""
    listener = socket.socket(socket.AF_UNIX)
    listener.bind("\0" + path[1:] if path.startswith("@") else path)
    listener.listen(256)
    print("ready", flush=True)
    accept_forever(answer, listener)


def accept_forever(answer, listener):
    """Serves each connection `listener` accepts on a thread of its own (see `serve`)."""
    def connection(conn):
        buffer = b""
        try:
            while True:
                request = read_request(conn, buffer)
                if request is None:
                    return
                method, target, headers, body, buffer = request
                if not answer(conn, method, target, headers, body):
                    return
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    try:
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=connection, args=(conn,), daemon=True).start()
    except KeyboardInterrupt:
        sys.exit(0)
