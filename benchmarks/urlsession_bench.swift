// urlsession_bench URL N C [--close] [--output PATH]
//
// Foundation's URLSession on Linux (FoundationNetworking, which wraps libcurl) doing what
// courier-bench does: N GETs, at most C in flight, statuses and sizes checked, one JSON line.
// Built by `make bench` with `swiftc -O`.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

let args = CommandLine.arguments
var positional: [String] = []
var close = false
var output: String?
var i = 1
while i < args.count {
    switch args[i] {
    case "--close": close = true
    case "--output": i += 1; output = args[i]
    default: positional.append(args[i])
    }
    i += 1
}
guard positional.count == 3, let url = URL(string: positional[0]), let total = Int(positional[1]), let concurrency = Int(positional[2]) else {
    FileHandle.standardError.write("usage: urlsession_bench URL N C [--close] [--output PATH]\n".data(using: .utf8)!)
    exit(2)
}

/// Counts bytes as they arrive (and writes them to the output file, if any) instead of
/// collecting a gigabyte in memory.
final class Counter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let lock = NSLock()
    var ok = 0
    var bytes = 0
    var started = 0
    var finished = 0
    let total: Int
    let done = DispatchSemaphore(value: 0)
    var file: FileHandle?
    weak var session: URLSession?
    let request: URLRequest

    init(total: Int, request: URLRequest, output: String?) {
        self.total = total
        self.request = request
        if let output {
            // open(2), not FileManager.createFile: createFile writes atomically (a temporary file
            // renamed over the target), which replaces /dev/null with a regular file.
            let fd = open(output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            if fd >= 0 { file = FileHandle(fileDescriptor: fd, closeOnDealloc: true) }
        }
    }

    func startOne() {
        lock.lock()
        guard started < total else { lock.unlock(); return }
        started += 1
        lock.unlock()
        session!.dataTask(with: request).resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.lock()
        bytes += data.count
        lock.unlock()
        file?.write(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        lock.lock()
        if error == nil, (task.response as? HTTPURLResponse)?.statusCode == 200 { ok += 1 }
        finished += 1
        let all = finished == total
        lock.unlock()
        if all { done.signal() } else { startOne() }
    }
}

var request = URLRequest(url: url)
if close { request.setValue("close", forHTTPHeaderField: "Connection") }
let configuration = URLSessionConfiguration.ephemeral
configuration.httpMaximumConnectionsPerHost = concurrency
configuration.urlCache = nil
let counter = Counter(total: total, request: request, output: output)
let session = URLSession(configuration: configuration, delegate: counter, delegateQueue: nil)
counter.session = session
let start = Date()
for _ in 0..<min(concurrency, total) { counter.startOne() }
counter.done.wait()
let wall = Date().timeIntervalSince(start)
print("{\"requests\":\(total),\"ok\":\(counter.ok),\"bytes\":\(counter.bytes),\"wall_s\":\(wall)}")
exit(counter.ok == total ? 0 : 1)
