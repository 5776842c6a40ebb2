import CUV
import Glibc

/// Where a connection comes from: curl's `--interface` and `--local-port`, httpx's
/// `local_address`. Part of a `ConnectRoute`, so of the pool key: a connection bound one way never
/// serves a request that asked for another.
public struct LocalBinding: Sendable, Hashable {
    /// The local end: an address of this machine, or a network interface.
    public enum Source: Sendable, Hashable {
        /// An IP address of this machine ("127.0.0.2", "::1", "0.0.0.0" for any).
        case address(String)
        /// A network interface ("eth0"): bound to the device where allowed (root), else to the
        /// interface's address of the destination's family, as curl does.
        case interface(String)
    }

    public var source: Source?
    /// The local ports to choose from, the first free one (curl's `--local-port N-M`).
    public var ports: ClosedRange<UInt16>?

    public init(source: Source? = nil, ports: ClosedRange<UInt16>? = nil) {
        self.source = source
        self.ports = ports
    }

    /// curl's `--interface` argument: `if!NAME` an interface, `host!ADDRESS` an address, an IP
    /// address an address, anything else an interface name.
    public init(interface text: String) throws(CourierError) {
        if text.hasPrefix("if!") {
            self.init(source: .interface(String(text.dropFirst(3))))
        } else if text.hasPrefix("host!") {
            self.init(source: .address(String(text.dropFirst(5))))
        } else {
            self.init(source: SocketAddress(ipLiteral: text, port: 0) != nil ? .address(text) : .interface(text))
        }
        if case .address(let address) = source, SocketAddress(ipLiteral: address, port: 0) == nil {
            throw CourierError(.invalidArgument, "\(text): a local address is an IP address")
        }
        if case .interface(let name) = source, name.isEmpty || name.utf8.count >= Int(IFNAMSIZ) {
            throw CourierError(.invalidArgument, "\(text): not an interface name")
        }
    }

    /// curl's `--local-port NUM[-NUM]`.
    public static func ports(parsing text: String) throws(CourierError) -> ClosedRange<UInt16> {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count <= 2, let low = UInt16(parts[0]), low > 0, let high = parts.count == 2 ? UInt16(parts[1]) : low, high >= low else {
            throw CourierError(.invalidArgument, "\(text): expected a port or a range, 1-65535")
        }
        return low...high
    }

    /// Binds `descriptor` (a socket of `destination`'s family, not connected yet) as asked: nil
    /// when done, else why not (`.localBind`).
    func bind(_ descriptor: Int32, toward destination: SocketAddress) -> CourierError? {
        var local = SocketAddress(ipLiteral: destination.isIPv6 ? "::" : "0.0.0.0", port: 0)!
        switch source {
        case .address(let text):
            guard let address = SocketAddress(ipLiteral: text, port: 0), address.isIPv6 == destination.isIPv6 else {
                return CourierError(.localBind, "\(text) cannot reach \(destination.ipDescription) (another address family)")
            }
            local = address
        case .interface(let name):
            // The device itself where allowed (root); else its address, as curl falls back.
            let bound = name.withCString { setsockopt(descriptor, SOL_SOCKET, SO_BINDTODEVICE, $0, socklen_t(name.utf8.count + 1)) } == 0
            if bound, ports == nil { return nil }
            if !bound {
                guard let address = Self.address(of: name, ipv6: destination.isIPv6) else {
                    return CourierError(.localBind, "interface \(name) has no \(destination.isIPv6 ? "IPv6" : "IPv4") address")
                }
                local = address
            }
        case nil:
            break
        }
        var lastError: Int32 = 0
        for port in ports ?? 0...0 {
            local.port = port
            let status = local.withSockaddr { Glibc.bind(descriptor, $0, local.length) }
            if status == 0 { return nil }
            lastError = errno
            guard lastError == EADDRINUSE else { break }
        }
        let range = ports.map { " port \($0.lowerBound)\($0.count > 1 ? "-\($0.upperBound)" : "")" } ?? ""
        return CourierError(.localBind, "bind \(local.ipDescription)\(range): \(String(cString: strerror(lastError)))")
    }

    /// The first address of interface `name` of the family asked for.
    private static func address(of name: String, ipv6: Bool) -> SocketAddress? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var cursor = list
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr, String(cString: entry.pointee.ifa_name) == name,
                  let found = SocketAddress(UnsafePointer(address)), found.isIPv6 == ipv6 else { continue }
            return found
        }
        return nil
    }
}
