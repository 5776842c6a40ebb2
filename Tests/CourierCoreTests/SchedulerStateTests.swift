import CourierFuzzing
import Testing
@testable import CourierCore

@Suite("SchedulerState")
struct SchedulerStateTests {
    typealias Scheduler = SchedulerState<String>

    /// After every event: an operation that started did so within the width and its host's limit
    /// (`startedOn` lists the hosts that had a start in this event; running work above a lowered
    /// width is allowed, a start above it is not), and no queued operation could start: either
    /// the width is used up or every host with queued work is at its limit.
    static func checkInvariant(_ s: Scheduler, startedOn: [Int] = [], sourceLocation: SourceLocation = #_sourceLocation) {
        if !startedOn.isEmpty {
            #expect(s.running <= s.width, "started beyond the width: \(s.running) > \(s.width)", sourceLocation: sourceLocation)
        }
        for host in startedOn {
            let running = s.hostState(host)?.running ?? 0
            #expect(running <= s.hostLimit(host), "host \(host) started beyond its limit", sourceLocation: sourceLocation)
        }
        if s.running < s.width {
            for (host, queue) in s.hosts.enumerated() where queue.queuedCount > 0 {
                #expect(queue.running >= s.hostLimit(host), "host \(host) has room and queued work", sourceLocation: sourceLocation)
            }
        }
        #expect(s.hosts.reduce(0) { $0 + $1.queuedCount } == s.queuedCount, sourceLocation: sourceLocation)
    }

    @Test func widthLimitsRunningOperations() {
        var s = Scheduler(width: 2, defaultHostLimit: 10)
        #expect(s.enqueue("a", host: 0, priority: .normal) == true)
        #expect(s.enqueue("b", host: 1, priority: .normal) == true)
        #expect(s.enqueue("c", host: 2, priority: .normal) == false)
        #expect(s.running == 2 && s.queuedCount == 1)
        #expect(s.finished(host: 0) == "c")
        Self.checkInvariant(s)
    }

    @Test func priorityThenFIFO() {
        var s = Scheduler(width: 1, defaultHostLimit: 10)
        _ = s.enqueue("running", host: 0, priority: .normal)
        _ = s.enqueue("low1", host: 0, priority: .low)
        _ = s.enqueue("high1", host: 0, priority: .high)
        _ = s.enqueue("low2", host: 0, priority: .low)
        _ = s.enqueue("high2", host: 0, priority: .high)
        _ = s.enqueue("veryHigh", host: 0, priority: .veryHigh)
        var order: [String] = []
        while let next = s.finished(host: 0) { order.append(next) }
        #expect(order == ["veryHigh", "high1", "high2", "low1", "low2"])
    }

    @Test func saturatedHostDoesNotBlockOthers() {
        var s = Scheduler(width: 4, defaultHostLimit: 1)
        #expect(s.enqueue("a1", host: 0, priority: .normal) == true)
        #expect(s.enqueue("a2", host: 0, priority: .veryHigh) == false)
        #expect(s.enqueue("b1", host: 1, priority: .veryLow) == true, "host 1 has room, and a2 only waits for host 0")
        Self.checkInvariant(s)
        #expect(s.finished(host: 0) == "a2")
    }

    @Test func raisingWidthStartsQueuedWorkAtOnce() {
        var s = Scheduler(width: 1, defaultHostLimit: 10)
        _ = s.enqueue("a", host: 0, priority: .normal)
        _ = s.enqueue("b", host: 0, priority: .normal)
        _ = s.enqueue("c", host: 0, priority: .normal)
        #expect(s.setWidth(3) == ["b", "c"])
        #expect(s.running == 3)
        #expect(s.setWidth(1) == [], "lowering never stops running work")
        #expect(s.finished(host: 0) == nil)
        #expect(s.running == 2)
    }

    @Test func removingQueuedWork() {
        var s = Scheduler(width: 1, defaultHostLimit: 10)
        _ = s.enqueue("a", host: 0, priority: .normal)
        _ = s.enqueue("b", host: 0, priority: .normal)
        let first = s.remove("b", host: 0, priority: .normal)
        #expect(first)
        let second = s.remove("b", host: 0, priority: .normal)
        #expect(!second)
        #expect(s.queuedCount == 0)
        #expect(s.finished(host: 0) == nil)
    }

    @Test func perHostLimitOverride() {
        var s = Scheduler(width: 10, defaultHostLimit: 1)
        _ = s.enqueue("a1", host: 0, priority: .normal)
        #expect(s.enqueue("a2", host: 0, priority: .normal) == false)
        #expect(s.setHostLimit(2, for: 0) == ["a2"])
        Self.checkInvariant(s)
    }

    @Test func zeroWidthHoldsEverything() {
        // MKNetworkKit's wifi-only mode on cellular: the queue keeps work until the width returns.
        var s = Scheduler(width: 0, defaultHostLimit: 6)
        #expect(s.enqueue("a", host: 0, priority: .normal) == false)
        #expect(s.setWidth(2) == ["a"])
    }

    @Test(arguments: 0..<40)
    func randomSequencesKeepInvariant(seed: Int) {
        var rng = SplitRandom(seed: UInt64(seed) &* 7919)
        var s = Scheduler(width: Int(rng.next() % 5), defaultHostLimit: 1 + Int(rng.next() % 3))
        var running: [(String, Int)] = []
        var queued: [(String, Int, Priority)] = []
        var n = 0
        for _ in 0..<400 {
            var startedOn: [Int] = []
            switch rng.next() % 8 {
            case 0, 1, 2:
                let host = Int(rng.next() % 4)
                let priority = Priority(rawValue: Int(rng.next() % 5))!
                let item = "op\(n)"
                n += 1
                if s.enqueue(item, host: host, priority: priority) {
                    running.append((item, host))
                    startedOn.append(host)
                } else {
                    queued.append((item, host, priority))
                }
            case 3, 4:
                guard !running.isEmpty else { break }
                let index = Int(rng.next() % UInt64(running.count))
                let (_, host) = running.remove(at: index)
                if let next = s.finished(host: host) {
                    let qi = queued.firstIndex { $0.0 == next }!
                    running.append((next, queued[qi].1))
                    startedOn.append(queued[qi].1)
                    queued.remove(at: qi)
                }
            case 5:
                guard !queued.isEmpty else { break }
                let index = Int(rng.next() % UInt64(queued.count))
                let (item, host, priority) = queued.remove(at: index)
                let removed = s.remove(item, host: host, priority: priority)
                #expect(removed)
            case 6:
                for started in s.setWidth(Int(rng.next() % 6)) {
                    let qi = queued.firstIndex { $0.0 == started }!
                    running.append((started, queued[qi].1))
                    startedOn.append(queued[qi].1)
                    queued.remove(at: qi)
                }
            case 7:
                let host = Int(rng.next() % 4)
                let limit: Int? = rng.next() % 3 == 0 ? nil : 1 + Int(rng.next() % 3)
                for started in s.setHostLimit(limit, for: host) {
                    let qi = queued.firstIndex { $0.0 == started }!
                    running.append((started, queued[qi].1))
                    startedOn.append(queued[qi].1)
                    queued.remove(at: qi)
                }
            default:
                break
            }
            Self.checkInvariant(s, startedOn: startedOn)
            #expect(s.running == running.count)
            #expect(s.queuedCount == queued.count)
            for host in 0..<4 {
                let perHost = running.filter { $0.1 == host }.count
                #expect(s.hostState(host).map { $0.running } ?? 0 == perHost)
            }
        }
    }
}
