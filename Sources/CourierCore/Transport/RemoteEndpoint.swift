import Glibc

/// The address a connection went to, kept small and free of references: every transfer's
/// metrics get a copy, also on a reused connection, so it costs a few stores rather than a
/// string's reference counting (or a `SocketAddress`'s 128 bytes of storage). Formatted
/// ("127.0.0.1:8080", "[::1]:443") by `SocketAddress`, only when asked.
package struct RemoteEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// 0 for none, else AF_INET or AF_INET6.
    private var family: UInt8 = 0
    private var port: UInt16 = 0
    /// The address's bytes as they sit in `in_addr` / `in6_addr` (IPv4 uses the first four).
    private var address: (high: UInt64, low: UInt64) = (0, 0)

    package init() {}

    package init(_ socket: SocketAddress) {
        socket.withSockaddr { raw in
            switch socket.family {
            case AF_INET:
                raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    withUnsafeMutableBytes(of: &address) { $0.storeBytes(of: v4.pointee.sin_addr, as: in_addr.self) }
                }
            case AF_INET6:
                raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    withUnsafeMutableBytes(of: &address) { $0.storeBytes(of: v6.pointee.sin6_addr, as: in6_addr.self) }
                }
            default:
                return
            }
            family = UInt8(socket.family)
            port = socket.port
        }
    }

    /// Whether a connection was made (a transfer answered from the cache has none).
    package var isKnown: Bool { family != 0 }

    package static func == (a: RemoteEndpoint, b: RemoteEndpoint) -> Bool {
        a.family == b.family && a.port == b.port && a.address == b.address
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(family)
        hasher.combine(port)
        hasher.combine(address.high)
        hasher.combine(address.low)
    }

    /// "ip:port", "[ipv6]:port", or "" when none.
    package var description: String { socketAddress?.description ?? "" }

    /// The address alone ("127.0.0.1", "::1"), "" when none.
    package var ip: String { socketAddress?.ipDescription ?? "" }

    /// The socket address again, for `SocketAddress`'s formatting; nil when none.
    private var socketAddress: SocketAddress? {
        let stored = address
        switch Int32(family) {
        case AF_INET:
            var v4 = sockaddr_in()
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            v4.sin_addr = withUnsafeBytes(of: stored) { $0.load(as: in_addr.self) }
            return withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0) } }
        case AF_INET6:
            var v6 = sockaddr_in6()
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            v6.sin6_addr = withUnsafeBytes(of: stored) { $0.load(as: in6_addr.self) }
            return withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0) } }
        default:
            return nil
        }
    }
}
