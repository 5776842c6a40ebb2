import Courier
import CourierCore

// courier_cache_*, courier_engine_set_cache, and the cache's request and response options.

/// `courier_cache`: a core `ResponseCache` (the same one Swift's `Cache` wraps), shared by the
/// engines it is set on; each keeps it alive until it is destroyed.
final class CCache: @unchecked Sendable {
    /// Must stay the first stored property (see `HandleTag`).
    @exclusivity(unchecked) var tag = HandleTag.cache
    let cache: ResponseCache

    init(_ cache: ResponseCache) { self.cache = cache }
}

@inline(__always)
private func cache(_ handle: OpaquePointer?) -> CCache? {
    object(handle, tag: HandleTag.cache, as: CCache.self)
}

@_cdecl("courier_cache_create")
public func courier_cache_create(_ directory: UnsafePointer<CChar>?, _ memoryBytes: Int64, _ diskBytes: Int64,
                                 _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return CourierError.Code.misuse.c }
    out.pointee = nil
    var settings = ResponseCache.Configuration()
    if memoryBytes >= 0 { settings.memoryBytes = Int(clamping: memoryBytes) }
    if diskBytes > 0 { settings.diskBytes = UInt64(diskBytes) }
    settings.directory = string(directory)
    do {
        out.pointee = retainedHandle(CCache(try ResponseCache(settings)))
        return COURIER_OK
    } catch {
        return error.code.c
    }
}

@_cdecl("courier_cache_destroy")
public func courier_cache_destroy(_ handle: OpaquePointer?) {
    guard let handle, let cache = cache(handle) else { return }
    cache.tag = HandleTag.dead
    releaseHandle(handle)
}

@_cdecl("courier_cache_stat")
public func courier_cache_stat(_ handle: OpaquePointer?, _ which: Int32, _ value: UnsafeMutablePointer<Int64>?) -> Int32 {
    guard let cache = cache(handle), let value else { return CourierError.Code.misuse.c }
    let s = cache.cache.statistics
    let figures: [Int64] = [Int64(s.hits), Int64(s.memoryHits), Int64(s.diskHits), Int64(s.misses), Int64(s.revalidations),
                            Int64(s.notModified), Int64(s.staleServed), Int64(s.stores), Int64(s.generated),
                            Int64(s.memoryBytes), Int64(s.memoryEntries), Int64(clamping: s.diskBytes), Int64(s.memoryEvictions),
                            Int64(s.diskEvictions), Int64(s.corruptFilesRemoved), Int64(s.droppedWrites)]
    // COURIER_CACHE_STAT_* are 1-based, in this order.
    guard which >= 1, Int(which) <= figures.count else { return CourierError.Code.invalidArgument.c }
    value.pointee = figures[Int(which) - 1]
    return COURIER_OK
}

@_cdecl("courier_cache_drop_memory")
public func courier_cache_drop_memory(_ handle: OpaquePointer?) -> Int32 {
    guard let cache = cache(handle) else { return CourierError.Code.misuse.c }
    cache.cache.dropMemory()
    return COURIER_OK
}

@_cdecl("courier_cache_clear")
public func courier_cache_clear(_ handle: OpaquePointer?) -> Int32 {
    guard let cache = cache(handle) else { return CourierError.Code.misuse.c }
    cache.cache.removeAll()
    return COURIER_OK
}

@_cdecl("courier_cache_flush")
public func courier_cache_flush(_ handle: OpaquePointer?) -> Int32 {
    guard let cache = cache(handle) else { return CourierError.Code.misuse.c }
    cache.cache.flush()
    return COURIER_OK
}

@_cdecl("courier_engine_set_cache")
public func courier_engine_set_cache(_ engineHandle: OpaquePointer?, _ cacheHandle: OpaquePointer?) -> Int32 {
    guard let engine = CEngine.fromHandle(engineHandle) else { return CourierError.Code.misuse.c }
    if cacheHandle == nil {
        engine.options.cache = nil
        return COURIER_OK
    }
    guard let cache = cache(cacheHandle) else { return CourierError.Code.misuse.c }
    engine.options.cache = cache.cache
    return COURIER_OK
}

/// The C values of the cache's enums (the header's COURIER_CACHE_*, COURIER_PHASE_*,
/// COURIER_COALESCE_*), in one place.
enum CacheCodes {
    static let policies: [CachePolicy] = [.useProtocol, .reload, .returnCacheElseLoad, .cacheOnly, .staleIfError, .cachedThenFresh,
                                          .cachedThenNetwork]
    static let coalescing: [Coalescing] = [.withCache, .always, .never]

    static func phase(_ phase: CachePhase) -> Int32 {
        switch phase {
        case .fresh: return 0
        case .cached(let stale): return stale ? 2 : 1
        case .notModified: return 3
        case .staleOnError: return 4
        case .generated: return 5
        }
    }
}
