/// The queue's width and per-host limits, statistics and activity, and shutdown.
extension Executor {
    // MARK: - Limits and statistics

    func setWidth(_ width: Int) {
        for started in scheduler.setWidth(width) { start(started.transfer) }
        activityChanged()
    }

    func setDefaultHostLimit(_ limit: Int) {
        for started in scheduler.setDefaultHostLimit(limit) { start(started.transfer) }
        for key in 0..<keys.poolKeyCount { applyPoolLimit(key: key) }
        activityChanged()
    }

    func setHostLimit(_ limit: Int?, host: String) {
        let hostKey = keys.hostKey(for: host)
        for started in scheduler.setHostLimit(limit, for: hostKey) { start(started.transfer) }
        for key in 0..<keys.poolKeyCount where keys.hostOfPoolKey[key] == hostKey { applyPoolLimit(key: key) }
        activityChanged()
    }

    func applyPoolLimit(key: Int) {
        let count = pool.setLimit(scheduler.hostLimit(keys.hostOfPoolKey[key]), for: key)
        openConnections(count, key: key)
    }

    /// Connections by state: idle, connecting, leased, open.
    var poolStatistics: (idle: Int, connecting: Int, leased: Int, open: Int) {
        let totals = pool.totals
        return (totals.idle, totals.connecting, totals.leased, connections.count + http2Connections.count)
    }

    /// A new observer wants the current state at once.
    func republishActivity() {
        notifier.forgetLastNotified()
        activityChanged()
    }

    func activityChanged() {
        notifier.publish(running: scheduler.running, queued: scheduler.queuedCount + waitingRetries)
    }


    // MARK: - Shutdown

    /// Fails every live transfer with `.shutdown`, closes every connection and handle; the loop
    /// returns once the last close callback ran.
    func shutdown() {
        shuttingDown = true
        // Nothing more starts: a slot freed by a failing transfer must not start the next one.
        _ = scheduler.setWidth(0)
        while let transfer = live.head {
            cancel(transfer, CourierError(.shutdown))
            precondition(transfer.machine.state == .finished, "a transfer survived shutdown in state \(transfer.machine.state)")
        }
        for connection in connections.values { connection.closeFromPool() }
        connections.removeAll()
        for connection in Array(http2Connections.values) { connection.closeFromPool() }
        http2Connections.removeAll()
        for ref in pool.drainIdle() { ref.connection.closeFromPool() }
        sessions.removeAll()
        pressureWatcher?.close()
        network?.close()
        pressureWatcher = nil
        waitTimer.close()
        notifier.detach()
        loop.closeWakeup()
    }
}
