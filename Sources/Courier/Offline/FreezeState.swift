import CourierCore
import Glibc

/// A freezable operation's dealings with its outbox: its entry's id (the Idempotency-Key every
/// attempt carries), kind and sequence, and whether it is journaled yet. Touched by one thread at
/// a time: the sender, then the loop.
package final class FreezeState: @unchecked Sendable {
    package let id: String
    package let kind: String
    package var sequence: UInt64 = 0
    package var journaled = false

    package init(id: String = OutboxEntry.newID(), kind: String) {
        self.id = id
        self.kind = kind
    }

    /// The id as a C string for courier_request_outbox_id, made on first use and owned here.
    package var cID: UnsafePointer<CChar> {
        if cIDStorage == nil { cIDStorage = strdup(id) }
        return UnsafePointer(cIDStorage!)
    }
    private var cIDStorage: UnsafeMutablePointer<CChar>?

    deinit {
        free(cIDStorage)
    }
}

/// A draft's outbox and freezing state, in one box.
package final class OfflineParts: @unchecked Sendable {
    var outbox: Outbox?
    var freezing: FreezeState?
}
