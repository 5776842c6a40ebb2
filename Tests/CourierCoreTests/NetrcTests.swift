import Testing
@testable import CourierCore

/// `.netrc` files read as curl 7.88 reads them: entries, `default`, quoted values with escapes,
/// macros skipped, malformed files refused whole; and which entry answers for a host and user.
@Suite(".netrc")
struct NetrcTests {
    @Test func entriesAndLookups() throws {
        let netrc = try Netrc(parsing: """
            machine Example.com login ann password "s3 \\"cr\\"et"
            machine example.com login bob password second
            macdef init
              cd /pub
              passive

            machine other.test
              login carol password p account ignored
            default login anyone password anything
            """)
        #expect(netrc.entries.count == 4)
        #expect(netrc.credentials(forHost: "EXAMPLE.com")! == ("ann", #"s3 "cr"et"#), "the first entry, names case-insensitive")
        #expect(netrc.credentials(forHost: "example.com", user: "bob")! == ("bob", "second"), "a URL's user picks its entry")
        #expect(netrc.credentials(forHost: "other.test")! == ("carol", "p"), "a macro's lines are not tokens")
        #expect(netrc.credentials(forHost: "unknown.test")! == ("anyone", "anything"), "default")
        #expect(netrc.credentials(forHost: "example.com", user: "zed") == nil, "no entry with that login, default's included")
        #expect(try Netrc(parsing: "machine h login u").credentials(forHost: "h")! == ("u", ""), "no password: empty, as curl")
        #expect(try Netrc(parsing: "").credentials(forHost: "h") == nil)
        #expect(try Netrc(parsing: #"machine h login "a\tb\\c""#).credentials(forHost: "h")!.login == "a\tb\\c")
    }

    @Test func malformedFilesAreRefusedWhole() throws {
        for text in [#"machine h login u password "unterminated"#, "login u password p", "machine", "machine h login",
                     "machine h user u", "macdef"] {
            #expect(throws: CourierError.self, "\(text)") { try Netrc(parsing: text) }
            do {
                _ = try Netrc(parsing: text)
            } catch {
                #expect(error.code == .netrcSyntax, "\(text)")
            }
        }
        #expect(try Netrc.load("/nonexistent/.netrc") == nil, "a missing file is no error (curl)")
    }
}
