import CUV
import Glibc
import Synchronization

/// The process-wide engine room: one loop thread, the shared queue, the connection pool.
///
/// Every `Engine`, every C caller and every FFI host submits here, which is what makes the queue's
/// width a real process-wide limit (MKNetworkKit's one shared `NSOperationQueue`). This type is
/// the door from any thread and the loop's lifecycle; on the loop thread its `Executor` carries
/// out what the pure machines decide. Other threads reach the loop only through
/// `EventLoop.enqueue`.
///
/// The loop thread starts on first use and stops in `shutdown()`, after which the next submission
/// starts a fresh one (tests and the C ABI rely on that). When the system refuses a loop (no
/// descriptors, no threads), submissions fail with `.loopUnavailable` and the next one tries again.
package final class Runtime: @unchecked Sendable {
    /// The one runtime of the process.
    package static let shared = Runtime()

    // Cross-thread state, guarded by `lock`.
    private let lock = Lock()
    @exclusivity(unchecked) private var loop: EventLoop?
    @exclusivity(unchecked) private var stopping = false
    @exclusivity(unchecked) private var configuration = QueueConfiguration()
    /// Who hears of network changes (`addNetworkObserver`), under `lock`.
    @exclusivity(unchecked) private var networkObservers: [(id: Int, handler: @Sendable (NetworkStatus) -> Void)] = []
    @exclusivity(unchecked) private var nextNetworkObserver = 0
    /// The status observers last heard of (nil before the first loop), under `lock`.
    @exclusivity(unchecked) private var reportedNetwork: NetworkStatus?
    private let loopThreadID = Atomic<UInt>(0)
    private let notifier = ActivityNotifier()

    /// The loop's executor, made on the loop thread before it runs its first job; loop thread only.
    @exclusivity(unchecked) private var executor: Executor!

    private init() {}

    // MARK: - Any thread

    /// Hands a transfer to the shared queue. On the loop thread (a completion submitting the next
    /// request) it is taken at once, without the inbox or a wakeup.
    package func submit(_ transfer: Transfer) {
        // HSTS first: the cache, the flights and the pool see the https URL.
        if _slowPath(transfer._options.hasComposition) { transfer.upgradeForHSTS() }
        // A cache answers here, on the caller's thread, without the loop; it may instead prepare
        // the transfer (validators, a cached-then-fresh preview) for the network.
        if let cache = transfer._options.cache, !transfer.machine.cancelRequested, CacheExchange.begin(transfer, cache: cache) { return }
        if isOnLoopThread {
            executor.accept(transfer)
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

    /// Resumes a transfer whose streaming consumer paused it (`BodyVerdict.pause`): held bytes are
    /// delivered, then reading goes on. From any thread; does nothing for a transfer that is not
    /// paused or has ended.
    package func resume(_ transfer: Transfer) {
        if isOnLoopThread {
            executor.deferOnLoopThread { [executor] in executor.resume(transfer) }
        } else {
            post(.resume(transfer), startingLoop: false)
        }
    }

    /// Runs `body` on the loop thread.
    package func execute(_ body: @escaping @Sendable () -> Void) {
        post(.run(body))
    }

    /// Runs `body` on the loop thread if one runs and takes jobs; drops it otherwise (never starts
    /// a loop for it).
    package func executeIfRunning(_ body: @escaping @Sendable () -> Void) {
        post(.run(body), startingLoop: false)
    }

    /// Runs `body` on the loop thread, or right here when the runtime takes no more jobs
    /// (shutting down, or no loop could start). For reporting outcomes that must never be lost: a
    /// dropped job would leave a blocking caller (`courier_request_perform`) waiting forever.
    package func executeOrRunHere(_ body: @escaping @Sendable () -> Void) {
        if !post(.run(body)) { body() }
    }

    /// Runs `body` on the loop thread, never inside the caller's stack: on the loop thread at the
    /// end of the current turn (no lock, no wakeup), from another thread through the inbox (or
    /// right here when the runtime takes no more jobs, as `executeOrRunHere`).
    package func executeSoon(_ body: @escaping @Sendable () -> Void) {
        if isOnLoopThread {
            executor.deferOnLoopThread(body)
        } else {
            executeOrRunHere(body)
        }
    }

    /// Cancels every live transfer `predicate` selects; it runs on the loop thread.
    package func cancelAll(where predicate: @escaping @Sendable (Transfer) -> Bool) {
        // Without a loop nothing is in flight: cancelling must not start a thread (an engine
        // destroyed after courier_shutdown would otherwise leave one running at exit).
        post(.run { [self] in executor.cancelAll(where: predicate) }, startingLoop: false)
    }

    /// Cancels the live transfers `predicate` selects, asking it during this call (loop thread
    /// only): a caller may lend it what lives only for the call (a C callback's pointer). The
    /// cancels themselves run on a later turn, as `cancel` always does.
    package func cancelSelected(where predicate: (Transfer) -> Bool) {
        precondition(isOnLoopThread, "cancelSelected off the loop thread")
        for transfer in executor.selectLive(where: predicate) { cancel(transfer) }
    }

    /// How many transfers the loop holds (queued, running, or following another) that
    /// `predicate` selects, reported on the loop thread (tests: "nothing is left running").
    package func countLive(where predicate: @escaping @Sendable (Transfer) -> Bool, reply: @escaping @Sendable (Int) -> Void) {
        execute { [self] in reply(executor.countLive(where: predicate)) }
    }

    /// Starts the memory-pressure watcher if the loop runs (the first cache was made; a loop
    /// started later starts it itself).
    package func watchMemoryPressure() {
        post(.run { [self] in executor.watchMemoryPressure() }, startingLoop: false)
    }

    /// Where the loop learns of memory pressure (nil: nowhere, or no cache yet), on the loop.
    package func memoryPressureSource(_ reply: @escaping @Sendable (MemoryPressureWatcher.Source?) -> Void) {
        execute { [self] in reply(executor.memoryPressureSource) }
    }

    /// Runs `body` on the loop thread with the loop's libuv handle (tests that put handles of
    /// their own on the loop).
    package func withUVLoop(_ body: @escaping @Sendable (UnsafeMutablePointer<uv_loop_t>) -> Void) {
        execute { [self] in body(executor.uvLoop) }
    }

    /// Runs `body` on the loop thread once `milliseconds` have passed.
    package func executeAfter(milliseconds: UInt64, _ body: @escaping @Sendable () -> Void) {
        execute { [self] in OneShotTimer.start(on: executor.uvLoop, after: milliseconds, body) }
    }

    /// Operations running at once, process-wide.
    package var width: Int { lock.withLock { configuration.width } }

    /// Changes the width at run time: lowering it lets running work finish, raising it starts
    /// queued work at once. A width set here is the application's: the queue stops following
    /// the network (`followNetwork` starts again).
    package func setWidth(_ width: Int) {
        precondition(width >= 0, "the queue width cannot be negative (\(width))")
        lock.withLock {
            configuration.width = width
            configuration.networkWidths = nil
        }
        post(.run { [self] in executor.setWidth(width) }, startingLoop: false)
    }

    /// The widths the queue follows as the network changes (nil: a fixed width).
    package var networkWidths: NetworkWidths? { lock.withLock { configuration.networkWidths } }

    /// Follows the network with `widths` from now on, applying the current network's at once.
    package func followNetwork(_ widths: NetworkWidths) {
        lock.withLock { configuration.networkWidths = widths }
        post(.run { [self] in applyNetworkWidth(executor.network.status) }, startingLoop: false)
    }

    /// Forces the kind of network (nil: what netlink and sysfs say, or COURIER_NETWORK).
    package func setNetworkOverride(_ kind: NetworkKind?) {
        lock.withLock { configuration.networkOverride = kind }
        // Starts the loop: observers hear of the change now, not when a request next starts it.
        post(.run { [self] in
            executor.network.override = kind ?? Self.environmentNetwork
        }, startingLoop: true)
    }

    private static let environmentNetwork = getenv("COURIER_NETWORK").flatMap { NetworkKind(rawValue: String(cString: $0).lowercased()) }

    /// The network now, reported on the loop thread (the loop is started for it).
    package func networkStatus(_ reply: @escaping @Sendable (NetworkStatus) -> Void) {
        execute { [self] in reply(executor.network.status) }
    }

    /// Whether `host` can be reached, reported on the loop thread (after a name lookup when it is
    /// not an IP literal and not cached): the kernel's routes to its addresses and the latest
    /// connection outcome since the network changed (`HostReachability`).
    package func hostReachability(_ host: String, _ reply: @escaping @Sendable (HostReachability) -> Void) {
        execute { [self] in executor.reachability(of: host, reply: reply) }
    }

    /// Calls `handler` on the loop thread with each new network status until the id is removed.
    /// The observers are the runtime's, not the monitor's: they outlive a shutdown, and the next
    /// loop's monitor reports to them too. Starts the loop (the monitor runs with it).
    package func addNetworkObserver(_ handler: @escaping @Sendable (NetworkStatus) -> Void) -> Int {
        let id = lock.withLock { () -> Int in
            nextNetworkObserver += 1
            networkObservers.append((nextNetworkObserver, handler))
            return nextNetworkObserver
        }
        execute {}
        return id
    }

    package func removeNetworkObserver(_ id: Int) {
        lock.withLock { networkObservers.removeAll { $0.id == id } }
    }

    /// A new network status (loop thread): idle connections, the width, then the observers.
    private func networkChanged(_ status: NetworkStatus) {
        executor.networkChanged()
        applyNetworkWidth(status)
        let observers = lock.withLock { () -> [(id: Int, handler: @Sendable (NetworkStatus) -> Void)] in
            reportedNetwork = status
            return networkObservers
        }
        for observer in observers { observer.handler(status) }
    }

    /// A new loop's monitor (loop thread, as the loop starts): its status is a change when it
    /// differs from the last one reported (the network, or an override, changed while no loop ran).
    private func networkMonitorStarted(_ status: NetworkStatus) {
        let changed = lock.withLock { () -> Bool in
            defer { reportedNetwork = status }
            return reportedNetwork.map { $0 != status } ?? false
        }
        if changed { networkChanged(status) } else { applyNetworkWidth(status) }
    }

    /// The width the network asks for, when the queue follows it (loop thread).
    private func applyNetworkWidth(_ status: NetworkStatus) {
        let width = lock.withLock { () -> Int? in
            guard let widths = configuration.networkWidths, let width = widths.width(for: status.kind) else { return nil }
            configuration.width = width
            return width
        }
        if let width { executor.setWidth(width) }
    }

    /// The per-host limit (operations and connections) for hosts without their own.
    package var defaultHostLimit: Int { lock.withLock { configuration.defaultHostLimit } }

    /// Changes the default per-host limit (at least 1).
    package func setDefaultHostLimit(_ limit: Int) {
        precondition(limit >= 1, "a host limit must be at least 1 (\(limit))")
        lock.withLock { configuration.defaultHostLimit = limit }
        post(.run { [self] in executor.setDefaultHostLimit(limit) }, startingLoop: false)
    }

    /// Sets (or with nil, clears) the limit for one host name (at least 1).
    package func setHostLimit(_ limit: Int?, host: String) {
        precondition(limit.map { $0 >= 1 } ?? true, "a host limit must be at least 1 (\(limit ?? 0))")
        let host = host.lowercased()
        lock.withLock { configuration.hostLimits[host] = limit }
        post(.run { [self] in executor.setHostLimit(limit, host: host) }, startingLoop: false)
    }

    /// A snapshot of the queue, readable from any thread without a lock.
    package var activity: QueueActivity { notifier.snapshot }

    /// Registers `observer` for activity changes; it runs on the loop thread, at most once per loop
    /// turn, with the latest snapshot (changes within one turn are coalesced, which is what an
    /// activity indicator wants). Returns a token for `removeActivityObserver`.
    package func addActivityObserver(_ observer: @escaping @Sendable (QueueActivity) -> Void) -> Int {
        let id = notifier.add(observer)
        execute { [self] in executor.republishActivity() }
        return id
    }

    /// Removes an observer; once this returns it is never called again.
    package func removeActivityObserver(_ id: Int) {
        notifier.remove(id, onLoopThread: isOnLoopThread)
    }

    /// Whether the caller is the loop thread (where delegates run).
    package var isOnLoopThread: Bool {
        let id = loopThreadID.load(ordering: .relaxed)
        return id != 0 && id == pthread_self()
    }

    /// Statistics for tests and `courier -v`: connections by state, reported on the loop thread.
    package func poolStatistics(_ reply: @escaping @Sendable (_ idle: Int, _ connecting: Int, _ leased: Int, _ open: Int) -> Void) {
        execute { [self] in
            let totals = executor.poolStatistics
            reply(totals.idle, totals.connecting, totals.leased, totals.open)
        }
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
        current.enqueue(.run { [self] in executor.shutdown() })
        current.join()
        loopThreadID.store(0, ordering: .relaxed)
        executor = nil
        lock.withLock {
            loop = nil
            stopping = false
        }
    }

    // MARK: - Loop lifecycle

    /// Queues `job` for the loop thread; false when the runtime refused it (shutting down, no loop
    /// could start, or no loop and `startingLoop` false). A refused submit ends there and then.
    @discardableResult
    private func post(_ job: LoopJob, startingLoop: Bool = true) -> Bool {
        var refusal = CourierError(.shutdown)
        let target: EventLoop? = lock.withLock {
            if stopping { return nil }
            if loop == nil, startingLoop {
                do throws(CourierError) {
                    loop = try startLoop()
                } catch {
                    refusal = error
                }
            }
            return loop
        }
        guard let target else {
            if case .submit(let transfer) = job { refuse(transfer, refusal) }
            return false
        }
        target.enqueue(job)
        return true
    }

    /// Creates the loop and starts its thread, which makes the executor before any job runs;
    /// called under the lock.
    private func startLoop() throws(CourierError) -> EventLoop {
        let newLoop = try EventLoop { [unowned self] job in perform(job) }
        let settings = configuration
        try newLoop.start { [self, unowned newLoop] in
            loopThreadID.store(pthread_self(), ordering: .relaxed)
            executor = Executor(loop: newLoop, notifier: notifier, configuration: settings)
            executor.network.onChange = { [unowned self] status in networkChanged(status) }
            networkMonitorStarted(executor.network.status)
        }
        return newLoop
    }

    /// Ends a transfer that can never be queued, on the caller's thread.
    private func refuse(_ transfer: Transfer, _ error: CourierError) {
        let now = monotonicNanos()
        transfer.metrics.enqueuedAt = now
        transfer.metrics.completedAt = now
        switch transfer.machine.accept(refusal: error, queueDeadline: .max) {
        case .finish(let reason, releasing: .nothing):
            transfer._concludedOffLoop = true
            transfer.conclude(reason)
        case let unexpected:
            preconditionFailure("a refused transfer was not finished: \(unexpected)")
        }
    }

    private func perform(_ job: LoopJob) {
        switch job {
        case .submit(let transfer):
            executor.accept(transfer)
        case .cancel(let transfer):
            executor.cancel(transfer, CourierError(.cancelled))
        case .resume(let transfer):
            executor.resume(transfer)
        case .run(let body):
            body()
        }
    }
}
