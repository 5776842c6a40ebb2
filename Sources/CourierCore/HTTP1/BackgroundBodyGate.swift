import Glibc

/// Holds the request bodies of background operations (below `.normal`: uploads, prefetching)
/// while operations the user waits for are running, so their bytes stop filling a slow link's
/// queue ahead of the view's requests. The scheduler lets those requests start beside the
/// uploads; this gets them the link: on a 3G uplink each upload keeps seconds of bytes queued,
/// and every request and acknowledgement of the view would wait behind them.
///
/// A body holds at most `maxHold` per stretch of foreground work (a long foreground stream must
/// not starve uploads), and its socket keeps few unsent bytes in the kernel
/// (`TCP_NOTSENT_LOWAT`), so a hold reaches the link within a round trip or two. Loop thread.
package final class BackgroundBodyGate {
    /// Whether foreground operations are running (the executor answers from its scheduler;
    /// nil, as for a connection without an executor: never).
    package var foregroundRunning: (() -> Bool)?
    /// Which stretch of foreground work this is: a body yields once per stretch.
    private(set) var stretch: UInt64 = 0
    private var waiting: [() -> Void] = []
    /// The longest a body waits for one stretch of foreground work, in milliseconds.
    static let maxHold: UInt64 = 10_000
    /// Unsent bytes a background body's socket keeps at most (the rest stays in the body).
    static let unsentLimit: Int32 = 16 << 10

    package init() {}

    /// Whether a background body must wait now.
    var isClosed: Bool { foregroundRunning?() ?? false }

    /// Whether bodies are waiting for the foreground work to end.
    package var hasWaiting: Bool { !waiting.isEmpty }

    /// `resume` runs when the stretch of foreground work ends.
    func wait(_ resume: @escaping () -> Void) {
        waiting.append(resume)
    }

    /// The foreground work ended: every held body goes on, and the next stretch begins afresh.
    package func open() {
        stretch &+= 1
        let resumes = waiting
        waiting = []
        for resume in resumes { resume() }
    }

    /// Keeps at most `unsentLimit` unsent bytes in `descriptor`'s kernel buffer (or, `limited`
    /// false, the system's default again).
    static func limitUnsent(_ descriptor: Int32, _ limited: Bool) {
        var value: Int32 = limited ? unsentLimit : 0
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NOTSENT_LOWAT, &value, socklen_t(MemoryLayout<Int32>.size))
    }
}
