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

/// New proxy settings keep the tunnel choice and the HTTPS proxy's TLS already set (the setters
/// come in any order).
private func setProxy(_ options: inout TransferOptions, _ proxy: UnsafePointer<CChar>?, _ noProxy: UnsafePointer<CChar>?) throws(CourierError) {
    var settings = try proxySettings(proxy, noProxy)
    settings.tunnelsHTTP = options.proxy.tunnelsHTTP
    settings.proxyTLS = options.proxy.proxyTLS
    options.proxy = settings
}

/// How an HTTPS proxy's certificate is checked: `caFile`/`caDirectory` (NULL: none besides the
/// system's), `verify` 0 or 1.
private func setProxyTLS(_ options: inout TransferOptions, _ caFile: UnsafePointer<CChar>?, _ caDirectory: UnsafePointer<CChar>?,
                         _ verify: Int32) throws(CourierError) {
    guard verify == 0 || verify == 1 else { throw CourierError(.invalidArgument, "verify must be 0 or 1") }
    var tls = TLSConfiguration()
    tls.caFile = string(caFile)
    tls.caDirectory = string(caDirectory)
    if verify == 0 { tls.verification = .insecureAcceptAnyCertificate }
    options.proxy.proxyTLS = tls
}

@_cdecl("courier_engine_set_proxy_tls")
public func courier_engine_set_proxy_tls(_ handle: OpaquePointer?, _ caFile: UnsafePointer<CChar>?, _ caDirectory: UnsafePointer<CChar>?,
                                         _ verify: Int32) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try setProxyTLS(&o, caFile, caDirectory, verify) }
}

@_cdecl("courier_request_set_proxy_tls")
public func courier_request_set_proxy_tls(_ handle: OpaquePointer?, _ caFile: UnsafePointer<CChar>?, _ caDirectory: UnsafePointer<CChar>?,
                                          _ verify: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in try setProxyTLS(&r.draft.options, caFile, caDirectory, verify) }
}

/// curl's --proxytunnel: http URLs through a CONNECT tunnel too.
private func setProxyTunnel(_ options: inout TransferOptions, _ tunnel: Int32) throws(CourierError) {
    guard tunnel == 0 || tunnel == 1 else { throw CourierError(.invalidArgument, "tunnel must be 0 or 1") }
    options.proxy.tunnelsHTTP = tunnel == 1
}

@_cdecl("courier_engine_set_proxy")
public func courier_engine_set_proxy(_ handle: OpaquePointer?, _ proxy: UnsafePointer<CChar>?, _ noProxy: UnsafePointer<CChar>?) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try setProxy(&o, proxy, noProxy) }
}

@_cdecl("courier_request_set_proxy")
public func courier_request_set_proxy(_ handle: OpaquePointer?, _ proxy: UnsafePointer<CChar>?, _ noProxy: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in try setProxy(&r.draft.options, proxy, noProxy) }
}

@_cdecl("courier_engine_set_proxy_tunnel")
public func courier_engine_set_proxy_tunnel(_ handle: OpaquePointer?, _ tunnel: Int32) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try setProxyTunnel(&o, tunnel) }
}

@_cdecl("courier_request_set_proxy_tunnel")
public func courier_request_set_proxy_tunnel(_ handle: OpaquePointer?, _ tunnel: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in try setProxyTunnel(&r.draft.options, tunnel) }
}
