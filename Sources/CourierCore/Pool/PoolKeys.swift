/// Small integers for what the queue and the pool key their state by: host names (the
/// scheduler's per-host limits), pool keys (an origin plus the whole TLS configuration and the
/// proxy: what must match for two requests to share a connection) and TLS configurations with the contexts built
/// from them.
///
/// Integers, so the pure machines index arrays instead of hashing strings per request; and most
/// requests go where the previous one went, so each lookup first compares with the last answer.
package struct PoolKeys {
    private struct PoolKeyValue: Hashable {
        var origin: Origin
        /// The interned TLS configuration, -1 for http.
        var tls: Int
        /// The proxy connections go through, nil for direct ones: a proxied connection never
        /// serves a direct request, nor one through another proxy, or the other way round.
        var proxy: Proxy?
        /// The interned TLS configuration of an HTTPS proxy, -1 for none (follows from `proxy`).
        var proxyTLS = -1
        /// Where a direct connection goes instead of the origin (nil: the origin, resolved).
        var route: ConnectRoute? = nil
        /// The HTTP versions its connections may speak.
        var version = HTTPVersionPreference.http2Preferred
        /// The keep-alive PING interval of its HTTP/2 connections (a request that asked for
        /// PINGs never goes on a connection without them).
        var pingInterval: Nanoseconds? = nil
    }

    private var hostKeys: [String: Int] = [:]
    private var hostCount = 0
    private var lastHost = "\u{0}"
    private var lastHostKey = -1

    private var poolKeys: [PoolKeyValue: Int] = [:]
    /// Per pool key: its origin, its host's key, the TLS context its connections use, and the
    /// connect timeout of the latest request for it (connections start with it).
    package private(set) var origins: [Origin] = []
    package private(set) var hostOfPoolKey: [Int] = []
    package private(set) var tlsContexts: [TLSContext?] = []
    /// Per pool key, the TLS context of its HTTPS proxy (nil for other keys).
    package private(set) var proxyTLSContexts: [TLSContext?] = []
    package private(set) var connectTimeouts: [Nanoseconds?] = []
    /// Per pool key, the connect-phase choices of the latest request for it (the Happy Eyeballs
    /// delay, tracing, a connection per request), nil for the defaults: what its next connections
    /// use, like the connect timeout.
    package private(set) var connectChoices: [ConnectChoices?] = []
    /// Set when a key's choices changed (the executor then updates the pool's policy for it).
    /// (Keys whose latest request had choices are never the fast path's "same as last": a
    /// request without them must reset them.)
    package var connectChoicesChanged = false
    package private(set) var proxies: [Proxy?] = []
    /// Per pool key, the HTTP versions its connections may speak.
    package private(set) var versions: [HTTPVersionPreference] = []
    /// Origins whose server answered HTTP_1_1_REQUIRED: `.http2Preferred` goes over HTTP/1.1
    /// to them from then on.
    package private(set) var http1Origins: Set<Origin> = []
    /// `!http1Origins.isEmpty`, as one load (every request asks).
    private var remembersHTTP1 = false
    /// The version the last key's request asked for (before an HTTP/1 origin's override).
    private var lastRequestedVersion = HTTPVersionPreference.http2Preferred
    /// Per pool key, whether its connections may turn out to speak HTTP/2 (so a request first
    /// looks for a stream): https with ALPN offering h2, or http:// with prior knowledge, direct
    /// or through a tunnel (a forwarding proxy speaks HTTP/1).
    package private(set) var multiplexes: [Bool] = []
    private var lastPoolMultiplexes = false
    package private(set) var routes: [ConnectRoute?] = []
    /// Per pool key, the keep-alive PING interval of its HTTP/2 connections.
    package private(set) var pingIntervals: [Nanoseconds?] = []
    private var lastOrigin = Origin(scheme: .http, host: "", port: 0)
    private var lastPoolKey = -1
    private var lastPoolTLSID = -1
    private var lastPoolProxy: Proxy?
    private var lastPoolProxied = false

    private var tlsIDs: [TLSConfiguration: Int] = [:]
    private var builtContexts: [Result<TLSContext, CourierError>] = []
    private var lastTLSConfiguration: TLSConfiguration?
    private var lastTLSID = -1

    /// Whether the process environment names a proxy (read once, not per request).
    private let environmentProxies = ProxySettings.environmentProxies

    package init() {}

    /// The number of pool keys handed out (they are `0..<count`).
    package var poolKeyCount: Int { origins.count }

    /// The key of a host name (already lower-cased).
    package mutating func hostKey(for host: String) -> Int {
        if host == lastHost { return lastHostKey }
        let key: Int
        if let known = hostKeys[host] {
            key = known
        } else {
            key = hostCount
            hostCount += 1
            hostKeys[host] = key
        }
        lastHost = host
        lastHostKey = key
        return key
    }

    /// The key of a host name already seen, without making one (reachability questions).
    package func existingHostKey(for host: String) -> Int? { hostKeys[host] }

    /// The pool key of `transfer`'s request; `isNew` when it was just made (the caller applies
    /// its host's limit). Fails when the TLS configuration cannot be used (a CA file or client
    /// key that does not load), or when the proxy settings cannot be used.
    /// `multiplexes` says whether the key's connections may speak HTTP/2.
    package mutating func poolKey(for transfer: Transfer) throws(CourierError) -> (key: Int, isNew: Bool, multiplexes: Bool) {
        var tlsID = -1
        if transfer._authority.scheme == .https { tlsID = try tlsConfigurationID(transfer._options.tls) }
        let version = transfer._options.httpVersion
        if transfer._options.hasComposition || environmentProxies {
            return try proxiedPoolKey(for: transfer, tlsID: tlsID, version: version)
        }
        // (The requested version decides the same key as last time: remembering an HTTP/1
        // origin forgets the last key.)
        if lastPoolKey >= 0, lastPoolTLSID == tlsID, lastRequestedVersion == version, !lastPoolProxied, transfer.targets(lastOrigin) {
            // (No connect choices here: they come with a composition. The last key had none either.)
            connectTimeouts[lastPoolKey] = transfer._options.timeouts.connect
            return (lastPoolKey, false, lastPoolMultiplexes)
        }
        return intern(PoolKeyValue(origin: transfer._authority.origin, tls: tlsID, proxy: nil, version: effective(version, transfer)),
                      requested: version, for: transfer)
    }

    /// `.http2Preferred` goes over HTTP/1.1 to an origin that required it.
    private func effective(_ version: HTTPVersionPreference, _ transfer: Transfer) -> HTTPVersionPreference {
        if remembersHTTP1, version == .http2Preferred, http1Origins.contains(transfer._authority.origin) { return .http1Only }
        return version
    }

    /// From now on `.http2Preferred` requests to `origin` go over HTTP/1.1 (its server answered
    /// HTTP_1_1_REQUIRED).
    package mutating func rememberHTTP1(_ origin: Origin) {
        http1Origins.insert(origin)
        remembersHTTP1 = true
        lastPoolKey = -1
    }

    /// `poolKey` for a request that may go through a proxy (its settings decide, per origin).
    @inline(never)
    private mutating func proxiedPoolKey(for transfer: Transfer, tlsID: Int, version: HTTPVersionPreference) throws(CourierError) -> (key: Int, isNew: Bool, multiplexes: Bool) {
        // An HTTP/1.0 request does not keep its connection: said here, where the rare options
        // are read anyway, so the request writer tests nothing more for ordinary requests.
        if transfer._options.sendsHTTP10 { transfer.requestAsksToClose = true }
        // Through a proxy the route gives the proxy's addresses (curl's --resolve covers every
        // name it resolves); direct, where the connection goes. A Unix socket takes no proxy
        // (proxies are reached over TCP: curl's --unix-socket ignores them too).
        let route = transfer._options.route
        let proxy = route?.unixSocket != nil || route?.mock != nil ? nil : try transfer._options.proxySettings?.proxy(for: transfer._authority.origin)
        let ping = transfer._options.connectChoices?.http2PingInterval
        if lastPoolKey >= 0, lastPoolTLSID == tlsID, lastRequestedVersion == version, transfer.targets(lastOrigin), lastPoolProxy == proxy,
           routes[lastPoolKey] == route, pingIntervals[lastPoolKey] == ping {
            noteConnectSettings(lastPoolKey, transfer)
            return (lastPoolKey, false, lastPoolMultiplexes)
        }
        // (An HTTPS proxy whose TLS configuration cannot be used fails here, before a key is
        // made: the fast path above never meets it.)
        let proxyTLS = proxy?.kind == .https ? try tlsConfigurationID(proxy!.tls) : -1
        // (A mock server speaks HTTP/1.1 only.)
        return intern(PoolKeyValue(origin: transfer._authority.origin, tls: tlsID, proxy: proxy, proxyTLS: proxyTLS, route: route,
                                   version: route?.mock != nil ? .http1Only : effective(version, transfer), pingInterval: ping),
                      requested: version, for: transfer)
    }

    /// The key of `value`, made when new, and remembered as the last answer.
    private mutating func intern(_ value: PoolKeyValue, requested: HTTPVersionPreference, for transfer: Transfer) -> (key: Int, isNew: Bool, multiplexes: Bool) {
        var isNew = false
        let key: Int
        if let known = poolKeys[value] {
            key = known
            noteConnectSettings(key, transfer)
        } else {
            key = origins.count
            isNew = true
            poolKeys[value] = key
            origins.append(value.origin)
            hostOfPoolKey.append(hostKey(for: value.origin.host))
            connectTimeouts.append(transfer._options.timeouts.connect)
            connectChoices.append(transfer._options.connectChoices)
            connectChoicesChanged = transfer._options.connectChoices != nil
            proxies.append(value.proxy)
            routes.append(value.route)
            pingIntervals.append(value.pingInterval)
            versions.append(value.version)
            tlsContexts.append(value.tls >= 0 ? (try? builtContexts[value.tls].get()) : nil)
            proxyTLSContexts.append(value.proxyTLS >= 0 ? (try? builtContexts[value.proxyTLS].get()) : nil)
            switch value.origin.scheme {
            case .https:
                multiplexes.append(value.version != .http1Only && (tlsContexts[key]?.configuration.offersALPN ?? false))
            case .http:
                multiplexes.append(value.version == .http2Only && value.proxy?.tunnels(.http) != false)
            }
        }
        lastOrigin = value.origin
        lastPoolKey = key
        lastPoolTLSID = value.tls
        lastPoolProxy = value.proxy
        lastRequestedVersion = requested
        lastPoolMultiplexes = multiplexes[key]
        lastPoolProxied = value.proxy != nil || value.route != nil || connectChoices[key] != nil
        return (key, isNew, multiplexes[key])
    }

    /// The connect-phase settings of the latest request for `key` (its next connections use them).
    @inline(__always)
    private mutating func noteConnectSettings(_ key: Int, _ transfer: Transfer) {
        connectTimeouts[key] = transfer._options.timeouts.connect
        if _slowPath(transfer._options.connectChoices !== connectChoices[key]) {
            connectChoices[key] = transfer._options.connectChoices
            connectChoicesChanged = true
        }
    }

    /// Interns a TLS configuration and builds its context once (loading trust roots and client
    /// certificates is far too slow to repeat per connection); a configuration that failed to
    /// build fails every time with the same error.
    private mutating func tlsConfigurationID(_ configuration: TLSConfiguration) throws(CourierError) -> Int {
        if lastTLSID >= 0, lastTLSConfiguration == configuration {
            return try builtContexts[lastTLSID].map { _ in lastTLSID }.get()
        }
        let id: Int
        if let known = tlsIDs[configuration] {
            id = known
        } else {
            id = builtContexts.count
            tlsIDs[configuration] = id
            builtContexts.append(TLSContext.make(configuration))
        }
        lastTLSConfiguration = configuration
        lastTLSID = id
        return try builtContexts[id].map { _ in id }.get()
    }
}
