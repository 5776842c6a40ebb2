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
    /// A stable numeric failure code (primary in the low byte, detail above it).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The number shared with the C ABI.
        public let rawValue: Int32
        /// Wraps a raw code.
        public init(rawValue: Int32) { self.rawValue = rawValue }
        init(_ primary: Int32, _ detail: Int32 = 0) { self.rawValue = primary | (detail << 8) }

        /// The primary code alone, for callers that care about the family ("a timeout") rather than
        /// the detail ("the connect timeout").
        public var primary: Code { Code(rawValue: rawValue & 0xff) }

        // Primary codes. Append only.
        /// An API was used in a way it does not allow (C ABI: NULL handle, double free, ...).
        public static let misuse = Code(1)
        /// An argument was out of range or an option value unknown.
        public static let invalidArgument = Code(2)
        /// The URL could not be parsed, or has no host.
        public static let invalidURL = Code(3)
        /// The URL's scheme is neither http nor https.
        public static let unsupportedScheme = Code(4)
        /// An outgoing header name or value contains CR, LF, NUL or other forbidden bytes.
        public static let invalidHeader = Code(5)
        /// The host name could not be resolved.
        public static let dnsFailure = Code(6)
        /// No connection could be opened to any of the host's addresses.
        public static let connectFailed = Code(7)
        /// A deadline passed; `timeoutPhase` says which one.
        public static let timeout = Code(8)
        /// The connection failed (reset, or closed) after part of the response had arrived.
        public static let connectionReset = Code(9)
        /// The server closed the connection without sending a single response byte.
        public static let emptyReply = Code(10)
        /// The connection ended before the body was complete.
        public static let truncatedBody = Code(11)
        /// The response violates HTTP/1.1; the detail says how.
        public static let malformedResponse = Code(12)
        /// The response head exceeded a configured limit.
        public static let headersTooLarge = Code(13)
        /// The response body exceeded the configured limit.
        public static let bodyTooLarge = Code(14)
        /// More redirects than the configured limit.
        public static let tooManyRedirects = Code(15)
        /// A redirect pointed somewhere the policy forbids.
        public static let redirectRejected = Code(16)
        /// The body's Content-Encoding could not be decoded.
        public static let decodingFailed = Code(17)
        /// The request was cancelled.
        public static let cancelled = Code(18)
        /// Writing the request to the connection failed.
        public static let sendFailed = Code(19)
        /// A local file (request body or download target) could not be read or written.
        public static let fileError = Code(20)
        /// The runtime is shutting down and takes no more work.
        public static let shutdown = Code(21)
        /// TLS failed; the detail says how.
        public static let tls = Code(22)
        /// A response accessor found the body in another format than asked for.
        public static let responseFormat = Code(23)
        /// The status code is outside the range the operation accepts.
        public static let httpStatus = Code(24)
        /// Nothing to return (C ABI: no such header, no finished request waiting).
        public static let notFound = Code(25)
        /// Memory could not be allocated.
        public static let noMemory = Code(26)
        /// The event loop could not start (no file descriptor or thread could be had); the
        /// request was not sent, and the next one tries again.
        public static let loopUnavailable = Code(27)
        /// A download could not be resumed: the server does not honour the byte range asked for.
        public static let rangeError = Code(28)
        /// The proxy would not, or could not, open a tunnel to the origin.
        public static let proxy = Code(29)
        /// The engine's response hook (or request hook) turned the request into a failure: a
        /// 200 carrying an error body, a business error code. `underlying` has the hook's error.
        public static let rejected = Code(30)
        /// The outbox (the journal of freezable operations) could not take or keep an entry.
        public static let outbox = Code(31)
        /// Nothing to return yet: a body reader's wait ended before bytes arrived (curl's
        /// CURLE_AGAIN). Not a failure of the request, which goes on.
        public static let again = Code(32)

        // Details. Append only within each family.
        /// Time spent waiting in the shared queue exceeded `Timeouts.queue`.
        public static let queueTimeout = Code(8, 1)
        /// Name resolution, TCP connect and TLS handshake together exceeded `Timeouts.connect`.
        public static let connectTimeout = Code(8, 2)
        /// No response byte arrived within `Timeouts.firstByte` after the request was sent.
        public static let firstByteTimeout = Code(8, 3)
        /// The connection went silent for longer than `Timeouts.idle` mid-response.
        public static let idleTimeout = Code(8, 4)
        /// The whole transfer exceeded `Timeouts.total`.
        public static let totalTimeout = Code(8, 5)

        /// The status line is not HTTP/1.x.
        public static let badStatusLine = Code(12, 1)
        /// A header line is malformed.
        public static let badHeader = Code(12, 2)
        /// A chunk size line is invalid or overflows.
        public static let badChunk = Code(12, 3)
        /// Content-Length and Transfer-Encoding disagree, or Content-Length appears twice
        /// (RFC 9112 section 6.3: ambiguous framing is a request-smuggling vector, never guessed at).
        public static let ambiguousFraming = Code(12, 4)
        /// Content-Length is not a non-negative decimal that fits in 64 bits.
        public static let badContentLength = Code(12, 5)
        /// The server sent bytes that belong to no request.
        public static let unsolicitedData = Code(12, 6)
        /// The server switched protocols, which Courier never asks for.
        public static let unexpectedUpgrade = Code(12, 7)

        /// The response head is longer than `Limits.maxHeaderBytes`.
        public static let headerBytesExceeded = Code(13, 1)
        /// The response has more header fields than `Limits.maxHeaderCount`.
        public static let headerCountExceeded = Code(13, 2)

        /// The redirect target's scheme is not http or https.
        public static let redirectSchemeNotAllowed = Code(16, 1)
        /// The redirect goes from https to http and the policy does not allow it.
        public static let redirectDowngrade = Code(16, 2)
        /// A redirect status came without a usable Location header.
        public static let redirectWithoutLocation = Code(16, 3)

        /// The encoded body is corrupt.
        public static let corruptEncoding = Code(17, 1)
        /// The decoded body exceeds `Limits.maxDecodedBytes` (a decompression bomb).
        public static let decodedTooLarge = Code(17, 2)
        /// The response's Content-Encoding is not one Courier decodes (gzip, deflate, br, zstd).
        public static let unsupportedEncoding = Code(17, 3)

        /// Reading the request body file failed.
        public static let fileRead = Code(20, 1)
        /// Writing the response to a file failed.
        public static let fileWrite = Code(20, 2)
        /// The request body's producer (a stream, a read callback) failed or aborted.
        public static let bodySource = Code(20, 3)

        /// The handshake failed (no common protocol or cipher, alert from the peer).
        public static let tlsHandshake = Code(22, 1)
        /// The certificate chain does not lead to a trusted root.
        public static let tlsUntrusted = Code(22, 2)
        /// The certificate does not match the host name or IP address.
        public static let tlsHostMismatch = Code(22, 3)
        /// The certificate has expired.
        public static let tlsExpired = Code(22, 4)
        /// The certificate is not valid yet.
        public static let tlsNotYetValid = Code(22, 5)
        /// No certificate in the chain matches the configured public-key pins.
        public static let tlsPinMismatch = Code(22, 6)
        /// The peer does not support an allowed protocol version.
        public static let tlsProtocolVersion = Code(22, 7)
        /// The client certificate or key could not be loaded.
        public static let tlsClientCertificate = Code(22, 8)
        /// The CA file or directory could not be loaded.
        public static let tlsCAFile = Code(22, 9)
        /// The application's trust hook rejected the server.
        public static let tlsRejectedByHook = Code(22, 10)
        /// The stream ended without a TLS close_notify where the body framing needed the close.
        public static let tlsTruncated = Code(22, 11)
        /// The cipher list, TLS 1.3 suites or curves name nothing OpenSSL offers (curl's 59).
        public static let tlsCipher = Code(22, 12)

        /// The body is not valid text in its charset.
        public static let invalidText = Code(23, 1)
        /// The body is not valid JSON.
        public static let invalidJSON = Code(23, 2)
        /// The JSON does not match the `Decodable` type.
        public static let decodeMismatch = Code(23, 3)
        /// The Content-Type names a charset Courier does not decode.
        public static let unsupportedCharset = Code(23, 4)
        /// The response's media type is not one the serializer accepts.
        public static let unexpectedContentType = Code(23, 5)
        /// A redirect hook refused the hop.
        public static let redirectRefused = Code(16, 4)
        /// The proxy's host name could not be resolved (curl's 5).
        public static let proxyResolve = Code(6, 1)
        /// No connection to the proxy could be made.
        public static let proxyConnect = Code(7, 1)
        /// The proxy answered CONNECT with a status other than 2xx (the status is in `status`;
        /// 407 when it wants credentials it was not given).
        public static let proxyTunnelRefused = Code(29, 1)
        /// The proxy's answer to CONNECT was not HTTP (or too large, or followed by bytes before
        /// the TLS handshake).
        public static let proxyHandshake = Code(29, 2)
        /// The proxy closed the connection before answering CONNECT.
        public static let proxyTunnelClosed = Code(29, 3)
        /// The proxy speaks a protocol Courier does not (https://, socks5://).
        public static let proxyUnsupported = Code(29, 4)
        /// Another process owns the outbox directory (one owner at a time: its lock is held).
        public static let outboxLocked = Code(31, 1)
        /// The outbox holds as many entries or bytes as its limits allow.
        public static let outboxFull = Code(31, 2)
        /// An outbox entry is damaged (a torn write, a flipped byte): it is set aside, not sent.
        public static let outboxCorrupt = Code(31, 3)
        /// A file a frozen operation refers to changed since it was frozen: it is not sent.
        public static let fileChanged = Code(20, 4)

        public var description: String { CourierError.summary(for: self) }
    }

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
    public var isOriginFailure: Bool {
        switch code.primary {
        case .misuse, .invalidArgument, .invalidURL, .unsupportedScheme, .invalidHeader, .cancelled, .fileError,
             .shutdown, .responseFormat, .httpStatus, .notFound, .noMemory, .loopUnavailable, .outbox:
            return false
        default:
            return true
        }
    }

    /// The error's static summary plus its detail, for logs.
    public var message: String {
        if let detail { return "\(Self.summary(for: code)): \(detail)" }
        return Self.summary(for: code)
    }

    public var description: String { "CourierError(\(code.rawValue)): \(message)" }

    /// Every code with its C name (nil for codes that never cross the C ABI: response-format
    /// details, which only Swift's accessors raise) and its static text, shared with
    /// `courier_strerror`. Append only; a test holds `include/courier.h` to it.
    package static let catalog: [(code: Code, cName: String?, summary: String)] = [
            (.misuse, "COURIER_E_MISUSE", "API misuse"),
            (.invalidArgument, "COURIER_E_INVALID_ARGUMENT", "invalid argument"),
            (.invalidURL, "COURIER_E_INVALID_URL", "invalid URL"),
            (.unsupportedScheme, "COURIER_E_UNSUPPORTED_SCHEME", "unsupported URL scheme"),
            (.invalidHeader, "COURIER_E_INVALID_HEADER", "invalid header name or value"),
            (.dnsFailure, "COURIER_E_DNS", "could not resolve host"),
            (.connectFailed, "COURIER_E_CONNECT", "could not connect"),
            (.timeout, "COURIER_E_TIMEOUT", "timed out"),
            (.queueTimeout, "COURIER_E_TIMEOUT_QUEUE", "timed out waiting in the queue"),
            (.connectTimeout, "COURIER_E_TIMEOUT_CONNECT", "connect timed out"),
            (.firstByteTimeout, "COURIER_E_TIMEOUT_FIRST_BYTE", "timed out waiting for the first response byte"),
            (.idleTimeout, "COURIER_E_TIMEOUT_IDLE", "connection idle too long mid-response"),
            (.totalTimeout, "COURIER_E_TIMEOUT_TOTAL", "transfer exceeded its total time limit"),
            (.connectionReset, "COURIER_E_CONNECTION_RESET", "connection reset during the response"),
            (.emptyReply, "COURIER_E_EMPTY_REPLY", "server closed the connection without replying"),
            (.truncatedBody, "COURIER_E_TRUNCATED_BODY", "response body truncated"),
            (.malformedResponse, "COURIER_E_MALFORMED_RESPONSE", "malformed response"),
            (.badStatusLine, "COURIER_E_BAD_STATUS_LINE", "malformed status line"),
            (.badHeader, "COURIER_E_BAD_HEADER", "malformed response header"),
            (.badChunk, "COURIER_E_BAD_CHUNK", "invalid chunk in chunked body"),
            (.ambiguousFraming, "COURIER_E_AMBIGUOUS_FRAMING", "ambiguous message framing (Content-Length with Transfer-Encoding, or repeated Content-Length)"),
            (.badContentLength, "COURIER_E_BAD_CONTENT_LENGTH", "invalid Content-Length"),
            (.unsolicitedData, "COURIER_E_UNSOLICITED_DATA", "server sent data that answers no request"),
            (.unexpectedUpgrade, "COURIER_E_UNEXPECTED_UPGRADE", "server switched protocols unasked"),
            (.headersTooLarge, "COURIER_E_HEADERS_TOO_LARGE", "response headers too large"),
            (.headerBytesExceeded, "COURIER_E_HEADER_BYTES", "response head exceeds the size limit"),
            (.headerCountExceeded, "COURIER_E_HEADER_COUNT", "response has too many header fields"),
            (.bodyTooLarge, "COURIER_E_BODY_TOO_LARGE", "response body exceeds the size limit"),
            (.tooManyRedirects, "COURIER_E_TOO_MANY_REDIRECTS", "too many redirects"),
            (.redirectRejected, "COURIER_E_REDIRECT_REJECTED", "redirect rejected"),
            (.redirectSchemeNotAllowed, "COURIER_E_REDIRECT_SCHEME", "redirect to a scheme other than http or https"),
            (.redirectDowngrade, "COURIER_E_REDIRECT_DOWNGRADE", "redirect from https to http not allowed"),
            (.redirectWithoutLocation, "COURIER_E_REDIRECT_LOCATION", "redirect without a usable Location"),
            (.decodingFailed, "COURIER_E_DECODING", "content decoding failed"),
            (.corruptEncoding, "COURIER_E_CORRUPT_ENCODING", "corrupt compressed body"),
            (.decodedTooLarge, "COURIER_E_DECODED_TOO_LARGE", "decompressed body exceeds the size limit"),
            (.unsupportedEncoding, "COURIER_E_UNSUPPORTED_ENCODING", "unsupported content coding"),
            (.cancelled, "COURIER_E_CANCELLED", "cancelled"),
            (.sendFailed, "COURIER_E_SEND", "failed to send the request"),
            (.fileError, "COURIER_E_FILE", "file error"),
            (.fileRead, "COURIER_E_FILE_READ", "could not read the request body file"),
            (.fileWrite, "COURIER_E_FILE_WRITE", "could not write the output file"),
            (.shutdown, "COURIER_E_SHUTDOWN", "runtime is shutting down"),
            (.tls, "COURIER_E_TLS", "TLS error"),
            (.tlsHandshake, "COURIER_E_TLS_HANDSHAKE", "TLS handshake failed"),
            (.tlsUntrusted, "COURIER_E_TLS_UNTRUSTED", "server certificate is not trusted"),
            (.tlsHostMismatch, "COURIER_E_TLS_HOST_MISMATCH", "server certificate does not match the host"),
            (.tlsExpired, "COURIER_E_TLS_EXPIRED", "server certificate has expired"),
            (.tlsNotYetValid, "COURIER_E_TLS_NOT_YET_VALID", "server certificate is not yet valid"),
            (.tlsPinMismatch, "COURIER_E_TLS_PIN_MISMATCH", "server public key matches no pin"),
            (.tlsProtocolVersion, "COURIER_E_TLS_PROTOCOL_VERSION", "no acceptable TLS protocol version"),
            (.tlsClientCertificate, "COURIER_E_TLS_CLIENT_CERT", "client certificate or key could not be used"),
            (.tlsCAFile, "COURIER_E_TLS_CA_FILE", "CA certificates could not be loaded"),
            (.tlsRejectedByHook, "COURIER_E_TLS_REJECTED", "server rejected by the trust hook"),
            (.tlsTruncated, "COURIER_E_TLS_TRUNCATED", "TLS stream truncated"),
            (.tlsCipher, "COURIER_E_TLS_CIPHER", "no usable cipher, TLS 1.3 suite or curve in the list"),
            (.responseFormat, "COURIER_E_RESPONSE_FORMAT", "response is not in the expected format"),
            (.invalidText, nil, "body is not valid text in its charset"),
            (.invalidJSON, nil, "body is not valid JSON"),
            (.decodeMismatch, nil, "JSON does not match the expected type"),
            (.unsupportedCharset, nil, "unsupported charset"),
            (.unexpectedContentType, nil, "unexpected Content-Type"),
            (.httpStatus, "COURIER_E_HTTP_STATUS", "unacceptable HTTP status"),
            (.notFound, "COURIER_E_NOT_FOUND", "not found"),
            (.noMemory, "COURIER_E_NO_MEMORY", "out of memory"),
            (.loopUnavailable, "COURIER_E_LOOP_UNAVAILABLE", "the event loop could not start"),
            (.rangeError, "COURIER_E_RANGE", "the server did not honour the byte range"),
            (.bodySource, "COURIER_E_BODY_SOURCE", "the request body producer failed"),
            (.proxy, "COURIER_E_PROXY", "proxy error"),
            (.redirectRefused, "COURIER_E_REDIRECT_REFUSED", "redirect refused by the redirect hook"),
            (.rejected, "COURIER_E_REJECTED", "the response was rejected by the engine's response hook"),
            (.proxyResolve, "COURIER_E_DNS_PROXY", "could not resolve the proxy"),
            (.proxyConnect, "COURIER_E_CONNECT_PROXY", "could not connect to the proxy"),
            (.proxyTunnelRefused, "COURIER_E_PROXY_REFUSED", "the proxy refused the CONNECT tunnel"),
            (.proxyHandshake, "COURIER_E_PROXY_HANDSHAKE", "malformed proxy answer to CONNECT"),
            (.proxyTunnelClosed, "COURIER_E_PROXY_CLOSED", "the proxy closed the connection during CONNECT"),
            (.proxyUnsupported, "COURIER_E_PROXY_UNSUPPORTED", "unsupported proxy scheme"),
            (.outbox, "COURIER_E_OUTBOX", "outbox error"),
            (.outboxLocked, "COURIER_E_OUTBOX_LOCKED", "another process owns the outbox"),
            (.outboxFull, "COURIER_E_OUTBOX_FULL", "the outbox is full"),
            (.outboxCorrupt, "COURIER_E_OUTBOX_CORRUPT", "a damaged outbox entry was set aside"),
            (.fileChanged, "COURIER_E_FILE_CHANGED", "the file changed since the request was frozen"),
            (.again, "COURIER_E_AGAIN", "no data yet; try again"),
    ]

    private static let summaries: [Int32: String] = {
        var table: [Int32: String] = [0: "no error"]
        for entry in catalog { table[entry.code.rawValue] = entry.summary }
        return table
    }()

    /// Static text for a code, shared with `courier_strerror`.
    public static func summary(for code: Code) -> String {
        summaries[code.rawValue] ?? "unknown error \(code.rawValue)"
    }
}
