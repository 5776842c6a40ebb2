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

        /// Reading the request body file failed.
        public static let fileRead = Code(20, 1)
        /// Writing the response to a file failed.
        public static let fileWrite = Code(20, 2)

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

        /// The body is not valid text in its charset.
        public static let invalidText = Code(23, 1)
        /// The body is not valid JSON.
        public static let invalidJSON = Code(23, 2)
        /// The JSON does not match the `Decodable` type.
        public static let decodeMismatch = Code(23, 3)
        /// The Content-Type names a charset Courier does not decode.
        public static let unsupportedCharset = Code(23, 4)

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
    public let detail: String?
    /// The HTTP status for `.httpStatus` errors.
    public let status: Int?

    /// Creates an error.
    public init(_ code: Code, _ detail: String? = nil, status: Int? = nil) {
        self.code = code
        self.detail = detail
        self.status = status
    }

    /// Whether any deadline fired.
    public var isTimeout: Bool { code.primary == .timeout }

    /// The deadline that fired, if this is a timeout.
    public var timeoutPhase: TimeoutPhase? {
        isTimeout ? TimeoutPhase(rawValue: code.rawValue >> 8) : nil
    }

    /// The error's static summary plus its detail, for logs.
    public var message: String {
        if let detail { return "\(Self.summary(for: code)): \(detail)" }
        return Self.summary(for: code)
    }

    public var description: String { "CourierError(\(code.rawValue)): \(message)" }

    /// Static text for a code, shared with `courier_strerror`.
    public static func summary(for code: Code) -> String {
        switch code.rawValue {
        case 0: return "no error"
        case Code.misuse.rawValue: return "API misuse"
        case Code.invalidArgument.rawValue: return "invalid argument"
        case Code.invalidURL.rawValue: return "invalid URL"
        case Code.unsupportedScheme.rawValue: return "unsupported URL scheme"
        case Code.invalidHeader.rawValue: return "invalid header name or value"
        case Code.dnsFailure.rawValue: return "could not resolve host"
        case Code.connectFailed.rawValue: return "could not connect"
        case Code.timeout.rawValue: return "timed out"
        case Code.queueTimeout.rawValue: return "timed out waiting in the queue"
        case Code.connectTimeout.rawValue: return "connect timed out"
        case Code.firstByteTimeout.rawValue: return "timed out waiting for the first response byte"
        case Code.idleTimeout.rawValue: return "connection idle too long mid-response"
        case Code.totalTimeout.rawValue: return "transfer exceeded its total time limit"
        case Code.connectionReset.rawValue: return "connection reset during the response"
        case Code.emptyReply.rawValue: return "server closed the connection without replying"
        case Code.truncatedBody.rawValue: return "response body truncated"
        case Code.malformedResponse.rawValue: return "malformed response"
        case Code.badStatusLine.rawValue: return "malformed status line"
        case Code.badHeader.rawValue: return "malformed response header"
        case Code.badChunk.rawValue: return "invalid chunk in chunked body"
        case Code.ambiguousFraming.rawValue: return "ambiguous message framing (Content-Length with Transfer-Encoding, or repeated Content-Length)"
        case Code.badContentLength.rawValue: return "invalid Content-Length"
        case Code.unsolicitedData.rawValue: return "server sent data that answers no request"
        case Code.unexpectedUpgrade.rawValue: return "server switched protocols unasked"
        case Code.headersTooLarge.rawValue: return "response headers too large"
        case Code.headerBytesExceeded.rawValue: return "response head exceeds the size limit"
        case Code.headerCountExceeded.rawValue: return "response has too many header fields"
        case Code.bodyTooLarge.rawValue: return "response body exceeds the size limit"
        case Code.tooManyRedirects.rawValue: return "too many redirects"
        case Code.redirectRejected.rawValue: return "redirect rejected"
        case Code.redirectSchemeNotAllowed.rawValue: return "redirect to a scheme other than http or https"
        case Code.redirectDowngrade.rawValue: return "redirect from https to http not allowed"
        case Code.redirectWithoutLocation.rawValue: return "redirect without a usable Location"
        case Code.decodingFailed.rawValue: return "content decoding failed"
        case Code.corruptEncoding.rawValue: return "corrupt compressed body"
        case Code.decodedTooLarge.rawValue: return "decompressed body exceeds the size limit"
        case Code.cancelled.rawValue: return "cancelled"
        case Code.sendFailed.rawValue: return "failed to send the request"
        case Code.fileError.rawValue: return "file error"
        case Code.fileRead.rawValue: return "could not read the request body file"
        case Code.fileWrite.rawValue: return "could not write the output file"
        case Code.shutdown.rawValue: return "runtime is shutting down"
        case Code.tls.rawValue: return "TLS error"
        case Code.tlsHandshake.rawValue: return "TLS handshake failed"
        case Code.tlsUntrusted.rawValue: return "server certificate is not trusted"
        case Code.tlsHostMismatch.rawValue: return "server certificate does not match the host"
        case Code.tlsExpired.rawValue: return "server certificate has expired"
        case Code.tlsNotYetValid.rawValue: return "server certificate is not yet valid"
        case Code.tlsPinMismatch.rawValue: return "server public key matches no pin"
        case Code.tlsProtocolVersion.rawValue: return "no acceptable TLS protocol version"
        case Code.tlsClientCertificate.rawValue: return "client certificate or key could not be used"
        case Code.tlsCAFile.rawValue: return "CA certificates could not be loaded"
        case Code.tlsRejectedByHook.rawValue: return "server rejected by the trust hook"
        case Code.tlsTruncated.rawValue: return "TLS stream truncated"
        case Code.responseFormat.rawValue: return "response is not in the expected format"
        case Code.invalidText.rawValue: return "body is not valid text in its charset"
        case Code.invalidJSON.rawValue: return "body is not valid JSON"
        case Code.decodeMismatch.rawValue: return "JSON does not match the expected type"
        case Code.unsupportedCharset.rawValue: return "unsupported charset"
        case Code.httpStatus.rawValue: return "unacceptable HTTP status"
        case Code.notFound.rawValue: return "not found"
        case Code.noMemory.rawValue: return "out of memory"
        case Code.loopUnavailable.rawValue: return "the event loop could not start"
        default: return "unknown error \(code.rawValue)"
        }
    }
}
