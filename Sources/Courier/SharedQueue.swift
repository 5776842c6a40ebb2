import CourierCore

/// The one queue every `Engine` (and every C or FFI caller) shares: MKNetworkKit's central idea.
///
/// Its width is the number of operations running at once in the whole process; per-host limits
/// bound how many of those (and how many connections) target one host. Both change at run time.
/// A width of 0 holds every operation until it is raised again (MKNetworkKit's wifi-only mode on a
/// cellular network).
public enum SharedQueue {
    /// Operations running at once, process-wide (default 6). A negative width counts as 0.
    public static var width: Int {
        get { Runtime.shared.width }
        set { Runtime.shared.setWidth(max(0, newValue)) }
    }

    /// Operations and connections per host, for hosts without their own limit (default 6). Limits
    /// below 1 count as 1: a host can always be reached.
    public static var defaultHostLimit: Int {
        get { Runtime.shared.defaultHostLimit }
        set { Runtime.shared.setDefaultHostLimit(max(1, newValue)) }
    }

    /// Sets, or with nil clears, one host's limit (below 1 counts as 1).
    public static func setLimit(_ limit: Int?, forHost host: String) {
        Runtime.shared.setHostLimit(limit.map { max(1, $0) }, host: host)
    }

    /// Running and queued operations right now (readable from any thread, no lock).
    public static var activity: QueueActivity { Runtime.shared.activity }

    /// Calls `handler` whenever the activity changes (coalesced per loop turn), on Courier's loop
    /// thread: keep it short. Keep the returned observation alive for as long as you want updates.
    public static func observeActivity(_ handler: @escaping @Sendable (QueueActivity) -> Void) -> ActivityObservation {
        ActivityObservation(id: Runtime.shared.addActivityObserver(handler))
    }

    /// Activity changes as an async sequence (for a SwiftUI-style indicator or a log task).
    public static func activityUpdates() -> AsyncStream<QueueActivity> {
        AsyncStream { continuation in
            let id = Runtime.shared.addActivityObserver { continuation.yield($0) }
            continuation.onTermination = { _ in Runtime.shared.removeActivityObserver(id) }
        }
    }

    /// Cancels every queued or running operation, of every engine, that `predicate` selects.
    /// The predicate runs on the loop thread.
    public static func cancelAll(where predicate: @escaping @Sendable (OperationInfo) -> Bool) {
        Runtime.shared.cancelAll { predicate(OperationInfo($0)) }
    }

    /// Cancels every operation whose URL contains `fragment` (MKNetworkKit's
    /// `cancelOperationsContainingURLString:`).
    public static func cancelAll(urlContaining fragment: String) {
        cancelAll { $0.url.description.contains(fragment) }
    }

    /// Fails everything in flight with `.shutdown`, closes every connection and stops the loop
    /// thread; the next request starts it again. For tests and orderly process exit. Do not call
    /// from a handler running on the loop thread.
    public static func shutdown() {
        Runtime.shared.shutdown()
    }
}

/// What `SharedQueue.cancelAll(where:)` can see of an operation.
public struct OperationInfo: Sendable {
    /// The request method.
    public let method: HTTPMethod
    /// The current URL (after any redirects so far).
    public let url: CourierURL
    /// The queue priority.
    public let priority: Priority
    /// The engine's identifier (`Engine.id`), 0 for none.
    public let engineID: Int

    init(_ transfer: Transfer) {
        method = transfer.method
        url = transfer.url
        priority = transfer.options.priority
        engineID = transfer.owner
    }
}

/// Keeps an activity observer registered; it is removed when this is released or `cancel`led.
public final class ActivityObservation: Sendable {
    private let id: Int

    init(id: Int) { self.id = id }

    /// Stops the updates.
    public func cancel() { Runtime.shared.removeActivityObserver(id) }

    deinit { cancel() }
}
