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

/// What Swift operations and C requests share of the engine's parts around a transfer.
extension RequestDraft {
    /// Before a transfer is built: the credentials' generation the request goes out with, and a
    /// frozen request's Idempotency-Key (unless it set one itself).
    @inline(never)
    package mutating func prepareEngineParts() {
        if let challenge { challenge.sent = adoptCurrent(from: challenge.authenticator) }
        if let freezing, !freezing.journaled, !headers.contains("Idempotency-Key") {
            headers.add(name: "Idempotency-Key", value: freezing.id)
        }
    }

    /// Journals a frozen request's first attempt (its transfer built, nothing sent): nil when
    /// done or nothing to do, else why it cannot be frozen.
    @inline(never)
    package func journalIfFrozen(_ transfer: Transfer) -> CourierError? {
        guard let freezing, !freezing.journaled else { return nil }
        guard let outbox else { return CourierError(.misuse, "a frozen request needs an engine with an outbox") }
        do {
            try outbox.freeze(transfer, freezing)
            return nil
        } catch {
            return error
        }
    }

    /// The outbox a finished attempt waits in, when it is a journaled request's and got no
    /// answer (no head, and neither a cancel nor a shutdown ended it).
    package func outboxToWaitIn(after transfer: Transfer) -> (outbox: Outbox, id: String)? {
        guard let freezing, freezing.journaled, transfer.head == nil, let outbox,
              let error = transfer.error, error.code != .shutdown, error.code != .cancelled else { return nil }
        return (outbox, freezing.id)
    }
}
