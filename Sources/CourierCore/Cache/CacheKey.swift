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
            var state = FNV()
            state.feed(authority.scheme == .https ? "https://" : "http://")
            let bracketed = authority.isIPv6Literal
            if bracketed { state.feed(byte: UInt8(ascii: "[")) }
            state.feed(authority.host)
            if bracketed { state.feed(byte: UInt8(ascii: "]")) }
            if authority.port != authority.scheme.defaultPort {
                state.feed(byte: UInt8(ascii: ":"))
                // The port's decimal digits, most significant first, without building a string.
                let port = Int(authority.port)
                var divisor = 1
                while divisor * 10 <= port { divisor *= 10 }
                while divisor > 0 {
                    state.feed(byte: UInt8(ascii: "0") + UInt8(port / divisor % 10))
                    divisor /= 10
                }
            }
            state.feed(path)
            if let query {
                state.feed(byte: UInt8(ascii: "?"))
                state.feed(query)
            }
            hash = state.finish()
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
        let scheme = authority.scheme == .https ? "https://" : "http://"
        let host = authority.host
        let bracketed = authority.isIPv6Literal
        let port = authority.port == authority.scheme.defaultPort ? 0 : authority.port
        let capacity = scheme.utf8.count + host.utf8.count + 8 + path.utf8.count + (query.map { $0.utf8.count + 1 } ?? 0)
        return String(unsafeUninitializedCapacity: capacity) { buffer in
            var index = 0
            func put(_ text: String) {
                let copied: Int? = text.utf8.withContiguousStorageIfAvailable { bytes in
                    UnsafeMutableRawBufferPointer(start: buffer.baseAddress! + index, count: bytes.count)
                        .copyMemory(from: UnsafeRawBufferPointer(bytes))
                    return bytes.count
                }
                if let copied {
                    index += copied
                } else {
                    for byte in text.utf8 {
                        buffer[index] = byte
                        index += 1
                    }
                }
            }
            put(scheme)
            if bracketed { buffer[index] = UInt8(ascii: "["); index += 1 }
            put(host)
            if bracketed { buffer[index] = UInt8(ascii: "]"); index += 1 }
            if port != 0 {
                buffer[index] = UInt8(ascii: ":")
                index += 1
                var digits = 0
                var value = port
                repeat { digits += 1; value /= 10 } while value > 0
                value = port
                for offset in stride(from: digits - 1, through: 0, by: -1) {
                    buffer[index + offset] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                index += digits
            }
            put(path)
            if let query {
                buffer[index] = UInt8(ascii: "?")
                index += 1
                put(query)
            }
            return index
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
        var state = FNV()
        state.feed(text)
        return state.finish()
    }

    /// FNV-1a fed in pieces, finished with an avalanche.
    private struct FNV {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325

        @inline(__always)
        mutating func feed(byte: UInt8) {
            value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }

        mutating func feed(_ text: String) {
            var hash = value
            let done: Void? = text.utf8.withContiguousStorageIfAvailable { bytes in
                for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            }
            if done == nil {
                for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            }
            value = hash
        }

        func finish() -> UInt64 {
            var hash = value
            hash ^= hash >> 33
            hash = hash &* 0xff51_afd7_ed55_8ccd
            hash ^= hash >> 33
            hash = hash &* 0xc4ce_b9fe_1a85_ec53
            hash ^= hash >> 33
            return hash
        }
    }
}
