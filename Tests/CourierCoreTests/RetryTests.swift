import Testing
@testable import CourierCore

/// Retries without sockets: the policy's rule and waits, the per-host budget, and the transfer
/// machine's retry events one by one.
@Suite("Retry policy and machine")
struct RetryTests {
    typealias Machine = TransferStateMachine

    static let policy = RetryPolicy(count: 3, intervals: [.milliseconds(100), .milliseconds(300)])

    func input(_ policy: RetryPolicy = RetryTests.policy, permitted: Bool = true, started: Bool = false,
               now: UInt64 = 1_000, elapsed: UInt64 = 0) -> Machine.RetryInput {
        Machine.RetryInput(policy: policy, permitted: permitted, responseStarted: started, now: now,
                           elapsed: .milliseconds(elapsed), random: 0.5)
    }

    func running(total: UInt64 = .max) -> Machine {
        var m = Machine()
        _ = m.accept(refusal: nil, queueDeadline: .max)
        _ = m.started(totalDeadline: total)
        m.connectionAssigned()
        return m
    }

    // MARK: The policy

    @Test func intervalsRepeatTheLastOrDouble() {
        let plain = RetryPolicy(count: 5, intervals: [.milliseconds(100), .milliseconds(300)])
        #expect((1...5).map { plain.interval(beforeRetry: $0) } ==
                [.milliseconds(100), .milliseconds(300), .milliseconds(300), .milliseconds(300), .milliseconds(300)])
        let backoff = RetryPolicy(count: 6, intervals: [.milliseconds(100)], exponentialBackoff: true, maxInterval: .milliseconds(500))
        #expect((1...6).map { backoff.interval(beforeRetry: $0) } ==
                [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(500), .milliseconds(500), .milliseconds(500)])
        // OCNet's default: no intervals at all is a second between attempts (C's NULL/0 and
        // Python's intervals=() come here too).
        let none = RetryPolicy(count: 3, intervals: [])
        #expect((1...3).map { none.interval(beforeRetry: $0) } == [.seconds(1), .seconds(1), .seconds(1)])
        let doubling = RetryPolicy(count: 3, intervals: [], exponentialBackoff: true)
        #expect((1...3).map { doubling.interval(beforeRetry: $0) } == [.seconds(1), .seconds(2), .seconds(4)],
                "as a list of one second")
    }

    @Test func jitterDrawsBetweenHalfAndAll() {
        let jittered = RetryPolicy(count: 1, intervals: [.milliseconds(1_000)], jitter: true)
        #expect(jittered.wait(beforeRetry: 1, retryAfter: nil, elapsed: Nanoseconds(0), deadlineLeft: nil, random: 0) == .milliseconds(500))
        #expect(jittered.wait(beforeRetry: 1, retryAfter: nil, elapsed: Nanoseconds(0), deadlineLeft: nil, random: 0.999)! > .milliseconds(990))
    }

    @Test func whatIsTransient() {
        let p = RetryPolicy(count: 1)
        #expect(p.retries(.failure(CourierError(.connectFailed)), responseStarted: false))
        #expect(p.retries(.failure(CourierError(.connectTimeout)), responseStarted: false))
        #expect(p.retries(.failure(CourierError(.noRoute)), responseStarted: false), "the link went down: it may come back")
        #expect(p.retries(.failure(CourierError(.connectionReset)), responseStarted: false))
        #expect(p.retries(.failure(CourierError(.firstByteTimeout)), responseStarted: false))
        #expect(!p.retries(.failure(CourierError(.connectionReset)), responseStarted: true), "the server may have acted on it")
        #expect(!p.retries(.failure(CourierError(.tlsUntrusted)), responseStarted: false), "never a verification failure")
        #expect(!p.retries(.failure(CourierError(.tlsHostMismatch)), responseStarted: false))
        #expect(!p.retries(.failure(CourierError(.dnsFailure)), responseStarted: false))
        #expect(!p.retries(.failure(CourierError(.truncatedBody)), responseStarted: true))
        for status in [408, 429, 502, 503, 504] { #expect(p.retries(.status(status), responseStarted: true)) }
        for status in [400, 401, 404, 500, 501] { #expect(!p.retries(.status(status), responseStarted: true)) }
        var all = p
        all.retriesAllErrors = true
        #expect(all.retries(.failure(CourierError(.truncatedBody)), responseStarted: true))
        #expect(!all.retries(.failure(CourierError(.cancelled)), responseStarted: false), "a cancellation is not the origin's")
    }

    @Test func onlyRequestsThatMayBeSentTwice() {
        let p = RetryPolicy(count: 2)
        #expect(p.permits(method: .get, hasIdempotencyKey: false, replayableBody: true))
        #expect(p.permits(method: .put, hasIdempotencyKey: false, replayableBody: true))
        #expect(p.permits(method: .delete, hasIdempotencyKey: false, replayableBody: true))
        #expect(!p.permits(method: .post, hasIdempotencyKey: false, replayableBody: true))
        #expect(!p.permits(method: .patch, hasIdempotencyKey: false, replayableBody: true))
        #expect(p.permits(method: .post, hasIdempotencyKey: true, replayableBody: true))
        #expect(!p.permits(method: .put, hasIdempotencyKey: false, replayableBody: false), "a one-shot stream cannot be sent again")
        var optIn = p
        optIn.retriesNonIdempotent = true
        #expect(optIn.permits(method: .post, hasIdempotencyKey: false, replayableBody: true))
        #expect(!RetryPolicy.none.permits(method: .get, hasIdempotencyKey: false, replayableBody: true))
    }

    @Test func retryAfterLengthensWithinItsLimit() {
        let p = RetryPolicy(count: 2, intervals: [.milliseconds(100)], retryAfterLimit: .seconds(5))
        #expect(p.wait(beforeRetry: 1, retryAfter: .seconds(2), elapsed: Nanoseconds(0), deadlineLeft: nil, random: 0) == .seconds(2))
        #expect(p.wait(beforeRetry: 1, retryAfter: Nanoseconds(0), elapsed: Nanoseconds(0), deadlineLeft: nil, random: 0) == .milliseconds(100))
        #expect(p.wait(beforeRetry: 1, retryAfter: .seconds(6), elapsed: Nanoseconds(0), deadlineLeft: nil, random: 0) == nil,
                "a server asking for longer than the limit gets its answer back")
        #expect(p.wait(beforeRetry: 3, retryAfter: nil, elapsed: Nanoseconds(0), deadlineLeft: nil, random: 0) == nil, "count exhausted")
    }

    @Test func maxTimeAndTheTotalDeadline() {
        let p = RetryPolicy(count: 5, intervals: [.seconds(1)], maxTime: .seconds(3))
        #expect(p.wait(beforeRetry: 1, retryAfter: nil, elapsed: .seconds(1.5), deadlineLeft: nil, random: 0) == .seconds(1))
        #expect(p.wait(beforeRetry: 2, retryAfter: nil, elapsed: .seconds(2.5), deadlineLeft: nil, random: 0) == nil)
        #expect(p.wait(beforeRetry: 1, retryAfter: nil, elapsed: Nanoseconds(0), deadlineLeft: .milliseconds(900), random: 0) == nil,
                "a retry the total deadline would cut is not started")
    }

    @Test func retryAfterFieldForms() {
        let now: Int64 = 784_111_777  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(RetryPolicy.retryAfter("120", now: now) == .seconds(120))
        #expect(RetryPolicy.retryAfter(" 0 ", now: now) == Nanoseconds(0))
        #expect(RetryPolicy.retryAfter("Sun, 06 Nov 1994 08:49:47 GMT", now: now) == .seconds(10))
        #expect(RetryPolicy.retryAfter("Sun, 06 Nov 1994 08:49:00 GMT", now: now) == Nanoseconds(0), "a date in the past: now")
        #expect(RetryPolicy.retryAfter("soon", now: now) == nil)
        #expect(RetryPolicy.retryAfter("-5", now: now) == nil)
        #expect(RetryPolicy.retryAfter("99999999999999999999", now: now)! > .seconds(1e9), "huge is huge, not wrapped")
        #expect(RetryPolicy.retryAfter(nil, now: now) == nil)
        // (The retryafter fuzz target's find: a date centuries ahead overflowed the nanoseconds.)
        #expect(RetryPolicy.retryAfter("Sun, 06 Nov 3986 08:49:47 GMT", now: now) == Nanoseconds(.max))
    }

    // MARK: The budget

    @Test func aFailingHostRunsOutOfRetriesForEveryone() {
        var budgets = RetryBudgets()
        // Nine failures may each be retried; the tenth leaves half the tokens (not more than half).
        var answers: [Bool] = []
        for _ in 0..<11 { answers.append(budgets.attemptFailed(host: 1)) }
        #expect(answers == Array(repeating: true, count: 9) + [false, false])
        let other = budgets.attemptFailed(host: 2)
        #expect(other, "another origin has its own budget")
        // Successes refill, a fifth of a token each.
        for _ in 0..<5 { budgets.exchangeSucceeded(host: 1, status: 200) }
        #expect(abs(budgets.tokens(for: 1) - 10) < 1e-9)
        budgets.exchangeSucceeded(host: 1, status: 503)
        budgets.exchangeSucceeded(host: 1, status: 429)
        #expect(abs(budgets.tokens(for: 1) - 10) < 1e-9, "a server error or a throttle gives nothing back")
        let again = budgets.attemptFailed(host: 1)
        #expect(!again, "9 left after the failure: still not more than half")
        for _ in 0..<100 { budgets.exchangeSucceeded(host: 1, status: 200) }
        #expect(budgets.tokens(for: 1) == RetryBudgets.capacity, "back to full, and forgotten")
    }

    // MARK: The machine

    @Test func aConnectFailureWaitsThenRequeues() {
        var m = Machine()
        _ = m.accept(refusal: nil, queueDeadline: 50)
        _ = m.started(totalDeadline: .max)
        let error = CourierError(.connectFailed, "ECONNREFUSED")
        #expect(m.connectFailed(error, retry: input(now: 1_000)) == .approveRetry, "a failure's retry is asked about")
        #expect(m.state == .waitingToRetry)
        #expect(m.retryNeedsApproval)
        #expect(m.retryApproved(true) == .rewindSink)
        #expect(m.sinkRewound(true) == .retryLater)
        #expect(m.waitDeadline == 1_100)
        #expect(m.waitDeadlinePassed(now: 1_099) == .none)
        #expect(m.waitDeadlinePassed(now: 1_100) == .requeue)
        #expect(m.state == .queued)
        #expect(m.waitDeadline == .max, "the queue deadline bounded the first wait only")
        #expect(m.retriesUsed == 1)
        #expect(m.retryReasons == [.failure(error)])
        // The second retry waits the second interval, the third repeats it.
        #expect(m.started(totalDeadline: .max) == .acquireConnection)
        #expect(m.connectFailed(error, retry: input(now: 2_000)) == .approveRetry)
        #expect(m.waitDeadline == 2_300)
        _ = m.waitDeadlinePassed(now: 2_300)
        _ = m.started(totalDeadline: .max)
        #expect(m.connectFailed(error, retry: input(now: 3_000)) == .approveRetry)
        #expect(m.waitDeadline == 3_300)
        _ = m.waitDeadlinePassed(now: 3_300)
        _ = m.started(totalDeadline: .max)
        #expect(m.connectFailed(error, retry: input(now: 4_000)) == .finish(error, releasing: .slot), "three retries, then the error")
        #expect(m.retriesUsed == 3)
    }

    /// A connect with no route (the link is down) whose interval ends while the monitor still says
    /// "no network" waits for the network instead of failing again at once; the network's return
    /// sends it to the queue, and a network that stays away ends it with its failure.
    @Test func aRetryWithNoRouteWaitsForTheNetwork() {
        let noRoute = CourierError(.noRoute, "connect ENETUNREACH")
        var m = Machine()
        _ = m.accept(refusal: nil, queueDeadline: .max)
        _ = m.started(totalDeadline: .max)
        #expect(m.connectFailed(noRoute, retry: input(now: 1_000)) == .approveRetry)
        _ = m.retryApproved(true)
        _ = m.sinkRewound(true)
        #expect(!m.waitsForNetwork, "the interval comes first")
        #expect(m.networkReturned() == .none, "the network's return means nothing to a retry waiting its interval")
        #expect(m.waitDeadlinePassed(now: 1_100, offline: true) == .none, "offline: no attempt that cannot leave the machine")
        #expect(m.waitsForNetwork)
        #expect(m.state == .waitingToRetry)
        #expect(m.waitDeadline == 1_100 + Machine.networkWaitLimit, "bounded by the wait limit without a total deadline")
        #expect(m.networkReturned() == .requeue)
        #expect(m.state == .queued && m.waitDeadline == .max && !m.waitsForNetwork)
        #expect(m.retriesUsed == 1, "the wait for the network is part of the same retry")

        // The network stays away: the failure it waited to retry ends it, holding only its place.
        var away = Machine()
        _ = away.accept(refusal: nil, queueDeadline: .max)
        _ = away.started(totalDeadline: 3_000)
        _ = away.connectFailed(noRoute, retry: input(now: 1_000))
        _ = away.retryApproved(true)
        _ = away.sinkRewound(true)
        _ = away.waitDeadlinePassed(now: 1_100, offline: true)
        #expect(away.waitDeadline == 3_000, "the total deadline comes before the wait limit")
        #expect(away.waitDeadlinePassed(now: 2_999, offline: true) == .none)
        #expect(away.waitDeadlinePassed(now: 3_000, offline: true) == .finish(noRoute, releasing: .retryWait))
        #expect(away.state == .finished)
    }

    /// Only "no route" waits for the network: a refused connect, or one whose interval ends with
    /// the network up, joins the queue as any retry does.
    @Test func otherRetriesDoNotWaitForTheNetwork() {
        for (error, offline) in [(CourierError(.connectFailed, "ECONNREFUSED"), true), (CourierError(.noRoute), false)] {
            var m = Machine()
            _ = m.accept(refusal: nil, queueDeadline: .max)
            _ = m.started(totalDeadline: .max)
            _ = m.connectFailed(error, retry: input(now: 1_000))
            _ = m.retryApproved(true)
            _ = m.sinkRewound(true)
            #expect(m.waitDeadlinePassed(now: 1_100, offline: offline) == .requeue, "\(error) offline \(offline)")
        }
    }

    @Test func cancellingARetryWaitingForTheNetwork() {
        var m = Machine()
        _ = m.accept(refusal: nil, queueDeadline: .max)
        _ = m.started(totalDeadline: .max)
        _ = m.connectFailed(CourierError(.noRoute), retry: input(now: 1_000))
        _ = m.retryApproved(true)
        _ = m.sinkRewound(true)
        _ = m.waitDeadlinePassed(now: 1_100, offline: true)
        #expect(m.cancel(CourierError(.cancelled)) == .finish(CourierError(.cancelled), releasing: .retryWait))
        #expect(!m.waitsForNetwork && m.networkReturned() == .none)
    }

    @Test func aResetBeforeTheResponseIsRetriedAfterItIsNot() {
        var m = running()
        let reset = CourierError(.connectionReset)
        #expect(m.exchangeEnded(.failure(reset, replay: false), mayReplay: true, shuttingDown: false, retry: input()) == .approveRetry)
        var late = running()
        #expect(late.exchangeEnded(.failure(reset, replay: false), mayReplay: true, shuttingDown: false, retry: input(started: true))
                == .finish(reset, releasing: .slot))
    }

    @Test func theStaleReplayComesFirst() {
        var m = running()
        let reset = CourierError(.connectionReset)
        #expect(m.exchangeEnded(.failure(reset, replay: true), mayReplay: true, shuttingDown: false, retry: input()) == .replayOnFreshConnection,
                "a stale keep-alive connection is not a failure of the server: no interval, no budget")
    }

    @Test func notPermittedMeansNotRetried() {
        var m = running()
        let reset = CourierError(.connectionReset)
        #expect(m.exchangeEnded(.failure(reset, replay: false), mayReplay: false, shuttingDown: false, retry: input(permitted: false))
                == .finish(reset, releasing: .slot))
    }

    @Test func aRetriedStatusDropsItsBodyThenWaits() {
        var m = running()
        let wait = m.statusRetryWait(status: 503, retryAfter: .seconds(2), input: input())
        #expect(wait == 2_000)
        m.retryChosen(status: 503, wait: 2_000, now: 1_000)
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .rewindSink,
                "approved when the head arrived: straight to the rewind")
        #expect(!m.retryNeedsApproval)
        #expect(m.waitDeadline == 3_000)
        #expect(m.retryReasons == [.status(503)])
        #expect(m.statusRetryWait(status: 404, retryAfter: nil, input: input()) == nil)
    }

    @Test func aRefusedRetryEndsWithItsFailure() {
        var m = running()
        let reset = CourierError(.connectionReset)
        _ = m.exchangeEnded(.failure(reset, replay: false), mayReplay: true, shuttingDown: false, retry: input())
        #expect(m.retryApproved(false) == .finish(reset, releasing: .slot), "the delegate or the budget said no")
        #expect(m.state == .finished)
        #expect(m.retriesUsed == 0)
    }

    @Test func aSinkThatCannotBeRewoundKeepsTheFailure() {
        var m = running()
        let reset = CourierError(.connectionReset)
        _ = m.exchangeEnded(.failure(reset, replay: false), mayReplay: true, shuttingDown: false, retry: input())
        #expect(m.retryApproved(true) == .rewindSink)
        #expect(m.sinkRewound(false) == .finish(reset, releasing: .slot), "a body written twice would be worse than the failure")
        #expect(m.retriesUsed == 0)
    }

    @Test func bytesTheSinkCannotTakeBackForbidARetry() {
        func permitted(_ method: HTTPMethod = .get, key: Bool = false, replayable: Bool = true, received: Bool = false,
                       rewinds: Bool = true) -> Bool {
            let facts = Machine.RetryRequestFacts(method: method, hasIdempotencyKey: key, replayableBody: replayable,
                                                  responseBytesReceived: received, sinkCanRewind: rewinds)
            return Machine.RetryInput(policy: Self.policy, request: facts, responseStarted: false, now: 0,
                                      elapsed: .milliseconds(0), random: 0.5).permitted
        }
        #expect(permitted())
        #expect(permitted(received: true), "memory or a file of our own starts over")
        #expect(!permitted(received: true, rewinds: false), "bytes went to a consumer or stdout")
        #expect(!permitted(.post), "not idempotent")
        #expect(permitted(.post, key: true), "an Idempotency-Key makes a POST safe to repeat")
        #expect(!permitted(replayable: false), "a one-shot body cannot be sent again")
    }

    @Test func cancellingAWaitingRetryHoldsNothing() {
        var m = running()
        _ = m.exchangeEnded(.failure(CourierError(.connectionReset), replay: false), mayReplay: true, shuttingDown: false, retry: input())
        #expect(m.cancel(CourierError(.cancelled)) == .finish(CourierError(.cancelled), releasing: .retryWait),
                "no slot, no connection: only its place among the waiting retries")
        #expect(m.waitDeadline == .max)
        var followed = running()
        _ = followed.exchangeEnded(.failure(CourierError(.connectionReset), replay: false), mayReplay: true, shuttingDown: false, retry: input())
        #expect(followed.cancel(CourierError(.cancelled), othersFollow: true) == .detachCaller(CourierError(.cancelled)))
    }

    @Test func retriesKeepTheFirstTotalDeadline() {
        var m = running(total: 5_000)
        _ = m.exchangeEnded(.failure(CourierError(.connectionReset), replay: false), mayReplay: true, shuttingDown: false, retry: input(now: 1_000))
        _ = m.waitDeadlinePassed(now: 1_100)
        _ = m.started(totalDeadline: 9_999)
        #expect(m.totalDeadline == 5_000, "total bounds the whole operation")
        m.connectionAssigned()
        #expect(m.exchangeEnded(.failure(CourierError(.connectionReset), replay: false), mayReplay: true, shuttingDown: false,
                                retry: input(now: 4_800)) == .finish(CourierError(.connectionReset), releasing: .slot),
                "a retry the total deadline would cut is not made")
    }

    @Test func nothingIsRetriedWhileShuttingDownOrCancelled() {
        var m = running()
        #expect(m.exchangeEnded(.failure(CourierError(.connectionReset), replay: false), mayReplay: true, shuttingDown: true, retry: input())
                == .finish(CourierError(.connectionReset), releasing: .slot))
        var s = running()
        s.retryChosen(status: 503, wait: 10, now: 0)
        #expect(s.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: true) == .finish(CourierError(.shutdown), releasing: .slot))
    }
}
