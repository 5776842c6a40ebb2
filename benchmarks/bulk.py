#!/usr/bin/env python3
"""Bulk transfers for `make bench`: 1 GiB downloaded and uploaded through each of Courier's APIs
beside curl, on this machine. Writes benchmarks/BULK.md.

Downloads come from the benchmark nginx (a 1 GiB file in its page cache, sent with sendfile);
uploads go to Tests/Servers/stream_server.py with ?discard=1 (it counts and drops). Each client
runs as its own process and is measured by wait4: wall time, CPU (user + system) and peak RSS.
Every figure is the median of REPS runs (BULK_REPS, default 3). What is compared:

  download  Courier: Swift AsyncSequence (for try await in response.body), Swift download to a
            file, C write callback, C output file, the CLI (-o), Python iter_bytes();
            curl -o /dev/null
  upload    Courier: Swift file body, Swift multipart file, Swift AsyncSequence (chunked), C
            file body, C read callback (chunked), the CLI (-T); curl -T, curl -F
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASE = os.path.join(ROOT, ".build", "release")
GIB = 1 << 30
REPS = int(os.environ.get("BULK_REPS", "3"))


def measured(argv, env=None, stdin=None):
    """(wall s, cpu s, peak RSS KiB, stdout) of one run of argv."""
    started = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, stdin=stdin)
    out, err = process.communicate()
    _, status, usage = os.wait4(process.pid, 0) if process.returncode is None else (0, 0, None)
    wall = time.monotonic() - started
    if process.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(argv), err.decode()[-400:]))
    return wall, usage, out


def run_child(argv, env=None):
    """Runs argv under wait4 and returns (wall, cpu, peak KiB)."""
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execvpe(argv[0], argv, env or os.environ)
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("%s exited with %d" % (" ".join(argv), os.waitstatus_to_exitcode(status)))
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def median_of(argv, env=None):
    runs = [run_child(argv, env) for _ in range(REPS)]
    return tuple(statistics.median(r[i] for r in runs) for i in range(3))


def start(argv):
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(process.stdout.readline().split()[0])
    return process, port


def main():
    work = tempfile.mkdtemp(prefix="courier-bulk-")
    html = os.path.join(work, "html")
    os.makedirs(html)
    with open(os.path.join(html, "gib"), "wb") as f:
        block = os.urandom(1 << 20)
        for _ in range(1024):
            f.write(block)
    upload = os.path.join(work, "upload")
    os.link(os.path.join(html, "gib"), upload)
    nginx = subprocess.run([os.path.join(ROOT, "benchmarks", "nginx.sh"), "start", work], capture_output=True, text=True, check=True)
    nginx_port = int(nginx.stdout.split()[-1])
    server, stream_port = start([sys.executable, os.path.join(ROOT, "Tests", "Servers", "stream_server.py")])
    down = "http://127.0.0.1:%d/gib" % nginx_port
    up = "http://127.0.0.1:%d/upload?discard=1" % stream_port
    bulk = os.path.join(RELEASE, "courier-bulk")
    cli = os.path.join(RELEASE, "courier")
    library = os.path.join(RELEASE, "libCourierC.so")
    python_env = dict(os.environ, COURIER_LIBRARY=library, PYTHONPATH=os.path.join(ROOT, "cbindings", "python"))
    python_download = [sys.executable, "-c", (
        "import courier\n"
        "with courier.Engine() as e, e.stream('GET', %r) as r:\n"
        "    n = sum(len(c) for c in r.iter_bytes())\n"
        "assert n == %d, n\n") % (down, GIB)]
    try:
        # Warm the page cache and the servers.
        run_child(["curl", "-s", "-o", "/dev/null", down])
        downloads = [
            ("Courier Swift AsyncSequence", [bulk, "download", down, "swift-stream"], None),
            ("Courier Swift to a file", [bulk, "download", down, "swift-file"], None),
            ("Courier C write callback", [bulk, "download", down, "c-callback"], None),
            ("Courier C output file", [bulk, "download", down, "c-file"], None),
            ("Courier CLI -o", [cli, "-s", "-o", "/dev/null", down], None),
            ("Courier Python iter_bytes()", python_download, python_env),
            ("curl -o", ["curl", "-s", "-o", "/dev/null", down], None),
        ]
        uploads = [
            ("Courier Swift file body", [bulk, "upload", up, "swift-file", upload], None),
            ("Courier Swift multipart file", [bulk, "upload", up, "swift-multipart", upload], None),
            ("Courier Swift AsyncSequence (chunked)", [bulk, "upload", up, "swift-stream", upload], None),
            ("Courier C file body", [bulk, "upload", up, "c-file", upload], None),
            ("Courier C read callback (chunked)", [bulk, "upload", up, "c-callback", upload], None),
            ("Courier CLI -T", [cli, "-s", "-o", "/dev/null", "-T", upload, up], None),
            ("curl -T", ["curl", "-s", "-o", "/dev/null", "-T", upload, up], None),
            ("curl -F", ["curl", "-s", "-o", "/dev/null", "-F", "upload=@" + upload, up], None),
        ]
        results = {}
        for direction, cases in (("download", downloads), ("upload", uploads)):
            for name, argv, env in cases:
                wall, cpu, peak = median_of(argv, env)
                results[(direction, name)] = (wall, cpu, peak)
                print("%-8s %-40s %6.2f GB/s  %5.3f CPU s/GiB  %6.1f MiB peak" % (direction, name, GIB / wall / 1e9, cpu, peak / 1024), flush=True)
    finally:
        server.terminate()
        subprocess.run([os.path.join(ROOT, "benchmarks", "nginx.sh"), "stop", work], capture_output=True)
    write(results)


def write(results):
    lines = ["# Bulk transfers: 1 GiB through each API", "",
             "Written by `make bench` (`benchmarks/bulk.py`): medians of %d runs on this machine, loopback, " % REPS
             + "each client a process of its own measured by wait4. Downloads from nginx (sendfile from the page cache) "
             + "to nowhere (counted, or /dev/null); uploads of a 1 GiB file to a server that counts and drops. "
             + "CPU is the client's user + system time for the GiB.", ""]
    for direction in ("download", "upload"):
        lines += ["## " + direction.capitalize(), "", "| client | GB/s | CPU s/GiB | peak RSS MiB |", "|---|---:|---:|---:|"]
        for (d, name), (wall, cpu, peak) in results.items():
            if d == direction:
                lines.append("| %s | %.2f | %.3f | %.1f |" % (name, GIB / wall / 1e9, cpu, peak / 1024))
        lines.append("")
    curl_down = results[("download", "curl -o")]
    stream = results[("download", "Courier Swift AsyncSequence")]
    to_file = results[("download", "Courier Swift to a file")]
    lines += ["AsyncSequence against a download to a file (Swift): %.2fx the CPU per GiB (target: within 1.2x)."
              % (stream[1] / to_file[1]),
              "Courier's file download against curl -o: %.2fx the throughput at %.2fx the CPU."
              % (curl_down[0] / to_file[0], to_file[1] / curl_down[1]), ""]
    with open(os.path.join(ROOT, "benchmarks", "BULK.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines[-3:]))


if __name__ == "__main__":
    main()
