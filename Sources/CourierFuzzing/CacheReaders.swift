import CourierCore

/// Fuzz target: cache files. The disk tier reads files any process (or a crash, or a full disk)
/// may have left in the directory, so decoding must refuse what the cache did not write and never
/// trap; what it accepts must be a response the cache can serve and write back unchanged.
///
/// The first input byte picks the mode: even bytes decode the rest as a whole file, odd bytes
/// frame the rest first (magic, version, lengths that fit, a valid checksum) so the fuzzer spends
/// its time in the metadata reader rather than in front of the CRC.
package enum CacheFileReading {
    package static func run(_ input: UnsafeRawBufferPointer) {
        guard let mode = input.first else { return }
        let rest = Array(input.dropFirst())
        let file = mode & 1 == 0 ? rest : framed(rest, kind: mode & 2 == 0 ? .response : .varyIndex)
        guard let contents = CacheFileFormat.decode(file) else { return }
        switch contents {
        case .response(let stored):
            exercise(stored)
            let again = CacheFileFormat.encode(stored)
            precondition(again == file, "a decoded response does not encode back to its file")
        case .varyIndex(let index):
            precondition(CacheFileFormat.encode(index) == file, "a decoded vary index does not encode back to its file")
        }
    }

    /// Files as the cache writes them (a plain response, one with Vary and validators, a vary
    /// index), each whole and framed, with the mode byte in front.
    package static func seeds() -> [[UInt8]] {
        let plain = StoredResponse(key: "http://example.com/a", varyNames: [], variantKey: "", status: 200, version: 1,
                                   reason: "OK", headers: ["Cache-Control": "max-age=60", "Content-Length": "5"],
                                   body: Array("hello".utf8), requestTime: 1_700_000_000, responseTime: 1_700_000_001, bodyDecoded: false)
        let varied = StoredResponse(key: "https://example.com/b?q=1", varyNames: ["accept-encoding"], variantKey: "gzip",
                                    status: 404, version: 0, reason: "Not Found",
                                    headers: HTTPHeaders([("ETag", "\"v1\""), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
                                                          ("Vary", "Accept-Encoding"), ("Age", "30"), ("Date", "Sun, 06 Nov 1994 08:49:40 GMT")]),
                                    body: [0, 1, 2, 255], requestTime: 784_111_777, responseTime: 784_111_780, bodyDecoded: true)
        let index = CacheFileFormat.VaryIndex(key: "http://example.com/c", names: ["accept-language", "cookie"], nonce: 42)
        let parts = StoredResponse(key: "http://example.com/d", varyNames: [], variantKey: "", status: 206, version: 2,
                                   reason: "Partial Content", headers: HTTPHeaders([("ETag", "\"p\""), ("Cache-Control", "max-age=60")]),
                                   body: Array("0123abc".utf8), requestTime: 1_700_000_000, responseTime: 1_700_000_001, bodyDecoded: false,
                                   partial: PartialLayout(completeLength: 20, spans: [.init(start: 0, length: 4), .init(start: 10, length: 3)]))
        var seeds: [[UInt8]] = []
        for file in [CacheFileFormat.encode(plain), CacheFileFormat.encode(varied), CacheFileFormat.encode(index), CacheFileFormat.encode(parts)] {
            seeds.append([0] + file)
            // Framed: the metadata and body of the same file, its length split in front.
            let metaLength = Int(file[8]) | Int(file[9]) << 8
            let content = Array(file[CacheFileFormat.fixedLength..<(file.count - CacheFileFormat.trailerLength)])
            seeds.append([file[4] == CacheFileFormat.Kind.response.rawValue ? 1 : 3, UInt8(metaLength & 0xff), UInt8(metaLength >> 8)] + content)
        }
        return seeds
    }

    /// A file around `payload`: its first two bytes (when present) choose how much of the rest is
    /// metadata, the remainder is the body.
    static func framed(_ payload: [UInt8], kind: CacheFileFormat.Kind) -> [UInt8] {
        let split = payload.count >= 2 ? Int(payload[0]) | Int(payload[1]) << 8 : 0
        let content = Array(payload.dropFirst(min(2, payload.count)))
        let metaLength = min(split, content.count)
        var file = CacheFileFormat.magic + [kind.rawValue, CacheFileFormat.version, 0, 0]
        file += littleEndian(UInt64(metaLength), bytes: 4) + littleEndian(UInt64(content.count - metaLength), bytes: 8)
        file += content
        file += littleEndian(UInt64(CacheFileFormat.checksum(file[...])), bytes: 4)
        return file
    }

    private static func littleEndian(_ value: UInt64, bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// Everything the cache does with a stored response, at times around its own and at the ends
    /// of the clock: none of it may trap, and the arithmetic keeps its promises.
    static func exercise(_ stored: StoredResponse) {
        precondition(stored.freshnessLifetime >= 0 && stored.correctedInitialAge >= 0, "a negative age or lifetime")
        let request = CacheRequest(method: .get, headers: HTTPHeaders())
        for now in [stored.responseTime, stored.responseTime &+ 1, stored.responseTime &+ 86_400, 0, Int64.max, Int64.min] {
            let age = stored.currentAge(now: now)
            precondition(age >= 0 && age <= CacheDirectives.deltaSecondsLimit, "age \(age) out of range")
            precondition(stored.staleness(now: now) >= 0, "negative staleness")
            _ = stored.isFresh(now: now)
            let head = stored.servedHead(now: now)
            precondition(head.headers.values(for: "Age").count == 1, "a served head needs exactly one Age")
            for policy in CachePolicy.allCases { _ = CacheRules.decide(stored: stored, request: request, policy: policy, now: now) }
        }
        _ = CacheRules.conditionalFields(for: stored)
        if let partial = stored.partial {
            // Every range at a span's edges is served from its bytes or refused, never sliced wrong.
            for span in partial.spans {
                let bounds = [(span.start, span.end), (span.start, span.end &+ 1), (span.start &+ 1, span.end)]
                for (lower, upper) in bounds where lower < upper {
                    let range = lower..<upper
                    if let part = stored.servedPart(range, now: stored.responseTime) {
                        precondition(UInt64(part.body.count) == range.count && part.head.status == 206, "a served part of the wrong length")
                    }
                }
            }
        }
        _ = stored.freshened(headers: stored.headers, requestTime: stored.requestTime, responseTime: stored.responseTime)
    }
}

/// Fuzz target: the cache's reading of response and request header fields (Cache-Control, Date,
/// Expires, Last-Modified, Age, Vary, ETag) and every rule built on them, from an arbitrary head.
///
/// The input is text: a first line with a status code and two clock readings, then header lines
/// ("name: value"); lines after an empty one are the request's. Checked: directive values stay in
/// RFC 9111's delta-seconds range, every date that parses formats and parses back to the same
/// second, lifetimes and ages are never negative, and nothing traps whatever the fields or clocks.
package enum CacheFieldReading {
    package static func run(_ input: UnsafeRawBufferPointer) {
        let lines = input.split(separator: 0x0A, omittingEmptySubsequences: false).prefix(40)
        guard let first = lines.first else { return }
        let numbers = first.split(separator: UInt8(ascii: " ")).map { Int64(decimal: $0) }
        let status = Int(numbers.first.flatMap { $0 } ?? 200)
        guard (100...999).contains(status) else { return }
        let requestTime = numbers.count > 1 ? numbers[1] ?? 0 : 0
        let responseTime = numbers.count > 2 ? numbers[2] ?? requestTime : requestTime
        var response = HTTPHeaders()
        var requestFields = HTTPHeaders()
        var inRequest = false
        for line in lines.dropFirst() {
            if line.isEmpty { inRequest = true; continue }
            let parts = line.split(separator: UInt8(ascii: ":"), maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(decoding: parts[0], as: UTF8.self)
            let value = parts.count > 1 ? String(decoding: parts[1], as: UTF8.self) : ""
            if inRequest { requestFields.add(name: name, value: value) } else { response.add(name: name, value: value) }
        }
        guard response.firstInvalidField() == nil, requestFields.firstInvalidField() == nil else { return }

        let directives = CacheDirectives(response)
        checkRange(directives)
        for field in response where ["date", "expires", "last-modified"].contains(field.name.lowercased()) {
            checkDate(field.value, now: responseTime)
        }
        let lifetime = CacheRules.freshnessLifetime(status: status, headers: response, directives: directives, responseTime: responseTime)
        precondition(lifetime >= 0, "negative freshness lifetime \(lifetime)")
        let initialAge = CacheRules.correctedInitialAge(headers: response, requestTime: requestTime, responseTime: responseTime)
        precondition(initialAge >= 0 && initialAge <= CacheDirectives.deltaSecondsLimit, "initial age \(initialAge)")

        let request = CacheRequest(method: .get, headers: requestFields)
        checkRange(request.directives)
        _ = CacheRules.isStorable(status: status, headers: response, directives: directives, request: request)
        checkPart(status: status, response, request)
        _ = CacheRules.varyNames(response)
        let kept = CacheRules.storedFields(response, directives: directives)
        precondition(kept.firstInvalidField() == nil, "stored fields that could not be sent")
        let stored = StoredResponse(key: "http://h/", varyNames: [], variantKey: "", status: status, version: 1, reason: "R",
                                    headers: kept, body: [], requestTime: requestTime, responseTime: responseTime, bodyDecoded: false)
        CacheFileReading.exercise(stored)
        for policy in CachePolicy.allCases {
            for now in [responseTime, responseTime &+ lifetime, responseTime &+ 3_600] {
                _ = CacheRules.decide(stored: stored, request: request, policy: policy, now: now)
            }
        }
        // The same fields as a 304 or a HEAD answer about it.
        _ = CacheRules.updateSelects(stored, headers: requestFields)
        _ = CacheRules.headContradicts(stored, headers: requestFields)
        let merged = CacheRules.updatedFields(kept, with: requestFields)
        precondition(merged.firstInvalidField() == nil, "an update made fields that could not be sent")
        if let url = try? CourierURL(parsing: "http://h/p") { _ = CacheRules.invalidatedKeys(url: url, headers: response) }
        // The stored response survives the disk.
        let file = CacheFileFormat.encode(stored)
        guard case .response(let read)? = CacheFileFormat.decode(file) else { preconditionFailure("the cache cannot read its own file") }
        precondition(read.headers.count == kept.count && read.body == stored.body && read.freshnessLifetime == stored.freshnessLifetime,
                     "a response changed on its way through the disk")
    }

    /// A part the response would leave (sections 3.3, 3.4): a layout the cache could have
    /// written, which serves the ranges inside it and combines with another part of itself.
    private static func checkPart(status: Int, _ response: HTTPHeaders, _ request: CacheRequest) {
        for received in [1, 7, 4096] {
            guard let part = CacheRules.partStorable(status: status, headers: response, request: request, received: received) else { continue }
            let body = [UInt8](repeating: 0x61, count: received)
            precondition(part.isValid(bodyCount: received), "a part the cache could not have written")
            let start = part.spans[0].start
            precondition(part.bytes(start..<(start + UInt64(received)), of: body)?.count == received, "a stored part does not serve itself")
            let (combined, bytes) = part.adding(body[...], at: 0, to: body)
            precondition(combined.isValid(bodyCount: bytes.count), "combining made a layout the cache could not have written")
            if let range = request.range, let wanted = range.resolve(length: part.completeLength) { _ = part.bytes(wanted, of: body) }
        }
    }

    private static func checkRange(_ directives: CacheDirectives) {
        let limit = CacheDirectives.deltaSecondsLimit
        for value in [directives.maxAge, directives.sharedMaxAge, directives.staleWhileRevalidate, directives.staleIfError,
                      directives.minFresh] {
            if let value { precondition(value >= 0 && value <= limit, "delta-seconds \(value) out of range") }
        }
        if let maxStale = directives.maxStale { precondition(maxStale >= 0, "negative max-stale") }
    }

    private static func checkDate(_ text: String, now: Int64) {
        guard let seconds = HTTPDate.parse(text, now: now) else { return }
        let formatted = HTTPDate.format(seconds)
        precondition(HTTPDate.parse(formatted) == seconds, "\(text.debugDescription) -> \(formatted) does not parse back")
    }
}

private extension Int64 {
    /// Decimal digits (an optional leading minus) as a number; nil for anything else or overflow.
    init?(decimal bytes: ArraySlice<UInt8>) {
        var value: Int64 = 0
        var digits = bytes[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty else { return nil }
        for byte in digits {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(byte - 0x30))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        self = negative ? -value : value
    }
}
