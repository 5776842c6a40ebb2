import Testing
@testable import CourierCore

@Suite("CourierURL")
struct CourierURLTests {
    @Test func parsesTheParts() throws {
        let url = try CourierURL(parsing: "HTTP://User:p%40ss@Example.COM:8080/a/b?q=1&r=2#frag")
        #expect(url.scheme == .http)
        #expect(url.host == "example.com")
        #expect(url.port == 8080)
        #expect(url.path == "/a/b")
        #expect(url.query == "q=1&r=2")
        #expect(url.user == "User")
        #expect(url.password == "p@ss")
        #expect(url.target == "/a/b?q=1&r=2")
        #expect(url.hostHeader == "example.com:8080")
    }

    @Test func defaultsAndIPv6() throws {
        let https = try CourierURL(parsing: "https://example.com")
        #expect(https.port == 443)
        #expect(https.path == "/")
        #expect(https.hostHeader == "example.com")
        let v6 = try CourierURL(parsing: "http://[::1]:8080/x")
        #expect(v6.host == "::1")
        #expect(v6.isIPv6Literal)
        #expect(v6.hostHeader == "[::1]:8080")
        #expect(v6.description == "http://[::1]:8080/x")
    }

    @Test(arguments: [
        ("example.com/x", CourierError.Code.invalidURL),
        ("http:/example.com", .invalidURL),
        ("http://", .invalidURL),
        ("http://exa mple.com/", .invalidURL),
        ("http://host:99999/", .invalidURL),
        ("http://host:0/", .invalidURL),
        ("http://host:8a/", .invalidURL),
        ("http://[::1/", .invalidURL),
        ("http://[zz]/", .invalidURL),
        ("http://host\r\nX: y/", .invalidURL),
        ("ftp://example.com/", .unsupportedScheme),
        ("file:///etc/passwd", .unsupportedScheme),
        ("1http://x/", .invalidURL),
    ])
    func rejectsInvalidURLs(_ input: String, _ code: CourierError.Code) {
        #expect(throws: CourierError.self) { try CourierURL(parsing: input) }
        do {
            _ = try CourierURL(parsing: input)
        } catch {
            #expect(error.code == code, "\(input.debugDescription): \(error)")
        }
    }

    @Test func unsafeBytesInPathAndQueryArePercentEncoded() throws {
        let url = try CourierURL(parsing: "http://h/a b/\u{e9}?x=<y> z\r\n&%zz&%41")
        #expect(url.path == "/a%20b/%C3%A9")
        #expect(url.query == "x=%3Cy%3E%20z%0D%0A&%25zz&%41")
        #expect(!url.target.utf8.contains(13) && !url.target.utf8.contains(10) && !url.target.utf8.contains(32))
    }

    @Test func dotSegmentsAreRemoved() throws {
        #expect(try CourierURL(parsing: "http://h/a/b/../c/./d").path == "/a/c/d")
        #expect(try CourierURL(parsing: "http://h/../../x").path == "/x")
        #expect(try CourierURL(parsing: "http://h/a/..").path == "/")
    }

    @Test func resolvesReferences() throws {
        let base = try CourierURL(parsing: "http://a.example/b/c/d?q")
        #expect(try base.resolving("g").description == "http://a.example/b/c/g")
        #expect(try base.resolving("./g/").description == "http://a.example/b/c/g/")
        #expect(try base.resolving("/g").description == "http://a.example/g")
        #expect(try base.resolving("../g").description == "http://a.example/b/g")
        #expect(try base.resolving("?y").description == "http://a.example/b/c/d?y")
        #expect(try base.resolving("#f").description == "http://a.example/b/c/d?q")
        #expect(try base.resolving("//other.example/x").description == "http://other.example/x")
        #expect(try base.resolving("https://secure.example/").description == "https://secure.example/")
        #expect(throws: CourierError.self) { try base.resolving("ftp://x/") }
        #expect(throws: CourierError.self) { try base.resolving("javascript:alert(1)") }
    }

    @Test func resolvingDropsCredentials() throws {
        let base = try CourierURL(parsing: "http://u:p@a.example/x")
        #expect(try base.resolving("/y").user == nil)
    }

    @Test func buildsFromEngineParts() throws {
        let url = try CourierURL(scheme: .http, host: "api.example", port: 8080, target: "v1/items?x=1")
        #expect(url.description == "http://api.example:8080/v1/items?x=1")
        let v6 = try CourierURL(scheme: .https, host: "::1", target: "/")
        #expect(v6.hostHeader == "[::1]")
    }
}

@Suite("HTTPHeaders")
struct HTTPHeadersTests {
    @Test func caseInsensitiveLookupKeepsOrderAndDuplicates() {
        var h: HTTPHeaders = ["Content-Type": "text/plain", "Set-Cookie": "a=1"]
        h.add(name: "set-cookie", value: "  b=2 ")
        #expect(h["content-type"] == "text/plain")
        #expect(h.values(for: "SET-COOKIE") == ["a=1", "b=2"])
        #expect(h.combinedValue(for: "set-cookie") == "a=1, b=2")
        #expect(h.count == 3)
        #expect(h.description == "Content-Type: text/plain\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\n")
    }

    @Test func removeAndReplace() {
        var h: HTTPHeaders = ["A": "1", "B": "2", "a": "3"]
        h.remove(name: "a")
        #expect(h.map { $0.name } == ["B"])
        h.replaceOrAdd(name: "b", value: "x")
        #expect(h["B"] == "x")
        #expect(h.count == 1)
    }

    @Test func rawFieldsAreLaidOutAsWireLinesWhateverTheirLength() {
        var h = HTTPHeaders()
        let long = String(repeating: "v", count: 600)
        for (name, value) in [("a", " short "), ("Empty", ""), ("X-Long", long), ("", "no name")] {
            Array(name.utf8).withUnsafeBytes { n in Array(value.utf8).withUnsafeBytes { h.appendField(name: n, value: $0) } }
        }
        #expect(String(decoding: h.storage, as: UTF8.self) == "a: short\r\nEmpty: \r\nX-Long: \(long)\r\n: no name\r\n")
        #expect(h.value(at: 0) == "short" && h.value(at: 1) == "" && h.value(at: 2) == long && h.value(at: 3) == "no name")
        #expect(h.name(at: 2) == "X-Long" && h.name(at: 3) == "")
        #expect(h.isWireFormat)
    }

    @Test func invalidFieldsAreFound() {
        #expect(HTTPHeaders([("Good", "value\twith tab")]).firstInvalidField() == nil)
        #expect(HTTPHeaders([("Bad", "a\r\nInjected: yes")]).firstInvalidField() != nil)
        #expect(HTTPHeaders([("Bad", "nul\u{0}")]).firstInvalidField() != nil)
        #expect(HTTPHeaders([("Bad Name", "x")]).firstInvalidField() != nil)
        #expect(HTTPHeaders([("", "x")]).firstInvalidField() != nil)
        #expect(HTTPHeaders([("X\n", "x")]).firstInvalidField() != nil)
    }
}

@Suite("RequestEncoder")
struct RequestEncoderTests {
    @Test func encodesHeadWithFraming() {
        var buffer: [UInt8] = []
        RequestEncoder.encodeHead(method: .post, path: "/submit", query: "x=1", hostHeader: "example.com:8080",
                                  headers: ["Content-Type": "application/json"],
                                  framing: .init(host: true, contentLength: 1234567890, acceptEncoding: true), into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) ==
            "POST /submit?x=1 HTTP/1.1\r\nHost: example.com:8080\r\nContent-Type: application/json\r\n"
            + "Accept-Encoding: gzip, deflate, br, zstd\r\nContent-Length: 1234567890\r\n\r\n")
    }

    @Test func callerHostWinsAndGetHasNoLength() {
        var buffer: [UInt8] = []
        RequestEncoder.encodeHead(method: .get, path: "/", query: nil, hostHeader: "ignored",
                                  headers: ["Host": "virtual.example"], framing: .init(host: false), into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == "GET / HTTP/1.1\r\nHost: virtual.example\r\n\r\n")
    }

    @Test func anHTTP10RequestLine() {
        var buffer: [UInt8] = []
        RequestEncoder.encodeHead(method: .get, path: "/old", query: nil, hostHeader: "example.com",
                                  headers: [:], framing: .init(), into: &buffer)
        buffer.withUnsafeMutableBytes { RequestEncoder.downgradeToHTTP10($0) }
        #expect(String(decoding: buffer, as: UTF8.self) == "GET /old HTTP/1.0\r\nHost: example.com\r\n\r\n")
    }

    @Test func contentLengthRules() {
        #expect(RequestEncoder.contentLength(for: .get, bodyLength: 0) == nil)
        #expect(RequestEncoder.contentLength(for: .post, bodyLength: 0) == 0)
        #expect(RequestEncoder.contentLength(for: .put, bodyLength: 0) == 0)
        #expect(RequestEncoder.contentLength(for: .delete, bodyLength: 3) == 3)
    }

    @Test func decimals() {
        for value: UInt64 in [0, 7, 10, 99, 100, 65535, UInt64.max] {
            var buffer: [UInt8] = []
            RequestEncoder.appendDecimal(value, to: &buffer)
            #expect(String(decoding: buffer, as: UTF8.self) == String(value))
        }
    }
}

@Suite("RedirectDecision")
struct RedirectDecisionTests {
    let base = try! CourierURL(parsing: "https://a.example/start")
    let policy = RedirectPolicy()

    @Test func methodRewriting() throws {
        let target = try CourierURL(parsing: "https://a.example/next")
        #expect(RedirectDecision.decide(status: 303, location: "/next", current: base, method: .post, policy: policy, redirectsSoFar: 0)
            == .follow(RedirectHop(url: target, method: .get, dropBody: true, crossOrigin: false)))
        #expect(RedirectDecision.decide(status: 303, location: "/next", current: base, method: .head, policy: policy, redirectsSoFar: 0)
            == .follow(RedirectHop(url: target, method: .head, dropBody: false, crossOrigin: false)))
        #expect(RedirectDecision.decide(status: 302, location: "/next", current: base, method: .post, policy: policy, redirectsSoFar: 0)
            == .follow(RedirectHop(url: target, method: .get, dropBody: true, crossOrigin: false)))
        #expect(RedirectDecision.decide(status: 301, location: "/next", current: base, method: .put, policy: policy, redirectsSoFar: 0)
            == .follow(RedirectHop(url: target, method: .put, dropBody: false, crossOrigin: false)))
        #expect(RedirectDecision.decide(status: 307, location: "/next", current: base, method: .post, policy: policy, redirectsSoFar: 0)
            == .follow(RedirectHop(url: target, method: .post, dropBody: false, crossOrigin: false)))
        #expect(RedirectDecision.decide(status: 308, location: "/next", current: base, method: .patch, policy: policy, redirectsSoFar: 0)
            == .follow(RedirectHop(url: target, method: .patch, dropBody: false, crossOrigin: false)))
    }

    @Test func crossOriginIsFlagged() throws {
        let decision = RedirectDecision.decide(status: 302, location: "https://b.example/", current: base, method: .get, policy: policy, redirectsSoFar: 0)
        #expect(decision == .follow(RedirectHop(url: try CourierURL(parsing: "https://b.example/"), method: .get, dropBody: false, crossOrigin: true)))
        let port = RedirectDecision.decide(status: 302, location: "https://a.example:8443/", current: base, method: .get, policy: policy, redirectsSoFar: 0)
        if case .follow(let hop) = port { #expect(hop.crossOrigin) } else { Issue.record("not followed") }
    }

    @Test func autoRefererNamesTheHopItCameFromWithoutCredentials() throws {
        var auto = policy
        auto.autoReferer = true
        let from = try CourierURL(parsing: "https://user:pw@a.example/start?q=1#frag")
        let decision = RedirectDecision.decide(status: 302, location: "/next", current: from, method: .get, policy: auto, redirectsSoFar: 0)
        guard case .follow(let hop) = decision else { Issue.record("not followed"); return }
        #expect(hop.sendsReferer)
        var headers: HTTPHeaders = ["Referer": "http://given.example/", "X-Kept": "1"]
        var method = HTTPMethod.get
        var body = RequestBody.empty
        var hostSet = false
        hop.apply(method: &method, headers: &headers, body: &body, hostSetByCaller: &hostSet, from: from)
        #expect(headers["Referer"] == "https://a.example/start?q=1" && headers.count == 2, "replaced, not added")
        if case .follow(let plain) = RedirectDecision.decide(status: 302, location: "/next", current: from, method: .get, policy: policy, redirectsSoFar: 0) {
            #expect(!plain.sendsReferer, "off by default")
            var untouched: HTTPHeaders = ["Referer": "http://given.example/"]
            plain.apply(method: &method, headers: &untouched, body: &body, hostSetByCaller: &hostSet, from: from)
            #expect(untouched["Referer"] == "http://given.example/")
        }
    }

    @Test func refusals() {
        #expect(RedirectDecision.decide(status: 302, location: "http://a.example/", current: base, method: .get, policy: policy, redirectsSoFar: 0)
            == .fail(CourierError(.redirectDowngrade, "https://a.example/start -> http://a.example/")))
        if case .fail(let e) = RedirectDecision.decide(status: 302, location: "ftp://x/", current: base, method: .get, policy: policy, redirectsSoFar: 0) {
            #expect(e.code == .redirectSchemeNotAllowed)
        } else { Issue.record("ftp followed") }
        if case .fail(let e) = RedirectDecision.decide(status: 302, location: "/x", current: base, method: .get, policy: policy, redirectsSoFar: 10) {
            #expect(e.code == .tooManyRedirects)
        } else { Issue.record("limit ignored") }
        var downgrade = policy
        downgrade.allowsHTTPSDowngrade = true
        if case .follow = RedirectDecision.decide(status: 302, location: "http://a.example/", current: base, method: .get, policy: downgrade, redirectsSoFar: 0) {} else {
            Issue.record("allowed downgrade not followed")
        }
    }

    /// The rewriting of the request for the next hop, as a pure function.
    @Test func hopRewritesTheRequest() throws {
        var headers: HTTPHeaders = ["Authorization": "Bearer t", "Cookie": "a=1", "Proxy-Authorization": "Basic x",
                                    "Host": "a.example", "Content-Type": "text/plain", "Content-Length": "4", "X-Kept": "yes"]
        var method = HTTPMethod.post
        var body = RequestBody.bytes(Array("body".utf8))
        var hostSet = true
        let away = RedirectHop(url: try CourierURL(parsing: "https://b.example/next"), method: .get, dropBody: true, crossOrigin: true)
        let left = try CourierURL(parsing: "https://a.example/start")
        away.apply(method: &method, headers: &headers, body: &body, hostSetByCaller: &hostSet, from: left)
        #expect(method == .get)
        #expect(body == .empty)
        #expect(!hostSet, "the caller's Host named the old origin")
        #expect(headers.map(\.name) == ["X-Kept"], "credentials, Host and the body's fields are gone")

        var sameOrigin: HTTPHeaders = ["Authorization": "Bearer t", "Content-Type": "application/json"]
        var put = HTTPMethod.put
        var kept = RequestBody.bytes([1, 2, 3])
        var noHost = false
        let stay = RedirectHop(url: try CourierURL(parsing: "https://a.example/moved"), method: .put, dropBody: false, crossOrigin: false)
        stay.apply(method: &put, headers: &sameOrigin, body: &kept, hostSetByCaller: &noHost, from: left)
        #expect(put == .put && kept == .bytes([1, 2, 3]))
        #expect(sameOrigin.map(\.name) == ["Authorization", "Content-Type"], "a same-origin 307/308 keeps everything")
    }

    @Test func nonRedirectsAndDisabledPolicy() {
        #expect(RedirectDecision.decide(status: 200, location: "/x", current: base, method: .get, policy: policy, redirectsSoFar: 0) == .deliver)
        #expect(RedirectDecision.decide(status: 304, location: "/x", current: base, method: .get, policy: policy, redirectsSoFar: 0) == .deliver)
        #expect(RedirectDecision.decide(status: 302, location: nil, current: base, method: .get, policy: policy, redirectsSoFar: 0) == .deliver)
        #expect(RedirectDecision.decide(status: 302, location: "/x", current: base, method: .get, policy: .none, redirectsSoFar: 0) == .deliver)
    }
}
