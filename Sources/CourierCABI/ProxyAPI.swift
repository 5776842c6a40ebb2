import CourierCore

// Proxies from C: one call per engine or request, curl's syntax for both strings.

/// The settings `proxy` and `noProxy` (C strings, either NULL) describe: NULL for the
/// environment's proxy, "" for none, else one proxy for every scheme; `noProxy` replaces the
/// list of hosts reached directly.
private func proxySettings(_ proxy: UnsafePointer<CChar>?, _ noProxy: UnsafePointer<CChar>?) throws(CourierError) -> ProxySettings {
    var settings: ProxySettings
    switch string(proxy) {
    case nil: settings = ProxySettings.environment()
    case ""?: settings = .direct
    case let text?: settings = .all(try Proxy(parsing: text))
    }
    if let list = string(noProxy) { settings.noProxy = NoProxy(list) }
    return settings
}

@_cdecl("courier_engine_set_proxy")
public func courier_engine_set_proxy(_ handle: OpaquePointer?, _ proxy: UnsafePointer<CChar>?, _ noProxy: UnsafePointer<CChar>?) -> Int32 {
    guard let engine = CEngine.fromHandle(handle) else { return CourierError.Code.misuse.c }
    do throws(CourierError) {
        engine.options.proxy = try proxySettings(proxy, noProxy)
        return COURIER_OK
    } catch {
        return error.code.c
    }
}

@_cdecl("courier_request_set_proxy")
public func courier_request_set_proxy(_ handle: OpaquePointer?, _ proxy: UnsafePointer<CChar>?, _ noProxy: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in r.draft.options.proxy = try proxySettings(proxy, noProxy) }
}
