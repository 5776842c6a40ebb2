import Testing
@testable import CourierCore

/// RFC 9110 section 5.6.7: the three date forms a recipient accepts.
@Suite("HTTPDate")
struct HTTPDateTests {
    static let example: Int64 = 784_111_777  // Sun, 06 Nov 1994 08:49:37 GMT

    @Test func imfFixdate() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Self.example)
    }

    @Test func rfc850() {
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: 1_700_000_000) == Self.example)
    }

    @Test func asctime() {
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == Self.example)
        #expect(HTTPDate.parse("Sun Nov 16 08:49:37 1994") == Self.example + 10 * 86_400)
    }

    @Test func twoDigitYearsMoreThanFiftyYearsAheadAreThePast() {
        // Section 5.6.7: "a two-digit year that appears to be more than 50 years in the future"
        // is the most recent year in the past with those digits.
        let now = HTTPDate.parse("Mon, 01 Jan 2024 00:00:00 GMT")!
        #expect(HTTPDate.parse("Friday, 01-Jan-99 00:00:00 GMT", now: now) == HTTPDate.parse("Fri, 01 Jan 1999 00:00:00 GMT"))
        #expect(HTTPDate.parse("Saturday, 01-Jan-50 00:00:00 GMT", now: now) == HTTPDate.parse("Sat, 01 Jan 2050 00:00:00 GMT"))
    }

    @Test func caseOfNamesAndSurroundingSpaceDoNotMatter() {
        #expect(HTTPDate.parse("  sun, 06 NOV 1994 08:49:37 GMT ") == Self.example)
    }

    @Test func invalidDatesAreRejected() {
        for text in ["", "0", "-1", "tomorrow", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC",
                     "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
                     "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 19945 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT x"] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
    }

    /// IMF-fixdate always has four year digits (found by the cachefields fuzz target: year 0
    /// was written as "0" and did not parse back).
    @Test func everyParsedDateFormatsToAFixdateThatParsesBack() {
        for text in ["Fri, 31 Dec 0000 23:59:59 GMT", "Mon, 01 Jan 0001 00:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 GMT",
                     "Fri, 31 Dec 9999 23:59:59 GMT"] {
            let seconds = HTTPDate.parse(text)!
            #expect(HTTPDate.format(seconds).hasSuffix(String(text.dropFirst(4))), "\(HTTPDate.format(seconds))")
            #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds)
        }
    }

    @Test func leapDaysAndEpochEdges() {
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 12:00:00 GMT") != nil)
        #expect(HTTPDate.parse("Wed, 29 Feb 2023 12:00:00 GMT") == nil)
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(HTTPDate.parse("Wed, 31 Dec 1969 23:59:59 GMT") == -1)
    }

    @Test func formattingIsIMFFixdateAndRoundTrips() {
        #expect(HTTPDate.format(Self.example) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        for seconds: Int64 in [-86_401, 1, 951_782_400, 1_700_000_000, 4_102_444_800] {
            #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds)
        }
    }
}
