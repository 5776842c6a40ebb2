/// How long a lent reader has met silence, as a value (see `ReadLease`): the idle limit counts
/// only while the reader waits for bytes, never while it is away doing something else, and a byte
/// starts it again. A reader that waits in `read` counts its waits; one that polls a descriptor
/// counts from its first read since the last byte that found nothing.
///
/// Pure: the lease measures the waits with the monotonic clock and reports them here, so the rule
/// is tested with any durations, without sleeping.
package struct LeaseSilence: Equatable, Sendable {
    /// The idle limit in nanoseconds; `.max`: none.
    package let limit: UInt64
    /// Nanoseconds spent waiting since the last byte.
    package private(set) var waited: UInt64 = 0
    /// When a read that does not wait first found nothing since the last byte (0: none did).
    package private(set) var quietSince: UInt64 = 0

    package init(limitMillis: UInt64) {
        let (nanos, overflow) = limitMillis.multipliedReportingOverflow(by: 1_000_000)
        limit = overflow ? .max : nanos
    }

    /// Bytes came.
    package mutating func heard() {
        waited = 0
        quietSince = 0
    }

    /// The longest the reader may wait now before the limit is reached (`.max`: no limit).
    package var allowance: UInt64 {
        guard limit != .max else { return .max }
        return limit > waited ? limit - waited : 0
    }

    /// The reader waited `nanos` and nothing came: true when that reached the limit.
    package mutating func waited(_ nanos: UInt64) -> Bool {
        waited &+= nanos
        return limit != .max && waited >= limit
    }

    /// A read that does not wait found nothing at `now` (the monotonic clock): nil when the
    /// silence has reached the limit, else how long until it will (for the reader's timer).
    package mutating func foundNothing(at now: UInt64) -> UInt64? {
        guard limit != .max else { return .max }
        if quietSince == 0 { quietSince = now }
        let quiet = now - quietSince
        return quiet >= limit ? nil : limit - quiet
    }
}
