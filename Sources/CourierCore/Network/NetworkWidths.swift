/// The shared queue's width for each kind of network (MKNetworkKit: 6 on wifi, 2 on cellular, 0
/// there in wifi-only mode). Applied as the network changes while the queue follows the network
/// (the default); setting `SharedQueue.width` explicitly stops following.
public struct NetworkWidths: Sendable, Equatable {
    public var wifi: Int
    public var wired: Int
    public var cellular: Int
    /// Holds every operation (width 0) on a cellular network.
    public var wifiOnly: Bool

    public init(wifi: Int = 6, wired: Int = 6, cellular: Int = 2, wifiOnly: Bool = false) {
        self.wifi = wifi
        self.wired = wired
        self.cellular = cellular
        self.wifiOnly = wifiOnly
    }

    /// The width for `kind`; nil for no network, where the width stays as it was (loopback and
    /// directly attached hosts still work, and nothing else can start anyway).
    public func width(for kind: NetworkKind) -> Int? {
        switch kind {
        case .wifi: return max(0, wifi)
        case .wired: return max(0, wired)
        case .cellular: return wifiOnly ? 0 : max(0, cellular)
        case .none: return nil
        }
    }
}
