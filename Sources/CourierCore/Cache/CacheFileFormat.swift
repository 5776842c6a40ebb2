import CZlib

/// The bytes of one cache file: a stored response, or the vary index that says which request
/// fields choose among a URL's variants.
///
/// ```
/// offset 0   "CRSP"            magic
///        4   kind              1 = response, 2 = vary index
///        5   version           1
///        6   0, 0              reserved
///        8   u32 metaLength    little-endian, like every number here
///       12   u64 bodyLength
///       20   meta              strings as u32 length + bytes
///            body
///      end-4 u32 CRC-32        of every byte before it
/// ```
/// A file is accepted only when its length is exactly what its header says and the checksum
/// matches: a torn write (`kill -9`, a full disk), a truncated file or flipped bytes are all
/// refused, and the cache treats them as a miss and removes the file. Decoding never traps on
/// any input (it is a fuzz target).
package enum CacheFileFormat {
    package static let magic: [UInt8] = Array("CRSP".utf8)
    package static let version: UInt8 = 1
    package static let fixedLength = 20
    package static let trailerLength = 4
    /// Bigger metadata than this is not something the cache wrote.
    package static let metaLimit = 1 << 20

    package enum Kind: UInt8 {
        case response = 1
        case varyIndex = 2
    }

    /// A URL's vary index: the names its responses vary on, and the nonce its variants' file names
    /// include (a new index, after invalidation, makes older variant files unreachable).
    package struct VaryIndex: Equatable {
        package var key: String
        package var names: [String]
        package var nonce: UInt64
    }

    /// What a file holds.
    package enum Contents {
        case response(StoredResponse)
        case varyIndex(VaryIndex)
    }

    // MARK: Writing

    package static func encode(_ response: StoredResponse) -> [UInt8] {
        var meta = Writer()
        meta.string(response.key)
        meta.string(response.variantKey)
        meta.u16(UInt16(response.varyNames.count))
        for name in response.varyNames { meta.string(name) }
        meta.u16(UInt16(response.status))
        meta.bytes.append(response.versionMinor)
        meta.bytes.append(response.bodyDecoded ? 1 : 0)
        meta.u64(UInt64(bitPattern: response.requestTime))
        meta.u64(UInt64(bitPattern: response.responseTime))
        meta.string(response.reason)
        meta.u32(UInt32(response.headers.count))
        for index in 0..<response.headers.count {
            response.headers.withFieldBytes(at: index) { name, value in
                meta.raw(name)
                meta.raw(value)
            }
        }
        return frame(.response, meta: meta.bytes, body: response.body)
    }

    package static func encode(_ index: VaryIndex) -> [UInt8] {
        var meta = Writer()
        meta.string(index.key)
        meta.u64(index.nonce)
        meta.u16(UInt16(index.names.count))
        for name in index.names { meta.string(name) }
        return frame(.varyIndex, meta: meta.bytes, body: [])
    }

    private static func frame(_ kind: Kind, meta: [UInt8], body: [UInt8]) -> [UInt8] {
        var out = Writer()
        out.bytes.reserveCapacity(fixedLength + meta.count + body.count + trailerLength)
        out.bytes += magic
        out.bytes += [kind.rawValue, version, 0, 0]
        out.u32(UInt32(meta.count))
        out.u64(UInt64(body.count))
        out.bytes += meta
        out.bytes += body
        out.u32(checksum(out.bytes[...]))
        return out.bytes
    }

    // MARK: Reading

    /// The lengths a file's first `fixedLength` bytes announce, or nil when they are not a cache
    /// file's: for reading the rest without guessing its size.
    package static func announcedLength(_ prefix: UnsafeRawBufferPointer) -> Int? {
        guard prefix.count >= fixedLength, prefix[0] == magic[0], prefix[1] == magic[1], prefix[2] == magic[2],
              prefix[3] == magic[3], prefix[5] == version else { return nil }
        var reader = Reader(prefix, at: 8)
        guard let metaLength = reader.u32(), let bodyLength = reader.u64(), Int(metaLength) <= metaLimit,
              bodyLength < UInt64(Int.max / 2) else { return nil }
        return fixedLength + Int(metaLength) + Int(bodyLength) + trailerLength
    }

    /// Decodes a whole file; nil for anything that is not exactly a file the cache wrote.
    package static func decode(_ file: [UInt8]) -> Contents? {
        file.withUnsafeBytes { raw -> Contents? in
            guard let total = announcedLength(raw), total == raw.count else { return nil }
            var trailer = Reader(raw, at: total - trailerLength)
            guard let stored = trailer.u32(), stored == checksum(file[0..<(total - trailerLength)]) else { return nil }
            var header = Reader(raw, at: 4)
            guard let kindByte = header.u8(), let kind = Kind(rawValue: kindByte) else { return nil }
            var lengths = Reader(raw, at: 8)
            guard let metaLength = lengths.u32(), let bodyLength = lengths.u64() else { return nil }
            let metaEnd = fixedLength + Int(metaLength)
            var meta = Reader(UnsafeRawBufferPointer(rebasing: raw[0..<metaEnd]), at: fixedLength)
            switch kind {
            case .response:
                let body = Array(file[metaEnd..<(metaEnd + Int(bodyLength))])
                return decodeResponse(&meta, body: body).map { .response($0) }
            case .varyIndex:
                guard bodyLength == 0, let key = meta.string(), let nonce = meta.u64(), let count = meta.u16() else { return nil }
                var names: [String] = []
                for _ in 0..<count {
                    guard let name = meta.string() else { return nil }
                    names.append(name)
                }
                guard meta.atEnd else { return nil }
                return .varyIndex(VaryIndex(key: key, names: names, nonce: nonce))
            }
        }
    }

    private static func decodeResponse(_ meta: inout Reader, body: [UInt8]) -> StoredResponse? {
        guard let key = meta.string(), let variantKey = meta.string(), let varyCount = meta.u16() else { return nil }
        var varyNames: [String] = []
        for _ in 0..<varyCount {
            guard let name = meta.string() else { return nil }
            varyNames.append(name)
        }
        guard let status = meta.u16(), (100...999).contains(status), let versionMinor = meta.u8(), versionMinor <= 1,
              let flags = meta.u8(), flags <= 1,
              let requestTime = meta.u64(), let responseTime = meta.u64(), let reason = meta.string(),
              let fieldCount = meta.u32() else { return nil }
        var headers = HTTPHeaders()
        guard fieldCount <= 10_000 else { return nil }
        for _ in 0..<fieldCount {
            guard let name = meta.rawString(), let value = meta.rawString() else { return nil }
            // What the cache wrote was a valid field; anything else was not written by it.
            guard !name.isEmpty, name.allSatisfy(ByteClass.isToken),
                  !value.contains(where: { $0 == 0x0d || $0 == 0x0a || $0 == 0 }) else { return nil }
            headers.appendField(name: name, value: value)
        }
        guard meta.atEnd else { return nil }
        return StoredResponse(key: key, varyNames: varyNames, variantKey: variantKey, status: Int(status),
                              versionMinor: versionMinor, reason: reason, headers: headers, body: body,
                              requestTime: Int64(bitPattern: requestTime), responseTime: Int64(bitPattern: responseTime),
                              bodyDecoded: flags == 1)
    }

    package static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
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

    private struct Writer {
        var bytes: [UInt8] = []

        mutating func u16(_ value: UInt16) { bytes += [UInt8(value & 0xff), UInt8(value >> 8)] }
        mutating func u32(_ value: UInt32) {
            for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
        }
        mutating func u64(_ value: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        mutating func string(_ text: String) {
            u32(UInt32(text.utf8.count))
            bytes += text.utf8
        }
        mutating func raw(_ piece: UnsafeRawBufferPointer) {
            u32(UInt32(piece.count))
            bytes += piece
        }
    }

    /// Bounds-checked little-endian reads; every read fails rather than overrunning.
    private struct Reader {
        let raw: UnsafeRawBufferPointer
        var index: Int

        init(_ raw: UnsafeRawBufferPointer, at index: Int) {
            self.raw = raw
            self.index = index
        }

        var atEnd: Bool { index == raw.count }

        mutating func u8() -> UInt8? {
            guard index < raw.count else { return nil }
            defer { index += 1 }
            return raw[index]
        }

        mutating func u16() -> UInt16? {
            guard let low = u8(), let high = u8() else { return nil }
            return UInt16(low) | UInt16(high) << 8
        }

        mutating func u32() -> UInt32? {
            guard raw.count - index >= 4 else { return nil }
            var value: UInt32 = 0
            for offset in 0..<4 { value |= UInt32(raw[index + offset]) << UInt32(8 * offset) }
            index += 4
            return value
        }

        mutating func u64() -> UInt64? {
            guard raw.count - index >= 8 else { return nil }
            var value: UInt64 = 0
            for offset in 0..<8 { value |= UInt64(raw[index + offset]) << UInt64(8 * offset) }
            index += 8
            return value
        }

        mutating func string() -> String? {
            rawString().map { String(decoding: $0, as: UTF8.self) }
        }

        /// The bytes of a length-prefixed string, valid as long as the file's bytes are.
        mutating func rawString() -> UnsafeRawBufferPointer? {
            guard let length = u32(), Int(length) <= raw.count - index else { return nil }
            defer { index += Int(length) }
            return UnsafeRawBufferPointer(rebasing: raw[index..<(index + Int(length))])
        }
    }
}
