import Courier
import CourierCore
import CourierHeader
import Dispatch
import Glibc

// courier-bulk: one large transfer through one API, for `make bench` and the bounded-memory tests.
//
//   courier-bulk download URL MODE [--slow] [--to PATH]
//                                              MODE: swift-stream (for try await in response.body),
//                                              swift-file (downloadPath), c-callback (a write
//                                              callback), c-file (courier_request_set_output_file),
//                                              c-reader (courier_request_read from this thread,
//                                              256 KiB at a time: what Python's iter_bytes does)
//   courier-bulk upload URL MODE FILE          MODE: swift-file, swift-multipart, swift-stream
//                                              (an AsyncSequence read from FILE), c-file,
//                                              c-callback (a read callback, chunked)
//
// --slow makes the consumer (or producer) sleep 1 ms every 16 pieces, so the transfer runs at its
// pace. Prints one JSON line: {"bytes":...,"wall_s":...,"cpu_s":...,"peak_rss_kib":...}.
// Downloads go nowhere (counted, or to /dev/null): the disk is not what is measured.

func fail(_ text: String) -> Never {
    var text = "courier-bulk: " + text + "\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(1)
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// The peak resident set of this process's own memory (VmHWM). Not getrusage's ru_maxrss: a
/// child started with posix_spawn (vfork) inherits its parent's high-water mark there, so a test
/// runner's size would be reported as the child's.
func peakRSS() -> Int {
    guard let file = fopen("/proc/self/status", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(cString: line)
        if text.hasPrefix("VmHWM:") { return Int(text.dropFirst(6).filter { $0.isNumber }) ?? 0 }
    }
    return 0
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else { fail("usage: courier-bulk download URL MODE [--slow] | upload URL MODE FILE [--slow]") }
let direction = arguments[1], url = arguments[2], mode = arguments[3]
let slow = arguments.contains("--slow")
/// Where file downloads go: /dev/null unless `--to PATH` names a real file (the page cache's cost
/// of writing is then part of the figure).
let target = arguments.firstIndex(of: "--to").map { arguments[$0 + 1] } ?? "/dev/null"

/// A file as an async sequence of 128 KiB chunks (fewer hand-offs between the producing task and
/// the loop than 64 KiB, measured).
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    let path: String
    let slow: Bool
    final class AsyncIterator: AsyncIteratorProtocol {
        let fd: Int32
        let slow: Bool
        var count = 0
        init(path: String, slow: Bool) {
            fd = open(path, O_RDONLY)
            self.slow = slow
        }
        deinit { close(fd) }
        func next() async throws -> [UInt8]? {
            count += 1
            if slow, count % 16 == 0 { try await Task.sleep(nanoseconds: 1_000_000) }
            // Filled by read(2) straight away: no zeroing first.
            var n = 0
            let chunk = [UInt8](unsafeUninitializedCapacity: 128 * 1024) { buffer, count in
                n = read(fd, buffer.baseAddress, buffer.count)
                count = Swift.max(n, 0)
            }
            guard n > 0 else { return nil }
            return chunk
        }
    }
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(path: path, slow: slow) }
}

func swiftTransfer() async -> UInt64 {
    let engine = Engine.shared
    let op = engine.operation(urlString: url, method: direction == "upload" ? .put : .get)
    op.acceptableStatus = 200..<300
    if direction == "download" {
        switch mode {
        case "swift-stream":
            do {
                let response = try await engine.stream(op)
                var total: UInt64 = 0
                var pieces = 0
                for try await chunk in response.body {
                    total += UInt64(chunk.count)
                    pieces += 1
                    if slow, pieces % 16 == 0 { try await Task.sleep(nanoseconds: 1_000_000) }
                }
                return total
            } catch {
                fail("\(error)")
            }
        case "swift-file":
            op.downloadPath = target
        default:
            fail("unknown download mode \(mode)")
        }
        do {
            return try await engine.send(op).metrics.bodyBytesDecoded
        } catch {
            fail("\(error)")
        }
    }
    let file = arguments.count > 4 ? arguments[4] : ""
    switch mode {
    case "swift-file": op.body = .file(path: file)
    case "swift-multipart": op.addFile(file, forKey: "upload")
    case "swift-stream": op.body = .stream(BodyStream(FileChunks(path: file, slow: slow)))
    default: fail("unknown upload mode \(mode)")
    }
    do {
        return try await engine.send(op).metrics.bytesSent
    } catch {
        fail("\(error)")
    }
}

/// The C ABI's write callback: counts, pausing now and then when slow (resumed at once from
/// another thread, the C pattern).
final class CCounter: @unchecked Sendable {
    var total: UInt64 = 0
    var pieces = 0
    var request: OpaquePointer?
}

func cTransfer() -> UInt64 {
    var request: OpaquePointer?
    guard courier_request_create(nil, direction == "upload" ? "PUT" : "GET", url, &request) == COURIER_OK else { fail("create") }
    let counter = CCounter()
    counter.request = request
    let user = Unmanaged.passUnretained(counter).toOpaque()
    if direction == "download" {
        switch mode {
        case "c-callback":
            courier_request_add_write_callback(request, { _, length, user in
                let counter = Unmanaged<CCounter>.fromOpaque(user!).takeUnretainedValue()
                counter.total += UInt64(length)
                counter.pieces += 1
                if slow, counter.pieces % 16 == 0 {
                    let request = UncheckedBox(counter.request)
                    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { courier_request_resume(request.value) }
                    counter.total -= UInt64(length)
                    counter.pieces += 1
                    return Int(bitPattern: UInt.max)
                }
                return length
            }, user)
        case "c-file":
            courier_request_set_output_file(request, target)
        case "c-reader":
            return cRead(request)
        default:
            fail("unknown download mode \(mode)")
        }
    } else {
        let file = arguments.count > 4 ? arguments[4] : ""
        switch mode {
        case "c-file":
            courier_request_set_body_file(request, file)
        case "c-callback":
            let fd = open(file, O_RDONLY)
            counter.pieces = Int(fd)
            courier_request_set_body_callback(request, { buffer, capacity, user in
                let counter = Unmanaged<CCounter>.fromOpaque(user!).takeUnretainedValue()
                let n = read(Int32(counter.pieces), buffer, capacity)
                return Int64(n)
            }, -1, user)
        default:
            fail("unknown upload mode \(mode)")
        }
    }
    var response: OpaquePointer?
    let code = courier_request_perform(request, &response)
    guard code == COURIER_OK else { fail("perform: \(String(cString: courier_strerror(code)))") }
    let bytes = direction == "upload" ? UInt64(courier_response_status(response) == 200 ? 1 : 0) : UInt64(courier_response_body_size(response))
    courier_response_free(response)
    courier_request_free(request)
    return direction == "download" && mode == "c-callback" ? counter.total : bytes
}

/// The body pulled with courier_request_read into one 256 KiB buffer, as a runtime with its own
/// thread does (the Python binding's iter_bytes); 1 MiB may wait in the library.
func cRead(_ request: OpaquePointer?) -> UInt64 {
    guard courier_request_set_body_reader(request, 1 << 20, nil, nil) == COURIER_OK,
          courier_request_send(request, { _, response, _, _ in courier_response_free(response) }, nil) == COURIER_OK else { fail("send") }
    let capacity = 256 << 10
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 64)
    var total: UInt64 = 0
    var pieces = 0
    var got = 0
    var code = COURIER_OK
    while true {
        code = courier_request_read(request, buffer, capacity, &got, -1)
        guard code == COURIER_OK, got > 0 else { break }
        total += UInt64(got)
        pieces += 1
        if slow, pieces % 16 == 0 { usleep(1000) }
    }
    guard code == COURIER_OK else { fail("read: \(String(cString: courier_strerror(code)))") }
    buffer.deallocate()
    courier_request_free(request)
    return total
}

struct UncheckedBox<T>: @unchecked Sendable { let value: T; init(_ value: T) { self.value = value } }

let started = DispatchTime.now().uptimeNanoseconds
let cpuBefore = cpuSeconds()
var bytes: UInt64 = 0
if mode.hasPrefix("c-") {
    bytes = cTransfer()
} else {
    let done = DispatchSemaphore(value: 0)
    let box = UncheckedBox(done)
    nonisolated(unsafe) var result: UInt64 = 0
    Task.detached {
        result = await swiftTransfer()
        box.value.signal()
    }
    done.wait()
    bytes = result
}
let wall = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
print("{\"bytes\":\(bytes),\"wall_s\":\(wall),\"cpu_s\":\(cpuSeconds() - cpuBefore),\"peak_rss_kib\":\(peakRSS())}")
