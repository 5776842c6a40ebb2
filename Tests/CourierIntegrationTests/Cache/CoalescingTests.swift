import Foundation
import Synchronization
import Testing
@testable import Courier
@testable import CourierCore

/// Identical GETs in flight share one network request; each caller keeps its own handle.
@Suite("Coalescing")
struct CoalescingTests {
    /// An engine that coalesces (with a cache, or `always` without one).
    func engine(cached: Bool) -> Engine {
        var settings = Engine.Configuration()
        settings.callbackQueue = .loopThread
        if cached { settings.cache = try! Cache() } else { settings.options.coalescing = .always }
        return Engine(host: TestServers.shared.scripted, configuration: settings)
    }

    // Every resource here is `held`: the server answers only when the test releases it, so each
    // test decides what has happened before the answer arrives (no delay to race on a slow machine).

    @Test(arguments: [true, false])
    func aThousandIdenticalGetsReachTheServerOnce(cached: Bool) async throws {
        let resource = ScriptedResource("many")
        await resource.configure(headers: [("Cache-Control", "no-store")], body: "shared answer", held: true)
        let api = engine(cached: cached)
        let operations = (0..<1000).map { _ in api.operation(path: resource.path) }
        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for op in operations { group.addTask { try await api.send(op).bodyText } }
            // Every caller has joined (one leader and 999 followers live) before the answer comes.
            #expect(await waitOnLive(resource, count: 1000))
            await resource.release()
            var all: [String] = []
            for try await body in group { all.append(body) }
            return all
        }
        #expect(bodies.count == 1000 && bodies.allSatisfy { $0 == "shared answer" })
        #expect(await resource.requests() == 1)
        #expect(operations.filter { $0.response?.metrics.coalesced == true }.count == 999)
    }

    @Test func differentRequestsAreNotCoalesced() async throws {
        let resource = ScriptedResource("diff")
        await resource.configure(headers: [("Cache-Control", "no-store")], body: "x", held: true)
        let api = engine(cached: true)
        async let plain = api.get(resource.path)
        async let withHeader = api.get(resource.path, headers: [("Accept-Language", "de")])
        async let withAuth = api.get(resource.path, headers: [("Authorization", "Bearer z")])
        async let head = api.get(resource.path, method: .head)
        // All four reach the server while none has been answered: none joined another.
        #expect(await waitForScriptedServer(group: "res-" + resource.name, seen: 4))
        await resource.release()
        _ = try await (plain, withHeader, withAuth, head)
        #expect(await resource.requests() == 4)
    }

    @Test func withoutACacheIdenticalRequestsAreSeparateByDefault() async throws {
        let resource = ScriptedResource("plain")
        await resource.configure(body: "x", held: true)
        let api = Engine(host: TestServers.shared.scripted)
        async let a = api.send(api.operation(path: resource.path))
        async let b = api.send(api.operation(path: resource.path))
        #expect(await waitForScriptedServer(group: "res-" + resource.name, seen: 2))
        await resource.release()
        _ = try await (a, b)
        #expect(await resource.requests() == 2)
    }

    @Test func cancellingSomeCallersDetachesOnlyThem() async throws {
        let resource = ScriptedResource("cancel")
        await resource.configure(headers: [("Cache-Control", "no-store")], body: "for the rest", held: true)
        let api = engine(cached: true)
        let operations = (0..<10).map { _ in api.operation(path: resource.path) }
        for op in operations { api.enqueue(op) }
        #expect(await waitForScriptedServer(group: "res-" + resource.name, seen: 1))
        #expect(await waitOnLive(resource, count: 10))
        // The leader (the first) and four followers leave before the answer.
        for op in operations.prefix(5) { op.cancel() }
        for op in operations.prefix(5) {
            #expect(await waitForOperation(op))
            #expect(op.error?.code == .cancelled)
        }
        await resource.release()
        for op in operations.suffix(5) {
            #expect(await waitForOperation(op))
            #expect(op.response?.bodyText == "for the rest", "\(String(describing: op.error))")
        }
        #expect(await resource.requests() == 1)
    }

    @Test func theExchangeStopsWhenEveryCallerHasCancelled() async throws {
        let resource = ScriptedResource("all")
        await resource.configure(headers: [("Cache-Control", "no-store")], body: "nobody", held: true)
        let api = engine(cached: true)
        let operations = (0..<4).map { _ in api.operation(path: resource.path) }
        for op in operations { api.enqueue(op) }
        #expect(await waitForScriptedServer(group: "res-" + resource.name, seen: 1))
        #expect(await waitOnLive(resource, count: 4))
        for op in operations.reversed() { op.cancel() }
        for op in operations {
            #expect(await waitForOperation(op))
            #expect(op.error?.code == .cancelled)
        }
        // Nothing is left running: the shared request was cancelled with its last caller.
        #expect(await liveTransfers(for: resource) == 0)
        await resource.release()
    }

    @Test func aCancelledCallersEngineCancelAllDoesNotStopTheOthers() async throws {
        let resource = ScriptedResource("engines")
        await resource.configure(headers: [("Cache-Control", "no-store")], body: "survives", held: true)
        let shared = try Cache()
        var settings = Engine.Configuration()
        settings.cache = shared
        let first = Engine(host: TestServers.shared.scripted, configuration: settings)
        let second = Engine(host: TestServers.shared.scripted, configuration: settings)
        let a = first.operation(path: resource.path)
        let b = second.operation(path: resource.path)
        first.enqueue(a)
        second.enqueue(b)
        #expect(await waitForScriptedServer(group: "res-" + resource.name, seen: 1))
        #expect(await waitOnLive(resource, count: 2))
        first.cancelAll()
        #expect(await waitForOperation(a) && a.error?.code == .cancelled)
        await resource.release()
        #expect(await waitForOperation(b))
        #expect(b.response?.bodyText == "survives")
    }

    @Test func followersGetTheLeadersFailureToo() async throws {
        let resource = ScriptedResource("fail")
        await resource.configure(status: 500, body: "down", held: true)
        let api = engine(cached: true)
        let operations = (0..<5).map { _ in api.operation(path: resource.path) }
        for op in operations { api.enqueue(op) }
        #expect(await waitOnLive(resource, count: 5))
        await resource.release()
        for op in operations {
            #expect(await waitForOperation(op))
            #expect(op.error?.code == .httpStatus && op.response?.bodyText == "down")
        }
        #expect(await resource.requests() == 1)
    }

    /// Waits (up to 10 s) until the loop holds `count` transfers for the resource.
    func waitOnLive(_ resource: ScriptedResource, count: Int) async -> Bool {
        for _ in 0..<1000 {
            if await liveTransfers(for: resource) == count { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// Transfers the loop still holds for the resource.
    func liveTransfers(for resource: ScriptedResource) async -> Int {
        let path = resource.path
        return await withCheckedContinuation { continuation in
            Runtime.shared.countLive(where: { $0.url.path == path }) { continuation.resume(returning: $0) }
        }
    }
}
