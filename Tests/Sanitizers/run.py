#!/usr/bin/env python3
"""`make test-asan` / `make test-tsan`: Courier's binaries built with a sanitizer, driven against
real local servers.

Swift 6.3.1's swift-testing runner cannot start under either sanitizer on this toolchain (ASan
reports a bad free inside the runtime's type-name cache as the runner lists its tests; TSan fails
an allocator CHECK), so the unit and integration suites cannot run sanitized. What can is every
program that uses the library the way users do: the CLI (keep-alive, parallel, the cache on disk,
TLS, every misbehaving-server path), the benchmark driver through the Swift API and the C ABI
(with and without a cache, a thousand coalesced GETs), and the C examples and scenario programs
compiled with clang and the same sanitizer. Any sanitizer report fails the run, with the report.

usage: run.py address|thread BUILD_DIR      (BUILD_DIR: the sanitized build, e.g. .build/tsan/debug)
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "WARNING: ThreadSanitizer",
           "ThreadSanitizer: CHECK failed", "runtime error:")


def log(text):
    print(f"sanitize: {text}", flush=True)


class Harness:
    def __init__(self, sanitizer, build):
        self.sanitizer = sanitizer
        self.build = os.path.abspath(build)
        self.work = tempfile.mkdtemp(prefix=f"courier-{sanitizer}-")
        self.failures = []
        self.runs = 0
        suppressions = os.path.join(HERE, "lsan.supp")
        # exitcode 66 marks a report; halt_on_error=0 lets TSan report every race of a run.
        self.env = dict(os.environ,
                        ASAN_OPTIONS="detect_leaks=1:exitcode=66:abort_on_error=0",
                        LSAN_OPTIONS=f"suppressions={suppressions}:print_suppressions=0",
                        TSAN_OPTIONS=("halt_on_error=0:exitcode=66:second_deadlock_stack=1:"
                                      f"suppressions={os.path.join(HERE, 'tsan.supp')}:print_suppressions=0"),
                        SWIFT_BACKTRACE="enable=no")
        # The library as C programs load it (its SONAME).
        self.lib = os.path.join(self.work, "lib")
        os.makedirs(self.lib)
        os.symlink(os.path.join(self.build, "libCourierC.so"), os.path.join(self.lib, "libcourier.so.1"))
        self.env["LD_LIBRARY_PATH"] = self.lib

    # MARK: servers

    def start_servers(self):
        html = os.path.join(self.work, "html")
        for folder in ("fresh", "revalidate", "nostore", "gzip"):
            os.makedirs(os.path.join(html, folder))
        for path in ("small", "fresh/small", "revalidate/small", "nostore/small"):
            with open(os.path.join(html, path), "wb") as f:
                f.write(b"s" * 100)
        with open(os.path.join(html, "large"), "wb") as f:
            f.write(os.urandom(4 << 20))
        with open(os.path.join(html, "gzip", "text"), "wb") as f:
            f.write(b"".join(b"line %d: the quick brown fox\n" % i for i in range(20000)))
        certs = os.path.join(self.work, "certs")
        subprocess.run(["sh", os.path.join(ROOT, "Tests", "Servers", "make_certs.sh"), certs], check=True, capture_output=True)
        self.ca = os.path.join(certs, "ca.pem")
        tls_port, h2_port = free_port(), free_port()
        extra = (f"server {{ listen 127.0.0.1:{tls_port} ssl; root {html}; ssl_certificate {certs}/server-chain.pem; "
                 f"ssl_certificate_key {certs}/server.key; ssl_session_cache shared:sanitize:1m; "
                 f"location = /hsts {{ add_header Strict-Transport-Security \"max-age=3600; includeSubDomains\" always; "
                 f"return 200 noted; }} }} "
                 f"server {{ listen 127.0.0.1:{h2_port} ssl http2; root {html}; ssl_certificate {certs}/server-chain.pem; "
                 f"ssl_certificate_key {certs}/server.key; }}")
        env = dict(os.environ, NGINX_WORKERS="1", NGINX_EXTRA_SERVER=extra)
        port = subprocess.run([os.path.join(ROOT, "benchmarks", "nginx.sh"), "start", self.work], capture_output=True,
                              text=True, env=env, check=True).stdout.strip()
        self.nginx = f"http://127.0.0.1:{port}"
        self.https = f"https://localhost:{tls_port}"
        self.h2 = f"https://localhost:{h2_port}"
        # The scripted HTTP/2 server runs on Debian's interpreter, where python3-h2 is installed.
        self.h2_process = subprocess.Popen(["/usr/bin/python3", os.path.join(ROOT, "Tests", "Servers", "h2_server.py")],
                                           stdout=subprocess.PIPE, text=True)
        self.h2_scripted = f"http://127.0.0.1:{self.h2_process.stdout.readline().split()[0]}"
        self.scripted_process = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "Servers", "scripted_server.py")],
                                                 stdout=subprocess.PIPE, text=True)
        ports = self.scripted_process.stdout.readline().split()
        self.scripted = f"http://127.0.0.1:{ports[0]}"
        self.blackhole = f"http://127.0.0.1:{ports[1]}"
        self.stream_process = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "Servers", "stream_server.py")],
                                               stdout=subprocess.PIPE, text=True)
        self.stream = f"http://127.0.0.1:{self.stream_process.stdout.readline().split()[0]}"
        # Two retry servers: retry budgets are per origin, and the C program wants two.
        self.retry_processes = [subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "Servers", "retry_server.py")],
                                                 stdout=subprocess.PIPE, text=True) for _ in range(2)]
        self.retry = [f"http://127.0.0.1:{p.stdout.readline().split()[0]}" for p in self.retry_processes]
        self.cookie_process = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "Servers", "cookie_server.py")],
                                               stdout=subprocess.PIPE, text=True)
        self.cookies = f"http://127.0.0.1:{self.cookie_process.stdout.readline().split()[0]}"
        self.proxy_process = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "Servers", "http_proxy.py")],
                                              stdout=subprocess.PIPE, text=True)
        self.proxy = f"http://127.0.0.1:{self.proxy_process.stdout.readline().split()[0]}"
        self.socks_process = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "Servers", "socks_proxy.py"), "c:pw"],
                                              stdout=subprocess.PIPE, text=True)
        self.socks = f"127.0.0.1:{self.socks_process.stdout.readline().split()[0]}"
        certs = os.path.dirname(self.ca)
        self.tls_front_process = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "Servers", "tls_front.py"),
                                                   self.proxy.rsplit(":", 1)[1], os.path.join(certs, "server-chain.pem"),
                                                   os.path.join(certs, "server.key")], stdout=subprocess.PIPE, text=True)
        self.https_proxy = f"https://localhost:{self.tls_front_process.stdout.readline().split()[0]}"
        self.token_process = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "Servers", "token_server.py")],
                                              stdout=subprocess.PIPE, text=True)
        self.tokens = f"http://127.0.0.1:{self.token_process.stdout.readline().split()[0]}"
        self.idempotency_process = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "Servers", "idempotency_server.py")],
                                                    stdout=subprocess.PIPE, text=True)
        self.idempotency = f"http://127.0.0.1:{self.idempotency_process.stdout.readline().split()[0]}"

    def stop_servers(self):
        subprocess.run([os.path.join(ROOT, "benchmarks", "nginx.sh"), "stop", self.work], capture_output=True)
        self.scripted_process.terminate()
        self.stream_process.terminate()
        for process in self.retry_processes + [self.cookie_process, self.proxy_process, self.socks_process, self.tls_front_process, self.token_process,
                                               self.idempotency_process, self.h2_process]:
            process.terminate()
        self.scripted_process.wait()

    # MARK: running

    def run(self, label, argv, expect=0, timeout=300):
        """Runs one program; a sanitizer report or an unexpected exit status is a failure."""
        self.runs += 1
        try:
            done = subprocess.run(argv, env=self.env, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.failures.append((label, f"did not finish within {timeout} s"))
            log(f"FAIL {label}: timeout")
            return
        stderr = done.stderr.decode("utf-8", "replace")
        report = next((m for m in MARKERS if m in stderr), None)
        if report or done.returncode != expect:
            why = report or f"exit {done.returncode}, expected {expect}"
            self.failures.append((label, why + "\n" + stderr[-6000:]))
            log(f"FAIL {label}: {why}")
        else:
            log(f"ok   {label}")

    def compile_c(self, source, name):
        os.makedirs(os.path.join(self.work, "bin"), exist_ok=True)
        output = os.path.join(self.work, "bin", name)
        clang = shutil.which("clang", path=os.path.join(os.path.dirname(os.path.realpath(shutil.which("swift"))))) or "clang"
        swift_libs = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(shutil.which("swift")))), "lib", "swift", "linux")
        argv = [clang, f"-fsanitize={self.sanitizer}", "-g", "-O1", "-std=c11", "-D_DEFAULT_SOURCE",
                "-I", os.path.join(ROOT, "include"), source, "-o", output,
                "-L", self.lib, "-l:libcourier.so.1", "-lpthread",
                # The sanitizer runtimes intercept libdispatch, which needs the blocks runtime.
                "-L", swift_libs, "-ldispatch", "-lBlocksRuntime", f"-Wl,-rpath,{swift_libs}"]
        built = subprocess.run(argv, capture_output=True, text=True)
        if built.returncode != 0:
            raise RuntimeError(f"compiling {source} failed:\n{built.stderr[-4000:]}")
        return output


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scenarios(h):
    cli = os.path.join(h.build, "courier")
    bench = os.path.join(h.build, "courier-bench")
    cache = os.path.join(h.work, "cache")

    # The CLI: keep-alive, parallel, the disk cache shared by invocations, TLS, decoding.
    h.run("cli keep-alive", [cli, "-s", "-o", "/dev/null", h.nginx + "/small?n=[1-300]"])
    for attempt in ("cold", "warm"):
        h.run(f"cli parallel with a disk cache ({attempt})",
              [cli, "-s", "-Z", "--parallel-max", "16", "--cache-dir", cache, "-o", "/dev/null", h.nginx + "/fresh/small?n=[1-200]"])
    h.run("cli revalidation", [cli, "-s", "--cache-dir", cache, "-o", "/dev/null", h.nginx + "/revalidate/small?n=[1-5]",
                               h.nginx + "/revalidate/small?n=[1-5]"])
    h.run("cli https parallel", [cli, "-s", "-Z", "--parallel-max", "8", "--cacert", h.ca, "-o", "/dev/null",
                                 h.https + "/small?n=[1-100]"])
    h.run("cli https large", [cli, "-s", "--cacert", h.ca, "-o", os.path.join(h.work, "large.out"), h.https + "/large"])
    h.run("cli gzip", [cli, "-s", "--compressed", "-o", "/dev/null", h.nginx + "/gzip/text"])
    # Every misbehaving-server path ends in its exit code, with nothing for the sanitizer to see.
    for path, flags, code in [("/truncated", [], 18), ("/empty", [], 52), ("/reset-mid-body", [], 56),
                              ("/garbage-status", [], 8), ("/bad-chunk", [], 56), ("/cl-te", [], 8),
                              ("/huge-headers", [], 100), ("/redirect-loop", ["-L"], 47),
                              ("/silence?s=5", ["-m", "0.5"], 28), ("/corrupt-gzip", ["--compressed"], 61),
                              ("/status?code=404", ["-f"], 22)]:
        h.run(f"cli {path}", [cli, "-s", "-o", "/dev/null"] + flags + [h.scripted + path], expect=code)
    h.run("cli connect timeout", [cli, "-s", "--connect-timeout", "0.5", h.blackhole + "/"], expect=28)

    # The benchmark driver: both front ends, 32 connections, the cache's paths, coalescing.
    for api in (["--api", "swift"], ["--api", "c"]):
        name = api[1]
        h.run(f"bench {name} 32 connections", [bench, h.nginx + "/small", "5000", "32"] + api)
        h.run(f"bench {name} memory hits", [bench, h.nginx + "/fresh/small", "5000", "4", "--cache", "memory"] + api)
        h.run(f"bench {name} disk hits", [bench, h.nginx + "/fresh/small", "2000", "4", "--cache", "disk",
                                          "--cache-dir", os.path.join(h.work, f"bench-{name}")] + api)
        h.run(f"bench {name} 1,000 coalesced", [bench, h.nginx + "/nostore/small", "1000", "1000", "--cache", "memory"] + api)
    h.run("bench swift https", [bench, h.https + "/small", "2000", "8", "--cacert", h.ca])

    # C programs against the library: callbacks, polling, bad input, the cache, threads.
    examples = os.path.join(ROOT, "cbindings", "examples")
    parallel = h.compile_c(os.path.join(examples, "parallel.c"), "parallel")
    h.run("c parallel", [parallel, h.nginx, "300", "/small", "4"])
    poll = h.compile_c(os.path.join(examples, "poll.c"), "poll")
    h.run("c poll", [poll, h.nginx, "100", "/small"])
    badinput = h.compile_c(os.path.join(examples, "badinput.c"), "badinput")
    h.run("c bad input", [badinput, h.nginx])
    cache_example = h.compile_c(os.path.join(examples, "cache.c"), "cache")
    for attempt in ("cold", "warm"):
        h.run(f"c cache ({attempt})", [cache_example, h.nginx, "/revalidate/small", os.path.join(h.work, "c-cache")])
    scenario = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "scenarios.c"), "scenarios")
    h.run("c cancel from a thread", [scenario, "cancel", h.scripted + "/silence?s=10"])
    h.run("c downloads", [scenario, "download", h.nginx + "/small", h.nginx + "/no-such-file", os.path.join(h.work, "downloads")])
    streams(h)
    http2(h)
    retries(h)
    bindings(h)
    unix_sockets(h)
    pretty = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "json.c"), "json")
    h.run("c json pretty", [pretty])
    local_end = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "local_end.c"), "local_end")
    h.run("c local address and ports", [local_end, h.scripted])
    cancel = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "cancel.c"), "cancel")
    h.run("c cancel all, cancel where, curl command", [cancel, h.scripted])
    timecond = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "timecond.c"), "timecond")
    mtime = int(os.stat(os.path.join(h.work, "html", "small")).st_mtime)
    h.run("c time conditions", [timecond, h.nginx + "/small", str(mtime)])
    # (Without the test CA the valid server is as untrusted as a self-signed one.)
    trust = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "trust.c"), "trust")
    h.run("c trust hook and report-only pins", [trust, h.https + "/small", h.ca, h.https + "/small"])


def unix_sockets(h):
    """Connections over Unix domain sockets (a socket file and an abstract name), from C and the
    CLI, against uds_server.py."""
    path, name = os.path.join(h.work, "docker.sock"), f"courier-{h.sanitizer}-{os.getpid()}"
    servers = [subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "Servers", "uds_server.py"), where],
                                stdout=subprocess.PIPE, text=True) for where in (path, "@" + name)]
    try:
        for server in servers:
            server.stdout.readline()
        program = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "unix_socket.c"), "unix_socket")
        h.run("c unix sockets", [program, path, name])
        cli = os.path.join(h.build, "courier")
        h.run("cli --unix-socket keep-alive", [cli, "-s", "-o", "/dev/null", "--unix-socket", path, "http://localhost/_ping?n=[1-50]"])
        h.run("cli --unix-socket missing", [cli, "-s", "--unix-socket", path + ".missing", "http://localhost/"], expect=7)
    finally:
        for server in servers:
            server.terminate()
            server.wait()


def http2(h):
    """HTTP/2: multiplexed streams from each front end, a large body, and every hostile server's
    path ending in its exit code."""
    cli = os.path.join(h.build, "courier")
    bench = os.path.join(h.build, "courier-bench")
    h.run("cli h2 parallel", [cli, "-s", "-Z", "--parallel-max", "50", "--cacert", h.ca, "-o", "/dev/null",
                              h.h2 + "/small?n=[1-300]"])
    h.run("cli h2 large", [cli, "-s", "--cacert", h.ca, "-o", os.path.join(h.work, "h2-large.out"), h.h2 + "/large"])
    for api in ("swift", "c"):
        h.run(f"bench {api} h2 100 streams", [bench, h.h2 + "/small", "3000", "100", "--cacert", h.ca, "--http", "2", "--api", api])
    h.run("cli h2c upload", [cli, "-s", "--http2-prior-knowledge", "-d", "x" * 5000, "-o", "/dev/null", h.h2_scripted + "/echo"])
    for path, code in [("/rst-mid-body", 92), ("/bad-status", 16), ("/big-headers", 100), ("/continuation-flood", 16),
                       ("/window-overflow", 16), ("/ping-flood", 16), ("/refuse-once?s", 0),
                       ("/goaway-once?s", 0), ("/trailers", 0), ("/hpack-bomb", 100), ("/hpack-table-size", 16),
                       ("/goaway-covering", 0)]:
        h.run(f"cli h2 {path}", [cli, "-s", "--http2-prior-knowledge", "-m", "20", "-o", "/dev/null", h.h2_scripted + path],
              expect=code)
    h.run("cli h2 never ends", [cli, "-s", "--http2-prior-knowledge", "-m", "1", "-o", "/dev/null", h.h2_scripted + "/never-ends"],
          expect=28)
    # The rate limits on h2 (held bytes delivered by the timer), a window past which the server
    # sends, and a 100-continue refused before the body.
    h.run("cli h2 rate limits", [cli, "-s", "--limit-rate", "4M", "--cacert", h.ca, "-o", "/dev/null", h.h2 + "/large"])
    h.run("cli h2 data past the window", [cli, "-s", "--http2-prior-knowledge", "--limit-rate", "1000", "-m", "20", "-o", "/dev/null",
                                          h.h2_scripted + "/data-past-window"], expect=16)


def bindings(h):
    """The C conveniences of courier.h 0.2: per-request user data and the response facts, engine
    defaults, reusing a request handle (courier_request_reset) and the debug callback, called
    from the loop thread while the caller's thread waits."""
    info = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "info.c"), "info")
    h.run("c user data and response facts", [info, h.scripted, h.https + "/small", h.ca])
    defaults = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "defaults.c"), "defaults")
    h.run("c engine defaults, reset, debug", [defaults, h.scripted, h.https + "/small", h.ca])


def retries(h):
    """Retries (waits on the loop's timer, requeues, the hook from the loop thread, refusals) and
    request groups (members ending on the loop thread, fail-fast cancellation) and cookie jars."""
    cli = os.path.join(h.build, "courier")
    h.run("cli --retry 503", [cli, "-s", "--retry", "3", "--retry-delay", "0.02", h.retry[0] + "/flaky/s1?fail=2&mode=503"])
    h.run("cli --retry reset", [cli, "-s", "--retry", "2", "--retry-delay", "0", h.retry[0] + "/flaky/s2?fail=1&mode=reset"])
    h.run("cli --retry-connrefused", [cli, "-s", "--retry", "2", "--retry-delay", "0", "--retry-connrefused", "http://127.0.0.1:1/"],
          expect=7)
    program = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "retry.c"), "retry")
    h.run("c retry", [program, h.retry[0], h.retry[1]])
    group = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "group.c"), "group")
    h.run("c groups", [group, h.scripted])
    cookies = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "cookies.c"), "cookies")
    h.run("c cookies", [cookies, h.cookies, os.path.join(h.work, "cookies.txt")])
    jar = os.path.join(h.work, "cli-cookies.txt")
    h.run("cli -c", [cli, "-s", "-c", jar, h.cookies + "/set?c=a%3D1"])
    h.run("cli -b", [cli, "-s", "-b", jar, h.cookies + "/echo"])
    auth = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "auth.c"), "auth")
    h.run("c auth", [auth, h.scripted])
    composition(h)


def composition(h):
    """Proxies (forwarding, CONNECT and SOCKS5 tunnels through TunnelStream), the authenticator
    (a refresh on a dispatch thread, replays), engine hooks (C callbacks on the loop thread and
    the sending thread) and chains."""
    cli = os.path.join(h.build, "courier")
    proxy = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "proxy.c"), "proxy")
    h.run("c proxy", [proxy, h.proxy, h.nginx, h.https, h.ca])
    h.run("cli -x", [cli, "-s", "-o", "/dev/null", "-x", h.proxy, "--cacert", h.ca, h.nginx + "/small", h.https + "/small"])
    h.run("cli -x refused", [cli, "-s", "-x", h.proxy, "https://refused.test/"], expect=56)
    socks = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "socks.c"), "socks")
    h.run("c socks", [socks, h.socks, h.nginx, h.https, h.ca])
    https_proxy = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "https_proxy.c"), "https_proxy")
    h.run("c https proxy", [https_proxy, h.https_proxy, h.proxy, h.nginx, h.https, h.ca])
    mock = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "mock.c"), "mock")
    h.run("c mock server", [mock])
    hsts = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "hsts.c"), "hsts")
    h.run("c hsts", [hsts, h.https, h.https.replace("https://", "http://"), h.ca, os.path.join(h.work, "hsts.txt")])
    challenge = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "challenge.c"), "challenge")
    h.run("c challenge", [challenge, h.tokens])
    hooks = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "hooks.c"), "hooks")
    h.run("c hooks", [hooks, h.scripted])
    chain = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "chain.c"), "chain")
    h.run("c chain", [chain, h.scripted])
    offline(h)


def offline(h):
    """The outbox (journal writes and reads, freezing, waiting, replays) and the network monitor
    (netlink on the loop), through C and the CLI."""
    cli = os.path.join(h.build, "courier")
    program = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "outbox.c"), "outbox")
    h.run("c outbox", [program, "checks", h.idempotency, os.path.join(h.work, "outbox-c")])
    h.run("c network", [program, "network"])
    h.run("c reachability and descriptor", [program, "reach", h.idempotency])
    outbox = os.path.join(h.work, "outbox-cli")
    h.run("cli --outbox kept", [cli, "-s", "--outbox", outbox, "-d", "x", "http://127.0.0.1:1/submit"], expect=75)
    h.run("cli --outbox sent", [cli, "-s", "--outbox", outbox, "-d", "y", h.idempotency + "/submit"])
    h.run("cli --flush kept", [cli, "-s", "--outbox", outbox, "--flush"], expect=75)
    h.run("cli --watch-network", [cli, "--watch-network", "-m", "0.2", "http://127.0.0.1:1/", "http://nowhere.invalid/"])


def streams(h):
    """Streamed bodies: forms, uploads from files, stdin-like producers and callbacks, paused
    reads, resumable downloads, through the CLI, the Swift and C APIs (courier-bulk) and C."""
    cli = os.path.join(h.build, "courier")
    bulk = os.path.join(h.build, "courier-bulk")
    work = os.path.join(h.work, "streams")
    os.makedirs(work, exist_ok=True)
    upload = os.path.join(work, "upload.bin")
    with open(upload, "wb") as f:
        f.write(os.urandom(3 << 20))
    h.run("cli -F", [cli, "-s", "-o", "/dev/null", "-F", "a=b", "-F", "f=@" + upload, h.stream + "/upload"])
    h.run("cli -T", [cli, "-s", "-o", "/dev/null", "-T", upload, h.stream + "/upload"])
    h.run("cli early 413", [cli, "-s", "-o", "/dev/null", "-T", upload, h.stream + "/upload?reject=413"])
    resumed = os.path.join(work, "resumed.bin")
    h.run("cli -C - cut", [cli, "-s", "-C", "-", "-o", resumed, h.stream + "/blob/8000000?cut=3000000"], expect=18)
    h.run("cli -C - rest", [cli, "-s", "-C", "-", "-o", resumed, h.stream + "/blob/8000000"])
    h.run("cli --limit-rate", [cli, "-s", "--limit-rate", "20M", "-o", "/dev/null", h.stream + "/blob/4000000"])
    for mode in ("swift-stream", "swift-file", "c-callback", "c-file", "c-reader"):
        h.run(f"bulk download {mode}", [bulk, "download", h.stream + "/blob/64000000", mode, "--slow"])
    for mode in ("swift-file", "swift-multipart", "swift-stream", "c-file", "c-callback"):
        h.run(f"bulk upload {mode}", [bulk, "upload", h.stream + "/upload?discard=1", mode, upload])
    program = h.compile_c(os.path.join(ROOT, "Tests", "CPrograms", "streams.c"), "streams")
    h.run("c streams slow", [program, "slow", h.stream + "/blob/20000000", "20000000"])
    h.run("c streams upload", [program, "upload", h.stream + "/upload", "3000000"])
    h.run("c streams form", [program, "form", h.stream + "/upload?echo=1", upload])
    h.run("c streams resume", [program, "resume", h.stream + "/blob/5000000?cut=2000000", h.stream + "/blob/5000000?via=2",
                               os.path.join(work, "c-resumed.bin")])
    h.run("c streams fanout", [program, "fanout", h.stream + "/blob/3000000", os.path.join(work, "fan.bin")])
    h.run("c streams destination", [program, "destination", h.stream + "/blob/3000", work])
    h.run("c streams pull", [program, "pull", h.stream + "/blob/20000000?delay=300", "20000000", os.path.join(work, "pull.bin")])


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("address", "thread"):
        print(__doc__)
        return 2
    h = Harness(sys.argv[1], sys.argv[2])
    os.makedirs(os.path.join(h.work, "downloads"))
    h.start_servers()
    try:
        scenarios(h)
    finally:
        h.stop_servers()
    if h.failures:
        for label, why in h.failures:
            print(f"\n==== {label}\n{why}")
        log(f"{len(h.failures)} of {h.runs} runs failed under the {h.sanitizer} sanitizer")
        return 1
    shutil.rmtree(h.work, ignore_errors=True)
    log(f"all {h.runs} runs clean under the {h.sanitizer} sanitizer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
