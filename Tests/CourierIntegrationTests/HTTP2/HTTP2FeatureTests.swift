import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// The library's features one by one over HTTP/2, against nghttpd (h2c with prior knowledge),
/// nginx with `http2` and the scripted h2 server: rate limits, cookies, auth challenges,
/// resumed downloads, the outbox, a paused consumer's memory, 100-continue, priorities.
@Suite("HTTP/2 features")
struct HTTP2FeatureTests {
    let s = TestServers.shared
    let h2 = HTTP2Servers.shared

    func courier(_ arguments: [String]) async throws -> ProcessResult {
        try await runProcess(CLITests.binary, arguments)
    }

    var priorKnowledge: Engine.Configuration {
        var configuration = Engine.Configuration()
        configuration.options.httpVersion = .http2Only
        return configuration
    }

    /// `--limit-rate` holds an h2 download and an h2 upload to the rate, as it does on HTTP/1.
    @Test func rateLimitsHoldOverH2() async throws {
        let down = try await courier(["-s", "--http2-prior-knowledge", "--limit-rate", "200000", "-o", "/dev/null",
                                      "-w", "%{http_version} %{size_download} %{speed_download}", h2.nghttpd + "/medium"])
        let fields = down.stdout.split(separator: " ").map(String.init)
        #expect(down.status == 0 && fields.count == 3 && fields[0] == "2" && fields[1] == "400000", "\(down.stdout) \(down.stderr)")
        #expect(Double(fields[2])! <= 200_000 * 1.02, "downloaded at \(fields[2]) B/s")

        let body = s.root + "/h2-rate-body"
        try Data(repeating: 1, count: 100 << 10).write(to: URL(fileURLWithPath: body))
        let up = try await courier(["-s", "--http2-prior-knowledge", "--limit-rate", "51200", "--data-binary", "@" + body,
                                    "-w", "|%{size_upload} %{speed_upload}", h2.scripted + "/echo"])
        let upFields = up.stdout.split(separator: "|").last?.split(separator: " ").compactMap { Double($0) } ?? []
        #expect(up.status == 0 && up.stdout.contains(" \(100 << 10)|"), "the server got it all: \(up.stdout) \(up.stderr)")
        #expect(upFields.count == 2 && upFields[0] == 102_400 && upFields[1] <= 51_200 * 1.02, "\(up.stdout)")
    }

    /// A body that arrived whole but waits for the receive rate is still held to the total
    /// deadline (its stream has ended; the bytes are kept for the rate).
    @Test func heldBytesStillMeetTheTotalDeadline() async throws {
        let name = "/held-\(UUID().uuidString.prefix(8))"
        FileManager.default.createFile(atPath: h2.root + name, contents: Data(count: 50_000))
        defer { try? FileManager.default.removeItem(atPath: h2.root + name) }
        let r = try await courier(["-s", "--http2-prior-knowledge", "--limit-rate", "1000", "-m", "2", "-o", "/dev/null",
                                   "-w", "%{size_download}", h2.nghttpd + name])
        #expect(r.status == 28 && Int(r.stdout)! < 50_000, "\(r.status) \(r.stdout) \(r.stderr)")
    }

    /// A rate-limited stream holds back only itself: a 3 MiB body on the same connection ends
    /// while the slow 400 kB one is still running.
    @Test func aRateLimitedStreamLeavesItsSiblingsAtFullSpeed() async throws {
        let engine = Engine(host: h2.nghttpd, configuration: priorKnowledge)
        let slow = engine.operation(path: "/medium")
        slow.options.receiveRateLimit = 100_000
        let slowTask = Task { try await engine.send(slow) }
        let fast = try await engine.get(path: "/large")
        let fastEnded = monotonicNanos()
        let slowResponse = try await slowTask.value
        #expect(fast.body.count == 3 << 20 && slowResponse.body.count == 400_000)
        #expect(fast.httpVersion == "HTTP/2" && (slowResponse.metrics.multiplexed || fast.metrics.multiplexed),
                "both streams on one connection")
        #expect(slowResponse.metrics.completedAt > fastEnded, "the fast stream waited for the slow one")
    }

    /// `Expect: 100-continue` over h2, asked with `.always` (the automatic policy asks over
    /// HTTP/1.1 only, as curl): the body waits for the server's 100 (with a 30 s continue timeout
    /// and a 10 s limit, the request fails unless the 100 lets it go), a final answer before the
    /// 100 ends the request without the body, and a server that says nothing gets the body after
    /// the timeout.
    @Test func expectContinueOverH2() async throws {
        let body = RequestBody.bytes(Array(repeating: 3, count: 2 << 20))
        let api = Engine(host: h2.scripted, configuration: priorKnowledge)
        func send(_ path: String, continueTimeout: Nanoseconds, policy: ExpectContinue = .always) async throws -> Response {
            let operation = api.operation(path: path, method: .post)
            operation.body = body
            operation.options.expectContinue = policy
            operation.options.continueTimeout = continueTimeout
            operation.options.timeouts.total = .seconds(10)
            operation.acceptableStatus = 200..<600
            return try await api.send(operation)
        }
        let waited = try await send("/continue", continueTimeout: .seconds(30))
        #expect(waited.status == 200 && waited.body == Array("\(2 << 20)".utf8) && waited.metrics.bytesSent == 2 << 20)
        let refused = try await send("/refuse-body", continueTimeout: .seconds(30))
        #expect(refused.status == 413 && refused.headers.combinedValue(for: "x-expect") == "100-continue")
        #expect(refused.metrics.bytesSent == 0, "the body never went: \(refused.metrics.bytesSent) bytes")
        let silent = try await send("/echo", continueTimeout: .milliseconds(300))
        #expect(silent.headers.combinedValue(for: "x-request-expect") == "100-continue"
                && String(decoding: silent.body, as: UTF8.self).hasSuffix(" \(2 << 20)"), "\(silent.headers)")
        // The automatic policy does not ask over h2, whatever the size.
        let automatic = try await send("/echo", continueTimeout: .seconds(30), policy: .automatic)
        #expect(automatic.headers.combinedValue(for: "x-request-expect") == nil, "\(automatic.headers)")
    }

    /// A server that stops taking the body (it never opens the stream's window again) fails the
    /// stream after the send limit, not the idle one (httpx's write timeout); with no send limit
    /// the idle limit covers it, as before. (The total is the guard: it would fire first.) The
    /// connection's other streams go on, bodies included.
    @Test func aStalledBodyMeetsTheSendLimit() async throws {
        let api = Engine(host: h2.scripted, configuration: priorKnowledge)
        let limits: [(send: Nanoseconds?, idle: Nanoseconds)] = [(.milliseconds(300), .seconds(30)), (nil, .milliseconds(300))]
        for (send, idle) in limits {
            let operation = api.operation(path: "/deaf-body", method: .post)
            operation.body = .bytes(Array(repeating: 5, count: 1 << 20))
            operation.options.timeouts.send = send
            operation.options.timeouts.idle = idle
            operation.options.timeouts.total = .seconds(10)
            await #expect(throws: CourierError(.sendTimeout, "the server stopped reading the request body")) {
                try await api.send(operation)
            }
        }
        let next = try await api.post(path: "/echo", body: .bytes(Array(repeating: 6, count: 200_000)))
        #expect(String(decoding: next.body, as: UTF8.self).hasSuffix(" 200000"), "the connection takes the next body")
    }

    /// The operation's priority goes with its request as RFC 9218's `priority` field (not for
    /// the default, and never over a caller's own).
    @Test func priorityIsSaidAsRFC9218Urgency() async throws {
        let engine = Engine(host: h2.scripted, configuration: priorKnowledge)
        var seen: [String?] = []
        for priority in [Priority.veryHigh, .normal, .veryLow] {
            let operation = engine.operation(path: "/echo")
            operation.priority = priority
            seen.append(try await engine.send(operation).headers.combinedValue(for: "x-request-priority"))
        }
        #expect(seen == ["u=1", nil, "u=7"], "\(seen)")
        let own = engine.operation(path: "/echo")
        own.priority = .high
        own.headers.add(name: "Priority", value: "u=0, i")
        #expect(try await engine.send(own).headers.combinedValue(for: "x-request-priority") == "u=0, i")
    }

    /// `http2PingInterval` sends a PING every interval on the connection (busy with requests
    /// here); without it, none.
    @Test func keepAlivePingsWhenAsked() async throws {
        var configuration = priorKnowledge
        configuration.options.http2PingInterval = .milliseconds(50)
        let pinging = Engine(host: h2.scripted, configuration: configuration)
        // Asks the server how many PINGs came until three did (bounded: a minute; in a full run
        // the first request may wait seconds in the shared queue behind the other suites').
        let started = monotonicNanos()
        var pings = 0
        while pings < 3, monotonicNanos() - started < 60_000_000_000 {
            pings = Int(String(decoding: try await pinging.get(path: "/pings").body, as: UTF8.self)) ?? -1
        }
        #expect(pings >= 3, "\(pings) PINGs")
        let quiet = Engine(host: h2.scripted, configuration: priorKnowledge)
        _ = try await quiet.get(path: "/delay?300")
        #expect(try await quiet.get(path: "/pings").body == Array("0".utf8))
    }

    /// A slow reader of a 32 MiB h2 body: the stream's window stays shut while it is paused,
    /// so what waits for it is bounded by one stream window, not by the body.
    @Test func aPausedReaderHoldsAtMostOneWindow() async throws {
        let size = 32 << 20
        let name = "/paused-\(UUID().uuidString.prefix(8))"
        FileManager.default.createFile(atPath: h2.root + name, contents: Data(count: size))
        defer { try? FileManager.default.removeItem(atPath: h2.root + name) }
        let api = Engine(host: h2.nghttpd, configuration: priorKnowledge)
        let response = try await api.stream(api.operation(path: name))
        #expect(response.httpVersion == "HTTP/2")
        var total = 0
        var pieces = 0
        for try await chunk in response.body {
            total += chunk.count
            pieces += 1
            // A slow reader (the scenario, not synchronisation).
            if pieces % 8 == 0 { try await Task.sleep(nanoseconds: 2_000_000) }
        }
        #expect(total == size)
        let (peak, pauses, _) = response.body.channel.statistics
        #expect(pauses > 0, "the reader was slower than loopback")
        let window = Int(HTTP2Session.Settings().grownStreamWindow)
        #expect(peak <= BodyChannel.pauseAbove + window + (64 << 10), "at most the threshold and one window: \(peak) bytes")
    }

    /// Cookies, an auth challenge answered by a refresh, a resumed download and a frozen
    /// operation of the outbox, each over h2.
    @Test func cookiesChallengesResumeAndOutboxOverH2() async throws {
        let jar = CookieJar()
        var configuration = priorKnowledge
        configuration.options.cookies = jar
        let api = Engine(host: h2.scripted, configuration: configuration)
        _ = try await api.get(path: "/cookie-set?v2")
        let echoed = try await api.get(path: "/echo")
        #expect(echoed.httpVersion == "HTTP/2" && echoed.headers.combinedValue(for: "x-request-cookie") == "h2c=v2",
                "\(echoed.headers)")

        var challenged = priorKnowledge
        challenged.authenticator = Authenticator(initial: .bearer("expired")) { _ in .bearer("good") }
        let guarded = Engine(host: h2.scripted, configuration: challenged)
        let welcome = try await guarded.get(path: "/bearer")
        #expect(welcome.status == 200 && welcome.body == Array("welcome".utf8) && welcome.httpVersion == "HTTP/2")
        #expect(challenged.authenticator!.refreshCount == 1)

        // Resume: the first 100,000 bytes are on disk; nginx over h2 sends the rest (206).
        let ca = s.certs + "/ca.pem"
        let nginx = "https://localhost:\(s.tlsPorts["h2"]!)"
        let full = try await courier(["-s", "--cacert", ca, nginx + "/large"])
        let out = s.root + "/h2-resume-\(UUID().uuidString.prefix(8))"
        FileManager.default.createFile(atPath: out, contents: Data(full.stdoutBytes.prefix(100_000)))
        let resumed = try await courier(["-s", "--cacert", ca, "-C", "-", "-o", out, "-w", "%{http_code} %{http_version} %{size_download}",
                                         nginx + "/large"])
        #expect(resumed.stdout == "206 2 \(full.stdoutBytes.count - 100_000)", "\(resumed.stdout) \(resumed.stderr)")
        #expect(FileManager.default.contents(atPath: out) == full.stdoutBytes)

        // The outbox: journaled, sent with its key over h2, forgotten when answered.
        let outbox = try Outbox(directory: OutboxTestSupport.scratchPath())
        var frozen = priorKnowledge
        frozen.outbox = outbox
        let saving = Engine(host: h2.scripted, configuration: frozen)
        let save = saving.operation(path: "/echo", method: .post)
        save.body = .bytes(Array("draft".utf8))
        save.freeze(kind: "draft")
        let sent = try await saving.send(save)
        #expect(sent.httpVersion == "HTTP/2" && sent.headers.combinedValue(for: "x-request-idempotency-key") == save.outboxID,
                "\(sent.headers)")
        #expect(outbox.waiting.isEmpty)
    }

    /// nginx ending each h2 connection after 3 requests (a GOAWAY, keepalive_requests) never
    /// fails a caller, 30 at once or one after the other; a redirect from h2 to an HTTP/1.1
    /// server is followed; a multipart form goes over h2.
    @Test func closingServersRedirectsToHTTP1AndMultipart() async throws {
        let ca = s.certs + "/ca.pem"
        let closing = "https://localhost:\(s.tlsPorts["h2closing"]!)"
        let parallel = try await courier(["-s", "-S", "-Z", "--cacert", ca, "-o", "/dev/null", "-w", "%{http_code} %{http_version} %{num_connects}\\n",
                                          closing + "/small?[1-30]"])
        let lines = parallel.stdout.split(separator: "\n")
        #expect(parallel.status == 0 && lines.count == 30 && lines.allSatisfy { $0.hasPrefix("200 2 ") }, "\(parallel.stdout) \(parallel.stderr)")
        #expect(lines.map { Int($0.split(separator: " ")[2])! }.reduce(0, +) >= 10, "a connection per 3 requests: \(parallel.stdout)")
        let sequential = try await courier(["-s", "--cacert", ca, "-o", "/dev/null", "-w", "%{http_code}", closing + "/small?[1-10]"])
        #expect(sequential.status == 0 && sequential.stdout == String(repeating: "200", count: 10), "\(sequential.stdout) \(sequential.stderr)")

        let hop = try await courier(["-s", "-L", "--cacert", ca, "-o", "/dev/null", "-w", "%{num_redirects} %{http_code} %{http_version} %{url_effective}",
                                     "https://localhost:\(s.tlsPorts["h2"]!)/to-ip"])
        #expect(hop.stdout == "1 200 1.1 https://127.0.0.1:\(s.tlsPorts["ip"]!)/small", "h2 to an HTTP/1.1 server: \(hop.stdout) \(hop.stderr)")

        let file = s.root + "/h2-form-file"
        try Data(repeating: 5, count: 300_000).write(to: URL(fileURLWithPath: file))
        let form = try await courier(["-s", "--http2-prior-knowledge", "-F", "name=value", "-F", "file=@" + file, h2.scripted + "/echo"])
        let echoed = form.stdout.split(separator: " ")
        #expect(form.status == 0 && echoed.first == "POST" && (Int(echoed.last ?? "") ?? 0) > 300_000, "\(form.stdout) \(form.stderr)")
    }
}
