#!/usr/bin/env python3
"""`make bench`: Courier beside libcurl, wrk and URLSession, in one run, on one machine.

Starts a private nginx (one worker, so the client keeps the other core), runs every scenario for
every client interleaved and repeated, takes medians, and writes benchmarks/RESULTS.md and
benchmarks/results.png. CPU per request is user + system time of the client process (wait4's
rusage), the fair figure on a 2-core machine shared with the server.

Scenarios (see RESULTS.md for the figures):
  S1  small GET, one keep-alive connection, sequential
  S2  small GET, 32 keep-alive connections
  S3  1 GiB download, to /dev/null and to a file
  S4  HTTPS small GET, 32 keep-alive connections
  S4r HTTPS, a new connection per request, 8 in flight, sessions resumed
  S4f HTTPS, a new connection per request, 8 in flight, full handshakes (resumption off)
  S5  a new connection per request, 8 in flight
  S6  10,000 idle pooled connections: resident memory each
and three counting modes on a keep-alive connection: instructions (callgrind, 2N minus N),
system calls (strace -c, 2N minus N) and heap allocations (an LD_PRELOAD counter, 2N minus N).

Environment: BENCH_REPEAT (default 3), BENCH_QUICK=1 for smaller N (a smoke run).
"""
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out")
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
QUICK = os.environ.get("BENCH_QUICK") == "1"

COURIER_BENCH = os.path.join(ROOT, ".build", "release", "courier-bench")
COURIER_CLI = os.path.join(ROOT, ".build", "release", "courier")
URL_PER_REQUEST = "Courier (Swift API, a URL per request)"
CURL_BENCH = os.path.join(OUT, "curl_bench")
URLSESSION_BENCH = os.path.join(OUT, "urlsession_bench")
ALLOC_COUNTER = os.path.join(OUT, "alloc_counter.so")


def log(message):
    print(message, flush=True)


# With two or more CPUs, nginx runs on CPU 0 and every client on CPU 1: no client shares a core
# with the server or migrates between cores, which otherwise makes the latency-bound scenarios
# (S1) swing by ±15% from run to run.
PIN = os.cpu_count() >= 2 and shutil.which("taskset") is not None
CLIENT_PIN = ["taskset", "-c", "1"] if PIN else []


def run_measured(argv, stdout=subprocess.PIPE, env=None, timeout=600):
    """Runs a client; returns (stdout text, wall seconds, cpu seconds, max RSS KiB, stderr).

    CPU comes from wait4's rusage. Peak RSS comes from /usr/bin/time: a child forked from this
    Python process would otherwise be charged the pages it had before exec.
    """
    with tempfile.NamedTemporaryFile(mode="r") as rss_file:
        start = time.monotonic()
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss_file.name] + CLIENT_PIN + argv,
                                stdout=stdout, stderr=subprocess.PIPE, env=env)
        out = b""
        if stdout == subprocess.PIPE:
            out = proc.stdout.read()
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise RuntimeError(f"{' '.join(argv[:4])}... exited {code}: {err.decode(errors='replace')[-400:]}")
        try:
            rss = int(rss_file.read().strip().splitlines()[-1])
        except (ValueError, IndexError):
            rss = None
    return out.decode(errors="replace"), wall, usage.ru_utime + usage.ru_stime, rss, err.decode(errors="replace")


class Client:
    """One HTTP client under test: how to run N requests with C in flight."""

    def __init__(self, name, available=True, why=""):
        self.name = name
        self.available = available
        self.why = why

    def supports(self, params):
        """Whether the client can run a scenario (flags it has no equivalent for are skipped)."""
        return True

    def run(self, url, n, c, close=False, output=None, hold=False, cacert=None, no_resume=False, cache=None,
            courier_only=False):
        raise NotImplementedError


class BenchDriver(Client):
    """courier-bench, curl_bench and urlsession_bench share one command line and one JSON line."""

    def __init__(self, name, argv, available=True, why="", max_n=None, supports_hold=True, supports_close=True,
                 supports_tls=True, courier=False, cache_dir=None, extra=(), small_only=False):
        super().__init__(name, available, why)
        self.argv = argv
        # Flags after the positional arguments; small_only: the small-GET scenarios alone (S1, S2, S5).
        self.extra = list(extra)
        self.small_only = small_only
        self.max_n = max_n
        self.supports_hold = supports_hold
        self.supports_close = supports_close
        self.supports_tls = supports_tls
        self.courier = courier
        self.cache_dir = cache_dir

    def supports(self, params):
        if self.small_only and any(params.get(k) for k in ("output", "hold", "cacert", "cache", "courier_only")):
            return False
        # The cache scenarios are Courier's own: libcurl and URLSession are not asked to cache.
        return ((self.supports_hold or not params.get("hold")) and (self.supports_close or not params.get("close"))
                and (self.supports_tls or not params.get("cacert"))
                and (self.courier or not (params.get("cache") or params.get("courier_only"))))

    def run(self, url, n, c, close=False, output=None, hold=False, cacert=None, no_resume=False, cache=None,
            courier_only=False):
        if self.max_n:
            n = min(n, self.max_n)
        argv = self.argv + [url, str(n), str(c)] + self.extra
        if cache:
            # A directory of its own per run: a disk run starts from the one response its warm-up stored.
            directory = tempfile.mkdtemp(prefix="cache-", dir=self.cache_dir)
            argv += ["--cache", cache, "--cache-dir", directory]
        if close:
            argv.append("--close")
        if cacert:
            argv += ["--cacert", cacert]
        if no_resume:
            argv.append("--no-resume")
        if output:
            argv += ["--output", output]
        if hold:
            argv.append("--hold")
        try:
            text, wall, cpu, rss, _ = run_measured(argv)
        finally:
            if cache:
                shutil.rmtree(directory, ignore_errors=True)
        line = json.loads(text.strip().splitlines()[-1])
        if line["ok"] != line["requests"]:
            raise RuntimeError(f"{self.name}: {line}")
        return {"requests": line["requests"], "bytes": line["bytes"], "wall": line["wall_s"], "cpu": cpu,
                "rss_kib": rss, "rss_before_kib": line.get("rss_before_kib"), "rss_idle_kib": line.get("rss_idle_kib")}


class CourierCLI(Client):
    """The courier command line: URL globbing for N requests, -Z for parallel."""

    def supports(self, params):
        return not (params.get("hold") or params.get("cache") or params.get("courier_only"))

    def run(self, url, n, c, close=False, output=None, hold=False, cacert=None, no_resume=False, cache=None,
            courier_only=False):
        argv = [COURIER_CLI, "-s"]
        if c > 1:
            argv += ["-Z", "--parallel-max", str(c)]
        if close:
            argv += ["-H", "Connection: close"]
        if cacert:
            argv += ["--cacert", cacert]
        if no_resume:
            argv.append("--no-sessionid")
        if output:
            argv += ["-o", output, url]
        else:
            argv.append(f"{url}?[1-{n}]" if n > 1 else url)
        with open(os.devnull, "wb") as null:
            _, wall, cpu, rss, _ = run_measured(argv, stdout=null if not output else subprocess.PIPE)
        size = 1 << 30 if output else 0
        return {"requests": n if not output else 1, "bytes": size, "wall": wall, "cpu": cpu, "rss_kib": rss}


class Wrk(Client):
    """wrk runs for a duration; the figures are normalised by the requests it reports."""

    def supports(self, params):
        # wrk neither writes files nor holds idle connections; over TLS it only serves as the
        # keep-alive ceiling (it has no session cache to turn on or off).
        return not (params.get("hold") or params.get("output") or (params.get("cacert") and params.get("close"))
                    or params.get("cache") or params.get("courier_only"))

    def run(self, url, n, c, close=False, output=None, hold=False, cacert=None, no_resume=False, cache=None,
            courier_only=False):
        duration = 3 if QUICK else 5
        argv = ["wrk", "-t1", f"-c{c}", f"-d{duration}s", url]
        if close:
            argv[1:1] = ["-H", "Connection: close"]
        text, wall, cpu, rss, _ = run_measured(argv)
        m = re.search(r"(\d+) requests in ([\d.]+)s, ([\d.]+)([KMG]?B) read", text)
        if not m:
            raise RuntimeError(f"wrk output not understood: {text}")
        requests = int(m.group(1))
        unit = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[m.group(4)]
        return {"requests": requests, "bytes": float(m.group(3)) * unit, "wall": float(m.group(2)), "cpu": cpu, "rss_kib": rss}


def free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def median(values):
    return statistics.median(values) if values else None


def summarize(samples):
    """Medians of the derived figures over the repetitions."""
    def med(key):
        values = [s[key] for s in samples if s.get(key) is not None]
        return median(values) if values else None
    rps = median([s["requests"] / s["wall"] for s in samples])
    cpu_us = median([s["cpu"] * 1e6 / s["requests"] for s in samples])
    gbps = median([s["bytes"] / s["wall"] / 1e9 for s in samples if s.get("bytes")])
    cpu_per_gib = median([s["cpu"] / (s["bytes"] / (1 << 30)) for s in samples if s.get("bytes")])
    return {"rps": rps, "cpu_us": cpu_us, "rss_mib": med("rss_kib") / 1024 if med("rss_kib") else None,
            "gbps": gbps, "cpu_s_per_gib": cpu_per_gib, "samples": len(samples),
            "rss_before_kib": med("rss_before_kib"), "rss_idle_kib": med("rss_idle_kib")}


def difference(measure, n):
    """(measure(2n) - measure(n)) / n: the per-request cost with start-up cancelled out."""
    a = measure(n)
    b = measure(2 * n)
    return (b - a) / n


def callgrind_instructions(argv_for_n, n):
    def measure(count):
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out"] + argv_for_n(count),
                                 capture_output=True, text=True)
        m = re.search(r"Collected : (\d+)", out.stderr)
        if not m:
            raise RuntimeError(out.stderr[-500:])
        return int(m.group(1))
    return difference(measure, n)


def strace_syscalls(argv_for_n, n):
    def measure(count):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["strace", "-f", "-c", "-o", f"{tmp}/st.txt"] + argv_for_n(count),
                           capture_output=True, text=True, check=True)
            text = open(f"{tmp}/st.txt").read()
        m = re.search(r"100\.00\s+[\d.]+\s+\d*\s+(\d+)\s+(\d+)?\s*total", text)
        if not m:
            raise RuntimeError(text[-500:])
        return int(m.group(1))
    return difference(measure, n)


def allocations(argv_for_n, n):
    def measure(count):
        env = dict(os.environ, LD_PRELOAD=ALLOC_COUNTER)
        out = subprocess.run(argv_for_n(count), capture_output=True, text=True, env=env, check=True)
        m = re.search(r"alloc_counter: (\d+) allocations", out.stderr)
        return int(m.group(1))
    return difference(measure, n)


def machine_facts():
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass

    def version(argv, pattern=None):
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=20)
            text = (out.stdout + out.stderr).strip().splitlines()
            return text[0] if text else "?"
        except (OSError, subprocess.TimeoutExpired):
            return "not found"
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "swift": version(["swift", "--version"]),
        "curl": version(["curl-config", "--version"]),
        "nginx": version(["nginx", "-v"]),
        "wrk": version(["wrk", "-v"]),
    }


def fmt(value, digits=1):
    if value is None:
        return "–"
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def main():
    work = tempfile.mkdtemp(prefix="courier-bench-")
    os.makedirs(os.path.join(work, "html"), exist_ok=True)
    with open(os.path.join(work, "html", "small"), "wb") as f:
        f.write(b"x" * 100)
    # The cache scenarios' locations (nginx.sh): fresh for an hour, no-cache, no-store.
    for location in ("fresh", "revalidate", "nostore"):
        os.makedirs(os.path.join(work, "html", location), exist_ok=True)
        with open(os.path.join(work, "html", location, "small"), "wb") as f:
            f.write(b"x" * 100)
    with open(os.path.join(work, "html", "gig"), "wb") as f:
        f.truncate(1 << 30)
    # HTTPS: certificates from the tests' generator (a CA and a localhost chain), one TLS server
    # block beside the plaintext one, session tickets and a session cache on (as deployed).
    certs = os.path.join(work, "certs")
    subprocess.run(["sh", os.path.join(ROOT, "Tests", "Servers", "make_certs.sh"), certs], check=True, capture_output=True)
    cacert = os.path.join(certs, "ca.pem")
    tls_port = free_port()
    tls_server = (f"server {{ listen 127.0.0.1:{tls_port} ssl backlog=4096; root {work}/html; "
                  f"ssl_certificate {certs}/server-chain.pem; ssl_certificate_key {certs}/server.key; "
                  "ssl_protocols TLSv1.2 TLSv1.3; ssl_session_cache shared:courier:10m; ssl_session_tickets on; }")
    env = dict(os.environ, NGINX_WORKERS="1", NGINX_EXTRA_SERVER=tls_server)
    if PIN:
        env["NGINX_CPU"] = "0"
    port = subprocess.run([os.path.join(HERE, "nginx.sh"), "start", work], capture_output=True, text=True, env=env, check=True).stdout.strip()
    base = f"http://127.0.0.1:{port}"
    tls_base = f"https://localhost:{tls_port}"
    small, gig = base + "/small", base + "/gig"
    log(f"nginx on {base} (1 worker); results: benchmarks/RESULTS.md")

    have_wrk = shutil.which("wrk") is not None
    have_urlsession = os.path.exists(URLSESSION_BENCH)
    clients = [
        BenchDriver("Courier (Swift API)", [COURIER_BENCH], courier=True, cache_dir=work),
        BenchDriver("Courier (C ABI)", [COURIER_BENCH, "--api", "c"], supports_close=False, courier=True, cache_dir=work),
        BenchDriver("libcurl (multi)", [CURL_BENCH]),
        CourierCLI("courier CLI"),
        # The CLI's own workload through the library: every request to a URL of its own (?n=<i>),
        # as a glob's URLs are; the fair reference for the CLI's cost per URL.
        BenchDriver(URL_PER_REQUEST, [COURIER_BENCH], courier=True, extra=["--unique"], small_only=True),
        Wrk("wrk", available=have_wrk, why="wrk not installed"),
        BenchDriver("URLSession", [URLSESSION_BENCH], available=have_urlsession, why="not built",
                    max_n=3000 if QUICK else 10000, supports_hold=False, supports_tls=False),
    ]
    scale = 0.1 if QUICK else 1.0
    scenarios = [
        ("S1", "small GET, 1 connection, sequential", dict(url=small, n=int(20000 * scale), c=1)),
        ("S2", "small GET, 32 connections", dict(url=small, n=int(200000 * scale), c=32)),
        ("S3", "1 GiB to /dev/null", dict(url=gig, n=1, c=1, output="/dev/null")),
        ("S3f", "1 GiB to a file", dict(url=gig, n=1, c=1, output=os.path.join(work, "download.bin"))),
        ("S4", "HTTPS small GET, 32 connections", dict(url=tls_base + "/small", n=int(100000 * scale), c=32, cacert=cacert)),
        ("S4r", "HTTPS, new connection per request, 8 in flight, sessions resumed",
         dict(url=tls_base + "/small", n=int(5000 * scale), c=8, close=True, cacert=cacert)),
        ("S4f", "HTTPS, new connection per request, 8 in flight, full handshakes",
         dict(url=tls_base + "/small", n=int(3000 * scale), c=8, close=True, cacert=cacert, no_resume=True)),
        ("S5", "new connection per request, 8 in flight", dict(url=small, n=int(10000 * scale), c=8, close=True)),
        ("S6", "10,000 idle pooled connections", dict(url=small, n=int(10000 * scale), c=int(10000 * scale), hold=True)),
        # The HTTP cache (issue 9). Courier only; S1 is the same request without a cache.
        ("C1", "cache: fresh hit from memory, sequential", dict(url=base + "/fresh/small", n=int(100000 * scale), c=1, cache="memory")),
        ("C2", "cache: fresh hit from disk (no memory tier), sequential",
         dict(url=base + "/fresh/small", n=int(20000 * scale), c=1, cache="disk")),
        ("C3", "cache: 304 revalidation, 1 connection", dict(url=base + "/revalidate/small", n=int(20000 * scale), c=1, cache="memory")),
        ("C4", "cache: miss (no-store), 1 connection", dict(url=base + "/nostore/small", n=int(20000 * scale), c=1, cache="memory")),
        ("C4n", "the same no-store GET without a cache, 1 connection",
         dict(url=base + "/nostore/small", n=int(20000 * scale), c=1, courier_only=True)),
        ("C5", "1,000 identical GETs at once (coalesced), cached engine",
         dict(url=base + "/nostore/small", n=1000, c=1000, cache="memory")),
    ]
    # Warm nginx's page cache for the 1 GiB file, so no client pays for it.
    with open(os.path.join(work, "html", "gig"), "rb") as f:
        while f.read(1 << 22):
            pass
    results = {}
    try:
        for rep in range(REPEAT):
            # Rotate the order each repetition: no client always runs first (cold) or last.
            order = clients[rep % len(clients):] + clients[:rep % len(clients)]
            for key, title, params in scenarios:
                for client in order:
                    if not client.available or not client.supports(params):
                        continue
                    try:
                        sample = client.run(**params)
                    except Exception as error:  # a failed run is reported, not hidden
                        log(f"  {key} {client.name}: FAILED {error}")
                        results.setdefault((key, client.name), {"failed": str(error)})
                        continue
                    results.setdefault((key, client.name), {"samples": []}).setdefault("samples", []).append(sample)
                    if params.get("output") and os.path.exists(os.path.join(work, "download.bin")):
                        os.remove(os.path.join(work, "download.bin"))
                    log(f"  rep {rep + 1} {key} {client.name}: {sample['requests'] / sample['wall']:.0f} req/s, "
                        f"{sample['cpu'] * 1e6 / sample['requests']:.1f} µs CPU/req")
        summary = {k: summarize(v["samples"]) for k, v in results.items() if v.get("samples")}

        # Counting modes on one keep-alive connection.
        n = 500 if QUICK else 2000
        counting = {}
        drivers = {"Courier (Swift API)": lambda count: [COURIER_BENCH, small, str(count), "1"],
                   "Courier (C ABI)": lambda count: [COURIER_BENCH, small, str(count), "1", "--api", "c"],
                   "libcurl (multi)": lambda count: [CURL_BENCH, small, str(count), "1"]}
        drivers32 = {"Courier (Swift API)": lambda count: [COURIER_BENCH, small, str(count * 16), "32"],
                     "Courier (C ABI)": lambda count: [COURIER_BENCH, small, str(count * 16), "32", "--api", "c"],
                     "libcurl (multi)": lambda count: [CURL_BENCH, small, str(count * 16), "32"]}
        for name, argv in drivers.items():
            counting[name] = count_one(name, argv, n, argv32=drivers32[name])
        # The CLI against the library on the same workload (a URL per request): issue 13's target.
        counting[URL_PER_REQUEST] = count_one(URL_PER_REQUEST, lambda count: [COURIER_BENCH, small, str(count), "1", "--unique"], n,
                                              argv32=lambda count: [COURIER_BENCH, small, str(count * 16), "32", "--unique"])
        counting["courier CLI"] = count_one("courier CLI", lambda count: [COURIER_CLI, "-s", f"{small}?[1-{count}]"], n,
                                            argv32=lambda count: [COURIER_CLI, "-s", "-Z", "--parallel-max", "32", f"{small}?[1-{count * 16}]"])
        # The cache's own paths, same counting (Swift API): a memory hit, and a miss with and
        # without a cache on the same no-store URL.
        cache_drivers = {
            "Courier, memory hit": lambda count: [COURIER_BENCH, base + "/fresh/small", str(count), "1", "--cache", "memory"],
            "Courier, miss with a cache": lambda count: [COURIER_BENCH, base + "/nostore/small", str(count), "1", "--cache", "memory"],
            "Courier, same GET without a cache": lambda count: [COURIER_BENCH, base + "/nostore/small", str(count), "1"],
        }
        for name, argv in cache_drivers.items():
            counting[name] = count_one(name, argv, n)
        if have_wrk and shutil.which("valgrind"):
            counting.setdefault("wrk", {})["instructions"] = wrk_instructions(small)
            log(f"  counting wrk: {counting['wrk']}")
    finally:
        subprocess.run([os.path.join(HERE, "nginx.sh"), "stop", work], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)

    facts = machine_facts()
    write_results(summary, results, counting, scenarios, clients, facts)
    plot(summary, clients)


def count_one(name, argv, n, argv32=None):
    """Instructions and system calls per request on one connection, and allocations per request
    (at 32 connections when `argv32` is given, 16 times as many requests)."""
    entry = {}
    if shutil.which("valgrind"):
        entry["instructions"] = callgrind_instructions(argv, n)
    if shutil.which("strace"):
        entry["syscalls_c1"] = strace_syscalls(argv, n)
        if argv32:
            entry["syscalls_c32"] = strace_syscalls(argv32, n) / 16
    entry["allocations"] = allocations(argv32, n) / 16 if argv32 else allocations(argv, n)
    log(f"  counting {name}: {entry}")
    return entry


def wrk_instructions(url):
    """wrk runs for a duration, so its instructions are divided by the requests it made."""
    def one(seconds):
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
                                  "wrk", "-t1", "-c1", f"-d{seconds}s", url], capture_output=True, text=True)
        instructions = int(re.search(r"Collected : (\d+)", out.stderr).group(1))
        requests = int(re.search(r"(\d+) requests in", out.stdout).group(1))
        return instructions, requests
    i1, r1 = one(2)
    i2, r2 = one(4)
    return (i2 - i1) / max(1, r2 - r1)


def ratio(summary, key, field, a="Courier (Swift API)", b="libcurl (multi)"):
    x = summary.get((key, a), {}).get(field)
    y = summary.get((key, b), {}).get(field)
    return x / y if x and y else None


def write_results(summary, results, counting, scenarios, clients, facts):
    lines = ["# Benchmark results", "",
             "Bulk transfers (1 GiB up and down through each API beside curl): [BULK.md](BULK.md). "
             "HTTP/2 (S6-S8, beside h2load and libcurl): [H2.md](H2.md).", "",
             "Written by `make bench` (benchmarks/run.py); every figure below is a median over "
             f"{REPEAT} interleaved runs in the same session. CPU is user + system time of the client "
             "process per request; on a 2-core machine shared with nginx that is the fair figure. "
             + ("nginx (one worker) is pinned to CPU 0 and each client to CPU 1 (taskset)." if PIN else ""), "",
             f"- date: {facts['date']}", f"- machine: {facts['cpu']}, {facts['cores']} cores, Linux {facts['kernel']}",
             f"- {facts['swift']}", f"- libcurl: {facts['curl']}; {facts['nginx']} (1 worker); {facts['wrk']}", ""]
    if QUICK:
        lines += ["**Quick run (BENCH_QUICK=1): smaller N, figures are indicative only.**", ""]
    names = [c.name for c in clients if c.available]
    for key, title, params in scenarios:
        lines += [f"## {key}: {title}", ""]
        if key.startswith("S3"):
            lines += ["| client | GB/s | CPU s per GiB | peak RSS MiB |", "|---|---:|---:|---:|"]
        elif key == "S6":
            lines += ["| client | RSS per idle connection, KiB | peak RSS MiB |", "|---|---:|---:|"]
        else:
            lines += ["| client | requests/s | CPU µs/request | peak RSS MiB |", "|---|---:|---:|---:|"]
        for name in names:
            entry = results.get((key, name))
            if entry is None:
                continue
            if "failed" in entry and not entry.get("samples"):
                lines.append(f"| {name} | failed: {entry['failed'][:80]} | | |")
                continue
            s = summary[(key, name)]
            if key.startswith("S3"):
                lines.append(f"| {name} | {fmt(s['gbps'], 2)} | {fmt(s['cpu_s_per_gib'], 2)} | {fmt(s['rss_mib'])} |")
            elif key == "S6":
                per = (s["rss_idle_kib"] - s["rss_before_kib"]) / params["c"] if s.get("rss_idle_kib") else None
                lines.append(f"| {name} | {fmt(per, 2)} | {fmt(s['rss_mib'])} |")
            else:
                lines.append(f"| {name} | {fmt(s['rps'])} | {fmt(s['cpu_us'])} | {fmt(s['rss_mib'])} |")
        lines.append("")
    lines += ["## Counting on one keep-alive connection (2N minus N, so start-up cancels)", "",
              "| client | instructions/request | syscalls/request (1 conn) | syscalls/request (32 conns) | heap allocations/request |",
              "|---|---:|---:|---:|---:|"]
    for name, entry in counting.items():
        lines.append(f"| {name} | {fmt(entry.get('instructions'), 0)} | {fmt(entry.get('syscalls_c1'), 2)} | "
                     f"{fmt(entry.get('syscalls_c32'), 2)} | {fmt(entry.get('allocations'), 1)} |")
    lines += ["", "## Targets (issue 5), from this run", ""]
    targets = [
        ("S2 CPU per request ≤ 0.8 × libcurl", ratio(summary, "S2", "cpu_us"), lambda r: r <= 0.8),
        ("S2 requests/s ≥ libcurl", ratio(summary, "S2", "rps"), lambda r: r >= 1.0),
        ("S1 requests/s ≥ libcurl", ratio(summary, "S1", "rps"), lambda r: r >= 1.0),
        ("S3 GB/s ≥ libcurl (/dev/null)", ratio(summary, "S3", "gbps"), lambda r: r >= 1.0),
        ("S3 CPU per GiB ≤ libcurl (/dev/null)", ratio(summary, "S3", "cpu_s_per_gib"), lambda r: r <= 1.0),
        ("S5 CPU per request ≤ libcurl", ratio(summary, "S5", "cpu_us"), lambda r: r <= 1.0),
        ("S4 HTTPS CPU per request (keep-alive), for the record", ratio(summary, "S4", "cpu_us"), lambda r: r <= 1.0),
        ("S4f full handshakes per second, for the record", ratio(summary, "S4f", "rps"), lambda r: r >= 1.0),
    ]
    lines += ["| target | Courier ÷ libcurl | met |", "|---|---:|:---:|"]
    for label, value, test in targets:
        lines.append(f"| {label} | {fmt(value, 2)} | {'yes' if value is not None and test(value) else 'no'} |")
    c = counting.get("Courier (Swift API)", {})
    s6 = summary.get(("S6", "Courier (Swift API)"))
    per_conn = None
    if s6 and s6.get("rss_idle_kib"):
        per_conn = (s6["rss_idle_kib"] - s6["rss_before_kib"]) / dict((k, p) for k, _, p in scenarios)["S6"]["c"]
    absolute = [
        ("instructions per keep-alive request ≤ 20,000 (issue 5)", c.get("instructions"), lambda v: v <= 20000),
        ("instructions per keep-alive request ≤ 18,000 (issue 8)", c.get("instructions"), lambda v: v <= 18000),
        ("system calls per keep-alive request ≤ 3 (1 connection)", c.get("syscalls_c1"), lambda v: v <= 3),
        ("heap allocations per request: single digits", c.get("allocations"), lambda v: v < 10),
        ("RSS per idle pooled connection ≤ 4 KiB", per_conn, lambda v: v <= 4),
    ]
    swift_c = counting.get("Courier (C ABI)", {})
    c_path = [
        ("S1 CPU per request", ratio(summary, "S1", "cpu_us", "Courier (C ABI)", "Courier (Swift API)")),
        ("S2 CPU per request", ratio(summary, "S2", "cpu_us", "Courier (C ABI)", "Courier (Swift API)")),
        ("S2 requests/s (higher is better)", ratio(summary, "S2", "rps", "Courier (C ABI)", "Courier (Swift API)")),
        ("instructions per keep-alive request", (swift_c.get("instructions") / c["instructions"])
         if swift_c.get("instructions") and c.get("instructions") else None),
    ]
    lines += ["", "C ABI path against the Swift API path (target: within 10%):", "",
              "| measure | C ABI ÷ Swift API | within 10% |", "|---|---:|:---:|"]
    for label, value in c_path:
        good = value is not None and (value >= 0.9 if "higher" in label else value <= 1.1)
        lines.append(f"| {label} | {fmt(value, 3)} | {'yes' if good else 'no'} |")
    # Issue 13: the CLI (a glob's URLs, one after another or -Z) against the library, on the same
    # path and on the CLI's own workload (a URL of its own per request).
    cli = counting.get("courier CLI", {})
    unique = counting.get(URL_PER_REQUEST, {})
    cli_rows = []
    # (S5 is not among them: the CLI asks the server to close with a header, the library's --close
    # closes itself, two different kernel paths; its rows above compare them as they are.)
    for key, what in (("S1", "one connection"), ("S2", "-Z, 32 connections")):
        for reference in ("Courier (Swift API)", URL_PER_REQUEST):
            short = "same path" if reference == "Courier (Swift API)" else "a URL per request"
            cli_rows.append((f"{key} ({what}) CPU per request, against the library ({short})",
                             ratio(summary, key, "cpu_us", "courier CLI", reference), False))
            cli_rows.append((f"{key} ({what}) requests/s, against the library ({short}; higher is better)",
                             ratio(summary, key, "rps", "courier CLI", reference), True))
    for label, field, reference in (("instructions per URL, one connection, against the library (same path)", "instructions", c),
                                    ("instructions per URL, one connection, against the library (a URL per request)", "instructions", unique)):
        value = cli.get(field) / reference[field] if cli.get(field) and reference.get(field) else None
        cli_rows.append((label, value, False))
    lines += ["", "The CLI against the library (issue 13, target: within 10%):", "",
              "| measure | CLI ÷ library | within 10% |", "|---|---:|:---:|"]
    for label, value, higher in cli_rows:
        good = value is not None and (value >= 0.9 if higher else value <= 1.1)
        lines.append(f"| {label} | {fmt(value, 3)} | {'yes' if good else 'no'} |")
    lines += ["", "| target | Courier | met |", "|---|---:|:---:|"]
    for label, value, test in absolute:
        lines.append(f"| {label} | {fmt(value, 2)} | {'yes' if value is not None and test(value) else 'no'} |")
    def cpu(key, name="Courier (Swift API)"):
        return summary.get((key, name), {}).get("cpu_us")
    miss = (cpu("C4") / cpu("C4n")) if cpu("C4") and cpu("C4n") else None
    cache_targets = [
        ("memory hit CPU per request ≤ 3 µs (Swift)", cpu("C1"), lambda v: v <= 3),
        ("memory hit CPU per request ≤ 3 µs (C ABI)", cpu("C1", "Courier (C ABI)"), lambda v: v <= 3),
        ("disk hit CPU per request ≤ 15 µs", cpu("C2"), lambda v: v <= 15),
        ("miss with a cache ÷ without ≤ 1.10 (CPU)", miss, lambda v: v <= 1.10),
    ]
    lines += ["", "Cache (issue 9):", "", "| target | Courier | met |", "|---|---:|:---:|"]
    for label, value, test in cache_targets:
        lines.append(f"| {label} | {fmt(value, 2)} | {'yes' if value is not None and test(value) else 'no'} |")
    lines += ["", "![requests per second and CPU per request](results.png)", "",
              "Notes: empty rows are combinations a client cannot run. The C ABI driver has no "
              "new-connection-per-request switch (S4r, S4f, S5); wrk has no output file, no idle "
              "hold and no TLS session cache to switch (S3f, S6, S4r, S4f); urlsession_bench cannot "
              "trust the test CA (S4*). The counting modes run without pinning; instruction counts "
              "do not depend on it.", ""]
    # Figures recorded by hand at earlier points (before/after a change), kept under the run's.
    history = os.path.join(HERE, "HISTORY.md")
    if os.path.exists(history):
        with open(history) as f:
            lines += ["", f.read().rstrip(), ""]
    with open(os.path.join(HERE, "RESULTS.md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump({"summary": {f"{k[0]}|{k[1]}": v for k, v in summary.items()}, "counting": counting, "facts": facts}, f, indent=1)
    log("wrote benchmarks/RESULTS.md")


def plot(summary, clients):
    if not shutil.which("gnuplot"):
        log("gnuplot not found: no plot")
        return
    names = [c.name for c in clients if c.available]
    keys = ["S1", "S2", "S4", "S4r", "S4f", "S5"]
    data = os.path.join(OUT, "plot.dat")
    with open(data, "w") as f:
        f.write("scenario " + " ".join(f'"{n}"' for n in names) + "\n")
        for key in keys:
            f.write(key + " " + " ".join(str(summary.get((key, n), {}).get("rps") or 0) for n in names) + "\n")
    data_cpu = os.path.join(OUT, "plot_cpu.dat")
    with open(data_cpu, "w") as f:
        f.write("scenario " + " ".join(f'"{n}"' for n in names) + "\n")
        for key in keys:
            f.write(key + " " + " ".join(str(summary.get((key, n), {}).get("cpu_us") or 0) for n in names) + "\n")
    columns = len(names) + 1
    script = f"""
set terminal pngcairo size 1400,620 font ",11"
set output "{os.path.join(HERE, 'results.png')}"
set multiplot layout 1,2 title "Courier and peers against nginx on loopback (medians of {REPEAT} runs)"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key below
set grid ytics
set logscale y
set title "requests per second (higher is better, log scale)"
plot for [i=2:{columns}] "{data}" using i:xtic(1) title columnheader(i)
set title "client CPU µs per request (lower is better, log scale)"
plot for [i=2:{columns}] "{data_cpu}" using i:xtic(1) title columnheader(i)
unset multiplot
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=False)
    log("wrote benchmarks/results.png")


def replot():
    """`run.py --replot`: redraws results.png from out/results.json without measuring again."""
    with open(os.path.join(OUT, "results.json")) as f:
        saved = json.load(f)
    summary = {tuple(k.split("|", 1)): v for k, v in saved["summary"].items()}
    names = []
    for _, name in summary:
        if name not in names:
            names.append(name)
    plot(summary, [Client(name) for name in names])


if __name__ == "__main__":
    if "--replot" in sys.argv:
        replot()
        sys.exit(0)
    resource.setrlimit(resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE)[1:] * 2)
    main()
