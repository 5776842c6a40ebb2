/// One transfer's business with its cache, from the lookup before it is submitted to what it
/// leaves in the cache when it ends.
///
/// The decisions are elsewhere: `CacheRules` (RFC 9111, pure) decides what to do with a stored
/// response, `TransferStateMachine` decides how a validation ends (304, stale-if-error, a
/// generated 504). This type carries them out on the transfer: it answers from storage, adds the
/// validators, lays a stored or generated response into the transfer's result, and stores,
/// freshens or invalidates when the transfer is done.
package final class CacheExchange: @unchecked Sendable {
    package let cache: ResponseCache
    package let request: CacheRequest
    package let policy: CachePolicy
    package let decision: CacheDecision
    /// The stored response the decision is about (validated, previewed, or nil).
    package let stored: StoredResponse?
    /// When the lookup ran: the exchange's request_time for the age calculation (section 4.2.3),
    /// a little early, which only makes ages larger.
    package let requestTime: Int64
    /// `CacheKey.Request.hash` of the target (0 when the request never reads the cache): the
    /// coalescing signature reuses it.
    package let keyHash: UInt64
    /// A copy of the body for sinks that keep none (files, streams), when the response may be
    /// stored; nil when not collecting (or when it grew past the entry limit).
    @exclusivity(unchecked) var tee: [UInt8]?
    /// Whether what the transfer receives may be stored (a coalesced follower's leader stores).
    @exclusivity(unchecked) package var mayStore: Bool

    init(cache: ResponseCache, request: CacheRequest, policy: CachePolicy, decision: CacheDecision,
                 stored: StoredResponse?, requestTime: Int64, keyHash: UInt64 = 0) {
        self.cache = cache
        self.keyHash = keyHash
        self.request = request
        self.policy = policy
        self.decision = decision
        self.stored = stored
        self.requestTime = requestTime
        mayStore = !request.directives.noStore
    }

    /// What `-w '%{cache_status}'` prints for a finished transfer.
    package static func statusWord(of transfer: Transfer) -> String {
        guard let exchange = transfer._cacheExchange else { return "bypass" }
        switch exchange.decision {
        case .bypass: return "bypass"
        case .fetch where exchange.policy == .reload: return "bypass"
        case .fetch, .serve, .validate, .previewThenValidate, .gatewayTimeout: break
        }
        switch transfer._cachePhase {
        case .cached(let stale): return stale ? "stale" : "hit"
        case .staleOnError: return "stale"
        case .notModified: return "revalidated"
        case .fresh, .generated: return "miss"
        }
    }

    // MARK: Before submission (the caller's thread)

    /// Consults `cache` for `transfer`: answers it from storage (true: the transfer has ended),
    /// or prepares it for the network (false: submit it), delivering a cached-then-fresh
    /// preview first.
    package static func begin(_ transfer: Transfer, cache: ResponseCache) -> Bool {
        // A request that cannot be sent is refused by the loop, never answered from storage.
        guard Admission.check(transfer) == nil else { return false }
        let request = CacheRequest(method: transfer._method, headers: transfer._headers)
        let policy = transfer._options.cachePolicy
        let now = cache.now
        guard request.readsCache else {
            // Unsafe methods are followed to invalidate what they change (section 4.4).
            if !transfer._method.isSafe {
                transfer._cacheExchange = CacheExchange(cache: cache, request: request, policy: policy, decision: .bypass,
                                                        stored: nil, requestTime: now)
            }
            return false
        }
        let key = CacheKey.Request(authority: transfer._authority, path: transfer._path, query: transfer._query)
        var found: (StoredResponse, ResponseCache.Tier)?
        if policy != .reload {
            found = cache.find(key.hash, key: { key.string }) { names in
                CacheKey.variant(names: names, authorization: request.authorization) { transfer.requestValue($0) }
            }
            // A body decoded for one request cannot answer one that wants it encoded, or the reverse.
            if let (response, _) = found, response.bodyDecoded != transfer._options.decompress,
               response.headers.contains("Content-Encoding") {
                found = nil
            }
        }
        if let range = request.range {
            return beginPart(transfer, cache: cache, range: range, found: found, request: request, policy: policy, now: now, keyHash: key.hash)
        }
        // A part is no answer to a request for the whole (section 3.3).
        if found?.0.partial != nil { found = nil }
        let stored = found?.0
        let decision = CacheRules.decide(stored: stored, request: request, policy: policy, now: now)
        let exchange = CacheExchange(cache: cache, request: request, policy: policy, decision: decision, stored: stored,
                                     requestTime: now, keyHash: key.hash)
        transfer._cacheExchange = exchange
        switch decision {
        case .bypass, .fetch:
            cache.count(.miss)
            return false
        case .serve(let stale, let revalidateInBackground):
            cache.count(.hit(found!.1, stale: stale))
            transfer.answerFromCache(stored!.servedHead(now: now), body: stored!.body, phase: .cached(stale: stale))
            if revalidateInBackground { exchange.revalidateInBackground(transfer) }
            return true
        case .validate(let staleOnError):
            cache.count(.revalidation)
            exchange.addValidators(to: transfer, staleOnError: staleOnError)
            return false
        case .previewThenValidate(let staleOnError):
            let stale = !stored!.isFresh(now: now)
            cache.count(.hit(found!.1, stale: stale))
            cache.count(.revalidation)
            let preview = Transfer.finished(url: transfer.url, head: stored!.servedHead(now: now),
                                            body: transfer._method == .head ? [] : stored!.body,
                                            trailers: HTTPHeaders(), metrics: TransferMetrics())
            preview._cachePhase = .cached(stale: stale)
            preview._isPreview = true
            transfer._delegate?.transferDidDeliverPreview(transfer, preview: preview)
            exchange.addValidators(to: transfer, staleOnError: staleOnError)
            return false
        case .gatewayTimeout:
            cache.count(.miss)
            cache.count(.generated)
            transfer.answerFromCache(CacheRules.gatewayTimeoutHead(now: now), body: [], phase: .generated)
            return true
        }
    }

    /// The stored response's validators go on the request; the machine learns its role.
    private func addValidators(to transfer: Transfer, staleOnError: Bool) {
        let validators = stored.map(CacheRules.conditionalFields) ?? []
        for field in validators { transfer._headers.add(name: field.name, value: field.value) }
        transfer.machine.validates(conditional: !validators.isEmpty, staleOnError: staleOnError)
    }

    /// stale-while-revalidate (RFC 5861): the caller has the stale response; a request of the
    /// cache's own, which nobody waits for, brings the stored one up to date.
    private func revalidateInBackground(_ transfer: Transfer) {
        guard let stored else { return }
        let background = Transfer(authority: transfer._authority, path: transfer._path, query: transfer._query, method: .get,
                                  headers: transfer._headers, body: .empty, options: transfer._options)
        let exchange = CacheExchange(cache: cache, request: request, policy: .useProtocol, decision: .validate(staleOnError: false),
                                     stored: stored, requestTime: cache.now, keyHash: keyHash)
        background._cacheExchange = exchange
        cache.count(.revalidation)
        exchange.addValidators(to: background, staleOnError: false)
        Runtime.shared.submit(background)
    }

    /// Takes the validators back off (the origin's 304 was about another response).
    package func removeValidators(from transfer: Transfer) {
        for name in ["If-None-Match", "If-Modified-Since"] where transfer._headers.contains(name) {
            transfer._headers.remove(name: name)
        }
    }

    // MARK: During the exchange (loop thread)

    /// Whether `head`, a final head, is a 304 about the stored response being validated (RFC 9111
    /// section 4.3.4): the transfer's machine then lets the stored response answer.
    package func updateSelectsStored(_ head: borrowing ResponseHead) -> Bool {
        head.status == 304 && stored.map { CacheRules.updateSelects($0, headers: head.headers) } ?? false
    }

    /// The final head's body will be delivered: for a sink that keeps no body, collect a copy for
    /// storing when the response may be stored.
    package func prepareToStore(_ transfer: Transfer, _ head: borrowing ResponseHead, contentLength: UInt64?) {
        tee = nil
        switch transfer._sink {
        case .file, .stream, .fanOut:
            if mayStore, transfer._method == .get, (contentLength ?? 0) <= UInt64(cache.configuration.maxEntryBytes),
               isStorable(head.status, head.headers) || (head.status == 206 && request.range != nil) {
                tee = []
            }
        case .memory, .discard, .destination, .resumable:
            break
        }
    }

    /// Body bytes delivered to a sink that keeps none.
    package func collect(_ bytes: UnsafeRawBufferPointer) {
        guard tee != nil else { return }
        if tee!.count + bytes.count > cache.configuration.maxEntryBytes {
            tee = nil
        } else {
            tee!.append(contentsOf: bytes.bindMemory(to: UInt8.self))
        }
    }

    // MARK: Ending (loop thread)

    /// Lays the stored response into the transfer as its result (`.notModified`: freshened by the
    /// 304 in hand, and stored so; `.staleOnError`: as it is). nil, or why it could not be
    /// delivered (a file that could not be rewritten, a stream that already had bytes).
    package func answerWithStored(_ transfer: Transfer, phase: CachePhase) -> CourierError? {
        guard var response = stored else { preconditionFailure("a stored answer without a stored response") }
        let now = cache.now
        if phase == .notModified, let update = transfer._head {
            cache.count(.notModified)
            response = response.freshened(headers: CacheRules.updatedFields(response.headers, with: update.headers),
                                          requestTime: requestTime, responseTime: now)
            cache.store(response)
        } else {
            cache.count(.staleServed)
        }
        return transfer.replaceResponse(with: response.servedHead(now: now), body: response.body, phase: phase)
    }

    /// Lays a generated 504 into the transfer as its result.
    package func answerWithGatewayTimeout(_ transfer: Transfer) -> CourierError? {
        cache.count(.generated)
        return transfer.replaceResponse(with: CacheRules.gatewayTimeoutHead(now: cache.now), body: [], phase: .generated)
    }

    /// The transfer is done (before its delegate hears): store what it fetched, freshen the
    /// stored GET response with a HEAD response (section 4.3.5), or invalidate what an unsafe
    /// request changed (section 4.4).
    package func transferEnded(_ transfer: Transfer, _ error: CourierError?) {
        defer { tee = nil }
        guard transfer._status != 0, transfer._cachePhase == .fresh, let head = transfer._head else { return }
        let method = transfer._method
        if error != nil {
            // A 200 cut short: its first part may be kept (section 3.3).
            if head.status == 200, method == .get, mayStore { storePart(transfer, head) }
            return
        }
        if CacheRules.invalidates(method: method, status: head.status) {
            cache.remove(CacheRules.invalidatedKeys(url: transfer.url, headers: head.headers))
            return
        }
        if method == .head {
            freshenWithHead(transfer, head)
            return
        }
        guard method == .get, mayStore else { return }
        if head.status == 206 {
            storePart(transfer, head)
            return
        }
        let directives = CacheDirectives(head.headers)
        guard isStorable(head.status, head.headers, directives) else {
            // An origin that now says no-store wants the old response gone too.
            if directives.noStore, stored != nil { cache.remove([CacheKey.primary(transfer.url)]) }
            return
        }
        guard let body = keptBody(transfer) else { return }
        guard body.count <= cache.configuration.maxEntryBytes, let varyNames = CacheRules.varyNames(head.headers) else { return }
        let variantKey = CacheKey.variant(names: varyNames, authorization: request.authorization) { transfer.requestValue($0) }
        let response = StoredResponse(key: CacheKey.primary(transfer.url), varyNames: varyNames, variantKey: variantKey,
                                      status: head.status, version: head.versionMajor == 2 ? 2 : head.versionMinor, reason: head.reason,
                                      headers: CacheRules.storedFields(head.headers, directives: directives), body: body,
                                      requestTime: requestTime, responseTime: cache.now,
                                      bodyDecoded: transfer._options.decompress && head.headers.contains("Content-Encoding"))
        cache.store(response)
    }

    /// The body as delivered, when the sink kept it or a copy was collected.
    func keptBody(_ transfer: Transfer) -> [UInt8]? {
        switch transfer._sink {
        case .memory: return transfer._responseBody
        case .discard, .destination, .resumable: return nil
        case .file, .stream, .fanOut: return tee
        }
    }

    private func isStorable(_ status: Int, _ headers: HTTPHeaders,
                            _ directives: CacheDirectives? = nil) -> Bool {
        CacheRules.isStorable(status: status, headers: headers, directives: directives ?? CacheDirectives(headers), request: request)
    }

    private func freshenWithHead(_ transfer: Transfer, _ head: ResponseHead) {
        guard head.status == 200 else { return }
        // The stored GET response this HEAD is about (looked up now when the request did not).
        let authorization = request.authorization
        let variant: ([String]) -> String = { names in
            CacheKey.variant(names: names, authorization: authorization) { transfer.requestValue($0) }
        }
        guard let stored = stored ?? cache.find(CacheKey.primary(transfer.url), variantKey: variant)?.0 else { return }
        if CacheRules.headContradicts(stored, headers: head.headers) {
            cache.remove([stored.key])
        } else {
            cache.store(stored.freshened(headers: CacheRules.updatedFields(stored.headers, with: head.headers),
                                         requestTime: requestTime, responseTime: cache.now))
        }
    }
}

extension Transfer {
    /// The value the request sends for header field `name` (lower-cased), for Vary: its own
    /// field lines combined, or what the core adds itself (Accept-Encoding when decoding).
    package func requestValue(_ name: String) -> String? {
        if let value = _headers.combinedValue(for: name) { return value }
        if name == "accept-encoding", _options.decompress { return ContentDecoder.acceptEncoding }
        return nil
    }

    /// Ends a transfer the cache answered before it was submitted (caller's thread).
    func answerFromCache(_ head: ResponseHead, body: [UInt8], phase: CachePhase) {
        let now = monotonicNanos()
        metrics.enqueuedAt = now
        metrics.startedAt = now
        let error = replaceResponse(with: head, body: body, phase: phase)
        switch machine.answeredByCache() {
        case .finish(nil, releasing: .nothing):
            _concludedOffLoop = true
            conclude(error)
        case let unexpected:
            preconditionFailure("a cache answer did not finish the transfer: \(unexpected)")
        }
    }

    /// Makes `head` and `body` the transfer's response, as if they had arrived: the head is
    /// reported, the body goes to the sink (a HEAD request gets none).
    func replaceResponse(with head: ResponseHead, body: [UInt8], phase: CachePhase) -> CourierError? {
        _cachePhase = phase
        discardsBody = false
        contentDecoder = nil
        trailers = HTTPHeaders()
        status = head.status
        _head = head
        let deliversBody = _method != .head
        expectedBodyLength = deliversBody ? UInt64(body.count) : 0
        if reportsHead { delegate?.transferDidReceiveHead(self) }
        var error: CourierError?
        switch _sink {
        case .memory:
            responseBody = deliversBody ? body : []
        case .discard:
            break
        case .file(let file):
            error = file.rewind()
            if error == nil, deliversBody { error = body.withUnsafeBytes { file.write($0) } }
        case .stream(let sink):
            // Delivered whole (it is in memory already); a pause after it changes nothing.
            if metrics.bodyBytesDecoded > 0 {
                error = CourierError(.cancelled, "the stored response cannot replace bytes a stream already received")
            } else if deliversBody, !body.isEmpty {
                switch body.withUnsafeBytes({ sink.deliver($0) }) {
                case .proceed, .pause: break
                case .stop: error = CourierError(.cancelled, "the body handler stopped the transfer")
                case .fail(let failure): error = failure
                }
            }
        case .fanOut(let fan):
            if metrics.bodyBytesDecoded > 0 {
                error = CourierError(.cancelled, "the stored response cannot replace bytes a stream already received")
            } else if let failure = fan.rewind() {
                error = failure
            } else if deliversBody, !body.isEmpty {
                switch body.withUnsafeBytes({ fan.deliver($0) }) {
                case .success(.stop): error = CourierError(.cancelled, "the body handler stopped the transfer")
                case .success(.fail(let failure)): error = failure
                case .success: break
                case .failure(let failure): error = failure
                }
            }
        case .destination(let choose):
            switch Self.destinationSink(choose.choose(head)) {
            case .success(let sink):
                _sink = sink
                if case .file(let file) = sink {
                    if deliversBody { error = body.withUnsafeBytes { file.write($0) } }
                } else {
                    responseBody = deliversBody ? body : []
                }
            case .failure(let failure):
                error = failure
            }
        case .resumable(let download):
            // A stored copy is whole: it replaces whatever part is on disk.
            download.discardPartial()
            switch download.headArrived(status: 200, headers: head.headers, url: url.description) {
            case .failure(let failure): error = failure
            case .success: if deliversBody { error = body.withUnsafeBytes { download.write($0) } }
            }
        }
        metrics.bodyBytesDecoded = deliversBody ? UInt64(body.count) : 0
        return error
    }
}
