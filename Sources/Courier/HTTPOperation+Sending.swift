import CourierCore

/// Sending: the transfer built and submitted, the waiters of `send`, `responses` and `stream`,
/// and the one completion that runs every handler.
extension HTTPOperation {
    // MARK: - Sending

    /// Builds the core transfer and submits it. Called by the engine. (Inlined there, as it was
    /// before the streaming branch made it look too big to the optimizer.)
    @inline(__always)
    func start() {
        var channel: BodyChannel?
        let wantsProgress = lock.withLock { () -> Bool? in
            guard session.begin() else { return nil }
            if let waiters { channel = waiters.bodyChannel }
            return !uploadHandlers.isEmpty || !downloadHandlers.isEmpty
        }
        guard let wantsProgress else { return }
        switch draft.makeAttempt() {
        case .failure(let error):
            complete(.failure(error), response: nil)
        case .success(let transfer):
            transfer.reportsProgress = wantsProgress
            transfer.delegate = self
            if let channel, !attachStream(channel, to: transfer) { return }
            // A cancel that raced with building the transfer is honoured before it is submitted.
            let cancelled = lock.withLock { () -> Bool in
                _transfer = transfer
                return session.cancelRequested
            }
            transfer.submit(cancelled: cancelled)
        }
    }

    /// `Engine.stream`: the body goes to `channel` (beside any download file and streams); false
    /// when the sink could not be made (the operation has failed).
    @inline(never)
    func attachStream(_ channel: BodyChannel, to transfer: Transfer) -> Bool {
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
            guard !session.wasSent else { return true }
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
    func streamHeadArrived(_ head: ResponseHead) {
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
    func deliverPreview(_ response: Response) {
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
    func complete(_ result: Result<Response, CourierError>, response: Response?, onLoopThread: Bool = false) {
        // Handlers are moved out (swapped with empty lists), not copied: no retain/release pairs.
        var completions = HandlerList<@Sendable (Response) -> Void>()
        var errors = HandlerList<@Sendable (CourierError, Response?) -> Void>()
        var finishes = HandlerList<@Sendable (Result<Response, CourierError>) -> Void>()
        var uploads = HandlerList<@Sendable (TransferProgress) -> Void>()
        var downloads = HandlerList<@Sendable (TransferProgress) -> Void>()
        var waiting: Waiters?
        lock.lock()
        var outcome: (answered: Bool, failure: CourierError.Code?)?
        if draft.hasEngineParts, draft.isJournaled {
            switch result {
            case .success: outcome = (true, nil)
            case .failure(let error): outcome = (response != nil, error.code)
            }
        }
        let entry = session.conclude(journaled: outcome)
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
        // A frozen operation's entry leaves the journal before anyone hears of the end (a caller
        // that saw the outcome finds the outbox without it); the outbox's handlers run on the
        // callback queue.
        if case .none = entry {} else { draft.settle(entry, result: result) { callbackQueue.run($0) } }
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

    func wake(_ waiting: Waiters, _ result: Result<Response, CourierError>, _ response: Response?) {
        if waiting.bodyChannel != nil { finishStream(waiting, result, response) }
        for waiter in waiting.list { waiter.resume(returning: result) }
        for channel in waiting.channels { channel.finish(result) }
    }

    /// `Engine.stream`'s part of the end: the body ends (an unaccepted status still delivered its
    /// body, so it ends normally), and a caller still waiting for the head gets the outcome.
    func finishStream(_ waiting: Waiters, _ result: Result<Response, CourierError>, _ response: Response?) {
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

    static func deliver(_ result: Result<Response, CourierError>, _ response: Response?,
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
}
