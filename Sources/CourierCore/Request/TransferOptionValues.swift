// The values TransferOptions is made of: deadlines, the redirect policy, when a body waits for
// 100 Continue, when requests coalesce, and the connect-phase choices.

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
    /// Longest silence between two reads once the response has started; while the request body
    /// goes out, between two writes too unless `send` is set.
    public var idle: Nanoseconds?
    /// Longest wait for the server to take more of the request body (between two writes), apart
    /// from the read side's `idle` (httpx's write timeout beside its read timeout). nil: `idle`
    /// covers sending as well (curl has one limit for both); `Nanoseconds(.max)`: no limit.
    public var send: Nanoseconds?
    /// The whole transfer, from leaving the queue to completion (curl's `--max-time`, minus the queue).
    public var total: Nanoseconds?

    /// Defaults: 30 s to connect, 60 s to the first byte, 60 s of silence mid-response, no total or
    /// queue limit. Generous enough for slow servers, short enough that nothing hangs forever.
    public init(queue: Nanoseconds? = nil,
                connect: Nanoseconds? = .seconds(30),
                firstByte: Nanoseconds? = .seconds(60),
                idle: Nanoseconds? = .seconds(60),
                total: Nanoseconds? = nil,
                send: Nanoseconds? = nil) {
        self.queue = queue
        self.connect = connect
        self.firstByte = firstByte
        self.idle = idle
        self.total = total
        self.send = send
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
    /// Whether each hop sends the URL it was redirected from as `Referer` (curl's
    /// `CURLOPT_AUTOREFERER`, the CLI's `-e ';auto'`), without credentials or fragment. Off by
    /// default: a Referer tells the next origin where the client came from.
    public var autoReferer: Bool

    /// Follows up to 10 redirects, never from https to http.
    public init(follow: Bool = true, maxRedirects: Int = 10, allowsHTTPSDowngrade: Bool = false, autoReferer: Bool = false) {
        self.follow = follow
        self.maxRedirects = maxRedirects
        self.allowsHTTPSDowngrade = allowsHTTPSDowngrade
        self.autoReferer = autoReferer
    }

    /// Never follow: the 3xx response is the result.
    public static let none = RedirectPolicy(follow: false)
}

/// When a request body waits for `100 Continue` (RFC 9110 section 10.1.1): the server may then
/// refuse it (413, 401, a redirect) before a byte of it is sent.
///
/// Over HTTP/2 only `.always` asks (curl asks over HTTP/1.1 only): there a server's early answer
/// stops the body without it (the stream is reset), flow control bounds what goes before the
/// server reads, and servers answer the field unevenly (nginx 1.22 never sends the 100 on h2,
/// and h2o 2.2 closes a connection whose stream waits past its idle timeout).
public enum ExpectContinue: Sendable, Hashable {
    /// For bodies of at least 1 MiB and bodies of unknown length (curl's rule), over HTTP/1.1.
    case automatic
    /// For every request with a body, over HTTP/1.1 and HTTP/2.
    case always
    /// Never: the body follows the head at once.
    case never

    /// Whether a body of `length` bytes (nil: unknown) waits over HTTP/2.
    package func appliesOverHTTP2(toLength length: UInt64?) -> Bool {
        self == .always && applies(toLength: length)
    }

    /// Whether a body of `length` bytes (nil: unknown) waits.
    package func applies(toLength length: UInt64?) -> Bool {
        switch self {
        case .automatic: return length.map { $0 >= 1 << 20 } ?? true
        case .always: return length.map { $0 > 0 } ?? true
        case .never: return false
        }
    }
}

/// When identical GET and HEAD requests in flight share one network request (coalescing).
public enum Coalescing: Sendable, Hashable {
    /// When the request's engine has a cache (the default): identical requests to a cached
    /// resource would get the same answer anyway, as in a browser. Without a cache, two identical
    /// GETs are two requests, as libcurl and httpx send them (some servers answer each differently).
    case withCache
    /// Always (MKNetworkKit's behaviour).
    case always
    /// Never.
    case never
}

/// The connect-phase choices of `TransferOptions` (Happy Eyeballs delay, tracing, curl's
/// connection-per-transfer), in a box equal by value. Few requests carry any: they are part of the
/// options' rare composition, so an ordinary request's path to its pool key tests nothing more.
package final class ConnectChoices: Hashable, @unchecked Sendable {
    struct Values: Hashable {
        var happyEyeballsDelay = ConnectChoices.defaultDelay
        var traces = false
        var waitsForOwnConnection = false
        var http2PingInterval: Nanoseconds?
    }

    static let defaultDelay = Nanoseconds.milliseconds(AddressRacer.defaultAttemptDelayMillis)
    let values: Values

    init(_ values: Values) { self.values = values }

    package var happyEyeballsDelay: Nanoseconds { values.happyEyeballsDelay }
    package var traces: Bool { values.traces }
    package var waitsForOwnConnection: Bool { values.waitsForOwnConnection }
    package var http2PingInterval: Nanoseconds? { values.http2PingInterval }

    package static func == (a: ConnectChoices, b: ConnectChoices) -> Bool { a === b || a.values == b.values }
    package func hash(into hasher: inout Hasher) { hasher.combine(values) }
}
