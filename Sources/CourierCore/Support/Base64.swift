/// RFC 4648 base64: Basic credentials are encoded with it, `sha256//` pins arrive in it.
///
/// Decoding accepts the URL-safe alphabet too (`-` and `_`, RFC 4648 section 5) and missing
/// padding, since pins are pasted from many tools; anything else is rejected (nil).
package enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The padded standard encoding of `bytes`.
    package static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = UInt32(bytes[i])
            let b1 = i + 1 < bytes.count ? UInt32(bytes[i + 1]) : 0
            let b2 = i + 2 < bytes.count ? UInt32(bytes[i + 2]) : 0
            let n = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(n >> 18)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(i + 1 < bytes.count ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(n & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` encodes, or nil when it holds a character outside both alphabets or
    /// padding in the middle.
    package static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        var padding = 0
        for c in text.utf8 {
            if c == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            if padding > 0 { return nil }
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(c - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(c - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"), UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "/"), UInt8(ascii: "_"): values.append(63)
            default: return nil
            }
        }
        if padding > 2 || values.count % 4 == 1 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var i = 0
        while i < values.count {
            let chunk = values[i..<min(i + 4, values.count)]
            var n: UInt32 = 0
            for (j, v) in chunk.enumerated() { n |= UInt32(v) << (18 - 6 * UInt32(j)) }
            out.append(UInt8(n >> 16 & 0xff))
            if chunk.count > 2 { out.append(UInt8(n >> 8 & 0xff)) }
            if chunk.count > 3 { out.append(UInt8(n & 0xff)) }
            i += 4
        }
        return out
    }
}
