import Courier
import CourierCore
import Dispatch

/// What the transfer reports, on the loop thread: to the C callbacks, carried out as the
/// request's `RequestSession` decides.
extension CRequest {
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

    /// What the request's session makes of a completed attempt: a frozen request without an
    /// answer waits in its outbox, a refusal goes to the authenticator (true: it is not delivered
    /// now).
    @inline(never)
    func engineCompletion(_ transfer: Transfer) -> Bool {
        let attempt = draft.attempt(transfer, bodyStreamed: _streams != nil)
        let action = lock.withLock { () -> RequestSession.AttemptAction in
            let action = session.attemptEnded(attempt)
            if case .conclude = action {} else { self.transfer = nil }
            return action
        }
        switch action {
        case .conclude:
            return false
        case .holdInOutbox:
            // No answer: the request waits in the outbox for the network (its entry stays).
            guard let frozen = draft.freezing, let outbox = draft.outbox else { preconditionFailure("held without an outbox") }
            if transfer.sinkHasFiles { _ = transfer.finishSink(succeeded: false) }
            if let debug, !isFreed {
                // The attempt's connecting, up to where it stopped, and the wait it begins.
                reportFailedConnection(debug, request: borrowedHandle(self), transfer)
                reportText(debug, request: borrowedHandle(self), "Waiting in the outbox for the network (\(transfer.error?.message ?? "no answer"))")
            }
            outbox.hold(self, id: frozen.id)
        case .askForCredentials:
            draft.askForCredentials(after: transfer) { [self] credentials, forProxy in
                let adopted = credentials.map { draft.adopt($0, forProxy: forProxy) } ?? false
                switch lock.withLock({ session.credentialsAnswered(adopted: adopted) }) {
                case .ignore:
                    break  // cancelled or freed meanwhile, and concluded then
                case .conclude:
                    let deferred = UncheckedSendable((self, transfer))
                    Runtime.shared.executeOrRunHere { deferred.value.0.deliver(deferred.value.1, error: nil) }
                case .sendAgain:
                    // The refusal is dropped (a download's staged file with it) and the request goes again.
                    if transfer.sinkHasFiles { _ = transfer.finishSink(succeeded: false) }
                    if lock.withLock({ session.replay() }) { submitDraft() }
                }
            }
        }
        return true
    }

    /// Reports the outcome (loop thread): a response handle when a response arrived, and the
    /// code — COURIER_OK, or why not (`TransferVerdict`, the rule Swift operations follow too).
    /// `error` without a transfer is a failure before any I/O.
    func deliver(_ transfer: Transfer?, error: CourierError?) {
        let engineParts = draft.hasEngineParts
        // (Only a journaled request's outcome is worked out: `draft` is read in place only for its
        // stored flag, a call on it would copy the whole draft.)
        let journaled = draft.hasEngineParts && draft.isJournaled
        let failure = journaled ? error ?? transfer?.error : nil
        let outcome = journaled ? (answered: (transfer?.headStatus ?? 0) != 0, failure: failure?.code) : nil
        lock.lock()
        let entry = session.conclude(journaled: outcome)
        if case .completionQueue = delivery { pendingPickups += 1 }
        self.transfer = nil
        let gone = freed
        lock.unlock()
        // A frozen request's end reaches its outbox (out of the journal, to the handlers) first.
        if case .none = entry {} else {
            draft.settle(entry, result: transfer.flatMap { $0.head != nil ? .success(Response(finished: $0)) : nil }
                         ?? .failure(failure ?? CourierError(.cancelled))) { $0() }
        }
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
