import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// The mock server for users' tests: requests answered inside the process, never a socket, while
/// what sits above the wire runs as against a real server (redirects, cookies, the cache, retries,
/// bodies sent whole or chunked, HEAD); HTTP/2 asked for is answered over HTTP/1.1, and a status
/// no HTTP/1.1 line can carry becomes a 500.
@Suite("Mock server")
struct MockServerTests {
    /// A mock that records what it was asked and answers by path.
    final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [MockServer.Request] = []
        func add(_ request: MockServer.Request) { lock.withLock { seen.append(request) } }
        var requests: [MockServer.Request] { lock.withLock { seen } }
    }

    func mock(_ recorder: Recorder) -> MockServer {
        let retried = NSLock()
        nonisolated(unsafe) var flaky = 0
        return MockServer { request in
            recorder.add(request)
            var path = request.target.split(separator: "?").first.map(String.init) ?? request.target
            if path.hasPrefix("/v1/") { path.removeFirst(3) }
            switch path {
            case "/items": return .init(headers: ["Content-Type": "application/json"], body: Array(#"[{"id":1}]"#.utf8))
            case "/echo": return .init(headers: ["X-Method": request.method], body: request.body)
            case "/moved": return .init(status: 302, headers: ["Location": "/items"])
            case "/login": return .init(headers: ["Set-Cookie": "session=abc; Path=/"], body: Array("in".utf8))
            case "/whoami": return .init(body: Array((request.headers["Cookie"] ?? "nobody").utf8))
            case "/cached": return .init(headers: ["Cache-Control": "max-age=600"], body: Array("fresh".utf8))
            case "/flaky":
                let attempt = retried.withLock { flaky += 1; return flaky }
                return attempt < 3 ? .init(status: 503) : .init(body: Array("third time".utf8))
            default: return .init(status: 404, body: Array("no \(path)".utf8))
            }
        }
    }

    @Test func anEngineAnsweredInsideTheProcess() async throws {
        let recorder = Recorder()
        let server = mock(recorder)
        var configuration = Engine.Configuration()
        configuration.acceptableStatus = 0..<1000
        let api = Engine(host: "https://api.example.test/v1", mock: server, configuration: configuration)
        let items = try await api.send(api.operation(path: "/items"))
        let text = try items.string()
        #expect(items.status == 200 && items.headers["Content-Type"] == "application/json" && text == #"[{"id":1}]"#)
        let post = api.operation(path: "/echo", method: .post)
        post.body = .bytes(Array("hello".utf8))
        let echoed = try await api.send(post)
        #expect(echoed.body == Array("hello".utf8) && echoed.headers["X-Method"] == "POST")
        let chunked = api.operation(path: "/echo", method: .put)
        chunked.body = .stream(BodyStream(length: nil, replayable: true) { BytesBodySource(Array(repeating: 7, count: 100_000), pieceSize: 4096) })
        #expect(try await api.send(chunked).body.count == 100_000, "a chunked body read back whole")
        let head = try await api.send(api.operation(path: "/items", method: .head))
        #expect(head.status == 200 && head.body.isEmpty)
        let seen = recorder.requests
        #expect(seen.first?.target == "/v1/items" && seen.first?.headers["Host"] == "api.example.test")
        #expect(seen.map(\.method) == ["GET", "POST", "PUT", "HEAD"] && server.requestCount == 4)
    }

    @Test func whatSitsAboveTheWireRuns() async throws {
        let recorder = Recorder()
        var configuration = Engine.Configuration()
        configuration.acceptableStatus = 0..<1000
        configuration.options.cookies = CookieJar()
        configuration.options.retry = RetryPolicy(count: 3, intervals: [.milliseconds(1)])
        let cache = try Cache(Cache.Configuration())
        configuration.cache = cache
        let api = Engine(host: "http://api.example.test", mock: mock(recorder), configuration: configuration)
        let moved = try await api.send(api.operation(path: "/moved"))
        #expect(moved.status == 200 && moved.history.map(\.head.status) == [302], "the redirect followed")
        _ = try await api.send(api.operation(path: "/login"))
        let whoami = try await api.send(api.operation(path: "/whoami")).string()
        #expect(whoami == "session=abc", "the cookie kept and sent")
        let first = try await api.send(api.operation(path: "/cached"))
        let second = try await api.send(api.operation(path: "/cached"))
        #expect(first.cachePhase == .fresh && second.cachePhase != .fresh, "the second from the cache")
        let flaky = try await api.send(api.operation(path: "/flaky")).string()
        #expect(flaky == "third time", "retried twice")
        #expect(recorder.requests.filter { $0.target == "/cached" }.count == 1)
        #expect(recorder.requests.filter { $0.target == "/flaky" }.count == 3)
    }

    @Test func fromC() async throws {
        let bin = try await CExamples.shared.directory()
        let c = try await runProcess(bin + "/mock", [])
        #expect(c.status == 0, "\(c.stdout)\(c.stderr)")
    }

    @Test func http2AndImpossibleStatuses() async throws {
        // HTTP/2 with prior knowledge is not spoken by the mock: the key keeps such requests on HTTP/1.1.
        var options = TransferOptions()
        var route = ConnectRoute()
        route.mock = MockServer { _ in .init(status: 204) }
        options.route = route
        options.httpVersion = .http2Only
        let (t, _) = await fetch("http://h2.test/") { $0 = options }
        #expect(t.error == nil && t.status == 204, "\(String(describing: t.error))")
        route.mock = MockServer { _ in .init(status: 42) }
        let (odd, _) = await fetch("http://h2.test/") { $0.route = route }
        #expect(odd.status == 500)
    }
}
