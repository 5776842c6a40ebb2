import CourierCore

/// One HTTP request and what becomes of it: MKNetworkKit's `MKNetworkOperation`.
///
/// Configure it (method, headers, parameters, body, options, handlers), then hand it to its engine
/// with `enqueue` or `send`. From then on its settings are frozen; its handlers run once, on the
/// engine's callback queue: either every completion handler (with the `Response`) or every error
/// handler (with the `CourierError`, and the response when there was one: a 404 still has a body).
///
/// Thread safety: configuration is for one thread before the operation is enqueued. `cancel`,
/// adding handlers and reading the outcome are safe from any thread at any time.
///
/// (The configuration properties skip Swift's dynamic exclusivity checks: they follow the rule
/// above, configured on one thread and then only read, and the checks cost more than the rest of
/// building a request.)
public final class HTTPOperation: @unchecked Sendable, CustomStringConvertible {
    /// The request as configured (shared with the C ABI's requests, which build transfers the
    /// same way).
    @exclusivity(unchecked) package var draft: RequestDraft
    /// Statuses that count as success; others end in `.httpStatus` (with the response kept).
    @exclusivity(unchecked) public var acceptableStatus: Range<Int>

    /// The request method.
    public var method: HTTPMethod {
        get { draft.method }
        _modify { yield &draft.method }
    }
    /// Request headers; the engine's defaults are added for names not set here.
    public var headers: HTTPHeaders {
        get { draft.headers }
        _modify { yield &draft.headers }
    }
    /// Parameters: the query string for GET/HEAD/DELETE, the body otherwise.
    public var parameters: [String: String] {
        get { draft.parameters }
        _modify { yield &draft.parameters }
    }
    /// How body parameters are encoded.
    public var parameterEncoding: ParameterEncoding {
        get { draft.parameterEncoding }
        _modify { yield &draft.parameterEncoding }
    }
    /// An explicit body; when set, `parameters` go to the query string whatever the method.
    public var body: RequestBody? {
        get { draft.body }
        _modify { yield &draft.body }
    }
    /// Timeouts, redirects, limits, decompression, priority.
    public var options: TransferOptions {
        get { draft.options }
        _modify { yield &draft.options }
    }
    /// Write the body to this file instead of memory. The body goes to a temporary file beside it,
    /// moved into place when the operation succeeds; when it fails (an error, a cancellation, a
    /// status outside `acceptableStatus`) the file at this path is left exactly as it was.
    public var downloadPath: String? {
        get { draft.downloadPath }
        _modify { yield &draft.downloadPath }
    }
    /// Chooses the download file once the final response head is known (AFNetworking's
    /// destination block): return the path, or nil to keep the body in memory. The file is
    /// staged and moved into place on success, as with `downloadPath`.
    public var downloadDestination: (@Sendable (ResponseHead) -> String?)? {
        get { draft.destination }
        _modify { yield &draft.destination }
    }

    /// Downloads to this file so that an interrupted download continues where it stopped (OCNet's
    /// big-file download): the body goes to `<path>.courier-partial`, described by
    /// `<path>.courier-resume` (validator and length); the next attempt — this operation's own,
    /// up to `options.resumeAttempts`, or a later operation in any process, from any URL of the
    /// same resource — asks for the rest with `Range` and `If-Range`. A changed resource starts
    /// over. On success the file moves to `path`.
    public var resumableDownloadPath: String? {
        get { draft.resumablePath }
        _modify { yield &draft.resumablePath }
    }

    /// Adds a consumer that gets every piece of the body, beside `downloadPath` and any other
    /// stream (see `DownloadStream`). Add before enqueueing.
    public func addDownloadStream(_ stream: any DownloadStream) {
        draft.downloadStreams.append(DownloadStreamBox(stream))
    }

    // MARK: Multipart form (MKNetworkKit's addFile/addData)

    /// The multipart form being built by `addField`/`addData`/`addFile` (nil before the first).
    public var form: MultipartForm? {
        if case .multipart(let form)? = draft.body { return form }
        return nil
    }

    func editForm(_ edit: (inout MultipartForm) -> Void) {
        var current = form ?? MultipartForm()
        edit(&current)
        draft.body = .multipart(current)
    }

    /// Adds a plain field to the multipart form body.
    public func addField(_ name: String, value: String) {
        editForm { $0.addField(name, value: value) }
    }

    /// Adds bytes to the multipart form body (a file upload when `fileName` is set).
    public func addData(_ data: [UInt8], forKey name: String, mimeType: String = "application/octet-stream", fileName: String? = nil) {
        editForm { $0.addData(data, forKey: name, mimeType: mimeType, fileName: fileName) }
    }

    /// Adds a file to the multipart form body: streamed from disk when sent, never read whole.
    public func addFile(_ path: String, forKey name: String, mimeType: String? = nil, fileName: String? = nil) {
        editForm { $0.addFile(path, forKey: name, mimeType: mimeType, fileName: fileName) }
    }

    /// Header names not to send even though the engine's defaults have them (curl's `-H "Name:"`).
    public var suppressedHeaders: [String] {
        get { draft.suppressedHeaders }
        _modify { yield &draft.suppressedHeaders }
    }
    /// The engine's `id`, for `SharedQueue.cancelAll(where:)`.
    public var engineID: Int { draft.engineID }

    /// How this request uses its engine's cache (shortcut for `options.cachePolicy`). With
    /// `.cachedThenFresh` or `.cachedThenNetwork` the completion and finish handlers may run
    /// twice: first with the stored response (`Response.isPreview`, phase `.cached(stale:)`), then
    /// with the final one.
    public var cachePolicy: CachePolicy {
        get { options.cachePolicy }
        set { options.cachePolicy = newValue }
    }

    /// Queue priority (shortcut for `options.priority`).
    public var priority: Priority {
        get { options.priority }
        set { options.priority = newValue }
    }

    /// How the request authenticates when it sets no `Authorization` header (Basic or Bearer);
    /// never sent to another origin a redirect leads to.
    public var authorization: Authorization? {
        get { draft.authorization }
        set { draft.authorization = newValue }
    }

    /// When a failed attempt is sent again (shortcut for `options.retry`): how many times, after
    /// which intervals, for which failures and statuses (see `RetryPolicy`). None by default; an
    /// engine's `Configuration.options.retry` sets it for all its operations.
    public var retry: RetryPolicy {
        get { options.retry }
        set { options.retry = newValue }
    }

    /// The proxies this request may go through (shortcut for `options.proxy`): the
    /// environment's by default (curl's `http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`),
    /// `.direct` for none, `.all(Proxy(...))` for one. An https request goes through a CONNECT
    /// tunnel and its TLS is still verified against the origin.
    public var proxy: ProxySettings {
        get { options.proxy }
        set { options.proxy = newValue }
    }

    /// Phase deadlines (shortcut for `options.timeouts`).
    public var timeouts: Timeouts {
        get { options.timeouts }
        set { options.timeouts = newValue }
    }

    /// The URL as given: the engine's base with the path, or the full URL string.
    public var urlString: String { draft.urlString }

    /// Where the operation stands.
    public enum State: Sendable, Equatable {
        /// Being configured; or frozen and waiting in its outbox for the network (out of the
        /// queue until then).
        case ready
        /// Handed to the shared queue (queued, connecting or transferring), or waiting for its
        /// authenticator's new credentials.
        case enqueued
        /// Done: handlers have been (or are being) called.
        case finished
    }

    let callbackQueue: CallbackQueue

    // Everything below is shared with the loop thread once the operation is enqueued, and is
    // only touched under `lock` (inline in the object: no allocation, no generic destroy code).
    let lock = SpinLock()
    /// Where the request stands across its attempts (see `RequestSession`).
    @exclusivity(unchecked) var session = RequestSession()
    @exclusivity(unchecked) var _response: Response?
    @exclusivity(unchecked) var _error: CourierError?
    @exclusivity(unchecked) var _transfer: Transfer?
    @exclusivity(unchecked) var completionHandlers = HandlerList<@Sendable (Response) -> Void>()
    @exclusivity(unchecked) var errorHandlers = HandlerList<@Sendable (CourierError, Response?) -> Void>()
    @exclusivity(unchecked) var finishHandlers = HandlerList<@Sendable (Result<Response, CourierError>) -> Void>()
    @exclusivity(unchecked) var uploadHandlers = HandlerList<@Sendable (TransferProgress) -> Void>()
    @exclusivity(unchecked) var downloadHandlers = HandlerList<@Sendable (TransferProgress) -> Void>()
    /// Callers of `Engine.send` waiting for the outcome (sending one operation twice waits twice);
    /// nil for enqueued operations, so they pay one pointer test.
    @exclusivity(unchecked) var waiters: Waiters?
    /// Set when the transfer finished after retries (nil otherwise: one pointer to destroy).
    @exclusivity(unchecked) var _retryLog: [RetryReason]?

    /// The outcome once finished (call with `lock` held).
    var outcome: Result<Response, CourierError>? {
        guard session.isConcluded else { return nil }
        if let _error { return .failure(_error) }
        return _response.map { .success($0) }
    }

    /// The designated initializer, for `Engine`.
    init(method: HTTPMethod, base: CourierURL?, target: String, parameters: [String: String], engineID: Int,
         options: TransferOptions, acceptableStatus: Range<Int>, defaultHeaders: HTTPHeaders,
         callbackQueue: CallbackQueue, presetError: CourierError? = nil) {
        draft = RequestDraft(method: method, base: base, target: target, parameters: parameters, engineID: engineID,
                             options: options, defaultHeaders: defaultHeaders, presetError: presetError)
        self.acceptableStatus = acceptableStatus
        self.callbackQueue = callbackQueue
    }

    /// Gives the operation its engine's authenticator and hooks (engines without them call
    /// nothing: an operation of theirs pays no reference for either).
    func attach(authenticator: Authenticator?, hooks: HookSet?, outbox: Outbox? = nil) {
        if let authenticator { draft.challenge = ChallengeState(authenticator) }
        if let hooks { draft.hooks = hooks }
        if let outbox { draft.outbox = outbox }
    }
}
