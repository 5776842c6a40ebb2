"""Scenario B for run.py: offline and back, and a crash during the flush, on a shaped link.

1. Ten freezable POSTs (Idempotency-Key from the outbox), one every half second; after the
   third the link goes down (`ip link set down`) for 20 s, then up.
2. With the link down, six more to a server that answers each after 3 s; the link comes up and
   1.5 s later the client is killed (SIGKILL) with requests in flight; a new process opens the
   same outbox and sends what is left.
The idempotency server (Tests/Servers/idempotency_server.py) counts every request by key: a
request is lost when its key never arrived, created twice never (the server answers a repeated
key as a replay); deliveries beyond one per key are what the kill cost, made harmless by the key.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from link import Link  # noqa: E402

FIRST, DOWN_AFTER, DOWN_FOR, PACE = 10, 3, 20.0, 0.5
CRASH, CRASH_DELAY_MS, KILL_AFTER = 6, 3000, 1.5
LIMIT = 180  # seconds for each process: longer is a hang


def events(process):
    for line in process.stdout:
        if line.startswith("{"):
            yield json.loads(line)


def run(profile="3g", tag=None):
    """Returns the scenario's facts as a dict (see `table`)."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "cbindings", "python"),
               COURIER_LIBRARY=os.path.join(ROOT, ".build", "release", "libCourierC.so"))
    driver = [sys.executable, os.path.join(HERE, "offline.py")]
    outbox = tempfile.mkdtemp(prefix="courier-scenario-outbox-")
    facts = {"first": FIRST, "crash": CRASH, "network": [], "problems": []}
    try:
        with Link(profile, tag=tag) as link:
            url = link.serve([sys.executable, os.path.join(ROOT, "Tests", "Servers", "idempotency_server.py")])
            # 1: offline and back.
            client = link.client(driver + ["send", url, outbox, str(FIRST), str(PACE), "/submit"], env=env,
                                 stdout=subprocess.PIPE, text=True)
            watchdog = threading.Timer(LIMIT, client.kill)
            watchdog.start()
            went_down = came_up = None
            for event in events(client):
                if event["event"] == "submitted" and event["i"] == DOWN_AFTER - 1:
                    link.set_up(False)
                    went_down = time.monotonic()
                    # (The outage lasts DOWN_FOR: the scenario's timing, not a wait for a state.)
                    threading.Timer(DOWN_FOR, lambda: link.set_up(True)).start()
                elif event["event"] == "network":
                    facts["network"].append(event["kind"])
                elif event["event"] == "answered" and went_down and event["i"] >= DOWN_AFTER - 1 and came_up is None:
                    came_up = time.monotonic()
            watchdog.cancel()
            if client.wait() != 0:
                facts["problems"].append(f"the first client ended with {client.returncode}")
            facts["after_outage"] = round(came_up - went_down, 1) if came_up and went_down else None
            first_keys = keys(link, url)
            # 2: killed during the flush, started again.
            link.set_up(False)
            client = link.client(driver + ["send", url, outbox, str(CRASH), "0.1", f"/submit?delay={CRASH_DELAY_MS}"],
                                 env=env, stdout=subprocess.PIPE, text=True)
            for event in events(client):
                if event["event"] == "submitted" and event["i"] == CRASH - 1:
                    link.set_up(True)
                    threading.Timer(KILL_AFTER, lambda: client.send_signal(signal.SIGKILL)).start()
            client.wait()
            again = link.client(driver + ["resume", url, outbox], env=env, stdout=subprocess.PIPE, text=True)
            resumed = {}
            for event in events(again):
                resumed[event["event"]] = event
            if again.wait(timeout=LIMIT) != 0:
                facts["problems"].append(f"the restarted client ended with {again.returncode}")
            facts["left_by_kill"] = resumed.get("left", {}).get("count")
            facts["left_at_end"] = resumed.get("done", {}).get("left")
            every = keys(link, url)
    finally:
        shutil.rmtree(outbox, ignore_errors=True)
    crash_keys = {k: v for k, v in every.items() if k not in first_keys}
    for name, seen, expected in (("first", first_keys, FIRST), ("crash", crash_keys, CRASH)):
        bodies = [v["body"] for v in seen.values()]
        facts[name + "_arrived"] = len(seen)
        facts[name + "_lost"] = expected - len(set(bodies))
        facts[name + "_created_twice"] = len(bodies) - len(set(bodies))
        facts[name + "_deliveries"] = sum(v["count"] for v in seen.values())
    arrival = [int(v["body"].split()[1]) for v in first_keys.values()]
    facts["first_in_order"] = arrival == sorted(arrival)
    return facts


def keys(link, url):
    """The server's record: {key: {"count", "body"}} in the order keys first arrived."""
    answer = link.exec_in(link.near, "curl", "-s", "--max-time", "30", url + "/keys").stdout
    return json.loads(answer or "{}")


def table(f):
    """SCENARIO.md's lines for scenario B."""
    went = " -> ".join(f["network"]) or "nothing"
    return [
        f"## B: offline and back, and a crash during the flush", "",
        f"{FIRST} freezable POSTs, one every {PACE} s, the link down for {DOWN_FOR:.0f} s after the "
        f"{DOWN_AFTER}rd; then {CRASH} more sent while down to a server that answers after "
        f"{CRASH_DELAY_MS / 1000:.0f} s, the client killed (SIGKILL) {KILL_AFTER} s after the link "
        "returned, and started again on the same outbox. The server counts requests by Idempotency-Key.", "",
        "| | requests | arrived | lost | created twice | deliveries | notes |", "|---|---:|---:|---:|---:|---:|---|",
        f"| offline and back | {FIRST} | {f['first_arrived']} | {f['first_lost']} | {f['first_created_twice']} | "
        f"{f['first_deliveries']} | network seen: {went}; first answer {f['after_outage']} s after the link went down; "
        f"first arrivals in the order sent: {'yes' if f['first_in_order'] else 'no, neighbours swapped'} (the queue sends "
        "two at a time on cellular) |",
        f"| killed during the flush | {CRASH} | {f['crash_arrived']} | {f['crash_lost']} | {f['crash_created_twice']} | "
        f"{f['crash_deliveries']} | {f['left_by_kill']} left in the outbox by the kill, {f['left_at_end']} after the "
        "restart; a key delivered twice was in flight when the process died (the server answers it as a replay) |",
        ""] + (["Problems: " + "; ".join(f["problems"]), ""] if f["problems"] else [])
