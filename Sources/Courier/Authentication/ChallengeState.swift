import CourierCore

/// A request's dealings with its engine's `Authenticator` (a Swift operation's or a C request's):
/// the generations of the credentials it was sent with (origin, proxy), so the authenticator
/// can tell a refusal of old credentials from one of the current. Whether the request replays
/// after a refusal, and whether it waits for an answer, is its `RequestSession`'s.
package final class ChallengeState: @unchecked Sendable {
    package let authenticator: Authenticator
    package var sent = (0, 0)

    package init(_ authenticator: Authenticator) { self.authenticator = authenticator }
}
