import Glibc
import Testing
@testable import CourierCore

/// Per-host reachability's pure parts: the verdict from routes and the latest outcome, and the
/// outcome table (what counts against a host, what a network change or a minute forgets). The
/// kernel's route lookup is asked once for loopback (no socket to any server).
@Suite("Host reachability")
struct HostReachabilityTests {
    func decide(_ routes: [HostReachability.Route], _ outcome: HostOutcomes.Outcome? = nil, up: Bool = true,
                addresses: [String] = ["198.51.100.7", "2001:db8::7"]) -> HostReachability {
        HostReachability.decide(host: "api.example", addresses: addresses, routes: routes, outcome: outcome, networkUp: up)
    }

    @Test func aRouteWithoutHistoryIsRouted() {
        let answer = decide([.via("eth0"), .via("eth1")])
        #expect(answer == HostReachability(host: "api.example", reason: .routed, interface: "eth0", address: "198.51.100.7"))
        #expect(answer.isReachable)
        #expect(answer.description == "api.example reachable routed eth0")
    }

    @Test func theFirstAddressWithARouteAnswers() {
        let answer = decide([.none(ENETUNREACH), .via("wlan0")])
        #expect(answer.reason == .routed && answer.interface == "wlan0" && answer.address == "2001:db8::7")
    }

    @Test func noRouteToAnyAddressIsUnreachable() {
        let answer = decide([.none(ENETUNREACH), .none(EHOSTUNREACH)], .connected)
        #expect(answer.reason == .noRoute && !answer.isReachable, "a route matters more than history")
        #expect(answer.interface.isEmpty && answer.address == "198.51.100.7")
        #expect(answer.description == "api.example unreachable no-route")
    }

    @Test func theLatestOutcomeDecidesAmongRoutedHosts() {
        #expect(decide([.via("eth0")], .connected).reason == .connected)
        #expect(decide([.via("eth0")], .failed(.connectFailed)).reason == .connectFailed)
        #expect(!decide([.via("eth0")], .failed(.timedOut)).isReachable)
    }

    @Test func unknownRoutesFollowTheNetworkExceptForLoopback() {
        #expect(decide([.unknown], up: true).reason == .routed)
        #expect(decide([.unknown], up: false).reason == .noRoute)
        #expect(decide([.unknown], up: false, addresses: ["127.0.0.1"]).reason == .routed)
        #expect(decide([.unknown], up: false, addresses: ["::1"]).reason == .routed)
    }

    @Test func failuresThatMeanNoWayThereCountAgainstTheHost() {
        #expect(HostOutcomes.outcome(of: CourierError(.connectFailed)) == .failed(.connectFailed))
        #expect(HostOutcomes.outcome(of: CourierError(.dnsFailure)) == .failed(.unresolvable))
        #expect(HostOutcomes.outcome(of: CourierError(.connectTimeout)) == .failed(.timedOut))
        #expect(HostOutcomes.outcome(of: CourierError(.tlsHandshake)) == .connected, "TLS failed after the host answered")
        #expect(HostOutcomes.outcome(of: nil) == .connected)
    }

    @Test func outcomesAreForgottenOnANetworkChangeOrAfterAMinute() {
        var table = HostOutcomes()
        #expect(table.outcome(host: 3, nowMillis: 0) == nil)
        table.record(.failed(.connectFailed), host: 3, nowMillis: 1_000)
        #expect(table.outcome(host: 3, nowMillis: 2_000) == .failed(.connectFailed))
        #expect(table.outcome(host: 2, nowMillis: 2_000) == nil, "per host")
        #expect(table.outcome(host: nil, nowMillis: 2_000) == nil, "a host never connected to")
        #expect(table.outcome(host: 3, nowMillis: 61_000) == .failed(.connectFailed))
        #expect(table.outcome(host: 3, nowMillis: 61_001) == nil, "a minute old")
        table.record(.connected, host: 3, nowMillis: 70_000)
        #expect(table.outcome(host: 3, nowMillis: 70_001) == .connected, "the latest wins")
        table.networkChanged()
        #expect(table.outcome(host: 3, nowMillis: 70_002) == nil, "learned on the old network")
        table.record(.failed(.timedOut), host: 0, nowMillis: 80_000)
        #expect(table.outcome(host: 0, nowMillis: 80_000) == .failed(.timedOut))
        table.record(.connected, host: -1, nowMillis: 80_000)
    }

    @Test func theKernelRoutesLoopbackThroughLo() throws {
        let address = try #require(SocketAddress(ipLiteral: "127.0.0.1", port: 0))
        let route = RouteLookup.route(to: address)
        // netlink may be refused in a sandbox: then the question cannot be asked.
        #expect(route == .via("lo") || route == .unknown, "\(route)")
    }
}
