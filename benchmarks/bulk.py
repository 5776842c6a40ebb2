#!/usr/bin/env python3
"""Bulk transfers for `make bench`: 1 GiB downloaded and uploaded through each of Courier's APIs
beside curl, on this machine. Writes benchmarks/BULK.md.

Downloads come from the benchmark nginx (a 1 GiB file in its page cache, sent with sendfile);
uploads go to Tests/Servers/stream_server.py with ?discard=1 (it counts and drops). Each client
runs as its own process under benchmarks/measure.c (wall time, CPU = user + system, peak RSS from
wait4; a C parent, so the figure is the client's own). Every figure is the median of REPS runs
(BULK_REPS, default 5), taken in rounds of one run of every row. With two CPUs or more the servers
run on CPU 1 and every client on CPU 0: unpinned, the scheduler sometimes puts a client beside its
server and halves a run at random.

"Growth" is the peak RSS of the 1 GiB transfer minus that of the same client moving 1 KiB: what
the transfer itself costs in memory, apart from the program and its libraries (a Python
interpreter with asyncio is 22 MiB before it moves a byte).

  download  Courier: Swift AsyncSequence (for try await in response.body), Swift download to a
            file, C write callback, C output file, C body reader (courier_request_read from
            the caller's thread, what Python's iter_bytes is built on), the CLI (-o), Python iter_bytes() and
            aiter_bytes();
            curl -o /dev/null; Courier and curl into a real file
  upload    Courier: Swift file body, Swift multipart file, Swift AsyncSequence (chunked), C
            file body, C read callback (chunked), the CLI (-T file, -T - from stdin), Python
            (content= a file, files= multipart, content= an iterable: chunked); curl -T (file
            and stdin), curl -F

Python runs `python3 -S` against the library `make install` ships, its package compiled to
bytecode first (see main).
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
REPS = int(os.environ.get("BULK_REPS", "5"))
MEASURE = os.path.join(ROOT, "benchmarks", "out", "measure")


PINNED = (os.cpu_count() or 1) >= 2
CLIENT_CPU = ["-c", "0"] if PINNED else []


def run_child(argv, env=None, stdin=None):
    """Runs argv under benchmarks/out/measure and returns (wall s, cpu s, peak KiB)."""
    command = [MEASURE] + CLIENT_CPU + (["-i", stdin] if stdin else []) + argv
    done = subprocess.run(command, env=env or os.environ, stderr=subprocess.PIPE, text=True)
    wall, cpu, peak, status = done.stderr.strip().splitlines()[-1].split()
    if int(status) != 0:
        raise RuntimeError("%s exited with %s: %s" % (" ".join(argv), status, done.stderr[-400:]))
    return float(wall), float(cpu), int(peak)


def medians(runs):
    return tuple(statistics.median(r[i] for r in runs) for i in range(3))


def build_measure():
    os.makedirs(os.path.dirname(MEASURE), exist_ok=True)
    subprocess.run(["cc", "-O2", "-o", MEASURE, os.path.join(ROOT, "benchmarks", "measure.c")], check=True)


def pin_to_server_cpu(pids):
    if PINNED:
        for pid in pids:
            subprocess.run(["taskset", "-a", "-p", "-c", "1", str(pid)], capture_output=True)


def start(argv):
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(process.stdout.readline().split()[0])
    return process, port


def main():
    build_measure()
    work = tempfile.mkdtemp(prefix="courier-bulk-")
    html = os.path.join(work, "html")
    os.makedirs(html)
    with open(os.path.join(html, "gib"), "wb") as f:
        block = os.urandom(1 << 20)
        for _ in range(1024):
            f.write(block)
    with open(os.path.join(html, "kib"), "wb") as f:
        f.write(os.urandom(1024))
    upload = os.path.join(work, "upload")
    os.link(os.path.join(html, "gib"), upload)
    nginx_env = dict(os.environ, NGINX_WORKERS="1", **({"NGINX_CPU": "1"} if PINNED else {}))
    nginx = subprocess.run([os.path.join(ROOT, "benchmarks", "nginx.sh"), "start", work], capture_output=True, text=True,
                           check=True, env=nginx_env)
    nginx_port = int(nginx.stdout.split()[-1])
    server, stream_port = start([sys.executable, os.path.join(ROOT, "Tests", "Servers", "stream_server.py")])
    pin_to_server_cpu([server.pid])
    down = "http://127.0.0.1:%d/gib" % nginx_port
    up = "http://127.0.0.1:%d/upload?discard=1" % stream_port
    on_disk = os.path.join(work, "downloaded")
    bulk = os.path.join(RELEASE, "courier-bulk")
    cli = os.path.join(RELEASE, "courier")
    # Python loads the library `make install` and the wheel ship (the Swift runtime linked in),
    # from a package compiled to bytecode as pip leaves it (this machine sets
    # PYTHONDONTWRITEBYTECODE, so it would be compiled from source at every start), with -S: the
    # machine's site-packages runs a .pth at every start that imports certifi (5 MiB and 0.1 CPU s
    # that are the machine's, not Courier's).
    library = os.path.join(ROOT, ".build", "install", "release", "libCourierC.so")
    package = os.path.join(ROOT, "cbindings", "python")
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(package, "courier")], check=True)
    python_env = dict(os.environ, COURIER_LIBRARY=library, PYTHONPATH=package)
    python = [sys.executable, "-S"]
    python_upload = python + ["-c", (
        "import sys, courier\n"
        "url, how, path = sys.argv[1:4]\n"
        "def blocks():\n"
        "    with open(path, 'rb') as f:\n"
        "        while block := f.read(1 << 20):\n"
        "            yield block\n"
        "with courier.Engine() as e:\n"
        "    if how == 'file':\n"
        "        r = e.post(url, content=open(path, 'rb'))\n"
        "    elif how == 'multipart':\n"
        "        r = e.post(url, files={'upload': courier.FilePart(path)})\n"
        "    else:\n"
        "        r = e.post(url, content=blocks())\n"
        "assert r.status == 200, r.status\n")]
    python_download = python + ["-c", (
        "import sys, courier\n"
        "with courier.Engine() as e, e.stream('GET', sys.argv[1]) as r:\n"
        "    n = sum(len(c) for c in r.iter_bytes())\n"
        "assert n > 0, n\n"), down]
    python_async_download = python + ["-c", (
        "import sys, asyncio, courier\n"
        "async def main():\n"
        "    n = 0\n"
        "    with courier.Engine() as e:\n"
        "        async with e.stream_async('GET', sys.argv[1]) as r:\n"
        "            async for c in r.aiter_bytes():\n"
        "                n += len(c)\n"
        "    return n\n"
        "assert asyncio.run(main()) > 0\n"), down]
    # (name, argv, environment, stdin); the 1 KiB baseline of each is the same with the small
    # resource in place of the large one.
    downloads = [
        ("Courier Swift AsyncSequence", [bulk, "download", down, "swift-stream"], None, None),
        ("Courier Swift to /dev/null", [bulk, "download", down, "swift-file"], None, None),
        ("Courier C write callback", [bulk, "download", down, "c-callback"], None, None),
        ("Courier C output file (/dev/null)", [bulk, "download", down, "c-file"], None, None),
        ("Courier C body reader (courier_request_read)", [bulk, "download", down, "c-reader"], None, None),
        ("Courier CLI -o /dev/null", [cli, "-s", "-o", "/dev/null", down], None, None),
        ("Courier Python iter_bytes()", python_download, python_env, None),
        ("Courier Python aiter_bytes() (asyncio)", python_async_download, python_env, None),
        ("curl -o /dev/null", ["curl", "-s", "-o", "/dev/null", down], None, None),
        ("Courier Swift to a file on disk", [bulk, "download", down, "swift-file", "--to", on_disk], None, None),
        ("curl -o a file on disk", ["curl", "-s", "-o", on_disk, down], None, None),
    ]
    uploads = [
        ("Courier Swift file body", [bulk, "upload", up, "swift-file", upload], None, None),
        ("Courier Swift multipart file", [bulk, "upload", up, "swift-multipart", upload], None, None),
        ("Courier Swift AsyncSequence (chunked)", [bulk, "upload", up, "swift-stream", upload], None, None),
        ("Courier C file body", [bulk, "upload", up, "c-file", upload], None, None),
        ("Courier C read callback (chunked)", [bulk, "upload", up, "c-callback", upload], None, None),
        ("Courier CLI -T file", [cli, "-s", "-o", "/dev/null", "-T", upload, up], None, None),
        ("Courier CLI -T - (stdin, chunked)", [cli, "-s", "-o", "/dev/null", "-T", "-", up], None, upload),
        ("Courier Python content=file", python_upload + [up, "file", upload], python_env, None),
        ("Courier Python files= (multipart)", python_upload + [up, "multipart", upload], python_env, None),
        ("Courier Python iterable (chunked)", python_upload + [up, "iterable", upload], python_env, None),
        ("curl -T file", ["curl", "-s", "-o", "/dev/null", "-T", upload, up], None, None),
        ("curl -T - (stdin, chunked)", ["curl", "-s", "-o", "/dev/null", "-T", "-", up], None, upload),
        ("curl -F", ["curl", "-s", "-o", "/dev/null", "-F", "upload=@" + upload, up], None, None),
    ]
    small = {down: down.replace("/gib", "/kib"), upload: os.path.join(html, "kib"), "upload=@" + upload: "upload=@" + os.path.join(html, "kib")}
    try:
        # Warm the page cache and the servers.
        run_child(["curl", "-s", "-o", "/dev/null", down])
        # Round after round, every row once per round: this host's speed drifts by tens of per
        # cent over minutes, and rows run back to back would each catch a different part of it.
        cases = [("download",) + case for case in downloads] + [("upload",) + case for case in uploads]
        runs = {(direction, name): [] for direction, name, _, _, _ in cases}
        for round_number in range(REPS):
            for direction, name, argv, env, stdin in cases:
                runs[(direction, name)].append(run_child(argv, env, stdin))
                if os.path.exists(on_disk):
                    os.unlink(on_disk)
            print("round %d of %d done" % (round_number + 1, REPS), flush=True)
        results = {}
        for direction, name, argv, env, stdin in cases:
            wall, cpu, peak = medians(runs[(direction, name)])
            _, base_cpu, base = run_child([small.get(a, a) for a in argv], env, small.get(stdin, stdin))
            results[(direction, name)] = (wall, cpu, peak, peak - base, cpu - base_cpu)
            print("%-8s %-40s %6.2f GB/s  %5.3f CPU s/GiB (%5.3f net)  %6.1f MiB peak  %+5.1f MiB growth"
                  % (direction, name, GIB / wall / 1e9, cpu, cpu - base_cpu, peak / 1024, (peak - base) / 1024), flush=True)
    finally:
        server.terminate()
        subprocess.run([os.path.join(ROOT, "benchmarks", "nginx.sh"), "stop", work], capture_output=True)
    write(results)


def write(results):
    lines = ["# Bulk transfers: 1 GiB through each API", "",
             "Written by `make bench` (`benchmarks/bulk.py`): medians of %d runs on this machine (every row once per round, " % REPS
             + "round after round, so the host's drift spreads over all rows), loopback, "
             + "each client a process of its own measured by wait4 from a small C parent (`benchmarks/measure.c`). "
             + "Downloads from nginx (sendfile from the page cache) to nowhere (counted, or /dev/null) unless the row says "
             + "a file on disk; uploads of a 1 GiB file to a server that counts and drops. "
             + "CPU is the client's user + system time for the GiB. "
             + ("Servers on CPU 1, clients on CPU 0. " if PINNED else "")
             + "Growth is the peak RSS minus the same client's peak for 1 KiB; net CPU likewise (what the GiB costs "
             + "beyond starting the program: a Python interpreter with its imports takes about 0.1 CPU s here). "
             + "Python: `python3 -S` (this machine's site-packages imports certifi at every start) with the library "
             + "`make install` ships (the Swift runtime linked in) and the package compiled to bytecode, as pip installs it.", ""]
    for direction in ("download", "upload"):
        lines += ["## " + direction.capitalize(), "", "| client | GB/s | CPU s/GiB | net CPU s/GiB | peak RSS MiB | growth MiB |",
                  "|---|---:|---:|---:|---:|---:|"]
        for (d, name), (wall, cpu, peak, growth, net) in results.items():
            if d == direction:
                lines.append("| %s | %.2f | %.3f | %.3f | %.1f | %+.1f |" % (name, GIB / wall / 1e9, cpu, net, peak / 1024, growth / 1024))
        lines.append("")
    curl_down = results[("download", "curl -o /dev/null")]
    stream = results[("download", "Courier Swift AsyncSequence")]
    to_null = results[("download", "Courier Swift to /dev/null")]
    to_disk = results[("download", "Courier Swift to a file on disk")]
    python = results[("download", "Courier Python iter_bytes()")]
    reader = results[("download", "Courier C body reader (courier_request_read)")]
    curl_up = results[("upload", "curl -T file")]
    python_up = results[("upload", "Courier Python content=file")]
    lines += ["AsyncSequence against a download to a file on disk (Swift): %.2fx the CPU per GiB (target: within 1.2x); "
              "against writing to /dev/null (no file at all): %.2fx." % (stream[1] / to_disk[1], stream[1] / to_null[1]),
              "Courier's download against curl -o /dev/null: %.2fx the throughput at %.2fx the CPU."
              % (curl_down[0] / to_null[0], to_null[1] / curl_down[1]),
              "The C body reader (a thread of the caller's pulling) against curl -o /dev/null: %.2fx the throughput at %.2fx the CPU."
              % (curl_down[0] / reader[0], reader[1] / curl_down[1]),
              "Python iter_bytes() against curl -o /dev/null: %.2fx the throughput at %.2fx the CPU (%.2fx net of start-up)."
              % (curl_down[0] / python[0], python[1] / curl_down[1], python[4] / curl_down[4]),
              "Python content=file against curl -T file: %.2fx the throughput at %.2fx the CPU (%.2fx net of start-up)."
              % (curl_up[0] / python_up[0], python_up[1] / curl_up[1], python_up[4] / curl_up[4]), ""]
    with open(os.path.join(ROOT, "benchmarks", "BULK.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines[-6:]))


if __name__ == "__main__":
    main()
