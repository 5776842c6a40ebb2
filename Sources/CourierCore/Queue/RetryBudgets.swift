/// A retry budget per origin (the pool's key: scheme, host, port and TLS settings), shared by
/// every caller in the process (gRPC's retry throttling): an origin starts with `capacity`
/// tokens; each failed attempt that could be retried takes one, each success gives back `refill`;
/// retries are allowed only while more than half the tokens are left (nine retries from a full
/// budget; then about one for every five successes).
///
/// So an origin that fails for everyone gets a handful of retries in total, not `count` retries
/// from each of a thousand callers at once, and recovers its budget as its answers succeed again.
/// Pure value; the executor owns one per loop and consults it on the loop thread.
package struct RetryBudgets: Sendable {
    package static let capacity = 20.0
    package static let refill = 0.2

    /// Tokens per origin (pool key); origins never seen, or back to full, have no entry.
    private var tokens: [Int: Double] = [:]

    package init() {}

    /// An attempt to `host` failed in a way its policy would retry: takes a token and says whether
    /// the retry may go ahead.
    package mutating func attemptFailed(host: Int) -> Bool {
        let left = tokens[host] ?? Self.capacity
        let after = max(0, left - 1)
        tokens[host] = after
        return after > Self.capacity / 2
    }

    /// An exchange with `host` ended with a response of `status`: anything but a server error, a
    /// timeout or a throttling answer (what retry policies retry) gives back part of a token.
    @inline(__always)
    package mutating func exchangeSucceeded(host: Int, status: Int) {
        // (Every exchange lands here; with no origin short of tokens it costs one test.)
        guard !tokens.isEmpty, status < 500, status != 408, status != 429, let left = tokens[host] else { return }
        let after = left + Self.refill
        if after >= Self.capacity {
            tokens[host] = nil
        } else {
            tokens[host] = after
        }
    }

    /// The tokens `host` has (tests, statistics).
    package func tokens(for host: Int) -> Double { tokens[host] ?? Self.capacity }
}
