import Foundation
import Glibc
import Testing
@testable import CourierCore

/// What curl users' scripts rely on, tried as they use it: curl's options with curl's meaning,
/// its -w variables, its limits, against the suite's nginx, scripted and proxy servers.
@Suite("courier CLI: curl's habits")
struct CLIScriptHabitsTests {
    let s = TestServers.shared

    func run(_ arguments: [String]) async throws -> ProcessResult {
        try await runProcess(CLITests.binary, arguments)
    }

    /// nginx 1.22's default protocols stop at TLS 1.2; its "tls13" server speaks 1.3 only.
    var https: String { "https://localhost:\(s.tlsPorts["valid"]!)/small" }
    var https13: String { "https://localhost:\(s.tlsPorts["tls13"]!)/small" }
    var caFile: String { s.certs + "/ca.pem" }

    /// The handshake as -v shows it.
    func verboseHandshake(_ flags: [String], url: String? = nil) async throws -> ProcessResult {
        try await run(["-s", "-v", "-o", "/dev/null", "--cacert", caFile] + flags + [url ?? https])
    }

    @Test func cipherSuitesAndCurvesAreCurls() async throws {
        let tls12 = try await verboseHandshake(["--tls-max", "1.2", "--ciphers", "ECDHE-RSA-AES128-GCM-SHA256"])
        #expect(tls12.status == 0, "\(tls12.stderr)")
        #expect(tls12.stderr.contains("SSL connection using TLSv1.2 / ECDHE-RSA-AES128-GCM-SHA256"), "\(tls12.stderr)")
        let tls13 = try await verboseHandshake(["--tlsv1.3", "--tls13-ciphers", "TLS_CHACHA20_POLY1305_SHA256", "--curves", "P-256"], url: https13)
        #expect(tls13.status == 0, "\(tls13.stderr)")
        #expect(tls13.stderr.contains("SSL connection using TLSv1.3 / TLS_CHACHA20_POLY1305_SHA256 / secp256r1"), "\(tls13.stderr)")
        // Lists that name nothing OpenSSL has: curl's 59, before anything is sent.
        for flags in [["--ciphers", "NO-SUCH-CIPHER"], ["--tls13-ciphers", "TLS_NOPE"], ["--curves", "nocurve"]] {
            let r = try await run(["-s", "--cacert", caFile] + flags + [https])
            #expect(r.status == 59, "\(flags): exit \(r.status) \(r.stderr)")
        }
    }

    @Test func minimumVersionsAndALPN() async throws {
        // --tlsv1 and --tlsv1.1 are minimums: the newest both sides allow is still chosen.
        for flag in ["--tlsv1", "--tlsv1.0", "--tlsv1.1"] {
            let r = try await verboseHandshake([flag], url: https13)
            #expect(r.status == 0 && r.stderr.contains("SSL connection using TLSv1.3"), "\(flag): \(r.stderr)")
        }
        let offered = try await verboseHandshake([])
        #expect(offered.stderr.contains("ALPN: offers h2,http/1.1") && offered.stderr.contains("ALPN: server accepted http/1.1"))
        let none = try await verboseHandshake(["--no-alpn"])
        #expect(none.status == 0, "\(none.stderr)")
        #expect(!none.stderr.contains("ALPN"), "no ALPN offered, none accepted: \(none.stderr)")
    }

    @Test func sessionIDOnAndOff() async throws {
        // Each request on a connection of its own (the server closes after each): the second
        // resumes unless --no-sessionid, and --sessionid after it turns resumption back on.
        let url = "https://localhost:\(s.tlsPorts["tls13"]!)/small"
        func resumed(_ flags: [String]) async throws -> String {
            let r = try await run(["-s", "--cacert", caFile, "-H", "Connection: close", "-o", "/dev/null", "-o", "/dev/null",
                                   "-w", "%{tls_resumed}"] + flags + [url, url])
            #expect(r.status == 0, "\(r.stderr)")
            return r.stdout
        }
        #expect(try await resumed([]) == "01")
        #expect(try await resumed(["--no-sessionid"]) == "00")
        #expect(try await resumed(["--no-sessionid", "--sessionid"]) == "01")
    }

    @Test func verboseShowsTheHandshakeAndWhereItStopped() async throws {
        let ok = try await verboseHandshake([], url: https13)
        for line in ["* TLSv1.3 (OUT), TLS handshake, Client hello (1):", "* TLSv1.3 (IN), TLS handshake, Server hello (2):",
                     "* SSL connection using TLSv1.3 / ", "*  subject: CN=localhost", "*  SSL certificate verify ok.",
                     "*   Certificate level 0: Public key type RSA (2048/112 Bits/secBits), signed using sha256WithRSAEncryption",
                     "*   Certificate level 1: ", "< HTTP/1.1 200 OK"] {
            #expect(ok.stderr.contains(line), "missing \(line)")
        }
        // An untrusted certificate: the handshake as far as it went, the chain, and why.
        let untrusted = try await run(["-s", "-S", "-v", "https://localhost:\(s.tlsPorts["selfsigned"]!)/small"])
        #expect(untrusted.status == 60)
        for line in ["* Connected to localhost", "TLS handshake, Certificate (11):", "*  subject: CN=localhost",
                     "* SSL certificate problem: ", "* Closing connection 0"] {
            #expect(untrusted.stderr.contains(line), "missing \(line): \(untrusted.stderr)")
        }
        // A handshake that cannot complete (the server answers plaintext): where it stopped.
        let notTLS = try await run(["-s", "-v", "https://127.0.0.1:\(s.notTLSPort)/"])
        #expect(notTLS.status == 35)
        #expect(notTLS.stderr.contains("TLS handshake failed after Client hello (OUT)"), "\(notTLS.stderr)")
    }

    @Test func proxyTunnelAndResolveForTheProxy() async throws {
        let proxy = await s.privateProxy()
        let port = proxy.split(separator: ":").last!
        // --resolve applies to the proxy's own name, as curl applies it to every name.
        let named = try await run(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-x", "http://proxy.test:\(port)",
                                   "--resolve", "proxy.test:\(port):127.0.0.1", s.nginx + "/small"])
        #expect(named.status == 0 && named.stdout == "200", "\(named.status) \(named.stderr)")
        // -p: an http URL goes through CONNECT too, never as a forwarded request.
        _ = try await run(["-s", proxy + "/log?clear=1"])
        let tunnelled = try await run(["-s", "-p", "-x", proxy, "-o", "/dev/null", "-w", "%{http_code}", s.nginx + "/small"])
        #expect(tunnelled.status == 0 && tunnelled.stdout == "200", "\(tunnelled.stderr)")
        let log = try await run(["-s", proxy + "/log"])
        let nginxAuthority = s.nginx.dropFirst("http://".count)
        #expect(log.stdout.contains("CONNECT \(nginxAuthority)"), "\(log.stdout)")
        #expect(!log.stdout.contains("GET http://"), "\(log.stdout)")
    }

    @Test func expect100Timeout() async throws {
        let body = s.root + "/expect-100-body"
        try Data(repeating: 7, count: 2 << 20).write(to: URL(fileURLWithPath: body))
        // The server never says 100: a short wait sends the body; a wait past -m fails the transfer.
        let short = try await run(["-s", "-o", "/dev/null", "-T", body, "--expect100-timeout", "0.1", "-m", "20", s.stream + "/upload?no100=1"])
        #expect(short.status == 0, "\(short.stderr)")
        let long = try await run(["-s", "-o", "/dev/null", "-T", body, "--expect100-timeout", "60", "-m", "1", s.stream + "/upload?no100=1"])
        #expect(long.status == 28, "\(long.stderr)")
    }

    @Test func rateSpacesTheStarts() async throws {
        // Three transfers at 4 a second: at least half a second from the first start to the last.
        let started = monotonicNanos()
        let r = try await run(["-s", "--rate", "4/s", "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null",
                               s.nginx + "/small", s.nginx + "/small", s.nginx + "/small"])
        #expect(r.status == 0)
        #expect(monotonicNanos() - started >= 500_000_000, "the third started before its turn")
        for bad in ["0/s", "3/x", "x"] {
            #expect(try await run(["-s", "--rate", bad, s.nginx + "/small"]).status == 2, "\(bad)")
        }
    }

    @Test func happyEyeballsDelay() async throws {
        // The scripted server's port hangs on 127.0.0.2 (a full backlog) and answers on 127.0.0.1:
        // the delay decides whether the second address is tried within the connect timeout.
        let port = s.scriptedPort
        let resolve = "he.test:\(port):127.0.0.2,127.0.0.1"
        let url = "http://he.test:\(port)/echo"
        let quick = try await run(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--resolve", resolve,
                                   "--happy-eyeballs-timeout-ms", "50", "--connect-timeout", "10", url])
        #expect(quick.status == 0 && quick.stdout == "200", "\(quick.status) \(quick.stderr)")
        let slow = try await run(["-s", "--resolve", resolve, "--happy-eyeballs-timeout-ms", "30000", "--connect-timeout", "1", url])
        #expect(slow.status == 28, "\(slow.status) \(slow.stderr)")
    }

    @Test func nextStartsAGroupWithItsOwnOptions() async throws {
        let r = try await run(["-s", "-w", "A:%{method}:%{http_code}\\n", s.nginx + "/small", "-o", "/dev/null",
                               "--next", "-I", "-w", "B:%{method}\\n", s.nginx + "/small",
                               "-:", "-d", "x=1", "-w", "C:%{method}\\n", "-o", "/dev/null", s.scripted + "/echo"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("A:GET:200\nHTTP/1.1 200 OK"), "\(r.stdout)")
        #expect(r.stdout.contains("B:HEAD\nC:POST\n"), "\(r.stdout)")
        // Global options apply to every group wherever they are given.
        let silent = try await run([s.nginx + "/small", "-o", "/dev/null", "--next", "-s", "http://127.0.0.1:1/"])
        #expect(silent.status == 7 && silent.stderr.isEmpty, "\(silent.stderr)")
    }

    @Test func writeOutTimingsAddUpOverRedirects() async throws {
        let r = try await run(["-s", "-L", "-o", "/dev/null", "-w", "%{json}", "--cacert", caFile,
                               "https://localhost:\(s.tlsPorts["valid"]!)/moved"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        #expect(json["num_redirects"] as? Int == 1)
        #expect(json["num_retries"] as? Int == 0)
        let order = ["time_namelookup", "time_connect", "time_appconnect", "time_pretransfer", "time_posttransfer",
                     "time_starttransfer", "time_total"]
        let times = order.map { json[$0] as? Double ?? -1 }
        #expect(times.allSatisfy { $0 > 0 }, "every variable is set: \(zip(order, times).map { "\($0)=\($1)" })")
        #expect(times == times.sorted(), "curl's order: \(zip(order, times).map { "\($0)=\($1)" })")
        let redirect = json["time_redirect"] as? Double ?? 0
        #expect(redirect > 0 && redirect <= times.last!)
        // Retries are counted.
        let retry = await s.privateRetryServer()
        let retried = try await run(["-s", "--retry", "2", "--retry-delay", "0", "-o", "/dev/null", "-w", "%{num_retries}",
                                     retry + "/flaky/cli-retries?fail=2&mode=503"])
        #expect(retried.status == 0 && retried.stdout == "2", "\(retried.stdout) \(retried.stderr)")
    }

    @Test func uploadsHoldTheRateLimit() async throws {
        let body = s.root + "/rate-body"
        try Data(repeating: 1, count: 100 << 10).write(to: URL(fileURLWithPath: body))
        for flags in [["-T", body], ["--data-binary", "@" + body]] {
            let r = try await run(["-s", "-o", "/dev/null", "--limit-rate", "51200", "-w", "%{speed_upload} %{size_upload}"]
                                  + flags + [s.stream + "/upload"])
            let fields = r.stdout.split(separator: " ").compactMap { Double($0) }
            #expect(r.status == 0 && fields.count == 2, "\(flags): \(r.stdout) \(r.stderr)")
            #expect(fields[1] == 102_400 && fields[0] <= 51_200 * 1.02, "\(flags): \(fields[0]) B/s")
        }
    }

    @Test func largeResponseHeadsAsCurlTakesThem() async throws {
        for kib in [128, 256] {
            let r = try await run(["-s", "-o", "/dev/null", "-w", "%{http_code} %{num_headers}", s.scripted + "/big-head?kib=\(kib)"])
            #expect(r.status == 0 && r.stdout == "200 \(kib + 1)", "\(kib) KiB: \(r.stdout) \(r.stderr)")
        }
        #expect(try await run(["-s", s.scripted + "/huge-headers"]).status == 100, "beyond 300 KiB")
    }

    @Test func trailingDotHostNames() async throws {
        let r = try await run(["-s", "--cacert", caFile, "-w", "%{http_code}", "-o", "/dev/null",
                               "https://localhost.:\(s.tlsPorts["valid"]!)/small"])
        #expect(r.status == 0 && r.stdout == "200", "\(r.status) \(r.stderr)")
    }

    @Test func parallelTransfersEachHaveTheirConnection() async throws {
        let urls = (0..<6).flatMap { ["-o", "/dev/null", "\(s.scripted)/slow?ms=200&n=\($0)"] }
        let six = try await run(["-s", "-Z", "-w", "%{num_connects}"] + urls)
        #expect(six.status == 0 && six.stdout == "111111", "\(six.stdout) \(six.stderr)")
        let capped = try await run(["-s", "-Z", "--parallel-max-host", "2", "-w", "%{num_connects}"] + urls)
        #expect(capped.status == 0 && capped.stdout.filter { $0 == "1" }.count == 2, "\(capped.stdout)")
    }

    @Test func cachedBodiesShowInTheMeter() async throws {
        let directory = s.root + "/cli-meter-cache-\(UUID().uuidString.prefix(8))"
        for _ in 0..<2 {
            let r = try await run(["--cache-dir", directory, "-o", "/dev/null", "-w", "%{cache_status}", s.nginx + "/medium"])
            let meter = r.stderr.split(whereSeparator: { $0 == "\r" || $0 == "\n" }).last.map(String.init) ?? ""
            #expect(meter.hasPrefix("100 16384  100 16384"), "\(r.stdout): \(meter)")
        }
    }

    @Test func versionListsEveryFeature() async throws {
        let r = try await run(["-V"])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.contains("OpenSSL/") == true && lines.first?.contains("brotli/") == true && lines.first?.contains("zstd/") == true)
        let features = lines.first { $0.hasPrefix("Features:") }?.split(separator: " ").map(String.init) ?? []
        for feature in ["AsynchDNS", "brotli", "IPv6", "libz", "SSL", "zstd"] { #expect(features.contains(feature), "\(features)") }
        #expect(!features.contains("HTTP2"), "not until Courier speaks it")
    }
}
