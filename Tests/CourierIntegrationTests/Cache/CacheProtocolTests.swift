import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// RFC 9111 end to end: an engine with a cache against the scripted server (which counts the
/// requests that reach it) and nginx (real ETag and Last-Modified validation).
@Suite("Cache protocol")
struct CacheProtocolTests {
    @Test func s4_3_aStaleResponseIsRevalidatedAnd304AnswersFromStorage() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")], body: "stored body",
                                 headers304: [("X-Validated", "yes")])
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        cache.core.advanceClock(bySeconds: 120)
        let revalidated = try await api.get(resource.path)
        #expect(revalidated.cachePhase == .notModified)
        #expect(revalidated.status == 200, "the stored status, not the 304")
        #expect(revalidated.bodyText == "stored body")
        #expect(revalidated.headers["X-Validated"] == "yes", "section 3.2: the 304's fields update the stored ones")
        #expect(await resource.requests() == 2)
        // Freshened by the 304: fresh again.
        let hit = try await api.get(resource.path)
        #expect(hit.cachePhase == .cached(stale: false))
        #expect(hit.headers["X-Validated"] == "yes")
        #expect(await resource.requests() == 2)
        #expect(cache.statistics.revalidations == 1 && cache.statistics.notModified == 1)
    }

    @Test func s4_3_1_nginxValidatesWithItsETagAndLastModified() async throws {
        let cache = try Cache()
        var settings = Engine.Configuration()
        settings.cache = cache
        let api = Engine(host: TestServers.shared.nginx, configuration: settings)
        // Under /revalidate/ nginx adds `Cache-Control: no-cache`: every reuse is validated.
        let first = try await api.get("/revalidate/small")
        #expect(first.cachePhase == .fresh && first.headers["ETag"] != nil && first.headers["Last-Modified"] != nil)
        let second = try await api.get("/revalidate/small")
        #expect(second.cachePhase == .notModified)
        #expect(second.body == first.body)
        #expect(cache.statistics.notModified == 1)
    }

    @Test func s4_3_2_aChangedRepresentationReplacesTheStoredOne() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")], body: "old")
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        await resource.configure(headers: [("Cache-Control", "max-age=60"), ("ETag", "\"v2\"")], body: "new")
        cache.core.advanceClock(bySeconds: 61)
        let changed = try await api.get(resource.path)
        #expect(changed.cachePhase == .fresh && changed.bodyText == "new")
        #expect(try await api.get(resource.path).bodyText == "new")
        #expect(await resource.requests() == 1)
    }

    @Test func s4_2_3_anOldDateMakesAResponseStaleOnArrival() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=60"), ("ETag", "\"d\"")], body: "aged", dateOffset: -100)
        let (api, _) = cachedEngine()
        _ = try await api.get(resource.path)
        #expect(try await api.get(resource.path).cachePhase == .notModified)
        #expect(await resource.requests() == 2)
    }

    @Test func s4_2_3_theAgeFieldReportsTheCurrentAge() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=600"), ("Age", "30")], body: "x")
        let (api, cache) = cachedEngine()
        let started = ContinuousClock.now
        _ = try await api.get(resource.path)
        cache.core.advanceClock(bySeconds: 10)
        let hit = try await api.get(resource.path)
        // 30 (the origin's Age) + 10 (the advanced clock) + the real time the test took (the
        // request's delay and the time stored), plus one for Date's whole seconds.
        let elapsed = Int((ContinuousClock.now - started).components.seconds) + 1
        let age = Int(hit.headers["Age"] ?? "") ?? -1
        #expect(age >= 40 && age <= 40 + elapsed + 1, "\(age) after \(elapsed) s")
        #expect(hit.headers.values(for: "Age").count == 1)
    }

    @Test func s4_2_1_expiresGivesFreshness() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Expires", HTTPDate.format(HTTPDate.now() + 300))], body: "until")
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        #expect(try await api.get(resource.path).cachePhase == .cached(stale: false))
        cache.core.advanceClock(bySeconds: 400)
        #expect(try await api.get(resource.path).cachePhase == .fresh, "no validator: a full request")
        #expect(await resource.requests() == 2)
    }

    @Test func s4_2_2_heuristicFreshnessFromLastModified() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Last-Modified", HTTPDate.format(HTTPDate.now() - 100_000))], body: "old file")
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        #expect(try await api.get(resource.path).cachePhase == .cached(stale: false), "fresh for about 10,000 s")
        cache.core.advanceClock(bySeconds: 20_000)
        #expect(try await api.get(resource.path).cachePhase == .notModified, "then validated with If-Modified-Since")
        #expect(await resource.requests() == 2)
    }

    @Test func s4_1_varyKeepsAVariantPerRequestFieldValue() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")], body: "lang", echo: "Accept-Language")
        let (api, _) = cachedEngine()
        #expect(try await api.get(resource.path, headers: [("Accept-Language", "en")]).bodyText == "lang en")
        #expect(try await api.get(resource.path, headers: [("Accept-Language", "de")]).bodyText == "lang de")
        let en = try await api.get(resource.path, headers: [("Accept-Language", "en")])
        #expect(en.bodyText == "lang en" && en.cachePhase == .cached(stale: false))
        #expect(try await api.get(resource.path, headers: [("Accept-Language", "de")]).cachePhase == .cached(stale: false))
        #expect(try await api.get(resource.path).bodyText == "lang -", "no field is a variant of its own")
        #expect(await resource.requests() == 3)
    }

    @Test func s4_1_varyStarIsNeverReused() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=60"), ("Vary", "*")], body: "star")
        let (api, _) = cachedEngine()
        _ = try await api.get(resource.path)
        #expect(try await api.get(resource.path).cachePhase == .fresh)
        #expect(await resource.requests() == 2)
    }

    @Test func s4_1_varyOnAcceptEncodingSeesTheFieldCourierAddsItself() async throws {
        let cache = try Cache()
        var settings = Engine.Configuration()
        settings.cache = cache
        let api = Engine(host: TestServers.shared.nginx, configuration: settings)
        // nginx gzips /gzip/text with Vary: Accept-Encoding.
        let decoded = try await api.get("/gzip/text")
        #expect(decoded.headers["Content-Encoding"] == "gzip" && decoded.headers["Vary"] != nil)
        let op = api.operation(path: "/gzip/text")
        op.options.decompress = false
        let raw = try await api.send(op)
        #expect(raw.cachePhase == .fresh, "a request without Accept-Encoding is another variant")
        #expect(raw.headers["Content-Encoding"] == nil)
        #expect(try await api.get("/gzip/text").body == decoded.body)
    }

    @Test func s4_4_anUnsafeMethodInvalidatesItsTargetAndSameOriginLocation() async throws {
        let resource = ScriptedResource()
        let other = ScriptedResource("loc")
        await resource.configure(headers: [("Cache-Control", "max-age=600"), ("Location", other.path)], body: "item")
        await other.configure(headers: [("Cache-Control", "max-age=600")], body: "other")
        let (api, _) = cachedEngine()
        _ = try await api.get(resource.path)
        _ = try await api.get(other.path)
        #expect(try await api.get(resource.path).cachePhase == .cached(stale: false))
        let post = try await api.get(resource.path, method: .post)
        #expect(post.status == 200)
        #expect(try await api.get(resource.path).cachePhase == .fresh, "the target was invalidated")
        #expect(try await api.get(other.path).cachePhase == .fresh, "so was the Location it named")
    }

    @Test func s4_4_aFailedUnsafeRequestInvalidatesNothing() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=600")], body: "kept")
        let (api, _) = cachedEngine()
        _ = try await api.get(resource.path)
        await resource.configure(status: 500, headers: [("Cache-Control", "max-age=600")], body: "boom")
        _ = try await api.get(resource.path, method: .delete)
        #expect(try await api.get(resource.path).bodyText == "kept")
    }

    @Test func s4_headIsAnsweredFromTheStoredGet() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=60")], body: "twelve bytes")
        let (api, _) = cachedEngine()
        _ = try await api.get(resource.path)
        let head = try await api.get(resource.path, method: .head)
        #expect(head.cachePhase == .cached(stale: false) && head.body.isEmpty)
        #expect(head.headers["Content-Length"] == "12")
        #expect(await resource.requests() == 1)
    }

    @Test func s4_3_5_aHeadResponseFreshensOrOutdatesTheStoredGet() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=60"), ("ETag", "\"h1\"")], body: "v1")
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        cache.core.advanceClock(bySeconds: 100)
        await resource.configure(headers: [("Cache-Control", "max-age=60"), ("ETag", "\"h1\""), ("X-Fresh", "1")], body: "v1")
        let op = api.operation(path: resource.path, method: .head)
        op.cachePolicy = .reload
        _ = try await api.send(op)
        let freshened = try await api.get(resource.path)
        #expect(freshened.cachePhase == .cached(stale: false) && freshened.headers["X-Fresh"] == "1")
        await resource.configure(headers: [("Cache-Control", "max-age=60"), ("ETag", "\"h2\"")], body: "v2")
        _ = try await api.send({ let o = api.operation(path: resource.path, method: .head); o.cachePolicy = .reload; return o }())
        #expect(try await api.get(resource.path).bodyText == "v2", "a contradicting HEAD outdated the stored GET")
    }

    @Test func s3_5_credentialsKeepResponsesApart() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=60")], body: "secret")
        let (api, _) = cachedEngine()
        _ = try await api.get(resource.path, headers: [("Authorization", "Bearer a")])
        _ = try await api.get(resource.path, headers: [("Authorization", "Bearer a")])
        #expect(await resource.requests() == 2, "not stored without explicit permission")
        await resource.configure(headers: [("Cache-Control", "private, max-age=60")], body: "mine")
        _ = try await api.get(resource.path, headers: [("Authorization", "Bearer a")])
        #expect(try await api.get(resource.path, headers: [("Authorization", "Bearer a")]).cachePhase == .cached(stale: false))
        #expect(try await api.get(resource.path, headers: [("Authorization", "Bearer b")]).cachePhase == .fresh, "another credential")
        #expect(try await api.get(resource.path).cachePhase == .fresh, "no credential")
    }

    @Test func s3_partialContentIsNotStored() async throws {
        let resource = ScriptedResource()
        await resource.configure(status: 206, headers: [("Cache-Control", "max-age=60"), ("Content-Range", "bytes 0-3/10")], body: "part")
        let (api, _) = cachedEngine()
        _ = try await api.get(resource.path)
        _ = try await api.get(resource.path)
        #expect(await resource.requests() == 2)
    }

    @Test func s5_2_2_5_noStoreIsNotStoredAndDropsTheOldResponse() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=1"), ("ETag", "\"n\"")], body: "before")
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        cache.core.advanceClock(bySeconds: 5)
        await resource.configure(headers: [("Cache-Control", "no-store")], body: "after")
        #expect(try await api.get(resource.path).bodyText == "after")
        #expect(try await api.get(resource.path, policy: .returnCacheElseLoad).cachePhase == .fresh, "nothing stored any more")
    }

    @Test func s5_2_2_4_noCacheRevalidatesEveryTime() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "no-cache"), ("ETag", "\"nc\"")], body: "validated")
        let (api, _) = cachedEngine()
        _ = try await api.get(resource.path)
        #expect(try await api.get(resource.path).cachePhase == .notModified)
        #expect(try await api.get(resource.path).cachePhase == .notModified)
        #expect(await resource.requests() == 3)
    }

    @Test func s5_2_1_requestDirectives() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=60"), ("ETag", "\"rq\"")], body: "r")
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        #expect(try await api.get(resource.path, headers: [("Cache-Control", "no-cache")]).cachePhase == .notModified)
        #expect(try await api.get(resource.path, headers: [("Pragma", "no-cache")]).cachePhase == .notModified)
        #expect(try await api.get(resource.path, headers: [("Cache-Control", "max-age=0")]).cachePhase == .notModified)
        cache.core.advanceClock(bySeconds: 70)
        let stale = try await api.get(resource.path, headers: [("Cache-Control", "max-stale=20")])
        #expect(stale.cachePhase == .cached(stale: true))
        #expect(try await api.get(resource.path, headers: [("Cache-Control", "min-fresh=30")]).cachePhase == .notModified)
        #expect(await resource.requests() == 5)
    }

    @Test func s5_2_1_7_onlyIfCachedWithNothingStoredIsAGatewayTimeout() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=60")], body: "never asked")
        let (api, cache) = cachedEngine()
        let response = try await api.get(resource.path, headers: [("Cache-Control", "only-if-cached")])
        #expect(response.status == 504 && response.cachePhase == .generated)
        #expect(await resource.requests() == 0)
        #expect(cache.statistics.generated == 1)
    }

    @Test func s4_2_4_aMustRevalidateResponseWhoseOriginIsDownIsAGatewayTimeout() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=1, must-revalidate"), ("ETag", "\"m\"")], body: "strict")
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        cache.core.advanceClock(bySeconds: 10)
        await resource.configure(fail: "reset")
        let response = try await api.get(resource.path, policy: .staleIfError)
        #expect(response.status == 504 && response.cachePhase == .generated)
        await resource.configure(fail: "close")
        #expect(try await api.get(resource.path).status == 504)
    }

    @Test func rfc5861_staleIfErrorServesTheStoredResponseWhileTheOriginIsDown() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=1, stale-if-error=3600"), ("ETag", "\"s\"")], body: "survivor")
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        cache.core.advanceClock(bySeconds: 60)
        await resource.configure(fail: "reset")
        let down = try await api.get(resource.path)
        #expect(down.cachePhase == .staleOnError && down.bodyText == "survivor" && down.isCachedResponse)
        await resource.configure(status: 503, body: "maintenance")
        let failing = try await api.get(resource.path)
        #expect(failing.cachePhase == .staleOnError && failing.bodyText == "survivor")
        cache.core.advanceClock(bySeconds: 7200)
        await resource.configure(fail: "reset")
        #expect(try await api.get(resource.path).status == 504, "outside the window")
    }

    @Test func rfc5861_theStaleIfErrorPolicyHasNoWindow() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=1")], body: "offline copy")
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        cache.core.advanceClock(bySeconds: 1_000_000)
        await resource.configure(fail: "reset")
        let response = try await api.get(resource.path, policy: .staleIfError)
        #expect(response.cachePhase == .staleOnError && response.bodyText == "offline copy")
        #expect(try await api.get(resource.path).status == 504, "the protocol's rules alone: no allowance")
    }

    @Test func rfc5861_staleWhileRevalidateAnswersAtOnceAndRefreshesBehind() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=1, stale-while-revalidate=600"), ("ETag", "\"w1\"")], body: "v1")
        let (api, cache) = cachedEngine()
        _ = try await api.get(resource.path)
        cache.core.advanceClock(bySeconds: 30)
        await resource.configure(headers: [("Cache-Control", "max-age=600"), ("ETag", "\"w2\"")], body: "v2")
        let stale = try await api.get(resource.path)
        #expect(stale.cachePhase == .cached(stale: true) && stale.bodyText == "v1")
        #expect(await waitForScriptedServer(group: "res-" + resource.name, seen: 1), "the background revalidation")
        var refreshed = ""
        for _ in 0..<200 {
            refreshed = try await api.get(resource.path).bodyText
            if refreshed == "v2" { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(refreshed == "v2")
    }

    @Test func rfc8246_immutableIsNotRevalidatedOnReload() async throws {
        let resource = ScriptedResource()
        await resource.configure(headers: [("Cache-Control", "max-age=600, immutable")], body: "forever")
        let (api, _) = cachedEngine()
        _ = try await api.get(resource.path)
        #expect(try await api.get(resource.path, headers: [("Cache-Control", "max-age=0")]).cachePhase == .cached(stale: false))
        #expect(await resource.requests() == 1)
    }

    @Test func httpsResponsesAreCached() async throws {
        let s = TestServers.shared
        let cache = try Cache()
        var settings = Engine.Configuration()
        settings.cache = cache
        settings.options.tls = s.trustTestCA
        let api = Engine(host: s.https, configuration: settings)
        _ = try await api.get("/revalidate/small")
        #expect(try await api.get("/revalidate/small").cachePhase == .notModified)
    }
}
