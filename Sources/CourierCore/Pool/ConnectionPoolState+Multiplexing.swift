/// HTTP/2 in the pool: which protocol a key's connections speak, and the streams of its
/// multiplexed connections (see the type's notes).
extension ConnectionPoolState {
    /// Whether `key`'s next connection may speak HTTP/2 (its version preference and scheme say
    /// so). Until a connection tells, the key opens one connection at a time.
    package mutating func setMayMultiplex(_ may: Bool, for key: Int) {
        withEntry(key) { entry in
            if !entry.multiplexes, entry.multiplexed.isEmpty, entry.idle.isEmpty, entry.leased == 0 {
                entry.awaitsProtocol = may
            }
        }
    }

    /// A new connection of `key` speaks HTTP/1: the key stops waiting for the protocol. Returns
    /// how many more connections to open for the requests that waited for the answer. (The
    /// connection itself then goes through `connected`.)
    package mutating func learnedHTTP1(key: Int) -> Int {
        withEntry(key) { entry in
            guard entry.awaitsProtocol else { return 0 }
            entry.awaitsProtocol = false
            // (This connection still counts as connecting: it serves one of the waiters.)
            let open = Self.connectionsToOpen(entry)
            entry.connecting += open
            return open
        }
    }

    /// A new connection of `key` speaks HTTP/2 with room for `limit` streams: it serves the
    /// waiting requests, as many as fit; `connect` more connections open for the rest.
    package mutating func connectedMultiplexed(_ connection: Multiplexed, key: Int, limit: Int) -> (serve: [Request], connect: Int) {
        withEntry(key) { entry in
            precondition(entry.connecting > 0, "a connection finished connecting that the pool never opened (key \(key))")
            entry.connecting -= 1
            entry.awaitsProtocol = false
            entry.multiplexes = true
            var added = MultiplexedEntry(connection: connection, limit: max(limit, 1))
            var served: [Request] = []
            while added.open < added.limit, let request = entry.waiting.popFirst() {
                added.open += 1
                served.append(request)
            }
            entry.multiplexed.append(added)
            let open = Self.connectionsToOpen(entry)
            entry.connecting += open
            return (served, open)
        }
    }

    /// A stream on one of `key`'s HTTP/2 connections with room, counted as open; nil when none has
    /// room (then `acquire` queues the request and says what to open). Asked before `acquire`
    /// only for keys that may multiplex, so HTTP/1's path never pays for it.
    package mutating func acquireStream(key: Int) -> Multiplexed? {
        guard entries.indices.contains(key) else { return nil }
        return withEntry(key) { entry in
            guard entry.multiplexes, let index = entry.multiplexed.firstIndex(where: \.hasRoom) else { return nil }
            entry.multiplexed[index].open += 1
            return entry.multiplexed[index].connection
        }
    }

    /// What to do after a stream ended on a multiplexed connection.
    package enum StreamEndAction: Equatable {
        /// Nothing (the connection has room, or was already gone).
        case none
        /// Start this waiting request on the same connection.
        case serve(Request)
        /// The connection drained its last stream: close it.
        case close
    }

    /// A stream of `connection` ended.
    package mutating func streamEnded(on connection: Multiplexed, key: Int) -> StreamEndAction {
        withEntry(key) { entry in
            guard let index = entry.multiplexed.firstIndex(where: { $0.connection == connection }) else { return .none }
            entry.multiplexed[index].open -= 1
            if entry.multiplexed[index].hasRoom, let request = entry.waiting.popFirst() {
                entry.multiplexed[index].open += 1
                return .serve(request)
            }
            if entry.multiplexed[index].draining, entry.multiplexed[index].open == 0 {
                entry.multiplexed.remove(at: index)
                return .close
            }
            return .none
        }
    }

    /// The server changed `connection`'s stream limit: waiting requests it now has room for.
    package mutating func streamLimitChanged(_ connection: Multiplexed, key: Int, limit: Int) -> [Request] {
        withEntry(key) { entry in
            guard let index = entry.multiplexed.firstIndex(where: { $0.connection == connection }) else { return [] }
            entry.multiplexed[index].limit = max(limit, 0)
            var served: [Request] = []
            while entry.multiplexed[index].hasRoom, let request = entry.waiting.popFirst() {
                entry.multiplexed[index].open += 1
                served.append(request)
            }
            return served
        }
    }

    /// `connection` takes no new streams (GOAWAY, a failure) or closed: it leaves the pool, and
    /// its streams' ends are not counted any more. Returns how many connections to open for
    /// requests still waiting.
    package mutating func multiplexedGone(_ connection: Multiplexed, key: Int) -> Int {
        withEntry(key) { entry in
            entry.multiplexed.removeAll { $0.connection == connection }
            let open = Self.connectionsToOpen(entry)
            entry.connecting += open
            return open
        }
    }

    /// Multiplexed connections of one key (tests and statistics).
    package func multiplexedConnections(key: Int) -> [MultiplexedEntry] { entry(for: key)?.multiplexed ?? [] }
}
