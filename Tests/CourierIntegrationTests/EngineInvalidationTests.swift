import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// AFURLSessionManager's session invalidation on an engine: invalidate and let the operations in
/// flight finish, or cancel them; operations made afterwards fail with `.engineInvalidated`; a TLS
/// configuration that cannot load invalidates the engine as it is made; the observer hears of it
/// once, with the reason.
@Suite("Engine invalidation")
struct EngineInvalidationTests {
    let s = TestServers.shared

    /// What an observer was told.
    final class Reports: @unchecked Sendable {
        private let lock = NSLock()
        private var told: [EngineInvalidation] = []
        func add(_ reason: EngineInvalidation) { lock.withLock { told.append(reason) } }
        var all: [EngineInvalidation] { lock.withLock { told } }
    }

    /// An engine on the scripted server whose observer's reports `seen` collects.
    func engine(_ seen: Reports, tls: TLSConfiguration? = nil) -> Engine {
        var configuration = Engine.Configuration()
        configuration.acceptableStatus = 0..<1000
        if let tls { configuration.options.tls = tls }
        configuration.onInvalidated = { reason in seen.add(reason) }
        return Engine(host: s.scripted, configuration: configuration)
    }

    /// An engine with an operation running, held by the server until `held.release()`.
    func engineWithARunningOperation(_ body: String) async -> (Engine, Reports, ScriptedResource, HTTPOperation) {
        let seen = Reports()
        let api = engine(seen)
        let held = ScriptedResource("inv")
        await held.configure(body: body, held: true)
        let running = api.operation(path: held.path)
        api.enqueue(running)
        return (api, seen, held, running)
    }

    @Test func runningOperationsFinishAndNewOnesAreRefused() async throws {
        let (api, seen, held, running) = await engineWithARunningOperation("late")
        api.invalidate()
        api.invalidate(cancellingRunning: true)
        await held.release()
        let response = try await api.send(running)
        #expect(response.status == 200 && response.body == Array("late".utf8), "finishTasksAndInvalidate lets it finish")
        await #expect(throws: CourierError(.engineInvalidated, "the engine was invalidated")) {
            try await api.send(api.operation(path: "/small"))
        }
        await api.callbackQueueDrained()
        #expect(seen.all == [EngineInvalidation.invalidated(cancelledRunning: false)], "told once; the second call did nothing")
        #expect(api.invalidation == .invalidated(cancelledRunning: false))
    }

    @Test func cancellingRunningOperations() async throws {
        let (api, seen, held, running) = await engineWithARunningOperation("never")
        api.invalidate(cancellingRunning: true)
        do throws(CourierError) {
            _ = try await api.send(running)
            Issue.record("a cancelled operation answered")
        } catch {
            #expect(error.code == .cancelled, "\(error)")
        }
        await held.release()
        await api.callbackQueueDrained()
        #expect(seen.all == [EngineInvalidation.invalidated(cancelledRunning: true)])
    }

    @Test func aTLSConfigurationThatCannotLoad() async throws {
        let seen = Reports()
        var tls = TLSConfiguration()
        tls.caFile = s.root + "/no-such-ca.pem"
        let api = engine(seen, tls: tls)
        guard case .tlsConfigurationRejected(let error)? = api.invalidation else {
            Issue.record("not invalidated: \(String(describing: api.invalidation))")
            return
        }
        #expect(error.code == .tlsCAFile)
        do throws(CourierError) {
            _ = try await api.send(api.operation(path: "/small"))
            Issue.record("an operation of a rejected engine answered")
        } catch {
            #expect(error.code == .tlsCAFile, "operations fail with the TLS error itself")
        }
        await api.callbackQueueDrained()
        #expect(seen.all.count == 1)
        let fine = engine(Reports(), tls: s.trustTestCA)
        #expect(fine.invalidation == nil, "a configuration that loads")
    }
}

extension Engine {
    /// Waits until what was put on the engine's callback queue so far has run.
    func callbackQueueDrained() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in callbackQueue.run { continuation.resume() } }
    }
}
