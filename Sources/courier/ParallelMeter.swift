import CourierCore

/// curl's meter for `-Z`: one line for all the transfers together, redrawn (`\r`) at most twice a
/// second and once at the end, under curl's parallel header:
///
///     DL% UL%  Dled  Uled  Xfers  Live Total     Current  Left    Speed
///     100 --   1000k     0    20     0  0:00:01  0:00:01 --:--:--  742k
///
/// DL%/UL% appear only when every transfer so far announced its size (`--` otherwise); Xfers is
/// the transfers started, Live those still running; sizes and times as the single meter writes
/// them. Loop thread only: the jobs report from there, one at a time.
final class ParallelMeter: @unchecked Sendable {
    private let startNanos = monotonicNanos()
    private var lastDrawNanos: UInt64 = 0
    private var headerShown = false
    private var started = 0
    private var live = 0
    private var received: UInt64 = 0
    private var sent: UInt64 = 0
    private var expected: UInt64 = 0
    private var sendTotal: UInt64 = 0
    /// Whether some transfer's download (or upload) size is unknown.
    private var receiveSizeUnknown = false
    private var sendSizeUnknown = false
    /// (time, bytes moved) at each drawing, the last five seconds: the current speed.
    private var history: [(nanos: UInt64, bytes: UInt64)] = []

    /// A line is drawn and not yet ended.
    private var midLine = false

    static let header = "DL% UL%  Dled  Uled  Xfers  Live Total     Current  Left    Speed\n"

    /// Ends the drawn line, so that a message (a transfer's error) starts a line of its own; the
    /// next drawing starts below it.
    func breakLine() {
        guard midLine else { return }
        midLine = false
        Terminal.write("\n", to: 2)
    }

    /// A transfer starts.
    func added() {
        started += 1
        live += 1
    }

    /// A transfer moved from `old` to `new` (its previous and latest samples; nil before the first).
    func moved(from old: ProgressSample?, to new: ProgressSample) {
        received += new.received &- (old?.received ?? 0)
        sent += new.sent &- (old?.sent ?? 0)
        if old == nil || old?.expected != new.expected {
            expected = expected &- (old?.expected ?? 0) &+ (new.expected ?? 0)
        }
        if old == nil || old?.sendTotal != new.sendTotal {
            sendTotal = sendTotal &- (old?.sendTotal ?? 0) &+ (new.sendTotal ?? 0)
        }
        draw(final: false)
    }

    /// A transfer ended (its last sample went through `moved` first).
    func ended(expectedKnown: Bool, sendTotalKnown: Bool, sentSomething: Bool) {
        live -= 1
        if !expectedKnown { receiveSizeUnknown = true }
        if sentSomething, !sendTotalKnown { sendSizeUnknown = true }
        draw(final: false)
    }

    /// The last line and a newline, once every transfer ended.
    func finish() {
        draw(final: true)
    }

    private func draw(final: Bool) {
        let now = monotonicNanos()
        guard final || !headerShown || now &- lastDrawNanos >= 500_000_000 else { return }
        if !headerShown {
            headerShown = true
            Terminal.write(Self.header, to: 2)
        }
        lastDrawNanos = now
        history.append((now, received + sent))
        history.removeAll { now &- $0.nanos > 5_000_000_000 }
        let elapsed = Double(now &- startNanos) / 1e9
        Terminal.write(line(elapsed: elapsed) + (final ? "\n" : ""), to: 2)
        midLine = !final
    }

    private func line(elapsed: Double) -> String {
        func percent(_ done: UInt64, _ total: UInt64, unknown: Bool) -> String {
            guard !unknown, total > 0 else { return "-- " }
            return ProgressMeter.pad(String(min(100, done * 100 / total)), 3)
        }
        let downloadPercent = percent(received, expected, unknown: receiveSizeUnknown)
        let uploadPercent = percent(sent, sendTotal, unknown: sendSizeUnknown || sendTotal == 0)
        var speed = 0.0
        if let first = history.first, let last = history.last, last.nanos > first.nanos {
            speed = Double(last.bytes - first.bytes) / (Double(last.nanos - first.nanos) / 1e9)
        } else if elapsed > 0 {
            speed = Double(received + sent) / elapsed
        }
        let totalBytes = expected + sendTotal
        let knownTotal = !receiveSizeUnknown && !sendSizeUnknown && totalBytes > 0
        let rate = elapsed > 0 ? Double(received + sent) / elapsed : 0
        let totalTime = knownTotal && rate > 0 ? Double(totalBytes) / rate : nil
        let left = totalTime.map { max(0, $0 - elapsed) }
        return "\r" + downloadPercent + " " + uploadPercent + " " + ProgressMeter.size(Double(received)) + " "
            + ProgressMeter.size(Double(sent)) + " " + ProgressMeter.pad(String(started), 5) + " "
            + ProgressMeter.pad(String(live), 5) + "  " + ProgressMeter.time(totalTime) + " "
            + ProgressMeter.time(elapsed) + " " + ProgressMeter.time(left) + " " + ProgressMeter.size(speed)
    }
}
