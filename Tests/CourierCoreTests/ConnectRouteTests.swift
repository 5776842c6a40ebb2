import Testing
@testable import CourierCore

/// curl's --resolve, --connect-to and -4/-6 as a pure value, Happy Eyeballs' address order, and
/// which filters a connection's stream stack gets.
@Suite("Connect routes")
struct ConnectRouteTests {
    let origin = Origin(scheme: .https, host: "api.example", port: 443)

    /// One rule for what a socket address holds, for paths and abstract names alike: 107 bytes
    /// (a path's NUL ends it, an abstract name's starts it). Checked by the route and by the
    /// connect, which must agree: an abstract name of 107 bytes is refused by nobody listening,
    /// not as too long.
    @Test func unixSocketNamesUpToTheAddressesRoom() throws {
        let longest = String(repeating: "n", count: ConnectRoute.UnixSocket.maxLength)
        for socket in [ConnectRoute.UnixSocket.path("/tmp/" + String(longest.dropFirst(5))), .abstract(longest)] {
            #expect(socket.fits)
            _ = try ConnectRoute(unixSocket: socket)
            guard case .failure(let error) = UnixSocketConnect.connect(socket) else {
                Issue.record("\(socket) answered")
                continue
            }
            #expect(error.code == .connectFailed, "\(socket): \(error)")
        }
        for socket in [ConnectRoute.UnixSocket.path(""), .abstract(longest + "n"), .path("a\u{0}b")] {
            #expect(!socket.fits)
            #expect(throws: CourierError.self) { try ConnectRoute(unixSocket: socket) }
            guard case .failure(let error) = UnixSocketConnect.connect(socket) else { continue }
            #expect(error.code == .dnsFailure, "curl's 6 for a path no address holds: \(error)")
        }
    }

    @Test func connectToRulesMatchHostAndPortOrAny() throws {
        var route = ConnectRoute()
        route.redirects = [try .init(parsing: "other.example:443:ignored:1"), try .init(parsing: "api.example::backend.example:8443")]
        #expect(route.target(for: origin).host == "backend.example" && route.target(for: origin).port == 8443)
        route.redirects = [try .init(parsing: "::[::1]:")]
        let any = route.target(for: origin)
        #expect(any.host == "::1" && any.port == 443 && any.addresses == nil, "empty parts keep the request's")
        #expect(throws: CourierError.self) { try ConnectRoute.Redirect(parsing: "a:1:b") }
        #expect(throws: CourierError.self) { try ConnectRoute.Redirect(parsing: "a:99999:b:1") }
    }

    @Test func resolveGivesAddressesForTheConnectTarget() throws {
        var route = ConnectRoute()
        try route.addResolve("api.example:443:127.0.0.2,[::1]")
        let target = route.target(for: origin)
        #expect(target.addresses?.map(\.description) == ["127.0.0.2:443", "[::1]:443"])
        #expect(route.target(for: Origin(scheme: .https, host: "api.example", port: 8443)).addresses == nil, "per port")
        route.redirects = [try .init(parsing: "api.example:443:backend.example:80")]
        try route.addResolve("backend.example:80:127.0.0.3")
        #expect(route.target(for: origin).addresses?.map(\.description) == ["127.0.0.3:80"], "--resolve applies to where it connects")
        for bad in ["api.example:443", "api.example:x:1.2.3.4", "api.example:443:not-an-address", ":443:1.2.3.4"] {
            #expect(throws: CourierError.self, "\(bad)") { try route.addResolve(bad) }
        }
    }

    @Test func familiesFilterAddresses() throws {
        var route = ConnectRoute(family: .ipv6)
        try route.addResolve("api.example:443:127.0.0.1,::1")
        #expect(route.target(for: origin).addresses?.map(\.description) == ["[::1]:443"])
        route.family = .ipv4
        #expect(route.target(for: origin).addresses?.map(\.description) == ["127.0.0.1:443"])
    }

    @Test func happyEyeballsInterleavesFamiliesFromTheFirst() {
        let found = ["2001:db8::1", "2001:db8::2", "2001:db8::3", "192.0.2.1", "192.0.2.2"].map { SocketAddress(ipLiteral: $0, port: 0)! }
        #expect(AddressRacer.interleaved(found).map(\.ipDescription) == ["2001:db8::1", "192.0.2.1", "2001:db8::2", "192.0.2.2", "2001:db8::3"])
        let v4First = [found[3], found[0]]
        #expect(AddressRacer.interleaved(v4First).map(\.ipDescription) == ["192.0.2.1", "2001:db8::1"])
        #expect(AddressRacer.interleaved([found[0], found[1]]).map(\.ipDescription) == ["2001:db8::1", "2001:db8::2"])
    }

    @Test func localhostIsLoopbackWithoutAsking() {
        #expect(Resolver.isLocalhost("localhost") && Resolver.isLocalhost("api.localhost") && !Resolver.isLocalhost("localhost.example"))
        #expect(Resolver.loopback.map(\.ipDescription) == ["::1", "127.0.0.1"])
    }

    @Test func streamStackFiltersFollowSchemeAndProxy() throws {
        let tls = try TLSContext.make(TLSConfiguration()).get()
        let plain = Origin(scheme: .http, host: "api.example", port: 80)
        var proxy = Proxy(host: "proxy.example", port: 3128)
        func stack(_ origin: Origin, _ proxy: Proxy?) -> StreamStack {
            StreamStack(origin: origin, proxy: proxy, route: nil, tls: origin.scheme == .https ? tls : nil, attemptDelayMillis: 250)
        }
        #expect(stack(plain, nil).filters == [] && stack(plain, nil).forwardingProxy == nil)
        #expect(stack(origin, nil).filters == [.tls])
        #expect(stack(plain, proxy).filters == [] && stack(plain, proxy).forwardingProxy == proxy, "plain http is forwarded")
        #expect(stack(origin, proxy).filters == [.tunnel(target: "api.example:443"), .tls], "TLS runs inside the tunnel")
        proxy.tunnel = true
        #expect(stack(plain, proxy).filters == [.tunnel(target: "api.example:80")] && stack(plain, proxy).forwardingProxy == nil)
        let v6 = Origin(scheme: .https, host: "::1", port: 8443)
        #expect(stack(v6, proxy).filters == [.tunnel(target: "[::1]:8443"), .tls])
    }
}
