import Glibc

/// Holds the request bodies of background operations (below `.normal`: uploads, prefetching)
/// while operations the user waits for are running, so their bytes stop filling a slow link's
/// queue ahead of the view's requests. The scheduler lets those requests start beside the
/// uploads; this gets them the link: on a 3G uplink each upload keeps seconds of bytes queued,
/// and every request and acknowledgement of the view would wait behind them.
///
/// A held body looks again every `recheck` (its connection's timer: nothing on the path of a
/// request that ends), goes on once no foreground work runs, and holds at most `maxHold` before
/// going on anyway, not to hold again until the foreground work has stopped once (a long
/// foreground stream must not starve uploads). Its socket keeps few unsent bytes in the kernel
/// (`TCP_NOTSENT_LOWAT`), so a hold reaches the link within a round trip or two. Loop thread.
package final class BackgroundBodyGate {
    /// Whether foreground operations are running (the executor answers from its scheduler;
    /// nil, as for a connection without an executor: never).
    package var foregroundRunning: (() -> Bool)?
    /// How often a held body looks whether it may go on, in milliseconds.
    static let recheck: UInt64 = 100
    /// The longest a body holds, in milliseconds.
    static let maxHold: UInt64 = 10_000
    /// Unsent bytes a background body's socket keeps at most (the rest stays in the body).
    static let unsentLimit: Int32 = 16 << 10

    package init() {}

    /// Whether a background body must wait now.
    var isClosed: Bool { foregroundRunning?() ?? false }

    /// Keeps at most `unsentLimit` unsent bytes in `descriptor`'s kernel buffer (or, `limited`
    /// false, the system's default again).
    static func limitUnsent(_ descriptor: Int32, _ limited: Bool) {
        var value: Int32 = limited ? unsentLimit : 0
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NOTSENT_LOWAT, &value, socklen_t(MemoryLayout<Int32>.size))
    }
}
