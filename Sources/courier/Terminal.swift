import CourierCore
import Glibc

/// Unbuffered writes, so body bytes (written by the loop thread straight to the descriptor),
/// headers and `-w` output never overtake each other in a stdio buffer.
enum Terminal {
    /// When stdout is not a terminal, what goes there is gathered here and written 64 KiB at a
    /// time, and when the run ends (curl's stdio buffering: one write(2) for many small bodies).
    /// Written on the loop thread while the URLs run, on the main thread before and after.
    @exclusivity(unchecked) nonisolated(unsafe) static var stdoutBatch: [UInt8]?
    static var buffersStdout: Bool { stdoutBatch != nil }

    /// Starts buffering stdout if it is not a terminal (once, before the URLs run).
    static func bufferStdoutUnlessTerminal() {
        if !stdoutIsTerminal { stdoutBatch = [] }
    }

    static func write(_ text: String, to fd: Int32 = 1) {
        var text = text
        text.withUTF8 { write(bytes: UnsafeRawBufferPointer($0), to: fd) }
    }

    static func write(bytes: UnsafeRawBufferPointer, to fd: Int32 = 1) {
        if fd == 1, stdoutBatch != nil {
            stdoutBatch!.append(contentsOf: bytes)
            if stdoutBatch!.count >= 64 * 1024 { flushStdout() }
            return
        }
        writeAll(bytes, to: fd)
    }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 { if errno == EINTR { continue }; return }
            if n == 0 { return }
            offset += n
        }
    }

    /// Writes what the batch gathered (and keeps batching).
    static func flushStdout() {
        guard let pending = stdoutBatch, !pending.isEmpty else { return }
        stdoutBatch = []
        pending.withUnsafeBytes { writeAll($0, to: 1) }
        stdoutBatch!.reserveCapacity(pending.count)
    }

    /// -Z's meter, whose line a message on stderr must not continue (set before the URLs run).
    @exclusivity(unchecked) nonisolated(unsafe) static var meterLine: ParallelMeter?

    static func error(_ text: String) {
        meterLine?.breakLine()
        write(text, to: 2)
    }

    static var stderrIsTerminal: Bool { isatty(2) != 0 }
    static var stdoutIsTerminal: Bool { isatty(1) != 0 }

    static var columns: Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 { return Int(size.ws_col) }
        return 80
    }
}

/// curl's `-#` style bar on stderr: `###########        52.3%  1.2 MB/s`, redrawn when the
/// tenth of a percent changes (or, without a known size, at most ten times a second).
final class ProgressBar: ProgressDisplay, @unchecked Sendable {
    private var lastDrawn = -1
    private let startNanos = monotonicNanos()
    private var finished = false

    private var lastDrawNanos: UInt64 = 0

    func update(_ sample: ProgressSample) { update(received: sample.received, expected: sample.expected) }

    func finish(_ sample: ProgressSample) {
        update(sample)
        finish()
    }

    func update(received: UInt64, expected: UInt64?) {
        guard !finished else { return }
        let now = monotonicNanos()
        if expected == nil, now &- lastDrawNanos < 100_000_000 { return }
        lastDrawNanos = now
        let width = max(10, Terminal.columns - 28)
        let elapsed = Double(monotonicNanos() - startNanos) / 1e9
        let rate = elapsed > 0 ? Double(received) / elapsed : 0
        var line = "\r"
        if let expected, expected > 0 {
            let fraction = min(1, Double(received) / Double(expected))
            let filled = Int(fraction * Double(width))
            let permille = Int(fraction * 1000)
            if permille == lastDrawn { return }
            lastDrawn = permille
            line += String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
            line += " " + pad(String(permille / 10) + "." + String(permille % 10) + "%", 6)
        } else {
            line += pad(ProgressBar.bytes(Double(received)), width + 7)
        }
        line += "  " + ProgressBar.bytes(rate) + "/s  "
        Terminal.error(line)
    }

    func finish() {
        guard !finished else { return }
        finished = true
        Terminal.error("\n")
    }

    private func pad(_ s: String, _ n: Int) -> String {
        s.count >= n ? s : String(repeating: " ", count: n - s.count) + s
    }

    static func bytes(_ value: Double) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var v = value
        var unit = 0
        while v >= 1000, unit < units.count - 1 { v /= 1000; unit += 1 }
        let tenths = Int((v * 10).rounded())
        return unit == 0 ? "\(Int(v)) B" : "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}
