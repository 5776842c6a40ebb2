import Courier
import CourierCore

// courier_response_*.

/// The response behind a handle (nil for NULL, a freed or a foreign handle).
@inline(__always)
func response(_ handle: OpaquePointer?) -> CResponse? {
    object(handle, tag: HandleTag.response, as: CResponse.self)
}

/// Something non-NULL to point at for empty buffers.
nonisolated(unsafe) private let emptyByte = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

@_cdecl("courier_response_status")
public func courier_response_status(_ handle: OpaquePointer?) -> Int32 {
    guard let response = response(handle) else { return 0 }
    return Int32(response.transfer.status)
}

@_cdecl("courier_response_body")
public func courier_response_body(_ handle: OpaquePointer?, _ length: UnsafeMutablePointer<Int>?) -> UnsafePointer<UInt8>? {
    guard let response = response(handle) else {
        length?.pointee = 0
        return nil
    }
    // The transfer's body is never mutated again and lives as long as the response, so its
    // storage is stable.
    return response.transfer.responseBody.withUnsafeBufferPointer { bytes in
        length?.pointee = bytes.count
        return bytes.baseAddress
    } ?? UnsafePointer(emptyByte)
}

@_cdecl("courier_response_body_size")
public func courier_response_body_size(_ handle: OpaquePointer?) -> Int64 {
    guard let response = response(handle) else { return -1 }
    let transfer = response.transfer
    // A body kept in memory is its own size; one written to a file is counted as it was written.
    return transfer.responseBody.isEmpty ? Int64(transfer.metrics.bodyBytesDecoded) : Int64(transfer.responseBody.count)
}

@_cdecl("courier_response_header_count")
public func courier_response_header_count(_ handle: OpaquePointer?) -> Int {
    response(handle)?.headers.count ?? 0
}

@_cdecl("courier_response_header_at")
public func courier_response_header_at(_ handle: OpaquePointer?, _ index: Int,
                                       _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?, _ nameLength: UnsafeMutablePointer<Int>?,
                                       _ value: UnsafeMutablePointer<UnsafePointer<CChar>?>?, _ valueLength: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let response = response(handle) else { return CourierError.Code.misuse.c }
    let headers = response.headers
    guard index >= 0, index < headers.fields.count else { return CourierError.Code.notFound.c }
    let field = headers.fields[index]
    // `headers.storage` is the array the finished transfer keeps: stable while the response lives.
    headers.storage.withUnsafeBufferPointer { bytes in
        let start = UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(emptyByte))
        name?.pointee = (start + Int(field.nameStart)).assumingMemoryBound(to: CChar.self)
        nameLength?.pointee = Int(field.nameEnd - field.nameStart)
        value?.pointee = (start + Int(field.valueStart)).assumingMemoryBound(to: CChar.self)
        valueLength?.pointee = Int(field.valueEnd - field.valueStart)
    }
    return COURIER_OK
}

@_cdecl("courier_response_header")
public func courier_response_header(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> UnsafePointer<CChar>? {
    guard let response = response(handle), let name = string(name) else { return nil }
    return response.cString("h:" + name.lowercased()) { response.headers[name] }
}

@_cdecl("courier_response_url")
public func courier_response_url(_ handle: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let response = response(handle) else { return nil }
    return response.cached("url") { OwnedCString.url(response.transfer.url) }
}

@_cdecl("courier_response_timing")
public func courier_response_timing(_ handle: OpaquePointer?, _ which: Int32) -> Double {
    guard let response = response(handle) else { return -1 }
    let m = response.transfer.metrics
    let span: Nanoseconds
    switch which {
    case 1: span = m.queueWait
    case 2: span = m.dns
    case 3: span = m.connect
    case 4: span = m.tlsHandshake
    case 5: span = m.timeToFirstByte
    case 6: span = m.total
    default: return -1
    }
    return Double(span.rawValue) / 1e9
}

@_cdecl("courier_response_reused_connection")
public func courier_response_reused_connection(_ handle: OpaquePointer?) -> Int32 {
    guard let response = response(handle) else { return 0 }
    return response.transfer.metrics.reusedConnection ? 1 : 0
}

@_cdecl("courier_response_free")
public func courier_response_free(_ handle: OpaquePointer?) {
    // A redirect's response (courier_response_history) goes with its parent.
    guard let response = response(handle), let handle, !response.isBorrowed else { return }
    response.retireHops()
    response.tag = HandleTag.dead
    releaseHandle(handle)
}

@_cdecl("courier_response_cache_phase")
public func courier_response_cache_phase(_ handle: OpaquePointer?) -> Int32 {
    guard let response = response(handle) else { return -CourierError.Code.misuse.c }
    return CacheCodes.phase(response.transfer.cachePhase)
}

@_cdecl("courier_response_is_preview")
public func courier_response_is_preview(_ handle: OpaquePointer?) -> Int32 {
    guard let response = response(handle) else { return 0 }
    return response.transfer.isPreview ? 1 : 0
}

@_cdecl("courier_response_cache_status")
public func courier_response_cache_status(_ handle: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let response = response(handle) else { return nil }
    return response.cString("\u{0}cache_status") { response.transfer.cacheStatus }
}
