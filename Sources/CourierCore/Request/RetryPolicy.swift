/// When and how often a failed request is sent again (OCNet's retry request, curl's `--retry`).
///
/// A retry waits for its interval holding nothing — no connection, no slot of the queue's width —
/// and then joins the shared queue again. What may be retried is one rule (`mayRetry`):
///
/// - the request is idempotent (GET, HEAD, PUT, DELETE, OPTIONS, TRACE), carries an
///   `Idempotency-Key`, or `retriesNonIdempotent` is set; and its body can be sent again (a one-shot
///   stream cannot);
/// - the failure is transient: the connection could not be made or timed out, or it broke (reset,
///   closed, silent) before any response head arrived; or the response's status is in `statuses`
///   (408, 429, 502, 503, 504). A TLS verification failure is never transient; with
///   `retriesAllErrors` (curl's `--retry-all-errors`) every failure of the origin is;
/// - `Retry-After` (seconds or an HTTP date) lengthens the wait; one longer than
///   `retryAfterLimit` is not waited for (the response is the result);
/// - the origin's retry budget has tokens left (see `RetryBudgets`: nine retries from a full budget,
///   then about one per five successes), unless `usesBudget` is off: a failing origin is not
///   hammered by every caller at once;
/// - a connect that failed for want of a route (`.noRoute`: the link is down) takes no token,
///   and a retry whose interval ends with the network monitor still saying "no network" waits
///   for the network to come back (at most a minute, or to the total deadline) rather than
///   spend an attempt that cannot leave the machine (Alamofire's OfflineRetrier, MKNetworkKit's
///   queue that waits out an outage).
public struct RetryPolicy: Sendable, Hashable {
    /// How many times a request may be sent again after its first attempt (0: never).
    public var count: Int
    /// The wait before each retry: the first before the first retry, and so on; the last value
    /// repeats when the list is shorter than `count` (or doubles, with `exponentialBackoff`). An
    /// empty list means a second between attempts (OCNet's default), as a list of `[.seconds(1)]`.
    public var intervals: [Nanoseconds]
    /// Past the end of `intervals`, each wait doubles (up to `maxInterval`) instead of repeating.
    public var exponentialBackoff: Bool
    /// The longest wait backoff grows to.
    public var maxInterval: Nanoseconds
    /// Each wait is drawn at random between half of it and all of it, so callers that failed
    /// together do not come back together.
    public var jitter: Bool
    /// A `Retry-After` longer than this is not waited for: the response is the result.
    public var retryAfterLimit: Nanoseconds
    /// No retry starts later than this after the first attempt started (curl's
    /// `--retry-max-time`); nil: no limit.
    public var maxTime: Nanoseconds?
    /// Retries methods that are not idempotent (POST, PATCH) without an `Idempotency-Key`.
    public var retriesNonIdempotent: Bool
    /// Retries every failure of the origin, not only transient ones (curl's `--retry-all-errors`).
    public var retriesAllErrors: Bool
    /// Response statuses that are retried.
    public var statuses: Set<Int>
    /// Whether retries draw on the origin's budget shared by the whole process (on by default;
    /// off: this request retries whatever others did).
    public var usesBudget: Bool

    /// Statuses retried by default: 408 Request Timeout, 429 Too Many Requests, 502, 503, 504.
    public static let defaultStatuses: Set<Int> = [408, 429, 502, 503, 504]

    /// No retries (the default of every request).
    public static let none = RetryPolicy(count: 0)

    public init(count: Int, intervals: [Nanoseconds] = [.seconds(1)], exponentialBackoff: Bool = false,
                maxInterval: Nanoseconds = .seconds(60), jitter: Bool = false, retryAfterLimit: Nanoseconds = .seconds(60),
                maxTime: Nanoseconds? = nil, retriesNonIdempotent: Bool = false, retriesAllErrors: Bool = false,
                statuses: Set<Int> = RetryPolicy.defaultStatuses, usesBudget: Bool = true) {
        self.count = max(0, count)
        self.intervals = intervals
        self.exponentialBackoff = exponentialBackoff
        self.maxInterval = maxInterval
        self.jitter = jitter
        self.retryAfterLimit = retryAfterLimit
        self.maxTime = maxTime
        self.retriesNonIdempotent = retriesNonIdempotent
        self.retriesAllErrors = retriesAllErrors
        self.statuses = statuses
        self.usesBudget = usesBudget
    }

    /// The wait when `intervals` is empty (OCNet's `retryTimeIntervals` default).
    static let defaultInterval = Nanoseconds.seconds(1)

    /// The wait before retry number `retry` (1 for the first), before Retry-After and jitter.
    package func interval(beforeRetry retry: Int) -> Nanoseconds {
        if retry <= intervals.count { return intervals[retry - 1] }
        // (An empty list is one of a second.)
        let last = intervals.last ?? Self.defaultInterval
        guard exponentialBackoff else { return last }
        var wait = last.rawValue
        for _ in max(intervals.count, 1)..<retry {
            let (doubled, overflow) = wait.multipliedReportingOverflow(by: 2)
            wait = overflow ? .max : doubled
            if wait >= maxInterval.rawValue { return maxInterval }
        }
        return Nanoseconds(min(wait, maxInterval.rawValue))
    }

    /// Whether a request with this method, these headers and this body may be sent twice.
    package func permits(method: HTTPMethod, hasIdempotencyKey: Bool, replayableBody: Bool) -> Bool {
        count > 0 && replayableBody && (method.isIdempotent || hasIdempotencyKey || retriesNonIdempotent)
    }

    /// Whether `reason` is one this policy retries (`responseStarted`: a head had arrived when the
    /// failure came, so the server may have acted on the request).
    package func retries(_ reason: RetryReason, responseStarted: Bool) -> Bool {
        switch reason {
        case .status(let status):
            return statuses.contains(status)
        case .failure(let error):
            if retriesAllErrors { return error.isOriginFailure }
            return Self.isTransient(error, responseStarted: responseStarted)
        }
    }

    /// Failures that say nothing about the request itself: the next attempt may well succeed.
    package static func isTransient(_ error: CourierError, responseStarted: Bool) -> Bool {
        switch error.code {
        case .connectFailed, .noRoute, .connectTimeout, .proxyConnect, .proxyTunnelClosed:
            return true
        case .firstByteTimeout, .connectionReset, .emptyReply, .sendFailed:
            return !responseStarted
        default:
            return false
        }
    }

    /// The wait before retry number `retry`, or nil when the policy does not wait that long:
    /// `retryAfter` (the server's wish) lengthens the interval and must be within
    /// `retryAfterLimit`; the retry must start before `maxTime` after `elapsed` (time since the
    /// first attempt started) and before `deadlineLeft` (what the total deadline leaves). `random`
    /// in [0, 1) draws the jitter.
    package func wait(beforeRetry retry: Int, retryAfter: Nanoseconds?, elapsed: Nanoseconds,
                      deadlineLeft: Nanoseconds?, random: Double) -> Nanoseconds? {
        guard retry >= 1, retry <= count else { return nil }
        var wait = interval(beforeRetry: retry).rawValue
        if jitter { wait = wait / 2 + UInt64(Double(wait / 2) * min(max(random, 0), 1)) }
        if let retryAfter {
            guard retryAfter <= retryAfterLimit else { return nil }
            wait = max(wait, retryAfter.rawValue)
        }
        let (at, overflow) = elapsed.rawValue.addingReportingOverflow(wait)
        if let maxTime, overflow || at > maxTime.rawValue { return nil }
        if let deadlineLeft, wait >= deadlineLeft.rawValue { return nil }
        return Nanoseconds(wait)
    }

    /// The wait a `Retry-After` field asks for (RFC 9110 section 10.2.3): delay seconds, or an
    /// HTTP date relative to `now` (epoch seconds); nil when absent or unreadable.
    package static func retryAfter(_ value: String?, now: Int64) -> Nanoseconds? {
        guard let value = value?.trimmingASCIISpaces, !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            guard value.utf8.count <= 10, let seconds = UInt64(value) else { return Nanoseconds(.max) }
            return Self.seconds(seconds)
        }
        guard let date = HTTPDate.parse(value, now: now) else { return nil }
        return date <= now ? Nanoseconds(0) : Self.seconds(UInt64(date - now))
    }

    /// Whole seconds as nanoseconds, saturating (a date centuries ahead is "very long", not a trap
    /// — found by the retryafter fuzz target).
    private static func seconds(_ seconds: UInt64) -> Nanoseconds {
        let (nanos, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return Nanoseconds(overflow ? .max : nanos)
    }
}

/// Why an attempt was followed by another: what the operation and its metrics report for each retry.
public enum RetryReason: Sendable, Hashable {
    /// The attempt failed with this error.
    case failure(CourierError)
    /// The attempt's response had this status.
    case status(Int)
}

extension String {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingASCIISpaces: String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }
}
