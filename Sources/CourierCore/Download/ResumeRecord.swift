/// The sidecar of a resumable download: what the partial file is a prefix of.
///
/// A small text file beside the partial one (`<destination>.courier-resume`), so a later attempt
/// (in this process or another, from the same URL or a new one for the same resource) can ask for
/// the rest with `Range` and `If-Range`, and the server's answer shows whether the resource is
/// still the one the prefix came from. Every line is checked and the whole is covered by a hash;
/// anything unexpected reads as "no record", which restarts the download from zero: a damaged
/// sidecar may cost a download, never produce a wrong file.
///
/// ```
/// courier-resume 1
/// etag "5f3a-9c"            (or: last-modified Tue, 01 Dec 2026 10:00:00 GMT)
/// length 1048576            (or: length -)
/// url https://example.com/big.iso
/// check 9a0f3c1d2e4b5a67
/// ```
package struct ResumeRecord: Equatable {
    /// What `If-Range` carries: a strong entity tag, or a Last-Modified date.
    package enum Validator: Equatable {
        case etag(String)
        case lastModified(String)

        package var headerValue: String {
            switch self {
            case .etag(let tag): return tag
            case .lastModified(let date): return date
            }
        }
    }

    package var validator: Validator
    /// The whole resource's length, when the server said.
    package var length: UInt64?
    /// The URL it came from (informational: a resume may come from another).
    package var url: String

    package init(validator: Validator, length: UInt64?, url: String) {
        self.validator = validator
        self.length = length
        self.url = url
    }

    /// The validator a response offers for resuming: a strong ETag, else Last-Modified; nil when
    /// it has neither (a weak tag cannot be used with `If-Range`, RFC 9110 section 13.1.5).
    package static func validator(in headers: HTTPHeaders) -> Validator? {
        if let tag = headers["ETag"], tag.utf8.first == UInt8(ascii: "\""), tag.utf8.count >= 2, tag.utf8.last == UInt8(ascii: "\""),
           isHeaderSafe(tag) {
            return .etag(tag)
        }
        if let date = headers["Last-Modified"], HTTPDate.parse(date) != nil, isHeaderSafe(date) {
            return .lastModified(date)
        }
        return nil
    }

    /// The sidecar's text.
    package func encoded() -> String {
        var body = "courier-resume 1\n"
        switch validator {
        case .etag(let tag): body += "etag \(tag)\n"
        case .lastModified(let date): body += "last-modified \(date)\n"
        }
        body += "length \(length.map(String.init) ?? "-")\n"
        body += "url \(url)\n"
        return body + "check \(Self.check(body))\n"
    }

    /// Reads a sidecar's text; nil for anything but a well-formed, intact record.
    package static func decode(_ text: String) -> ResumeRecord? {
        // Bytes, not Characters: a combining mark after a quote would merge with it into one
        // Character and defeat a prefix test (found by the resume fuzz target).
        guard text.utf8.count <= 16 * 1024, text.utf8.last == 0x0A else { return nil }
        let lines = text.utf8.dropLast().split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        guard lines.count == 5, lines[0] == "courier-resume 1" else { return nil }
        let covered = lines[0..<4].joined(separator: "\n") + "\n"
        guard lines[4] == "check \(check(covered))" else { return nil }
        let validator: Validator
        if lines[1].utf8.starts(with: "etag \"".utf8) {
            let tag = Self.after(5, lines[1])
            guard tag.utf8.count >= 2, tag.utf8.last == UInt8(ascii: "\""), isHeaderSafe(tag) else { return nil }
            validator = .etag(tag)
        } else if lines[1].utf8.starts(with: "last-modified ".utf8) {
            let date = Self.after(14, lines[1])
            guard HTTPDate.parse(date) != nil, isHeaderSafe(date) else { return nil }
            validator = .lastModified(date)
        } else {
            return nil
        }
        guard lines[2].utf8.starts(with: "length ".utf8) else { return nil }
        let lengthText = Self.after(7, lines[2])
        let length: UInt64?
        if lengthText == "-" {
            length = nil
        } else {
            guard !lengthText.isEmpty, lengthText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = UInt64(lengthText) else { return nil }
            length = value
        }
        guard lines[3].utf8.starts(with: "url ".utf8) else { return nil }
        return ResumeRecord(validator: validator, length: length, url: Self.after(4, lines[3]))
    }

    /// The line after its first `count` bytes (an ASCII keyword already checked).
    private static func after(_ count: Int, _ line: String) -> String {
        String(decoding: line.utf8.dropFirst(count), as: UTF8.self)
    }

    private static func check(_ text: String) -> String {
        var hash = FNV1a()
        hash.feed(text)
        let digits = String(hash.finished(), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Printable ASCII only: the value goes into a request header and a line of the record, and
    /// is compared byte for byte. (A validator with other bytes is legal but rare; such a
    /// resource is simply not resumable.)
    private static func isHeaderSafe(_ value: String) -> Bool {
        value.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7f }
    }
}

/// A `Content-Range` value (RFC 9110 section 14.4): "bytes first-last/complete", or
/// "bytes */complete" for an unsatisfied range.
package struct ContentRange: Equatable {
    /// nil for "*" (no range: the 416 form).
    package var first: UInt64?
    package var last: UInt64?
    /// nil for "*" (the server does not know).
    package var complete: UInt64?

    package init(first: UInt64?, last: UInt64?, complete: UInt64?) {
        self.first = first
        self.last = last
        self.complete = complete
    }

    package init?(_ value: String) {
        var text = Substring(value)
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        text = text.dropFirst(6)
        let halves = text.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        if halves[1] == "*" {
            complete = nil
        } else {
            guard let value = ByteClass.decimal(halves[1]) else { return nil }
            complete = value
        }
        if halves[0] == "*" {
            guard complete != nil else { return nil }
            first = nil
            last = nil
        } else {
            let ends = halves[0].split(separator: "-", omittingEmptySubsequences: false)
            guard ends.count == 2, let a = ByteClass.decimal(ends[0]), let b = ByteClass.decimal(ends[1]), a <= b else { return nil }
            if let complete, b >= complete { return nil }
            first = a
            last = b
        }
    }
}
