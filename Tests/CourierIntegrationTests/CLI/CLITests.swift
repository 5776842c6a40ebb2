import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// The `courier` executable: curl's flags, output and exit codes.
@Suite("courier CLI")
struct CLITests {
    let s = TestServers.shared

    static var binary: String { builtProduct("courier") }

    typealias Run = ProcessResult

    /// Runs the CLI (on a thread of its own, see `runProcess`).
    func run(_ arguments: [String], stdin: Data? = nil) async throws -> Run {
        try await runProcess(Self.binary, arguments, stdin: stdin)
    }

    @Test func localFailureExitCodes() async throws {
        let cases: [([String], Int32)] = [
            (["http://127.0.0.1:1/"], 7),
            (["http://no-such-host.invalid/"], 6),
            (["http://exa mple/"], 3),
            (["ftp://example.com/"], 1),
            (["-Q", "http://x/"], 2),
            ([], 2),
        ]
        for (arguments, expected) in cases {
            let r = try await run(["-s"] + arguments)
            #expect(r.status == expected, "\(arguments): \(r.stderr)")
        }
    }

    /// -o is staged: a transfer that fails (cut short, a reset, -f's HTTP error) leaves no file,
    /// and an older file at the destination is kept as it was; success replaces it whole.
    @Test func aFailedDownloadLeavesNothingAtTheDestination() async throws {
        let dir = s.root + "/cli-staged-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let destination = dir + "/out"
        for (path, flags, code) in [("/truncated", [String](), Int32(18)), ("/reset-mid-body", [], 56), ("/status?code=404", ["-f"], 22)] {
            let r = try await run(["-s", "-o", destination] + flags + [s.scripted + path])
            #expect(r.status == code, "\(path): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: destination), "\(path) left a file")
        }
        try Data("old".utf8).write(to: URL(fileURLWithPath: destination))
        _ = try await run(["-s", "-o", destination, s.scripted + "/truncated"])
        #expect(try String(contentsOfFile: destination, encoding: .utf8) == "old")
        let ok = try await run(["-s", "-o", destination, s.nginx + "/small"])
        let written = try Data(contentsOf: URL(fileURLWithPath: destination))
        #expect(ok.status == 0 && written.count == 100)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["out"], "no temporary file left")
    }

    @Test func serverFailureExitCodes() async throws {
        let cases: [(String, [String], Int32)] = [
            ("/truncated", [], 18),
            ("/empty", [], 52),
            ("/reset-mid-body", [], 56),
            ("/garbage-status", [], 8),
            ("/bad-chunk", [], 56),
            ("/cl-te", [], 8),
            ("/huge-headers", [], 100),
            ("/redirect-loop", ["-L"], 47),
            ("/silence?s=5", ["-m", "0.5"], 28),
            ("/echo", ["--max-filesize", "10"], 63),
            ("/corrupt-gzip", ["--compressed"], 61),
            ("/status?code=404", ["-f"], 22),
            ("/status?code=404", [], 0),
        ]
        for (path, flags, expected) in cases {
            let r = try await run(["-s", "-o", "/dev/null"] + flags + [s.scripted + path])
            #expect(r.status == expected, "\(path) \(flags): exit \(r.status), stderr \(r.stderr)")
        }
        let timeout = try await run(["-s", "--connect-timeout", "0.5", "http://127.0.0.1:\(s.blackholePort)/"])
        #expect(timeout.status == 28)
    }

    @Test func errorMessagesUnlessSilent() async throws {
        let loud = try await run(["http://127.0.0.1:1/"])
        #expect(loud.stderr.contains("courier: (7)"))
        let quiet = try await run(["-s", "http://127.0.0.1:1/"])
        #expect(quiet.stderr.isEmpty)
        let shown = try await run(["-sS", "http://127.0.0.1:1/"])
        #expect(shown.stderr.contains("courier: (7)"))
        let fail = try await run(["-f", s.scripted + "/status?code=500"])
        #expect(fail.stderr.contains("The requested URL returned error: 500"))
        #expect(fail.stdout.isEmpty, "-f prints no body")
    }

    @Test func writeOutVariables() async throws {
        let r = try await run(["-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{num_connects} %{url_effective} %{exitcode}\\n%{time_total}",
                         s.nginx + "/small"])
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.first == "200 100 1 \(s.nginx)/small 0")
        #expect(Double(lines.last ?? "") ?? -1 > 0)
        let failed = try await run(["-s", "-w", "%{http_code} %{exitcode}", "http://127.0.0.1:1/"])
        #expect(failed.stdout == "000 7")
    }

    @Test func severalURLsReuseOneConnection() async throws {
        let r = try await run(["-s", "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null", "-w", "%{num_connects}",
                         s.nginx + "/small", s.nginx + "/small", s.nginx + "/small"])
        #expect(r.stdout == "100")
    }

    @Test func parallelTransfersKeepURLOrderOnStdout() async throws {
        let r = try await run(["-s", "-Z", s.scripted + "/slow?ms=300&body=1", s.scripted + "/status?code=200&body=second",
                         s.scripted + "/status?code=200&body=third"])
        #expect(r.status == 0)
        #expect(r.stdout == "slowsecondthird")
    }

    @Test func parallelWidthIsUsedExactly() async throws {
        // A process of its own: nothing else shares its queue, so the width must be reached and
        // never exceeded.
        let group = "cli-width-\(UUID().uuidString.prefix(8))"
        let urls = (0..<8).map { s.scripted + "/slow?ms=150&group=\(group)&n=\($0)" }
        let outputs = Array(repeating: ["-o", "/dev/null"], count: urls.count).flatMap { $0 }
        let r = try await run(["-s", "-Z", "--parallel-max", "3", "-w", "%{http_code}\\n"] + outputs + urls)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.split(separator: "\n").count == 8)
        let stats = await scriptedStats(group)
        #expect(stats.peak == 3, "server saw \(stats.peak) at once with --parallel-max 3")
        #expect(stats.seen == 8)
    }

    @Test func outputFilesAndRemoteNames() async throws {
        let directory = s.root + "/cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["-s", "-O", s.nginx + "/small"]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        #expect(try await Self.runToExit(process) == 0)
        #expect((try? Data(contentsOf: URL(fileURLWithPath: directory + "/small")))?.count == 100)
        let r = try await run(["-s", "-o", directory + "/out", s.nginx + "/large"])
        #expect(r.status == 0)
        #expect((try? FileManager.default.attributesOfItem(atPath: directory + "/out")[.size] as? Int) == TestServers.largeSize)
        let unwritable = try await run(["-s", "-o", "/no/such/dir/file", s.nginx + "/small"])
        #expect(unwritable.status == 23)
    }

    @Test func headersIncludeHeadAndRemoval() async throws {
        let include = try await run(["-s", "-i", s.nginx + "/small"])
        #expect(include.stdout.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(include.stdout.hasSuffix("\r\n\r\n" + String(repeating: "s", count: 100)))
        let head = try await run(["-s", "-I", s.nginx + "/small"])
        #expect(head.stdout.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(head.stdout.contains("Content-Length: 100"))
        #expect(head.stdout.hasSuffix("\r\n\r\n"))

        let echo = try await run(["-s", "-H", "User-Agent:", "-H", "X-One: 1", "-H", "Accept: text/plain", "-A", "ignored", s.scripted + "/echo"])
        let reply = try JSONDecoder().decode(EchoReply.self, from: echo.stdoutBytes)
        #expect(reply.header("User-Agent") == nil, "'Name:' removes a header Courier would send")
        #expect(reply.header("X-One") == "1")
        #expect(reply.header("Accept") == "text/plain")
    }

    @Test func dataJSONMethodAndUser() async throws {
        let data = try await run(["-s", "-d", "a=1", "-d", "b=2", s.scripted + "/echo"])
        let dataReply = try JSONDecoder().decode(EchoReply.self, from: data.stdoutBytes)
        #expect(dataReply.method == "POST" && dataReply.body == "a=1&b=2")
        #expect(dataReply.header("Content-Type") == "application/x-www-form-urlencoded")

        let file = s.root + "/cli-body-\(UUID().uuidString)"
        try "line1\nline2\n".write(toFile: file, atomically: false, encoding: .utf8)
        let fromFile = try await run(["-s", "-d", "@" + file, s.scripted + "/echo"])
        #expect(try JSONDecoder().decode(EchoReply.self, from: fromFile.stdoutBytes).body == "line1line2")
        let binary = try await run(["-s", "--data-binary", "@" + file, s.scripted + "/echo"])
        #expect(try JSONDecoder().decode(EchoReply.self, from: binary.stdoutBytes).body == "line1\nline2\n")
        let stdin = try await run(["-s", "--data-binary", "@-", s.scripted + "/echo"], stdin: Data("from stdin".utf8))
        #expect(try JSONDecoder().decode(EchoReply.self, from: stdin.stdoutBytes).body == "from stdin")
        let missing = try await run(["-s", "-d", "@/no/such/file", s.scripted + "/echo"])
        #expect(missing.status == 26)

        let json = try await run(["-s", "--json", "{\"k\":1}", s.scripted + "/echo"])
        let jsonReply = try JSONDecoder().decode(EchoReply.self, from: json.stdoutBytes)
        #expect(jsonReply.method == "POST" && jsonReply.body == "{\"k\":1}")
        #expect(jsonReply.header("Content-Type") == "application/json")
        #expect(jsonReply.header("Accept") == "application/json")

        let put = try await run(["-s", "-X", "PUT", "-u", "user:pw", s.scripted + "/echo"])
        let putReply = try JSONDecoder().decode(EchoReply.self, from: put.stdoutBytes)
        #expect(putReply.method == "PUT")
        #expect(putReply.header("Authorization") == "Basic dXNlcjpwdw==")
    }

    @Test func redirectsAndCompression() async throws {
        let noFollow = try await run(["-s", "-o", "/dev/null", "-w", "%{http_code}", s.nginx + "/moved"])
        #expect(noFollow.stdout == "301")
        let follow = try await run(["-s", "-L", "-o", "/dev/null", "-w", "%{http_code} %{num_redirects} %{url_effective}", s.nginx + "/moved"])
        #expect(follow.stdout == "200 1 \(s.nginx)/small")
        let limited = try await run(["-s", "-L", "--max-redirs", "0", s.nginx + "/moved"])
        #expect(limited.status == 47)
        let compressed = try await run(["-s", "--compressed", s.nginx + "/gzip/text"])
        #expect(compressed.stdout == TestServers.gzipText)
    }

    /// Runs `process` and returns its exit status (128 + the signal for one killed by a signal).
    static func runToExit(_ process: Process) async throws -> Int32 {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, Error>) in
            Thread.detachNewThread {
                continuation.resume(with: Result {
                    try process.run()
                    // waitpid (ProcessRunner's reap): Foundation sometimes misses a child's end.
                    guard let status = reap(process, within: 300) else {
                        process.terminate()
                        throw ChildTimedOut(command: process.executableURL?.path ?? "", stderr: "")
                    }
                    return status
                })
            }
        }
    }

    static let valgrind = valgrindPath

    /// The core under valgrind, through the CLI (which shuts the runtime down before exiting):
    /// plain and TLS successes, a redirect, a rejected certificate, a reset, a truncation and a
    /// refused connection, with no invalid access and no definite leak.
    @Test(.enabled(if: valgrind != nil, "valgrind is not installed (make test installs it)"))
    func valgrindSeesNoLeaksOrInvalidAccesses() async throws {
        let result = try await runProcess(Self.valgrind!, ["--leak-check=full", "--errors-for-leak-kinds=definite", "--error-exitcode=99", "-q",
                                          Self.binary, "-s", "-L", "--compressed", "--cacert", s.certs + "/ca.pem",
                                          "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null",
                                          "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null",
                                          s.nginx + "/small", s.nginx + "/gzip/text", s.nginx + "/moved",
                                          s.https + "/small", s.https + "/moved", "https://localhost:\(s.tlsPorts["selfsigned"]!)/small",
                                          s.scripted + "/reset-mid-body", s.scripted + "/truncated", "http://127.0.0.1:1/"], background: true)
        let report = result.stderr
        // The last URL is refused, so courier itself exits 7; valgrind would exit 99.
        #expect(result.status == 7, "\(report)")
        #expect(!report.contains("Invalid read") && !report.contains("Invalid write"), "\(report)")
    }

    @Test func helpAndVersion() async throws {
        let help = try await run(["--help"])
        #expect(help.stdout.contains("--write-out"))
        let version = try await run(["-V"])
        #expect(version.stdout.hasPrefix("courier "))
    }
}
