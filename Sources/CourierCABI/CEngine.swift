import Courier
import CourierCore
import CUV
import Glibc
import Synchronization

/// `courier_engine`: what every request made from it starts with (base URL, default headers,
/// accepted statuses), and the completion queue of requests started with `courier_request_enqueue`.
///
/// It is not a Swift `Engine` because C may add default headers after creation (curl's habit of
/// configuring a handle step by step); requests snapshot the defaults when they are created.
final class CEngine: @unchecked Sendable {
    /// Must stay the first stored property (see `HandleTag`).
    @exclusivity(unchecked) var tag = HandleTag.engine
    /// Negative, so C engines never collide with Swift engines' identifiers in `OperationInfo`.
    let id: Int
    let base: CourierURL?
    /// The base URL's path without its trailing "/", the prefix of request paths.
    let basePath: String
    @exclusivity(unchecked) var defaultHeaders: HTTPHeaders
    @exclusivity(unchecked) var acceptedStatus: Range<Int> = 200..<400
    /// What requests created from now on start with: the defaults, and the cache
    /// (courier_engine_set_cache) in one shared box, so a request's options cost nothing to make.
    @exclusivity(unchecked) var options = TransferOptions()
    /// courier_engine_set_authenticator: what answers 401 and 407 for requests created from now on.
    @exclusivity(unchecked) var authenticator: Authenticator? { didSet { updateComposed() } }
    /// courier_engine_set_outbox: where frozen requests created from now on are journaled.
    @exclusivity(unchecked) var outbox: Outbox? { didSet { updateComposed() } }
    /// The Swift engine the outbox replays earlier processes' entries through (its options).
    @exclusivity(unchecked) var replayEngine: Engine?
    /// courier_engine_set_challenge_timeout: how long refused requests wait for the callback.
    @exclusivity(unchecked) var challengeTimeout: Duration = .seconds(30)
    /// courier_engine_set_hooks: the hooks requests created from now on carry, and the metrics
    /// hook (called with C handles).
    @exclusivity(unchecked) var hooks: HookSet? { didSet { updateComposed() } }
    @exclusivity(unchecked) var cHooks: CHooks? { didSet { updateComposed() } }
    /// Whether requests get an authenticator or hooks (a flag request_create tests).
    @exclusivity(unchecked) private(set) var composed = false

    /// courier_engine_set_debug: the debug callback requests created from now on start with.
    @exclusivity(unchecked) var debug: (courier_debug_fn, UnsafeMutableRawPointer?)? { didSet { updateComposed() } }

    private func updateComposed() {
        composed = authenticator != nil || hooks != nil || cHooks != nil || outbox != nil || debug != nil
    }
    /// An eventfd whose counter is non-zero while `completed` or `networkChanges` is not empty
    /// (and, for a moment, after a reader emptied them just before a pusher's write landed).
    let completionFD: Int32
    private let lock = Lock()
    /// The counter's writes, counted under `lock`: issued by the pusher that made a queue
    /// non-empty (it writes after the unlock), and taken back by `markIdle` (the values it read).
    /// Equal, the counter is zero: the reset's read is skipped.
    private var signalsIssued: UInt64 = 0
    private var signalsTaken: UInt64 = 0
    private var completed = Deque<Completed>()
    private var destroyed = false
    /// courier_engine_watch_network: network statuses not yet taken (the latest
    /// `maxNetworkChanges`), and the runtime observer that queues them.
    private var networkChanges = Deque<NetworkStatus>()
    private var networkWatch: Int?
    static let maxNetworkChanges = 32

    /// A finished request waiting in the completion queue, holding its response reference.
    struct Completed {
        let request: CRequest
        let response: OpaquePointer?
        let code: Int32
    }

    private static let idLock = Lock()
    nonisolated(unsafe) private static var lastID = 0

    /// The engine behind `courier_request_create(NULL, ...)`: absolute URLs, standard headers.
    static let shared = CEngine(base: nil)

    /// Addresses of engines whose handle is live. Engines are few and long-lived, so unlike
    /// requests (tag check only) they are looked up here: a destroyed engine handle is recognised
    /// without reading freed memory, even after the memory was reused. A plain array scanned
    /// under a spin lock: with a handful of engines that is a few compares, where hashing the
    /// address cost hundreds of instructions on every request_create.
    @exclusivity(unchecked) nonisolated(unsafe) private static var live: [UInt] = []
    private static let liveLock = SpinLock()

    /// The engine behind a handle, if it is a live one.
    @inline(__always)
    static func fromHandle(_ handle: OpaquePointer?) -> CEngine? {
        guard let handle else { return nil }
        let address = UInt(bitPattern: UnsafeRawPointer(handle))
        let known = liveLock.withLock { live.contains(address) }
        return known ? object(handle, tag: HandleTag.engine, as: CEngine.self) : nil
    }

    /// A new handle, registered as live.
    func makeHandle() -> OpaquePointer {
        let handle = retainedHandle(self)
        let address = UInt(bitPattern: UnsafeRawPointer(handle))
        CEngine.liveLock.withLock { CEngine.live.append(address) }
        return handle
    }

    /// Unregisters a handle; false if it was not live (a second destroy).
    static func retire(_ handle: OpaquePointer) -> Bool {
        let address = UInt(bitPattern: UnsafeRawPointer(handle))
        return liveLock.withLock {
            guard let index = live.firstIndex(of: address) else { return false }
            live.swapAt(index, live.count - 1)
            live.removeLast()
            return true
        }
    }

    init(base: CourierURL?) {
        self.base = base
        basePath = RequestDraft.basePath(of: base)
        var headers = Engine.standardHeaders
        headers.prepareForSending()
        defaultHeaders = headers
        completionFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        id = CEngine.idLock.withLock {
            CEngine.lastID -= 1
            return CEngine.lastID
        }
    }

    deinit {
        if completionFD >= 0 { close(completionFD) }
    }

    /// Whether `courier_engine_destroy` ran (the object may live on for its requests).
    var isDestroyed: Bool { lock.withLock { destroyed } }

    /// Cancels every queued and running request of this engine.
    func cancelAll() {
        let id = self.id
        Runtime.shared.cancelAll { $0.owner == id }
    }

    /// Set by courier_engine_invalidate: requests are no longer created from the engine.
    let invalidated = Atomic<Bool>(false)

    /// The destructor's work: cancel what is in flight and drop uncollected completions (which
    /// also breaks the engine → completion → request → engine cycle).
    func destroy() {
        let dropped = lock.withLock { () -> Deque<Completed> in
            destroyed = true
            var taken = Deque<Completed>()
            swap(&taken, &completed)
            return taken
        }
        for entry in dropped.elements { if let response = entry.response { releaseHandle(response) } }
        watchNetwork(false)
        cancelAll()
        // Frozen requests waiting for the network end too (with COURIER_E_SHUTDOWN); their
        // entries stay in the outbox for the next process.
        outbox?.abandonWaiting { ($0 as? CRequest)?.engine === self }
    }

    /// Appends a finished request (loop thread). Returns false when the engine is gone, in which
    /// case the caller keeps the response reference.
    func pushCompletion(_ entry: Completed) -> Bool {
        let (kept, first) = lock.withLock { () -> (Bool, Bool) in
            if destroyed { return (false, false) }
            completed.append(entry)
            return (true, issueSignal(first: completed.count == 1 && networkChanges.isEmpty))
        }
        if first { markReadable() }
        return kept
    }

    /// Takes the oldest finished request whose handle was not freed meanwhile.
    func popCompletion() -> Completed? {
        var skipped: [OpaquePointer] = []
        defer { for response in skipped { releaseHandle(response) } }
        return lock.withLock {
            while let entry = completed.popFirst() {
                settleIfDrained()
                if entry.request.isFreed {
                    if let response = entry.response { skipped.append(response) }
                    continue
                }
                entry.request.pickedUp()
                return entry
            }
            settleIfDrained()
            return nil
        }
    }

    /// Under `lock`, for a pusher: whether it made a queue non-empty and so must signal (the
    /// write is counted here, made by `markReadable` after the unlock).
    private func issueSignal(first: Bool) -> Bool {
        if first { signalsIssued &+= 1 }
        return first
    }

    /// Sets the counter when the first item arrived: the descriptor is readable.
    ///
    /// Written after `lock` is let go: the reader the write wakes may run at once on this CPU,
    /// and would otherwise find the lock still held (a futex wait and two more context switches
    /// for every completion, measured in A1). Should the reader have emptied the queues between
    /// the unlock and the write, the write would be left unread: `settleIfDrained` resets it,
    /// so the descriptor is never left readable with nothing waiting.
    private func markReadable() {
        var one: UInt64 = 1
        _ = write(completionFD, &one, 8)
        lock.withLock { settleIfDrained() }
    }

    /// Under `lock`: when both queues are empty and a write may be unread, resets the counter.
    /// (A reader that wakes for such a write finds nothing and comes here too, so it never
    /// spins on a ready descriptor while the pusher is yet to run again.)
    private func settleIfDrained() {
        if completed.isEmpty, networkChanges.isEmpty, signalsTaken != signalsIssued { markIdle() }
    }

    /// Resets the counter (under `lock`): it reads as idle again.
    private func markIdle() {
        var value: UInt64 = 0
        if read(completionFD, &value, 8) == 8 { signalsTaken &+= value }
    }

    /// courier_engine_watch_network: queue each network change for `popNetworkChange`, or stop
    /// (dropping what was not taken).
    func watchNetwork(_ on: Bool) {
        if on {
            guard lock.withLock({ networkWatch == nil && !destroyed }) else { return }
            let id = Runtime.shared.addNetworkObserver { [weak self] status in self?.pushNetworkChange(status) }
            let kept = lock.withLock { () -> Bool in
                guard networkWatch == nil, !destroyed else { return false }
                networkWatch = id
                return true
            }
            if !kept { Runtime.shared.removeNetworkObserver(id) }
            return
        }
        let previous = lock.withLock { () -> Int? in
            defer {
                networkWatch = nil
                if !networkChanges.isEmpty {
                    networkChanges = Deque()
                    settleIfDrained()
                }
            }
            return networkWatch
        }
        if let previous { Runtime.shared.removeNetworkObserver(previous) }
    }

    /// A new network status for the descriptor (loop thread); the oldest is dropped past the bound.
    private func pushNetworkChange(_ status: NetworkStatus) {
        let first = lock.withLock { () -> Bool in
            guard networkWatch != nil, !destroyed else { return false }
            if networkChanges.count == CEngine.maxNetworkChanges { _ = networkChanges.popFirst() }
            networkChanges.append(status)
            return issueSignal(first: networkChanges.count == 1 && completed.isEmpty)
        }
        if first { markReadable() }
    }

    /// The oldest network change not yet taken.
    func popNetworkChange() -> NetworkStatus? {
        lock.withLock {
            let status = networkChanges.popFirst()
            settleIfDrained()
            return status
        }
    }
}
