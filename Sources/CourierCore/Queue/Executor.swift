import CUV

/// Identity wrapper so transfers can live in the pure state machines' hashable collections.
package struct TransferRef: Hashable {
    package let transfer: Transfer
    package init(_ transfer: Transfer) { self.transfer = transfer }
    package static func == (a: TransferRef, b: TransferRef) -> Bool { a.transfer === b.transfer }
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(transfer)) }
}

/// Identity wrapper for connections in the pool state.
package struct ConnectionRef: Hashable {
    package let connection: HTTP1Connection
    package init(_ connection: HTTP1Connection) { self.connection = connection }
    package static func == (a: ConnectionRef, b: ConnectionRef) -> Bool { a.connection === b.connection }
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(connection)) }
}

/// The loop-thread half of the runtime: carries out what the machines decide.
///
/// Three pure machines decide — `TransferStateMachine` (a transfer's phase and every
/// end-of-exchange choice), `SchedulerState` (who runs, within the width and per-host limits) and
/// `ConnectionPoolState` (which connection serves whom) — and this type executes their actions:
/// it links and unlinks transfers, opens and closes connections, arms the wait timer, reports
/// activity. It decides nothing itself. One executor lives per loop; everything here is touched
/// only on that loop's thread.
final class Executor: HTTP1ConnectionDelegate, RetryApproval {
    private let loop: EventLoop
    private let notifier: ActivityNotifier
    private let resolver: Resolver
    private let resources: HTTP1Resources
    private let sessions = TLSSessionCache()
    @exclusivity(unchecked) private var scheduler: SchedulerState<TransferRef>
    @exclusivity(unchecked) private var pool: ConnectionPoolState<ConnectionRef, TransferRef>
    @exclusivity(unchecked) private var keys = PoolKeys()
    @exclusivity(unchecked) private var live = LiveTransfers()
    @exclusivity(unchecked) private var flights = Flights()
    @exclusivity(unchecked) private var connections: [UInt64: HTTP1Connection] = [:]
    @exclusivity(unchecked) private var nextConnectionID: UInt64 = 1
    @exclusivity(unchecked) private var waitTimer: WaitDeadlineTimer!
    @exclusivity(unchecked) private(set) var shuttingDown = false
    /// Every origin's retry budget (by pool key; shared by all callers on this loop).
    @exclusivity(unchecked) private var budgets = RetryBudgets()
    /// Transfers waiting for a retry's interval (counted as queued in the activity).
    @exclusivity(unchecked) private var waitingRetries = 0
    /// Memory pressure drops the caches' memory tiers; watched while any cache exists.
    @exclusivity(unchecked) private var pressureWatcher: MemoryPressureWatcher?
    /// The network as netlink reports it; its changes go to `onNetworkChange` (the runtime).
    @exclusivity(unchecked) private(set) var network: NetworkMonitor!
    /// The latest connection outcome per host, for per-host reachability.
    @exclusivity(unchecked) private var outcomes = HostOutcomes()

    init(loop: EventLoop, notifier: ActivityNotifier, configuration: QueueConfiguration) {
        self.loop = loop
        self.notifier = notifier
        // (Never a new loop: a lease ending during a shutdown has nothing left to come back to.)
        resources = HTTP1Resources(post: { Runtime.shared.executeIfRunning($0) })
        resolver = Resolver(loop: loop)
        scheduler = SchedulerState(width: configuration.width, defaultHostLimit: configuration.defaultHostLimit)
        pool = ConnectionPoolState(defaultLimit: configuration.defaultHostLimit)
        for (host, limit) in configuration.hostLimits {
            _ = scheduler.setHostLimit(limit, for: keys.hostKey(for: host))
        }
        waitTimer = WaitDeadlineTimer(uvLoop: loop.uvLoop) { [unowned(unsafe) self] in waitDeadlinesPassed() }
        notifier.attach(to: loop.uvLoop)
        if CacheRegistry.shared.hasCaches { watchMemoryPressure() }
        network = NetworkMonitor(uvLoop: loop.uvLoop)
        if let forced = configuration.networkOverride { network.override = forced }
    }

    /// Pooled connections leave through interfaces that may be gone: after a network change
    /// idle ones are closed rather than reused into a timeout (running exchanges are left alone).
    func networkChanged() {
        // Outcomes and DNS answers of the old network say nothing about the new one.
        outcomes.networkChanged()
        resolver.forgetAnswers()
        for ref in pool.drainIdle() {
            connections[ref.connection.id] = nil
            ref.connection.closeFromPool()
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

    // MARK: - Transfers

    /// A transfer arrives on the loop.
    func accept(_ transfer: Transfer) {
        let now = monotonicNanos()
        transfer.metrics.enqueuedAt = now
        let refusal = shuttingDown ? CourierError(.shutdown) : Admission.check(transfer)
        if refusal == nil, Flights.mayCoalesce(transfer) {
            acceptCoalescable(transfer, at: now)
            return
        }
        let queueDeadline = deadlineMillis(after: transfer._options.timeouts.queue, from: loop.nowMillis)
        execute(transfer.machine.accept(refusal: refusal, queueDeadline: queueDeadline), for: transfer, at: now)
    }

    /// A transfer that may follow an identical one in flight, or lead those that come after it.
    private func acceptCoalescable(_ transfer: Transfer, at now: UInt64) {
        // A cached request already hashed its target for the lookup.
        let signature = transfer._cacheExchange.map { Flights.signature(keyHash: $0.keyHash, of: transfer) } ?? Flights.signature(of: transfer)
        if let leader = flights.leader(for: transfer, signature: signature) {
            let action = transfer.machine.acceptFollowing()
            if case .joinFlight = action { transfer.flightLeader = leader }
            execute(action, for: transfer, at: now)
            return
        }
        let queueDeadline = deadlineMillis(after: transfer._options.timeouts.queue, from: loop.nowMillis)
        let action = transfer.machine.accept(refusal: nil, queueDeadline: queueDeadline)
        if case .enqueue = action { flights.lead(transfer, signature: signature) }
        execute(action, for: transfer, at: now)
    }

    /// Cancels `transfer` wherever it is (`error` is `.cancelled` or `.shutdown`).
    func cancel(_ transfer: Transfer, _ error: CourierError) {
        let othersFollow = !shuttingDown && !(transfer.followers?.isEmpty ?? true)
        execute(transfer.machine.cancel(error, othersFollow: othersFollow), for: transfer)
    }

    /// A paused consumer can take more.
    func resume(_ transfer: Transfer) {
        guard case .running = transfer.machine.state, let carrier = transfer.carrier else { return }
        carrier.resumeReadingForConsumer()
    }

    /// Cancels every live transfer `predicate` selects.
    func cancelAll(where predicate: (Transfer) -> Bool) {
        for transfer in live.select(predicate) { cancel(transfer, CourierError(.cancelled)) }
    }

    /// Live transfers `predicate` selects.
    func countLive(where predicate: (Transfer) -> Bool) -> Int {
        live.select(predicate).count
    }

    /// Carries out one action of a transfer's machine. `at` is a clock reading the caller
    /// already took, when it has one.
    private func execute(_ action: TransferStateMachine.Action, for transfer: Transfer, at now: UInt64 = 0) {
        switch action {
        case .none:
            break
        case .enqueue:
            enqueue(transfer, at: now)
        case .joinFlight:
            guard let leader = transfer.flightLeader else { preconditionFailure("a follower without a leader") }
            live.insert(transfer)
            if leader.followers == nil { leader.followers = [] }
            leader.followers!.append(transfer)
            transfer._cacheExchange?.mayStore = false
        case .detachCaller(let error):
            // The caller hears "cancelled" through a stand-in; the transfer itself answers to
            // nobody but its followers from now on.
            let standIn = Transfer.standIn(for: transfer)
            standIn.delegate = transfer.delegate
            transfer.delegate = nil
            transfer.reportsHead = false
            transfer.reportsProgress = false
            transfer.callerLeft = true
            transfer.owner = 0
            standIn.conclude(error)
        case .acquireConnection:
            acquireConnection(for: transfer, allowIdle: true, at: now)
        case .replayOnFreshConnection:
            transfer.metrics.staleRetries += 1
            transfer.resetResponse()
            acquireConnection(for: transfer, allowIdle: false)
        case .followRedirect(let hop):
            transfer.metrics.redirects += 1
            hop.apply(method: &transfer._method, headers: &transfer._headers,
                      body: &transfer._body, hostSetByCaller: &transfer.userSetHost, from: transfer.url)
            transfer.url = hop.url
            if hop.dropBody { transfer.requestBodyLength = 0 }
            transfer.resetResponse()
            acquireConnection(for: transfer, allowIdle: true)
        case .abortExchange(let error):
            guard let carrier = transfer.carrier else {
                preconditionFailure("a running transfer without a carrier")
            }
            carrier.abort(error)
        case .finish(let error, let holding):
            finish(transfer, error, releasing: holding)
        case .finishFromStore(let phase, let holding):
            guard let exchange = transfer._cacheExchange else { preconditionFailure("a stored answer without a cache exchange") }
            finish(transfer, exchange.answerWithStored(transfer, phase: phase), releasing: holding)
        case .finishWithGatewayTimeout(let holding):
            guard let exchange = transfer._cacheExchange else { preconditionFailure("a generated answer without a cache exchange") }
            finish(transfer, exchange.answerWithGatewayTimeout(transfer), releasing: holding)
        case .resumeDownload:
            transfer.metrics.resumes += 1
            transfer.resetResponse()
            acquireConnection(for: transfer, allowIdle: true)
        case .restartDownload:
            transfer.resetResponse()
            acquireConnection(for: transfer, allowIdle: true)
        case .retryLater:
            retryLater(transfer)
        case .requeue:
            requeue(transfer)
        case .refetchWithoutValidators:
            guard let exchange = transfer._cacheExchange else { preconditionFailure("a refetch without a cache exchange") }
            exchange.removeValidators(from: transfer)
            transfer.resetResponse()
            acquireConnection(for: transfer, allowIdle: true)
        }
    }

    private func enqueue(_ transfer: Transfer, at now: UInt64) {
        live.insert(transfer)
        transfer.hostKey = keys.hostKey(for: transfer._authority.host)
        if transfer._options.retryCount > 0 { transfer.retryApproval = self }
        if scheduler.enqueue(TransferRef(transfer), host: transfer.hostKey, priority: transfer._options.priority) {
            start(transfer, at: now)
        } else {
            waitTimer.arm(transfer.machine.waitDeadline)
        }
        activityChanged()
    }

    /// Starts a transfer the scheduler let through; `at` is a clock reading the caller already has.
    private func start(_ transfer: Transfer, at now: UInt64 = 0) {
        let startedAt = now == 0 ? monotonicNanos() : now
        transfer.metrics.startedAt = startedAt
        let total = deadlineMillis(after: transfer._options.timeouts.total, from: loop.nowMillis)
        execute(transfer.machine.started(totalDeadline: total), for: transfer, at: startedAt)
    }

    private func acquireConnection(for transfer: Transfer, allowIdle: Bool, at now: UInt64 = 0) {
        let key: Int
        do {
            let found = try keys.poolKey(for: transfer)
            key = found.key
            if found.isNew { applyPoolLimit(key: key) }
        } catch {
            // No connection can ever be made under this TLS configuration.
            execute(transfer.machine.connectFailed(error, retry: retryInput(for: transfer, responseStarted: false)), for: transfer)
            return
        }
        transfer.poolKey = key
        if _slowPath(keys.connectChoicesChanged) {
            keys.connectChoicesChanged = false
            pool.setOwnAttempts(keys.connectChoices[key]?.waitsForOwnConnection ?? false, for: key)
        }
        switch pool.acquire(TransferRef(transfer), key: key, allowIdle: allowIdle) {
        case .use(let ref):
            assign(ref.connection, to: transfer, at: now == 0 ? monotonicNanos() : now)
        case .wait(let count):
            waitTimer.arm(transfer.machine.waitDeadline)
            openConnections(count, key: key)
        case .waitAfterEvicting(let evicted, let count):
            for ref in evicted { close(ref.connection) }
            waitTimer.arm(transfer.machine.waitDeadline)
            openConnections(count, key: key)
        }
    }

    private func assign(_ connection: HTTP1Connection, to transfer: Transfer, at now: UInt64 = monotonicNanos()) {
        transfer.machine.connectionAssigned()
        transfer.carrier = connection
        let reused = connection.machine.completedExchanges > 0
        transfer.metrics.reusedConnection = reused
        if reused {
            transfer.metrics.dnsStart = 0
            transfer.metrics.dnsEnd = 0
            transfer.metrics.connectStart = 0
            transfer.metrics.connectEnd = 0
            // (No handshake either: a TLS end from an earlier hop's connection would say otherwise.)
            transfer.metrics.tlsEnd = 0
            // The address it was opened to (curl's remote_ip holds on a reused connection too).
            transfer.metrics.remoteEndpoint = connection.remoteEndpoint
        } else {
            transfer.metrics.record(connection.timings)
            transfer.metrics.connectionsOpened += 1
        }
        if let jar = transfer._options.cookies { transfer.attachCookies(from: jar) }
        if case .resumable(let download) = transfer._sink {
            transfer._headers.remove(name: "Range")
            transfer._headers.remove(name: "If-Range")
            for (name, value) in download.rangeHeaders() { transfer._headers.add(name: name, value: value) }
        }
        connection.begin(transfer, at: now)
    }

    /// Ends a transfer exactly once: gives back what it holds (a freed slot starts the next
    /// operation), then tells its delegate.
    private func finish(_ transfer: Transfer, _ error: CourierError?, releasing holding: TransferStateMachine.Holding) {
        live.remove(transfer)
        var next: Transfer?
        switch holding {
        case .nothing:
            break
        case .queuePlace:
            scheduler.remove(TransferRef(transfer), host: transfer.hostKey, priority: transfer._options.priority)
        case .slotAndPoolWait:
            pool.cancelWaiting(TransferRef(transfer), key: transfer.poolKey)
            next = scheduler.finished(host: transfer.hostKey)?.transfer
        case .slot:
            next = scheduler.finished(host: transfer.hostKey)?.transfer
        case .flightPlace:
            break
        case .retryWait:
            waitingRetries -= 1
        }
        if let next { start(next) }
        activityChanged()
        // (A leader has its signature until it lands here, a follower its leader; followers are
        // checked too, so a leader can never end without handing them its result.)
        let coalesced = transfer.flightSignature != 0 || transfer.flightLeader != nil || transfer.followers != nil
        if coalesced { flights.land(transfer) }
        // The cache learns first, so a completion handler's next request finds what this stored.
        transfer._cacheExchange?.transferEnded(transfer, error)
        transfer.conclude(error)
        if coalesced { flightEnded(transfer, error) }
    }

    /// A coalesced transfer ended: a leader's followers take its result; a follower leaves its
    /// leader, and a leader whose caller left with nobody following any more is cancelled.
    private func flightEnded(_ transfer: Transfer, _ error: CourierError?) {
        if let followers = transfer.followers {
            transfer.followers = nil
            for follower in followers {
                follower.flightLeader = nil
                follower.adoptResult(of: transfer)
                execute(follower.machine.flightLanded(error), for: follower)
            }
        }
        guard let leader = transfer.flightLeader else { return }
        transfer.flightLeader = nil
        leader.followers?.removeAll { $0 === transfer }
        if leader.callerLeft, leader.followers?.isEmpty ?? true, !leader.isFinished {
            // Nobody is waiting for this exchange any more.
            cancel(leader, CourierError(.cancelled))
        }
    }

    /// Deadlines of transfers that hold no connection.
    private func waitDeadlinesPassed() {
        let now = loop.nowMillis
        var nextDeadline = UInt64.max
        var expired: [(Transfer, TransferStateMachine.Action)] = []
        for transfer in live.select({ $0.machine.waitDeadline != .max }) {
            let action = transfer.machine.waitDeadlinePassed(now: now)
            if action == .none {
                nextDeadline = min(nextDeadline, transfer.machine.waitDeadline)
            } else {
                expired.append((transfer, action))
            }
        }
        for (transfer, action) in expired { execute(action, for: transfer) }
        waitTimer.arm(nextDeadline)
    }

    // MARK: - Connections

    private func openConnections(_ count: Int, key: Int) {
        guard !shuttingDown else { return }
        for _ in 0..<count {
            let origin = keys.origins[key]
            let proxy = keys.proxies[key]
            let choices = keys.connectChoices[key]
            let delay = (choices?.happyEyeballsDelay ?? ConnectChoices.defaultDelay).millisecondsRoundedUp
            let stack = StreamStack(origin: origin, proxy: proxy, route: keys.routes[key], tls: keys.tlsContexts[key],
                                    attemptDelayMillis: delay)
            let trace = choices?.traces == true ? ConnectionTrace(connectionID: nextConnectionID) : nil
            let stream = stack.make(resolver: resolver, uvLoop: loop.uvLoop, sessions: sessions, sessionKey: key, trace: trace)
            let connection = HTTP1Connection(id: nextConnectionID, poolKey: key, origin: origin, stream: stream, owner: self,
                                             resources: resources, uvLoop: loop.uvLoop, connectTimeout: keys.connectTimeouts[key],
                                             forwardingProxy: stack.forwardingProxy)
            connection.trace = trace
            nextConnectionID += 1
            connections[connection.id] = connection
            connection.connect()
        }
    }

    private func close(_ connection: HTTP1Connection) {
        connections[connection.id] = nil
        connection.closeFromPool()
    }

    func connectionEstablished(_ connection: HTTP1Connection) {
        outcomes.record(.connected, host: keys.hostOfPoolKey[connection.poolKey], nowMillis: loop.nowMillis)
        switch pool.connected(ConnectionRef(connection), key: connection.poolKey) {
        case .serve(let ref):
            assign(connection, to: ref.transfer)
        case .park:
            connection.becameIdle()
        case .close(let count):
            close(connection)
            openConnections(count, key: connection.poolKey)
        }
    }

    func connectionFailed(_ connection: HTTP1Connection, error: CourierError) {
        outcomes.record(HostOutcomes.outcome(of: error), host: keys.hostOfPoolKey[connection.poolKey], nowMillis: loop.nowMillis)
        connections[connection.id] = nil
        let (failed, served, count) = pool.connectFailed(key: connection.poolKey)
        openConnections(count, key: connection.poolKey)
        if let served { assign(served.connection.connection, to: served.request.transfer) }
        guard let transfer = failed?.transfer else { return }
        // What the attempt learned is the failure's context (curl's ssl_verify_result).
        transfer.metrics.record(connection.timings)
        transfer.metrics.connectionsOpened += 1
        let error = connection.trace.map { error.tracing($0) } ?? error
        execute(transfer.machine.connectFailed(error, retry: retryInput(for: transfer, responseStarted: false)), for: transfer)
    }

    func idleConnectionClosed(_ connection: HTTP1Connection) {
        connections[connection.id] = nil
        pool.idleClosed(ConnectionRef(connection), key: connection.poolKey)
    }

    func exchangeFinished(_ connection: HTTP1Connection, _ transfer: Transfer, outcome: ExchangeOutcome) {
        transfer.carrier = nil
        var reusable = false
        if case .success(let canReuse) = outcome { reusable = canReuse && !shuttingDown }
        if !reusable { connections[connection.id] = nil }
        switch pool.release(ConnectionRef(connection), key: connection.poolKey, reusable: reusable) {
        case .serve(let next):
            assign(connection, to: next.transfer)
        case .park:
            connection.becameIdle()
        case .close(let count):
            if reusable { close(connection) }
            openConnections(count, key: connection.poolKey)
        }
        guard case .failure = outcome else {
            budgets.exchangeSucceeded(host: transfer.poolKey, status: transfer._status)
            execute(transfer.machine.exchangeEnded(outcome, mayReplay: transfer._options.retryStaleConnection,
                                                   shuttingDown: shuttingDown), for: transfer)
            return
        }
        exchangeFailed(transfer, outcome)
    }

    /// The end of an exchange that failed: a resumable download may continue, a retry policy
    /// may send the request again.
    @inline(never)
    private func exchangeFailed(_ transfer: Transfer, _ outcome: ExchangeOutcome) {
        var canResume = false
        if case .resumable(let download) = transfer._sink {
            canResume = download.record != nil && download.bytesOnDisk > 0
        }
        execute(transfer.machine.exchangeEnded(outcome, mayReplay: transfer._options.retryStaleConnection,
                                               shuttingDown: shuttingDown, resumeLimit: transfer._options.resumeAttempts,
                                               canResume: canResume, retry: retryInput(for: transfer, responseStarted: transfer._status != 0)),
                for: transfer)
    }

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

    private func applyPoolLimit(key: Int) {
        let count = pool.setLimit(scheduler.hostLimit(keys.hostOfPoolKey[key]), for: key)
        openConnections(count, key: key)
    }

    /// Connections by state: idle, connecting, leased, open.
    var poolStatistics: (idle: Int, connecting: Int, leased: Int, open: Int) {
        let totals = pool.totals
        return (totals.idle, totals.connecting, totals.leased, connections.count)
    }

    /// A new observer wants the current state at once.
    func republishActivity() {
        notifier.forgetLastNotified()
        activityChanged()
    }

    private func activityChanged() {
        notifier.publish(running: scheduler.running, queued: scheduler.queuedCount + waitingRetries)
    }

    // MARK: - Retries

    /// The machine chose to retry: once the budget and the delegate agree (a failure's retry),
    /// the slot goes to the next transfer and the wait timer watches the interval.
    @inline(never)
    private func retryLater(_ transfer: Transfer) {
        if transfer.machine.retryNeedsApproval, let reason = transfer.machine.retryReasons.last,
           !approveRetry(transfer, reason, retry: transfer.machine.retriesUsed) {
            execute(transfer.machine.retryRefused(), for: transfer)
            return
        }
        // What the failed attempt wrote to its file is taken back now; a file that cannot be
        // rewound keeps the failure as the result rather than a body written twice.
        if case .file(let file) = transfer._sink, file.rewind() != nil {
            execute(transfer.machine.retryRefused(), for: transfer)
            return
        }
        transfer.metrics.retries += 1
        waitingRetries += 1
        if let next = scheduler.finished(host: transfer.hostKey)?.transfer { start(next) }
        waitTimer.arm(transfer.machine.waitDeadline)
        activityChanged()
    }

    /// A retry's interval passed: the transfer (still live) joins the queue again.
    @inline(never)
    private func requeue(_ transfer: Transfer) {
        waitingRetries -= 1
        transfer.resetResponse()
        if scheduler.enqueue(TransferRef(transfer), host: transfer.hostKey, priority: transfer._options.priority) {
            start(transfer)
        } else {
            waitTimer.arm(transfer.machine.waitDeadline)
        }
        activityChanged()
    }

    /// `RetryApproval`: a response status the policy retries (asked when its head arrives).
    func approveStatusRetry(_ transfer: Transfer, status: Int) -> Bool {
        approveRetry(transfer, .status(status), retry: transfer.machine.retriesUsed + 1)
    }

    /// What the machine needs to decide a retry after a failure; nil without a retry policy.
    private func retryInput(for transfer: Transfer, responseStarted: Bool) -> TransferStateMachine.RetryInput? {
        transfer.retryInput(now: loop.nowMillis, responseStarted: responseStarted)
    }

    /// The delegate's hook, then the origin's budget, agree to a retry (`retry` is its number, 1
    /// for the first). A retry the hook stops costs no token; one it allows takes a token whether
    /// or not the budget has enough left.
    private func approveRetry(_ transfer: Transfer, _ reason: RetryReason, retry: Int) -> Bool {
        guard transfer.delegate?.transferShouldRetry(transfer, reason: reason, retry: retry) ?? true else { return false }
        guard transfer._options.retry.usesBudget else { return true }
        return budgets.attemptFailed(host: transfer.poolKey)
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
