import CourierCore

/// A request's dealings with its engine's `Authenticator` (a Swift operation's or a C request's):
/// the generations of the credentials it was sent with (origin, proxy), whether it already
/// replayed after a refusal, and whether it waits for a refresh now. `sent` and `replayed` are
/// touched by one thread at a time (the sender, then the loop, then the refresh's); the wait is
/// ended by whichever comes first of the refresh's answer and a cancel, from any thread.
package final class ChallengeState: @unchecked Sendable {
    package let authenticator: Authenticator
    package var sent = (0, 0)
    package var replayed = false
    private let lock = Lock()
    @exclusivity(unchecked) private var waiting = false

    package init(_ authenticator: Authenticator) { self.authenticator = authenticator }

    /// The request waits for the authenticator's answer from now on.
    package func beginWaiting() { lock.withLock { waiting = true } }

    /// Ends the wait: true for the first caller only (the answer, or a cancel that then reports
    /// the request cancelled), false when the wait already ended or never began.
    package func endWaiting() -> Bool {
        lock.withLock {
            guard waiting else { return false }
            waiting = false
            return true
        }
    }
}
