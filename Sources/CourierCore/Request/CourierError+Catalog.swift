/// Every code's C name and summary: what `courier_strerror` and `description` say (a test holds
/// `include/courier.h` to the names).
extension CourierError {
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
