/// A response head's arrival, carried out step by step as the transfer's machine decides (see
/// `TransferStateMachine+Head`), and what a request needs before it goes out on a connection.
extension Transfer {
    /// A response head arrived (a redirect's or the final one). `approval` is the carrier's
    /// owner, which holds the origin's retry budget. nil, or the error that ends the exchange.
    @inline(__always)
    func receiveHead(_ head: consuming ResponseHead, contentLength: UInt64?, nowMillis: UInt64, approval: RetryApproval) -> CourierError? {
        let action = machine.headArrived(TransferStateMachine.HeadFacts(status: head.status, flags: headFlags(head)))
        // (Most heads are delivered at once; the steps stay off their path.)
        guard case .deliver = action else {
            return carryOut(action, head: head, contentLength: contentLength, nowMillis: nowMillis, approval: approval)
        }
        return deliverHead(head, contentLength: contentLength)
    }

    /// Carries out the head's steps from `first` on, each answer leading to the next.
    @inline(never)
    private func carryOut(_ first: TransferStateMachine.HeadAction, head: consuming ResponseHead, contentLength: UInt64?,
                          nowMillis: UInt64, approval: RetryApproval) -> CourierError? {
        var action = first
        while true {
            switch action {
            case .deliver:
                return deliverHead(head, contentLength: contentLength)
            case .storeCookies:
                guard let jar = _options.cookies else { preconditionFailure("cookies to store without a jar") }
                jar.store(setCookie: head.headers.values(for: "Set-Cookie"), from: url)
                action = machine.cookiesStored()
            case .answerChallenge:
                action = machine.challengeAnswered(digestAnswer(to: head))
            case .judgeRedirect:
                action = machine.redirectJudged(RedirectDecision.decide(status: head.status, location: head.headers["Location"],
                                                                        current: url, method: _method, policy: _options.redirects,
                                                                        redirectsSoFar: metrics.redirects, hsts: _options.hsts))
            case .askAboutRedirect(var hop):
                let refusal = askAboutRedirect(status: head.status, &hop)
                action = machine.redirectAnswered(hop, refusal: refusal)
            case .weighStatusRetry:
                guard let input = retryInput(now: nowMillis, responseStarted: true) else { preconditionFailure("a status retry without a policy") }
                let retryAfter = RetryPolicy.retryAfter(head.headers["Retry-After"], now: HTTPDate.now())
                action = machine.statusRetryWeighed(input: input, retryAfter: retryAfter)
            case .askToRetry(let status, let wait):
                action = machine.statusRetryAnswered(approved: approval.approveStatusRetry(self, status: status), wait: wait, now: nowMillis)
            case .consultCache:
                guard let exchange = _cacheExchange else { preconditionFailure("a cache consulted without a cache exchange") }
                action = machine.cacheAnswered(updateSelectsStored: exchange.updateSelectsStored(head))
            case .prepareToStore:
                guard let exchange = _cacheExchange else { preconditionFailure("a store prepared without a cache exchange") }
                exchange.prepareToStore(self, head, contentLength: contentLength)
                action = machine.storePrepared()
            case .consultSink:
                action = machine.sinkAnswered(sinkSawHead(head))
            case .dropBody(let reason):
                dropBody(head, because: reason)
                return nil
            case .fail(let error, let keepsHead):
                // A redirect the rules refuse still leaves its head as the last response received,
                // as curl reports it (-w %{http_code}, %{redirect_url}).
                if keepsHead {
                    status = head.status
                    _head = consume head
                }
                return error
            }
        }
    }

    /// What the machine weighs about a head with `status`, read from the options and the sink.
    @inline(__always)
    private func headFlags(_ head: borrowing ResponseHead) -> TransferStateMachine.HeadFacts.Flags {
        let status = head.status
        var flags: TransferStateMachine.HeadFacts.Flags = []
        // (Only a redirect's status pays for reading the redirect policy.)
        if RedirectDecision.isRedirect(status), _options.redirects.follow { flags.insert(.followsRedirects) }
        // Rarer settings, all behind the options' composition box (read out of line).
        if _options.hasComposition { flags.formUnion(composedFlags(head)) }
        if observesRedirects { flags.insert(.asksAboutRedirects) }
        if _cacheExchange != nil { flags.insert(.cache) }
        switch _sink {
        case .destination, .resumable: flags.insert(.sinkDecides)
        case .memory, .discard, .file, .stream, .fanOut: break
        }
        return flags
    }

    /// The flags the options' composition adds: a cookie jar, a retry policy listing the status,
    /// a Digest login for a 401. An HSTS store notes the head's Strict-Transport-Security here.
    @inline(never)
    private func composedFlags(_ head: borrowing ResponseHead) -> TransferStateMachine.HeadFacts.Flags {
        let status = head.status
        if let store = _options.hsts, url.scheme == .https, _options.tls.verification == .full,
           let value = head.headers["Strict-Transport-Security"] {
            store.note(value, from: url.host)
        }
        var flags: TransferStateMachine.HeadFacts.Flags = []
        if _options.cookies != nil { flags.insert(.cookieJar) }
        if _options.retryCount > 0, _options.retry.statuses.contains(status) { flags.insert(.statusListed) }
        if status == 401, _options.digest != nil, _body.isReplayable, challengesAnswered < 2 { flags.insert(.digestLogin) }
        return flags
    }

    /// The body is the result: the head is kept, content decoding is set up, and a front end that
    /// shows heads hears about it.
    @inline(__always)
    private func deliverHead(_ head: consuming ResponseHead, contentLength: UInt64?) -> CourierError? {
        let headStatus = head.status
        status = headStatus
        let contentEncoding = _options.decompress ? head.headers["Content-Encoding"] : nil
        // The last use: moved into the transfer, not copied.
        _head = consume head
        expectedBodyLength = contentLength
        if _options.decompress, contentLength != 0, headStatus != 204, headStatus != 304, _method != .head {
            switch ContentDecoder.coding(for: contentEncoding) {
            case .success(let coding?):
                contentDecoder = ContentDecoder.make(coding, limit: _options.limits.decodedLimit)
            case .success(nil):
                break
            case .failure(let error):
                return error
            }
        }
        if case .memory = _sink, let length = contentLength, length > 0 {
            // Trust the announced length only up to a point: a lying server must not make us
            // reserve gigabytes up front.
            responseBody.reserveCapacity(Int(min(length, 16 << 20)))
        }
        if reportsHead { delegate?.transferDidReceiveHead(self) }
        return nil
    }

    /// The body is not the result (`reason`): it is read and dropped so the connection can be
    /// reused.
    @inline(never)
    private func dropBody(_ head: consuming ResponseHead, because reason: TransferStateMachine.DropReason) {
        discardsBody = true
        switch reason {
        case .redirect:
            _head = consume head
            if let redirect = _head { _history = (_history ?? []) + [RedirectedResponse(url: url, head: redirect)] }
            // A front end that shows every head (curl's -i -L, -D) hears about this one too; the
            // machine says it is a redirect being followed.
            if reportsHead { delegate?.transferDidReceiveHead(self) }
        case .retry, .stored:
            status = head.status
            _head = consume head
        case .alreadyWhole:
            // A 416 to a resumed request: the file is whole, and the answer counts as a 200.
            if case .resumable(let download) = _sink { expectedBodyLength = download.offset }
            status = 200
            _head = consume head
        case .restart:
            if case .resumable(let download) = _sink { download.discardPartial() }
            status = head.status
            _head = consume head
        }
    }

    /// An `http://` URL to a host the HSTS store knows goes to https instead, before the request
    /// is sent (redirects are upgraded where they are judged, `RedirectDecision.decide`); only
    /// for options with a composition, where a store may be.
    package func upgradeForHSTS() {
        guard let store = _options.hsts, let upgraded = store.upgrade(url) else { return }
        url = upgraded
    }

    /// Digest challenges answered in a row for the request's URL: the 401s at the end of the
    /// history (a redirect's 3xx ends the run, so each hop starts again). After one, only a stale
    /// nonce is answered again (RFC 7616 section 3.3); after two, a 401 is the answer (a wrong
    /// password is never tried twice). Read from the history, so no transfer carries a field
    /// for it.
    package var challengesAnswered: Int {
        guard let history = _history else { return 0 }
        return history.reversed().prefix { $0.head.status == 401 }.count
    }

    /// The hop answering the 401's Digest challenge, its answer put in the request's fields for
    /// the path and query as sent; nil when no challenge can be answered (none Courier speaks, or
    /// the last answer was refused and the nonce is not stale).
    @inline(never)
    private func digestAnswer(to head: borrowing ResponseHead) -> RedirectHop? {
        guard let login = _options.digest, let challenge = DigestChallenge.best(in: head.headers.values(for: "WWW-Authenticate")),
              challengesAnswered == 0 || challenge.stale else {
            return nil
        }
        let answer = challenge.answer(login, method: _method.rawValue, uri: url.target, cnonce: DigestChallenge.makeClientNonce())
        _headers.replaceOrAdd(name: "Authorization", value: answer)
        return RedirectHop(url: url, method: _method, dropBody: false, crossOrigin: false)
    }

    /// The delegate's say on a redirect to `hop`: nil to follow it (perhaps changed), or the
    /// error that refuses it. A changed URL is judged as a Location would be (no downgrade to
    /// http unless allowed; credentials dropped when it leaves the origin).
    @inline(never)
    private func askAboutRedirect(status: Int, _ hop: inout RedirectHop) -> CourierError? {
        guard let delegate else { return nil }
        let proposed = hop.url
        guard delegate.transferWillRedirect(self, status: status, to: &hop) else {
            return CourierError(.redirectRefused, "\(url) -> \(proposed)")
        }
        if hop.url != proposed {
            if let upgraded = _options.hsts?.upgrade(hop.url) { hop.url = upgraded }
            if let refusal = RedirectDecision.downgradeRefusal(from: url, to: hop.url, policy: _options.redirects) { return refusal }
            hop.crossOrigin = hop.url.origin != url.origin
        }
        return nil
    }

    /// A sink that depends on the final head looks at it: a chosen destination opens its file,
    /// a resumable download applies its range rules.
    @inline(never)
    private func sinkSawHead(_ head: borrowing ResponseHead) -> TransferStateMachine.SinkAnswer {
        // (The status is the answer's even when the sink cannot take its body: `-w %{http_code}`.)
        status = head.status
        switch _sink {
        case .destination(let choose):
            switch Self.destinationSink(choose.choose(copy head)) {
            case .success(let sink):
                _sink = sink
                return .proceed
            case .failure(let error):
                return .fail(error)
            }
        case .resumable(let download):
            switch download.headArrived(status: head.status, headers: head.headers, url: url.description) {
            case .failure(let error): return .fail(error)
            case .success(.write), .success(.ignore): return .proceed
            case .success(.complete): return .alreadyWhole
            case .success(.restart): return .restart
            }
        case .memory, .discard, .file, .stream, .fanOut:
            preconditionFailure("a sink consulted that does not decide from the head")
        }
    }

    /// The sink for a destination the caller chose from the head: a staged file, or memory.
    static func destinationSink(_ path: String?) -> Result<ResponseSink, CourierError> {
        guard let path else { return .success(.memory) }
        do {
            return .success(.file(try FileSink(download: path)))
        } catch {
            return .failure(error)
        }
    }

    // MARK: Before an exchange

    /// Prepares the request as the machine said when it was given a connection.
    @inline(never)
    func prepare(_ preparation: TransferStateMachine.Preparation) {
        if preparation.contains(.sendCookies), let jar = _options.cookies { attachCookies(from: jar) }
        if preparation.contains(.rangeFromDownload), case .resumable(let download) = _sink {
            _headers.remove(name: "Range")
            _headers.remove(name: "If-Range")
            for (name, value) in download.rangeHeaders() { _headers.add(name: name, value: value) }
        }
    }

    /// The jar's cookies for this hop's URL, as the `Cookie` field (replacing what the jar gave
    /// the previous hop; a `Cookie` the caller set is left alone).
    private func attachCookies(from jar: CookieJar) {
        if cookiesFromJar {
            _headers.remove(name: "Cookie")
            cookiesFromJar = false
        } else if _headers["Cookie"] != nil {
            return
        }
        guard let header = jar.cookieHeader(for: url) else { return }
        _headers.add(name: "Cookie", value: header)
        cookiesFromJar = true
    }

    /// What the machine needs to decide a retry now (loop clock `now`); nil without a retry
    /// policy.
    package func retryInput(now: UInt64, responseStarted: Bool) -> TransferStateMachine.RetryInput? {
        guard _options.retryCount > 0 else { return nil }
        let sinkCanRewind: Bool
        switch _sink {
        case .memory: sinkCanRewind = true
        case .file(let file): sinkCanRewind = file.canRewind
        case .discard, .stream, .fanOut, .destination, .resumable: sinkCanRewind = false
        }
        let request = TransferStateMachine.RetryRequestFacts(
            method: _method, hasIdempotencyKey: _headers["Idempotency-Key"] != nil, replayableBody: _body.isReplayable,
            responseBytesReceived: metrics.bodyBytesReceived > 0, sinkCanRewind: sinkCanRewind)
        return TransferStateMachine.RetryInput(policy: _options.retry, request: request, responseStarted: responseStarted, now: now,
                                               elapsed: Nanoseconds(monotonicNanos() &- metrics.enqueuedAt),
                                               random: Double.random(in: 0..<1))
    }
}
