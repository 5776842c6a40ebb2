/// Identical GET and HEAD transfers in flight, so that one network request answers them all
/// (MKNetworkKit's coalescing, with each caller keeping its own handle).
///
/// The first transfer of a kind is the *leader*: it runs as usual and is only registered here,
/// by a signature of its target (no allocation: most requests never meet an identical one).
/// A later identical transfer *follows* it: it never enters the queue, and when the leader ends
/// it gets the leader's result. A follower cancelled leaves alone. A leader cancelled while others
/// follow detaches its caller (who gets `.cancelled`) and goes on for the followers; when the last
/// follower leaves a detached leader, the leader is cancelled for real.
///
/// Identical means: the same method, URL, credentials, request header fields (so the same Vary
/// inputs and the same Authorization), options and cache, both collecting the body in memory.
/// Requests with a body, downloads to files and streamed bodies never coalesce.
struct Flights {
    /// Leaders by signature, in an open-addressing table of unowned references (a registered
    /// leader is alive: the live list holds it). A second leader with the same signature but
    /// different fields (a collision) simply runs uncoalesced. Why not a Dictionary: hashing and
    /// its generic code cost more than the rest of the request's bookkeeping together.
    private var table = FlightTable()

    /// Whether `transfer` may lead or follow at all.
    @inline(__always)
    static func mayCoalesce(_ transfer: Transfer) -> Bool {
        switch transfer._options.coalescing {
        case .never: return false
        case .withCache: if transfer._options.cache == nil { return false }
        case .always: break
        }
        guard case .memory = transfer._sink, case .empty = transfer._body else { return false }
        return transfer._method == .get || transfer._method == .head
    }

    /// The leader `transfer` may follow, if one is in flight.
    func leader(for transfer: Transfer, signature: Int) -> Transfer? {
        guard let leader = table.find(signature), !leader.isFinished, Self.identical(leader, transfer) else { return nil }
        return leader
    }

    /// Registers `transfer` as the leader of its kind (unless another holds the signature).
    mutating func lead(_ transfer: Transfer, signature: Int) {
        if table.insert(transfer, signature: signature) { transfer.flightSignature = signature }
    }

    /// A leader ends: later identical transfers go to the network again.
    mutating func land(_ transfer: Transfer) {
        guard transfer.flightSignature != 0 else { return }
        table.remove(transfer, signature: transfer.flightSignature)
        transfer.flightSignature = 0
    }

    /// The target's signature (never 0, which means "not registered").
    static func signature(of transfer: Transfer) -> Int {
        var hash = FNV1a()
        hash.feed(transfer._path)
        if let query = transfer._query {
            hash.feed(byte: UInt8(ascii: "?"))
            hash.feed(query)
        }
        return signature(keyHash: hash.finished() ^ UInt64(transfer._authority.port) << 1, of: transfer)
    }

    /// The signature of a transfer whose cache key hash (scheme, host, port, path, query) is known.
    static func signature(keyHash: UInt64, of transfer: Transfer) -> Int {
        let signature = Int(truncatingIfNeeded: keyHash ^ (transfer._method == .head ? 1 : 0))
        return signature == 0 ? 1 : signature
    }

    static func identical(_ a: Transfer, _ b: Transfer) -> Bool {
        a._method == b._method && a._path == b._path && a._query == b._query
            && a._authority.scheme == b._authority.scheme && a._authority.host == b._authority.host
            && a._authority.port == b._authority.port
            && a._authority.user == b._authority.user && a._authority.password == b._authority.password
            && a.machine.cacheRole == b.machine.cacheRole
            && a._headers.sameFields(as: b._headers) && a._options == b._options
    }
}

/// Linear probing over a power-of-two table of (signature, unowned transfer); deletion shifts
/// entries back, so there are no tombstones. Loop thread only.
struct FlightTable {
    private struct Slot {
        var signature = 0
        var transfer: Unmanaged<Transfer>?
    }

    private var slots = [Slot](repeating: Slot(), count: 64)
    private var count = 0

    private var mask: Int { slots.count - 1 }

    func find(_ signature: Int) -> Transfer? {
        var index = signature & mask
        while let transfer = slots[index].transfer {
            if slots[index].signature == signature { return transfer.takeUnretainedValue() }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Adds `transfer`; false when another holds the signature.
    mutating func insert(_ transfer: Transfer, signature: Int) -> Bool {
        if (count + 1) * 2 > slots.count { grow() }
        var index = signature & mask
        while slots[index].transfer != nil {
            if slots[index].signature == signature { return false }
            index = (index + 1) & mask
        }
        slots[index] = Slot(signature: signature, transfer: .passUnretained(transfer))
        count += 1
        return true
    }

    mutating func remove(_ transfer: Transfer, signature: Int) {
        var index = signature & mask
        while let held = slots[index].transfer {
            if slots[index].signature == signature, held.toOpaque() == Unmanaged.passUnretained(transfer).toOpaque() { break }
            index = (index + 1) & mask
        }
        guard slots[index].transfer != nil else { return }
        // Shift later entries of the probe run back over the hole.
        var hole = index
        var next = (hole + 1) & mask
        while slots[next].transfer != nil {
            let home = slots[next].signature & mask
            let between = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next)
            if !between {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = Slot()
        count -= 1
    }

    private mutating func grow() {
        let old = slots
        slots = [Slot](repeating: Slot(), count: old.count * 2)
        count = 0
        for slot in old {
            if let transfer = slot.transfer { _ = insert(transfer.takeUnretainedValue(), signature: slot.signature) }
        }
    }
}
