import Courier
import CourierCore

// courier_request_set_debug / courier_engine_set_debug: curl's CURLOPT_DEBUGFUNCTION role.

public typealias courier_debug_fn = @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, Int, UnsafeMutableRawPointer?) -> Void

/// COURIER_DEBUG_* kinds.
enum DebugKind {
    static let text: Int32 = 0
    static let headerOut: Int32 = 1
    static let headerIn: Int32 = 2
}

/// What the debug callback is shown of one exchange (loop thread, when its response head
/// arrives; redirects' heads too): the connection as text lines, the request head as sent, the
/// response head. The bytes are valid during the call only.
func reportExchange(_ debug: (courier_debug_fn, UnsafeMutableRawPointer?), request: OpaquePointer, _ transfer: Transfer) {
    let (report, user) = debug
    func emit(_ kind: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { report(request, kind, $0.baseAddress, $0.count, user) }
        }
    }
    let (info, sent) = ExchangeText.describe(transfer) { String($0) }
    for line in info { emit(DebugKind.text, Array((line + "\n").utf8)) }
    if let sent { emit(DebugKind.headerOut, sent) }
    if let head = transfer.head { emit(DebugKind.headerIn, Array(ExchangeText.responseHead(head).utf8)) }
}

/// A request that failed before any response (a refused connect, a handshake or certificate
/// failure): the debug callback is shown what connecting did and where it stopped.
func reportFailedConnection(_ debug: (courier_debug_fn, UnsafeMutableRawPointer?), request: OpaquePointer, _ transfer: Transfer) {
    for line in ExchangeText.failedConnection(of: transfer, number: { String($0) }) { reportText(debug, request: request, line) }
}

/// One COURIER_DEBUG_TEXT line.
func reportText(_ debug: (courier_debug_fn, UnsafeMutableRawPointer?), request: OpaquePointer, _ line: String) {
    let (report, user) = debug
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBufferPointer { raw in
        raw.withMemoryRebound(to: CChar.self) { report(request, DebugKind.text, $0.baseAddress, $0.count, user) }
    }
}

@_cdecl("courier_request_set_debug")
public func courier_request_set_debug(_ handle: OpaquePointer?, _ debug: courier_debug_fn?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    configure(handle) { r throws(CourierError) in r.debug = debug.map { ($0, user) } }
}

@_cdecl("courier_engine_set_debug")
public func courier_engine_set_debug(_ handle: OpaquePointer?, _ debug: courier_debug_fn?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    guard let engine = CEngine.fromHandle(handle) else { return CourierError.Code.misuse.c }
    engine.debug = debug.map { ($0, user) }
    return COURIER_OK
}
