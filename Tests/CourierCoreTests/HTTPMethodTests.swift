import Testing
@testable import CourierCore

/// HTTPMethod compares well-known methods by a byte found once; these pin that this never
/// changes what equality, hashing and the method traits mean.
@Suite("HTTPMethod")
struct HTTPMethodTests {
    static let known: [HTTPMethod] = [.get, .head, .post, .put, .delete, .patch, .options, .trace, .connect]

    @Test func equalityIsTheTokenWhateverTheConstructor() {
        for method in Self.known {
            let rebuilt = HTTPMethod(rawValue: String(method.rawValue))
            #expect(rebuilt == method)
            #expect(rebuilt.hashValue == method.hashValue)
            #expect(Set([rebuilt, method]).count == 1)
            for other in Self.known where other.rawValue != method.rawValue { #expect(other != method) }
        }
        // Case-sensitive (RFC 9110 section 9.1): "get" is another method.
        #expect(HTTPMethod(rawValue: "get") != .get)
        #expect(HTTPMethod(rawValue: "PROPFIND") == "PROPFIND")
        #expect(HTTPMethod(rawValue: "PROPFIND") != HTTPMethod(rawValue: "PROPPATCH"))
        #expect(HTTPMethod(rawValue: "PROPFIND") != .post)
        #expect(HTTPMethod(rawValue: "GETX") != .get)
    }

    @Test func traits() {
        let idempotent: Set<String> = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"]
        let safe: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]
        let emptyBodyLength: Set<String> = ["POST", "PUT", "PATCH"]
        for method in Self.known {
            #expect(method.isIdempotent == idempotent.contains(method.rawValue), "\(method)")
            #expect(method.isSafe == safe.contains(method.rawValue), "\(method)")
            #expect(method.announcesEmptyBody == emptyBodyLength.contains(method.rawValue), "\(method)")
            #expect(method.isValidToken)
        }
        let custom = HTTPMethod(rawValue: "PROPFIND")
        #expect(!custom.isIdempotent && !custom.isSafe && !custom.announcesEmptyBody && custom.isValidToken)
        #expect(!HTTPMethod(rawValue: "GE T").isValidToken)
        #expect(!HTTPMethod(rawValue: "").isValidToken)
    }
}
