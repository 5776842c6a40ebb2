/// How urgently an operation should leave the shared queue.
///
/// MKNetworkKit inherited NSOperation's five levels; Courier keeps them. Within one priority the
/// queue is first-in first-out.
public enum Priority: Int, Sendable, Hashable, CaseIterable, Comparable {
    /// Prefetching and other work nobody is waiting for.
    case veryLow = 0
    /// Background refresh.
    case low = 1
    /// The default.
    case normal = 2
    /// What the user is looking at.
    case high = 3
    /// What the user is waiting for right now.
    case veryHigh = 4

    public static func < (a: Priority, b: Priority) -> Bool { a.rawValue < b.rawValue }
}
