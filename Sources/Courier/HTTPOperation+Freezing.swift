import CourierCore

/// Freezing: an operation journaled in its engine's outbox, sent when its host can be reached.
extension HTTPOperation {
    // MARK: - Freezing

    /// Makes the operation *freezable* (MKNetworkKit's `freezable`): journaled in the engine's
    /// `Outbox` before anything is sent, kept there while its host cannot be reached and sent when
    /// the network returns, in this process or a later one. `kind` names it for the outbox's
    /// handlers. Handlers (and `Engine.send`) hear of it when its server answered; cancelling it
    /// removes it from the journal. Fails with `.misuse` when sent by an engine without an outbox,
    /// and with `.invalidArgument` for a streamed or multipart body (bytes and files can be kept).
    /// Call before sending.
    public func freeze(kind: String = "") {
        lock.withLock { precondition(session.phase == .ready, "freeze an operation before sending it") }
        draft.freezing = FreezeState(kind: kind)
    }

    /// The outbox entry's id (also its Idempotency-Key) for a frozen operation, else nil.
    public var outboxID: String? { draft.freezing?.id }

    /// Order among frozen operations (the journal's sequence).
    package var outboxSequence: UInt64 { draft.freezing?.sequence ?? 0 }

    /// Prepares an operation that resends `entry`, left in `outbox` by an earlier process: its
    /// headers and body as journaled, its id and kind.
    func resume(frozen entry: OutboxEntry, in outbox: Outbox) {
        draft.outbox = outbox
        draft.defaultHeaders = HTTPHeaders()
        draft.headers = OutboxRules.headers(of: entry)
        let state = FreezeState(id: entry.id, kind: entry.kind)
        state.sequence = entry.sequence
        state.journaled = true
        draft.freezing = state
        do {
            draft.body = try OutboxRules.body(of: entry)
        } catch {
            draft.body = nil
            complete(.failure(error), response: nil)
        }
    }

    /// The outbox sends the operation again (the network returned): true when it still waits
    /// there (not cancelled meanwhile).
    func resumesFromOutbox() -> Bool {
        lock.withLock { session.outboxResends() }
    }

    /// Ends a frozen operation that waits in its outbox with `error`, without sending it.
    func abandon(_ error: CourierError) {
        complete(.failure(error), response: nil)
    }

    /// Creates a stand-alone operation with default settings, for use without an engine
    /// (`Engine.shared` sends those).
    public convenience init(urlString: String, method: HTTPMethod = .get, parameters: [String: String] = [:]) {
        self.init(method: method, base: nil, target: urlString, parameters: parameters, engineID: 0, options: TransferOptions(),
                  acceptableStatus: 200..<400, defaultHeaders: Engine.standardHeaders, callbackQueue: Engine.shared.callbackQueue)
    }
}
