import Glibc

/// Reads the network's state from procfs and sysfs: the default routes, then what sysfs says of
/// their interfaces. `root` prefixes every path (tests point it at a recorded tree). Blocking
/// reads of a few small kernel files: tens of microseconds, done on the loop only when netlink
/// said something changed.
package enum NetworkProbe {
    package static func status(root: String = "") -> NetworkStatus {
        let defaults = RouteTable.ipv4Defaults(read(root + "/proc/net/route") ?? "")
            + RouteTable.ipv6Defaults(read(root + "/proc/net/ipv6_route") ?? "")
        var interfaces: [String: InterfaceFacts] = [:]
        for route in defaults where interfaces[route.interface] == nil {
            interfaces[route.interface] = facts(route.interface, root: root)
        }
        return RouteTable.status(defaults: defaults, interfaces: interfaces)
    }

    /// What sysfs says of interface `name`.
    package static func facts(_ name: String, root: String = "") -> InterfaceFacts {
        let base = root + "/sys/class/net/" + name
        var uevent: [String: String] = [:]
        for line in (read(base + "/uevent") ?? "").split(separator: "\n") {
            let pair = line.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { uevent[String(pair[0])] = String(pair[1]) }
        }
        var driver = ""
        var buffer = [CChar](repeating: 0, count: 512)
        let length = readlink(base + "/device/driver", &buffer, buffer.count - 1)
        if length > 0 {
            let target = buffer[0..<length].map { UInt8(bitPattern: $0) }
            driver = String(decoding: target.split(separator: UInt8(ascii: "/")).last ?? [], as: UTF8.self)
        }
        return InterfaceFacts(name: name,
                              linkType: Int(trimmed(read(base + "/type")) ?? "") ?? 1,
                              isWireless: access(base + "/wireless", F_OK) == 0 || access(base + "/phy80211", F_OK) == 0,
                              deviceType: uevent["DEVTYPE"] ?? "",
                              driver: driver,
                              operationalState: trimmed(read(base + "/operstate")) ?? "unknown")
    }

    /// A small file's text (at most 256 KiB: routing tables of thousands of routes fit).
    static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while bytes.count < 256 << 10 {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func trimmed(_ text: String?) -> String? {
        text.map { String($0.filter { $0 != "\n" && $0 != " " }) }
    }
}
