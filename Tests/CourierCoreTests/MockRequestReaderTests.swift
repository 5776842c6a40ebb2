import Testing
@testable import CourierCore

/// The mock server's reading of the requests Courier writes: bodies by length or chunked, split
/// anywhere, requests one after another, 100-continue, and bytes that do not read ending in an
/// error rather than a wait.
@Suite("Mock request reader")
struct MockRequestReaderTests {
    func events(_ pieces: [String]) -> [MockRequestReader.Event] {
        var reader = MockRequestReader()
        return pieces.flatMap { piece in Array(piece.utf8).withUnsafeBytes { reader.take($0) } }
    }

    func summary(_ events: [MockRequestReader.Event]) -> [String] {
        events.map { event in
            switch event {
            case .expectsContinue: return "100"
            case .request(let r): return "\(r.method) \(r.target) \(String(decoding: r.body, as: UTF8.self))"
            case .malformed: return "malformed"
            }
        }
    }

    @Test func bodiesAndRequestsInARow() {
        let both = "POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET /b HTTP/1.1\r\nHost: h\r\n\r\n"
        #expect(summary(events([both])) == ["POST /a hello", "GET /b "])
        let chunked = "PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n5\r\nhello\r\n3;x=1\r\n!!!\r\n0\r\nT: 1\r\n\r\n"
        #expect(summary(events(chunked.map(String.init))) == ["100", "PUT /c hello!!!"], "split at every byte")
    }

    @Test func whatDoesNotReadIsAnErrorNotAWait() {
        for bad in ["PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "POST /a HTTP/1.1\r\nContent-Length: x\r\n\r\n",
                    "POST /a HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                    "PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n"] {
            #expect(summary(events([bad])) == ["malformed"], "\(bad.debugDescription)")
        }
    }
}
