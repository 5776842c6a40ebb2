import Glibc

/// A plain pthread mutex for the few places where threads meet (the loop's inbox).
///
/// `Synchronization.Mutex` would do, but its `sending` closures fight with the non-Sendable
/// transfers that cross into the loop by design; this lock states the rule in one place instead.
package final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    package func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// Wraps a value so it can cross threads where the code guarantees exclusive access by other means
/// (here: only the loop thread touches it after the hand-over).
package struct UncheckedSendable<Value>: @unchecked Sendable {
    package var value: Value
    package init(_ value: Value) { self.value = value }
}
