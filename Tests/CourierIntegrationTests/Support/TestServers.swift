import Foundation
import Synchronization
import Testing
@testable import Courier
@testable import CourierCore

/// The real servers the integration tests talk to, started once per test process on 127.0.0.1
/// with ephemeral ports: nginx (keep-alive, large bodies, gzip) and the scripted raw-socket
/// server in `Tests/Servers/scripted_server.py` (every kind of misbehaviour).
final class TestServers: @unchecked Sendable {
    static let shared = TestServers()

    let root: String
    let nginxPort: Int
    let scriptedPort: Int
    /// A port whose listener never accepts and whose backlog is full: connects hang.
    let blackholePort: Int
    private var processes: [Process] = []
    /// Test certificates (Tests/Servers/make_certs.sh).
    let certs: String
    /// nginx TLS servers by name: valid, selfsigned, wronghost, expired, notyet, ip, clientauth, tls12, tls13,
    /// and h2 / h2clientauth / h2closing (HTTP/2 by ALPN; the last ends each connection with a
    /// GOAWAY after 3 requests, nginx's keepalive_requests).
    let tlsPorts: [String: Int]
    /// The scripted TLS server (close_notify, truncation) and a port that answers TLS with plaintext.
    let scriptedTLSPort: Int
    let notTLSPort: Int
    /// Streamed uploads and generated downloads with Range (Tests/Servers/stream_server.py).
    let streamPort: Int
    /// Failures on purpose, N times per key, for the retry tests (Tests/Servers/retry_server.py).
    let retryPort: Int

    /// https://localhost on the server with a valid chain.
    var https: String { "https://localhost:\(tlsPorts["valid"]!)" }

    /// The TLS settings that trust the test CA.
    var trustTestCA: TLSConfiguration { TLSConfiguration(caFile: certs + "/ca.pem") }

    /// Bytes of the large file nginx serves, generated (not random) so tests can check content.
    static let largeSize = 64 * 1024 * 1024

    var nginx: String { "http://127.0.0.1:\(nginxPort)" }
    var scripted: String { "http://127.0.0.1:\(scriptedPort)" }
    var stream: String { "http://127.0.0.1:\(streamPort)" }
    var retry: String { "http://127.0.0.1:\(retryPort)" }
    /// The scripted server under another name: a different origin (and scheduler host) on the same
    /// process, for cross-origin redirects and per-host limits.
    var scriptedOtherOrigin: String { "http://localhost:\(scriptedPort)" }

    private init() {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tests-\(getpid())").path
        try? FileManager.default.removeItem(atPath: root)
        try! FileManager.default.createDirectory(atPath: root + "/html/gzip", withIntermediateDirectories: true)
        try! FileManager.default.createDirectory(atPath: root + "/html/revalidate", withIntermediateDirectories: true)
        Self.writeFixtures(root + "/html")
        certs = root + "/certs"
        Self.makeCertificates(certs)
        (scriptedPort, blackholePort) = Self.startScripted(&processes)
        (scriptedTLSPort, notTLSPort) = Self.startScriptedTLS(certs: certs, processes: &processes)
        (nginxPort, tlsPorts) = Self.startNginx(root: root, certs: certs, processes: &processes)
        (streamPort, _) = Self.startScript([Self.packageRoot + "/Tests/Servers/stream_server.py"], &processes)
        (retryPort, _) = Self.startScript([Self.packageRoot + "/Tests/Servers/retry_server.py"], &processes)
        let children = processes
        let directory = root
        TestServers.atExit = {
            for p in children where p.isRunning { p.terminate() }
            try? FileManager.default.removeItem(atPath: directory)
        }
        atexit { TestServers.atExit?() }
        // The whole suite talks to 127.0.0.1 in parallel; give it room. Tests about limits use
        // their own host names; none narrows the width in this process (a narrowed width queues
        // every other test behind whatever holds its slots: QueueTests runs that in a child).
        SharedQueue.width = 64
        SharedQueue.defaultHostLimit = 64
        Self.favourTheLoopThread()
        StallWatchdog.start(packageRoot: Self.packageRoot)
    }

    /// Raises the scheduling priority of this process's loop thread (and only that thread: the
    /// children other threads spawn keep the default) where the run may (root, as in CI).
    ///
    /// The suite runs about 500 tests at once on two cores beside ~45 servers, valgrind, compilers
    /// and CLI children; sampling /proc/<tid>/schedstat showed the loop thread runnable but
    /// waiting for a CPU 80–90 % of the time in the busiest seconds, so a TLS rejection that takes
    /// milliseconds took 5 s by the loop's own clock. The deadlines and "answered promptly" bounds
    /// the tests check are the library's behaviour; how fairly the kernel shares two cores with
    /// the rest of the run is not. A run without the privilege is unchanged (and slower to trust).
    private static func favourTheLoopThread() {
        Runtime.shared.execute {
            // The thread's id, as /proc/thread-self names it ("pid/task/tid").
            guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"),
                  let tid = link.split(separator: "/").last.flatMap({ id_t($0) }) else { return }
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), tid, -10)
        }
    }

    nonisolated(unsafe) static var atExit: (() -> Void)?

    static func largeFileByte(_ offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: (offset &* 31) ^ (offset >> 11)) }

    static func writeFixtures(_ html: String) {
        try! (Data(repeating: UInt8(ascii: "s"), count: 100)).write(to: URL(fileURLWithPath: html + "/small"))
        // The README quick start's first request (GET items?page=2).
        try! Data("[]".utf8).write(to: URL(fileURLWithPath: html + "/items"))
        // Served with `Cache-Control: no-cache`: a cache revalidates it every time, however long
        // ago the file was written (plain /small turns heuristically fresh after ten seconds).
        try! (Data(repeating: UInt8(ascii: "r"), count: 100)).write(to: URL(fileURLWithPath: html + "/revalidate/small"))
        // 16 KiB that are not all one byte (the fault-injection tests compare bodies).
        try! Data((0..<16_384).map { largeFileByte($0 &* 7) }).write(to: URL(fileURLWithPath: html + "/medium"))
        var large = Data(count: largeSize)
        large.withUnsafeMutableBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            for i in 0..<largeSize { bytes[i] = largeFileByte(i) }
        }
        try! large.write(to: URL(fileURLWithPath: html + "/large"))
        let text = (0..<50_000).map { "line \($0): the quick brown fox jumps over the lazy dog\n" }.joined()
        try! Data(text.utf8).write(to: URL(fileURLWithPath: html + "/gzip/text"))
    }

    static var gzipText: String {
        (0..<50_000).map { "line \($0): the quick brown fox jumps over the lazy dog\n" }.joined()
    }

    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// Starts another scripted server for one test: its own port means its own pool key, so no
    /// other test running in parallel can take (or leave behind) a connection it counts on.
    /// (Started on a thread of its own: it blocks until the server prints its port.)
    func privateScripted() async -> String {
        await privateServer("scripted_server.py")
    }

    /// Starts another retry server for one test: retry budgets are per origin, so a test's
    /// failures never spend another test's budget.
    func privateRetryServer() async -> String {
        await privateServer("retry_server.py")
    }

    /// Starts a cookie server (Tests/Servers/cookie_server.py) for one test.
    func privateCookieServer() async -> String {
        await privateServer("cookie_server.py")
    }

    /// Starts an idempotency-key recording server (Tests/Servers/idempotency_server.py) for one
    /// test, on `port` when given (a port the test reserved while nothing listened there).
    func privateIdempotencyServer(port: Int? = nil) async -> String {
        await privateServer("idempotency_server.py", arguments: port.map { [String($0)] } ?? [])
    }

    /// An Idempotency-Key server listening on ::1 only (nothing on 127.0.0.1): its port.
    func idempotencyServerOnIPv6Loopback() async -> Int {
        let url = await privateServer("idempotency_server.py", arguments: ["0", "::1"])
        return Int(url.split(separator: ":").last!)!
    }

    /// A port nothing listens on, reserved for the rest of the run: a socket bound to it with
    /// SO_REUSEPORT that never listens (connections are refused) keeps every other bind and
    /// outgoing connection off it, while a test server started later on it (SO_REUSEPORT too,
    /// keepalive_server.py) can listen there. (Released and re-bound, the port was once taken by
    /// another test's server meanwhile.)
    static func unusedPort() -> Int {
        let (fd, port) = boundSocket(reusePort: true)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return port
    }

    /// Starts a token server (Tests/Servers/token_server.py) for one test.
    func privateTokenServer() async -> String {
        await privateServer("token_server.py")
    }

    /// Starts an HTTP proxy (Tests/Servers/http_proxy.py) for one test; with `credentials`
    /// ("user:password") it answers 407 to requests without them.
    func privateProxy(credentials: String? = nil) async -> String {
        await privateServer("http_proxy.py", arguments: credentials.map { [$0] } ?? [])
    }

    /// Starts a Digest-authenticating server (Tests/Servers/digest_server.py: user ann, password
    /// s3cret) for one test.
    func privateDigestServer() async -> String {
        await privateServer("digest_server.py")
    }

    /// Starts an HTTPS proxy for one test: http_proxy.py behind TLS (Tests/Servers/tls_front.py,
    /// the test CA's certificate for localhost). `proxy` is `https://localhost:port`; `plain` the
    /// proxy itself, whose log answers there.
    func privateHTTPSProxy(credentials: String? = nil) async -> (proxy: String, plain: String) {
        let plain = await privateProxy(credentials: credentials)
        let backend = String(plain.split(separator: ":").last!)
        let front = await privateServer("tls_front.py", arguments: [backend, certs + "/server-chain.pem", certs + "/server.key"])
        return (front.replacingOccurrences(of: "http://127.0.0.1", with: "https://localhost"), plain)
    }

    /// Starts a SOCKS5 proxy (Tests/Servers/socks_proxy.py) for one test: `http://127.0.0.1:port`
    /// (its log answers there); with `credentials` ("user:password") it takes only that login.
    func privateSocksProxy(credentials: String? = nil) async -> String {
        await privateServer("socks_proxy.py", arguments: credentials.map { [$0] } ?? [])
    }

    private func privateServer(_ script: String, arguments: [String] = []) async -> String {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var extra: [Process] = []
                let (port, _) = Self.startScript([Self.packageRoot + "/Tests/Servers/" + script] + arguments, &extra)
                Self.addCleanup { for p in extra where p.isRunning { p.terminate() } }
                continuation.resume(returning: "http://127.0.0.1:\(port)")
            }
        }
    }

    private static let lock = NSLock()

    /// Runs `body` at exit, after what was registered before.
    static func addCleanup(_ body: @escaping () -> Void) {
        lock.lock()
        let previous = atExit
        atExit = { previous?(); body() }
        lock.unlock()
    }

    private static func makeCertificates(_ directory: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [packageRoot + "/Tests/Servers/make_certs.sh", directory]
        process.standardOutput = FileHandle.nullDevice
        try! process.run()
        process.waitUntilExit()
        precondition(process.terminationStatus == 0, "make_certs.sh failed")
    }

    private static func startScriptedTLS(certs: String, processes: inout [Process]) -> (Int, Int) {
        startScript([packageRoot + "/Tests/Servers/tls_server.py", certs + "/server-chain.pem", certs + "/server.key"], &processes)
    }

    private static func startScripted(_ processes: inout [Process]) -> (Int, Int) {
        startScript([packageRoot + "/Tests/Servers/scripted_server.py"], &processes)
    }

    /// A Python server script, not started yet, that ends itself when this process goes away
    /// (Tests/Servers/parent_guard.py: no supervising interpreter beside it).
    static func guardedServer(_ script: String, _ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: pythonPath)
        process.arguments = [script] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["COURIER_TEST_PARENT": String(getpid())]) { _, new in new }
        return process
    }

    /// Starts a guarded server script (`guardedServer`) that prints two ports.
    private static func startScript(_ command: [String], _ processes: inout [Process]) -> (Int, Int) {
        let process = guardedServer(command[0], Array(command.dropFirst()))
        let pipe = Pipe()
        process.standardOutput = pipe
        // Never the test runner's own stdout/stderr: a server holding them open keeps `swift test`
        // waiting for end-of-file after the tests are done.
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try! process.run()
        processes.append(process)
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = pipe.fileHandleForReading.availableData
            precondition(!chunk.isEmpty, "\(command[0]) exited before printing its port")
            line.append(chunk)
        }
        let ports = String(decoding: line, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int($0) }
        return (ports[0], ports[1])
    }

    private static func freePort() -> Int {
        let (fd, port) = boundSocket(reusePort: false)
        close(fd)
        return port
    }

    /// A TCP socket bound to an ephemeral port of 127.0.0.1 (not listening), and the port.
    private static func boundSocket(reusePort: Bool) -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        if reusePort { setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size)) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    private static func startNginx(root: String, certs: String, processes: inout [Process]) -> (Int, [String: Int]) {
        for _ in 0..<10 {
            let port = freePort()
            let names = ["valid", "selfsigned", "wronghost", "expired", "notyet", "ip", "clientauth", "tls12", "tls13", "h2", "h2clientauth", "h2closing"]
            var tls: [String: Int] = [:]
            for name in names { tls[name] = freePort() }
            guard Set(tls.values).count == names.count, !tls.values.contains(port) else { continue }
            func tlsServer(_ name: String, cert: String, key: String, extra: String = "", http2: Bool = false) -> String {
                """
                    server {
                        listen 127.0.0.1:\(tls[name]!) ssl\(http2 ? " http2" : "");
                        ssl_certificate \(certs)/\(cert);
                        ssl_certificate_key \(certs)/\(key);
                        \(extra)
                        root \(root)/html;
                        location = /moved { return 301 /small; }
                        location = /to-ip { return 302 https://127.0.0.1:\(tls["ip"]!)/small; }
                        location /revalidate/ { add_header Cache-Control no-cache; }
                        location = /hsts { add_header Strict-Transport-Security "max-age=3600; includeSubDomains" always; return 200 "noted"; }
                        location = /to-http { return 302 http://localhost:\(tls["valid"]!)/small; }
                        location = /hsts-clear { add_header Strict-Transport-Security "max-age=0" always; return 200 "cleared"; }
                    }
                """
            }
            let config = """
            \(getuid() == 0 ? "user root root;" : "")
            worker_processes 1;
            daemon off;
            master_process off;
            pid \(root)/nginx.pid;
            error_log \(root)/error.log warn;
            events { worker_connections 4096; }
            http {
                access_log off;
                keepalive_requests 100000;
                keepalive_timeout 60s;
                default_type application/octet-stream;
                client_body_temp_path \(root)/tmp-body;
                proxy_temp_path \(root)/tmp-proxy;
                fastcgi_temp_path \(root)/tmp-fastcgi;
                uwsgi_temp_path \(root)/tmp-uwsgi;
                scgi_temp_path \(root)/tmp-scgi;
                ssl_session_cache shared:courier:1m;
                server {
                    listen 127.0.0.1:\(port);
                    root \(root)/html;
                    location /gzip/ { gzip on; gzip_vary on; gzip_types *; gzip_min_length 0; }
                    location = /moved { return 301 /small; }
                    location = /see-other { return 303 /small; }
                    location = /to-hsts-host { return 302 http://localhost:\(tls["valid"]!)/small; }
                    location /revalidate/ { add_header Cache-Control no-cache; }
                    # The fixtures again, fresh for an hour (the cache's range tests).
                    location /expiring/ { expires 1h; alias \(root)/html/; }
                    # Uploads: nginx refuses a body over its limit with 413 before reading it.
                    location /limited/ { client_max_body_size 1k; }
                }
            \(tlsServer("valid", cert: "server-chain.pem", key: "server.key"))
            \(tlsServer("selfsigned", cert: "selfsigned.pem", key: "selfsigned.key"))
            \(tlsServer("wronghost", cert: "wronghost.pem", key: "wronghost.key"))
            \(tlsServer("expired", cert: "expired.pem", key: "expired.key"))
            \(tlsServer("notyet", cert: "notyet.pem", key: "notyet.key"))
            \(tlsServer("ip", cert: "ip.pem", key: "ip.key"))
            \(tlsServer("clientauth", cert: "server-chain.pem", key: "server.key",
                        extra: "ssl_verify_client on; ssl_client_certificate \(certs)/ca.pem;"))
            \(tlsServer("tls12", cert: "server-chain.pem", key: "server.key", extra: "ssl_protocols TLSv1.2;"))
            \(tlsServer("tls13", cert: "server-chain.pem", key: "server.key", extra: "ssl_protocols TLSv1.3;"))
            \(tlsServer("h2", cert: "server-chain.pem", key: "server.key", http2: true))
            \(tlsServer("h2clientauth", cert: "server-chain.pem", key: "server.key",
                       extra: "ssl_client_certificate \(certs)/ca.pem; ssl_verify_client on;", http2: true))
            \(tlsServer("h2closing", cert: "server-chain.pem", key: "server.key", extra: "keepalive_requests 3;", http2: true))
            }
            """
            try! config.write(toFile: root + "/nginx.conf", atomically: false, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [pythonPath, packageRoot + "/Tests/Servers/supervise.py", String(getpid()), "--",
                                 "/usr/sbin/nginx", "-c", root + "/nginx.conf", "-p", root, "-e", root + "/error.log"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try! process.run()
            // Ready when every port accepts (or gone if a port was taken meanwhile).
            for _ in 0..<150 {
                if !process.isRunning { break }
                if canConnect(port), tls.values.allSatisfy(canConnect) {
                    processes.append(process)
                    return (port, tls)
                }
                usleep(20_000)
            }
            if process.isRunning { process.terminate() }
        }
        fatalError("nginx did not start; see \(root)/error.log")
    }

    private static func canConnect(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
    }
}

/// Sends one request through the shared queue and waits; the transfer and how long it took, in
/// seconds, by the loop's own clock: from leaving the queue when it started (deadlines never count
/// queue time, and other suites change the process-wide width while this one runs), from
/// entering it when it never left.
func fetch(_ url: String, method: HTTPMethod = .get, headers: HTTPHeaders = [:], body: RequestBody = .empty,
           configure: (inout TransferOptions) -> Void = { _ in }, sink: ResponseSink = .memory) async -> (Transfer, Double) {
    var options = TransferOptions()
    configure(&options)
    let transfer = Transfer(url: try! CourierURL(parsing: url), method: method, headers: headers, body: body, options: options)
    transfer.sink = sink
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        transfer.delegate = CompletionWaiter { continuation.resume() }
        Runtime.shared.submit(transfer)
    }
    let metrics = transfer.metrics
    let elapsed = metrics.startedAt != 0 ? metrics.total.seconds : metrics.totalIncludingQueue.seconds
    return (transfer, elapsed)
}

/// A transfer submitted now whose end can be awaited later: submitting in the caller's order is
/// what makes the loop take transfers in that order (its inbox is first in, first out), so a test
/// that needs "the first holds the slot, the second waits" needs no sleep between them.
final class StartedFetch: @unchecked Sendable {
    let transfer: Transfer
    private let state = Mutex<(done: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    init(_ url: String, configure: (inout TransferOptions) -> Void = { _ in }) {
        var options = TransferOptions()
        configure(&options)
        transfer = Transfer(url: try! CourierURL(parsing: url), options: options)
        // (The delegate, and with it this capture, is released when the transfer ends.)
        transfer.delegate = CompletionWaiter { [self] in
            let waiter = state.withLock { value -> CheckedContinuation<Void, Never>? in
                value.done = true
                defer { value.waiter = nil }
                return value.waiter
            }
            waiter?.resume()
        }
        Runtime.shared.submit(transfer)
    }

    /// Waits until the transfer has ended.
    func finished() async -> Transfer {
        await withCheckedContinuation { continuation in
            let already = state.withLock { value -> Bool in
                if !value.done { value.waiter = continuation }
                return value.done
            }
            if already { continuation.resume() }
        }
        return transfer
    }
}

/// Reads loop-thread state on the loop thread.
func onLoop<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Runtime.shared.execute { continuation.resume(returning: body()) }
    }
}

/// Waits, up to 10 s, until `condition` (evaluated on the loop thread) holds; false if it never did.
func waitOnLoop(_ condition: @escaping @Sendable () -> Bool) async -> Bool {
    for _ in 0..<1000 {
        if await onLoop(condition) { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return false
}

/// Waits, up to 10 s, until the scripted server has seen `count` requests of `group`.
func waitForScriptedServer(group: String, seen count: Int) async -> Bool {
    for _ in 0..<500 {
        if await scriptedStats(group).seen >= count { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return false
}

/// A delegate that only waits for completion.
final class CompletionWaiter: TransferDelegate, @unchecked Sendable {
    let onComplete: () -> Void
    init(_ onComplete: @escaping () -> Void) { self.onComplete = onComplete }
    func transferDidReceiveHead(_ transfer: Transfer) {}
    func transferDidProgress(_ transfer: Transfer) {}
    func transferDidComplete(_ transfer: Transfer) { onComplete() }
}

/// Reads the scripted server's statistics for a request group.
func scriptedStats(_ group: String) async -> (peak: Int, seen: Int, connections: Int) {
    let (t, _) = await fetch(TestServers.shared.scripted + "/stats?of=\(group)")
    let json = try! JSONValue(parsing: t.responseBody)
    return (json["peak"]!.intValue!, json["seen"]!.intValue!, json["connections"]!.intValue!)
}

extension Transfer {
    var bodyText: String { String(decoding: responseBody, as: UTF8.self) }
}
