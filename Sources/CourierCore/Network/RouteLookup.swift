import CUV
import Glibc

/// The kernel's answer to "which way to this address?" (`courier_route_lookup`: an RTM_GETROUTE
/// request, what `ip route get` sends), for per-host reachability. Synchronous: the kernel answers
/// from its tables at once, so it runs on the loop thread like any other system call.
package enum RouteLookup {
    package static func route(to address: SocketAddress) -> HostReachability.Route {
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        let status = address.withSockaddr { courier_route_lookup($0, &name, name.count) }
        if status < 0 { return .unknown }
        if status > 0 { return .none(status) }
        return .via(name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }
}
