/// What kind of network the default route leaves through (MKNetworkKit's reachability, for Linux).
public enum NetworkKind: String, Sendable, CaseIterable {
    /// No default route on an interface that is up: only loopback (and directly attached
    /// networks without a gateway) can be reached.
    case none
    /// Ethernet, a bridge, a VPN or anything not known to be wireless or a modem.
    case wired
    /// A wireless LAN interface (sysfs `wireless/` or `DEVTYPE=wlan`).
    case wifi
    /// A mobile broadband modem (`DEVTYPE=wwan`, the usual modem drivers and names, PPP).
    case cellular
}

/// The network as Courier sees it now.
public struct NetworkStatus: Sendable, Equatable, CustomStringConvertible {
    public var kind: NetworkKind
    /// The interface of the default route ("" for none).
    public var interface: String
    /// Whether the application forced this kind (configuration or COURIER_NETWORK).
    public var isOverridden: Bool

    public init(kind: NetworkKind, interface: String, isOverridden: Bool = false) {
        self.kind = kind
        self.interface = interface
        self.isOverridden = isOverridden
    }

    /// Whether hosts beyond this machine can be reached at all.
    public var isReachable: Bool { kind != .none }

    /// `wired eth0 reachable`: what `courier --watch-network` prints for each change.
    public var description: String {
        "\(kind.rawValue) \(interface.isEmpty ? "-" : interface) \(isReachable ? "reachable" : "unreachable")\(isOverridden ? " (override)" : "")"
    }
}
