import CourierCore

/// The operation's handlers and outcome, readable and addable from any thread.
extension HTTPOperation {
    // MARK: - Handlers

    /// Adds a handler for success. Handlers added after completion run at once (on the queue).
    @discardableResult
    public func onCompletion(_ handler: @escaping @Sendable (Response) -> Void) -> HTTPOperation {
        let done = lock.withLock { () -> Response? in
            if case .success(let r)? = outcome { return r }
            if !session.isConcluded { completionHandlers.append(handler) }
            return nil
        }
        if let done { callbackQueue.run { handler(done) } }
        return self
    }

    /// Adds a handler for failure; the response is there when the server answered (a 404 body,
    /// for instance).
    @discardableResult
    public func onError(_ handler: @escaping @Sendable (CourierError, Response?) -> Void) -> HTTPOperation {
        let done = lock.withLock { () -> (CourierError, Response?)? in
            if case .failure(let e)? = outcome { return (e, _response) }
            if !session.isConcluded { errorHandlers.append(handler) }
            return nil
        }
        if let done { callbackQueue.run { handler(done.0, done.1) } }
        return self
    }

    /// Adds a handler that sees either outcome.
    @discardableResult
    public func onFinish(_ handler: @escaping @Sendable (Result<Response, CourierError>) -> Void) -> HTTPOperation {
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
    public func onRetry(_ handler: @escaping @Sendable (RetryReason, Int) -> Bool) -> HTTPOperation {
        draft.retryHandler = handler
        return self
    }

    /// Why each retry happened, in order (empty when the first attempt was the last), once
    /// finished. `response.metrics.retries` counts them.
    public var retryReasons: [RetryReason] { lock.withLock { _retryLog ?? [] } }

    /// Adds a handler for request-body progress (at most every 50 ms, and at the end). Add it
    /// before the operation is enqueued.
    @discardableResult
    public func onUploadProgress(_ handler: @escaping @Sendable (TransferProgress) -> Void) -> HTTPOperation {
        lock.withLock { uploadHandlers.append(handler) }
        return self
    }

    /// Adds a handler for response-body progress (at most every 50 ms, and at the end). Add it
    /// before the operation is enqueued.
    @discardableResult
    public func onDownloadProgress(_ handler: @escaping @Sendable (TransferProgress) -> Void) -> HTTPOperation {
        lock.withLock { downloadHandlers.append(handler) }
        return self
    }

    // MARK: - Outcome

    /// The current state.
    public var state: State {
        switch lock.withLock({ session.phase }) {
        case .ready, .heldInOutbox: return .ready
        case .sending, .awaitingCredentials, .replaying: return .enqueued
        case .finished: return .finished
        }
    }
    /// Sends the operation and waits for its response. One way per task: `engine.send(operation)`.
    @available(*, deprecated, message: "use engine.send(operation) (Engine.shared.send for a stand-alone operation)")
    public func send() async throws(CourierError) -> Response {
        try await sendAndWait()
    }

    /// `Engine.send`: every caller waits for the one transfer (sending twice waits for the same
    /// one); cancelling the calling task cancels the operation.
    func sendAndWait() async throws(CourierError) -> Response {
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
        let (action, target) = lock.withLock { (session.cancel(), _transfer) }
        switch action {
        case .none:
            break
        case .cancelTransfer:
            // (Not submitted yet: `start` cancels it as it submits it.)
            if let target { Runtime.shared.cancel(target) }
        case .concludeWaiting(let leavesOutbox):
            // Waiting for new credentials or for the network: there is no transfer to cancel, and
            // the wait may be long; the operation ends now (an answer, when it comes, is dropped).
            if leavesOutbox, let frozen = draft.freezing, let outbox = draft.outbox { _ = outbox.cancelWaiting(id: frozen.id) }
            let waitedFor = leavesOutbox ? "waiting in the outbox" : "waiting for new credentials"
            complete(.failure(CourierError(.cancelled, "cancelled while \(waitedFor)")), response: nil)
        }
    }
}
