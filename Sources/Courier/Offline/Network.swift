import CourierCore

/// The network as Courier's loop sees it (netlink events, the default route's interface in
/// sysfs): what kind it is, and when it changes. The shared queue's width follows it
/// (`SharedQueue.followNetwork`), and an engine's outbox sends its frozen operations when it
/// comes back.
public enum Network {
    /// The status now (starts the loop if it is not running).
    public static func status() async -> NetworkStatus {
        await withCheckedContinuation { continuation in
            Runtime.shared.networkStatus { continuation.resume(returning: $0) }
        }
    }

    /// Whether `host` (a name or an IP literal) can be reached now: the kernel's route to its
    /// addresses (every routing table, as `ip route get`), then the latest connection attempt to
    /// it since the network changed — a host that refused or timed out a minute ago is
    /// unreachable though a route exists. A name is resolved first (as a connection would be).
    public static func reachability(of host: String) async -> HostReachability {
        await withCheckedContinuation { continuation in
            Runtime.shared.hostReachability(host) { continuation.resume(returning: $0) }
        }
    }

    /// `reachability(of:)` with a callback, called on Courier's loop thread.
    public static func reachability(of host: String, _ reply: @escaping @Sendable (HostReachability) -> Void) {
        Runtime.shared.hostReachability(host, reply)
    }

    /// Calls `handler` with each new status, on Courier's loop thread (keep it short). Keep the
    /// returned observation alive for as long as you want updates.
    public static func observe(_ handler: @escaping @Sendable (NetworkStatus) -> Void) -> NetworkObservation {
        NetworkObservation(id: Runtime.shared.addNetworkObserver(handler))
    }

    /// Each new status, as an async sequence.
    public static func updates() -> AsyncStream<NetworkStatus> {
        AsyncStream { continuation in
            let observation = observe { continuation.yield($0) }
            continuation.onTermination = { _ in observation.cancel() }
        }
    }

    /// Forces the kind of network for the whole process (tests, or an application that knows
    /// better: a metered hotspot seen as wifi); nil goes back to what the system says (or the
    /// `COURIER_NETWORK` environment variable: `wired`, `wifi`, `cellular`, `none`).
    public static func setOverride(_ kind: NetworkKind?) {
        Runtime.shared.setNetworkOverride(kind)
    }
}

/// A registration for network changes; cancelled by `cancel()` or when released.
public final class NetworkObservation: Sendable {
    private let id: Int

    init(id: Int) { self.id = id }

    /// Stops the updates.
    public func cancel() { Runtime.shared.removeNetworkObserver(id) }

    deinit { cancel() }
}

extension SharedQueue {
    /// The widths the queue follows as the network changes (6 on wifi and wired, 2 on cellular,
    /// 0 there in wifi-only mode), or nil when the application set a width of its own.
    public static var networkWidths: NetworkWidths? { Runtime.shared.networkWidths }

    /// Follows the network with `widths` from now on (the default until `width` is set); the
    /// current network's width applies at once. Operations already running are not disturbed when
    /// the width drops.
    public static func followNetwork(_ widths: NetworkWidths = NetworkWidths()) {
        Runtime.shared.followNetwork(widths)
    }
}
