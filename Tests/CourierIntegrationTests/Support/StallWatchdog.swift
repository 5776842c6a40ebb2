import CourierCore
import Foundation

/// Watches the test process for stalls of the loop thread and of Swift's cooperative pool (two
/// threads on this machine's two cores): once a second it hops onto each and times the hop. A
/// hop that takes more than `threshold` seconds is reported on stderr, and a stall that lasts
/// `dumpThreshold` writes every thread's stack to `.build/stall-N.txt` (gdb; twice at most), so a
/// slow run that fails says which thread held the rest up instead of leaving timeouts in
/// unrelated tests. gdb stops the whole process while it reads the stacks (seconds on a loaded
/// machine): dumping at every short stall would itself stall the run into failures.
enum StallWatchdog {
    static let threshold = 3.0
    static let dumpThreshold = 10.0
    private static let lock = NSLock()
    nonisolated(unsafe) private static var loopAnswered = Date()
    nonisolated(unsafe) private static var poolAnswered = Date()
    nonisolated(unsafe) private static var dumps = 0

    static func start(packageRoot: String) {
        let thread = Thread {
            var reportedLoop = false, reportedPool = false, dumpedLoop = false, dumpedPool = false
            // The oldest hop not answered yet: a new one is sent only once the last has landed, so
            // a stall's lateness keeps growing (a fresh hop every second would never look late).
            var loopAsked: Date?, poolAsked: Date?
            while true {
                let now = Date()
                let (loop, pool) = lock.withLock { (loopAnswered, poolAnswered) }
                if let asked = loopAsked, loop >= asked { loopAsked = nil }
                if let asked = poolAsked, pool >= asked { poolAsked = nil }
                if loopAsked == nil {
                    loopAsked = now
                    Runtime.shared.execute { lock.withLock { loopAnswered = Date() } }
                }
                if poolAsked == nil {
                    poolAsked = now
                    Task.detached { lock.withLock { poolAnswered = Date() } }
                }
                let loopLate = loopAsked.map { now.timeIntervalSince($0) } ?? 0
                let poolLate = poolAsked.map { now.timeIntervalSince($0) } ?? 0
                if loopLate > threshold, !reportedLoop { reportedLoop = true; report("loop thread", loopLate, packageRoot, stacks: false) }
                if poolLate > threshold, !reportedPool { reportedPool = true; report("cooperative pool", poolLate, packageRoot, stacks: false) }
                if loopLate > dumpThreshold, !dumpedLoop { dumpedLoop = true; report("loop thread", loopLate, packageRoot, stacks: true) }
                if poolLate > dumpThreshold, !dumpedPool { dumpedPool = true; report("cooperative pool", poolLate, packageRoot, stacks: true) }
                if loopLate == 0 { reportedLoop = false; dumpedLoop = false }
                if poolLate == 0 { reportedPool = false; dumpedPool = false }
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
        thread.name = "stall-watchdog"
        thread.start()
    }

    private static func report(_ what: String, _ seconds: Double, _ packageRoot: String, stacks: Bool) {
        var line = "courier-watchdog: the \(what) has not answered for \(String(format: "%.1f", seconds)) s"
        let n = stacks ? lock.withLock { () -> Int in dumps += 1; return dumps } : 0
        if stacks, n <= 2, FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") {
            let path = packageRoot + "/.build/stall-\(n).txt"
            let gdb = Process()
            gdb.executableURL = URL(fileURLWithPath: "/usr/bin/gdb")
            gdb.arguments = ["-batch", "-p", String(getpid()), "-ex", "thread apply all bt 25"]
            FileManager.default.createFile(atPath: path, contents: nil)
            if let out = FileHandle(forWritingAtPath: path) {
                gdb.standardOutput = out
                gdb.standardError = FileHandle.nullDevice
                if (try? gdb.run()) != nil { gdb.waitUntilExit(); line += "; stacks in \(path)" }
                try? out.close()
            }
        }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
