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
/// A response's meta holds its key, variant, status, version, flags, times, (for a partial
/// response, its layout), reason and header fields, in that order.
///
/// A file is accepted only when its length is exactly what its header says and the checksum
/// matches: a torn write (`kill -9`, a full disk), a truncated file or flipped bytes are all
/// refused, and the cache treats them as a miss and removes the file. Decoding never traps on
/// any input (it is a fuzz target).
package enum CacheFileFormat {
    package static let magic: [UInt8] = Array("CRSP".utf8)
    package static let version: UInt8 = 2
    package static let fixedLength = 20
    package static let trailerLength = 4
    /// Bigger metadata than this is not something the cache wrote.
    package static let metaLimit = 1 << 20

    /// The response's flag bits: a content-decoded body; a partial response, whose layout
    /// (complete length, then each span's start and length) follows the times.
    enum Flags {
        static let bodyDecoded: UInt8 = 1
        static let partial: UInt8 = 2
    }

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

        package init(key: String, names: [String], nonce: UInt64) {
            self.key = key
            self.names = names
            self.nonce = nonce
        }
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
        meta.bytes.append(response.version)
        meta.bytes.append((response.bodyDecoded ? Flags.bodyDecoded : 0) | (response.partial != nil ? Flags.partial : 0))
        meta.u64(UInt64(bitPattern: response.requestTime))
        meta.u64(UInt64(bitPattern: response.responseTime))
        if let partial = response.partial {
            meta.u64(partial.completeLength)
            meta.u32(UInt32(partial.spans.count))
            for span in partial.spans {
                meta.u64(span.start)
                meta.u64(span.length)
            }
        }
        meta.string(response.reason)
        // The fields as the headers hold them: their bytes and the offsets into them, so reading
        // them back is one copy, not an append per field.
        let headers = response.headers
        meta.u32(UInt32(headers.count))
        for field in headers.fields {
            meta.u32(field.nameStart)
            meta.u32(field.nameEnd)
            meta.u32(field.valueStart)
            meta.u32(field.valueEnd)
        }
        headers.storage.withUnsafeBytes { meta.raw($0) }
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
        guard let status = meta.u16(), (100...999).contains(status), let version = meta.u8(), version <= 2,
              let flags = meta.u8(), flags & ~(Flags.bodyDecoded | Flags.partial) == 0,
              let requestTime = meta.u64(), let responseTime = meta.u64() else { return nil }
        var partial: PartialLayout?
        if flags & Flags.partial != 0 {
            guard let completeLength = meta.u64(), let spanCount = meta.u32(), spanCount > 0,
                  meta.remaining >= Int(spanCount) * 16 else { return nil }
            var spans: [PartialLayout.Span] = []
            for _ in 0..<spanCount {
                guard let start = meta.u64(), let length = meta.u64() else { return nil }
                spans.append(PartialLayout.Span(start: start, length: length))
            }
            let layout = PartialLayout(completeLength: completeLength, spans: spans)
            guard status == 206, layout.isValid(bodyCount: body.count) else { return nil }
            partial = layout
        }
        guard let reason = meta.string(), let fieldCount = meta.u32() else { return nil }
        var headers = HTTPHeaders()
        guard fieldCount <= 10_000, meta.remaining >= Int(fieldCount) * 16 else { return nil }
        var fields: [HTTPHeaders.Field] = []
        fields.reserveCapacity(Int(fieldCount))
        for _ in 0..<fieldCount {
            guard let nameStart = meta.u32(), let nameEnd = meta.u32(), let valueStart = meta.u32(), let valueEnd = meta.u32() else { return nil }
            fields.append(HTTPHeaders.Field(nameStart: nameStart, nameEnd: nameEnd, valueStart: valueStart, valueEnd: valueEnd))
        }
        guard let storage = meta.rawString(), meta.atEnd else { return nil }
        // Offsets inside the bytes, in order, names made of token bytes and values free of CR,
        // LF and NUL: what the cache wrote; anything else was not.
        var previousEnd: UInt32 = 0
        for field in fields {
            guard previousEnd <= field.nameStart, field.nameStart < field.nameEnd, field.nameEnd <= field.valueStart,
                  field.valueStart <= field.valueEnd, Int(field.valueEnd) <= storage.count,
                  Self.isToken(UnsafeRawBufferPointer(rebasing: storage[Int(field.nameStart)..<Int(field.nameEnd)])),
                  Self.isFieldValue(UnsafeRawBufferPointer(rebasing: storage[Int(field.valueStart)..<Int(field.valueEnd)])) else { return nil }
            previousEnd = field.valueEnd
        }
        headers = HTTPHeaders(laidOut: Array(storage.bindMemory(to: UInt8.self)), fields: fields)
        return StoredResponse(key: key, varyNames: varyNames, variantKey: variantKey, status: Int(status),
                              version: version, reason: reason, headers: headers, body: body,
                              requestTime: Int64(bitPattern: requestTime), responseTime: Int64(bitPattern: responseTime),
                              bodyDecoded: flags & Flags.bodyDecoded != 0, partial: partial)
    }

    private static func isToken(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for index in 0..<bytes.count where !ByteClass.isToken(bytes[index]) { return false }
        return true
    }

    private static func isFieldValue(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for index in 0..<bytes.count {
            let byte = bytes[index]
            if byte == 0x0d || byte == 0x0a || byte == 0 { return false }
        }
        return true
    }

    package static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 { CRC32.of(bytes) }

    private typealias Writer = BinaryWriter
    private typealias Reader = BinaryReader
}
