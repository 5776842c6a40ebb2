import Testing
@testable import CourierCore

/// RFC 9111 (and RFC 5861, RFC 8246) as the private cache applies them: one test per rule, named
/// by section. Times are epoch seconds; every response below arrived at `t`.
@Suite("CacheRules")
struct CacheRulesTests {
    let t: Int64 = 1_000_000

    func storable(_ fields: [(String, String)], status: Int = 200, request: [(String, String)] = [],
                  method: HTTPMethod = .get) -> Bool {
        let headers = HTTPHeaders(fields)
        let requestHeaders = HTTPHeaders(request)
        return CacheRules.isStorable(status: status, headers: headers, directives: CacheDirectives(headers),
                                     request: CacheRequest(method: method, headers: requestHeaders))
    }

    func decide(_ stored: StoredResponse?, _ request: [(String, String)] = [], policy: CachePolicy = .useProtocol,
                at now: Int64? = nil, method: HTTPMethod = .get) -> CacheDecision {
        CacheRules.decide(stored: stored, request: cacheRequest(request, method: method), policy: policy, now: now ?? t)
    }

    // MARK: Section 3: storing responses

    @Test func s3_aGetResponseWithExplicitFreshnessIsStored() {
        #expect(storable([("Cache-Control", "max-age=60")]))
        #expect(storable([("Expires", httpDate(t, 60))], status: 302))
    }

    @Test func s3_onlyGetResponsesAreStored() {
        #expect(!storable([("Cache-Control", "max-age=60")], method: .post))
        #expect(!storable([("Cache-Control", "max-age=60")], method: .head))
    }

    @Test func s3_heuristicallyCacheableStatusesNeedNoExplicitFreshness() {
        for status in [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501] { #expect(storable([], status: status), "\(status)") }
        for status in [201, 302, 303, 307, 400, 403, 500, 503] { #expect(!storable([], status: status), "\(status)") }
    }

    @Test func s3_publicOrPrivateMakesAnyFinalStatusStorable() {
        #expect(storable([("Cache-Control", "public")], status: 302))
        #expect(storable([("Cache-Control", "private")], status: 500))
    }

    @Test func s3_partialContentAndNotModifiedAreNeverStoredAsTheyAre() {
        #expect(!storable([("Cache-Control", "max-age=60")], status: 206))
        #expect(!storable([("Cache-Control", "max-age=60")], status: 304))
    }

    @Test func s5_2_2_5_noStoreInTheResponseForbidsStoring() {
        #expect(!storable([("Cache-Control", "no-store, max-age=60")]))
    }

    @Test func s5_2_1_5_noStoreInTheRequestForbidsStoring() {
        #expect(!storable([("Cache-Control", "max-age=60")], request: [("Cache-Control", "no-store")]))
    }

    @Test func s5_2_2_3_mustUnderstandOverridesNoStoreForAStatusTheCacheUnderstands() {
        #expect(storable([("Cache-Control", "must-understand, no-store, max-age=60")]))
        #expect(storable([("Cache-Control", "must-understand, no-store, max-age=60")], status: 404))
    }

    @Test func s5_2_2_3_mustUnderstandOnAStatusTheCacheDoesNotUnderstandIsNeverStored() {
        for status in [218, 299, 418, 425, 499, 599] {
            #expect(!storable([("Cache-Control", "must-understand, no-store, max-age=60")], status: status), "\(status)")
            #expect(!storable([("Cache-Control", "must-understand, max-age=60")], status: status), "\(status) without no-store")
            #expect(storable([("Cache-Control", "max-age=60")], status: status), "\(status): storable without must-understand")
        }
    }

    @Test func s3_5_aResponseToARequestWithCredentialsNeedsExplicitPermission() {
        let auth = [("Authorization", "Basic dTpw")]
        #expect(!storable([("Cache-Control", "max-age=60")], request: auth))
        for permission in ["public", "private", "must-revalidate, max-age=60", "s-maxage=60"] {
            #expect(storable([("Cache-Control", permission)], request: auth), "\(permission)")
        }
    }

    @Test func s4_1_varyStarIsNeverStored() {
        #expect(!storable([("Cache-Control", "max-age=60"), ("Vary", "*")]))
        #expect(!storable([("Cache-Control", "max-age=60"), ("Vary", "Accept, *")]))
        #expect(storable([("Cache-Control", "max-age=60"), ("Vary", "Accept")]))
    }

    @Test func requestsWithTheirOwnPreconditionsOrRangesTheCacheCannotPlaceAreNotItsBusiness() {
        for field in ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range", "Range"] {
            #expect(!storable([("Cache-Control", "max-age=60")], request: [(field, "x")]), "\(field)")
            #expect(decide(storedResponse([("Cache-Control", "max-age=60")]), [(field, "x")]) == .bypass, "\(field)")
        }
        for range in ["bytes=0-1,4-5", "items=0-1", "bytes=5-2"] {
            #expect(decide(storedResponse([("Cache-Control", "max-age=60")]), [("Range", range)]) == .bypass, "\(range)")
        }
        // One byte range is (section 3.4): looked up, and its whole 200 stored, never another status.
        #expect(decide(storedResponse([("Cache-Control", "max-age=60")]), [("Range", "bytes=0-1")]) == .serve(stale: false, revalidateInBackground: false))
        #expect(storable([("Cache-Control", "max-age=60")], request: [("Range", "bytes=0-1")]))
        #expect(!storable([("Cache-Control", "max-age=60")], status: 416, request: [("Range", "bytes=0-1")]))
    }

    @Test func s3_1_hopByHopAndProxyFieldsAreNotStored() {
        let headers: HTTPHeaders = ["Connection": "close, X-Hop", "X-Hop": "1", "Keep-Alive": "timeout=5", "TE": "trailers",
                                    "Transfer-Encoding": "chunked", "Upgrade": "h2c", "Proxy-Authenticate": "Basic",
                                    "Proxy-Authentication-Info": "x", "Proxy-Connection": "keep-alive", "ETag": "\"a\"", "X-Kept": "yes"]
        let stored = CacheRules.storedFields(headers, directives: CacheDirectives())
        #expect(stored.count == 2)
        #expect(stored["ETag"] == "\"a\"" && stored["X-Kept"] == "yes")
    }

    @Test func s5_2_2_4_fieldsAQualifiedNoCacheNamesAreNotStored() {
        let headers: HTTPHeaders = ["Cache-Control": "no-cache=\"Set-Cookie\", max-age=60", "Set-Cookie": "id=1", "X-Other": "kept"]
        let stored = CacheRules.storedFields(headers, directives: CacheDirectives(headers))
        #expect(!stored.contains("Set-Cookie"))
        #expect(stored["X-Other"] == "kept")
    }

    @Test func s3_1_valuesAreStoredByteForByte() {
        var headers = HTTPHeaders()
        let name = Array("X-Latin".utf8), value: [UInt8] = [0x63, 0x61, 0x66, 0xE9]  // "café" in Latin-1
        name.withUnsafeBytes { n in value.withUnsafeBytes { v in headers.appendField(name: n, value: v) } }
        let stored = CacheRules.storedFields(headers, directives: CacheDirectives())
        stored.withFieldBytes(at: 0) { _, v in #expect(Array(v) == value) }
    }

    // MARK: Section 3.2: updating stored header fields

    @Test func s3_2_aValidationResponseReplacesTheFieldsItCarries() {
        let stored: HTTPHeaders = ["ETag": "\"a\"", "Cache-Control": "max-age=1", "X-Multi": "1", "X-Multi": "2", "X-Stays": "s"]
        let update: HTTPHeaders = ["Cache-Control": "max-age=60", "X-Multi": "3", "X-New": "n"]
        let merged = CacheRules.updatedFields(stored, with: update)
        #expect(merged["Cache-Control"] == "max-age=60")
        #expect(merged.values(for: "X-Multi") == ["3"])
        #expect(merged["X-New"] == "n" && merged["X-Stays"] == "s" && merged["ETag"] == "\"a\"")
    }

    @Test func s3_2_contentLengthCodingAndUnstoredFieldsAreNotUpdated() {
        let stored: HTTPHeaders = ["Content-Length": "10", "Content-Encoding": "gzip", "Vary": "Accept"]
        let update: HTTPHeaders = ["Content-Length": "0", "Content-Encoding": "br", "Vary": "*", "Connection": "close",
                                   "Transfer-Encoding": "chunked"]
        let merged = CacheRules.updatedFields(stored, with: update)
        #expect(merged["Content-Length"] == "10" && merged["Content-Encoding"] == "gzip" && merged["Vary"] == "Accept")
        #expect(!merged.contains("Connection") && !merged.contains("Transfer-Encoding"))
    }

    // MARK: Section 4.2.1: freshness lifetime

    @Test func s4_2_1_maxAgeIsTheFreshnessLifetime() {
        #expect(storedResponse([("Cache-Control", "max-age=60")]).freshnessLifetime == 60)
    }

    @Test func s4_2_1_sMaxAgeIsForSharedCachesOnly() {
        #expect(storedResponse([("Cache-Control", "s-maxage=60"), ("Date", httpDate(t))], status: 302).freshnessLifetime == 0)
    }

    @Test func s4_2_1_maxAgeWinsOverExpires() {
        #expect(storedResponse([("Cache-Control", "max-age=5"), ("Expires", httpDate(t, 500)), ("Date", httpDate(t))]).freshnessLifetime == 5)
    }

    @Test func s4_2_1_expiresMinusDate() {
        #expect(storedResponse([("Expires", httpDate(t, 90)), ("Date", httpDate(t, -10))]).freshnessLifetime == 100)
    }

    @Test func s4_2_1_expiresWithoutDateCountsFromTheResponseTime() {
        #expect(storedResponse([("Expires", httpDate(t, 90))]).freshnessLifetime == 90)
    }

    @Test func s5_3_anInvalidExpiresMeansAlreadyExpired() {
        #expect(storedResponse([("Expires", "0"), ("Last-Modified", httpDate(t, -10_000))]).freshnessLifetime == 0)
    }

    // MARK: Section 4.2.2: heuristic freshness

    @Test func s4_2_2_aTenthOfTheTimeSinceLastModification() {
        let response = storedResponse([("Date", httpDate(t)), ("Last-Modified", httpDate(t, -10_000))])
        #expect(response.freshnessLifetime == 1_000)
    }

    @Test func s4_2_2_heuristicFreshnessIsBounded() {
        let response = storedResponse([("Date", httpDate(t)), ("Last-Modified", httpDate(t, -100 * 86_400 * 10))])
        #expect(response.freshnessLifetime == CacheRules.heuristicLimit)
    }

    @Test func s4_2_2_onlyForHeuristicallyCacheableStatusesOrPublic() {
        let fields = [("Date", httpDate(t)), ("Last-Modified", httpDate(t, -10_000))]
        #expect(storedResponse(fields, status: 302).freshnessLifetime == 0)
        #expect(storedResponse(fields + [("Cache-Control", "public")], status: 302).freshnessLifetime == 1_000)
    }

    @Test func s4_2_2_noHeuristicWhenTheResponseGivesAnExplicitExpiration() {
        let fields = [("Date", httpDate(t)), ("Last-Modified", httpDate(t, -10_000))]
        #expect(storedResponse(fields + [("Cache-Control", "max-age=3")]).freshnessLifetime == 3)
        #expect(storedResponse(fields + [("Expires", httpDate(t, 7))]).freshnessLifetime == 7)
    }

    // MARK: Section 4.2.3: age

    @Test func s4_2_3_apparentAgeFromDate() {
        let response = storedResponse([("Date", httpDate(t, -30))])
        #expect(response.correctedInitialAge == 30)
        #expect(response.currentAge(now: t + 10) == 40)
    }

    @Test func s4_2_3_ageFieldPlusResponseDelay() {
        let response = storedResponse([("Date", httpDate(t)), ("Age", "100")], requestTime: t - 2, responseTime: t)
        #expect(response.correctedInitialAge == 102)
    }

    @Test func s5_1_anAgeListIsReadByItsFirstMember() {
        let listed = storedResponse([("Date", httpDate(t)), ("Age", "100, 7")], requestTime: t - 2, responseTime: t)
        #expect(listed.correctedInitialAge == 102, "100, the first member, plus the response delay")
        let spaced = storedResponse([("Date", httpDate(t)), ("Age", " 60 ,abc")], requestTime: t, responseTime: t)
        #expect(spaced.correctedInitialAge == 60)
        let broken = storedResponse([("Date", httpDate(t)), ("Age", "x, 100")], requestTime: t, responseTime: t)
        #expect(broken.correctedInitialAge == 0, "a first member that is not delta-seconds counts as none")
        let twoLines = storedResponse([("Date", httpDate(t)), ("Age", "30"), ("Age", "900")], requestTime: t, responseTime: t)
        #expect(twoLines.correctedInitialAge == 30, "the first field line")
    }

    @Test func s4_2_3_theLargerOfApparentAndCorrectedAge() {
        let response = storedResponse([("Date", httpDate(t, -500)), ("Age", "100")])
        #expect(response.correctedInitialAge == 500)
    }

    @Test func s4_2_3_freshWhileLifetimeExceedsCurrentAge() {
        let response = storedResponse([("Cache-Control", "max-age=60"), ("Date", httpDate(t))])
        #expect(response.isFresh(now: t + 59))
        #expect(!response.isFresh(now: t + 60))
        #expect(response.staleness(now: t + 70) == 10)
    }

    @Test func s1_2_2_ageSaturates() {
        let response = storedResponse([("Age", "99999999999999999999")])
        #expect(response.correctedInitialAge == 1 << 31)
        #expect(response.currentAge(now: .max / 2) == 1 << 31)
    }

    /// Times come from files and servers: no pair of clock readings overflows the arithmetic
    /// (found by the cachefile fuzz target: `now - responseTime` trapped).
    @Test func s4_2_3_clockReadingsAtTheEndsOfTheRangeSaturate() {
        let ancient = storedResponse([("Cache-Control", "max-age=60")], requestTime: .max, responseTime: .min)
        #expect(ancient.correctedInitialAge == 0)
        #expect(ancient.currentAge(now: .max) == 1 << 31)
        #expect(ancient.currentAge(now: .min) == 0)
        #expect(CacheRules.elapsed(from: .min, to: .max) == 1 << 31)
        #expect(CacheRules.elapsed(from: .max, to: .min) == 0)
        #expect(CacheRules.elapsed(from: 10, to: 25) == 15)
    }

    /// Lifetimes from dates when the response time (standing in for a missing Date) is any clock
    /// reading a file may hold (found by the cachefile fuzz target: `date - modified` trapped).
    @Test func s4_2_1_lifetimesFromExtremeClockReadingsSaturate() {
        let heuristic = storedResponse([("Last-Modified", "Thu, 01 Jan 0000 00:00:00 GMT")], requestTime: .max, responseTime: .max)
        #expect(heuristic.freshnessLifetime == 7 * 86_400, "capped heuristic")
        let expires = storedResponse([("Expires", "Fri, 31 Dec 9999 23:59:59 GMT")], requestTime: .min, responseTime: .min)
        #expect(expires.freshnessLifetime == 1 << 31)
        let twoDigits = storedResponse([("Date", "Sunday, 06-Nov-94 08:49:37 GMT"), ("Expires", "Monday, 07-Nov-94 08:49:37 GMT")],
                                       requestTime: .max, responseTime: .max)
        #expect(twoDigits.freshnessLifetime == 86_400)
    }

    // MARK: Section 4: reusing stored responses

    @Test func s4_aFreshStoredResponseAnswers() {
        #expect(decide(storedResponse([("Cache-Control", "max-age=60")])) == .serve(stale: false, revalidateInBackground: false))
    }

    @Test func s4_nothingStoredMeansFetch() {
        #expect(decide(nil) == .fetch)
    }

    @Test func s4_headIsAnsweredFromAStoredGet() {
        #expect(decide(storedResponse([("Cache-Control", "max-age=60")]), method: .head) == .serve(stale: false, revalidateInBackground: false))
    }

    @Test func s4_unsafeMethodsBypassTheCache() {
        #expect(decide(storedResponse([("Cache-Control", "max-age=60")]), method: .post) == .bypass)
    }

    @Test func s4_2_4_aStaleResponseIsValidatedNotServed() {
        #expect(decide(storedResponse([("Cache-Control", "max-age=60")]), at: t + 61) == .validate(staleOnError: false))
    }

    @Test func s5_2_2_4_noCacheAlwaysValidatesEvenWhenFresh() {
        #expect(decide(storedResponse([("Cache-Control", "no-cache, max-age=600")])) == .validate(staleOnError: false))
    }

    @Test func s5_2_2_2_mustRevalidateForbidsServingStaleEvenWhenTheClientAccepts() {
        let stored = storedResponse([("Cache-Control", "max-age=60, must-revalidate")])
        #expect(decide(stored, [("Cache-Control", "max-stale")], at: t + 100) == .validate(staleOnError: false))
        #expect(decide(stored, policy: .returnCacheElseLoad, at: t + 100) == .validate(staleOnError: false))
        #expect(decide(stored, at: t + 10) == .serve(stale: false, revalidateInBackground: false), "fresh is fine")
    }

    @Test func s5_2_1_4_requestNoCacheValidates() {
        #expect(decide(storedResponse([("Cache-Control", "max-age=60")]), [("Cache-Control", "no-cache")]) == .validate(staleOnError: false))
    }

    @Test func s5_4_requestPragmaNoCacheValidatesWithoutCacheControl() {
        let stored = storedResponse([("Cache-Control", "max-age=60")])
        #expect(decide(stored, [("Pragma", "no-cache")]) == .validate(staleOnError: false))
        #expect(decide(stored, [("Pragma", "no-cache"), ("Cache-Control", "max-age=100")]) == .serve(stale: false, revalidateInBackground: false))
    }

    @Test func s5_2_1_1_requestMaxAgeLimitsTheAcceptableAge() {
        let stored = storedResponse([("Cache-Control", "max-age=600"), ("Date", httpDate(t))])
        #expect(decide(stored, [("Cache-Control", "max-age=10")], at: t + 5) == .serve(stale: false, revalidateInBackground: false))
        #expect(decide(stored, [("Cache-Control", "max-age=10")], at: t + 11) == .validate(staleOnError: false))
        #expect(decide(stored, [("Cache-Control", "max-age=0")]) == .validate(staleOnError: false))
    }

    @Test func s5_2_1_2_requestMaxStaleAcceptsStaleness() {
        let stored = storedResponse([("Cache-Control", "max-age=60")])
        #expect(decide(stored, [("Cache-Control", "max-stale=30")], at: t + 80) == .serve(stale: true, revalidateInBackground: false))
        #expect(decide(stored, [("Cache-Control", "max-stale=30")], at: t + 100) == .validate(staleOnError: false))
        #expect(decide(stored, [("Cache-Control", "max-stale")], at: t + 100_000) == .serve(stale: true, revalidateInBackground: false))
    }

    @Test func s5_2_1_3_requestMinFreshNeedsFreshnessLeft() {
        let stored = storedResponse([("Cache-Control", "max-age=60")])
        #expect(decide(stored, [("Cache-Control", "min-fresh=20")], at: t + 30) == .serve(stale: false, revalidateInBackground: false))
        #expect(decide(stored, [("Cache-Control", "min-fresh=20")], at: t + 50) == .validate(staleOnError: false))
    }

    @Test func s5_2_1_7_onlyIfCachedNeverAsksTheOrigin() {
        let fresh = storedResponse([("Cache-Control", "max-age=60")])
        #expect(decide(fresh, [("Cache-Control", "only-if-cached")]) == .serve(stale: false, revalidateInBackground: false))
        #expect(decide(nil, [("Cache-Control", "only-if-cached")]) == .gatewayTimeout)
        #expect(decide(fresh, [("Cache-Control", "only-if-cached")], at: t + 100) == .gatewayTimeout)
        #expect(decide(fresh, [("Cache-Control", "only-if-cached, max-stale")], at: t + 100) == .serve(stale: true, revalidateInBackground: false))
    }

    @Test func s5_2_1_5_requestNoStoreMayStillBeAnsweredFromStorage() {
        #expect(decide(storedResponse([("Cache-Control", "max-age=60")]), [("Cache-Control", "no-store")]) == .serve(stale: false, revalidateInBackground: false))
    }

    @Test func rfc8246_immutableIgnoresTheRequestsAgeLimitsWhileFresh() {
        let stored = storedResponse([("Cache-Control", "max-age=600, immutable")])
        #expect(decide(stored, [("Cache-Control", "max-age=0")]) == .serve(stale: false, revalidateInBackground: false))
        #expect(decide(stored, [("Cache-Control", "no-cache")]) == .validate(staleOnError: false), "a forced reload still validates")
        #expect(decide(stored, at: t + 601) == .validate(staleOnError: false), "stale is stale")
    }

    @Test func rfc5861_3_staleWhileRevalidateServesStaleAndRevalidatesInTheBackground() {
        let stored = storedResponse([("Cache-Control", "max-age=60, stale-while-revalidate=30")])
        #expect(decide(stored, at: t + 80) == .serve(stale: true, revalidateInBackground: true))
        #expect(decide(stored, at: t + 100) == .validate(staleOnError: false))
        #expect(decide(stored, [("Cache-Control", "max-age=5")], at: t + 80) == .validate(staleOnError: false))
    }

    @Test func rfc5861_4_staleIfErrorAllowsTheStoredResponseWhenTheOriginFails() {
        let stored = storedResponse([("Cache-Control", "max-age=60, stale-if-error=100")])
        #expect(decide(stored, at: t + 100) == .validate(staleOnError: true))
        #expect(decide(stored, at: t + 200) == .validate(staleOnError: false))
        let plain = storedResponse([("Cache-Control", "max-age=60")])
        #expect(decide(plain, [("Cache-Control", "stale-if-error=60")], at: t + 100) == .validate(staleOnError: true))
        #expect(decide(plain, policy: .staleIfError, at: t + 1_000_000) == .validate(staleOnError: true))
    }

    @Test func s4_2_4_staleIfErrorNeverOverridesMustRevalidateOrNoCache() {
        for directives in ["max-age=60, must-revalidate, stale-if-error=1000", "no-cache, stale-if-error=1000"] {
            #expect(decide(storedResponse([("Cache-Control", directives)]), policy: .staleIfError, at: t + 100) == .validate(staleOnError: false))
        }
    }

    // MARK: Request policies

    @Test func reloadIgnoresWhatIsStored() {
        #expect(decide(storedResponse([("Cache-Control", "max-age=60")]), policy: .reload) == .fetch)
    }

    @Test func returnCacheElseLoadServesAnyAge() {
        let stored = storedResponse([("Cache-Control", "max-age=60")])
        #expect(decide(stored, policy: .returnCacheElseLoad, at: t + 10_000) == .serve(stale: true, revalidateInBackground: false))
        #expect(decide(nil, policy: .returnCacheElseLoad) == .fetch)
    }

    @Test func cacheOnlyNeverTouchesTheNetwork() {
        let stored = storedResponse([("Cache-Control", "max-age=60")])
        #expect(decide(stored, policy: .cacheOnly, at: t + 10_000) == .serve(stale: true, revalidateInBackground: false))
        #expect(decide(nil, policy: .cacheOnly) == .gatewayTimeout)
        #expect(decide(storedResponse([("Cache-Control", "no-cache")]), policy: .cacheOnly) == .gatewayTimeout)
        #expect(decide(stored, policy: .reload, at: t) == .fetch)
    }

    @Test func cachedThenNetworkAlwaysAsks() {
        let stored = storedResponse([("Cache-Control", "max-age=60"), ("ETag", "\"e\"")])
        #expect(decide(stored, policy: .cachedThenNetwork) == .previewThenValidate(staleOnError: false), "fresh: asked all the same")
        #expect(decide(stored, policy: .cachedThenNetwork, at: t + 100) == .previewThenValidate(staleOnError: false))
        #expect(decide(nil, policy: .cachedThenNetwork) == .fetch)
        // only-if-cached still forbids the network: the stored response, or a 504.
        #expect(decide(stored, [("Cache-Control", "only-if-cached")], policy: .cachedThenNetwork) == .serve(stale: false, revalidateInBackground: false))
        #expect(decide(nil, [("Cache-Control", "only-if-cached")], policy: .cachedThenNetwork) == .gatewayTimeout)
        let lenient = storedResponse([("Cache-Control", "max-age=60, stale-if-error=600")])
        #expect(decide(lenient, policy: .cachedThenNetwork, at: t + 100) == .previewThenValidate(staleOnError: true))
    }

    @Test func cachedThenFreshPreviewsAStaleResponseAndServesAFreshOne() {
        let stored = storedResponse([("Cache-Control", "max-age=60")])
        #expect(decide(stored, policy: .cachedThenFresh) == .serve(stale: false, revalidateInBackground: false))
        #expect(decide(stored, policy: .cachedThenFresh, at: t + 100) == .previewThenValidate(staleOnError: false))
        #expect(decide(nil, policy: .cachedThenFresh) == .fetch)
    }

    // MARK: Section 4.3: validation

    @Test func s4_3_1_theStoredValidatorsBecomePreconditions() {
        let stored = storedResponse([("ETag", "\"v1\""), ("Last-Modified", httpDate(t, -100))])
        let fields = CacheRules.conditionalFields(for: stored)
        #expect(fields.map(\.name) == ["If-None-Match", "If-Modified-Since"])
        #expect(fields[0].value == "\"v1\"" && fields[1].value == httpDate(t, -100))
        #expect(CacheRules.conditionalFields(for: storedResponse()).isEmpty)
    }

    @Test func s4_3_4_a304SelectsTheStoredResponseItsValidatorMatches() {
        let tagged = storedResponse([("ETag", "\"v1\"")])
        #expect(CacheRules.updateSelects(tagged, headers: ["ETag": "\"v1\""]))
        #expect(CacheRules.updateSelects(tagged, headers: ["ETag": "W/\"v1\""]), "weak comparison")
        #expect(!CacheRules.updateSelects(tagged, headers: ["ETag": "\"v2\""]))
        #expect(CacheRules.updateSelects(tagged, headers: [:]), "a 304 without validators updates the one response")
        let dated = storedResponse([("Last-Modified", httpDate(t, -5))])
        #expect(CacheRules.updateSelects(dated, headers: ["Last-Modified": httpDate(t, -5)]))
        #expect(!CacheRules.updateSelects(dated, headers: ["Last-Modified": httpDate(t, -1)]))
        #expect(!CacheRules.updateSelects(storedResponse(), headers: ["ETag": "\"x\""]))
    }

    @Test func s4_3_5_aHeadResponseThatContradictsTheStoredGetOutdatesIt() {
        let stored = storedResponse([("ETag", "\"v1\""), ("Content-Length", "4")])
        #expect(!CacheRules.headContradicts(stored, headers: ["ETag": "\"v1\"", "Content-Length": "4"]))
        #expect(CacheRules.headContradicts(stored, headers: ["ETag": "\"v2\""]))
        #expect(CacheRules.headContradicts(stored, headers: ["Content-Length": "5"]))
        #expect(CacheRules.headContradicts(storedResponse([("Last-Modified", "a")]), headers: ["Last-Modified": "b"]))
    }

    // MARK: Section 4.4: invalidation

    @Test func s4_4_anUnsafeRequestsSuccessInvalidates() {
        #expect(CacheRules.invalidates(method: .post, status: 201))
        #expect(CacheRules.invalidates(method: .delete, status: 204))
        #expect(CacheRules.invalidates(method: .put, status: 303))
        #expect(!CacheRules.invalidates(method: .post, status: 404))
        #expect(!CacheRules.invalidates(method: .post, status: 500))
        #expect(!CacheRules.invalidates(method: .get, status: 200))
        #expect(!CacheRules.invalidates(method: .options, status: 200))
    }

    @Test func s4_4_locationAndContentLocationOnTheSameOriginAreInvalidatedToo() throws {
        let url = try CourierURL(parsing: "http://a.example/items")
        let keys = CacheRules.invalidatedKeys(url: url, headers: ["Location": "/items/7", "Content-Location": "http://b.example/x"])
        #expect(keys == ["http://a.example/items", "http://a.example/items/7"])
    }

    // MARK: Section 4.1: Vary

    @Test func s4_1_varyNamesAreLowerCasedSortedAndCombined() {
        #expect(CacheRules.varyNames(["Vary": "Accept-Language, accept", "Vary": "Accept"]) == ["accept", "accept-language"])
        #expect(CacheRules.varyNames(["Vary": "accept, *"]) == nil)
        #expect(CacheRules.varyNames([:]) == [])
    }

    @Test func s4_1_variantKeysMatchUpToWhitespaceAndLineCombination() {
        let a = CacheKey.variant(names: ["accept"]) { $0 == "accept" ? "text/html,  application/json" : nil }
        let b = CacheKey.variant(names: ["accept"]) { $0 == "accept" ? "text/html , application/json" : nil }
        #expect(a == b)
        let absent = CacheKey.variant(names: ["accept"]) { _ in nil }
        let empty = CacheKey.variant(names: ["accept"]) { $0 == "accept" ? "" : nil }
        #expect(absent != empty, "an absent field is not an empty one")
    }

    @Test func credentialsAreAlwaysPartOfTheVariantAndNeverStoredInClear() {
        let alice = CacheKey.variant(names: []) { $0 == "authorization" ? "Basic YWxpY2U6cA==" : nil }
        let bob = CacheKey.variant(names: []) { $0 == "authorization" ? "Basic Ym9iOnA=" : nil }
        let nobody = CacheKey.variant(names: []) { _ in nil }
        #expect(alice != bob && alice != nobody && nobody.isEmpty)
        #expect(!alice.contains("YWxpY2U"))
    }

    // MARK: Section 4 / 5.1: what is served

    @Test func s5_1_aStoredResponseIsServedWithAGeneratedAge() {
        let stored = storedResponse([("Age", "3"), ("Date", httpDate(t)), ("X-A", "1")])
        let head = stored.servedHead(now: t + 10)
        #expect(head.headers.values(for: "Age") == ["13"])
        #expect(head.headers["X-A"] == "1")
    }

    @Test func s4_2_4_theGeneratedGatewayTimeout() {
        let head = CacheRules.gatewayTimeoutHead(now: t)
        #expect(head.status == 504 && head.reason == "Gateway Timeout")
        #expect(head.headers["Date"] == httpDate(t))
    }

    @Test func originErrorStatusesForStaleIfError() {
        #expect([500, 502, 503, 504].allSatisfy(CacheRules.isOriginErrorStatus))
        #expect(![200, 404, 501, 505].contains(where: CacheRules.isOriginErrorStatus))
    }
}
