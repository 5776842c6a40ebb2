import CourierCore

/// `courier_response`: a finished transfer, read-only. A finished transfer is never mutated
/// again, so pointers into its arrays (body, header bytes) stay valid while this object keeps
/// it alive.
final class CResponse: @unchecked Sendable {
    /// Must stay the first stored property (see `HandleTag`).
    @exclusivity(unchecked) var tag = HandleTag.response
    let transfer: Transfer
    /// NUL-terminated copies made on demand (header values, the URL), freed with the response.
    /// (An inline spin lock: most responses never need the cache.)
    private let lock = SpinLock()
    @exclusivity(unchecked) private var cStrings: [String: OwnedCString] = [:]

    /// Set on the responses `courier_response_history` lends: they belong to their parent.
    @exclusivity(unchecked) private(set) var isBorrowed = false
    /// The redirects' responses, made on first use (kept so the pointers lent stay valid).
    @exclusivity(unchecked) private var hops: [CResponse]?

    init(_ transfer: Transfer) {
        self.transfer = transfer
    }

    /// At courier_response_free: pointers lent to the redirects' responses go stale with this
    /// one, caught as misuse from now on. (No lock: the handle is freed once, by its owner, and
    /// not while another thread still uses it.)
    @inline(__always)
    func retireHops() {
        guard let hops else { return }
        for hop in hops { hop.tag = HandleTag.dead }
    }

    /// The response of redirect `index` (oldest first), owned by this one; nil out of range.
    func hop(_ index: Int) -> CResponse? {
        lock.lock()
        defer { lock.unlock() }
        if hops == nil {
            hops = transfer.history.map { entry in
                let made = CResponse(Transfer.finished(url: entry.url, head: entry.head, body: [], trailers: HTTPHeaders(),
                                                       metrics: TransferMetrics()))
                made.isBorrowed = true
                return made
            }
        }
        guard let hops, index >= 0, index < hops.count else { return nil }
        return hops[index]
    }

    /// The response's header fields (empty when no head arrived).
    var headers: HTTPHeaders { transfer.head?.headers ?? HTTPHeaders() }

    /// A NUL-terminated copy of what `make` returns, cached under `key` (any thread).
    func cString(_ key: String, _ make: () -> String?) -> UnsafePointer<CChar>? {
        cached(key) { make().map(OwnedCString.init) }
    }

    /// The C text `make` writes, cached under `key` (any thread). (No slot of its own for the URL,
    /// which every binding reads: one more stored property cost every response 13 instructions.)
    func cached(_ key: String, _ make: () -> OwnedCString?) -> UnsafePointer<CChar>? {
        lock.lock()
        if let cached = cStrings[key] {
            lock.unlock()
            return UnsafePointer(cached.pointer)
        }
        lock.unlock()
        // Made outside the lock (a spin lock is held for a few stores only); a racing reader's
        // copy is dropped and the first one kept.
        guard let owned = make() else { return nil }
        lock.lock()
        defer { lock.unlock() }
        if let cached = cStrings[key] { return UnsafePointer(cached.pointer) }
        cStrings[key] = owned
        return UnsafePointer(owned.pointer)
    }
}
