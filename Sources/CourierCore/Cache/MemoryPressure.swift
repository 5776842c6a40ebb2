/// Caches whose memory tiers are dropped together when the system runs short of memory.
///
/// `shared` holds every cache of the process (each registers itself); the memory-pressure watcher
/// and `Cache.dropAllMemory()` drop through it. A registry of its own lets a test drop a few
/// caches without touching the rest of the process.
package final class CacheRegistry: @unchecked Sendable {
    private struct Weak {
        weak var cache: ResponseCache?
    }

    /// Every cache of the process.
    package static let shared = CacheRegistry()

    private var caches: [Weak] = []
    private let lock = Lock()

    package init() {}

    /// Adds a cache (held weakly). The first cache of the process starts the loop's
    /// memory-pressure watcher.
    package func register(_ cache: ResponseCache) {
        let first = lock.withLock { () -> Bool in
            caches.removeAll { $0.cache == nil }
            caches.append(Weak(cache: cache))
            defer { everRegistered = true }
            return !everRegistered
        }
        if first, self === CacheRegistry.shared { Runtime.shared.watchMemoryPressure() }
    }

    /// Whether a cache was ever registered (the watcher is wanted from then on).
    package var hasCaches: Bool { lock.withLock { everRegistered } }
    private var everRegistered = false

    /// Drops the memory tier of every live cache registered here.
    package func dropMemoryTiers() {
        let live = lock.withLock { caches.compactMap(\.cache) }
        for cache in live { cache.dropMemory() }
    }
}
