import Glibc

/// A mutex with a condition variable, for the threads that wait for work or for an event (the
/// cache's writer thread, `flush`). Both live in allocated memory: pthread objects must not move,
/// and a Swift stored property has no stable address.
package final class ConditionLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    package init() {
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }

    package func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Wakes every waiter (call with the lock held).
    package func broadcast() { pthread_cond_broadcast(condition) }

    /// Waits for a broadcast (with the lock held); false when `seconds` passed first.
    @discardableResult
    package func wait(seconds: Int? = nil) -> Bool {
        guard let seconds else {
            pthread_cond_wait(condition, mutex)
            return true
        }
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += seconds
        return pthread_cond_timedwait(condition, mutex, &deadline) == 0
    }
}
