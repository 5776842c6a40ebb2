/// Every way a Courier request can fail, as one stable, `Sendable` value.
///
/// Why a struct with codes rather than an enum: new failure kinds are added over time, and an
/// exhaustive public enum would make each addition a source break for callers who `switch` on it
/// (the AsyncHTTPClient `HTTPClientError` lesson). The numbers are the C ABI's numbers
/// (`include/courier.h`): a primary code in the low 8 bits and an optional detail in bits 8 and up,
/// the way sqlite builds extended result codes, so `code.primary` stays meaningful to old callers.
/// Numbers are append-only and never reused.
///
/// The `message` is for people and logs; do not parse it.
public struct CourierError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which deadline fired, for `.timeout` errors.
    public enum TimeoutPhase: Int32, Sendable, Hashable {
        /// Waiting in the shared queue.
        case queue = 1
        /// DNS, TCP connect and TLS handshake.
        case connect = 2
        /// Waiting for the first response byte.
        case firstByte = 3
        /// Silence in the middle of a response.
        case idle = 4
        /// The whole transfer.
        case total = 5
        /// The server stopped reading the request body.
        case send = 6
    }

    /// The stable code.
    public let code: Code
    /// Extra context for people ("connect ECONNREFUSED 127.0.0.1:9"); not stable, do not parse.
    public var detail: String? { context?.detail }
    /// The HTTP status for `.httpStatus` errors.
    public var status: Int? { context?.status }
    /// The error a hook threw, for `.rejected` (an application's own typed error: a business
    /// error code mapped from a 200's body). Not part of equality.
    public var underlying: (any Error & Sendable)? { context?.underlying }
    /// Everything but the code, boxed and nil for a bare code: errors ride in the machines'
    /// actions on every request, and a code alone keeps them small (an inline `String?`, `Int?`
    /// and existential would make every action several words larger).
    private var context: Context?

    private final class Context: Sendable {
        let detail: String?
        let status: Int?
        let underlying: (any Error & Sendable)?
        /// What the layer above attached (the facade's `Response` of a failed request).
        let attachment: (any Sendable)?
        /// What opening the connection whose failure this is did, when the request asked.
        let trace: ConnectionTrace?
        init(detail: String?, status: Int?, underlying: (any Error & Sendable)?, attachment: (any Sendable)? = nil,
             trace: ConnectionTrace? = nil) {
            self.detail = detail
            self.status = status
            self.underlying = underlying
            self.attachment = attachment
            self.trace = trace
        }
    }

    /// The same error carrying `value` (the facade attaches the response of a request that
    /// failed with one, so a 404's body is reachable from the error alone). Not part of equality.
    package func attaching(_ value: any Sendable) -> CourierError {
        var copy = self
        copy.context = Context(detail: detail, status: status, underlying: underlying, attachment: value, trace: context?.trace)
        return copy
    }

    /// What `attaching` attached.
    package var attachment: (any Sendable)? { context?.attachment }

    /// The same error carrying what opening its connection did (`TransferOptions.tracesConnections`).
    package func tracing(_ trace: ConnectionTrace) -> CourierError {
        var copy = self
        copy.context = Context(detail: detail, status: status, underlying: underlying, attachment: attachment, trace: trace)
        return copy
    }

    /// What opening the connection whose failure this is did, when the request asked for it.
    package var connectionTrace: ConnectionTrace? { context?.trace }

    /// Creates an error.
    public init(_ code: Code, _ detail: String? = nil, status: Int? = nil) {
        self.code = code
        context = detail == nil && status == nil ? nil : Context(detail: detail, status: status, underlying: nil)
    }

    /// A `.rejected` error carrying what a hook threw (a `CourierError` thrown by a hook is
    /// itself the result instead).
    public static func rejected(by error: any Error) -> CourierError {
        if let courier = error as? CourierError { return courier }
        return CourierError(rejecting: error)
    }

    private init(rejecting error: any Error) {
        code = .rejected
        context = Context(detail: String(describing: error), status: nil, underlying: error)
    }

    /// Equal when the codes are: the code is what a caller can rely on, the detail is wording
    /// for people (it names addresses, sizes, the server's reason phrase) and may change.
    /// `catch let error where error == CourierError(.connectTimeout)` matches every connect
    /// timeout. Compare `status` too when it matters which unaccepted status it was.
    public static func == (a: CourierError, b: CourierError) -> Bool {
        a.code == b.code
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    /// Whether any deadline fired.
    public var isTimeout: Bool { code.primary == .timeout }

    /// Whether TLS failed: the handshake, certificate verification, pinning, the client
    /// certificate or CA files, or a stream cut without close_notify.
    public var isTLS: Bool { code.primary == .tls }

    /// Whether the request was cancelled (by the caller, a cancelled task, or `cancelAll`).
    public var isCancelled: Bool { code.primary == .cancelled }

    /// Whether the network path failed: the name did not resolve, no connection could be made
    /// (to the origin or the proxy), or the connection broke or closed before the exchange was
    /// complete. What an app shows as "offline or unreachable"; a timeout is `isTimeout`, a TLS
    /// failure `isTLS`, and a malformed response neither.
    public var isConnectivity: Bool {
        switch code.primary {
        case .dnsFailure, .connectFailed, .connectionReset, .emptyReply, .truncatedBody, .sendFailed:
            return true
        default:
            return code == .proxyTunnelClosed
        }
    }

    /// Whether sending the same request again later may well succeed, by the rule `RetryPolicy`
    /// uses for its default retries: a connection that could not be made or broke before any
    /// response (an error carrying a response broke after its head: the server may have acted),
    /// a connect or first-byte timeout, or an unaccepted status of 408, 429, 502, 503 or 504.
    /// Whether the request may be repeated at all (its method, its body) is the caller's side
    /// and not judged here.
    public var isRetryable: Bool {
        if code == .httpStatus, let status { return RetryPolicy.defaultStatuses.contains(status) }
        return RetryPolicy.isTransient(self, responseStarted: attachment != nil)
    }

    /// The deadline that fired, if this is a timeout.
    public var timeoutPhase: TimeoutPhase? {
        isTimeout ? TimeoutPhase(rawValue: code.rawValue >> 8) : nil
    }

    /// Whether the error means the origin could not be reached or did not answer properly (no
    /// connection, a timeout, a reset, a malformed, truncated or oversized response, a TLS
    /// failure): what a cache may answer with a stored response (stale-if-error) or a generated
    /// 504. Cancellation, shutdown, misuse and local file errors are the caller's side, not the
    /// origin's.
    ///
    /// Every primary code is listed on one side or the other (`originFailures`,
    /// `callerFailures`; a test holds the catalog to them), so a code added later is placed
    /// deliberately, not by a default.
    @inline(never)  // (a failure's path: kept out of the callers')
    public var isOriginFailure: Bool { Self.originFailures.contains(code.primary) }

    /// Could not reach the origin, or it did not answer properly.
    package static let originFailures: Set<Code> = [
        .dnsFailure, .connectFailed, .timeout, .connectionReset, .emptyReply, .truncatedBody, .malformedResponse, .headersTooLarge,
        .bodyTooLarge, .tooManyRedirects, .redirectRejected, .decodingFailed, .sendFailed, .tls, .rangeError, .proxy, .rejected,
        .again, .http2,
    ]
    /// The caller's side: its request, its files, its cancel, the process.
    package static let callerFailures: Set<Code> = [
        .misuse, .invalidArgument, .invalidURL, .unsupportedScheme, .invalidHeader, .cancelled, .fileError, .shutdown,
        .responseFormat, .httpStatus, .notFound, .noMemory, .loopUnavailable, .outbox,
    ]

    /// The error's static summary plus its detail, for logs.
    public var message: String {
        if let detail { return "\(Self.summary(for: code)): \(detail)" }
        return Self.summary(for: code)
    }

    public var description: String { "CourierError(\(code.rawValue)): \(message)" }
}
