import CourierCore

/// A freezable operation's dealings with its outbox: its entry's id (the Idempotency-Key every
/// attempt carries), kind and sequence, and whether it is journaled yet. Touched by one thread at
/// a time: the sender, then the loop.
package final class FreezeState: @unchecked Sendable {
    let id: String
    let kind: String
    var sequence: UInt64 = 0
    var journaled = false

    init(id: String = OutboxEntry.newID(), kind: String) {
        self.id = id
        self.kind = kind
    }
}
