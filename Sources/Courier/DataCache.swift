import CourierCore

/// MKNetworkKit's image cache for any blob (thumbnails, avatars, attachments): a URL's bytes
/// through an HTTP cache of their own, with their own memory entry limit and directory.
///
/// A stored blob answers whatever its age (`CachePolicy.returnCacheElseLoad`, the image-cache
/// habit: a thumbnail a week old beats a spinner); identical requests in flight share one fetch.
/// Decoding images is out of scope: the bytes are the caller's.
///
/// ```swift
/// let thumbnails = try DataCache(directory: cachesDirectory + "/thumbs", memoryEntryLimit: 200)
/// let png = try await thumbnails.data(for: "https://cdn.example.com/t/42.png")
/// ```
public final class DataCache: Sendable {
    /// The HTTP cache behind it (statistics, dropping memory).
    public let cache: Cache
    /// How blobs use the cache; `.useProtocol` follows the origin's freshness instead.
    public let policy: CachePolicy
    private let engine: Engine

    /// A blob cache keeping up to `memoryEntryLimit` blobs (and `memoryCapacity` bytes) in memory
    /// and, with a directory, up to `diskCapacity` bytes on disk.
    public init(directory: String?, memoryEntryLimit: Int = 100, memoryCapacity: Int = 32 << 20,
                diskCapacity: UInt64 = 256 << 20, policy: CachePolicy = .returnCacheElseLoad,
                headers: [String: String] = [:]) throws(CourierError) {
        var configuration = Cache.Configuration(directory: directory, memoryCapacity: memoryCapacity, diskCapacity: diskCapacity)
        configuration.memoryEntryLimit = memoryEntryLimit
        cache = try Cache(configuration)
        self.policy = policy
        var settings = Engine.Configuration()
        settings.cache = cache
        settings.options.cachePolicy = policy
        var defaults = Engine.standardHeaders
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { defaults.replaceOrAdd(name: name, value: value) }
        engine = Engine(baseURL: nil, defaultHeaders: defaults, configuration: settings)
    }

    /// The bytes at `urlString`: from storage when there, else fetched (and stored).
    public func data(for urlString: String) async throws(CourierError) -> [UInt8] {
        try await engine.send(engine.operation(urlString: urlString)).body
    }

    /// The bytes at `urlString`, to a handler on the cache's own queue.
    public func data(for urlString: String, completion: @escaping @Sendable (Result<[UInt8], CourierError>) -> Void) {
        let operation = engine.operation(urlString: urlString)
        operation.onFinish { result in completion(result.map(\.body)) }
        engine.enqueue(operation)
    }
}
