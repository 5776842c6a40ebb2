#!/usr/bin/env python3
"""`make soak`: a long run that shows Courier's memory and descriptors stay flat.

10 million keep-alive requests (32 connections) and 1 million requests on a new connection each
(8 in flight) against a local nginx, through courier-bench (the Swift API). Every second the
bench process's resident memory and open descriptors are sampled from /proc. Writes
benchmarks/soak.csv, benchmarks/soak.png (gnuplot) and benchmarks/SOAK.md, whose verdict is
"flat" when, after a warm-up of 10 seconds, RSS never grows by more than 2 MiB over its
post-warm-up level and the descriptor count never exceeds the connections in use plus the
loop's own.

SOAK_SCALE=0.1 runs a tenth of the requests (a smoke run).
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BENCH = os.path.join(ROOT, ".build", "release", "courier-bench")
SCALE = float(os.environ.get("SOAK_SCALE", "1"))
WARM_UP_SECONDS = 10


def sample(pid):
    """(RSS in KiB, open descriptors) of a running process, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        return rss, fds
    except (FileNotFoundError, ProcessLookupError, StopIteration):
        return None


def soak(label, argv, allowed_fds):
    print(f"soak: {label}: {' '.join(argv[1:])}", flush=True)
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    started = time.monotonic()
    samples = []
    while process.poll() is None:
        point = sample(process.pid)
        if point:
            samples.append((time.monotonic() - started, *point))
        time.sleep(1)
    output = process.stdout.read().strip().splitlines()
    if process.returncode != 0:
        sys.exit(f"soak: {label} failed ({process.returncode}): {output[-1:]}")
    after = [s for s in samples if s[0] >= WARM_UP_SECONDS] or samples[-1:]
    base_rss = after[0][1]
    growth = max(s[1] for s in after) - base_rss
    max_fds = max(s[2] for s in samples)
    flat = growth <= 2048 and max_fds <= allowed_fds
    print(f"soak: {label}: {len(samples)} s, RSS {base_rss} KiB after warm-up, growth {growth} KiB, "
          f"descriptors at most {max_fds} ({'flat' if flat else 'NOT flat'})", flush=True)
    return {"label": label, "samples": samples, "seconds": samples[-1][0] if samples else 0, "base_rss": base_rss,
            "growth": growth, "max_fds": max_fds, "min_fds": min(s[2] for s in samples), "flat": flat,
            "result": output[-1] if output else ""}


def main():
    work = tempfile.mkdtemp(prefix="courier-soak-")
    os.makedirs(os.path.join(work, "html"))
    with open(os.path.join(work, "html", "small"), "wb") as f:
        f.write(b"x" * 100)
    env = dict(os.environ, NGINX_WORKERS="1")
    port = subprocess.run([os.path.join(HERE, "nginx.sh"), "start", work], capture_output=True, text=True, env=env,
                          check=True).stdout.strip()
    url = f"http://127.0.0.1:{port}/small"
    runs = []
    try:
        # Descriptors allowed: the connections, the loop's own (epoll, the wakeup, the timer) and
        # stdio, with a margin of a few for libuv's internals.
        runs.append(soak("keep-alive", [BENCH, url, str(int(10_000_000 * SCALE)), "32"], allowed_fds=32 + 16))
        runs.append(soak("new connection per request", [BENCH, url, str(int(1_000_000 * SCALE)), "8", "--close"],
                         allowed_fds=8 + 16))
    finally:
        subprocess.run([os.path.join(HERE, "nginx.sh"), "stop", work], capture_output=True)
    write(runs)
    return 0 if all(r["flat"] for r in runs) else 1


def write(runs):
    with open(os.path.join(HERE, "soak.csv"), "w") as f:
        f.write("run,seconds,rss_kib,descriptors\n")
        for r in runs:
            for t, rss, fds in r["samples"]:
                f.write(f"{r['label']},{t:.1f},{rss},{fds}\n")
    lines = ["# Soak", "",
             f"Written by `make soak` (benchmarks/soak.py){' at SOAK_SCALE=' + str(SCALE) if SCALE != 1 else ''}: "
             "courier-bench (Swift API) against a local nginx, RSS and open descriptors of the client "
             "sampled every second. Flat: after 10 s of warm-up RSS grows by at most 2 MiB, and "
             "descriptors never exceed the connections plus the loop's own.", "",
             f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", "",
             "| run | seconds | RSS after warm-up, KiB | RSS growth after, KiB | descriptors (min–max) | flat |",
             "|---|---:|---:|---:|---:|:---:|"]
    for r in runs:
        lines.append(f"| {r['label']} | {r['seconds']:.0f} | {r['base_rss']:,} | {r['growth']:,} | "
                     f"{r['min_fds']}–{r['max_fds']} | {'yes' if r['flat'] else 'no'} |")
    lines += ["", "![RSS and descriptors over time](soak.png)", ""]
    with open(os.path.join(HERE, "SOAK.md"), "w") as f:
        f.write("\n".join(lines))
    plot(runs)


def plot(runs):
    if subprocess.run(["sh", "-c", "command -v gnuplot"], capture_output=True).returncode != 0:
        print("soak: gnuplot not found: no plot")
        return
    data = []
    for index, r in enumerate(runs):
        path = os.path.join(HERE, "out", f"soak{index}.dat")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            for t, rss, fds in r["samples"]:
                f.write(f"{t:.1f} {rss / 1024:.2f} {fds}\n")
        data.append((path, r["label"]))
    rss_plots = ", ".join(f'"{p}" using 1:2 with lines title "{label}"' for p, label in data)
    fd_plots = ", ".join(f'"{p}" using 1:3 with lines title "{label}"' for p, label in data)
    script = f"""
set terminal pngcairo size 1200,500 font ",11"
set output "{os.path.join(HERE, 'soak.png')}"
set multiplot layout 1,2 title "Courier soak: client RSS and open descriptors, sampled every second"
set xlabel "seconds"
set grid
set ylabel "RSS (MiB)"
set yrange [0:*]
plot {rss_plots}
set ylabel "open descriptors"
plot {fd_plots}
unset multiplot
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=False)


if __name__ == "__main__":
    sys.exit(main())
