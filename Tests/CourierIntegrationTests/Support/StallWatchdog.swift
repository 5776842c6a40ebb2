import CourierCore
import Foundation

/// Watches the test process for stalls of the loop thread and of Swift's cooperative pool (two
/// threads on this machine's two cores): once a second it hops onto each and times the hop. A
/// hop that takes more than `threshold` seconds is reported on stderr, and the first few stalls
/// also write every thread's stack to `.build/stall-N.txt` (gdb), so a slow run that fails says
/// which thread held the rest up instead of leaving timeouts in unrelated tests.
enum StallWatchdog {
    static let threshold = 3.0
    private static let lock = NSLock()
    nonisolated(unsafe) private static var loopAnswered = Date()
    nonisolated(unsafe) private static var poolAnswered = Date()
    nonisolated(unsafe) private static var dumps = 0

    static func start(packageRoot: String) {
        let thread = Thread {
            var reportedLoop = false, reportedPool = false
            while true {
                let asked = Date()
                Runtime.shared.execute { lock.withLock { loopAnswered = Date() } }
                Task.detached { lock.withLock { poolAnswered = Date() } }
                Thread.sleep(forTimeInterval: 1)
                let (loop, pool) = lock.withLock { (loopAnswered, poolAnswered) }
                let loopLate = loop < asked ? Date().timeIntervalSince(asked) : 0
                let poolLate = pool < asked ? Date().timeIntervalSince(asked) : 0
                if loopLate > threshold, !reportedLoop { reportedLoop = true; report("loop thread", loopLate, packageRoot) }
                if poolLate > threshold, !reportedPool { reportedPool = true; report("cooperative pool", poolLate, packageRoot) }
                if loopLate == 0 { reportedLoop = false }
                if poolLate == 0 { reportedPool = false }
            }
        }
        thread.name = "stall-watchdog"
        thread.start()
    }

    private static func report(_ what: String, _ seconds: Double, _ packageRoot: String) {
        let n = lock.withLock { () -> Int in dumps += 1; return dumps }
        var line = "courier-watchdog: the \(what) has not answered for \(String(format: "%.1f", seconds)) s"
        if n <= 3, FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") {
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
