import Courier
import CourierCore
import Dispatch

// courier_network_*, courier_queue_follow_network: the network monitor and the queue width
// that follows it.

/// `courier_network_fn`: user, kind (COURIER_NETWORK_*), the default route's interface ("" for none).
public typealias courier_network_fn = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?) -> Void

/// COURIER_NETWORK_NONE, _WIRED, _WIFI, _CELLULAR.
private let networkKinds: [NetworkKind] = [.none, .wired, .wifi, .cellular]

private func code(of kind: NetworkKind) -> Int32 { Int32(networkKinds.firstIndex(of: kind) ?? 0) }

/// Waits (off the loop thread) for a reply the loop gives to `ask`.
private func waitForLoop<T: Sendable>(initial: T, _ ask: (@escaping @Sendable (T) -> Void) -> Void) -> T {
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var seen = initial
    ask { value in
        seen = value
        done.signal()
    }
    done.wait()
    return seen
}

@_cdecl("courier_network_status")
public func courier_network_status(_ kind: UnsafeMutablePointer<Int32>?, _ interface: UnsafeMutablePointer<CChar>?, _ capacity: Int) -> Int32 {
    guard !Runtime.shared.isOnLoopThread else { return CourierError.Code.misuse.c }
    let seen = waitForLoop(initial: NetworkStatus(kind: .none, interface: "")) { Runtime.shared.networkStatus($0) }
    kind?.pointee = code(of: seen.kind)
    writeText(seen.interface, interface, capacity)
    return COURIER_OK
}

@_cdecl("courier_network_reachability")
public func courier_network_reachability(_ host: UnsafePointer<CChar>?, _ reachable: UnsafeMutablePointer<Int32>?,
                                         _ reason: UnsafeMutablePointer<Int32>?, _ interface: UnsafeMutablePointer<CChar>?,
                                         _ capacity: Int) -> Int32 {
    guard let host, !Runtime.shared.isOnLoopThread else { return CourierError.Code.misuse.c }
    let name = String(cString: host)
    let seen = waitForLoop(initial: HostReachability(host: name, reason: .unresolvable)) { Runtime.shared.hostReachability(name, $0) }
    reachable?.pointee = seen.isReachable ? 1 : 0
    reason?.pointee = Int32(HostReachability.Reason.allCases.firstIndex(of: seen.reason) ?? 0)
    writeText(seen.interface, interface, capacity)
    return COURIER_OK
}

@_cdecl("courier_engine_watch_network")
public func courier_engine_watch_network(_ engine: OpaquePointer?, _ enable: Int32) -> Int32 {
    guard let engine = CEngine.fromHandle(engine) else { return CourierError.Code.misuse.c }
    engine.watchNetwork(enable != 0)
    return COURIER_OK
}

@_cdecl("courier_engine_next_network")
public func courier_engine_next_network(_ engine: OpaquePointer?, _ kind: UnsafeMutablePointer<Int32>?,
                                        _ interface: UnsafeMutablePointer<CChar>?, _ capacity: Int) -> Int32 {
    guard let engine = CEngine.fromHandle(engine) else { return CourierError.Code.misuse.c }
    guard let status = engine.popNetworkChange() else { return CourierError.Code.notFound.c }
    kind?.pointee = code(of: status.kind)
    writeText(status.interface, interface, capacity)
    return COURIER_OK
}

@_cdecl("courier_network_watch")
public func courier_network_watch(_ callback: courier_network_fn?, _ user: UnsafeMutableRawPointer?, _ id: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let callback else { return CourierError.Code.misuse.c }
    let context = UncheckedSendable((callback, user))
    let assigned = Runtime.shared.addNetworkObserver { status in
        let (callback, user) = context.value
        callback(user, code(of: status.kind), status.interface)
    }
    id?.pointee = Int32(assigned)
    return COURIER_OK
}

@_cdecl("courier_network_unwatch")
public func courier_network_unwatch(_ id: Int32) {
    Runtime.shared.removeNetworkObserver(Int(id))
}

@_cdecl("courier_network_set_override")
public func courier_network_set_override(_ kind: Int32) -> Int32 {
    guard kind >= -1, Int(kind) < networkKinds.count else { return CourierError.Code.invalidArgument.c }
    Runtime.shared.setNetworkOverride(kind < 0 ? nil : networkKinds[Int(kind)])
    return COURIER_OK
}

@_cdecl("courier_queue_follow_network")
public func courier_queue_follow_network(_ wifi: Int32, _ wired: Int32, _ cellular: Int32, _ wifiOnly: Int32) -> Int32 {
    guard wifi >= 0, wired >= 0, cellular >= 0 else { return CourierError.Code.invalidArgument.c }
    SharedQueue.followNetwork(NetworkWidths(wifi: Int(wifi), wired: Int(wired), cellular: Int(cellular), wifiOnly: wifiOnly != 0))
    return COURIER_OK
}
