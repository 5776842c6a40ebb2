import Courier
import CourierCore
import Dispatch

// courier_engine_*.

@inline(__always)
private func engine(_ handle: OpaquePointer?) -> CEngine? {
    CEngine.fromHandle(handle)
}

@_cdecl("courier_engine_create")
public func courier_engine_create(_ base: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return CourierError.Code.misuse.c }
    out.pointee = nil
    var url: CourierURL?
    if let base = string(base) {
        do {
            // A bare host ("api.example.com") means https, as Swift's Engine(host:) does (its
            // Configuration.defaultScheme) and therefore Python's: one rule in every language,
            // and the safe one (credentials and cookies never go out in clear by omission).
            url = try CourierURL(parsing: RequestDraft.isAbsoluteURL(base) ? base : "https://" + base)
        } catch {
            return error.code.c
        }
    }
    let engine = CEngine(base: url)
    // The completion queue's eventfd; failing to get one (descriptor limit) fails the call
    // rather than leaving an engine whose courier_engine_fd is -1.
    guard engine.completionFD >= 0 else { return CourierError.Code.noMemory.c }
    out.pointee = engine.makeHandle()
    return COURIER_OK
}

@_cdecl("courier_engine_destroy")
public func courier_engine_destroy(_ handle: OpaquePointer?) {
    guard let handle, let engine = engine(handle), CEngine.retire(handle) else { return }
    engine.tag = HandleTag.dead
    engine.destroy()
    releaseHandle(handle)
}

@_cdecl("courier_engine_add_header")
public func courier_engine_add_header(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?) -> Int32 {
    guard let engine = engine(handle) else { return CourierError.Code.misuse.c }
    guard let field = validatedHeader(name, value) else { return CourierError.Code.invalidHeader.c }
    engine.defaultHeaders.replaceOrAdd(name: field.name, value: field.value)
    engine.defaultHeaders.prepareForSending()
    return COURIER_OK
}

@_cdecl("courier_engine_set_accepted_status")
public func courier_engine_set_accepted_status(_ handle: OpaquePointer?, _ low: Int32, _ high: Int32) -> Int32 {
    guard let engine = engine(handle) else { return CourierError.Code.misuse.c }
    guard low >= 0, high <= 1000, low < high else { return CourierError.Code.invalidArgument.c }
    engine.acceptedStatus = Int(low)..<Int(high)
    return COURIER_OK
}

@_cdecl("courier_engine_fd")
public func courier_engine_fd(_ handle: OpaquePointer?) -> Int32 {
    guard let engine = engine(handle) else { return -CourierError.Code.misuse.c }
    return engine.completionFD
}

@_cdecl("courier_engine_next_done")
public func courier_engine_next_done(_ handle: OpaquePointer?, _ request: UnsafeMutablePointer<OpaquePointer?>?,
                                     _ response: UnsafeMutablePointer<OpaquePointer?>?, _ code: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let engine = engine(handle), let request else { return CourierError.Code.misuse.c }
    guard let entry = engine.popCompletion() else {
        request.pointee = nil
        response?.pointee = nil
        return CourierError.Code.notFound.c
    }
    request.pointee = borrowedHandle(entry.request)
    if let response {
        response.pointee = entry.response
    } else if let unwanted = entry.response {
        releaseHandle(unwanted)
    }
    code?.pointee = entry.code
    return COURIER_OK
}

/// A header from C strings if it may be sent: NULL, CR, LF or a non-token name give nil.
func validatedHeader(_ name: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?) -> (name: String, value: String)? {
    guard let name = string(name), let value = string(value) else { return nil }
    var single = HTTPHeaders()
    single.add(name: name, value: value)
    guard !single.summarizeForSending().hasInvalid else { return nil }
    return (name, value)
}

@_cdecl("courier_engine_invalidate")
public func courier_engine_invalidate(_ handle: OpaquePointer?, _ cancelRunning: Int32) -> Int32 {
    guard let engine = CEngine.fromHandle(handle), engine !== CEngine.shared else { return CourierError.Code.misuse.c }
    guard cancelRunning == 0 || cancelRunning == 1 else { return CourierError.Code.invalidArgument.c }
    let first = engine.invalidated.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    if first, cancelRunning == 1 { engine.cancelAll() }
    return COURIER_OK
}

@_cdecl("courier_engine_cancel_all")
public func courier_engine_cancel_all(_ handle: OpaquePointer?) -> Int32 {
    guard let engine = CEngine.fromHandle(handle) else { return CourierError.Code.misuse.c }
    engine.cancelAll()
    return COURIER_OK
}

/// courier_select_fn.
public typealias CSelect = @convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Int32

/// The C predicate and its user pointer, lent to the loop for the length of the call.
private final class CSelection: @unchecked Sendable {
    let select: CSelect
    let user: UnsafeMutableRawPointer?
    let engineID: Int
    init(_ select: CSelect, _ user: UnsafeMutableRawPointer?, _ engineID: Int) {
        self.select = select
        self.user = user
        self.engineID = engineID
    }

    func chooses(_ transfer: Transfer) -> Bool {
        guard transfer.owner == engineID else { return false }
        return transfer.method.rawValue.withCString { method in
            transfer.url.description.withCString { url in select(method, url, user) != 0 }
        }
    }
}

@_cdecl("courier_engine_cancel_where")
public func courier_engine_cancel_where(_ handle: OpaquePointer?, _ select: CSelect?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    guard let engine = CEngine.fromHandle(handle), let select else { return CourierError.Code.misuse.c }
    let selection = CSelection(select, user, engine.id)
    if Runtime.shared.isOnLoopThread {
        Runtime.shared.cancelSelected(where: selection.chooses)
        return COURIER_OK
    }
    // (The predicate is asked before this returns: the caller's pointer is only lent.)
    let done = DispatchSemaphore(value: 0)
    Runtime.shared.executeOrRunHere {
        if Runtime.shared.isOnLoopThread { Runtime.shared.cancelSelected(where: selection.chooses) }
        done.signal()
    }
    done.wait()
    return COURIER_OK
}
