import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// Every bad server behaviour ends in its own error, within the configured time: never a hang,
/// a crash, or a truncated body reported as success.
@Suite("Misbehaving servers")
struct MisbehaviourTests {
    let s = TestServers.shared

    func expectError(_ path: String, _ code: CourierError.Code, method: HTTPMethod = .get, within seconds: Double = 9,
                     configure: (inout TransferOptions) -> Void = { _ in },
                     sourceLocation: SourceLocation = #_sourceLocation) async -> Transfer {
        let (t, elapsed) = await fetch(s.scripted + path, method: method, configure: configure)
        #expect(t.error?.code == code, "\(path): got \(String(describing: t.error))", sourceLocation: sourceLocation)
        #expect(elapsed < seconds, "\(path) took \(elapsed) s", sourceLocation: sourceLocation)
        return t
    }

    @Test func truncatedBodies() async {
        let t = await expectError("/truncated", .truncatedBody)
        #expect(t.head?.status == 200, "the head arrived; the body did not")
        _ = await expectError("/truncated-chunked", .truncatedBody)
    }

    @Test func resets() async {
        _ = await expectError("/reset-mid-body", .connectionReset)
        _ = await expectError("/reset-before-response", .connectionReset)
        for _ in 0..<5 { _ = await expectError("/reset-with-data", .connectionReset) }
    }

    @Test func emptyReply() async {
        _ = await expectError("/empty", .emptyReply)
    }

    @Test func acceptThenSilenceHitsTheFirstByteDeadline() async {
        // Well before the server's 10 s of silence end (a loaded machine is slow, never that slow).
        let t = await expectError("/silence?s=10", .firstByteTimeout, within: 8) { $0.timeouts.firstByte = .milliseconds(400) }
        #expect(t.error?.timeoutPhase == .firstByte)
    }

    @Test func silenceMidBodyHitsTheIdleDeadline() async {
        let t = await expectError("/silence-mid-body?s=10", .idleTimeout, within: 8) { $0.timeouts.idle = .milliseconds(400) }
        #expect(t.error?.timeoutPhase == .idle)
    }

    @Test func slowButSteadyHitsOnlyTheTotalDeadline() async {
        // One byte every 50 ms for a second: never idle for 2 s, but longer than 300 ms in total.
        // (The code shows which deadline fired; the bound only rules out a hang: a fresh-clone CI
        // run on two loaded cores took 5.6 s.)
        _ = await expectError("/trickle", .totalTimeout) {
            $0.timeouts.idle = .seconds(2)
            $0.timeouts.total = .milliseconds(300)
        }
        let (ok, _) = await fetch(s.scripted + "/trickle") { $0.timeouts.idle = .seconds(2) }
        #expect(ok.error == nil && ok.responseBody.count == 20)
    }

    @Test func connectTimeout() async {
        let (t, elapsed) = await fetch("http://127.0.0.1:\(s.blackholePort)/") { $0.timeouts.connect = .milliseconds(500) }
        #expect(t.error?.code == .connectTimeout)
        #expect(t.error?.timeoutPhase == .connect)
        // The 500 ms deadline, not the 30 s default: the bound only has to tell them apart (on a
        // loaded two-core machine, with valgrind children running, timers fire seconds late).
        #expect(elapsed < 10)
    }

    @Test func garbageAndAmbiguousFraming() async {
        _ = await expectError("/garbage-status", .badStatusLine)
        _ = await expectError("/bad-chunk", .badChunk)
        _ = await expectError("/cl-te", .ambiguousFraming)
        _ = await expectError("/two-lengths", .ambiguousFraming)
        _ = await expectError("/upgrade", .unexpectedUpgrade)
    }

    @Test func oversizedHeads() async {
        _ = await expectError("/huge-headers", .headerBytesExceeded)
        _ = await expectError("/many-headers", .headerCountExceeded)
        let (ok, _) = await fetch(s.scripted + "/huge-headers") { $0.limits.maxHeaderBytes = 1 << 20 }
        #expect(ok.error == nil, "a raised limit lets it through")
    }

    @Test func bodyLimit() async {
        _ = await expectError("/echo", .bodyTooLarge) { $0.limits.maxBodyBytes = 10 }
    }

    @Test func decompressionBombAndCorruptBodies() async {
        _ = await expectError("/bomb", .decodedTooLarge) { $0.limits.maxDecodedBytes = 1 << 20 }
        _ = await expectError("/corrupt-gzip", .corruptEncoding)
        let (gzip, _) = await fetch(s.scripted + "/gzip")
        #expect(gzip.bodyText == String(repeating: "gzip line\n", count: 1000))
        let (raw, _) = await fetch(s.scripted + "/deflate-raw")
        #expect(raw.bodyText == "raw deflate body")
    }

    /// br and zstd through the transfer: decoded, bounded like gzip, corrupt and unknown codings
    /// named as what they are.
    @Test func brotliAndZstdBodies() async throws {
        let text = String(repeating: "hello, compressed world. ", count: 400)
        for path in ["/br", "/zstd"] {
            let (t, _) = await fetch(s.scripted + path)
            #expect(t.error == nil && t.bodyText == text, "\(path): \(String(describing: t.error))")
        }
        _ = await expectError("/br-bomb", .decodedTooLarge) { $0.limits.maxDecodedBytes = 1 << 20 }
        _ = await expectError("/zstd-bomb", .decodedTooLarge) { $0.limits.maxDecodedBytes = 1 << 20 }
        _ = await expectError("/corrupt-br", .corruptEncoding)
        _ = await expectError("/zstd-wide", .corruptEncoding)
        let unknown = await expectError("/unknown-coding", .unsupportedEncoding)
        #expect(unknown.error?.message.contains("unsupported") == true)
        // Offered in Accept-Encoding when decoding is on.
        let (echo, _) = await fetch(s.scripted + "/echo")
        #expect(echo.bodyText.contains("gzip, deflate, br, zstd"), "\(echo.bodyText)")
    }

    @Test func wellFormedOddities() async {
        let (interim, _) = await fetch(s.scripted + "/interim")
        #expect(interim.head?.status == 200 && interim.bodyText == "final")
        let (closeDelimited, _) = await fetch(s.scripted + "/close-delimited")
        #expect(closeDelimited.error == nil && closeDelimited.bodyText == "read until the end")
        let (chunked, _) = await fetch(s.scripted + "/chunked")
        #expect(chunked.bodyText == "chunk encoded")
        #expect(chunked.trailers["X-Check"] == "yes")
        // Chunk extensions with whitespace and quoted values are valid (RFC 9112 section 7.1.1).
        let (extensions, _) = await fetch(s.scripted + "/chunk-ext")
        #expect(extensions.error == nil, "\(String(describing: extensions.error))")
        #expect(extensions.bodyText == "chunk encoded")
        #expect(extensions.trailers["X-Check"] == "ok")
        let (noContent, _) = await fetch(s.scripted + "/no-content-with-length")
        #expect(noContent.head?.status == 204 && noContent.error == nil && noContent.responseBody.isEmpty)
    }

    @Test func unsolicitedBytesRetireTheConnection() async {
        let host = await s.privateScripted()
        let (first, _) = await fetch(host + "/unsolicited?group=unsolicited")
        #expect(first.error == nil && first.bodyText == "ok")
        let (second, _) = await fetch(host + "/echo?group=unsolicited")
        #expect(second.error == nil)
        #expect(!second.metrics.reusedConnection, "a connection that sent junk must not be reused")
    }

    @Test func staleKeepAliveIsReplayedOnceForIdempotentRequests() async {
        // A server of its own, so sequential requests share one connection.
        let host = await s.privateScripted()
        let (first, _) = await fetch(host + "/drop-next")
        #expect(first.error == nil)
        let (second, _) = await fetch(host + "/echo?after=drop")
        #expect(second.error == nil, "\(String(describing: second.error))")
        #expect(second.metrics.staleRetries == 1)
        #expect(!second.metrics.reusedConnection, "the replay went out on a fresh connection")

        _ = await fetch(host + "/drop-next")
        let (post, _) = await fetch(host + "/echo?after=drop", method: .post, body: .bytes(Array("x".utf8)))
        #expect(post.error?.code == .emptyReply, "a POST is never replayed")
        #expect(post.metrics.staleRetries == 0)
    }

    @Test func localFailures() async {
        let (refused, _) = await fetch("http://127.0.0.1:1/")
        #expect(refused.error?.code == .connectFailed)
        let (dns, _) = await fetch("http://no-such-host.invalid/")
        #expect(dns.error?.code == .dnsFailure)
        let (injected, _) = await fetch(s.scripted + "/echo", headers: HTTPHeaders([("X-Evil", "a\r\nInjected: 1")]))
        #expect(injected.error?.code == .invalidHeader)
        let (badMethod, _) = await fetch(s.scripted + "/echo", method: HTTPMethod(rawValue: "GE T"))
        #expect(badMethod.error?.code == .invalidArgument)
        let (missingFile, _) = await fetch(s.scripted + "/echo", method: .post, body: .file(path: "/no/such/file"))
        #expect(missingFile.error?.code == .fileRead)
    }

    @Test func redirectLoopAndRefusals() async {
        _ = await expectError("/redirect-loop", .tooManyRedirects)
        _ = await expectError("/redirect?to=ftp://example.com/", .redirectSchemeNotAllowed)
    }
}
