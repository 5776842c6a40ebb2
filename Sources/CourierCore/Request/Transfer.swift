import Glibc


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

    // MARK: Between exchanges

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
}
