import CourierCore

/// Fuzz target: what a resumable download reads back. The record beside a partial file comes
/// from disk (any process or crash may have left it), `Content-Range` from the server: neither may
/// trap, and what is accepted must be self-consistent — a decoded record encodes back to exactly
/// its text, a parsed range is ordered and inside its complete length.
package enum ResumeReading {
    package static func run(_ input: UnsafeRawBufferPointer) {
        let text = String(decoding: input, as: UTF8.self)
        if let record = ResumeRecord.decode(text) {
            precondition(record.encoded() == text, "a decoded resume record does not encode back to its text")
            precondition(ResumeRecord.decode(record.encoded()) == record)
        }
        if let range = ContentRange(text) {
            if let first = range.first, let last = range.last {
                precondition(first <= last, "a range that ends before it starts")
                if let complete = range.complete { precondition(last < complete, "a range past the complete length") }
            } else {
                precondition(range.first == nil && range.last == nil && range.complete != nil, "an unsatisfied range without its length")
            }
        }
        // As response headers: whatever validator is chosen must be usable in If-Range.
        let headers: HTTPHeaders = ["ETag": text, "Last-Modified": text]
        if let validator = ResumeRecord.validator(in: headers) {
            precondition(validator.headerValue.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7f }, "a validator that cannot be sent")
            let record = ResumeRecord(validator: validator, length: 1, url: "u")
            precondition(ResumeRecord.decode(record.encoded()) == record, "a chosen validator does not survive the record")
        }
    }
}

/// Fuzz target: the multipart writer against a parser of its own. The input describes a form
/// (names, file names, MIME types and contents with any bytes, CR and LF and quotes included);
/// the body the writer streams is split at its boundary and every part must come back with
/// exactly its content, and every head with one Content-Disposition line whose quoted name
/// unescapes to the name given. Its length must be what the form announces.
package enum MultipartWriting {
    package static func run(_ input: UnsafeRawBufferPointer) {
        var bytes = Array(input)
        var form = MultipartForm(boundary: bytes.first.map { $0 & 1 == 0 ? nil : "fuzz-boundary-\($0)" } ?? nil)
        if !bytes.isEmpty { bytes.removeFirst() }
        var expected: [(name: String, content: [UInt8])] = []
        // Pieces separated by 0xFF: name, content, repeated; a 0xFE in a name makes it a data part.
        let pieces = bytes.split(separator: 0xFF, omittingEmptySubsequences: false).map(Array.init)
        var index = 0
        while index + 1 < pieces.count, expected.count < 16 {
            let rawName = pieces[index], content = pieces[index + 1]
            let name = String(decoding: rawName.filter { $0 != 0xFE }, as: UTF8.self)
            if rawName.contains(0xFE) {
                form.addData(content, forKey: name, mimeType: "application/x-\(content.count)", fileName: name + ".bin")
                expected.append((name, content))
            } else {
                let value = String(decoding: content, as: UTF8.self)
                form.addField(name, value: value)
                expected.append((name, Array(value.utf8)))
            }
            index += 2
        }
        var chosen = false
        if case .some = input.first.map({ $0 & 1 == 1 ? true : nil }) { chosen = true }
        guard case .success(let announced) = form.length() else {
            // Only a boundary the caller chose can collide with the content; the form refuses it.
            precondition(chosen, "a form with a generated boundary failed")
            return
        }
        guard case .success(let source) = RequestBody.multipart(form).makeSource(length: announced) else { preconditionFailure("no source") }
        var body: [UInt8] = []
        reading: while true {
            switch source.read() {
            case .bytes(let piece): body += piece
            case .array(let piece): body += piece
            case .end: break reading
            case .pending, .failed: preconditionFailure("a form in memory did not read")
            }
        }
        precondition(UInt64(body.count) == announced, "the form is not the length it announced")
        let parts = split(body, boundary: Array(form.boundary.utf8))
        precondition(parts.count == expected.count, "\(parts.count) parts parsed, \(expected.count) written")
        for (part, want) in zip(parts, expected) {
            guard let headEnd = find(Array("\r\n\r\n".utf8), in: part, from: 0) else { preconditionFailure("a part without a head") }
            let head = Array(part[..<headEnd])
            let content = Array(part[(headEnd + 4)...])
            precondition(content == want.content, "a part's content changed")
            let lines = head.split(separator: UInt8(ascii: "\n")).map { Array($0.dropLast()) }
            let disposition = Array("Content-Disposition: form-data; name=\"".utf8)
            precondition(lines.first.map { $0.starts(with: disposition) } == true, "a part head without its disposition")
            let quoted = lines[0][disposition.count...].prefix { $0 != UInt8(ascii: "\"") }
            let unescaped = String(decoding: unescape(Array(quoted)), as: UTF8.self)
            precondition(unescaped == want.name || want.name.utf8.contains(UInt8(ascii: "%")), "a part's name did not survive")
        }
    }

    /// The parts between `--boundary` delimiters (RFC 2046 section 5.1.1), without the CRLF
    /// that belongs to each delimiter.
    static func split(_ body: [UInt8], boundary: [UInt8]) -> [[UInt8]] {
        let first = Array("--".utf8) + boundary
        let delimiter = Array("\r\n--".utf8) + boundary
        precondition(body.starts(with: first), "the body does not start with its boundary")
        var parts: [[UInt8]] = []
        var position = first.count
        while true {
            if body[position...].starts(with: Array("--\r\n".utf8)) {
                precondition(position + 4 == body.count, "bytes after the closing delimiter")
                return parts
            }
            precondition(body[position...].starts(with: Array("\r\n".utf8)), "a delimiter not followed by CRLF")
            position += 2
            guard let next = find(delimiter, in: body, from: position) else { preconditionFailure("a part without an end") }
            parts.append(Array(body[position..<next]))
            position = next + delimiter.count
        }
    }

    /// %22, %0D and %0A back to the bytes they stand for.
    static func unescape(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count {
                let code = String(decoding: bytes[(i + 1)...(i + 2)], as: UTF8.self)
                let byte: UInt8? = code == "22" ? 0x22 : code == "0D" ? 0x0D : code == "0A" ? 0x0A : nil
                if let byte {
                    out.append(byte)
                    i += 3
                    continue
                }
            }
            out.append(bytes[i])
            i += 1
        }
        return out
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        var i = start
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0], haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}

