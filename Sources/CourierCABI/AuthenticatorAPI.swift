import Courier
import CourierCore
import Dispatch

// Challenges from C: an engine's authenticator, whose refresh is a C callback run on a thread of
// its own (it may block, and may itself perform requests).

/// `courier_challenge_fn`: user, status, URL, challenges, is_proxy, credentials buffer, capacity.
public typealias courier_challenge_fn = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                                                        Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32

/// The longest credentials value a challenge callback may write, NUL included.
private let credentialsCapacity = 8192

@_cdecl("courier_engine_set_authenticator")
public func courier_engine_set_authenticator(_ handle: OpaquePointer?, _ initial: UnsafePointer<CChar>?,
                                             _ callback: courier_challenge_fn?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    guard let engine = CEngine.fromHandle(handle) else { return CourierError.Code.misuse.c }
    guard let callback else {
        engine.authenticator = nil
        return COURIER_OK
    }
    var start: Authorization?
    if let text = string(initial) {
        guard let parsed = Authorization(fieldValue: text) else { return CourierError.Code.invalidArgument.c }
        start = parsed
    }
    let context = UncheckedSendable((callback, user))
    engine.authenticator = Authenticator(initial: start, refreshTimeout: engine.challengeTimeout) { challenge in
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async(execute: DispatchWorkItem {
                let (callback, user) = context.value
                var buffer = [CChar](repeating: 0, count: credentialsCapacity)
                let answered = buffer.withUnsafeMutableBufferPointer { out in
                    callback(user, Int32(challenge.status), challenge.url.description, challenge.schemes.joined(separator: ", "),
                             challenge.isProxy ? 1 : 0, out.baseAddress, credentialsCapacity)
                }
                buffer[credentialsCapacity - 1] = 0
                let value = answered == 1 ? buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : ""
                continuation.resume(returning: answered == 1 ? Authorization(fieldValue: value) : nil)
            })
        }
    }
    return COURIER_OK
}

@_cdecl("courier_engine_set_challenge_timeout")
public func courier_engine_set_challenge_timeout(_ handle: OpaquePointer?, _ milliseconds: Int64) -> Int32 {
    guard let engine = CEngine.fromHandle(handle) else { return CourierError.Code.misuse.c }
    guard milliseconds > 0 else { return CourierError.Code.invalidArgument.c }
    engine.challengeTimeout = .milliseconds(milliseconds)
    engine.authenticator?.refreshTimeout = .milliseconds(milliseconds)
    return COURIER_OK
}
