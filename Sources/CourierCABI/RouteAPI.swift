import CourierCore

// courier_request_add_resolve, _add_connect_to, _set_ip_family, courier_engine_set_unix_socket and
// courier_request_set_unix_socket: where a request's connection goes (curl's CURLOPT_RESOLVE,
// CURLOPT_CONNECT_TO, CURLOPT_IPRESOLVE, CURLOPT_UNIX_SOCKET_PATH, CURLOPT_ABSTRACT_UNIX_SOCKET).

/// Changes the request's route (made on first use).
private func changeRoute(_ handle: OpaquePointer?, _ change: (inout ConnectRoute) throws(CourierError) -> Void) -> Int32 {
    configure(handle) { r throws(CourierError) in
        var route = r.draft.options.route ?? ConnectRoute()
        try change(&route)
        r.draft.options.route = route
    }
}

@_cdecl("courier_request_add_resolve")
public func courier_request_add_resolve(_ handle: OpaquePointer?, _ entry: UnsafePointer<CChar>?) -> Int32 {
    guard let entry else { return CourierError.Code.invalidArgument.c }
    let text = String(cString: entry)
    return changeRoute(handle) { route throws(CourierError) in try route.addResolve(text) }
}

@_cdecl("courier_request_add_connect_to")
public func courier_request_add_connect_to(_ handle: OpaquePointer?, _ entry: UnsafePointer<CChar>?) -> Int32 {
    guard let entry else { return CourierError.Code.invalidArgument.c }
    let text = String(cString: entry)
    return changeRoute(handle) { route throws(CourierError) in route.redirects.append(try ConnectRoute.Redirect(parsing: text)) }
}

@_cdecl("courier_request_set_ip_family")
public func courier_request_set_ip_family(_ handle: OpaquePointer?, _ family: Int32) -> Int32 {
    let families: [ConnectRoute.Family] = [.any, .ipv4, .ipv6]
    guard family >= 0, Int(family) < families.count else { return CourierError.Code.invalidArgument.c }
    return changeRoute(handle) { route in route.family = families[Int(family)] }
}

/// The route with `path` as its Unix socket (abstract when `abstract` is not 0), or without one
/// for a NULL path.
private func setUnixSocket(_ options: inout TransferOptions, _ path: UnsafePointer<CChar>?, _ abstract: Int32) throws(CourierError) {
    guard let path else {
        if var route = options.route {
            route.unixSocket = nil
            options.route = route
        }
        return
    }
    let name = String(cString: path)
    let socket: ConnectRoute.UnixSocket = abstract != 0 ? .abstract(name) : .path(name)
    var route = options.route ?? ConnectRoute()
    route.unixSocket = try ConnectRoute(unixSocket: socket).unixSocket
    options.route = route
}

@_cdecl("courier_engine_set_unix_socket")
public func courier_engine_set_unix_socket(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ abstract: Int32) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try setUnixSocket(&o, path, abstract) }
}

@_cdecl("courier_request_set_unix_socket")
public func courier_request_set_unix_socket(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ abstract: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in try setUnixSocket(&r.draft.options, path, abstract) }
}

/// The route with its local end changed by `change` (made on first use).
private func setLocal(_ options: inout TransferOptions, _ change: (inout LocalBinding) -> Void) {
    var route = options.route ?? ConnectRoute()
    var local = route.local ?? LocalBinding()
    change(&local)
    route.local = local.source == nil && local.ports == nil ? nil : local
    options.route = route
}

/// curl's --interface syntax, or NULL for anywhere.
private func localSource(_ text: UnsafePointer<CChar>?) throws(CourierError) -> LocalBinding.Source? {
    guard let text else { return nil }
    return try LocalBinding(interface: String(cString: text)).source
}

/// A port range, or none for 0, 0.
private func localPorts(_ low: Int32, _ high: Int32) throws(CourierError) -> ClosedRange<UInt16>? {
    if low == 0, high == 0 { return nil }
    guard low >= 1, high >= low, high <= 65535 else { throw CourierError(.invalidArgument, "local ports \(low)-\(high)") }
    return UInt16(low)...UInt16(high)
}

@_cdecl("courier_engine_set_local_address")
public func courier_engine_set_local_address(_ handle: OpaquePointer?, _ address: UnsafePointer<CChar>?) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in
        let source = try localSource(address)
        setLocal(&o) { $0.source = source }
    }
}

@_cdecl("courier_request_set_local_address")
public func courier_request_set_local_address(_ handle: OpaquePointer?, _ address: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        let source = try localSource(address)
        setLocal(&r.draft.options) { $0.source = source }
    }
}

@_cdecl("courier_engine_set_local_port")
public func courier_engine_set_local_port(_ handle: OpaquePointer?, _ low: Int32, _ high: Int32) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in
        let ports = try localPorts(low, high)
        setLocal(&o) { $0.ports = ports }
    }
}

@_cdecl("courier_request_set_local_port")
public func courier_request_set_local_port(_ handle: OpaquePointer?, _ low: Int32, _ high: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in
        let ports = try localPorts(low, high)
        setLocal(&r.draft.options) { $0.ports = ports }
    }
}
