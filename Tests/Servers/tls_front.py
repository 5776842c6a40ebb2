#!/usr/bin/env python3
"""TLS in front of another test server: an HTTPS proxy made of http_proxy.py. Prints its port
(and a 0) on the first line. Standard library only: asyncio, so one thread reads and writes each
TLS connection (OpenSSL's objects are not for two threads at once).

  python3 tls_front.py BACKEND_PORT CERT KEY   every connection's bytes, decrypted, go to
                                               127.0.0.1:BACKEND_PORT and its answers back
"""
import asyncio
import ssl
import sys

import parent_guard


async def pump(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()


async def main():
    backend = int(sys.argv[1])
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(sys.argv[2], sys.argv[3])

    async def connection(reader, writer):
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", backend)
        except OSError:
            writer.close()
            return
        await asyncio.gather(pump(reader, upstream_writer), pump(upstream_reader, writer))

    server = await asyncio.start_server(connection, "127.0.0.1", 0, ssl=context)
    print(server.sockets[0].getsockname()[1], 0, flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    parent_guard.start()
    asyncio.run(main())
