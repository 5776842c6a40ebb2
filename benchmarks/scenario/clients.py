#!/usr/bin/env python3
"""Scenario A's client side, one setup per run, inside the shaped link's near namespace: UPLOADS
uploads of UPLOAD_BYTES to BASE_URL (a scripted server) start at once; DELAY seconds later a view
asks THUMB_URL (nginx) for THUMBS thumbnails of THUMB_BYTES (`thumbs/N.bin`). Prints one JSON line per request, times in seconds from the start:
{"kind": "upload"|"thumb", "index", "start", "end", "ok", "error"}.

  clients.py SETUP BASE_URL THUMB_URL UPLOADS UPLOAD_BYTES THUMBS THUMB_BYTES DELAY THUMB_TIMEOUT

SETUP:
  courier            Courier's defaults: the queue's width from the network (the near end of the
                     link is a modem: 2), thumbnails at high priority, uploads at low
  courier-unlimited  the same with a width and host limit of 1000 (every request at once)
  aiohttp            one ClientSession, a connector limit of 100 (what a user would write)
  curl               `curl -Z` for the uploads and another for the thumbnails (curl's default
                     parallelism, 50), each transfer's times from -w

New setups are a function here and a name in SETUPS; run.py draws whatever this prints.
"""
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time

SETUP, BASE, THUMB_BASE = sys.argv[1:4]
UPLOADS, UPLOAD_BYTES, THUMBS, THUMB_BYTES = (int(a) for a in sys.argv[4:8])
DELAY, THUMB_TIMEOUT = float(sys.argv[8]), float(sys.argv[9])
START = time.monotonic()
PAYLOAD = b"p" * UPLOAD_BYTES


def now():
    return time.monotonic() - START


def report(kind, index, start, ok, error=""):
    print(json.dumps({"kind": kind, "index": index, "start": round(start, 3), "end": round(now(), 3), "ok": ok,
                      "error": error}), flush=True)


def upload_url(index):
    return f"{BASE}/upload?discard=1&n={index}"


def thumb_url(index):
    return f"{THUMB_BASE}/thumbs/{index}.bin?n={index}"


async def courier_setup(unlimited):
    import courier
    if unlimited:
        courier.set_queue_width(1000)
        courier.set_host_limit(None, 1000)
    engine = courier.Engine()

    async def one(kind, index, method, url, **options):
        start = now()
        try:
            response = await engine.fetch(method, url, **options)
            report(kind, index, start, response.status == 200, "" if response.status == 200 else str(response.status))
        except courier.CourierError as error:
            report(kind, index, start, False, f"{error.__class__.__name__} ({str(error).split(':')[0]})")

    uploads = [asyncio.ensure_future(one("upload", i, "POST", upload_url(i), content=PAYLOAD, priority="low"))
               for i in range(UPLOADS)]
    await asyncio.sleep(DELAY)  # (the view opens a second later: the scenario's own timing)
    thumbs = [asyncio.ensure_future(one("thumb", i, "GET", thumb_url(i), priority="high", timeout=THUMB_TIMEOUT))
              for i in range(THUMBS)]
    await asyncio.gather(*uploads, *thumbs)


async def aiohttp_setup():
    import aiohttp
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=100)) as session:
        async def one(kind, index, method, url, timeout=None, **options):
            start = now()
            try:
                limit = aiohttp.ClientTimeout(total=timeout) if timeout else aiohttp.ClientTimeout(total=None)
                async with session.request(method, url, timeout=limit, **options) as response:
                    await response.read()
                    report(kind, index, start, response.status == 200, "" if response.status == 200 else str(response.status))
            except (aiohttp.ClientError, asyncio.TimeoutError) as error:
                report(kind, index, start, False, error.__class__.__name__)

        uploads = [asyncio.ensure_future(one("upload", i, "POST", upload_url(i), data=PAYLOAD)) for i in range(UPLOADS)]
        await asyncio.sleep(DELAY)
        thumbs = [asyncio.ensure_future(one("thumb", i, "GET", thumb_url(i), timeout=THUMB_TIMEOUT)) for i in range(THUMBS)]
        await asyncio.gather(*uploads, *thumbs)


def curl_setup():
    """Two `curl -Z` runs; each transfer's start is its run's start plus time_queue-free offsets:
    curl reports time_total per transfer from when that transfer began."""
    with tempfile.NamedTemporaryFile(suffix=".upload") as body:
        body.write(PAYLOAD)
        body.flush()
        fmt = "%{url} %{http_code} %{time_total} %{exitcode}\\n"

        def start(kind, urls, extra):
            argv = ["curl", "-s", "-Z", "-o", "/dev/null", "-w", fmt] + extra
            for url in urls:
                argv += [url, "-o", "/dev/null"]
            return now(), subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)

        up_start, up = start("upload", [upload_url(i) for i in range(UPLOADS)], ["--data-binary", "@" + body.name])
        time.sleep(DELAY)
        th_start, th = start("thumb", [thumb_url(i) for i in range(THUMBS)], ["-m", str(THUMB_TIMEOUT)])
        for kind, began, process in (("upload", up_start, up), ("thumb", th_start, th)):
            out, _ = process.communicate()
            for line in out.splitlines():
                url, code, total, exit_code = line.split()
                index = int(url.rsplit("=", 1)[1])
                end = began + float(total)
                print(json.dumps({"kind": kind, "index": index, "start": round(began, 3), "end": round(end, 3),
                                  "ok": code == "200" and exit_code == "0",
                                  "error": "" if exit_code == "0" else f"curl exit {exit_code}"}), flush=True)


SETUPS = {
    "courier": lambda: asyncio.run(courier_setup(False)),
    "courier-unlimited": lambda: asyncio.run(courier_setup(True)),
    "aiohttp": lambda: asyncio.run(aiohttp_setup()),
    "curl": curl_setup,
}

if __name__ == "__main__":
    SETUPS[SETUP]()
    sys.stdout.flush()
    os._exit(0)
