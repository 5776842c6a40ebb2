import CourierCore

/// Credentials an engine's requests carry, and the one place they are refreshed when the origin
/// (401) or a proxy (407) refuses them.
///
/// Every request of the engine without an `authorization` of its own sends the current
/// credentials. A refused request asks for new ones and is sent once more with them; a second
/// refusal is the result. However many requests are refused at once, **one** refresh runs: the
/// others wait for it and replay with what it returned, and a request refused with credentials
/// that were already replaced replays at once without a refresh. A refresh that returns nil or
/// throws gives every waiting request its 401 (or 407); the next refusal tries again. So does one
/// that has not returned within `refreshTimeout`: waiting requests are never held by a token
/// endpoint that hangs (the refresh is cancelled; credentials it still returns are kept for the
/// requests that follow, unless a newer refresh started meanwhile).
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
        /// Which refresh the waiters wait for (the count of refreshes when it started).
        var refreshID = 0
    }

    private let refresh: Refresh
    @exclusivity(unchecked) private nonisolated(unsafe) var timeout: Duration
    private let lock = Lock()
    @exclusivity(unchecked) private nonisolated(unsafe) var origin = Slot()
    @exclusivity(unchecked) private nonisolated(unsafe) var proxy = Slot()
    @exclusivity(unchecked) private nonisolated(unsafe) var refreshes = 0

    /// An authenticator starting with `initial` for the origin (nil: requests go out without
    /// credentials until the first 401); a refresh may take up to `refreshTimeout`.
    public init(initial: Authorization? = nil, refreshTimeout: Duration = .seconds(30), refresh: @escaping Refresh) {
        self.refresh = refresh
        timeout = refreshTimeout
        origin.current = initial
    }

    /// How long refused requests wait for a refresh before they get their refusal (refreshes
    /// starting from now on).
    public var refreshTimeout: Duration {
        get { lock.withLock { timeout } }
        set { lock.withLock { timeout = newValue } }
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
    /// the one refresh in flight (started now if none is) ends or times out. `then` runs on any
    /// thread.
    package func challenged(_ challenge: Challenge, sentGeneration generation: Int,
                            then: @escaping @Sendable (Authorization?) -> Void) {
        enum Next { case replay(Authorization?), wait, refresh(Int) }
        let isProxy = challenge.isProxy
        let next = lock.withLock { () -> Next in
            let slot = isProxy ? proxy : origin
            if slot.generation > generation { return .replay(slot.current) }
            if slot.waiting != nil {
                modify(isProxy) { $0.waiting!.append(then) }
                return .wait
            }
            refreshes += 1
            let id = refreshes
            modify(isProxy) {
                $0.waiting = [then]
                $0.refreshID = id
            }
            return .refresh(id)
        }
        switch next {
        case .replay(let credentials): then(credentials)
        case .wait: break
        case .refresh(let id):
            let refresh = self.refresh
            let work = Task.detached { [self] in
                let found = (try? await refresh(challenge)) ?? nil
                _ = settle(id, isProxy: isProxy, with: found)
            }
            let timeout = refreshTimeout
            Task.detached { [weak self] in
                try? await Task.sleep(for: timeout)
                if self?.settle(id, isProxy: isProxy, with: nil) == true { work.cancel() }
            }
        }
    }

    /// Refresh `id` ended with `found` (nil also for its timeout): its waiters get `found`, and
    /// credentials become current. True when this call released the waiters; a refresh that ends
    /// after its timeout still stores what it found, unless a newer one started.
    private func settle(_ id: Int, isProxy: Bool, with found: Authorization?) -> Bool {
        let waiting = lock.withLock { () -> [@Sendable (Authorization?) -> Void]? in
            var taken: [@Sendable (Authorization?) -> Void]?
            modify(isProxy) { slot in
                guard slot.refreshID == id else { return }
                taken = slot.waiting
                slot.waiting = nil
                if let found {
                    slot.current = found
                    slot.generation += 1
                }
            }
            return taken
        }
        guard let waiting else { return false }
        for waiter in waiting { waiter(found) }
        return true
    }

    /// Changes the origin's or the proxy's slot (under the lock).
    private func modify(_ isProxy: Bool, _ body: (inout Slot) -> Void) {
        if isProxy { body(&proxy) } else { body(&origin) }
    }
}
