import Courier
import CourierCore

// courier_engine_set_* for transfer options: what every request created from the engine
// afterwards starts with (a request's own setter still overrides its copy). Same arguments and
// errors as the courier_request_set_* of the same name; thread safety as
// courier_engine_set_accepted_status (configure an engine, then share it).

/// Applies `change` to the engine's defaults: MISUSE for a bad handle, the setter's code otherwise.
@inline(__always)
func configureDefaults(_ handle: OpaquePointer?, _ change: (inout TransferOptions) throws(CourierError) -> Void) -> Int32 {
    guard let engine = CEngine.fromHandle(handle) else { return CourierError.Code.misuse.c }
    do {
        try change(&engine.options)
        return COURIER_OK
    } catch {
        return error.code.c
    }
}

@_cdecl("courier_engine_set_timeout")
public func courier_engine_set_timeout(_ handle: OpaquePointer?, _ which: Int32, _ milliseconds: Int64) -> Int32 {
    // COURIER_TIMEOUT_DEFAULT: the library's default again.
    configureDefaults(handle) { o throws(CourierError) in try TransferSetting.timeout(&o, which, milliseconds, defaults: Timeouts()) }
}

@_cdecl("courier_engine_set_redirects")
public func courier_engine_set_redirects(_ handle: OpaquePointer?, _ follow: Int32, _ maxRedirects: Int32) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try TransferSetting.redirects(&o, follow, maxRedirects) }
}

@_cdecl("courier_engine_set_decompress")
public func courier_engine_set_decompress(_ handle: OpaquePointer?, _ enabled: Int32) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try TransferSetting.decompress(&o, enabled) }
}

@_cdecl("courier_engine_set_max_body")
public func courier_engine_set_max_body(_ handle: OpaquePointer?, _ bytes: Int64) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try TransferSetting.maxBody(&o, bytes) }
}

@_cdecl("courier_engine_set_tls_ca")
public func courier_engine_set_tls_ca(_ handle: OpaquePointer?, _ file: UnsafePointer<CChar>?, _ directory: UnsafePointer<CChar>?) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in TransferSetting.tlsCA(&o, file, directory) }
}

@_cdecl("courier_engine_set_tls_system_roots")
public func courier_engine_set_tls_system_roots(_ handle: OpaquePointer?, _ use: Int32) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try TransferSetting.tlsSystemRoots(&o, use) }
}

@_cdecl("courier_engine_set_tls_verify")
public func courier_engine_set_tls_verify(_ handle: OpaquePointer?, _ verify: Int32) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try TransferSetting.tlsVerify(&o, verify) }
}

@_cdecl("courier_engine_set_tls_client_certificate")
public func courier_engine_set_tls_client_certificate(_ handle: OpaquePointer?, _ certificate: UnsafePointer<CChar>?,
                                                      _ key: UnsafePointer<CChar>?, _ passphrase: UnsafePointer<CChar>?) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try TransferSetting.tlsClientCertificate(&o, certificate, key, passphrase) }
}

@_cdecl("courier_engine_set_tls_pins")
public func courier_engine_set_tls_pins(_ handle: OpaquePointer?, _ pins: UnsafePointer<CChar>?) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try TransferSetting.tlsPins(&o, pins) }
}

@_cdecl("courier_engine_set_tls_versions")
public func courier_engine_set_tls_versions(_ handle: OpaquePointer?, _ minimum: Int32, _ maximum: Int32) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in try TransferSetting.tlsVersions(&o, minimum, maximum) }
}
