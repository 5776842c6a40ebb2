import Foundation
import Glibc
import Testing
@testable import CourierCore

/// Where connections go: Happy Eyeballs across a name's addresses, `localhost` on both loopbacks,
/// and the routes curl's --resolve, --connect-to, -4 and -6 describe, against real listeners.
@Suite("Connection routes and races")
struct ConnectionRouteTests {
    let s = TestServers.shared

    /// Whether ::1 can be listened on here (IPv6 may be off in a container).
    static let hasIPv6Loopback: Bool = {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0 }
        }
    }()

    /// 127.0.0.2 at the scripted server's port never answers a connect (a full backlog, see
    /// scripted_server.py); 127.0.0.1 does. Given both, in that order, a sequential connect would
    /// sit out the 5 s connect timeout; the race starts 127.0.0.1 250 ms in and wins.
    @Test func aHangingFirstAddressLosesTheRace() async throws {
        var route = ConnectRoute()
        try route.addResolve("race.test:\(s.scriptedPort):127.0.0.2,127.0.0.1")
        let (t, _) = await fetch("http://race.test:\(s.scriptedPort)/echo") {
            $0.route = route
            $0.timeouts.connect = .seconds(5)
        }
        #expect(t.error == nil, "\(String(describing: t.error))")
        #expect(t.metrics.remoteAddress == "127.0.0.1:\(s.scriptedPort)")
        #expect(t.bodyText.contains("\"race.test:\(s.scriptedPort)\""), "the Host field is the URL's: \(t.bodyText)")
    }

    @Test func connectToKeepsTheRequestsHostAndAConnectionOfItsOwn() async throws {
        var route = ConnectRoute()
        route.redirects = [try .init(parsing: "elsewhere.test:80:127.0.0.1:\(s.scriptedPort)")]
        let (t, _) = await fetch("http://elsewhere.test/echo") { $0.route = route }
        #expect(t.error == nil && t.bodyText.contains("[\"Host\", \"elsewhere.test\"]"), "\(t.bodyText)")
        // A plain request to the origin never reuses a routed connection (nor the other way).
        let (plain, _) = await fetch(s.scripted + "/echo")
        var other = ConnectRoute()
        other.redirects = [try .init(parsing: "127.0.0.1:\(s.scriptedPort):127.0.0.1:\(s.scriptedPort)")]
        let (routed, _) = await fetch(s.scripted + "/echo") { $0.route = other }
        #expect(plain.error == nil && routed.error == nil)
        #expect(!routed.metrics.reusedConnection, "a route's connections are its own")
    }

    @Test func familiesAreKept() async throws {
        let (v6, _) = await fetch(s.scripted + "/echo") { $0.route = ConnectRoute(family: .ipv6) }
        #expect(v6.error?.code == .connectFailed, "an IPv4 literal has no IPv6 address: \(String(describing: v6.error))")
        let (v4, _) = await fetch("http://localhost:\(s.scriptedPort)/echo") { $0.route = ConnectRoute(family: .ipv4) }
        #expect(v4.error == nil && v4.metrics.remoteAddress == "127.0.0.1:\(s.scriptedPort)")
    }

    @Test(.enabled(if: hasIPv6Loopback, "IPv6 loopback (::1) is not available here"))
    func localhostReachesAServerOnlyOnIPv6Loopback() async throws {
        let port = await s.idempotencyServerOnIPv6Loopback()
        let (t, _) = await fetch("http://localhost:\(port)/keys")
        #expect(t.error == nil && t.head?.status == 200, "\(String(describing: t.error))")
        #expect(t.metrics.remoteAddress == "[::1]:\(port)")
        // And a server on 127.0.0.1 only (one of this test's own: a new connection) is reached
        // through localhost too, ::1 refused first.
        let ipv4Only = await s.privateScripted()
        let ipv4Port = ipv4Only.split(separator: ":").last!
        let (v4, _) = await fetch("http://localhost:\(ipv4Port)/echo")
        #expect(v4.error == nil && v4.metrics.remoteAddress == "127.0.0.1:\(ipv4Port)", "\(v4.metrics.remoteAddress)")
    }
}
