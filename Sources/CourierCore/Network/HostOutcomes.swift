/// What the latest connection attempt to each host came to, the second half of per-host
/// reachability (the routing table is the first): a host whose last attempt was refused or timed
/// out is unreachable even though a route exists, until an attempt succeeds, the network changes
/// or the outcome is older than `freshMillis`.
///
/// Indexed by the pool keys' host key (a small integer), so recording one costs an array store per
/// new connection; a network change makes every outcome stale at once (an epoch), not by a sweep.
/// Pure: the executor records, the clock is passed in.
package struct HostOutcomes {
    package enum Outcome: Equatable, Sendable {
        case connected
        case failed(HostReachability.Reason)
    }

    private struct Entry {
        var outcome: Outcome
        var atMillis: UInt64
        var epoch: Int
    }

    private var entries: [Entry?] = []
    private var epoch = 0
    /// How long an outcome counts (one minute: a host refusing now may listen again soon).
    package var freshMillis: UInt64 = 60_000

    package init() {}

    /// The outcome a connection's end says of its host: failures that mean "no way there" count
    /// against it; any other failure (TLS, a bad response) happened after the host was reached.
    package static func outcome(of error: CourierError?) -> Outcome {
        guard let primary = error?.code.primary else { return .connected }
        if primary == .dnsFailure { return .failed(.unresolvable) }
        if primary == .connectFailed { return .failed(.connectFailed) }
        if primary == .timeout { return .failed(.timedOut) }
        return .connected
    }

    package mutating func record(_ outcome: Outcome, host: Int, nowMillis: UInt64) {
        guard host >= 0 else { return }
        if host >= entries.count { entries.append(contentsOf: repeatElement(nil, count: host - entries.count + 1)) }
        entries[host] = Entry(outcome: outcome, atMillis: nowMillis, epoch: epoch)
    }

    /// The latest outcome for `host` if it is recent and from the current network.
    package func outcome(host: Int?, nowMillis: UInt64) -> Outcome? {
        guard let host, host >= 0, host < entries.count, let entry = entries[host], entry.epoch == epoch,
              nowMillis &- entry.atMillis <= freshMillis else { return nil }
        return entry.outcome
    }

    /// The network changed: what was learned on the old one no longer says anything.
    package mutating func networkChanged() { epoch += 1 }
}
