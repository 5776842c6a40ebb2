/// What an exchange on a connection came to.
package enum ExchangeOutcome {
    /// The response is complete; `reusable` says whether the connection may serve another request.
    case success(reusable: Bool)
    /// The exchange failed; `replay` when the request provably never reached the server's
    /// application (a stale keep-alive connection) and may be sent once more.
    case failure(CourierError, replay: Bool)
}

/// What an HTTP/1 connection tells its owner (the pool's executor), on the loop thread.
///
/// The connection holds no pointer to the queue layer: everything it needs from above comes
/// through this protocol and `HTTP1Resources`, so a test can own a connection directly. The
/// owner also holds the origins' retry budgets, which a response head's status retry asks
/// (`RetryApproval`).
package protocol HTTP1ConnectionDelegate: RetryApproval {
    /// The connection is open and idle: hand it a request or park it.
    func connectionEstablished(_ connection: HTTP1Connection)
    /// Connecting failed; the connection is closed.
    func connectionFailed(_ connection: HTTP1Connection, error: CourierError)
    /// An idle connection closed (server EOF, idle timeout, unsolicited bytes).
    func idleConnectionClosed(_ connection: HTTP1Connection)
    /// The exchange of `transfer` ended; the connection is idle again or closed.
    func exchangeFinished(_ connection: HTTP1Connection, _ transfer: Transfer, outcome: ExchangeOutcome)
}

/// Memory every connection of one loop borrows while it works: connections run one at a time on
/// the loop thread, so one head buffer and one span block serve them all, and a pooled idle
/// connection owns neither.
package final class HTTP1Resources {
    /// The request head is encoded here, then written straight from it.
    @exclusivity(unchecked) package var headBuffer = RawBuffer(capacity: 4096)
    /// Header spans of the response being parsed.
    package let spanScratch = ResponseDecoder.SpanScratch()
    /// A chunked body's size lines, written from here (like the head, the bytes are sent or
    /// copied before the write returns).
    @exclusivity(unchecked) package var chunkLine = RawBuffer(capacity: 64)
    /// Where background bodies wait for foreground work (the executor tells it when that runs).
    package let backgroundGate = BackgroundBodyGate()
    /// Runs a closure on the loop the connections run on, from any thread, or drops it once that
    /// loop is going away: how a `ReadLease` lent to another thread comes back. Without it (the
    /// fuzzer's connections), no reads are lent.
    package let post: (@Sendable (@escaping @Sendable () -> Void) -> Void)?

    package init(post: (@Sendable (@escaping @Sendable () -> Void) -> Void)? = nil) {
        self.post = post
    }

    deinit {
        headBuffer.free()
        chunkLine.free()
    }
}
