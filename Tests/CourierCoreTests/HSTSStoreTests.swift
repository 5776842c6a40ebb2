import Glibc
import Testing
@testable import CourierCore

/// HSTS's pure parts (RFC 6797): which Strict-Transport-Security values are noted, which hosts
/// then require https (subdomains, expiry, max-age=0), how URLs are upgraded, and curl's file
/// format read and written back.
@Suite("HSTS store")
struct HSTSStoreTests {
    @Test func valuesAndHosts() {
        let store = HSTSStore()
        store.note("max-age=100; includeSubDomains", from: "Example.COM.", now: 1000)
        store.note(#"max-age="50""#, from: "only.test", now: 1000)
        #expect(store.requiresHTTPS("example.com", now: 1099) && store.requiresHTTPS("a.b.example.com", now: 1099))
        #expect(!store.requiresHTTPS("example.com", now: 1100), "expired")
        #expect(store.requiresHTTPS("only.test", now: 1049) && !store.requiresHTTPS("sub.only.test", now: 1049))
        #expect(!store.requiresHTTPS("notexample.com", now: 1050), "a label boundary, not a suffix")
        store.note("max-age=0", from: "example.com", now: 1050)
        #expect(!store.requiresHTTPS("example.com", now: 1051), "max-age=0 forgets")
        for ignored in ["includeSubDomains", "max-age=abc", "max-age=1; max-age=2", "max-age", "max-age=-5", "max-age=10; includeSubDomains=1",
                        "=", "=5; max-age=3", "max-age="] {
            store.note(ignored, from: "ignored.test", now: 1000)
        }
        store.note("max-age=100", from: "192.0.2.1", now: 1000)
        store.note("max-age=100", from: "::1", now: 1000)
        #expect(store.entries(now: 1000).map(\.host) == ["only.test"], "malformed values and IP literals are not noted")
        store.note("max-age=999999999999999999999999; unknown=x", from: "far.test", now: 1000)
        #expect(store.requiresHTTPS("far.test", now: Int64.max - 1), "an age beyond Int64 is as long as can be")
    }

    @Test func urlsAreUpgraded() throws {
        let store = HSTSStore()
        store.note("max-age=100", from: "example.com")
        #expect(store.upgrade(try CourierURL(parsing: "http://example.com/a?b"))?.description == "https://example.com/a?b")
        #expect(store.upgrade(try CourierURL(parsing: "http://example.com:8080/"))?.description == "https://example.com:8080/",
                "another port is kept, as curl does")
        #expect(store.upgrade(try CourierURL(parsing: "https://example.com/")) == nil)
        #expect(store.upgrade(try CourierURL(parsing: "http://other.test/")) == nil)
    }

    @Test func curlsFileFormat() throws {
        let path = "/tmp/courier-hsts-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(path) }
        try """
            # a comment
            .example.com "20991231 23:59:59"
            plain.test "20991231 00:00:00"
            forever.test "unlimited"
            broken.test 20991231
            gone.test "20000101 00:00:00"
            bad.test "2099123 00:00:00"

            """.write(toFile: path)
        let store = try HSTSStore(file: path)
        #expect(store.entries.map(\.host) == ["example.com", "forever.test", "plain.test"], "unreadable and expired lines left out")
        #expect(store.requiresHTTPS("www.example.com") && !store.requiresHTTPS("www.plain.test"))
        try store.save()
        let again = try HSTSStore(file: path)
        #expect(again.entries == store.entries)
        #expect(try HSTSStore(file: path + "-missing").entries.isEmpty, "a missing file is an empty store")
        #expect(HTTPDate.compactStamp(HTTPDate.parseCompactStamp("20991231 23:59:59")!) == "20991231 23:59:59")
    }
}

private extension String {
    func write(toFile path: String) throws(CourierError) { try TextFile.writeAtomically(self, to: path) }
}
