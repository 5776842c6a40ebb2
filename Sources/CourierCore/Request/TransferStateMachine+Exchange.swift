/// What happens when an exchange ends: the result, a redirect to follow, a replay on a fresh
/// connection, a download to continue or restart, a refetch without validators, a retry, or a
/// stored response answering instead.
extension TransferStateMachine {
    /// The response head is a redirect the policy follows: once the 3xx body has been read (so
    /// the connection can be reused), the request goes to `hop`.
    package mutating func redirectChosen(_ hop: RedirectHop) {
        switch state {
        case .running:
            redirect = hop
            followsRedirect = true
        case .created, .queued, .waitingForConnection, .finished, .joined, .waitingToRetry:
            preconditionFailure("a redirect chosen outside an exchange (state \(state))")
        }
    }

    /// The resumable download's partial file cannot be continued with this response: once the
    /// exchange ends (its body dropped), the whole resource is asked for again.
    package mutating func restartChosen() {
        switch state {
        case .running:
            restartPending = true
        case .created, .queued, .waitingForConnection, .finished, .joined, .waitingToRetry:
            preconditionFailure("a download restart outside an exchange (state \(state))")
        }
    }

    /// The final (not a followed redirect's) head arrived with `status`; `updateSelectsStored`
    /// says whether, as a 304, it is about the stored response being validated (section 4.3.4).
    package mutating func finalHeadArrived(status: Int, updateSelectsStored: Bool) -> HeadVerdict {
        switch state {
        case .running:
            guard case .validating(let conditional, let staleOnError) = cacheRole else { return .deliver }
            if status == 304, conditional {
                if updateSelectsStored {
                    servesStored = .notModified
                } else {
                    refetchPending = true
                }
                return .discardBody
            }
            if staleOnError, CacheRules.isOriginErrorStatus(status) {
                servesStored = .staleOnError
                return .discardBody
            }
            return .deliver
        case .created, .queued, .waitingForConnection, .finished, .joined, .waitingToRetry:
            preconditionFailure("a response head outside an exchange (state \(state))")
        }
    }

    /// The exchange ended. `mayReplay` is the request's permission to be replayed on a stale
    /// connection; while `shuttingDown` nothing is followed or replayed. `resumeLimit` is how many
    /// times a resumable download may continue after a break; `canResume` says whether this one
    /// has something to continue from (a validator and bytes on disk).
    /// `retry` is given when the request has a retry policy. `unprocessed`: the server said it
    /// did not process the request while it processed others (HTTP/2's REFUSED_STREAM or a
    /// GOAWAY below the stream): replayed without spending the one replay.
    /// (Inlined where the executor hears an exchange end: a call here, taken when the size of the
    /// failure branches tipped the optimizer, cost every request 40 instructions.)
    @inline(__always)
    package mutating func exchangeEnded(_ outcome: ExchangeOutcome, mayReplay: Bool, unprocessed: Bool = false, shuttingDown: Bool,
                                        resumeLimit: Int = 0, canResume: Bool = false, retry: RetryInput? = nil) -> Action {
        switch state {
        case .running:
            let goOn = !cancelRequested && !shuttingDown
            switch outcome {
            case .success where rare?.value.statusRetry != nil:
                let (status, at) = statusRetry!
                statusRetry = nil
                guard goOn else {
                    state = .finished
                    return .finish(CourierError(shuttingDown ? .shutdown : .cancelled), releasing: .slot)
                }
                return waitToRetry(.status(status), at: at, failure: nil)
            case .success where restartPending:
                restartPending = false
                guard goOn, !restarted else {
                    state = .finished
                    return .finish(CourierError(goOn ? .rangeError : (shuttingDown ? .shutdown : .cancelled),
                                                goOn ? "the server keeps answering another range than the one asked for" : nil), releasing: .slot)
                }
                restarted = true
                state = .waitingForConnection
                return .restartDownload
            case .success:
                if followsRedirect, goOn, let hop = redirect {
                    redirect = nil
                    followsRedirect = false
                    state = .waitingForConnection
                    return .followRedirect(hop)
                }
                if refetchPending {
                    refetchPending = false
                    guard goOn else {
                        state = .finished
                        return .finish(CourierError(shuttingDown ? .shutdown : .cancelled), releasing: .slot)
                    }
                    // Once: the second request carries no validators, so no 304 can answer it.
                    cacheRole = .validating(conditional: false, staleOnError: staleOnErrorAllowed)
                    state = .waitingForConnection
                    return .refetchWithoutValidators
                }
                state = .finished
                if let phase = servesStored { return .finishFromStore(phase, releasing: .slot) }
                return .finish(nil, releasing: .slot)
            case .failure(let error, let replay):
                if replay, mayReplay, !replayed || unprocessed, goOn {
                    if !unprocessed { replayed = true }
                    redirect = nil
                    followsRedirect = false
                    servesStored = nil
                    refetchPending = false
                    state = .waitingForConnection
                    return .replayOnFreshConnection
                }
                if canResume, goOn, resumesUsed < resumeLimit, error.isOriginFailure {
                    resumesUsed += 1
                    redirect = nil
                    followsRedirect = false
                    restartPending = false
                    state = .waitingForConnection
                    return .resumeDownload
                }
                statusRetry = nil
                if let retry, goOn, let wait = retryWait(.failure(error), retryAfter: nil, input: retry) {
                    redirect = nil
                    followsRedirect = false
                    servesStored = nil
                    refetchPending = false
                    restartPending = false
                    return waitToRetry(.failure(error), at: Self.later(retry.now, by: wait), failure: error)
                }
                state = .finished
                return failed(error, releasing: .slot)
            }
        case .created, .queued, .waitingForConnection, .finished, .joined, .waitingToRetry:
            preconditionFailure("an exchange ended for a transfer in state \(state)")
        }
    }

    var staleOnErrorAllowed: Bool {
        if case .validating(_, let staleOnError) = cacheRole { return staleOnError }
        return false
    }

    /// How a transfer that failed with `error` ends: a validation whose origin failed is answered
    /// by the stored response when it may stand in, else by a generated 504 (RFC 9111 section
    /// 4.2.4); a cancellation is a cancellation whatever the role.
    func failed(_ error: CourierError, releasing holding: Holding) -> Action {
        guard case .validating(_, let staleOnError) = cacheRole, !cancelRequested, error.isOriginFailure else {
            return .finish(error, releasing: holding)
        }
        return staleOnError ? .finishFromStore(.staleOnError, releasing: holding) : .finishWithGatewayTimeout(releasing: holding)
    }
}
