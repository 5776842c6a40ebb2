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
public final class Operation: @unchecked Sendable, CustomStringConvertible {
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

    private func editForm(_ edit: (inout MultipartForm) -> Void) {
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
    /// `.cachedThenFresh` the completion and finish handlers may run twice: first with the stored
    /// response (`Response.isPreview`, phase `.cached(stale:)`), then with the final one.
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
        /// Being configured.
        case ready
        /// Handed to the shared queue (queued, connecting or transferring).
        case enqueued
        /// Done: handlers have been (or are being) called.
        case finished
    }

    let callbackQueue: CallbackQueue

    // Everything below is shared with the loop thread once the operation is enqueued, and is
    // only touched under `lock` (inline in the object: no allocation, no generic destroy code).
    private let lock = SpinLock()
    @exclusivity(unchecked) private var _state: State = .ready
    @exclusivity(unchecked) private var _response: Response?
    @exclusivity(unchecked) private var _error: CourierError?
    @exclusivity(unchecked) private var _transfer: Transfer?
    @exclusivity(unchecked) private var cancelRequested = false
    @exclusivity(unchecked) private var completionHandlers = HandlerList<@Sendable (Response) -> Void>()
    @exclusivity(unchecked) private var errorHandlers = HandlerList<@Sendable (CourierError, Response?) -> Void>()
    @exclusivity(unchecked) private var finishHandlers = HandlerList<@Sendable (Result<Response, CourierError>) -> Void>()
    @exclusivity(unchecked) private var uploadHandlers = HandlerList<@Sendable (TransferProgress) -> Void>()
    @exclusivity(unchecked) private var downloadHandlers = HandlerList<@Sendable (TransferProgress) -> Void>()
    /// Callers of `Engine.send` waiting for the outcome (sending one operation twice waits twice);
    /// nil for enqueued operations, so they pay one pointer test.
    @exclusivity(unchecked) private var waiters: Waiters?
    /// Set when the transfer finished after retries (nil otherwise: one pointer to destroy).
    @exclusivity(unchecked) private var _retryLog: [RetryReason]?

    /// The outcome once finished (call with `lock` held).
    private var outcome: Result<Response, CourierError>? {
        guard _state == .finished else { return nil }
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

    // MARK: - Freezing

    /// Makes the operation *freezable* (MKNetworkKit's `freezable`): journaled in the engine's
    /// `Outbox` before anything is sent, kept there while its host cannot be reached and sent when
    /// the network returns, in this process or a later one. `kind` names it for the outbox's
    /// handlers. Handlers (and `Engine.send`) hear of it when its server answered; cancelling it
    /// removes it from the journal. Fails with `.misuse` when sent by an engine without an outbox,
    /// and with `.invalidArgument` for a streamed or multipart body (bytes and files can be kept).
    /// Call before sending.
    public func freeze(kind: String = "") {
        lock.withLock { precondition(_state == .ready, "freeze an operation before sending it") }
        draft.freezing = FreezeState(kind: kind)
    }

    /// The outbox entry's id (also its Idempotency-Key) for a frozen operation, else nil.
    public var outboxID: String? { draft.freezing?.id }

    /// Order among frozen operations (the journal's sequence).
    package var outboxSequence: UInt64 { draft.freezing?.sequence ?? 0 }

    /// Prepares an operation that resends `entry`, left in `outbox` by an earlier process: its
    /// headers and body as journaled, its id and kind.
    func resume(frozen entry: OutboxEntry, in outbox: Outbox) {
        draft.outbox = outbox
        draft.defaultHeaders = HTTPHeaders()
        draft.headers = OutboxRules.headers(of: entry)
        let state = FreezeState(id: entry.id, kind: entry.kind)
        state.sequence = entry.sequence
        state.journaled = true
        draft.freezing = state
        watchFrozenOutcome(state, outbox: outbox)
        do {
            draft.body = try OutboxRules.body(of: entry)
        } catch {
            draft.body = nil
            lock.withLock { _state = .finished }
            complete(.failure(error), response: nil)
        }
    }

    /// Ends a frozen operation that waits in its outbox with `error`, without sending it.
    func abandon(_ error: CourierError) {
        complete(.failure(error), response: nil)
    }

    /// The outbox hears of the operation's end (not of a shutdown: the entry waits for the next
    /// process).
    private func watchFrozenOutcome(_ state: FreezeState, outbox: Outbox) {
        onFinish { result in
            if case .failure(let error) = result, error.code == .shutdown { return }
            outbox.notify(id: state.id, kind: state.kind, result: result)
        }
    }

    /// A frozen operation is ending: its entry leaves the journal before anyone hears of the end
    /// (a caller that saw the outcome finds the outbox without it); a shutdown keeps it.
    @inline(never)
    private func leaveOutbox(_ result: Result<Response, CourierError>) {
        guard let frozen = draft.freezing, frozen.journaled, let outbox = draft.outbox else { return }
        if case .failure(let error) = result, error.code == .shutdown { return }
        outbox.forget(id: frozen.id)
    }

    /// Journals a frozen operation's first attempt (false: the operation has failed).
    @inline(never)
    private func journalIfFrozen(_ transfer: Transfer) -> Bool {
        guard let state = draft.freezing, !state.journaled else { return true }
        if let failure = draft.journalIfFrozen(transfer) {
            complete(.failure(failure), response: nil)
            return false
        }
        if let outbox = draft.outbox { watchFrozenOutcome(state, outbox: outbox) }
        return true
    }

    /// Creates a stand-alone operation with default settings, for use without an engine
    /// (`Engine.shared` sends those).
    public convenience init(urlString: String, method: HTTPMethod = .get, parameters: [String: String] = [:]) {
        self.init(method: method, base: nil, target: urlString, parameters: parameters, engineID: 0, options: TransferOptions(),
                  acceptableStatus: 200..<400, defaultHeaders: Engine.standardHeaders, callbackQueue: Engine.shared.callbackQueue)
    }

    // MARK: - Handlers

    /// Adds a handler for success. Handlers added after completion run at once (on the queue).
    @discardableResult
    public func onCompletion(_ handler: @escaping @Sendable (Response) -> Void) -> Operation {
        let done = lock.withLock { () -> Response? in
            if case .success(let r)? = outcome { return r }
            if _state != .finished { completionHandlers.append(handler) }
            return nil
        }
        if let done { callbackQueue.run { handler(done) } }
        return self
    }

    /// Adds a handler for failure; the response is there when the server answered (a 404 body,
    /// for instance).
    @discardableResult
    public func onError(_ handler: @escaping @Sendable (CourierError, Response?) -> Void) -> Operation {
        let done = lock.withLock { () -> (CourierError, Response?)? in
            if case .failure(let e)? = outcome { return (e, _response) }
            if _state != .finished { errorHandlers.append(handler) }
            return nil
        }
        if let done { callbackQueue.run { handler(done.0, done.1) } }
        return self
    }

    /// Adds a handler that sees either outcome.
    @discardableResult
    public func onFinish(_ handler: @escaping @Sendable (Result<Response, CourierError>) -> Void) -> Operation {
        let done = lock.withLock { () -> Result<Response, CourierError>? in
            if let outcome { return outcome }
            finishHandlers.append(handler)
            return nil
        }
        if let done { callbackQueue.run { handler(done) } }
        return self
    }

    /// Sets the handler asked before each retry the policy would make: it gets why (the failure
    /// or the status) and the retry's number (1 for the first) and returns false to stop, making
    /// that failure or response the result. It runs on Courier's loop thread, synchronously:
    /// keep it short (log, count, decide). Set it before the operation is enqueued.
    @discardableResult
    public func onRetry(_ handler: @escaping @Sendable (RetryReason, Int) -> Bool) -> Operation {
        draft.retryHandler = handler
        return self
    }

    /// Why each retry happened, in order (empty when the first attempt was the last), once
    /// finished. `response.metrics.retries` counts them.
    public var retryReasons: [RetryReason] { lock.withLock { _retryLog ?? [] } }

    /// Adds a handler for request-body progress (at most every 50 ms, and at the end). Add it
    /// before the operation is enqueued.
    @discardableResult
    public func onUploadProgress(_ handler: @escaping @Sendable (TransferProgress) -> Void) -> Operation {
        lock.withLock { uploadHandlers.append(handler) }
        return self
    }

    /// Adds a handler for response-body progress (at most every 50 ms, and at the end). Add it
    /// before the operation is enqueued.
    @discardableResult
    public func onDownloadProgress(_ handler: @escaping @Sendable (TransferProgress) -> Void) -> Operation {
        lock.withLock { downloadHandlers.append(handler) }
        return self
    }

    // MARK: - Outcome

    /// The current state.
    public var state: State { lock.withLock { _state } }
    /// Sends the operation with the engine that made it and waits for its response: the same as
    /// `engine.send(operation)`, for code that holds only the operation. Cancelling the calling
    /// task cancels the operation; sending twice waits for the same transfer.
    public func send() async throws(CourierError) -> Response {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                addWaiter(continuation)
                start()
            }
        } onCancel: {
            cancel()
        }
        return try result.get()
    }

    /// The response, once finished (also on `.httpStatus` failures).
    public var response: Response? { lock.withLock { _response } }
    /// The error, once finished with one.
    public var error: CourierError? { lock.withLock { _error } }

    /// Resumes a transfer a `DownloadStream` paused (`StreamVerdict.pause`). From any thread;
    /// does nothing when it is not paused.
    public func resume() {
        if let target = lock.withLock({ _transfer }) { Runtime.shared.resume(target) }
    }

    /// Cancels the operation wherever it is; its error handlers get `.cancelled`. Cancelling a
    /// finished operation does nothing.
    public func cancel() {
        let target = lock.withLock { () -> Transfer? in
            if _state != .finished { cancelRequested = true }
            return _transfer
        }
        if let target { Runtime.shared.cancel(target) }
        // Refused and waiting for the authenticator's refresh: there is no transfer to cancel, and
        // the refresh may take long; the operation ends now (the answer, when it comes, is dropped).
        if draft.hasEngineParts, let challenge = draft.challenge, challenge.endWaiting() {
            complete(.failure(CourierError(.cancelled, "cancelled while waiting for new credentials")), response: nil)
        }
        // Frozen and waiting for the network: given up, it leaves the journal.
        if draft.hasEngineParts, let frozen = draft.freezing, let outbox = draft.outbox, outbox.cancelWaiting(id: frozen.id) {
            complete(.failure(CourierError(.cancelled, "cancelled while waiting in the outbox")), response: nil)
        }
    }

    // MARK: - Sending

    /// Builds the core transfer and submits it. Called by the engine. (Inlined there, as it was
    /// before the streaming branch made it look too big to the optimizer.)
    @inline(__always)
    func start() {
        var channel: BodyChannel?
        let wantsProgress = lock.withLock { () -> Bool? in
            guard _state == .ready else { return nil }
            _state = .enqueued
            if let waiters { channel = waiters.bodyChannel }
            return !uploadHandlers.isEmpty || !downloadHandlers.isEmpty
        }
        guard let wantsProgress else { return }
        let engineParts = draft.hasEngineParts
        if engineParts { draft.prepareEngineParts() }
        switch draft.makeTransfer() {
        case .failure(let error):
            complete(.failure(error), response: nil)
        case .success(let transfer):
            if engineParts, !journalIfFrozen(transfer) { return }
            transfer.reportsProgress = wantsProgress
            transfer.delegate = self
            if let channel, !attachStream(channel, to: transfer) { return }
            // A cancel that raced with building the transfer is honoured before it is submitted.
            let cancelled = lock.withLock { () -> Bool in
                _transfer = transfer
                return cancelRequested
            }
            if cancelled { transfer.cancelBeforeSubmitting() }
            Runtime.shared.submit(transfer)
        }
    }

    /// `Engine.stream`: the body goes to `channel` (beside any download file and streams); false
    /// when the sink could not be made (the operation has failed).
    @inline(never)
    private func attachStream(_ channel: BodyChannel, to transfer: Transfer) -> Bool {
        let sink = channel.sink
        switch draft.makeSink(extraStream: sink) {
        case .success(let made): transfer.sink = made ?? .stream(sink)
        case .failure(let error):
            complete(.failure(error), response: nil)
            return false
        }
        channel.attach(transfer)
        transfer.reportsHead = true
        return true
    }

    /// Adds a continuation `Engine.send` waits on (before `start`). Every waiter gets the one
    /// outcome: sending an operation that is already on its way (sent or enqueued before) waits
    /// for that transfer rather than starting another, and one already finished answers at once.
    func addWaiter(_ continuation: CheckedContinuation<Result<Response, CourierError>, Never>) {
        let done = lock.withLock { () -> Result<Response, CourierError>? in
            if let outcome { return outcome }
            if waiters == nil { waiters = Waiters() }
            waiters!.list.append(continuation)
            return nil
        }
        if let done { continuation.resume(returning: done) }
    }

    /// Adds a channel `Engine.responses` reads from (before `start`); it gets the preview, if
    /// any, and the final outcome.
    func addChannel(_ channel: ResponseChannel) {
        let done = lock.withLock { () -> Result<Response, CourierError>? in
            if let outcome { return outcome }
            if waiters == nil { waiters = Waiters() }
            waiters!.channels.append(channel)
            return nil
        }
        if let done { channel.finish(done) }
    }

    /// Streams the body (before `start`): `Engine.stream` waits for the head, then reads `channel`.
    func streamBody(into channel: BodyChannel, headWaiter: CheckedContinuation<Result<StreamedResponse, CourierError>, Never>) {
        channel.operation = self
        let refused = lock.withLock { () -> Bool in
            guard _state == .ready else { return true }
            if waiters == nil { waiters = Waiters() }
            waiters!.bodyChannel = channel
            waiters!.headWaiter = headWaiter
            return false
        }
        if refused {
            headWaiter.resume(returning: .failure(CourierError(.misuse, "the operation was already sent; stream a new one")))
        }
    }

    /// The head arrived for a streamed body: the caller gets the response, then reads the body.
    fileprivate func streamHeadArrived(_ head: ResponseHead) {
        let (waiter, channel) = lock.withLock { () -> (CheckedContinuation<Result<StreamedResponse, CourierError>, Never>?, BodyChannel?) in
            let waiter = waiters?.headWaiter
            waiters?.headWaiter = nil
            return (waiter, waiters?.bodyChannel)
        }
        guard let waiter, let channel else { return }
        waiter.resume(returning: .success(StreamedResponse(head: head, body: ResponseBody(channel: channel), operation: self)))
    }

    /// A cached-then-fresh preview: completion and finish handlers, and channels, get it; the
    /// operation stays in flight.
    fileprivate func deliverPreview(_ response: Response) {
        let (completions, finishes, channels) = lock.withLock { (completionHandlers, finishHandlers, waiters?.channels ?? []) }
        for channel in channels { channel.push(response) }
        guard !completions.isEmpty || !finishes.isEmpty else { return }
        callbackQueue.runSoon {
            completions.forEach { $0(response) }
            finishes.forEach { $0(.success(response)) }
        }
    }

    /// Runs the handlers of the outcome once, then drops every handler (breaking cycles through
    /// captured values).
    /// `onLoopThread`: the outcome comes from the loop (false: from the caller's thread, a cache
    /// answer or a failure before submission).
    fileprivate func complete(_ result: Result<Response, CourierError>, response: Response?, onLoopThread: Bool = false) {
        if draft.hasEngineParts { leaveOutbox(result) }
        // Handlers are moved out (swapped with empty lists), not copied: no retain/release pairs.
        var completions = HandlerList<@Sendable (Response) -> Void>()
        var errors = HandlerList<@Sendable (CourierError, Response?) -> Void>()
        var finishes = HandlerList<@Sendable (Result<Response, CourierError>) -> Void>()
        var uploads = HandlerList<@Sendable (TransferProgress) -> Void>()
        var downloads = HandlerList<@Sendable (TransferProgress) -> Void>()
        var waiting: Waiters?
        lock.lock()
        _state = .finished
        switch result {
        case .success(let r): _response = r
        case .failure(let e): _error = e; _response = response
        }
        _transfer = nil
        // (Only lists that hold something: an operation usually has one handler of one kind.)
        if !completionHandlers.isEmpty { swap(&completions, &completionHandlers) }
        if !errorHandlers.isEmpty { swap(&errors, &errorHandlers) }
        if !finishHandlers.isEmpty { swap(&finishes, &finishHandlers) }
        if !uploadHandlers.isEmpty { swap(&uploads, &uploadHandlers) }
        if !downloadHandlers.isEmpty { swap(&downloads, &downloadHandlers) }
        if waiters != nil { swap(&waiting, &waiters) }
        lock.unlock()
        if let waiting {
            if case .dispatch(let queue) = callbackQueue, !uploads.isEmpty || !downloads.isEmpty {
                // The last progress report is on the callback queue: an awaiting caller resumes
                // behind it, as completion handlers run behind it.
                queue.async { self.wake(waiting, result, response) }
            } else {
                wake(waiting, result, response)
            }
        }

        guard !completions.isEmpty || !errors.isEmpty || !finishes.isEmpty else { return }
        switch callbackQueue {
        case .loopThread where onLoopThread:
            // Straight from the loop: no closure to allocate, no thread hop.
            Self.deliver(result, response, completions, errors, finishes)
        case .loopThread:
            // Answered on the caller's thread (by the cache, or refused): the handlers still run
            // on the loop.
            Runtime.shared.executeSoon { [completions, errors, finishes] in
                Self.deliver(result, response, completions, errors, finishes)
            }
        case .dispatch(let queue):
            queue.async { [completions, errors, finishes] in Self.deliver(result, response, completions, errors, finishes) }
        }
    }

    private func wake(_ waiting: Waiters, _ result: Result<Response, CourierError>, _ response: Response?) {
        if waiting.bodyChannel != nil { finishStream(waiting, result, response) }
        for waiter in waiting.list { waiter.resume(returning: result) }
        for channel in waiting.channels { channel.finish(result) }
    }

    /// `Engine.stream`'s part of the end: the body ends (an unaccepted status still delivered its
    /// body, so it ends normally), and a caller still waiting for the head gets the outcome.
    private func finishStream(_ waiting: Waiters, _ result: Result<Response, CourierError>, _ response: Response?) {
        guard let channel = waiting.bodyChannel else { return }
        if case .failure(let error) = result, error.code != .httpStatus || waiting.headWaiter != nil {
            channel.finish(.failure(error))
        } else {
            channel.finish(.success(()))
        }
        guard let streamWaiter = waiting.headWaiter else { return }
        switch result {
        case .failure(let error) where response == nil:
            streamWaiter.resume(returning: .failure(error))
        case .failure:
            streamWaiter.resume(returning: .success(StreamedResponse(head: response!.head, body: ResponseBody(channel: channel), operation: self)))
        case .success(let r):
            streamWaiter.resume(returning: .success(StreamedResponse(head: r.head, body: ResponseBody(channel: channel), operation: self)))
        }
    }

    private static func deliver(_ result: Result<Response, CourierError>, _ response: Response?,
                                _ completions: borrowing HandlerList<@Sendable (Response) -> Void>,
                                _ errors: borrowing HandlerList<@Sendable (CourierError, Response?) -> Void>,
                                _ finishes: borrowing HandlerList<@Sendable (Result<Response, CourierError>) -> Void>) {
        switch result {
        case .success(let r):
            completions.forEach { $0(r) }
        case .failure(let e):
            errors.forEach { $0(e, response) }
        }
        finishes.forEach { $0(result) }
    }

    // MARK: - Description

    /// A curl command line that sends the same request, for logs and bug reports
    /// (MKNetworkKit's `curlCommandLineString`).
    public var curlCommand: String {
        var parts = ["curl"]
        if method != .get || body != nil || (!parameters.isEmpty && !ParameterEncoding.usesQuery(method)) {
            if method == .head { parts.append("-I") } else { parts += ["-X", method.rawValue] }
        }
        let resolved = try? draft.resolvedURL()
        let url = resolved.map { u -> String in
            guard let user = u.user else { return u.description }
            return "\(u.scheme.rawValue)://\(user)\(u.password.map { ":" + $0 } ?? "")@\(u.hostHeader)\(u.target)"
        } ?? urlString
        parts.append(Self.shellQuote(url))
        let sentHeaders = resolved.map { draft.resolvedHeaders(url: $0) } ?? headers
        let (requestBody, contentType) = draft.resolvedBody()
        for (name, value) in sentHeaders where !(name.lowercased() == "authorization" && resolved?.user != nil) {
            parts += ["-H", Self.shellQuote("\(name): \(value)")]
        }
        // curl sends headers of its own (User-Agent, Accept); "Name:" removes them as Courier did.
        for name in suppressedHeaders { parts += ["-H", Self.shellQuote(name + ":")] }
        if let contentType, !sentHeaders.contains("Content-Type") { parts += ["-H", Self.shellQuote("Content-Type: \(contentType)")] }
        switch requestBody {
        case .empty:
            break
        case .bytes(let bytes):
            if let text = String(validating: bytes, as: UTF8.self) {
                parts += ["--data-binary", Self.shellQuote(text)]
            } else {
                parts += ["--data-binary", "@-", "# \(bytes.count) binary bytes on stdin"]
            }
        case .file(let path):
            parts += ["--data-binary", Self.shellQuote("@" + path)]
        case .multipart(let form):
            for part in form.parts {
                switch part {
                case .field(let name, let value): parts += ["-F", Self.shellQuote("\(name)=\(value)")]
                case .data(let name, let bytes, let mime, _): parts += ["-F", Self.shellQuote("\(name)=<-;type=\(mime)"), "# \(bytes.count) bytes"]
                case .file(let name, let path, let mime, let fileName):
                    parts += ["-F", Self.shellQuote("\(name)=@\(path);type=\(mime);filename=\(fileName)")]
                }
            }
        case .stream:
            parts += ["-T", "-"]
        }
        if options.decompress { parts.append("--compressed") }
        return parts.joined(separator: " ")
    }

    public var description: String { "Operation(\(method) \(urlString), \(state))" }

    static func shellQuote(_ s: String) -> String {
        if !s.isEmpty, s.utf8.allSatisfy({ b in
            (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
                || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || "-_./:=@%+,".utf8.contains(b)
        }) { return s }
        return "'" + s.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}

/// The continuations of `Engine.send` callers waiting for one operation.
/// Swapped out of the operation under its lock, then owned by the one finishing call.
final class Waiters: @unchecked Sendable {
    var list: [CheckedContinuation<Result<Response, CourierError>, Never>] = []
    /// Readers of `Engine.responses`.
    var channels: [ResponseChannel] = []
    /// `Engine.stream`: the body's channel, and the caller waiting for the head.
    var bodyChannel: BodyChannel?
    var headWaiter: CheckedContinuation<Result<StreamedResponse, CourierError>, Never>?
}

/// Handlers of one kind: the first is stored inline, so the usual single handler costs no array.
struct HandlerList<Handler: Sendable>: Sendable {
    private var first: Handler?
    private var rest: [Handler] = []

    var isEmpty: Bool { first == nil }

    mutating func append(_ handler: Handler) {
        if first == nil { first = handler } else { rest.append(handler) }
    }

    func forEach(_ body: (Handler) -> Void) {
        guard let first else { return }
        body(first)
        for handler in rest { body(handler) }
    }
}

extension Operation: TransferDelegate {
    package func transferDidReceiveHead(_ transfer: Transfer) {
        guard !transfer.machine.followsRedirect, let head = transfer.head else { return }
        streamHeadArrived(head)
    }

    package func transferDidDeliverPreview(_ transfer: Transfer, preview: Transfer) {
        deliverPreview(Response(finished: preview))
    }

    package func transferDidProgress(_ transfer: Transfer) {
        let (uploads, downloads) = lock.withLock { (uploadHandlers, downloadHandlers) }
        if !uploads.isEmpty, transfer.requestBodyLength > 0 || transfer.isRequestBodyChunked {
            let progress = TransferProgress(completed: transfer.requestBodyBytesSent,
                                            expected: transfer.isRequestBodyChunked ? nil : transfer.requestBodyLength)
            callbackQueue.run { uploads.forEach { $0(progress) } }
        }
        if !downloads.isEmpty, transfer.status != 0 {
            var progress = TransferProgress(completed: transfer.metrics.bodyBytesReceived, expected: transfer.expectedBodyLength)
            if case .resumable(let download) = transfer.sink {
                // The whole file's progress, counting what earlier attempts left on disk.
                progress.completed += download.offset
                progress.expected = transfer.expectedBodyLength.map { $0 + download.offset }
            }
            let since = transfer.metrics.firstByte
            if since > 0 {
                let elapsed = Double(monotonicNanos() &- since) / 1e9
                if elapsed > 0 { progress.bytesPerSecond = Double(transfer.metrics.bodyBytesReceived) / elapsed }
            }
            let report = progress
            callbackQueue.run { downloads.forEach { $0(report) } }
        }
    }

    package func transferWillRedirect(_ transfer: Transfer, status: Int, to hop: inout RedirectHop) -> Bool {
        draft.hooks?.decideRedirect(transfer, status: status, hop: &hop) ?? true
    }

    package func transferShouldRetry(_ transfer: Transfer, reason: RetryReason, retry: Int) -> Bool {
        guard let handler = draft.retryHandler else { return true }
        return handler(reason, retry)
    }

    package func transferDidComplete(_ transfer: Transfer) {
        if draft.hasEngineParts, engineCompletion(transfer) { return }
        conclude(transfer)
    }

    /// What the engine's parts do with a completed transfer: a frozen operation without an answer
    /// waits in its outbox, a refused one replays with new credentials. True when they took it
    /// (it is not concluded now).
    @inline(never)
    private func engineCompletion(_ transfer: Transfer) -> Bool {
        if let waiting = draft.outboxToWaitIn(after: transfer),
           lock.withLock({ () -> Bool in
               guard !cancelRequested else { return false }
               _transfer = nil
               _state = .ready
               return true
           }) {
            // No answer: the operation waits in the outbox for the network (its entry stays).
            if transfer.sinkHasFiles { _ = transfer.finishSink(succeeded: false) }
            waiting.outbox.hold(self, id: waiting.id)
            return true
        }
        if let challenge = draft.challenge, !challenge.replayed, let refused = Challenge.of(transfer),
           lock.withLock({ waiters?.bodyChannel == nil }) {
            challenge.replayed = true
            let sent = refused.isProxy ? challenge.sent.1 : challenge.sent.0
            challenge.beginWaiting()
            challenge.authenticator.challenged(refused, sentGeneration: sent) { [self] credentials in
                guard challenge.endWaiting() else { return }  // cancelled meanwhile
                guard let credentials, draft.adopt(credentials, forProxy: refused.isProxy) else {
                    conclude(transfer)
                    return
                }
                // The refusal is dropped (a download's staged file with it) and the request goes again.
                if transfer.sinkHasFiles { _ = transfer.finishSink(succeeded: false) }
                lock.withLock {
                    _transfer = nil
                    _state = .ready
                }
                start()
            }
            return true
        }
        return false
    }

    /// Reports how `transfer` ended.
    @inline(__always)
    private func conclude(_ transfer: Transfer) {
        if transfer.retries > 0 {
            let reasons = transfer.machine.retryReasons
            lock.withLock { _retryLog = reasons }
        }
        let verdict: TransferVerdict
        var response: Response?
        if draft.hasEngineParts, let hooks = draft.hooks {
            let judged: Response?
            (verdict, judged) = hooks.judge(transfer, accepting: acceptableStatus)
            response = judged
            hooks.report(transfer, error: verdict.error)
        } else {
            verdict = TransferVerdict(transfer, accepting: acceptableStatus)
        }
        if response == nil, verdict.hasResponse { response = Response(finished: transfer) }
        if transfer.reportsProgress, transfer.error == nil {
            // The last progress report always says "done", whatever the throttle skipped.
            transferDidProgress(transfer)
        }
        // A cache answer (or a refusal) ends on the caller's thread.
        let onLoop = !transfer.concludedOffLoop
        if let error = verdict.error {
            // The response of a failed request rides with the error (`CourierError.response`).
            complete(.failure(response.map { error.attaching($0) } ?? error), response: response, onLoopThread: onLoop)
        } else {
            complete(.success(response!), response: response, onLoopThread: onLoop)
        }
    }
}
