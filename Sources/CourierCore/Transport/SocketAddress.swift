import CUV
import Glibc

/// An IPv4 or IPv6 socket address, stored by value.
package struct SocketAddress: Sendable, CustomStringConvertible {
    package var storage = sockaddr_storage()

    /// Copies a `sockaddr` of either family; nil for other families.
    package init?(_ address: UnsafePointer<sockaddr>) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.copyMemory(from: UnsafeRawBufferPointer(start: address, count: MemoryLayout<sockaddr_in>.size))
            }
        case AF_INET6:
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.copyMemory(from: UnsafeRawBufferPointer(start: address, count: MemoryLayout<sockaddr_in6>.size))
            }
        default:
            return nil
        }
    }

    /// Parses an IP literal ("127.0.0.1", "::1"); nil for anything else, so host names go to DNS.
    package init?(ipLiteral host: String, port: UInt16) {
        var v4 = sockaddr_in()
        if uv_ip4_addr(host, Int32(port), &v4) == 0 {
            withUnsafeMutableBytes(of: &storage) { raw in
                withUnsafeBytes(of: &v4) { raw.copyMemory(from: $0) }
            }
            return
        }
        var v6 = sockaddr_in6()
        if uv_ip6_addr(host, Int32(port), &v6) == 0 {
            withUnsafeMutableBytes(of: &storage) { raw in
                withUnsafeBytes(of: &v6) { raw.copyMemory(from: $0) }
            }
            return
        }
        return nil
    }

    package var family: Int32 { Int32(storage.ss_family) }

    /// Whether this is an IPv6 address.
    package var isIPv6: Bool { family == AF_INET6 }

    /// The port, in host byte order.
    package var port: UInt16 {
        get {
            withUnsafeBytes(of: storage) { raw in
                // sin_port and sin6_port sit at the same offset, in network byte order.
                UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self))
            }
        }
        set {
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.storeBytes(of: newValue.bigEndian, toByteOffset: 2, as: UInt16.self)
            }
        }
    }

    /// The address's bytes in network order: 4 for IPv4, 16 for IPv6 (a SOCKS5 connect names it).
    package var addressBytes: [UInt8] {
        withUnsafeBytes(of: storage) { raw in
            // sin_addr sits at offset 4, sin6_addr at 8 (after the port and the flow label).
            isIPv6 ? Array(raw[8..<24]) : Array(raw[4..<8])
        }
    }

    /// The size of the address's `sockaddr_in` or `sockaddr_in6`.
    package var length: socklen_t {
        socklen_t(isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
    }

    /// Calls `body` with the address as a `sockaddr` pointer, for libuv.
    package func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>) -> R) -> R {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
        }
    }

    package var description: String {
        family == AF_INET6 ? "[\(ipDescription)]:\(port)" : "\(ipDescription):\(port)"
    }

    /// The address alone ("127.0.0.1", "::1").
    package var ipDescription: String {
        var buffer = [CChar](repeating: 0, count: 64)
        withSockaddr { address in
            if family == AF_INET6 {
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { _ = uv_ip6_name($0, &buffer, buffer.count) }
            } else {
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { _ = uv_ip4_name($0, &buffer, buffer.count) }
            }
        }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
