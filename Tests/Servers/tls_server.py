#!/usr/bin/env python3
"""TLS misbehaviour for Courier's HTTPS tests: python3 tls_server.py CERT KEY

Prints two ports: a TLS listener (paths choose the behaviour) and a listener that answers a TLS
ClientHello with plaintext HTTP (a handshake that cannot succeed).
  /close-notify     close-delimited body, then a proper TLS close (close_notify): a success
  /truncate         close-delimited body, then the TCP connection is closed without close_notify
  /truncate-length  Content-Length 100, 10 bytes, then close: a truncated body
  /echo             a small keep-alive response
"""
import os
import socket
import ssl
import sys
import threading
import parent_guard


def handle_tls(raw, context):
    try:
        conn = context.wrap_socket(raw, server_side=True)
    except (ssl.SSLError, OSError):
        raw.close()
        return
    try:
        while True:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            path = data.split(b" ", 2)[1].decode()
            if path == "/close-notify":
                conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nclean end")
                conn.unwrap()
                return
            if path == "/truncate":
                conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\ncut short")
                # Close the TCP connection under TLS's feet: no close_notify.
                os.close(conn.detach())
                return
            if path == "/truncate-length":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
                conn.unwrap()
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\necho")
    except (ssl.SSLError, OSError):
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass


def handle_plain(raw):
    try:
        raw.recv(65536)
        raw.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    except OSError:
        pass
    raw.close()


def serve(listener, handler):
    while True:
        raw, _ = listener.accept()
        threading.Thread(target=handler, args=(raw,), daemon=True).start()


def listen():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(128)
    return s


def main():
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[1], sys.argv[2])
    tls_listener, plain_listener = listen(), listen()
    print(tls_listener.getsockname()[1], plain_listener.getsockname()[1], flush=True)
    threading.Thread(target=serve, args=(plain_listener, handle_plain), daemon=True).start()
    serve(tls_listener, lambda raw: handle_tls(raw, context))


if __name__ == "__main__":
    parent_guard.start()
    main()
