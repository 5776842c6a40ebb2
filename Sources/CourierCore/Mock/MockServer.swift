import Synchronization

/// A server inside the process for users' own tests (httpx's `MockTransport`, OkHttp's
/// `MockWebServer`): connections of a route with a mock (`ConnectRoute.mock`) never open a
/// socket; each request Courier writes is read back, handed to `handler`, and its reply read by
/// Courier's own HTTP/1.1 parser. So everything above the wire runs as it does against a real
/// server: the cache, redirects, retries, cookies, authentication, hooks, decoding.
///
/// The handler runs on Courier's loop thread, one request at a time: it must answer at once (no
/// waiting on other requests). The mock speaks HTTP/1.1 without TLS, whatever the URL's scheme.
public final class MockServer: Sendable, Hashable {
    /// A request as the mock server received it.
    public struct Request: Sendable {
        public var method: String
        /// The request target: the path and query as sent (absolute form through no proxy).
        public var target: String
        public var headers: HTTPHeaders
        /// The body, de-chunked.
        public var body: [UInt8]
    }

    /// What the handler answers.
    public struct Reply: Sendable {
        public var status: Int
        public var headers: HTTPHeaders
        public var body: [UInt8]

        /// A reply; Content-Length is Courier's to write (a length the handler sets is replaced).
        public init(status: Int = 200, headers: HTTPHeaders = [:], body: [UInt8] = []) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    /// Answers one request.
    public typealias Handler = @Sendable (Request) -> Reply

    let handler: Handler
    private let count = Atomic<Int>(0)

    /// A mock server answering with `handler`.
    public init(handler: @escaping Handler) {
        self.handler = handler
    }

    /// How many requests it has answered.
    public var requestCount: Int { count.load(ordering: .relaxed) }

    /// Answers `request` (loop thread).
    func answer(_ request: Request) -> Reply {
        count.add(1, ordering: .relaxed)
        return handler(request)
    }

    /// The reply as HTTP/1.1 bytes (for a HEAD request, without its body).
    static func encode(_ reply: Reply, forHead: Bool) -> [UInt8] {
        let status = (100...999).contains(reply.status) ? reply.status : 500
        var text = "HTTP/1.1 \(status) Mock\r\n"
        for index in 0..<reply.headers.count {
            let name = reply.headers.name(at: index)
            if name.lowercased() == "content-length" || name.lowercased() == "transfer-encoding" { continue }
            text += "\(name): \(reply.headers.value(at: index))\r\n"
        }
        text += "Content-Length: \(reply.body.count)\r\n\r\n"
        return Array(text.utf8) + (forHead ? [] : reply.body)
    }

    public static func == (a: MockServer, b: MockServer) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
