/// How reading one response is held back, as a value: the consumer's pauses, the receive rate
/// limit, reads lent to the consumer's thread, and a response whose end waits for bytes the
/// consumer has not taken yet.
///
/// The carrier (`HTTP1Connection`; an HTTP/2 stream next) feeds it what happened and does what it
/// answers: pause or resume its stream's reads, arm its timer for `resumeAt`, finish a held end.
/// Reading runs only while nothing pauses it, so the reasons never undo each other: a rate window
/// passing does not resume a consumer that paused, and a consumer resuming does not read past
/// the rate.
package struct ReceiveFlow: Equatable, Sendable {
    /// Why reading is paused.
    package struct Pauses: OptionSet, Equatable, Sendable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The consumer cannot take more.
        package static let consumer = Pauses(rawValue: 1)
        /// The bytes so far are ahead of the receive rate, until `resumeAt`.
        package static let rate = Pauses(rawValue: 2)
        /// The reads are lent to the consumer's thread (`ReadLease`).
        package static let lent = Pauses(rawValue: 4)
    }

    /// What the carrier does with its stream's reads (and tells its deadline machine: no
    /// silence deadline runs while reading is paused).
    package enum Action: Equatable, Sendable {
        case none
        case pauseReading
        case resumeReading
    }

    /// A response's end that waits until the consumer took the bytes before it.
    package enum HeldEnd: Equatable, Sendable {
        /// The response is complete (`keepAlive` and `trailingBytes` as the parser saw them).
        case complete(keepAlive: Bool, trailingBytes: Bool)
        /// The stream closed (`closeNotify` as `StreamEnd.closed` has it).
        case streamClosed(closeNotify: Bool?)
    }

    /// Where the consumer stands on taking reads itself, within one exchange.
    package enum Lending: Equatable, Sendable {
        /// No consumer offered: reads go to the loop's buffer.
        case none
        /// Reads land in the consumer's memory (`ReadLanding`).
        case landing
        /// It also offered to take the reads themselves: decided once the read that carried the
        /// offer has been parsed (`lendingDecision`).
        case offered
        /// The reads are lent.
        case lent
        /// No (more) lending in this exchange.
        case settled
    }

    /// What the carrier undoes when the exchange ends (`exchangeEnded`).
    package struct Cleanup: OptionSet, Sendable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Read again: an idle connection must notice the server closing it.
        package static let resumeReading = Cleanup(rawValue: 1)
        /// Reads land in the loop's buffer again (the next exchange's consumer is another).
        package static let clearLanding = Cleanup(rawValue: 2)
        /// Take lent reads back.
        package static let revokeLease = Cleanup(rawValue: 4)
    }

    package private(set) var pauses: Pauses = []
    package private(set) var lending: Lending = .none
    package private(set) var heldEnd: HeldEnd?
    /// When reading paused for the rate may go on (loop clock); `.max` when it is not.
    package private(set) var resumeAt: UInt64 = .max
    /// The receive rate (bytes per second, 0: none) and its measuring window.
    package private(set) var rateLimit: UInt64 = 0
    private var windowStart: UInt64 = 0
    private var windowBytes: UInt64 = 0

    package init(rateLimit: UInt64 = 0) {
        self.rateLimit = rateLimit
    }

    /// Whether anything beyond a plain exchange's reading happened (tested at every exchange's
    /// end, so a plain one pays one comparison).
    @inline(__always) package var isPlain: Bool {
        pauses.isEmpty && lending == .none && resumeAt == .max && heldEnd == nil
    }

    // MARK: The consumer

    /// The consumer cannot take more.
    package mutating func consumerPaused() -> Action {
        pause(.consumer)
    }

    /// The consumer took what was held: read again unless something else still pauses.
    package mutating func consumerResumed() -> Action {
        resume(.consumer)
    }

    /// The response ended (`end`) while the consumer, paused, still holds body bytes back
    /// (`consumerHolding`): the end waits for them (false), or is acted on now (true).
    package mutating func responseEnded(_ end: HeldEnd, consumerHolding: Bool) -> Bool {
        guard consumerHolding else { return true }
        heldEnd = end
        return false
    }

    /// The consumer took the held bytes: the end that waited for them, if any, is acted on now.
    package mutating func takeHeldEnd() -> HeldEnd? {
        defer { heldEnd = nil }
        return heldEnd
    }

    // MARK: The receive rate

    /// `count` bytes arrived at `now`: over the rate, reading pauses until the bytes so far are
    /// on schedule (`resumeAt`).
    package mutating func bytesReceived(_ count: Int, now: UInt64) -> Action {
        guard rateLimit > 0 else { return .none }
        if windowStart == 0 { windowStart = now }
        windowBytes &+= UInt64(count)
        let due = windowStart &+ windowBytes &* 1000 / rateLimit
        guard due > now else { return .none }
        resumeAt = due
        return pause(.rate)
    }

    /// The timer fired at `now`: reading paused for the rate goes on once it is due.
    package mutating func rateTimerFired(now: UInt64) -> Action {
        guard now >= resumeAt else { return .none }
        resumeAt = .max
        return resume(.rate)
    }

    // MARK: Lending the reads

    /// The consumer keeps pieces in memory of its own; true the first time in the exchange: let
    /// the reads land there.
    package mutating func landingOffered() -> Bool {
        guard lending == .none else { return false }
        lending = .landing
        return true
    }

    /// The consumer offers to take the reads themselves (with every piece it gets): true when the
    /// offer stands, to be decided after the read that carried it (`lendingDecision`).
    package mutating func leaseOffered() -> Bool {
        guard lending == .landing else { return false }
        lending = .offered
        return true
    }

    /// After the read that carried an offer: lend the reads (true: the carrier makes the lease
    /// and reports `leaseStarted`), or not. A pause leaves the offer open for a later piece;
    /// anything else settles it for the exchange. Lent are only the rest of a body long enough to
    /// be worth it (`bodyLeft` over `smallestLease`), once the whole request is sent, with no rate
    /// limit, on a stream whose socket can be lent.
    package mutating func lendingDecision(requestSent: Bool, bodyLeft: UInt64?, socketLendable: Bool) -> Bool {
        guard lending == .offered else { return false }
        guard pauses.isEmpty else {
            lending = .landing
            return false
        }
        lending = .settled
        guard requestSent, rateLimit == 0, let bodyLeft, bodyLeft > Self.smallestLease, socketLendable else { return false }
        return true
    }

    /// The smallest rest of a body worth a lease: below it, the hand-offs a lease saves do not pay
    /// for the descriptors it makes and the two hand-offs it adds (the lease's return, the body's
    /// last byte).
    package static let smallestLease: UInt64 = 128 << 10

    /// The consumer took the lease: the carrier's own reads pause.
    package mutating func leaseStarted() -> Action {
        lending = .lent
        return pause(.lent)
    }

    /// The lease came back (budget used, or the peer closed): the carrier reads again.
    package mutating func leaseReturned() -> Action {
        guard lending == .lent else { return .none }
        lending = .settled
        return resume(.lent)
    }

    // MARK: The exchange's end

    /// The exchange ended: what the carrier undoes, and the flow is a new exchange's (with
    /// `rateLimit`) from then on.
    package mutating func exchangeEnded(nextRateLimit rateLimit: UInt64 = 0) -> Cleanup {
        var cleanup: Cleanup = []
        if !pauses.isEmpty { cleanup.insert(.resumeReading) }
        if lending != .none { cleanup.insert(.clearLanding) }
        if lending == .lent { cleanup.insert(.revokeLease) }
        self = ReceiveFlow(rateLimit: rateLimit)
        return cleanup
    }

    /// A new exchange begins with `rateLimit` (the previous one's flow was cleaned up).
    @inline(__always) package mutating func begin(rateLimit: UInt64) {
        if rateLimit != self.rateLimit || windowStart != 0 { self = ReceiveFlow(rateLimit: rateLimit) }
    }

    private mutating func pause(_ reason: Pauses) -> Action {
        let wasReading = pauses.isEmpty
        pauses.insert(reason)
        return wasReading ? .pauseReading : .none
    }

    private mutating func resume(_ reason: Pauses) -> Action {
        guard pauses.contains(reason) else { return .none }
        pauses.remove(reason)
        return pauses.isEmpty ? .resumeReading : .none
    }
}
