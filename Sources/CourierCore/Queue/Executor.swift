import CUV

/// The loop-thread half of the runtime: carries out what the machines decide.
///
/// Three pure machines decide — `TransferStateMachine` (a transfer's phase and every
/// end-of-exchange choice), `SchedulerState` (who runs, within the width and per-host limits) and
/// `ConnectionPoolState` (which connection serves whom) — and this type executes their actions:
/// it links and unlinks transfers, opens and closes connections, arms the wait timer, reports
/// activity. It decides nothing itself. One executor lives per loop; everything here is touched
/// only on that loop's thread.
final class Executor: HTTP1ConnectionDelegate, HTTP2ConnectionDelegate, RetryApproval {
    let loop: EventLoop
    let notifier: ActivityNotifier
    let resolver: Resolver
    let resources: HTTP1Resources
    let sessions = TLSSessionCache()
    @exclusivity(unchecked) var scheduler: SchedulerState<TransferRef>
    @exclusivity(unchecked) var pool: ConnectionPoolState<ConnectionRef, HTTP2Ref, TransferRef>
    @exclusivity(unchecked) var keys = PoolKeys()
    @exclusivity(unchecked) var live = LiveTransfers()
    @exclusivity(unchecked) var flights = Flights()
    @exclusivity(unchecked) var connections: [UInt64: HTTP1Connection] = [:]
    @exclusivity(unchecked) var http2Connections: [UInt64: HTTP2Connection] = [:]
    @exclusivity(unchecked) var nextConnectionID: UInt64 = 1
    @exclusivity(unchecked) var waitTimer: WaitDeadlineTimer!
    @exclusivity(unchecked) var shuttingDown = false
    /// Every origin's retry budget (by pool key; shared by all callers on this loop).
    @exclusivity(unchecked) var budgets = RetryBudgets()
    /// Transfers waiting for a retry's interval (counted as queued in the activity).
    @exclusivity(unchecked) var waitingRetries = 0
    /// Memory pressure drops the caches' memory tiers; watched while any cache exists.
    @exclusivity(unchecked) var pressureWatcher: MemoryPressureWatcher?
    /// The network as netlink reports it; its changes go to `onNetworkChange` (the runtime).
    @exclusivity(unchecked) var network: NetworkMonitor!
    /// The latest connection outcome per host, for per-host reachability.
    @exclusivity(unchecked) var outcomes = HostOutcomes()

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
        resources.backgroundGate.foregroundRunning = { [unowned(unsafe) self] in scheduler.running > scheduler.runningBackground }
        notifier.attach(to: loop.uvLoop)
        if CacheRegistry.shared.hasCaches { watchMemoryPressure() }
        network = NetworkMonitor(uvLoop: loop.uvLoop)
        if let forced = configuration.networkOverride { network.override = forced }
    }

    /// Pooled connections leave through interfaces that may be gone: after a network change
    /// idle ones are closed rather than reused into a timeout (running exchanges are left alone).

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
    func acceptCoalescable(_ transfer: Transfer, at now: UInt64) {
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

    /// How many live transfers `predicate` selects.
    func countLive(where predicate: (Transfer) -> Bool) -> Int {
        live.select(predicate).count
    }

    /// Live transfers `predicate` selects.
    func selectLive(where predicate: (Transfer) -> Bool) -> [Transfer] {
        live.select(predicate)
    }

    /// Carries out one action of a transfer's machine. `at` is a clock reading the caller
    /// already took, when it has one.
    func execute(_ action: TransferStateMachine.Action, for transfer: Transfer, at now: UInt64 = 0) {
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
            follow(hop, transfer)
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
        case .approveRetry:
            execute(transfer.machine.retryApproved(approveRetry(transfer)), for: transfer)
        case .rewindSink:
            execute(transfer.machine.sinkRewound(rewindSink(of: transfer)), for: transfer)
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

    /// The request goes again as `hop` says: a redirect's next URL, or the same one answering a
    /// Digest challenge (after a 401: no redirect, as curl counts them). Out of line: `execute`
    /// runs for every action, this only for hops.
    @inline(never)
    private func follow(_ hop: RedirectHop, _ transfer: Transfer) {
        if transfer.challengesAnswered == 0 { transfer.metrics.redirects += 1 }
        hop.apply(method: &transfer._method, headers: &transfer._headers,
                  body: &transfer._body, hostSetByCaller: &transfer.userSetHost, from: transfer.url)
        transfer.url = hop.url
        if hop.dropBody { transfer.requestBodyLength = 0 }
        transfer.resetResponse()
        acquireConnection(for: transfer, allowIdle: true)
    }

    func enqueue(_ transfer: Transfer, at now: UInt64) {
        live.insert(transfer)
        transfer.hostKey = keys.hostKey(for: transfer._authority.host)
        if scheduler.enqueue(TransferRef(transfer), host: transfer.hostKey, priority: transfer._options.priority) {
            start(transfer, at: now)
        } else {
            waitTimer.arm(transfer.machine.waitDeadline)
        }
        activityChanged()
    }

    /// Starts a transfer the scheduler let through; `at` is a clock reading the caller already has.
    func start(_ transfer: Transfer, at now: UInt64 = 0) {
        let startedAt = now == 0 ? monotonicNanos() : now
        transfer.metrics.startedAt = startedAt
        let total = deadlineMillis(after: transfer._options.timeouts.total, from: loop.nowMillis)
        execute(transfer.machine.started(totalDeadline: total), for: transfer, at: startedAt)
    }

    func acquireConnection(for transfer: Transfer, allowIdle: Bool, at now: UInt64 = 0) {
        let key: Int
        let multiplexes: Bool
        do {
            let found = try keys.poolKey(for: transfer)
            key = found.key
            multiplexes = found.multiplexes
            if found.isNew {
                applyPoolLimit(key: key)
                if multiplexes { pool.setMayMultiplex(true, for: key) }
            }
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
        if _slowPath(multiplexes), allowIdle, let ref = pool.acquireStream(key: key) {
            assignStream(on: ref.connection, to: transfer)
            return
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

    func assign(_ connection: HTTP1Connection, to transfer: Transfer, at now: UInt64 = monotonicNanos()) {
        transfer.carrier = connection
        prepareExchange(of: transfer, reused: connection.machine.completedExchanges > 0,
                        timings: connection.timings, remoteEndpoint: connection.remoteEndpoint)
        connection.begin(transfer, at: now)
    }

    /// What every exchange's start does, whatever carries it: the transfer's machine hears of
    /// its connection, the metrics say whether it was reused, cookies and a Range go on.
    @inline(__always)
    func prepareExchange(of transfer: Transfer, reused: Bool, timings: @autoclosure () -> ConnectTimings, remoteEndpoint: RemoteEndpoint) {
        let cookieJar = transfer._options.hasComposition && transfer._options.cookies != nil
        var resumable = false
        if case .resumable = transfer._sink { resumable = true }
        let preparation = transfer.machine.connectionAssigned(cookieJar: cookieJar, resumableDownload: resumable)
        transfer.metrics.reusedConnection = reused
        if reused {
            transfer.metrics.dnsStart = 0
            transfer.metrics.dnsEnd = 0
            transfer.metrics.connectStart = 0
            transfer.metrics.connectEnd = 0
            // (No handshake either: a TLS end from an earlier hop's connection would say otherwise.)
            transfer.metrics.tlsEnd = 0
            // The address it was opened to (curl's remote_ip holds on a reused connection too).
            transfer.metrics.remoteEndpoint = remoteEndpoint
        } else {
            transfer.metrics.record(timings())
            transfer.metrics.connectionsOpened += 1
        }
        if !preparation.isEmpty { transfer.prepare(preparation) }
    }

    /// Ends a transfer exactly once: gives back what it holds (a freed slot starts the next
    /// operation), then tells its delegate.
    func finish(_ transfer: Transfer, _ error: CourierError?, releasing holding: TransferStateMachine.Holding) {
        live.remove(transfer)
        var next: Transfer?
        switch holding {
        case .nothing:
            break
        case .queuePlace:
            scheduler.remove(TransferRef(transfer), host: transfer.hostKey, priority: transfer._options.priority)
        case .slotAndPoolWait:
            pool.cancelWaiting(TransferRef(transfer), key: transfer.poolKey)
            next = scheduler.finished(host: transfer.hostKey, priority: transfer._options.priority)?.transfer
        case .slot:
            next = scheduler.finished(host: transfer.hostKey, priority: transfer._options.priority)?.transfer
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
    func flightEnded(_ transfer: Transfer, _ error: CourierError?) {
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
    func waitDeadlinesPassed() {
        let now = loop.nowMillis
        let offline = !network.status.isReachable
        var nextDeadline = UInt64.max
        var expired: [(Transfer, TransferStateMachine.Action)] = []
        for transfer in live.select({ $0.machine.waitDeadline != .max }) {
            let action = transfer.machine.waitDeadlinePassed(now: now, offline: offline)
            if action == .none {
                nextDeadline = min(nextDeadline, transfer.machine.waitDeadline)
            } else {
                expired.append((transfer, action))
            }
        }
        for (transfer, action) in expired { execute(action, for: transfer) }
        waitTimer.arm(nextDeadline)
    }
}
