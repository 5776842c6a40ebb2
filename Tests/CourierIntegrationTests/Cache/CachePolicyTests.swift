import Foundation
import Synchronization
import Testing
@testable import Courier
@testable import CourierCore

/// Request policies and the phases callers see: MKNetworkKit's cached-then-fresh, made explicit.
@Suite("Cache policies")
struct CachePolicyTests {
    /// Every response `op` delivers: its phase, whether it is the preview, its body.
    func deliveries(_ api: Engine, _ op: HTTPOperation) async throws -> (phases: [CachePhase], previews: [Bool], bodies: [String]) {
        var seen: (phases: [CachePhase], previews: [Bool], bodies: [String]) = ([], [], [])
        for try await response in api.responses(op) {
            seen.phases.append(response.cachePhase)
            seen.previews.append(response.isPreview)
            seen.bodies.append(response.bodyText)
        }
        return seen
    }

    @Test func cachedThenFreshDeliversTheStoredResponseThenTheNetworksAnswer() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=1"), ("ETag", "\"c1\"")], body: "cached copy")
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        cache.core.advanceClock(bySeconds: 30)
        let op = api.operation(path: resource.path)
        op.cachePolicy = .cachedThenFresh
        let (phases, previews, bodies) = try await deliveries(api, op)
        #expect(bodies == ["cached copy", "cached copy"])
        #expect(phases == [.cached(stale: true), .notModified])
        #expect(previews == [true, false])
        #expect(op.state == .finished && op.response?.cachePhase == .notModified)
    }

    @Test func cachedThenFreshWithAFreshResponseDeliversOnce() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=600")], body: "fresh")
        let (api, _) = cachedEngine()
        _ = try await api.get(resource.path)
        let op = api.operation(path: resource.path)
        op.cachePolicy = .cachedThenFresh
        #expect(try await deliveries(api, op).phases == [.cached(stale: false)])
        #expect(await resource.requests() == 1)
    }

    /// MKNetworkKit's own: the stored copy at once even when fresh, and the origin always asked
    /// (conditionally): the second delivery is the network's.
    @Test func cachedThenNetworkAsksEvenWhenTheStoredResponseIsFresh() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=600"), ("ETag", "\"n1\"")], body: "fresh")
        let (api, _) = cachedEngine()
        _ = try await api.get(resource.path)
        let op = api.operation(path: resource.path)
        op.cachePolicy = .cachedThenNetwork
        let (phases, previews, bodies) = try await deliveries(api, op)
        #expect(bodies == ["fresh", "fresh"])
        #expect(phases == [.cached(stale: false), .notModified])
        #expect(previews == [true, false])
        #expect(await resource.requests() == 2, "the origin was asked")
    }

    @Test func cachedThenFreshCallsTheCompletionHandlerTwiceWithTypedPhases() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=1")], body: "v1")
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        cache.core.advanceClock(bySeconds: 30)
        await resource.configure(headers: [("Cache-Control", "max-age=1")], body: "v2")
        let op = api.operation(path: resource.path)
        op.cachePolicy = .cachedThenFresh
        let seen = Mutex<[(CachePhase, String, Bool)]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            op.onCompletion { response in
                let count = seen.withLock { list -> Int in
                    list.append((response.cachePhase, response.bodyText, response.isCachedResponse))
                    return list.count
                }
                if count == 2 { done.resume() }
            }
            api.enqueue(op)
        }
        let calls = seen.withLock { $0 }
        #expect(calls.map(\.0) == [.cached(stale: true), .fresh])
        #expect(calls.map(\.1) == ["v1", "v2"])
        #expect(calls.map(\.2) == [true, false], "isCachedResponse tells the calls apart")
    }

    @Test func sendReturnsTheFinalResponseOfCachedThenFresh() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=1")], body: "old")
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        cache.core.advanceClock(bySeconds: 30)
        await resource.configure(headers: [("Cache-Control", "max-age=1")], body: "new")
        let final = try await api.get(resource.path, policy: .cachedThenFresh)
        #expect(final.cachePhase == .fresh && final.bodyText == "new")
    }

    @Test func cachedThenFreshWithNothingStoredIsOneNetworkResponse() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=1")], body: "first")
        let (api, _) = cachedEngine()
        let op = api.operation(path: resource.path)
        op.cachePolicy = .cachedThenFresh
        var phases: [CachePhase] = []
        for try await response in api.responses(op) { phases.append(response.cachePhase) }
        #expect(phases == [.fresh])
    }

    @Test func cachedThenFreshReportsANetworkFailureAfterThePreview() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=1")], body: "preview")
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        cache.core.advanceClock(bySeconds: 30)
        await resource.configure(fail: "reset")
        let op = api.operation(path: resource.path)
        op.cachePolicy = .cachedThenFresh
        var phases: [CachePhase] = []
        do {
            for try await response in api.responses(op) { phases.append(response.cachePhase) }
        } catch {
            Issue.record("a revalidation that cannot reach the origin is a generated 504, not \(error)")
        }
        #expect(phases == [.cached(stale: true), .generated])
    }

    @Test func reloadIgnoresTheStoredResponseAndStoresTheNewOne() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=600")], body: "a")
        let (api, _) = cachedEngine()
        _ = try await api.get(resource.path)
        await resource.configure(headers: [("Cache-Control", "max-age=600")], body: "b")
        let reloaded = try await api.get(resource.path, policy: .reload)
        #expect(reloaded.cachePhase == .fresh && reloaded.bodyText == "b")
        #expect(reloaded.cacheStatus == "bypass")
        #expect(try await api.get(resource.path).bodyText == "b")
    }

    @Test func returnCacheElseLoadServesAnyAge() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=1")], body: "old but fine")
        let (api, cache) = cachedEngine()
        #expect(try await api.get(resource.path, policy: .returnCacheElseLoad).cachePhase == .fresh)
        cache.core.advanceClock(bySeconds: 100_000)
        let response = try await api.get(resource.path, policy: .returnCacheElseLoad)
        #expect(response.cachePhase == .cached(stale: true) && response.cacheStatus == "stale")
        #expect(await resource.requests() == 1)
    }

    @Test func cacheOnlyNeverTouchesTheNetwork() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=1")], body: "offline")
        let (api, cache) = cachedEngine()
        let nothing = try await api.get(resource.path, policy: .cacheOnly)
        #expect(nothing.status == 504 && nothing.cachePhase == .generated && nothing.cacheStatus == "miss")
        _ = try await api.get(resource.path)
        cache.core.advanceClock(bySeconds: 100_000)
        let stale = try await api.get(resource.path, policy: .cacheOnly)
        #expect(stale.cachePhase == .cached(stale: true) && stale.bodyText == "offline")
        #expect(await resource.requests() == 1)
    }

    @Test func aFailedStatusStillCountsAsAResponseTheCacheServed() async throws {
        // The default engine accepts 200..<400: a generated 504 is an .httpStatus error with the
        // response beside it, like any other 504.
        let cache = try Cache()
        var settings = Engine.Configuration()
        settings.cache = cache
        let api = Engine(host: TestServers.shared.scripted, configuration: settings)
        let op = api.operation(path: ScriptedResource().path)
        op.cachePolicy = .cacheOnly
        do {
            _ = try await api.send(op)
            Issue.record("a 504 is not an accepted status")
        } catch {
            #expect(error.code == .httpStatus && error.status == 504)
            #expect(op.response?.cachePhase == .generated)
        }
    }

    @Test func cacheStatusWords() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=60"), ("ETag", "\"w\"")], body: "w")
        let (api, cache) = cachedEngine()
        #expect(try await api.get(resource.path).cacheStatus == "miss")
        #expect(try await api.get(resource.path).cacheStatus == "hit")
        cache.core.advanceClock(bySeconds: 100)
        #expect(try await api.get(resource.path).cacheStatus == "revalidated")
        #expect(try await api.get(resource.path, method: .post).cacheStatus == "bypass")
        let plain = Engine(host: TestServers.shared.scripted)
        #expect(try await plain.send(plain.operation(path: resource.path)).cacheStatus == "bypass")
    }

    @Test func loopThreadHandlersOfACacheHitStillRunOnTheLoop() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=60")], body: "x")
        let (api, _) = cachedEngine()  // callbackQueue: .loopThread
        _ = try await api.get(resource.path)
        let onLoop = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            let op = api.operation(path: resource.path)
            op.onCompletion { _ in done.resume(returning: Runtime.shared.isOnLoopThread) }
            api.enqueue(op)
        }
        #expect(onLoop)
    }

    @Test func droppingTheSequenceEarlyCancelsTheOperation() async throws {
        let resource = ScriptedResource()
        let (api, cache) = cachedEngine()
        await resource.configure(headers: [("Cache-Control", "max-age=1")], body: "seed")
        _ = try await api.get(resource.path)
        cache.core.advanceClock(bySeconds: 30)
        await resource.configure(headers: [("Cache-Control", "max-age=1")], body: "slow", held: true)
        defer { Task { await resource.release() } }
        let op = api.operation(path: resource.path)
        op.cachePolicy = .cachedThenFresh
        for try await response in api.responses(op) {
            #expect(response.isPreview)
            break
        }
        #expect(await waitForOperation(op))
        #expect(op.error?.code == .cancelled)
    }
}

/// Waits (up to 10 s) until an operation has finished.
func waitForOperation(_ op: Courier.HTTPOperation) async -> Bool {
    for _ in 0..<1000 {
        if op.state == .finished { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return false
}

@Suite("DataCache")
struct DataCacheTests {
    @Test func aBlobIsFetchedOnceAndKeptWhateverItsAge() async throws {
        let resource = ScriptedResource("blob")
        await resource.configure(body: "thumbnail bytes")
        let directory = TestServers.shared.root + "/blobs-\(UUID().uuidString.prefix(8))"
        let blobs = try DataCache(directory: directory, memoryEntryLimit: 2)
        #expect(try await blobs.data(for: resource.url) == Array("thumbnail bytes".utf8))
        blobs.cache.core.advanceClock(bySeconds: 30 * 86_400)
        #expect(try await blobs.data(for: resource.url) == Array("thumbnail bytes".utf8))
        #expect(await resource.requests() == 1)
        let viaHandler = await withCheckedContinuation { done in
            blobs.data(for: resource.url) { done.resume(returning: (try? $0.get()) ?? []) }
        }
        #expect(viaHandler == Array("thumbnail bytes".utf8))
        #expect(blobs.cache.statistics.hits == 2)
        // The memory tier keeps two entries: a third blob evicts one (the disk tier keeps all).
        for name in ["second", "third"] {
            let other = ScriptedResource(name)
            await other.configure(body: "\(name) bytes")
            #expect(try await blobs.data(for: other.url) == Array("\(name) bytes".utf8))
        }
        #expect(blobs.cache.statistics.memoryEntries == 2)
        #expect(blobs.cache.statistics.memoryEvictions == 1)
    }
}
