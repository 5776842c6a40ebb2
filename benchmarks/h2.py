#!/usr/bin/env python3
"""HTTP/2 benchmarks (part of `make bench`): Courier beside h2load and libcurl over h2 with TLS,
against a private nginx with `http2` (one worker pinned to CPU 0, clients on CPU 1, as run.py).

  S6  https /small, 100 streams in flight on one connection, 100,000 requests: client CPU per
      request (Courier's Swift API and C ABI, libcurl multi with PIPEWAIT, h2load -c1 -m100)
  S7  one 1 GiB body over h2 with TLS to /dev/null: GB/s, CPU s per GiB, peak RSS
  S8  32 callers x 1,000 requests to one origin over h2: connections opened (nginx allows 128
      streams per connection, so one suffices)

Writes benchmarks/H2.md. BENCH_QUICK=1 runs a tenth of the requests.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the shared measuring helpers: run_measured, median, pinning)

HERE, ROOT, QUICK = run.HERE, run.ROOT, run.QUICK
RUNS = 3


def h2load(url, n):
    """h2load's own CPU per request (rusage of the process), one connection, 100 streams."""
    text, wall, cpu, rss, _ = run.run_measured(["h2load", "-c1", "-m100", "-n", str(n), url])
    if f"{n} succeeded" not in text:
        raise RuntimeError("h2load: " + text[-400:])
    return {"requests": n, "wall": wall, "cpu": cpu, "rss_kib": rss, "bytes": 0}


def driver(argv, url, n, c, extra):
    text, wall, cpu, rss, _ = run.run_measured(argv + [url, str(n), str(c)] + extra)
    line = json.loads(text.strip().splitlines()[-1])
    if line["ok"] != line["requests"]:
        raise RuntimeError(f"{argv[0]}: {line}")
    return {"requests": n, "wall": line["wall_s"], "cpu": cpu, "rss_kib": rss, "bytes": line["bytes"],
            "connections": line.get("connections")}


def main():
    work = tempfile.mkdtemp(prefix="courier-h2-")
    os.makedirs(os.path.join(work, "html"))
    with open(os.path.join(work, "html", "small"), "wb") as f:
        f.write(b"x" * 100)
    with open(os.path.join(work, "html", "gig"), "wb") as f:
        f.truncate(1 << 30)
    certs = os.path.join(work, "certs")
    subprocess.run(["sh", os.path.join(ROOT, "Tests", "Servers", "make_certs.sh"), certs], check=True, capture_output=True)
    cacert = os.path.join(certs, "ca.pem")
    port = run.free_port()
    server = (f"server {{ listen 127.0.0.1:{port} ssl http2 backlog=4096; root {work}/html; "
              f"ssl_certificate {certs}/server-chain.pem; ssl_certificate_key {certs}/server.key; "
              "ssl_protocols TLSv1.2 TLSv1.3; http2_max_concurrent_streams 128; keepalive_requests 10000000; }")
    env = dict(os.environ, NGINX_WORKERS="1", NGINX_EXTRA_SERVER=server)
    if run.PIN:
        env["NGINX_CPU"] = "0"
    subprocess.run([os.path.join(HERE, "nginx.sh"), "start", work], capture_output=True, text=True, env=env, check=True)
    base = f"https://localhost:{port}"
    scale = 0.1 if QUICK else 1.0
    n6, n8 = int(100_000 * scale), int(32_000 * scale)
    swift = [run.COURIER_BENCH]
    capi = [run.COURIER_BENCH, "--api", "c"]
    curl = [run.CURL_BENCH]
    courier_flags = ["--cacert", cacert, "--http", "2"]
    curl_flags = ["--cacert", cacert, "--http2"]
    rows = {"S6": {}, "S7": {}, "S8": {}}
    try:
        # One unmeasured 1 GiB transfer first: the first one after the file is made is slower
        # (nginx and the page cache warm up), and it fell on whichever client ran first.
        driver(curl, base + "/gig", 1, 1, curl_flags + ["--output", "/dev/null"])
        for rep in range(RUNS):
            for name, job in [
                ("Courier (Swift API)", lambda: driver(swift, base + "/small", n6, 100, courier_flags)),
                ("Courier (C ABI)", lambda: driver(capi, base + "/small", n6, 100, courier_flags)),
                ("libcurl (multi)", lambda: driver(curl, base + "/small", n6, 100, curl_flags)),
                ("h2load", lambda: h2load(base + "/small", n6)),
            ]:
                if name == "h2load" and shutil.which("h2load") is None:
                    continue
                rows["S6"].setdefault(name, []).append(job())
                r = rows["S6"][name][-1]
                run.log(f"  rep {rep + 1} S6 {name}: {r['requests'] / r['wall']:.0f} req/s, {r['cpu'] / r['requests'] * 1e6:.1f} µs CPU/req")
            for name, job in [
                ("Courier (Swift API)", lambda: driver(swift, base + "/gig", 1, 1, courier_flags + ["--output", "/dev/null"])),
                ("Courier (C ABI)", lambda: driver(capi, base + "/gig", 1, 1, courier_flags + ["--output", "/dev/null"])),
                ("libcurl (multi)", lambda: driver(curl, base + "/gig", 1, 1, curl_flags + ["--output", "/dev/null"])),
            ]:
                rows["S7"].setdefault(name, []).append(job())
                r = rows["S7"][name][-1]
                run.log(f"  rep {rep + 1} S7 {name}: {(1 << 30) / r['wall'] / 1e9:.2f} GB/s, {r['cpu']:.2f} CPU s, {r['rss_kib'] / 1024:.1f} MiB")
            rows["S8"].setdefault("Courier (Swift API)", []).append(driver(swift, base + "/small", n8, 32, courier_flags))
            run.log(f"  rep {rep + 1} S8: {rows['S8']['Courier (Swift API)'][-1]['connections']} connection(s)")
    finally:
        subprocess.run([os.path.join(HERE, "nginx.sh"), "stop", work], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    write(rows, n6, n8)


def med(samples, key):
    return run.median([s[key] for s in samples])


def write(rows, n6, n8):
    lines = ["# HTTP/2 benchmark results", "",
             "Written by `make bench` (benchmarks/h2.py): nginx with `http2` over TLS (one worker on CPU 0, "
             "clients on CPU 1); medians of 3 interleaved runs. CPU is the client process's user + system time.", "",
             f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
             f"- {subprocess.run(['nginx', '-v'], capture_output=True, text=True).stderr.strip()}; "
             f"h2load: {subprocess.run(['h2load', '--version'], capture_output=True, text=True).stdout.strip() if shutil.which('h2load') else 'not installed'}",
             "", f"## S6: https /small, 100 streams on one connection, {n6:,} requests", "",
             "| client | requests/s | CPU µs/request | peak RSS MiB |", "|---|---:|---:|---:|"]
    for name, samples in rows["S6"].items():
        lines.append(f"| {name} | {n6 / med(samples, 'wall'):,.0f} | {med(samples, 'cpu') / n6 * 1e6:.1f} | {med(samples, 'rss_kib') / 1024:.1f} |")
    lines += ["", "## S7: 1 GiB over h2 with TLS, to /dev/null", "",
              "| client | GB/s | CPU s per GiB | peak RSS MiB |", "|---|---:|---:|---:|"]
    for name, samples in rows["S7"].items():
        lines.append(f"| {name} | {(1 << 30) / med(samples, 'wall') / 1e9:.2f} | {med(samples, 'cpu'):.2f} | {med(samples, 'rss_kib') / 1024:.1f} |")
    s8 = rows["S8"]["Courier (Swift API)"]
    lines += ["", f"## S8: 32 callers x {n8 // 32:,} requests to one origin over h2", "",
              "| client | requests/s | CPU µs/request | connections opened |", "|---|---:|---:|---:|",
              f"| Courier (Swift API) | {n8 / med(s8, 'wall'):,.0f} | {med(s8, 'cpu') / n8 * 1e6:.1f} | "
              f"{', '.join(str(s['connections']) for s in s8)} |", ""]
    with open(os.path.join(HERE, "H2.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
