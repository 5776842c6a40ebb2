/// The caches whose memory tiers are dropped when the system runs short of memory.
package enum MemoryPressure {
    private struct Weak {
        weak var cache: ResponseCache?
    }

    nonisolated(unsafe) private static var caches: [Weak] = []
    private static let lock = Lock()

    /// Adds a cache (held weakly).
    package static func register(_ cache: ResponseCache) {
        lock.withLock {
            caches.removeAll { $0.cache == nil }
            caches.append(Weak(cache: cache))
        }
    }

    /// Drops the memory tier of every live cache: what the pressure watcher does, and what an
    /// application's own low-memory signal may call.
    package static func dropAllMemoryTiers() {
        let live = lock.withLock { caches.compactMap(\.cache) }
        for cache in live { cache.dropMemory() }
    }
}
