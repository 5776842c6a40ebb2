import Courier
import Testing

/// Per-host reachability from Swift, in the test process (no network change is forced here: the
/// C and Python tests do that in processes of their own). Hosts in 127.0.0.0/8 no other test
/// uses, so the outcomes recorded are this test's.
@Suite("Host reachability from Swift")
struct ReachabilityTests {
    @Test func routesRefusalsAndNames() async throws {
        let before = await Network.reachability(of: "127.0.0.11")
        #expect(before.reason == .routed && before.isReachable && before.address == "127.0.0.11", "\(before)")
        #expect(before.interface == "lo" || before.interface.isEmpty, "\(before)")

        let engine = Engine(host: "http://127.0.0.11:1")
        await #expect(throws: CourierError.self, "nothing listens on port 1") { try await engine.send(engine.operation(path: "/")) }
        let after = await Network.reachability(of: "127.0.0.11")
        #expect(after.reason == .connectFailed && !after.isReachable, "\(after)")

        let name = await Network.reachability(of: "nothing-here.invalid")
        #expect(name == HostReachability(host: "nothing-here.invalid", reason: .unresolvable))

        let answered = await withCheckedContinuation { continuation in
            Network.reachability(of: "[::1]") { continuation.resume(returning: $0) }
        }
        #expect(answered.host == "[::1]" && answered.address == "::1", "\(answered)")
        #expect(answered.isReachable || answered.reason == .noRoute, "a kernel without IPv6 has no route: \(answered)")
    }
}
