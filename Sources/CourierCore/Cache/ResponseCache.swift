import Synchronization

/// Counts of what a cache did, since it was made.
public struct CacheStatistics: Sendable, Equatable {
    /// Requests answered from storage without the origin (memory and disk), stale ones included.
    public var hits = 0
    /// Of `hits`, answered from the memory tier.
    public var memoryHits = 0
    /// Of `hits`, answered from the disk tier.
    public var diskHits = 0
    /// Requests the cache looked up and had nothing usable for (fetched, or a generated 504).
    public var misses = 0
    /// Stored responses validated with the origin.
    public var revalidations = 0
    /// Of `revalidations`, those the origin answered 304 Not Modified.
    public var notModified = 0
    /// Stale responses delivered (allowed stale, while revalidating, or standing in for a failure).
    public var staleServed = 0
    /// Responses stored (or updated by a validation).
    public var stores = 0
    /// 504 responses the cache generated.
    public var generated = 0
    /// Bytes and entries in the memory tier now.
    public var memoryBytes = 0
    public var memoryEntries = 0
    /// Bytes the disk tier holds, as this process last counted them.
    public var diskBytes: UInt64 = 0
    /// Entries evicted to stay within the limits.
    public var memoryEvictions = 0
    public var diskEvictions = 0
    /// Damaged, truncated or foreign files found on disk (each removed and counted as a miss).
    public var corruptFilesRemoved = 0
    /// Disk writes dropped because too many were waiting.
    public var droppedWrites = 0

    public init() {}
}

/// The HTTP cache behind an engine: a memory tier and an optional disk tier, shared by every
/// transfer (and every engine, C engine and command-line invocation) it is given to.
///
/// The rules (what to store, what is fresh, when to revalidate) are `CacheRules`; how a transfer
/// uses them is `CacheExchange`; this type keeps the responses. The memory tier is guarded by one
/// lock held for a probe; the disk tier is read on the caller's thread and written on the cache's
/// own writer thread.
package final class ResponseCache: @unchecked Sendable {
    package struct Configuration: Sendable, Equatable {
        /// Bytes the memory tier may hold (bodies, header fields and bookkeeping).
        package var memoryBytes: Int = 16 << 20
        /// Entries the memory tier may hold.
        package var memoryEntries: Int = 1000
        /// The disk tier's directory; nil for memory only.
        package var directory: String?
        /// Bytes the disk tier may hold; the least recently used files go first.
        package var diskBytes: UInt64 = 256 << 20
        /// A response with a bigger body is not stored.
        package var maxEntryBytes: Int = 16 << 20

        package init() {}
    }

    package let configuration: Configuration
    private let lock = Lock()
    @exclusivity(unchecked) private var memory: MemoryTier
    @exclusivity(unchecked) private var counters = CacheStatistics()
    private let disk: DiskTier?
    private let writer: DiskWriter?
    /// Added to the wall clock; tests move it to make responses age without waiting.
    private let clockOffset = Atomic<Int64>(0)

    package init(_ configuration: Configuration) throws(CourierError) {
        self.configuration = configuration
        memory = MemoryTier(byteBudget: max(0, configuration.memoryBytes), entryLimit: max(0, configuration.memoryEntries))
        if let directory = configuration.directory {
            let tier = try DiskTier(directory: directory, capacity: configuration.diskBytes)
            disk = tier
            writer = DiskWriter(disk: tier)
        } else {
            disk = nil
            writer = nil
        }
        CacheRegistry.shared.register(self)
    }

    /// The registries this cache is in (it leaves them when it goes).
    private var registries: [CacheRegistry] = []
    private let registriesLock = Lock()

    func joined(_ registry: CacheRegistry) {
        registriesLock.withLock { registries.append(registry) }
    }

    deinit {
        let identifier = ObjectIdentifier(self)
        for registry in registriesLock.withLock({ registries }) { registry.unregister(identifier) }
    }

    /// The cache's "now" (epoch seconds).
    package var now: Int64 { HTTPDate.now() + clockOffset.load(ordering: .relaxed) }

    /// Moves the cache's clock (tests: responses age without waiting).
    package func advanceClock(bySeconds seconds: Int64) {
        clockOffset.add(seconds, ordering: .relaxed)
    }

    // MARK: Responses

    /// Where a stored response was found.
    package enum Tier {
        case memory
        case disk
    }

    /// The stored variant of `key` for a request whose variant key `variantKey(names)` computes:
    /// from memory, else from disk (then kept in memory too).
    package func find(_ key: String, variantKey: ([String]) -> String) -> (StoredResponse, Tier)? {
        find(CacheKey.stableHash(key), key: { key }, variantKey: variantKey)
    }

    /// As `find(_:variantKey:)`, by the key's hash: `key` is built only when a response with that
    /// hash exists (a miss makes no string).
    package func find(_ hash: UInt64, key: () -> String, variantKey: ([String]) -> String) -> (StoredResponse, Tier)? {
        if let found = lock.withLock({ memory.find(hash, key: key, variantKey: variantKey) }) { return (found, .memory) }
        guard let disk, let found = disk.find(hash, key: key, variantKey: variantKey) else { return nil }
        lock.withLock { memory.insert(found) }
        return (found, .disk)
    }

    /// Keeps `response` in memory at once and on disk soon.
    package func store(_ response: StoredResponse) {
        lock.withLock {
            memory.insert(response)
            counters.stores += 1
        }
        writer?.submit(.store(response))
    }

    /// Forgets what is stored under each key (every variant), in both tiers.
    package func remove(_ keys: [String]) {
        lock.withLock { for key in keys { memory.remove(key) } }
        if let writer { for key in keys { writer.submit(.remove(key)) } }
    }

    /// Empties the memory tier (memory pressure); the disk tier keeps everything.
    package func dropMemory() {
        lock.withLock { memory.removeAll() }
    }

    /// Empties both tiers.
    package func removeAll() {
        lock.withLock { memory.removeAll() }
        writer?.submit(.removeAll)
    }

    /// Waits until every disk write queued so far is done.
    package func flush() {
        writer?.flush()
    }

    // MARK: Statistics

    package enum Event {
        case hit(Tier, stale: Bool)
        case miss
        case revalidation
        case notModified
        case staleServed
        case generated
    }

    package func count(_ event: Event) {
        lock.withLock {
            switch event {
            case .hit(let tier, let stale):
                counters.hits += 1
                if tier == .memory { counters.memoryHits += 1 } else { counters.diskHits += 1 }
                if stale { counters.staleServed += 1 }
            case .miss: counters.misses += 1
            case .revalidation: counters.revalidations += 1
            case .notModified: counters.notModified += 1
            case .staleServed: counters.staleServed += 1
            case .generated: counters.generated += 1
            }
        }
    }

    package var statistics: CacheStatistics {
        var snapshot = lock.withLock { () -> CacheStatistics in
            var copy = counters
            copy.memoryBytes = memory.bytes
            copy.memoryEntries = memory.count
            copy.memoryEvictions = memory.evictions
            return copy
        }
        if let disk {
            let figures = disk.statistics
            snapshot.diskBytes = figures.bytes
            snapshot.diskEvictions = figures.evictions
            snapshot.corruptFilesRemoved = figures.removedCorrupt
        }
        snapshot.droppedWrites = writer?.droppedStores ?? 0
        return snapshot
    }
}
