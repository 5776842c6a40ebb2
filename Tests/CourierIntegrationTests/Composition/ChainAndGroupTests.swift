import Foundation
import Synchronization
import Testing
@testable import Courier
@testable import CourierCore

/// Chain and group queues through the Swift API against the scripted server (/echo, /status,
/// /slow).
@Suite("Chains and groups")
struct ChainAndGroupTests {
    let s = TestServers.shared

    func engine() -> Engine {
        var configuration = Engine.Configuration()
        configuration.acceptableStatus = 200..<300
        return Engine(host: s.scripted, configuration: configuration)
    }

    func echoedPath(_ response: Response) throws -> String {
        let json = try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        return try #require(json["query"] as? [String: String])["step"] ?? ""
    }

    @Test func stepsRunInOrderAndTheNextIsBuiltFromThePrevious() async throws {
        let api = engine()
        let order = Mutex<[String]>([])
        let chain = OperationChain()
            .add(api.operation(path: "/echo", params: ["step": "login"]))
            .add { previous in
                // The token comes from the previous body.
                let token = String(decoding: previous.body.prefix(8), as: UTF8.self).filter(\.isLetter)
                return api.operation(path: "/echo", params: ["step": "fetch-" + token])
            }
            .add(api.operation(path: "/echo", params: ["step": "last"]))
            .onNext { index, previous, next in
                order.withLock { $0.append("after \(index): \(previous.status)") }
                next.headers.add(name: "X-Step", value: "\(index + 1)")
                return next
            }
        let outcome = await chain.run()
        #expect(outcome.succeeded)
        #expect(!outcome.stoppedEarly)
        #expect(outcome.results.count == 3)
        let paths = try outcome.results.map { try echoedPath($0.get()) }
        #expect(paths == ["login", "fetch-method", "last"])
        #expect(order.withLock { $0 } == ["after 0: 200", "after 1: 200"])
        let sent = try #require(JSONSerialization.jsonObject(with: Data(outcome.results[2].get().body)) as? [String: Any])
        let headers = (sent["headers"] as? [[String]]) ?? []
        #expect(headers.contains(["X-Step", "2"]), "onNext altered the next request")
    }

    @Test func aFailedStepStopsTheChainWithEveryResultSoFar() async throws {
        let api = engine()
        let third = api.operation(path: "/echo", params: ["step": "never"])
        let outcome = await OperationChain([api.operation(path: "/status", params: ["code": "200"]),
                                            api.operation(path: "/status", params: ["code": "404"]), third]).run()
        #expect(outcome.failedStep == 1)
        #expect(outcome.results.count == 2)
        #expect((try? outcome.results[0].get())?.status == 200)
        guard case .failure(let error) = outcome.results[1] else {
            Issue.record("the 404 step did not fail")
            return
        }
        #expect(error.code == .httpStatus)
        #expect(third.state == .ready, "the step after the failure never started")
    }

    @Test func onNextOrABuilderMayStopTheChain() async throws {
        let api = engine()
        let stopped = await OperationChain([api.operation(path: "/status"), api.operation(path: "/status")])
            .onNext { _, _, _ in nil }
            .run()
        #expect(stopped.succeeded && stopped.stoppedEarly && stopped.results.count == 1)
        let built = await OperationChain([api.operation(path: "/status")]).add { _ in nil }.run()
        #expect(built.succeeded && built.stoppedEarly && built.results.count == 1)
        let thrown = await OperationChain([api.operation(path: "/status")])
            .add { _ throws(CourierError) in throw CourierError(.invalidArgument, "no token in the answer") }
            .run()
        #expect(thrown.failedStep == 1)
    }

    @Test func cancellingAChainCancelsItsStepAndStartsNoOther() async throws {
        let api = engine()
        let last = api.operation(path: "/status")
        // A step far longer than the cancel's way here: on a loaded two-core machine the
        // cooperative pool can stall this task for seconds, and a 5 s step once finished before
        // the cancel arrived (a cancel that is lost still fails the test, a minute later).
        let first = api.operation(path: "/slow", params: ["ms": "60000"])
        let chain = OperationChain([first, last])
        let task = Task { await chain.run() }
        // Cancelled once its first step is on its way (the state, not a guess at the time).
        while first.state != .enqueued { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        let outcome = await task.value
        #expect(outcome.failedStep == 0)
        if case .failure(let error) = outcome.results.first { #expect(error.code == .cancelled) }
        #expect(last.state == .ready)
    }

    @Test func aGroupSettlesEveryMemberInOrder() async throws {
        let api = engine()
        let group = OperationGroup((0..<6).map { i in
            api.operation(path: "/status", params: ["code": i == 3 ? "500" : "200", "body": "\(i)"])
        })
        let outcome = await group.run()
        #expect(outcome.results.count == 6)
        #expect(outcome.firstFailure == 3)
        #expect(!outcome.succeeded)
        #expect(outcome.responses.map { String(decoding: $0.body, as: UTF8.self) } == ["0", "1", "2", "4", "5"])
        let empty = await OperationGroup().run()
        #expect(empty.succeeded && empty.results.isEmpty)
    }

    @Test func failFastCancelsTheRest() async throws {
        let api = engine()
        // The failing member first, so it is never queued behind the slow ones (the shared queue's
        // per-host limit is shared with every other test); had the slow ones run to their end,
        // they would be successes.
        let slow = (0..<3).map { _ in api.operation(path: "/slow", params: ["ms": "5000"]) }
        let group = OperationGroup([api.operation(path: "/status", params: ["code": "503"])] + slow, mode: .failFast)
        let outcome = await group.run()
        #expect(outcome.firstFailure == 0)
        for result in outcome.results.dropFirst() {
            guard case .failure(let error) = result else {
                Issue.record("a slow member was not cancelled")
                continue
            }
            #expect(error.code == .cancelled)
        }
    }

    @Test func membersShareTheQueueWidthWithEveryoneElse() async throws {
        let api = engine()
        // A group far wider than the queue: it runs as the width allows and settles whole.
        let group = OperationGroup((0..<40).map { _ in api.operation(path: "/slow", params: ["ms": "20"]) })
        let outcome = await group.run()
        #expect(outcome.succeeded && outcome.results.count == 40)
    }

    @Test func cancellingAGroupCancelsItsMembers() async throws {
        let api = engine()
        let group = OperationGroup((0..<3).map { _ in api.operation(path: "/slow", params: ["ms": "5000"]) })
        let done = Mutex<OperationGroup.Outcome?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group.start { outcome in
                done.withLock { $0 = outcome }
                continuation.resume()
            }
            group.cancel()
        }
        let outcome = try #require(done.withLock { $0 })
        #expect(outcome.results.allSatisfy { if case .failure(let e) = $0 { e.code == .cancelled } else { false } })
    }
}

/// Groups and chains through the C ABI (Tests/CPrograms/group.c, chain.c); Python's are in
/// test_groups.py.
@Suite("Groups and chains in C")
struct GroupBindingTests {
    @Test func cChains() async throws {
        let bin = try await CExamples.shared.directory()
        let run = try await runProcess(bin + "/chain", [await TestServers.shared.privateScripted()])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    }

    @Test func cGroups() async throws {
        let bin = try await CExamples.shared.directory()
        let run = try await runProcess(bin + "/group", [await TestServers.shared.privateScripted()])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    }
}
