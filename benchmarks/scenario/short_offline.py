#!/usr/bin/env python3
"""The client of short_test.py's offline checks (scenarios B and C in short), inside the near
namespace, against flaky_server.py. It acts on what the network monitor reports, the harness on
what this prints (one JSON line per step):

  {"step": "stored"}      items 1 and 5 fetched and stored (max-age=0: stale at once; item 1
                          carries stale-if-error, item 5 does not). The harness takes the link down.
  (waits for the monitor to say "none")
  {"step": "offline", "get": N, ...}  per GET with the link down: item 1, 5 and 7 (never stored)
  {"step": "submitted", "retried", "frozen"}
                          RETRIED keyed POSTs with one retry each and FROZEN freezable POSTs are
                          on their way. The harness brings the link back a second later.
  {"step": "post", "key", "ok", "error"} and {"step": "frozen", "i", "ok", "error"} per answer
  {"step": "done"}

  short_offline.py BASE OUTBOX_DIR
"""
import asyncio
import json
import sys

import courier

RETRIED, FROZEN = 12, 3


def say(**fields):
    print(json.dumps(fields), flush=True)


def failure(error):
    return {"ok": False, "error": f"{type(error).__name__}: {error.message}", "code": error.code}


async def main(base, outbox_dir):
    engine = courier.Engine(base, cache_memory=1 << 20, outbox=courier.Outbox(outbox_dir))
    kinds = asyncio.Queue()

    async def watch():
        async for kind, _ in engine.network_changes():
            await kinds.put(kind)
    watching = asyncio.ensure_future(watch())

    async def network(wanted):
        while await kinds.get() != wanted:
            pass

    for n in (1, 5):
        await engine.fetch("GET", f"/item/{n}?max_age=0")
    say(step="stored")
    await network("none")
    for n in (1, 5, 7):
        try:
            r = await engine.fetch("GET", f"/item/{n}?max_age=0")
            say(step="offline", get=n, ok=True, phase=r.phase, status=r.status)
        except courier.CourierError as error:
            response = error.response
            say(step="offline", get=n, phase=response and response.phase, status=response and response.status,
                **failure(error))

    async def post(i):
        try:
            await engine.fetch("POST", "/submit", content=b"retried %d" % i, headers={"Idempotency-Key": f"r-{i}"},
                               retry=courier.Retry(count=1, intervals=(0.05,)), timeout=30)
            say(step="post", key=f"r-{i}", ok=True)
        except courier.CourierError as error:
            say(step="post", key=f"r-{i}", **failure(error))

    async def frozen(i):
        try:
            await engine.fetch("POST", "/submit", content=b"frozen %d" % i, freeze="photos", timeout=30)
            say(step="frozen", i=i, ok=True)
        except courier.CourierError as error:
            say(step="frozen", i=i, **failure(error))
    sent = [asyncio.ensure_future(post(i)) for i in range(RETRIED)]
    sent += [asyncio.ensure_future(frozen(i)) for i in range(FROZEN)]
    say(step="submitted", retried=RETRIED, frozen=FROZEN)
    await asyncio.gather(*sent)
    watching.cancel()
    engine.close()
    say(step="done")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
