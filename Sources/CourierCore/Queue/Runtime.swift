import COpenSSL
import CUV
import Glibc
import Synchronization

/// What an exchange on a connection came to.
package enum ExchangeOutcome {
    /// The response is complete; `reusable` says whether the connection may serve another request.
    case success(reusable: Bool)
    /// The exchange failed; `replay` when the request provably never reached the server's
    /// application (a stale keep-alive connection) and may be sent once more.
    case failure(CourierError, replay: Bool)
}

/// What makes two requests able to share a connection.
struct PoolKeyValue: Hashable {
    var origin: Origin
    /// The interned TLS configuration, -1 for http.
    var tls: Int
}

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

/// The process-wide engine room: one loop thread, the shared queue, the connection pool.
///
/// Every `Engine`, every C caller and every FFI host submits here, which is what makes the queue's
/// width a real process-wide limit (MKNetworkKit's one shared `NSOperationQueue`). The pure state
/// machines (`SchedulerState`, `ConnectionPoolState`, `HTTP1ConnectionStateMachine`) decide; this
/// type and `HTTP1Connection` carry out their actions and touch libuv. All state below the lock is
/// owned by the loop thread; other threads reach it only through `EventLoop.enqueue`.
///
/// The loop thread starts on first use and stops in `shutdown()`, after which the next submission
/// starts a fresh one (tests and the C ABI rely on that).
package final class Runtime: @unchecked Sendable {
    /// The one runtime of the process.
    package static let shared = Runtime()

    // MARK: Cross-thread state (guarded by `lock`)

    private let lock = Lock()
    @exclusivity(unchecked) private var loop: EventLoop?
    @exclusivity(unchecked) private var stopping = false
    @exclusivity(unchecked) private var configuration = QueueConfiguration()
    @exclusivity(unchecked) private var observers: [Int: @Sendable (QueueActivity) -> Void] = [:]
    @exclusivity(unchecked) private var nextObserverID = 0
    private let loopThreadID = Atomic<UInt>(0)
    private let runningCount = Atomic<Int>(0)
    private let queuedCount = Atomic<Int>(0)
    private let hasObservers = Atomic<Bool>(false)

    // MARK: Loop-thread state

    @exclusivity(unchecked) package private(set) var resolver: Resolver!
    /// Span memory every connection's decoder borrows while it parses (one loop, one block).
    package let spanScratch = ResponseDecoder.SpanScratch()
    /// The request-head buffer every connection encodes into (one loop, one buffer).
    @exclusivity(unchecked) package var headBuffer = RawBuffer(capacity: 4096)
    @exclusivity(unchecked) private var scheduler = SchedulerState<TransferRef>(width: 6, defaultHostLimit: 6)
    @exclusivity(unchecked) private var pool = ConnectionPoolState<ConnectionRef, TransferRef>(defaultLimit: 6)
    @exclusivity(unchecked) private var connections: [UInt64: HTTP1Connection] = [:]
    @exclusivity(unchecked) private var nextConnectionID: UInt64 = 1
    @exclusivity(unchecked) private var hostKeys: [String: Int] = [:]
    @exclusivity(unchecked) private var hostNames: [String] = []
    @exclusivity(unchecked) private var lastHost = "\u{0}"
    @exclusivity(unchecked) private var lastHostKey = -1
    @exclusivity(unchecked) private var lastOrigin = Origin(scheme: .http, host: "", port: 0)
    @exclusivity(unchecked) private var lastPoolKey = -1
    @exclusivity(unchecked) private var lastPoolTLSID = -1
    @exclusivity(unchecked) private var poolKeys: [PoolKeyValue: Int] = [:]
    @exclusivity(unchecked) private var poolKeyTLS: [TLSContext?] = []
    @exclusivity(unchecked) private var tlsConfigurationIDs: [TLSConfiguration: Int] = [:]
    @exclusivity(unchecked) private var tlsContexts: [Result<TLSContext, CourierError>] = []
    /// The latest TLS session (ticket) per pool key, for resumption; owned references.
    @exclusivity(unchecked) private var tlsSessions: [Int: OpaquePointer] = [:]
    @exclusivity(unchecked) private var lastTLSConfiguration: TLSConfiguration?
    @exclusivity(unchecked) private var lastTLSID = -1
    @exclusivity(unchecked) private var poolKeyOrigin: [Origin] = []
    @exclusivity(unchecked) private var poolKeyHost: [Int] = []
    @exclusivity(unchecked) private var poolKeyConnectTimeout: [Nanoseconds?] = []
    @exclusivity(unchecked) private var liveHead: Transfer?
    @exclusivity(unchecked) private var waitTimer: UnsafeMutablePointer<uv_timer_t>?
    @exclusivity(unchecked) private var waitTimerDeadline: UInt64 = 0
    @exclusivity(unchecked) private var notifier: UnsafeMutablePointer<uv_prepare_t>?
    @exclusivity(unchecked) private var notifyScheduled = false
    @exclusivity(unchecked) private var lastNotified = QueueActivity(running: -1, queued: -1)
    @exclusivity(unchecked) private var shuttingDown = false

    private init() {}

    // MARK: - Any thread

    /// Hands a transfer to the shared queue. On the loop thread (a completion submitting the next
    /// request) it is taken at once, without the inbox or a wakeup.
    package func submit(_ transfer: Transfer) {
        if isOnLoopThread {
            accept(transfer)
        } else {
            post(.submit(transfer))
        }
    }

    /// Cancels a transfer wherever it is: queued, connecting or mid-response. Always runs on a later
    /// loop turn, never inside the caller's stack, so a delegate may cancel its own transfer safely.
    package func cancel(_ transfer: Transfer) {
        // (This one may start the loop: a cancel racing with the first submit of the process must
        // reach the loop before the submit does, or the transfer would run uncancelled.)
        post(.cancel(transfer))
    }

    /// Runs `body` on the loop thread.
    package func execute(_ body: @escaping @Sendable () -> Void) {
        post(.run(body))
    }

    /// Runs `body` on the loop thread, or right here when the runtime is shutting down and takes
    /// no more jobs. For reporting outcomes that must never be lost: a dropped job would leave a
    /// blocking caller (`courier_request_perform`) waiting forever.
    package func executeOrRunHere(_ body: @escaping @Sendable () -> Void) {
        if !post(.run(body)) { body() }
    }

    /// Cancels every live transfer `predicate` selects; it runs on the loop thread.
    package func cancelAll(where predicate: @escaping @Sendable (Transfer) -> Bool) {
        // Without a loop nothing is in flight: cancelling must not start a thread (an engine
        // destroyed after courier_shutdown would otherwise leave one running at exit).
        post(.run { [self] in
            var cursor = liveHead
            var selected: [Transfer] = []
            while let transfer = cursor {
                cursor = transfer.liveNext
                if predicate(transfer) { selected.append(transfer) }
            }
            for transfer in selected { cancelNow(transfer, CourierError(.cancelled)) }
        }, startingLoop: false)
    }

    /// Operations running at once, process-wide.
    package var width: Int { lock.withLock { configuration.width } }

    /// Changes the width at run time: lowering it lets running work finish, raising it starts
    /// queued work at once.
    package func setWidth(_ width: Int) {
        let width = max(0, width)
        lock.withLock { configuration.width = width }
        execute { [self] in
            for started in scheduler.setWidth(width) { start(started.transfer) }
            activityChanged()
        }
    }

    /// The per-host limit (operations and connections) for hosts without their own.
    package var defaultHostLimit: Int { lock.withLock { configuration.defaultHostLimit } }

    /// Changes the default per-host limit.
    package func setDefaultHostLimit(_ limit: Int) {
        let limit = max(1, limit)
        lock.withLock { configuration.defaultHostLimit = limit }
        execute { [self] in
            for started in scheduler.setDefaultHostLimit(limit) { start(started.transfer) }
            for key in poolKeyOrigin.indices { applyPoolLimit(key: key) }
            activityChanged()
        }
    }

    /// Sets (or with nil, clears) the limit for one host name.
    package func setHostLimit(_ limit: Int?, host: String) {
        let host = host.lowercased()
        lock.withLock { configuration.hostLimits[host] = limit.map { max(1, $0) } }
        execute { [self] in
            let key = hostKey(for: host)
            for started in scheduler.setHostLimit(limit, for: key) { start(started.transfer) }
            for poolKey in poolKeyOrigin.indices where poolKeyHost[poolKey] == key { applyPoolLimit(key: poolKey) }
            activityChanged()
        }
    }

    /// A snapshot of the queue, readable from any thread without a lock.
    package var activity: QueueActivity {
        QueueActivity(running: runningCount.load(ordering: .relaxed), queued: queuedCount.load(ordering: .relaxed))
    }

    /// Registers `observer` for activity changes; it runs on the loop thread, at most once per loop
    /// turn, with the latest snapshot (changes within one turn are coalesced, which is what an
    /// activity indicator wants). Returns a token for `removeActivityObserver`.
    package func addActivityObserver(_ observer: @escaping @Sendable (QueueActivity) -> Void) -> Int {
        let id = lock.withLock { () -> Int in
            nextObserverID += 1
            observers[nextObserverID] = observer
            hasObservers.store(true, ordering: .relaxed)
            return nextObserverID
        }
        execute { [self] in
            lastNotified = QueueActivity(running: -1, queued: -1)
            activityChanged()
        }
        return id
    }

    /// Removes an observer.
    package func removeActivityObserver(_ id: Int) {
        lock.withLock {
            observers[id] = nil
            hasObservers.store(!observers.isEmpty, ordering: .relaxed)
        }
    }

    /// Whether the caller is the loop thread (where delegates run).
    package var isOnLoopThread: Bool {
        let id = loopThreadID.load(ordering: .relaxed)
        return id != 0 && id == pthread_self()
    }

    /// Fails every live transfer with `.shutdown`, closes every connection and handle, and joins
    /// the loop thread. Must not be called on the loop thread (it would wait for itself); the next
    /// submission after it starts a new loop.
    package func shutdown() {
        precondition(!isOnLoopThread, "Runtime.shutdown() called on the loop thread; call it from another thread")
        let current: EventLoop? = lock.withLock {
            guard let loop, !stopping else { return nil }
            stopping = true
            return loop
        }
        guard let current else { return }
        current.enqueue(.run { [self] in shutdownOnLoop(current) })
        current.join()
        loopThreadID.store(0, ordering: .relaxed)
        lock.withLock {
            loop = nil
            stopping = false
        }
    }

    /// Queues `job` for the loop thread; false when the runtime refused it (shutting down, or no
    /// loop and `startingLoop` false). A refused submit is failed with `.shutdown` here.
    @discardableResult
    private func post(_ job: LoopJob, startingLoop: Bool = true) -> Bool {
        let target: EventLoop? = lock.withLock {
            if stopping { return nil }
            if loop == nil {
                if !startingLoop { return nil }
                loop = startLoop()
            }
            return loop
        }
        guard let target else {
            if case .submit(let transfer) = job { refuse(transfer, CourierError(.shutdown)) }
            return false
        }
        target.enqueue(job)
        return true
    }

    /// Creates the loop and its handles; called under the lock, before the thread runs, so the
    /// loop-thread state is not yet shared.
    private func startLoop() -> EventLoop {
        let newLoop = EventLoop { [unowned self] job in perform(job) }
        resolver = Resolver(loop: newLoop)
        shuttingDown = false
        scheduler = SchedulerState(width: configuration.width, defaultHostLimit: configuration.defaultHostLimit)
        pool = ConnectionPoolState(defaultLimit: configuration.defaultHostLimit)
        hostKeys = [:]
        hostNames = []
        lastHost = "\u{0}"
        lastHostKey = -1
        lastPoolKey = -1
        poolKeys = [:]
        poolKeyTLS = []
        tlsConfigurationIDs = [:]
        tlsContexts = []
        lastTLSConfiguration = nil
        lastTLSID = -1
        poolKeyOrigin = []
        poolKeyHost = []
        poolKeyConnectTimeout = []
        for (host, limit) in configuration.hostLimits {
            _ = scheduler.setHostLimit(limit, for: hostKey(for: host))
        }
        let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
        uv_timer_init(newLoop.uvLoop, timer)
        timer.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        waitTimer = timer
        waitTimerDeadline = 0
        let prepare = UnsafeMutablePointer<uv_prepare_t>.allocate(capacity: 1)
        uv_prepare_init(newLoop.uvLoop, prepare)
        prepare.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        notifier = prepare
        notifyScheduled = false
        newLoop.start { [self] in loopThreadID.store(pthread_self(), ordering: .relaxed) }
        return newLoop
    }

    /// Completes a transfer that can never be queued, on the caller's thread.
    private func refuse(_ transfer: Transfer, _ error: CourierError) {
        transfer.phase = .finished
        transfer.error = error
        let now = monotonicNanos()
        transfer.metrics.enqueuedAt = now
        transfer.metrics.completedAt = now
        let delegate = transfer.delegate
        transfer.delegate = nil
        delegate?.transferDidComplete(transfer)
    }

    // MARK: - Loop thread: jobs

    private func perform(_ job: LoopJob) {
        switch job {
        case .submit(let transfer):
            accept(transfer)
        case .cancel(let transfer):
            cancelNow(transfer, CourierError(.cancelled))
        case .run(let body):
            body()
        }
    }

    private var currentLoop: EventLoop {
        // On the loop thread `loop` is stable: only `shutdown` (on another thread, after joining)
        // and `post` (only when it is nil) write it.
        loop!
    }

    private func accept(_ transfer: Transfer) {
        guard transfer.phase == .created else { return }
        let now = monotonicNanos()
        transfer.metrics.enqueuedAt = now
        if shuttingDown {
            refuse(transfer, CourierError(.shutdown))
            return
        }
        if transfer.cancelRequested {
            refuse(transfer, CourierError(.cancelled))
            return
        }
        if let error = prepare(transfer) {
            refuse(transfer, error)
            return
        }
        link(transfer)
        transfer.hostKey = hostKey(for: transfer._url.host)
        transfer.phase = .queued
        if scheduler.enqueue(TransferRef(transfer), host: transfer.hostKey, priority: transfer._options.priority) {
            start(transfer, at: now)
        } else if let limit = transfer._options.timeouts.queue {
            transfer.queueDeadlineMillis = currentLoop.nowMillis.adding(HTTP1Connection.millis(limit))
            armWaitTimer(transfer.queueDeadlineMillis)
        }
        activityChanged()
    }

    /// Checks what can be checked before any I/O, so a bad request fails at once with a precise
    /// error instead of halfway through a connection.
    private func prepare(_ transfer: Transfer) -> CourierError? {
        guard transfer._method.isValidToken else {
            return CourierError(.invalidArgument, "method \"\(transfer._method.rawValue.debugEscaped)\" is not a token")
        }
        if transfer._method == .connect {
            return CourierError(.invalidArgument, "CONNECT is not supported")
        }
        let summary = transfer._headers.preparedSummary ?? transfer._headers.summarizeForSending()
        if let bad = summary.invalid {
            return CourierError(.invalidHeader, bad)
        }
        if summary.hasFraming {
            // Framing is Courier's to decide: a caller's Content-Length or Transfer-Encoding that
            // disagreed with the body would desynchronise the connection (request smuggling).
            transfer._headers.remove(name: "Content-Length")
            transfer._headers.remove(name: "Transfer-Encoding")
        }
        transfer.userSetHost = summary.hasHost
        transfer.userSetAcceptEncoding = summary.hasAcceptEncoding
        transfer.requestAsksToClose = summary.asksToClose
        switch transfer._body {
        case .empty:
            transfer.requestBodyLength = 0
        case .bytes(let bytes):
            transfer.requestBodyLength = UInt64(bytes.count)
        case .file(let path):
            switch FileBodyReader.size(of: path) {
            case .success(let size): transfer.requestBodyLength = size
            case .failure(let error): return error
            }
        }
        return nil
    }

    /// Starts a transfer the scheduler let through; `at` is a clock reading the caller already has.
    private func start(_ transfer: Transfer, at now: UInt64 = monotonicNanos()) {
        transfer.metrics.startedAt = now
        let nowMillis = currentLoop.nowMillis
        transfer.totalDeadlineMillis = transfer._options.timeouts.total.map { nowMillis.adding(HTTP1Connection.millis($0)) } ?? .max
        transfer.phase = .waitingForConnection
        acquireConnection(for: transfer, allowIdle: true, at: now)
    }

    /// `at`: a clock reading taken just before, when there is one (the request then starts now).
    private func acquireConnection(for transfer: Transfer, allowIdle: Bool, at now: UInt64? = nil) {
        let key: Int
        switch poolKey(for: transfer) {
        case .success(let found):
            key = found
        case .failure(let error):
            // The TLS configuration cannot be used (a CA file or client key that does not load).
            finish(transfer, error)
            return
        }
        transfer.poolKey = key
        transfer.phase = .waitingForConnection
        switch pool.acquire(TransferRef(transfer), key: key, allowIdle: allowIdle) {
        case .use(let ref):
            assign(ref.connection, to: transfer, at: now ?? monotonicNanos())
        case .wait(let count):
            if transfer.totalDeadlineMillis != .max { armWaitTimer(transfer.totalDeadlineMillis) }
            for _ in 0..<count { openConnection(key: key) }
        case .waitAfterEvicting(let evicted, let count):
            for ref in evicted {
                forget(ref.connection)
                ref.connection.closeFromPool()
            }
            if transfer.totalDeadlineMillis != .max { armWaitTimer(transfer.totalDeadlineMillis) }
            for _ in 0..<count { openConnection(key: key) }
        }
    }

    private func assign(_ connection: HTTP1Connection, to transfer: Transfer, at now: UInt64 = monotonicNanos()) {
        transfer.phase = .running
        transfer.connection = connection
        let reused = connection.machine.completedExchanges > 0
        transfer.metrics.reusedConnection = reused
        if reused {
            transfer.metrics.dnsStart = 0
            transfer.metrics.dnsEnd = 0
            transfer.metrics.connectStart = 0
            transfer.metrics.connectEnd = 0
        } else {
            let timings = connection.timings
            transfer.metrics.dnsStart = timings.dnsStart
            transfer.metrics.dnsEnd = timings.dnsEnd
            transfer.metrics.connectStart = timings.connectStart
            transfer.metrics.connectEnd = timings.connectEnd
            transfer.metrics.tlsEnd = timings.tlsEnd
            transfer.metrics.tlsResumed = timings.tlsResumed
            transfer.metrics.tlsVerifyResult = Int(timings.tlsVerifyResult)
            transfer.metrics.connectionsOpened += 1
            transfer.metrics.remoteAddress = connection.remoteAddress
        }
        connection.begin(transfer, at: now)
    }

    private func openConnection(key: Int) {
        guard !shuttingDown else { return }
        let connection = HTTP1Connection(id: nextConnectionID, poolKey: key, origin: poolKeyOrigin[key],
                                         runtime: self, uvLoop: currentLoop.uvLoop, tlsContext: poolKeyTLS[key])
        nextConnectionID += 1
        connections[connection.id] = connection
        connection.connect(timeout: poolKeyConnectTimeout[key])
    }

    private func forget(_ connection: HTTP1Connection) {
        connections[connection.id] = nil
    }

    // MARK: - Loop thread: events from connections

    func connectionEstablished(_ connection: HTTP1Connection) {
        switch pool.connected(ConnectionRef(connection), key: connection.poolKey) {
        case .serve(let ref):
            assign(connection, to: ref.transfer)
        case .park:
            connection.becameIdle()
        case .close(let count):
            forget(connection)
            connection.closeFromPool()
            for _ in 0..<count { openConnection(key: connection.poolKey) }
        }
    }

    func connectionFailed(_ connection: HTTP1Connection, error: CourierError) {
        forget(connection)
        let (failed, count) = pool.connectFailed(key: connection.poolKey)
        for _ in 0..<count { openConnection(key: connection.poolKey) }
        if let failed {
            // What the attempt learned is the failure's context (curl's ssl_verify_result).
            let timings = connection.timings
            failed.transfer.metrics.dnsStart = timings.dnsStart
            failed.transfer.metrics.dnsEnd = timings.dnsEnd
            failed.transfer.metrics.connectStart = timings.connectStart
            failed.transfer.metrics.connectEnd = timings.connectEnd
            failed.transfer.metrics.tlsVerifyResult = Int(timings.tlsVerifyResult)
            failed.transfer.metrics.connectionsOpened += 1
            finish(failed.transfer, error)
        }
    }

    func idleConnectionClosed(_ connection: HTTP1Connection) {
        forget(connection)
        pool.idleClosed(ConnectionRef(connection), key: connection.poolKey)
    }

    func exchangeFinished(_ connection: HTTP1Connection, _ transfer: Transfer, outcome: ExchangeOutcome) {
        transfer.connection = nil
        var reusable = false
        if case .success(let canReuse) = outcome { reusable = canReuse && !shuttingDown }
        if !reusable { forget(connection) }
        switch pool.release(ConnectionRef(connection), key: connection.poolKey, reusable: reusable) {
        case .serve(let next):
            assign(connection, to: next.transfer)
        case .park:
            connection.becameIdle()
        case .close(let count):
            if reusable {
                forget(connection)
                connection.closeFromPool()
            }
            for _ in 0..<count { openConnection(key: connection.poolKey) }
        }
        switch outcome {
        case .success:
            if transfer.followsRedirect, !transfer.cancelRequested, !shuttingDown,
               case .follow(let url, let method, let dropBody, let crossOrigin)? = transfer.pendingRedirect {
                followRedirect(transfer, to: url, method: method, dropBody: dropBody, crossOrigin: crossOrigin)
            } else {
                finish(transfer, nil)
            }
        case .failure(let error, let replay):
            if replay, transfer._options.retryStaleConnection, !transfer.replayed, !transfer.cancelRequested, !shuttingDown {
                transfer.replayed = true
                transfer.metrics.staleRetries += 1
                transfer.resetResponse()
                acquireConnection(for: transfer, allowIdle: false)
            } else {
                finish(transfer, error)
            }
        }
    }

    private func followRedirect(_ transfer: Transfer, to url: CourierURL, method: HTTPMethod, dropBody: Bool, crossOrigin: Bool) {
        transfer.metrics.redirects += 1
        if crossOrigin {
            for name in RedirectDecision.credentialFields where transfer._headers.contains(name) {
                transfer._headers.remove(name: name)
            }
            if transfer.userSetHost {
                transfer._headers.remove(name: "Host")
                transfer.userSetHost = false
            }
        }
        if dropBody {
            transfer._body = .empty
            transfer.requestBodyLength = 0
            for name in RedirectDecision.bodyFields where transfer._headers.contains(name) {
                transfer._headers.remove(name: name)
            }
        }
        transfer._url = url
        transfer._method = method
        transfer.resetResponse()
        acquireConnection(for: transfer, allowIdle: true)
    }

    // MARK: - Loop thread: ending transfers

    private func cancelNow(_ transfer: Transfer, _ error: CourierError) {
        switch transfer.phase {
        case .created:
            transfer.cancelRequested = true
        case .queued, .waitingForConnection:
            transfer.cancelRequested = true
            finish(transfer, error)
        case .running:
            transfer.cancelRequested = true
            if let connection = transfer.connection {
                connection.abort(error)
            } else {
                finish(transfer, error)
            }
        case .finished:
            break
        }
    }

    /// Ends a transfer exactly once: frees its queue slot (starting the next operation), then tells
    /// its delegate.
    private func finish(_ transfer: Transfer, _ error: CourierError?) {
        let phase = transfer.phase
        guard phase != .finished else { return }
        transfer.phase = .finished
        transfer.error = error
        // A response that completed in a read already carries that read's clock reading.
        if error != nil || transfer.metrics.completedAt == 0 { transfer.metrics.completedAt = monotonicNanos() }
        if case .file(let file) = transfer.sink { file.close() }
        // The request body is not needed any more; a response that outlives the transfer should
        // not keep an upload in memory.
        transfer._body = .empty
        unlink(transfer)
        var next: Transfer?
        switch phase {
        case .queued:
            scheduler.remove(TransferRef(transfer), host: transfer.hostKey, priority: transfer._options.priority)
        case .waitingForConnection:
            pool.cancelWaiting(TransferRef(transfer), key: transfer.poolKey)
            next = scheduler.finished(host: transfer.hostKey)?.transfer
        case .running:
            next = scheduler.finished(host: transfer.hostKey)?.transfer
        case .created, .finished:
            break
        }
        if let next {
            if shuttingDown {
                // Never started; shutdown's sweep fails it like the rest.
                next.phase = .waitingForConnection
            } else {
                start(next)
            }
        }
        activityChanged()
        let delegate = transfer.delegate
        transfer.delegate = nil
        delegate?.transferDidComplete(transfer)
    }

    // MARK: - Loop thread: bookkeeping

    private func link(_ transfer: Transfer) {
        transfer.liveNext = liveHead
        liveHead?.livePrevious = transfer
        transfer.livePrevious = nil
        liveHead = transfer
    }

    private func unlink(_ transfer: Transfer) {
        if let previous = transfer.livePrevious {
            previous.liveNext = transfer.liveNext
        } else if liveHead === transfer {
            liveHead = transfer.liveNext
        }
        transfer.liveNext?.livePrevious = transfer.livePrevious
        transfer.liveNext = nil
        transfer.livePrevious = nil
    }

    private func hostKey(for host: String) -> Int {
        // Most traffic goes to the host of the previous request: compare before hashing.
        if host == lastHost { return lastHostKey }
        defer {
            lastHost = host
            lastHostKey = hostKeys[host]!
        }
        if let key = hostKeys[host] { return key }
        let key = hostNames.count
        hostNames.append(host)
        hostKeys[host] = key
        return key
    }

    /// Interns the pool key of a transfer: the origin, plus for https the whole TLS configuration,
    /// so a connection is only reused under the security context it was verified with.
    private func poolKey(for transfer: Transfer) -> Result<Int, CourierError> {
        var tlsID = -1
        if transfer._url.scheme == .https {
            switch tlsConfigurationID(transfer._options.tls) {
            case .success(let id): tlsID = id
            case .failure(let error): return .failure(error)
            }
        }
        if lastPoolKey >= 0, lastPoolTLSID == tlsID, transfer.targets(lastOrigin) {
            poolKeyConnectTimeout[lastPoolKey] = transfer._options.timeouts.connect
            return .success(lastPoolKey)
        }
        let value = PoolKeyValue(origin: transfer._url.origin, tls: tlsID)
        let key: Int
        if let known = poolKeys[value] {
            key = known
            poolKeyConnectTimeout[key] = transfer._options.timeouts.connect
        } else {
            key = poolKeyOrigin.count
            poolKeys[value] = key
            poolKeyOrigin.append(value.origin)
            poolKeyHost.append(hostKey(for: value.origin.host))
            poolKeyConnectTimeout.append(transfer._options.timeouts.connect)
            poolKeyTLS.append(tlsID >= 0 ? (try? tlsContexts[tlsID].get()) : nil)
            applyPoolLimit(key: key)
        }
        lastOrigin = value.origin
        lastPoolKey = key
        lastPoolTLSID = tlsID
        return .success(key)
    }

    /// Interns a TLS configuration and builds its context once (loading trust roots and client
    /// certificates is far too slow to repeat per connection).
    private func tlsConfigurationID(_ configuration: TLSConfiguration) -> Result<Int, CourierError> {
        if lastTLSID >= 0, lastTLSConfiguration == configuration {
            return tlsContexts[lastTLSID].map { _ in lastTLSID }
        }
        let id: Int
        if let known = tlsConfigurationIDs[configuration] {
            id = known
        } else {
            id = tlsContexts.count
            tlsConfigurationIDs[configuration] = id
            tlsContexts.append(TLSContext.make(configuration))
        }
        lastTLSConfiguration = configuration
        lastTLSID = id
        return tlsContexts[id].map { _ in id }
    }

    /// The session to resume for a new connection of `poolKey`, if any.
    func cachedTLSSession(poolKey: Int) -> OpaquePointer? {
        tlsSessions[poolKey]
    }

    /// Keeps the newest session of `poolKey` (taking ownership of the reference).
    func storeTLSSession(_ session: OpaquePointer, poolKey: Int) {
        if let old = tlsSessions.updateValue(session, forKey: poolKey) { SSL_SESSION_free(old) }
    }

    private func applyPoolLimit(key: Int) {
        let limit = scheduler.hostLimit(poolKeyHost[key])
        let count = pool.setLimit(limit, for: key)
        for _ in 0..<count { openConnection(key: key) }
    }

    private func armWaitTimer(_ deadline: UInt64) {
        guard let waitTimer, deadline != .max else { return }
        if waitTimerDeadline == 0 || deadline < waitTimerDeadline {
            let now = currentLoop.nowMillis
            waitTimerDeadline = deadline
            uv_timer_start(waitTimer, { timer in
                Unmanaged<Runtime>.fromOpaque(timer!.pointee.data).takeUnretainedValue().waitTimerFired()
            }, deadline > now ? deadline - now : 0, 0)
        }
    }

    /// Deadlines of transfers that hold no connection: the queue wait, and the total deadline
    /// while waiting for a connection.
    private func waitTimerFired() {
        waitTimerDeadline = 0
        let now = currentLoop.nowMillis
        var nextDeadline = UInt64.max
        var expired: [(Transfer, CourierError)] = []
        var cursor = liveHead
        while let transfer = cursor {
            cursor = transfer.liveNext
            switch transfer.phase {
            case .queued where transfer.queueDeadlineMillis != .max:
                if transfer.queueDeadlineMillis <= now {
                    expired.append((transfer, CourierError(.queueTimeout)))
                } else {
                    nextDeadline = min(nextDeadline, transfer.queueDeadlineMillis)
                }
            case .waitingForConnection where transfer.totalDeadlineMillis != .max:
                if transfer.totalDeadlineMillis <= now {
                    expired.append((transfer, CourierError(.totalTimeout, "while waiting for a connection")))
                } else {
                    nextDeadline = min(nextDeadline, transfer.totalDeadlineMillis)
                }
            default:
                break
            }
        }
        for (transfer, error) in expired { finish(transfer, error) }
        if nextDeadline != .max { armWaitTimer(nextDeadline) }
    }

    private func activityChanged() {
        runningCount.store(scheduler.running, ordering: .relaxed)
        queuedCount.store(scheduler.queuedCount, ordering: .relaxed)
        guard hasObservers.load(ordering: .relaxed), !notifyScheduled, let notifier else { return }
        notifyScheduled = true
        uv_prepare_start(notifier) { handle in
            Unmanaged<Runtime>.fromOpaque(handle!.pointee.data).takeUnretainedValue().notifyObservers()
        }
    }

    private func notifyObservers() {
        if let notifier { uv_prepare_stop(notifier) }
        notifyScheduled = false
        let snapshot = QueueActivity(running: scheduler.running, queued: scheduler.queuedCount)
        guard snapshot != lastNotified else { return }
        lastNotified = snapshot
        let current = lock.withLock { Array(observers.values) }
        for observer in current { observer(snapshot) }
    }

    /// Statistics for tests and `courier -v`: connections by state.
    package func poolStatistics(_ reply: @escaping @Sendable (_ idle: Int, _ connecting: Int, _ leased: Int, _ open: Int) -> Void) {
        execute { [self] in
            let totals = pool.totals
            reply(totals.idle, totals.connecting, totals.leased, connections.count)
        }
    }

    private func shutdownOnLoop(_ loop: EventLoop) {
        shuttingDown = true
        while let transfer = liveHead {
            cancelNow(transfer, CourierError(.shutdown))
            if transfer.phase != .finished { finish(transfer, CourierError(.shutdown)) }
        }
        for connection in connections.values { connection.closeFromPool() }
        connections.removeAll()
        for session in tlsSessions.values { SSL_SESSION_free(session) }
        tlsSessions.removeAll()
        for ref in pool.drainIdle() { ref.connection.closeFromPool() }
        if let waitTimer {
            uv_timer_stop(waitTimer)
            uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(waitTimer))) { UnsafeMutableRawPointer($0!).deallocate() }
            self.waitTimer = nil
        }
        if let notifier {
            uv_prepare_stop(notifier)
            uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(notifier))) { UnsafeMutableRawPointer($0!).deallocate() }
            self.notifier = nil
        }
        runningCount.store(0, ordering: .relaxed)
        queuedCount.store(0, ordering: .relaxed)
        loop.closeWakeup()
    }
}
