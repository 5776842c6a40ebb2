/// An absolute http or https URL, parsed without Foundation.
///
/// Courier builds request lines from this and never from raw user strings, so a URL that parses is
/// safe to put on the wire: bytes that could end the request line or smuggle a header (CR, LF,
/// NUL, space) are percent-encoded, never sent raw. Parsing follows RFC 3986; the few places where
/// browsers and curl are more lenient (spaces and non-ASCII in paths) are percent-encoded rather
/// than rejected, because that is what users who paste URLs expect.
public struct CourierURL: Sendable, Hashable, CustomStringConvertible {
    /// The two schemes Courier speaks.
    public enum Scheme: String, Sendable, Hashable {
        /// Plain HTTP/1.1, default port 80.
        case http
        /// HTTP/1.1 over TLS, default port 443.
        case https

        /// The port used when the URL names none.
        public var defaultPort: UInt16 { self == .http ? 80 : 443 }
    }

    /// The parts, in one shared box: copying a URL (engine base to request, request to
    /// response, metrics, logs) is then one retain instead of one per string, and a change copies
    /// the box only while it is shared.
    private final class Storage: @unchecked Sendable {
        var scheme: Scheme
        var host: String
        var port: UInt16
        var path: String
        var query: String?
        var user: String?
        var password: String?

        init(scheme: Scheme, host: String, port: UInt16, path: String, query: String?, user: String?, password: String?) {
            self.scheme = scheme
            self.host = host
            self.port = port
            self.path = path
            self.query = query
            self.user = user
            self.password = password
        }

        func copy() -> Storage {
            Storage(scheme: scheme, host: host, port: port, path: path, query: query, user: user, password: password)
        }
    }

    private var storage: Storage

    @inline(__always)
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// http or https.
    public var scheme: Scheme {
        get { storage.scheme }
        set { unique().scheme = newValue }
    }
    /// The host, lower-cased; IPv6 literals without their brackets.
    public var host: String {
        get { storage.host }
        set { unique().host = newValue }
    }
    /// The port, explicit or the scheme's default.
    public var port: UInt16 {
        get { storage.port }
        set { unique().port = newValue }
    }
    /// The percent-encoded path, always starting with "/".
    public var path: String {
        get { storage.path }
        set { unique().path = newValue }
    }
    /// The percent-encoded query without "?", or nil when the URL has none.
    public var query: String? {
        get { storage.query }
        set { unique().query = newValue }
    }
    /// The user name from `user:password@`, percent-decoded, for HTTP Basic authentication.
    public var user: String? {
        get { storage.user }
        set { unique().user = newValue }
    }
    /// The password from `user:password@`, percent-decoded.
    public var password: String? {
        get { storage.password }
        set { unique().password = newValue }
    }

    public static func == (a: CourierURL, b: CourierURL) -> Bool {
        if a.storage === b.storage { return true }
        let x = a.storage, y = b.storage
        return x.scheme == y.scheme && x.port == y.port && x.host == y.host && x.path == y.path
            && x.query == y.query && x.user == y.user && x.password == y.password
    }

    public func hash(into hasher: inout Hasher) {
        let x = storage
        hasher.combine(x.scheme)
        hasher.combine(x.host)
        hasher.combine(x.port)
        hasher.combine(x.path)
        hasher.combine(x.query)
        hasher.combine(x.user)
        hasher.combine(x.password)
    }

    /// Whether the host is an IPv6 literal (it needs brackets in the Host header and URL).
    package var isIPv6Literal: Bool {
        // (A byte scan in place: the generic `contains` over a UTF-8 view costs ~30 instructions a byte.)
        host.utf8.withContiguousStorageIfAvailable { $0.contains(UInt8(ascii: ":")) } ?? host.utf8.contains(UInt8(ascii: ":"))
    }

    /// The request target of an origin-form request line: path plus query.
    public var target: String {
        guard let query else { return path }
        return path + "?" + query
    }

    /// The Host header value: host plus the port only when it is not the scheme's default.
    package var hostHeader: String {
        let bracketed = isIPv6Literal ? "[\(host)]" : host
        return port == scheme.defaultPort ? bracketed : "\(bracketed):\(port)"
    }

    /// scheme, host and port: the unit of connection reuse and of "same origin" for redirects.
    package var origin: Origin { Origin(scheme: scheme, host: host, port: port) }

    /// The URL without credentials or fragment.
    public var description: String {
        var text = RawBuffer(capacity: 128)
        defer { text.free() }
        appendDescription(to: &text)
        return String(decoding: text.bytes, as: UTF8.self)
    }

    /// Writes `description`'s text (`scheme://host[:port]/path[?query]`) into `buffer`, each part
    /// once. The C ABI's courier_response_url copies it out for every response the bindings read;
    /// spelled through Swift strings it cost five of them and a strdup (4,400 instructions).
    package func appendDescription(to buffer: inout RawBuffer) {
        buffer.append(scheme == .http ? "http://" : "https://")
        let bracketed = isIPv6Literal
        if bracketed { buffer.append(UInt8(ascii: "[")) }
        buffer.append(host)
        if bracketed { buffer.append(UInt8(ascii: "]")) }
        if port != scheme.defaultPort {
            buffer.append(UInt8(ascii: ":"))
            RequestEncoder.appendDecimal(UInt64(port), to: &buffer)
        }
        buffer.append(path)
        if let query {
            buffer.append(UInt8(ascii: "?"))
            buffer.append(query)
        }
    }

    /// Parses an absolute URL. Errors are `.invalidURL` or `.unsupportedScheme` with a detail that
    /// names the offending part.
    public init(parsing string: String) throws(CourierError) {
        var bytes = Array(string.utf8)
        Self.trimControlAndSpace(&bytes)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0 else {
            throw CourierError(.invalidURL, "no scheme in \"\(string)\"")
        }
        let schemeBytes = bytes[..<colon]
        guard Self.isValidScheme(schemeBytes) else {
            throw CourierError(.invalidURL, "invalid scheme in \"\(string)\"")
        }
        // http and https compared as bytes, case-insensitively (no String, no lowercased()).
        let scheme: Scheme
        if Self.equalsIgnoringCase(schemeBytes, "http") {
            scheme = .http
        } else if Self.equalsIgnoringCase(schemeBytes, "https") {
            scheme = .https
        } else {
            throw CourierError(.unsupportedScheme, "\"\(String(decoding: schemeBytes, as: UTF8.self).lowercased())\" in \"\(string)\"")
        }
        let slashes = colon + 1
        guard bytes.count >= slashes + 2, bytes[slashes] == UInt8(ascii: "/"), bytes[slashes + 1] == UInt8(ascii: "/") else {
            throw CourierError(.invalidURL, "expected \"//\" after \"\(scheme.rawValue):\"")
        }
        try self.init(scheme: scheme, afterSlashes: bytes[(slashes + 2)...], original: string)
    }

    /// Whether `bytes` spell `word` (lower-case ASCII) in any case.
    static func equalsIgnoringCase(_ bytes: ArraySlice<UInt8>, _ word: StaticString) -> Bool {
        guard bytes.count == word.utf8CodeUnitCount else { return false }
        let letters = word.utf8Start
        var index = 0
        for byte in bytes {
            guard byte | 0x20 == letters[index] else { return false }
            index += 1
        }
        return true
    }

    /// Builds a URL from parts the caller already validated (engine host plus path).
    public init(scheme: Scheme, host: String, port: UInt16? = nil, target: String) throws(CourierError) {
        let authority = port.map { "\(host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host):\($0)" }
            ?? (host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host)
        let slash = target.hasPrefix("/") || target.isEmpty || target.hasPrefix("?") ? "" : "/"
        try self.init(scheme: scheme, afterSlashes: Array((authority + slash + target).utf8)[...], original: target)
    }

    private init(scheme: Scheme, afterSlashes bytes: ArraySlice<UInt8>, original: String) throws(CourierError) {
        // The authority runs to the first "/", "?" or "#" (RFC 3986 section 3.2).
        let authorityEnd = bytes.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        var authority = bytes[..<authorityEnd]
        var user: String?
        var password: String?
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) {
            let userinfo = authority[..<at]
            authority = authority[(at + 1)...]
            if let sep = userinfo.firstIndex(of: UInt8(ascii: ":")) {
                user = Self.percentDecode(userinfo[..<sep])
                password = Self.percentDecode(userinfo[(sep + 1)...])
            } else {
                user = Self.percentDecode(userinfo)
            }
        }
        var hostBytes: ArraySlice<UInt8>
        var portBytes: ArraySlice<UInt8>? = nil
        let bracketed = authority.first == UInt8(ascii: "[")
        if bracketed {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else {
                throw CourierError(.invalidURL, "unterminated IPv6 address in \"\(original)\"")
            }
            hostBytes = authority[(authority.startIndex + 1)..<close]
            let after = authority[(close + 1)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":") else {
                    throw CourierError(.invalidURL, "junk after IPv6 address in \"\(original)\"")
                }
                portBytes = after.dropFirst()
            }
            // Only a real IPv6 address goes in brackets (RFC 3986 IP-literal): "[.1]" or "[1]"
            // would otherwise become a host that no longer parses once printed without them.
            guard !hostBytes.isEmpty, hostBytes.allSatisfy({ Self.isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }),
                  SocketAddress(ipLiteral: String(decoding: hostBytes, as: UTF8.self), port: 0)?.isIPv6 == true else {
                throw CourierError(.invalidURL, "invalid IPv6 address in \"\(original)\"")
            }
        } else if let colon = authority.lastIndex(of: UInt8(ascii: ":")) {
            hostBytes = authority[..<colon]
            portBytes = authority[(colon + 1)...]
        } else {
            hostBytes = authority
        }
        guard !hostBytes.isEmpty else { throw CourierError(.invalidURL, "no host in \"\(original)\"") }
        if !bracketed {
            for byte in hostBytes where !Self.isRegNameByte(byte) {
                throw CourierError(.invalidURL, "invalid character in host of \"\(original)\"")
            }
            if hostBytes.first == UInt8(ascii: ".") || hostBytes.contains(UInt8(ascii: "%")) {
                throw CourierError(.invalidURL, "invalid host in \"\(original)\"")
            }
        }
        // Lower-cased only when it has an upper-case letter (the usual host has none).
        let host = hostBytes.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") })
            ? String(decoding: hostBytes, as: UTF8.self).lowercased() : String(decoding: hostBytes, as: UTF8.self)

        let port: UInt16
        if let portBytes, !portBytes.isEmpty {
            var value: UInt32 = 0
            for byte in portBytes {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), value <= 65535 else {
                    throw CourierError(.invalidURL, "invalid port in \"\(original)\"")
                }
                value = value * 10 + UInt32(byte - UInt8(ascii: "0"))
            }
            guard value > 0, value <= 65535 else { throw CourierError(.invalidURL, "port out of range in \"\(original)\"") }
            port = UInt16(value)
        } else {
            port = scheme.defaultPort
        }

        let (path, query) = Self.splitParsedTarget(bytes[authorityEnd...])
        storage = Storage(scheme: scheme, host: host, port: port, path: path, query: query, user: user, password: password)
    }

    /// The same origin (and credentials) with another request target ("/path?query"), without
    /// parsing the rest again: an engine builds every operation's URL this way from its base.
    /// Any target is accepted: unsafe bytes are escaped, a fragment dropped, dot segments removed.
    package func replacingTarget(_ target: String) -> CourierURL {
        var url = self
        url.replaceTarget(target)
        return url
    }

    /// `replacingTarget` in place.
    package mutating func replaceTarget(_ target: String) {
        let (newPath, newQuery) = Self.split(target: target)
        if isKnownUniquelyReferenced(&storage) {
            storage.path = newPath
            storage.query = newQuery
        } else {
            let base = storage
            storage = Storage(scheme: base.scheme, host: base.host, port: base.port, path: newPath, query: newQuery,
                              user: base.user, password: base.password)
        }
    }

    /// This URL with the target `path` and `query` (already split and encoded): itself when the
    /// target is its own, so building a request's URL from an engine base allocates only when
    /// someone asks for it.
    package func withTarget(path: String, query: String?) -> CourierURL {
        if storage.path == path, storage.query == query { return self }
        var url = self
        let base = storage
        url.storage = Storage(scheme: base.scheme, host: base.host, port: base.port, path: path, query: query,
                              user: base.user, password: base.password)
        return url
    }

    /// A request target ("/path?query", or a path without the slash) as path and query: unsafe
    /// bytes escaped, a fragment dropped, dot segments removed. A target that needs none of that
    /// (the usual case) is used as it is, without allocating for short paths.
    package static func split(target: String) -> (path: String, query: String?) {
        // One pass over the bytes, read in place: a target that needs no escaping, has no
        // fragment and no dot segment is used as it is. The result is an offset, not an enum or
        // an optional (each costs about 50 instructions a request here): -1 clean without a
        // query, the "?" offset when clean with one, -2 when it needs work.
        let table = Self.literalTable
        let scan = target.utf8.withContiguousStorageIfAvailable { bytes -> Int in
            guard let base = bytes.baseAddress, bytes.count > 0, base[0] == UInt8(ascii: "/") else { return -2 }
            var question = -1
            var previous: UInt8 = 0
            for i in 0..<bytes.count {
                let b = base[i]
                if b == UInt8(ascii: "?") && question < 0 { question = i; previous = b; continue }
                if table[Int(b)] & 2 == 0 || (b == UInt8(ascii: ".") && previous == UInt8(ascii: "/") && question < 0) {
                    return -2
                }
                previous = b
            }
            return question
        } ?? -2
        if scan != -2 {
            guard scan >= 0 else { return (target, nil) }
            return halves(of: target, at: scan)
        }
        let bytes = Array(target.utf8)
        let withSlash = bytes.first == UInt8(ascii: "/") ? bytes[...] : ([UInt8(ascii: "/")] + bytes)[...]
        return splitTarget(withSlash)
    }

    /// `target` split around the "?" at byte `offset`, both halves made straight from the bytes
    /// (through Substring, each costs ~170 instructions more). Kept out of line so the target
    /// without a query pays nothing for it.
    @inline(never)
    static func halves(of target: String, at offset: Int) -> (String, String?) {
        var target = target
        return target.withUTF8 { bytes in
            (String(decoding: UnsafeBufferPointer(rebasing: bytes[..<offset]), as: UTF8.self),
             String(decoding: UnsafeBufferPointer(rebasing: bytes[(offset + 1)...]), as: UTF8.self))
        }
    }

    /// Path and query from the bytes after the authority; the fragment never goes on the wire
    /// (RFC 9110 section 7.1), unsafe bytes are escaped, dot segments removed.
    /// The target of a parsed URL: read in place when it needs no escaping, has no fragment and
    /// no dot segment (`split(target:)`'s scan), else through `splitTarget`.
    static func splitParsedTarget(_ bytes: ArraySlice<UInt8>) -> (String, String?) {
        guard bytes.first == UInt8(ascii: "/") else { return bytes.isEmpty ? ("/", nil) : splitTarget(bytes) }
        let table = Self.literalTable
        var question = -1
        var previous: UInt8 = 0
        for index in bytes.indices {
            let b = bytes[index]
            if b == UInt8(ascii: "?") && question < 0 { question = index; previous = b; continue }
            if table[Int(b)] & 2 == 0 || (b == UInt8(ascii: ".") && previous == UInt8(ascii: "/") && question < 0) {
                return splitTarget(bytes)
            }
            previous = b
        }
        guard question >= 0 else { return (String(decoding: bytes, as: UTF8.self), nil) }
        return (String(decoding: bytes[..<question], as: UTF8.self), String(decoding: bytes[(question + 1)...], as: UTF8.self))
    }

    static func splitTarget(_ bytes: ArraySlice<UInt8>) -> (String, String?) {
        var rest = bytes
        if let hash = rest.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<hash] }
        var pathPart = rest
        var queryPart: ArraySlice<UInt8>? = nil
        if let q = rest.firstIndex(of: UInt8(ascii: "?")) {
            pathPart = rest[..<q]
            queryPart = rest[(q + 1)...]
        }
        let encodedPath = percentEncodeUnsafe(pathPart, allowQueryChars: false)
        return (encodedPath.isEmpty ? "/" : removeDotSegments(encodedPath),
                queryPart.map { percentEncodeUnsafe($0, allowQueryChars: true) })
    }

    /// Resolves a reference (a Location header value) against this URL, per RFC 3986 section 5.2.
    /// Scheme-relative ("//host/x"), absolute-path, relative-path and query-only references all work.
    public func resolving(_ reference: String) throws(CourierError) -> CourierURL {
        var bytes = Array(reference.utf8)
        Self.trimControlAndSpace(&bytes)
        if bytes.isEmpty { throw CourierError(.invalidURL, "empty reference") }
        // Absolute URL: a scheme before any "/", "?" or "#".
        if let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
           colon > 0,
           !bytes[..<colon].contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }),
           Self.isValidScheme(bytes[..<colon]) {
            return try CourierURL(parsing: String(decoding: bytes, as: UTF8.self))
        }
        if bytes.starts(with: "//".utf8) {
            return try CourierURL(parsing: scheme.rawValue + ":" + String(decoding: bytes, as: UTF8.self))
        }
        var result = self
        result.user = nil
        result.password = nil
        var ref = bytes[...]
        if let hash = ref.firstIndex(of: UInt8(ascii: "#")) { ref = ref[..<hash] }
        var refPath = ref
        var refQuery: ArraySlice<UInt8>? = nil
        if let q = ref.firstIndex(of: UInt8(ascii: "?")) {
            refPath = ref[..<q]
            refQuery = ref[(q + 1)...]
        }
        if refPath.isEmpty {
            // Same path; new query only when the reference has one.
            if let refQuery { result.query = Self.percentEncodeUnsafe(refQuery, allowQueryChars: true) }
            return result
        }
        let encoded = Self.percentEncodeUnsafe(refPath, allowQueryChars: false)
        if encoded.hasPrefix("/") {
            result.path = Self.removeDotSegments(encoded)
        } else {
            // Merge: base path up to its last "/" plus the reference (RFC 3986 section 5.2.3).
            let base = path
            let directory = base.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(base[...$0]) } ?? "/"
            result.path = Self.removeDotSegments(directory + encoded)
        }
        result.query = refQuery.map { Self.percentEncodeUnsafe($0, allowQueryChars: true) }
        return result
    }
}
