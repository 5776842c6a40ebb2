/// 64-bit FNV-1a, fed in pieces and reading strings in place, with a final avalanche
/// (MurmurHash3's fmix64) so that nearby inputs spread over every bit.
///
/// One implementation for the cache's stable key hash (it names files on disk, so it must give
/// the same value in every process and version) and the coalescing table's signatures.
package struct FNV1a {
    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    @inline(__always)
    package mutating func feed(byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    package mutating func feed(_ text: String) {
        var hash = value
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        }
        if done == nil {
            for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        }
        value = hash
    }

    /// The hash of everything fed so far.
    package func finished() -> UInt64 {
        var hash = value
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash = hash &* 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return hash
    }
}
