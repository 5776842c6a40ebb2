import Testing
@testable import CourierCore

/// RFC 9111 section 5.2: parsing Cache-Control.
@Suite("CacheDirectives")
struct CacheDirectivesTests {
    func parse(_ lines: String...) -> CacheDirectives {
        CacheDirectives(HTTPHeaders(lines.map { ("Cache-Control", $0) }))
    }

    @Test func s5_2_namesAreCaseInsensitiveAndArgumentsTokenOrQuoted() {
        let d = parse("Max-Age=60, MUST-REVALIDATE,  private ,stale-if-error=\"30\"")
        #expect(d.maxAge == 60)
        #expect(d.mustRevalidate)
        #expect(d.isPrivate)
        #expect(d.staleIfError == 30)
    }

    /// Every directive the cache knows, in mixed case, each with its argument; near misses (a
    /// name one letter off, a longer name) are unknown directives, ignored (section 5.2.3).
    @Test func s5_2_everyKnownDirectiveWhateverItsCase() {
        let d = parse("Public, PRIVATE, Max-Age=1, No-Store, No-Cache, S-MaxAge=2, IMMUTABLE, Max-Stale=3, Min-Fresh=4",
                      "Stale-If-Error=5, Only-If-Cached, Must-Revalidate, Must-Understand, Stale-While-Revalidate=6")
        #expect(d.isPublic && d.isPrivate && d.noStore && d.noCache && d.immutable && d.onlyIfCached)
        #expect(d.mustRevalidate && d.mustUnderstand)
        #expect(d.maxAge == 1 && d.sharedMaxAge == 2 && d.maxStale == 3 && d.minFresh == 4)
        #expect(d.staleIfError == 5 && d.staleWhileRevalidate == 6)
        let none = parse("publik, max-agex=1, no-stor, no-cachee, immutables, stale-while-revalidated=9, x-max-age=3")
        #expect(none == CacheDirectives())
    }

    @Test func s5_2_everyFieldLineCounts() {
        let d = parse("max-age=10", "no-cache", "immutable")
        #expect(d.maxAge == 10 && d.noCache && d.immutable)
    }

    @Test func s4_2_1_theFirstOfRepeatedDirectivesCounts() {
        #expect(parse("max-age=10, max-age=20").maxAge == 10)
    }

    @Test func s4_2_1_invalidFreshnessMakesTheResponseStale() {
        #expect(parse("max-age=abc").maxAge == 0)
        #expect(parse("max-age=-5").maxAge == 0)
        #expect(parse("max-age").maxAge == 0)
    }

    @Test func s1_2_2_deltaSecondsSaturateAtTwoToTheThirtyFirst() {
        #expect(parse("max-age=99999999999999999999").maxAge == 1 << 31)
    }

    @Test func s5_2_1_2_maxStaleWithoutArgumentAcceptsAnyStaleness() {
        #expect(parse("max-stale").maxStale == .max)
        #expect(parse("max-stale=5").maxStale == 5)
    }

    @Test func s5_2_2_4_qualifiedNoCacheNamesFieldsOnly() {
        let d = parse("no-cache=\"Set-Cookie, X-Secret\"")
        #expect(!d.noCache)
        #expect(d.noCacheFields == ["set-cookie", "x-secret"])
    }

    @Test func s5_2_3_unknownDirectivesAreIgnored() {
        let d = parse("community=\"UCI\", x-ext, max-age=5")
        #expect(d.maxAge == 5)
    }

    @Test func requestDirectives() {
        let d = parse("no-store, min-fresh=7, only-if-cached, max-age=0")
        #expect(d.noStore && d.onlyIfCached)
        #expect(d.minFresh == 7)
        #expect(d.maxAge == 0)
    }

    @Test func s5_4_pragmaNoCacheCountsOnlyWithoutCacheControl() {
        #expect(CacheDirectives.pragmaNoCache(["Pragma": "no-cache"]))
        #expect(CacheDirectives.pragmaNoCache(["Pragma": "foo, No-Cache"]))
        #expect(!CacheDirectives.pragmaNoCache(["Pragma": "no-cache", "Cache-Control": "max-age=5"]))
        #expect(!CacheDirectives.pragmaNoCache(["Pragma": "other"]))
    }

    @Test func garbageNeverTraps() {
        for text in ["=", ",,,", "\"", "a=\"unterminated", "=5, max-age=5", "max-age = 5", "\u{7f}\u{1}"] {
            _ = parse(text)
        }
        #expect(parse("max-age = 5").maxAge == 5)
    }
}
