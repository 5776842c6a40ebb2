import Glibc

/// The thread that writes a cache's disk tier, so no request thread (and never the event loop)
/// waits for a file to be created, written, renamed or evicted.
///
/// Jobs run in order. Writes are best effort: while more than `pendingLimit` bytes wait, further
/// stores are dropped (and counted) rather than growing memory without bound. `flush` waits
/// until everything queued before it is on disk; the process's exit waits for it too (at most
/// two seconds), so a command-line program's last response is stored.
package final class DiskWriter: @unchecked Sendable {
    package enum Job {
        case store(StoredResponse)
        case remove(String)
        case removeAll
        case flush(Signal)
    }

    /// A one-shot event a caller waits on.
    package final class Signal: @unchecked Sendable {
        private let state = ConditionLock()
        private var fired = false

        package init() {}

        package func fire() {
            state.withLock {
                fired = true
                state.broadcast()
            }
        }

        /// Waits until fired, or for at most `seconds`; whether it fired.
        @discardableResult
        package func wait(seconds: Int? = nil) -> Bool {
            state.withLock {
                let deadline = seconds.map { monotonicNanos() + UInt64($0) * 1_000_000_000 }
                while !fired {
                    if let deadline {
                        let now = monotonicNanos()
                        if now >= deadline { break }
                        state.wait(seconds: Int((deadline - now) / 1_000_000_000) + 1)
                    } else {
                        state.wait()
                    }
                }
                return fired
            }
        }
    }

    private let disk: DiskTier
    private let pendingLimit: Int
    private let state = ConditionLock()
    private var jobs = Deque<Job>()
    private var pendingBytes = 0
    private var running = false
    private(set) var dropped = 0

    package init(disk: DiskTier, pendingLimit: Int = 64 << 20) {
        self.disk = disk
        self.pendingLimit = pendingLimit
        DiskWriter.registerExitFlush(self)
    }

    /// Queues a job; starts the thread on first use.
    package func submit(_ job: Job) {
        let start = state.withLock { () -> Bool? in
            if case .store(let response) = job {
                if pendingBytes + response.body.count > pendingLimit {
                    dropped += 1
                    return nil
                }
                pendingBytes += response.body.count
            }
            jobs.append(job)
            let start = !running
            running = true
            state.broadcast()
            return start
        }
        if start == true { startThread() }
    }

    /// Waits until every job queued so far has run (at most `seconds`, when given).
    @discardableResult
    package func flush(seconds: Int? = nil) -> Bool {
        let signal = Signal()
        submit(.flush(signal))
        return signal.wait(seconds: seconds)
    }

    /// Stores that were dropped because too much was waiting.
    package var droppedStores: Int {
        state.withLock { dropped }
    }

    private func startThread() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(&thread, nil, { context in
            let writer = Unmanaged<DiskWriter>.fromOpaque(context!).takeRetainedValue()
            writer.run()
            return nil
        }, context)
        if status == 0 {
            pthread_detach(thread)
        } else {
            // No thread: run what is queued here, now (slower, never lost).
            Unmanaged<DiskWriter>.fromOpaque(context).release()
            run(once: true)
        }
    }

    /// The thread's loop: runs jobs until the queue stays empty for a while, then ends (a new
    /// job starts a new thread), so an idle cache holds no thread.
    private func run(once: Bool = false) {
        while true {
            let next = state.withLock { () -> Job? in
                if jobs.isEmpty, !once { state.wait(seconds: 5) }
                guard let job = jobs.popFirst() else {
                    running = false
                    return nil
                }
                return job
            }
            guard let next else { return }
            perform(next)
        }
    }

    private func perform(_ job: Job) {
        switch job {
        case .store(let response):
            disk.write(response)
            state.withLock { pendingBytes -= response.body.count }
        case .remove(let key):
            disk.remove(key)
        case .removeAll:
            disk.removeAll()
        case .flush(let signal):
            signal.fire()
        }
    }

    // MARK: Exit

    nonisolated(unsafe) private static var writers: [Weak] = []
    private static let writersLock = Lock()
    nonisolated(unsafe) private static var exitHookInstalled = false

    private struct Weak {
        weak var writer: DiskWriter?
    }

    private static func registerExitFlush(_ writer: DiskWriter) {
        writersLock.withLock {
            writers.removeAll { $0.writer == nil }
            writers.append(Weak(writer: writer))
            if !exitHookInstalled {
                exitHookInstalled = true
                atexit {
                    let live = DiskWriter.writersLock.withLock { DiskWriter.writers.compactMap(\.writer) }
                    for writer in live { writer.flush(seconds: 2) }
                }
            }
        }
    }
}
