/// The codes: stable numbers shared with the C ABI (`include/courier.h`), append-only.
extension CourierError {
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
        /// HTTP/2 failed: the server broke the protocol, reset a stream, or would not speak it.
        public static let http2 = Code(33)

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
        /// The server took none of the request body for longer than `Timeouts.send` (or `idle`).
        public static let sendTimeout = Code(8, 6)

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
        /// No connection could be opened because the kernel has no route to the host's
        /// addresses (ENETUNREACH, EHOSTUNREACH): the link is down, or the network has no way
        /// there. Nothing was sent. A retry waits for the network to come back (`RetryPolicy`).
        public static let noRoute = Code(7, 2)
        /// The connection's local end could not be bound as asked (`LocalBinding`: an address
        /// not of this machine, every port of the range taken, an interface without an address
        /// of the family): curl's 45.
        public static let localBind = Code(7, 3)
        /// The proxy answered CONNECT with a status other than 2xx (the status is in `status`;
        /// 407 when it wants credentials it was not given).
        public static let proxyTunnelRefused = Code(29, 1)
        /// The proxy's answer to CONNECT was not HTTP (or too large, or followed by bytes before
        /// the TLS handshake).
        public static let proxyHandshake = Code(29, 2)
        /// The proxy closed the connection before answering CONNECT.
        public static let proxyTunnelClosed = Code(29, 3)
        /// The proxy speaks a protocol Courier does not (socks4://, a scheme of no proxy).
        public static let proxyUnsupported = Code(29, 4)
        /// A SOCKS5 proxy could not open the connection to the origin (its reply says why:
        /// refused, unreachable, not allowed), or the origin's name could not be resolved for it
        /// (curl's 97).
        public static let proxySocksConnect = Code(29, 5)
        /// A SOCKS5 proxy accepted none of the offered authentication methods, or rejected the
        /// user name and password (curl's 97).
        public static let proxySocksAuth = Code(29, 6)
        /// A SOCKS5 proxy's answer was not SOCKS5, was cut short, or had bytes after it (curl's 97).
        public static let proxySocksHandshake = Code(29, 7)
        /// Another process owns the outbox directory (one owner at a time: its lock is held).
        public static let outboxLocked = Code(31, 1)
        /// The outbox holds as many entries or bytes as its limits allow.
        public static let outboxFull = Code(31, 2)
        /// An outbox entry is damaged (a torn write, a flipped byte): it is set aside, not sent.
        public static let outboxCorrupt = Code(31, 3)
        /// A file a frozen operation refers to changed since it was frozen: it is not sent.
        public static let fileChanged = Code(20, 4)
        /// The engine was invalidated (`Engine.invalidate`, `courier_engine_invalidate`): it
        /// takes no new requests.
        public static let engineInvalidated = Code(1, 1)
        /// A `.netrc` file breaks its rules (an unterminated quote, a value missing, a keyword
        /// out of place): it is refused whole (curl's 26).
        public static let netrcSyntax = Code(20, 5)
        /// The server broke HTTP/2 (a malformed frame or header block, a flow-control or
        /// flood violation, no SETTINGS); the detail names it.
        public static let http2Protocol = Code(33, 1)
        /// The server reset the stream (RST_STREAM) with an error code other than "refused".
        public static let http2StreamReset = Code(33, 2)
        /// HTTP/2 was required (`.http2Only`) and the server did not agree to it by ALPN.
        public static let http2NotNegotiated = Code(33, 3)
        /// The server ended the connection (GOAWAY with an error) while the stream was in flight.
        public static let http2GoAway = Code(33, 4)

        public var description: String { CourierError.summary(for: self) }
    }
}
