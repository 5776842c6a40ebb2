/// Caches whose memory tiers are dropped together when the system runs short of memory.
///
/// `shared` holds every cache of the process (each registers itself); the memory-pressure watcher
/// and `Cache.dropAllMemory()` drop through it. A registry of its own lets a test drop a few
/// caches without touching the rest of the process.
package final class CacheRegistry: @unchecked Sendable {
    /// Every cache of the process.
    package static let shared = CacheRegistry()

    /// Held without a reference count, and without `weak`: a weak reference would give every
    /// cache a side table, and every retain and release of a cache (several per request) would
    /// take the runtime's slow path. A cache leaves in its `deinit` instead, which waits for a
    /// drop in progress (it holds the lock), so no cache is reached after it is gone.
    private var caches: [ObjectIdentifier: Unmanaged<ResponseCache>] = [:]
    private let lock = Lock()
    private var everRegistered = false

    package init() {}

    /// Adds a cache until it deinitializes. The first cache of the process starts the loop's
    /// memory-pressure watcher.
    package func register(_ cache: ResponseCache) {
        cache.joined(self)
        let first = lock.withLock { () -> Bool in
            caches[ObjectIdentifier(cache)] = .passUnretained(cache)
            defer { everRegistered = true }
            return !everRegistered
        }
        if first, self === CacheRegistry.shared { Runtime.shared.watchMemoryPressure() }
    }

    /// Removes a cache (its `deinit`).
    func unregister(_ cache: ObjectIdentifier) {
        _ = lock.withLock { caches.removeValue(forKey: cache) }
    }

    /// Whether a cache was ever registered (the watcher is wanted from then on).
    package var hasCaches: Bool { lock.withLock { everRegistered } }

    /// Drops the memory tier of every cache registered here (under the lock: a cache cannot
    /// finish deinitializing meanwhile).
    package func dropMemoryTiers() {
        lock.withLock {
            for cache in caches.values { cache._withUnsafeGuaranteedRef { $0.dropMemory() } }
        }
    }
}
