import Foundation
import Synchronization
import Testing
@testable import Courier
@testable import CourierCore

/// Retries through the Swift API against Tests/Servers/retry_server.py (a private server per
/// test: retry budgets are per origin): the schedule the server saw, what is and is not retried,
/// Retry-After, the hook, the budget.
@Suite("Retries")
struct RetryIntegrationTests {
    let s = TestServers.shared

    func engine(_ base: String) -> Engine {
        var configuration = Engine.Configuration()
        configuration.acceptableStatus = 200..<300
        return Engine(host: base, configuration: configuration)
    }

    /// What the server recorded for `key`.
    func log(_ base: String, _ key: String) async throws -> (times: [Double], methods: [String], keys: [String?]) {
        let response = try await engine(base).send(engine(base).operation(path: "/log/" + key))
        let json = try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        let times = (json["times"] as? [Double]) ?? []
        let methods = (json["methods"] as? [String]) ?? []
        let keys = ((json["keys"] as? [Any]) ?? []).map { $0 as? String }
        return (times, methods, keys)
    }

    static let quick = RetryPolicy(count: 3, intervals: [.milliseconds(150), .milliseconds(300)])

    @Test func failuresThenSuccessFollowTheIntervals() async throws {
        let base = await s.privateRetryServer()
        let api = engine(base)
        let op = api.operation(path: "/flaky/a?fail=3&mode=503")
        op.retry = Self.quick
        let response = try await api.send(op)
        #expect(response.status == 200)
        #expect(response.body == Array("ok 4".utf8))
        #expect(response.metrics.retries == 3)
        #expect(op.retryReasons == [.status(503), .status(503), .status(503)])
        let times = try await log(base, "a").times
        try #require(times.count == 4)
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        // The schedule: 150 ms, 300 ms, then 300 ms again (the last interval repeats). Never
        // sooner; later only by what a loaded machine adds (the bound catches a wrong unit, not
        // a slow scheduler).
        for (gap, interval) in zip(gaps, [0.15, 0.3, 0.3]) {
            #expect(gap >= interval - 0.005, "waited \(gap) s for an interval of \(interval) s")
            #expect(gap < interval + 5, "waited \(gap) s for an interval of \(interval) s")
        }
    }

    @Test func theLastFailureIsTheResultWhenRetriesRunOut() async throws {
        let base = await s.privateRetryServer()
        let api = engine(base)
        let op = api.operation(path: "/flaky/b?fail=10&mode=502")
        op.retry = RetryPolicy(count: 2, intervals: [.milliseconds(20)])
        await #expect(throws: CourierError.self) { _ = try await api.send(op) }
        #expect(op.response?.status == 502, "the last response, body and all")
        #expect(op.response?.body == Array("failed".utf8))
        #expect(op.retryReasons.count == 2)
        #expect(try await log(base, "b").times.count == 3)
    }

    @Test func resetsAndClosesBeforeAResponseAreRetried() async throws {
        let base = await s.privateRetryServer()
        let api = engine(base)
        for mode in ["reset", "close"] {
            let op = api.operation(path: "/flaky/\(mode)?fail=2&mode=\(mode)")
            op.retry = RetryPolicy(count: 2, intervals: [.milliseconds(20)])
            let response = try await api.send(op)
            #expect(response.body == Array("ok 3".utf8), "\(mode)")
            // A reused keep-alive connection that breaks before answering is replayed at once
            // instead (a stale connection, not the server failing): together, two more attempts.
            #expect(response.metrics.retries + response.metrics.staleRetries == 2, "\(response.metrics)")
            #expect(op.retryReasons.count == response.metrics.retries)
            #expect(response.metrics.retries >= 1)
            if case .failure(let error)? = op.retryReasons.first {
                #expect([CourierError.Code.connectionReset, .emptyReply].contains(error.code), "\(error)")
            } else {
                Issue.record("the reason is not the failure: \(op.retryReasons)")
            }
        }
    }

    @Test func aBodyCutAfterItsHeadIsNotRetriedUnlessEveryErrorIs() async throws {
        let base = await s.privateRetryServer()
        let api = engine(base)
        let op = api.operation(path: "/flaky/cut?fail=1&mode=cut")
        op.retry = RetryPolicy(count: 2, intervals: [.milliseconds(20)])
        await #expect(throws: CourierError.self) { _ = try await api.send(op) }
        #expect(try await log(base, "cut").times.count == 1, "the server may have acted on it")
        let all = api.operation(path: "/flaky/cut2?fail=1&mode=cut")
        all.retry = RetryPolicy(count: 2, intervals: [.milliseconds(20)], retriesAllErrors: true)
        #expect(try await api.send(all).body == Array("ok 2".utf8))
    }

    @Test func nonIdempotentRequestsNeedAKeyOrConsent() async throws {
        let base = await s.privateRetryServer()
        let api = engine(base)
        let post = api.operation(path: "/flaky/post?fail=1&mode=503", method: .post)
        post.body = .bytes(Array("draft".utf8))
        post.retry = RetryPolicy(count: 3, intervals: [.milliseconds(20)])
        await #expect(throws: CourierError.self) { _ = try await api.send(post) }
        #expect(try await log(base, "post").times.count == 1, "a POST is not sent twice on its own")

        let keyed = api.operation(path: "/flaky/keyed?fail=1&mode=503", method: .post)
        keyed.body = .bytes(Array("draft".utf8))
        keyed.headers.add(name: "Idempotency-Key", value: "7f3c")
        keyed.retry = RetryPolicy(count: 3, intervals: [.milliseconds(20)])
        #expect(try await api.send(keyed).status == 200)
        let seen = try await log(base, "keyed")
        #expect(seen.methods == ["POST", "POST"])
        #expect(seen.keys == ["7f3c", "7f3c"], "the same key both times")

        let consent = api.operation(path: "/flaky/consent?fail=1&mode=503", method: .patch)
        consent.retry = RetryPolicy(count: 1, intervals: [.milliseconds(20)], retriesNonIdempotent: true)
        #expect(try await api.send(consent).status == 200)
    }

    @Test func retryAfterIsHonouredWithinItsLimit() async throws {
        let base = await s.privateRetryServer()
        let api = engine(base)
        let op = api.operation(path: "/flaky/ra?fail=1&mode=429&retry_after=1")
        op.retry = RetryPolicy(count: 1, intervals: [.milliseconds(20)])
        #expect(try await api.send(op).status == 200)
        let times = try await log(base, "ra").times
        try #require(times.count == 2)
        #expect(times[1] - times[0] >= 0.99, "Retry-After: 1 waits a second, not the 20 ms interval")

        let tooLong = api.operation(path: "/flaky/long?fail=1&mode=503&retry_after=120")
        tooLong.retry = RetryPolicy(count: 3, intervals: [.milliseconds(20)])
        await #expect(throws: CourierError.self) { _ = try await api.send(tooLong) }
        #expect(tooLong.response?.status == 503, "a wait beyond the limit is not made: the response is the answer")
        #expect(try await log(base, "long").times.count == 1)
    }

    @Test func connectFailuresAreRetriedAndReported() async throws {
        // A port nothing listens on: every attempt is refused.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        let port = Int(UInt16(bigEndian: address.sin_port))
        close(listener)
        let api = engine("http://127.0.0.1:\(port)")
        let op = api.operation(path: "/x")
        op.retry = RetryPolicy(count: 2, intervals: [.milliseconds(30)])
        let started = ContinuousClock.now
        await #expect(throws: CourierError.self) { _ = try await api.send(op) }
        #expect(ContinuousClock.now - started >= .milliseconds(55))
        #expect(op.error?.code == .connectFailed)
        #expect(op.retryReasons.count == 2)
        #expect(op.retryReasons.allSatisfy { if case .failure(let e) = $0 { e.code == .connectFailed } else { false } })
    }

    @Test func theHookSeesEachRetryAndMayStop() async throws {
        let base = await s.privateRetryServer()
        let api = engine(base)
        let op = api.operation(path: "/flaky/hook?fail=5&mode=503")
        op.retry = RetryPolicy(count: 5, intervals: [.milliseconds(20)])
        let seen = Mutex<[Int]>([])
        op.onRetry { reason, retry in
            seen.withLock { $0.append(retry) }
            return reason == .status(503) && retry < 2
        }
        await #expect(throws: CourierError.self) { _ = try await api.send(op) }
        #expect(seen.withLock { $0 } == [1, 2])
        #expect(op.response?.status == 503)
        #expect(op.retryReasons == [.status(503)], "one retry made, the second refused")
        #expect(try await log(base, "hook").times.count == 2)
    }

    @Test func aWaitingRetryCancels() async throws {
        let base = await s.privateRetryServer()
        let api = engine(base)
        let op = api.operation(path: "/flaky/wait?fail=1&mode=503")
        op.retry = RetryPolicy(count: 1, intervals: [.seconds(30)])
        let task = Task { try await api.send(op) }
        // Once the first attempt failed, other requests to the same origin run meanwhile (the
        // machine tests check that the wait holds no slot).
        while (try? await log(base, "wait").times.count) != 1 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(try await api.send(api.operation(path: "/ok")).status == 200)
        task.cancel()
        let result = await task.result
        guard case .failure(let error as CourierError) = result else {
            Issue.record("a cancelled wait ended with \(result)")
            return
        }
        #expect(error.code == .cancelled)
        #expect(try await log(base, "wait").times.count == 1)
    }

    @Test func aFailingOriginIsNotHammeredByEveryCaller() async throws {
        let base = await s.privateRetryServer()
        let api = engine(base)
        let callers = 30
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    let op = api.operation(path: "/flaky/down?fail=100000&mode=503")
                    op.retry = RetryPolicy(count: 3, intervals: [.milliseconds(10)])
                    _ = try? await api.send(op)
                }
            }
        }
        let requests = try await log(base, "down").times.count
        // Without a budget: 30 × 4 = 120 requests. With it: the 30 first attempts and the nine
        // retries a full budget allows.
        #expect(requests == callers + 9, "\(requests) requests")
    }
}

/// The same through the C ABI (Tests/CPrograms/retry.c) and Python (test_retry.py).
@Suite("Retries in C and Python")
struct RetryBindingTests {
    let s = TestServers.shared

    @Test func cRetries() async throws {
        let bin = try await CExamples.shared.directory()
        let run = try await runProcess(bin + "/retry", [await s.privateRetryServer(), await s.privateRetryServer()])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    }
}

/// curl's --retry flags on the CLI.
@Suite("Retries in the CLI")
struct RetryCLITests {
    let s = TestServers.shared

    func courier(_ arguments: [String]) async throws -> ProcessResult {
        try await runProcess(CLITests.binary, arguments)
    }

    @Test func retryWithAFixedDelayAndCurlsWarnings() async throws {
        let base = await s.privateRetryServer()
        let run = try await courier(["--retry", "3", "--retry-delay", "0.05", base + "/flaky/cli1?fail=2&mode=503"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "ok 3")
        #expect(run.stderr.contains("Warning: Problem : HTTP error. Will retry in 1 seconds. 3 retries left."), "\(run.stderr)")
        #expect(run.stderr.contains("2 retries left."))
        // 500 is among curl's transient statuses; -s keeps quiet.
        let quiet = try await courier(["-s", "--retry", "1", "--retry-delay", "0", base + "/flaky/cli2?fail=1&mode=500"])
        #expect(quiet.status == 0 && quiet.stdout == "ok 2" && quiet.stderr.isEmpty, "\(quiet.stderr)")
        // Out of retries: the last response, and -f's exit code.
        let out = try await courier(["-sf", "--retry", "1", "--retry-delay", "0", base + "/flaky/cli3?fail=5&mode=503"])
        #expect(out.status == 22)
        // curl retries POST too.
        let post = try await courier(["-s", "--retry", "1", "--retry-delay", "0", "-d", "x=1", base + "/flaky/cli4?fail=1&mode=503"])
        #expect(post.stdout == "ok 2", "\(post.stderr)")
    }

    @Test func refusedConnectionsOnlyWithConnrefused() async throws {
        let plain = try await courier(["-s", "--retry", "2", "--retry-delay", "0", "http://127.0.0.1:1/"])
        #expect(plain.status == 7)
        let refused = try await courier(["--retry", "2", "--retry-delay", "0", "--retry-connrefused", "http://127.0.0.1:1/"])
        #expect(refused.status == 7)
        #expect(refused.stderr.contains("Warning: Problem : connection refused. Will retry in 0 seconds. 2 retries left."), "\(refused.stderr)")
        #expect(refused.stderr.contains("1 retries left."))
    }

    @Test func allErrorsAndMaxTime() async throws {
        let base = await s.privateRetryServer()
        let cut = try await courier(["-s", "--retry", "2", "--retry-delay", "0", base + "/flaky/cli5?fail=1&mode=cut"])
        #expect(cut.status == 56, "a body cut by a reset is not transient: \(cut.stderr)")
        // --retry-all-errors: the output file starts over (curl does the same); on stdout the
        // bytes already written cannot be taken back, so that transfer is not retried (curl
        // would write them twice).
        let file = NSTemporaryDirectory() + "courier-retry-\(UUID().uuidString.prefix(8))"
        defer { unlink(file) }
        let all = try await courier(["-s", "--retry", "2", "--retry-delay", "0", "--retry-all-errors", "-o", file,
                                     base + "/flaky/cli6?fail=1&mode=cut"])
        #expect(all.status == 0, "\(all.stderr)")
        #expect((try? String(contentsOfFile: file, encoding: .utf8)) == "ok 2")
        let stdout = try await courier(["-s", "--retry", "2", "--retry-delay", "0", "--retry-all-errors", base + "/flaky/cli8?fail=1&mode=cut"])
        #expect(stdout.status == 56 && stdout.stdout == "0123456789")
        // --retry-max-time: a 10 s delay would start past the 1 s allowed, so no retry is made.
        let bounded = try await courier(["-s", "--retry", "3", "--retry-delay", "10", "--retry-max-time", "1", base + "/flaky/cli7?fail=1&mode=503"])
        #expect(bounded.status == 0 && bounded.stdout == "failed")
        let usage = try await courier(["--retry", "x", base + "/ok"])
        #expect(usage.status == 2)
    }
}
