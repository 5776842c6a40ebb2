import Foundation

/// What a child process left behind.
struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var stdoutBytes: Data
}

/// Runs a program to completion on a thread of its own: waiting for a process must not block one
/// of the few cooperative threads every other async test needs.
func runProcess(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                directory: String? = nil, stdin: Data? = nil) async throws -> ProcessResult {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result {
                try runProcessBlocking(executable, arguments, environment: environment, directory: directory, stdin: stdin)
            })
        }
    }
}

/// The blocking half of `runProcess`, for threads that may block.
func runProcessBlocking(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                        directory: String? = nil, stdin: Data? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    }
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let input = stdin.map { _ in Pipe() }
    process.standardInput = input ?? FileHandle.nullDevice
    try process.run()
    if let stdin, let input {
        input.fileHandleForWriting.write(stdin)
        try input.fileHandleForWriting.close()
    }
    // Both pipes drained at once: a child filling one while we wait on the other would deadlock.
    final class Box: @unchecked Sendable { var data = Data() }
    let errBox = Box()
    let errDone = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        errBox.data = err.fileHandleForReading.readDataToEndOfFile()
        errDone.signal()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    errDone.wait()
    let errData = errBox.data
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self), stdoutBytes: outData)
}

/// valgrind, when installed (make test installs it).
let valgrindPath = ["/usr/bin/valgrind", "/usr/local/bin/valgrind"].first { FileManager.default.isExecutableFile(atPath: $0) }

/// valgrind's flags for "no invalid access, no definite leak" (the Swift runtime's metadata caches
/// are reachable or "possibly lost" by design and are not reported).
let valgrindArguments = ["--leak-check=full", "--show-possibly-lost=no", "--errors-for-leak-kinds=definite",
                         "--error-exitcode=99", "-q"]

/// A product of this build (the CLI, the C library): beside the test bundle, or in .build/debug.
func builtProduct(_ name: String) -> String {
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path,
        TestServers.packageRoot + "/.build/debug/" + name,
    ]
    return candidates.first { FileManager.default.fileExists(atPath: $0) } ?? candidates[1]
}
