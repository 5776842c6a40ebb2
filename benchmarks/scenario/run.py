#!/usr/bin/env python3
"""`make scenario`: the seed's own story on a shaped link (link.py), measured.

Scenario A (uploads and a view's thumbnails): ten 500 KiB uploads start; a second later a view
asks for twenty 10 KiB thumbnails (30 s each at most, a view's patience). Each setup of
clients.py runs RUNS times, every run on a link of its own (its own namespaces and shaping, all
at once: the runs do not share a bottleneck), on the `3g` profile. Writes
benchmarks/SCENARIO.md (thumbnail completion from the view's start: median, p95, max; thumbnails
that failed; the uploads' last completion) and benchmarks/scenario.png (one bar per request over
time, per setup, from the first run).

  run.py [--quick]     --quick: two runs, and what a machine without aiohttp has

A also runs once per setup on `wifi` (width 6), the same way; SCENARIO_PROFILES (e.g.
"edge,3g,wifi") chooses the profiles, the first with RUNS runs and its picture, the others once.

Scenario B (offline_run.py: freezable POSTs through 20 s of link down, then a client killed
during the flush and started again; lost and doubly created requests as the server counts them
by key) and scenario C (flaky_run.py: 1,000 cached GETs and 200 keyed POSTs with retries on a
link with loss and jitter that goes down for 3 s every 15 s; how each ended, bodies checked,
keys counted; its timeline in benchmarks/scenario-c.png, its requests in
benchmarks/out/scenario-c.json) run beside A, each on a link of its own.
"""
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from link import Link, leftover_namespaces, missing  # noqa: E402
import flaky_run  # noqa: E402
import plotting  # noqa: E402
import offline_run  # noqa: E402

PROFILES = os.environ.get("SCENARIO_PROFILES", "3g,wifi").split(",")
PROFILE = PROFILES[0]
UPLOADS, UPLOAD_BYTES, THUMBS, THUMB_BYTES, DELAY, THUMB_TIMEOUT = 10, 500 * 1024, 20, 10 * 1024, 1.0, 30.0
RUNS = 2 if "--quick" in sys.argv else 3
RUN_LIMIT = 400  # seconds: a setup's run that takes longer is a hang, reported as such
VENV_PYTHON = os.path.join(ROOT, ".build", "pybench-venv", "bin", "python")
SETUPS = ["courier", "courier-unlimited", "curl", "aiohttp"]
TITLES = {"courier": "Courier (defaults: width from the network, view at high priority)",
          "courier-unlimited": "Courier, unlimited width", "curl": "curl -Z (parallel 50)",
          "aiohttp": "aiohttp (connector limit 100)"}


def python_for(setup):
    if setup == "aiohttp":
        if os.path.exists(VENV_PYTHON) and subprocess.run([VENV_PYTHON, "-c", "import aiohttp"]).returncode == 0:
            return VENV_PYTHON
        return None
    return VENV_PYTHON if os.path.exists(VENV_PYTHON) else sys.executable


def one_run(profile, setup, index):
    """One run of `setup` on a link of its own shaped as `profile`; its requests as dicts."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "cbindings", "python"),
               COURIER_LIBRARY=os.path.join(ROOT, ".build", "release", "libCourierC.so"))
    tag = f"{os.getpid() % 1000}{PROFILES.index(profile)}{SETUPS.index(setup)}{index}"
    site = thumbnail_site()
    try:
        return run_on_link(profile, setup, tag, site, env)
    finally:
        shutil.rmtree(site, ignore_errors=True)


def thumbnail_site():
    """A directory for nginx: html/thumbs/N.bin, THUMB_BYTES each."""
    site = tempfile.mkdtemp(prefix="courier-scenario-nginx-")
    os.makedirs(os.path.join(site, "html", "thumbs"))
    for n in range(THUMBS):
        with open(os.path.join(site, "html", "thumbs", f"{n}.bin"), "wb") as f:
            f.write(os.urandom(THUMB_BYTES))
    return site


def run_on_link(profile, setup, tag, site, env):
    with Link(profile, tag=tag) as link:
        # Uploads go to the scripted server (it reads and drops them), thumbnails come from nginx.
        url = link.serve([sys.executable, os.path.join(ROOT, "Tests", "Servers", "stream_server.py")])
        thumbs = link.serve_nginx(site)
        argv = [python_for(setup), os.path.join(HERE, "clients.py"), setup, url, thumbs, str(UPLOADS),
                str(UPLOAD_BYTES), str(THUMBS), str(THUMB_BYTES), str(DELAY), str(THUMB_TIMEOUT)]
        process = link.client(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = process.communicate(timeout=RUN_LIMIT)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            return [], f"did not end within {RUN_LIMIT} s"
        requests = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        return requests, (err.strip()[-300:] if process.returncode else "")


def began(run, kind):
    """When the first request of `kind` started in `run` (a client's clock starts before it has
    loaded its library: what that takes is not the scenario's)."""
    return min((r["start"] for r in run if r["kind"] == kind), default=0)


def summarise(runs):
    thumbs = [r["end"] - began(run, "thumb") for run in runs for r in run if r["kind"] == "thumb" and r["ok"]]
    failed = sum(1 for run in runs for r in run if r["kind"] == "thumb" and not r["ok"])
    uploads_ok = sum(1 for run in runs for r in run if r["kind"] == "upload" and r["ok"])
    last_upload = [max((r["end"] for r in run if r["kind"] == "upload"), default=0) - began(run, "upload")
                   for run in runs]
    thumbs.sort()
    errors = {}
    for run in runs:
        for r in run:
            if not r["ok"]:
                key = f"{r['kind']}: {r['error'] or 'failed'}"
                errors[key] = errors.get(key, 0) + 1

    def pct(p):
        return thumbs[min(len(thumbs) - 1, int(round(p * (len(thumbs) - 1))))] if thumbs else float("nan")
    return {"median": statistics.median(thumbs) if thumbs else float("nan"), "p95": pct(0.95),
            "max": thumbs[-1] if thumbs else float("nan"), "failed": failed, "thumbs": THUMBS * len(runs),
            "uploads_ok": uploads_ok, "uploads": UPLOADS * len(runs), "uploads_done": statistics.median(last_upload),
            "errors": errors}


def plot(first_runs, path):
    """One panel per setup: a bar per request from its start to its end (uploads blue,
    thumbnails orange, failed ones red)."""
    def script(work):
        setups = [s for s in SETUPS if s in first_runs]
        horizon = max((r["end"] for run in first_runs.values() for r in run), default=1) * 1.02
        lines = [f'set terminal pngcairo size 1400,{300 * len(setups)} font ",11"', f'set output "{path}"',
                 "set linetype 1 lc rgb '#1f77b4'", "set linetype 2 lc rgb '#ff7f0e'", "set linetype 3 lc rgb '#d62728'",
                 f"set multiplot layout {len(setups)},1", f"set xrange [0:{horizon:.1f}]", "set yrange [-1:31]",
                 "set ytics ('uploads (blue)' 4.5, 'thumbnails (orange; red: failed)' 20.5)", "set grid xtics", "unset key",
                 "set xlabel 'seconds'"]
        for setup in setups:
            rows = sorted(first_runs[setup], key=lambda r: (r["kind"] != "upload", r["index"]))
            data = os.path.join(work, setup + ".dat")
            with open(data, "w") as f:
                for row, r in enumerate(rows):
                    colour = (1 if r["kind"] == "upload" else 2) if r["ok"] else 3
                    f.write(f"{r['start']} {r['end']} {row + (1 if r['kind'] == 'thumb' else 0)} {colour}\n")
            lines += [f'set title "{TITLES[setup]}: each request from start to end; the view opens at {DELAY:.0f} s"',
                      f"plot '{data}' using 1:3:($2-$1):(0):4 with vectors nohead lw 6 lc variable"]
        return lines + ["unset multiplot"]
    return plotting.draw(script)

def main():
    reason = missing()
    if reason:
        print(f"scenario: skipped: {reason}")
        return 0
    subprocess.run(["swift", "build", "-c", "release", "--product", "CourierC"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    setups = [s for s in SETUPS if python_for(s) is not None and (s != "curl" or shutil.which("curl"))]
    left_out = [s for s in SETUPS if s not in setups]
    results, problems = {p: {} for p in PROFILES}, []
    started = time.monotonic()
    runs = [(p, s, i) for p in PROFILES for s in setups for i in range(RUNS if p == PROFILE else 1)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(runs) + 2) as pool:
        offline = pool.submit(offline_run.run, "3g", f"{os.getpid() % 10000}99")
        flaky = pool.submit(flaky_run.run, "flaky", f"{os.getpid() % 10000}98")
        futures = {run: pool.submit(one_run, *run) for run in runs}
        for (profile, setup, index), future in futures.items():
            requests, problem = future.result()
            results[profile].setdefault(setup, []).append(requests)
            if problem:
                problems.append(f"{setup} on {profile} run {index + 1}: {problem}")
        try:
            b = offline.result()
        except Exception as error:  # (reported in SCENARIO.md; the run still writes A)
            b = None
            problems.append(f"scenario B: {error}")
        try:
            c = flaky.result()
        except Exception as error:  # (reported in SCENARIO.md; the run still writes A and B)
            c = None
            problems.append(f"scenario C: {error}")
    took = time.monotonic() - started
    if leftover_namespaces():
        problems.append(f"namespaces left behind: {leftover_namespaces()}")
    rows = {p: {s: summarise(results[p][s]) for s in setups} for p in PROFILES}
    os.makedirs(os.path.join(ROOT, "benchmarks", "out"), exist_ok=True)
    with open(os.path.join(ROOT, "benchmarks", "out", "scenario-a.json"), "w") as f:
        json.dump(results, f)
    plotted = plot({s: results[PROFILE][s][0] for s in setups}, os.path.join(ROOT, "benchmarks", "scenario.png"))
    c_picture = None
    if c:
        with open(os.path.join(ROOT, "benchmarks", "out", "scenario-c.json"), "w") as f:
            json.dump(c["records"], f)
        if flaky_run.plot(c, os.path.join(ROOT, "benchmarks", "scenario-c.png")):
            c_picture = "scenario-c.png"
    write(rows, left_out, problems, plotted, took, b, c, c_picture)
    for p, s in ((p, s) for p in PROFILES for s in setups):
        r = rows[p][s]
        print(f"  {s} on {p}: thumbnails median {r['median']:.1f} s, p95 {r['p95']:.1f} s, failed {r['failed']}; "
              f"uploads {r['uploads_ok']}/{r['uploads']} done by {r['uploads_done']:.0f} s")
    if b:
        print(f"  B: lost {b['first_lost']} + {b['crash_lost']}, created twice {b['first_created_twice']} + "
              f"{b['crash_created_twice']}")
    if c:
        print(f"  C: GETs {c['get_outcomes']}; POSTs {c['post_outcomes']}; never ended {c['hung']}, corrupt {c['corrupt']}")
    return 1 if problems or (b and b["problems"]) or (c and flaky_run.problems(c)) else 0


def write(rows, left_out, problems, plotted, took, b, c, c_picture):
    lines = ["# Scenario: the seed's story on a shaped link", "",
             "Written by `make scenario` (benchmarks/scenario/run.py). Two network namespaces per run joined "
             "by a veth; the rate by htb on each end, loss by nftables, the round trip by a delay line "
             "(benchmarks/scenario/link.py). On a cellular profile the client's end is named wwan0 (Courier's "
             "classifier says cellular: its queue is 2 wide), on wifi wlan0 (6 wide).", "",
             f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; every run on its own link, all at "
             f"once ({took:.0f} s)", ""]
    for profile in PROFILES:
        lines += table_a(profile, rows[profile], RUNS if profile == PROFILE else 1)
        if plotted and profile == PROFILE:
            lines += ["![each request from start to end, per setup (first run)](scenario.png)", ""]
    if b:
        lines += offline_run.table(b)
    if c:
        lines += flaky_run.table(c, c_picture)
    if left_out:
        lines += ["Left out: " + ", ".join(f"{s} (not installed: `make bench-deps`)" for s in left_out), ""]
    if problems:
        lines += ["Problems: " + "; ".join(problems), ""]
    with open(os.path.join(ROOT, "benchmarks", "SCENARIO.md"), "w") as f:
        f.write("\n".join(lines))


def table_a(profile, rows, runs):
    """SCENARIO.md's lines for scenario A on `profile`."""
    p = Link(profile).profile
    lines = [f"## A on `{profile}`: {UPLOADS} uploads of {UPLOAD_BYTES // 1024} KiB, then {THUMBS} thumbnails of "
             f"{THUMB_BYTES // 1024} KiB a second later", "",
             f"{p['down']} kbit/s down, {p['up']} kbit/s up, {p['rtt']} ms round trip, {p['loss']} % loss; "
             f"{runs} run{'s' if runs > 1 else ''} per setup. Thumbnail times from the view's start (each has "
             f"{THUMB_TIMEOUT:.0f} s); uploads: how many completed, and when the last did (median of the runs).", "",
             "| setup | thumbnail median s | p95 s | max s | thumbnails failed | uploads done | last upload s | failures |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for setup, r in rows.items():
        failures = ", ".join(f"{count}x {what}" for what, count in sorted(r["errors"].items())) or "none"
        lines.append(f"| {TITLES[setup]} | {r['median']:.1f} | {r['p95']:.1f} | {r['max']:.1f} | "
                     f"{r['failed']}/{r['thumbs']} | {r['uploads_ok']}/{r['uploads']} | {r['uploads_done']:.0f} | {failures} |")
    return lines + [""]

if __name__ == "__main__":
    sys.exit(main())
