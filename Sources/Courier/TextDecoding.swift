import CourierCore

/// Turns body bytes into text using the charset a Content-Type names.
///
/// UTF-8 is the default when none is named (JSON is always UTF-8 per RFC 8259, and it is what
/// the web sends); invalid bytes are an error, never silently replaced, so a wrong charset shows up
/// instead of producing mojibake.
enum TextDecoding {
    /// The charset parameter of a Content-Type value, lower-cased, or nil.
    static func charset(ofContentType contentType: String?) -> String? {
        guard let contentType else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters() == "charset" else { continue }
            var value = String(parts[1]).trimmingCharacters()
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return value.lowercased()
        }
        return nil
    }

    static func decode(_ bytes: [UInt8], charset: String?) throws(CourierError) -> String {
        switch charset ?? "utf-8" {
        case "utf-8", "utf8":
            let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
            guard let text = String(validating: body, as: UTF8.self) else {
                throw CourierError(.invalidText, "body is not valid UTF-8")
            }
            return text
        case "us-ascii", "ascii":
            guard bytes.allSatisfy({ $0 < 0x80 }) else { throw CourierError(.invalidText, "body is not ASCII") }
            return String(decoding: bytes, as: UTF8.self)
        case "iso-8859-1", "latin1", "latin-1", "iso8859-1", "l1":
            var text = String.UnicodeScalarView()
            for b in bytes { text.append(Unicode.Scalar(b)) }
            return String(text)
        case "utf-16", "utf-16le", "utf-16be":
            return try decodeUTF16(bytes, charset: charset!)
        case let other:
            throw CourierError(.unsupportedCharset, other)
        }
    }

    private static func decodeUTF16(_ bytes: [UInt8], charset: String) throws(CourierError) -> String {
        guard bytes.count % 2 == 0 else { throw CourierError(.invalidText, "odd byte count for UTF-16") }
        var bigEndian = charset == "utf-16be"
        var start = 0
        if charset == "utf-16", bytes.count >= 2 {
            // RFC 2781: a byte order mark decides; without one, big-endian.
            if bytes[0] == 0xFF && bytes[1] == 0xFE { bigEndian = false; start = 2 }
            else if bytes[0] == 0xFE && bytes[1] == 0xFF { bigEndian = true; start = 2 }
            else { bigEndian = true }
        }
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var i = start
        while i + 1 < bytes.count {
            units.append(bigEndian ? UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1]) : UInt16(bytes[i + 1]) << 8 | UInt16(bytes[i]))
            i += 2
        }
        guard let text = String(validating: units, as: UTF16.self) else { throw CourierError(.invalidText, "body is not valid UTF-16") }
        return text
    }
}

extension StringProtocol {
    func trimmingCharacters() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
