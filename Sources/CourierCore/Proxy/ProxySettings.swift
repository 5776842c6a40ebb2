import Glibc

/// Which proxy, if any, each request goes through.
///
/// By default requests follow the environment the way curl does (`ProxySettings.environment`);
/// set `TransferOptions.proxy` to `.direct` to ignore it, or to explicit settings.
public struct ProxySettings: Sendable, Hashable {
    /// The proxy for http URLs.
    public var http: Proxy?
    /// The proxy for https URLs (a CONNECT tunnel).
    public var https: Proxy?
    /// Hosts reached directly.
    public var noProxy: NoProxy
    /// Why the configuration cannot be used (a malformed `http_proxy` value): every request it
    /// would route fails with this rather than silently going direct.
    public var problem: CourierError?
    /// Whether http URLs go through a CONNECT tunnel too, as https ones always do (curl's
    /// `-p`/`--proxytunnel`), instead of being sent to the proxy in absolute form: for proxies
    /// that only tunnel, or so the proxy sees no request. Off by default.
    public var tunnelsHTTP = false
    /// How an HTTPS proxy's own certificate is checked, and the client certificate shown to it
    /// (curl's --proxy-cacert, --proxy-capath, --proxy-insecure, --proxy-cert, --proxy-key): the
    /// system's roots and the proxy's name by default, whatever the origin's `tls` says.
    public var proxyTLS = TLSConfiguration()

    /// Settings with the given proxies.
    public init(http: Proxy? = nil, https: Proxy? = nil, noProxy: NoProxy = .none) {
        self.http = http
        self.https = https
        self.noProxy = noProxy
    }

    /// One proxy for every scheme (curl's `-x`).
    public static func all(_ proxy: Proxy, noProxy: NoProxy = .none) -> ProxySettings {
        ProxySettings(http: proxy, https: proxy, noProxy: noProxy)
    }

    /// No proxy at all, whatever the environment says.
    public static let direct = ProxySettings()

    /// Whether any request would use a proxy.
    public var isDirect: Bool { http == nil && https == nil && problem == nil }

    /// The proxy `origin` is reached through, or nil for a direct connection. Throws the
    /// configuration's problem for a request it applies to.
    package func proxy(for origin: Origin) throws(CourierError) -> Proxy? {
        if noProxy.matches(host: origin.host) { return nil }
        if let problem { throw problem }
        guard var chosen = origin.scheme == .http ? http : https else { return nil }
        if origin.scheme == .http, tunnelsHTTP { chosen.tunnel = true }
        if chosen.kind == .https { chosen.tls = proxyTLS }
        return chosen
    }

    /// curl's environment rules: `http_proxy` (lower case only: an `HTTP_PROXY` can be set by a
    /// CGI request's `Proxy:` header), `https_proxy` or `HTTPS_PROXY`, `all_proxy` or `ALL_PROXY`
    /// for a scheme without its own, and `no_proxy` or `NO_PROXY`; the lower-case name wins when
    /// both are set, and an empty value means none.
    public static func environment(_ lookup: (String) -> String? = ProxySettings.processVariable) -> ProxySettings {
        func value(_ names: String...) -> String? {
            for name in names { if let found = lookup(name), !found.isEmpty { return found } }
            return nil
        }
        var settings = ProxySettings()
        let all = value("all_proxy", "ALL_PROXY")
        do throws(CourierError) {
            settings.http = try (value("http_proxy") ?? all).map { (text: String) throws(CourierError) in try Proxy(parsing: text) }
            settings.https = try (value("https_proxy", "HTTPS_PROXY") ?? all).map { (text: String) throws(CourierError) in try Proxy(parsing: text) }
        } catch {
            settings.problem = CourierError(error.code, "the proxy environment: \(error.detail ?? error.message)")
        }
        settings.noProxy = value("no_proxy", "NO_PROXY").map(NoProxy.init) ?? .none
        return settings
    }

    /// Reads a variable of this process's environment.
    public static func processVariable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The process's environment as read at first use (nil when it names no proxy): the default
    /// of every request.
    package static let processDefault: ProxySettings? = {
        let found = environment()
        return found.isDirect ? nil : found
    }()

    /// Whether the environment names a proxy (a flag the hot path tests instead of the settings).
    package static let environmentProxies = processDefault != nil
}
