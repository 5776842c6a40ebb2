import Glibc

/// A mutex with a condition variable, for the threads that wait for work or for an event (the
/// cache's writer thread, `flush`, a C reader of a body). Both live in allocated memory: pthread
/// objects must not move, and a Swift stored property has no stable address. Timed waits run on
/// the monotonic clock, so setting the system's time neither shortens nor stretches them.
package final class ConditionLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    package init() {
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
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

    /// Wakes one waiter (call with the lock held).
    package func signal() { pthread_cond_signal(condition) }

    /// Waits for a broadcast (with the lock held); false when `seconds` passed first.
    @discardableResult
    package func wait(seconds: Int? = nil) -> Bool {
        guard let seconds else {
            pthread_cond_wait(condition, mutex)
            return true
        }
        return wait(until: Self.deadline(afterMilliseconds: seconds * 1000))
    }

    /// Waits for a wake-up (with the lock held) until the monotonic `deadline`; false when it
    /// passed first. (Wake-ups may be spurious: callers re-check their condition.)
    package func wait(until deadline: timespec) -> Bool {
        var deadline = deadline
        return pthread_cond_timedwait(condition, mutex, &deadline) == 0
    }

    /// The monotonic clock `milliseconds` from now, for `wait(until:)`.
    package static func deadline(afterMilliseconds milliseconds: Int) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nanoseconds = Int(now.tv_nsec) + (milliseconds % 1000) * 1_000_000
        return timespec(tv_sec: now.tv_sec + milliseconds / 1000 + nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
    }
}
