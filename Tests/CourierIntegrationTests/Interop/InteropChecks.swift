import COpenSSL
import Foundation
@testable import Courier
@testable import CourierCore

/// Which wire the checks of the running row use: HTTP/2 (over TLS, `http2Only`) in the HTTP/2
/// rows, set by the row for the checks it runs.
enum InteropWire {
    @TaskLocal static var h2 = false
}

/// What one check found on one server.
enum InteropOutcome: Sendable {
    case pass
    case fail(String)
    /// The server does not offer what the check needs (said why); not a failure of either side.
    case notApplicable(String)
}

/// The checks the matrix runs against every server, in order. Each talks to the server through
/// the library as an application would (the shared queue, the pool, the TLS layer), and says what
/// it saw when it fails.
struct InteropCheck: Sendable {
    let name: String
    let run: @Sendable (InteropServer) async -> InteropOutcome

    static let all: [InteropCheck] = [
        InteropCheck(name: "GET", run: get),
        InteropCheck(name: "HEAD", run: head),
        InteropCheck(name: "POST", run: { await upload($0, method: .post) }),
        InteropCheck(name: "PUT", run: { await upload($0, method: .put) }),
        InteropCheck(name: "keep-alive x100", run: keepAlive),
        InteropCheck(name: "Content-Length body", run: contentLength),
        InteropCheck(name: "chunked response", run: chunkedResponse),
        InteropCheck(name: "chunked upload", run: chunkedUpload),
        InteropCheck(name: "gzip", run: { await compressed($0, "gzip") }),
        InteropCheck(name: "br", run: { await compressed($0, "br") }),
        InteropCheck(name: "zstd", run: { await compressed($0, "zstd") }),
        InteropCheck(name: "Range", run: range),
        InteropCheck(name: "resume", run: resume),
        InteropCheck(name: "conditional 304", run: conditional),
        InteropCheck(name: "100-continue 10 MiB", run: expectContinue),
        InteropCheck(name: "60 KiB head", run: bigHead),
        InteropCheck(name: "TLS 1.2", run: { await tlsVersion($0, .tls12) }),
        InteropCheck(name: "TLS 1.3", run: { await tlsVersion($0, .tls13) }),
        InteropCheck(name: "SNI", run: sni),
        InteropCheck(name: "ALPN", run: alpn),
        InteropCheck(name: "resumption 1.2", run: { await resumption($0, .tls12) }),
        InteropCheck(name: "resumption 1.3", run: { await resumption($0, .tls13) }),
        InteropCheck(name: "client certificate", run: clientCertificate),
        InteropCheck(name: "server closes", run: serverCloses),
        InteropCheck(name: "Digest", run: digest),
    ]

    // MARK: - Helpers

    static var s: TestServers { TestServers.shared }

    /// The test CA, in a configuration of this server's own (its own pool keys and sessions).
    static func trusting(_ server: InteropServer) -> TLSConfiguration {
        var tls = s.trustTestCA
        tls.trustEvaluator = TrustEvaluator()
        return tls
    }

    /// A transfer and what its connection agreed on when the head arrived.
    struct Seen {
        var transfer: Transfer
        var tls: TLSDetails?
        var error: CourierError? { transfer.error }
        var status: Int { transfer.status }
        var body: [UInt8] { transfer.responseBody }
    }

    static func send(_ url: String, method: HTTPMethod = .get, headers: HTTPHeaders = [:], body: RequestBody = .empty,
                     sink: ResponseSink = .memory, configure: (inout TransferOptions) -> Void = { _ in },
                     watch: ((Transfer) -> Void)? = nil) async -> Seen {
        var options = TransferOptions()
        options.timeouts.total = .seconds(60)
        if InteropWire.h2 {
            options.httpVersion = .http2Only
            options.tls = s.trustTestCA
        }
        configure(&options)
        let transfer = Transfer(url: try! CourierURL(parsing: url), method: method, headers: headers, body: body, options: options)
        transfer.sink = sink
        let watcher = HeadWatcher(progress: watch)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            watcher.onComplete = { continuation.resume() }
            transfer.delegate = watcher
            transfer.reportsHead = true
            if watch != nil {
                transfer.reportsProgress = true
                transfer.progressIntervalMillis = 0
            }
            Runtime.shared.submit(transfer)
        }
        return Seen(transfer: transfer, tls: watcher.tls)
    }

    /// Records the TLS details at the final head (the connection is only known while it serves).
    final class HeadWatcher: TransferDelegate, @unchecked Sendable {
        var onComplete: (() -> Void)?
        var tls: TLSDetails?
        let progress: ((Transfer) -> Void)?
        init(progress: ((Transfer) -> Void)?) { self.progress = progress }
        func transferDidReceiveHead(_ transfer: Transfer) { tls = transfer.connectionInfo?.tls ?? tls }
        func transferDidProgress(_ transfer: Transfer) { progress?(transfer) }
        func transferDidComplete(_ transfer: Transfer) { onComplete?() }
    }

    static func sha256Hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBufferPointer { b in digest.withUnsafeMutableBufferPointer { _ = SHA256(b.baseAddress, b.count, $0.baseAddress) } }
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    /// The failure to report when `seen` did not end in `status` (nil when it did).
    static func problem(_ seen: Seen, expecting status: Int = 200) -> String? {
        if let error = seen.error { return "error \(error.code): \(error.message)" }
        if seen.status != status { return "status \(seen.status), expected \(status)" }
        return nil
    }

    static func bytes(_ count: Int, seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 131) ^ ($0 >> 9) ^ seed) }
    }

    /// The upload answer (stream_server.py's JSON, or the handler's of uvicorn and Go) matches.
    static func judgeUpload(_ seen: Seen, sent: [UInt8]) -> InteropOutcome {
        if let problem = problem(seen) { return .fail(problem) }
        guard let answer = try? JSONSerialization.jsonObject(with: Data(seen.body)) as? [String: Any] else {
            return .fail("not the upload answer: \(String(decoding: seen.body.prefix(200), as: UTF8.self))")
        }
        guard answer["length"] as? Int == sent.count, answer["sha256"] as? String == sha256Hex(sent) else {
            return .fail("the server saw \(answer["length"] ?? "?") bytes (\(answer["sha256"] ?? "?")), \(sent.count) were sent")
        }
        return .pass
    }

    // MARK: - Methods and framing

    static func get(_ server: InteropServer) async -> InteropOutcome {
        let seen = await send(server.url("/small"))
        if let problem = problem(seen) { return .fail(problem) }
        return seen.body == Array(repeating: UInt8(ascii: "s"), count: 100) ? .pass : .fail("body of \(seen.body.count) bytes")
    }

    /// Apache's mod_auth_digest (MD5, qop auth; Tests/Interop/launch.py's user and realm) lets
    /// the core's Digest answer in (a GET with a query and a body, sent again whole), and keeps a
    /// wrong password out.
    static func digest(_ server: InteropServer) async -> InteropOutcome {
        guard server.kind == .apache else { return .notApplicable("only Apache is set up with Digest authentication") }
        let login = DigestLogin(user: "alice", password: "wonderland")
        let seen = await send(server.url("/digest/secret?view=1"), body: .bytes(Array(repeating: 0x78, count: 1000)),
                              configure: { $0.digest = login })
        if let problem = problem(seen) { return .fail(problem) }
        if seen.body != Array("behind mod_auth_digest\n".utf8) { return .fail("body \(String(decoding: seen.body, as: UTF8.self))") }
        let refused = await send(server.url("/digest/secret"), configure: { $0.digest = DigestLogin(user: "alice", password: "no") })
        return refused.status == 401 ? .pass : .fail("a wrong password got \(refused.status)")
    }

    static func head(_ server: InteropServer) async -> InteropOutcome {
        let seen = await send(server.url("/small"), method: .head)
        if let problem = problem(seen) { return .fail(problem) }
        if !seen.body.isEmpty { return .fail("a HEAD response with \(seen.body.count) body bytes") }
        if let length = seen.transfer.head?.headers["Content-Length"], length != "100" { return .fail("Content-Length \(length)") }
        return .pass
    }

    static func upload(_ server: InteropServer, method: HTTPMethod) async -> InteropOutcome {
        let body = bytes(256 << 10, seed: method == .post ? 1 : 2)
        return judgeUpload(await send(server.url("/upload"), method: method, body: .bytes(body)), sent: body)
    }

    static func keepAlive(_ server: InteropServer) async -> InteropOutcome {
        var opened: [Int] = []
        for i in 0..<100 {
            let seen = await send(server.url("/small"))
            if let problem = problem(seen) { return .fail("request \(i + 1): \(problem)") }
            if seen.transfer.metrics.connectionsOpened > 0 { opened.append(i + 1) }
        }
        return opened.count <= 1 ? .pass : .fail("requests \(opened) opened connections (100 in a row)")
    }

    static func contentLength(_ server: InteropServer) async -> InteropOutcome {
        let seen = await send(server.url("/medium"))
        if let problem = problem(seen) { return .fail(problem) }
        guard seen.transfer.head?.headers["Content-Length"] == "16384" else {
            return .fail("framed by \(seen.transfer.head?.headers["Transfer-Encoding"] ?? "the close"), not Content-Length")
        }
        let expected = (0..<16_384).map { TestServers.largeFileByte($0 &* 7) }
        return seen.body == expected ? .pass : .fail("the body differs")
    }

    /// The bytes of stream_server.py's /blob/SIZE, from the suite's own stream server.
    static func blobReference(_ size: Int) async -> [UInt8] {
        await InteropWire.$h2.withValue(false) { await send(s.stream + "/blob/\(size)").body }
    }

    static func chunkedResponse(_ server: InteropServer) async -> InteropOutcome {
        let size = 1_000_000
        let seen = await send(server.url("/blob/\(size)?chunked=4096"))
        if let problem = problem(seen) { return .fail(problem) }
        let framing = seen.transfer.head?.headers["Transfer-Encoding"]?.lowercased()
        // (HTTP/2 has no chunked framing: a body of no announced length ends with its stream.)
        guard framing == "chunked" || InteropWire.h2 else { return .fail("not chunked (Transfer-Encoding \(framing ?? "none"))") }
        return seen.body == (await blobReference(size)) ? .pass : .fail("the body differs (\(seen.body.count) bytes)")
    }

    /// A body handed over in pieces, of a length nobody announced: it goes out chunked.
    final class PiecesSource: BodySource {
        var pieces: [[UInt8]]
        var wake: (() -> Void)?
        init(_ body: [UInt8], piece: Int) {
            pieces = stride(from: 0, to: body.count, by: piece).map { Array(body[$0..<min($0 + piece, body.count)]) }
        }
        func read() -> BodyRead { pieces.isEmpty ? .end : .array(pieces.removeFirst()) }
        func close() { pieces = [] }
    }

    static func chunkedUpload(_ server: InteropServer) async -> InteropOutcome {
        let body = bytes(300_000, seed: 3)
        let stream = BodyStream(length: nil, replayable: true) { PiecesSource(body, piece: 7_000) }
        let seen = await send(server.url("/upload"), method: .post, body: .stream(stream))
        if InteropWire.h2, server.kind == .lighttpd, seen.status == 411 {
            return .notApplicable("lighttpd 1.4.69 answers 411 to an h2 request body of no announced length")
        }
        return judgeUpload(seen, sent: body)
    }

    static func compressed(_ server: InteropServer, _ coding: String) async -> InteropOutcome {
        let seen = await send(server.url("/gzip/text"), headers: ["Accept-Encoding": coding])
        if let problem = problem(seen) { return .fail(problem) }
        guard let applied = seen.transfer.head?.headers["Content-Encoding"]?.lowercased(), applied == coding else {
            return .notApplicable("\(server.kind) does not offer \(coding)")
        }
        let expected = Array(TestServers.gzipText.utf8)
        guard seen.body == expected else { return .fail("decoded \(seen.body.count) bytes, expected \(expected.count)") }
        return seen.transfer.metrics.bodyBytesReceived < UInt64(expected.count) ? .pass : .fail("the body was not compressed")
    }

    // MARK: - Ranges and validators

    static func range(_ server: InteropServer) async -> InteropOutcome {
        let seen = await send(server.url("/large"), headers: ["Range": "bytes=1000-1999"])
        if let problem = problem(seen, expecting: 206) { return .fail(problem) }
        return seen.body == (1000..<2000).map(TestServers.largeFileByte) ? .pass : .fail("the range's bytes differ")
    }

    static func resume(_ server: InteropServer) async -> InteropOutcome {
        let directory = NSTemporaryDirectory() + "courier-interop-\(server.kind)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let destination = directory + "/large"
        // The first attempt is cancelled once a megabyte is on disk (throttled, so it cannot end first).
        let first = await send(server.url("/large"), sink: .resumable(ResumableDownload(destination: destination)),
                               configure: { $0.receiveRateLimit = 16 << 20 }) { transfer in
            if transfer.metrics.bodyBytesReceived > 1 << 20 { Runtime.shared.cancel(transfer) }
        }
        guard first.error?.code == .cancelled else { return .fail("the first attempt was not cut: \(String(describing: first.error))") }
        let second = await send(server.url("/large"), sink: .resumable(ResumableDownload(destination: destination)))
        if let problem = problem(second, expecting: 206) { return .fail(problem) }
        // (Front ends settle the sink's files; here the check does.)
        if let error = second.transfer.finishSink(succeeded: true) { return .fail("settling the file: \(error)") }
        let received = second.transfer.metrics.bodyBytesReceived
        guard received < UInt64(TestServers.largeSize) else { return .fail("the whole body was sent again") }
        guard let file = FileManager.default.contents(atPath: destination), file.count == TestServers.largeSize else {
            let size = FileManager.default.contents(atPath: destination)?.count
            return .fail("the file holds \(size.map(String.init) ?? "nothing"), not \(TestServers.largeSize) bytes (\(received) came in the second attempt)")
        }
        return file == FileManager.default.contents(atPath: s.root + "/html/large") ? .pass : .fail("the resumed file differs")
    }

    static func conditional(_ server: InteropServer) async -> InteropOutcome {
        let first = await send(server.url("/small"))
        if let problem = problem(first) { return .fail(problem) }
        let headers = first.transfer.head!.headers
        var validators: [(String, String)] = []
        if let tag = headers["ETag"] { validators.append(("If-None-Match", tag)) }
        if let date = headers["Last-Modified"] { validators.append(("If-Modified-Since", date)) }
        if validators.isEmpty { return .fail("no ETag and no Last-Modified") }
        for (name, value) in validators {
            let again = await send(server.url("/small"), headers: HTTPHeaders([(name, value)]))
            if let problem = problem(again, expecting: 304) { return .fail("\(name): \(problem)") }
            if !again.body.isEmpty { return .fail("a 304 with a body") }
        }
        return .pass
    }

    static func expectContinue(_ server: InteropServer) async -> InteropOutcome {
        let body = bytes(10 << 20, seed: 4)
        // A server that never answers 100 would hold the body past the total deadline. Over h2
        // the field is answered unevenly (nginx sends no 100 there): the body goes after the
        // continue timeout, and the check is that it goes and arrives intact.
        let seen = await send(server.url("/upload"), method: .put, body: .bytes(body)) {
            $0.expectContinue = .always
            $0.continueTimeout = InteropWire.h2 ? .seconds(1) : .seconds(120)
        }
        return judgeUpload(seen, sent: body)
    }

    static func bigHead(_ server: InteropServer) async -> InteropOutcome {
        let seen = await send(server.url("/bighead"))
        if let problem = problem(seen) { return .fail(problem) }
        let headers = seen.transfer.head!.headers
        let fill = (0..<100).filter { headers["X-Fill-\(String(format: "%03d", $0))"] == String(repeating: String(format: "%03d", $0), count: 200) }
        return fill.count == 100 ? .pass : .fail("\(fill.count) of the 100 fields arrived intact")
    }

    // MARK: - TLS

    static func tlsVersion(_ server: InteropServer, _ version: TLSConfiguration.Version) async -> InteropOutcome {
        var tls = trusting(server)
        if version == .tls12 { tls.maximumVersion = .tls12 } else { tls.minimumVersion = .tls13 }
        let seen = await send(server.url("/small", host: "localhost", tls: true)) { $0.tls = tls }
        if let problem = problem(seen) { return .fail(problem) }
        let want = version == .tls12 ? "TLSv1.2" : "TLSv1.3"
        return seen.tls?.version == want ? .pass : .fail("negotiated \(seen.tls?.version ?? "nothing")")
    }

    static func sni(_ server: InteropServer) async -> InteropOutcome {
        if server.kind == .uvicorn { return .notApplicable("uvicorn serves one certificate per listener (Python's ssl)") }
        var route = ConnectRoute()
        try! route.addResolve("other.test:\(server.https):127.0.0.1")
        for host in ["localhost", "other.test"] {
            let seen = await send(server.url("/small", host: host, tls: true)) {
                $0.tls = trusting(server)
                $0.route = route
            }
            if let problem = problem(seen) { return .fail("\(host): \(problem)") }
        }
        return .pass
    }

    /// ALPN offers h2 and http/1.1 by default: the server's choice is what the response came
    /// over; offering http/1.1 alone gets http/1.1 from every server.
    static func alpn(_ server: InteropServer) async -> InteropOutcome {
        let seen = await send(server.url("/small", host: "localhost", tls: true)) { $0.tls = trusting(server) }
        if let problem = problem(seen) { return .fail(problem) }
        let http1 = await send(server.url("/small", host: "localhost", tls: true)) {
            $0.tls = trusting(server)
            $0.httpVersion = .http1Only
        }
        if let problem = problem(http1) { return .fail("http1Only: \(problem)") }
        guard http1.transfer.head?.versionMajor == 1, http1.tls?.alpn == "http/1.1" || http1.tls?.alpn == "" else {
            return .fail("http1Only got ALPN \(http1.tls?.alpn ?? "unknown")")
        }
        switch seen.tls?.alpn {
        case "h2"?: return seen.transfer.head?.versionMajor == 2 ? .pass : .fail("ALPN h2 but an HTTP/1 response")
        case "http/1.1"?: return seen.transfer.head?.versionMajor == 1 ? .pass : .fail("ALPN http/1.1 but an HTTP/2 response")
        case ""?: return .notApplicable("\(server.kind) negotiates no ALPN")
        case let other: return .fail("ALPN \(other ?? "unknown")")
        }
    }

    static func resumption(_ server: InteropServer, _ version: TLSConfiguration.Version) async -> InteropOutcome {
        var tls = trusting(server)
        if version == .tls12 { tls.maximumVersion = .tls12 } else { tls.minimumVersion = .tls13 }
        var resumed: [Bool] = []
        for _ in 0..<2 {
            // Each on a connection of its own, closed after the exchange.
            let seen = await send(server.url("/small", host: "localhost", tls: true)) {
                $0.tls = tls
                $0.reuseConnection = false
            }
            if let problem = problem(seen) { return .fail(problem) }
            resumed.append(seen.transfer.metrics.tlsResumed)
        }
        return resumed == [false, true] ? .pass : .fail("resumed: \(resumed)")
    }

    static func clientCertificate(_ server: InteropServer) async -> InteropOutcome {
        guard let port = server.mtls else { return .notApplicable("\(server.kind) cannot require client certificates") }
        let url = server.url("/small", port: port, host: "localhost", tls: true)
        let without = await send(url) { $0.tls = trusting(server) }
        if without.error == nil, without.status < 400 { return .fail("answered \(without.status) without a certificate") }
        var tls = trusting(server)
        tls.clientCertificateFile = s.certs + "/client.pem"
        tls.clientKeyFile = s.certs + "/client.key"
        let with = await send(url) { $0.tls = tls }
        if let problem = problem(with) { return .fail("with a certificate: \(problem)") }
        return .pass
    }

    static func serverCloses(_ server: InteropServer) async -> InteropOutcome {
        guard let port = server.closing else { return .notApplicable("\(server.kind) has no way to close after a few requests") }
        if InteropWire.h2 { return .notApplicable("the closing listener is plain HTTP (h2 is offered over TLS)") }
        var opened = 0
        for i in 0..<10 {
            let seen = await send(server.url("/small", port: port))
            if let problem = problem(seen) { return .fail("request \(i + 1): \(problem)") }
            opened += seen.transfer.metrics.connectionsOpened
        }
        return opened >= 2 ? .pass : .fail("the server never closed (\(opened) connection)")
    }
}
