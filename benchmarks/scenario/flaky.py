#!/usr/bin/env python3
"""Scenario C's client side, inside the flaky link's near namespace (flaky_run.py): GETS cached
GETs of ITEMS items and POSTS keyed POSTs with retries, started at a steady pace over SPREAD
seconds, each with a total timeout of TOTAL seconds. A GET is a view's read: it waits at most
PATIENCE seconds in the queue (for the network, while the link is down), then takes the stored
copy where the item allows it (stale-if-error). Prints one JSON line per request, times in
seconds from its start:

  {"kind": "get"|"post", "i", "item", "stale_allowed", "start", "end", "ok", "phase", "status",
   "retries", "body_ok", "error"}

`body_ok` is whether a GET's 200 body is item_body(n)'s bytes exactly (None for a POST or
another status); `error` is the failure's class and the library's words for its code. Network changes print as {"event": "network", "kind", "t"}.

  flaky.py BASE GETS POSTS ITEMS SPREAD TOTAL
"""
import asyncio
import json
import random
import sys
import time

import courier
from flaky_server import allows_stale, item_body

START = time.monotonic()
PATIENCE = 2.0
#: The POSTs' retries: five at most, waits from half a second doubling to 4 s, drawn with jitter.
RETRY = courier.Retry(count=5, intervals=(0.5,), backoff=True, jitter=True, max_interval=4.0)


def now():
    return round(time.monotonic() - START, 3)


def error_name(failure):
    return f"{type(failure).__name__} ({courier.strerror(failure.code)})"


async def main(base, gets, posts, items, spread, total):
    engine = courier.Engine(base, cache_memory=64 << 20)
    rng = random.Random(35)

    async def one(kind, i, method, target, item=None, **options):
        record = {"kind": kind, "i": i, "item": item, "stale_allowed": item is not None and allows_stale(item),
                  "start": now(), "ok": False, "phase": None, "status": None, "retries": 0, "body_ok": None,
                  "error": None}
        try:
            response = await engine.fetch(method, target, **options)
            record.update(ok=True, phase=response.phase, status=response.status, retries=response.retries)
            if item is not None and response.status == 200:
                record["body_ok"] = response.content == item_body(item)
        except courier.CourierError as failure:
            record["error"] = error_name(failure)
            if failure.response is not None:  # (a status outside the accepted ones: the cache's 504)
                record.update(phase=failure.response.phase, status=failure.response.status)
        record["end"] = now()
        print(json.dumps(record), flush=True)

    async def watch():
        async for kind, interface in engine.network_changes():
            print(json.dumps({"event": "network", "kind": kind, "t": now()}), flush=True)
    watching = asyncio.ensure_future(watch())
    # One plan, the same every run: which request goes in each slot.
    plan = ["post"] * posts + ["get"] * gets
    rng.shuffle(plan)
    started, counts = [], {"get": 0, "post": 0}
    for slot, kind in enumerate(plan):
        i = counts[kind]
        counts[kind] += 1
        if kind == "get":
            n = rng.randrange(items)
            started.append(asyncio.ensure_future(one("get", i, "GET", f"/item/{n}", item=n,
                                                     timeouts={"queue": PATIENCE, "total": total})))
        else:
            started.append(asyncio.ensure_future(one("post", i, "POST", "/submit", content=b"post %d" % i,
                                                     headers={"Idempotency-Key": f"c-{i}"}, retry=RETRY,
                                                     timeout=total)))
        await asyncio.sleep(spread / len(plan))  # (the user's pace: the scenario's timing)
    await asyncio.gather(*started)
    watching.cancel()
    engine.close()


if __name__ == "__main__":
    base, gets, posts, items, spread, total = sys.argv[1:7]
    asyncio.run(main(base, int(gets), int(posts), int(items), float(spread), float(total)))
