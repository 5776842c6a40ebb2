"""One Python HTTP client doing N GET requests, C at a time (run by python_clients.py, which
measures the process's CPU). Prints one JSON line: requests, ok, seconds.

  python_driver.py CLIENT MODE URL N C [CAFILE]
    CLIENT: courier | aiohttp | httpx | requests
    MODE:   async | sync   (sync: one request at a time, C ignored; requests is sync only)
"""
import json
import os
import sys
import time

client_name, mode, url, n, c = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
cafile = sys.argv[6] if len(sys.argv) > 6 else None


def run_sync():
    ok = 0
    if client_name == "courier":
        import courier
        with courier.Client(verify=cafile or True, timeout=None) as client:
            for _ in range(n):
                ok += client.get(url).status_code == 200
    elif client_name == "httpx":
        import httpx
        with httpx.Client(verify=cafile or True, timeout=None) as client:
            for _ in range(n):
                ok += client.get(url).status_code == 200
    elif client_name == "requests":
        import requests
        with requests.Session() as session:
            for _ in range(n):
                ok += session.get(url, verify=cafile or True).status_code == 200
    return ok


async def run_async():
    import asyncio
    left = [n]

    async def worker(get):
        done = 0
        while left[0] > 0:
            left[0] -= 1
            done += await get()
        return done

    if client_name == "courier":
        import courier
        async with courier.AsyncClient(verify=cafile or True, timeout=None) as client:
            async def get():
                return (await client.get(url)).status_code == 200
            results = await asyncio.gather(*(worker(get) for _ in range(c)))
    elif client_name == "httpx":
        import httpx
        async with httpx.AsyncClient(verify=cafile or True, timeout=None, limits=httpx.Limits(max_connections=c)) as client:
            async def get():
                return (await client.get(url)).status_code == 200
            results = await asyncio.gather(*(worker(get) for _ in range(c)))
    elif client_name == "aiohttp":
        import aiohttp
        import ssl
        context = ssl.create_default_context(cafile=cafile) if cafile else None
        connector = aiohttp.TCPConnector(limit=c, ssl=context if context else None)
        async with aiohttp.ClientSession(connector=connector) as session:
            async def get():
                async with session.get(url) as response:
                    await response.read()
                    return response.status == 200
            results = await asyncio.gather(*(worker(get) for _ in range(c)))
    return sum(results)


start = time.monotonic()
if mode == "sync":
    ok = run_sync()
else:
    import asyncio
    if client_name == "courier":
        import courier
        courier.set_host_limit(None, c)
        courier.set_queue_width(max(c, 6))
    ok = asyncio.run(run_async())
print(json.dumps({"requests": n, "ok": ok, "seconds": time.monotonic() - start}))
sys.stdout.flush()
os._exit(0)
