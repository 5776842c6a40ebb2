import Glibc

/// Byte classes of the HTTP and URI grammars, shared by every parser and validator.
package enum ByteClass {
    /// The value of a hexadecimal digit, nil for any other byte.
    @inline(__always)
    package static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// tchar (RFC 9110 section 5.6.2): what field names, methods and chunk extension names are
    /// made of. A bit per byte in two constants: DIGIT, ALPHA and "!#$%&'*+-.^_`|~" (a test holds
    /// them to the grammar); no branch per character class, no table to load.
    @inline(__always)
    package static func isToken(_ byte: UInt8) -> Bool {
        if byte < 64 { return (0x03ff_6cfa_0000_0000 as UInt64) >> byte & 1 != 0 }
        if byte < 128 { return (0x57ff_ffff_c7ff_fffe as UInt64) >> (byte - 64) & 1 != 0 }
        return false
    }

    /// DIGIT.
    @inline(__always)
    package static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// SP or HTAB: optional whitespace (OWS, BWS).
    @inline(__always)
    package static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    /// Whether `text` holds a control character (C0 or DEL): what a field value may not carry
    /// (a line break would split the head), checked on credentials before they go into one.
    package static func hasControlCharacter(_ text: String) -> Bool {
        text.utf8.contains { $0 < 0x20 || $0 == 0x7F }
    }

    /// RFC 9110's 1*DIGIT as a number: digits only (no sign, no spaces), nil for anything else
    /// or a value past UInt64 (a length or an offset that large is no length at all).
    package static func decimal(_ text: Substring) -> UInt64? {
        guard !text.isEmpty else { return nil }
        var value: UInt64 = 0
        for byte in text.utf8 {
            guard isDigit(byte) else { return nil }
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(UInt64(byte &- UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return value
    }

    /// Whether `bytes` are exactly `literal`'s: a length test and one memcmp. (Comparing with a
    /// String's UTF8View goes through the generic sequence comparison, some 550 instructions for
    /// ":status": measured on every HTTP/2 response head.)
    @inline(__always)
    package static func equals(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
        bytes.count == literal.utf8CodeUnitCount && (bytes.count == 0 || memcmp(bytes.baseAddress!, literal.utf8Start, bytes.count) == 0)
    }
}
