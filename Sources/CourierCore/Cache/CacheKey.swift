/// The keys stored responses are found by (RFC 9111 section 2 and 4.1).
///
/// The primary key is the target URI: scheme, host, port, path and query, never credentials or a
/// fragment. A stored response is chosen among the variants of a primary key by its variant key:
/// the request's values of the fields its Vary names, plus always Authorization (the cache treats
/// responses to different credentials as different variants even when the origin says nothing, so
/// one user's response is never replayed to another's request).
package enum CacheKey {
    /// The primary key of a URL.
    package static func primary(_ url: CourierURL) -> String { url.description }

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
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash = hash &* 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return hash
    }
}
