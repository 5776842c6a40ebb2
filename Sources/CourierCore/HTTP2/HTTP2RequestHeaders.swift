/// A request's HTTP/2 header block (RFC 9113 section 8.3.1): the pseudo-header fields first,
/// then the caller's fields with lower-case names, without what HTTP/2 forbids.
///
/// Section 8.2.2: `Connection`, `Keep-Alive`, `Proxy-Connection`, `Transfer-Encoding` and
/// `Upgrade` are connection-specific and never sent; `TE` only as "trailers"; `Host` becomes
/// `:authority` (a caller's Host wins over the URL's, as on HTTP/1). Built into one buffer with
/// offsets, so the nghttp2 name/value list points into it without a string per field; the
/// buffer is a `RawBuffer` (a `memcpy` an append, where an array's append cost a hundred
/// instructions, a dozen times a request), and the connection's one block is reused.
package final class HTTP2RequestHeaders {
    // (Unchecked: one block is only ever used on one thread at a time; the dynamic checks cost
    // more than the appends.)
    @exclusivity(unchecked) private var buffer = RawBuffer(capacity: 512)
    /// (name start, name length, value start, value length) per field, in order.
    @exclusivity(unchecked) package private(set) var fields: [(Int, Int, Int, Int)] = []

    /// All names and values, back to back (valid until the next `encode`).
    package var bytes: UnsafeRawBufferPointer { buffer.bytes }

    /// The header block of a request.
    /// - Parameters:
    ///   - authority: the URL's `host[:port]`, unless `headers` carries a Host.
    ///   - contentLength: the body's length when known (nil: none sent; a stream's DATA frames
    ///     end it instead of chunked framing).
    ///   - acceptEncoding: whether Courier asks for compressed bodies itself.
    ///   - expectContinue: whether the body waits for a 100 (`expect: 100-continue` is sent).
    ///   - priority: the operation's priority, said as RFC 9218's `priority` field when it is
    ///     not the default and the caller set none (see `urgency(of:)`).
    package convenience init(method: HTTPMethod, scheme: String, authority: String, path: String, query: String?,
                             headers: HTTPHeaders, contentLength: UInt64?, acceptEncoding: Bool,
                             expectContinue: Bool = false, priority: Priority = .normal) {
        self.init()
        encode(method: method, scheme: scheme, authority: authority, path: path, query: query, headers: headers,
               contentLength: contentLength, acceptEncoding: acceptEncoding, expectContinue: expectContinue, priority: priority)
    }

    /// An empty block, to be filled by `encode` again and again (a connection keeps one: its
    /// arrays' capacity serves every request, and nghttp2 copies what it is given).
    package init() {}

    deinit { buffer.free() }

    /// Replaces the block with a request's (see `init(method:...)`).
    /// `mayHaveHost`: false when the caller knows `headers` has no Host (no search for one).
    package func encode(method: HTTPMethod, scheme: String, authority: String, path: String, query: String?,
                         headers: HTTPHeaders, contentLength: UInt64?, acceptEncoding: Bool,
                         expectContinue: Bool = false, priority: Priority = .normal, mayHaveHost: Bool = true) {
        buffer.clear()
        fields.removeAll(keepingCapacity: true)
        add(":method", method.rawValue)
        add(":scheme", scheme)
        if mayHaveHost, let index = headers.firstFieldIndex("host") {
            headers.withFieldBytes(at: index) { _, value in add(Self.authorityName, value) }
        } else {
            add(":authority", authority)
        }
        let pathStart = buffer.count
        buffer.append(":path")
        let pathValue = buffer.count
        buffer.append(path)
        if let query {
            buffer.append(UInt8(ascii: "?"))
            buffer.append(query)
        }
        fields.append((pathStart, pathValue - pathStart, pathValue, buffer.count - pathValue))
        for index in 0..<headers.count {
            headers.withFieldBytes(at: index) { name, value in
                switch Self.rule(for: name, contentLengthSent: contentLength != nil) {
                case .send: addLowercased(name, value)
                case .drop: break
                case .onlyTrailers:
                    if value.count == 8, Self.equalsIgnoringCase(value, "trailers") { addLowercased(name, value) }
                }
            }
        }
        if acceptEncoding { add("accept-encoding", "gzip, deflate, br, zstd") }
        if let contentLength { add("content-length", String(contentLength)) }
        if expectContinue { add("expect", "100-continue") }
        if priority != .normal, headers.firstFieldIndex("priority") == nil { add("priority", Self.urgency(of: priority)) }
    }

    /// RFC 9218's `priority` field for an operation's priority: urgency 0 (most urgent) to 7,
    /// 3 being the default that `.normal` leaves unsaid. The server may use it to order its
    /// responses' bytes; the queue orders the requests themselves.
    package static func urgency(of priority: Priority) -> String {
        switch priority {
        case .veryHigh: return "u=1"
        case .high: return "u=2"
        case .normal: return "u=3"
        case .low: return "u=5"
        case .veryLow: return "u=7"
        }
    }

    private static let authorityName = Array(":authority".utf8)

    private enum Rule { case send, drop, onlyTrailers }

    /// What RFC 9113 section 8.2.2 (and `:authority`) make of a caller's field.
    private static func rule(for name: UnsafeRawBufferPointer, contentLengthSent: Bool) -> Rule {
        switch name.count {
        case 2 where equalsIgnoringCase(name, "te"): return .onlyTrailers
        case 4 where equalsIgnoringCase(name, "host"): return .drop
        case 7 where equalsIgnoringCase(name, "upgrade"): return .drop
        case 10 where equalsIgnoringCase(name, "connection") || equalsIgnoringCase(name, "keep-alive"): return .drop
        case 14 where contentLengthSent && equalsIgnoringCase(name, "content-length"): return .drop
        case 16 where equalsIgnoringCase(name, "proxy-connection"): return .drop
        case 17 where equalsIgnoringCase(name, "transfer-encoding"): return .drop
        default: return .send
        }
    }

    private static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ lower: StaticString) -> Bool {
        guard bytes.count == lower.utf8CodeUnitCount else { return false }
        let expected = lower.utf8Start
        for index in 0..<bytes.count where bytes[index] | 0x20 != expected[index] | 0x20 { return false }
        return true
    }

    private func add(_ name: StaticString, _ value: String) {
        let nameStart = buffer.count
        buffer.append(name)
        let valueStart = buffer.count
        buffer.append(value)
        fields.append((nameStart, valueStart - nameStart, valueStart, buffer.count - valueStart))
    }

    private func add(_ name: [UInt8], _ value: UnsafeRawBufferPointer) {
        let nameStart = buffer.count
        buffer.append(name)
        let valueStart = buffer.count
        buffer.append(value)
        fields.append((nameStart, valueStart - nameStart, valueStart, buffer.count - valueStart))
    }

    /// A caller's field, its name lower-cased (HTTP/2 requires it; RFC 9113 section 8.2.1).
    private func addLowercased(_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        let nameStart = buffer.count
        buffer.append(name)
        for offset in nameStart..<buffer.count {
            let byte = buffer.base.load(fromByteOffset: offset, as: UInt8.self)
            if byte >= 65 && byte <= 90 { buffer.base.storeBytes(of: byte | 0x20, toByteOffset: offset, as: UInt8.self) }
        }
        let valueStart = buffer.count
        buffer.append(value)
        fields.append((nameStart, valueStart - nameStart, valueStart, buffer.count - valueStart))
    }

    /// The fields as strings, in order (`-v` and the tests).
    package var pairs: [(name: String, value: String)] {
        let bytes = buffer.bytes
        return fields.map { field in
            (String(decoding: UnsafeRawBufferPointer(rebasing: bytes[field.0..<(field.0 + field.1)]), as: UTF8.self),
             String(decoding: UnsafeRawBufferPointer(rebasing: bytes[field.2..<(field.2 + field.3)]), as: UTF8.self))
        }
    }
}
