import Testing
@testable import CourierCore

/// Partial responses without a network (RFC 9111 sections 3.3 and 3.4): the ranges a request asks
/// for, which parts a stored response holds and how new parts combine, what may be kept, and the
/// 206s served from storage.
@Suite("Cache partial content")
struct PartialContentTests {
    private func layout(_ length: UInt64, _ spans: [(UInt64, UInt64)]) -> PartialLayout {
        PartialLayout(completeLength: length, spans: spans.map { PartialLayout.Span(start: $0.0, length: $0.1) })
    }

    // MARK: The Range a request asks for

    @Test func aSingleByteRangeIsReadInEachForm() {
        #expect(ByteRangeRequest("bytes=0-499")?.form == .from(0, through: 499))
        #expect(ByteRangeRequest(" Bytes=500- ")?.form == .from(500, through: nil))
        #expect(ByteRangeRequest("bytes=-20")?.form == .suffix(20))
        for text in ["bytes=0-1,3-4", "bytes=", "bytes=-", "bytes=-0", "bytes=5-2", "items=0-1", "bytes=a-b", "0-1",
                     "bytes=99999999999999999999-", "bytes=1--2"] {
            #expect(ByteRangeRequest(text) == nil, "\(text)")
        }
    }

    @Test func aRangeResolvesAgainstTheRepresentationsLength() {
        #expect(ByteRangeRequest("bytes=0-4")!.resolve(length: 20) == 0..<5)
        #expect(ByteRangeRequest("bytes=15-99")!.resolve(length: 20) == 15..<20, "a last byte past the end is clipped")
        #expect(ByteRangeRequest("bytes=19-")!.resolve(length: 20) == 19..<20)
        #expect(ByteRangeRequest("bytes=-5")!.resolve(length: 20) == 15..<20)
        #expect(ByteRangeRequest("bytes=-50")!.resolve(length: 20) == 0..<20)
        #expect(ByteRangeRequest("bytes=20-")!.resolve(length: 20) == nil, "unsatisfiable: the origin's 416")
        #expect(ByteRangeRequest("bytes=-5")!.resolve(length: 0) == nil)
    }

    // MARK: Which parts are stored

    @Test func partsCombineIntoOrderedSpansThatNeverTouch() {
        let body = Array("0123456789abcdefghij".utf8)
        var (parts, bytes) = PartialLayout.single(3, at: 10, of: 20).adding([], at: 0, to: Array(body[10..<13]))
        #expect(parts == layout(20, [(10, 3)]) && bytes == Array("abc".utf8), "an empty part adds nothing")
        (parts, bytes) = parts.adding(body[0..<4], at: 0, to: bytes)
        #expect(parts == layout(20, [(0, 4), (10, 3)]) && bytes == Array("0123abc".utf8))
        // Touching the first span joins it.
        (parts, bytes) = parts.adding(body[4..<6], at: 4, to: bytes)
        #expect(parts == layout(20, [(0, 6), (10, 3)]) && bytes == Array("012345abc".utf8))
        // Overlapping both spans and the gap between them: one span.
        (parts, bytes) = parts.adding(body[5..<12], at: 5, to: bytes)
        #expect(parts == layout(20, [(0, 13)]) && bytes == Array(body[0..<13]))
        #expect(!parts.isComplete)
        // Inside what is stored: nothing changes.
        (parts, bytes) = parts.adding(body[2..<5], at: 2, to: bytes)
        #expect(parts == layout(20, [(0, 13)]) && bytes == Array(body[0..<13]))
        (parts, bytes) = parts.adding(body[13...], at: 13, to: bytes)
        #expect(parts.isComplete && bytes == body)
    }

    @Test func aRangeIsServedOnlyWhenOneSpanHoldsAllOfIt() {
        let parts = layout(20, [(0, 4), (10, 3)])
        let body = Array("0123abc".utf8)
        #expect(parts.bytes(1..<4, of: body).map(Array.init) == Array("123".utf8))
        #expect(parts.bytes(10..<13, of: body).map(Array.init) == Array("abc".utf8))
        #expect(parts.bytes(3..<5, of: body) == nil)
        #expect(parts.bytes(12..<14, of: body) == nil)
        #expect(parts.bytes(5..<8, of: body) == nil)
    }

    @Test func onlyALayoutTheCacheCouldHaveWrittenIsValid() {
        #expect(layout(20, [(0, 4), (10, 3)]).isValid(bodyCount: 7))
        #expect(!layout(20, [(0, 4), (10, 3)]).isValid(bodyCount: 8), "the lengths must add up to the body")
        #expect(!layout(20, []).isValid(bodyCount: 0))
        #expect(!layout(20, [(10, 3), (0, 4)]).isValid(bodyCount: 7), "out of order")
        #expect(!layout(20, [(0, 4), (4, 3)]).isValid(bodyCount: 7), "touching")
        #expect(!layout(20, [(0, 0)]).isValid(bodyCount: 0), "empty")
        #expect(!layout(20, [(18, 3)]).isValid(bodyCount: 3), "past the end")
        #expect(!layout(20, [(UInt64.max, 2)]).isValid(bodyCount: 2))
    }

    // MARK: What may be kept

    @Test func aPartIsKeptOnlyWithAStrongTagAndNoContentCoding() {
        let ranged = cacheRequest([("Range", "bytes=0-3")])
        func kept(_ fields: [(String, String)], status: Int = 206, request: CacheRequest? = nil, received: Int = 4) -> PartialLayout? {
            CacheRules.partStorable(status: status, headers: HTTPHeaders(fields), request: request ?? ranged, received: received)
        }
        let good = [("Cache-Control", "max-age=60"), ("ETag", "\"t\""), ("Content-Range", "bytes 0-3/20")]
        #expect(kept(good) == layout(20, [(0, 4)]))
        #expect(kept([("Cache-Control", "max-age=60"), ("ETag", "W/\"t\""), ("Content-Range", "bytes 0-3/20")]) == nil, "weak")
        #expect(kept([("Cache-Control", "max-age=60"), ("Content-Range", "bytes 0-3/20")]) == nil, "no tag")
        #expect(kept(good + [("Content-Encoding", "gzip")]) == nil)
        #expect(kept([("Cache-Control", "no-store"), ("ETag", "\"t\""), ("Content-Range", "bytes 0-3/20")]) == nil)
        #expect(kept(good, received: 3) == nil, "fewer bytes than the range says")
        #expect(kept([("Cache-Control", "max-age=60"), ("ETag", "\"t\""), ("Content-Range", "bytes 0-3/*")]) == nil)
        #expect(kept(good + [("Content-Range", "bytes 0-3/20")]) == nil, "two Content-Range fields")
        #expect(kept(good, request: cacheRequest()) == nil, "a 206 nobody asked a range for")
        // A 200 cut short: its first bytes, of the length it announced.
        let cut = [("Cache-Control", "max-age=60"), ("ETag", "\"t\""), ("Content-Length", "20")]
        #expect(kept(cut, status: 200, request: cacheRequest(), received: 8) == layout(20, [(0, 8)]))
        #expect(kept(cut, status: 200, request: cacheRequest(), received: 20) == nil, "whole: not a part")
        #expect(kept(cut, status: 200, request: cacheRequest(), received: 0) == nil)
        #expect(kept([("Cache-Control", "max-age=60"), ("ETag", "\"t\"")], status: 200, request: cacheRequest(), received: 8) == nil)
    }

    // MARK: Served from storage

    @Test func aStoredPartIsServedAsA206WithItsRange() {
        let parts = StoredResponse(key: "http://a.example/x", varyNames: [], variantKey: "", status: 206, version: 1,
                                   reason: "Partial Content", headers: HTTPHeaders([("ETag", "\"t\""), ("Age", "9")]),
                                   body: Array("0123abc".utf8), requestTime: 100, responseTime: 100, bodyDecoded: false,
                                   partial: layout(20, [(0, 4), (10, 3)]))
        let served = parts.servedPart(11..<13, now: 105)
        #expect(served?.head.status == 206 && served?.body == Array("bc".utf8))
        #expect(served?.head.headers["Content-Range"] == "bytes 11-12/20")
        #expect(served?.head.headers["Content-Length"] == "2")
        #expect(served?.head.headers.values(for: "Age") == ["14"])
        #expect(parts.servedPart(3..<11, now: 105) == nil)
        let whole = storedResponse([("ETag", "\"t\"")], body: "0123456789")
        #expect(whole.servedPart(8..<10, now: 1_000_000)?.body == Array("89".utf8))
        #expect(whole.servedPart(8..<11, now: 1_000_000) == nil)
    }

    @Test func onlyAWhole200AsSentOrStoredPartsAnswerRanges() {
        #expect(CacheRules.answersRanges(storedResponse([("ETag", "\"t\"")])))
        #expect(!CacheRules.answersRanges(storedResponse([("ETag", "\"t\"")], status: 404)))
        #expect(!CacheRules.answersRanges(storedResponse([("Content-Encoding", "gzip")], bodyDecoded: true)),
                "a decoded body's offsets are not the representation's")
        #expect(!CacheRules.answersRanges(storedResponse([("Content-Encoding", "gzip")])))
    }

    @Test func aPartialResponseRoundTripsThroughItsFile() {
        let parts = StoredResponse(key: "http://a.example/x", varyNames: [], variantKey: "", status: 206, version: 2,
                                   reason: "Partial Content", headers: HTTPHeaders([("ETag", "\"t\"")]),
                                   body: Array("0123abc".utf8), requestTime: 5, responseTime: 9, bodyDecoded: false,
                                   partial: layout(20, [(0, 4), (10, 3)]))
        guard case .response(let decoded)? = CacheFileFormat.decode(CacheFileFormat.encode(parts)) else {
            Issue.record("did not decode")
            return
        }
        #expect(decoded.partial == parts.partial && decoded.body == parts.body && decoded.status == 206 && decoded.version == 2)
        // A layout that does not fit its body, or a partial flag on another status, is refused.
        let misfit = StoredResponse(key: "k", varyNames: [], variantKey: "", status: 206, version: 1, reason: "",
                                    headers: HTTPHeaders(), body: Array("0123".utf8), requestTime: 0, responseTime: 0,
                                    bodyDecoded: false, partial: layout(20, [(0, 5)]))
        #expect(CacheFileFormat.decode(CacheFileFormat.encode(misfit)) == nil)
        let wrongStatus = StoredResponse(key: "k", varyNames: [], variantKey: "", status: 200, version: 1, reason: "",
                                         headers: HTTPHeaders(), body: Array("0123".utf8), requestTime: 0, responseTime: 0,
                                         bodyDecoded: false, partial: layout(20, [(0, 4)]))
        #expect(CacheFileFormat.decode(CacheFileFormat.encode(wrongStatus)) == nil)
    }
}
