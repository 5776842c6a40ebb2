import CUV

/// Builds the stream stack one pool key's connections speak through, bottom up (curl's
/// connection filter chain):
///
///     SocketStream (dialled by an AddressRacer: to the origin, its route's target, or the proxy;
///                   or connected to the route's Unix socket)
///     └ TLSStream      with an HTTPS proxy, verified against the proxy's name
///     └ TunnelStream   when a proxy must tunnel: HTTP CONNECT (https through it, or
///                      `Proxy.tunnel`), or SOCKS5 for every URL
///       └ TLSStream    for https: with the origin, verified against its name, end to end
///
/// The only place that decides which filters a connection gets; each filter knows only the one
/// below it, and the HTTP connection only the top.
package struct StreamStack {
    package let origin: Origin
    package let proxy: Proxy?
    package let route: ConnectRoute?
    package let tls: TLSContext?
    /// TLS with an HTTPS proxy (nil for other proxies).
    package var proxyTLS: TLSContext?
    package let attemptDelayMillis: UInt64
    /// What TLS offers by ALPN (the pool key's version preference).
    package var alpn: ALPNOffer = .http1

    package init(origin: Origin, proxy: Proxy?, route: ConnectRoute?, tls: TLSContext?, attemptDelayMillis: UInt64) {
        self.origin = origin
        self.proxy = proxy
        self.route = route
        self.tls = tls
        self.attemptDelayMillis = attemptDelayMillis
    }

    /// Whether requests go to a forwarding proxy in absolute form (plain http through a proxy
    /// that is not asked to tunnel): the proxy the connection then names in its request lines.
    package var forwardingProxy: Proxy? {
        guard let proxy, !proxy.tunnels(origin.scheme) else { return nil }
        return proxy
    }

    /// A filter over the socket.
    package enum Filter: Equatable {
        /// TLS with an HTTPS proxy.
        case proxyTLS
        /// A CONNECT tunnel through the proxy to `target` (`host:port`).
        case tunnel(target: String)
        /// A connection through a SOCKS5 proxy to the origin.
        case socks
        /// TLS with the origin.
        case tls
    }

    /// The filters over the socket, bottom up: TLS with an HTTPS proxy, a tunnel when a proxy
    /// must tunnel (SOCKS5 always; an HTTP proxy for https, or `Proxy.tunnel`), then TLS for https.
    package var filters: [Filter] {
        var filters: [Filter] = []
        if proxyTLS != nil { filters.append(.proxyTLS) }
        if let proxy, proxy.tunnels(origin.scheme) {
            filters.append(proxy.speaksHTTP ? .tunnel(target: Origin.authority(host: origin.host, port: origin.port)) : .socks)
        }
        if tls != nil { filters.append(.tls) }
        return filters
    }

    /// A new, unopened stack; `trace` (when the request asked for one) hears every layer.
    package func make(resolver: Resolver, uvLoop: UnsafeMutablePointer<uv_loop_t>, sessions: TLSSessionCache,
                      sessionKey: Int, trace: ConnectionTrace?) -> any ByteStream {
        var stream: any ByteStream
        if let mock = route?.mock {
            trace?.add("  Talking to the mock server")
            return MockStream(server: mock, uvLoop: uvLoop)
        }
        if let socket = route?.unixSocket {
            trace?.add("  Trying Unix socket \(socket.name)...")
            stream = SocketStream(connectingTo: socket, uvLoop: uvLoop)
        } else {
            stream = SocketStream(dialing: racer(resolver: resolver, uvLoop: uvLoop, trace: trace), uvLoop: uvLoop)
        }
        for filter in filters {
            switch filter {
            case .proxyTLS:
                // (Its sessions are kept apart from the origin's: the complement of the key.)
                stream = TLSStream(over: stream, context: proxyTLS!, host: proxy!.host, port: proxy!.port, uvLoop: uvLoop,
                                   sessions: sessions, sessionKey: ~sessionKey, trace: trace)
            case .tunnel(let target):
                stream = TunnelStream(over: stream, handshake: TunnelHandshake(target: target, authorization: proxy?.authorization),
                                      trace: trace)
            case .socks:
                let proxy = proxy!
                let handshake = SocksHandshake(host: origin.host, port: origin.port, remoteResolution: proxy.kind == .socks5h,
                                               user: proxy.user, password: proxy.password)
                stream = TunnelStream(over: stream, handshake: handshake, trace: trace,
                                      resolve: originResolver(resolver))
            case .tls:
                stream = TLSStream(over: stream, context: tls!, host: origin.host, port: origin.port, uvLoop: uvLoop,
                                   sessions: sessions, sessionKey: sessionKey, trace: trace, alpn: alpn)
            }
        }
        return stream
    }

    /// How a SOCKS5 proxy's origin is looked up here: the route's given addresses for it first
    /// (curl's --resolve), then the resolver, of the route's family.
    private func originResolver(_ resolver: Resolver) -> TunnelStream.Resolve {
        let (route, port) = (self.route, origin.port)
        return { host, completion in
            if let given = route?.givenAddresses(host: host, port: port) { return completion(.success(given)) }
            resolver.resolve(host) { result in completion(result.map { route?.filter($0) ?? $0 }) }
        }
    }

    /// Who dials: the proxy (the route's addresses for the proxy's own name apply, as curl's
    /// --resolve covers every name it resolves), or the origin where its route says (another
    /// host or port, given addresses, one address family).
    private func racer(resolver: Resolver, uvLoop: UnsafeMutablePointer<uv_loop_t>, trace: ConnectionTrace?) -> AddressRacer {
        if let proxy {
            return AddressRacer(host: proxy.host, port: proxy.port, resolver: resolver, uvLoop: uvLoop,
                                addresses: route?.givenAddresses(host: proxy.host, port: proxy.port), family: route?.family ?? .any,
                                attemptDelayMillis: attemptDelayMillis, toProxy: true, binding: route?.local, trace: trace)
        }
        guard let route else {
            return AddressRacer(host: origin.host, port: origin.port, resolver: resolver, uvLoop: uvLoop,
                                attemptDelayMillis: attemptDelayMillis, trace: trace)
        }
        let target = route.target(for: origin)
        return AddressRacer(host: target.host, port: target.port, resolver: resolver, uvLoop: uvLoop, addresses: target.addresses,
                            family: route.family, attemptDelayMillis: attemptDelayMillis, binding: route.local, trace: trace)
    }
}
