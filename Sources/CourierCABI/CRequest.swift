import Courier
import CourierCore
import Dispatch

public typealias courier_done_fn = @convention(c) (OpaquePointer?, OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> Void
public typealias courier_progress_fn = @convention(c) (OpaquePointer?, Int32, UInt64, Int64, UnsafeMutableRawPointer?) -> Void
public typealias courier_activity_fn = @convention(c) (Int32, Int32, UnsafeMutableRawPointer?) -> Void

/// `courier_request`: a `RequestDraft` (the same configuration and transfer building as Swift's
/// `Operation`, so the same settings send the same bytes through the same queue), and, once
/// sent, the core transfer it hears from directly: no handler closures or result values in
/// between, which keeps the C path as cheap as the Swift one.
final class CRequest: TransferDelegate, @unchecked Sendable {
    /// Must stay the first stored property (see `HandleTag`).
    @exclusivity(unchecked) var tag = HandleTag.request
    let engine: CEngine
    @exclusivity(unchecked) var draft: RequestDraft
    @exclusivity(unchecked) private(set) var acceptedStatus: Range<Int>
    @exclusivity(unchecked) var progress: (courier_progress_fn, UnsafeMutableRawPointer?)?
    /// courier_request_set_debug (or the engine's): shown every exchange's heads.
    @exclusivity(unchecked) var debug: (courier_debug_fn, UnsafeMutableRawPointer?)?
    /// `courier_request_set_retry_callback` (plain C values: nothing to release).
    @exclusivity(unchecked) var retryCallback: (courier_retry_fn, UnsafeMutableRawPointer?)?
    /// Write and read callbacks, the head callback (made on first use).
    @exclusivity(unchecked) private var _streams: CStreamSettings?
    var streams: CStreamSettings {
        if let _streams { return _streams }
        let made = CStreamSettings()
        _streams = made
        return made
    }
    /// The body reader, if any (read from the reading thread: never creates the settings).
    var bodyPipe: CBodyPipe? { _streams?.pipe }
    /// Fields added with courier_request_add_form_field, in order (the body is re-made from them).
    @exclusivity(unchecked) var formFields: FormFields?
    @exclusivity(unchecked) private var errorMessage: OwnedCString?
    /// courier_request_set_user_data's pointer (curl's CURLOPT_PRIVATE): Courier never reads it.
    @exclusivity(unchecked) var userData: UnsafeMutableRawPointer?

    /// Where the outcome goes; set by `send` before the transfer is handed over.
    @exclusivity(unchecked) private(set) var delivery = Delivery.none

    /// How the end is reported.
    enum Delivery: @unchecked Sendable {
        case none
        case callback(courier_done_fn, UnsafeMutableRawPointer?)
        case completionQueue
        case wait(DispatchSemaphore)
        /// A group's member: the response handle (owned by the receiver) and the code. (Boxed:
        /// a closure payload made every copy of a delivery cost more.)
        case handler(Box<@Sendable (OpaquePointer?, Int32) -> Void>)
    }

    // Shared between the caller's thread and the loop thread, under an inline spin lock (held
    // for a few loads and stores, never across a call).
    private let lock = SpinLock()
    @exclusivity(unchecked) private var sent = false
    @exclusivity(unchecked) private var freed = false
    /// Inside `send`: an outcome reported now is deferred, so a callback never runs inside
    /// courier_request_send and always on the loop thread.
    @exclusivity(unchecked) private var starting = false
    /// The outcome was delivered (or dropped): nothing left to cancel.
    @exclusivity(unchecked) private var ended = false
    /// Entries for this request in the engine's completion queue not yet taken by
    /// courier_engine_next_done (a preview and the final response): while the queue holds the
    /// handle it cannot be reset.
    @exclusivity(unchecked) private var pendingPickups = 0
    @exclusivity(unchecked) private var cancelRequested = false
    @exclusivity(unchecked) private var transfer: Transfer?
    /// Outcome of a blocking `courier_request_perform`.
    @exclusivity(unchecked) private var waitResult: (response: OpaquePointer?, code: Int32) = (nil, 0)

    @inline(__always)
    init(engine: CEngine, draft: consuming RequestDraft, acceptedStatus: Range<Int>) {
        self.engine = engine
        self.draft = draft
        self.acceptedStatus = acceptedStatus
        if engine.composed { adoptEngineParts() }
    }

    /// The engine's authenticator, hooks and outbox, for a request made or reset now.
    @inline(never)
    private func adoptEngineParts() {
        if let authenticator = engine.authenticator { draft.challenge = ChallengeState(authenticator) }
        if let hooks = engine.hooks { draft.hooks = hooks }
        if let outbox = engine.outbox { draft.outbox = outbox }
        metricsHook = engine.cHooks
        debug = engine.debug
    }

    /// `courier_request_reset`: the handle becomes what `courier_request_create` makes from the
    /// engine now, with `draft`, and may be sent again; only the user data pointer stays. False
    /// (nothing changed) while the request is in flight: sent and its outcome not delivered.
    func reset(draft: consuming RequestDraft) -> Bool {
        lock.lock()
        guard !sent || (ended && !starting && pendingPickups == 0) else {
            lock.unlock()
            return false
        }
        sent = false
        ended = false
        cancelRequested = false
        transfer = nil
        lock.unlock()
        self.draft = draft
        acceptedStatus = engine.acceptedStatus
        progress = nil
        retryCallback = nil
        _streams = nil
        formFields = nil
        errorMessage = nil
        delivery = .none
        waitResult = (nil, 0)
        metricsHook = nil
        debug = nil
        if engine.composed { adoptEngineParts() }
        return true
    }

    /// The engine's metrics hook when it has one.
    @exclusivity(unchecked) private var metricsHook: CHooks?

    var isFreed: Bool { lock.withLock { freed } }

    /// courier_engine_next_done handed one of the request's entries out (or the queue refused it).
    func pickedUp() { lock.withLock { pendingPickups -= 1 } }
    var wasSent: Bool { lock.withLock { sent } }

    /// The message for `courier_request_errmsg`.
    var errorText: UnsafePointer<CChar> {
        if let errorMessage { return UnsafePointer(errorMessage.pointer) }
        return courierStaticString(COURIER_OK)
    }

    /// Records `error` as the handle's message and returns its code.
    @discardableResult
    func record(_ error: CourierError) -> Int32 {
        errorMessage = OwnedCString(error.message)
        return error.code.c
    }

    /// Builds the transfer and hands it to the shared queue; the outcome goes where `delivery`
    /// says.
    func send(_ delivery: Delivery) -> Int32 {
        lock.lock()
        let first = !sent
        sent = true
        starting = first
        lock.unlock()
        guard first else { return record(CourierError(.misuse, "the request was already sent")) }
        self.delivery = delivery
        submitDraft()
        lock.withLock { starting = false }
        return COURIER_OK
    }

    /// Builds the transfer from the draft and submits it (first sends, and a challenge's replay).
    private func submitDraft() {
        let engineParts = draft.hasEngineParts
        if engineParts { draft.prepareEngineParts() }
        switch draft.makeTransfer() {
        case .failure(let error):
            // No I/O happened; reported like any other failure, from the loop thread.
            deliverSoon(error)
        case .success(let transfer):
            if engineParts, let failure = draft.journalIfFrozen(transfer) {
                deliverSoon(failure)
                return
            }
            transfer.reportsProgress = progress != nil
            transfer.delegate = self
            if _streams?.head != nil || debug != nil { transfer.reportsHead = true }
            // The debug callback is shown what connecting did, the TLS handshake step by step.
            if debug != nil { transfer.options.tracesConnections = true }
            lock.lock()
            self.transfer = transfer
            if cancelRequested { transfer.cancelBeforeSubmitting() }
            lock.unlock()
            Runtime.shared.submit(transfer)
        }
    }

    /// A frozen request's end goes to its outbox's handlers (not a shutdown: the entry waits
    /// for the next process).
    @inline(never)
    private func reportToOutbox(_ transfer: Transfer?, error: CourierError?) {
        guard let frozen = draft.freezing, frozen.journaled, let outbox = draft.outbox else { return }
        let failure = error ?? transfer?.error
        guard failure?.code != .shutdown else { return }
        let result: Result<Response, CourierError> = transfer.flatMap { $0.head != nil ? .success(Response(finished: $0)) : nil }
            ?? .failure(failure ?? CourierError(.cancelled))
        outbox.finish(id: frozen.id, kind: frozen.kind, result: result)
    }

    /// A frozen request without an answer waits in its outbox for the network (its entry stays);
    /// true when it does.
    @inline(never)
    private func holdInOutbox(_ transfer: Transfer) -> Bool {
        guard let waiting = draft.outboxToWaitIn(after: transfer),
              lock.withLock({ () -> Bool in
                  guard !cancelRequested, !freed else { return false }
                  self.transfer = nil
                  return true
              }) else { return false }
        if transfer.sinkHasFiles { _ = transfer.finishSink(succeeded: false) }
        waiting.outbox.hold(self, id: waiting.id)
        return true
    }

    /// A failure known before any I/O, reported like any other, from the loop thread.
    private func deliverSoon(_ error: CourierError) {
        let deferred = UncheckedSendable((self, error))
        Runtime.shared.executeSoon { deferred.value.0.finish(nil, error: deferred.value.1) }
    }

    /// `courier_request_perform`: send and wait (never on the loop thread).
    func perform() -> (response: OpaquePointer?, code: Int32) {
        let done = DispatchSemaphore(value: 0)
        let code = send(.wait(done))
        if code != COURIER_OK { return (nil, code) }
        done.wait()
        return waitResult
    }

    /// `courier_request_resume`: a paused write callback is offered its piece again and reading
    /// goes on; a paused read callback is asked again.
    func resume() {
        let target = lock.withLock { ended ? nil : transfer }
        guard let target else { return }
        Runtime.shared.resume(target)
        if let reader = _streams?.reader {
            let boxed = UncheckedSendable(reader)
            Runtime.shared.execute { boxed.value.resume() }
        }
    }

    /// The URL the request goes to (for responses shown before it finished).
    var currentURL: CourierURL {
        lock.withLock { transfer?.url } ?? ((try? draft.resolvedURL()) ?? (try! CourierURL(parsing: "http://invalid/")))
    }

    func cancel() {
        lock.lock()
        if !ended { cancelRequested = true }
        let target = ended ? nil : transfer
        lock.unlock()
        if let target { Runtime.shared.cancel(target) }
        endChallengeWait()
    }

    /// The C handle is gone: cancel what is in flight, and report nothing more.
    @inline(__always)
    func markFreed() {
        lock.lock()
        freed = true
        let running = !ended
        let target = running ? transfer : nil
        lock.unlock()
        guard running else { return }
        if let target { Runtime.shared.cancel(target) }
        endChallengeWait()
    }

    /// Refused and waiting for the authenticator's refresh (no transfer to cancel, and the
    /// refresh may take long): the request ends now as cancelled; the answer is dropped.
    @inline(__always)
    private func endChallengeWait() {
        if draft.hasEngineParts { endEngineWaits() }
    }

    /// Ends a wait for an authenticator's refresh or for the network (in the outbox).
    @inline(never)
    private func endEngineWaits() {
        if let frozen = draft.freezing, let outbox = draft.outbox, outbox.cancelWaiting(id: frozen.id) {
            Runtime.shared.executeOrRunHere { self.finish(nil, error: CourierError(.cancelled, "cancelled while waiting in the outbox")) }
            return
        }
        guard let challenge = draft.challenge, challenge.endWaiting() else { return }
        Runtime.shared.executeOrRunHere { self.finish(nil, error: CourierError(.cancelled, "cancelled while waiting for new credentials")) }
    }

    // MARK: TransferDelegate (loop thread)

    /// The final head, to the head callback (a borrowed response valid during the call), before
    /// any body byte reaches the write callbacks.
    func transferDidReceiveHead(_ transfer: Transfer) {
        if let debug, !isFreed { reportExchange(debug, request: borrowedHandle(self), transfer) }
        guard let (report, user) = _streams?.head, !transfer.machine.followsRedirect, !isFreed else { return }
        let shown = CResponse(transfer)
        withExtendedLifetime(shown) { report(borrowedHandle(self), borrowedHandle(shown), user) }
    }

    /// cached-then-fresh: the stored response is delivered first, as a response of its own
    /// (`courier_response_is_preview`), on the loop thread; the job is queued before the transfer
    /// itself, so it always comes first. A blocking perform waits for the final one only.
    func transferDidDeliverPreview(_ transfer: Transfer, preview: Transfer) {
        let deferred = UncheckedSendable((self, preview))
        Runtime.shared.executeSoon {
            let (request, preview) = deferred.value
            guard !request.isFreed else { return }
            let response = retainedHandle(CResponse(preview))
            switch request.delivery {
            case .callback(let done, let user):
                done(borrowedHandle(request), response, COURIER_OK, user)
            case .completionQueue:
                request.lock.withLock { request.pendingPickups += 1 }
                if !request.engine.pushCompletion(CEngine.Completed(request: request, response: response, code: COURIER_OK)) {
                    request.pickedUp()
                    releaseHandle(response)
                }
            case .wait, .handler, .none:
                // (A group member's outcome is its final response.)
                releaseHandle(response)
            }
        }
    }

    func transferDidProgress(_ transfer: Transfer) {
        guard let (report, user) = progress, !isFreed else { return }
        let handle = borrowedHandle(self)
        if transfer.requestBodyLength > 0 || transfer.isRequestBodyChunked {
            report(handle, 0, transfer.requestBodyBytesSent, transfer.isRequestBodyChunked ? -1 : Int64(transfer.requestBodyLength), user)
        }
        if transfer.status != 0 {
            report(handle, 1, transfer.metrics.bodyBytesReceived, transfer.expectedBodyLength.map { Int64($0) } ?? -1, user)
        }
    }

    func transferWillRedirect(_ transfer: Transfer, status: Int, to hop: inout RedirectHop) -> Bool {
        draft.hooks?.decideRedirect(transfer, status: status, hop: &hop) ?? true
    }

    func transferShouldRetry(_ transfer: Transfer, reason: RetryReason, retry: Int) -> Bool {
        guard let (callback, user) = retryCallback, !isFreed else { return true }
        switch reason {
        case .failure(let error): return callback(borrowedHandle(self), Int32(retry), error.code.c, 0, user) != 0
        case .status(let status): return callback(borrowedHandle(self), Int32(retry), 0, Int32(status), user) != 0
        }
    }

    func transferDidComplete(_ transfer: Transfer) {
        if draft.hasEngineParts, engineCompletion(transfer) { return }
        lock.lock()
        let deferToLoop = starting
        lock.unlock()
        if deferToLoop || !Runtime.shared.isOnLoopThread {
            // Completed while send() has not returned yet (refused before any I/O). During a
            // shutdown the loop takes no more jobs and the outcome is reported on this thread.
            let deferred = UncheckedSendable((self, transfer))
            Runtime.shared.executeSoon { deferred.value.0.deliver(deferred.value.1, error: nil) }
            return
        }
        deliver(transfer, error: nil)
    }

    /// What the engine's parts make of a completed transfer: a frozen request without an answer
    /// waits in its outbox, a refusal goes to the authenticator (true: it is not delivered now);
    /// otherwise a frozen request's outcome reaches its outbox first (false: deliver it).
    @inline(never)
    private func engineCompletion(_ transfer: Transfer) -> Bool {
        if holdInOutbox(transfer) { return true }
        if let challenge = draft.challenge, !challenge.replayed, _streams == nil,
           let refused = Challenge.of(transfer) {
            challenge.replayed = true
            let sent = refused.isProxy ? challenge.sent.1 : challenge.sent.0
            challenge.beginWaiting()
            challenge.authenticator.challenged(refused, sentGeneration: sent) { [self] credentials in
                guard challenge.endWaiting() else { return }  // cancelled or freed meanwhile
                guard let credentials, !isFreed, draft.adopt(credentials, forProxy: refused.isProxy) else {
                    let deferred = UncheckedSendable((self, transfer))
                    Runtime.shared.executeOrRunHere { deferred.value.0.finish(deferred.value.1, error: nil) }
                    return
                }
                // The refusal is dropped (a download's staged file with it) and the request goes again.
                if transfer.sinkHasFiles { _ = transfer.finishSink(succeeded: false) }
                submitDraft()
            }
            return true
        }
        reportToOutbox(transfer, error: nil)
        return false
    }

    /// `deliver`, after telling the outbox of a frozen request's end (the paths that skip
    /// `transferDidComplete`: failures before I/O, cancellations while waiting, refusals).
    private func finish(_ transfer: Transfer?, error: CourierError?) {
        if draft.hasEngineParts { reportToOutbox(transfer, error: error) }
        deliver(transfer, error: error)
    }

    /// Reports the outcome (loop thread): a response handle when a response arrived, and the
    /// code — COURIER_OK, or why not (`TransferVerdict`, the rule Swift operations follow too).
    /// `error` without a transfer is a failure before any I/O.
    private func deliver(_ transfer: Transfer?, error: CourierError?) {
        let engineParts = draft.hasEngineParts
        lock.lock()
        ended = true
        if case .completionQueue = delivery { pendingPickups += 1 }
        self.transfer = nil
        let gone = freed
        lock.unlock()
        let verdict = transfer.map { transfer in
            engineParts && draft.hooks != nil ? draft.hooks!.judge(transfer, accepting: acceptedStatus).0 : TransferVerdict(transfer, accepting: acceptedStatus)
        }
        if gone {
            bodyPipe?.finish(CourierError.Code.cancelled.c, notify: false)
            // A group still counts its members: one freed while running ends as cancelled.
            if case .handler(let report) = delivery { report.value(nil, CourierError.Code.cancelled.c) }
            return
        }
        var code = COURIER_OK
        if let failure = verdict?.error ?? error {
            code = record(failure)
            // What connecting did, up to where it stopped, when it failed before any response.
            if let debug, let transfer, transfer.error != nil { reportFailedConnection(debug, request: borrowedHandle(self), transfer) }
        } else if errorMessage != nil {
            // (Tested first: storing nil over nil still called the runtime to release nothing.)
            errorMessage = nil
        }
        // A reader learns the end before the done callback runs (its message is recorded).
        bodyPipe?.finish(code)
        if let transfer, transfer.reportsProgress, transfer.error == nil { transferDidProgress(transfer) }
        let response = verdict?.hasResponse == true ? transfer.map { retainedHandle(CResponse($0)) } : nil
        if let hook = metricsHook?.metrics, transfer != nil { hook(borrowedHandle(self), response, code, metricsHook?.user) }
        switch delivery {
        case .callback(let done, let user):
            done(borrowedHandle(self), response, code, user)
        case .handler(let report):
            report.value(response, code)
        case .completionQueue:
            if !engine.pushCompletion(CEngine.Completed(request: self, response: response, code: code)) {
                pickedUp()
                if let response { releaseHandle(response) }
            }
        case .wait(let semaphore):
            waitResult = (response, code)
            semaphore.signal()
        case .none:
            if let response { releaseHandle(response) }
        }
    }
}

extension CRequest: OutboxSender {
    var outboxSequence: UInt64 { draft.freezing?.sequence ?? 0 }
    func resendFromOutbox() { submitDraft() }
    func abandonFromOutbox() {
        let error = CourierError(.shutdown, "the engine was destroyed; the request waits in the outbox for the next process")
        Runtime.shared.executeOrRunHere { self.deliver(nil, error: error) }
    }
}
