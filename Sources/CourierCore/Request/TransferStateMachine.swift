/// A transfer's phase and every decision about what happens when part of it ends, as a value.
///
/// The executor (`Executor`, on the loop thread) tells it what happened — accepted, started,
/// given a connection, the exchange ended, cancelled, a deadline passed — and carries out the
/// one action it returns; the machine does no I/O and sees no clock but the readings it is
/// given. Whether a finished exchange is the result, a redirect to follow or a stale connection to
/// replay on is decided here and nowhere else, so a newcomer finds a transfer's policy in one
/// file, and the features that decide more (retry after an interval, revalidate with a stored
/// validator, resume with Range, hold while offline) arrive as new events, states and actions
/// without touching the I/O layer.
///
/// Deadlines are readings of the loop's millisecond clock; `.max` means none.
package struct TransferStateMachine: Sendable {
    package enum State: Equatable, Sendable {
        /// Configured, not yet accepted by the loop. Next: `.queued`, or `.finished` when refused
        /// (shutting down, cancelled before it was accepted, a request that cannot be sent).
        case created
        /// Waiting for room in the shared queue. Next: `.waitingForConnection` (the scheduler let
        /// it start) or `.finished` (cancelled, the queue deadline passed).
        case queued
        /// Holding a slot of the queue's width, waiting for the pool to hand it a connection.
        /// Next: `.running`, or `.finished` (connect failed, cancelled, total deadline passed).
        case waitingForConnection
        /// An exchange on a connection. Next: `.waitingForConnection` (a redirect to follow, a
        /// stale connection to replay on) or `.finished`.
        case running
        /// Terminal: the delegate has been (or is being) told.
        case finished
        /// Coalesced: an identical transfer already in flight will answer this one too. Next:
        /// `.finished` (that transfer ended, or this one was cancelled).
        case joined
        /// An attempt failed and the retry policy sends it again after an interval, during which it
        /// holds nothing (no slot of the queue's width, no connection). Next: `.queued` (the
        /// interval passed: it joins the queue again) or `.finished` (cancelled).
        case waitingToRetry
    }

    /// What a transfer holds when it ends, so the executor gives back exactly that.
    package enum Holding: Equatable, Sendable {
        /// Nothing: refused before it was queued.
        case nothing
        /// A place in the shared queue (it never started).
        case queuePlace
        /// A running slot of the queue and a place among the pool's waiters.
        case slotAndPoolWait
        /// A running slot of the queue (no connection: the exchange or the connect attempt that
        /// served it has already let go).
        case slot
        /// A place among the followers of an identical transfer in flight.
        case flightPlace
        /// A place among the transfers waiting for a retry's interval (counted in the queue's
        /// activity until the retry joins the queue or ends).
        case retryWait
    }

    /// What the executor must do next.
    package enum Action: Equatable, Sendable {
        /// Nothing.
        case none
        /// Put the transfer in the shared queue.
        case enqueue
        /// Follow the identical transfer in flight: its result will be this one's.
        case joinFlight
        /// Cancelled while others follow it: end this caller's part as cancelled (`error`) and
        /// keep the exchange going for them.
        case detachCaller(CourierError)
        /// Ask the pool for a connection; an idle one may be reused.
        case acquireConnection
        /// Forget the response so far and ask the pool for a fresh connection (never an idle one):
        /// the reused connection was stale and the request provably unread.
        case replayOnFreshConnection
        /// Rewrite the request for this hop, forget the response so far, ask for a connection.
        case followRedirect(RedirectHop)
        /// Abandon the exchange on the transfer's connection with this error; the connection
        /// reports the end through `exchangeEnded`.
        case abortExchange(CourierError)
        /// End the transfer with this error (nil: success), giving back what it holds, then tell
        /// its delegate.
        case finish(CourierError?, releasing: Holding)
        /// End the transfer successfully with the stored response it validated (`.notModified`,
        /// `.staleOnError`) instead of what the origin sent.
        case finishFromStore(CachePhase, releasing: Holding)
        /// End the transfer successfully with a 504 the cache generates: a stored response that
        /// had to be validated could not be (RFC 9111 section 4.2.4).
        case finishWithGatewayTimeout(releasing: Holding)
        /// The origin's 304 is about another response than the one validated: forget it and ask
        /// again without preconditions.
        case refetchWithoutValidators
        /// A resumable download broke mid-body: forget the response and continue from what is on
        /// disk, with `Range` (an idle connection may serve).
        case resumeDownload
        /// A resumable download's partial file cannot be continued (the server sent another
        /// range, or a 416 for a length it does not have): ask again for the whole resource.
        case restartDownload
        /// The attempt failed and the policy would send the request again: ask the delegate and
        /// the origin's retry budget (the reason is the last of `retryReasons`, the retry's number
        /// `retriesUsed`); the answer is `retryApproved`. (A retried status was approved when its
        /// head arrived.) No payload: a payload case made every switch over actions copy the value.
        case approveRetry
        /// Before a retry: take back what the attempt wrote to its file sink (a body written twice
        /// would be wrong); the answer is `sinkRewound`.
        case rewindSink
        /// The retry goes ahead: give back the slot (the exchange has already let go of its
        /// connection), then wait until `waitDeadline`.
        case retryLater
        /// The retry's interval passed: forget the last response and join the shared queue again.
        case requeue
    }

    /// The transfer's part in a cache's work.
    package enum CacheRole: Equatable, Sendable {
        /// None: no stored response depends on this exchange.
        case none
        /// It validates a stored response: `conditional` when the request carries the stored
        /// response's validators (a 304 answers it), `staleOnError` when the stored response may
        /// stand in for a failing origin.
        case validating(conditional: Bool, staleOnError: Bool)
    }

    /// What to do with a final response head that just arrived.
    package enum HeadVerdict: Equatable, Sendable {
        /// It is the result: deliver its body.
        case deliver
        /// The stored response will be the result (a 304 for it, or an origin error it stands in
        /// for): drop this response's body.
        case discardBody
    }

    package internal(set) var state: State = .created
    /// Cancellation asked for before the loop accepted the transfer, or while an exchange runs
    /// (from then on nothing is followed or replayed).
    package internal(set) var cancelRequested = false
    /// The one replay on a fresh connection has been used.
    package internal(set) var replayed = false
    /// The response in hand is a redirect to follow once its exchange ends.
    package internal(set) var followsRedirect = false
    /// What few transfers need — a redirect hop to follow, the record of retries — behind one
    /// optional reference: inline, a URL and a list made destroying every machine an outlined,
    /// metadata-driven call.
    var rare: Box<Rare>?
    struct Rare: Sendable {
        var redirect: RedirectHop?
        var retry: RetryRecord?
        /// Chosen when the final head arrived: the response with this status is retried once its
        /// body has been dropped, at `at`.
        var statusRetry: (status: Int, at: UInt64)?
    }
    var redirect: RedirectHop? {
        get { rare?.value.redirect }
        set {
            guard newValue != nil || rare?.value.redirect != nil else { return }
            rare = Box(Rare(redirect: newValue, retry: rare?.value.retry, statusRetry: rare?.value.statusRetry))
        }
    }
    var retryRecord: RetryRecord? {
        get { rare?.value.retry }
        set { rare = Box(Rare(redirect: rare?.value.redirect, retry: newValue, statusRetry: rare?.value.statusRetry)) }
    }
    var statusRetry: (status: Int, at: UInt64)? {
        get { rare?.value.statusRetry }
        set {
            guard newValue != nil || rare?.value.statusRetry != nil else { return }
            rare = Box(Rare(redirect: rare?.value.redirect, retry: rare?.value.retry, statusRetry: newValue))
        }
    }
    /// The queue wait must end by then.
    package internal(set) var queueDeadline: UInt64 = .max
    /// The whole transfer (from leaving the queue, across hops) must end by then.
    package internal(set) var totalDeadline: UInt64 = .max
    /// What the transfer does for a cache.
    package internal(set) var cacheRole: CacheRole = .none
    /// The head being decided on (see `headArrived`), between its steps.
    package internal(set) var head: HeadFacts?
    /// Decided when the final head arrived: the stored response answers instead.
    package internal(set) var servesStored: CachePhase?
    /// Decided when the final head arrived: a 304 for another response; ask again.
    var refetchPending = false
    /// Decided when the final head arrived: the download starts over without a range.
    var restartPending = false
    /// Continuations of a resumable download used so far (`resumeDownload`).
    package internal(set) var resumesUsed = 0
    /// Restarts from zero used so far: one is enough (a second would mean a server that keeps
    /// answering ranges it was not asked for).
    var restarted = false
    /// Retries so far (each one a new attempt after an interval).
    package var retriesUsed: Int { retryRecord?.reasons.count ?? 0 }
    /// When the waiting retry joins the queue again (loop clock). While it waits, the queue
    /// deadline's field holds it: a machine is made and destroyed per request, so retries add no
    /// field of their own outside `rare`.
    package var retryAt: UInt64 { state == .waitingToRetry ? queueDeadline : .max }

    package init() {}

    /// A machine that is already finished: responses built without a transfer (tests,
    /// serializers).
    package static var alreadyFinished: TransferStateMachine {
        var machine = TransferStateMachine()
        machine.state = .finished
        return machine
    }

    // MARK: Before the loop

    /// The front end was cancelled before it handed the transfer over; it ends as cancelled as
    /// soon as the loop accepts it.
    package mutating func cancelBeforeSubmitting() {
        switch state {
        case .created:
            cancelRequested = true
        case .queued, .waitingForConnection, .running, .finished, .joined, .waitingToRetry:
            preconditionFailure("cancelBeforeSubmitting after submission (state \(state))")
        }
    }

    /// The loop takes a transfer that an identical one already in flight will answer (it can
    /// be sent: the loop checked).
    package mutating func acceptFollowing() -> Action {
        switch state {
        case .created:
            if cancelRequested {
                state = .finished
                return .finish(CourierError(.cancelled), releasing: .nothing)
            }
            state = .joined
            return .joinFlight
        case .queued, .waitingForConnection, .running, .finished, .joined, .waitingToRetry:
            preconditionFailure("a transfer was submitted twice (state \(state))")
        }
    }

    /// The loop (or, while shutting down, the submitting thread) takes the transfer. `refusal`
    /// is why it cannot be sent at all, when it cannot; `queueDeadline` bounds the wait.
    package mutating func accept(refusal: CourierError?, queueDeadline: UInt64) -> Action {
        switch state {
        case .created:
            if cancelRequested {
                state = .finished
                return .finish(CourierError(.cancelled), releasing: .nothing)
            }
            if let refusal {
                state = .finished
                return .finish(refusal, releasing: .nothing)
            }
            state = .queued
            self.queueDeadline = queueDeadline
            return .enqueue
        case .queued, .waitingForConnection, .running, .finished, .joined, .waitingToRetry:
            preconditionFailure("a transfer was submitted twice (state \(state))")
        }
    }

    /// The transfer validates a stored response (set by the cache before submission).
    package mutating func validates(conditional: Bool, staleOnError: Bool) {
        switch state {
        case .created:
            cacheRole = .validating(conditional: conditional, staleOnError: staleOnError)
        case .queued, .waitingForConnection, .running, .finished, .joined, .waitingToRetry:
            preconditionFailure("a cache role set after submission (state \(state))")
        }
    }

    /// The cache answered the request from storage (or generated the answer) before it was
    /// submitted: it ends here, holding nothing.
    package mutating func answeredByCache() -> Action {
        switch state {
        case .created:
            state = .finished
            return .finish(nil, releasing: .nothing)
        case .queued, .waitingForConnection, .running, .finished, .joined, .waitingToRetry:
            preconditionFailure("a cache answer after submission (state \(state))")
        }
    }

    // MARK: In the queue and the pool

    /// The scheduler gave it a slot; the total deadline starts now.
    /// A retry keeps the first attempt's total deadline: `total` bounds the whole operation.
    package mutating func started(totalDeadline: UInt64) -> Action {
        switch state {
        case .queued:
            state = .waitingForConnection
            if rare?.value.retry == nil { self.totalDeadline = totalDeadline }
            return .acquireConnection
        case .created, .waitingForConnection, .running, .finished, .joined, .waitingToRetry:
            preconditionFailure("the scheduler started a transfer in state \(state)")
        }
    }

    /// What a request needs before it goes out on the connection it was given.
    package struct Preparation: OptionSet, Equatable, Sendable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The jar's cookies for this hop's URL replace what it gave the previous hop.
        package static let sendCookies = Preparation(rawValue: 1)
        /// A resumable download asks for what it lacks (`Range`, `If-Range`), replacing the
        /// previous attempt's.
        package static let rangeFromDownload = Preparation(rawValue: 2)
    }

    /// The pool handed it a connection; the exchange begins once the request is prepared as
    /// returned. `cookieJar`: the request has one; `resumableDownload`: its sink is one.
    @discardableResult
    package mutating func connectionAssigned(cookieJar: Bool = false, resumableDownload: Bool = false) -> Preparation {
        switch state {
        case .waitingForConnection:
            state = .running
            guard cookieJar || resumableDownload else { return [] }
            var preparation: Preparation = []
            if cookieJar { preparation.insert(.sendCookies) }
            if resumableDownload { preparation.insert(.rangeFromDownload) }
            return preparation
        case .created, .queued, .running, .finished, .joined, .waitingToRetry:
            preconditionFailure("the pool assigned a connection to a transfer in state \(state)")
        }
    }

    /// The connection attempt it was waiting on failed (the pool chose it to carry the error).
    package mutating func connectFailed(_ error: CourierError, retry: RetryInput? = nil) -> Action {
        switch state {
        case .waitingForConnection:
            if let retry, !cancelRequested, let wait = retryWait(.failure(error), retryAfter: nil, input: retry) {
                return waitToRetry(.failure(error), at: Self.later(retry.now, by: wait), failure: error)
            }
            state = .finished
            return failed(error, releasing: .slot)
        case .created, .queued, .running, .finished, .joined, .waitingToRetry:
            preconditionFailure("a connect failure for a transfer in state \(state)")
        }
    }

    // MARK: Ending early

    /// Cancel wherever it is (`error` is `.cancelled`, or `.shutdown`). `othersFollow`: coalesced
    /// transfers wait for this one's result, so only its caller leaves; the exchange goes on.
    package mutating func cancel(_ error: CourierError, othersFollow: Bool = false) -> Action {
        if othersFollow {
            switch state {
            case .queued, .waitingForConnection, .running, .waitingToRetry:
                return .detachCaller(error)
            case .created, .finished, .joined:
                break
            }
        }
        switch state {
        case .created:
            // Not accepted yet: `accept` ends it.
            cancelRequested = true
            return .none
        case .joined:
            state = .finished
            return .finish(error, releasing: .flightPlace)
        case .queued:
            state = .finished
            return .finish(error, releasing: .queuePlace)
        case .waitingForConnection:
            state = .finished
            return .finish(error, releasing: .slotAndPoolWait)
        case .running:
            cancelRequested = true
            return .abortExchange(error)
        case .waitingToRetry:
            state = .finished
            queueDeadline = .max
            return .finish(error, releasing: .retryWait)
        case .finished:
            return .none
        }
    }

    /// The identical transfer this one followed ended with `error` (nil: success); its result is
    /// now this one's.
    package mutating func flightLanded(_ error: CourierError?) -> Action {
        switch state {
        case .joined:
            state = .finished
            return .finish(error, releasing: .nothing)
        case .created, .queued, .waitingForConnection, .running, .finished, .waitingToRetry:
            preconditionFailure("a flight landed for a transfer in state \(state)")
        }
    }

    /// The deadline a transfer without a connection waits under (queue, or total while waiting
    /// for a connection); `.max` when none applies in this state.
    package var waitDeadline: UInt64 {
        switch state {
        case .queued: return queueDeadline
        case .waitingForConnection: return totalDeadline
        case .waitingToRetry: return queueDeadline
        case .created, .running, .finished, .joined: return .max
        }
    }

    /// The wait-deadline timer fired at `now`; `offline`: the network monitor says no network.
    /// (A running transfer's deadlines are its connection's to watch.)
    package mutating func waitDeadlinePassed(now: UInt64, offline: Bool = false) -> Action {
        switch state {
        case .queued:
            guard now >= queueDeadline else { return .none }
            state = .finished
            return failed(CourierError(.queueTimeout), releasing: .queuePlace)
        case .waitingForConnection:
            guard now >= totalDeadline else { return .none }
            state = .finished
            return failed(CourierError(.totalTimeout, "while waiting for a connection"), releasing: .slotAndPoolWait)
        case .waitingToRetry:
            guard now >= queueDeadline else { return .none }
            return retryIntervalEnded(now: now, offline: offline)
        case .created, .running, .finished, .joined:
            return .none
        }
    }
}
