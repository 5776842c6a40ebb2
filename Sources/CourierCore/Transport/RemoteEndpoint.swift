import CUV
import Glibc

/// The address a connection went to, kept small and free of references: every transfer's
/// metrics get a copy, also on a reused connection, so it costs a few stores rather than a
/// string's reference counting. Formatted ("127.0.0.1:8080", "[::1]:443") only when asked.
package struct RemoteEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// 0 for none, else AF_INET or AF_INET6.
    private var family: UInt8 = 0
    private var port: UInt16 = 0
    /// The address bytes in network order (IPv4 uses the first four).
    private var bytes: (UInt64, UInt64) = (0, 0)

    package init() {}

    package init(_ address: SocketAddress) {
        switch address.family {
        case AF_INET:
            family = UInt8(AF_INET)
            address.withSockaddr { raw in
                raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    withUnsafeMutableBytes(of: &bytes) { $0.storeBytes(of: v4.pointee.sin_addr, as: in_addr.self) }
                }
            }
        case AF_INET6:
            family = UInt8(AF_INET6)
            address.withSockaddr { raw in
                raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    withUnsafeMutableBytes(of: &bytes) { $0.storeBytes(of: v6.pointee.sin6_addr, as: in6_addr.self) }
                }
            }
        default:
            return
        }
        port = address.port
    }

    /// Whether a connection was made (a transfer answered from the cache has none).
    package var isKnown: Bool { family != 0 }

    package static func == (a: RemoteEndpoint, b: RemoteEndpoint) -> Bool {
        a.family == b.family && a.port == b.port && a.bytes.0 == b.bytes.0 && a.bytes.1 == b.bytes.1
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(family)
        hasher.combine(port)
        hasher.combine(bytes.0)
        hasher.combine(bytes.1)
    }

    /// "ip:port", "[ipv6]:port", or "" when none.
    package var description: String {
        guard isKnown else { return "" }
        return Int32(family) == AF_INET6 ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }

    /// The address alone ("127.0.0.1", "::1"), "" when none.
    package var ip: String {
        guard isKnown else { return "" }
        var text = [CChar](repeating: 0, count: 64)
        var copy = bytes
        withUnsafeBytes(of: &copy) { raw in
            if Int32(family) == AF_INET6 {
                var v6 = sockaddr_in6()
                v6.sin6_family = sa_family_t(AF_INET6)
                v6.sin6_addr = raw.load(as: in6_addr.self)
                _ = uv_ip6_name(&v6, &text, text.count)
            } else {
                var v4 = sockaddr_in()
                v4.sin_family = sa_family_t(AF_INET)
                v4.sin_addr = raw.load(as: in_addr.self)
                _ = uv_ip4_name(&v4, &text, text.count)
            }
        }
        return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
