/// What a request sends after its head.
public enum RequestBody: Sendable, Hashable {
    /// No body. POST, PUT and PATCH still send `Content-Length: 0`, which servers expect.
    case empty
    /// Bytes in memory, written straight from this array (no copy into a send buffer).
    case bytes([UInt8])
    /// A file streamed from disk in 64 KiB pieces, so uploads never load it whole.
    case file(path: String)

    /// Whether the body could be sent a second time (a redirect with 307/308 or a stale-connection
    /// replay). Every body Courier has today can.
    public var isReplayable: Bool { true }

    /// Whether there is a body at all.
    public var isEmpty: Bool {
        if case .empty = self { return true }
        if case .bytes(let b) = self { return b.isEmpty }
        return false
    }
}
