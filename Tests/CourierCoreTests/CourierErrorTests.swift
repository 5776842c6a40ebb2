import Testing
@testable import CourierCore

/// Where each failure belongs: every primary code of the catalog is the origin's or the caller's,
/// never both and never by default (a cache stands in for the origin's failures only).
@Suite("CourierError sides")
struct CourierErrorTests {
    @Test func everyCodeIsPlacedOnOneSide() {
        let primaries = Set(CourierError.catalog.map { $0.code.primary })
        for code in primaries {
            let origin = CourierError.originFailures.contains(code)
            let caller = CourierError.callerFailures.contains(code)
            #expect(origin != caller, "\(code) is on \(origin ? "both sides" : "neither side")")
        }
        #expect(CourierError.originFailures.isDisjoint(with: CourierError.callerFailures))
    }

    @Test func detailCodesFollowTheirPrimary() {
        #expect(CourierError(.connectTimeout).isOriginFailure)
        #expect(CourierError(.badChunk).isOriginFailure)
        #expect(!CourierError(.fileWrite).isOriginFailure)
        #expect(!CourierError(.cancelled).isOriginFailure)
    }
}
