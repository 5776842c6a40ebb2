#!/usr/bin/env python3
"""The scenarios' machinery in short, for `make test` (run by ScenarioLinkTests): a shaped link
(link.py, a fast profile so it takes seconds), the client's end named wwan0 so Courier's
classifier says cellular and its queue is 2 wide, four background uploads the server reads
slowly (each takes seconds whatever the link), then three thumbnails at high priority.

Asserts the order, not times: the thumbnails start beside the uploads (a width of 2 full of
background work does not hold what the user waits for) and all end before the first upload
does; every request succeeds; the namespaces are gone afterwards. Exits 0 when all hold, 1
otherwise, 77 (skipped) with the reason when this machine cannot make the link.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from link import Link, leftover_namespaces, missing  # noqa: E402

PROFILE = dict(down=30000, up=30000, rtt=20, jitter=0, loss=0, interface="wwan0")

DRIVER = r"""
import asyncio, json, sys, time
import courier
base = sys.argv[1]
engine = courier.Engine()
start = time.monotonic()
async def one(kind, index, method, url, **options):
    began = time.monotonic() - start
    try:
        response = await engine.fetch(method, url, **options)
        ok, error = response.status == 200, ""
    except courier.CourierError as failure:
        ok, error = False, str(failure)
    print(json.dumps({"kind": kind, "index": index, "start": began, "end": time.monotonic() - start, "ok": ok,
                      "error": error}), flush=True)
async def main():
    print(json.dumps({"width": courier.network_status()}), flush=True)
    body = b"u" * 200_000
    uploads = [asyncio.ensure_future(one("upload", i, "POST", base + "/upload?discard=1&slow=50000", content=body,
                                         priority="low")) for i in range(4)]
    await asyncio.sleep(0.2)  # (the view opens a little later: the scenario's timing, not a wait for a state)
    thumbs = [asyncio.ensure_future(one("thumb", i, "GET", base + "/blob/10240?seed=%d" % i, priority="high"))
              for i in range(3)]
    await asyncio.gather(*uploads, *thumbs)
asyncio.run(main())
"""


def main():
    reason = missing()
    if reason:
        print(f"skipped: {reason}")
        return 77
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "cbindings", "python"))
    env.setdefault("COURIER_LIBRARY", os.path.join(ROOT, ".build", "debug", "libCourierC.so"))
    problems = []
    with Link(PROFILE) as link:
        url = link.serve([sys.executable, os.path.join(ROOT, "Tests", "Servers", "stream_server.py")])
        client = link.client([sys.executable, "-c", DRIVER, url], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        out, err = client.communicate(timeout=120)
        lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        requests = [line for line in lines if "kind" in line]
        print("\n".join(json.dumps(r) for r in lines))
        if client.returncode != 0 or len(requests) != 7:
            problems.append(f"the client ended with {client.returncode} after {len(requests)} requests: {err[-500:]}")
        failed = [r for r in requests if not r["ok"]]
        if failed:
            problems.append(f"failed: {failed}")
        uploads = [r for r in requests if r["kind"] == "upload"]
        thumbs = [r for r in requests if r["kind"] == "thumb"]
        if uploads and thumbs and max(t["end"] for t in thumbs) >= min(u["end"] for u in uploads):
            problems.append("a thumbnail waited for an upload to end: the background held the queue's width")
    left = leftover_namespaces()
    if left:
        problems.append(f"namespaces left behind: {left}")
    for problem in problems:
        print("short_test:", problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
