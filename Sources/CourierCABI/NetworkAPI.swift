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

@_cdecl("courier_network_status")
public func courier_network_status(_ kind: UnsafeMutablePointer<Int32>?, _ interface: UnsafeMutablePointer<CChar>?, _ capacity: Int) -> Int32 {
    guard !Runtime.shared.isOnLoopThread else { return CourierError.Code.misuse.c }
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var seen = NetworkStatus(kind: .none, interface: "")
    Runtime.shared.networkStatus { status in
        seen = status
        done.signal()
    }
    done.wait()
    kind?.pointee = code(of: seen.kind)
    if let interface, capacity > 0 {
        let bytes = Array(seen.interface.utf8.prefix(capacity - 1))
        for (index, byte) in bytes.enumerated() { interface[index] = CChar(bitPattern: byte) }
        interface[bytes.count] = 0
    }
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
