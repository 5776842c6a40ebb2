/// The keys stored responses are found by (RFC 9111 section 2 and 4.1).
///
/// The primary key is the target URI: scheme, host, port, path and query, never credentials or a
/// fragment. A stored response is chosen among the variants of a primary key by its variant key:
/// the request's values of the fields its Vary names, plus always Authorization (the cache treats
/// responses to different credentials as different variants even when the origin says nothing, so
/// one user's response is never replayed to another's request).
package enum CacheKey {
    /// A request's primary key before it is written out: its stable hash is computed from the
    /// parts (no string made), so a miss, the common case, never builds the key; `string` does, for
    /// a hash that matched and for storing.
    package struct Request {
        package let authority: CourierURL
        package let path: String
        package let query: String?
        /// `stableHash(string)`, computed from the parts.
        package let hash: UInt64

        package init(authority: CourierURL, path: String, query: String?) {
            self.authority = authority
            self.path = path
            self.query = query
            var hash = FNV1a()
            CacheKey.write(authority: authority, path: path, query: query, to: &hash)
            self.hash = hash.finished()
        }

        package var string: String { CacheKey.primary(authority: authority, path: path, query: query) }
    }

    /// The primary key of a URL.
    package static func primary(_ url: CourierURL) -> String {
        primary(authority: url, path: url.path, query: url.query)
    }

    /// The primary key of `path?query` at the origin of `authority`, written in one pass (it is
    /// made on every request a cache sees; string interpolation costs several times more).
    package static func primary(authority: CourierURL, path: String, query: String?) -> String {
        // Scheme, host, brackets and a port of at most five digits, path, "?" and query.
        let capacity = 8 + authority.host.utf8.count + 8 + path.utf8.count + (query.map { $0.utf8.count + 1 } ?? 0)
        return String(unsafeUninitializedCapacity: capacity) { buffer in
            var writer = KeyWriter(buffer: buffer)
            write(authority: authority, path: path, query: query, to: &writer)
            return writer.count
        }
    }

    /// The primary key's bytes, in order, to `sink`: the one layout both the key string and its
    /// hash are made from, so `Request.hash` is always `stableHash` of `Request.string`.
    private static func write<Sink: KeyBytes>(authority: CourierURL, path: String, query: String?, to sink: inout Sink) {
        sink.put(authority.scheme == .https ? "https://" : "http://")
        let bracketed = authority.isIPv6Literal
        if bracketed { sink.put(byte: UInt8(ascii: "[")) }
        sink.put(authority.host)
        if bracketed { sink.put(byte: UInt8(ascii: "]")) }
        if authority.port != authority.scheme.defaultPort {
            sink.put(byte: UInt8(ascii: ":"))
            // The port's decimal digits, most significant first, without building a string.
            let port = Int(authority.port)
            var divisor = 1
            while divisor * 10 <= port { divisor *= 10 }
            while divisor > 0 {
                sink.put(byte: UInt8(ascii: "0") + UInt8(port / divisor % 10))
                divisor /= 10
            }
        }
        sink.put(path)
        if let query {
            sink.put(byte: UInt8(ascii: "?"))
            sink.put(query)
        }
    }

    /// The variant key of a request with these credentials for `names`: "" without either (the
    /// common case, at no cost).
    package static func variant(names: [String], authorization: String?, value: (String) -> String?) -> String {
        if names.isEmpty, authorization == nil { return "" }
        return variant(names: names) { $0 == "authorization" ? authorization : value($0) }
    }

    /// The variant key for `names` (lower-cased, sorted) with the request's values from `value`.
    /// Values are normalised as section 4.1 allows: lines combined, whitespace around list commas
    /// removed, an absent field distinct from an empty one. Authorization is represented by a
    /// hash, never by the credential itself (the key is written to disk).
    package static func variant(names: [String], value: (String) -> String?) -> String {
        var key = ""
        for name in names where name != "authorization" {
            key += name
            if let raw = value(name) {
                key += "=" + normalised(raw)
            } else {
                key += "!"
            }
            key += "\n"
        }
        if let credential = value("authorization") {
            key += "authorization#" + String(stableHash(credential), radix: 16) + "\n"
        }
        return key
    }

    private static func normalised(_ value: String) -> String {
        value.split(separator: ",", omittingEmptySubsequences: false).map { String($0.trimmingSpaces) }.joined(separator: ",")
    }

    /// A 64-bit hash that is the same in every process (the disk tier's file names): FNV-1a with a
    /// final avalanche (MurmurHash3's fmix64). Collisions cost a miss, never a wrong answer: every
    /// file carries its full key and is checked on read.
    package static func stableHash(_ text: String) -> UInt64 {
        var hash = FNV1a()
        hash.feed(text)
        return hash.finished()
    }
}

/// Where a primary key's bytes go: into its hash, or into its string.
private protocol KeyBytes {
    mutating func put(byte: UInt8)
    mutating func put(_ text: String)
}

extension FNV1a: KeyBytes {
    @inline(__always) fileprivate mutating func put(byte: UInt8) { feed(byte: byte) }
    @inline(__always) fileprivate mutating func put(_ text: String) { feed(text) }
}

/// Writes a key into the uninitialized capacity of a new string.
private struct KeyWriter: KeyBytes {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    init(buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    mutating func put(byte: UInt8) {
        buffer[count] = byte
        count += 1
    }

    mutating func put(_ text: String) {
        let copied: Int? = text.utf8.withContiguousStorageIfAvailable { bytes in
            UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[count..<(count + bytes.count)])
                .copyMemory(from: UnsafeRawBufferPointer(bytes))
            return bytes.count
        }
        if let copied {
            count += copied
        } else {
            for byte in text.utf8 { put(byte: byte) }
        }
    }
}
