import Testing
@testable import CourierCore

/// The transfer machine, event by event, without sockets: every end-of-exchange choice a
/// transfer can meet.
@Suite("TransferStateMachine")
struct TransferStateMachineTests {
    typealias Machine = TransferStateMachine

    static let hop = RedirectHop(url: try! CourierURL(parsing: "http://a.example/next"), method: .get,
                                 dropBody: false, crossOrigin: false)

    /// A machine with a running exchange.
    func running() -> Machine {
        var m = Machine()
        #expect(m.accept(refusal: nil, queueDeadline: .max) == .enqueue)
        #expect(m.state == .queued)
        #expect(m.started(totalDeadline: 5_000) == .acquireConnection)
        #expect(m.state == .waitingForConnection)
        m.connectionAssigned()
        #expect(m.state == .running)
        return m
    }

    @Test func plainSuccess() {
        var m = running()
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .finish(nil, releasing: .slot))
        #expect(m.state == .finished)
    }

    @Test func failureEndsTheTransfer() {
        var m = running()
        let error = CourierError(.truncatedBody)
        #expect(m.exchangeEnded(.failure(error, replay: false), mayReplay: true, shuttingDown: false) == .finish(error, releasing: .slot))
    }

    @Test func refusedOnArrival() {
        var m = Machine()
        let error = CourierError(.invalidHeader, "X-Bad")
        #expect(m.accept(refusal: error, queueDeadline: .max) == .finish(error, releasing: .nothing))
        #expect(m.state == .finished)
    }

    @Test func cancelledBeforeItWasSubmitted() {
        var m = Machine()
        m.cancelBeforeSubmitting()
        #expect(m.accept(refusal: nil, queueDeadline: .max) == .finish(CourierError(.cancelled), releasing: .nothing))
    }

    @Test func cancelArrivingBeforeTheSubmitWins() {
        // Runtime.cancel may reach the loop before the submit does.
        var m = Machine()
        #expect(m.cancel(CourierError(.cancelled)) == .none)
        #expect(m.accept(refusal: nil, queueDeadline: .max) == .finish(CourierError(.cancelled), releasing: .nothing))
    }

    // MARK: Redirects

    @Test func redirectIsFollowedWhenTheExchangeEnds() {
        var m = running()
        m.redirectChosen(Self.hop)
        #expect(m.followsRedirect)
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .followRedirect(Self.hop))
        #expect(m.state == .waitingForConnection)
        #expect(!m.followsRedirect, "the next hop starts with no redirect pending")
        m.connectionAssigned()
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .finish(nil, releasing: .slot))
    }

    @Test func aRedirectWhoseExchangeFailedIsNotFollowed() {
        var m = running()
        m.redirectChosen(Self.hop)
        let error = CourierError(.truncatedBody)
        #expect(m.exchangeEnded(.failure(error, replay: false), mayReplay: true, shuttingDown: false) == .finish(error, releasing: .slot))
    }

    @Test func nothingIsFollowedWhileShuttingDown() {
        var m = running()
        m.redirectChosen(Self.hop)
        #expect(m.exchangeEnded(.success(reusable: false), mayReplay: true, shuttingDown: true) == .finish(nil, releasing: .slot))
    }

    // MARK: Stale connections

    @Test func staleConnectionIsReplayedOnce() {
        var m = running()
        let stale = CourierError(.emptyReply)
        #expect(m.exchangeEnded(.failure(stale, replay: true), mayReplay: true, shuttingDown: false) == .replayOnFreshConnection)
        #expect(m.state == .waitingForConnection)
        #expect(m.replayed)
        m.connectionAssigned()
        #expect(m.exchangeEnded(.failure(stale, replay: true), mayReplay: true, shuttingDown: false) == .finish(stale, releasing: .slot),
                "only one replay per transfer")
    }

    @Test func replayNeedsTheRequestsPermission() {
        var m = running()
        let stale = CourierError(.emptyReply)
        #expect(m.exchangeEnded(.failure(stale, replay: true), mayReplay: false, shuttingDown: false) == .finish(stale, releasing: .slot))
    }

    @Test func replayDropsAPendingRedirect() {
        var m = running()
        m.redirectChosen(Self.hop)
        _ = m.exchangeEnded(.failure(CourierError(.emptyReply), replay: true), mayReplay: true, shuttingDown: false)
        #expect(!m.followsRedirect)
    }

    // MARK: Cancellation

    @Test func cancelWhereverItIs() {
        var queued = Machine()
        _ = queued.accept(refusal: nil, queueDeadline: .max)
        #expect(queued.cancel(CourierError(.cancelled)) == .finish(CourierError(.cancelled), releasing: .queuePlace))

        var waiting = Machine()
        _ = waiting.accept(refusal: nil, queueDeadline: .max)
        _ = waiting.started(totalDeadline: .max)
        #expect(waiting.cancel(CourierError(.shutdown)) == .finish(CourierError(.shutdown), releasing: .slotAndPoolWait))

        var active = running()
        #expect(active.cancel(CourierError(.cancelled)) == .abortExchange(CourierError(.cancelled)))
        #expect(active.state == .running, "the connection reports the end")
        #expect(active.cancelRequested)

        var finished = running()
        _ = finished.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false)
        #expect(finished.cancel(CourierError(.cancelled)) == .none)
    }

    @Test func aCancelledExchangeIsNeitherFollowedNorReplayed() {
        var redirected = running()
        redirected.redirectChosen(Self.hop)
        _ = redirected.cancel(CourierError(.cancelled))
        let cancelled = CourierError(.cancelled)
        #expect(redirected.exchangeEnded(.failure(cancelled, replay: false), mayReplay: true, shuttingDown: false) == .finish(cancelled, releasing: .slot))

        var stale = running()
        _ = stale.cancel(CourierError(.cancelled))
        #expect(stale.exchangeEnded(.failure(cancelled, replay: true), mayReplay: true, shuttingDown: false) == .finish(cancelled, releasing: .slot))
    }

    // MARK: Deadlines without a connection

    @Test func queueDeadline() {
        var m = Machine()
        _ = m.accept(refusal: nil, queueDeadline: 100)
        #expect(m.waitDeadline == 100)
        #expect(m.waitDeadlinePassed(now: 99) == .none)
        #expect(m.waitDeadlinePassed(now: 100) == .finish(CourierError(.queueTimeout), releasing: .queuePlace))
        #expect(m.waitDeadline == .max)
    }

    @Test func totalDeadlineWhileWaitingForAConnection() {
        var m = Machine()
        _ = m.accept(refusal: nil, queueDeadline: 100)
        _ = m.started(totalDeadline: 300)
        #expect(m.waitDeadline == 300, "the queue deadline no longer applies once started")
        #expect(m.waitDeadlinePassed(now: 299) == .none)
        guard case .finish(let error?, releasing: .slotAndPoolWait) = m.waitDeadlinePassed(now: 300) else {
            Issue.record("the total deadline did not end a transfer waiting for a connection")
            return
        }
        #expect(error.code == .totalTimeout)
    }

    @Test func runningTransfersLeaveDeadlinesToTheirConnection() {
        var m = running()
        #expect(m.waitDeadline == .max)
        #expect(m.waitDeadlinePassed(now: .max) == .none)
        #expect(m.totalDeadline == 5_000, "the connection reads it")
    }

    @Test func connectFailureReleasesTheSlot() {
        var m = Machine()
        _ = m.accept(refusal: nil, queueDeadline: .max)
        _ = m.started(totalDeadline: .max)
        let error = CourierError(.connectFailed, "ECONNREFUSED")
        #expect(m.connectFailed(error) == .finish(error, releasing: .slot))
    }

    @Test func finishedByConstruction() {
        #expect(Machine.alreadyFinished.state == .finished)
    }
}
