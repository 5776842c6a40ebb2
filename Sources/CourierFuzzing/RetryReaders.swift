import CourierCore

/// `Retry-After` as a server sends it, through the reader and the policy's wait: the first line is
/// the field's value, the bytes after it pick the policy (count, intervals, limits, jitter) and
/// the clocks. Invariants: delay-seconds read exactly (or as "very long" past ten digits), a date
/// is never a negative wait, and a wait is within the limits it was given whatever the numbers.
package enum RetryAfterReading {
    package static func run(_ input: UnsafeRawBufferPointer) {
        let parts = input.split(separator: 0x0A, maxSplits: 1, omittingEmptySubsequences: false)
        guard let line = parts.first else { return }
        let value = String(decoding: line, as: UTF8.self)
        let knobs = parts.count > 1 ? Array(parts[1]) : []
        func knob(_ index: Int) -> UInt64 { index < knobs.count ? UInt64(knobs[index]) : 0 }
        let now = Int64(knob(0)) << 24 | Int64(knob(1)) << 16 | 784_111_777

        let wait = RetryPolicy.retryAfter(value, now: now)
        var trimmed = Substring(value)
        while let c = trimmed.first, c == " " || c == "\t" { trimmed.removeFirst() }
        while let c = trimmed.last, c == " " || c == "\t" { trimmed.removeLast() }
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), trimmed.utf8.count <= 10 {
            precondition(wait == Nanoseconds(UInt64(trimmed)! * 1_000_000_000), "delay-seconds misread: \(value)")
        }

        let intervals = (0..<Int(knob(2) % 4)).map { Nanoseconds.milliseconds(knob(3 + $0) * 97) }
        let limit = Nanoseconds.milliseconds(knob(7) * 1000)
        let maxTime: Nanoseconds? = knob(8) == 0 ? nil : .milliseconds(knob(8) * 500)
        let policy = RetryPolicy(count: Int(knob(9) % 8), intervals: intervals, exponentialBackoff: knob(10) & 1 == 1,
                                 maxInterval: .milliseconds(knob(11) * 1000), jitter: knob(10) & 2 == 2,
                                 retryAfterLimit: limit, maxTime: maxTime)
        let elapsed = Nanoseconds.milliseconds(knob(12) * 100)
        let left: Nanoseconds? = knob(13) == 0 ? nil : .milliseconds(knob(13) * 250)
        for retry in 0...(policy.count + 1) {
            guard let chosen = policy.wait(beforeRetry: retry, retryAfter: wait, elapsed: elapsed, deadlineLeft: left,
                                           random: Double(knob(14)) / 256) else { continue }
            precondition(retry >= 1 && retry <= policy.count, "a wait for retry \(retry) of \(policy.count)")
            if let wait { precondition(wait <= limit && chosen >= wait, "Retry-After \(wait) gave \(chosen) (limit \(limit))") }
            if let maxTime { precondition(elapsed.rawValue + chosen.rawValue <= maxTime.rawValue, "past maxTime") }
            if let left { precondition(chosen < left, "past the total deadline") }
        }
    }
}
