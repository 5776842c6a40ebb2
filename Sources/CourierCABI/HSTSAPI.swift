import CourierCore

// courier_hsts_*: HSTS stores (RFC 6797) shared by requests, kept in curl's --hsts file format.

/// A store handle.
final class CHSTS: @unchecked Sendable {
    /// Must stay the first stored property (see `HandleTag`).
    @exclusivity(unchecked) var tag = HandleTag.hsts
    let store: HSTSStore
    init(_ store: HSTSStore) { self.store = store }
}

private func hstsStore(_ handle: OpaquePointer?) -> CHSTS? {
    object(handle, tag: HandleTag.hsts, as: CHSTS.self)
}

@_cdecl("courier_hsts_create")
public func courier_hsts_create(_ path: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return CourierError.Code.misuse.c }
    out.pointee = nil
    do {
        let store = try string(path).map { (file: String) throws(CourierError) in try HSTSStore(file: file) } ?? HSTSStore()
        out.pointee = retainedHandle(CHSTS(store))
        return COURIER_OK
    } catch {
        return error.code.c
    }
}

@_cdecl("courier_hsts_save")
public func courier_hsts_save(_ handle: OpaquePointer?) -> Int32 {
    guard let holder = hstsStore(handle) else { return CourierError.Code.misuse.c }
    do {
        try holder.store.save()
        return COURIER_OK
    } catch {
        return error.code.c
    }
}

@_cdecl("courier_hsts_requires_https")
public func courier_hsts_requires_https(_ handle: OpaquePointer?, _ host: UnsafePointer<CChar>?) -> Int32 {
    guard let holder = hstsStore(handle), let host = string(host) else { return 0 }
    return holder.store.requiresHTTPS(host) ? 1 : 0
}

@_cdecl("courier_hsts_free")
public func courier_hsts_free(_ handle: OpaquePointer?) {
    guard let holder = hstsStore(handle), let handle else { return }
    holder.tag = HandleTag.dead
    releaseHandle(handle)
}

/// The store `handle` names for the options (NULL: none).
private func setStore(_ options: inout TransferOptions, _ handle: OpaquePointer?) throws(CourierError) {
    guard let handle else {
        options.hsts = nil
        return
    }
    guard let holder = hstsStore(handle) else { throw CourierError(.misuse, "not an HSTS store") }
    options.hsts = holder.store
}

@_cdecl("courier_engine_set_hsts")
public func courier_engine_set_hsts(_ handle: OpaquePointer?, _ store: OpaquePointer?) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try setStore(&o, store) }
}

@_cdecl("courier_request_set_hsts")
public func courier_request_set_hsts(_ handle: OpaquePointer?, _ store: OpaquePointer?) -> Int32 {
    configure(handle) { r throws(CourierError) in try setStore(&r.draft.options, store) }
}
