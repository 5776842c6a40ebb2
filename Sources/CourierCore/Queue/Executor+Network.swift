import CUV

/// What the executor learns about the network and memory: network changes, per-host
/// reachability, memory pressure.
extension Executor {
    func networkChanged() {
        // Outcomes and DNS answers of the old network say nothing about the new one.
        outcomes.networkChanged()
        resolver.forgetAnswers()
        for ref in pool.drainIdle() {
            connections[ref.connection.id] = nil
            ref.connection.closeFromPool()
        }
        if network.status.isReachable {
            // Retries that waited for the network go back to the queue oldest first (the live
            // list has the newest at its head).
            for transfer in live.select({ $0.machine.waitsForNetwork }).reversed() {
                execute(transfer.machine.networkReturned(), for: transfer)
            }
        }
    }

    /// Whether `host` can be reached (loop thread; the reply may come before this returns, or
    /// after a name lookup): the kernel's routes to its addresses, then the latest connection
    /// outcome since the network changed.
    func reachability(of host: String, reply: @escaping (HostReachability) -> Void) {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        resolver.resolve(name) { [self] result in
            guard case .success(let found) = result, !found.isEmpty else {
                return reply(HostReachability(host: host, reason: .unresolvable))
            }
            let addresses = found.map(\.ipDescription)
            let routes = found.map(RouteLookup.route(to:))
            let outcome = outcomes.outcome(host: keys.existingHostKey(for: name), nowMillis: loop.nowMillis)
            reply(HostReachability.decide(host: host, addresses: addresses, routes: routes, outcome: outcome,
                                          networkUp: network.status.isReachable))
        }
    }

    /// Starts watching for memory pressure (once; when the first cache appears).
    func watchMemoryPressure() {
        guard pressureWatcher == nil, !shuttingDown else { return }
        pressureWatcher = MemoryPressureWatcher(uvLoop: loop.uvLoop)
    }

    /// The source memory pressure is learned from, if any (nil before a cache exists).
    var memoryPressureSource: MemoryPressureWatcher.Source? { pressureWatcher?.source }

    /// See `EventLoop.deferOnLoopThread`.
    func deferOnLoopThread(_ body: @escaping () -> Void) { loop.deferOnLoopThread(body) }

    /// The loop's libuv handle, for loop-thread helpers made outside the executor (tests).
    var uvLoop: UnsafeMutablePointer<uv_loop_t> { loop.uvLoop }
}
