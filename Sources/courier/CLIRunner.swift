import CourierCore
import Dispatch

/// Runs the command line's URLs on Courier's loop thread, in a window (one at a time, or twice
/// the parallel width with -Z): a job starts when the window has room, and is reported (its file
/// settled, its -w line and errors printed) there as soon as it and every job before it ended, so
/// results come in URL order. The main thread only waits for the last one: one URL after another
/// costs no thread hop per URL, and the next request goes out on the connection the previous one
/// just left in the pool.
final class CLIRunner: @unchecked Sendable {
    private let urls: URLList
    private let window: Int
    /// --rate: the least time between two transfer starts, in milliseconds (0: none).
    private let startInterval: UInt64
    private let parallelMeter: ParallelMeter?
    /// When the next transfer may start under --rate (loop milliseconds), and whether a timer
    /// waits for it.
    @exclusivity(unchecked) private var nextStartAt: UInt64 = 0
    @exclusivity(unchecked) private var waitingForRate = false
    // Loop thread only (so not checked for overlapping access at run time: a dynamic check costs
    // about 60 instructions, four times per URL).
    /// The jobs in flight, oldest first from `inFlightHead`: a concrete array, because CourierCore's
    /// generic Deque is called unspecialized from another module (Swift 6.3 does not inline
    /// `@inlinable package` code), which cost about 1,000 instructions per URL.
    @exclusivity(unchecked) private var inFlight: [CLIJob?] = []
    @exclusivity(unchecked) private var inFlightHead = 0
    @exclusivity(unchecked) private var cursor = URLList.Cursor()
    @exclusivity(unchecked) private var advancing = false
    @exclusivity(unchecked) private var advanceAgain = false
    @exclusivity(unchecked) private var exitCode: Int32 = 0
    private let finished = DispatchSemaphore(value: 0)

    /// `rate`: at most `count` starts per `seconds` (curl's --rate: above 1000 per second it
    /// does not hold transfers back at all).
    init(urls: URLList, window: Int, rate: (count: Int, seconds: Double)?, parallelMeter: ParallelMeter?) {
        self.urls = urls
        self.window = max(1, window)
        self.parallelMeter = parallelMeter
        let interval = rate.map { $0.seconds * 1000 / Double($0.count) } ?? 0
        startInterval = interval >= 1 ? UInt64(interval) : 0
    }

    /// Runs every URL; the exit code of the last job that failed (0 when none did).
    func run() -> Int32 {
        guard urls.count > 0 else { return 0 }
        Runtime.shared.executeOrRunHere { [self] in advance() }
        finished.wait()
        return exitCode
    }

    /// --rate: whether the next transfer may start now; if not, a timer starts it when it may.
    private func mayStartNow() -> Bool {
        guard startInterval > 0, cursor.made < urls.count else { return true }
        let now = monotonicNanos() / 1_000_000
        if now >= nextStartAt {
            nextStartAt = now + startInterval
            return true
        }
        waitingForRate = true
        Runtime.shared.executeAfter(milliseconds: nextStartAt - now) { [self] in
            waitingForRate = false
            advance()
        }
        return false
    }

    /// Reports what ended in order, then fills the window. A job that ends at once (it could not
    /// start) asks again from inside; that is folded into this call's loop.
    private func advance() {
        if advancing {
            advanceAgain = true
            return
        }
        advancing = true
        repeat {
            advanceAgain = false
            while inFlightHead < inFlight.count, let first = inFlight[inFlightHead], first.isDone {
                // The slot lets go of the job at once (with its transfer and, under -Z, its body).
                inFlight[inFlightHead] = nil
                inFlightHead += 1
                if inFlightHead == inFlight.count {
                    inFlight.removeAll(keepingCapacity: true)
                    inFlightHead = 0
                } else if inFlightHead >= 1024 {
                    inFlight.removeFirst(inFlightHead)
                    inFlightHead = 0
                }
                first.report()
                if first.exitCode != 0 { exitCode = first.exitCode }
            }
            while inFlight.count - inFlightHead < window, !waitingForRate, mayStartNow(), let (url, output, context) = urls.next(&cursor) {
                let job = CLIJob(index: cursor.made - 1, rawURL: url, output: output, context: context)
                job.onDone = { [unowned self] in advance() }
                inFlight.append(job)
                job.start()
            }
        } while advanceAgain
        advancing = false
        if inFlightHead == inFlight.count, cursor.made == urls.count {
            parallelMeter?.finish()
            Terminal.flushStdout()
            finished.signal()
        }
    }
}

/// The command line's URLs, each made when its turn comes (a glob of a million URLs holds no
/// million strings), with the output it pairs with.
struct URLList {
    struct Argument {
        var pattern: URLGlob.Pattern
        /// Its -o name (with `#N` to fill in), or whether -O names its files.
        var template: String?
        var remoteName: Bool
        /// -G's query, added to each URL.
        var query: String?
        /// Whether the -o name has `#N` to fill in (asked once, not per URL).
        let templateHasValues: Bool
        /// What its group (the URLs between two --next) shares.
        let context: CLIContext

        init(pattern: URLGlob.Pattern, template: String?, remoteName: Bool, query: String?, context: CLIContext) {
            self.pattern = pattern
            self.template = template
            self.remoteName = remoteName
            self.query = query
            self.context = context
            templateHasValues = template?.utf8.contains(UInt8(ascii: "#")) ?? false
        }
    }

    /// Where the next URL comes from.
    struct Cursor {
        var argument = 0
        var index = 0
        /// URLs made so far.
        var made = 0
    }

    let arguments: [Argument]
    let count: Int

    init(arguments: [Argument]) {
        self.arguments = arguments
        count = arguments.reduce(0) { $0 + $1.pattern.count }
    }

    /// The next URL, its output and its group's context, or nil after the last.
    func next(_ cursor: inout Cursor) -> (url: String, output: CLIJob.Output, context: CLIContext)? {
        while cursor.argument < arguments.count, cursor.index >= arguments[cursor.argument].pattern.count {
            cursor.argument += 1
            cursor.index = 0
        }
        guard cursor.argument < arguments.count else { return nil }
        let argument = arguments[cursor.argument]
        let expansion = argument.pattern.expansion(at: cursor.index, values: argument.templateHasValues)
        cursor.index += 1
        cursor.made += 1
        let output: CLIJob.Output = argument.template.map { .file(URLGlob.outputName($0, values: expansion.values)) }
            ?? (argument.remoteName ? .remoteName : .stdout)
        return (Self.adding(argument.query, to: expansion.url), output, argument.context)
    }

    /// `url` with -G's query (before any fragment).
    private static func adding(_ query: String?, to url: String) -> String {
        guard let query, !query.isEmpty else { return url }
        let fragment = url.firstIndex(of: "#").map { url[$0...] } ?? ""
        let base = url.dropLast(fragment.count)
        return base + (base.utf8.contains(UInt8(ascii: "?")) ? "&" : "?") + query + fragment
    }
}
