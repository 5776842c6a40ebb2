import CourierCore

/// curl's timing variables for one transfer, kept as curl keeps them (lib/progress.c): each of
/// name lookup, connect, TLS handshake, pretransfer, posttransfer and starttransfer is the time
/// from the start of an exchange ("hop") to its event, and when a redirect is followed the hops'
/// times are added together; `time_redirect` is the time until the last hop started and
/// `time_total` the whole. A hop on a reused connection adds nothing for the phases it skipped.
///
/// So every variable is defined for every hop and they keep curl's order within one:
/// namelookup <= connect <= pretransfer <= posttransfer <= starttransfer <= total, with
/// appconnect between connect and pretransfer on a TLS connection (0 on plain http, as curl).
struct CurlTimeline {
    private(set) var namelookup: UInt64 = 0
    private(set) var connect: UInt64 = 0
    private(set) var appconnect: UInt64 = 0
    private(set) var pretransfer: UInt64 = 0
    private(set) var posttransfer: UInt64 = 0
    private(set) var starttransfer: UInt64 = 0
    /// When the current hop started (0 before the first).
    private(set) var hopStart: UInt64 = 0
    /// The transfer's start the hops are counted from (a retry starts the transfer again).
    private var transferStart: UInt64 = 0
    /// When the last hop started, relative to the transfer's start (curl's time_redirect).
    private(set) var redirect: UInt64 = 0

    /// A hop ended with `metrics` describing it: its times are added. `next` is when the
    /// following hop starts (a redirect being followed), nil for the last.
    mutating func hopEnded(_ metrics: TransferMetrics, next: UInt64?) {
        if metrics.startedAt != transferStart {
            // The first hop, or a retry: the transfer started (again) here.
            self = CurlTimeline()
            transferStart = metrics.startedAt
            hopStart = metrics.startedAt
        }
        guard hopStart > 0 else { return }
        func since(_ event: UInt64) -> UInt64 { event >= hopStart ? event - hopStart : 0 }
        // A reused connection skipped these phases: they end where the hop began.
        let lookup = metrics.dnsEnd > 0 ? since(metrics.dnsEnd) : 0
        let connected = metrics.connectEnd > 0 ? max(lookup, since(metrics.connectEnd)) : lookup
        let handshaken = metrics.tlsEnd > 0 && metrics.connectEnd > 0 ? max(connected, since(metrics.tlsEnd)) : 0
        let pre = max(connected, handshaken, metrics.requestStart > 0 ? since(metrics.requestStart) : 0)
        let post = max(pre, metrics.requestSent > 0 ? since(metrics.requestSent) : 0)
        let first = max(post, metrics.firstByte > 0 ? since(metrics.firstByte) : 0)
        namelookup += lookup
        connect += connected
        appconnect += handshaken
        pretransfer += pre
        if metrics.requestSent > 0 { posttransfer += post }
        if metrics.firstByte > 0 { starttransfer += first }
        if let next {
            hopStart = next
            redirect = next > transferStart ? next - transferStart : 0
        }
    }

    static func seconds(_ nanos: UInt64) -> Double { Double(nanos) / 1e9 }
}
