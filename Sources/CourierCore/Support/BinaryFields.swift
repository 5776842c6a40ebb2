import CZlib

/// Little-endian numbers and length-prefixed strings, for the files Courier writes (cache files,
/// the outbox journal).
package struct BinaryWriter {
    package var bytes: [UInt8] = []

    package init() {}

    package mutating func u16(_ value: UInt16) { bytes += [UInt8(value & 0xff), UInt8(value >> 8)] }
    package mutating func u32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
    package mutating func u64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
    package mutating func string(_ text: String) {
        u32(UInt32(text.utf8.count))
        bytes += text.utf8
    }
    package mutating func raw(_ piece: UnsafeRawBufferPointer) {
        u32(UInt32(piece.count))
        bytes += piece
    }
}

/// Bounds-checked little-endian reads of what `BinaryWriter` wrote; every read fails rather
/// than overrunning, whatever the bytes (readers of files are fuzz targets).
package struct BinaryReader {
    package let raw: UnsafeRawBufferPointer
    package var index: Int

    package init(_ raw: UnsafeRawBufferPointer, at index: Int) {
        self.raw = raw
        self.index = index
    }

    package var atEnd: Bool { index == raw.count }
    package var remaining: Int { raw.count - index }

    package mutating func u8() -> UInt8? {
        guard index < raw.count else { return nil }
        defer { index += 1 }
        return raw[index]
    }

    package mutating func u16() -> UInt16? {
        guard let low = u8(), let high = u8() else { return nil }
        return UInt16(low) | UInt16(high) << 8
    }

    package mutating func u32() -> UInt32? {
        guard raw.count - index >= 4 else { return nil }
        defer { index += 4 }
        return UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt32.self))
    }

    package mutating func u64() -> UInt64? {
        guard raw.count - index >= 8 else { return nil }
        defer { index += 8 }
        return UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
    }

    /// A length-prefixed string; nil unless it is valid UTF-8 (Courier writes nothing else, and
    /// repairing bytes would make a key or name that was never stored).
    package mutating func string() -> String? {
        rawString().flatMap { String(validating: $0.bindMemory(to: UInt8.self), as: UTF8.self) }
    }

    /// The bytes of a length-prefixed string, valid as long as the file's bytes are.
    package mutating func rawString() -> UnsafeRawBufferPointer? {
        guard let length = u32(), Int(length) <= raw.count - index else { return nil }
        defer { index += Int(length) }
        return UnsafeRawBufferPointer(rebasing: raw[index..<(index + Int(length))])
    }
}

/// zlib's CRC-32, the checksum that ends each file Courier writes.
package enum CRC32 {
    package static func of(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes { raw in
            var crc = crc32(0, nil, 0)
            var offset = 0
            // zlib's length is 32-bit: feed it in pieces.
            while offset < raw.count {
                let piece = min(raw.count - offset, 1 << 30)
                crc = crc32(crc, raw.baseAddress!.advanced(by: offset).assumingMemoryBound(to: UInt8.self), uInt(piece))
                offset += piece
            }
            return UInt32(truncatingIfNeeded: crc)
        }
    }
}
