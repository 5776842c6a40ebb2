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

    /// curl's --interface and --local-port: the server sees the address and a port of the range
    /// (the scripted server's /echo reports its peer); the device itself as root; a binding the
    /// kernel refuses is `.localBind`; a connection bound one way serves nothing else.
    @Test func theLocalEndIsWhereTheRouteSays() async throws {
        func peer(_ t: Transfer) -> [String] {
            guard let start = t.bodyText.range(of: "\"peer\": [") else { return [] }
            return t.bodyText[start.upperBound...].prefix { $0 != "]" }.split(separator: ",").map {
                $0.trimmingCharacters(in: CharacterSet(charactersIn: " \""))
            }
        }
        let bound = ConnectRoute(local: LocalBinding(source: .address("127.0.0.2"), ports: 41_000...41_040))
        let (t, _) = await fetch(s.scripted + "/echo") { $0.route = bound }
        let seen = peer(t)
        #expect(t.error == nil && seen.first == "127.0.0.2", "\(t.bodyText)")
        #expect((41_000...41_040).contains(Int(seen.last ?? "") ?? 0), "a port of the range: \(seen)")
        let (again, _) = await fetch(s.scripted + "/echo") { $0.route = bound }
        #expect(again.metrics.reusedConnection, "the bound connection serves the same binding")
        let (plain, _) = await fetch(s.scripted + "/echo")
        #expect(peer(plain).first == "127.0.0.1", "never a request without it: \(plain.bodyText)")
        let device = try ConnectRoute(local: LocalBinding(interface: "lo"))
        let (lo, _) = await fetch(s.scripted + "/echo") { $0.route = device }
        #expect(lo.error == nil, "\(String(describing: lo.error))")
        for source in [LocalBinding.Source.address("192.0.2.77"), .interface("nosuchif0"), .address("::1")] {
            let (refused, _) = await fetch(s.scripted + "/echo") { $0.route = ConnectRoute(local: LocalBinding(source: source)) }
            #expect(refused.error?.code == .localBind, "\(source): \(String(describing: refused.error))")
        }
        // Through a proxy too, a local end the kernel refuses is what it is (curl's 45), not a
        // failure to reach the proxy.
        let (proxied, _) = await fetch(s.scripted + "/echo") {
            $0.proxy = .all(Proxy(host: "127.0.0.1", port: 9))
            $0.route = ConnectRoute(local: LocalBinding(source: .address("192.0.2.77")))
        }
        #expect(proxied.error?.code == .localBind, "\(String(describing: proxied.error))")
        #expect(throws: CourierError.self) { try LocalBinding(interface: "host!not-an-address") }
        #expect(throws: CourierError.self) { try LocalBinding.ports(parsing: "9-3") }
        #expect(try LocalBinding.ports(parsing: "5000") == 5000...5000)
    }

    @Test func theLocalEndFromCAndTheCLI() async throws {
        let bin = try await CExamples.shared.directory()
        let c = try await runProcess(bin + "/local_end", [s.scripted])
        #expect(c.status == 0 && c.stdout.contains("all checks passed"), "\(c.stdout)\(c.stderr)")
        let cli = try await runProcess(CLITests.binary, ["-s", "-o", "/dev/null", "--interface", "127.0.0.2", "--local-port", "41300-41340",
                                                         "-w", "%{local_ip} %{local_port}", s.scripted + "/echo"])
        let port = Int(cli.stdout.split(separator: " ").last ?? "") ?? 0
        #expect(cli.status == 0 && cli.stdout.hasPrefix("127.0.0.2 ") && (41_300...41_340).contains(port), "\(cli.stdout)\(cli.stderr)")
        let refused = try await runProcess(CLITests.binary, ["-sS", "--interface", "192.0.2.77", s.scripted + "/echo"])
        #expect(refused.status == 45, "curl's 45: \(refused.status) \(refused.stderr)")
        let usage = try await runProcess(CLITests.binary, ["-sS", "--local-port", "9-3", s.scripted + "/echo"])
        #expect(usage.status == 2, "\(usage.status) \(usage.stderr)")
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
