import CourierCore

/// Credentials an engine's requests carry, and the one place they are refreshed when the origin
/// (401) or a proxy (407) refuses them.
///
/// Every request of the engine without an `authorization` of its own sends the current
/// credentials. A refused request asks for new ones and is sent once more with them; a second
/// refusal is the result. However many requests are refused at once, **one** refresh runs: the
/// others wait for it and replay with what it returned, and a request refused with credentials
/// that were already replaced replays at once without a refresh. A refresh that returns nil or
/// throws gives every waiting request its 401 (or 407); the next refusal tries again.
///
/// ```swift
/// var configuration = Engine.Configuration()
/// configuration.authenticator = Authenticator(initial: .bearer(saved)) { challenge in
///     .bearer(try await tokens.refresh())
/// }
/// ```
public final class Authenticator: Sendable {
    /// Returns the credentials to replay with, or nil to let the refusal be the result. It runs
    /// off the loop thread, one at a time, and may itself send requests.
    public typealias Refresh = @Sendable (Challenge) async throws -> Authorization?

    /// One kind of credentials (the origin's or the proxy's): the current value, how many times
    /// it changed, and the callers waiting for a refresh in flight.
    private struct Slot {
        var current: Authorization?
        var generation = 0
        var waiting: [@Sendable (Authorization?) -> Void]?
    }

    private let refresh: Refresh
    private let lock = Lock()
    @exclusivity(unchecked) private nonisolated(unsafe) var origin = Slot()
    @exclusivity(unchecked) private nonisolated(unsafe) var proxy = Slot()
    @exclusivity(unchecked) private nonisolated(unsafe) var refreshes = 0

    /// An authenticator starting with `initial` for the origin (nil: requests go out without
    /// credentials until the first 401).
    public init(initial: Authorization? = nil, refresh: @escaping Refresh) {
        self.refresh = refresh
        origin.current = initial
    }

    /// The origin's credentials requests are sent with now.
    public var current: Authorization? { lock.withLock { origin.current } }

    /// How many refreshes have run (for tests and metrics).
    public var refreshCount: Int { lock.withLock { refreshes } }

    /// The credentials to send (origin, and proxy Basic ones) and the generations they belong to.
    package func credentials() -> (origin: Authorization?, proxy: Authorization?, generations: (Int, Int)) {
        lock.withLock { (origin.current, proxy.current, (origin.generation, proxy.generation)) }
    }

    /// A request sent with credentials of `generation` met `challenge`: `then` gets what to
    /// replay with (nil: deliver the refusal), at once when newer credentials exist, else when
    /// the one refresh in flight (started now if none is) ends. `then` runs on any thread.
    package func challenged(_ challenge: Challenge, sentGeneration generation: Int,
                            then: @escaping @Sendable (Authorization?) -> Void) {
        enum Next { case replay(Authorization?), wait, refresh }
        let next = lock.withLock { () -> Next in
            let slot = challenge.isProxy ? proxy : origin
            if slot.generation > generation { return .replay(slot.current) }
            if slot.waiting != nil {
                modify(challenge.isProxy) { $0.waiting!.append(then) }
                return .wait
            }
            modify(challenge.isProxy) { $0.waiting = [then] }
            refreshes += 1
            return .refresh
        }
        switch next {
        case .replay(let credentials): then(credentials)
        case .wait: break
        case .refresh:
            let refresh = self.refresh
            Task.detached { [self] in
                let found = (try? await refresh(challenge)) ?? nil
                let waiting = lock.withLock { () -> [@Sendable (Authorization?) -> Void] in
                    var taken: [@Sendable (Authorization?) -> Void] = []
                    modify(challenge.isProxy) { slot in
                        taken = slot.waiting ?? []
                        slot.waiting = nil
                        if let found {
                            slot.current = found
                            slot.generation += 1
                        }
                    }
                    return taken
                }
                for waiter in waiting { waiter(found) }
            }
        }
    }

    /// Changes the origin's or the proxy's slot (under the lock).
    private func modify(_ isProxy: Bool, _ body: (inout Slot) -> Void) {
        if isProxy { body(&proxy) } else { body(&origin) }
    }
}
