/// Deadlines for the phases of a transfer. nil means "no limit".
///
/// Each phase has its own clock, so the error names the phase that was slow, and time spent
/// waiting in the shared queue never eats into the connect or first-byte budget (the confusion
/// behind curl issues #437, #4486 and #6744). `total` runs from the moment the operation leaves the
/// queue to the last body byte, across redirects; `queue` bounds the wait before that.
public struct Timeouts: Sendable, Hashable {
    /// Longest wait in the shared queue before the operation starts.
    public var queue: Nanoseconds?
    /// Name resolution plus TCP connect plus TLS handshake, as curl's `--connect-timeout`.
    public var connect: Nanoseconds?
    /// From the request being handed to a connection to the first response byte.
    public var firstByte: Nanoseconds?
    /// Longest silence between two reads once the response has started.
    public var idle: Nanoseconds?
    /// The whole transfer, from leaving the queue to completion (curl's `--max-time`, minus the queue).
    public var total: Nanoseconds?

    /// Defaults: 30 s to connect, 60 s to the first byte, 60 s of silence mid-response, no total or
    /// queue limit. Generous enough for slow servers, short enough that nothing hangs forever.
    public init(queue: Nanoseconds? = nil,
                connect: Nanoseconds? = .seconds(30),
                firstByte: Nanoseconds? = .seconds(60),
                idle: Nanoseconds? = .seconds(60),
                total: Nanoseconds? = nil) {
        self.queue = queue
        self.connect = connect
        self.firstByte = firstByte
        self.idle = idle
        self.total = total
    }
}

/// How redirects are followed (RFC 9110 section 15.4).
public struct RedirectPolicy: Sendable, Hashable {
    /// Whether 301, 302, 303, 307 and 308 are followed at all.
    public var follow: Bool
    /// Most redirects in one transfer; one more ends in `.tooManyRedirects`.
    public var maxRedirects: Int
    /// Whether an https URL may redirect to http. Off by default: a downgrade exposes everything
    /// the client sends next, and a redirect is exactly how an attacker would arrange one.
    public var allowsHTTPSDowngrade: Bool

    /// Follows up to 10 redirects, never from https to http.
    public init(follow: Bool = true, maxRedirects: Int = 10, allowsHTTPSDowngrade: Bool = false) {
        self.follow = follow
        self.maxRedirects = maxRedirects
        self.allowsHTTPSDowngrade = allowsHTTPSDowngrade
    }

    /// Never follow: the 3xx response is the result.
    public static let none = RedirectPolicy(follow: false)
}

/// Per-transfer knobs that the core acts on.
public struct TransferOptions: Sendable, Hashable {
    /// Phase deadlines.
    public var timeouts = Timeouts()
    /// Redirect handling.
    public var redirects = RedirectPolicy()
    /// Limits on what the server may send.
    public var limits = ResponseLimits()
    /// Ask for gzip/deflate (`Accept-Encoding`) and decode the body. The decoded size is bounded by
    /// `limits.decodedLimit`.
    public var decompress = true
    /// Place in the shared queue.
    public var priority = Priority.normal
    /// Retry once on a fresh connection when a reused keep-alive connection turns out to have been
    /// closed by the server before it answered (idempotent requests only).
    public var retryStaleConnection = true
    /// Whether the connection may serve later requests. false closes it after this exchange
    /// (curl's `CURLOPT_FORBID_REUSE`): the request itself is unchanged, the client just does not
    /// keep the connection.
    public var reuseConnection = true
    /// Certificate checks, trust roots, client certificate, pins and versions for https. Part of
    /// the pool key: connections are shared only between requests with equal configurations.
    public var tls = TLSConfiguration()
    /// How long a connection this request leaves behind may stay idle in the pool.
    public var poolIdleTimeout: Nanoseconds = .seconds(60)

    /// The defaults.
    public init() {}
}
