#!/usr/bin/env python3
"""A scripted HTTP/2 server (h2c, prior knowledge) whose behaviour, good or hostile, is chosen by
the request path. Built on Debian's python3-h2 for the framing, with raw frames written straight
to the socket where a hostile server breaks the protocol (the library would refuse to).

Prints its ports: the scripted server; one that announces SETTINGS_MAX_CONCURRENT_STREAMS 1;
one that accepts and never sends a byte (no SETTINGS); given a certificate chain and its key,
TLS offering h2 and http/1.1 by ALPN, the same scripts over h2, and over HTTP/1.1 one answer for
any path ("via http/1.1 PATH"), for the HTTP_1_1_REQUIRED fallback; then two announcing
MAX_CONCURRENT_STREAMS 0, one for good, one raising it to 100 after 300 ms. Runs until its
parent test process goes.

  h2_server.py [CERT_CHAIN KEY]
"""
import socket
import ssl
import struct
import sys
import threading
import time

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.settings

import parent_guard

SEEN_LOCK = threading.Lock()
SEEN = {}  # key -> requests seen (refuse-once, goaway-once)
PEAK = {"streams": 0}
PINGS = {}  # id(connection) -> PINGs received on it (the client's keep-alive)


def frame(kind, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def first_time(key):
    with SEEN_LOCK:
        SEEN[key] = SEEN.get(key, 0) + 1
        return SEEN[key] == 1


def serve(sock, max_streams=None, raise_after=None):
    """`max_streams` announced in the first SETTINGS; with `raise_after` (seconds) a second
    SETTINGS raises it to 100 that long after the connection began."""
    config = h2.config.H2Configuration(client_side=False, validate_outbound_headers=False,
                                       normalize_outbound_headers=False, validate_inbound_headers=False)
    conn = h2.connection.H2Connection(config=config)
    conn.initiate_connection()
    if max_streams is not None:
        conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: max_streams})
    sock.sendall(conn.data_to_send())
    if raise_after is not None:
        sock.settimeout(raise_after)
    paths = {}
    bodies = {}
    open_streams = set()
    try:
        while True:
            try:
                data = sock.recv(65536)
            except socket.timeout:
                sock.settimeout(None)
                conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 100})
                sock.sendall(conn.data_to_send())
                continue
            if not data:
                return
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    headers = {k.decode() if isinstance(k, bytes) else k: v.decode() if isinstance(v, bytes) else v
                               for k, v in event.headers}
                    paths[event.stream_id] = headers
                    bodies[event.stream_id] = b""
                    open_streams.add(event.stream_id)
                    PEAK["streams"] = max(PEAK["streams"], len(open_streams))
                    route = headers.get(":path", "/").partition("?")[0]
                    if route == "/continue" and headers.get("expect") == "100-continue":
                        # Lets the body come (the client waits for this 100).
                        conn.send_headers(event.stream_id, [(":status", "100")])
                    elif route == "/refuse-body" and not event.stream_ended:
                        # Answers before the body (which then must never come), as a 413 would.
                        conn.send_headers(event.stream_id, [(":status", "413"), ("x-expect", headers.get("expect", ""))],
                                          end_stream=True)
                elif isinstance(event, h2.events.DataReceived):
                    bodies[event.stream_id] = bodies.get(event.stream_id, b"") + event.data
                    if paths[event.stream_id].get(":path", "").partition("?")[0] != "/deaf-body":
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif event.flow_controlled_length:
                        # /deaf-body never opens its stream's window again (the client's body
                        # stalls), only the connection's: the connection's other streams go on.
                        conn.increment_flow_control_window(event.flow_controlled_length)
                elif isinstance(event, h2.events.StreamEnded):
                    open_streams.discard(event.stream_id)
                    if answer(sock, conn, event.stream_id, paths[event.stream_id], bodies.get(event.stream_id, b"")) == "close":
                        sock.sendall(conn.data_to_send())
                        return
                elif isinstance(event, h2.events.StreamReset):
                    open_streams.discard(event.stream_id)
                elif isinstance(event, h2.events.PingReceived):
                    PINGS[id(conn)] = PINGS.get(id(conn), 0) + 1
            sock.sendall(conn.data_to_send())
    except (OSError, h2.exceptions.ProtocolError):
        return
    finally:
        sock.close()


def answer(sock, conn, sid, headers, body):
    path = headers.get(":path", "/")
    route, _, query = path.partition("?")

    def send(status=200, fields=(), data=b"", end=True):
        conn.send_headers(sid, [(":status", str(status))] + list(fields), end_stream=end and not data)
        if data:
            conn.send_data(sid, data, end_stream=end)

    if route == "/ok":
        send(fields=[("content-type", "text/plain")], data=b"ok")
    elif route == "/cookie-set":
        send(fields=[("set-cookie", "h2c=" + (query or "1") + "; Path=/")], data=b"set")
    elif route == "/bearer":
        # 200 for the token "good", else a challenge (an auth refresh's trigger).
        if headers.get("authorization") == "Bearer good":
            send(data=b"welcome")
        else:
            send(status=401, fields=[("www-authenticate", 'Bearer realm="h2"')], data=b"who?")
    elif route == "/pings":
        send(data=str(PINGS.get(id(conn), 0)).encode())
    elif route == "/continue":
        send(data=str(len(body)).encode())
    elif route == "/echo":
        reply = f"{headers.get(':method')} {headers.get(':authority')} {len(body)}".encode()
        send(fields=[("x-request-" + k.strip(":"), v) for k, v in headers.items()], data=reply)
    elif route == "/delay":
        # Answers after MS milliseconds (the connection's other streams wait meanwhile).
        time.sleep(int(query or "0") / 1000)
        send(data=b"late")
    elif route == "/peak":
        send(data=str(PEAK["streams"]).encode())
    elif route == "/trailers":
        conn.send_headers(sid, [(":status", "200")])
        conn.send_data(sid, b"body")
        conn.send_headers(sid, [("grpc-status", "0"), ("grpc-message", "fine")], end_stream=True)
    elif route == "/big":
        size = int(query or "1048576")
        conn.send_headers(sid, [(":status", "200"), ("content-length", str(size))])
        sent = 0
        while sent < size:
            sock.sendall(conn.data_to_send())
            window = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size, size - sent)
            if window <= 0:
                data = sock.recv(65536)
                if not data:
                    return "close"
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.StreamReset) and event.stream_id == sid:
                        return None
                continue
            conn.send_data(sid, b"x" * window, end_stream=sent + window == size)
            sent += window
    elif route == "/rst-mid-body":
        conn.send_headers(sid, [(":status", "200"), ("content-length", "100")])
        conn.send_data(sid, b"x" * 10)
        conn.reset_stream(sid, h2.errors.ErrorCodes.INTERNAL_ERROR)
    elif route == "/refuse-once":
        if first_time("refuse" + query):
            conn.reset_stream(sid, h2.errors.ErrorCodes.REFUSED_STREAM)
        else:
            send(data=b"second")
    elif route == "/http11-required":
        conn.reset_stream(sid, h2.errors.ErrorCodes.HTTP_1_1_REQUIRED)
    elif route == "/goaway-once":
        # A GOAWAY whose last stream id does not cover this stream: never processed, retried.
        if first_time("goaway" + query):
            conn.close_connection(error_code=h2.errors.ErrorCodes.NO_ERROR, last_stream_id=sid - 2 if sid > 2 else 0)
            return "close"
        send(data=b"after goaway")
    elif route == "/goaway-error-mid":
        # Covered by the GOAWAY, but the connection ends with an error mid-body.
        conn.send_headers(sid, [(":status", "200"), ("content-length", "100")])
        conn.send_data(sid, b"x" * 10)
        conn.close_connection(error_code=h2.errors.ErrorCodes.INTERNAL_ERROR, last_stream_id=sid)
        return "close"
    elif route == "/bad-status":
        send(status="2x0", data=b"x")
    elif route == "/uppercase":
        send(fields=[("X-Upper", "1")], data=b"x")
    elif route == "/connection-header":
        send(fields=[("connection", "close")], data=b"x")
    elif route == "/transfer-encoding":
        send(fields=[("transfer-encoding", "chunked")], data=b"x")
    elif route == "/length-mismatch":
        send(fields=[("content-length", "10")], data=b"short")
    elif route == "/never-ends":
        conn.send_headers(sid, [(":status", "200")])
        conn.send_data(sid, b"some")
    elif route == "/big-headers":
        # 400 fields of 1,000 bytes (400 KB) as raw HPACK literals in HEADERS + CONTINUATION
        # frames of 16 KiB: the library's Huffman coder in Python is too slow for a loaded run.
        sock.sendall(conn.data_to_send())
        block = b"\x88" + b"".join(b"\x00\x0bx-fill-%04d" % i + b"\x7f\xe9\x06" + b"y" * 1000 for i in range(400))
        pieces = [block[i:i + 16384] for i in range(0, len(block), 16384)]
        try:
            for index, piece in enumerate(pieces):
                kind = 1 if index == 0 else 9
                flags = 4 if index == len(pieces) - 1 else 0
                sock.sendall(frame(kind, flags, sid, piece))
        except OSError:
            pass
        time.sleep(0.5)
        return "close"
    elif route == "/continuation-flood":
        sock.sendall(conn.data_to_send())
        # CVE-2024-27316's shape: a header block that never ends, in empty CONTINUATION frames
        # (no field ever completes, so only a bound on the frames themselves stops it).
        sock.sendall(frame(1, 0, sid, b"\x88"))  # HEADERS (:status 200), no END_HEADERS
        try:
            for _ in range(10000):
                sock.sendall(frame(9, 0, sid, b""))
        except OSError:
            pass
        return "close"
    elif route == "/window-overflow":
        sock.sendall(conn.data_to_send())
        sock.sendall(frame(8, 0, 0, struct.pack(">I", 0x7FFFFFFF)) * 2)
        time.sleep(0.5)
        return "close"
    elif route == "/oversized-frame":
        # A DATA frame past SETTINGS_MAX_FRAME_SIZE (16,384 by default).
        conn.send_headers(sid, [(":status", "200")])
        sock.sendall(conn.data_to_send())
        sock.sendall(frame(0, 0, sid, b"z" * 20000))
        time.sleep(0.5)
        return "close"
    elif route == "/hpack-bomb":
        # 4 KB into the dynamic table once, then 200 one-byte references to it: 800 KB of
        # fields from a 4 KB block.
        sock.sendall(conn.data_to_send())
        block = b"\x88" + b"\x40\x06x-bomb\x7f\xa1\x1e" + b"b" * 4000 + b"\xbe" * 200
        sock.sendall(frame(1, 5, sid, block))
        time.sleep(0.5)
        return "close"
    elif route == "/hpack-table-size":
        # A dynamic table size update to 65,536, past the 4,096 the client allows.
        sock.sendall(conn.data_to_send())
        sock.sendall(frame(1, 5, sid, b"\x3f\xe1\xff\x03\x88"))
        time.sleep(0.5)
        return "close"
    elif route == "/data-past-window":
        # 70,000 bytes at once, ignoring the client's window (65,536 for a rate-limited stream,
        # which does not grow).
        conn.send_headers(sid, [(":status", "200")])
        sock.sendall(conn.data_to_send())
        try:
            for offset in range(0, 70000, 14000):
                sock.sendall(frame(0, 0, sid, b"w" * 14000))
        except OSError:
            pass
        time.sleep(0.5)
        return "close"
    elif route == "/goaway-covering":
        # A GOAWAY whose last stream id covers this stream, mid-body: the stream still ends well.
        conn.send_headers(sid, [(":status", "200"), ("content-length", "10")])
        sock.sendall(conn.data_to_send())
        sock.sendall(frame(7, 0, 0, struct.pack(">II", sid, 0)))
        sock.sendall(frame(0, 1, sid, b"0123456789"))
        time.sleep(0.5)
        return "close"
    elif route == "/ping-flood":
        sock.sendall(conn.data_to_send())
        try:
            sock.sendall(frame(6, 0, 0, b"\x00" * 8) * 2000)
        except OSError:
            pass
        send(data=b"after pings")
    else:
        send(status=404, data=b"no such script")
    return None


def http1(sock):
    """One HTTP/1.1 answer per request, keep-alive, naming the path it answers."""
    buffer = b""
    try:
        while True:
            while b"\r\n\r\n" not in buffer:
                data = sock.recv(65536)
                if not data:
                    return
                buffer += data
            head, _, buffer = buffer.partition(b"\r\n\r\n")
            path = head.split(b"\r\n")[0].split(b" ")[1]
            body = b"via http/1.1 " + path
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    except OSError:
        return
    finally:
        sock.close()


def tls(context):
    def handle(sock):
        try:
            wrapped = context.wrap_socket(sock, server_side=True)
        except (OSError, ssl.SSLError):
            sock.close()
            return
        if wrapped.selected_alpn_protocol() == "h2":
            serve(wrapped)
        else:
            http1(wrapped)
    return handle


def silent(sock):
    try:
        while sock.recv(65536):
            pass
    except OSError:
        pass


def listen(handler):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(128)

    def loop():
        while True:
            client, _ = server.accept()
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=handler, args=(client,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    return server.getsockname()[1]


def main():
    parent_guard.start()
    ports = [listen(serve), listen(lambda s: serve(s, max_streams=1)), listen(silent)]
    if len(sys.argv) == 3:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        context.set_alpn_protocols(["h2", "http/1.1"])
        ports.append(listen(tls(context)))
    # SETTINGS_MAX_CONCURRENT_STREAMS 0: for good, and raised to 100 after 300 ms.
    ports += [listen(lambda s: serve(s, max_streams=0)), listen(lambda s: serve(s, max_streams=0, raise_after=0.3))]
    print(" ".join(map(str, ports)), flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    sys.exit(main())
