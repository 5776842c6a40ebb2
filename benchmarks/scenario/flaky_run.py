"""Scenario C for run.py: a flaky link, 5 % loss, 300 ms jitter, down for 3 s every 15 s.

GETS cached GETs (ITEMS items, each fresh for 10 s; four in five usable stale on error for 10
minutes, the fifth never stale) and POSTS keyed POSTs with retries (flaky.py), started at a
steady pace over SPREAD seconds, each with a total timeout of TOTAL seconds, while the link flaps (`ip link set down`, then up). The
server (flaky_server.py) counts full answers, 304s and POSTs by Idempotency-Key. Checked: every
request ended within its timeout (no hang), every body is its item's bytes (no corruption), no
key created twice, no retry past the count; reported: how each request ended.
"""
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from link import PROFILES, Link  # noqa: E402
import plotting  # noqa: E402

GETS, POSTS, ITEMS, SPREAD, TOTAL = 1000, 200, 100, 120.0, 60.0
FLAP_EVERY, FLAP_FOR = 15.0, 3.0
MAX_RETRIES = 5  # flaky.py's RETRY.count
LIMIT = SPREAD + TOTAL + 60  # seconds for the client: longer is a hang
#: How a GET's response phase reads in the table.
PHASES = {"fresh": "from the origin", "cached": "fresh from the cache", "not_modified": "revalidated (304)",
          "stale_on_error": "stale on error", "generated": "the cache's 504 (the item forbids stale)"}


def run(profile="flaky", tag=None, gets=GETS, posts=POSTS, spread=SPREAD):
    """Returns the scenario's facts as a dict (see `table`)."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "cbindings", "python") + os.pathsep + HERE)
    env.setdefault("COURIER_LIBRARY", os.path.join(ROOT, ".build", "release", "libCourierC.so"))
    facts = {"gets": gets, "posts": posts, "spread": spread, "network": [], "flaps": 0, "outages": [], "problems": []}
    with Link(profile, tag=tag) as link:
        url = link.serve([sys.executable, os.path.join(HERE, "flaky_server.py")])
        client = link.client([sys.executable, os.path.join(HERE, "flaky.py"), url, str(gets), str(posts), str(ITEMS),
                              str(spread), str(TOTAL)], env=env, stdout=subprocess.PIPE, text=True)
        ended = threading.Event()
        facts["began"] = time.monotonic()
        flapper = threading.Thread(target=flap, args=(link, ended, facts), daemon=True)
        flapper.start()
        watchdog = threading.Timer(LIMIT, client.kill)
        watchdog.start()
        records = []
        for line in client.stdout:
            if line.startswith("{"):
                event = json.loads(line)
                if event.get("event") == "network":
                    facts["network"].append(event["kind"])
                else:
                    records.append(event)
        watchdog.cancel()
        ended.set()
        flapper.join()
        if client.wait() != 0:
            facts["problems"].append(f"the client ended with {client.returncode} (killed after {LIMIT:.0f} s: a hang)"
                                     if client.returncode < 0 else f"the client ended with {client.returncode}")
        link.set_up(True)
        served = fetch_json(link, url + "/counts")
        keys = fetch_json(link, url + "/keys")
    facts.update(summarise(records, served, keys, gets, posts))
    facts["records"] = records
    return facts


def flap(link, ended, facts):
    """The link down for FLAP_FOR seconds every FLAP_EVERY, until the client ends."""
    while not ended.wait(FLAP_EVERY - FLAP_FOR):
        link.set_up(False)
        went = time.monotonic() - facts["began"]
        facts["flaps"] += 1
        ended.wait(FLAP_FOR)
        link.set_up(True)
        facts["outages"].append((round(went, 2), round(time.monotonic() - facts["began"], 2)))


def fetch_json(link, url):
    answer = link.exec_in(link.near, "curl", "-s", "--retry", "3", "--max-time", "30", url).stdout
    return json.loads(answer or "{}")


def summarise(records, served, keys, gets, posts):
    f = {"ended": len(records), "hung": gets + posts - len(records)}
    by = {"get": [r for r in records if r["kind"] == "get"], "post": [r for r in records if r["kind"] == "post"]}
    f["slowest"] = max((r["end"] - r["start"] for r in records), default=0)
    f["over_timeout"] = sum(1 for r in records if r["end"] - r["start"] > TOTAL + 1)
    f["corrupt"] = sum(1 for r in by["get"] if r["body_ok"] is False)
    f["stale_not_allowed"] = sum(1 for r in by["get"] if r["phase"] == "stale_on_error" and not r["stale_allowed"])
    for kind in ("get", "post"):
        outcomes = {}
        for r in by[kind]:
            if not r["ok"] and r["phase"] != "generated":
                what = f"failed: {r['error']}"
            else:
                what = f"answered {r['status']}" if kind == "post" else PHASES.get(r["phase"], r["phase"])
            outcomes[what] = outcomes.get(what, 0) + 1
        f[kind + "_outcomes"] = outcomes
    f["retries"] = sum(r["retries"] for r in by["post"])
    f["most_retries"] = max((r["retries"] for r in by["post"]), default=0)
    f["server_items"], f["server_not_modified"] = served.get("items"), served.get("not_modified")
    f["keys_arrived"] = len(keys)
    f["deliveries"] = sum(v["count"] for v in keys.values())
    bodies = [v["body"] for v in keys.values()]
    f["created_twice"] = len(bodies) - len(set(bodies))
    answered = {f"c-{r['i']}" for r in by["post"] if r["ok"]}
    f["answered_not_arrived"] = len(answered - set(keys))
    return f


def plot(f, path):
    """One bar per request from its start to its end, by how it ended (GETs below, POSTs above),
    the link's outages shaded. False without gnuplot."""
    colours = {"fresh": 1, "not_modified": 1, "cached": 2, "stale_on_error": 3, "generated": 4, "failed": 5}

    def script(work):
        data = os.path.join(work, "c.dat")
        with open(data, "w") as out:
            for r in f["records"]:
                what = "failed" if not r["ok"] and r["phase"] != "generated" else ("fresh" if r["kind"] == "post" else r["phase"])
                row = r["i"] if r["kind"] == "get" else f["gets"] + 50 + r["i"] * 2
                out.write(f"{r['start']} {max(r['end'] - r['start'], 0.15)} {row} {colours.get(what, 5)}\n")
        horizon = max((r["end"] for r in f["records"]), default=1) * 1.02
        top = f["gets"] + 50 + f["posts"] * 2
        lines = ['set terminal pngcairo size 1400,700 font ",11"', f'set output "{path}"',
                 "set linetype 1 lc rgb '#2ca02c'", "set linetype 2 lc rgb '#1f77b4'", "set linetype 3 lc rgb '#ff7f0e'",
                 "set linetype 4 lc rgb '#9467bd'", "set linetype 5 lc rgb '#d62728'",
                 f"set xrange [0:{horizon:.1f}]", f"set yrange [0:{top}]", "set xlabel 'seconds'",
                 f"set ytics ('GETs' {f['gets'] / 2:.0f}, 'POSTs' {f['gets'] + 50 + f['posts']:.0f})", "unset key",
                 'set title "Scenario C: each request from start to end; grey: the link is down\\nGreen: from the origin '
                 '(POSTs: answered), blue: fresh from the cache, orange: stale on error, purple: the cache\'s 504, red: failed"']
        for n, (start, end) in enumerate(f["outages"], 1):
            lines.append(f"set object {n} rect from {start},0 to {end},{top} behind fc rgb '#dddddd' fs solid noborder")
        return lines + [f"plot '{data}' using 1:3:2:(0):4 with vectors nohead lw 2 lc variable"]
    return plotting.draw(script)

def problems(f):
    """What breaks the scenario's promises."""
    found = list(f["problems"])
    if f["hung"]:
        found.append(f"{f['hung']} requests never ended")
    if f["over_timeout"]:
        found.append(f"{f['over_timeout']} requests ran past their {TOTAL:.0f} s timeout")
    if f["corrupt"]:
        found.append(f"{f['corrupt']} bodies were not their item's bytes")
    if f["stale_not_allowed"]:
        found.append(f"{f['stale_not_allowed']} items served stale without stale-if-error")
    if f["created_twice"] or f["answered_not_arrived"]:
        found.append(f"POSTs: {f['created_twice']} created twice, {f['answered_not_arrived']} answered but never arrived")
    if f["most_retries"] > MAX_RETRIES:
        found.append(f"a POST retried {f['most_retries']} times, past its {MAX_RETRIES}")
    return found


def table(f, picture=None):
    """SCENARIO.md's lines for scenario C (`picture`: its timeline's file name, if drawn)."""
    p = PROFILES["flaky"]
    def outcomes(kind):
        return ", ".join(f"{count} {what}" for what, count in sorted(f[kind + "_outcomes"].items(), key=lambda x: -x[1]))
    trouble = problems(f)
    return [
        "## C: a flaky link", "",
        f"{f['gets']} GETs of {ITEMS} items (each fresh for 10 s; four in five with `stale-if-error=600`, every fifth "
        f"never to be served stale) and {f['posts']} POSTs with an Idempotency-Key and up to {MAX_RETRIES} retries, "
        f"started at a steady pace over {f['spread']:.0f} s, each with a {TOTAL:.0f} s total timeout (a GET waits at "
        f"most 2 s in the queue), through one Courier engine with a memory cache, on a link with "
        f"{p['down'] / 1000:g} Mbit/s down, {p['up'] / 1000:g} up, {p['rtt']} ms round trip plus up to {p['jitter']} ms "
        f"of jitter each way and {p['loss']} % loss each way, down for {FLAP_FOR:.0f} s every {FLAP_EVERY:.0f} s "
        f"({f['flaps']} times in this run; the client's end is named wlan0: width 6). Every GET that got a body "
        "compared it with the item's bytes.", "",
        "| | count |", "|---|---|",
        f"| GETs, by how they ended | {outcomes('get')} |",
        f"| POSTs, by how they ended | {outcomes('post')} |",
        f"| requests that ended / never ended | {f['ended']} / {f['hung']} |",
        f"| slowest request | {f['slowest']:.1f} s (timeout {TOTAL:.0f} s; past it: {f['over_timeout']}) |",
        f"| bodies not their item's bytes | {f['corrupt']} |",
        f"| served stale where the item forbids it | {f['stale_not_allowed']} |",
        f"| server: full answers / 304s | {f['server_items']} / {f['server_not_modified']} |",
        f"| POST retries (most for one) | {f['retries']} ({f['most_retries']}, at most {MAX_RETRIES}) |",
        f"| POST keys arrived / deliveries / created twice | {f['keys_arrived']} / {f['deliveries']} / "
        f"{f['created_twice']} |",
        f"| network changes seen by the client | {len(f['network'])} |", ""] + \
        ([f"![scenario C: each request over time by how it ended, the outages shaded]({picture})", ""] if picture else []) + \
        (["Problems: " + "; ".join(trouble), ""] if trouble else [])


if __name__ == "__main__":
    # A quick look by hand: flaky_run.py [GETS POSTS SPREAD]
    numbers = [int(a) for a in sys.argv[1:4]] if len(sys.argv) > 3 else [GETS, POSTS, int(SPREAD)]
    result = run(gets=numbers[0], posts=numbers[1], spread=float(numbers[2]))
    print(json.dumps({k: v for k, v in result.items() if k != "records"}, indent=1))
    with open("/tmp/scenario-c-records.json", "w") as out:
        json.dump(result["records"], out)
    print("\n".join(table(result, "scenario-c.png" if plot(result, "/tmp/scenario-c.png") else None)))
