/// How busy the shared queue is: what an activity indicator shows.
public struct QueueActivity: Sendable, Hashable, CustomStringConvertible {
    /// Operations started and not yet finished (including those connecting or redirecting).
    public var running: Int
    /// Operations waiting for a slot.
    public var queued: Int

    /// Creates a snapshot.
    package init(running: Int, queued: Int) {
        self.running = running
        self.queued = queued
    }

    /// Everything not yet finished: MKNetworkKit's `operationCount`.
    public var total: Int { running + queued }

    public var description: String { "running \(running), queued \(queued)" }
}

/// Settings of the shared queue that survive a runtime restart.
package struct QueueConfiguration: Sendable {
    /// Operations running at once, process-wide.
    package var width = 6
    /// Operations (and connections) per host unless a host has its own limit.
    package var defaultHostLimit = 6
    /// Per-host overrides, by lower-cased host name.
    package var hostLimits: [String: Int] = [:]
    /// The widths the queue follows as the network changes; nil once the application set a width
    /// of its own.
    package var networkWidths: NetworkWidths? = NetworkWidths()
    /// The kind of network forced by the application (nil: what the monitor sees, or
    /// COURIER_NETWORK).
    package var networkOverride: NetworkKind?
}
