import Testing
@testable import CourierCore

/// The reading side of an exchange as a value, event by event: pauses for the consumer, the
/// rate and lent reads never undo each other; an end waits for held bytes; lending is decided
/// once per exchange; the exchange's end says what to undo.
@Suite("ReceiveFlow")
struct ReceiveFlowTests {
    @Test func pausesStackAndOnlyTheLastResumeReads() {
        var flow = ReceiveFlow(rateLimit: 1_000)
        let step1 = flow.consumerPaused()
        #expect(step1 == .pauseReading)
        let step2 = flow.consumerPaused()
        #expect(step2 == .none, "already paused")
        let step3 = flow.bytesReceived(2_000, now: 10)
        #expect(step3 == .none, "over the rate while paused for the consumer: no second pause")
        #expect(flow.pauses == [.consumer, .rate])
        #expect(flow.resumeAt == 10 + 2_000)
        let step4 = flow.rateTimerFired(now: 1_999)
        #expect(step4 == .none, "not due yet")
        let step5 = flow.rateTimerFired(now: 2_010)
        #expect(step5 == .none, "the rate lets go, the consumer still holds")
        #expect(flow.resumeAt == .max)
        let step6 = flow.consumerResumed()
        #expect(step6 == .resumeReading)
        let step7 = flow.consumerResumed()
        #expect(step7 == .none, "a second resume is nothing")
    }

    @Test func theRateScheduleCountsFromTheFirstRead() {
        var flow = ReceiveFlow(rateLimit: 100)
        let step8 = flow.bytesReceived(10, now: 1_000)
        #expect(step8 == .pauseReading, "10 bytes at 100 B/s are due at +100 ms")
        #expect(flow.resumeAt == 1_100)
        let step9 = flow.rateTimerFired(now: 1_100)
        #expect(step9 == .resumeReading)
        let step10 = flow.bytesReceived(5, now: 1_200)
        #expect(step10 == .none, "15 bytes by +200 ms are on schedule")
        var unlimited = ReceiveFlow()
        let step11 = unlimited.bytesReceived(1 << 30, now: 1)
        #expect(step11 == .none)
        #expect(unlimited.isPlain)
    }

    @Test func anEndWaitsForHeldBytes() {
        var flow = ReceiveFlow()
        let step12 = flow.responseEnded(.complete(keepAlive: true, trailingBytes: false), consumerHolding: false)
        #expect(step12, "nothing held: now")
        let step13 = flow.responseEnded(.streamClosed(closeNotify: nil), consumerHolding: true)
        #expect(!step13)
        #expect(!flow.isPlain)
        let step14 = flow.takeHeldEnd()
        #expect(step14 == .streamClosed(closeNotify: nil))
        let step15 = flow.takeHeldEnd()
        #expect(step15 == nil, "taken once")
    }

    @Test func lendingIsDecidedOncePerExchange() {
        var flow = ReceiveFlow()
        let step16 = flow.leaseOffered()
        #expect(!step16, "a lease needs a landing first")
        let step17 = flow.landingOffered()
        #expect(step17)
        let step18 = flow.landingOffered()
        #expect(!step18, "the first offer counts")
        let step19 = flow.leaseOffered()
        #expect(step19)
        let step20 = flow.leaseOffered()
        #expect(!step20, "one offer stands at a time")
        let big = ReceiveFlow.smallestLease + 1
        let step21 = flow.lendingDecision(requestSent: false, bodyLeft: big, socketLendable: true)
        #expect(!step21, "request bytes still to send")
        #expect(flow.lending == .settled)
        let step22 = flow.leaseOffered()
        #expect(!step22, "settled for the exchange")
        let step23 = flow.exchangeEnded()
        #expect(step23 == [.clearLanding])
        #expect(flow.isPlain)
    }

    @Test func aPauseLeavesTheOfferOpen() {
        var flow = ReceiveFlow()
        _ = flow.landingOffered()
        _ = flow.leaseOffered()
        _ = flow.consumerPaused()
        let step24 = flow.lendingDecision(requestSent: true, bodyLeft: ReceiveFlow.smallestLease + 1, socketLendable: true)
        #expect(!step24)
        #expect(flow.lending == .landing, "open again for a later piece")
        _ = flow.consumerResumed()
        let step25 = flow.leaseOffered()
        #expect(step25)
        let step26 = flow.lendingDecision(requestSent: true, bodyLeft: ReceiveFlow.smallestLease, socketLendable: true)
        #expect(!step26, "too short to pay")
    }

    @Test func aLeasePausesUntilItComesBack() {
        var flow = ReceiveFlow()
        _ = flow.landingOffered()
        _ = flow.leaseOffered()
        let step27 = flow.lendingDecision(requestSent: true, bodyLeft: ReceiveFlow.smallestLease + 1, socketLendable: true)
        #expect(step27)
        let step28 = flow.leaseStarted()
        #expect(step28 == .pauseReading)
        let step29 = flow.exchangeEnded()
        #expect(step29 == [.resumeReading, .clearLanding, .revokeLease], "an exchange that ends while lent takes them back")
        _ = flow.landingOffered()
        _ = flow.leaseOffered()
        let step30 = flow.lendingDecision(requestSent: true, bodyLeft: ReceiveFlow.smallestLease + 1, socketLendable: true)
        #expect(step30)
        _ = flow.leaseStarted()
        let step31 = flow.leaseReturned()
        #expect(step31 == .resumeReading)
        let step32 = flow.leaseReturned()
        #expect(step32 == .none, "a stale return is nothing")
        let step33 = flow.lendingDecision(requestSent: true, bodyLeft: ReceiveFlow.smallestLease + 1, socketLendable: true)
        #expect(!step33)
        var limited = ReceiveFlow(rateLimit: 1)
        _ = limited.landingOffered()
        _ = limited.leaseOffered()
        let step34 = limited.lendingDecision(requestSent: true, bodyLeft: .max, socketLendable: true)
        #expect(!step34, "a rate limit keeps the reads")
    }

    @Test func beginResetsOnlyWhatAnExchangeChanged() {
        var flow = ReceiveFlow(rateLimit: 100)
        _ = flow.bytesReceived(1, now: 5)
        _ = flow.rateTimerFired(now: 100)
        flow.begin(rateLimit: 100)
        let step35 = flow.bytesReceived(10, now: 1_000)
        #expect(step35 == .pauseReading)
        #expect(flow.resumeAt == 1_100, "a new window starts with the exchange")
    }
}

/// The sending side's rate as a value.
@Suite("RatePacer")
struct RatePacerTests {
    @Test func aPieceGoesWhenItsOwnBytesAreOnSchedule() {
        var pacer = RatePacer(limit: 1_000)
        let step36 = pacer.mayGo(size: 500, handed: 0, now: 100)
        #expect(!step36, "500 B at 1000 B/s are due at +500 ms")
        #expect(pacer.resumeAt == 600)
        let step37 = pacer.timerFired(now: 599)
        #expect(!step37)
        let step38 = pacer.timerFired(now: 600)
        #expect(step38)
        let step39 = pacer.mayGo(size: 500, handed: 0, now: 600)
        #expect(step39)
        let step40 = pacer.mayGo(size: 500, handed: 500, now: 700)
        #expect(!step40, "1000 B are due at +1 s")
        #expect(pacer.resumeAt == 1_100)
    }
}

