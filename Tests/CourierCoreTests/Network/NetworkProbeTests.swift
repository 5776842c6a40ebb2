import Foundation
import Testing
@testable import CourierCore

/// Classification of the default route's interface from recorded procfs and sysfs trees (the
/// formats as this kernel writes them), without the hardware.
@Suite("Network classification")
struct NetworkProbeTests {
    /// An interface as sysfs shows it: (name, type, wireless dir, DEVTYPE, driver, operstate).
    struct Recorded {
        var name: String
        var type = 1
        var wireless = false
        var devtype = ""
        var driver = ""
        var state = "up"
    }

    /// Writes a tree with these interfaces and routing tables under a temporary root.
    func tree(_ interfaces: [Recorded], ipv4: String, ipv6: String = "") throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("courier-net-\(UUID().uuidString)").path
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/proc/net", withIntermediateDirectories: true)
        try ipv4.write(toFile: root + "/proc/net/route", atomically: true, encoding: .utf8)
        try ipv6.write(toFile: root + "/proc/net/ipv6_route", atomically: true, encoding: .utf8)
        for interface in interfaces {
            let base = root + "/sys/class/net/" + interface.name
            try fm.createDirectory(atPath: base, withIntermediateDirectories: true)
            try "\(interface.type)\n".write(toFile: base + "/type", atomically: true, encoding: .utf8)
            try "\(interface.state)\n".write(toFile: base + "/operstate", atomically: true, encoding: .utf8)
            var uevent = "INTERFACE=\(interface.name)\nIFINDEX=3\n"
            if !interface.devtype.isEmpty { uevent += "DEVTYPE=\(interface.devtype)\n" }
            try uevent.write(toFile: base + "/uevent", atomically: true, encoding: .utf8)
            if interface.wireless { try fm.createDirectory(atPath: base + "/wireless", withIntermediateDirectories: true) }
            if !interface.driver.isEmpty {
                let driverDirectory = root + "/sys/bus/drivers/" + interface.driver
                try fm.createDirectory(atPath: driverDirectory, withIntermediateDirectories: true)
                try fm.createDirectory(atPath: base + "/device", withIntermediateDirectories: true)
                try fm.createSymbolicLink(atPath: base + "/device/driver", withDestinationPath: driverDirectory)
            }
        }
        return root
    }

    static let header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
    /// A default route line through `interface` with `metric` (as /proc/net/route has it).
    static func defaultRoute(_ interface: String, metric: Int = 0) -> String {
        "\(interface)\t00000000\t010200C0\t0003\t0\t0\t\(metric)\t00000000\t0\t0\t0\n"
    }
    static func subnetRoute(_ interface: String) -> String {
        "\(interface)\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
    }

    @Test func theDefaultRoutesInterfaceDecides() throws {
        let cases: [(Recorded, NetworkKind)] = [
            (Recorded(name: "eth0", driver: "virtio_net"), .wired),
            (Recorded(name: "wlp2s0", wireless: true, devtype: "wlan", driver: "iwlwifi"), .wifi),
            (Recorded(name: "wlan0", wireless: true), .wifi),
            (Recorded(name: "wwan0", devtype: "wwan", driver: "qmi_wwan"), .cellular),
            (Recorded(name: "usb0", driver: "cdc_mbim"), .cellular),
            (Recorded(name: "rmnet_data0"), .cellular),
            (Recorded(name: "ppp0", type: 512, state: "unknown"), .cellular),
            (Recorded(name: "br0", devtype: "bridge"), .wired),
            (Recorded(name: "tun0", type: 65534, state: "unknown"), .wired),
        ]
        for (interface, kind) in cases {
            let root = try tree([interface], ipv4: Self.header + Self.defaultRoute(interface.name) + Self.subnetRoute(interface.name))
            defer { try? FileManager.default.removeItem(atPath: root) }
            let status = NetworkProbe.status(root: root)
            #expect(status == NetworkStatus(kind: kind, interface: interface.name), "\(interface.name): \(status)")
        }
    }

    @Test func theLowestMetricWinsAndDownInterfacesDoNotCount() throws {
        let wifi = Recorded(name: "wlan0", wireless: true), wired = Recorded(name: "eth0")
        let both = Self.header + Self.defaultRoute("wlan0", metric: 600) + Self.defaultRoute("eth0", metric: 100)
        let root = try tree([wifi, wired], ipv4: both)
        #expect(NetworkProbe.status(root: root).kind == .wired)
        let unplugged = try tree([wifi, Recorded(name: "eth0", state: "down")], ipv4: both)
        #expect(NetworkProbe.status(root: unplugged) == NetworkStatus(kind: .wifi, interface: "wlan0"))
        let nothing = try tree([Recorded(name: "eth0")], ipv4: Self.header + Self.subnetRoute("eth0"))
        #expect(NetworkProbe.status(root: nothing) == NetworkStatus(kind: .none, interface: ""), "a subnet is not a way out")
        let empty = try tree([], ipv4: "")
        #expect(!NetworkProbe.status(root: empty).isReachable)
        for path in [root, unplugged, nothing, empty] { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test func ipv6DefaultRoutesCountButNotTheLoopbacksRejectRoute() throws {
        // As this kernel writes /proc/net/ipv6_route: a default route via fd00::1 on eth0, and
        // the "unreachable" default a host without IPv6 lists on lo (RTF_REJECT).
        let viaEth0 = "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000003 00000000 00000003     eth0\n"
        let reject = "00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo\n"
        #expect(RouteTable.ipv6Defaults(viaEth0 + reject) == [.init(interface: "eth0", metric: 0x400)])
        let root = try tree([Recorded(name: "eth0")], ipv4: Self.header, ipv6: viaEth0 + reject)
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(NetworkProbe.status(root: root) == NetworkStatus(kind: .wired, interface: "eth0"), "IPv6 only")
    }

    @Test func widthsPerKind() {
        let widths = NetworkWidths()
        #expect(widths.width(for: .wifi) == 6 && widths.width(for: .wired) == 6 && widths.width(for: .cellular) == 2)
        #expect(widths.width(for: .none) == nil, "no network: the width stays")
        #expect(NetworkWidths(wifiOnly: true).width(for: .cellular) == 0)
    }
}
