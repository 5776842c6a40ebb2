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

    /// The request body goes out chunked: its length is not known (progress has no total).
    package var isRequestBodyChunked: Bool { requestBodyChunked }
    /// Whether the request head asks `Expect: 100-continue` for its body (the connection then
    /// waits for the 100; `-v` shows the field): the policy applies to its length, unless the
    /// caller set an Expect field of its own.
    package var requestExpectsContinue: Bool {
        !userSetExpect && _options.expectContinue.applies(toLength: requestBodyChunked ? nil : requestBodyLength)
    }
    /// The same over HTTP/2, where only `.always` asks (see `ExpectContinue`).
    package var requestExpectsContinueOverHTTP2: Bool {
        !userSetExpect && _options.expectContinue.appliesOverHTTP2(toLength: requestBodyChunked ? nil : requestBodyLength)
    }
    /// Whether it ended on the submitting thread rather than the loop thread (a cache answer or a
    /// refusal): a delegate that promises loop-thread callbacks hops there first.
    package var concludedOffLoop: Bool { _concludedOffLoop }
    /// What `-w '%{cache_status}'` prints: hit, miss, revalidated, stale or bypass.
    package var cacheStatus: String { CacheExchange.statusWord(of: self) }
}

extension Transfer {
    /// Hands a front end's attempt to the shared queue: the one door for Swift operations, C
    /// requests and the CLI's jobs. `cancelled` when the request's session was cancelled while
    /// the transfer was being built (it then ends as cancelled as soon as the loop takes it).
    package func submit(cancelled: Bool) {
        if cancelled { cancelBeforeSubmitting() }
        Runtime.shared.submit(self)
    }
}
