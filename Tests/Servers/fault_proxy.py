#!/usr/bin/env python3
"""A TCP proxy that injects faults between Courier and a real server (nginx in the tests).

usage: fault_proxy.py UPSTREAM_PORT MODE SEED

Prints its port as its first line. Every accepted connection is relayed to 127.0.0.1:UPSTREAM_PORT
with the faults MODE names, chosen per connection from a random generator seeded with SEED (so a
failing run can be replayed):

  fragment   server bytes go out one to seven bytes at a time, with short pauses
  delay      every relayed chunk waits 0-30 ms
  reset      after a random number of response bytes the connection is reset (RST)
  stall      after a random number of response bytes nothing more is relayed (until the client
             gives up)
  mixed      one of the above, or a clean relay, per connection

Standard library only.
"""
import random
import select
import socket
import struct
import sys
import threading
import time
import parent_guard

MODES = ("fragment", "delay", "reset", "stall")


def relay(client, upstream_port, mode, rng):
    if mode == "mixed":
        mode = rng.choice(MODES + ("clean",))
    try:
        server = socket.create_connection(("127.0.0.1", upstream_port))
    except OSError:
        client.close()
        return
    # Where the fault strikes: a response byte offset (reset, stall).
    strike = rng.randint(0, 4000)
    sent = 0
    stalled = False
    try:
        while True:
            readable, _, _ = select.select([client, server], [], [], 30)
            if not readable:
                return
            for sock in readable:
                data = sock.recv(65536)
                if not data:
                    return
                if sock is client:
                    server.sendall(data)
                    continue
                if stalled:
                    continue  # swallow everything from now on
                if mode in ("reset", "stall") and sent + len(data) > strike:
                    keep = max(0, strike - sent)
                    if keep:
                        client.sendall(data[:keep])
                    if mode == "reset":
                        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        return
                    stalled = True
                    continue
                if mode == "fragment":
                    index = 0
                    while index < len(data):
                        piece = rng.randint(1, 7)
                        client.sendall(data[index:index + piece])
                        index += piece
                        if rng.random() < 0.05:
                            time.sleep(0.001)
                elif mode == "delay":
                    time.sleep(rng.random() * 0.03)
                    client.sendall(data)
                else:
                    client.sendall(data)
                sent += len(data)
    except OSError:
        return
    finally:
        for sock in (client, server):
            try:
                sock.close()
            except OSError:
                pass


def main():
    upstream_port, mode, seed = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    if mode not in MODES + ("mixed",):
        sys.exit(f"unknown mode {mode}")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1024)
    print(listener.getsockname()[1], flush=True)
    rng = random.Random(seed)
    while True:
        client, _ = listener.accept()
        connection_rng = random.Random(rng.getrandbits(64))
        threading.Thread(target=relay, args=(client, upstream_port, mode, connection_rng), daemon=True).start()


if __name__ == "__main__":
    parent_guard.start()
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
