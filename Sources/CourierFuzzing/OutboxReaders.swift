import CourierCore

/// Fuzz target: outbox journal entries. The journal reads files an earlier process left (torn by
/// a crash, damaged on disk, or not Courier's at all), so decoding must refuse what the journal
/// did not write and never trap; an entry it accepts must encode back to the same bytes and be one
/// the journal would take (a valid id, fields without CR, LF or NUL, an absolute file path).
///
/// The first input byte picks the mode: even bytes decode the rest as a whole file, odd bytes
/// frame the rest first (magic, version, the body kind from the mode, lengths that fit, a valid
/// checksum) so the fuzzer spends its time in the metadata reader rather than in front of the CRC.
package enum OutboxReading {
    package static func run(_ input: UnsafeRawBufferPointer) {
        guard let mode = input.first else { return }
        let rest = Array(input.dropFirst())
        let file = mode & 1 == 0 ? rest : framed(rest, bodyKind: (mode >> 1) % 3)
        guard let entry = OutboxEntryFormat.decode(file) else { return }
        precondition(OutboxEntryFormat.encode(entry) == file, "a decoded entry does not encode back to its file")
        precondition(entry.id.utf8.count == 32 && !entry.method.isEmpty && !entry.url.isEmpty, "an entry the journal never writes")
        for field in entry.headers {
            precondition(!field.name.isEmpty && !field.value.utf8.contains(where: { $0 == 0x0d || $0 == 0x0a || $0 == 0 }),
                         "a header that would split the request")
        }
        if case .file(let path, _, let digest) = entry.body {
            precondition(path.hasPrefix("/") && digest.count == 32, "a file body without its path or digest")
        }
        _ = OutboxRules.headers(of: entry)
    }

    /// Entries as the journal writes them (no body, bytes, a file), whole and framed, with the
    /// mode byte in front.
    package static func seeds() -> [[UInt8]] {
        var plain = OutboxEntry(id: "0123456789abcdef0123456789abcdef", kind: "draft", method: "POST",
                                url: "https://api.example.com/v1/drafts?x=1",
                                headers: [.init(name: "Content-Type", value: "application/json"),
                                          .init(name: "Idempotency-Key", value: "0123456789abcdef0123456789abcdef")],
                                body: .bytes(Array("{\"title\":\"hello\"}".utf8)), created: 1_700_000_000)
        plain.sequence = 7
        var empty = OutboxEntry(id: "fedcba9876543210fedcba9876543210", kind: "", method: "DELETE", url: "http://h/item/3")
        empty.sequence = 1
        var file = OutboxEntry(id: "00000000000000000000000000000001", kind: "upload", method: "PUT", url: "http://h/u",
                               body: .file(path: "/var/tmp/photo.jpg", size: 123_456, sha256: Array(0..<32)), created: -5)
        file.sequence = UInt64.max
        var seeds: [[UInt8]] = []
        for entry in [plain, empty, file] {
            let bytes = OutboxEntryFormat.encode(entry)
            seeds.append([0] + bytes)
            let metaLength = Int(bytes[8]) | Int(bytes[9]) << 8
            let content = Array(bytes[20..<(bytes.count - 4)])
            seeds.append([1 | (bytes[5] << 1), UInt8(metaLength & 0xff), UInt8(metaLength >> 8)] + content)
        }
        return seeds
    }

    /// A file around `payload`: its first two bytes (when present) choose how much of the rest is
    /// metadata, the remainder is the body.
    static func framed(_ payload: [UInt8], bodyKind: UInt8) -> [UInt8] {
        let split = payload.count >= 2 ? Int(payload[0]) | Int(payload[1]) << 8 : 0
        let content = Array(payload.dropFirst(min(2, payload.count)))
        let metaLength = min(split, content.count)
        var writer = BinaryWriter()
        writer.bytes = Array("COBX".utf8) + [1, bodyKind, 0, 0]
        writer.u32(UInt32(metaLength))
        writer.u64(UInt64(content.count - metaLength))
        writer.bytes += content
        writer.u32(CRC32.of(writer.bytes[...]))
        return writer.bytes
    }
}
