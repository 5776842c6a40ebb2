import CourierCore

/// What a transfer has moved so far, for the meter and the bar.
struct ProgressSample {
    var received: UInt64
    var expected: UInt64?
    var sent: UInt64
    var sendTotal: UInt64?
}

/// The two displays of a transfer's progress on stderr: curl's meter and `-#`'s bar.
protocol ProgressDisplay: AnyObject, Sendable {
    func update(_ sample: ProgressSample)
    /// The last line and a newline (also after a failure: the error message starts a line of its own).
    func finish(_ sample: ProgressSample)
}

/// curl's default progress meter: two header lines, then one line redrawn (`\r`) at most once a
/// second and at the end, in curl's columns:
///
///       % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current
///                                      Dload  Upload   Total   Spent    Left  Speed
///     100  1024k  100  1024k    0     0  9817k      0 --:--:-- --:--:-- --:--:-- 9817k
///
/// Sizes in five characters (curl's: bytes below 100000, then k, M, G, T with one decimal while it
/// fits), times as H:MM:SS (`--:--:--` when unknown), the current speed over the last five seconds.
final class ProgressMeter: ProgressDisplay, @unchecked Sendable {
    private let startNanos = monotonicNanos()
    private var lastDrawNanos: UInt64 = 0
    private var headerShown = false
    private var finished = false
    /// (time, bytes received + sent) once a second, the last five seconds (current speed).
    private var history: [(nanos: UInt64, bytes: UInt64)]

    init() {
        history = [(startNanos, 0)]
    }

    static let header = """
          % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current
                                         Dload  Upload   Total   Spent    Left  Speed

        """

    func update(_ sample: ProgressSample) {
        let now = monotonicNanos()
        guard !finished, !headerShown || now &- lastDrawNanos >= 1_000_000_000 else { return }
        draw(sample, now: now)
    }

    func finish(_ sample: ProgressSample) {
        guard !finished else { return }
        draw(sample, now: monotonicNanos())
        finished = true
        Terminal.error("\n")
    }

    private func draw(_ sample: ProgressSample, now: UInt64) {
        if !headerShown {
            headerShown = true
            Terminal.error(Self.header)
        }
        lastDrawNanos = now
        history.append((now, sample.received + sample.sent))
        if history.count > 2 { history.removeAll { now &- $0.nanos > 5_000_000_000 } }
        Terminal.error(Self.line(sample, elapsed: Double(now - startNanos) / 1e9, current: currentSpeed()))
    }

    private func currentSpeed() -> Double {
        guard let first = history.first, let last = history.last, last.nanos > first.nanos else { return 0 }
        return Double(last.bytes - first.bytes) / (Double(last.nanos - first.nanos) / 1e9)
    }

    /// One redrawn line.
    static func line(_ s: ProgressSample, elapsed: Double, current: Double) -> String {
        let total = (s.expected ?? 0) + (s.sendTotal ?? 0)
        let moved = s.received + s.sent
        let totalPercent = total > 0 ? moved * 100 / total : 0
        let receivedPercent = (s.expected ?? 0) > 0 ? s.received * 100 / s.expected! : 0
        let sentPercent = (s.sendTotal ?? 0) > 0 ? s.sent * 100 / s.sendTotal! : 0
        let download = elapsed > 0 ? Double(s.received) / elapsed : 0
        let upload = elapsed > 0 ? Double(s.sent) / elapsed : 0
        let known = (s.expected != nil || s.sendTotal != nil) && total > 0
        let rate = elapsed > 0 ? Double(moved) / elapsed : 0
        let totalTime = known && rate > 0 ? Double(total) / rate : nil
        let left = totalTime.map { max(0, $0 - elapsed) }
        return "\r" + pad(String(totalPercent), 3) + " " + size(Double(total)) + "  "
            + pad(String(receivedPercent), 3) + " " + size(Double(s.received)) + "  "
            + pad(String(sentPercent), 3) + " " + size(Double(s.sent)) + "  "
            + size(download) + "  " + size(upload) + " "
            + time(totalTime) + " " + time(elapsed) + " " + time(left) + " " + size(current)
    }

    /// curl's five-character sizes.
    static func size(_ value: Double) -> String {
        let bytes = UInt64(max(0, value))
        let k: UInt64 = 1024, m = k * 1024, g = m * 1024, t = g * 1024
        if bytes < 100_000 { return pad(String(bytes), 5) }
        if bytes < 10_000 * k { return pad(String(bytes / k), 4) + "k" }
        if bytes < 100 * m { return pad(String(bytes / m), 2) + "." + String(bytes % m / (m / 10)) + "M" }
        if bytes < 10_000 * m { return pad(String(bytes / m), 4) + "M" }
        if bytes < 100 * g { return pad(String(bytes / g), 2) + "." + String(bytes % g / (g / 10)) + "G" }
        if bytes < 10_000 * g { return pad(String(bytes / g), 4) + "G" }
        return pad(String(bytes / t), 4) + "T"
    }

    /// curl's eight-character times: H:MM:SS, days past 99 hours, `--:--:--` when unknown.
    static func time(_ seconds: Double?) -> String {
        guard let seconds, seconds >= 1 else { return "--:--:--" }
        let whole = Int(seconds)
        let hours = whole / 3600
        if hours <= 99 {
            return pad(String(hours), 2) + ":" + two(whole / 60 % 60) + ":" + two(whole % 60)
        }
        let days = hours / 24
        return days < 1000 ? pad(String(days), 3) + "d " + two(hours % 24) + "h" : pad(String(days), 7) + "d"
    }

    private static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : String(n) }

    static func pad(_ s: String, _ n: Int) -> String {
        s.count >= n ? s : String(repeating: " ", count: n - s.count) + s
    }
}
