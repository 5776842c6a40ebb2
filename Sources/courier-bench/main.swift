import Courier
import CourierCore
import Dispatch
import Glibc
import CUV
import CourierHeader

// courier-bench URL N C [--api swift|c] [--close] [--cacert FILE] [--no-resume] [--hold] [--output PATH]
//               [--cache memory|disk] [--cache-dir DIR] [--unique] [--http 1.1|2|2-only]
//
// N GET requests with at most C in flight through Courier's shared queue; every status and body
// size is checked, and one JSON line is printed:
//   {"requests":N,"ok":...,"bytes":...,"wall_s":...}
// Wrap it in /usr/bin/time (or read getrusage as benchmarks/run.py does) for CPU and memory.
// Completions run on the loop thread and start the next request there, the way an event-driven
// client would; no thread hop or lock sits between one request and the next.
//
// --cache memory|disk gives the engine an HTTP cache (disk: in --cache-dir, with no memory tier,
// so every hit reads a file); one request before the clock starts stores the response, so a
// fresh one makes every timed request a hit. --unique adds ?n=<i> to each request (every request
// a miss of its own, stored). --http chooses the HTTP version (default: HTTP/2 where the server
// agrees by ALPN); the JSON then says how many connections the requests opened ("connections").

struct Arguments {
    var url = ""
    var total = 0
    var concurrency = 1
    var api = "swift"
    var close = false
    var caFile: String?
    var hold = false
    var output: String?
    /// TLS session resumption off: every new connection pays a full handshake.
    var noResume = false
    var cache: String?
    var cacheDirectory: String?
    var unique = false
    /// The HTTP version preference (COURIER_HTTP_VERSION_* for the C driver).
    var httpVersion = HTTPVersionPreference.http2Preferred
    var versionGiven = false
}

func parseArguments() -> Arguments {
    var args = Arguments()
    var positional: [String] = []
    var i = 1
    let argv = CommandLine.arguments
    while i < argv.count {
        switch argv[i] {
        case "--api": i += 1; args.api = argv[i]
        case "--close": args.close = true
        case "--cacert": i += 1; args.caFile = argv[i]
        case "--hold": args.hold = true
        case "--no-resume": args.noResume = true
        case "--output": i += 1; args.output = argv[i]
        case "--cache": i += 1; args.cache = argv[i]
        case "--cache-dir": i += 1; args.cacheDirectory = argv[i]
        case "--unique": args.unique = true
        case "--http":
            i += 1
            args.versionGiven = true
            switch argv[i] {
            case "1.1": args.httpVersion = .http1Only
            case "2": args.httpVersion = .http2Preferred
            case "2-only": args.httpVersion = .http2Only
            default:
                writeError("courier-bench: --http 1.1, 2 or 2-only\n")
                exit(2)
            }
        default: positional.append(argv[i])
        }
        i += 1
    }
    guard args.cache == nil || args.cache == "memory" || (args.cache == "disk" && args.cacheDirectory != nil) else {
        writeError("courier-bench: --cache memory, or --cache disk with --cache-dir DIR\n")
        exit(2)
    }
    guard positional.count == 3, let n = Int(positional[1]), let c = Int(positional[2]), n > 0, c > 0 else {
        writeError("usage: courier-bench URL N C [--api swift|c] [--close] [--cacert FILE] [--no-resume] [--hold] [--output PATH]\n")
        exit(2)
    }
    args.url = positional[0]
    args.total = n
    args.concurrency = c
    return args
}

func writeError(_ text: String) {
    var text = text
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

/// Resident set size in KiB, from /proc/self/statm, after giving freed heap memory back to the
/// system, so the figure is live memory rather than what malloc happens to keep.
func residentKiB() -> Int {
    malloc_trim(0)
    guard let file = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(file) }
    var size = 0, resident = 0
    withUnsafeMutablePointer(to: &size) { s in
        withUnsafeMutablePointer(to: &resident) { r in
            _ = withVaList([s, r]) { vfscanf(file, "%ld %ld", $0) }
        }
    }
    return resident * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
}

/// Raises the descriptor limit to the hard limit: 10,000 pooled connections need 10,000 fds.
func raiseDescriptorLimit() {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

/// Drives the Swift API: Engine + HTTPOperation, handlers on the loop thread.
final class SwiftDriver: @unchecked Sendable {
    let engine: Engine
    let url: String
    let total: Int
    // Loop-thread only (handlers run there), so no dynamic exclusivity checks.
    @exclusivity(unchecked) private var started = 0
    @exclusivity(unchecked) private var finished = 0
    @exclusivity(unchecked) private(set) var ok = 0
    @exclusivity(unchecked) private(set) var bytes = 0
    @exclusivity(unchecked) private(set) var firstError: CourierError?
    /// Connections the requests opened (HTTP/2: how many the stream limit forced), counted only
    /// when `--http` was given (reading the metrics copies them: the counting mode runs without).
    @exclusivity(unchecked) private(set) var connections = 0
    let countsConnections: Bool
    let done = DispatchSemaphore(value: 0)

    init(args: Arguments) {
        var configuration = Engine.Configuration()
        configuration.callbackQueue = .loopThread
        configuration.options.decompress = false
        configuration.options.retryStaleConnection = true
        if let caFile = args.caFile { configuration.options.tls.caFile = caFile }
        if args.noResume { configuration.options.tls.sessionResumption = false }
        configuration.options.httpVersion = args.httpVersion
        countsConnections = args.versionGiven
        if let mode = args.cache {
            configuration.cache = try! mode == "disk" ? Cache(directory: args.cacheDirectory!, memoryCapacity: 0) : Cache()
        }
        unique = args.unique
        // One engine per API, as an application would have: the origin is parsed once and every
        // operation is built from it plus the path.
        let parsed = try! CourierURL(parsing: args.url)
        engine = Engine(host: "\(parsed.scheme.rawValue)://\(parsed.hostHeader)", configuration: configuration)
        url = parsed.target
        total = args.total
        self.close = args.close
        output = args.output
    }

    let close: Bool
    let unique: Bool
    /// Bodies go to this file (written as they arrive) instead of memory.
    let output: String?

    /// One request before the clock starts (it stores what a cached run then hits), and the disk
    /// tier's write finished.
    func warmUp() {
        let done = DispatchSemaphore(value: 0)
        let operation = engine.operation(path: url)
        operation.onFinish { _ in done.signal() }
        engine.enqueue(operation)
        done.wait()
        engine.configuration.cache?.flush()
    }

    /// Starts `count` requests; later ones start from completions.
    func begin(_ count: Int) {
        for _ in 0..<min(count, total) { startOne() }
    }

    private func startOne() {
        started += 1
        let operation = engine.operation(path: unique ? url + "?n=\(started)" : url)
        // A new connection per request, closed by the client as curl's FORBID_REUSE does.
        if close { operation.options.reuseConnection = false }
        if let output { operation.downloadPath = output }
        operation.onFinish { [self] result in
            switch result {
            case .success(let response):
                if response.status == 200 {
                    ok += 1
                    bytes += output == nil ? response.body.count : Int(response.metrics.bodyBytesDecoded)
                }
                if countsConnections { connections += response.metrics.connectionsOpened }
            case .failure(let error):
                if firstError == nil { firstError = error }
            }
            finished += 1
            if started < total {
                startOne()
            } else if finished == total {
                done.signal()
            }
        }
        engine.enqueue(operation)
    }
}

/// Drives the C ABI (include/courier.h) the way a C program would: an engine for the origin, a
/// request handle per request, a C callback that frees both handles and sends the next one. The
/// difference from `SwiftDriver` is the price of the C path.
final class CDriver: @unchecked Sendable {
    let engine: OpaquePointer?
    /// C strings made once, as a C program holds its URLs and paths.
    let path: UnsafeMutablePointer<CChar>
    let total: Int
    let close: Bool
    let output: UnsafeMutablePointer<CChar>?
    let caFile: UnsafeMutablePointer<CChar>?
    let cache: OpaquePointer?
    @exclusivity(unchecked) private var started = 0
    @exclusivity(unchecked) private var finished = 0
    @exclusivity(unchecked) private(set) var ok = 0
    @exclusivity(unchecked) private(set) var bytes = 0
    @exclusivity(unchecked) private(set) var firstError: String?
    let done = DispatchSemaphore(value: 0)

    init(args: Arguments) {
        let parsed = try! CourierURL(parsing: args.url)
        var created: OpaquePointer?
        precondition(courier_engine_create("\(parsed.scheme.rawValue)://\(parsed.hostHeader)", &created) == COURIER_OK)
        engine = created
        precondition(courier_engine_set_accepted_status(engine, 200, 400) == COURIER_OK)
        // The HTTP version is the engine's default (nothing per request, as for the counting mode).
        let version: Int32
        switch args.httpVersion {
        case .http1Only: version = COURIER_HTTP_VERSION_1_1
        case .http2Preferred: version = COURIER_HTTP_VERSION_2
        case .http2Only: version = COURIER_HTTP_VERSION_2_ONLY
        }
        precondition(courier_engine_set_http_version(engine, version) == COURIER_OK)
        if let mode = args.cache {
            var cache: OpaquePointer?
            precondition(courier_cache_create(mode == "disk" ? args.cacheDirectory : nil, mode == "disk" ? 0 : -1, 0, &cache) == COURIER_OK)
            precondition(courier_engine_set_cache(engine, cache) == COURIER_OK)
            self.cache = cache
        } else {
            cache = nil
        }
        if args.unique {
            writeError("courier-bench: --api c does not support --unique\n")
            exit(2)
        }
        path = strdup(parsed.target)
        total = args.total
        close = args.close
        output = args.output.map { strdup($0) }
        caFile = args.caFile.map { strdup($0) }
        if args.close || args.noResume {
            writeError("courier-bench: --api c supports neither --close nor --no-resume\n")
            exit(2)
        }
    }

    func begin(_ count: Int) {
        for _ in 0..<min(count, total) { startOne() }
    }

    /// As `SwiftDriver.warmUp`.
    func warmUp() {
        var request: OpaquePointer?
        precondition(courier_request_create(engine, "GET", path, &request) == COURIER_OK)
        courier_request_set_decompress(request, 0)
        var response: OpaquePointer?
        _ = courier_request_perform(request, &response)
        courier_response_free(response)
        courier_request_free(request)
        if let cache { courier_cache_flush(cache) }
    }

    private func startOne() {
        started += 1
        var request: OpaquePointer?
        precondition(courier_request_create(engine, "GET", path, &request) == COURIER_OK)
        courier_request_set_decompress(request, 0)
        if let output { courier_request_set_output_file(request, output) }
        if let caFile { courier_request_set_tls_ca(request, caFile, nil) }
        let user = Unmanaged.passUnretained(self).toOpaque()
        precondition(courier_request_send(request, { request, response, code, user in
            Unmanaged<CDriver>.fromOpaque(user!).takeUnretainedValue().finish(request, response, code)
        }, user) == COURIER_OK)
    }

    private func finish(_ request: OpaquePointer?, _ response: OpaquePointer?, _ code: Int32) {
        if code == COURIER_OK, courier_response_status(response) == 200 {
            ok += 1
            bytes += Int(courier_response_body_size(response))
        } else if firstError == nil {
            firstError = String(cString: courier_request_errmsg(request))
        }
        courier_response_free(response)
        courier_request_free(request)
        finished += 1
        if started < total {
            startOne()
        } else if finished == total {
            done.signal()
        }
    }
}

let args = parseArguments()
raiseDescriptorLimit()
SharedQueue.width = args.concurrency
SharedQueue.defaultHostLimit = args.concurrency
guard args.api == "swift" || args.api == "c" else {
    writeError("courier-bench: --api must be swift or c\n")
    exit(2)
}
let swiftDriver = args.api == "swift" ? SwiftDriver(args: args) : nil
let cDriver = args.api == "c" ? CDriver(args: args) : nil
if args.cache != nil {
    swiftDriver?.warmUp()
    cDriver?.warmUp()
}
let rssBefore = residentKiB()
let clock = ContinuousClock()
let start = clock.now
// The first wave starts on the loop thread too, so every request takes the same path.
Runtime.shared.execute {
    swiftDriver?.begin(args.concurrency)
    cDriver?.begin(args.concurrency)
}
(swiftDriver?.done ?? cDriver!.done).wait()
let wall = clock.now - start
let (seconds, attoseconds) = wall.components
let wallSeconds = Double(seconds) + Double(attoseconds) / 1e18
let ok = swiftDriver?.ok ?? cDriver!.ok
let bytes = swiftDriver?.bytes ?? cDriver!.bytes
var line = "{\"requests\":\(args.total),\"ok\":\(ok),\"bytes\":\(bytes),\"wall_s\":\(wallSeconds)"
if args.hold {
    // Connections are idle in the pool now: what do they cost?
    let rssAfter = residentKiB()
    line += ",\"rss_before_kib\":\(rssBefore),\"rss_idle_kib\":\(rssAfter)"
}
if let swiftDriver, swiftDriver.countsConnections { line += ",\"connections\":\(swiftDriver.connections)" }
if let error = swiftDriver?.firstError?.message ?? cDriver?.firstError { line += ",\"first_error\":\"\(error)\"" }
print(line + "}")
exit(ok == args.total ? 0 : 1)
