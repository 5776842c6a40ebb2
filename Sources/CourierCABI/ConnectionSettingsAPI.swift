import CourierCore

// courier_{engine,request}_set_* for TLS choices, connecting and the response head's limits
// (since 0.4): the same arguments and errors on both; an engine's apply to requests created
// afterwards (thread safety as courier_engine_set_accepted_status).

@_cdecl("courier_engine_set_tls_ciphers")
public func courier_engine_set_tls_ciphers(_ handle: OpaquePointer?, _ ciphers: UnsafePointer<CChar>?, _ tls13: UnsafePointer<CChar>?) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in TransferSetting.tlsCiphers(&o, ciphers, tls13) }
}

@_cdecl("courier_request_set_tls_ciphers")
public func courier_request_set_tls_ciphers(_ handle: OpaquePointer?, _ ciphers: UnsafePointer<CChar>?, _ tls13: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in TransferSetting.tlsCiphers(&r.draft.options, ciphers, tls13) }
}

@_cdecl("courier_engine_set_tls_curves")
public func courier_engine_set_tls_curves(_ handle: OpaquePointer?, _ curves: UnsafePointer<CChar>?) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in TransferSetting.tlsCurves(&o, curves) }
}

@_cdecl("courier_request_set_tls_curves")
public func courier_request_set_tls_curves(_ handle: OpaquePointer?, _ curves: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in TransferSetting.tlsCurves(&r.draft.options, curves) }
}

@_cdecl("courier_engine_set_tls_alpn")
public func courier_engine_set_tls_alpn(_ handle: OpaquePointer?, _ enabled: Int32) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try TransferSetting.tlsALPN(&o, enabled) }
}

@_cdecl("courier_engine_set_http_version")
public func courier_engine_set_http_version(_ handle: OpaquePointer?, _ version: Int32) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try TransferSetting.httpVersion(&o, version) }
}

@_cdecl("courier_request_set_http_version")
public func courier_request_set_http_version(_ handle: OpaquePointer?, _ version: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in try TransferSetting.httpVersion(&r.draft.options, version) }
}

@_cdecl("courier_engine_set_http2_ping_interval")
public func courier_engine_set_http2_ping_interval(_ handle: OpaquePointer?, _ milliseconds: Int64) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try TransferSetting.http2PingInterval(&o, milliseconds) }
}

@_cdecl("courier_request_set_http2_ping_interval")
public func courier_request_set_http2_ping_interval(_ handle: OpaquePointer?, _ milliseconds: Int64) -> Int32 {
    configure(handle) { r throws(CourierError) in try TransferSetting.http2PingInterval(&r.draft.options, milliseconds) }
}

@_cdecl("courier_request_set_tls_alpn")
public func courier_request_set_tls_alpn(_ handle: OpaquePointer?, _ enabled: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in try TransferSetting.tlsALPN(&r.draft.options, enabled) }
}

@_cdecl("courier_engine_set_happy_eyeballs")
public func courier_engine_set_happy_eyeballs(_ handle: OpaquePointer?, _ milliseconds: Int64) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try TransferSetting.happyEyeballs(&o, milliseconds) }
}

@_cdecl("courier_request_set_happy_eyeballs")
public func courier_request_set_happy_eyeballs(_ handle: OpaquePointer?, _ milliseconds: Int64) -> Int32 {
    configure(handle) { r throws(CourierError) in try TransferSetting.happyEyeballs(&r.draft.options, milliseconds) }
}

@_cdecl("courier_engine_set_continue_timeout")
public func courier_engine_set_continue_timeout(_ handle: OpaquePointer?, _ milliseconds: Int64) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try TransferSetting.continueTimeout(&o, milliseconds) }
}

@_cdecl("courier_request_set_continue_timeout")
public func courier_request_set_continue_timeout(_ handle: OpaquePointer?, _ milliseconds: Int64) -> Int32 {
    configure(handle) { r throws(CourierError) in try TransferSetting.continueTimeout(&r.draft.options, milliseconds) }
}

@_cdecl("courier_engine_set_header_limits")
public func courier_engine_set_header_limits(_ handle: OpaquePointer?, _ bytes: Int64, _ fields: Int32) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try TransferSetting.headerLimits(&o, bytes, fields) }
}

@_cdecl("courier_request_set_header_limits")
public func courier_request_set_header_limits(_ handle: OpaquePointer?, _ bytes: Int64, _ fields: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in try TransferSetting.headerLimits(&r.draft.options, bytes, fields) }
}
