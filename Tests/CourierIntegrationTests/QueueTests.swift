import CourierHeader
import Foundation
import Synchronization
import Testing
@testable import Courier
@testable import CourierCore

/// The shared queue and per-host behaviour. These tests change the limit of the host name "127.1"
/// (127.0.0.1 in its short form, which no other test uses), so they run one at a time.
@Suite("Shared queue", .serialized)
struct QueueTests {
    let s = TestServers.shared
    var limitedHost: String { "http://127.1:\(s.scriptedPort)" }

    func withLocalhostLimit<T>(_ limit: Int, _ body: () async throws -> T) async rethrows -> T {
        SharedQueue.setLimit(limit, forHost: "127.1")
        defer { SharedQueue.setLimit(nil, forHost: "127.1") }
        return try await body()
    }

    /// The width bounds the whole process, every engine included, and is reached: ten slow
    /// requests from two engines with width 2 (Tests/CPrograms/scenarios.c `width`). In a process
    /// of its own: narrowing the width here would queue every other test's requests behind it
    /// (a held response elsewhere could then starve this test, and this test the others).
    @Test func widthBoundsConcurrencyAcrossTheProcess() async throws {
        let group = "width-\(UUID().uuidString.prefix(8))"
        let bin = try await CExamples.shared.directory()
        let run = try await runProcess(bin + "/scenarios", ["width", s.scripted + "/slow?ms=150&group=\(group)"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let stats = await scriptedStats(group)
        #expect(stats.peak == 2, "server saw \(stats.peak) at once with width 2")
        #expect(stats.seen == 10)
    }

    /// The design promise of the C ABI: C callers and Swift callers in one process share one
    /// queue. Five operations from each side start together for a host limited to 2 (a host name
    /// no other suite uses, so the process-wide width stays as it is); were the C side on a queue
    /// of its own, the server would see up to four at once. The width set from C is the one Swift
    /// reads (widened by one and back, which holds nobody up).
    @Test func oneQueueAcrossSwiftAndC() async throws {
        let previous = SharedQueue.width
        #expect(courier_queue_set_width(Int32(previous + 1)) == COURIER_OK)
        #expect(SharedQueue.width == previous + 1, "the C call sets the Swift-visible width")
        #expect(courier_queue_width() == Int32(previous + 1))
        SharedQueue.width = previous
        #expect(courier_queue_width() == Int32(previous), "the Swift setter is the one C reads")
        try await withLocalhostLimit(2) { try await self.oneQueueAcrossSwiftAndCBody() }
    }

    private func oneQueueAcrossSwiftAndCBody() async throws {
        let group = "mixed-\(UUID().uuidString.prefix(8))"
        final class Finished: @unchecked Sendable {
            let lock = NSLock()
            var statuses: [Int32] = []
            let all = DispatchSemaphore(value: 0)
            func add(_ status: Int32) {
                lock.lock()
                statuses.append(status)
                let count = statuses.count
                lock.unlock()
                if count == 5 { all.signal() }
            }
        }
        let cSide = Finished()
        var cEngine: OpaquePointer?
        #expect(courier_engine_create(limitedHost, &cEngine) == COURIER_OK)
        let user = Unmanaged.passRetained(cSide).toOpaque()
        for _ in 0..<5 {
            var request: OpaquePointer?
            #expect(courier_request_create(cEngine, "GET", "/slow?ms=150&group=\(group)", &request) == COURIER_OK)
            #expect(courier_request_send(request, { request, response, code, user in
                Unmanaged<Finished>.fromOpaque(user!).takeUnretainedValue().add(code == COURIER_OK ? courier_response_status(response) : -code)
                courier_response_free(response)
                courier_request_free(request)
            }, user) == COURIER_OK)
        }
        let engine = Engine(host: limitedHost)
        let swiftStatuses = await withTaskGroup(of: Int.self) { tasks in
            for _ in 0..<5 {
                tasks.addTask { (try? await engine.send(engine.operation(path: "/slow", params: ["ms": "150", "group": group])))?.status ?? -1 }
            }
            var all: [Int] = []
            for await status in tasks { all.append(status) }
            return all
        }
        let cDone = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: cSide.all.wait(timeout: .now() + 30) == .success) }
        }
        Unmanaged<Finished>.fromOpaque(user).release()
        courier_engine_destroy(cEngine)
        let statuses = cSide.lock.withLock { cSide.statuses }
        #expect(cDone)
        #expect(swiftStatuses == [200, 200, 200, 200, 200])
        #expect(statuses == [200, 200, 200, 200, 200])
        let stats = await scriptedStats(group)
        #expect(stats.peak == 2, "server saw \(stats.peak) at once across Swift and C with a host limit of 2")
        #expect(stats.seen == 10)
    }

    @Test func perHostLimitAndPriorities() async {
        await withLocalhostLimit(1) {
            let order = Mutex<[String]>([])
            // Occupy the one slot, then queue low before high: high must run first.
            let blocker = Transfer(url: try! CourierURL(parsing: limitedHost + "/slow?ms=300"))
            let low = Transfer(url: try! CourierURL(parsing: limitedHost + "/echo?p=low"))
            low.options.priority = .low
            let high = Transfer(url: try! CourierURL(parsing: limitedHost + "/echo?p=high"))
            high.options.priority = .veryHigh
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let remaining = Mutex(3)
                for (name, t) in [("blocker", blocker), ("low", low), ("high", high)] {
                    t.delegate = CompletionWaiter {
                        order.withLock { $0.append(name) }
                        if remaining.withLock({ $0 -= 1; return $0 }) == 0 { done.resume() }
                    }
                    Runtime.shared.submit(t)
                }
            }
            #expect(order.withLock { $0 } == ["blocker", "high", "low"])
            #expect(high.metrics.queueWait.rawValue > 100_000_000, "high waited behind the blocker")
        }
    }

    @Test func queueWaitDoesNotCountAgainstFirstByteOrTotal() async {
        await withLocalhostLimit(1) {
            // Submitted first, so it takes the host's only slot; the second waits behind it.
            let blocker = StartedFetch(limitedHost + "/slow?ms=700")
            let (waiting, _) = await fetch(limitedHost + "/echo?queued=1") {
                $0.timeouts.firstByte = .milliseconds(400)
                $0.timeouts.total = .milliseconds(500)
            }
            #expect(waiting.error == nil, "\(String(describing: waiting.error))")
            #expect(waiting.metrics.queueWait.rawValue > 400_000_000)
            _ = await blocker.finished()
        }
    }

    @Test func queueTimeout() async {
        await withLocalhostLimit(1) {
            let blocker = StartedFetch(limitedHost + "/slow?ms=3000")
            let (waiting, elapsed) = await fetch(limitedHost + "/echo") { $0.timeouts.queue = .milliseconds(200) }
            #expect(waiting.error?.code == .queueTimeout)
            #expect(elapsed < 2.5, "it left the queue at its deadline, not when the slot freed")
            _ = await blocker.finished()
        }
    }

    @Test func cancellingQueuedAndRunningOperations() async {
        await withLocalhostLimit(1) {
            let group = "cancel-\(UUID().uuidString.prefix(8))"
            // Silent far longer than the test takes, however loaded the machine.
            let running = StartedFetch(limitedHost + "/silence?s=60&group=\(group)")
            let queued = StartedFetch(limitedHost + "/echo?cancel=queued")
            // The first holds the host's slot and its request reached the server; the second waits.
            #expect(await waitForScriptedServer(group: group, seen: 1))
            let queuedState = queued.transfer
            #expect(await onLoop { queuedState.machine.state } == .queued)
            let runningState = running.transfer
            #expect(await onLoop { runningState.machine.state } == .running)
            Runtime.shared.cancel(queued.transfer)
            #expect(await queued.finished().error?.code == .cancelled)
            let cancelledAt = monotonicNanos()
            Runtime.shared.cancel(running.transfer)
            let cancelled = await running.finished()
            #expect(cancelled.error?.code == .cancelled)
            let afterCancel = Double(cancelled.metrics.completedAt &- cancelledAt) / 1e9
            #expect(afterCancel < 2, "cancellation is prompt: it ended \(afterCancel) s after the cancel")
            // The slot is free at once: the next request runs.
            let (next, _) = await fetch(limitedHost + "/echo?after=cancel")
            #expect(next.error == nil)
        }
    }

    /// Once `cancel` returns the observer never runs again: cancelling from another thread waits
    /// for a notification in progress (what lets C and Python free what their observer uses).
    @Test func cancellingAnObserverWaitsForANotificationInProgress() async {
        let state = Mutex<(inside: Bool, finished: Bool, callsAfterCancel: Int, cancelled: Bool)>((false, false, 0, false))
        let observation = SharedQueue.observeActivity { _ in
            let first = state.withLock { value -> Bool in
                if value.cancelled { value.callsAfterCancel += 1 }
                defer { value.inside = true }
                return !value.inside
            }
            guard first else { return }
            usleep(100_000)  // a slow observer, in the middle of a round when cancel comes
            state.withLock { $0.finished = true }
        }
        let request = StartedFetch(s.scripted + "/slow?ms=50")
        // Wait (off the cooperative pool) until the observer is inside its first call.
        let cancelledWhileInside = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                for _ in 0..<1000 where !state.withLock({ $0.inside }) { usleep(1000) }
                let wasInside = state.withLock { $0.inside && !$0.finished }
                observation.cancel()
                let finished = state.withLock { value -> Bool in
                    value.cancelled = true
                    return value.finished
                }
                continuation.resume(returning: (wasInside, finished))
            }
        }
        #expect(cancelledWhileInside.0, "cancel came while the observer ran")
        #expect(cancelledWhileInside.1, "cancel returned only once the observer's round had ended")
        _ = await request.finished()
        _ = await StartedFetch(s.scripted + "/echo").finished()
        #expect(state.withLock { $0.callsAfterCancel } == 0, "called after cancel returned")
    }

    @Test func activityIsObservable() async {
        let sawRunning = Mutex<(seen: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
        let observation = SharedQueue.observeActivity { activity in
            guard activity.running > 0 else { return }
            let waiter = sawRunning.withLock { state -> CheckedContinuation<Void, Never>? in
                state.seen = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
        let slow = StartedFetch(s.scripted + "/slow?ms=200")
        // The observer is told while the request runs (coalesced per loop turn, but told).
        await withCheckedContinuation { continuation in
            let already = sawRunning.withLock { state -> Bool in
                if !state.seen { state.waiter = continuation }
                return state.seen
            }
            if already { continuation.resume() }
        }
        observation.cancel()
        #expect(await slow.finished().error == nil)
        var iterator = SharedQueue.activityUpdates().makeAsyncIterator()
        let first = await iterator.next()
        #expect(first != nil, "the stream delivers the current state at once")
    }
}
