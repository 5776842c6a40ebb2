import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// HTTP/2 against real peers (nginx with `http2`, nghttpd) and a scripted hostile server: the
/// negotiation, multiplexing on one connection, transparent retries of unprocessed streams, and
/// every misbehaviour ending in its own error and curl's exit code.
@Suite("HTTP/2")
struct HTTP2Tests {
    let s = TestServers.shared
    let h2 = HTTP2Servers.shared

    func courier(_ arguments: [String]) async throws -> ProcessResult {
        try await runProcess(CLITests.binary, arguments)
    }

    var nginxH2: String { "https://localhost:\(s.tlsPorts["h2"]!)" }

    @Test func priorKnowledgeAgainstNghttpd() async throws {
        let r = try await courier(["-s", "--http2-prior-knowledge", "-w", "|%{http_version}", h2.nghttpd + "/small"])
        #expect(r.status == 0 && r.stdout == "hello over h2\n|2", "\(r.stdout) \(r.stderr)")
        // Without it, http:// stays HTTP/1.1 (no h2c Upgrade): nghttpd refuses HTTP/1.
        let plain = try await courier(["-s", "-o", "/dev/null", h2.nghttpd + "/small"])
        #expect(plain.status != 0)
    }

    @Test func largeBodyIsIntactOverOneStream() async throws {
        let out = s.root + "/h2-large-\(UUID().uuidString)"
        let r = try await courier(["-s", "--http2-prior-knowledge", "-o", out, "-w", "%{size_download}", h2.nghttpd + "/large"])
        #expect(r.status == 0 && r.stdout == String(3 << 20), "\(r.stderr)")
        #expect(FileManager.default.contents(atPath: out) == FileManager.default.contents(atPath: h2.root + "/large"))
    }

    @Test func parallelRequestsShareOneConnection() async throws {
        let r = try await courier(["-s", "-Z", "--parallel-max", "40", "--http2-prior-knowledge", "-o", "/dev/null",
                                   "-w", "%{http_version} %{num_connects}\\n", h2.nghttpd + "/small?[1-40]"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 40 && lines.allSatisfy { $0.hasPrefix("2 ") })
        #expect(lines.map { Int($0.split(separator: " ")[1])! }.reduce(0, +) == 1, "one connection for all: \(r.stdout)")
    }

    @Test func nginxNegotiatesH2ByALPN() async throws {
        let ca = s.certs + "/ca.pem"
        let r = try await courier(["-s", "-v", "--cacert", ca, "-o", "/dev/null", "-w", "%{http_version}", nginxH2 + "/small"])
        #expect(r.status == 0 && r.stdout == "2", "\(r.stderr)")
        #expect(r.stderr.contains("ALPN: offers h2,http/1.1") && r.stderr.contains("ALPN: server accepted h2"), "\(r.stderr)")
        #expect(r.stderr.contains("[HTTP/2] [1] [:method: GET]") && r.stderr.contains("> GET /small HTTP/2"), "\(r.stderr)")
        #expect(r.stderr.contains("< HTTP/2 200"), "\(r.stderr)")
        let http1 = try await courier(["-s", "--http1.1", "--cacert", ca, "-o", "/dev/null", "-w", "%{http_version}", nginxH2 + "/small"])
        #expect(http1.stdout == "1.1", "\(http1.stderr)")
        // A server that will not speak h2 fails a request that requires it: nginx refuses the
        // handshake offering h2 alone (no_application_protocol, curl's 35); one that completes it
        // choosing no protocol fails with COURIER_E_HTTP2_NOT_NEGOTIATED (curl's 16).
        let refused = try await courier(["-s", "-S", "--http2-prior-knowledge", "--cacert", ca, s.https + "/small"])
        #expect(refused.status == 35 && refused.stderr.contains("no application protocol"), "\(refused.status) \(refused.stderr)")
    }

    /// The library's features over h2 as the CLI uses them: a redirect followed on the same
    /// connection, a CONNECT tunnel with h2 inside TLS, a cache revalidating with 304s, a gzip
    /// body, cookies from a jar.
    @Test func featuresOverH2() async throws {
        let ca = s.certs + "/ca.pem"
        let moved = try await courier(["-s", "-L", "--cacert", ca, "-o", "/dev/null", "-w", "%{http_version} %{num_redirects} %{http_code} %{num_connects}",
                                       nginxH2 + "/moved"])
        #expect(moved.stdout == "2 1 200 1", "\(moved.stdout) \(moved.stderr)")
        let proxy = await s.privateProxy()
        let tunneled = try await courier(["-s", "-x", proxy, "--cacert", ca, "-o", "/dev/null", "-w", "%{http_version} %{http_code}",
                                          nginxH2 + "/small"])
        #expect(tunneled.stdout == "2 200", "through a CONNECT tunnel: \(tunneled.stdout) \(tunneled.stderr)")
        let cache = s.root + "/h2-cache-\(UUID().uuidString.prefix(8))"
        var statuses: [String] = []
        for _ in 0..<2 {
            let r = try await courier(["-s", "--cacert", ca, "--cache-dir", cache, "-o", "/dev/null", "-w", "%{cache_status} %{http_version}",
                                       nginxH2 + "/revalidate/small"])
            statuses.append(r.stdout)
        }
        #expect(statuses == ["miss 2", "revalidated 2"], "\(statuses)")
    }

    @Test func clientCertificateOverH2() async throws {
        let r = try await courier(["-s", "--cacert", s.certs + "/ca.pem", "--cert", s.certs + "/client.pem", "--key", s.certs + "/client.key",
                                   "-o", "/dev/null", "-w", "%{http_code} %{http_version}", "https://localhost:\(s.tlsPorts["h2clientauth"]!)/small"])
        #expect(r.stdout == "200 2", "\(r.stderr)")
    }

    @Test func swiftAPIOverH2() async throws {
        var configuration = Engine.Configuration()
        configuration.options.tls = s.trustTestCA
        let engine = Engine(host: nginxH2, configuration: configuration)
        let response = try await engine.get(path: "/small")
        #expect(response.httpVersion == "HTTP/2" && response.status == 200)
        #expect(response.metrics.streamID > 0)
        configuration.options.httpVersion = .http1Only
        let http1 = try await Engine(host: nginxH2, configuration: configuration).get(path: "/small")
        #expect(http1.httpVersion == "HTTP/1.1" && http1.metrics.streamID == 0)
        // Uploads, and trailers delivered (a gRPC-style API's status).
        var priorKnowledge = Engine.Configuration()
        priorKnowledge.options.httpVersion = .http2Only
        let scripted = Engine(host: h2.scripted, configuration: priorKnowledge)
        let upload = try await scripted.post(path: "/echo", body: .bytes(Array(repeating: 7, count: 1 << 20)))
        #expect(String(decoding: upload.body, as: UTF8.self).hasSuffix(" \(1 << 20)"), "\(String(decoding: upload.body, as: UTF8.self))")
        let trailers = try await scripted.get(path: "/trailers")
        #expect(trailers.trailers.combinedValue(for: "grpc-status") == "0" && trailers.body == Array("body".utf8))
    }

    /// A request body that is not what its length says, or cannot be read, ends the request in
    /// its own error: never a short body sent as complete, never a retry elsewhere.
    @Test func aBodyUnlikeItsLengthIsRefused() async throws {
        var configuration = Engine.Configuration()
        configuration.options.httpVersion = .http2Only
        let engine = Engine(host: h2.scripted, configuration: configuration)
        // 10 bytes from a source announced as 100.
        let short = RequestBody.stream(BodyStream(length: 100, replayable: false) { BytesBodySource(Array(repeating: 1, count: 10), pieceSize: 4) })
        do {
            let response = try await engine.post(path: "/echo", body: short)
            Issue.record("a short body was sent as complete: \(response.status)")
        } catch {
            #expect(error.code == .fileRead && error.message.contains("90 bytes before its announced length"), "\(error)")
        }
        // 100 bytes from a source announced as 10: the first 10 go, and the length holds.
        let long = RequestBody.stream(BodyStream(length: 10, replayable: true) { BytesBodySource(Array(repeating: 2, count: 100), pieceSize: 7) })
        let trimmed = try await engine.post(path: "/echo", body: long)
        #expect(String(decoding: trimmed.body, as: UTF8.self).hasSuffix(" 10"), "\(String(decoding: trimmed.body, as: UTF8.self))")
        // A file that is not there: the file's error, not a retry.
        do {
            let response = try await engine.post(path: "/echo", body: .file(path: s.root + "/no-such-file-\(UUID().uuidString)"))
            Issue.record("a missing file was sent: \(response.status)")
        } catch {
            #expect(error.code.primary == .fileError, "\(error)")
        }
    }

    @Test func unprocessedStreamsAreRetriedTransparently() async throws {
        for path in ["/refuse-once?\(UUID().uuidString)", "/goaway-once?\(UUID().uuidString)"] {
            let r = try await courier(["-s", "--http2-prior-knowledge", "-X", "POST", "-d", "x", "-w", "|%{http_code}", h2.scripted + path])
            #expect(r.status == 0 && r.stdout.hasSuffix("|200"), "\(path): \(r.status) \(r.stdout) \(r.stderr)")
        }
    }

    /// A stream's deadline fails that stream alone (RST_STREAM CANCEL): the one beside it on the
    /// same connection still gets its answer.
    @Test func aStreamsTimeoutLeavesItsSiblingRunning() async throws {
        let format = "%{url_effective} %{exitcode} %{num_connects} %{http_code}\\n"
        let r = try await courier(["-s", "-Z", "--http2-prior-knowledge", "-m", "1", "-o", "/dev/null", "-w", format,
                                   h2.scripted + "/never-ends?\(UUID().uuidString)",
                                   "--next", "-s", "--http2-prior-knowledge", "-m", "20", "-o", "/dev/null", "-w", format,
                                   h2.scripted + "/delay?2000"])
        let lines = r.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        let ended = try #require(lines.first { $0.first?.contains("never-ends") == true }, "\(r.stdout) \(r.stderr)")
        let late = try #require(lines.first { $0.first?.contains("delay") == true }, "\(r.stdout) \(r.stderr)")
        #expect(ended[1] == "28", "the endless stream timed out: \(r.stdout)")
        #expect(late[1] == "0" && late[3] == "200", "its sibling was answered: \(r.stdout) \(r.stderr)")
        #expect(Int(ended[2])! + Int(late[2])! == 1, "on one connection: \(r.stdout)")
    }

    /// A stream reset with HTTP_1_1_REQUIRED is sent again over HTTP/1.1, and the origin stays
    /// on HTTP/1.1 for the requests after it.
    @Test func http11RequiredFallsBackAndIsRemembered() async throws {
        var configuration = Engine.Configuration()
        configuration.options.tls = s.trustTestCA
        let engine = Engine(host: "https://localhost:\(h2.tlsPort)", configuration: configuration)
        let first = try await engine.get(path: "/ok")
        #expect(first.httpVersion == "HTTP/2" && first.body == Array("ok".utf8))
        let required = try await engine.get(path: "/http11-required")
        #expect(required.httpVersion == "HTTP/1.1" && String(decoding: required.body, as: UTF8.self) == "via http/1.1 /http11-required",
                "\(required.httpVersion) \(String(decoding: required.body, as: UTF8.self))")
        let after = try await engine.get(path: "/ok")
        #expect(after.httpVersion == "HTTP/1.1" && String(decoding: after.body, as: UTF8.self) == "via http/1.1 /ok")
    }

    @Test func aOneStreamServerStillServesEveryone() async throws {
        let r = try await courier(["-s", "-Z", "--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{http_code}\\n",
                                   "http://127.0.0.1:\(h2.oneStreamPort)/ok?[1-12]"])
        #expect(r.status == 0 && r.stdout.split(separator: "\n").allSatisfy { $0 == "200" }, "\(r.stdout) \(r.stderr)")
    }

    /// Each hostile behaviour: curl's exit code and the words of the error.
    @Test(arguments: [
        ("/rst-mid-body", 92, "reset by the server: INTERNAL_ERROR"),
        ("/bad-status", 16, "PROTOCOL_ERROR"),
        ("/uppercase", 16, "PROTOCOL_ERROR"),
        ("/connection-header", 16, "PROTOCOL_ERROR"),
        ("/transfer-encoding", 16, "PROTOCOL_ERROR"),
        ("/length-mismatch", 16, "PROTOCOL_ERROR"),
        ("/big-headers", 100, "response head exceeds the size limit"),
        ("/continuation-flood", 16, "CONTINUATION"),
        ("/window-overflow", 16, "FLOW_CONTROL_ERROR"),
        ("/oversized-frame", 16, "FRAME_SIZE_ERROR"),
        ("/ping-flood", 16, "Flooding"),
        ("/never-ends", 28, "time"),
        ("/hpack-bomb", 100, "response head exceeds the size limit"),
        ("/hpack-table-size", 16, "COMPRESSION_ERROR"),
    ])
    func hostileServer(_ path: String, _ exit: Int32, _ words: String) async throws {
        // (A stream that never ends is cut by the total time; the others end long before it.)
        let r = try await courier(["-s", "-S", "--http2-prior-knowledge", "--max-time", path == "/never-ends" ? "3" : "30",
                                   "-o", "/dev/null", h2.scripted + path])
        #expect(r.status == exit && r.stderr.contains(words), "\(path): exit \(r.status) \(r.stderr)")
    }

    /// In this process: a server that closes while Courier still writes (PING ACKs, WINDOW_UPDATEs,
    /// RST_STREAMs) fails the request, never the process (SIGPIPE is blocked on the loop thread).
    @Test func hostileServersFailRequestsNotTheProcess() async throws {
        var configuration = Engine.Configuration()
        configuration.options.httpVersion = .http2Only
        configuration.options.timeouts.total = .seconds(10)
        // (An origin of its own: a connection error fails every stream on that connection, and
        // other tests' requests to the scripted server must not share it.)
        let engine = Engine(host: "http://localhost:\(h2.scriptedPort)", configuration: configuration)
        for round in 0..<3 {
            for path in ["/ping-flood", "/continuation-flood", "/goaway-error-mid", "/window-overflow"] {
                do {
                    let response = try await engine.get(path: path)
                    Issue.record("\(path) round \(round): a response \(response.status)")
                } catch {
                    #expect([.http2, .connectionReset, .sendFailed, .emptyReply].contains(error.code.primary), "\(path): \(error)")
                }
            }
        }
    }

    /// DATA past the stream's window (a rate-limited stream's does not grow) is the server's
    /// FLOW_CONTROL_ERROR; a GOAWAY that covers the stream mid-body lets it end well.
    @Test func flowControlAndACoveringGoAway() async throws {
        let past = try await courier(["-s", "-S", "--http2-prior-knowledge", "--limit-rate", "1000", "-m", "30", "-o", "/dev/null",
                                      h2.scripted + "/data-past-window"])
        #expect(past.status == 16 && past.stderr.contains("FLOW_CONTROL_ERROR"), "\(past.status) \(past.stderr)")
        let covered = try await courier(["-s", "-S", "--http2-prior-knowledge", "-m", "30", h2.scripted + "/goaway-covering"])
        #expect(covered.status == 0 && covered.stdout == "0123456789", "\(covered.status) \(covered.stdout) \(covered.stderr)")
    }

    /// SETTINGS_MAX_CONCURRENT_STREAMS 0: requests wait for the server to allow a stream (and
    /// go when it does); a server that never does fails them by their deadline, never a hang.
    @Test func zeroConcurrentStreams() async throws {
        let raised = try await courier(["-s", "-Z", "--http2-prior-knowledge", "-m", "20", "-w", "%{http_code}\\n", "-o", "/dev/null",
                                        "http://127.0.0.1:\(h2.raisedStreamsPort)/ok?[1-5]"])
        #expect(raised.status == 0 && raised.stdout == String(repeating: "200\n", count: 5), "\(raised.stdout) \(raised.stderr)")
        // (The first request goes with the connection's preface, before the server's SETTINGS
        // are known, as RFC 9113 allows; the next ones wait on that connection, and no second
        // connection opens to get around the server's 0.)
        let never = try await courier(["-s", "--http2-prior-knowledge", "-m", "2", "-w", " %{exitcode} %{num_connects}\\n",
                                       "http://127.0.0.1:\(h2.zeroStreamsPort)/ok", "http://127.0.0.1:\(h2.zeroStreamsPort)/ok"])
        #expect(never.status == 28 && never.stdout == "ok 0 1\n 28 0\n", "\(never.status) \(never.stdout) \(never.stderr)")
    }

    @Test func aServerThatNeverSendsSettingsTimesOut() async throws {
        let r = try await courier(["-s", "--http2-prior-knowledge", "--max-time", "2", "http://127.0.0.1:\(h2.silentPort)/"])
        #expect(r.status == 28, "\(r.status) \(r.stderr)")
    }
}
