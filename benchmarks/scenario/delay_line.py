#!/usr/bin/env python3
"""A delay line for the shaped link (link.py): a TCP proxy that forwards each direction's bytes
after a fixed delay plus jitter, in order (this kernel has no netem to delay packets).

  delay_line.py ADDRESS TARGET_PORT DELAY_MS [JITTER_MS]

Listens on ADDRESS (an ephemeral port, printed as the first line) and connects each client to
127.0.0.1:TARGET_PORT. A chunk read at t is written at the later of t + DELAY + a uniform draw in
[0, JITTER] and the previous chunk's time, so bytes never overtake each other. At most BUDGET
bytes wait in each direction: past that it stops reading, and the sender's TCP window closes as
it would behind a real link's queue. A half-close goes through after the bytes before it. Runs
until its stdin closes (its parent, the run, went away).
"""
import asyncio
import collections
import random
import sys
import time

BUDGET = 256 * 1024


async def carry(reader, writer, delay, jitter):
    """One direction: reads, and writes each chunk when its time comes."""
    queue, held = collections.deque(), [0]
    arrived, room = asyncio.Event(), asyncio.Event()
    room.set()

    async def read_side():
        last = 0.0
        while True:
            await room.wait()
            data = await reader.read(65536)
            at = max(last, time.monotonic() + delay + random.uniform(0, jitter))
            last = at
            queue.append((at, data))
            held[0] += len(data)
            if held[0] >= BUDGET:
                room.clear()
            arrived.set()
            if not data:
                return

    async def write_side():
        while True:
            while not queue:
                arrived.clear()
                await arrived.wait()
            at, data = queue.popleft()
            wait = at - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            writer.write(data)
            await writer.drain()
            held[0] -= len(data)
            if held[0] < BUDGET:
                room.set()

    reading = asyncio.ensure_future(read_side())
    try:
        await write_side()
    finally:
        reading.cancel()


async def main():
    address, target, delay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000
    jitter = float(sys.argv[4]) / 1000 if len(sys.argv) > 4 else 0.0

    async def serve(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target)
        except OSError:
            client_writer.close()
            return
        try:
            await asyncio.gather(carry(client_reader, server_writer, delay, jitter),
                                 carry(server_reader, client_writer, delay, jitter))
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            for writer in (client_writer, server_writer):
                writer.close()

    server = await asyncio.start_server(serve, address, 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until the run goes


if __name__ == "__main__":
    asyncio.run(main())
