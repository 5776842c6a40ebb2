import Foundation
import Synchronization
import Testing
@testable import Courier
@testable import CourierCore

/// 401 and 407 challenges answered by an engine's `Authenticator`, against a server whose bearer
/// tokens expire (Tests/Servers/token_server.py) and the recording proxy: one refresh for every
/// request refused at once, one replay per request, refusals delivered when there is nothing
/// better to send.
@Suite("Auth challenges")
struct ChallengeTests {
    let s = TestServers.shared

    /// Counts calls from any thread.
    final class Counter: Sendable {
        private let atomic = Atomic<Int>(0)
        func add() { atomic.add(1, ordering: .relaxed) }
        var value: Int { atomic.load(ordering: .relaxed) }
    }

    struct Stats: Decodable { var issued: Int; var refused: Int; var served: Int }

    func stats(_ server: String) async throws -> Stats {
        let (t, _) = await fetch(server + "/stats")
        return try JSONDecoder().decode(Stats.self, from: Data(t.responseBody))
    }

    /// A fresh token from the server, counting the calls.
    func newToken(_ server: String, _ calls: Counter) async throws -> Authorization {
        calls.add()
        try await Task.sleep(for: .milliseconds(100))
        let (t, _) = await fetch(server + "/token")
        return .bearer(String(decoding: t.responseBody, as: UTF8.self))
    }

    @Test func fiftyRefusedRequestsShareOneRefresh() async throws {
        let server = await s.privateTokenServer()
        let calls = Counter()
        var configuration = Engine.Configuration()
        configuration.authenticator = Authenticator(initial: .bearer("expired")) { _ in try await newToken(server, calls) }
        let api = Engine(host: server, configuration: configuration)
        let results = await withTaskGroup(of: Int.self) { group in
            for index in 0..<50 {
                group.addTask {
                    let op = api.operation(path: "/protected", method: index % 2 == 0 ? .get : .post)
                    if index % 2 == 1 { op.body = .bytes(Array("payload".utf8)) }
                    return (try? await api.send(op).status) ?? -1
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0 == 200 }, "\(results)")
        #expect(calls.value == 1 && configuration.authenticator!.refreshCount == 1)
        let after = try await stats(server)
        #expect(after.issued == 1 && after.served == 50 && after.refused <= 50, "\(after)")
        // Later requests start with the refreshed token: no refusal first.
        #expect(try await api.send(api.operation(path: "/protected")).status == 200)
        #expect(try await stats(server).refused == after.refused)
        #expect(configuration.authenticator!.current == .bearer("t1"))
    }

    @Test func oneReplayPerRequestAndRefusalsDelivered() async throws {
        let server = await s.privateTokenServer()
        // A refresh that returns a token the server does not take: one replay, then the 401.
        var configuration = Engine.Configuration()
        configuration.authenticator = Authenticator(initial: .bearer("expired")) { _ in .bearer("still-wrong") }
        let api = Engine(host: server, configuration: configuration)
        let op = api.operation(path: "/protected")
        await #expect(throws: CourierError.self) { _ = try await api.send(op) }
        #expect(op.response?.status == 401 && op.error?.code == .httpStatus)
        #expect(try await stats(server).refused == 2, "the request and its one replay")
        // A refresh that gives up (nil) or fails delivers the 401 without a replay.
        for refresh in [{ @Sendable (_: Challenge) async throws -> Authorization? in nil },
                        { @Sendable (_: Challenge) async throws -> Authorization? in throw CourierError(.cancelled) }] {
            var giving = Engine.Configuration()
            giving.authenticator = Authenticator(initial: .bearer("expired"), refresh: refresh)
            let other = Engine(host: server, configuration: giving)
            let before = try await stats(server).refused
            let refused = other.operation(path: "/protected")
            _ = try? await other.send(refused)
            #expect(refused.response?.status == 401)
            #expect(try await stats(server).refused == before + 1)
        }
    }

    @Test func theChallengeSaysWhatWasRefused() async throws {
        let server = await s.privateTokenServer()
        let seen = Mutex<[Challenge]>([])
        var configuration = Engine.Configuration()
        configuration.authenticator = Authenticator { challenge in
            seen.withLock { $0.append(challenge) }
            let (t, _) = await fetch(server + "/token")
            return .bearer(String(decoding: t.responseBody, as: UTF8.self))
        }
        let api = Engine(host: server, configuration: configuration)
        #expect(try await api.send(api.operation(path: "/protected")).status == 200, "no credentials at first, then the refreshed ones")
        let challenge = try #require(seen.withLock { $0.first })
        #expect(challenge.status == 401 && !challenge.isProxy && challenge.url.path == "/protected")
        #expect(challenge.schemes == ["Bearer realm=\"test\", error=\"invalid_token\""])
    }

    @Test func aProxysChallengeGetsTheProxysCredentials() async throws {
        let proxy = await s.privateProxy(credentials: "who:pw")
        let calls = Counter()
        var configuration = Engine.Configuration()
        configuration.options.proxy = .all(try Proxy(parsing: proxy))
        configuration.options.tls = s.trustTestCA
        configuration.authenticator = Authenticator { challenge in
            calls.add()
            return challenge.isProxy ? .basic(user: "who", password: "pw") : nil
        }
        let api = Engine(host: s.nginx, configuration: configuration)
        #expect(try await api.send(api.operation(path: "/small")).status == 200, "a forwarded request's 407")
        #expect(try await api.send(api.operation(urlString: s.https + "/small")).status == 200, "a refused tunnel's 407")
        #expect(calls.value == 1, "the proxy's credentials, once refreshed, serve later requests")
    }

    /// A refresh that never returns (a token endpoint that hangs) does not hold the refused
    /// requests: after `refreshTimeout` they get their 401, and a cancelled one ends at once.
    @Test func aRefreshThatHangsReleasesItsWaiters() async throws {
        let server = await s.privateTokenServer()
        let started = Counter()
        var configuration = Engine.Configuration()
        configuration.authenticator = Authenticator(initial: .bearer("expired"), refreshTimeout: .milliseconds(300)) { _ in
            started.add()
            try await Task.sleep(for: .seconds(3600))  // cancelled at the timeout
            return .bearer("never")
        }
        let api = Engine(host: server, configuration: configuration)
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    let op = api.operation(path: "/protected")
                    _ = try? await api.send(op)
                    return op.response?.status ?? -1
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == [401, 401, 401, 401, 401], "\(statuses)")
        #expect(started.value == 1)

        // Cancelled while it waits: the operation ends cancelled without waiting for the refresh.
        var patient = Engine.Configuration()
        patient.authenticator = Authenticator(initial: .bearer("expired"), refreshTimeout: .seconds(3600)) { _ in
            try await Task.sleep(for: .seconds(3600))
            return nil
        }
        let other = Engine(host: server, configuration: patient)
        let op = other.operation(path: "/protected")
        let sending = Task { try await other.send(op) }
        while patient.authenticator!.refreshCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        op.cancel()
        await #expect(throws: CourierError.self) { _ = try await sending.value }
        #expect(op.error?.code == .cancelled)
    }

    /// Credentials a refresh returns after its timeout are not lost: the requests that follow
    /// use them.
    @Test func aLateRefreshStillServesLaterRequests() async throws {
        let server = await s.privateTokenServer()
        var configuration = Engine.Configuration()
        configuration.authenticator = Authenticator(initial: .bearer("expired"), refreshTimeout: .milliseconds(100)) { _ in
            try? await Task.sleep(for: .milliseconds(400))  // ignores its cancellation, as slow code may
            let (t, _) = await fetch(server + "/token")
            return .bearer(String(decoding: t.responseBody, as: UTF8.self))
        }
        let api = Engine(host: server, configuration: configuration)
        let first = api.operation(path: "/protected")
        _ = try? await api.send(first)
        #expect(first.response?.status == 401, "released at the timeout")
        while configuration.authenticator!.current == .bearer("expired") { try await Task.sleep(for: .milliseconds(10)) }
        #expect(try await api.send(api.operation(path: "/protected")).status == 200)
        #expect(configuration.authenticator!.refreshCount == 1)
    }

    @Test func fromC() async throws {
        let server = await s.privateTokenServer()
        let bin = try await CExamples.shared.directory()
        let c = try await runProcess(bin + "/challenge", [server])
        #expect(c.status == 0, "\(c.stdout)\(c.stderr)")
        #expect(try await stats(server).issued == 1)
    }
}
