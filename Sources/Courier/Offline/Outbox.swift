import CourierCore

/// Where an engine keeps its *freezable* operations (MKNetworkKit's frozen operations, made
/// durable and exactly-once-friendly): each is journaled on disk before anything is sent, waits
/// while its host cannot be reached, goes out when the network returns (or every
/// `retryInterval`), and leaves the journal only when its server answered. An operation frozen
/// by a process that died is sent by the next one that opens the directory.
///
/// ```swift
/// let outbox = try Outbox(directory: appSupport + "/outbox")
/// outbox.onFinished(kind: "draft") { outcome in ... }   // before the engine starts replaying
/// var configuration = Engine.Configuration()
/// configuration.outbox = outbox
/// let api = Engine(host: "https://api.example.com", configuration: configuration)
/// let save = api.operation(path: "/drafts", method: .post)
/// save.freeze(kind: "draft")
/// api.enqueue(save)
/// ```
/// Every attempt carries the entry's id as `Idempotency-Key`, so a request resent after a crash
/// mid-send is recognisable to a server that honours the key. Outcomes reach the operation's own
/// handlers (in this process) and the handlers registered here by id or kind (in any process).
/// Cancelling a frozen operation removes it from the journal.
public final class Outbox: @unchecked Sendable {
    /// What a handler learns when a frozen operation ends.
    public struct Outcome: Sendable {
        /// The entry's id (its Idempotency-Key) and kind.
        public var id: String
        public var kind: String
        public var result: Result<Response, CourierError>
    }

    /// How much the journal may hold (`.outboxFull` beyond).
    public typealias Limits = CourierCore.OutboxLimits

    /// The entries on disk (the CLI's `--flush` reads them in order).
    package let journal: Journal
    /// How long a waiting operation waits before it is tried again without a network change.
    public let retryInterval: Duration
    private let lock = Lock()
    /// Ids of entries an operation of this process owns (replays skip them).
    @exclusivity(unchecked) private var owned: Set<String> = []
    /// Operations (or C requests) waiting for the network, by id.
    @exclusivity(unchecked) private var waitingOperations: [String: any OutboxSender] = [:]
    @exclusivity(unchecked) private var kindHandlers: [String: [@Sendable (Outcome) -> Void]] = [:]
    @exclusivity(unchecked) private var idHandlers: [String: [@Sendable (Outcome) -> Void]] = [:]
    @exclusivity(unchecked) private var observation: NetworkObservation?
    @exclusivity(unchecked) private var retryScheduled = false
    /// The engine replays go through (weak: the engine holds the outbox in its configuration).
    @exclusivity(unchecked) private weak var engine: Engine?

    /// Opens (creating it) and owns `directory`: `.outboxLocked` while another process does.
    public init(directory: String, limits: Limits = Limits(), retryInterval: Duration = .seconds(30)) throws(CourierError) {
        journal = try Journal(directory: directory, limits: limits)
        self.retryInterval = retryInterval
    }

    /// The directory.
    public var directory: String { journal.directory }
    /// Entries waiting (sent or not), oldest first.
    public var waiting: [OutboxEntry] { journal.entries }
    /// Damaged entries found when the outbox opened (renamed `*.corrupt`, never sent).
    public var setAside: [String] { journal.setAside }

    /// Calls `handler` when a frozen operation of `kind` ends, in this process or a later one
    /// (register before the engine that replays the journal is created).
    public func onFinished(kind: String, _ handler: @escaping @Sendable (Outcome) -> Void) {
        lock.withLock { kindHandlers[kind, default: []].append(handler) }
    }

    /// Calls `handler` when the frozen operation `id` ends.
    public func onFinished(id: String, _ handler: @escaping @Sendable (Outcome) -> Void) {
        lock.withLock { idHandlers[id, default: []].append(handler) }
    }

    /// Tries every waiting operation again now (also what a network change does).
    public func flush() {
        let senders = lock.withLock { () -> [any OutboxSender] in
            defer { waitingOperations.removeAll() }
            return Array(waitingOperations.values)
        }
        for sender in senders.sorted(by: { $0.outboxSequence < $1.outboxSequence }) { sender.resendFromOutbox() }
        replayOrphans()
    }

    /// Gives up the directory (entries stay for the next owner).
    public func close() {
        observation?.cancel()
        journal.close()
    }

    // MARK: - For engines and operations

    /// The engine replays what earlier processes left, and the outbox starts watching the network.
    package func attach(_ engine: Engine) {
        let first = lock.withLock { () -> Bool in
            defer { if self.engine == nil { self.engine = engine } }
            return self.engine == nil
        }
        guard first else { return }
        observation = Network.observe { [weak self] status in
            if status.isReachable { self?.flush() }
        }
        replayOrphans()
    }

    /// Journals the first attempt of a frozen operation (its transfer built, nothing sent yet).
    package func freeze(_ transfer: Transfer, _ state: FreezeState) throws(CourierError) {
        let entry = try OutboxRules.entry(for: transfer, id: state.id, kind: state.kind, now: wallClockSeconds())
        let stored = try journal.append(entry)
        lock.withLock { _ = owned.insert(stored.id) }
        state.sequence = stored.sequence
        state.journaled = true
    }

    /// An operation whose attempt got no answer waits for the network (or the retry interval).
    package func hold(_ sender: any OutboxSender, id: String) {
        let schedule = lock.withLock { () -> Bool in
            waitingOperations[id] = sender
            defer { retryScheduled = true }
            return !retryScheduled
        }
        if schedule {
            let interval = retryInterval
            Task.detached { [weak self] in
                try? await Task.sleep(for: interval)
                guard let self else { return }
                self.lock.withLock { self.retryScheduled = false }
                self.flush()
            }
        }
    }

    /// Ends the waiting senders `predicate` selects with `.shutdown` (their engine is going
    /// away); their entries stay for the next owner of the directory.
    package func abandonWaiting(where predicate: (any OutboxSender) -> Bool) {
        let abandoned = lock.withLock { () -> [any OutboxSender] in
            let chosen = waitingOperations.filter { predicate($0.value) }
            for id in chosen.keys { waitingOperations[id] = nil }
            return Array(chosen.values)
        }
        for sender in abandoned { sender.abandonFromOutbox() }
    }

    /// A waiting operation was cancelled: true if it was waiting here (it leaves the journal).
    package func cancelWaiting(id: String) -> Bool {
        lock.withLock { waitingOperations.removeValue(forKey: id) != nil }
    }

    /// The frozen operation `id` ended (answered, cancelled, or refused before sending): out of
    /// the journal, and to the handlers.
    package func finish(id: String, kind: String, result: Result<Response, CourierError>) {
        forget(id: id)
        notify(id: id, kind: kind, result: result)
    }

    /// The entry `id` leaves the journal (its operation ended).
    package func forget(id: String) {
        journal.remove(id)
        lock.withLock { _ = owned.remove(id) }
    }

    /// The handlers registered for `id` and `kind` hear of the end.
    package func notify(id: String, kind: String, result: Result<Response, CourierError>) {
        let handlers = lock.withLock { () -> [@Sendable (Outcome) -> Void] in
            (idHandlers.removeValue(forKey: id) ?? []) + (kindHandlers[kind] ?? [])
        }
        let outcome = Outcome(id: id, kind: kind, result: result)
        for handler in handlers { handler(outcome) }
    }

    /// Sends, through the attached engine, the entries no operation of this process owns (left by
    /// an earlier process).
    private func replayOrphans() {
        let (target, orphans) = lock.withLock { () -> (Engine?, [OutboxEntry]) in
            guard let attached = engine else { return (nil, []) }
            let orphans = journal.entries.filter { !owned.contains($0.id) }
            for entry in orphans { owned.insert(entry.id) }
            return (attached, orphans)
        }
        guard let engine = target else { return }
        for entry in orphans {
            let operation = engine.operation(urlString: entry.url, method: HTTPMethod(rawValue: entry.method))
            operation.resume(frozen: entry, in: self)
            engine.enqueue(operation)
        }
    }
}

/// What waits in an outbox for the network: a Swift `HTTPOperation` or a C request.
package protocol OutboxSender: AnyObject {
    /// The journal's order, for sending in order.
    var outboxSequence: UInt64 { get }
    /// Sends the same request again (same Idempotency-Key).
    func resendFromOutbox()
    /// Ends with `.shutdown` without sending (the entry stays in the journal).
    func abandonFromOutbox()
}

extension HTTPOperation: OutboxSender {
    package func resendFromOutbox() { if resumesFromOutbox() { start() } }
    package func abandonFromOutbox() {
        abandon(CourierError(.shutdown, "its engine went away; the request waits in the outbox for the next process"))
    }
}
