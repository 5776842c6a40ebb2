import Testing
@testable import Courier
@testable import CourierCore

@Suite("Cache basics")
struct CacheSmokeTests {
    @Test func aFreshResponseIsServedFromMemory() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=60")], body: "one")
        let (api, cache) = cachedEngine()
        let first = try await api.get(resource.path)
        #expect(first.bodyText == "one")
        #expect(first.cachePhase == .fresh)
        let second = try await api.get(resource.path)
        #expect(second.bodyText == "one")
        #expect(second.cachePhase == .cached(stale: false))
        #expect(second.headers["Age"] != nil)
        #expect(await resource.requests() == 1)
        #expect(cache.statistics.hits == 1)
    }
}
