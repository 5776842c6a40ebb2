/// Which connection serves which request, per pool key, as a value with no I/O.
///
/// A pool key is an origin plus everything that must match for a connection to be shared (the TLS
/// configuration, once https exists); see `PoolKey`. For each key the state is:
/// `idle` connections (a stack, so the warmest is reused and the coldest age out), the number
/// `connecting`, the number `leased`, and the requests `waiting` in arrival order.
///
/// Invariants, checked by the tests after every event:
/// - `idle` and `waiting` are never both non-empty (an idle connection is handed out at once),
///   except under `ownAttempts` while every waiting request has an attempt of its own in flight;
/// - `idle.count + connecting + leased <= limit`;
/// - a waiting request has a connection attempt in flight for it whenever the limit allows
///   (`connecting >= min(waiting.count, limit - idle.count - leased)`).
///
/// A connection attempt is not tied to the request that caused it: whichever request waits longest
/// gets the first connection to become ready (AsyncHTTPClient's pool does the same), so one slow
/// connect does not hold up a request that an idle connection could serve. A key may ask for
/// curl's way instead (`ownAttempts`): requests whose attempts are on their way keep waiting for
/// them, and a connection released meanwhile is parked, so N requests started together use N
/// connections.
///
/// HTTP/2 (see `ConnectionPoolState+Multiplexing.swift`): a key's connections may turn out to
/// multiplex. Until the first one says which protocol it speaks (`awaitsProtocol`), the key
/// opens no second connection, so requests started together wait for its ALPN answer (curl's
/// PIPEWAIT) instead of each opening one. A `Multiplexed` connection then serves as many
/// requests at once as its stream limit allows; another opens only when every one is full.
package struct ConnectionPoolState<Connection: Hashable, Multiplexed: Hashable, Request: Hashable> {
    /// An HTTP/2 connection and its streams.
    package struct MultiplexedEntry: Equatable {
        package var connection: Multiplexed
        package var open = 0
        package var limit: Int
        /// A GOAWAY came: its streams finish, no new ones start.
        package var draining = false
        package var hasRoom: Bool { !draining && open < limit }
    }

    package struct PerKey {
        package var idle: [Connection] = []
        package var multiplexed: [MultiplexedEntry] = []
        /// The key's connections may speak HTTP/2 and none has said yet whether it does.
        package var awaitsProtocol = false
        /// The key's connections speak HTTP/2.
        package var multiplexes = false
        package var connecting = 0
        package var leased = 0
        package var waiting = Deque<Request>()
        package var limit: Int
        /// Requests wait for the attempts opened for them rather than take a released connection.
        package var ownAttempts = false

        package var total: Int { idle.count + connecting + leased + multiplexed.count }
    }

    /// Outcome of asking for a connection.
    package enum AcquireAction: Equatable {
        /// Use this idle connection now.
        case use(Connection)
        /// The request waits; open `connect` new connections (0 or 1 here).
        case wait(connect: Int)
        /// The request waits; close these idle connections first, then open `connect` new ones.
        case waitAfterEvicting([Connection], connect: Int)
    }

    /// What to do with a connection that became ready or was released.
    package enum ReadyAction: Equatable {
        /// Serve this request with it.
        case serve(Request)
        /// Keep it idle.
        case park
        /// Close it; then open `connect` new connections for waiting requests.
        case close(connect: Int)
    }

    /// Per-key state, indexed by the key (keys are small consecutive integers the runtime interns).
    package private(set) var entries: [PerKey] = []
    package var defaultLimit: Int

    /// The state of one key, if it was ever used.
    package func entry(for key: Int) -> PerKey? { entries.indices.contains(key) ? entries[key] : nil }

    package init(defaultLimit: Int) {
        precondition(defaultLimit >= 1, "pool limit below 1")
        self.defaultLimit = defaultLimit
    }

    /// Whether `key`'s waiting requests keep their own attempts (see the type).
    package func ownAttempts(key: Int) -> Bool {
        entries.indices.contains(key) && entries[key].ownAttempts
    }

    /// Sets whether `key`'s waiting requests keep their own attempts.
    package mutating func setOwnAttempts(_ on: Bool, for key: Int) {
        withEntry(key) { $0.ownAttempts = on }
    }

    /// Sets the connection limit for one key. Lowering it never closes busy connections; the pool
    /// shrinks as they are released. Returns how many connections to open for waiting requests.
    package mutating func setLimit(_ limit: Int, for key: Int) -> Int {
        withEntry(key) { entry in
            precondition(limit >= 1, "pool limit below 1")
            entry.limit = limit
            let open = Self.connectionsToOpen(entry)
            entry.connecting += open
            return open
        }
    }

    /// A request wants a connection. With `allowIdle == false` (a replay after a stale-connection
    /// failure) idle connections are not used but closed: when a server drops one keep-alive
    /// connection it has usually dropped its others too (a restart, an idle sweep), and the replay
    /// happens only once, so it must go out on a connection known to be fresh.
    package mutating func acquire(_ request: Request, key: Int, allowIdle: Bool = true) -> AcquireAction {
        withEntry(key) { entry in
        if allowIdle, let connection = entry.idle.popLast() {
            entry.leased += 1
            return .use(connection)
        }
        entry.waiting.append(request)
        if !allowIdle, !entry.idle.isEmpty {
            let evicted = entry.idle
            entry.idle.removeAll()
            let open = Self.connectionsToOpen(entry)
            entry.connecting += open
            return .waitAfterEvicting(evicted, connect: open)
        }
        let open = Self.connectionsToOpen(entry)
        entry.connecting += open
        return .wait(connect: open)
        }
    }

    /// A new connection finished connecting.
    package mutating func connected(_ connection: Connection, key: Int) -> ReadyAction {
        withEntry(key) { entry in
        precondition(entry.connecting > 0, "a connection finished connecting that the pool never opened (key \(key))")
        entry.connecting -= 1
        if let request = entry.waiting.popFirst() {
            entry.leased += 1
            return .serve(request)
        }
        if entry.total >= entry.limit {
            // The limit was lowered while it connected.
            return .close(connect: 0)
        }
        entry.idle.append(connection)
        return .park
        }
    }

    /// A connection attempt failed. The longest-waiting request (if any) gets the error, or,
    /// under `ownAttempts`, a connection parked meanwhile (`served`); `connect` says how many new
    /// attempts to start for the requests still waiting.
    package mutating func connectFailed(key: Int) -> (failed: Request?, served: (connection: Connection, request: Request)?, connect: Int) {
        withEntry(key) { entry in
            precondition(entry.connecting > 0, "a connect failure the pool never started (key \(key))")
            entry.connecting -= 1
            if entry.waiting.count > entry.connecting, !entry.idle.isEmpty, let request = entry.waiting.popFirst() {
                entry.leased += 1
                return (nil, (entry.idle.removeLast(), request), 0)
            }
            let failed = entry.waiting.count > entry.connecting ? entry.waiting.popFirst() : nil
            let open = Self.connectionsToOpen(entry)
            entry.connecting += open
            return (failed, nil, open)
        }
    }

    /// A leased connection's exchange ended; `reusable` is the HTTP/1 machine's verdict.
    package mutating func release(_ connection: Connection, key: Int, reusable: Bool) -> ReadyAction {
        withEntry(key) { entry in
        precondition(entry.leased > 0, "a connection released that was never leased (key \(key))")
        entry.leased -= 1
        if reusable {
            if !(entry.ownAttempts && entry.waiting.count <= entry.connecting), let request = entry.waiting.popFirst() {
                entry.leased += 1
                return .serve(request)
            }
            if entry.total < entry.limit {
                entry.idle.append(connection)
                return .park
            }
        }
        let open = Self.connectionsToOpen(entry)
        entry.connecting += open
        return .close(connect: open)
        }
    }

    /// An idle connection closed (server EOF, idle timeout). Returns whether it was idle here.
    @discardableResult
    package mutating func idleClosed(_ connection: Connection, key: Int) -> Bool {
        guard entries.indices.contains(key) else { return false }
        return withEntry(key) { entry in
            guard let index = entry.idle.firstIndex(of: connection) else { return false }
            entry.idle.remove(at: index)
            return true
        }
    }

    /// A waiting request was cancelled or timed out. Returns whether it was waiting here.
    @discardableResult
    package mutating func cancelWaiting(_ request: Request, key: Int) -> Bool {
        // A request that never reached the pool (its TLS configuration failed to load) has no key.
        guard entries.indices.contains(key) else { return false }
        return withEntry(key) { $0.waiting.removeFirst { $0 == request } != nil }
    }

    /// Removes and returns every idle connection (shutdown).
    package mutating func drainIdle() -> [Connection] {
        var all: [Connection] = []
        for key in entries.indices {
            all += entries[key].idle
            entries[key].idle.removeAll()
        }
        return all
    }

    /// Idle connections of one key, oldest first (for tests and statistics).
    package func idleConnections(key: Int) -> [Connection] { entry(for: key)?.idle ?? [] }

    /// Totals across keys, for statistics.
    package var totals: (idle: Int, connecting: Int, leased: Int, waiting: Int) {
        entries.reduce(into: (0, 0, 0, 0)) {
            $0.0 += $1.idle.count; $0.1 += $1.connecting; $0.2 += $1.leased; $0.3 += $1.waiting.count
        }
    }

    /// Mutates one key's state in place: copying it out and back would copy its arrays on every
    /// request (copy-on-write sees two owners), and an array index is cheaper than a hash lookup.
    @inline(__always)
    mutating func withEntry<R>(_ key: Int, _ body: (inout PerKey) -> R) -> R {
        while entries.count <= key { entries.append(PerKey(limit: defaultLimit)) }
        return body(&entries[key])
    }

    /// Attempts needed so every waiting request has one, within the limit. (Either term may be
    /// negative, legitimately: more attempts in flight than waiters after a cancellation, more
    /// connections than a lowered limit; then none is opened.)
    static func connectionsToOpen(_ entry: PerKey) -> Int {
        var wanted = entry.waiting.count - entry.connecting
        // One attempt at a time while a connection may bring a hundred streams.
        if entry.awaitsProtocol || entry.multiplexes { wanted = min(wanted, 1 - entry.connecting) }
        // A server that allows no streams now (SETTINGS_MAX_CONCURRENT_STREAMS 0) is asked to be
        // waited for, not worked around with more connections: the requests wait for it to raise
        // the limit (or for their deadline).
        if entry.multiplexes, entry.multiplexed.contains(where: { $0.limit == 0 && !$0.draining }) { wanted = 0 }
        let room = entry.limit - entry.total
        return max(0, min(wanted, room))
    }
}
