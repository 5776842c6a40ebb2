import CourierCore

/// The continuations of `Engine.send` callers waiting for one operation.
/// Swapped out of the operation under its lock, then owned by the one finishing call.
final class Waiters: @unchecked Sendable {
    var list: [CheckedContinuation<Result<Response, CourierError>, Never>] = []
    /// Readers of `Engine.responses`.
    var channels: [ResponseChannel] = []
    /// `Engine.stream`: the body's channel, and the caller waiting for the head.
    var bodyChannel: BodyChannel?
    var headWaiter: CheckedContinuation<Result<StreamedResponse, CourierError>, Never>?
}

/// Handlers of one kind: the first is stored inline, so the usual single handler costs no array.
struct HandlerList<Handler: Sendable>: Sendable {
    private var first: Handler?
    private var rest: [Handler] = []

    var isEmpty: Bool { first == nil }

    mutating func append(_ handler: Handler) {
        if first == nil { first = handler } else { rest.append(handler) }
    }

    func forEach(_ body: (Handler) -> Void) {
        guard let first else { return }
        body(first)
        for handler in rest { body(handler) }
    }
}
