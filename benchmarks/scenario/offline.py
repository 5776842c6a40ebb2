#!/usr/bin/env python3
"""Scenario B's client side, inside the shaped link's near namespace: freezable POSTs through an
outbox while the link goes down and comes back, and a process killed during the flush. Prints
one JSON line per event, times in seconds from its start.

  offline.py send BASE OUTBOX COUNT PACE PATH   COUNT POSTs to PATH, one every PACE seconds, each
                                                frozen ("photos"): {"event": "answered", "i", "t"}
                                                per answer, network changes as {"event": "network",
                                                "kind", "t"}, {"event": "submitted", "i"} as each
                                                goes, {"event": "done"} when all are answered
  offline.py resume BASE OUTBOX                 opens the outbox a killed process left and waits
                                                until it is empty: {"event": "left", "count"}, then
                                                {"event": "done", "answered"}
"""
import asyncio
import json
import sys
import threading
import time

import courier

START = time.monotonic()


def say(**fields):
    print(json.dumps(dict(fields, t=round(time.monotonic() - START, 3))), flush=True)


async def send(base, path, count, pace, target):
    outbox = courier.Outbox(path)
    with courier.Engine(base, outbox=outbox) as engine:
        async def watch():
            async for kind, interface in engine.network_changes():
                say(event="network", kind=kind, interface=interface)
        watching = asyncio.ensure_future(watch())

        async def one(i):
            response = await engine.fetch("POST", target, content=f"photo {i}".encode(), freeze="photos")
            say(event="answered", i=i, status=response.status)
        posts = []
        for i in range(count):
            posts.append(asyncio.ensure_future(one(i)))
            say(event="submitted", i=i)
            await asyncio.sleep(pace)  # (the user's pace: the scenario's timing)
        await asyncio.gather(*posts)
        watching.cancel()
    say(event="done")


def resume(base, path):
    outbox = courier.Outbox(path)
    left = len(outbox)
    say(event="left", count=left)
    finished, all_done = [0], threading.Event()

    def ended(entry, kind, code, status):
        finished[0] += 1
        if finished[0] >= left:
            all_done.set()
    outbox.on_finished("photos", ended)
    with courier.Engine(base, outbox=outbox):
        if left:
            outbox.flush()
            all_done.wait(120)
    say(event="done", answered=finished[0], left=len(outbox))


if __name__ == "__main__":
    if sys.argv[1] == "send":
        asyncio.run(send(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), sys.argv[6]))
    else:
        resume(sys.argv[2], sys.argv[3])
