/// One stored cookie (RFC 6265bis section 5.7's storage model).
public struct Cookie: Sendable, Hashable {
    public var name: String
    public var value: String
    /// Lower-case, without a leading dot.
    public var domain: String
    /// Sent only to `domain` itself (no Domain attribute), not to its subdomains.
    public var hostOnly: Bool
    public var path: String
    /// Epoch seconds; nil for a session cookie (gone when the jar is not saved).
    public var expires: Int64?
    public var secure: Bool
    public var httpOnly: Bool
    /// "Strict", "Lax", "None", or nil when the attribute was absent or unknown. Stored and saved,
    /// not enforced: a client that is not a browser has no "site" a request comes from.
    public var sameSite: String?
    /// When it was first stored (epoch seconds): older cookies come first among equal paths.
    public var created: Int64

    public init(name: String, value: String, domain: String, hostOnly: Bool = true, path: String = "/",
                expires: Int64? = nil, secure: Bool = false, httpOnly: Bool = false, sameSite: String? = nil, created: Int64 = 0) {
        self.name = name
        self.value = value
        self.domain = domain
        self.hostOnly = hostOnly
        self.path = path
        self.expires = expires
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
        self.created = created
    }

    /// Whether it has expired at `now` (epoch seconds).
    public func isExpired(at now: Int64) -> Bool { expires.map { $0 <= now } ?? false }

    /// Whether a request to `host` and `path` over a secure channel or not gets it (section
    /// 5.8.3): domain-match (exact when host-only), path-match, Secure only when `secure`.
    public func matches(host: String, path requestPath: String, secure channel: Bool) -> Bool {
        guard hostOnly ? host == domain : Cookie.domainMatches(host, domain) else { return false }
        guard !secure || channel else { return false }
        return Cookie.pathMatches(requestPath, path)
    }

    /// RFC 6265bis section 5.1.3: `host` is `domain`, or ends with "." + `domain` and is not an IP
    /// address.
    package static func domainMatches(_ host: String, _ domain: String) -> Bool {
        if host == domain { return true }
        guard host.hasSuffix("." + domain) else { return false }
        return !isIPAddress(host)
    }

    /// Section 5.1.4: the cookie path is a prefix of the request path at a "/" boundary.
    package static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return cookiePath.hasSuffix("/") || requestPath.dropFirst(cookiePath.count).first == "/"
    }

    /// Section 5.1.4's default-path of a request path: up to, not including, its last "/".
    package static func defaultPath(of requestPath: String) -> String {
        guard requestPath.hasPrefix("/"), let slash = requestPath.lastIndex(of: "/"), slash != requestPath.startIndex else { return "/" }
        return String(requestPath[..<slash])
    }

    /// A dotted IPv4 address or an IPv6 literal (cookies of an address are never shared with
    /// "subdomains").
    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isNumber) && Int($0)! <= 255 }
    }
}
