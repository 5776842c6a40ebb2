import CourierCore

/// The transfer's reports, carried out as the operation's `RequestSession` decides.
extension HTTPOperation: TransferDelegate {
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

    /// What the operation's session makes of a completed attempt: a frozen operation without an
    /// answer waits in its outbox, a refusal goes to the authenticator. True when the attempt is
    /// not concluded now.
    @inline(never)
    func engineCompletion(_ transfer: Transfer) -> Bool {
        let attempt = draft.attempt(transfer, bodyStreamed: lock.withLock { waiters?.bodyChannel != nil })
        let action = lock.withLock { () -> RequestSession.AttemptAction in
            let action = session.attemptEnded(attempt)
            if case .conclude = action {} else { _transfer = nil }
            return action
        }
        switch action {
        case .conclude:
            return false
        case .holdInOutbox:
            // No answer: the operation waits in the outbox for the network (its entry stays).
            guard let frozen = draft.freezing, let outbox = draft.outbox else { preconditionFailure("held without an outbox") }
            if transfer.sinkHasFiles { _ = transfer.finishSink(succeeded: false) }
            outbox.hold(self, id: frozen.id)
        case .askForCredentials:
            draft.askForCredentials(after: transfer) { [self] credentials, forProxy in
                let adopted = credentials.map { draft.adopt($0, forProxy: forProxy) } ?? false
                switch lock.withLock({ session.credentialsAnswered(adopted: adopted) }) {
                case .ignore:
                    break  // cancelled meanwhile, and concluded then
                case .conclude:
                    conclude(transfer)
                case .sendAgain:
                    // The refusal is dropped (a download's staged file with it) and the request goes again.
                    if transfer.sinkHasFiles { _ = transfer.finishSink(succeeded: false) }
                    start()
                }
            }
        }
        return true
    }

    /// Reports how `transfer` ended.
    @inline(__always)
    func conclude(_ transfer: Transfer) {
        if transfer.retries > 0 {
            let reasons = transfer.machine.retryReasons
            lock.withLock { _retryLog = reasons }
        }
        // The one completion rule (`TransferVerdict`), through the engine's response hook when it
        // has one, as a C request's.
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
