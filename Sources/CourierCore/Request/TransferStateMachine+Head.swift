/// What happens when a response head arrives, decided here: keep its cookies, follow it as a
/// redirect (or refuse to), retry its status, let a stored response answer instead, let the sink
/// decide from it, answer its Digest challenge, or deliver its body.
///
/// The head is one event (`headArrived`) with the facts the transfer read from it; each answer
/// leads to one action, which the transfer carries out (`Transfer.receiveHead`) and, when the
/// action asks something (the redirect rules, the delegate, the retry budget, the cache, the
/// sink), reports back as the next event. The steps run in this order and each may end the
/// procedure: cookies, challenge, redirect, status retry, cache, sink, delivery.
extension TransferStateMachine {
    /// What the transfer read from a head before anything was decided.
    package struct HeadFacts: Equatable, Sendable {
        package struct Flags: OptionSet, Equatable, Sendable {
            package let rawValue: UInt8
            package init(rawValue: UInt8) { self.rawValue = rawValue }
            /// A cookie jar keeps the response's Set-Cookie fields.
            package static let cookieJar = Flags(rawValue: 1)
            /// The request follows redirects (`RedirectPolicy.follow`); set for a redirect's status.
            package static let followsRedirects = Flags(rawValue: 2)
            /// The delegate is asked about each redirect (`Transfer.observesRedirects`).
            package static let asksAboutRedirects = Flags(rawValue: 4)
            /// The request's retry policy lists the status.
            package static let statusListed = Flags(rawValue: 8)
            /// A cache takes part: it may store this response.
            package static let cache = Flags(rawValue: 16)
            /// The sink decides from the head (a destination chosen from it, a resumable
            /// download's range rules).
            package static let sinkDecides = Flags(rawValue: 32)
            /// A 401 the request's Digest login may answer (`TransferOptions.digest`, a body that
            /// can be sent again, fewer than two answers so far).
            package static let digestLogin = Flags(rawValue: 64)
        }

        /// The status (kept in 16 bits: every status has three digits).
        private var storedStatus: UInt16
        package var flags: Flags
        package var status: Int { Int(storedStatus) }

        package init(status: Int, flags: Flags) {
            storedStatus = UInt16(truncatingIfNeeded: status)
            self.flags = flags
        }
    }

    /// Why a response's body is read and dropped rather than delivered.
    package enum DropReason: Equatable, Sendable {
        /// A redirect being followed: the head joins the history and is reported as one.
        case redirect
        /// The status is retried once the exchange ends.
        case retry
        /// The stored response answers instead (a 304 for it, or an error it stands in for).
        case stored
        /// A resumable download is already whole (a 416 to a resumed request): it counts as a 200.
        case alreadyWhole
        /// A resumable download's partial file cannot be continued: the whole resource is asked
        /// for again once the exchange ends.
        case restart
    }

    /// What the sink made of the head (`HeadAction.consultSink`).
    package enum SinkAnswer: Equatable, Sendable {
        /// It takes the body.
        case proceed
        /// It cannot (a destination that cannot be opened, a range a download cannot use).
        case fail(CourierError)
        /// The download is whole already.
        case alreadyWhole
        /// The download must start over.
        case restart
    }

    /// What the transfer does next with the head.
    package enum HeadAction: Equatable, Sendable {
        /// Keep the Set-Cookie fields in the jar; then `cookiesStored`.
        case storeCookies
        /// Answer the 401's Digest challenge (the request's next hop, to the same URL, with the
        /// answer), if it has one Courier can answer; then `challengeAnswered`.
        case answerChallenge
        /// Judge the redirect by the redirect rules (`RedirectDecision.decide`); then
        /// `redirectJudged`.
        case judgeRedirect
        /// Ask the delegate about following `hop` (it may change it); then `redirectAnswered`.
        case askAboutRedirect(RedirectHop)
        /// Gather what the retry policy weighs (the clock, Retry-After); then `statusRetryWeighed`.
        case weighStatusRetry
        /// Ask the delegate and the origin's retry budget whether `status` may be retried after
        /// `wait` milliseconds; then `statusRetryAnswered`.
        case askToRetry(status: Int, wait: UInt64)
        /// Ask the cache whether a 304 is about the response being validated; then `cacheAnswered`.
        case consultCache
        /// Get the cache ready to store the response (when it may); then `storePrepared`.
        case prepareToStore
        /// Let the sink look at the head; then `sinkAnswered`.
        case consultSink
        /// Read the body and drop it.
        case dropBody(DropReason)
        /// End the transfer with `error`. `keepsHead`: the head stays as the last response
        /// received (a redirect the rules refuse: too many, a downgrade, an unusable Location, as
        /// curl reports it); a redirect the delegate refused, or a sink that failed, leaves none.
        case fail(CourierError, keepsHead: Bool)
        /// Deliver the body to the sink.
        case deliver
    }

    /// The head's steps, in order.
    package enum HeadStep: UInt8, Equatable, Sendable {
        case cookies, challenge, redirect, retry, cache, sink, deliver
    }

    /// A response head arrived during the exchange.
    @inline(__always)
    package mutating func headArrived(_ facts: HeadFacts) -> HeadAction {
        switch state {
        case .running:
            // The plain case, kept short: no jar, no redirect to follow, no retry policy for the
            // status, no cache, a sink that takes any head.
            if facts.flags.isEmpty { return .deliver }
            head = facts
            return step(from: .cookies)
        case .created, .queued, .waitingForConnection, .finished, .joined, .waitingToRetry:
            preconditionFailure("a response head outside an exchange (state \(state))")
        }
    }

    /// The jar kept the head's cookies.
    package mutating func cookiesStored() -> HeadAction {
        step(from: .challenge)
    }

    /// The 401's challenge was answered with `hop` (to the same URL, the answer in its request),
    /// or could not be (nil: no Digest challenge Courier can answer), and the 401 goes on.
    package mutating func challengeAnswered(_ hop: RedirectHop?) -> HeadAction {
        guard let hop else { return step(from: .redirect) }
        redirectChosen(hop)
        return endHead(.dropBody(.redirect))
    }

    /// The redirect rules' verdict on the head.
    package mutating func redirectJudged(_ decision: RedirectDecision) -> HeadAction {
        switch decision {
        case .deliver:
            return step(from: .retry)
        case .fail(let error):
            return endHead(.fail(error, keepsHead: true))
        case .follow(let hop):
            if currentHead.flags.contains(.asksAboutRedirects) { return .askAboutRedirect(hop) }
            redirectChosen(hop)
            return endHead(.dropBody(.redirect))
        }
    }

    /// The delegate's answer about a redirect: `hop` as it may have changed it, or why it refused.
    package mutating func redirectAnswered(_ hop: RedirectHop, refusal: CourierError?) -> HeadAction {
        if let refusal { return endHead(.fail(refusal, keepsHead: false)) }
        redirectChosen(hop)
        return endHead(.dropBody(.redirect))
    }

    /// What the retry policy weighs for the head's status: the policy's wait, or none (the
    /// response is the answer, as far as retries go).
    package mutating func statusRetryWeighed(input: RetryInput, retryAfter: Nanoseconds?) -> HeadAction {
        let status = currentHead.status
        guard let wait = statusRetryWait(status: status, retryAfter: retryAfter, input: input) else { return step(from: .cache) }
        return .askToRetry(status: status, wait: wait)
    }

    /// The delegate and the budget agreed (or not) to retry the status after `wait`, at `now`.
    package mutating func statusRetryAnswered(approved: Bool, wait: UInt64, now: UInt64) -> HeadAction {
        guard approved else { return step(from: .cache) }
        retryChosen(status: currentHead.status, wait: wait, now: now)
        return endHead(.dropBody(.retry))
    }

    /// Whether the head, as a 304, is about the response being validated (RFC 9111 section 4.3.4).
    package mutating func cacheAnswered(updateSelectsStored: Bool) -> HeadAction {
        if finalHeadArrived(status: currentHead.status, updateSelectsStored: updateSelectsStored) == .discardBody {
            return endHead(.dropBody(.stored))
        }
        return currentHead.flags.contains(.cache) ? .prepareToStore : step(from: .sink)
    }

    /// The cache is ready for the response.
    package mutating func storePrepared() -> HeadAction {
        step(from: .sink)
    }

    /// The sink's answer.
    package mutating func sinkAnswered(_ answer: SinkAnswer) -> HeadAction {
        switch answer {
        case .proceed:
            return endHead(.deliver)
        case .fail(let error):
            return endHead(.fail(error, keepsHead: false))
        case .alreadyWhole:
            return endHead(.dropBody(.alreadyWhole))
        case .restart:
            restartChosen()
            return endHead(.dropBody(.restart))
        }
    }

    /// The first step from `first` on that applies to the head in hand.
    private mutating func step(from first: HeadStep) -> HeadAction {
        let facts = currentHead
        var next: HeadStep? = first
        while let current = next {
            switch current {
            case .cookies where facts.flags.contains(.cookieJar):
                return .storeCookies
            case .challenge where facts.flags.contains(.digestLogin) && !cancelRequested:
                return .answerChallenge
            case .redirect where facts.flags.contains(.followsRedirects) && RedirectDecision.isRedirect(facts.status):
                return .judgeRedirect
            case .retry where facts.flags.contains(.statusListed) && !cancelRequested:
                return .weighStatusRetry
            case .cache where cacheRole != .none:
                return .consultCache
            case .cache where facts.flags.contains(.cache):
                return .prepareToStore
            case .sink where facts.flags.contains(.sinkDecides):
                return .consultSink
            case .deliver:
                return endHead(.deliver)
            case .cookies, .challenge, .redirect, .retry, .cache, .sink:
                next = HeadStep(rawValue: current.rawValue + 1)
            }
        }
        preconditionFailure("the head's steps ran out")
    }

    private var currentHead: HeadFacts {
        guard let head else { preconditionFailure("a head step with no head in hand") }
        return head
    }

    private mutating func endHead(_ action: HeadAction) -> HeadAction {
        head = nil
        return action
    }
}
