import CourierCore

// courier_cookiejar_*: RFC 6265bis cookie jars shared by requests, saved as curl's cookie file.

/// A jar handle.
final class CCookieJar: @unchecked Sendable {
    /// Must stay the first stored property (see `HandleTag`).
    @exclusivity(unchecked) var tag = HandleTag.cookieJar
    let jar = CookieJar()
}

private func cookieJar(_ handle: OpaquePointer?) -> CCookieJar? {
    object(handle, tag: HandleTag.cookieJar, as: CCookieJar.self)
}

@_cdecl("courier_cookiejar_create")
public func courier_cookiejar_create(_ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return CourierError.Code.misuse.c }
    out.pointee = retainedHandle(CCookieJar())
    return COURIER_OK
}

@_cdecl("courier_cookiejar_load")
public func courier_cookiejar_load(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Int32 {
    guard let holder = cookieJar(handle) else { return CourierError.Code.misuse.c }
    guard let path = string(path) else { return CourierError.Code.invalidArgument.c }
    do {
        try holder.jar.load(file: path)
        return COURIER_OK
    } catch {
        return error.code.c
    }
}

@_cdecl("courier_cookiejar_save")
public func courier_cookiejar_save(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Int32 {
    guard let holder = cookieJar(handle) else { return CourierError.Code.misuse.c }
    guard let path = string(path) else { return CourierError.Code.invalidArgument.c }
    do {
        try holder.jar.save(file: path)
        return COURIER_OK
    } catch {
        return error.code.c
    }
}

@_cdecl("courier_cookiejar_count")
public func courier_cookiejar_count(_ handle: OpaquePointer?) -> Int {
    cookieJar(handle)?.jar.all.count ?? 0
}

@_cdecl("courier_cookiejar_clear")
public func courier_cookiejar_clear(_ handle: OpaquePointer?) -> Int32 {
    guard let holder = cookieJar(handle) else { return CourierError.Code.misuse.c }
    holder.jar.removeAll()
    return COURIER_OK
}

@_cdecl("courier_cookiejar_free")
public func courier_cookiejar_free(_ handle: OpaquePointer?) {
    guard let holder = cookieJar(handle), let handle else { return }
    holder.tag = HandleTag.dead
    releaseHandle(handle)
}

@_cdecl("courier_request_set_cookiejar")
public func courier_request_set_cookiejar(_ handle: OpaquePointer?, _ jarHandle: OpaquePointer?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        if jarHandle == nil {
            r.draft.options.cookies = nil
            return
        }
        guard let holder = cookieJar(jarHandle) else { throw CourierError(.misuse, "not a cookie jar") }
        r.draft.options.cookies = holder.jar
    }
}
