import Synchronization

/// One response as the cache keeps it: immutable, shared by the memory tier, the disk writer and
/// every transfer it answers.
///
/// What is stored is what the caller was given: the status line, the header fields as received
/// minus those RFC 9111 section 3.1 leaves out (and the fields a qualified no-cache names), and the
/// body as delivered (decoded from its content coding when the request asked for that, `bodyDecoded`).
/// The times are wall-clock epoch seconds of the exchange that produced (or last validated) it.
/// Everything the freshness rules need is derived once here, so a lookup is arithmetic.
package final class StoredResponse: @unchecked Sendable {
    /// The primary cache key: the target URI without credentials or fragment.
    package let key: String
    /// `CacheKey.stableHash(key)`: the memory tier's index and the disk tier's file name.
    package let keyHash: UInt64
    /// The field names Vary lists, lower-cased, without duplicates (empty: none).
    package let varyNames: [String]
    /// The request's values of `varyNames` (and of Authorization), normalised (`CacheKey.variant`).
    package let variantKey: String
    package let status: Int
    /// The HTTP version it came over: 0 for HTTP/1.0, 1 for HTTP/1.1, 2 for HTTP/2 (the cache
    /// file's byte, which once held only the minor version).
    package let version: UInt8
    package let reason: String
    package let headers: HTTPHeaders
    package let body: [UInt8]
    /// When the request that produced it was sent, and when its response arrived.
    package let requestTime: Int64
    package let responseTime: Int64
    /// The body was content-decoded (Content-Encoding present, and the request asked for decoding).
    package let bodyDecoded: Bool
    /// For a partial response (status 206, sections 3.3 and 3.4): which parts of the
    /// representation `body` holds. Nil for a complete response.
    package let partial: PartialLayout?

    // Derived.
    package let directives: CacheDirectives
    /// Seconds the response is fresh for, from its own headers (section 4.2.1, 4.2.2).
    package let freshnessLifetime: Int64
    /// The age it had when it arrived (section 4.2.3's corrected_initial_age).
    package let correctedInitialAge: Int64
    package let etag: String?
    package let lastModified: String?
    /// The last head served and the age it carries (hits are served from several threads).
    private let lastServed = Mutex<(age: Int64, head: ResponseHead?)>((-1, nil))

    package init(key: String, varyNames: [String], variantKey: String, status: Int, version: UInt8, reason: String,
                 headers: HTTPHeaders, body: [UInt8], requestTime: Int64, responseTime: Int64, bodyDecoded: Bool,
                partial: PartialLayout? = nil) {
        self.key = key
        keyHash = CacheKey.stableHash(key)
        self.varyNames = varyNames
        self.variantKey = variantKey
        self.status = status
        self.version = version
        self.reason = reason
        self.headers = headers
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.bodyDecoded = bodyDecoded
        self.partial = partial
        let fields = CacheFields(headers)
        let directives = fields.cacheControl ? CacheDirectives(headers) : CacheDirectives()
        self.directives = directives
        etag = fields.etag
        lastModified = fields.lastModified
        freshnessLifetime = CacheRules.freshnessLifetime(status: status, fields: fields, directives: directives, responseTime: responseTime)
        correctedInitialAge = CacheRules.correctedInitialAge(fields: fields, requestTime: requestTime, responseTime: responseTime)
    }

    /// Seconds since it was generated or validated by the origin, at `now` (section 4.2.3).
    package func currentAge(now: Int64) -> Int64 {
        let resident = CacheRules.elapsed(from: responseTime, to: now)
        return min(correctedInitialAge + resident, CacheDirectives.deltaSecondsLimit)
    }

    /// Whether it is fresh at `now` (section 4.2).
    package func isFresh(now: Int64) -> Bool { freshnessLifetime > currentAge(now: now) }

    /// Seconds past its freshness lifetime at `now` (0 while fresh).
    package func staleness(now: Int64) -> Int64 { max(0, currentAge(now: now) - freshnessLifetime) }

    /// Whether any validator lets it be revalidated with a conditional request.
    package var hasValidator: Bool { etag != nil || lastModified != nil }

    /// Whether it may never be served without a successful validation first: response no-cache, or
    /// stale under must-revalidate (section 5.2.2.2, 5.2.2.4).
    package var forbidsStaleUse: Bool { directives.noCache || directives.mustRevalidate }

    /// What it costs to keep in memory, for the memory tier's byte budget.
    package var memoryCost: Int { body.count + headers.storage.count + headers.fields.count * 16 + key.utf8.count + variantKey.utf8.count + 160 }

    /// The head a stored response is served with: its own fields, with `Age` replaced by the
    /// current age (section 4, "the cache MUST generate an Age header field").
    package func servedHead(now: Int64) -> ResponseHead {
        let age = currentAge(now: now)
        // Hits within one second share the head they are served with: building it allocates
        // the header storage and field list again.
        if let head = lastServed.withLock({ $0.age == age ? $0.head : nil }) { return head }
        var served = headers
        if served.contains("Age") { served.remove(name: "Age") }
        served.add(name: "Age", value: String(age))
        let head = makeHead(served)
        lastServed.withLock { $0 = (age, head) }
        return head
    }

    /// The head as stored, without a generated Age (a response just validated by the origin).
    package var storedHead: ResponseHead { makeHead(headers) }

    /// A head with these fields, in the version the response came over.
    private func makeHead(_ fields: HTTPHeaders) -> ResponseHead {
        var head = ResponseHead(status: status, versionMinor: version == 2 ? 0 : version, reason: reason, headers: fields)
        if version == 2 { head.versionMajor = 2 }
        return head
    }

    /// The same response with the header fields and times of a validation that confirmed it.
    package func freshened(headers updated: HTTPHeaders, requestTime: Int64, responseTime: Int64) -> StoredResponse {
        StoredResponse(key: key, varyNames: varyNames, variantKey: variantKey, status: status, version: version,
                       reason: reason, headers: updated, body: body, requestTime: requestTime, responseTime: responseTime,
                       bodyDecoded: bodyDecoded, partial: partial)
    }

    /// A 206 serving `range` of the representation from storage (section 3.3: a part is only ever
    /// sent marked as one): the stored fields with Content-Range and Content-Length for the part,
    /// and the current Age. Nil when the stored bytes do not hold all of `range`.
    package func servedPart(_ range: Range<UInt64>, now: Int64) -> (head: ResponseHead, body: [UInt8])? {
        let bytes: ArraySlice<UInt8>
        let completeLength: UInt64
        if let partial {
            guard let part = partial.bytes(range, of: body) else { return nil }
            bytes = part
            completeLength = partial.completeLength
        } else {
            guard range.upperBound <= UInt64(body.count) else { return nil }
            bytes = body[Int(range.lowerBound)..<Int(range.upperBound)]
            completeLength = UInt64(body.count)
        }
        var fields = headers
        for name in ["Age", "Content-Length", "Content-Range"] where fields.contains(name) { fields.remove(name: name) }
        fields.add(name: "Content-Range", value: "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(completeLength)")
        fields.add(name: "Content-Length", value: String(bytes.count))
        fields.add(name: "Age", value: String(currentAge(now: now)))
        var head = ResponseHead(status: 206, versionMinor: version == 2 ? 0 : version, reason: "Partial Content", headers: fields)
        if version == 2 { head.versionMajor = 2 }
        return (head, Array(bytes))
    }
}
