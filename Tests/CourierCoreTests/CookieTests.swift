import Foundation
import Testing
@testable import CourierCore

/// The cookie jar without sockets: Set-Cookie parsing, the storage rules and matching of RFC
/// 6265bis (its section 3.1 examples among them), and curl's Netscape file.
@Suite("Cookies")
struct CookieTests {
    static let now: Int64 = 1_800_000_000

    func jar() -> CookieJar {
        let jar = CookieJar()
        jar.clock = { CookieTests.now }
        return jar
    }

    func url(_ text: String) -> CourierURL { try! CourierURL(parsing: text) }

    @Test func parsingFollowsSection56() {
        let c = SetCookie.parse("SID=31d4d96e407aad42; Path=/; Secure; HttpOnly; SameSite=lax; Max-Age=60; Domain=.Example.COM")
        #expect(c?.name == "SID" && c?.value == "31d4d96e407aad42")
        #expect(c?.path == "/" && c?.secure == true && c?.httpOnly == true && c?.sameSite == "Lax")
        #expect(c?.maxAge == 60 && c?.domain == "example.com")
        #expect(SetCookie.parse("  spaced =  value  ; x")?.name == "spaced")
        #expect(SetCookie.parse("  spaced =  value  ; x")?.value == "value")
        #expect(SetCookie.parse("nameless")?.name == "" && SetCookie.parse("nameless")?.value == "nameless")
        #expect(SetCookie.parse("=") == nil, "empty name and value")
        #expect(SetCookie.parse("a=b\u{01}c") == nil, "a control character drops the whole field")
        #expect(SetCookie.parse("a=b; Path=relative")?.path == nil, "a path not starting with / is the default")
        #expect(SetCookie.parse("a=b; Max-Age=1x")?.maxAge == nil)
        #expect(SetCookie.parse("a=b; Max-Age=-5")?.maxAge == -5)
        #expect(SetCookie.parse(String(repeating: "x", count: 4097)) == nil, "too long")
        #expect(SetCookie.parse("a=b; SameSite=bogus")?.sameSite == nil)
        let j = jar()
        j.store(setCookie: ["tab=a\tb", "p=1; Path=/a\tb", "ok=1"], from: url("https://a.example/"))
        #expect(j.all.map(\.name) == ["ok"], "a tab cannot go into the cookie file")
    }

    @Test func cookieDatesAreLenient() {
        let expected: Int64 = 1_445_412_480  // Wed, 21 Oct 2015 07:28:00 GMT
        for text in ["Wed, 21 Oct 2015 07:28:00 GMT", "Wednesday, 21-Oct-15 07:28:00 GMT", "Wed Oct 21 07:28:00 2015",
                     "21 Oct 2015 07:28:00", "Oct 21 2015 7:28:0 GMT"] {
            #expect(CookieDate.parse(Array(text.utf8)) == expected, "\(text)")
        }
        #expect(CookieDate.parse(Array("31 Feb 2015 00:00:00".utf8)) == nil)
        #expect(CookieDate.parse(Array("21 Oct 1600 00:00:00".utf8)) == nil)
        #expect(CookieDate.parse(Array("soon".utf8)) == nil)
    }

    @Test func section31Examples() {
        let j = jar()
        let site = url("https://www.example.com/")
        j.store(setCookie: ["SID=31d4d96e407aad42"], from: site)
        #expect(j.cookieHeader(for: site) == "SID=31d4d96e407aad42")
        j.store(setCookie: ["SID=31d4d96e407aad42; Path=/; Domain=example.com"], from: site)
        // A domain cookie now, a host-only one still there (different host-only flag: two cookies).
        #expect(j.cookieHeader(for: url("https://sub.example.com/")) == "SID=31d4d96e407aad42")
        let k = jar()
        k.store(setCookie: ["SID=31d4d96e407aad42; Path=/; Secure; HttpOnly", "lang=en-US; Path=/; Domain=example.com"], from: site)
        #expect(k.cookieHeader(for: site) == "SID=31d4d96e407aad42; lang=en-US")
        #expect(k.cookieHeader(for: url("http://www.example.com/")) == "lang=en-US", "Secure stays on secure channels")
        k.store(setCookie: ["lang=; Expires=Sun, 06 Nov 1994 08:49:37 GMT"], from: site)
        #expect(k.cookieHeader(for: url("https://www.example.com/")) == "SID=31d4d96e407aad42; lang=en-US",
                "a host-only expiry does not delete the domain cookie")
        k.store(setCookie: ["lang=; Domain=example.com; Expires=Sun, 06 Nov 1994 08:49:37 GMT"], from: site)
        #expect(k.cookieHeader(for: site) == "SID=31d4d96e407aad42")
    }

    @Test func domainsThatAreRefused() {
        let j = jar()
        j.store(setCookie: ["a=1; Domain=other.org"], from: url("https://www.example.com/"))
        j.store(setCookie: ["b=1; Domain=com"], from: url("https://www.example.com/"))
        j.store(setCookie: ["c=1; Domain=0.1"], from: url("http://10.0.0.1/"))
        j.store(setCookie: ["d=1; Domain=10.0.0.1"], from: url("http://10.0.0.1/"))
        #expect(j.all.map(\.name) == ["d"], "only the address's own cookie, host-only")
        #expect(j.all.first?.hostOnly == true)
        #expect(j.cookieHeader(for: url("http://sub.10.0.0.1/")) == nil)
        // A single-label host may set a cookie for itself.
        j.store(setCookie: ["e=1; Domain=intranet"], from: url("http://intranet/"))
        #expect(j.cookieHeader(for: url("http://intranet/x")) == "e=1")
    }

    @Test func secureCookiesAndPrefixes() {
        let j = jar()
        j.store(setCookie: ["s=1; Secure"], from: url("http://www.example.com/"))
        #expect(j.all.isEmpty, "Secure from an insecure origin")
        j.store(setCookie: ["s=1; Secure"], from: url("https://www.example.com/"))
        j.store(setCookie: ["s=2"], from: url("http://www.example.com/"))
        #expect(j.all.map(\.value) == ["1"], "an insecure origin cannot overwrite a secure cookie")
        j.store(setCookie: ["__Secure-a=1", "__Host-b=1; Secure; Path=/; Domain=example.com", "__Host-c=1; Secure; Path=/",
                            "__Secure-d=1; Secure", "n=1; SameSite=None"], from: url("https://www.example.com/"))
        #expect(Set(j.all.map(\.name)) == ["s", "__Host-c", "__Secure-d"])
        j.store(setCookie: ["l=1; Secure"], from: url("http://localhost:8080/"))
        #expect(j.cookieHeader(for: url("http://localhost:8080/")) == "l=1", "loopback counts as a secure origin")
    }

    @Test func pathsAndOrder() {
        let j = jar()
        let base = url("https://a.example/docs/api/v1")
        j.store(setCookie: ["root=1; Path=/", "deep=1; Path=/docs/api", "default=1"], from: base)
        #expect(j.all.first { $0.name == "default" }?.path == "/docs/api")
        #expect(j.cookieHeader(for: url("https://a.example/docs/api/v2")) == "deep=1; default=1; root=1")
        #expect(j.cookieHeader(for: url("https://a.example/docs/apis")) == "root=1", "a path matches at / only")
        #expect(j.cookieHeader(for: url("https://a.example/")) == "root=1")
        #expect(Cookie.defaultPath(of: "/") == "/" && Cookie.defaultPath(of: "/a") == "/" && Cookie.defaultPath(of: "/a/b") == "/a")
    }

    @Test func expiryMaxAgeWinsAndIsCapped() {
        let j = jar()
        let site = url("https://a.example/")
        j.store(setCookie: ["a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Max-Age=100"], from: site)
        #expect(j.all.first?.expires == CookieTests.now + 100, "Max-Age over Expires")
        j.store(setCookie: ["b=1; Max-Age=999999999"], from: site)
        #expect(j.all.first { $0.name == "b" }?.expires == CookieTests.now + CookieJar.maxLifetime)
        j.store(setCookie: ["a=gone; Max-Age=0"], from: site)
        #expect(j.all.map(\.name) == ["b"])
        j.clock = { CookieTests.now + CookieJar.maxLifetime + 1 }
        #expect(j.all.isEmpty, "expired cookies are dropped")
    }

    @Test func limitsEvictTheOldest() {
        let j = jar()
        var clock = CookieTests.now
        for i in 0..<(CookieJar.perDomainLimit + 5) {
            clock += 1
            let at = clock
            j.clock = { at }
            j.store(setCookie: ["c\(i)=1"], from: url("https://a.example/"))
        }
        let names = Set(j.all.map(\.name))
        #expect(names.count == CookieJar.perDomainLimit)
        #expect(!names.contains("c0") && names.contains("c54"))
    }

    @Test func netscapeFilesRoundTripAndReadCurls() throws {
        let curlFile = """
        # Netscape HTTP Cookie File
        # https://curl.se/docs/http-cookies.html
        # This file was generated by libcurl! Edit at your own risk.

        .example.com\tTRUE\t/\tFALSE\t0\tsession\tyes
        #HttpOnly_www.example.com\tFALSE\t/app\tTRUE\t2000000000\ttoken\tabc=def
        broken line
        www.example.com\tFALSE\t/\tFALSE\t1000\texpired\told
        """
        let j = jar()
        #expect(j.load(netscape: curlFile) == 2)
        #expect(j.cookieHeader(for: url("https://www.example.com/app/x")) == "token=abc=def; session=yes")
        #expect(j.cookieHeader(for: url("http://sub.example.com/")) == "session=yes")
        let token = try #require(j.all.first { $0.name == "token" })
        #expect(token.httpOnly && token.secure && token.hostOnly && token.expires == 2_000_000_000)
        let text = j.netscapeText()
        #expect(text.contains("\n.example.com\tTRUE\t/\tFALSE\t0\tsession\tyes\n"))
        #expect(text.contains("\n#HttpOnly_www.example.com\tFALSE\t/app\tTRUE\t2000000000\ttoken\tabc=def\n"))
        let again = jar()
        #expect(again.load(netscape: text) == 2)
        #expect(Set(again.all.map { $0.name + "=" + $0.value }) == Set(j.all.map { $0.name + "=" + $0.value }))

        let path = NSTemporaryDirectory() + "courier-cookies-\(UUID().uuidString.prefix(8)).txt"
        defer { unlink(path) }
        try j.save(file: path)
        let reloaded = jar()
        #expect(try reloaded.load(file: path) == 2)
        #expect(try jar().load(file: path + ".missing") == 0, "a missing file is an empty jar")
        #expect(throws: CourierError.self) { try j.save(file: "/nonexistent-dir/cookies.txt") }
        #expect(throws: CourierError.self, "a directory is not an empty cookie file") { try jar().load(file: NSTemporaryDirectory()) }
    }
}
