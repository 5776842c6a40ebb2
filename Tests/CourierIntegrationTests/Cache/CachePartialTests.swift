import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// RFC 9111 sections 3.3 and 3.4 end to end: parts of a representation kept, combined and served
/// as 206s from storage, against the scripted server (which counts what reaches it) and nginx
/// (its own Range support and strong entity tags).
@Suite("Cache partial responses")
struct CachePartialTests {
    static let text = "0123456789abcdefghij"

    /// A resource of `text` that answers single byte ranges, fresh for a minute.
    private func rangedResource(etag: String = "\"p1\"", cut: Int? = nil) async -> ScriptedResource {
        let resource = ScriptedResource("part")
        await resource.configure(headers: [("Cache-Control", "max-age=60"), ("ETag", etag)], body: Self.text, ranges: true, cut: cut)
        return resource
    }

    private func range(_ api: Engine, _ resource: ScriptedResource, _ spec: String,
                       policy: CachePolicy = .useProtocol) async throws -> Response {
        try await api.get(resource.path, headers: [("Range", "bytes=" + spec)], policy: policy)
    }

    @Test func s3_4_aStoredRangeAnswersARangeWithinIt() async throws {
        let resource = await rangedResource()
        let (api, cache) = cachedEngine()
        let first = try await range(api, resource, "0-9")
        #expect(first.status == 206 && first.cachePhase == .fresh && first.bodyText == "0123456789")
        let again = try await range(api, resource, "2-4")
        #expect(again.cachePhase == .cached(stale: false))
        #expect(again.status == 206 && again.bodyText == "234")
        #expect(again.headers["Content-Range"] == "bytes 2-4/20")
        #expect(again.headers["Content-Length"] == "3")
        #expect(again.headers["Age"] != nil && again.headers["ETag"] == "\"p1\"")
        #expect(await resource.requests() == 1)
        #expect(cache.statistics.hits == 1)
    }

    @Test func s3_4_partsOfOneRepresentationCombineIntoTheWhole() async throws {
        let resource = await rangedResource()
        let (api, _) = cachedEngine()
        _ = try await range(api, resource, "0-7")
        _ = try await range(api, resource, "12-")
        // Overlapping both stored parts: the gap between them is still the origin's.
        let gap = try await range(api, resource, "6-13")
        #expect(gap.cachePhase == .fresh && gap.bodyText == "6789abcd")
        #expect(await resource.requests() == 3)
        // The three parts cover all 20 bytes: stored as the complete 200.
        let whole = try await api.get(resource.path)
        #expect(whole.cachePhase == .cached(stale: false))
        #expect(whole.status == 200 && whole.bodyText == Self.text)
        #expect(whole.headers["Content-Length"] == "20" && whole.headers["Content-Range"] == nil)
        let suffix = try await range(api, resource, "-5")
        #expect(suffix.cachePhase == .cached(stale: false) && suffix.bodyText == "fghij")
        #expect(suffix.headers["Content-Range"] == "bytes 15-19/20")
        #expect(await resource.requests() == 3)
    }

    @Test func s3_3_aPartNeverAnswersARequestForTheWhole() async throws {
        let resource = await rangedResource()
        let (api, _) = cachedEngine()
        _ = try await range(api, resource, "0-4")
        let whole = try await api.get(resource.path)
        #expect(whole.cachePhase == .fresh && whole.status == 200 && whole.bodyText == Self.text)
        #expect(await resource.requests() == 2)
        // The whole response replaced the part and answers ranges from now on.
        let part = try await range(api, resource, "10-11")
        #expect(part.cachePhase == .cached(stale: false) && part.status == 206 && part.bodyText == "ab")
        #expect(await resource.requests() == 2)
    }

    @Test func s3_2_aPartOfTheStoredWholeFreshensIt() async throws {
        let resource = await rangedResource()
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        cache.core.advanceClock(bySeconds: 120)
        // Stale: the range goes to the origin, whose 206 has the stored whole's strong tag.
        await resource.configure(headers: [("Cache-Control", "max-age=60"), ("ETag", "\"p1\""), ("X-Seen", "again")],
                                 body: Self.text, ranges: true)
        let part = try await range(api, resource, "0-3")
        #expect(part.cachePhase == .fresh && part.bodyText == "0123")
        let whole = try await api.get(resource.path)
        #expect(whole.cachePhase == .cached(stale: false) && whole.bodyText == Self.text)
        #expect(whole.headers["X-Seen"] == "again" && whole.headers["Content-Length"] == "20")
        #expect(await resource.requests() == 1)
    }

    @Test func s3_3_aHeadIsNotAnsweredFromParts() async throws {
        let resource = await rangedResource()
        let (api, _) = cachedEngine()
        _ = try await range(api, resource, "0-9")
        let head = try await api.get(resource.path, method: .head)
        #expect(head.cachePhase == .fresh && head.status == 200 && head.headers["Content-Length"] == "20")
        #expect(await resource.requests() == 2)
    }

    @Test func s5_2_1_4_aRangeWithNoCacheGoesToTheOrigin() async throws {
        let resource = await rangedResource()
        let (api, _) = cachedEngine()
        _ = try await range(api, resource, "0-9")
        let asked = try await api.get(resource.path, headers: [("Range", "bytes=0-4"), ("Cache-Control", "no-cache")])
        #expect(asked.cachePhase == .fresh && asked.status == 206 && asked.bodyText == "01234")
        #expect(await resource.requests() == 2)
    }

    @Test func s4_1_partsAreKeptPerVariant() async throws {
        let resource = ScriptedResource("part-vary")
        await resource.configure(headers: [("Cache-Control", "max-age=60"), ("ETag", "\"v\""), ("Vary", "Accept-Language")],
                                 body: Self.text, ranges: true)
        let (api, _) = cachedEngine()
        _ = try await api.get(resource.path, headers: [("Range", "bytes=0-9"), ("Accept-Language", "en")])
        let other = try await api.get(resource.path, headers: [("Range", "bytes=0-4"), ("Accept-Language", "fr")])
        #expect(other.cachePhase == .fresh, "another variant's part does not answer")
        let same = try await api.get(resource.path, headers: [("Range", "bytes=0-4"), ("Accept-Language", "en")])
        #expect(same.cachePhase == .cached(stale: false) && same.bodyText == "01234")
        #expect(await resource.requests() == 2)
    }

    @Test func s3_4_aPartOfAnotherRepresentationReplacesTheStoredParts() async throws {
        let resource = await rangedResource(etag: "\"v1\"")
        let (api, _) = cachedEngine()
        _ = try await range(api, resource, "0-9")
        await resource.configure(headers: [("Cache-Control", "max-age=60"), ("ETag", "\"v2\"")], body: "ABCDEFGHIJKLMNOPQRST", ranges: true)
        let second = try await range(api, resource, "10-19")
        #expect(second.bodyText == "KLMNOPQRST")
        // Not combined with v1's bytes: the first half is asked for again.
        let first = try await range(api, resource, "0-9")
        #expect(first.cachePhase == .fresh && first.bodyText == "ABCDEFGHIJ")
        #expect(await resource.requests() == 2)
        let whole = try await api.get(resource.path)
        #expect(whole.cachePhase == .cached(stale: false) && whole.bodyText == "ABCDEFGHIJKLMNOPQRST")
    }

    @Test func s3_4_partsWithoutAStrongValidatorAreNotKept() async throws {
        let resource = await rangedResource(etag: "W/\"weak\"")
        let (api, _) = cachedEngine()
        _ = try await range(api, resource, "0-9")
        let again = try await range(api, resource, "0-9")
        #expect(again.cachePhase == .fresh)
        #expect(await resource.requests() == 2)
    }

    @Test func s3_3_aResponseCutShortKeepsItsFirstPart() async throws {
        let resource = await rangedResource(cut: 8)
        let (api, _) = cachedEngine()
        await #expect(throws: CourierError.self) { _ = try await api.get(resource.path) }
        let kept = try await range(api, resource, "0-7")
        #expect(kept.cachePhase == .cached(stale: false) && kept.status == 206 && kept.bodyText == "01234567")
        #expect(kept.headers["Content-Range"] == "bytes 0-7/20")
        #expect(await resource.requests() == 1)
        // Past what arrived: the origin.
        let rest = try await range(api, resource, "8-")
        #expect(rest.cachePhase == .fresh && rest.bodyText == "89abcdefghij")
        #expect(await resource.requests() == 2)
        // The cut 200 and the 206 together are the whole.
        let whole = try await api.get(resource.path)
        #expect(whole.cachePhase == .cached(stale: false) && whole.bodyText == Self.text)
        #expect(await resource.requests() == 2)
    }

    @Test func s4_aStalePartGoesToTheOrigin() async throws {
        let resource = await rangedResource()
        let (api, cache) = cachedEngine()
        _ = try await range(api, resource, "0-9")
        cache.core.advanceClock(bySeconds: 120)
        let stale = try await range(api, resource, "0-4")
        #expect(stale.cachePhase == .fresh && stale.status == 206 && stale.bodyText == "01234")
        #expect(await resource.requests() == 2)
        // Combined with the new part, the stored one carries its fields and times: fresh again.
        let refreshed = try await range(api, resource, "5-9")
        #expect(refreshed.cachePhase == .cached(stale: false) && refreshed.bodyText == "56789")
        #expect(await resource.requests() == 2)
        // Offline, a stale part still answers, marked stale.
        cache.core.advanceClock(bySeconds: 120)
        let offline = try await range(api, resource, "5-9", policy: .cacheOnly)
        #expect(offline.cachePhase == .cached(stale: true) && offline.bodyText == "56789")
    }

    @Test func s5_2_1_7_onlyIfCachedWithoutThePartGetsA504() async throws {
        let resource = await rangedResource()
        let (api, _) = cachedEngine()
        _ = try await range(api, resource, "0-4")
        let missing = try await range(api, resource, "5-9", policy: .cacheOnly)
        #expect(missing.status == 504 && missing.cachePhase == .generated)
        #expect(await resource.requests() == 1)
    }

    @Test func rangesTheCacheCannotPlaceGoToTheOriginUntouched() async throws {
        let resource = await rangedResource()
        let (api, _) = cachedEngine()
        _ = try await api.get(resource.path)
        // Several ranges, and a Range with a precondition, are the caller's exchanges.
        let several = try await api.get(resource.path, headers: [("Range", "bytes=0-1,4-5")])
        #expect(several.cachePhase == .fresh)
        let conditional = try await api.get(resource.path, headers: [("Range", "bytes=0-1"), ("If-Range", "\"p1\"")])
        #expect(conditional.cachePhase == .fresh && conditional.status == 206)
        // Past the end: the origin's 416, not a cached answer.
        let beyond = try await range(api, resource, "40-")
        #expect(beyond.status == 416 && beyond.cachePhase == .fresh)
        #expect(await resource.requests() == 4)
    }

    @Test func nginxRangesCombineAndAnswerFromStorage() async throws {
        let cache = try Cache()
        var settings = Engine.Configuration()
        settings.cache = cache
        let api = Engine(host: TestServers.shared.nginx, configuration: settings)
        let expected = try await api.get("/medium").body
        #expect(expected.count == 16_384)
        // A second engine's cache sees only ranges.
        let ranged = try Cache()
        settings.cache = ranged
        let client = Engine(host: TestServers.shared.nginx, configuration: settings)
        let head = try await client.get("/expiring/medium", headers: [("Range", "bytes=0-8191")])
        #expect(head.status == 206 && head.cachePhase == .fresh && head.body == Array(expected[0..<8192]))
        let tail = try await client.get("/expiring/medium", headers: [("Range", "bytes=8192-")])
        #expect(tail.status == 206 && tail.cachePhase == .fresh)
        let middle = try await client.get("/expiring/medium", headers: [("Range", "bytes=4000-12000")])
        #expect(middle.status == 206 && middle.cachePhase == .cached(stale: false))
        #expect(middle.body == Array(expected[4000...12000]))
        let whole = try await client.get("/expiring/medium")
        #expect(whole.status == 200 && whole.cachePhase == .cached(stale: false) && whole.body == expected)
        #expect(ranged.statistics.hits == 2)
    }
}
