import CourierFuzzing
import Testing
@testable import CourierCore

@Suite("SchedulerState")
struct SchedulerStateTests {
    typealias Scheduler = SchedulerState<String>

    /// After every event: an operation that started did so within the width (a foreground one
    /// counting the foreground running, a background one everything running) and its host's
    /// limit (`startedOn` lists the hosts and priorities of this event's starts; running work
    /// above a lowered width is allowed, a start above it is not), and no queued operation could
    /// start: for each host with queued work, its best entry's width is used up or the host is
    /// at its limit.
    static func checkInvariant(_ s: Scheduler, startedOn: [(host: Int, priority: Priority)] = [],
                               sourceLocation: SourceLocation = #_sourceLocation) {
        let foreground = s.running - s.runningBackground
        for (_, priority) in startedOn {
            let counted = priority < .normal ? s.running : foreground
            #expect(counted <= s.width, "a \(priority) start beyond the width: \(counted) > \(s.width)", sourceLocation: sourceLocation)
        }
        for (host, _) in startedOn {
            let running = s.hostState(host)?.running ?? 0
            #expect(running <= s.hostLimit(host), "host \(host) started beyond its limit", sourceLocation: sourceLocation)
        }
        for (host, queue) in s.hosts.enumerated() where queue.queuedCount > 0 {
            let startable = queue.hasQueuedForeground ? foreground < s.width : s.running < s.width
            if startable {
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
        #expect(s.finished(host: 0, priority: .normal) == "c")
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
        var finishing = Priority.normal
        while let next = s.finished(host: 0, priority: finishing) {
            order.append(next)
            finishing = next.hasPrefix("low") ? .low : next == "veryHigh" ? .veryHigh : .high
        }
        #expect(order == ["veryHigh", "high1", "high2", "low1", "low2"])
    }

    @Test func saturatedHostDoesNotBlockOthers() {
        var s = Scheduler(width: 4, defaultHostLimit: 1)
        #expect(s.enqueue("a1", host: 0, priority: .normal) == true)
        #expect(s.enqueue("a2", host: 0, priority: .veryHigh) == false)
        #expect(s.enqueue("b1", host: 1, priority: .veryLow) == true, "host 1 has room, and a2 only waits for host 0")
        Self.checkInvariant(s)
        #expect(s.finished(host: 0, priority: .normal) == "a2")
    }

    @Test func raisingWidthStartsQueuedWorkAtOnce() {
        var s = Scheduler(width: 1, defaultHostLimit: 10)
        _ = s.enqueue("a", host: 0, priority: .normal)
        _ = s.enqueue("b", host: 0, priority: .normal)
        _ = s.enqueue("c", host: 0, priority: .normal)
        #expect(s.setWidth(3) == ["b", "c"])
        #expect(s.running == 3)
        #expect(s.setWidth(1) == [], "lowering never stops running work")
        #expect(s.finished(host: 0, priority: .normal) == nil)
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
        #expect(s.finished(host: 0, priority: .normal) == nil)
    }

    /// Background work (uploads, prefetching) counts against the width only among itself: what
    /// the user waits for starts beside it, still within the width among its own class and
    /// within the host's limit, and takes the freed slots first.
    @Test func backgroundWorkNeverHoldsForegroundWork() {
        var s = Scheduler(width: 2, defaultHostLimit: 6)
        for upload in ["u1", "u2"] { #expect(s.enqueue(upload, host: 0, priority: .low) == true) }
        #expect(s.enqueue("u3", host: 0, priority: .low) == false, "the background's width is used up")
        #expect(s.enqueue("t1", host: 0, priority: .high) == true, "a thumbnail does not wait for an upload")
        #expect(s.enqueue("t2", host: 0, priority: .normal) == true)
        #expect(s.enqueue("t3", host: 0, priority: .high) == false, "the foreground's width is used up")
        Self.checkInvariant(s, startedOn: [(0, .high), (0, .normal)])
        #expect(s.finished(host: 0, priority: .low) == nil, "background work starts only below the width in all")
        #expect(s.running == 3 && s.runningBackground == 1)
        #expect(s.finished(host: 0, priority: .normal) == "t3")
        #expect(s.finished(host: 0, priority: .normal) == nil, "two running: the upload still waits")
        #expect(s.finished(host: 0, priority: .normal) == "u3")
        Self.checkInvariant(s)
        var tight = Scheduler(width: 2, defaultHostLimit: 2)
        _ = tight.enqueue("u1", host: 0, priority: .low)
        _ = tight.enqueue("u2", host: 0, priority: .low)
        #expect(tight.enqueue("t1", host: 0, priority: .high) == false, "the host's limit still counts everything")
        #expect(tight.enqueue("elsewhere", host: 1, priority: .high) == true)
        #expect(tight.finished(host: 0, priority: .low) == "t1")
        Self.checkInvariant(tight)
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
        var running: [(String, Int, Priority)] = []
        var queued: [(String, Int, Priority)] = []
        var n = 0
        for _ in 0..<400 {
            var startedOn: [(host: Int, priority: Priority)] = []
            switch rng.next() % 8 {
            case 0, 1, 2:
                let host = Int(rng.next() % 4)
                let priority = Priority(rawValue: Int(rng.next() % 5))!
                let item = "op\(n)"
                n += 1
                if s.enqueue(item, host: host, priority: priority) {
                    running.append((item, host, priority))
                    startedOn.append((host, priority))
                } else {
                    queued.append((item, host, priority))
                }
            case 3, 4:
                guard !running.isEmpty else { break }
                let index = Int(rng.next() % UInt64(running.count))
                let (_, host, priority) = running.remove(at: index)
                if let next = s.finished(host: host, priority: priority) {
                    let qi = queued.firstIndex { $0.0 == next }!
                    running.append(queued[qi])
                    startedOn.append((queued[qi].1, queued[qi].2))
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
                    running.append(queued[qi])
                    startedOn.append((queued[qi].1, queued[qi].2))
                    queued.remove(at: qi)
                }
            case 7:
                let host = Int(rng.next() % 4)
                let limit: Int? = rng.next() % 3 == 0 ? nil : 1 + Int(rng.next() % 3)
                for started in s.setHostLimit(limit, for: host) {
                    let qi = queued.firstIndex { $0.0 == started }!
                    running.append(queued[qi])
                    startedOn.append((queued[qi].1, queued[qi].2))
                    queued.remove(at: qi)
                }
            default:
                break
            }
            Self.checkInvariant(s, startedOn: startedOn)
            #expect(s.running == running.count)
            #expect(s.runningBackground == running.filter { $0.2 < .normal }.count)
            #expect(s.queuedCount == queued.count)
            for host in 0..<4 {
                let perHost = running.filter { $0.1 == host }.count
                #expect(s.hostState(host).map { $0.running } ?? 0 == perHost)
            }
        }
    }
}
