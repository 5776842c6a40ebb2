/// A request's dealings with its engine's `Authenticator` (a Swift operation's or a C request's):
/// the generations of the credentials it was sent with (origin, proxy) and whether it already
/// replayed after a refusal. Touched by one thread at a time: the sender, then the loop, then the
/// refresh's.
package final class ChallengeState: @unchecked Sendable {
    package let authenticator: Authenticator
    package var sent = (0, 0)
    package var replayed = false
    package init(_ authenticator: Authenticator) { self.authenticator = authenticator }
}
