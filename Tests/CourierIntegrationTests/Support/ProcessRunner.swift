import Foundation

/// What a child process left behind.
///
/// The text forms are decoded when asked for, not for every child: under Swift Testing each
/// invalid UTF-8 sequence a repairing decode meets is a thrown error the test library captures a
/// backtrace for, so decoding a child's binary output (a 4 MB blob) cost seconds of CPU that the
/// loop thread of the tests still running had to wait for (a third of the test process's samples).
struct ProcessResult {
    var status: Int32
    var stdoutBytes: Data
    var stderrBytes: Data
    var stdout: String { text(stdoutBytes) }
    var stderr: String { text(stderrBytes) }

    init(status: Int32, stdoutBytes: Data, stderrBytes: Data) {
        self.status = status
        self.stdoutBytes = stdoutBytes
        self.stderrBytes = stderrBytes
    }

    /// UTF-8 text as is (validation stops at the first bad byte: one thrown error at most), else a
    /// repaired decode.
    private func text(_ bytes: Data) -> String {
        String(validating: bytes, as: UTF8.self) ?? String(decoding: bytes, as: UTF8.self)
    }
}

/// Runs a program to completion on a thread of its own: waiting for a process must not block one
/// of the few cooperative threads every other async test needs.
///
/// `background` runs it niced (valgrind, compilers, gigabyte transfers): on two cores such a child
/// keeps a core busy for seconds, and the loop thread of the tests still running waits behind it.
func runProcess(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                directory: String? = nil, stdin: Data? = nil, background: Bool = false) async throws -> ProcessResult {
    let (executable, arguments) = background ? (niceCommand, ["-n", "15", executable] + arguments) : (executable, arguments)
    return try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result {
                try runProcessBlocking(executable, arguments, environment: environment, directory: directory, stdin: stdin)
            })
        }
    }
}

/// coreutils' nice, which execs the program in its own process (the pid the runner waits for).
private let niceCommand = "/usr/bin/nice"

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
    // The child writes to files, not pipes: a pipe's end of file waits for every process holding
    // its write end, and a server another test spawns at the same moment can inherit it (Foundation
    // does not open pipes close-on-exec), so a read to end of file could wait as long as that
    // server lives. A file is complete when the child has exited.
    let scratch = FileManager.default.temporaryDirectory
        .appendingPathComponent("courier-child-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let outURL = scratch.appendingPathComponent("stdout"), errURL = scratch.appendingPathComponent("stderr")
    // Opened close-on-exec: another test's child started meanwhile must not inherit them (the
    // spawn's dup2 onto 0, 1 and 2 clears the flag for this child only). Inherited descriptors
    // broke the C program that counts its spare descriptors.
    let out = try closeOnExec(outURL.path, O_WRONLY | O_CREAT | O_TRUNC), err = try closeOnExec(errURL.path, O_WRONLY | O_CREAT | O_TRUNC)
    defer { try? out.close(); try? err.close() }
    process.standardOutput = out
    process.standardError = err
    // The same for standard input: a pipe's reader would wait for a stray copy of its write end.
    var input: FileHandle?
    if let stdin {
        let inURL = scratch.appendingPathComponent("stdin")
        try stdin.write(to: inURL)
        input = try closeOnExec(inURL.path, O_RDONLY)
    }
    defer { try? input?.close() }
    process.standardInput = input ?? FileHandle.nullDevice
    try process.run()
    // A child that never ends is a failure of its own, reported as one rather than a hung run.
    guard let status = reap(process, within: childDeadline) else {
        process.terminate()
        if reap(process, within: 5) == nil {
            kill(process.processIdentifier, SIGKILL)
            _ = reap(process, within: 30)
        }
        let partial = (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
        throw ChildTimedOut(command: ([executable] + arguments).joined(separator: " "), stderr: partial)
    }
    let outData = (try? Data(contentsOf: outURL)) ?? Data()
    let errData = (try? Data(contentsOf: errURL)) ?? Data()
    return ProcessResult(status: status, stdoutBytes: outData, stderrBytes: errData)
}

/// A file opened with O_CLOEXEC, as a FileHandle that closes it.
private func closeOnExec(_ path: String, _ flags: Int32) throws -> FileHandle {
    let fd = open(path, flags | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path]) }
    return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
}

/// How long a child of a test may run (valgrind runs included) before it is killed, in seconds.
private let childDeadline = 300.0

/// The child's exit status (128 + the signal for one killed by a signal) once it has ended, or nil
/// after `seconds`. Waits with waitpid itself: Foundation's own reaping sometimes never notices a
/// child (one run left zombies and its termination handlers uncalled), so it is only a fallback,
/// for a child Foundation reaped first.
func reap(_ process: Process, within seconds: Double) -> Int32? {
    let pid = process.processIdentifier
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid {
            let signal = status & 0x7F
            return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
        }
        if reaped < 0, errno == ECHILD, !process.isRunning {
            // Foundation reaped it first: its figures, in the same form (128 + a signal).
            return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        }
        usleep(2_000)
    }
    return nil
}

/// A child of a test that did not exit within `childDeadline`.
struct ChildTimedOut: Error, CustomStringConvertible {
    var command: String
    var stderr: String
    var description: String { "\(command) did not exit within the deadline; stderr so far:\n\(stderr)" }
}

/// The Python interpreter itself, resolved once: `python3` on the PATH may be a version manager's
/// shim (pyenv's is a bash script that forks half a dozen processes per start), and the run
/// starts about a hundred interpreters (servers, their supervisors, the binding's tests).
let pythonPath: String = {
    let probe = try? runProcessBlocking("/usr/bin/env", ["python3", "-c", "import sys; print(sys.executable)"])
    let path = probe?.stdout.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    return path.isEmpty ? "/usr/bin/python3" : path
}()

/// valgrind, when installed (make test installs it).
let valgrindPath = ["/usr/bin/valgrind", "/usr/local/bin/valgrind"].first { FileManager.default.isExecutableFile(atPath: $0) }

/// valgrind's flags for "no invalid access, no definite leak" (the Swift runtime's metadata caches
/// are reachable or "possibly lost" by design and are not reported; Tests/Sanitizers/valgrind.supp
/// names the runtime's own reports, by function and library).
let valgrindArguments = ["--leak-check=full", "--show-possibly-lost=no", "--errors-for-leak-kinds=definite",
                         "--error-exitcode=99", "-q", "--suppressions=" + TestServers.packageRoot + "/Tests/Sanitizers/valgrind.supp"]

/// A product of this build (the CLI, the C library): beside the test bundle, or in .build/debug.
func builtProduct(_ name: String) -> String {
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path,
        TestServers.packageRoot + "/.build/debug/" + name,
    ]
    return candidates.first { FileManager.default.fileExists(atPath: $0) } ?? candidates[1]
}
