import Foundation
import Synchronization
import Testing
@testable import Courier
@testable import CourierCore

/// Freezable operations through an engine's `Outbox`, against the Idempotency-Key recording server.
@Suite("Outbox")
struct OutboxTests {
    let s = TestServers.shared

    func keys(_ server: String) async throws -> [String: OutboxTestSupport.Seen] { try await OutboxTestSupport.keys(server) }

    func scratch() -> String { OutboxTestSupport.scratchPath() }

    /// Collects outcomes from any thread.
    final class Outcomes: Sendable {
        private let list = Mutex<[Outbox.Outcome]>([])
        func add(_ outcome: Outbox.Outcome) { list.withLock { $0.append(outcome) } }
        var all: [Outbox.Outcome] { list.withLock { $0 } }
    }

    @Test func aFrozenOperationIsJournaledSentWithItsKeyAndForgottenWhenAnswered() async throws {
        let server = await s.privateIdempotencyServer()
        let outbox = try Outbox(directory: scratch())
        let outcomes = Outcomes()
        outbox.onFinished(kind: "draft") { outcomes.add($0) }
        var configuration = Engine.Configuration()
        configuration.outbox = outbox
        let api = Engine(host: server, configuration: configuration)
        let save = api.operation(path: "/submit", method: .post)
        save.body = .bytes(Array("draft 1".utf8))
        save.freeze(kind: "draft")
        let id = try #require(save.outboxID)
        let response = try await api.send(save)
        #expect(response.status == 201 && response.text == "created \(id)")
        let seen = try await keys(server)
        #expect(seen[id]?.count == 1 && seen[id]?.body == "draft 1")
        #expect(outbox.waiting.isEmpty)
        try await waitUntil { outcomes.all.count == 1 }
        #expect(outcomes.all.first?.id == id && (try? outcomes.all.first?.result.get().status) == 201)
        // Without an outbox, freezing is a misuse, reported as an error.
        let plain = Engine(host: server)
        let lonely = plain.operation(path: "/submit", method: .post)
        lonely.freeze()
        await #expect(throws: CourierError.self) { _ = try await plain.send(lonely) }
        #expect(lonely.error?.code == .misuse)
    }

    @Test func anUnansweredOperationWaitsAndGoesOutWhenTheHostIsBack() async throws {
        let port = TestServers.unusedPort()
        let outbox = try Outbox(directory: scratch(), retryInterval: .milliseconds(200))
        var configuration = Engine.Configuration()
        configuration.outbox = outbox
        let api = Engine(host: "http://127.0.0.1:\(port)", configuration: configuration)
        let save = api.operation(path: "/submit", method: .put)
        save.body = .bytes(Array("kept".utf8))
        save.freeze(kind: "draft")
        let sending = Task { try await api.send(save) }
        try await waitUntil { outbox.waiting.count == 1 && save.state == .ready }
        #expect(outbox.waiting.first?.id == save.outboxID && outbox.waiting.first?.method == "PUT")
        let server = await s.privateIdempotencyServer(port: port)
        let response = try await sending.value
        #expect(response.status == 201, "sent by the retry after the host came back")
        #expect(try await keys(server)[save.outboxID!]?.body == "kept")
        #expect(outbox.waiting.isEmpty)
    }

    @Test func cancellingAWaitingOperationRemovesIt() async throws {
        let outbox = try Outbox(directory: scratch(), retryInterval: .seconds(3600))
        var configuration = Engine.Configuration()
        configuration.outbox = outbox
        let api = Engine(host: "http://127.0.0.1:\(TestServers.unusedPort())", configuration: configuration)
        let save = api.operation(path: "/submit", method: .post)
        save.freeze()
        let sending = Task { try await api.send(save) }
        try await waitUntil { outbox.waiting.count == 1 && save.state == .ready }
        save.cancel()
        await #expect(throws: CourierError.self) { _ = try await sending.value }
        #expect(save.error?.code == .cancelled && outbox.waiting.isEmpty)
    }

    /// What another process left (the CLI's `--outbox`, the same journal) is sent by the next
    /// engine that opens the directory, and its outcome reaches the handlers registered by kind.
    @Test func whatAnEarlierProcessLeftIsReplayed() async throws {
        let port = TestServers.unusedPort()
        let directory = scratch()
        let cli = try await runProcess(CLITests.binary, ["-s", "--outbox", directory, "-d", "from the CLI", "http://127.0.0.1:\(port)/submit"])
        #expect(cli.status == 75)
        let server = await s.privateIdempotencyServer(port: port)
        let outbox = try Outbox(directory: directory)
        let left = try #require(outbox.waiting.first)
        let outcomes = Outcomes()
        outbox.onFinished(kind: "courier") { outcomes.add($0) }
        var configuration = Engine.Configuration()
        configuration.outbox = outbox
        let engine = Engine(host: server, configuration: configuration)
        try await waitUntil { outcomes.all.count == 1 }
        #expect(outcomes.all.first?.id == left.id && (try? outcomes.all.first?.result.get().status) == 201)
        #expect(try await keys(server)[left.id]?.body == "from the CLI")
        #expect(outbox.waiting.isEmpty)
        withExtendedLifetime(engine) {}
    }

    @Test func fromC() async throws {
        let server = await s.privateIdempotencyServer()
        let bin = try await CExamples.shared.directory()
        let checks = try await runProcess(bin + "/outbox", ["checks", server, scratch()])
        #expect(checks.status == 0, "\(checks.stdout)\(checks.stderr)")

        // A frozen request whose host is down waits, and goes out once the host is back.
        let port = TestServers.unusedPort()
        let directory = scratch()
        async let waited = runProcess(bin + "/outbox", ["wait", "http://127.0.0.1:\(port)/submit", directory])
        try await waitUntil { ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).contains { $0.hasSuffix(".entry") } }
        let late = await s.privateIdempotencyServer(port: port)
        let run = try await waited
        #expect(run.status == 0 && run.stdout.hasPrefix("delivered 201 "), "\(run.stdout)\(run.stderr)")
        let key = run.stdout.split(separator: "\n").first.map { String($0.split(separator: " ").last ?? "") } ?? ""
        #expect(try await keys(late)[key]?.body == "waited")
    }

    /// Per-host reachability, network changes through the engine's descriptor and idle
    /// connections dropped on a change, from C (a process of its own: it forces network changes).
    @Test func reachabilityAndTheDescriptorFromC() async throws {
        let server = await s.privateIdempotencyServer()
        let bin = try await CExamples.shared.directory()
        let run = try await runProcess(bin + "/outbox", ["reach", server])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    }

    /// Polls `condition` every 10 ms for up to 10 s.
    func waitUntil(_ condition: @escaping @Sendable () -> Bool) async throws {
        for _ in 0..<1000 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        try #require(condition())
    }
}
