/// Retries: whether the policy retries a failure or a status and after how long, whether the
/// request may be sent twice at all, and the approval and rewind a retry waits for.
extension TransferStateMachine {
    /// The retries so far, and the failure the last one is for.
    package struct RetryRecord: Sendable {
        var reasons: [RetryReason] = []
        var failure: CourierError?
        /// The retry's interval ended with the network down after a `.noRoute` failure: it waits
        /// for the network (`networkReturned`) instead, until its queue deadline.
        var waitsForNetwork = false
    }

    /// How long a retry waits for the network to come back, at most (less when its total
    /// deadline comes first): a flapping link is back in seconds; one down for longer ends the
    /// request with the failure it was waiting to retry.
    package static let networkWaitLimit: UInt64 = 60_000

    /// Whether the transfer is a retry waiting for the network to come back.
    package var waitsForNetwork: Bool { state == .waitingToRetry && retryRecord?.waitsForNetwork == true }

    /// The retry's interval ended (`waitDeadlinePassed`): it joins the queue again, or, when its
    /// failure was "no route" and the network is still down (`offline`), waits for the network
    /// rather than spend an attempt that cannot leave the machine; a wait for the network that
    /// reached its deadline ends with that failure.
    mutating func retryIntervalEnded(now: UInt64, offline: Bool) -> Action {
        guard var record = retryRecord else { preconditionFailure("a retry waiting without a record") }
        if record.waitsForNetwork {
            state = .finished
            queueDeadline = .max
            return failed(record.failure ?? CourierError(.noRoute), releasing: .retryWait)
        }
        if offline, record.failure?.code == .noRoute {
            record.waitsForNetwork = true
            retryRecord = record
            queueDeadline = min(totalDeadline, Self.later(now, by: Self.networkWaitLimit))
            return .none
        }
        // The queue's own deadline bounded the first wait only.
        state = .queued
        queueDeadline = .max
        return .requeue
    }

    /// The network came back: a retry waiting for it joins the queue now.
    package mutating func networkReturned() -> Action {
        guard waitsForNetwork, var record = retryRecord else { return .none }
        record.waitsForNetwork = false
        retryRecord = record
        state = .queued
        queueDeadline = .max
        return .requeue
    }

    /// What the executor knows when an attempt fails and the request has a retry policy.
    package struct RetryInput: Sendable {
        package var policy: RetryPolicy
        /// The method and body allow sending the request twice (`RetryPolicy.permits`).
        package var permitted: Bool
        /// A response head had arrived when the failure came.
        package var responseStarted: Bool
        /// The loop clock (milliseconds).
        package var now: UInt64
        /// Since the operation was first queued: a policy's `maxTime` counts from there.
        package var elapsed: Nanoseconds
        /// In [0, 1), for the jitter.
        package var random: Double

        package init(policy: RetryPolicy, permitted: Bool, responseStarted: Bool = false, now: UInt64,
                     elapsed: Nanoseconds = Nanoseconds(0), random: Double = 0.5) {
            self.policy = policy
            self.permitted = permitted
            self.responseStarted = responseStarted
            self.now = now
            self.elapsed = elapsed
            self.random = random
        }

        /// The input for a request with these facts: sending it twice is permitted when the
        /// method, the headers and the request body allow it (`RetryPolicy.permits`), and no
        /// response bytes went where they cannot be taken back (a consumer, stdout; a body in
        /// memory or a file of our own starts over: `sinkCanRewind`).
        package init(policy: RetryPolicy, request: RetryRequestFacts, responseStarted: Bool, now: UInt64,
                     elapsed: Nanoseconds, random: Double) {
            let bodyTaken = request.responseBytesReceived && !request.sinkCanRewind
            let permitted = !bodyTaken && policy.permits(method: request.method, hasIdempotencyKey: request.hasIdempotencyKey,
                                                         replayableBody: request.replayableBody)
            self.init(policy: policy, permitted: permitted, responseStarted: responseStarted, now: now, elapsed: elapsed, random: random)
        }
    }

    /// What a request is, for deciding whether it may be sent twice.
    package struct RetryRequestFacts: Sendable {
        package var method: HTTPMethod
        package var hasIdempotencyKey: Bool
        /// The request body can be produced again.
        package var replayableBody: Bool
        /// Response body bytes arrived in the attempt.
        package var responseBytesReceived: Bool
        /// The sink can take them back (memory, or a file of our own).
        package var sinkCanRewind: Bool

        package init(method: HTTPMethod, hasIdempotencyKey: Bool, replayableBody: Bool, responseBytesReceived: Bool, sinkCanRewind: Bool) {
            self.method = method
            self.hasIdempotencyKey = hasIdempotencyKey
            self.replayableBody = replayableBody
            self.responseBytesReceived = responseBytesReceived
            self.sinkCanRewind = sinkCanRewind
        }
    }

    /// At the final head: how long to wait before retrying a response with `status` (its
    /// `Retry-After` already read), or nil when the policy does not retry it.
    package func statusRetryWait(status: Int, retryAfter: Nanoseconds?, input: RetryInput) -> UInt64? {
        guard case .running = state, !cancelRequested else { return nil }
        return retryWait(.status(status), retryAfter: retryAfter, input: input)
    }

    /// The response's status is retried (its body is dropped): once the exchange ends, the
    /// request waits `wait` milliseconds from `now`, then joins the queue again.
    package mutating func retryChosen(status: Int, wait: UInt64, now: UInt64) {
        switch state {
        case .running:
            statusRetry = (status, Self.later(now, by: wait))
        case .created, .queued, .waitingForConnection, .finished, .joined, .waitingToRetry:
            preconditionFailure("a retry chosen outside an exchange (state \(state))")
        }
    }

    /// The delegate and the origin's budget answered `approveRetry`.
    package mutating func retryApproved(_ approved: Bool) -> Action {
        switch state {
        case .waitingToRetry:
            return approved ? .rewindSink : retryRefused()
        case .created, .queued, .waitingForConnection, .running, .finished, .joined:
            preconditionFailure("a retry approved for a transfer in state \(state)")
        }
    }

    /// The sink answered `rewindSink`: a file that could not be taken back keeps the failure as
    /// the result rather than a body written twice.
    package mutating func sinkRewound(_ rewound: Bool) -> Action {
        switch state {
        case .waitingToRetry:
            return rewound ? .retryLater : retryRefused()
        case .created, .queued, .waitingForConnection, .running, .finished, .joined:
            preconditionFailure("a sink rewound for a transfer in state \(state)")
        }
    }

    /// The retry budget, the delegate or the sink refused the retry: the failure it was for is
    /// the result (the slot is still held).
    package mutating func retryRefused() -> Action {
        switch state {
        case .waitingToRetry:
            state = .finished
            queueDeadline = .max
            let record = retryRecord ?? RetryRecord()
            retryRecord = record.reasons.count > 1 ? RetryRecord(reasons: Array(record.reasons.dropLast())) : nil
            return failed(record.failure ?? CourierError(.cancelled), releasing: .slot)
        case .created, .queued, .waitingForConnection, .running, .finished, .joined:
            preconditionFailure("a retry refused for a transfer in state \(state)")
        }
    }

    /// Whether the retry just decided is for a failure (the budget and the delegate have not
    /// been asked yet).
    package var retryNeedsApproval: Bool {
        if case .failure? = retryRecord?.reasons.last { return true }
        return false
    }

    /// Why each retry so far happened.
    package var retryReasons: [RetryReason] { retryRecord?.reasons ?? [] }

    /// The policy's wait in milliseconds before the next retry for `reason`, or nil for none.
    func retryWait(_ reason: RetryReason, retryAfter: Nanoseconds?, input: RetryInput) -> UInt64? {
        guard input.permitted, input.policy.retries(reason, responseStarted: input.responseStarted) else { return nil }
        let elapsed = input.elapsed
        let left: Nanoseconds? = totalDeadline == .max ? nil : .milliseconds(totalDeadline > input.now ? totalDeadline - input.now : 0)
        return input.policy.wait(beforeRetry: retriesUsed + 1, retryAfter: retryAfter, elapsed: elapsed,
                                 deadlineLeft: left, random: input.random)?.millisecondsRoundedUp
    }

    mutating func waitToRetry(_ reason: RetryReason, at: UInt64, failure: CourierError?) -> Action {
        state = .waitingToRetry
        retryRecord = RetryRecord(reasons: (retryRecord?.reasons ?? []) + [reason], failure: failure)
        queueDeadline = at
        // A retried status was approved when its head arrived; a failure is asked about now.
        return failure == nil ? .rewindSink : .approveRetry
    }

    /// `now + wait` on the loop clock, short of `.max` (which means "never").
    static func later(_ now: UInt64, by wait: UInt64) -> UInt64 {
        let (at, overflow) = now.addingReportingOverflow(wait)
        return overflow || at == .max ? .max - 1 : at
    }
}
