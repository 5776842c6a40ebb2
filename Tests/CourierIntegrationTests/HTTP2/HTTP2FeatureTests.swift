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
}
