#!/usr/bin/env python3
"""Python HTTP clients side by side (part of `make bench`): Courier's AsyncClient and Client
beside aiohttp, httpx and requests, against a private nginx on loopback (one worker on CPU 0,
clients on CPU 1, as run.py). Client CPU per request is the difference between runs of 2N and N
requests (the interpreter's start-up and imports cancel out); medians of 3 interleaved runs.

  A1  AsyncClient, 1 connection, /small (100 bytes)
  A32 AsyncClient, 32 connections
  T32 AsyncClient, 32 connections over TLS
  S1  sync Client, one request at a time (requests' Session beside it)

aiohttp, httpx and requests come from PyPI into .build/pybench-venv (`make bench-deps`); a
client that is not installed is left out with the reason. Writes benchmarks/PYTHON.md.
BENCH_QUICK=1 runs a fifth of the requests.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (measuring helpers and CPU pinning)

HERE, ROOT, QUICK = run.HERE, run.ROOT, run.QUICK
VENV_PYTHON = os.path.join(ROOT, ".build", "pybench-venv", "bin", "python")
DRIVER = os.path.join(HERE, "python_driver.py")
N = 1000 if QUICK else 5000
RUNS = 3
SCENARIOS = [("A1", "async", 1, False), ("A32", "async", 32, False), ("T32", "async", 32, True), ("S1", "sync", 1, False)]
CLIENTS = {"async": ["courier", "aiohttp", "httpx"], "sync": ["courier", "requests", "httpx"]}


def python_for(client):
    """The interpreter that has `client` (None when none has it)."""
    if client == "courier":
        return VENV_PYTHON if os.path.exists(VENV_PYTHON) else sys.executable
    if os.path.exists(VENV_PYTHON):
        found = subprocess.run([VENV_PYTHON, "-c", "import " + client], capture_output=True)
        if found.returncode == 0:
            return VENV_PYTHON
    return None


def measure(python, client, mode, url, n, c, cafile, library):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "cbindings", "python"), COURIER_LIBRARY=library)
    argv = [python, DRIVER, client, mode, url, str(n), str(c)] + ([cafile] if cafile else [])
    text, wall, cpu, rss, _ = run.run_measured(argv, env=env)
    line = json.loads(text.strip().splitlines()[-1])
    if line["ok"] != n:
        raise RuntimeError(f"{client}: {line}")
    return wall, cpu, rss


def main():
    library = os.path.join(ROOT, ".build", "release", "libCourierC.so")
    subprocess.run(["swift", "build", "-c", "release", "--product", "CourierC"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    work = tempfile.mkdtemp(prefix="courier-pybench-")
    certs = os.path.join(work, "certs")
    subprocess.run(["sh", os.path.join(ROOT, "Tests", "Servers", "make_certs.sh"), certs], check=True, capture_output=True)
    os.makedirs(os.path.join(work, "html"))
    with open(os.path.join(work, "html", "small"), "wb") as f:
        f.write(b"s" * 100)
    tls_port = run.free_port() if hasattr(run, "free_port") else 0
    if not tls_port:
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            tls_port = s.getsockname()[1]
    extra = (f"server {{ listen 127.0.0.1:{tls_port} ssl; root {work}/html; ssl_certificate {certs}/server-chain.pem; "
             f"ssl_certificate_key {certs}/server.key; ssl_session_tickets on; }}")
    env = dict(os.environ, NGINX_WORKERS="1", NGINX_CPU="0", NGINX_EXTRA_SERVER=extra)
    port = subprocess.run(["sh", os.path.join(HERE, "nginx.sh"), "start", work], env=env, check=True,
                          capture_output=True, text=True).stdout.strip()
    rows, missing = {}, []
    try:
        for name, mode, c, tls in SCENARIOS:
            url = f"https://localhost:{tls_port}/small" if tls else f"http://127.0.0.1:{port}/small"
            cafile = os.path.join(certs, "ca.pem") if tls else None
            for client in CLIENTS[mode]:
                python = python_for(client)
                if python is None:
                    missing.append(f"{client} (not installed: `make bench-deps`)")
                    continue
                per_request, rates, peaks = [], [], []
                for _ in range(RUNS):
                    _, cpu1, _ = measure(python, client, mode, url, N, c, cafile, library)
                    wall2, cpu2, rss = measure(python, client, mode, url, 2 * N, c, cafile, library)
                    per_request.append(max(0.0, cpu2 - cpu1) / N * 1e6)
                    rates.append(2 * N / wall2)
                    peaks.append(rss or 0)
                rows[(name, client)] = (run.median(per_request), run.median(rates), max(peaks) / 1024)
                print(f"  {name} {client}: {rows[(name, client)][0]:.0f} µs/request, {rows[(name, client)][1]:.0f} req/s",
                      flush=True)
    finally:
        subprocess.run(["sh", os.path.join(HERE, "nginx.sh"), "stop", work], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    write(rows, sorted(set(missing)))


def write(rows, missing):
    lines = ["# Python clients", "",
             "Written by `make bench` (benchmarks/python_clients.py): nginx on loopback (one worker on CPU 0, clients on "
             "CPU 1); client CPU per request from runs of 2N and N requests (start-up cancels out); medians of 3.", "",
             f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; N = {N}", ""]
    titles = {"A1": "AsyncClient, 1 connection", "A32": "AsyncClient, 32 connections",
              "T32": "AsyncClient, 32 connections over TLS", "S1": "sync Client, one at a time"}
    for name, mode, _, _ in SCENARIOS:
        lines += [f"## {name}: {titles[name]}", "", "| client | CPU µs/request | requests/s | peak RSS MiB |",
                  "|---|---:|---:|---:|"]
        for client in CLIENTS[mode]:
            if (name, client) in rows:
                cpu, rate, rss = rows[(name, client)]
                lines.append(f"| {client} | {cpu:.0f} | {rate:,.0f} | {rss:.1f} |")
        lines.append("")
    if missing:
        lines += ["Left out: " + ", ".join(missing), ""]
    with open(os.path.join(HERE, "PYTHON.md"), "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
