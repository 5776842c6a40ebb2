import Testing
@testable import CourierCore

/// curl's -z: the dates curl_getdate's documentation lists, the prefixes, a file's time, and
/// what is not a date.
@Suite("Time conditions")
struct TimeConditionTests {
    /// 1994-11-06 08:49:37 UTC.
    let t: Int64 = 784_111_777

    @Test func theFormsCurlDocuments() {
        for text in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
                     "06 Nov 1994 08:49:37 GMT", "06-Nov-94 08:49:37 GMT", "Nov  6 08:49:37 1994", "06 Nov 1994 08:49:37",
                     "06-Nov-94 08:49:37", "1994 Nov 6 08:49:37", "GMT 08:49:37 06-Nov-94 Sunday", "19941106 08:49:37"] {
            #expect(TimeCondition.parseDate(text) == t, "\(text)")
        }
        let midnight = t - (8 * 3600 + 49 * 60 + 37)
        for text in ["1994 Nov 6", "06-Nov-94", "Sun Nov 6 94", "1994.Nov.6", "Sun/Nov/6/94/GMT", "1994-11-06", "19941106"] {
            #expect(TimeCondition.parseDate(text) == midnight, "\(text)")
        }
        #expect(TimeCondition.parseDate("Sun, 06 Nov 1994 08:49:37 CET") == t - 3600)
        #expect(TimeCondition.parseDate("06 Nov 1994 08:49:37 EST") == t + 5 * 3600)
        #expect(TimeCondition.parseDate("Sun, 12 Sep 2004 15:05:58 -0700") == 1_095_026_758)
        #expect(TimeCondition.parseDate("Sat, 11 Sep 2004 21:32:11 +0200") == 1_094_931_131)
        #expect(TimeCondition.parseDate("20040912 15:05:58 -0700") == 1_095_026_758)
    }

    @Test func whatIsNotADate() {
        // (The long numbers once reached the date arithmetic and overflowed it: a crash.)
        for text in ["", "yesterday", "index.html", "32 Nov 1994", "1994 Foo 6", "06 Nov 1994 25:00:00", "6 7 8 9",
                     "6 Nov 123456789012345678", "123456789012 Nov 6", "06 Nov 99999"] {
            #expect(TimeCondition.parseDate(text) == nil, "\(text)")
        }
    }

    @Test func prefixesAndFiles() {
        let noFile: (String) -> Int64? = { _ in nil }
        #expect(TimeCondition(curlArgument: "06 Nov 1994 08:49:37", modificationTime: noFile) == .modifiedSince(t))
        #expect(TimeCondition(curlArgument: "+06 Nov 1994 08:49:37", modificationTime: noFile) == .modifiedSince(t))
        #expect(TimeCondition(curlArgument: "-06 Nov 1994 08:49:37", modificationTime: noFile) == .unmodifiedSince(t))
        #expect(TimeCondition(curlArgument: "=06 Nov 1994 08:49:37", modificationTime: noFile) == .lastModified(t))
        #expect(TimeCondition(curlArgument: "local.html", modificationTime: { $0 == "local.html" ? 42 : nil }) == .modifiedSince(42))
        #expect(TimeCondition(curlArgument: "-local.html", modificationTime: { $0 == "local.html" ? 42 : nil }) == .unmodifiedSince(42))
        #expect(TimeCondition(curlArgument: "missing.html", modificationTime: noFile) == nil)
        #expect(TimeCondition.modifiedSince(t).field == ("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT"))
        #expect(TimeCondition.unmodifiedSince(t).field.name == "If-Unmodified-Since")
        // Times no HTTP date names are sent as the nearest it does (Int64.min once trapped).
        #expect(TimeCondition.modifiedSince(.min).field.value.hasSuffix(" 0000 00:00:00 GMT"))
        #expect(TimeCondition.modifiedSince(.max).field.value == "Fri, 31 Dec 9999 23:59:59 GMT")
    }
}
