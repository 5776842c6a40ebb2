@testable import CourierCABI
@testable import CourierCore
import Testing

/// courier_response_url's text is written straight into C memory (by the writer `description`
/// uses too): it must spell every URL as `description` does (ports shown only when not the
/// scheme's, IPv6 brackets, the query, escapes kept, no credentials or fragment).
@Suite("C URL text")
struct URLTextTests {
    @Test(arguments: [
        "http://example.com/", "https://example.com/", "http://example.com:80/a", "https://example.com:443/a",
        "http://127.0.0.1:8080/small", "https://h:1/", "http://h:9/x", "http://h:10/x", "http://h:65535/x",
        "http://h:99/x", "http://h:100/x", "http://h:999/x", "http://h:1000/x", "http://h:9999/x", "http://h:10000/x",
        "http://[::1]/", "http://[::1]:8443/p?q", "https://[2001:db8::1]:443/", "http://h/a%20b?x=1&y=%C3%A9",
        "http://h/?", "http://user:pw@h/secret#fragment", "http://EXAMPLE.com/é",
    ])
    func matchesDescription(_ text: String) throws {
        let url = try CourierURL(parsing: text)
        let written = OwnedCString.url(url)
        #expect(String(cString: written.pointer) == url.description)
    }

    @Test(arguments: [
        ("https://example.com:443/a", "https://example.com/a"), ("http://h:8080", "http://h:8080/"),
        ("http://[::1]:8443/p?q", "http://[::1]:8443/p?q"), ("http://user:pw@h/secret#fragment", "http://h/secret"),
    ])
    func spellsTheURL(_ text: String, _ expected: String) throws {
        let written = OwnedCString.url(try CourierURL(parsing: text))
        #expect(String(cString: written.pointer) == expected)
    }
}
