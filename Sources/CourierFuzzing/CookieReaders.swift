import CourierCore

/// Cookies as servers and files present them: the lines of the input are Set-Cookie values stored
/// for one of a few URLs (the first byte picks it), then the input as a whole is read as a
/// Netscape cookie file. Invariants: what is stored obeys the domain and Secure rules, a Cookie
/// field never carries a control character, and a saved jar reads back to the same cookies.
package enum CookieReading {
    static let urls = ["http://www.example.com/a/b", "https://www.example.com/", "http://10.0.0.1/x", "http://intranet/",
                       "https://sub.a.example.org/deep/path/", "http://localhost:8080/"].map { try! CourierURL(parsing: $0) }

    package static func run(_ input: UnsafeRawBufferPointer) {
        guard let first = input.first else { return }
        let url = urls[Int(first) % urls.count]
        let jar = CookieJar()
        jar.clock = { 1_800_000_000 }
        let lines = input.dropFirst().split(separator: 0x0A, omittingEmptySubsequences: false).prefix(64)
        jar.store(setCookie: lines.map { String(decoding: $0, as: UTF8.self) }, from: url)
        let host = url.host
        for cookie in jar.all {
            precondition(cookie.hostOnly ? cookie.domain == host : Cookie.domainMatches(host, cookie.domain) && cookie.domain.contains("."),
                         "a cookie for \(cookie.domain) stored from \(host)")
            precondition(!cookie.secure || url.scheme == .https || host == "localhost", "a Secure cookie from an insecure origin")
            precondition(cookie.path.hasPrefix("/"), "path \(cookie.path)")
        }
        for target in urls {
            if let header = jar.cookieHeader(for: target) {
                precondition(!header.utf8.contains(where: { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F }), "a control character in Cookie")
            }
        }
        let saved = jar.netscapeText()
        let reread = CookieJar()
        reread.clock = { 1_800_000_000 }
        reread.load(netscape: saved)
        let before = Set(jar.all.map { "\($0.name)\t\($0.value)\t\($0.domain)\t\($0.path)\t\($0.hostOnly)\t\($0.secure)" })
        let after = Set(reread.all.map { "\($0.name)\t\($0.value)\t\($0.domain)\t\($0.path)\t\($0.hostOnly)\t\($0.secure)" })
        precondition(before == after, "a saved jar read back differently")
        // The raw input as a cookie file: nothing it holds may trap.
        let file = CookieJar()
        file.load(netscape: String(decoding: input, as: UTF8.self))
        _ = file.netscapeText()
    }
}
