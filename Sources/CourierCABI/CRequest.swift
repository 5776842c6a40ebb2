import Courier
import CourierCore
import Dispatch

public typealias courier_done_fn = @convention(c) (OpaquePointer?, OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> Void
public typealias courier_progress_fn = @convention(c) (OpaquePointer?, Int32, UInt64, Int64, UnsafeMutableRawPointer?) -> Void
public typealias courier_activity_fn = @convention(c) (Int32, Int32, UnsafeMutableRawPointer?) -> Void

/// `courier_request`: a `RequestDraft` (the same configuration and transfer building as Swift's
/// `HTTPOperation`, so the same settings send the same bytes through the same queue), and, once
/// sent, the core transfer it hears from directly: no handler closures or result values in
/// between, which keeps the C path as cheap as the Swift one.
final class CRequest: TransferDelegate, @unchecked Sendable {
    /// Must stay the first stored property (see `HandleTag`).
    @exclusivity(unchecked) var tag = HandleTag.request
    let engine: CEngine
    @exclusivity(unchecked) var draft: RequestDraft
    @exclusivity(unchecked) var acceptedStatus: Range<Int>
    @exclusivity(unchecked) var progress: (courier_progress_fn, UnsafeMutableRawPointer?)?
    /// courier_request_set_debug (or the engine's): shown every exchange's heads.
    @exclusivity(unchecked) var debug: (courier_debug_fn, UnsafeMutableRawPointer?)?
    /// `courier_request_set_retry_callback` (plain C values: nothing to release).
    @exclusivity(unchecked) var retryCallback: (courier_retry_fn, UnsafeMutableRawPointer?)?
    /// Write and read callbacks, the head callback (made on first use).
    @exclusivity(unchecked) var _streams: CStreamSettings?
    var streams: CStreamSettings {
        if let _streams { return _streams }
        let made = CStreamSettings()
        _streams = made
        return made
    }
    /// The body reader, if any (read from the reading thread: never creates the settings).
    var bodyPipe: CBodyPipe? { _streams?.pipe }
    /// Fields added with courier_request_add_form_field, in order (the body is re-made from them).
    @exclusivity(unchecked) var formFields: FormFields?
    @exclusivity(unchecked) var errorMessage: OwnedCString?
    /// courier_request_set_user_data's pointer (curl's CURLOPT_PRIVATE): Courier never reads it.
    @exclusivity(unchecked) var userData: UnsafeMutableRawPointer?

    /// Where the outcome goes; set by `send` before the transfer is handed over.
    @exclusivity(unchecked) var delivery = Delivery.none

    /// How the end is reported.
    enum Delivery: @unchecked Sendable {
        case none
        case callback(courier_done_fn, UnsafeMutableRawPointer?)
        case completionQueue
        case wait(DispatchSemaphore)
        /// A group's member: the response handle (owned by the receiver) and the code. (Boxed:
        /// a closure payload made every copy of a delivery cost more.)
        case handler(Box<@Sendable (OpaquePointer?, Int32) -> Void>)
    }

    // Shared between the caller's thread and the loop thread, under an inline spin lock (held
    // for a few loads and stores, never across a call).
    let lock = SpinLock()
    /// Where the request stands across its attempts (see `RequestSession`): sent, waiting,
    /// concluded (its outcome delivered or dropped: nothing left to cancel).
    @exclusivity(unchecked) var session = RequestSession()
    @exclusivity(unchecked) var freed = false
    /// Inside `send`: an outcome reported now is deferred, so a callback never runs inside
    /// courier_request_send and always on the loop thread.
    @exclusivity(unchecked) var starting = false
    /// Entries for this request in the engine's completion queue not yet taken by
    /// courier_engine_next_done (a preview and the final response): while the queue holds the
    /// handle it cannot be reset.
    @exclusivity(unchecked) var pendingPickups = 0
    @exclusivity(unchecked) var transfer: Transfer?
    /// Outcome of a blocking `courier_request_perform`.
    @exclusivity(unchecked) var waitResult: (response: OpaquePointer?, code: Int32) = (nil, 0)

    @inline(__always)
    init(engine: CEngine, draft: consuming RequestDraft, acceptedStatus: Range<Int>) {
        self.engine = engine
        self.draft = draft
        self.acceptedStatus = acceptedStatus
        if engine.composed { adoptEngineParts() }
    }

    /// The engine's authenticator, hooks and outbox, for a request made or reset now.
    @inline(never)
    func adoptEngineParts() {
        if let authenticator = engine.authenticator { draft.challenge = ChallengeState(authenticator) }
        if let hooks = engine.hooks { draft.hooks = hooks }
        if let outbox = engine.outbox { draft.outbox = outbox }
        metricsHook = engine.cHooks
        debug = engine.debug
    }

    /// `courier_request_reset`: the handle becomes what `courier_request_create` makes from the
    /// engine now, with `draft`, and may be sent again; only the user data pointer stays. False
    /// (nothing changed) while the request is in flight: sent and its outcome not delivered.
    func reset(draft: consuming RequestDraft) -> Bool {
        lock.lock()
        guard !session.wasSent || (session.isConcluded && !starting && pendingPickups == 0) else {
            lock.unlock()
            return false
        }
        session = RequestSession()
        transfer = nil
        lock.unlock()
        self.draft = draft
        acceptedStatus = engine.acceptedStatus
        progress = nil
        retryCallback = nil
        _streams = nil
        formFields = nil
        errorMessage = nil
        delivery = .none
        waitResult = (nil, 0)
        metricsHook = nil
        debug = nil
        if engine.composed { adoptEngineParts() }
        return true
    }

    /// The engine's metrics hook when it has one.
    @exclusivity(unchecked) var metricsHook: CHooks?

    var isFreed: Bool { lock.withLock { freed } }

    /// courier_engine_next_done handed one of the request's entries out (or the queue refused it).
    func pickedUp() { lock.withLock { pendingPickups -= 1 } }
    var wasSent: Bool {
        // (Explicit lock and a pattern match: a closure or a call into another module on every
        // setter's check cost more than the check.)
        lock.lock()
        defer { lock.unlock() }
        if case .ready = session.phase { return false }
        return true
    }

    /// The message for `courier_request_errmsg`.
    var errorText: UnsafePointer<CChar> {
        if let errorMessage { return UnsafePointer(errorMessage.pointer) }
        return courierStaticString(COURIER_OK)
    }

    /// Records `error` as the handle's message and returns its code.
    @discardableResult
    func record(_ error: CourierError) -> Int32 {
        errorMessage = OwnedCString(error.message)
        return error.code.c
    }

    /// Builds the transfer and hands it to the shared queue; the outcome goes where `delivery`
    /// says.
    func send(_ delivery: Delivery) -> Int32 {
        lock.lock()
        let first = session.send()
        starting = first
        lock.unlock()
        guard first else { return record(CourierError(.misuse, "the request was already sent")) }
        self.delivery = delivery
        submitDraft()
        lock.withLock { starting = false }
        return COURIER_OK
    }

    /// Builds the transfer from the draft and submits it (first sends, and a challenge's replay).
    func submitDraft() {
        // (A request without the engine's parts skips the call that would find nothing to do.)
        switch draft.hasEngineParts ? draft.makeAttempt() : draft.makeTransfer() {
        case .failure(let error):
            // No I/O happened; reported like any other failure, from the loop thread.
            deliverSoon(error)
        case .success(let transfer):
            transfer.reportsProgress = progress != nil
            transfer.delegate = self
            if _streams?.head != nil || debug != nil { transfer.reportsHead = true }
            // The debug callback is shown what connecting did, the TLS handshake step by step.
            if debug != nil { transfer.options.tracesConnections = true }
            // A cancel that raced with building the transfer is honoured as it is submitted.
            lock.lock()
            self.transfer = transfer
            let cancelled = session.cancelRequested
            lock.unlock()
            transfer.submit(cancelled: cancelled)
        }
    }

    /// A failure known before any I/O, reported like any other, from the loop thread.
    func deliverSoon(_ error: CourierError) {
        let deferred = UncheckedSendable((self, error))
        Runtime.shared.executeSoon { deferred.value.0.deliver(nil, error: deferred.value.1) }
    }

    /// `courier_request_perform`: send and wait (never on the loop thread).
    func perform() -> (response: OpaquePointer?, code: Int32) {
        let done = DispatchSemaphore(value: 0)
        let code = send(.wait(done))
        if code != COURIER_OK { return (nil, code) }
        done.wait()
        return waitResult
    }

    /// `courier_request_resume`: a paused write callback is offered its piece again and reading
    /// goes on; a paused read callback is asked again.
    func resume() {
        let target = lock.withLock { session.isConcluded ? nil : transfer }
        guard let target else { return }
        Runtime.shared.resume(target)
        if let reader = _streams?.reader {
            let boxed = UncheckedSendable(reader)
            Runtime.shared.execute { boxed.value.resume() }
        }
    }

    /// The URL the request goes to (for responses shown before it finished).
    var currentURL: CourierURL {
        lock.withLock { transfer?.url } ?? ((try? draft.resolvedURL()) ?? (try! CourierURL(parsing: "http://invalid/")))
    }

    func cancel() {
        let (action, target) = lock.withLock { (session.cancel(), transfer) }
        carryOut(action, target)
    }

    /// The C handle is gone: cancel what is in flight, and report nothing more.
    @inline(__always)
    func markFreed() {
        lock.lock()
        freed = true
        // (Concluded, the usual case when a handle is freed: nothing to ask the session.)
        if case .finished = session.phase {
            lock.unlock()
            return
        }
        let action = session.cancel()
        let target = transfer
        lock.unlock()
        carryOut(action, target)
    }

    /// What a cancel ends, as the session said.
    @inline(__always)
    func carryOut(_ action: RequestSession.CancelAction, _ target: Transfer?) {
        switch action {
        case .none:
            break
        case .cancelTransfer:
            // (Not submitted yet: `submitDraft` cancels it as it submits it.)
            if let target { Runtime.shared.cancel(target) }
        case .concludeWaiting(let leavesOutbox):
            concludeWaiting(leavesOutbox: leavesOutbox)
        }
    }

    /// Waiting for new credentials or for the network: there is no transfer to cancel, and the
    /// wait may be long; the request ends now as cancelled (an answer, when it comes, is dropped).
    @inline(never)
    func concludeWaiting(leavesOutbox: Bool) {
        if leavesOutbox, let frozen = draft.freezing, let outbox = draft.outbox { _ = outbox.cancelWaiting(id: frozen.id) }
        let error = CourierError(.cancelled, "cancelled while \(leavesOutbox ? "waiting in the outbox" : "waiting for new credentials")")
        Runtime.shared.executeOrRunHere { self.deliver(nil, error: error) }
    }
}

extension CRequest: OutboxSender {
    var outboxSequence: UInt64 { draft.freezing?.sequence ?? 0 }
    func resendFromOutbox() {
        if lock.withLock({ session.outboxResends() && session.replay() }) { submitDraft() }
    }
    func abandonFromOutbox() {
        let error = CourierError(.shutdown, "the engine was destroyed; the request waits in the outbox for the next process")
        Runtime.shared.executeOrRunHere { self.deliver(nil, error: error) }
    }
}
