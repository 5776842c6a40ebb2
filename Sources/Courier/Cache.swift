import CourierCore

/// An HTTP cache for engines: MKNetworkKit's automatic GET cache, done to RFC 9111 as a private
/// (single-user) cache, the way a browser's HTTP cache behaves.
///
/// Give it to an engine (`Engine.Configuration.cache`); several engines may share one. GET
/// responses the rules allow are stored; a later request is answered from storage while the
/// response is fresh, revalidated with its validators (If-None-Match, If-Modified-Since) when it
/// is not, and answered with the stored body when the origin says 304. Each request picks how it
/// uses the cache with `TransferOptions.cachePolicy`, and every response says where it came from
/// (`Response.cachePhase`).
///
/// Two tiers. Memory: a byte budget and an entry count, least recently used first out; dropped on
/// `dropMemory()` and, where Linux reports memory pressure (PSI triggers in
/// `/proc/pressure/memory`, the cgroup v2 `memory.events` file, or the cgroup v1
/// `memory.pressure_level` notifier), automatically. Where none of these is available (a kernel
/// without PSI in a cgroup without a memory controller) nothing is dropped automatically:
/// call `dropMemory()` from the application's own low-memory handling. Disk (optional): a
/// directory with a byte cap, least recently used files evicted first; every file is written
/// to a temporary name and renamed into place and carries a checksum, so the cache survives a
/// crash or `kill -9` mid-write, and a damaged file is a miss (and is removed), never an error.
///
/// Several processes may use one directory at the same time: writes are atomic renames, reads
/// verify what they read, eviction only unlinks. Each process keeps its own memory tier, so a
/// response invalidated by one process may still be served from another's memory while it is
/// fresh there.
///
/// What is left out, and why: responses are stored only for GET (a HEAD is answered from a stored
/// GET, and updates it); partial content (206) is not stored or combined; redirects are not
/// stored (the final response of a redirected request is stored under its final URL); requests
/// carrying their own preconditions or a Range pass through untouched.
public final class Cache: Sendable {
    /// Limits and placement.
    public struct Configuration: Sendable, Equatable {
        /// Bytes the memory tier may hold (bodies, fields and bookkeeping). 0 keeps nothing in memory.
        public var memoryCapacity: Int = 16 << 20
        /// Entries the memory tier may hold (MKNetworkKit's `cacheMemoryCost`).
        public var memoryEntryLimit: Int = 1000
        /// The disk tier's directory (created when missing); nil for memory only.
        public var directory: String?
        /// Bytes the disk tier may hold.
        public var diskCapacity: UInt64 = 256 << 20
        /// A response with a bigger body is not stored.
        public var maximumEntrySize: Int = 16 << 20

        /// The defaults: 16 MiB and 1,000 entries in memory, no disk tier.
        public init() {}

        /// A configuration with a disk tier in `directory`.
        public init(directory: String?, memoryCapacity: Int = 16 << 20, diskCapacity: UInt64 = 256 << 20) {
            self.directory = directory
            self.memoryCapacity = memoryCapacity
            self.diskCapacity = diskCapacity
        }
    }

    /// The core cache the transfers use.
    package let core: ResponseCache
    /// The settings it was made with.
    public let configuration: Configuration

    /// A cache with these limits; fails with `.fileWrite` when the directory cannot be created.
    public init(_ configuration: Configuration = Configuration()) throws(CourierError) {
        self.configuration = configuration
        var settings = ResponseCache.Configuration()
        settings.memoryBytes = configuration.memoryCapacity
        settings.memoryEntries = configuration.memoryEntryLimit
        settings.directory = configuration.directory
        settings.diskBytes = configuration.diskCapacity
        settings.maxEntryBytes = configuration.maximumEntrySize
        core = try ResponseCache(settings)
    }

    /// A cache with a disk tier in `directory` (nil: memory only).
    public convenience init(directory: String?, memoryCapacity: Int = 16 << 20, diskCapacity: UInt64 = 256 << 20) throws(CourierError) {
        try self.init(Configuration(directory: directory, memoryCapacity: memoryCapacity, diskCapacity: diskCapacity))
    }

    /// Hits, misses, revalidations, bytes per tier, evictions.
    public var statistics: CacheStatistics { core.statistics }

    /// Empties the memory tier (MKNetworkKit's memory-warning behaviour); the disk tier keeps
    /// everything, so later requests are disk hits.
    public func dropMemory() { core.dropMemory() }

    /// Drops the memory tier of every cache in the process: what automatic memory-pressure
    /// handling does, for an application that learns of pressure another way.
    public static func dropAllMemory() { CacheRegistry.shared.dropMemoryTiers() }

    /// Removes everything stored, in memory and on disk.
    public func removeAll() { core.removeAll() }

    /// Removes what is stored for a URL (every variant).
    public func removeResponses(for urlString: String) throws(CourierError) {
        core.remove([CacheKey.primary(try CourierURL(parsing: urlString))])
    }

    /// Waits until every disk write queued so far has been made. The process's exit waits for
    /// them too; call this where a response must be on disk now (another process will read it).
    public func flush() { core.flush() }
}
