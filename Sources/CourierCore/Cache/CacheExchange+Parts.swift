/// Partial responses (RFC 9111 sections 3.3 and 3.4): a request for one byte range answered from
/// a stored response or from stored parts, and the parts the origin sends kept and combined.
extension CacheExchange {
    // MARK: Before submission (the caller's thread)

    /// A GET for one byte range: answered with a 206 from storage when a stored 200, or the
    /// stored parts of one, hold the whole range and the rules let it be used without the origin;
    /// otherwise it goes to the origin as the caller wrote it (no validators: a 304 could not
    /// answer a part), and what comes back is kept (`transferEnded`).
    static func beginPart(_ transfer: Transfer, cache: ResponseCache, range: ByteRangeRequest, found: (StoredResponse, ResponseCache.Tier)?,
                          request: CacheRequest, policy: CachePolicy, now: Int64, keyHash: UInt64) -> Bool {
        let stored = found.flatMap { CacheRules.answersRanges($0.0) ? $0.0 : nil }
        // Served only as the protocol allows (fresh, or stale where the request or policy
        // accepts it); previews and background revalidation are for whole responses.
        if let stored, case .serve(let stale, revalidateInBackground: false) = CacheRules.decide(stored: stored, request: request, policy: policy, now: now),
           let wanted = range.resolve(length: stored.partial?.completeLength ?? UInt64(stored.body.count)),
           let part = stored.servedPart(wanted, now: now) {
            transfer._cacheExchange = CacheExchange(cache: cache, request: request, policy: policy,
                                                    decision: .serve(stale: stale, revalidateInBackground: false),
                                                    stored: stored, requestTime: now, keyHash: keyHash)
            cache.count(.hit(found!.1, stale: stale))
            transfer.answerFromCache(part.head, body: part.body, phase: .cached(stale: stale))
            return true
        }
        let mayNotAsk = request.directives.onlyIfCached || policy == .cacheOnly
        transfer._cacheExchange = CacheExchange(cache: cache, request: request, policy: policy, decision: mayNotAsk ? .gatewayTimeout : .fetch,
                                                stored: nil, requestTime: now, keyHash: keyHash)
        cache.count(.miss)
        guard mayNotAsk else { return false }
        cache.count(.generated)
        transfer.answerFromCache(CacheRules.gatewayTimeoutHead(now: now), body: [], phase: .generated)
        return true
    }

    // MARK: Ending (loop thread)

    /// Keeps the part of the representation `transfer` received (a 206 to a range request, or
    /// the first bytes of a 200 cut short), combined with the parts already stored when they
    /// share its strong entity tag (section 3.4, with the new response's header fields, section
    /// 3.2); parts that make the whole are stored as the complete 200.
    func storePart(_ transfer: Transfer, _ head: ResponseHead) {
        guard let body = keptBody(transfer), body.count <= cache.configuration.maxEntryBytes,
              let part = CacheRules.partStorable(status: head.status, headers: head.headers, request: request, received: body.count),
              let varyNames = CacheRules.varyNames(head.headers) else { return }
        let authorization = request.authorization
        let variant: ([String]) -> String = { names in
            CacheKey.variant(names: names, authorization: authorization) { transfer.requestValue($0) }
        }
        let key = CacheKey.primary(transfer.url)
        var fields = CacheRules.storedFields(head.headers, directives: CacheDirectives(head.headers))
        for name in ["Content-Range", "Content-Length"] where fields.contains(name) { fields.remove(name: name) }
        let tag = head.headers["ETag"]
        var layout = part
        var bytes = body
        if let (existing, _) = cache.find(key, variantKey: variant), existing.etag == tag, CacheRules.answersRanges(existing) {
            guard let stored = existing.partial else {
                // The whole of this representation is stored already: the part vouches for it,
                // and its fields update the stored ones (section 3.2), times included.
                cache.store(existing.freshened(headers: CacheRules.updatedFields(existing.headers, with: fields),
                                               requestTime: requestTime, responseTime: cache.now))
                return
            }
            if stored.completeLength == part.completeLength {
                (layout, bytes) = stored.adding(body[...], at: part.spans[0].start, to: existing.body)
                fields = CacheRules.updatedFields(existing.headers, with: fields)
            }
        }
        // Otherwise the part starts the stored parts afresh (another representation, or nothing
        // of this one that parts can join).
        guard bytes.count <= cache.configuration.maxEntryBytes else { return }
        let version: UInt8 = head.versionMajor == 2 ? 2 : head.versionMinor
        let variantKey = variant(varyNames)
        if layout.isComplete {
            fields.add(name: "Content-Length", value: String(layout.completeLength))
            cache.store(StoredResponse(key: key, varyNames: varyNames, variantKey: variantKey, status: 200, version: version,
                                       reason: "OK", headers: fields, body: bytes, requestTime: requestTime,
                                       responseTime: cache.now, bodyDecoded: false))
        } else {
            cache.store(StoredResponse(key: key, varyNames: varyNames, variantKey: variantKey, status: 206, version: version,
                                       reason: "Partial Content", headers: fields, body: bytes, requestTime: requestTime,
                                       responseTime: cache.now, bodyDecoded: false, partial: layout))
        }
    }
}
