import Courier
import CourierCore

// courier_outbox_*, courier_engine_set_outbox, courier_request_freeze: the outbox of frozen
// requests (Swift's `Outbox`, the same journal the CLI's --outbox writes).

/// `courier_outbox`: a Swift `Outbox`, shared by the engines it is set on.
final class COutbox: @unchecked Sendable {
    /// Must stay the first stored property (see `HandleTag`).
    @exclusivity(unchecked) var tag = HandleTag.outbox
    let outbox: Outbox

    init(_ outbox: Outbox) { self.outbox = outbox }
}

/// `courier_outbox_fn`: user, id, kind, code, HTTP status (0 without a response).
public typealias courier_outbox_fn = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, Int32) -> Void

@inline(__always)
private func outbox(_ handle: OpaquePointer?) -> COutbox? {
    object(handle, tag: HandleTag.outbox, as: COutbox.self)
}

@_cdecl("courier_outbox_open")
public func courier_outbox_open(_ path: UnsafePointer<CChar>?, _ retryMilliseconds: Int64, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return CourierError.Code.misuse.c }
    out.pointee = nil
    guard let directory = string(path), !directory.isEmpty else { return CourierError.Code.invalidArgument.c }
    do {
        let retry: Duration = retryMilliseconds > 0 ? .milliseconds(retryMilliseconds) : .seconds(30)
        out.pointee = retainedHandle(COutbox(try Outbox(directory: directory, retryInterval: retry)))
        return COURIER_OK
    } catch {
        return error.code.c
    }
}

@_cdecl("courier_outbox_close")
public func courier_outbox_close(_ handle: OpaquePointer?) {
    guard let handle, let box = outbox(handle) else { return }
    box.tag = HandleTag.dead
    box.outbox.close()
    releaseHandle(handle)
}

@_cdecl("courier_outbox_count")
public func courier_outbox_count(_ handle: OpaquePointer?) -> Int32 {
    guard let box = outbox(handle) else { return CourierError.Code.misuse.c }
    return Int32(clamping: box.outbox.waiting.count)
}

@_cdecl("courier_outbox_set_aside_count")
public func courier_outbox_set_aside_count(_ handle: OpaquePointer?) -> Int32 {
    guard let box = outbox(handle) else { return CourierError.Code.misuse.c }
    return Int32(clamping: box.outbox.setAside.count)
}

@_cdecl("courier_outbox_flush")
public func courier_outbox_flush(_ handle: OpaquePointer?) -> Int32 {
    guard let box = outbox(handle) else { return CourierError.Code.misuse.c }
    box.outbox.flush()
    return COURIER_OK
}

@_cdecl("courier_outbox_on_finished")
public func courier_outbox_on_finished(_ handle: OpaquePointer?, _ kind: UnsafePointer<CChar>?, _ callback: courier_outbox_fn?,
                                       _ user: UnsafeMutableRawPointer?) -> Int32 {
    guard let box = outbox(handle), let callback else { return CourierError.Code.misuse.c }
    let context = UncheckedSendable((callback, user))
    box.outbox.onFinished(kind: string(kind) ?? "") { outcome in
        let (callback, user) = context.value
        var code = COURIER_OK
        var status: Int32 = 0
        switch outcome.result {
        case .success(let response): status = Int32(response.status)
        case .failure(let error): code = error.code.c
        }
        callback(user, outcome.id, outcome.kind, code, status)
    }
    return COURIER_OK
}

@_cdecl("courier_engine_set_outbox")
public func courier_engine_set_outbox(_ engineHandle: OpaquePointer?, _ outboxHandle: OpaquePointer?) -> Int32 {
    guard let engine = CEngine.fromHandle(engineHandle) else { return CourierError.Code.misuse.c }
    guard let outboxHandle else {
        engine.outbox = nil
        return COURIER_OK
    }
    guard let box = outbox(outboxHandle) else { return CourierError.Code.misuse.c }
    engine.outbox = box.outbox
    // What earlier processes left goes out through an engine with this one's options.
    var configuration = Engine.Configuration()
    configuration.options = engine.options
    configuration.acceptableStatus = engine.acceptedStatus
    configuration.outbox = box.outbox
    engine.replayEngine = Engine(host: "http://localhost", configuration: configuration)
    return COURIER_OK
}

@_cdecl("courier_request_freeze")
public func courier_request_freeze(_ handle: OpaquePointer?, _ kind: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { request throws(CourierError) in
        guard request.draft.outbox != nil else { throw CourierError(.misuse, "the request's engine has no outbox (courier_engine_set_outbox)") }
        request.draft.freezing = FreezeState(kind: string(kind) ?? "")
    }
}

@_cdecl("courier_request_outbox_id")
public func courier_request_outbox_id(_ handle: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let request = request(handle), let frozen = request.draft.freezing else { return nil }
    return frozen.cID
}
