/// The default routes in `/proc/net/route` and `/proc/net/ipv6_route`. Pure parsing: tested on
/// recorded tables.
package enum RouteTable {
    /// A default route: its interface and metric (lower wins).
    package struct DefaultRoute: Sendable, Equatable {
        package var interface: String
        package var metric: Int
    }

    /// IPv4: lines of `Iface Destination Gateway Flags RefCnt Use Metric Mask ...` in hex; a
    /// default route has destination and mask 0 and the RTF_UP flag (1).
    package static func ipv4Defaults(_ text: String) -> [DefaultRoute] {
        var routes: [DefaultRoute] = []
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 8, fields[1] == "00000000", fields[7] == "00000000",
                  let flags = Int(fields[3], radix: 16), flags & 1 != 0, let metric = Int(fields[6]) else { continue }
            routes.append(DefaultRoute(interface: String(fields[0]), metric: metric))
        }
        return routes
    }

    /// IPv6: `dest destlen src srclen nexthop metric refcnt use flags iface`, all hex; a default
    /// route is ::/0 with RTF_UP, not through the loopback device (the kernel lists rejecting
    /// "unreachable" defaults on `lo`).
    package static func ipv6Defaults(_ text: String) -> [DefaultRoute] {
        var routes: [DefaultRoute] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 10, fields[0] == "00000000000000000000000000000000", fields[1] == "00",
                  let flags = Int(fields[8], radix: 16), flags & 1 != 0, flags & 0x0200 == 0,
                  let metric = Int(fields[5], radix: 16), fields[9] != "lo" else { continue }
            routes.append(DefaultRoute(interface: String(fields[9]), metric: metric))
        }
        return routes
    }

    /// The status for these default routes and interfaces: the best-metric default route whose
    /// interface is up decides the kind.
    package static func status(defaults: [DefaultRoute], interfaces: [String: InterfaceFacts]) -> NetworkStatus {
        let usable = defaults.filter { interfaces[$0.interface]?.isUp ?? false }.sorted { $0.metric < $1.metric }
        guard let best = usable.first, let facts = interfaces[best.interface] else { return NetworkStatus(kind: .none, interface: "") }
        return NetworkStatus(kind: facts.kind, interface: best.interface)
    }
}
