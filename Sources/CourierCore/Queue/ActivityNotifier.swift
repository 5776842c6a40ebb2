import CUV
import Synchronization

/// Who watches the shared queue's activity, and telling them: at most once per loop turn, with
/// the latest snapshot (an activity indicator wants the state, not every step to it).
///
/// Observers are registered from any thread and outlive loop restarts; the snapshot is readable
/// from any thread without a lock. The loop side publishes every change into two atomics and,
/// when someone listens, schedules one notification for the end of the loop turn with a
/// `uv_prepare` handle (runs before the loop blocks again).
final class ActivityNotifier: @unchecked Sendable {
    private let lock = Lock()
    /// Held while observers are called: removing one from another thread waits for a round in
    /// progress, so after `remove` returns the observer is never called again (a C or Python
    /// caller may then free what the observer uses).
    private let delivering = Lock()
    @exclusivity(unchecked) private var observers: [Int: @Sendable (QueueActivity) -> Void] = [:]
    @exclusivity(unchecked) private var nextID = 0
    private let hasObservers = Atomic<Bool>(false)
    private let running = Atomic<Int>(0)
    private let queued = Atomic<Int>(0)

    // Loop thread only.
    @exclusivity(unchecked) private var prepare: UnsafeMutablePointer<uv_prepare_t>?
    @exclusivity(unchecked) private var scheduled = false
    @exclusivity(unchecked) private var lastNotified = QueueActivity(running: -1, queued: -1)

    /// The latest snapshot, from any thread.
    var snapshot: QueueActivity {
        QueueActivity(running: running.load(ordering: .relaxed), queued: queued.load(ordering: .relaxed))
    }

    /// Registers an observer (any thread); returns its token.
    func add(_ observer: @escaping @Sendable (QueueActivity) -> Void) -> Int {
        lock.withLock {
            nextID += 1
            observers[nextID] = observer
            hasObservers.store(true, ordering: .relaxed)
            return nextID
        }
    }

    /// Removes an observer (any thread). Off the loop thread it waits for a notification round in
    /// progress to end; on the loop thread (an observer removing itself or another) no later round
    /// calls it.
    func remove(_ id: Int, onLoopThread: Bool) {
        lock.withLock {
            observers[id] = nil
            hasObservers.store(!observers.isEmpty, ordering: .relaxed)
        }
        if !onLoopThread { delivering.withLock {} }
    }

    // MARK: Loop thread

    /// Binds to a new loop (the runtime started one).
    func attach(to uvLoop: UnsafeMutablePointer<uv_loop_t>) {
        let handle = UnsafeMutablePointer<uv_prepare_t>.allocate(capacity: 1)
        uv_prepare_init(uvLoop, handle)
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        prepare = handle
        scheduled = false
        lastNotified = QueueActivity(running: -1, queued: -1)
    }

    /// Makes the next notification go out even if nothing changed (a new observer wants the
    /// current state).
    func forgetLastNotified() {
        lastNotified = QueueActivity(running: -1, queued: -1)
    }

    /// The queue changed.
    func publish(running: Int, queued: Int) {
        self.running.store(running, ordering: .relaxed)
        self.queued.store(queued, ordering: .relaxed)
        guard hasObservers.load(ordering: .relaxed), !scheduled, let prepare else { return }
        scheduled = true
        uv_prepare_start(prepare) { handle in
            Unmanaged<ActivityNotifier>.fromOpaque(handle!.pointee.data).takeUnretainedValue().notify()
        }
    }

    private func notify() {
        if let prepare { uv_prepare_stop(prepare) }
        scheduled = false
        let current = snapshot
        guard current != lastNotified else { return }
        lastNotified = current
        delivering.withLock {
            let listeners = lock.withLock { Array(observers.values) }
            for observer in listeners { observer(current) }
        }
    }

    /// Unbinds from the loop (shutdown): the snapshot reads as empty again.
    func detach() {
        if let prepare {
            uv_prepare_stop(prepare)
            uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(prepare))) { UnsafeMutableRawPointer($0!).deallocate() }
            self.prepare = nil
        }
        running.store(0, ordering: .relaxed)
        queued.store(0, ordering: .relaxed)
    }
}
