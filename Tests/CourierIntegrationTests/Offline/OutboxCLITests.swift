import Foundation
import Testing
@testable import CourierCore

/// `courier --outbox DIR` and `--flush` against a server that records Idempotency-Keys
/// (Tests/Servers/idempotency_server.py): journaled before sending, kept until answered (exit 75
/// while the host is unreachable), flushed in order with the same key, never lost under kill -9.
@Suite("Outbox in the CLI")
struct OutboxCLITests {
    let s = TestServers.shared

    func keys(_ server: String) async throws -> [String: OutboxTestSupport.Seen] { try await OutboxTestSupport.keys(server) }

    func scratch() throws -> String {
        let path = OutboxTestSupport.scratchPath()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The ids of the entries waiting in `directory` (read from the file names).
    func waiting(_ directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".entry") }.sorted().map { String($0.dropFirst(17).dropLast(6)) }
    }

    @Test func anAnsweredRequestLeavesTheOutboxAndCarriesItsKey() async throws {
        let server = await s.privateIdempotencyServer()
        let outbox = try scratch()
        let run = try await runProcess(CLITests.binary, ["-s", "--outbox", outbox, "-d", "draft=1", server + "/submit"])
        #expect(run.status == 0, "\(run.stderr)")
        let seen = try await keys(server)
        let key = try #require(seen.keys.first)
        #expect(seen.count == 1 && seen[key]?.count == 1 && seen[key]?.body == "draft=1" && seen[key]?.method == "POST")
        #expect(run.stdout == "created \(key)")
        #expect(waiting(outbox).isEmpty, "answered: removed")
        // A 4xx is an answer too (the application judges it): not kept.
        let refused = try await runProcess(CLITests.binary, ["-s", "--outbox", outbox, "-X", "POST", server + "/nothing-here"])
        #expect(refused.status == 0 && waiting(outbox).isEmpty)
    }

    @Test func anUnreachableHostKeepsTheRequestUntilAFlushDeliversIt() async throws {
        let port = TestServers.unusedPort()
        let base = "http://127.0.0.1:\(port)"
        let outbox = try scratch()
        let first = try await runProcess(CLITests.binary, ["--outbox", outbox, "-d", "one", base + "/submit"])
        #expect(first.status == 75, "EX_TEMPFAIL: \(first.stderr)")
        #expect(first.stderr.contains("waits in the outbox \(outbox)"), "\(first.stderr)")
        let second = try await runProcess(CLITests.binary, ["-s", "--outbox", outbox, "-X", "PUT", "-d", "two", base + "/submit"])
        #expect(second.status == 75 && second.stderr.isEmpty, "-s: quiet, the exit status says it")
        let ids = waiting(outbox)
        #expect(ids.count == 2)

        let stillDown = try await runProcess(CLITests.binary, ["-s", "--outbox", outbox, "--flush"])
        #expect(stillDown.status == 75 && waiting(outbox) == ids, "nothing is lost while the host is down")
        #expect(stillDown.stdout.split(separator: "\n").count == 2 && stillDown.stdout.contains("kept (75"), "\(stillDown.stdout)")

        let server = await s.privateIdempotencyServer(port: port)
        let flushed = try await runProcess(CLITests.binary, ["-s", "--outbox", outbox, "--flush"])
        #expect(flushed.status == 0, "\(flushed.stdout)\(flushed.stderr)")
        #expect(flushed.stdout == "\(ids[0]) POST \(base)/submit 201\n\(ids[1]) PUT \(base)/submit 201\n", "in order: \(flushed.stdout)")
        let seen = try await keys(server)
        #expect(Set(seen.keys) == Set(ids), "each request's own key, kept from the first attempt")
        #expect(seen[ids[0]]?.body == "one" && seen[ids[1]]?.body == "two" && seen[ids[1]]?.method == "PUT")
        #expect(waiting(outbox).isEmpty)
        let empty = try await runProcess(CLITests.binary, ["-s", "--outbox", outbox, "--flush"])
        #expect(empty.status == 0 && empty.stdout.isEmpty)
    }

    @Test func oneOwnerAndClearErrors() async throws {
        let outbox = try scratch()
        let owner = try Journal(directory: outbox)
        let locked = try await runProcess(CLITests.binary, ["--outbox", outbox, "-d", "x", "http://127.0.0.1:1/submit"])
        #expect(locked.status == 23 && locked.stderr.contains("in use by another process"), "\(locked.stderr)")
        owner.close()
        let noOutbox = try await runProcess(CLITests.binary, ["--flush"])
        #expect(noOutbox.status == 2 && noOutbox.stderr.contains("--flush needs --outbox"))
        let stdin = try await runProcess(CLITests.binary, ["--outbox", outbox, "-T", "-", "http://127.0.0.1:1/submit"], stdin: Data("x".utf8))
        #expect(stdin.status != 0 && stdin.status != 75 && waiting(outbox).isEmpty, "a streamed body is refused, not half-kept: \(stdin.stderr)")
        // A damaged entry is reported and set aside, never sent.
        _ = try await runProcess(CLITests.binary, ["-s", "--outbox", outbox, "-d", "x", "http://127.0.0.1:1/submit"])
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: outbox).first { $0.hasSuffix(".entry") })
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: outbox + "/" + name))
        let flush = try await runProcess(CLITests.binary, ["--outbox", outbox, "--flush"])
        #expect(flush.status == 0 && flush.stderr.contains("damaged entry set aside"), "\(flush.stderr)")
        #expect(FileManager.default.fileExists(atPath: outbox + "/" + name + ".corrupt"))
    }

    @Test func aFileBodyThatChangedIsNotSent() async throws {
        let port = TestServers.unusedPort()
        let outbox = try scratch()
        let file = outbox + "-body.txt"
        try Data("version 1".utf8).write(to: URL(fileURLWithPath: file))
        let queued = try await runProcess(CLITests.binary, ["-s", "--outbox", outbox, "-T", file, "http://127.0.0.1:\(port)/submit"])
        #expect(queued.status == 75)
        try Data("version 2!".utf8).write(to: URL(fileURLWithPath: file))
        let server = await s.privateIdempotencyServer(port: port)
        let flush = try await runProcess(CLITests.binary, ["-s", "--outbox", outbox, "--flush"])
        #expect(flush.status == 75 && flush.stdout.contains("is not the file that was frozen"), "\(flush.stdout)")
        let untouched = try await keys(server)
        #expect(untouched.isEmpty && waiting(outbox).count == 1)
        try Data("version 1".utf8).write(to: URL(fileURLWithPath: file))
        let again = try await runProcess(CLITests.binary, ["-s", "--outbox", outbox, "--flush"])
        let delivered = try await keys(server)
        #expect(again.status == 0 && delivered.first?.value.body == "version 1")
    }

    /// Crash safety: `courier --outbox` killed with SIGKILL at random points, then one flush:
    /// every request that reached the journal or the server is delivered, none twice without its
    /// key (the server sees a repeated key, not a new request), none lost.
    @Test func killMinusNineLosesNothing() async throws {
        let server = await s.privateIdempotencyServer()
        let outbox = try scratch()
        let runs = 40
        var snapshots = Set<String>()
        var generator = SystemRandomNumberGenerator()
        for run in 0..<runs {
            // Up to 250 ms: a debug build under the full run's load takes tens of milliseconds to start.
            let delay = UInt32.random(in: 0...250_000, using: &generator)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CLITests.binary)
            process.arguments = ["-s", "--outbox", outbox] + (0..<3).flatMap { _ in ["-d", "run \(run)", server + "/submit?delay=20"] }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                Thread.detachNewThread {
                    do {
                        try process.run()
                        usleep(delay)
                        kill(process.processIdentifier, SIGKILL)
                        // Reaped with waitpid, not waitUntilExit: Foundation sometimes misses a
                        // child's end, and one such zombie hung a whole run.
                        guard reap(process, within: 60) != nil else { throw ChildTimedOut(command: "courier --outbox", stderr: "") }
                        continuation.resume()
                    } catch { continuation.resume(throwing: error) }
                }
            }
            snapshots.formUnion(waiting(outbox))
        }
        let before = try await keys(server)
        let flush = try await runProcess(CLITests.binary, ["-s", "--outbox", outbox, "--flush"])
        #expect(flush.status == 0, "\(flush.stdout)\(flush.stderr)")
        #expect(waiting(outbox).isEmpty)
        let after = try await keys(server)
        let enqueued = snapshots.union(before.keys)
        let lost = enqueued.subtracting(after.keys)
        let repeats = after.values.reduce(0) { $0 + $1.count - 1 }
        print("kill -9 outbox: \(runs) runs, \(enqueued.count) requests enqueued, \(after.count) delivered, \(repeats) repeated keys (recognised by the server), \(lost.count) lost")
        #expect(lost.isEmpty, "lost: \(lost)")
        #expect(Set(after.keys) == enqueued, "nothing reached the server that was not journaled first")
    }
}
