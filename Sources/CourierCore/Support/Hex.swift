/// Lower-case hexadecimal text: digests (Digest authentication), random identifiers (an outbox
/// entry's, a client nonce).
package enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as two lower-case hex digits each.
    package static func lowercase<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// 128 random bits from the kernel's generator, as 32 lower-case hex digits.
    package static func random128() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for _ in 0..<2 { withUnsafeBytes(of: generator.next() as UInt64) { bytes += $0 } }
        return lowercase(bytes)
    }
}
