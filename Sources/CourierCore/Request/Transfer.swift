import Glibc

/// Hears how a transfer goes, on the loop thread.
///
/// Implementations must return quickly and never block: they run on the one thread that moves every
/// byte for the process. The facade (`Courier.Operation`) forwards to user code on a queue of the
/// user's choosing; the C ABI forwards to C callbacks that carry the same rule in the header.
package protocol TransferDelegate: AnyObject {
    /// A response head arrived: a redirect's being followed (`transfer.machine.followsRedirect`)
    /// or the final one. Only called when `Transfer.reportsHead` is set.
    func transferDidReceiveHead(_ transfer: Transfer)
    /// Bytes went out or came in. Only called when `Transfer.reportsProgress` is set, and at most
    /// every `progressIntervalMillis`, plus once at the end of each direction.
    func transferDidProgress(_ transfer: Transfer)
    /// The transfer ended: `transfer.error` is nil on success, and the response is in `head`,
    /// `responseBody` and `metrics`. Called exactly once per submitted transfer.
    func transferDidComplete(_ transfer: Transfer)
    /// cached-then-fresh: the stored response, delivered before the network's answer (on the
    /// submitting thread, before the transfer is queued). `preview` is a finished transfer of its
    /// own; `transfer` goes on to the network.
    func transferDidDeliverPreview(_ transfer: Transfer, preview: Transfer)
    /// The retry policy would send the request again (`retry` is the retry's number, 1 for the
    /// first); false stops here and the failure (or the response) is the result. On the loop
    /// thread.
    func transferShouldRetry(_ transfer: Transfer, reason: RetryReason, retry: Int) -> Bool
    /// A redirect would be followed to `hop` (which may be changed: another URL); false refuses
    /// it (`.redirectRefused`). Only asked when `Transfer.observesRedirects` is set; on the loop
    /// thread.
    func transferWillRedirect(_ transfer: Transfer, status: Int, to hop: inout RedirectHop) -> Bool
}

extension TransferDelegate {
    package func transferDidDeliverPreview(_ transfer: Transfer, preview: Transfer) {}
    package func transferShouldRetry(_ transfer: Transfer, reason: RetryReason, retry: Int) -> Bool { true }
    package func transferWillRedirect(_ transfer: Transfer, status: Int, to hop: inout RedirectHop) -> Bool { true }
}

/// Who agrees to retrying a response's status when its head arrives (the executor: the host's
/// retry budget, then the delegate).
package protocol RetryApproval: AnyObject {
    func approveStatusRetry(_ transfer: Transfer, status: Int) -> Bool
}

/// One request's journey through the queue, the pool and its connections, and its result.
///
/// Threading: the creator configures the request fields, then hands the transfer to
/// `Runtime.submit`; from then on only the loop thread touches it, until `transferDidComplete`, after
/// which the result fields are read-only. That hand-over is why the class is `@unchecked Sendable`.
package final class Transfer: @unchecked Sendable {
    // MARK: The request (set before submission; the runtime rewrites them on redirects)

    /// The request's scheme, host, port and credentials, as a URL whose own target is not the
    /// request's (usually its engine's base URL, shared by all the engine's requests); the target
    /// is `_path` and `_query`. The whole URL is built only when asked for (`url`).
    @exclusivity(unchecked) var _authority: CourierURL
    @exclusivity(unchecked) var _path: String
    @exclusivity(unchecked) var _query: String?
    @exclusivity(unchecked) var _method: HTTPMethod
    @exclusivity(unchecked) var _headers: HTTPHeaders
    @exclusivity(unchecked) var _body: RequestBody
    @exclusivity(unchecked) var _options: TransferOptions
    @exclusivity(unchecked) var _sink: ResponseSink = .memory {
        didSet { _sinkHasFiles = _sink.hasFiles }
    }
    @exclusivity(unchecked) var _sinkHasFiles = false
    /// Whether the sink has files to settle when the transfer ends (read on every completion, so
    /// kept as a flag instead of matching the enum each time).
    package var sinkHasFiles: Bool { _sinkHasFiles }
    /// Retries the policy made (read on every completion without copying the machine).
    package var retries: Int { machine.retriesUsed }
    /// The engine (or other owner) this belongs to, for cancel-all-of-an-engine.
    @exclusivity(unchecked) var _owner: Int = 0
    /// Strong until completion, then released, so an operation that owns its transfer does not leak.
    @exclusivity(unchecked) var _delegate: TransferDelegate?
    @exclusivity(unchecked) var _reportsProgress: Bool = false
    @exclusivity(unchecked) var _reportsHead: Bool = false
    /// Whether the delegate is asked about each redirect (`transferWillRedirect`).
    @exclusivity(unchecked) package var observesRedirects = false
    @exclusivity(unchecked) var _progressIntervalMillis: UInt64 = 50

    // MARK: The result

    @exclusivity(unchecked) var _head: ResponseHead?
    /// The final status, 0 before a head arrived: readable without copying the whole head.
    @exclusivity(unchecked) var _status: Int = 0
    @exclusivity(unchecked) var _trailers: HTTPHeaders = HTTPHeaders()
    @exclusivity(unchecked) var _responseBody: [UInt8] = []
    @exclusivity(unchecked) var _error: CourierError?
    @exclusivity(unchecked) var _metrics: TransferMetrics = TransferMetrics()
    /// Body length announced by the final response, when it had one (for progress).
    @exclusivity(unchecked) var _expectedBodyLength: UInt64?
    /// Request body length (for upload progress).
    @exclusivity(unchecked) var _requestBodyLength: UInt64 = 0
    /// Request body bytes written so far in the current exchange.
    @exclusivity(unchecked) var _requestBodyBytesSent: UInt64 = 0
    /// The same on the wire, chunked framing included (curl's `size_upload`).
    @exclusivity(unchecked) package internal(set) var requestBodyWireBytes: UInt64 = 0
    /// Where the response came from (the origin unless a cache answered).
    @exclusivity(unchecked) var _cachePhase: CachePhase = .fresh
    /// The transfer's business with its cache, when it has one.
    @exclusivity(unchecked) var _cacheExchange: CacheExchange?
    /// A cached-then-fresh preview: another response (the network's) follows.
    @exclusivity(unchecked) var _isPreview = false
    /// It ended on the thread that submitted it (a cache answer, or a refusal), not on the loop.
    @exclusivity(unchecked) var _concludedOffLoop = false

    // MARK: Loop-thread state

    /// The phase and every end-of-exchange decision (see `TransferStateMachine`).
    @exclusivity(unchecked) package var machine = TransferStateMachine()
    @exclusivity(unchecked) var hostKey = -1
    @exclusivity(unchecked) var poolKey = -1
    /// What carries the exchange while the machine is `.running` (an HTTP/1 connection, an
    /// HTTP/2 stream): reached only through `ExchangeCarrier`.
    @exclusivity(unchecked) var carrier: (any ExchangeCarrier)?
    /// What opening the connection did, when the options asked for it
    /// (`TransferOptions.tracesConnections`): the serving connection's, while it serves (its
    /// head's time: `courier -v`), or the failed attempt's, carried by the error.
    package var connectionTrace: ConnectionTrace? { carrier?.trace ?? _error?.connectionTrace }

    /// The serving connection's number and TLS details, while it serves this transfer (loop
    /// thread; `courier -v` shows them).
    package var connectionInfo: (id: UInt64, tls: TLSDetails?)? { carrier.map { ($0.connectionID, $0.tlsDetails) } }
    /// The certificates the serving connection's server sent, leaf first (loop thread, while it
    /// serves this transfer; `courier -w %{certs}`): empty over plain TCP, nil without a
    /// connection (a cache answer).
    package var peerCertificates: [CertificateInfo]? { carrier?.peerCertificates }
    /// The local address of the connection serving the transfer (asked of the socket), nil
    /// without one.
    package var localAddress: SocketAddress? { carrier?.localAddress }
    @exclusivity(unchecked) var contentDecoder: ContentDecoder?
    @exclusivity(unchecked) var lastProgressMillis: UInt64 = 0
    @exclusivity(unchecked) var userSetHost = false
    @exclusivity(unchecked) var userSetAcceptEncoding = false
    @exclusivity(unchecked) var requestAsksToClose = false
    @exclusivity(unchecked) var userSetExpect = false
    /// The body's length is unknown: it goes out chunked.
    @exclusivity(unchecked) var requestBodyChunked = false
    /// The response's body is not the result (a redirect to follow, a 304, or an error a stored
    /// response stands in for): it is read and dropped.
    @exclusivity(unchecked) var discardsBody = false
    /// The streaming consumer paused: reading stopped, and body bytes that were already read wait
    /// in `heldBody` (encoded) for `Runtime.resume`.
    @exclusivity(unchecked) var pausedByConsumer = false
    @exclusivity(unchecked) var heldBody: [UInt8] = []
    /// Coalescing (`Flights`): a leader's signature while registered (0: not), the transfers
    /// following it, and a follower's leader.
    @exclusivity(unchecked) var flightSignature = 0
    @exclusivity(unchecked) var followers: [Transfer]?
    @exclusivity(unchecked) var flightLeader: Transfer?
    /// A leader whose own caller cancelled: it runs on for its followers only.
    @exclusivity(unchecked) var callerLeft = false
    // Intrusive list of live transfers: O(1) link/unlink with no allocation per request.
    @exclusivity(unchecked) var liveNext: Transfer?
    /// The `Cookie` field was the jar's (`attachCookies`), not the caller's.
    @exclusivity(unchecked) var cookiesFromJar = false
    /// The redirects followed, oldest first (nil until the first: most transfers have none).
    @exclusivity(unchecked) var _history: [RedirectedResponse]?
    /// Set by the executor for transfers with a retry policy.
    @exclusivity(unchecked) unowned(unsafe) var retryApproval: RetryApproval?
    @exclusivity(unchecked) unowned(unsafe) var livePrevious: Transfer?

    /// A transfer for `method url` with these headers, body and options.
    package convenience init(url: CourierURL, method: HTTPMethod = .get, headers: HTTPHeaders = HTTPHeaders(),
                             body: RequestBody = .empty, options: TransferOptions = TransferOptions()) {
        self.init(authority: url, path: url.path, query: url.query, method: method, headers: headers, body: body, options: options)
    }

    /// A transfer to `path?query` at the origin (and with the credentials) of `authority`.
    package init(authority: CourierURL, path: String, query: String?, method: HTTPMethod, headers: HTTPHeaders,
                 body: RequestBody, options: TransferOptions) {
        self._authority = authority
        self._path = path
        self._query = query
        self._method = method
        self._headers = headers
        self._body = body
        self._options = options
    }

    /// A finished transfer holding a response built elsewhere (tests, response serializers), so
    /// every response, fetched or made, has the same representation.
    package static func finished(url: CourierURL, head: ResponseHead, body: [UInt8], trailers: HTTPHeaders,
                                 metrics: TransferMetrics) -> Transfer {
        let transfer = Transfer(url: url)
        transfer.head = head
        transfer.status = head.status
        transfer.responseBody = body
        transfer.trailers = trailers
        transfer.metrics = metrics
        transfer.machine = .alreadyFinished
        return transfer
    }

    /// A finished transfer with no response that stands for `transfer` to its caller, when the
    /// caller leaves a transfer that goes on for others (a coalescing leader).
    static func standIn(for transfer: Transfer) -> Transfer {
        let standIn = Transfer(authority: transfer._authority, path: transfer._path, query: transfer._query, method: transfer._method,
                               headers: HTTPHeaders(), body: .empty, options: transfer._options)
        standIn.machine = .alreadyFinished
        standIn.metrics = transfer.metrics
        standIn.metrics.completedAt = 0
        return standIn
    }

    /// Takes the result of the transfer this one followed (coalescing): the same response, URL
    /// and metrics; the body is shared, not copied.
    func adoptResult(of leader: Transfer) {
        _authority = leader._authority
        _path = leader._path
        _query = leader._query
        _head = leader._head
        _status = leader._status
        _trailers = leader._trailers
        _responseBody = leader._responseBody
        _expectedBodyLength = leader._expectedBodyLength
        _cachePhase = leader._cachePhase
        let enqueuedAt = _metrics.enqueuedAt
        _metrics = leader._metrics
        _metrics.enqueuedAt = enqueuedAt
        _metrics.coalesced = true
    }

    /// Whether the request goes to `origin`, compared field by field in place (copying the URL to
    /// compare it costs more than the comparison).
    @inline(__always)
    func targets(_ origin: Origin) -> Bool {
        _authority.port == origin.port && _authority.scheme == origin.scheme && _authority.host == origin.host
    }

    /// Whether the transfer is done (result fields are final).
    package var isFinished: Bool { machine.state == .finished }

    /// Has the transfer end as cancelled as soon as the loop accepts it: for a front end whose
    /// cancel raced with building the transfer. Call before `Runtime.submit`.
    package func cancelBeforeSubmitting() {
        machine.cancelBeforeSubmitting()
    }

    /// Records how the transfer ended (`error` nil for success) and tells the delegate. Called
    /// once, by the executor (or by the runtime on the submitting thread for a transfer it
    /// refused).
    func conclude(_ error: CourierError?) {
        self.error = error
        // A response that completed in a read already carries that read's clock reading.
        if error != nil || metrics.completedAt == 0 { metrics.completedAt = monotonicNanos() }
        switch _sink {
        case .file(let file): file.close()
        case .fanOut(let fan): fan.close()
        case .memory, .discard, .stream, .destination, .resumable: break
        }
        if !heldBody.isEmpty { heldBody = [] }
        // The request body is not needed any more; a response that outlives the transfer should
        // not keep an upload in memory.
        _body = .empty
        let delegate = _delegate
        _delegate = nil
        delegate?.transferDidComplete(self)
    }

    // MARK: Response handling (called by the connection)

    /// Forgets a previous exchange's response: before a replay, and on each redirect hop.
    func resetResponse() {
        head = nil
        status = 0
        trailers = HTTPHeaders()
        responseBody.removeAll()
        expectedBodyLength = nil
        contentDecoder = nil
        requestBodyBytesSent = 0
        requestBodyWireBytes = 0
        discardsBody = false
        pausedByConsumer = false
        if !heldBody.isEmpty { heldBody = [] }
        if case .resumable(let download) = _sink { download.prepareExchange() }
        metrics.firstByte = 0
        metrics.bodyBytesReceived = 0
        metrics.bodyBytesDecoded = 0
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
            if let refusal = RedirectDecision.downgradeRefusal(from: url, to: hop.url, policy: _options.redirects) { return refusal }
            hop.crossOrigin = hop.url.origin != url.origin
        }
        return nil
    }

    /// The final head (or a redirect's head). Decides redirects and content decoding.
    func receiveHead(_ head: consuming ResponseHead, contentLength: UInt64?, nowMillis: UInt64) -> CourierError? {
        if let jar = _options.cookies { jar.store(setCookie: head.headers.values(for: "Set-Cookie"), from: url) }
        // Only redirect statuses pay for looking up Location.
        let decision = RedirectDecision.isRedirect(head.status) && _options.redirects.follow
            ? RedirectDecision.decide(status: head.status, location: head.headers["Location"],
                                      current: url, method: _method, policy: _options.redirects,
                                      redirectsSoFar: metrics.redirects)
            : .deliver
        switch decision {
        case .fail(let error):
            // A redirect refused (too many, a downgrade, an unusable Location) still leaves its
            // head as the last response received, as curl reports it (-w %{http_code},
            // %{redirect_url}); the transfer ends with the error.
            status = head.status
            _head = consume head
            return error
        case .follow(var hop):
            if observesRedirects, let error = askAboutRedirect(status: head.status, &hop) { return error }
            // The 3xx body is read and dropped so the connection can be reused.
            machine.redirectChosen(hop)
            discardsBody = true
            _head = consume head
            if let redirect = _head { _history = (_history ?? []) + [RedirectedResponse(url: url, head: redirect)] }
            // A front end that shows every head (curl's -i -L, -D) hears about this one too; the
            // machine says it is a redirect being followed.
            if reportsHead { delegate?.transferDidReceiveHead(self) }
            return nil
        case .deliver:
            break
        }
        if let approval = retryApproval, retriesStatus(head, approval: approval, now: nowMillis) {
            // Read and dropped; the request goes out again after the wait.
            status = head.status
            discardsBody = true
            _head = consume head
            return nil
        }
        let headStatus = head.status
        status = headStatus
        if let exchange = _cacheExchange, exchange.headArrived(self, head, contentLength: contentLength) == .discardBody {
            // A 304, or an error the stored response stands in for: read and dropped.
            discardsBody = true
            _head = consume head
            return nil
        }
        switch _sink {
        case .destination, .resumable:
            switch sinkSawHead(head, status: headStatus) {
            case .proceed:
                break
            case .fail(let error):
                return error
            case .dropBody(let status):
                // Already whole (a 416 counting as a 200), or to be asked again from zero.
                discardsBody = true
                _head = consume head
                if let status { self.status = status }
                return nil
            }
        case .memory, .discard, .file, .stream, .fanOut:
            break
        }
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

    private enum SinkDecision {
        case proceed
        case fail(CourierError)
        /// Read and drop the body; `status` replaces the head's when set.
        case dropBody(status: Int?)
    }

    /// A sink that depends on the final head decides (a chosen destination, a resumable
    /// download's range rules); kept apart from `receiveHead` so plain sinks do not pay for it.
    @inline(never)
    private func sinkSawHead(_ head: borrowing ResponseHead, status: Int) -> SinkDecision {
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
            switch download.headArrived(status: status, headers: head.headers, url: url.description) {
            case .failure(let error):
                return .fail(error)
            case .success(.write), .success(.ignore):
                return .proceed
            case .success(.complete):
                expectedBodyLength = download.offset
                return .dropBody(status: 200)
            case .success(.restart):
                download.discardPartial()
                machine.restartChosen()
                return .dropBody(status: nil)
            }
        case .memory, .discard, .file, .stream, .fanOut:
            return .proceed
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

    /// Body bytes as received (still encoded).
    func receiveBody(_ bytes: UnsafeRawBufferPointer, nowMillis: UInt64) -> CourierError? {
        metrics.bodyBytesReceived &+= UInt64(bytes.count)
        if discardsBody { return nil }
        let error: CourierError?
        if case .memory = _sink, contentDecoder == nil {
            // The common case, kept direct: a body collected in memory never pauses.
            metrics.bodyBytesDecoded &+= UInt64(bytes.count)
            responseBody.append(contentsOf: bytes.bindMemory(to: UInt8.self))
            error = nil
        } else if pausedByConsumer {
            // The rest of a read that came after the consumer paused: kept, still encoded (at
            // most one socket read), and delivered on resume.
            heldBody.append(contentsOf: bytes.bindMemory(to: UInt8.self))
            return nil
        } else {
            error = process(bytes)
        }
        if error == nil, reportsProgress, nowMillis &- lastProgressMillis >= progressIntervalMillis {
            lastProgressMillis = nowMillis
            delegate?.transferDidProgress(self)
        }
        return error
    }

    /// Decodes and delivers encoded body bytes until they are used up or the consumer pauses;
    /// what a pause leaves is held.
    private func process(_ bytes: UnsafeRawBufferPointer) -> CourierError? {
        if let decoder = contentDecoder {
            var paused = false
            let error = decoder.decode(bytes, stopping: { paused }) { piece in
                switch self.deliver(piece) {
                case .success(.proceed): return nil
                case .success(.pause): paused = true; return nil
                case .success(.stop): return CourierError(.cancelled, "the body handler stopped the transfer")
                case .success(.fail(let error)), .failure(let error): return error
                }
            }
            if let error { return error }
            if paused {
                heldBody.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - decoder.unconsumedInput)...]).bindMemory(to: UInt8.self))
                pause()
            }
            return nil
        }
        switch deliver(bytes) {
        case .success(.proceed): return nil
        case .success(.pause): pause(); return nil
        case .success(.stop): return CourierError(.cancelled, "the body handler stopped the transfer")
        case .success(.fail(let error)), .failure(let error): return error
        }
    }

    private func pause() {
        guard !pausedByConsumer else { return }
        pausedByConsumer = true
        carrier?.pauseReadingForConsumer()
    }

    /// Whether body bytes wait for a paused consumer (then the response's end waits too).
    var isHoldingBody: Bool {
        pausedByConsumer && (!heldBody.isEmpty || (contentDecoder?.hasPendingOutput ?? false) || hasRefusedPiece)
    }

    /// Whether the consumer still has a piece it refused (curl's pause contract, kept by the front end).
    private var hasRefusedPiece: Bool {
        switch _sink {
        case .stream(let sink): return sink.redeliver != nil
        case .fanOut: return true
        default: return false
        }
    }

    /// On resume: offers the consumer what it refused, then what was held, until it pauses
    /// again or all is delivered. Returns the consumer's or the decoder's error.
    func deliverHeldBody() -> CourierError? {
        guard pausedByConsumer else { return nil }
        let offered: BodyVerdict
        switch _sink {
        case .stream(let sink): offered = sink.redeliver?() ?? .proceed
        case .fanOut(let fan): offered = fan.redeliver()
        default: offered = .proceed
        }
        switch offered {
        case .proceed: break
        case .pause: return nil
        case .stop: return CourierError(.cancelled, "the body handler stopped the transfer")
        case .fail(let error): return error
        }
        pausedByConsumer = false
        guard !heldBody.isEmpty || (contentDecoder?.hasPendingOutput ?? false) else { return nil }
        let held = heldBody
        heldBody = []
        return held.withUnsafeBytes { process($0) }
    }

    private func deliver(_ bytes: UnsafeRawBufferPointer) -> Result<BodyVerdict, CourierError> {
        metrics.bodyBytesDecoded &+= UInt64(bytes.count)
        switch _sink {
        case .memory:
            responseBody.append(contentsOf: bytes.bindMemory(to: UInt8.self))
            return .success(.proceed)
        case .discard:
            return .success(.proceed)
        case .file(let file):
            _cacheExchange?.collect(bytes)
            return file.write(bytes).map { .failure($0) } ?? .success(.proceed)
        case .stream(let sink):
            _cacheExchange?.collect(bytes)
            if let landing = sink.landing, contentDecoder == nil {
                let taker = _cacheExchange == nil && !_reportsProgress ? sink.leaseTaker : nil
                carrier?.offerReadLanding(landing, leaseTaker: taker)
            }
            return .success(sink.deliver(bytes))
        case .fanOut(let fan):
            _cacheExchange?.collect(bytes)
            return fan.deliver(bytes)
        case .resumable(let download):
            return download.write(bytes).map { .failure($0) } ?? .success(.proceed)
        case .destination:
            // Resolved when the head arrived; a body without a final head cannot happen.
            return .success(.proceed)
        }
    }

    /// Body bytes a read lease took straight to the consumer (see `ReadLease`): counted as if
    /// they had come through `receiveBody`.
    func bodyReadElsewhere(_ count: UInt64) {
        metrics.bodyBytesReceived &+= count
        metrics.bodyBytesDecoded &+= count
        metrics.completedAt = monotonicNanos()
    }

    /// The response ended cleanly: finish content decoding.
    func completeBody() -> CourierError? {
        if discardsBody { return nil }
        if let decoder = contentDecoder, let error = decoder.finish() { return error }
        return nil
    }

    /// Request body bytes went out (the connection already counted them).
    func sentRequestBytes(_ count: Int, nowMillis: UInt64, isLast: Bool) {
        if reportsProgress, isLast || nowMillis &- lastProgressMillis >= progressIntervalMillis {
            lastProgressMillis = nowMillis
            delegate?.transferDidProgress(self)
        }
    }
}

// MARK: - Access from the front ends

/// The fields the facade, the C ABI and the CLI read and set, as accessors defined here.
///
/// Why: `@exclusivity(unchecked)` is honoured only inside the module that declares a property.
/// A direct access to a stored property from another module (Courier, CourierCABI, the CLI) gets
/// a dynamic exclusivity check (`swift_beginAccess`), several hundred instructions per request
/// on the hot path; accessors compiled here keep the unchecked access, even when inlined.
/// Code in this module reads the underscored storage on hot paths: a getter returns a copy
/// (every string of a URL, every field of the options retained and released). (`_read`
/// accessors would avoid the copy too, but Swift 6.3's debug build miscompiled the one for
/// `options`: a borrowed TLSConfiguration was released, a crash in `Runtime.poolKey(for:)`.)
extension Transfer {
    /// The request URL (after redirects so far); built on demand from the authority and target.
    package internal(set) var url: CourierURL {
        get { _authority.withTarget(path: _path, query: _query) }
        set {
            _authority = newValue
            _path = newValue.path
            _query = newValue.query
        }
    }
    package internal(set) var method: HTTPMethod {
        get { _method }
        _modify { yield &_method }
    }
    package internal(set) var headers: HTTPHeaders {
        get { _headers }
        _modify { yield &_headers }
    }
    package internal(set) var body: RequestBody {
        get { _body }
        _modify { yield &_body }
    }
    package var options: TransferOptions {
        get { _options }
        _modify { yield &_options }
    }
    package var sink: ResponseSink {
        get { _sink }
        // (A plain setter: a sink is replaced, never edited in place, and a coroutine around
        // `_sink`'s didSet cost a front end about 190 instructions a request.)
        set { _sink = newValue }
    }
    package var owner: Int {
        get { _owner }
        _modify { yield &_owner }
    }
    package var delegate: TransferDelegate? {
        get { _delegate }
        _modify { yield &_delegate }
    }
    package var reportsProgress: Bool {
        get { _reportsProgress }
        _modify { yield &_reportsProgress }
    }
    package var reportsHead: Bool {
        get { _reportsHead }
        _modify { yield &_reportsHead }
    }
    package var progressIntervalMillis: UInt64 {
        get { _progressIntervalMillis }
        _modify { yield &_progressIntervalMillis }
    }
    package internal(set) var head: ResponseHead? {
        get { _head }
        _modify { yield &_head }
    }
    package internal(set) var status: Int {
        get { _status }
        _modify { yield &_status }
    }
    /// The status of the last head received, a redirect's included (0 before any): read in place,
    /// where `head?.status` from another module copies the whole head.
    package var headStatus: Int { _head?.status ?? 0 }
    package internal(set) var trailers: HTTPHeaders {
        get { _trailers }
        _modify { yield &_trailers }
    }
    package internal(set) var responseBody: [UInt8] {
        get { _responseBody }
        _modify { yield &_responseBody }
    }
    package internal(set) var error: CourierError? {
        get { _error }
        _modify { yield &_error }
    }
    package internal(set) var metrics: TransferMetrics {
        get { _metrics }
        _modify { yield &_metrics }
    }
    package internal(set) var expectedBodyLength: UInt64? {
        get { _expectedBodyLength }
        _modify { yield &_expectedBodyLength }
    }
    package internal(set) var requestBodyLength: UInt64 {
        get { _requestBodyLength }
        _modify { yield &_requestBodyLength }
    }
    package internal(set) var requestBodyBytesSent: UInt64 {
        get { _requestBodyBytesSent }
        _modify { yield &_requestBodyBytesSent }
    }
    /// The HTTP cache the request may be answered from and stored in (its options').
    package var cache: ResponseCache? {
        get { _options.cache }
        set { _options.cache = newValue }
    }
    package internal(set) var cachePhase: CachePhase {
        get { _cachePhase }
        _modify { yield &_cachePhase }
    }
    package var isPreview: Bool { _isPreview }
    /// The responses that redirected this transfer, oldest first (httpx's `history`).
    package var history: [RedirectedResponse] { _history ?? [] }
    /// Settles the body's files once the outcome is known (see `ResponseSink.finish`), reading the
    /// sink in place.
    package func finishSink(succeeded: Bool) -> CourierError? {
        _sinkHasFiles ? _sink.finish(succeeded: succeeded) : nil
    }

    /// Whether the policy retries this final head's status, and the budget and delegate agree;
    /// the machine then knows when.
    @inline(never)
    private func retriesStatus(_ head: borrowing ResponseHead, approval: RetryApproval, now: UInt64) -> Bool {
        // The status first: the retry input (a clock, a random draw, header lookups) is for the few
        // heads that are retried.
        guard _options.retry.statuses.contains(head.status), let input = retryInput(now: now, responseStarted: true) else { return false }
        let retryAfter = RetryPolicy.retryAfter(head.headers["Retry-After"], now: HTTPDate.now())
        guard let wait = machine.statusRetryWait(status: head.status, retryAfter: retryAfter, input: input),
              approval.approveStatusRetry(self, status: head.status) else { return false }
        machine.retryChosen(status: head.status, wait: wait, now: now)
        return true
    }

    /// The jar's cookies for this hop's URL, as the `Cookie` field (replacing what the jar gave
    /// the previous hop; a `Cookie` the caller set is left alone).
    @inline(never)
    func attachCookies(from jar: CookieJar) {
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
    /// policy. Permitted when the method, the headers and the request body allow sending the
    /// request twice, and no response bytes went where they cannot be taken back (a consumer,
    /// stdout; a resumable download continues instead) — a body in memory or a file of our own
    /// starts over.
    package func retryInput(now: UInt64, responseStarted: Bool) -> TransferStateMachine.RetryInput? {
        guard _options.retryCount > 0 else { return nil }
        let policy = _options.retry
        var bodyTaken = metrics.bodyBytesReceived > 0
        switch _sink {
        case .memory: bodyTaken = false
        case .file(let file): bodyTaken = bodyTaken && !file.canRewind
        case .discard, .stream, .fanOut, .destination, .resumable: break
        }
        let permitted = !bodyTaken && policy.permits(method: _method, hasIdempotencyKey: _headers["Idempotency-Key"] != nil,
                                                    replayableBody: _body.isReplayable)
        return TransferStateMachine.RetryInput(policy: policy, permitted: permitted, responseStarted: responseStarted, now: now,
                                               elapsed: Nanoseconds(monotonicNanos() &- metrics.enqueuedAt),
                                               random: Double.random(in: 0..<1))
    }

    /// The request body goes out chunked: its length is not known (progress has no total).
    package var isRequestBodyChunked: Bool { requestBodyChunked }
    /// Whether the request head asks `Expect: 100-continue` for its body (the connection then
    /// waits for the 100; `-v` shows the field): the policy applies to its length, unless the
    /// caller set an Expect field of its own.
    package var requestExpectsContinue: Bool {
        !userSetExpect && _options.expectContinue.applies(toLength: requestBodyChunked ? nil : requestBodyLength)
    }
    /// Whether it ended on the submitting thread rather than the loop thread (a cache answer or a
    /// refusal): a delegate that promises loop-thread callbacks hops there first.
    package var concludedOffLoop: Bool { _concludedOffLoop }
    /// What `-w '%{cache_status}'` prints: hit, miss, revalidated, stale or bypass.
    package var cacheStatus: String { CacheExchange.statusWord(of: self) }
}
