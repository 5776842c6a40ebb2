import Courier
import CourierCore

// courier_response_* facts beyond status, headers and body: what Swift's Response and its
// TransferMetrics say (curl's CURLINFO_* role), so a C or Python caller learns as much.

@_cdecl("courier_response_reason")
public func courier_response_reason(_ handle: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let response = response(handle) else { return nil }
    return response.cString("\u{0}reason") { response.transfer.head?.reason ?? "" }
}

@_cdecl("courier_response_http_version")
public func courier_response_http_version(_ handle: OpaquePointer?) -> Int32 {
    guard let response = response(handle), let head = response.transfer.head else { return 0 }
    return head.versionMajor == 2 ? 20 : 10 + Int32(head.versionMinor)
}

@_cdecl("courier_response_redirect_count")
public func courier_response_redirect_count(_ handle: OpaquePointer?) -> Int32 {
    guard let response = response(handle) else { return -CourierError.Code.misuse.c }
    return Int32(response.transfer.history.count)
}

@_cdecl("courier_response_history")
public func courier_response_history(_ handle: OpaquePointer?, _ index: Int) -> OpaquePointer? {
    guard let response = response(handle), let hop = response.hop(index) else { return nil }
    return borrowedHandle(hop)
}

@_cdecl("courier_response_bytes_sent")
public func courier_response_bytes_sent(_ handle: OpaquePointer?) -> Int64 {
    guard let response = response(handle) else { return -1 }
    return Int64(response.transfer.metrics.bytesSent)
}

@_cdecl("courier_response_bytes_received")
public func courier_response_bytes_received(_ handle: OpaquePointer?) -> Int64 {
    guard let response = response(handle) else { return -1 }
    return Int64(response.transfer.metrics.bodyBytesReceived)
}

@_cdecl("courier_response_remote_address")
public func courier_response_remote_address(_ handle: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let response = response(handle) else { return nil }
    return response.cString("\u{0}remote") { response.transfer.metrics.remoteAddress }
}

@_cdecl("courier_response_tls")
public func courier_response_tls(_ handle: OpaquePointer?, _ resumed: UnsafeMutablePointer<Int32>?,
                                 _ verifyResult: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let response = response(handle) else { return CourierError.Code.misuse.c }
    let metrics = response.transfer.metrics
    resumed?.pointee = metrics.tlsResumed ? 1 : 0
    verifyResult?.pointee = metrics.tlsVerifyResult
    // Plain http has no handshake: said apart from "verified" (0).
    return response.transfer.url.scheme == .https ? COURIER_OK : CourierError.Code.notFound.c
}

@_cdecl("courier_response_trailer_count")
public func courier_response_trailer_count(_ handle: OpaquePointer?) -> Int {
    response(handle)?.transfer.trailers.count ?? 0
}

@_cdecl("courier_response_trailer_at")
public func courier_response_trailer_at(_ handle: OpaquePointer?, _ index: Int,
                                        _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                        _ value: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let response = response(handle) else { return CourierError.Code.misuse.c }
    let trailers = response.transfer.trailers
    guard index >= 0, index < trailers.count else { return CourierError.Code.notFound.c }
    name?.pointee = response.cString("\u{0}tn\(index)") { trailers.name(at: index) }
    value?.pointee = response.cString("\u{0}tv\(index)") { trailers.value(at: index) }
    return COURIER_OK
}
