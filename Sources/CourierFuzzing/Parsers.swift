import CourierCore

/// Fuzz target: URL parsing, resolution and request-target splitting on arbitrary text.
///
/// Checked: a URL that parses puts nothing on the wire that could end a request line or inject a
/// header (no CR, LF, NUL, space or other control byte in the target or Host), its description
/// parses back to the same URL, and resolving a reference against it either fails with an error
/// or gives a URL that holds the same promise.
package enum URLParsing {
    package static func run(_ input: UnsafeRawBufferPointer) {
        let text = String(decoding: input, as: UTF8.self)
        let halves = text.split(separator: "\u{1}", maxSplits: 1, omittingEmptySubsequences: false)
        guard let url = try? CourierURL(parsing: String(halves[0])) else { return }
        check(url)
        if let again = try? CourierURL(parsing: url.description) {
            precondition(again.description == url.description, "\(url) does not survive its own description")
        } else {
            preconditionFailure("the description of \(url) does not parse")
        }
        if halves.count > 1, let resolved = try? url.resolving(String(halves[1])) { check(resolved) }
        let (path, query) = CourierURL.split(target: String(halves.last!))
        precondition(path.utf8.first == UInt8(ascii: "/"), "a split target without its slash")
        checkWireSafe(path)
        if let query { checkWireSafe(query) }
    }

    private static func check(_ url: CourierURL) {
        checkWireSafe(url.target)
        checkWireSafe(url.hostHeader)
        precondition(url.port != 0, "port 0")
    }

    private static func checkWireSafe(_ text: String) {
        for byte in text.utf8 { precondition(byte > 0x20 && byte != 0x7F, "byte \(byte) would reach the wire in \(text.debugDescription)") }
    }
}

/// Fuzz target: the chunked decoder is split-invariant: the same input decodes to the same body,
/// trailers and verdict whether fed whole or in input-chosen pieces.
package enum ChunkedDecoding {
    package static func run(_ input: UnsafeRawBufferPointer) {
        guard input.count >= 2 else { return }
        var random = SplitRandom(seed: UInt64(input[0]) | UInt64(input[1]) << 8)
        let body = UnsafeRawBufferPointer(rebasing: input[2...])
        let whole = decode(body) { _ in body.count }
        let pieces = decode(body) { remaining in 1 + Int(random.next() % UInt64(max(1, min(remaining, 64)))) }
        precondition(whole == pieces, "split changed the result: \(whole) vs \(pieces)")
    }

    private struct Outcome: Equatable {
        var body: [UInt8] = []
        var trailers: [String] = []
        var verdict = "needMore"
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer, nextSize: (Int) -> Int) -> Outcome {
        var decoder = ChunkedDecoder(byteBudget: 4096, fieldBudget: 16)
        var outcome = Outcome()
        var offset = 0
        while offset < bytes.count {
            let size = min(nextSize(bytes.count - offset), bytes.count - offset)
            let piece = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + size)])
            switch decoder.feed(piece, body: { outcome.body.append(contentsOf: $0); return nil }) {
            case .needMore:
                offset += size
                continue
            case .complete(let consumed):
                outcome.verdict = "complete at \(offset + consumed)"
                outcome.trailers = decoder.trailers.map { "\($0.name): \($0.value)" }
            case .failed(let error):
                outcome.verdict = "failed \(error.code.rawValue)"
                // What was passed on before the failure depends on the split; the verdict does not.
                outcome.body = []
            }
            return outcome
        }
        return outcome
    }
}

/// Fuzz target: outgoing headers. Names and values from the input are added, validated and
/// encoded: a head is written only when validation passed, and then it holds exactly one CRLF
/// per line (no injection), whatever the bytes.
package enum HeaderEncoding {
    package static func run(_ input: UnsafeRawBufferPointer) {
        var headers = HTTPHeaders()
        for line in input.split(separator: 0x0A, omittingEmptySubsequences: false).prefix(16) {
            let parts = line.split(separator: UInt8(ascii: ":"), maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(decoding: parts[0], as: UTF8.self)
            let value = parts.count > 1 ? String(decoding: parts[1], as: UTF8.self) : ""
            headers.add(name: name, value: value)
        }
        let summary = headers.summarizeForSending()
        guard !summary.hasInvalid else {
            precondition(headers.firstInvalidField() != nil, "invalid without a field to blame")
            return
        }
        var buffer = RawBuffer(capacity: 256)
        defer { buffer.free() }
        RequestEncoder.encodeHead(method: .get, path: "/", query: nil, hostHeader: "h", headers: headers,
                                  framing: RequestEncoder.Framing(host: true, contentLength: nil, acceptEncoding: false),
                                  into: &buffer)
        let head = Array(buffer.bytes)
        // Lines: request line, Host, one per field, the empty line.
        var lines = 0
        var index = 0
        while index + 1 < head.count {
            if head[index] == 0x0D, head[index + 1] == 0x0A { lines += 1; index += 2; continue }
            precondition(head[index] != 0x0D && head[index] != 0x0A && head[index] != 0, "a bare CR, LF or NUL reached the head")
            index += 1
        }
        precondition(lines == 2 + headers.count + 1, "\(lines) lines for \(headers.count) fields")
    }
}
