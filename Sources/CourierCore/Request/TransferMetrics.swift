/// Where a transfer's time went, and how its connection was obtained.
///
/// Timestamps are monotonic nanoseconds (`uv_hrtime`), zero when a phase did not happen (no DNS on a
/// reused connection). The durations below are what curl's `-w` timing variables and
/// `CURLINFO_*_TIME` report, plus the queue wait, which curl cannot separate.
public struct TransferMetrics: Sendable, Hashable {
    /// When the operation entered the shared queue.
    public var enqueuedAt: UInt64 = 0
    /// When it left the queue and started.
    public var startedAt: UInt64 = 0
    /// Name resolution start and end for the connection that served the last exchange.
    public var dnsStart: UInt64 = 0
    /// See `dnsStart`.
    public var dnsEnd: UInt64 = 0
    /// TCP connect start and end.
    public var connectStart: UInt64 = 0
    /// See `connectStart`.
    public var connectEnd: UInt64 = 0
    /// TLS handshake end (zero for http).
    public var tlsEnd: UInt64 = 0
    /// When the last exchange was handed to its connection.
    public var requestStart: UInt64 = 0
    /// When the last request byte was written.
    public var requestSent: UInt64 = 0
    /// When the first response byte of the last exchange arrived.
    public var firstByte: UInt64 = 0
    /// When the transfer ended.
    public var completedAt: UInt64 = 0
    /// Whether the last exchange ran on a connection that had served an earlier request.
    public var reusedConnection: Bool {
        get { flags & Self.reusedFlag != 0 }
        set { flags = newValue ? flags | Self.reusedFlag : flags & ~Self.reusedFlag }
    }
    /// Whether the last TLS handshake resumed an earlier session.
    public var tlsResumed: Bool {
        get { flags & Self.resumedFlag != 0 }
        set { flags = newValue ? flags | Self.resumedFlag : flags & ~Self.resumedFlag }
    }
    /// The yes/no facts in one field: metrics are copied into every response, and each stored
    /// field is one more step of that copy.
    private var flags: UInt8 = 0
    private static let reusedFlag: UInt8 = 1, resumedFlag: UInt8 = 2, coalescedFlag: UInt8 = 4, multiplexedFlag: UInt8 = 8
    /// Whether the last exchange shared its HTTP/2 connection with other streams (one had gone
    /// over it before, or was on it at the time).
    public var multiplexed: Bool {
        get { flags & Self.multiplexedFlag != 0 }
        set { flags = newValue ? flags | Self.multiplexedFlag : flags & ~Self.multiplexedFlag }
    }
    /// The HTTP/2 stream id of the last exchange; 0 over HTTP/1.
    public var streamID: Int32 = 0
    /// The certificate verification result of the last TLS connection (OpenSSL's X509_V_* code,
    /// 0 for success), as curl's `ssl_verify_result` reports it.
    public var tlsVerifyResult = 0
    /// Connections opened for this transfer (curl's `num_connects`).
    public var connectionsOpened = 0
    /// Redirects followed.
    public var redirects = 0
    /// Replays after a stale keep-alive connection.
    public var staleRetries = 0
    /// Continuations of a resumable download after a break (with `Range`).
    public var resumes = 0
    /// Retries the retry policy made (each a new attempt after an interval).
    public var retries = 0
    /// The response was another, identical request's (coalescing): this one sent nothing.
    public var coalesced: Bool {
        get { flags & Self.coalescedFlag != 0 }
        set { flags = newValue ? flags | Self.coalescedFlag : flags & ~Self.coalescedFlag }
    }
    /// Request bytes written (head and body), over all exchanges.
    public var bytesSent: UInt64 = 0
    /// Response body bytes received on the wire for the final response (before decoding).
    public var bodyBytesReceived: UInt64 = 0
    /// Response bytes after content decoding.
    public var bodyBytesDecoded: UInt64 = 0
    /// The remote address of the connection that carried the last exchange, as "ip:port"
    /// ("[::1]:443" for IPv6; "" when none did, as for a response served from the cache).
    public var remoteAddress: String { remoteEndpoint.description }
    /// The same, unformatted (what is stored: no string per request).
    package var remoteEndpoint = RemoteEndpoint()

    /// Creates empty metrics.
    public init() {}

    private static func span(_ from: UInt64, _ to: UInt64) -> Nanoseconds {
        from == 0 || to < from ? Nanoseconds(0) : Nanoseconds(to - from)
    }

    /// Time waiting in the shared queue.
    public var queueWait: Nanoseconds { Self.span(enqueuedAt, startedAt) }
    /// Name resolution time (zero on a reused connection).
    public var dns: Nanoseconds { Self.span(dnsStart, dnsEnd) }
    /// TCP connect time.
    public var connect: Nanoseconds { Self.span(connectStart, connectEnd) }
    /// TLS handshake time.
    public var tlsHandshake: Nanoseconds { Self.span(connectEnd, tlsEnd) }
    /// From start to the first response byte (curl's `time_starttransfer`, minus queueing).
    public var timeToFirstByte: Nanoseconds { Self.span(startedAt, firstByte) }
    /// From start to completion (curl's `time_total`, minus queueing).
    public var total: Nanoseconds { Self.span(startedAt, completedAt) }
    /// From entering the queue to completion.
    public var totalIncludingQueue: Nanoseconds { Self.span(enqueuedAt, completedAt) }

    /// Takes what a new connection's connect phase found (its first transfer, or the one that
    /// carries its failure).
    mutating func record(_ timings: ConnectTimings) {
        dnsStart = timings.dnsStart
        dnsEnd = timings.dnsEnd
        connectStart = timings.connectStart
        connectEnd = timings.connectEnd
        tlsEnd = timings.tlsEnd
        tlsResumed = timings.tlsResumed
        tlsVerifyResult = Int(timings.tlsVerifyResult)
        if timings.remoteEndpoint.isKnown { remoteEndpoint = timings.remoteEndpoint }
    }
}
