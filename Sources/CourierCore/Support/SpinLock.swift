import Glibc
import Synchronization

/// A lock stored inline in its owner, for critical sections of a few loads and stores.
///
/// `Mutex<Value>` would do the job, but its value goes through generic runtime code when the
/// owner is destroyed, which showed up as hundreds of instructions per operation. This is a flag:
/// an exchange to take it, a store to release it, and a yield when another thread holds it (the
/// holders never block or call out while holding it).
package struct SpinLock: ~Copyable {
    private let held = Atomic<Bool>(false)

    package init() {}

    @inline(__always)
    package func lock() {
        if !held.exchange(true, ordering: .acquiring) { return }
        var spins = 0
        while held.exchange(true, ordering: .acquiring) {
            spins += 1
            if spins > 64 { sched_yield() }
        }
    }

    @inline(__always)
    package func unlock() {
        held.store(false, ordering: .releasing)
    }

    @inline(__always)
    package func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
