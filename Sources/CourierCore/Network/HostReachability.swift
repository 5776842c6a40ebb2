/// Whether one host can be reached now, and why Courier thinks so: the kernel's route to its
/// addresses (every routing table and rule, as `ip route get` asks), then what the latest
/// connection attempt to it since the network last changed came to (`HostOutcomes`).
///
/// A name is resolved first (through the same resolver and cache as connections), so a host
/// that does not resolve is unreachable for that reason, not merely "unknown".
public struct HostReachability: Sendable, Equatable, CustomStringConvertible {
    /// Why. The C ABI's COURIER_REACH_* values are these cases' positions (append only).
    public enum Reason: String, Sendable, CaseIterable {
        /// A connection to the host succeeded since the network last changed.
        case connected
        /// The kernel has a route to its address, and no recent attempt failed.
        case routed
        /// The kernel has no route to any of its addresses (no network, or none that leads there).
        case noRoute = "no-route"
        /// Its name does not resolve.
        case unresolvable
        /// The latest connection attempt was refused or found no way there.
        case connectFailed = "connect-failed"
        /// The latest connection attempt timed out.
        case timedOut = "timed-out"
    }

    public var host: String
    public var reason: Reason
    /// The interface the route leaves through ("" when there is none or the system does not say).
    public var interface: String
    /// The address the answer is about ("" when the name did not resolve).
    public var address: String

    package init(host: String, reason: Reason, interface: String = "", address: String = "") {
        self.host = host
        self.reason = reason
        self.interface = interface
        self.address = address
    }

    /// Whether a request to the host can be expected to get through.
    public var isReachable: Bool { reason == .connected || reason == .routed }

    /// `example.com reachable routed eth0`: what `courier --watch-network URL` prints.
    public var description: String {
        "\(host) \(isReachable ? "reachable" : "unreachable") \(reason.rawValue)\(interface.isEmpty ? "" : " \(interface)")"
    }

    /// What the kernel said of one address.
    package enum Route: Equatable, Sendable {
        /// A route through this interface ("" when not named).
        case via(String)
        /// No way there (the errno: ENETUNREACH, EHOSTUNREACH, EACCES).
        case none(Int32)
        /// The question could not be asked (netlink refused): decided by the network status.
        case unknown
    }

    /// The verdict from the routes to the host's addresses (in resolver order), the latest
    /// connection outcome (nil when there was none recently), and whether the network is up
    /// (used only when the routes are unknown). Pure.
    package static func decide(host: String, addresses: [String], routes: [Route], outcome: HostOutcomes.Outcome?,
                               networkUp: Bool) -> HostReachability {
        var routed: (address: String, interface: String)?
        for (index, route) in routes.enumerated() {
            let address = index < addresses.count ? addresses[index] : ""
            switch route {
            case .via(let interface):
                if routed == nil { routed = (address, interface) }
            case .unknown:
                let loopback = address.hasPrefix("127.") || address == "::1"
                if routed == nil, networkUp || loopback { routed = (address, "") }
            case .none:
                continue
            }
        }
        guard let routed else {
            return HostReachability(host: host, reason: .noRoute, address: addresses.first ?? "")
        }
        let reason: Reason
        switch outcome {
        case .connected?: reason = .connected
        case .failed(let failure)?: reason = failure
        case nil: reason = .routed
        }
        return HostReachability(host: host, reason: reason, interface: routed.interface, address: routed.address)
    }
}
