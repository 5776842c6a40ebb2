/// The byte rules of URLs (RFC 3986): which characters a part may hold literally, percent
/// encoding and decoding, dot segments.
extension CourierURL {
    static func trimControlAndSpace(_ bytes: inout [UInt8]) {
        while let last = bytes.last, last <= 0x20 { bytes.removeLast() }
        var start = 0
        while start < bytes.count, bytes[start] <= 0x20 { start += 1 }
        if start > 0 { bytes.removeFirst(start) }
    }

    static func isValidScheme(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let first = bytes.first, isAlpha(first) else { return false }
        return bytes.allSatisfy { isAlpha($0) || isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    @inline(__always) static func isAlpha(_ b: UInt8) -> Bool { (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") }
    @inline(__always) static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
    @inline(__always) static func isHexDigit(_ b: UInt8) -> Bool {
        isDigit(b) || ((b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "f"))
    }

    /// unreserved / sub-delims / pct-encoded (RFC 3986 `reg-name`), which covers IPv4 literals too.
    static func isRegNameByte(_ b: UInt8) -> Bool {
        if isAlpha(b) || isDigit(b) { return true }
        switch b {
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "%"),
             UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
             UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
             UInt8(ascii: "="):
            return true
        default:
            return false
        }
    }

    /// `isAllowedLiterally` as a table, bit 1 for paths and bit 2 for queries, with "%" and "#"
    /// excluded: the per-request scan of a target is then one load per byte.
    nonisolated(unsafe) static let literalTable: UnsafeMutablePointer<UInt8> = {
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        for byte in 0...255 {
            let b = UInt8(byte)
            let usable = b != UInt8(ascii: "%") && b != UInt8(ascii: "#")
            table[byte] = (usable && isAllowedLiterally(b, allowQueryChars: false) ? 1 : 0)
                | (usable && isAllowedLiterally(b, allowQueryChars: true) ? 2 : 0)
        }
        return table
    }()

    /// Bytes that may appear literally in a path (pchar plus "/") or, with `allowQueryChars`, a query.
    static func isAllowedLiterally(_ b: UInt8, allowQueryChars: Bool) -> Bool {
        if isAlpha(b) || isDigit(b) { return true }
        switch b {
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),
             UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
             UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
             UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: "%"):
            return true
        case UInt8(ascii: "?"):
            return allowQueryChars
        default:
            return false
        }
    }

    /// Percent-encodes every byte that may not appear literally; "%" followed by two hex digits is
    /// kept as an existing escape, a stray "%" is encoded as "%25".
    static func percentEncodeUnsafe(_ bytes: ArraySlice<UInt8>, allowQueryChars: Bool) -> String {
        if bytes.allSatisfy({ isAllowedLiterally($0, allowQueryChars: allowQueryChars) && $0 != UInt8(ascii: "%") }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 8)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let b = bytes[index]
            if b == UInt8(ascii: "%"), index + 2 < bytes.endIndex,
               isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) {
                out.append(b)
            } else if b != UInt8(ascii: "%"), isAllowedLiterally(b, allowQueryChars: allowQueryChars) {
                out.append(b)
            } else {
                appendEscape(b, to: &out)
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func appendEscape(_ b: UInt8, to out: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        out.append(UInt8(ascii: "%"))
        out.append(hex[Int(b >> 4)])
        out.append(hex[Int(b & 0xf)])
    }

    static func percentDecode(_ bytes: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.endIndex,
               let hi = ByteClass.hexValue(bytes[index + 1]), let lo = ByteClass.hexValue(bytes[index + 2]) {
                out.append(hi << 4 | lo)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }


    /// RFC 3986 section 5.2.4, on whole segments: "." disappears, ".." removes the segment before it
    /// and never climbs above the root.
    static func removeDotSegments(_ path: String) -> String {
        guard path.contains(".") else { return path }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        var output: [Substring] = []
        for (i, segment) in segments.enumerated() {
            let isLast = i == segments.count - 1
            switch segment {
            case ".":
                if isLast { output.append("") }
            case "..":
                if output.count > 1 { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        var joined = output.joined(separator: "/")
        if !joined.hasPrefix("/") { joined = "/" + joined }
        return joined
    }
}
