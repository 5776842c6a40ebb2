import CourierFuzzing
import Testing
@testable import CourierCore

@Suite("ConnectionPoolState")
struct ConnectionPoolStateTests {
    typealias Pool = ConnectionPoolState<Int, Int, String>

    /// The invariants stated on the type, checked after every event.
    static func checkInvariants(_ pool: Pool, sourceLocation: SourceLocation = #_sourceLocation) {
        for (key, entry) in pool.entries.enumerated() {
            let waitersHaveAttempts = entry.ownAttempts && entry.waiting.count <= entry.connecting
            #expect(entry.idle.isEmpty || entry.waiting.isEmpty || waitersHaveAttempts, "key \(key): idle and waiting together",
                    sourceLocation: sourceLocation)
            #expect(entry.total <= entry.limit, "key \(key): over limit", sourceLocation: sourceLocation)
            let room = entry.limit - entry.idle.count - entry.leased
            #expect(entry.connecting >= min(entry.waiting.count, room), "key \(key): a waiter has no attempt", sourceLocation: sourceLocation)
        }
    }

    @Test func firstRequestConnectsThenReusesIdle() {
        var pool = Pool(defaultLimit: 2)
        #expect(pool.acquire("a", key: 0) == .wait(connect: 1))
        #expect(pool.connected(1, key: 0) == .serve("a"))
        #expect(pool.release(1, key: 0, reusable: true) == .park)
        #expect(pool.acquire("b", key: 0) == .use(1))
        Self.checkInvariants(pool)
    }

    @Test func limitMakesRequestsWaitForARelease() {
        var pool = Pool(defaultLimit: 1)
        #expect(pool.acquire("a", key: 0) == .wait(connect: 1))
        #expect(pool.acquire("b", key: 0) == .wait(connect: 0))
        #expect(pool.connected(1, key: 0) == .serve("a"))
        #expect(pool.release(1, key: 0, reusable: true) == .serve("b"))
        #expect(pool.release(1, key: 0, reusable: false) == .close(connect: 0))
        Self.checkInvariants(pool)
        #expect(pool.entry(for: 0)!.total == 0)
    }

    @Test func nonReusableReleaseOpensAReplacementForWaiters() {
        var pool = Pool(defaultLimit: 1)
        _ = pool.acquire("a", key: 0)
        _ = pool.acquire("b", key: 0)
        _ = pool.connected(1, key: 0)
        #expect(pool.release(1, key: 0, reusable: false) == .close(connect: 1))
        #expect(pool.connected(2, key: 0) == .serve("b"))
        Self.checkInvariants(pool)
    }

    @Test func connectFailureFailsTheLongestWaiter() {
        var pool = Pool(defaultLimit: 2)
        _ = pool.acquire("a", key: 0)
        _ = pool.acquire("b", key: 0)
        let result = pool.connectFailed(key: 0)
        #expect(result.failed == "a")
        #expect(result.connect == 0, "b still has its own attempt")
        Self.checkInvariants(pool)
        let second = pool.connectFailed(key: 0)
        #expect(second.failed == "b")
        Self.checkInvariants(pool)
    }

    @Test func cancelledWaiterLeavesItsAttemptToServeOthers() {
        var pool = Pool(defaultLimit: 4)
        _ = pool.acquire("a", key: 0)
        let removed = pool.cancelWaiting("a", key: 0)
        #expect(removed)
        #expect(pool.connected(1, key: 0) == .park)
        #expect(pool.acquire("b", key: 0) == .use(1))
        Self.checkInvariants(pool)
    }

    @Test func replayEvictsIdleConnectionsAndConnectsFresh() {
        var pool = Pool(defaultLimit: 3)
        _ = pool.acquire("a", key: 0)
        _ = pool.acquire("b", key: 0)
        _ = pool.connected(1, key: 0)
        _ = pool.connected(2, key: 0)
        _ = pool.release(1, key: 0, reusable: true)
        _ = pool.release(2, key: 0, reusable: true)
        #expect(pool.acquire("c", key: 0, allowIdle: false) == .waitAfterEvicting([1, 2], connect: 1))
        Self.checkInvariants(pool)
        #expect(pool.connected(3, key: 0) == .serve("c"))
        Self.checkInvariants(pool)
    }

    @Test func keysAreIndependent() {
        var pool = Pool(defaultLimit: 1)
        #expect(pool.acquire("a", key: 0) == .wait(connect: 1))
        #expect(pool.acquire("b", key: 1) == .wait(connect: 1))
        Self.checkInvariants(pool)
    }

    @Test func idleConnectionClosingIsForgotten() {
        var pool = Pool(defaultLimit: 2)
        _ = pool.acquire("a", key: 0)
        _ = pool.connected(1, key: 0)
        _ = pool.release(1, key: 0, reusable: true)
        let first = pool.idleClosed(1, key: 0)
        #expect(first)
        let second = pool.idleClosed(1, key: 0)
        #expect(!second)
        #expect(pool.acquire("b", key: 0) == .wait(connect: 1))
    }

    @Test func unknownKeysAreHarmless() {
        var pool = Pool(defaultLimit: 2)
        let cancelled = pool.cancelWaiting("never-queued", key: -1)
        let closed = pool.idleClosed(7, key: -1)
        let farAway = pool.cancelWaiting("x", key: 99)
        #expect(!cancelled && !closed && !farAway)
        #expect(pool.entry(for: -1) == nil)
    }

    @Test func raisingTheLimitConnectsForWaiters() {
        var pool = Pool(defaultLimit: 1)
        _ = pool.acquire("a", key: 0)
        _ = pool.acquire("b", key: 0)
        _ = pool.acquire("c", key: 0)
        #expect(pool.setLimit(3, for: 0) == 2)
        Self.checkInvariants(pool)
    }

    /// curl's way (`ownAttempts`): requests started together keep the attempts opened for them; a
    /// connection released meanwhile waits idle, and a request whose attempt fails takes it.
    @Test func ownAttemptsKeepEachRequestsConnection() {
        var pool = Pool(defaultLimit: 6)
        pool.setOwnAttempts(true, for: 0)
        for request in ["a", "b", "c"] { #expect(pool.acquire(request, key: 0) == .wait(connect: 1)) }
        #expect(pool.connected(1, key: 0) == .serve("a"))
        // "a" is done before the other attempts connect: its connection waits, b and c keep theirs.
        #expect(pool.release(1, key: 0, reusable: true) == .park)
        Self.checkInvariants(pool)
        #expect(pool.connected(2, key: 0) == .serve("b"))
        // c's attempt fails: the parked connection serves it instead of the error.
        let outcome = pool.connectFailed(key: 0)
        #expect(outcome.failed == nil && outcome.served?.connection == 1 && outcome.served?.request == "c" && outcome.connect == 0)
        Self.checkInvariants(pool)
        // Without it, the released connection serves the longest waiter at once.
        var shared = Pool(defaultLimit: 6)
        for request in ["a", "b"] { _ = shared.acquire(request, key: 0) }
        #expect(shared.connected(1, key: 0) == .serve("a"))
        #expect(shared.release(1, key: 0, reusable: true) == .serve("b"))
    }

    /// Random event sequences against a model of who holds which connection: the invariants hold
    /// after every step, no request is served twice, and no connection serves two requests at once.
    /// Random event sequences against a model that tracks every connection and request: the
    /// pool's counts must equal the model's after every event (so a lost or invented connection
    /// attempt, lease or idle connection is caught), besides the invariants above.
    @Test(arguments: 0..<40)
    func randomSequencesKeepInvariants(seed: Int) {
        var rng = SplitRandom(seed: UInt64(seed))
        var pool = Pool(defaultLimit: 1 + Int(rng.next() % 4))
        if seed % 2 == 1 { pool.setOwnAttempts(true, for: 0) }
        var nextRequest = 0
        var nextConnection = 100
        var connecting = 0
        var idle: Set<Int> = []
        var leased: [Int: String] = [:]
        var waiting: Set<String> = []
        var served: Set<String> = []
        for _ in 0..<300 {
            switch rng.next() % 7 {
            case 0, 1:
                let request = "r\(nextRequest)"
                nextRequest += 1
                switch pool.acquire(request, key: 0, allowIdle: rng.next() % 5 != 0) {
                case .use(let c):
                    #expect(idle.remove(c) != nil, "handed out a connection that was not idle")
                    #expect(leased[c] == nil)
                    leased[c] = request
                    served.insert(request)
                case .wait(let n):
                    waiting.insert(request)
                    connecting += n
                case .waitAfterEvicting(let evicted, let n):
                    #expect(Set(evicted) == idle, "evicted \(evicted), idle \(idle)")
                    idle.removeAll()
                    waiting.insert(request)
                    connecting += n
                }
            case 2:
                guard connecting > 0 else { break }
                connecting -= 1
                let c = nextConnection
                nextConnection += 1
                switch pool.connected(c, key: 0) {
                case .serve(let r):
                    #expect(waiting.remove(r) != nil)
                    #expect(!served.contains(r))
                    served.insert(r)
                    leased[c] = r
                case .park:
                    idle.insert(c)
                case .close(let n):
                    connecting += n
                }
            case 3:
                guard connecting > 0 else { break }
                connecting -= 1
                let (failed, servedNow, n) = pool.connectFailed(key: 0)
                if let failed { #expect(waiting.remove(failed) != nil) }
                if let (c, r) = servedNow {
                    #expect(idle.remove(c) != nil, "served a connection that was not idle")
                    #expect(waiting.remove(r) != nil)
                    leased[c] = r
                    served.insert(r)
                }
                connecting += n
            case 4:
                guard !leased.isEmpty else { break }
                let c = leased.keys.sorted()[Int(rng.next() % UInt64(leased.count))]
                leased[c] = nil
                switch pool.release(c, key: 0, reusable: rng.next() % 3 != 0) {
                case .serve(let r):
                    #expect(waiting.remove(r) != nil)
                    leased[c] = r
                    served.insert(r)
                case .park:
                    idle.insert(c)
                case .close(let n):
                    connecting += n
                }
            case 5:
                guard !waiting.isEmpty else { break }
                let r = waiting.sorted()[Int(rng.next() % UInt64(waiting.count))]
                let removed = pool.cancelWaiting(r, key: 0)
                #expect(removed)
                waiting.remove(r)
            case 6:
                guard !idle.isEmpty else { break }
                let c = idle.sorted()[Int(rng.next() % UInt64(idle.count))]
                let wasIdle = pool.idleClosed(c, key: 0)
                #expect(wasIdle)
                idle.remove(c)
            default:
                break
            }
            Self.checkInvariants(pool)
            let entry = pool.entry(for: 0)
            #expect(entry.map { $0.connecting } ?? 0 == connecting, "attempts in flight")
            #expect(Set(entry?.idle ?? []) == idle, "idle connections")
            #expect(entry.map { $0.leased } ?? 0 == leased.count, "leased connections")
            #expect(entry.map { Set($0.waiting.elements) } ?? [] == waiting, "waiting requests")
        }
    }
}
