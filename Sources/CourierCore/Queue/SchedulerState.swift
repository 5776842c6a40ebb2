/// The process-wide queue's decisions as a value: which operation runs next, and when.
///
/// MKNetworkKit's central idea is one queue for the whole process with a bounded width; Courier
/// adds per-host limits and priorities. Rules:
/// - at most `width` operations run at once (changeable at run time: lowering it never stops
///   running work, raising it starts queued work at once); an operation the user waits for
///   (`.normal` and up) counts only the foreground operations running, never the background
///   ones (`.low`, `.veryLow`: uploads, prefetching), which start only in what is left (on a
///   cellular width of 2, a view's thumbnails would otherwise wait for two whole photo uploads);
///   so at most `width` foreground operations run, and background ones only below `width` in all;
/// - at most `hostLimit(host)` of them target one host;
/// - the next to start is the highest-priority queued operation whose host has room, first-in
///   first-out within a priority. An operation for a saturated host never blocks one for another.
///
/// Invariant (checked by the tests after every event): no queued operation could start, i.e. for
/// each host with queued work, what counts against its best entry's width is at the width, or
/// the host is at its limit.
package struct SchedulerState<Item: Hashable> {
    package struct HostQueue {
        package var running = 0
        package var limit: Int?
        /// Operations one connection carries at once: 1 for HTTP/1, the stream limit once the
        /// host speaks HTTP/2 (the host limit counts connections, so streams = limit x this).
        package var streamsPerConnection = 1

        /// Room for another operation beyond one per connection (HTTP/2's streams); asked only
        /// when the connection count alone says no, so HTTP/1 hosts never multiply.
        @inline(__always)
        func hasStreamRoom(_ defaultLimit: Int) -> Bool {
            streamsPerConnection > 1 && running < (limit ?? defaultLimit) * streamsPerConnection
        }
        /// One FIFO per priority, index = `Priority.rawValue`.
        package var queued: [Deque<Entry>] = Array(repeating: Deque<Entry>(), count: Priority.allCases.count)
        package var queuedCount = 0

        /// Whether foreground work (`.normal` and up) waits here.
        var hasQueuedForeground: Bool {
            queued[Priority.normal.rawValue].count + queued[Priority.high.rawValue].count
                + queued[Priority.veryHigh.rawValue].count > 0
        }

        /// The best entry queued here: highest priority, then lowest sequence number.
        func head() -> Entry? {
            guard queuedCount > 0 else { return nil }
            for level in stride(from: queued.count - 1, through: 0, by: -1) {
                if let first = queued[level].first { return first }
            }
            return nil
        }
    }

    package struct Entry {
        package var item: Item
        package var priority: Priority
        package var sequence: UInt64
    }

    package private(set) var width: Int
    package var defaultHostLimit: Int
    package private(set) var running = 0
    /// Running operations below `.normal` (not counted against foreground work's width).
    package private(set) var runningBackground = 0
    package private(set) var queuedCount = 0
    /// Per-host state, indexed by host key (small consecutive integers the runtime interns).
    package private(set) var hosts: [HostQueue] = []
    /// Hosts with queued work, so choosing the next operation scans only those.
    private var hostsWithQueued: [Int] = []
    private var nextSequence: UInt64 = 0

    package init(width: Int, defaultHostLimit: Int) {
        precondition(width >= 0 && defaultHostLimit >= 1, "invalid scheduler limits: width \(width), host limit \(defaultHostLimit)")
        self.width = width
        self.defaultHostLimit = defaultHostLimit
    }

    /// The limit that applies to `host`.
    package func hostLimit(_ host: Int) -> Int { host < hosts.count ? hosts[host].limit ?? defaultHostLimit : defaultHostLimit }

    /// The state of one host, if it was ever used.
    package func hostState(_ host: Int) -> HostQueue? { host < hosts.count ? hosts[host] : nil }

    /// What counts against the width for an operation of `priority`: every running operation
    /// for background work, the foreground ones otherwise.
    @inline(__always)
    package func busy(at priority: Priority) -> Int {
        priority < .normal ? running : running - runningBackground
    }

    /// Adds an operation. Returns true when it may start now (the caller starts it); otherwise it
    /// waits its turn.
    package mutating func enqueue(_ item: Item, host: Int, priority: Priority) -> Bool {
        let width = self.width, defaultHostLimit = self.defaultHostLimit
        let running = self.running, background = self.runningBackground
        let sequence = nextSequence
        let (start, becameQueued) = withHost(host) { queue -> (Bool, Bool) in
        // If there is room, nothing queued can be ahead of it: by the invariant, queued work is
        // only ever blocked by its class's width (not the case here) or by its own host's limit;
        // background work queued here cannot be ahead of foreground work.
        // (Room in all is room for any; only without it is the foreground's own count needed.)
        if running < width || (priority >= .normal && running - background < width),
           queue.running < (queue.limit ?? defaultHostLimit) || queue.hasStreamRoom(defaultHostLimit),
           queue.queuedCount == 0 || (priority >= .normal && !queue.hasQueuedForeground) {
            queue.running += 1
            return (true, false)
        }
        queue.queued[priority.rawValue].append(Entry(item: item, priority: priority, sequence: sequence))
        queue.queuedCount += 1
        return (false, queue.queuedCount == 1)
        }
        if start {
            self.running += 1
            if priority < .normal { runningBackground += 1 }
            return true
        }
        if becameQueued { hostsWithQueued.append(host) }
        nextSequence &+= 1
        queuedCount += 1
        return false
    }

    /// A running operation of `priority` ended (success, failure or cancellation). Returns the
    /// operation to start in its place, if any; at most one can, since one slot of each kind was
    /// freed. (`priority` is asked only while background work runs: with none, the operation
    /// cannot be background work, and its priority is not even read.)
    @inline(__always)
    package mutating func finished(host: Int, priority: @autoclosure () -> Priority) -> Item? {
        precondition(host < hosts.count && hosts[host].running > 0 && running > 0,
                     "finished(host: \(host)) with nothing running there")
        hosts[host].running -= 1  // (the host exists: no `withHost`)
        running -= 1
        if runningBackground != 0, priority() < .normal { runningBackground -= 1 }
        return startNext()
    }

    /// Removes a queued operation (cancelled or timed out in the queue). Returns whether it was queued.
    @discardableResult
    package mutating func remove(_ item: Item, host: Int, priority: Priority) -> Bool {
        guard host < hosts.count else { return false }
        let remaining = withHost(host) { queue -> Int? in
            guard queue.queued[priority.rawValue].removeFirst(where: { $0.item == item }) != nil else { return nil }
            queue.queuedCount -= 1
            return queue.queuedCount
        }
        guard let remaining else { return false }
        queuedCount -= 1
        if remaining == 0 { hostsWithQueued.removeAll { $0 == host } }
        return true
    }

    /// Changes the width. Returns the operations that may start now.
    package mutating func setWidth(_ newWidth: Int) -> [Item] {
        precondition(newWidth >= 0, "negative width \(newWidth)")
        width = newWidth
        return startAllPossible()
    }

    /// Changes one host's limit (nil restores the default). Returns the operations that may start now.
    package mutating func setHostLimit(_ limit: Int?, for host: Int) -> [Item] {
        precondition(limit.map { $0 >= 1 } ?? true, "host limit below 1")
        withHost(host) { $0.limit = limit }
        return startAllPossible()
    }

    /// A host's connections carry `streams` operations each (HTTP/2's stream limit; 1 for
    /// HTTP/1). Returns the operations that may start now.
    package mutating func setStreamsPerConnection(_ streams: Int, for host: Int) -> [Item] {
        withHost(host) { $0.streamsPerConnection = max(1, streams) }
        return startAllPossible()
    }

    /// Changes the default per-host limit. Returns the operations that may start now.
    package mutating func setDefaultHostLimit(_ limit: Int) -> [Item] {
        precondition(limit >= 1, "host limit below 1")
        defaultHostLimit = limit
        return startAllPossible()
    }

    /// Every queued operation, best first (for cancel-by-predicate and shutdown).
    package var queuedItems: [Item] {
        var entries: [Entry] = []
        for host in hostsWithQueued {
            for level in hosts[host].queued { entries += level.elements }
        }
        entries.sort { ($0.priority.rawValue, UInt64.max - $0.sequence) > ($1.priority.rawValue, UInt64.max - $1.sequence) }
        return entries.map(\.item)
    }

    /// Mutates one host's queue in place (see `ConnectionPoolState.withEntry` for why).
    @inline(__always)
    private mutating func withHost<R>(_ host: Int, _ body: (inout HostQueue) -> R) -> R {
        while hosts.count <= host { hosts.append(HostQueue()) }
        return body(&hosts[host])
    }

    private mutating func startAllPossible() -> [Item] {
        var started: [Item] = []
        while let item = startNext() { started.append(item) }
        return started
    }

    /// Picks the best startable entry across hosts and marks it running. Only the best needs
    /// the width's check: what counts against a lower priority's width is never less.
    private mutating func startNext() -> Item? {
        guard queuedCount > 0, running - runningBackground < width else { return nil }
        var best: (host: Int, entry: Entry)?
        for host in hostsWithQueued {
            let queue = hosts[host]
            guard queue.running < (queue.limit ?? defaultHostLimit) || queue.hasStreamRoom(defaultHostLimit),
                  let head = queue.head() else { continue }
            if let current = best {
                if head.priority > current.entry.priority
                    || (head.priority == current.entry.priority && head.sequence < current.entry.sequence) {
                    best = (host, head)
                }
            } else {
                best = (host, head)
            }
        }
        guard let (host, entry) = best, busy(at: entry.priority) < width else { return nil }
        let remaining = withHost(host) { queue -> Int in
            _ = queue.queued[entry.priority.rawValue].popFirst()
            queue.queuedCount -= 1
            queue.running += 1
            return queue.queuedCount
        }
        if remaining == 0 { hostsWithQueued.removeAll { $0 == host } }
        queuedCount -= 1
        running += 1
        if entry.priority < .normal { runningBackground += 1 }
        return entry.item
    }
}
