/// A request's HTTP/2 header block (RFC 9113 section 8.3.1): the pseudo-header fields first,
/// then the caller's fields with lower-case names, without what HTTP/2 forbids.
///
/// Section 8.2.2: `Connection`, `Keep-Alive`, `Proxy-Connection`, `Transfer-Encoding` and
/// `Upgrade` are connection-specific and never sent; `TE` only as "trailers"; `Host` becomes
/// `:authority` (a caller's Host wins over the URL's, as on HTTP/1). Built into one byte array
/// with offsets, so the nghttp2 name/value list points into it without a string per field.
package struct HTTP2RequestHeaders {
    /// All names and values, back to back.
    package private(set) var bytes: [UInt8] = []
    /// (name start, name length, value start, value length) per field, in order.
    package private(set) var fields: [(Int, Int, Int, Int)] = []

    /// The header block of a request.
    /// - Parameters:
    ///   - authority: the URL's `host[:port]`, unless `headers` carries a Host.
    ///   - contentLength: the body's length when known (nil: none sent; a stream's DATA frames
    ///     end it instead of chunked framing).
    ///   - acceptEncoding: whether Courier asks for compressed bodies itself.
    package init(method: HTTPMethod, scheme: String, authority: String, path: String, query: String?,
                 headers: HTTPHeaders, contentLength: UInt64?, acceptEncoding: Bool) {
        let host = headers.combinedValue(for: "Host")
        add(":method", method.rawValue)
        add(":scheme", scheme)
        add(":authority", host ?? authority)
        add(":path", query.map { path + "?" + $0 } ?? path)
        for (name, value) in headers {
            let lower = name.lowercased()
            if Self.connectionSpecific.contains(lower) { continue }
            if lower == "host" { continue }
            if lower == "te", value.lowercased() != "trailers" { continue }
            if lower == "content-length", contentLength != nil { continue }
            add(lower, value)
        }
        if acceptEncoding { add("accept-encoding", "gzip, deflate, br, zstd") }
        if let contentLength { add("content-length", String(contentLength)) }
    }

    /// Fields HTTP/2 forbids in any message (RFC 9113 section 8.2.2).
    package static let connectionSpecific: Set<String> = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]

    private mutating func add(_ name: String, _ value: String) {
        let nameStart = bytes.count
        bytes.append(contentsOf: name.utf8)
        let valueStart = bytes.count
        bytes.append(contentsOf: value.utf8)
        fields.append((nameStart, valueStart - nameStart, valueStart, bytes.count - valueStart))
    }

    /// The fields as strings, in order (`-v` and the tests).
    package var pairs: [(name: String, value: String)] {
        fields.map { field in
            (String(decoding: bytes[field.0..<(field.0 + field.1)], as: UTF8.self),
             String(decoding: bytes[field.2..<(field.2 + field.3)], as: UTF8.self))
        }
    }
}
