import Testing
@testable import CourierCore

/// The byte classes every parser shares, held to the grammar's own spelling.
@Suite("ByteClass")
struct ByteClassTests {
    /// RFC 9110 section 5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
    /// "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA. Every one of the 256 bytes.
    @Test func tokenBytesAreExactlyTchar() {
        let tchar = Set(Array("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8))
        for byte in 0...255 {
            #expect(ByteClass.isToken(UInt8(byte)) == tchar.contains(UInt8(byte)), "byte \(byte)")
        }
    }

    @Test func digitsSpacesAndHex() {
        for byte in 0...255 {
            let b = UInt8(byte)
            #expect(ByteClass.isDigit(b) == (48...57).contains(byte), "byte \(byte)")
            #expect(ByteClass.isSpace(b) == (byte == 32 || byte == 9), "byte \(byte)")
            let lower = (65...90).contains(byte) ? b + 32 : b
            let hex = Array("0123456789abcdef".utf8).firstIndex(of: lower).map(UInt8.init)
            #expect(ByteClass.hexValue(b) == hex, "byte \(byte)")
        }
    }
}
