import Courier
import CourierCore

// courier_engine_set_trust, courier_engine_set_tls_pin_mode: the application's trust decision and
// report-only pins (Swift's TrustEvaluator and PinningMode) for C.

public typealias CTrust = @convention(c) (UnsafePointer<CChar>?, Int32, Int32, Int32, UnsafePointer<UnsafePointer<UInt8>?>?,
                                          UnsafePointer<Int>?, Int, UnsafeMutableRawPointer?) -> Int32
public typealias CPinReport = @convention(c) (UnsafePointer<CChar>?, Int32, UnsafeMutableRawPointer?) -> Void

/// The C callbacks and their user pointer, called on the loop thread during handshakes.
private final class CTrustHooks: @unchecked Sendable {
    let evaluate: CTrust?
    let pinMismatch: CPinReport?
    let user: UnsafeMutableRawPointer?
    init(_ evaluate: CTrust?, _ pinMismatch: CPinReport?, _ user: UnsafeMutableRawPointer?) {
        self.evaluate = evaluate
        self.pinMismatch = pinMismatch
        self.user = user
    }

    func decide(_ context: TrustContext) -> Bool {
        guard let evaluate else { return context.verificationError == nil }
        let verdict = context.verificationError.map { $0.code.c } ?? COURIER_OK
        let pinned: Int32 = context.pinMatched.map { $0 ? 1 : 0 } ?? -1
        // The chain as pointers and lengths, valid for the call.
        let lengths = context.chain.map(\.count)
        return context.host.withCString { host in
            withPointers(context.chain) { pointers in
                lengths.withUnsafeBufferPointer { evaluate(host, Int32(context.port), verdict, pinned, pointers, $0.baseAddress, context.chain.count, user) != 0 }
            }
        }
    }

    func report(_ context: TrustContext) {
        context.host.withCString { pinMismatch?($0, Int32(context.port), user) }
    }
}

/// `body` with a pointer to each of `chain`'s certificates (valid only during the call).
private func withPointers<R>(_ chain: [[UInt8]], _ body: (UnsafePointer<UnsafePointer<UInt8>?>?) -> R) -> R {
    var pointers: [UnsafePointer<UInt8>?] = []
    func next(_ index: Int) -> R {
        guard index < chain.count else { return pointers.withUnsafeBufferPointer { body($0.baseAddress) } }
        return chain[index].withUnsafeBufferPointer { certificate in
            pointers.append(certificate.baseAddress)
            return next(index + 1)
        }
    }
    return next(0)
}

@_cdecl("courier_engine_set_trust")
public func courier_engine_set_trust(_ handle: OpaquePointer?, _ evaluate: CTrust?, _ pinMismatch: CPinReport?,
                                     _ user: UnsafeMutableRawPointer?) -> Int32 {
    configureDefaults(handle) { o in
        guard evaluate != nil || pinMismatch != nil else {
            o.tls.trustEvaluator = nil
            return
        }
        let hooks = CTrustHooks(evaluate, pinMismatch, user)
        o.tls.trustEvaluator = TrustEvaluator(evaluate: hooks.decide, pinMismatch: pinMismatch == nil ? nil : hooks.report)
    }
}

@_cdecl("courier_engine_set_tls_pin_mode")
public func courier_engine_set_tls_pin_mode(_ handle: OpaquePointer?, _ mode: Int32) -> Int32 {
    configureDefaults(handle) { o throws(CourierError) in
        switch mode {
        case 0: o.tls.pinningMode = .enforce
        case 1: o.tls.pinningMode = .reportOnly
        default: throw CourierError(.invalidArgument, "pin mode \(mode): COURIER_PIN_ENFORCE or COURIER_PIN_REPORT_ONLY")
        }
    }
}
