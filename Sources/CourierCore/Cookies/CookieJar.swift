import Glibc

/// Cookies received and sent as RFC 6265bis says (sections 5.7 and 5.8), shared by every request
/// that uses the jar, from any thread.
///
/// Stored: host-only cookies (no Domain) and domain cookies whose Domain the request's host
/// domain-matches — never for a single-label domain other than the host itself or for an IP
/// address's "subdomains" (the public-suffix caution this jar can apply without a suffix list);
/// Secure cookies only from secure origins (https, or a loopback host), which also keep
/// non-secure origins from overwriting them; `__Secure-` and `__Host-` prefixes checked; Max-Age
/// over Expires, both capped at 400 days; at most 50 cookies per domain and 3000 in all, the
/// least recently stored going first. Sent: the cookies a request's host, path and channel match,
/// longer paths first, then older ones.
///
/// `load`/`save` read and write the Netscape cookie file curl uses (`-b`/`-c`), so files
/// interoperate; a save is atomic (a temporary file renamed over the old one).
public final class CookieJar: @unchecked Sendable {
    static let perDomainLimit = 50
    static let totalLimit = 3000
    /// 400 days (section 5.5): no cookie lives longer.
    static let maxLifetime: Int64 = 400 * 86_400

    private let lock = Lock()
    private var cookies: [Cookie] = []
    /// The clock (epoch seconds), replaceable by tests.
    package var clock: @Sendable () -> Int64 = { Int64(time(nil)) }

    public init() {}

    /// Every cookie stored (expired ones dropped).
    public var all: [Cookie] {
        let now = clock()
        return lock.withLock {
            cookies.removeAll { $0.isExpired(at: now) }
            return cookies
        }
    }

    /// Removes every cookie.
    public func removeAll() { lock.withLock { cookies.removeAll() } }

    // MARK: Receiving

    /// Stores what a response's `Set-Cookie` fields say, for a request to `url`.
    public func store(setCookie fields: [String], from url: CourierURL) {
        guard !fields.isEmpty else { return }
        let now = clock()
        let host = url.host.lowercased()
        let secureOrigin = Self.isSecure(url)
        lock.withLock {
            for field in fields {
                guard let parsed = SetCookie.parse(field) else { continue }
                storeLocked(parsed, host: host, path: url.path, secureOrigin: secureOrigin, now: now)
            }
        }
    }

    /// Adds a cookie as is (a jar filled by hand; `load` uses it).
    public func insert(_ cookie: Cookie) {
        lock.withLock {
            cookies.removeAll { $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path }
            cookies.append(cookie)
            enforceLimitsLocked(domain: cookie.domain)
        }
    }

    private func storeLocked(_ parsed: SetCookie, host: String, path requestPath: String, secureOrigin: Bool, now: Int64) {
        // Section 5.7 steps 4-6: expiry from Max-Age, else Expires, capped.
        var expires: Int64?
        if let maxAge = parsed.maxAge {
            expires = maxAge <= 0 ? Int64.min : now + min(maxAge, Self.maxLifetime)
        } else if let date = parsed.expires {
            expires = min(date, now + Self.maxLifetime)
        }
        // Steps 7-10: the domain, with the caution a jar without a public suffix list can apply.
        var domain = host
        var hostOnly = true
        if let attribute = parsed.domain {
            if attribute != host {
                guard attribute.contains("."), !Cookie.isIPAddress(host), Cookie.domainMatches(host, attribute) else { return }
                domain = attribute
                hostOnly = false
            }
        }
        let path = parsed.path ?? Cookie.defaultPath(of: requestPath)
        // A tab cannot be written to the Netscape file (its separator); curl refuses these too.
        // (The cookies fuzz target's find: such a cookie did not survive a save.)
        if parsed.name.contains("\t") || parsed.value.contains("\t") || path.contains("\t") { return }
        // Steps 11-16: Secure only from secure origins; the prefixes; SameSite=None needs Secure.
        if parsed.secure && !secureOrigin { return }
        if parsed.name.hasPrefix("__Secure-") && !(parsed.secure && secureOrigin) { return }
        if parsed.name.hasPrefix("__Host-") && !(parsed.secure && secureOrigin && hostOnly && path == "/") { return }
        if parsed.sameSite == "None" && !parsed.secure { return }
        // A non-secure origin may not replace or shadow a secure cookie of the same name.
        if !secureOrigin, cookies.contains(where: { old in
            old.secure && old.name == parsed.name && (Cookie.domainMatches(domain, old.domain) || Cookie.domainMatches(old.domain, domain))
                && Cookie.pathMatches(path, old.path)
        }) { return }
        var created = now
        if let index = cookies.firstIndex(where: { $0.name == parsed.name && $0.domain == domain && $0.hostOnly == hostOnly && $0.path == path }) {
            created = cookies[index].created
            cookies.remove(at: index)
        }
        if let expires, expires <= now { return }  // an expired cookie only deletes
        cookies.append(Cookie(name: parsed.name, value: parsed.value, domain: domain, hostOnly: hostOnly, path: path,
                              expires: expires, secure: parsed.secure, httpOnly: parsed.httpOnly, sameSite: parsed.sameSite,
                              created: created))
        enforceLimitsLocked(domain: domain)
    }

    /// Drops expired cookies first, then the oldest of the domain, then the oldest of all.
    private func enforceLimitsLocked(domain: String) {
        let now = clock()
        if cookies.count > Self.totalLimit || cookies.lazy.filter({ $0.domain == domain }).count > Self.perDomainLimit {
            cookies.removeAll { $0.isExpired(at: now) }
        }
        while cookies.lazy.filter({ $0.domain == domain }).count > Self.perDomainLimit,
              let oldest = cookies.indices.filter({ cookies[$0].domain == domain }).min(by: { cookies[$0].created < cookies[$1].created }) {
            cookies.remove(at: oldest)
        }
        while cookies.count > Self.totalLimit, let oldest = cookies.indices.min(by: { cookies[$0].created < cookies[$1].created }) {
            cookies.remove(at: oldest)
        }
    }

    // MARK: Sending

    /// The `Cookie` field for a request to `url` (section 5.8.3), or nil when no cookie matches.
    public func cookieHeader(for url: CourierURL) -> String? {
        let now = clock()
        let host = url.host.lowercased()
        let secure = Self.isSecure(url)
        let path = url.path.isEmpty ? "/" : url.path
        let matching = lock.withLock { () -> [Cookie] in
            cookies.removeAll { $0.isExpired(at: now) }
            return cookies.filter { $0.matches(host: host, path: path, secure: secure) }
        }
        guard !matching.isEmpty else { return nil }
        let ordered = matching.enumerated().sorted { a, b in
            if a.element.path.count != b.element.path.count { return a.element.path.count > b.element.path.count }
            if a.element.created != b.element.created { return a.element.created < b.element.created }
            return a.offset < b.offset
        }
        return ordered.map { $0.element.name.isEmpty ? $0.element.value : "\($0.element.name)=\($0.element.value)" }.joined(separator: "; ")
    }

    /// https, or a loopback host (a "potentially trustworthy" origin, as browsers and curl treat it).
    static func isSecure(_ url: CourierURL) -> Bool {
        if url.scheme == .https { return true }
        let host = url.host.lowercased()
        return host == "localhost" || host.hasSuffix(".localhost") || host == "::1" || host.hasPrefix("127.")
    }
}
