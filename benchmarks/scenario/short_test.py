#!/usr/bin/env python3
"""The scenarios' machinery in short, for `make test` (run by ScenarioLinkTests): a shaped link
(link.py, a fast profile so it takes seconds), the client's end named wwan0 so Courier's
classifier says cellular and its queue is 2 wide, four background uploads the server reads
slowly (each takes seconds whatever the link), then three thumbnails at high priority.

Asserts the order, not times: the thumbnails start beside the uploads (a width of 2 full of
background work does not hold what the user waits for) and all end before the first upload
does; every request succeeds.

Then scenarios B and C in short (short_offline.py against flaky_server.py), the link taken down
when the client has stored two items: with no link, a stored item that allows it is served stale,
one that does not gets the cache's 504, one never stored fails at once with "no route"; twelve
keyed POSTs with one retry each and three frozen POSTs sent while down all succeed once the link
is back a second later (the retries waited for the network and took nothing from the origin's
budget, which holds nine), and the server saw each key exactly once, the frozen ones in their
order (two neighbours may swap: the queue is two wide on cellular).

The namespaces are gone afterwards. Exits 0 when all hold, 1 otherwise, 77 (skipped) with the
reason when this machine cannot make the link.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

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


def thumbnails_beside_uploads(link, env):
    problems = []
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
    return problems


#: What each GET with the link down must end as: (phase, status) or the error code.
OFFLINE_GETS = {1: ("stale_on_error", 200), 5: ("generated", 504), 7: "E_CONNECT_NO_ROUTE"}


def offline_and_back(link, env):
    """Scenarios B and C in short (see the module's doc)."""
    problems, steps, sent = [], [], {"retried": 0, "frozen": 0}
    url = link.serve([sys.executable, os.path.join(HERE, "flaky_server.py")])
    outbox = tempfile.mkdtemp(prefix="courier-short-outbox-")
    codes = {"E_CONNECT_NO_ROUTE": 7 | (2 << 8)}
    try:
        client = link.client([sys.executable, os.path.join(HERE, "short_offline.py"), url, outbox], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        watchdog = threading.Timer(120, client.kill)
        watchdog.start()
        for line in client.stdout:
            if not line.startswith("{"):
                continue
            step = json.loads(line)
            steps.append(step)
            print(json.dumps(step))
            if step["step"] == "stored":
                link.set_up(False)
            elif step["step"] == "submitted":
                sent = step
                # (The outage lasts a second more: the scenario's timing. Every retry's 50 ms
                # interval ends within it, so each one has to wait for the network.)
                threading.Timer(1.0, lambda: link.set_up(True)).start()
        watchdog.cancel()
        err = client.stderr.read()
        if client.wait() != 0 or not steps or steps[-1]["step"] != "done":
            problems.append(f"the offline client ended with {client.returncode}: {err[-500:]}")
        for step in (s for s in steps if s["step"] == "offline"):
            wanted = OFFLINE_GETS[step["get"]]
            got = (step["phase"], step["status"]) if isinstance(wanted, tuple) else step.get("code")
            if got != (wanted if isinstance(wanted, tuple) else codes[wanted]):
                problems.append(f"item {step['get']} with the link down: wanted {wanted}, got {step}")
        answered = [s for s in steps if s["step"] in ("post", "frozen")]
        failed = [s for s in answered if not s["ok"]]
        if failed or len(answered) != sent["retried"] + sent["frozen"]:
            problems.append(f"POSTs sent while the link was down: {len(answered)} answered, failed: {failed}")
        keys = json.loads(link.exec_in(link.near, "curl", "-s", "--max-time", "30", url + "/keys").stdout or "{}")
        twice = {k: v for k, v in keys.items() if v["count"] != 1}
        if twice or len(keys) != sent["retried"] + sent["frozen"]:
            problems.append(f"the server saw {len(keys)} keys, some not once: {twice}")
        # In their order: sent one after another through a queue two wide on cellular, so two
        # neighbours may arrive swapped, nothing further out of place.
        frozen = [v["body"] for v in keys.values() if v["body"].startswith("frozen")]
        places = {body: place for place, body in enumerate(frozen)}
        wanted = [f"frozen {i}" for i in range(sent["frozen"])]
        if sorted(frozen) != wanted or any(abs(places[body] - i) > 1 for i, body in enumerate(wanted)):
            problems.append(f"the frozen POSTs arrived as {frozen}")
    finally:
        shutil.rmtree(outbox, ignore_errors=True)
    return problems


def main():
    reason = missing()
    if reason:
        print(f"skipped: {reason}")
        return 77
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "cbindings", "python") + os.pathsep + HERE)
    env.setdefault("COURIER_LIBRARY", os.path.join(ROOT, ".build", "debug", "libCourierC.so"))
    problems = []
    with Link(PROFILE) as link:
        problems += thumbnails_beside_uploads(link, env)
        problems += offline_and_back(link, env)
    left = leftover_namespaces()
    if left:
        problems.append(f"namespaces left behind: {left}")
    for problem in problems:
        print("short_test:", problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
