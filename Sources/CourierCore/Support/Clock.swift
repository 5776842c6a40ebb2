import CUV

/// Monotonic time in nanoseconds.
///
/// `uv_hrtime` reads CLOCK_MONOTONIC through the vDSO (no system call), so metrics can take
/// several timestamps per request without showing up in `strace -c`.
@inline(__always)
package func monotonicNanos() -> UInt64 { uv_hrtime() }

/// A span of time with nanosecond resolution, used for timeouts and metrics.
///
/// `Swift.Duration` is 128 bits and its arithmetic is not free; a transfer computes deadlines on
/// every request, so Courier keeps time as plain 64-bit nanoseconds internally and converts at the
/// public edge.
public struct Nanoseconds: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The raw count of nanoseconds.
    public var rawValue: UInt64

    /// Wraps a raw nanosecond count.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// Converts from a `Duration`, clamping negative values to zero and huge ones to `UInt64.max`.
    public init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 { self.rawValue = 0; return }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { self.rawValue = .max; return }
        let (sum, overflow2) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        self.rawValue = overflow2 ? .max : sum
    }

    /// Creates a value from milliseconds.
    public static func milliseconds(_ ms: UInt64) -> Nanoseconds {
        Nanoseconds(ms.multipliedReportingOverflow(by: 1_000_000).overflow ? .max : ms * 1_000_000)
    }

    /// Creates a value from (possibly fractional) seconds; negative values become zero.
    public static func seconds(_ s: Double) -> Nanoseconds {
        guard s > 0 else { return Nanoseconds(0) }
        let ns = s * 1e9
        return Nanoseconds(ns >= Double(UInt64.max) ? .max : UInt64(ns))
    }

    /// The value as fractional seconds, the unit curl's `-w` variables use.
    public var seconds: Double { Double(rawValue) / 1e9 }

    /// The value as a `Duration` for Swift APIs.
    public var duration: Duration { .nanoseconds(Int64(clamping: rawValue)) }

    public static func < (a: Nanoseconds, b: Nanoseconds) -> Bool { a.rawValue < b.rawValue }

    public var description: String {
        if rawValue >= 1_000_000_000 { return "\(seconds)s" }
        if rawValue >= 1_000_000 { return "\(Double(rawValue) / 1e6)ms" }
        return "\(Double(rawValue) / 1e3)µs"
    }
}

extension Nanoseconds {
    /// Whole milliseconds, rounded up, so a deadline on the loop's millisecond clock never fires
    /// before the duration has passed.
    @inline(__always)
    package var millisecondsRoundedUp: UInt64 {
        rawValue / 1_000_000 + (rawValue % 1_000_000 == 0 ? 0 : 1)
    }

    /// From a C caller's milliseconds, where 0 means "no limit" (the C ABI's convention).
    package static func limit(milliseconds: Int64) -> Nanoseconds? {
        milliseconds <= 0 ? nil : .milliseconds(UInt64(milliseconds))
    }
}

/// The loop-clock reading (milliseconds, `uv_now`) at which `duration` after `nowMillis` has
/// passed: `.max`, meaning never, for no limit, and saturating rather than wrapping to "now".
/// Every deadline in Courier is computed here.
@inline(__always)
package func deadlineMillis(after duration: Nanoseconds?, from nowMillis: UInt64) -> UInt64 {
    guard let duration else { return .max }
    let (sum, overflow) = nowMillis.addingReportingOverflow(duration.millisecondsRoundedUp)
    return overflow ? .max : sum
}

/// Seconds since 1970 by the wall clock (what the journal records as an entry's creation time).
package func wallClockSeconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec)
}
