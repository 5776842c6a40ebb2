/// One byte range a request's `Range` field asks for (RFC 9110 section 14.1.1): `first-last`,
/// `first-` or `-suffix`. A set of several ranges, another unit or anything malformed is not one:
/// such a request goes to the origin untouched.
package struct ByteRangeRequest: Equatable, Sendable {
    package enum Form: Equatable, Sendable {
        case from(UInt64, through: UInt64?)
        case suffix(UInt64)
    }

    package let form: Form

    package init(form: Form) { self.form = form }

    /// Parses a `Range` field value; nil unless it is a single byte range.
    package init?(_ value: String) {
        let text = Substring(value).trimmingSpaces
        guard text.count > 6, text.prefix(6).lowercased() == "bytes=" else { return nil }
        let spec = text.dropFirst(6).trimmingSpaces
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let firstText = spec[..<dash].trimmingSpaces
        let lastText = spec[spec.index(after: dash)...].trimmingSpaces
        if firstText.isEmpty {
            guard let suffix = ByteClass.decimal(lastText), suffix > 0 else { return nil }
            form = .suffix(suffix)
            return
        }
        guard let first = ByteClass.decimal(firstText) else { return nil }
        if lastText.isEmpty {
            form = .from(first, through: nil)
            return
        }
        guard let last = ByteClass.decimal(lastText), last >= first else { return nil }
        form = .from(first, through: last)
    }

    /// The bytes it selects of a representation `length` long; nil when it selects none
    /// (unsatisfiable: the origin answers that one, with its 416).
    package func resolve(length: UInt64) -> Range<UInt64>? {
        switch form {
        case .from(let first, let last):
            guard first < length else { return nil }
            return first..<(min(last ?? (length - 1), length - 1) + 1)
        case .suffix(let count):
            guard length > 0 else { return nil }
            return (length - min(count, length))..<length
        }
    }
}

/// Which parts of a representation a partial stored response holds (RFC 9111 sections 3.3 and
/// 3.4): disjoint spans in order, none touching the next (touching ones are one span), their
/// bytes laid end to end in the stored body.
///
/// Why a client cache keeps parts: a caller that reads a large resource in pieces (a media
/// player, a reader of an archive's index) asks for the same ranges again, and a transfer cut
/// short has already brought the first part. Each piece the origin sent once is kept, pieces of
/// one representation (the same strong validator) are combined, and a range lying wholly in what
/// is stored is answered from storage as a 206; once the pieces cover the whole representation
/// it is stored as the complete 200 it now is.
package struct PartialLayout: Equatable, Sendable {
    package struct Span: Equatable, Sendable {
        package var start: UInt64
        package var length: UInt64
        package var end: UInt64 { start + length }

        package init(start: UInt64, length: UInt64) {
            self.start = start
            self.length = length
        }
    }

    /// The representation's whole length (Content-Range's, or a cut 200's Content-Length).
    package let completeLength: UInt64
    package let spans: [Span]

    package init(completeLength: UInt64, spans: [Span]) {
        self.completeLength = completeLength
        self.spans = spans
    }

    /// Whether the spans cover the whole representation.
    package var isComplete: Bool {
        spans.count == 1 && spans[0].start == 0 && spans[0].length == completeLength
    }

    /// Whether it is a layout the cache could have written for a body `bodyCount` long: spans in
    /// order, non-empty, apart, inside the representation, their lengths adding up to the body's.
    package func isValid(bodyCount: Int) -> Bool {
        var total: UInt64 = 0
        var previousEnd: UInt64? = nil
        for span in spans {
            guard span.length > 0, span.start <= completeLength, span.length <= completeLength - span.start else { return false }
            if let previousEnd, span.start <= previousEnd { return false }
            previousEnd = span.end
            total += span.length
        }
        return !spans.isEmpty && total == UInt64(bodyCount)
    }

    /// The stored bytes of `range`, when it lies wholly in one span of `body`.
    package func bytes(_ range: Range<UInt64>, of body: [UInt8]) -> ArraySlice<UInt8>? {
        var offset: UInt64 = 0
        for span in spans {
            if range.lowerBound >= span.start, range.upperBound <= span.end {
                let from = Int(offset + range.lowerBound - span.start)
                return body[from..<(from + range.count)]
            }
            offset += span.length
        }
        return nil
    }

    /// `body` laid out as `self`, with `bytes` at `start` added (section 3.4): the union of the
    /// spans, touching and overlapping ones joined (the representation is the same, so bytes
    /// stored twice are equal; the stored ones are kept).
    package func adding(_ bytes: ArraySlice<UInt8>, at start: UInt64, to body: [UInt8]) -> (PartialLayout, [UInt8]) {
        var pieces: [(start: UInt64, bytes: ArraySlice<UInt8>)] = []
        var offset = 0
        for span in spans {
            pieces.append((span.start, body[offset..<(offset + Int(span.length))]))
            offset += Int(span.length)
        }
        let at = pieces.firstIndex { $0.start > start } ?? pieces.count
        pieces.insert((start, bytes), at: at)
        var merged: [Span] = []
        var out: [UInt8] = []
        out.reserveCapacity(body.count + bytes.count)
        for piece in pieces where !piece.bytes.isEmpty {
            let end = piece.start + UInt64(piece.bytes.count)
            if let last = merged.last, piece.start <= last.end {
                // Only what reaches past the span so far is new.
                guard end > last.end else { continue }
                let skip = Int(last.end - piece.start)
                out.append(contentsOf: piece.bytes.dropFirst(skip))
                merged[merged.count - 1].length = end - last.start
            } else {
                out.append(contentsOf: piece.bytes)
                merged.append(Span(start: piece.start, length: UInt64(piece.bytes.count)))
            }
        }
        return (PartialLayout(completeLength: completeLength, spans: merged), out)
    }

    /// A layout holding only `bytes` at `start`.
    package static func single(_ count: Int, at start: UInt64, of completeLength: UInt64) -> PartialLayout {
        PartialLayout(completeLength: completeLength, spans: [Span(start: start, length: UInt64(count))])
    }
}

/// The rules for parts (sections 3.3, 3.4), beside the rest of RFC 9111 in `CacheRules`.
extension CacheRules {
    /// Where a part of a representation goes (sections 3.3, 3.4): the range a 206 to a request
    /// for one byte range carries (its Content-Range), or the first `received` bytes of a 200 cut
    /// short (whose Content-Length is the whole), as a layout of that one span. Nil unless the
    /// response would be storable as a 200, carries a strong entity tag (only parts with the same
    /// strong validator combine, RFC 9110 section 15.3.7.3), and has no content coding (ranges
    /// count encoded bytes).
    package static func partStorable(status: Int, headers: HTTPHeaders, request: CacheRequest, received: Int) -> PartialLayout? {
        guard status == 206 || status == 200, received > 0, !headers.contains("Content-Encoding"),
              let tag = headers["ETag"], !Substring(tag).trimmingSpaces.hasPrefix("W/"),
              isStorable(status: 200, headers: headers, directives: CacheDirectives(headers), request: request) else { return nil }
        if status == 206 {
            guard request.range != nil, headers.values(for: "Content-Range").count == 1,
                  let part = headers["Content-Range"].flatMap(ContentRange.init),
                  let first = part.first, let last = part.last, let complete = part.complete,
                  last - first + 1 == UInt64(received) else { return nil }
            return .single(received, at: first, of: complete)
        }
        guard let length = headers["Content-Length"].flatMap({ ByteClass.decimal(Substring($0).trimmingSpaces) }),
              UInt64(received) < length else { return nil }
        return .single(received, at: 0, of: length)
    }

    /// Whether a range of `stored` can be cut from its body: stored parts, or a whole 200 whose
    /// body is the representation's bytes as sent (a content-coded body, kept decoded or not,
    /// counts other bytes than the ranges of the representation the origin would send).
    package static func answersRanges(_ stored: StoredResponse) -> Bool {
        if stored.partial != nil { return true }
        return stored.status == 200 && !stored.bodyDecoded && !stored.headers.contains("Content-Encoding")
    }
}
