/// The bytes of one outbox journal file.
///
/// ```
/// offset 0   "COBX"            magic
///        4   version           1
///        5   body kind         0 none, 1 bytes, 2 file
///        6   0, 0              reserved
///        8   u32 metaLength    little-endian, like every number here
///       12   u64 bodyLength    bytes kept in the file (0 unless body kind is 1)
///       20   meta              id, kind, method, URL as u32 length + UTF-8; u64 sequence, i64
///                              created; u32 field count, name and value strings; for a file
///                              body its path, u64 size and the 32-byte SHA-256
///            body
///      end-4 u32 CRC-32        of every byte before it
/// ```
/// A file is accepted only when its length is exactly what its header says, its checksum
/// matches and every field is one Courier could have written; anything else (a torn write,
/// flipped bytes, another program's file) is refused, and the journal sets the file aside.
/// Decoding never traps on any input (it is a fuzz target).
package enum OutboxEntryFormat {
    static let magic: [UInt8] = Array("COBX".utf8)
    static let version: UInt8 = 1
    static let fixedLength = 20
    static let trailerLength = 4
    static let metaLimit = 1 << 20

    package static func encode(_ entry: OutboxEntry) -> [UInt8] {
        var meta = BinaryWriter()
        meta.string(entry.id)
        meta.u64(entry.sequence)
        meta.string(entry.kind)
        meta.string(entry.method)
        meta.string(entry.url)
        meta.u64(UInt64(bitPattern: entry.created))
        meta.u32(UInt32(entry.headers.count))
        for field in entry.headers {
            meta.string(field.name)
            meta.string(field.value)
        }
        var bodyKind: UInt8 = 0
        var body: [UInt8] = []
        switch entry.body {
        case .none: break
        case .bytes(let bytes):
            bodyKind = 1
            body = bytes
        case .file(let path, let size, let sha256):
            bodyKind = 2
            meta.string(path)
            meta.u64(size)
            meta.bytes += sha256
        }
        var out = BinaryWriter()
        out.bytes.reserveCapacity(fixedLength + meta.bytes.count + body.count + trailerLength)
        out.bytes += magic
        out.bytes += [version, bodyKind, 0, 0]
        out.u32(UInt32(meta.bytes.count))
        out.u64(UInt64(body.count))
        out.bytes += meta.bytes
        out.bytes += body
        out.u32(CRC32.of(out.bytes[...]))
        return out.bytes
    }

    /// The entry a whole file holds, or nil for anything that is not exactly a file the journal
    /// wrote.
    package static func decode(_ file: [UInt8]) -> OutboxEntry? {
        file.withUnsafeBytes { raw -> OutboxEntry? in
            guard raw.count >= fixedLength + trailerLength, Array(raw[0..<4]) == magic, raw[4] == version,
                  raw[6] == 0, raw[7] == 0 else { return nil }
            let bodyKind = raw[5]
            var lengths = BinaryReader(raw, at: 8)
            guard let metaLength = lengths.u32(), let bodyLength = lengths.u64(), Int(metaLength) <= metaLimit,
                  bodyLength < UInt64(Int.max / 4),
                  fixedLength + Int(metaLength) + Int(bodyLength) + trailerLength == raw.count else { return nil }
            var trailer = BinaryReader(raw, at: raw.count - trailerLength)
            guard let stored = trailer.u32(), stored == CRC32.of(file[0..<(raw.count - trailerLength)]) else { return nil }
            let metaEnd = fixedLength + Int(metaLength)
            var meta = BinaryReader(UnsafeRawBufferPointer(rebasing: raw[0..<metaEnd]), at: fixedLength)
            guard let id = meta.string(), OutboxEntry.isValidID(id), let sequence = meta.u64(),
                  let kind = meta.string(), isLine(kind), let method = meta.string(), isToken(method), !method.isEmpty,
                  let url = meta.string(), isLine(url), !url.isEmpty, let created = meta.u64(),
                  let fieldCount = meta.u32(), Int(fieldCount) <= meta.remaining / 8 else { return nil }
            var headers: [OutboxEntry.Field] = []
            for _ in 0..<fieldCount {
                guard let name = meta.string(), isToken(name), !name.isEmpty, let value = meta.string(), isLine(value) else { return nil }
                headers.append(OutboxEntry.Field(name: name, value: value))
            }
            let body: OutboxEntry.Body
            switch bodyKind {
            case 0:
                guard bodyLength == 0 else { return nil }
                body = .none
            case 1:
                body = .bytes(Array(file[metaEnd..<(metaEnd + Int(bodyLength))]))
            case 2:
                guard bodyLength == 0, let path = meta.string(), isLine(path), path.hasPrefix("/"), let size = meta.u64(),
                      meta.remaining >= 32 else { return nil }
                let digest = Array(UnsafeRawBufferPointer(rebasing: raw[meta.index..<(meta.index + 32)]))
                meta.index += 32
                body = .file(path: path, size: size, sha256: digest)
            default:
                return nil
            }
            guard meta.atEnd else { return nil }
            var entry = OutboxEntry(id: id, kind: kind, method: method, url: url, headers: headers, body: body,
                                    created: Int64(bitPattern: created))
            entry.sequence = sequence
            return entry
        }
    }

    /// Text without CR, LF or NUL (what a header value, URL, kind or path may hold).
    static func isLine(_ text: String) -> Bool {
        !text.utf8.contains { $0 == 0x0d || $0 == 0x0a || $0 == 0 }
    }

    static func isToken(_ text: String) -> Bool {
        text.utf8.allSatisfy(ByteClass.isToken)
    }
}
