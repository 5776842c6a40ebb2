import Courier
import CourierCore
import Glibc

// Engine hooks from C: one call sets the four (any may be NULL); the request hook edits a
// `courier_outgoing` valid during the call.

public typealias courier_request_hook_fn = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32
public typealias courier_response_hook_fn = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32
public typealias courier_redirect_hook_fn = @convention(c) (Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                                                            UnsafeMutablePointer<CChar>?, Int, UnsafeMutableRawPointer?) -> Int32
public typealias courier_metrics_hook_fn = @convention(c) (OpaquePointer?, OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> Void

/// What C's hooks are, kept by the engine (the metrics hook is called by the request itself,
/// which has the handles C expects).
struct CHooks: @unchecked Sendable {
    var metrics: courier_metrics_hook_fn?
    var user: UnsafeMutableRawPointer?
}

/// `courier_outgoing`: the request a request hook may change, with the C strings it handed out
/// (valid until the hook returns).
final class COutgoing {
    var request: OutgoingRequest
    var strings: [OwnedCString] = []
    /// The body's bytes as handed out, freed with the wrapper.
    private var body: UnsafeMutableRawBufferPointer?
    init(_ request: OutgoingRequest) { self.request = request }
    deinit { body?.deallocate() }

    /// A copy of an in-memory body that lives as long as the wrapper.
    func bodyBytes() -> UnsafeRawBufferPointer? {
        if let body { return UnsafeRawBufferPointer(body) }
        guard case .bytes(let bytes) = request.body else { return nil }
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        bytes.withUnsafeBytes { raw in if raw.count > 0 { copy.copyMemory(from: raw) } }
        body = copy
        return UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(copy)[0..<bytes.count])
    }

    func keep(_ text: String) -> UnsafePointer<CChar> {
        let owned = OwnedCString(text)
        strings.append(owned)
        return UnsafePointer(owned.pointer)
    }
}

private func outgoing(_ handle: OpaquePointer?) -> COutgoing? {
    handle.map { Unmanaged<COutgoing>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

@_cdecl("courier_engine_set_hooks")
public func courier_engine_set_hooks(_ handle: OpaquePointer?, _ request: courier_request_hook_fn?, _ response: courier_response_hook_fn?,
                                     _ redirect: courier_redirect_hook_fn?, _ metrics: courier_metrics_hook_fn?,
                                     _ user: UnsafeMutableRawPointer?) -> Int32 {
    guard let engine = CEngine.fromHandle(handle) else { return CourierError.Code.misuse.c }
    let context = UncheckedSendable(user)
    var hooks = EngineHooks()
    if let request {
        hooks.adaptRequest = { outgoingRequest in
            let wrapper = COutgoing(outgoingRequest)
            let code = withExtendedLifetime(wrapper) {
                request(OpaquePointer(Unmanaged.passUnretained(wrapper).toOpaque()), context.value)
            }
            guard code == COURIER_OK else { throw CourierError(.rejected, "the request hook returned \(code)") }
            outgoingRequest = wrapper.request
        }
    }
    if let response {
        hooks.validateResponse = { judged in
            let shown = CResponse(judged.transfer)
            let code = withExtendedLifetime(shown) { response(borrowedHandle(shown), context.value) }
            if code != COURIER_OK { throw CourierError(.rejected, "the response hook returned \(code)") }
        }
    }
    if let redirect {
        hooks.redirect = { hop in
            var buffer = [CChar](repeating: 0, count: 8192)
            let verdict = buffer.withUnsafeMutableBufferPointer { out in
                redirect(Int32(hop.status), hop.from.description, hop.to.description, out.baseAddress, out.count, context.value)
            }
            switch verdict {
            case 0: return .follow
            case 2:
                buffer[buffer.count - 1] = 0
                let text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                // An unusable rewrite refuses rather than following somewhere unintended.
                return (try? hop.from.resolving(text)).map { .rewrite($0) } ?? .refuse
            default: return .refuse
            }
        }
    }
    engine.hooks = HookSet.make(hooks)
    engine.cHooks = metrics.map { CHooks(metrics: $0, user: user) }
    return COURIER_OK
}

@_cdecl("courier_outgoing_method")
public func courier_outgoing_method(_ handle: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let o = outgoing(handle) else { return nil }
    return o.keep(o.request.method.rawValue)
}

@_cdecl("courier_outgoing_url")
public func courier_outgoing_url(_ handle: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let o = outgoing(handle) else { return nil }
    return o.keep(o.request.url.description)
}

@_cdecl("courier_outgoing_header")
public func courier_outgoing_header(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> UnsafePointer<CChar>? {
    guard let o = outgoing(handle), let name = string(name), let value = o.request.headers[name] else { return nil }
    return o.keep(value)
}

@_cdecl("courier_outgoing_body")
public func courier_outgoing_body(_ handle: OpaquePointer?, _ length: UnsafeMutablePointer<Int>?) -> UnsafeRawPointer? {
    length?.pointee = 0
    guard let o = outgoing(handle), let bytes = o.bodyBytes() else { return nil }
    length?.pointee = bytes.count
    return bytes.baseAddress
}

@_cdecl("courier_outgoing_set_header")
public func courier_outgoing_set_header(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?) -> Int32 {
    guard let o = outgoing(handle) else { return CourierError.Code.misuse.c }
    guard let name = string(name), !name.isEmpty else { return CourierError.Code.invalidArgument.c }
    if let value = string(value) {
        var probe = HTTPHeaders()
        probe.add(name: name, value: value)
        if probe.firstInvalidField() != nil { return CourierError.Code.invalidHeader.c }
        o.request.headers.replaceOrAdd(name: name, value: value)
    } else if o.request.headers.contains(name) {
        o.request.headers.remove(name: name)
    }
    return COURIER_OK
}
